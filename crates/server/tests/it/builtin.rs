//! The code systems txmap carries itself, through the engine: ISO 3166
//! as a resource; UCUM, BCP-47 and media types as an IG's Quantities,
//! `language` elements and attachments reach them: `CodeSystem/$validate-code` and
//! `$lookup`, `ValueSet/$validate-code` against value sets that include
//! the whole system or filter UCUM by canonical unit, and `$expand` of a
//! whole grammar: its common codes (FHIR's `ucum-common`, THO's
//! `Languages`, read here from the data files on their own) marked
//! unclosed, or refused as not enumerable when it has none.

use crate::common;

use common::{param, result};

use axum::http::StatusCode;
use serde_json::{Value, json};

const UCUM: &str = "http://unitsofmeasure.org";
const BCP47: &str = "urn:ietf:bcp:47";

one_server!(|dir| {
    common::edition(dir, "sct", 300, 1, 20250131);
    common::serve(dir, "editions = [\"sct.txmap\"]\n")
});

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
    // An unknown unit: where UCUM's parse failed, in the words of the
    // suite's `validate-ucum-all-bad` (tx.fhir.org's UCUM library).
    let v = cs_validate(UCUM, "kgXX", None).await;
    assert!(!result(&v));
    let info = param(&v, "issues").unwrap()["resource"]["issue"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["severity"] == "information")
        .unwrap_or_else(|| panic!("no information issue: {v}"))
        .clone();
    assert_eq!(
        info["details"]["text"],
        "Error processing unit 'kgXX': The unit 'kgXX' is unknown at character 1"
    );

    let (status, v) = get(&format!("/r4/CodeSystem/$lookup?system={UCUM}&code=mg/dL")).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(param(&v, "display").unwrap()["valueString"], "mg/dL");
    assert_eq!(param(&v, "name").unwrap()["valueString"], "UCUM");
    // The name `ucum-common` gives the unit is a designation.
    let name = common_codes("ucum-common.json")
        .into_iter()
        .find(|(c, _)| c == "mg/dL")
        .unwrap()
        .1;
    assert_eq!(name, "milligram per deciliter");
    assert!(v.to_string().contains(&name), "{v}");
    // The canonical unit is computed: given when asked for, not by default.
    assert!(!v.to_string().contains("canonical"), "{v}");
    let (_, v) = get(&format!(
        "/r4/CodeSystem/$lookup?system={UCUM}&code=mg/dL&property=canonical"
    ))
    .await;
    assert!(v.to_string().contains("g.m-3"), "{v}");
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
    let v = vs_validate(&mass, UCUM, "mL").await;
    assert!(!result(&v));
    // The message says why, in the words of the suite's
    // `validate-ucum-canonical-bad`.
    let message = param(&v, "message").unwrap()["valueString"]
        .as_str()
        .unwrap();
    assert!(
        message.contains("Code mL has canonical form m3, not g as required"),
        "{message}"
    );
    let languages = value_set(json!({"system": BCP47}));
    assert!(result(&vs_validate(&languages, BCP47, "fr-CA").await));
    assert!(!result(&vs_validate(&languages, BCP47, "fr-ca").await));

    // Media types name no common codes: an expansion would have to list
    // every sentence of the grammar.
    let media = value_set(json!({"system": "urn:ietf:bcp:13"}));
    let (status, v) = expand(&media).await;
    assert!(status.is_client_error(), "{status} {v}");
    assert_eq!(v["resourceType"], "OperationOutcome");
    assert!(v.to_string().contains("cannot be expanded"), "{v}");
}

async fn expand(vs: &Value) -> (StatusCode, Value) {
    post(
        "/r5/ValueSet/$expand",
        json!([{"name": "valueSet", "resource": vs}]),
    )
    .await
}

/// The codes and displays of a value set in `crates/builtin/data`, read
/// here on their own.
fn common_codes(file: &str) -> Vec<(String, String)> {
    let path = format!("{}/../builtin/data/{file}", env!("CARGO_MANIFEST_DIR"));
    let vs: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    vs["compose"]["include"][0]["concept"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let text = |k: &str| c[k].as_str().unwrap().to_owned();
            (text("code"), text("display"))
        })
        .collect()
}

fn codes(expansion: &Value) -> Vec<&str> {
    expansion["expansion"]["contains"]
        .as_array()
        .unwrap_or_else(|| panic!("no contains: {expansion}"))
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect()
}

fn unclosed(expansion: &Value) -> bool {
    expansion["expansion"]["extension"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|e| {
            e["url"] == "http://hl7.org/fhir/StructureDefinition/valueset-unclosed"
                && e["valueBoolean"] == true
        })
}

