//! Value sets over several versions of one code system, and imports
//! pinned by `default-valueset-version`.

use serde_json::{Value, json};
use txmap_terminology::Request;
use txmap_terminology::expand::expand;
use txmap_terminology::validate::validate_code;

const CS: &str = "http://cs";

fn code_system(version: &str, display2: &str) -> Value {
    json!({"name": "tx-resource", "resource": {
        "resourceType": "CodeSystem", "url": CS, "version": version, "content": "complete",
        "concept": [{"code": "a", "display": "A"}, {"code": "b", "display": display2}]
    }})
}

fn with_vs(include: Value, extra: &[Value]) -> Value {
    let mut parameter = vec![
        code_system("1", "B one"),
        code_system("2", "B two"),
        json!({"name": "valueSet", "resource": {
            "resourceType": "ValueSet", "url": "http://vs", "compose": {"include": include}
        }}),
    ];
    parameter.extend_from_slice(extra);
    json!({"resourceType": "Parameters", "parameter": parameter})
}

fn versions(out: &Value) -> Vec<(String, String)> {
    out["expansion"]["contains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["code"].as_str().unwrap().to_owned(),
                // Shown only when the expansion mixes versions.
                c["version"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

fn pairs(l: &[(&str, &str)]) -> Vec<(String, String)> {
    l.iter()
        .map(|(c, v)| ((*c).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn pinned_versions_of_a_code_lead_the_latest_pinned_first() {
    let both = with_vs(
        json!([{"system": CS, "version": "1"}, {"system": CS, "version": "2"}]),
        &[],
    );
    let out = expand(
        &Request::new(both.clone()),
        "urn:uuid:x",
        "2024-01-01T00:00:00Z",
    )
    .unwrap();
    assert_eq!(
        versions(&out),
        pairs(&[("a", "2"), ("a", "1"), ("b", "2"), ("b", "1")])
    );

    let mixed = with_vs(json!([{"system": CS, "version": "1"}, {"system": CS}]), &[]);
    let out = expand(
        &Request::new(mixed.clone()),
        "urn:uuid:x",
        "2024-01-01T00:00:00Z",
    )
    .unwrap();
    assert_eq!(
        versions(&out),
        pairs(&[("a", "1"), ("a", "2"), ("b", "1"), ("b", "2")])
    );
}

#[test]
fn a_coding_without_version_is_judged_in_the_version_its_display_names() {
    let body = |display: &str| {
        with_vs(
            json!([{"system": CS, "version": "1"}, {"system": CS, "version": "2"}]),
            &[
                json!({"name": "coding", "valueCoding": {"system": CS, "code": "b", "display": display}}),
            ],
        )
    };
    let param = |out: &Value, name: &str| {
        out["parameter"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .cloned()
    };
    for (display, version) in [("B one", "1"), ("B two", "2"), ("B three", "2")] {
        let out = validate_code(&Request::new(body(display)), true)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "version").unwrap()["valueString"], version);
        assert_eq!(
            param(&out, "result").unwrap()["valueBoolean"],
            display != "B three"
        );
    }
}

fn importing(default: &str) -> Value {
    let vs = |version: &str, code: &str| {
        json!({"name": "tx-resource", "resource": {
            "resourceType": "ValueSet", "url": "http://imported", "version": version,
            "compose": {"include": [{"system": CS, "version": "1", "concept": [{"code": code}]}]}
        }})
    };
    with_vs(
        json!([{"valueSet": ["http://imported"]}]),
        &[
            vs("1", "a"),
            vs("2", "b"),
            json!({"name": "default-valueset-version", "valueCanonical": default}),
        ],
    )
}

#[test]
fn default_valueset_version_pins_unversioned_imports() {
    let out = expand(
        &Request::new(importing("http://imported|1")),
        "urn:uuid:x",
        "2024-01-01T00:00:00Z",
    )
    .unwrap();
    assert_eq!(versions(&out), pairs(&[("a", "")]));
    assert_eq!(
        out["expansion"]["parameter"][0],
        json!({"name": "default-valueset-version", "valueUri": "http://imported|1"})
    );

    let err = expand(
        &Request::new(importing("http://imported|3")),
        "urn:uuid:x",
        "2024-01-01T00:00:00Z",
    )
    .unwrap_err();
    assert_eq!(err.issue().message_id, Some("VS_EXP_IMPORT_UNK_PINNED"));
    assert_eq!(
        err.to_string(),
        "Unable to find included value set 'http://imported' version '3'"
    );
}
