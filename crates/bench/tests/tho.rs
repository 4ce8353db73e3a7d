//! The THO value set benchmark end to end on a tiny package made here:
//! one CodeSystem and one ValueSet of all of it. It checks that calls are
//! made, answered 200 and reported; never how fast.

use std::time::Duration;

use serde_json::{Value, json};
use txmap_bench::tho::{self, ThoOp, ThoOptions};

/// A gzipped tarball of `(path, JSON)` files, as `npm pack` makes.
fn tgz(files: &[(&str, Value)]) -> Vec<u8> {
    txmap_packages::pack_json(files).unwrap()
}

#[test]
fn a_tiny_package_is_measured() {
    let dir = tempfile::tempdir().unwrap();
    let system = "http://example.org/CodeSystem/colours";
    let concepts: Vec<Value> = (0..30)
        .map(|i| json!({"code": format!("C{i}"), "display": format!("Colour number {i} shade")}))
        .collect();
    let package = tgz(&[
        (
            "package/package.json",
            json!({"name": "example.colours", "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
        ),
        (
            "package/CodeSystem-colours.json",
            json!({"resourceType": "CodeSystem", "url": system, "version": "1.0.0",
                "status": "active", "content": "complete", "concept": concepts}),
        ),
        (
            "package/ValueSet-colours.json",
            json!({"resourceType": "ValueSet", "url": "http://example.org/ValueSet/colours",
                "version": "1.0.0", "status": "active",
                "compose": {"include": [{"system": system}]}}),
        ),
    ]);
    let file = dir.path().join("colours.tgz");
    std::fs::write(&file, package).unwrap();

    let options = ThoOptions {
        packages: vec![file],
        value_set: "http://example.org/ValueSet/colours".to_owned(),
        calls: 20,
        max_time: Duration::from_secs(5),
        page: 5,
        cold_runs: 2,
        ..Default::default()
    };
    let report = tho::run(&options).unwrap();
    // Through a file and back, as the CLI writes it.
    let out = dir.path().join("tho.json");
    std::fs::write(&out, report.to_json().to_string()).unwrap();
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();

    assert_eq!(json["system"], system, "{json}");
    assert_eq!(json["total"], 30, "{json}");
    assert!(json["expand_system_param"].is_boolean(), "{json}");
    let rows = json["ops"].as_array().unwrap();
    assert_eq!(rows.len(), ThoOp::ALL.len(), "{json}");
    for (row, op) in rows.iter().zip(ThoOp::ALL) {
        assert_eq!(row["op"], op.name());
        assert!(row["calls"].as_u64().unwrap() > 0, "{row}");
        assert_eq!(row["errors"], 0, "{row}");
        assert_eq!(row["unexpected"], 0, "{row}");
        assert_eq!(row["cold_status"], 200, "{row}");
        for key in ["cold_us", "p50_us", "p99_us", "max_us"] {
            assert!(row[key].as_f64().unwrap() > 0.0, "{key}: {row}");
        }
    }
    assert!(report.markdown().contains("| validate-in | "));
}