#[tokio::test]
async fn a_whole_grammar_expands_to_its_common_codes_marked_unclosed() {
    // All of UCUM: the common units, once each, by code, with no total
    // (UCUM's units are without number), and the value set's status said.
    let (status, v) = expand(&value_set(json!({"system": UCUM}))).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let mut expected: Vec<String> = common_codes("ucum-common.json")
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    expected.sort();
    expected.dedup();
    assert!(expected.len() > 800, "{}", expected.len());
    assert_eq!(codes(&v), expected);
    assert!(unclosed(&v), "{v}");
    assert!(v["expansion"].get("total").is_none(), "{v}");
    assert_eq!(v["expansion"]["contains"][0]["display"], expected[0]);
    let text = v.to_string();
    assert!(text.contains("warning-experimental"), "{text}");
    assert!(
        text.contains("http://hl7.org/fhir/ValueSet/ucum-common|5.0.0"),
        "{text}"
    );

    // Filtered by canonical unit: the masses among them, counted.
    let mass = value_set(json!({"system": UCUM,
        "filter": [{"property": "canonical", "op": "=", "value": "g"}]}));
    let (status, v) = expand(&mass).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let masses = codes(&v);
    for unit in ["g", "kg", "mg", "ug", "ng", "pg"] {
        assert!(masses.contains(&unit), "{unit}: {masses:?}");
    }
    for unit in ["mL", "L", "mg/dL", "mmol/L", "%"] {
        assert!(!masses.contains(&unit), "{unit}: {masses:?}");
    }
    assert!(masses.iter().all(|m| expected.iter().any(|e| e == m)));
    assert_eq!(v["expansion"]["total"], masses.len());
    assert!(unclosed(&v), "{v}");

    // `ucum-common` itself, by its URL: its units with its names.
    let (status, v) =
        get("/r4/ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/ucum-common").await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let mut listed = codes(&v);
    listed.sort();
    assert_eq!(listed, expected, "each unit once");
    let first = &v["expansion"]["contains"][0];
    assert_eq!(first["code"], "%");
    assert_eq!(first["display"], "percent");
    assert!(!unclosed(&v), "an enumerated value set is closed: {v}");

    // All of BCP-47: THO's languages, with the registry's names.
    let (status, v) = expand(&value_set(json!({"system": BCP47}))).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let languages = common_codes("languages.json");
    assert_eq!(languages.len(), 485);
    let mut expected: Vec<&str> = languages.iter().map(|(c, _)| c.as_str()).collect();
    expected.sort();
    assert_eq!(codes(&v), expected);
    assert!(unclosed(&v), "{v}");
    let en = v["expansion"]["contains"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["code"] == "en")
        .unwrap();
    assert_eq!(en["display"], "English");
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
async fn variants_validate_by_the_hgvs_syntax_and_do_not_expand() {
    const HGVS: &str = "http://varnomen.hgvs.org";
    let v = cs_validate(HGVS, "NM_004006.2:c.4375C>T", None).await;
    assert!(result(&v), "{v}");
    assert_eq!(
        param(&v, "display").unwrap()["valueString"],
        "NM_004006.2:c.4375C>T"
    );
    assert!(!result(
        &cs_validate(HGVS, "NM_004006.2:c.4375C>", None).await
    ));
    // The suite's `hgvs-expand-all`: not a cost, a thing that cannot be done.
    let (status, v) = expand(&value_set(json!({"system": HGVS}))).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["issue"][0]["code"], "not-supported", "{v}");
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
    // A user-assigned code is named by its users: Kosovo's `XK` is valid
    // with its name, which is said for information only.
    let v = cs_validate(ISO, "XK", Some("Kosovo")).await;
    assert!(result(&v), "{v}");
    let issue = &param(&v, "issues").unwrap()["resource"]["issue"][0];
    assert_eq!(issue["severity"], "information", "{v}");
    assert!(
        issue["details"]["text"]
            .as_str()
            .unwrap()
            .contains("Use a supplement to define displays for user assigned codes"),
        "{v}"
    );
    // A country's name is ISO's: another one is an error.
    let gb = rows.iter().find(|r| r[0] == "GB").unwrap();
    assert_eq!(
        gb[3],
        "United Kingdom of Great Britain and Northern Ireland"
    );
    assert!(!result(&cs_validate(ISO, "GB", Some("Britain")).await));
    // A language pack sent with the request names it, unasked.
    let (status, v) = post(
        "/r4/CodeSystem/$validate-code",
        json!([
            {"name": "url", "valueUri": ISO},
            {"name": "code", "valueCode": "XK"},
            {"name": "display", "valueString": "Kosovo"},
            {"name": "tx-resource", "resource": {"resourceType": "CodeSystem",
                "url": "http://example.org/iso3166-names", "version": "1",
                "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/codesystem-supplement-type",
                    "valueCode": "lang-pack"}],
                "supplements": ISO, "content": "supplement", "status": "active",
                "concept": [{"code": "XK", "display": "Kosovo"}]}},
        ]),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert!(result(&v), "{v}");
    assert!(param(&v, "issues").is_none(), "{v}");
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
