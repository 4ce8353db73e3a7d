//! Parameters mean the same everywhere: one reader and one rule for
//! every operation and code system. `count` sent as a string, a decimal,
//! `null` or a list, or given twice with different values, is a 400 that
//! names it, whether SNOMED CT's own expansion or the generic engine
//! answers; a `displayLanguage` of a thousand languages is a 400 from
//! both.

use crate::common;

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use txmap_server::app::AppState;

const SCT: &str = "http://snomed.info/sct";

fn inline_vs() -> Value {
    json!({"resourceType": "ValueSet", "url": "http://example.org/vs", "status": "active",
        "compose": {"include": [{"system": "http://example.org/cs"}]}})
}

fn inline_cs() -> Value {
    json!({"resourceType": "CodeSystem", "url": "http://example.org/cs", "status": "active",
        "content": "complete", "concept": [{"code": "a"}, {"code": "b"}, {"code": "c"}, {"code": "d"}]})
}

/// An `$expand` of SNOMED CT's implicit value set (SNOMED CT's own
/// path) and of an inline value set (the generic engine), with `extra`.
fn expansions(extra: &[Value]) -> Vec<Value> {
    let mut snomed = vec![json!({"name": "url", "valueUri": format!("{SCT}?fhir_vs")})];
    snomed.extend(extra.iter().cloned());
    let mut generic = vec![
        json!({"name": "valueSet", "resource": inline_vs()}),
        json!({"name": "tx-resource", "resource": inline_cs()}),
    ];
    generic.extend(extra.iter().cloned());
    vec![
        common::parameters(Value::Array(snomed)),
        common::parameters(Value::Array(generic)),
    ]
}

async fn expand(state: &Arc<AppState>, body: Value) -> (StatusCode, Value) {
    common::call(
        Arc::clone(state),
        Method::POST,
        "/r4/ValueSet/$expand",
        Some(body),
    )
    .await
}

#[tokio::test]
async fn one_rule_for_every_parameter_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "sct", 300, 1, 20250131);
    let state = common::serve(dir.path(), "editions = [\"sct.txmap\"]\n");
    // A count as FHIR types it is read.
    for body in expansions(&[json!({"name": "count", "valueInteger": 3})]) {
        let (status, v) = expand(&state, body).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(v["expansion"]["contains"].as_array().unwrap().len(), 3);
    }
    // Anything else is refused, naming the parameter.
    for bad in [
        json!({"name": "count", "valueString": "3"}),
        json!({"name": "count", "valueInteger": "3"}),
        json!({"name": "count", "valueDecimal": 2.5}),
        json!({"name": "count", "valueInteger": null}),
        json!({"name": "count", "valueInteger": [1, 2]}),
        json!({"name": "count", "valueInteger": -1}),
        json!({"name": "activeOnly", "valueString": "yes"}),
    ] {
        for body in expansions(std::slice::from_ref(&bad)) {
            let (status, v) = expand(&state, body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {v}");
            let name = bad["name"].as_str().unwrap();
            assert!(common::issue_text(&v).contains(name), "{bad}: {v}");
        }
    }
    // Given twice, differently: a 400 from both paths (by POST and GET).
    for body in expansions(&[
        json!({"name": "count", "valueInteger": 2}),
        json!({"name": "count", "valueInteger": 5}),
    ]) {
        let (status, v) = expand(&state, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert!(common::issue_text(&v).contains("count"), "{v}");
    }
    let (status, v) = common::call(
        Arc::clone(&state),
        Method::GET,
        &format!("/r4/ValueSet/$expand?url={SCT}?fhir_vs&count=2&count=5"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    // A displayLanguage of a thousand languages, to SNOMED CT's $lookup
    // and the generic engine's.
    let many = vec!["en"; 1000].join(",");
    let code = {
        let (_, v) = expand(
            &state,
            expansions(&[json!({"name": "count", "valueInteger": 1})])[0].clone(),
        )
        .await;
        v["expansion"]["contains"][0]["code"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    for body in [
        json!([{"name": "system", "valueUri": SCT}, {"name": "code", "valueCode": code}]),
        json!([{"name": "system", "valueUri": "http://example.org/cs"}, {"name": "code", "valueCode": "a"},
            {"name": "tx-resource", "resource": inline_cs()}]),
    ] {
        let mut list = body.as_array().unwrap().clone();
        let (status, v) = common::call(
            Arc::clone(&state),
            Method::POST,
            "/r4/CodeSystem/$lookup",
            Some(common::parameters(Value::Array(list.clone()))),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        list.push(json!({"name": "displayLanguage", "valueCode": many}));
        let (status, v) = common::call(
            Arc::clone(&state),
            Method::POST,
            "/r4/CodeSystem/$lookup",
            Some(common::parameters(Value::Array(list))),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert!(common::issue_text(&v).contains("displayLanguage"), "{v}");
    }
}
