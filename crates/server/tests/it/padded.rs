//! Codes are checked as sent (FHIR's `code` type has no leading or
//! trailing white space; an SCTID has no leading zeros): a padded code is
//! not the code it pads, in SNOMED CT, LOINC, a package's code system,
//! BCP-47 and UCUM alike — `$validate-code` (single and batch) answers
//! `false` with an issue that says why, `$lookup`, `$subsumes` and
//! `$translate` refuse it — while the same code unpadded is valid.

use crate::common;

use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use txmap_server::app::AppState;

const SCT: &str = "http://snomed.info/sct";

fn post(parameters: Value) -> Option<Value> {
    Some(common::parameters(parameters))
}

async fn call(state: &Arc<AppState>, uri: &str, body: Option<Value>) -> (StatusCode, Value) {
    common::call(Arc::clone(state), Method::POST, uri, body).await
}

/// Every issue text of a `$validate-code` answer.
fn issue_texts(v: &Value) -> String {
    common::param(v, "issues").map_or(String::new(), |i| i["resource"]["issue"].to_string())
}

/// `$validate-code` of `code`, by CodeSystem and by an inline ValueSet of
/// the whole system: the two results, and their issues.
async fn validate(state: &Arc<AppState>, system: &str, code: &str) -> Vec<(bool, String)> {
    let vs = json!({"resourceType": "ValueSet", "url": "http://example.org/vs", "status": "active",
        "compose": {"include": [{"system": system}]}});
    let mut out = Vec::new();
    for (uri, extra) in [
        (
            "/r4/CodeSystem/$validate-code",
            json!({"name": "url", "valueUri": system}),
        ),
        (
            "/r4/ValueSet/$validate-code",
            json!({"name": "valueSet", "resource": vs}),
        ),
    ] {
        let body = post(json!([extra, {"name": "code", "valueCode": code},
            {"name": "system", "valueUri": system}]));
        let (status, v) = call(state, uri, body).await;
        assert_eq!(status, StatusCode::OK, "{uri} {code:?}: {v}");
        out.push((common::result(&v), issue_texts(&v)));
    }
    let batch = post(json!([{"name": "valueSet", "resource": vs},
        {"name": "validation", "resource": common::parameters(json!([
            {"name": "coding", "valueCoding": {"system": system, "code": code}}]))}]));
    let (status, v) = call(state, "/r4/ValueSet/$batch-validate-code", batch).await;
    assert_eq!(status, StatusCode::OK, "batch {code:?}: {v}");
    let inner = &v["parameter"][0]["resource"];
    out.push((common::result(inner), issue_texts(inner)));
    out
}

async fn lookup(state: &Arc<AppState>, system: &str, code: &str) -> (StatusCode, Value) {
    let body = post(json!([{"name": "system", "valueUri": system},
        {"name": "code", "valueCode": code}]));
    call(state, "/r4/CodeSystem/$lookup", body).await
}

#[tokio::test]
async fn padded_codes_are_not_codes_in_any_code_system() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::edition(dir.path(), "sct", 300, 1, 20250131);
    let release = dir.path().join("Loinc_2.99");
    txmap_codesystems::synth::write_release(
        &release,
        txmap_codesystems::synth::Shape { terms: 30 },
    )
    .unwrap();
    txmap_codesystems::loinc::import(
        &release,
        &dir.path().join("loinc.txmap"),
        &txmap_codesystems::ImportOptions::default(),
    )
    .unwrap();
    let loinc = csv::Reader::from_path(release.join("LoincTable/Loinc.csv"))
        .unwrap()
        .records()
        .next()
        .unwrap()
        .unwrap()[0]
        .to_owned();
    // An SCTID from the edition's own file, read by the store.
    let sctid = {
        let bytes = std::fs::read(&file).unwrap();
        let ed = txmap_store::Edition::open(bytes).unwrap();
        (0..ed.concept_count())
            .map(|o| ed.sctid(o).unwrap())
            .find(|id| id.to_string().len() > 6)
            .unwrap()
            .to_string()
    };
    std::fs::write(
        dir.path().join("cs.tgz"),
        txmap_packages::pack_json(&[
            (
                "package/package.json",
                json!({"name": "example.cs", "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
            ),
            (
                "package/CodeSystem-x.json",
                json!({"resourceType": "CodeSystem", "url": "http://example.org/cs", "version": "1",
                    "status": "active", "content": "complete",
                    "concept": [{"code": "alpha", "display": "Alpha"}]}),
            ),
        ])
        .unwrap(),
    )
    .unwrap();
    let state = common::serve(
        dir.path(),
        "editions = [\"sct.txmap\", \"loinc.txmap\"]\npackages = [\"cs.tgz\"]\n",
    );
    let systems = [
        (SCT, sctid.as_str()),
        (txmap_codesystems::loinc::URL, loinc.as_str()),
        ("http://example.org/cs", "alpha"),
        ("urn:ietf:bcp:47", "en"),
        ("http://unitsofmeasure.org", "mg"),
    ];
    for (system, code) in systems {
        for (valid, issues) in validate(&state, system, code).await {
            assert!(valid, "{system}#{code}: {issues}");
        }
        let (status, v) = lookup(&state, system, code).await;
        assert_eq!(status, StatusCode::OK, "{system}#{code}: {v}");
        for padded in [
            format!(" {code}"),
            format!("{code}\n"),
            format!("\t{code}"),
            format!("\u{a0}{code}"),
            format!("{code} "),
        ] {
            for (valid, issues) in validate(&state, system, &padded).await {
                assert!(!valid, "{system} {padded:?}: {issues}");
                assert!(
                    issues.contains("is not valid") && issues.contains("white space"),
                    "{system} {padded:?}: {issues}"
                );
            }
            let (status, v) = lookup(&state, system, &padded).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{system} {padded:?}: {v}");
            assert!(common::issue_text(&v).contains("white space"), "{v}");
            let body = post(json!([{"name": "system", "valueUri": system},
                {"name": "codeA", "valueCode": padded}, {"name": "codeB", "valueCode": code}]));
            let (status, v) = call(&state, "/r4/CodeSystem/$subsumes", body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{system} {padded:?}: {v}");
        }
    }
    // SNOMED CT: an SCTID with leading zeros is not that SCTID.
    for zeros in [format!("0{sctid}"), format!("000{sctid}")] {
        for (valid, issues) in validate(&state, SCT, &zeros).await {
            assert!(!valid, "{zeros}: {issues}");
            assert!(issues.contains("no leading zeros"), "{zeros}: {issues}");
        }
        let (status, v) = lookup(&state, SCT, &zeros).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{zeros}: {v}");
        assert!(common::issue_text(&v).contains("no leading zeros"), "{v}");
        let body = post(json!([{"name": "system", "valueUri": SCT},
            {"name": "code", "valueCode": zeros}]));
        let (status, v) = call(&state, "/r4/ConceptMap/$translate", body).await;
        assert_eq!(status, StatusCode::OK, "{zeros}: {v}");
        assert!(!common::result(&v), "{zeros}: {v}");
        assert!(v.to_string().contains("no leading zeros"), "{v}");
    }
    let body = post(json!([{"name": "system", "valueUri": SCT},
        {"name": "code", "valueCode": format!("{sctid}\n")}]));
    let (status, v) = call(&state, "/r4/ConceptMap/$translate", body).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
}
