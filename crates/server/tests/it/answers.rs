//! One request's answer is bounded: a CodeableConcept of more codings
//! than a validation checks is refused before any is checked, a megabyte
//! code is shown once (issues and messages show a cut form), and an
//! answer over `max_answer_bytes` is a 422 rather than sent.

use crate::common;

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use txmap_server::app::AppState;

const SCT: &str = "http://snomed.info/sct";

fn server(extra: &str) -> (Arc<AppState>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "sct", 300, 1, 20250131);
    let state = common::serve(dir.path(), &format!("editions = [\"sct.txmap\"]\n{extra}"));
    (state, dir)
}

async fn post(state: &Arc<AppState>, uri: &str, parameters: Value) -> (StatusCode, Value) {
    common::call(
        Arc::clone(state),
        Method::POST,
        uri,
        Some(common::parameters(parameters)),
    )
    .await
}

fn codings(n: usize) -> Value {
    let list: Vec<Value> = (0..n)
        .map(|i| json!({"system": SCT, "code": format!("{}", 1_000_000_000_017u64 + i as u64 * 1000)}))
        .collect();
    json!({"coding": list})
}

#[tokio::test]
async fn a_codeable_concept_of_too_many_codings_is_refused() {
    let (state, _dir) = server("");
    let vs = json!({"name": "url", "valueUri": format!("{SCT}?fhir_vs")});
    let (status, v) = post(
        &state,
        "/r4/ValueSet/$validate-code",
        json!([vs, {"name": "codeableConcept", "valueCodeableConcept": codings(2_000)}]),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert_eq!(v["issue"][0]["code"], "too-costly");
    // Within the bound, every coding is checked and the answer says so.
    let (status, v) = post(
        &state,
        "/r4/ValueSet/$validate-code",
        json!([vs, {"name": "codeableConcept", "valueCodeableConcept": codings(200)}]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(!common::result(&v));
}

#[tokio::test]
async fn a_megabyte_code_is_shown_once() {
    let (state, _dir) = server("");
    let code = "x".repeat(1 << 20);
    let cs = json!({"resourceType": "CodeSystem", "url": "http://example.org/cs", "status": "active",
        "content": "complete", "concept": [{"code": "a"}]});
    for uri in [
        "/r4/CodeSystem/$validate-code",
        "/r4/ValueSet/$validate-code",
    ] {
        let mut params = vec![
            json!({"name": "tx-resource", "resource": cs}),
            json!({"name": "system", "valueUri": "http://example.org/cs"}),
            json!({"name": "code", "valueCode": code}),
        ];
        if uri.starts_with("/r4/ValueSet") {
            params.push(
                json!({"name": "valueSet", "resource": {"resourceType": "ValueSet",
                "url": "http://example.org/vs", "status": "active",
                "compose": {"include": [{"system": "http://example.org/cs"}]}}}),
            );
        } else {
            params.push(json!({"name": "url", "valueUri": "http://example.org/cs"}));
        }
        let (status, v) = post(&state, uri, Value::Array(params)).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert!(!common::result(&v));
        let text = v.to_string();
        assert_eq!(text.matches(&code).count(), 1, "{uri}: the code shown once");
        assert!(text.len() < 2 * code.len(), "{uri}: {} bytes", text.len());
    }
}

#[tokio::test]
async fn an_answer_over_max_answer_bytes_is_refused() {
    let (state, _dir) = server("[limits]\nmax_answer_bytes = \"64KiB\"\n");
    let concepts: Vec<Value> = (0..2_000)
        .map(|i| json!({"code": format!("c{i}"), "display": format!("a display long enough to count {i}")}))
        .collect();
    let body = json!([
        {"name": "tx-resource", "resource": {"resourceType": "CodeSystem", "url": "http://example.org/cs",
            "status": "active", "content": "complete", "concept": concepts}},
        {"name": "valueSet", "resource": {"resourceType": "ValueSet", "url": "http://example.org/vs",
            "status": "active", "compose": {"include": [{"system": "http://example.org/cs"}]}}},
    ]);
    let (status, v) = post(&state, "/r4/ValueSet/$expand", body.clone()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{v}");
    assert!(
        v["issue"][0]["details"]["text"]
            .as_str()
            .unwrap()
            .contains("max_answer_bytes")
    );
    let mut small = body.as_array().unwrap().clone();
    small.push(json!({"name": "count", "valueInteger": 10}));
    let (status, _) = post(&state, "/r4/ValueSet/$expand", Value::Array(small)).await;
    assert_eq!(status, StatusCode::OK);
}
