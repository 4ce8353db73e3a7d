//! `CodeSystem/$validate-code` and `ValueSet/$validate-code` at `/r4` and
//! `/r5`, by GET and POST, on a small synthetic edition, checked against
//! what the store itself says.

use crate::common;

use common::{param, result};

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

const SCT: &str = "http://snomed.info/sct";

one_server!(|dir| {
    common::edition(dir, "ed", 800, 7, 20250131);
    common::serve(dir, "editions = [\"ed.txmap\"]\n")
});

/// The issues' (severity, tx-issue-type, text).
fn issues(v: &Value) -> Vec<(String, String, String)> {
    let Some(p) = param(v, "issues") else {
        return vec![];
    };
    p["resource"]["issue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["severity"].as_str().unwrap().to_owned(),
                i["details"]["coding"][0]["code"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                i["details"]["text"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn error_outcome(v: &Value) -> &str {
    assert_eq!(v["resourceType"], "OperationOutcome", "{v}");
    assert_eq!(v["issue"][0]["severity"], "error");
    v["issue"][0]["code"].as_str().unwrap()
}

/// An active concept with a parent and a child, and its SCTID.
fn active_with_child() -> (u32, u64) {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let o = (0..ed.concept_count())
        .find(|&o| {
            ed.concept_at(o).unwrap().active
                && !ed.parents(o).unwrap().is_empty()
                && !ed.children(o).unwrap().is_empty()
        })
        .unwrap();
    (o, ed.sctid(o).unwrap())
}

/// The SCTID of a child of the concept at `o`.
fn child_of(o: u32) -> u64 {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    ed.sctid(ed.children(o).unwrap().iter().next().unwrap())
        .unwrap()
}

#[tokio::test]
async fn a_known_code_is_valid_by_get_and_post_in_r4_and_r5() {
    let state = state();
    let e = state.editions.default_edition().unwrap();
    let (o, id) = active_with_child();
    let pt = e.edition.preferred_term(o).unwrap().unwrap().to_owned();
    for base in ["/r4", "/r5"] {
        let (status, v) = get(&format!(
            "{base}/CodeSystem/$validate-code?url={SCT}&code={id}"
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert!(result(&v), "{v}");
        assert_eq!(param(&v, "display").unwrap()["valueString"], pt.as_str());
        assert_eq!(
            param(&v, "version").unwrap()["valueString"],
            e.file.names.version_uri.as_str()
        );
        assert!(issues(&v).is_empty(), "{v}");
        let (status, v) = post(
            &format!("{base}/CodeSystem/$validate-code"),
            json!([{ "name": "coding", "valueCoding": {
                "system": SCT, "code": id.to_string(), "display": pt } }]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert!(result(&v), "{v}");
        let (status, v) = post(
            &format!("{base}/CodeSystem/$validate-code"),
            json!([{ "name": "codeableConcept", "valueCodeableConcept": { "coding": [
                { "system": "http://loinc.org", "code": "1-8" },
                { "system": SCT, "code": id.to_string() },
            ] } }]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert!(result(&v), "{v}");
        assert_eq!(param(&v, "code").unwrap()["valueCode"], id.to_string());
        assert!(param(&v, "codeableConcept").is_some());
    }
}

#[tokio::test]
async fn a_wrong_display_is_an_error_and_an_inactive_one_a_warning() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let (_, id) = active_with_child();
    let (status, v) = get(&format!(
        "/r4/CodeSystem/$validate-code?system={SCT}&code={id}&display=No+such+display"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(!result(&v));
    let i = issues(&v);
    assert_eq!(i.len(), 1, "{v}");
    assert_eq!(i[0].0, "error");
    assert_eq!(i[0].1, "invalid-display");
    assert!(
        i[0].2.starts_with(&format!(
            "Wrong Display Name 'No such display' for {SCT}#{id}. Valid display is"
        )),
        "{}",
        i[0].2
    );
    assert_eq!(
        param(&v, "message").unwrap()["valueString"],
        i[0].2.as_str()
    );

    // A description that is inactive while its concept has active ones.
    let found = (0..ed.concept_count()).find_map(|o| {
        let ds = ed.descriptions(o).ok()?;
        let inactive = ds.iter().find(|d| !d.active)?;
        (!ds.iter().any(|d| d.active && d.term == inactive.term))
            .then(|| (ed.sctid(o).unwrap(), inactive.term.to_owned()))
    });
    if let Some((id, term)) = found {
        let (status, v) = post(
            "/r5/CodeSystem/$validate-code",
            json!([
                { "name": "url", "valueUri": SCT },
                { "name": "code", "valueCode": id.to_string() },
                { "name": "display", "valueString": term },
            ]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        let i = issues(&v);
        assert!(
            i.iter().any(|(s, t, text)| s == "warning"
                && t == "display-comment"
                && text.contains("is no longer considered a correct display")),
            "{v}"
        );
    }
}

#[tokio::test]
async fn inactive_and_unknown_codes() {
    let state = state();
    let e = state.editions.default_edition().unwrap();
    let ed = &e.edition;
    let o = (0..ed.concept_count())
        .find(|&o| !ed.concept_at(o).unwrap().active)
        .expect("the synthetic edition has inactive concepts");
    let id = ed.sctid(o).unwrap();
    let (status, v) = get(&format!(
        "/r4/CodeSystem/$validate-code?system={SCT}&code={id}"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v));
    assert_eq!(param(&v, "inactive").unwrap()["valueBoolean"], true);
    assert_eq!(
        issues(&v),
        [(
            "warning".to_owned(),
            "code-comment".to_owned(),
            format!("The concept '{id}' has a status of inactive and its use should be reviewed")
        )]
    );

    let (status, v) = get(&format!(
        "/r4/CodeSystem/$validate-code?system={SCT}&code=12345"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(!result(&v));
    let i = issues(&v);
    assert_eq!(i[0].1, "invalid-code");
    assert_eq!(
        i[0].2,
        format!(
            "Unknown code '12345' in the CodeSystem '{SCT}' version '{}' (International Edition)",
            e.file.names.version_uri
        )
    );

    // A code system the server does not have: the code cannot be
    // validated, which is an answer (as the HL7 suite's bugs/x12-bad
    // expects), not a missing resource.
    let (status, v) = get("/r4/CodeSystem/$validate-code?system=http://loinc.org&code=1-8").await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(!result(&v));
    assert_eq!(
        issues(&v),
        [(
            "error".to_owned(),
            "not-found".to_owned(),
            "A definition for CodeSystem 'http://loinc.org' could not be found, so the code cannot be validated".to_owned()
        )]
    );
    let (status, v) = get(&format!("/r4/CodeSystem/$validate-code?system={SCT}")).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_outcome(&v), "required");
    let (status, v) = get(&format!(
        "/r4/CodeSystem/$validate-code?system={SCT}&code={id}&version=http://snomed.info/sct/1/version/1"
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_outcome(&v), "not-found");
    let (status, v) = common::call(
        state.clone(),
        Method::DELETE,
        "/r4/ValueSet/$validate-code",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert_eq!(error_outcome(&v), "not-supported");
}

#[tokio::test]
async fn an_expression_is_checked_concept_by_concept() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let o = (0..ed.concept_count())
        .find(|&o| ed.concept_at(o).unwrap().active && !ed.attributes(o).unwrap().is_empty())
        .expect("the synthetic edition has concepts with attributes");
    let id = ed.sctid(o).unwrap();
    let first = ed.attributes(o).unwrap()[0];
    let (t, target) = (first.type_id, first.target);
    let code = format!("{id}:{{{t}={target}}}");
    let (status, v) = post(
        "/r4/CodeSystem/$validate-code",
        json!([{ "name": "url", "valueUri": SCT }, { "name": "code", "valueCode": code }]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v), "{v}");
    assert_eq!(issues(&v)[0].1, "process-note");
    let bad = format!("{id}:{{{t}=1234567}}");
    let (_, v) = post(
        "/r4/CodeSystem/$validate-code",
        json!([{ "name": "url", "valueUri": SCT }, { "name": "code", "valueCode": bad }]),
    )
    .await;
    assert!(!result(&v), "{v}");
    assert!(
        issues(&v)
            .iter()
            .any(|i| i.2 == "Not a valid expression: Concept 1234567 not found"),
        "{v}"
    );
    // An attribute type that is no attribute: the focus concept itself.
    let reversed = format!("{id}:{{{id}={target}}}");
    let (_, v) = post(
        "/r5/CodeSystem/$validate-code",
        json!([{ "name": "url", "valueUri": SCT }, { "name": "code", "valueCode": reversed }]),
    )
    .await;
    assert!(!result(&v), "{v}");
    assert!(
        issues(&v).iter().any(|i| i.2
            == format!(
                "Not a valid expression: Concept {id} is not valid in this context (must be a descendent of one of 410662002,106237007)"
            )),
        "{v}"
    );
}

#[tokio::test]
async fn implicit_value_sets() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let (o, id) = active_with_child();
    let child = child_of(o);
    let parent = ed
        .sctid(ed.parents(o).unwrap().iter().next().unwrap())
        .unwrap();
    for (code, inside) in [(id, true), (child, true), (parent, false)] {
        let (status, v) = get(&format!(
            "/r5/ValueSet/$validate-code?url={SCT}?fhir_vs=isa/{id}&system={SCT}&code={code}"
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(result(&v), inside, "{code}: {v}");
        if !inside {
            let i = issues(&v);
            assert_eq!(i[0].1, "not-in-vs");
            assert!(i[0].2.ends_with(&format!(
                "was not found in the value set '{SCT}?fhir_vs=isa/{id}'"
            )));
        }
    }
    let (status, v) = post(
        "/r4/ValueSet/$validate-code",
        json!([
            { "name": "url", "valueUri": format!("{SCT}?fhir_vs") },
            { "name": "system", "valueUri": SCT },
            { "name": "code", "valueCode": parent.to_string() },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v));
    let (status, v) = get(&format!(
        "/r4/ValueSet/$validate-code?url={SCT}?fhir_vs=isa/12345&system={SCT}&code={id}"
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_outcome(&v), "not-found");

    // A refset's members are in its value set; others are not.
    if let Some(refset) = ed.refsets().map(|r| r.id).find(|&r| {
        ed.members(r)
            .unwrap()
            .iter()
            .any(|m| ed.ordinal(m.component).is_some())
    }) {
        let member = ed
            .members(refset)
            .unwrap()
            .iter()
            .find(|m| ed.ordinal(m.component).is_some())
            .map(|m| m.component);
        if let Some(member) = member {
            let (status, v) = get(&format!(
                "/r4/ValueSet/$validate-code?url={SCT}?fhir_vs=refset/{refset}&system={SCT}&code={member}"
            ))
            .await;
            assert_eq!(status, StatusCode::OK, "{v}");
            assert!(result(&v), "{v}");
        }
    }
    let (status, _) = get(&format!(
        "/r4/ValueSet/$validate-code?url={SCT}?fhir_vs=refset/12345&system={SCT}&code={id}"
    ))
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn inline_and_tx_resource_value_sets() {
    let (o, id) = active_with_child();
    let child = child_of(o);
    let vs = json!({
        "resourceType": "ValueSet",
        "url": "http://example.org/vs",
        "version": "1.0",
        "compose": {
            "include": [{ "system": SCT, "filter": [
                { "property": "concept", "op": "descendent-of", "value": id.to_string() }
            ] }],
            "exclude": [{ "system": SCT, "concept": [{ "code": "1" }] }],
        },
    });
    let (status, v) = post(
        "/r5/ValueSet/$validate-code",
        json!([
            { "name": "coding", "valueCoding": { "system": SCT, "code": child.to_string() } },
            { "name": "valueSet", "resource": vs },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v), "{v}");
    let (status, v) = post(
        "/r4/ValueSet/$validate-code",
        json!([
            { "name": "url", "valueUri": "http://example.org/vs" },
            { "name": "system", "valueUri": SCT },
            { "name": "code", "valueCode": id.to_string() },
            { "name": "tx-resource", "resource": vs },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(!result(&v), "{v}");
    assert!(
        issues(&v)[0].2.ends_with("'http://example.org/vs|1.0'"),
        "{v}"
    );
    let listed = json!({
        "resourceType": "ValueSet",
        "url": "http://example.org/list",
        "compose": { "include": [{ "system": SCT, "concept": [{ "code": id.to_string() }] }] },
    });
    let (_, v) = post(
        "/r4/ValueSet/$validate-code",
        json!([
            { "name": "system", "valueUri": SCT },
            { "name": "code", "valueCode": id.to_string() },
            { "name": "valueSet", "resource": listed },
        ]),
    )
    .await;
    assert!(result(&v), "{v}");
    let (status, v) = post(
        "/r4/ValueSet/$validate-code",
        json!([
            { "name": "url", "valueUri": "http://example.org/unknown" },
            { "name": "system", "valueUri": SCT },
            { "name": "code", "valueCode": id.to_string() },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(error_outcome(&v), "not-found");
    let unsupported = json!({
        "resourceType": "ValueSet",
        "compose": { "include": [{ "system": SCT, "filter": [
            { "property": "concept", "op": "regex", "value": ".*" }
        ] }] },
    });
    let (status, v) = post(
        "/r4/ValueSet/$validate-code",
        json!([
            { "name": "system", "valueUri": SCT },
            { "name": "code", "valueCode": id.to_string() },
            { "name": "valueSet", "resource": unsupported },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(error_outcome(&v), "not-supported");
}

#[tokio::test]
async fn ecl_value_sets_test_concepts_and_expressions() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let (o, id) = active_with_child();
    let child = child_of(o);
    let parent = ed
        .sctid(ed.parents(o).unwrap().iter().next().unwrap())
        .unwrap();
    let value_set = json!({
        "resourceType": "ValueSet",
        "url": "http://example.org/vs/ecl",
        "status": "active",
        "compose": { "include": [{ "system": SCT, "filter": [
            { "property": "constraint", "op": "=", "value": format!("<< {id} MINUS {child}") }
        ] }] },
    });
    let validate = |code: String| {
        let value_set = value_set.clone();
        async move {
            post(
                "/r4/ValueSet/$validate-code",
                json!([
                    { "name": "valueSet", "resource": value_set },
                    { "name": "system", "valueUri": SCT },
                    { "name": "code", "valueCode": code },
                ]),
            )
            .await
        }
    };
    for (code, inside) in [(id, true), (child, false), (parent, false)] {
        let (status, v) = validate(code.to_string()).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(result(&v), inside, "{code}: {v}");
    }
    // An expression refining a concept with one of its own attributes is
    // below the concept's parent, so inside `<< parent`; one refining the
    // parent's parent is not.
    let (d, p, attribute) = (0..ed.concept_count())
        .find_map(|d| {
            let a = *ed.attributes(d).unwrap().first()?;
            let p = ed.parents(d).unwrap().iter().next()?;
            ed.parents(p).unwrap().iter().next()?;
            Some((d, p, a))
        })
        .expect("a concept with an attribute and a grandparent");
    let grandparent = ed.parents(p).unwrap().iter().next().unwrap();
    let under = |top: u32, focus: u32| {
        let top = ed.sctid(top).unwrap();
        let focus = ed.sctid(focus).unwrap();
        async move {
            post(
                "/r5/ValueSet/$validate-code",
                json!([
                    { "name": "url", "valueUri": format!("{SCT}?fhir_vs=ecl/<< {top}") },
                    { "name": "system", "valueUri": SCT },
                    { "name": "code", "valueCode": format!("{focus}:{}={}", attribute.type_id, attribute.target) },
                ]),
            )
            .await
        }
    };
    let (status, v) = under(p, d).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v), "{v}");
    let (status, v) = under(p, grandparent).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(!result(&v), "{v}");
}

#[tokio::test]
async fn a_display_is_checked_in_the_languages_asked_for() {
    let state = state();
    let e = state.editions.default_edition().unwrap();
    let (o, id) = active_with_child();
    let pt = e.edition.preferred_term(o).unwrap().unwrap().to_owned();
    let ask = |display: &str, language: Option<&str>, header: Option<&'static str>| {
        let mut uri = format!(
            "/r4/CodeSystem/$validate-code?system={SCT}&code={id}&display={}",
            display.replace(' ', "+")
        );
        if let Some(l) = language {
            uri.push_str(&format!("&displayLanguage={l}"));
        }
        let state = state.clone();
        async move {
            let headers: Vec<(&str, &str)> =
                header.map(|h| ("Accept-Language", h)).into_iter().collect();
            common::call_with_headers(state, Method::GET, &uri, &headers, None).await
        }
    };
    // A wrong display names the languages it was checked in.
    for (language, header, named) in [
        (None, None, "--"),
        (Some("en-GB"), None, "en-GB"),
        (None, Some("en-US"), "en-US"),
    ] {
        let (status, v) = ask("No such display", language, header).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert!(!result(&v));
        let text = &issues(&v)[0].2;
        assert!(
            text.ends_with(&format!("(for the language(s) '{named}')")),
            "{named}: {text}"
        );
    }
    // The synthetic edition has English descriptions only: in German, the
    // right English display is information, a wrong one an error that
    // says so.
    let (_, v) = ask(&pt, Some("de"), None).await;
    assert!(result(&v), "{v}");
    assert_eq!(issues(&v)[0].0, "information");
    assert!(issues(&v)[0].2.contains("for language(s) 'de'"), "{v}");
    let (_, v) = ask("No such display", None, Some("de")).await;
    assert!(!result(&v), "{v}");
    assert_eq!(
        issues(&v)[0].2,
        format!(
            "Wrong Display Name 'No such display' for {SCT}#{id}. There are no valid display names found for language(s) 'de'. Default display is '{pt}'"
        )
    );
}

#[tokio::test]
async fn codeable_concepts_bare_codes_and_versioned_value_set_names() {
    let (o, id) = active_with_child();
    let child = child_of(o);
    let vs = json!({
        "resourceType": "ValueSet", "url": "http://example.org/vs", "version": "2.0",
        "compose": { "include": [{ "system": SCT, "filter": [
            { "property": "concept", "op": "descendent-of", "value": id.to_string() }
        ] }] },
    });
    // Every coding of a CodeableConcept counts: the second one is in.
    let cc = json!({ "coding": [
        { "system": SCT, "code": id.to_string() },
        { "system": SCT, "code": child.to_string() },
    ] });
    let (status, v) = post(
        "/r4/ValueSet/$validate-code",
        json!([
            { "name": "codeableConcept", "valueCodeableConcept": cc },
            { "name": "valueSet", "resource": vs },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v), "{v}");
    assert_eq!(param(&v, "code").unwrap()["valueCode"], child.to_string());
    // A code without a system: inferred from the value set.
    let (_, v) = post(
        "/r4/ValueSet/$validate-code",
        json!([
            { "name": "code", "valueCode": child.to_string() },
            { "name": "valueSet", "resource": vs },
        ]),
    )
    .await;
    assert!(result(&v), "{v}");
    assert_eq!(param(&v, "system").unwrap()["valueUri"], SCT);
    // A tx-resource named as url|version.
    for (url, found) in [
        ("http://example.org/vs|2.0", true),
        ("http://example.org/vs|9", false),
    ] {
        let (status, v) = post(
            "/r4/ValueSet/$validate-code",
            json!([
                { "name": "url", "valueUri": url },
                { "name": "system", "valueUri": SCT },
                { "name": "code", "valueCode": child.to_string() },
                { "name": "tx-resource", "resource": vs },
            ]),
        )
        .await;
        if found {
            assert_eq!(status, StatusCode::OK, "{v}");
            assert!(result(&v), "{v}");
        } else {
            assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        }
    }
}
