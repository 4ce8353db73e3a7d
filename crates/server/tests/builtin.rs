//! The code systems txmap carries itself, through the engine: ISO 3166
//! as a resource; UCUM, BCP-47 and media types as an IG's Quantities,
//! `language` elements and attachments reach them: `CodeSystem/$validate-code` and
//! `$lookup`, `ValueSet/$validate-code` against value sets that include
//! the whole system or filter UCUM by canonical unit, and `$expand` of a
//! whole grammar refused as not enumerable.

#[macro_use]
mod common;

use axum::http::StatusCode;
use serde_json::{Value, json};

const UCUM: &str = "http://unitsofmeasure.org";
const BCP47: &str = "urn:ietf:bcp:47";

one_server!(|dir| {
    common::edition(dir, "sct", 300, 1, 20250131);
    common::serve(dir, "editions = [\"sct.txmap\"]\n")
});

fn param<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["parameter"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
}

fn result(v: &Value) -> bool {
    param(v, "result").unwrap()["valueBoolean"]
        .as_bool()
        .unwrap_or_else(|| panic!("no result: {v}"))
}

async fn cs_validate(system: &str, code: &str, display: Option<&str>) -> Value {
    let mut p = vec![
        json!({"name": "url", "valueUri": system}),
        json!({"name": "code", "valueCode": code}),
    ];
    if let Some(d) = display {
        p.push(json!({"name": "display", "valueString": d}));
    }
    let (status, v) = post("/r4/CodeSystem/$validate-code", json!(p)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    v
}

#[tokio::test]
async fn language_tags_validate_by_the_registry() {
    let v = cs_validate(BCP47, "en-US", None).await;
    assert!(result(&v), "{v}");
    assert_eq!(
        param(&v, "display").unwrap()["valueString"],
        "English (United States)"
    );
    assert!(param(&v, "version").is_none(), "BCP-47 has no version: {v}");
    let v = cs_validate(BCP47, "en-US", Some("English (Region=United States)")).await;
    assert!(result(&v), "the labelled form is a designation: {v}");
    for bad in ["en-us", "xx-ZZ-1", "en-US-US"] {
        let v = cs_validate(BCP47, bad, None).await;
        assert!(!result(&v), "{bad}: {v}");
        let text = v.to_string();
        assert!(text.contains(&format!("Unknown code '{bad}'")), "{text}");
    }
}

#[tokio::test]
async fn units_validate_and_look_up() {
    let v = cs_validate(UCUM, "mg/dL", None).await;
    assert!(result(&v), "{v}");
    assert_eq!(param(&v, "version").unwrap()["valueString"], "2.2");
    assert!(!result(&cs_validate(UCUM, "kgXX", None).await));

    let (status, v) = get(&format!("/r4/CodeSystem/$lookup?system={UCUM}&code=mg/dL")).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(param(&v, "display").unwrap()["valueString"], "mg/dL");
    assert_eq!(param(&v, "name").unwrap()["valueString"], "UCUM");
    let (status, v) = get(&format!("/r4/CodeSystem/$lookup?system={UCUM}&code=kgXX")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
}

fn value_set(include: Value) -> Value {
    json!({"resourceType": "ValueSet", "url": "http://example.org/vs", "status": "active",
           "compose": {"include": [include]}})
}

async fn vs_validate(vs: &Value, system: &str, code: &str) -> Value {
    let (status, v) = post(
        "/r5/ValueSet/$validate-code",
        json!([
            {"name": "valueSet", "resource": vs},
            {"name": "system", "valueUri": system},
            {"name": "code", "valueCode": code},
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    v
}

#[tokio::test]
async fn value_sets_of_a_grammar_test_membership_without_a_list() {
    let all = value_set(json!({"system": UCUM}));
    assert!(result(&vs_validate(&all, UCUM, "mmol/L").await));
    assert!(!result(&vs_validate(&all, UCUM, "mmol/LL").await));
    // UCUM's canonical form: grams for masses, cubic meters for volumes.
    let mass = value_set(json!({"system": UCUM,
        "filter": [{"property": "canonical", "op": "=", "value": "g"}]}));
    assert!(result(&vs_validate(&mass, UCUM, "ug").await));
    assert!(!result(&vs_validate(&mass, UCUM, "mL").await));
    let languages = value_set(json!({"system": BCP47}));
    assert!(result(&vs_validate(&languages, BCP47, "fr-CA").await));
    assert!(!result(&vs_validate(&languages, BCP47, "fr-ca").await));

    // An expansion would have to list every sentence of the grammar.
    for vs in [all, mass, languages] {
        let (status, v) = post(
            "/r4/ValueSet/$expand",
            json!([{"name": "valueSet", "resource": vs}]),
        )
        .await;
        assert!(status.is_client_error(), "{status} {v}");
        assert_eq!(v["resourceType"], "OperationOutcome");
        assert!(v.to_string().contains("cannot be expanded"), "{v}");
    }
}

#[tokio::test]
async fn media_types_validate_by_rfc_6838() {
    const MIME: &str = "urn:ietf:bcp:13";
    let v = cs_validate(MIME, "application/fhir+json", None).await;
    assert!(result(&v), "{v}");
    assert_eq!(
        param(&v, "display").unwrap()["valueString"],
        "application/fhir+json"
    );
    // Names compare ignoring case: valid, said in the canonical case.
    let v = cs_validate(MIME, "Text/Plain", None).await;
    assert!(result(&v), "{v}");
    assert!(!result(&cs_validate(MIME, "text", None).await));
    assert!(!result(&cs_validate(MIME, "texts/plain", None).await));
}

#[tokio::test]
async fn country_codes_validate_and_expand() {
    const ISO: &str = "urn:iso:std:iso:3166";
    let rows: Vec<Vec<String>> = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../builtin/data/iso3166.tsv"
    ))
    .unwrap()
    .lines()
    .map(|l| l.split('\t').map(str::to_owned).collect())
    .collect();
    for r in rows.iter().step_by(40) {
        for code in &r[..3] {
            let v = cs_validate(ISO, code, None).await;
            assert!(result(&v), "{v}");
            assert_eq!(param(&v, "display").unwrap()["valueString"], r[3]);
        }
    }
    let v = cs_validate(ISO, "XY", None).await;
    assert!(result(&v), "{v}");
    assert_eq!(
        param(&v, "display").unwrap()["valueString"],
        "User-assigned"
    );
    assert!(!result(&cs_validate(ISO, "QA1", None).await));
    let (status, v) = post(
        "/r4/ValueSet/$expand",
        json!([{"name": "valueSet", "resource": value_set(json!({"system": ISO}))},
               {"name": "count", "valueInteger": 1}]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    // Every country thrice, and ISO 3166-1's user-assigned ranges.
    assert_eq!(v["expansion"]["total"], rows.len() * 3 + 42 + 42 * 26 + 100);
}

#[tokio::test]
async fn a_code_system_that_only_names_the_grammar_does_not_hide_it() {
    let (status, v) = post(
        "/r4/CodeSystem/$validate-code",
        json!([
            {"name": "url", "valueUri": BCP47},
            {"name": "code", "valueCode": "en-US"},
            {"name": "tx-resource", "resource": {"resourceType": "CodeSystem",
                "url": BCP47, "status": "active", "content": "not-present"}},
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v), "{v}");
}
