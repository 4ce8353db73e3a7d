//! FHIR packages named in the config answer requests about their code
//! systems, at each endpoint's FHIR version.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt;
use txmap_load::Loader;
use txmap_server::app::router;
use txmap_server::{ServeOptions, prepare};

/// A gzipped tarball of `(path, JSON)` files, as `npm pack` makes.
fn tgz(files: &[(&str, Value)]) -> Vec<u8> {
    txmap_packages::pack_json(files).unwrap()
}

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, Value) {
    let r = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = r.status();
    let body = axum::body::to_bytes(r.into_body(), 1 << 24).await.unwrap();
    (status, serde_json::from_slice(&body).unwrap())
}

fn param<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["parameter"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
        .and_then(|p| p.as_object()?.iter().find(|(k, _)| k.starts_with("value")))
        .map(|(_, v)| v)
}

#[tokio::test]
async fn package_code_systems_are_served_at_the_endpoint_version() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "e", 200, 1, txmap_synth::DEFAULT_EFFECTIVE_TIME);
    let package = tgz(&[
        (
            "package/package.json",
            json!({"name": "hl7.fhir.r5.core", "version": "5.0.0", "fhirVersions": ["5.0.0"]}),
        ),
        (
            "package/CodeSystem-administrative-gender.json",
            json!({"resourceType": "CodeSystem", "url": "http://hl7.org/fhir/administrative-gender",
                "version": "5.0.0", "status": "active", "content": "complete",
                "text": {"status": "generated", "div": "<div>narrative</div>"},
                "concept": [{"code": "male", "display": "Male"}, {"code": "female", "display": "Female"}]}),
        ),
        (
            "package/ValueSet-administrative-gender.json",
            json!({"resourceType": "ValueSet", "url": "http://hl7.org/fhir/ValueSet/administrative-gender",
                "version": "5.0.0", "status": "active",
                "compose": {"include": [{"system": "http://hl7.org/fhir/administrative-gender"}]}}),
        ),
    ]);
    std::fs::write(dir.path().join("core.tgz"), package).unwrap();
    let path = dir.path().join("txmap.toml");
    std::fs::write(
        &path,
        "editions = [\"e.txmap\"]\npackages = [\"core.tgz\"]\n",
    )
    .unwrap();
    let options = ServeOptions {
        config: Some(path.clone()),
        data_dir: dir.path().join("data"),
        ..Default::default()
    };
    let prepared = prepare(&options, &Loader::new()).unwrap();
    assert_eq!(prepared.state.packages.list.len(), 1);
    let app = router(prepared.state);
    for (base, version) in [("r4", "4.0.1"), ("r5", "5.0.0")] {
        let (status, v) = get(
            &app,
            &format!(
                "/{base}/CodeSystem/$lookup?system=http://hl7.org/fhir/administrative-gender&code=male"
            ),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(param(&v, "display"), Some(&json!("Male")), "{v}");
        assert_eq!(param(&v, "version"), Some(&json!(version)), "{v}");
    }

    // A package's value set is found by its URL alone.
    let (status, v) = get(
        &app,
        "/r5/ValueSet/$expand?url=http://hl7.org/fhir/ValueSet/administrative-gender",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["expansion"]["total"], 2, "{v}");
    let (status, v) = get(
        &app,
        "/r4/ValueSet/$validate-code?url=http://hl7.org/fhir/ValueSet/administrative-gender&code=female",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(param(&v, "result"), Some(&json!(true)), "{v}");

    // A package that cannot be read stops startup, naming it.
    std::fs::write(
        &path,
        "editions = [\"e.txmap\"]\npackages = [\"missing.tgz\"]\n",
    )
    .unwrap();
    let err = prepare(&options, &Loader::new()).unwrap_err();
    assert!(err.to_string().contains("missing.tgz"), "{err}");
}

/// A folder in `packages` serves every `*.tgz` in it (what `txmap sync`
/// fills); an empty one serves none and does not stop the start.
#[tokio::test]
async fn a_packages_folder_serves_its_packages() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("pkgs");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::create_dir_all(dir.path().join("empty")).unwrap();
    for (name, code) in [("a", "alpha"), ("b", "beta")] {
        let package = tgz(&[
            (
                "package/package.json",
                json!({"name": format!("example.{name}"), "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
            ),
            (
                "package/CodeSystem-x.json",
                json!({"resourceType": "CodeSystem", "url": format!("http://example.org/{name}"),
                    "status": "active", "content": "complete", "concept": [{"code": code}]}),
            ),
        ]);
        std::fs::write(folder.join(format!("{name}.tgz")), package).unwrap();
    }
    std::fs::write(folder.join("notes.txt"), "not a package").unwrap();
    let path = dir.path().join("txmap.toml");
    std::fs::write(&path, "packages = [\"pkgs\", \"empty\"]\n").unwrap();
    let options = ServeOptions {
        config: Some(path),
        data_dir: dir.path().join("data"),
        ..Default::default()
    };
    let prepared = prepare(&options, &Loader::new()).unwrap();
    let names: Vec<&str> = prepared
        .state
        .packages
        .list
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(names, ["example.a", "example.b"]);
    let app = router(prepared.state);
    let (status, v) = get(
        &app,
        "/r4/CodeSystem/$validate-code?url=http://example.org/b&code=beta",
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(param(&v, "result"), Some(&json!(true)), "{v}");
}
