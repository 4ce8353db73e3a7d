//! `CodeSystem/$lookup` and `CodeSystem/$subsumes` at `/r4` and `/r5`, by
//! GET and POST, on two small synthetic editions, checked against what the
//! store itself says.

use crate::common;

use std::collections::BTreeSet;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt;
use txmap_server::app::router;

const SCT: &str = "http://snomed.info/sct";

// Two versions of one edition, read into memory; the older is the
// default, so that an edition URI (which means the latest) and no version
// at all pick different ones.
one_server!(|dir| {
    common::edition(dir, "jan", 800, 1, 20250131);
    common::edition(dir, "jul", 800, 1, 20250731);
    common::serve(
        dir,
        "editions = [\"jan.txmap\", \"jul.txmap\"]\ndefault_edition = \"jan\"\n",
    )
});

fn named<'a>(v: &'a Value, name: &str) -> Vec<&'a Value> {
    v["parameter"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == name)
        .collect()
}

fn part<'a>(p: &'a Value, name: &str) -> Option<&'a Value> {
    p["part"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == name)
}

/// The property codes returned, each once.
fn property_codes(v: &Value) -> BTreeSet<String> {
    named(v, "property")
        .into_iter()
        .map(|p| {
            part(p, "code").unwrap()["valueCode"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The `valueCode`s of the properties with this code.
fn property_values(v: &Value, code: &str) -> BTreeSet<String> {
    named(v, "property")
        .into_iter()
        .filter(|p| part(p, "code").unwrap()["valueCode"] == code)
        .map(|p| {
            part(p, "value").unwrap()["valueCode"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

fn issue(v: &Value) -> (&str, &str) {
    assert_eq!(v["resourceType"], "OperationOutcome", "{v}");
    let i = &v["issue"][0];
    assert_eq!(i["severity"], "error");
    (
        i["code"].as_str().unwrap(),
        i["details"]["text"].as_str().unwrap(),
    )
}

/// An active concept of the default edition with parents, children and
/// attributes.
fn rich_concept() -> u32 {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    (0..ed.concept_count())
        .find(|&o| {
            ed.concept_at(o).unwrap().active
                && !ed.parents(o).unwrap().is_empty()
                && !ed.children(o).unwrap().is_empty()
                && !ed.attributes(o).unwrap().is_empty()
        })
        .expect("the synthetic edition has a concept with parents, children and attributes")
}

#[tokio::test]
async fn lookup_by_get_and_post_in_r4_and_r5_answers_as_the_store_does() {
    let state = state();
    let served = state.editions.default_edition().unwrap();
    let ed = &served.edition;
    let version = served.file.names.version_uri.clone();
    let o = rich_concept();
    let c = ed.concept_at(o).unwrap();
    let code = c.id.to_string();
    let provider = state
        .packages
        .edition(state.editions.default_index().unwrap())
        .unwrap();
    let uses = provider.uses();

    let mut answers = Vec::new();
    for base in ["/r4", "/r5"] {
        let (status, v) = get(&format!(
            "{base}/CodeSystem/$lookup?system={SCT}&code={code}&_format=json"
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        answers.push(v);
        let (status, v) = post(
            &format!("{base}/CodeSystem/$lookup"),
            json!([
                { "name": "system", "valueUri": SCT },
                { "name": "code", "valueCode": code },
                { "name": "uuid", "valueString": "ignored" },
            ]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        answers.push(v);
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]));
    // Other tests share the editions, so at least these four.
    assert!(provider.uses() >= uses + 4);

    let v = &answers[0];
    assert_eq!(v["resourceType"], "Parameters");
    assert_eq!(named(v, "code")[0]["valueCode"], code.as_str());
    assert_eq!(named(v, "system")[0]["valueUri"], SCT);
    assert_eq!(named(v, "version")[0]["valueString"], version.as_str());
    assert_eq!(
        named(v, "name")[0]["valueString"],
        format!("{SCT}|{version}")
    );
    assert_eq!(
        named(v, "display")[0]["valueString"],
        ed.preferred_term(o).unwrap().unwrap()
    );
    let active: Vec<_> = ed
        .descriptions(o)
        .unwrap()
        .into_iter()
        .filter(|d| d.active)
        .collect();
    let designations = named(v, "designation");
    assert_eq!(designations.len(), active.len());
    for (d, desig) in active.iter().zip(&designations) {
        assert_eq!(part(desig, "value").unwrap()["valueString"], d.term);
        assert_eq!(part(desig, "language").unwrap()["valueCode"], d.language);
        let use_ = &part(desig, "use").unwrap()["valueCoding"];
        assert_eq!(use_["system"], SCT);
        assert_eq!(use_["code"], d.type_id.to_string());
        assert!(use_["display"].is_string());
    }

    let ids = |list: txmap_store::Ordinals<'_>| -> BTreeSet<String> {
        list.iter()
            .map(|o| ed.sctid(o).unwrap().to_string())
            .collect()
    };
    assert_eq!(property_values(v, "parent"), ids(ed.parents(o).unwrap()));
    assert_eq!(property_values(v, "child"), ids(ed.children(o).unwrap()));
    for p in named(v, "property") {
        if part(p, "code").unwrap()["valueCode"] == "parent" {
            let target = part(p, "value").unwrap()["valueCode"].as_str().unwrap();
            let to = ed.ordinal(target.parse().unwrap()).unwrap();
            assert_eq!(
                part(p, "description").unwrap()["valueString"],
                ed.preferred_term(to).unwrap().unwrap()
            );
        }
    }
    for r in ed.attributes(o).unwrap() {
        assert!(
            property_values(v, &r.type_id.to_string()).contains(&r.target.to_string()),
            "attribute {r:?} missing"
        );
    }
    let inactive = named(v, "property")
        .into_iter()
        .find(|p| part(p, "code").unwrap()["valueCode"] == "inactive")
        .unwrap();
    assert_eq!(part(inactive, "value").unwrap()["valueBoolean"], false);
    let et = c.effective_time;
    let effective = named(v, "property")
        .into_iter()
        .find(|p| part(p, "code").unwrap()["valueCode"] == "effectiveTime")
        .unwrap();
    assert_eq!(
        part(effective, "value").unwrap()["valueDateTime"],
        format!("{}-{:02}-{:02}", et / 10000, et / 100 % 100, et % 100)
    );
    assert_eq!(
        property_values(v, "module"),
        BTreeSet::from([c.module.to_string()])
    );
    // Asked-for-only properties are not there by default.
    let codes = property_codes(v);
    for p in ["sufficientlyDefined", "normalForm", "normalFormTerse"] {
        assert!(!codes.contains(p), "{p} returned unasked");
    }
}

#[tokio::test]
async fn the_property_parameter_filters() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let o = rich_concept();
    let c = ed.concept_at(o).unwrap();
    let attribute = ed.attributes(o).unwrap()[0];

    let (status, v) = get(&format!(
        "/r4/CodeSystem/$lookup?system={SCT}&code={}&property=parent&property=sufficientlyDefined&property={}",
        c.id, attribute.type_id
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        property_codes(&v),
        BTreeSet::from([
            "parent".to_owned(),
            "sufficientlyDefined".to_owned(),
            attribute.type_id.to_string()
        ])
    );
    assert!(named(&v, "designation").is_empty());
    // The basics are always there.
    for name in ["code", "display", "name", "system", "version"] {
        assert_eq!(named(&v, name).len(), 1, "{name}");
    }
    let sd = named(&v, "property")
        .into_iter()
        .find(|p| part(p, "code").unwrap()["valueCode"] == "sufficientlyDefined")
        .unwrap();
    assert_eq!(part(sd, "value").unwrap()["valueBoolean"], c.defined);

    let (status, v) = post(
        "/r5/CodeSystem/$lookup",
        json!([
            { "name": "coding", "valueCoding": { "system": SCT, "code": c.id.to_string() } },
            { "name": "property", "valueCode": "normalForm" },
            { "name": "property", "valueCode": "normalFormTerse" },
            { "name": "property", "valueCode": "designation" },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        property_codes(&v),
        BTreeSet::from(["normalForm".to_owned(), "normalFormTerse".to_owned()])
    );
    assert!(!named(&v, "designation").is_empty());
    let terse = named(&v, "property")
        .into_iter()
        .find(|p| part(p, "code").unwrap()["valueCode"] == "normalFormTerse")
        .unwrap();
    let terse = part(terse, "value").unwrap()["valueString"]
        .as_str()
        .unwrap();
    let prefix = if c.defined { "===" } else { "<<<" };
    assert!(terse.starts_with(prefix), "{terse}");
    for p in ed.parents(o).unwrap().iter() {
        assert!(terse.contains(&ed.sctid(p).unwrap().to_string()), "{terse}");
    }
    assert!(
        terse.contains(&format!("{}={}", attribute.type_id, attribute.target)),
        "{terse}"
    );
    if attribute.group != 0 {
        assert!(terse.contains('{'), "{terse}");
    }
}

#[tokio::test]
async fn the_version_picks_the_edition() {
    let state = state();
    let jan = &state.editions.list[0].file.names;
    let jul = &state.editions.list[1].file.names;
    assert_eq!(jan.edition_uri, jul.edition_uri);
    let o = rich_concept();
    let code = state.editions.list[0].edition.sctid(o).unwrap();
    for (version, expected) in [
        (None, &jan.version_uri),
        (Some(&jan.version_uri), &jan.version_uri),
        (Some(&jul.version_uri), &jul.version_uri),
        (Some(&jan.edition_uri), &jul.version_uri),
    ] {
        let mut parameters = vec![
            json!({ "name": "system", "valueUri": SCT }),
            json!({ "name": "code", "valueCode": code.to_string() }),
            json!({ "name": "property", "valueCode": "inactive" }),
        ];
        if let Some(v) = version {
            parameters.push(json!({ "name": "version", "valueString": v }));
        }
        let (status, v) = post("/r4/CodeSystem/$lookup", json!(parameters)).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(named(&v, "version")[0]["valueString"], expected.as_str());
    }
}

#[tokio::test]
async fn unknown_codes_versions_and_systems_are_4xx_outcomes() {
    let state = state();
    let jan = state.editions.list[0].file.names.version_uri.clone();
    let jul = state.editions.list[1].file.names.version_uri.clone();
    let o = rich_concept();
    let code = state.editions.list[0].edition.sctid(o).unwrap();
    for base in ["/r4", "/r5"] {
        let lookup = format!("{base}/CodeSystem/$lookup");
        for bad in ["1234567", "22298006x", "367430006:{272741003=24028007}", ""] {
            let (status, v) = post(
                &lookup,
                json!([{ "name": "system", "valueUri": SCT }, { "name": "code", "valueCode": bad }]),
            )
            .await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{bad}: {v}");
            let (code, text) = issue(&v);
            assert_eq!(code, "not-found");
            // An expression names the concept that is missing.
            let missing = bad.split(':').next().unwrap();
            assert!(
                text.contains(&format!("'{missing}'")) && text.contains(&jan),
                "{text}"
            );
            assert_eq!(
                v["issue"][0]["details"]["coding"][0]["code"], "not-found",
                "{v}"
            );
        }

        let (status, v) = get(&format!(
            "{lookup}?system={SCT}&code={code}&version=http://snomed.info/sct/1/version/20000101"
        ))
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        let (c, text) = issue(&v);
        assert_eq!(c, "not-found");
        assert!(
            text.contains("http://snomed.info/sct/1/version/20000101")
                && text.contains(&jan)
                && text.contains(&jul),
            "{text}"
        );

        let (status, v) = get(&format!("{lookup}?system=http://loinc.org&code=1234-5")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        assert!(issue(&v).1.contains("http://loinc.org"));

        let (status, v) = get(&format!("{lookup}?system={SCT}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(issue(&v).0, "required");
        let (status, v) = get(&format!("{lookup}?code={code}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(issue(&v).0, "required");
        let (status, v) = get(&format!("{lookup}?system={SCT}&code=1&code=2")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(issue(&v).0, "invalid");

        // Bodies that are not Parameters, and other methods.
        let (status, v) = common::call(
            state.clone(),
            Method::POST,
            &lookup,
            Some(json!({"resourceType": "Bundle"})),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        let response = router(state.clone())
            .oneshot(
                Request::post(&lookup)
                    .header("content-type", "application/fhir+xml")
                    .body(Body::from("<Parameters/>"))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let response = router(state.clone())
            .oneshot(
                Request::post(&lookup)
                    .header("content-type", "application/fhir+json")
                    .body(Body::from("{not json"))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let (status, v) = common::call(state.clone(), Method::PUT, &lookup, None).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{v}");
        // A form body is read like a query string.
        let response = router(state.clone())
            .oneshot(
                Request::post(&lookup)
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body(Body::from(format!(
                        "system={}&code={code}",
                        SCT.replace(':', "%3A").replace('/', "%2F")
                    )))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
}

#[tokio::test]
async fn subsumes_gives_all_four_outcomes_as_the_store_does() {
    let state = state();
    let served = state.editions.default_edition().unwrap();
    let ed = &served.edition;
    let o = rich_concept();
    let parent = ed.parents(o).unwrap().first().unwrap();
    let ancestors = ed.ancestors(o).unwrap();
    let descendants = ed.descendants(o).unwrap();
    // A concept neither above nor below `o`.
    let unrelated = (0..ed.concept_count())
        .find(|&x| x != o && !ancestors.contains(x) && !descendants.contains(x))
        .unwrap();
    let id = |x: u32| ed.sctid(x).unwrap().to_string();
    let cases = [
        (o, o, "equivalent"),
        (parent, o, "subsumes"),
        (o, parent, "subsumed-by"),
        (o, unrelated, "not-subsumed"),
        (unrelated, o, "not-subsumed"),
    ];
    for base in ["/r4", "/r5"] {
        let uri = format!("{base}/CodeSystem/$subsumes");
        for (a, b, expected) in cases {
            let (status, v) = get(&format!(
                "{uri}?system={SCT}&codeA={}&codeB={}",
                id(a),
                id(b)
            ))
            .await;
            assert_eq!(status, StatusCode::OK, "{v}");
            assert_eq!(
                v,
                json!({"resourceType": "Parameters", "parameter": [{"name": "outcome", "valueCode": expected}]})
            );
            let (status, v) = post(
                &uri,
                json!([
                    { "name": "codingA", "valueCoding": { "system": SCT, "code": id(a) } },
                    { "name": "codingB", "valueCoding": { "system": SCT, "code": id(b), "version": served.file.names.version_uri } },
                ]),
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{v}");
            assert_eq!(named(&v, "outcome")[0]["valueCode"], expected);
        }
        let (status, v) = get(&format!("{uri}?system={SCT}&codeA={}&codeB=1234567", id(o))).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        assert!(issue(&v).1.contains("'1234567'"));
        let (status, v) = get(&format!("{uri}?system=http://loinc.org&codeA=1&codeB=2")).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        let (status, v) = get(&format!("{uri}?system={SCT}&codeA={}", id(o))).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(issue(&v).0, "required");
    }
}

/// `$subsumes` in a code system other than SNOMED CT: the generic engine
/// reads the hierarchy of a CodeSystem sent with the request (nested
/// concepts, `is-a`).
#[tokio::test]
async fn subsumes_in_a_code_system_sent_with_the_request() {
    let cs = json!({"resourceType": "CodeSystem", "url": "http://example.org/shapes",
    "status": "active", "content": "complete", "hierarchyMeaning": "is-a",
    "concept": [
        {"code": "shape", "concept": [{"code": "polygon", "concept": [{"code": "square"}]}]},
        {"code": "colour"},
    ]});
    let cases = [
        ("shape", "square", "subsumes"),
        ("square", "polygon", "subsumed-by"),
        ("polygon", "polygon", "equivalent"),
        ("colour", "square", "not-subsumed"),
    ];
    for base in ["/r4", "/r5"] {
        for (a, b, expected) in cases {
            let (status, v) = post(
                &format!("{base}/CodeSystem/$subsumes"),
                json!([
                    { "name": "system", "valueUri": "http://example.org/shapes" },
                    { "name": "codeA", "valueCode": a },
                    { "name": "codeB", "valueCode": b },
                    { "name": "tx-resource", "resource": cs },
                ]),
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{a} {b}: {v}");
            assert_eq!(named(&v, "outcome")[0]["valueCode"], expected, "{a} {b}");
        }
        let (status, v) = post(
            &format!("{base}/CodeSystem/$subsumes"),
            json!([
                { "name": "system", "valueUri": "http://example.org/shapes" },
                { "name": "codeA", "valueCode": "shape" },
                { "name": "codeB", "valueCode": "circle" },
                { "name": "tx-resource", "resource": cs },
            ]),
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        assert!(issue(&v).1.contains("circle"), "{v}");
    }
}

#[tokio::test]
async fn an_expression_is_looked_up_as_its_refined_focus_concept() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let o = rich_concept();
    let focus = ed.sctid(o).unwrap();
    let own = ed.attributes(o).unwrap();
    // An attribute of another concept that the focus concept lacks.
    let extra = (0..ed.concept_count())
        .flat_map(|x| ed.attributes(x).unwrap())
        .find(|r| {
            !own.iter()
                .any(|a| a.type_id == r.type_id && a.target == r.target)
        })
        .unwrap();
    let expression = format!("{focus} : {{ {} = {} }}", extra.type_id, extra.target);
    let (status, v) = post(
        "/r5/CodeSystem/$lookup",
        json!([
            { "name": "system", "valueUri": SCT },
            { "name": "code", "valueCode": expression },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(named(&v, "code")[0]["valueCode"], expression.as_str());
    let pt = |id: u64| ed.preferred_term(ed.ordinal(id).unwrap()).unwrap().unwrap();
    let display = format!(
        "{focus}|{}|:{{{}|{}|={}|{}|}}",
        pt(focus),
        extra.type_id,
        pt(extra.type_id),
        extra.target,
        pt(extra.target)
    );
    assert_eq!(named(&v, "display")[0]["valueString"], display.as_str());
    let designations = named(&v, "designation");
    assert_eq!(designations.len(), 1);
    assert_eq!(
        part(designations[0], "value").unwrap()["valueString"],
        display.as_str()
    );
    assert!(property_values(&v, &extra.type_id.to_string()).contains(&extra.target.to_string()));
    for r in own {
        assert!(property_values(&v, &r.type_id.to_string()).contains(&r.target.to_string()));
    }
    assert_eq!(
        property_values(&v, "parent").len(),
        ed.parents(o).unwrap().len()
    );
    // Malformed, or naming an unknown concept: 404 naming the code.
    for bad in [
        format!("{focus}:{{"),
        format!("{focus}:{}=1234567", extra.type_id),
    ] {
        let (status, v) = get(&format!(
            "/r4/CodeSystem/$lookup?system={SCT}&code={}",
            bad.replace('{', "%7B")
                .replace(':', "%3A")
                .replace('=', "%3D")
        ))
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{bad}: {v}");
        assert_eq!(issue(&v).0, "not-found");
    }
}

#[tokio::test]
async fn an_inactive_concept_says_so() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let o = (0..ed.concept_count())
        .find(|&o| !ed.concept_at(o).unwrap().active)
        .expect("the synthetic edition has inactive concepts");
    let (status, v) = get(&format!(
        "/r5/CodeSystem/$lookup?system={SCT}&code={}&property=inactive&property=parent",
        ed.sctid(o).unwrap()
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let inactive = named(&v, "property")
        .into_iter()
        .find(|p| part(p, "code").unwrap()["valueCode"] == "inactive")
        .unwrap();
    assert_eq!(part(inactive, "value").unwrap()["valueBoolean"], true);
    assert_eq!(
        property_values(&v, "parent").len(),
        ed.parents(o).unwrap().len()
    );
}

#[tokio::test]
async fn displays_follow_display_language_then_accept_language() {
    const US: u64 = 900000000000509007;
    const GB: u64 = 900000000000508004;
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    // A concept spelled differently in the two dialects.
    let (code, us, gb) = (0..ed.concept_count())
        .find_map(|o| {
            let us = ed.preferred_term_in(o, &[US]).unwrap()?.term;
            let gb = ed.preferred_term_in(o, &[GB]).unwrap()?.term;
            (us != gb).then(|| (ed.sctid(o).unwrap(), us.to_owned(), gb.to_owned()))
        })
        .expect("the synthetic edition has US/GB spelling pairs");
    let uri = format!("/r4/CodeSystem/$lookup?system={SCT}&code={code}&property=display");
    let display = |v: &Value| named(v, "display")[0]["valueString"].clone();
    for (query, header, expected) in [
        ("", None, &us),
        ("&displayLanguage=en-GB", None, &gb),
        ("", Some("en-GB,en;q=0.8"), &gb),
        ("", Some("fr-CA, en-GB;q=0.5"), &gb),
        ("", Some("en-GB;q=0.1, en-US"), &us),
        // The parameter wins over the header.
        ("&displayLanguage=en-US", Some("en-GB"), &us),
        // A language the edition lacks falls back to the default.
        ("&displayLanguage=de", None, &us),
    ] {
        let headers: Vec<(&str, &str)> =
            header.map(|h| ("accept-language", h)).into_iter().collect();
        let (status, v) = common::call_with_headers(
            state.clone(),
            axum::http::Method::GET,
            &format!("{uri}{query}"),
            &headers,
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(display(&v), json!(expected), "{query} {header:?}");
    }
}
