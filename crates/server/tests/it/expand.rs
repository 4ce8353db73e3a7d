//! `ValueSet/$expand` at `/r4` and `/r5`, by GET and POST, on a small
//! synthetic edition, checked against what the store itself says.

use crate::common;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

const SCT: &str = "http://snomed.info/sct";

one_server!(|dir| {
    common::edition(dir, "ed", 800, 11, 20250131);
    common::serve(dir, "editions = [\"ed.txmap\"]\n")
});

fn codes(v: &Value) -> Vec<String> {
    v["expansion"]["contains"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| c["code"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn error_code(v: &Value) -> &str {
    assert_eq!(v["resourceType"], "OperationOutcome", "{v}");
    assert_eq!(v["issue"][0]["severity"], "error");
    v["issue"][0]["code"].as_str().unwrap()
}

/// An active concept with descendants: its ordinal, SCTID and the SCTIDs
/// of itself and its descendants, sorted as codes.
fn subtree() -> (u32, u64, Vec<String>) {
    subtree_of(&state())
}

fn subtree_of(state: &txmap_server::app::AppState) -> (u32, u64, Vec<String>) {
    let ed = &state.editions.default_edition().unwrap().edition;
    let o = (0..ed.concept_count())
        .filter(|&o| ed.concept_at(o).unwrap().active)
        .find(|&o| {
            let n = ed.descendants(o).unwrap().len();
            (5..100).contains(&n)
        })
        .expect("a concept with a few descendants");
    let mut all: Vec<String> = std::iter::once(o)
        .chain(ed.descendants(o).unwrap().iter())
        .map(|d| ed.sctid(d).unwrap().to_string())
        .collect();
    all.sort();
    (o, ed.sctid(o).unwrap(), all)
}

#[tokio::test]
async fn an_implicit_is_a_value_set_expands_to_the_subtree() {
    let state = state();
    let e = state.editions.default_edition().unwrap();
    let (_, id, all) = subtree();
    for base in ["/r4", "/r5"] {
        let (status, v) = get(&format!(
            "{base}/ValueSet/$expand?url={SCT}?fhir_vs%3Disa/{id}"
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(v["resourceType"], "ValueSet");
        assert_eq!(v["url"], format!("{SCT}?fhir_vs=isa/{id}"));
        let x = &v["expansion"];
        assert_eq!(x["total"], all.len());
        assert_eq!(codes(&v), all);
        assert!(x["identifier"].as_str().unwrap().starts_with("urn:uuid:"));
        assert!(x["timestamp"].as_str().unwrap().ends_with('Z'));
        assert_eq!(
            x["parameter"],
            json!([{ "name": "used-codesystem",
                     "valueUri": format!("{SCT}|{}", e.file.names.version_uri) }])
        );
        assert_eq!(
            x["extension"][0]["url"],
            "http://hl7.org/fhir/StructureDefinition/valueset-unclosed"
        );
        let c = &x["contains"][0];
        assert_eq!(c["system"], SCT);
        assert!(c["display"].is_string());
    }
}

#[tokio::test]
async fn pages_are_slices_of_the_whole_and_the_total_is_always_given() {
    let (_, id, all) = subtree();
    let mut seen = Vec::new();
    let mut offset = 0;
    while offset < all.len() {
        let (status, v) = post(
            "/r5/ValueSet/$expand",
            json!([
                { "name": "url", "valueUri": format!("{SCT}?fhir_vs=isa/{id}") },
                { "name": "count", "valueInteger": 3 },
                { "name": "offset", "valueInteger": offset },
            ]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(v["expansion"]["total"], all.len());
        assert_eq!(v["expansion"]["offset"], offset);
        let params = v["expansion"]["parameter"].as_array().unwrap();
        assert!(params.contains(&json!({ "name": "count", "valueInteger": 3 })));
        let page = codes(&v);
        assert!(!page.is_empty() && page.len() <= 3);
        seen.extend(page);
        offset += 3;
    }
    assert_eq!(seen, all);
    // count = 0: only the total.
    let (status, v) = get("/r4/ValueSet/$expand?url=http://snomed.info/sct?fhir_vs&count=0").await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    assert_eq!(v["expansion"]["total"], ed.concept_count());
    assert!(v["expansion"].get("contains").is_none());
    assert_eq!(v["name"], "ALLSNOMEDCT");
}

#[tokio::test]
async fn an_inline_value_set_lists_inactive_concepts_with_their_status() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let inactive = (0..ed.concept_count())
        .find(|&o| !ed.concept_at(o).unwrap().active)
        .expect("the synthetic edition has inactive concepts");
    let (active, active_id, _) = subtree();
    let inactive_id = ed.sctid(inactive).unwrap();
    let vs = json!({
        "resourceType": "ValueSet",
        "url": "http://example.org/vs",
        "version": "1",
        "publisher": "not repeated",
        "compose": { "include": [{ "system": SCT, "concept": [
            { "code": inactive_id.to_string() },
            { "code": active_id.to_string() },
            { "code": "999999999999" },
        ] }] },
    });
    for base in ["/r4", "/r5"] {
        let (status, v) = post(
            &format!("{base}/ValueSet/$expand"),
            json!([
                { "name": "valueSet", "resource": vs },
                { "name": "includeDesignations", "valueBoolean": true },
            ]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(v["url"], "http://example.org/vs");
        assert!(v.get("compose").is_none() && v.get("publisher").is_none());
        assert_eq!(v["expansion"]["total"], 2);
        assert!(v["expansion"].get("extension").is_none() || base == "/r4");
        let contains = v["expansion"]["contains"].as_array().unwrap();
        let c = contains
            .iter()
            .find(|c| c["code"].as_str() == Some(inactive_id.to_string().as_str()))
            .unwrap();
        assert_eq!(c["inactive"], true);
        if base == "/r5" {
            assert_eq!(
                c["property"],
                json!([{ "code": "status", "valueCode": "inactive" }])
            );
            assert_eq!(v["expansion"]["property"][0]["code"], "status");
        } else {
            assert!(c.get("property").is_none());
            assert!(
                c["extension"][0]["url"]
                    .as_str()
                    .unwrap()
                    .ends_with("extension-ValueSet.expansion.contains.property")
            );
        }
        let a = contains
            .iter()
            .find(|c| c["code"].as_str() == Some(active_id.to_string().as_str()))
            .unwrap();
        assert!(a.get("inactive").is_none());
        let designations = a["designation"].as_array().expect("designations");
        let pt = ed.preferred_term(active).unwrap().unwrap();
        assert!(designations.iter().any(|d| d["value"] == pt), "{a}");
        assert!(designations.iter().all(|d| d["use"]["system"] == SCT));
    }
    // activeOnly drops the inactive concept.
    let (status, v) = post(
        "/r5/ValueSet/$expand",
        json!([
            { "name": "valueSet", "resource": vs },
            { "name": "activeOnly", "valueBoolean": true },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(codes(&v), [active_id.to_string()]);
}

#[tokio::test]
async fn a_tx_resource_with_filters_and_excludes() {
    let (o, id, all) = subtree();
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let child = ed.children(o).unwrap().first().unwrap();
    let child_id = ed.sctid(child).unwrap();
    let vs = json!({
        "resourceType": "ValueSet",
        "url": "http://example.org/filtered",
        "compose": {
            "include": [{ "system": SCT, "filter": [
                { "property": "concept", "op": "descendent-of", "value": id.to_string() },
            ] }],
            "exclude": [{ "system": SCT, "concept": [{ "code": child_id.to_string() }] }],
        },
    });
    let (status, v) = post(
        "/r4/ValueSet/$expand",
        json!([
            { "name": "url", "valueUri": "http://example.org/filtered" },
            { "name": "tx-resource", "resource": vs },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let expected: Vec<String> = all
        .into_iter()
        .filter(|c| *c != id.to_string() && *c != child_id.to_string())
        .collect();
    assert_eq!(codes(&v), expected);
}

#[tokio::test]
async fn a_text_filter_finds_a_concept_by_its_preferred_term() {
    let (o, id, _) = subtree();
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let pt = ed.preferred_term(o).unwrap().unwrap().to_owned();
    let (status, v) = post(
        "/r5/ValueSet/$expand",
        json!([
            { "name": "url", "valueUri": format!("{SCT}?fhir_vs") },
            { "name": "filter", "valueString": pt },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let found = codes(&v);
    assert_eq!(found.first(), Some(&id.to_string()), "{v}");
    assert_eq!(v["expansion"]["total"], found.len());
    assert!(
        v["expansion"]["parameter"]
            .as_array()
            .unwrap()
            .contains(&json!({ "name": "filter", "valueString": pt }))
    );
    // A filter with no words is a client error.
    let (status, v) =
        get("/r5/ValueSet/$expand?url=http://snomed.info/sct?fhir_vs&filter=%2B%2B").await;
    assert!(status.is_client_error(), "{v}");
    error_code(&v);
}

#[tokio::test]
async fn too_many_codes_is_too_costly() {
    let (_, id, all) = subtree();
    let url = format!("/r4/ValueSet/$expand?url={SCT}?fhir_vs%3Disa/{id}");
    let (status, v) = common::call_with_headers(
        state(),
        Method::GET,
        &url,
        &[("X-TOO-COSTLY-THRESHOLD", "2")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(error_code(&v), "too-costly");
    assert_eq!(
        v["issue"][0]["details"]["text"],
        format!(
            "The value set '{SCT}?fhir_vs=isa/{id}' expansion has too many codes to produce (>2)"
        )
    );
    // Within the threshold when paged.
    let (status, v) = common::call_with_headers(
        state(),
        Method::GET,
        &format!("{url}&count=2"),
        &[("X-TOO-COSTLY-THRESHOLD", "2")],
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["expansion"]["total"], all.len());
    // The `limit` parameter lowers the threshold.
    let (status, v) = post(
        "/r5/ValueSet/$expand",
        json!([
            { "name": "url", "valueUri": format!("{SCT}?fhir_vs") },
            { "name": "limit", "valueInteger": 10 },
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(error_code(&v), "too-costly");
}

#[tokio::test]
async fn bad_requests_are_4xx_outcomes() {
    let cases: Vec<(Value, StatusCode)> = vec![
        (json!([]), StatusCode::BAD_REQUEST),
        (
            json!([{ "name": "url", "valueUri": "http://example.org/unknown" }]),
            StatusCode::NOT_FOUND,
        ),
        (
            json!([{ "name": "url", "valueUri": format!("{SCT}?fhir_vs=isa/123456789999") }]),
            StatusCode::NOT_FOUND,
        ),
        (
            json!([
                { "name": "url", "valueUri": format!("{SCT}?fhir_vs") },
                { "name": "count", "valueString": "many" },
            ]),
            StatusCode::BAD_REQUEST,
        ),
        // Another system goes to the general engine, which does not know
        // LOINC: the code system is not found.
        (
            json!([{ "name": "valueSet", "resource": {
                "resourceType": "ValueSet",
                "compose": { "include": [{ "system": "http://loinc.org" }] },
            } }]),
            StatusCode::NOT_FOUND,
        ),
        (
            json!([
                { "name": "url", "valueUri": format!("{SCT}?fhir_vs") },
                { "name": "system-version", "valueUri": format!("{SCT}|http://snomed.info/sct/1/version/1") },
            ]),
            StatusCode::NOT_FOUND,
        ),
    ];
    for (params, expected) in cases {
        let (status, v) = post("/r5/ValueSet/$expand", params.clone()).await;
        assert_eq!(status, expected, "{params} → {v}");
        error_code(&v);
    }
    let (status, v) = common::call(state(), Method::PUT, "/r4/ValueSet/$expand", None).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{v}");
}

#[tokio::test]
async fn a_display_language_picks_that_refsets_preferred_term() {
    let (o, id, _) = subtree();
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let default = ed.preferred_term(o).unwrap().unwrap().to_owned();
    let (status, v) = get(&format!(
        "/r4/ValueSet/$expand?url={SCT}?fhir_vs%3Disa/{id}&displayLanguage=fr"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let c = v["expansion"]["contains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"].as_str() == Some(id.to_string().as_str()))
        .unwrap();
    assert_eq!(c["display"], default.as_str());
}

#[tokio::test]
async fn a_request_that_outlives_its_time_budget_is_too_costly() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "ed", 800, 11, 20250131);
    // A budget that has run out before the work starts: every loop that
    // checks the deadline stops at once.
    let state = common::serve(
        dir.path(),
        "editions = [\"ed.txmap\"]\n[limits]\nrequest_seconds = 0.000000001\n",
    );
    let (status, v) = common::call(
        state.clone(),
        Method::GET,
        &format!("/r4/ValueSet/$expand?url={SCT}%3Ffhir_vs&count=5"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(error_code(&v), "too-costly");
    assert!(
        v["issue"][0]["details"]["text"]
            .as_str()
            .unwrap()
            .contains("time budget"),
        "{v}"
    );
    // The general engine keeps the same budget.
    let (status, v) = common::call(
        state.clone(),
        Method::POST,
        "/r4/ValueSet/$expand",
        Some(whole_code_system(2)),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(error_code(&v), "too-costly");
    // Work without loops still answers.
    let (status, v) = common::call(state, Method::GET, "/r4/$versions", None).await;
    assert_eq!(status, StatusCode::OK, "{v}");
}

/// `$expand` of a value set that is the whole of a CodeSystem of `n`
/// codes, both sent as `tx-resource`s (the general engine answers it).
fn whole_code_system(n: usize) -> Value {
    let concepts: Vec<Value> = (0..n).map(|i| json!({ "code": format!("c{i}") })).collect();
    common::parameters(json!([
        { "name": "url", "valueUri": "http://example.org/vs" },
        { "name": "tx-resource", "resource": {
            "resourceType": "CodeSystem", "url": "http://example.org/cs", "content": "complete",
            "concept": concepts } },
        { "name": "tx-resource", "resource": {
            "resourceType": "ValueSet", "url": "http://example.org/vs",
            "compose": { "include": [{ "system": "http://example.org/cs" }] } } },
    ]))
}

#[tokio::test]
async fn the_threshold_header_lowers_the_limit_but_never_raises_it() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "ed", 800, 11, 20250131);
    let state = common::serve(
        dir.path(),
        "editions = [\"ed.txmap\"]\n[limits]\nmax_expansion = 3\n",
    );
    let (_, id, all) = subtree_of(&state);
    assert!(all.len() > 3);
    let url = format!("/r4/ValueSet/$expand?url={SCT}?fhir_vs%3Disa/{id}");
    for threshold in ["2", "1000000"] {
        let (status, v) = common::call_with_headers(
            state.clone(),
            Method::GET,
            &url,
            &[("X-TOO-COSTLY-THRESHOLD", threshold)],
            None,
        )
        .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{threshold}: {v}");
        let limit = threshold.parse::<usize>().unwrap().min(3);
        assert!(
            v["issue"][0]["details"]["text"]
                .as_str()
                .unwrap()
                .ends_with(&format!("(>{limit})")),
            "{v}"
        );
    }
    // The general engine too.
    let (status, v) = common::call_with_headers(
        state,
        Method::POST,
        "/r4/ValueSet/$expand",
        &[("X-TOO-COSTLY-THRESHOLD", "1000000")],
        Some(whole_code_system(5)),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(error_code(&v), "too-costly");
}

#[test]
fn limits_out_of_range_are_refused_at_startup() {
    for (text, key) in [
        ("request_seconds = 0", "request_seconds"),
        ("heavy_concurrency = 0", "heavy_concurrency"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("txmap.toml"), format!("[limits]\n{text}\n")).unwrap();
        let options = txmap_server::ServeOptions {
            config: Some(dir.path().join("txmap.toml")),
            data_dir: dir.path().join("data"),
            ..Default::default()
        };
        let Err(err) = txmap_server::prepare(&options, &txmap_load::Loader::new()) else {
            panic!("{text} is refused");
        };
        assert!(err.to_string().contains(key), "{err}");
    }
}

/// A ValueSet whose one include has the filters given.
fn compose(filters: Value) -> Value {
    json!({
        "resourceType": "ValueSet",
        "url": "http://example.org/vs/ecl",
        "status": "active",
        "compose": { "include": [{ "system": SCT, "filter": filters }] },
    })
}

#[tokio::test]
async fn ecl_value_sets_expand_by_url_and_by_compose() {
    let (o, id, all) = subtree();
    // fhir_vs=ecl/, percent-encoded as a URL parameter value.
    let (status, v) = get(&format!(
        "/r4/ValueSet/$expand?url={SCT}%3Ffhir_vs%3Decl%2F%3C%3C%20{id}"
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(codes(&v), all);
    // The same set by a constraint filter, minus the concept itself.
    let (status, v) = post(
        "/r5/ValueSet/$expand",
        json!([{ "name": "valueSet", "resource": compose(json!([
            { "property": "constraint", "op": "=", "value": format!("<< {id} MINUS {id}") }
        ])) }]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let without: Vec<String> = all
        .iter()
        .filter(|c| **c != id.to_string())
        .cloned()
        .collect();
    assert_eq!(codes(&v), without);
    // child-of and generalizes filters are ECL too.
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let sorted = |ords: Vec<u32>| {
        let mut c: Vec<String> = ords
            .into_iter()
            .map(|o| ed.sctid(o).unwrap().to_string())
            .collect();
        c.sort();
        c
    };
    for (op, expected) in [
        ("child-of", sorted(ed.children(o).unwrap().to_vec())),
        (
            "generalizes",
            sorted(
                std::iter::once(o)
                    .chain(ed.ancestors(o).unwrap().iter())
                    .collect(),
            ),
        ),
    ] {
        let (status, v) = post(
            "/r4/ValueSet/$expand",
            json!([{ "name": "valueSet", "resource": compose(json!([
                { "property": "concept", "op": op, "value": id.to_string() }
            ])) }]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{op}: {v}");
        assert_eq!(codes(&v), expected, "{op}");
    }
}

#[tokio::test]
async fn bad_ecl_is_a_4xx_that_quotes_the_expression() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    // An SCTID with a valid check digit that the edition does not have.
    let unknown = (1_000_000u64..)
        .map(|n| n * 1000 + 10)
        .find_map(|base| {
            (0..10)
                .map(|d| base + d)
                .find(|&id| txmap_ecl::parse(&id.to_string()).is_ok() && ed.ordinal(id).is_none())
        })
        .unwrap();
    for ecl in [
        "<< 10200004 OR << 404684003 AND << 64572001".to_owned(),
        "<< abc".to_owned(),
        "<<".to_owned(),
        format!("< {unknown}"),
    ] {
        let (status, v) = post(
            "/r4/ValueSet/$expand",
            json!([{ "name": "valueSet", "resource": compose(json!([
                { "property": "constraint", "op": "=", "value": ecl }
            ])) }]),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{ecl}: {v}");
        let issue = &v["issue"][0];
        assert_eq!(issue["code"], "invalid");
        assert_eq!(issue["extension"][0]["valueString"], "INVALID_ECL");
        assert_eq!(issue["details"]["coding"][0]["code"], "vs-invalid");
        assert!(
            issue["details"]["text"].as_str().unwrap().contains(&ecl),
            "{ecl}: {v}"
        );
    }
}

#[tokio::test]
async fn an_ecl_evaluation_past_its_work_limit_is_too_costly() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "ed", 800, 11, 20250131);
    let state = common::serve(
        dir.path(),
        "editions = [\"ed.txmap\"]\n[limits]\necl_max_work = 10\n",
    );
    let (status, v) = common::call(
        state,
        Method::GET,
        &format!("/r4/ValueSet/$expand?url={SCT}%3Ffhir_vs%3Decl%2F%2A&count=1"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(error_code(&v), "too-costly");
}

#[tokio::test]
async fn implicit_value_sets_may_name_their_edition_and_version() {
    let state = state();
    let e = state.editions.default_edition().unwrap();
    let (_, id, all) = subtree();
    for base in [
        e.file.names.version_uri.as_str(),
        e.file.names.edition_uri.as_str(),
    ] {
        let (status, v) = post(
            "/r4/ValueSet/$expand",
            json!([{ "name": "url", "valueUri": format!("{base}?fhir_vs=isa/{id}") }]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{base}: {v}");
        assert_eq!(codes(&v), all);
        assert_eq!(
            v["expansion"]["parameter"][0]["valueUri"],
            format!("{SCT}|{}", e.file.names.version_uri)
        );
    }
    // A version that is not loaded: 404 naming what is.
    let (status, v) = post(
        "/r4/ValueSet/$expand",
        json!([{ "name": "url",
                 "valueUri": format!("{}/version/19990131?fhir_vs=isa/{id}", e.file.names.edition_uri) }]),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
    assert!(
        v["issue"][0]["details"]["text"]
            .as_str()
            .unwrap()
            .contains(&e.file.names.version_uri),
        "{v}"
    );
}
