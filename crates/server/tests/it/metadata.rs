//! The FHIR metadata endpoints at `/r4` and `/r5`: CapabilityStatement,
//! TerminologyCapabilities, `$versions` and format negotiation, in process
//! on two small synthetic editions; and, when the HL7 suite is beside the
//! checkout, a structural check against its `metadata` expectations.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;
use txmap_load::Loader;
use txmap_memory::{Guard, GuardConfig, Limit, LimitSource, ProcessMemory, Root};
use txmap_server::app::{AppState, router};
use txmap_server::editions::Editions;
use txmap_server::fhir::metadata::{RELEASE_DATE, SOFTWARE_VERSION};
use txmap_server::{ServeOptions, prepare};

const FHIR_JSON: &str = "application/fhir+json; charset=utf-8";
const VERSIONS: [(&str, &str, &str); 2] = [("/r4", "4.0.1", "4.0"), ("/r5", "5.0.0", "5.0")];

/// A small edition file dated `effective_time`.
fn edition(dir: &Path, name: &str, seed: u64, effective_time: u32) -> PathBuf {
    common::edition(dir, name, 800, seed, effective_time)
}

/// Two editions (read into memory, so their files may go), the second the
/// default; made once for every test here.
fn state() -> Arc<AppState> {
    static STATE: OnceLock<Arc<AppState>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            edition(dir.path(), "jan", 1, 20250131);
            edition(dir.path(), "jul", 2, 20250731);
            let path = dir.path().join("txmap.toml");
            std::fs::write(
                &path,
                "editions = [\"jan.txmap\", \"jul.txmap\"]\ndefault_edition = \"jul\"\n",
            )
            .unwrap();
            let options = ServeOptions {
                config: Some(path),
                data_dir: dir.path().join("data"),
                ..Default::default()
            };
            prepare(&options, &Loader::new()).unwrap().state
        })
        .clone()
}

/// The loaded version URIs, and the default's.
fn loaded_versions(state: &AppState) -> (Vec<String>, String) {
    let all = state
        .editions
        .list
        .iter()
        .map(|e| e.file.names.version_uri.clone())
        .collect();
    let default = state.editions.default_edition().unwrap();
    (all, default.file.names.version_uri.clone())
}

async fn call(
    app: &axum::Router,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, HeaderMap, String) {
    let mut request = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let r = app
        .clone()
        .oneshot(request.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    let body = axum::body::to_bytes(r.into_body(), 1 << 24).await.unwrap();
    (status, headers, String::from_utf8(body.to_vec()).unwrap())
}

/// A 200 FHIR JSON resource of the given type.
async fn resource(app: &axum::Router, uri: &str, headers: &[(&str, &str)]) -> Value {
    let (status, h, body) = call(app, Method::GET, uri, headers).await;
    assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    assert_eq!(h["content-type"], FHIR_JSON, "{uri}");
    assert!(body.starts_with("{\"resourceType\":"), "{uri}: {body}");
    serde_json::from_str(&body).unwrap()
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|x| x[key].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn capability_statements_for_r4_and_r5() {
    let app = router(state());
    for (base, fhir_version, _) in VERSIONS {
        let cs = resource(
            &app,
            &format!("{base}/metadata"),
            &[("host", "tx.example.org:8080")],
        )
        .await;
        assert_eq!(cs["resourceType"], "CapabilityStatement");
        assert_eq!(cs["fhirVersion"], fhir_version);
        assert_eq!(cs["kind"], "instance");
        assert_eq!(cs["status"], "active");
        assert_eq!(
            cs["instantiates"],
            serde_json::json!(["http://hl7.org/fhir/CapabilityStatement/terminology-server"])
        );
        assert!(
            cs["format"]
                .as_array()
                .unwrap()
                .contains(&"application/fhir+json".into())
        );
        // Not from the request's Host: from the configured public base
        // URL, a trusted proxy or the address reached (none in process).
        assert_eq!(cs["url"], format!("http://localhost{base}/metadata"));
        assert_eq!(cs["date"], RELEASE_DATE);
        assert_eq!(cs["version"], SOFTWARE_VERSION);
        assert_eq!(cs["software"]["name"], "txmap");
        assert_eq!(cs["software"]["version"], SOFTWARE_VERSION);
        assert_eq!(cs["software"]["releaseDate"], RELEASE_DATE);
        assert!(cs["implementation"]["description"].is_string());

        // The two feature extensions, in this order.
        let ext = cs["extension"].as_array().unwrap();
        assert_eq!(ext.len(), 2);
        let feature = |e: &Value| {
            assert_eq!(
                e["url"],
                "http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature"
            );
            assert_eq!(e["extension"][0]["url"], "definition");
            assert_eq!(e["extension"][1]["url"], "value");
            (
                e["extension"][0]["valueCanonical"]
                    .as_str()
                    .unwrap()
                    .to_owned(),
                e["extension"][1].clone(),
            )
        };
        let (d, v) = feature(&ext[0]);
        assert_eq!(
            d,
            "http://hl7.org/fhir/uv/tx-tests/FeatureDefinition/test-version"
        );
        let semver: Vec<&str> = v["valueCode"].as_str().unwrap().split('.').collect();
        assert!(semver.len() == 3 && semver.iter().all(|p| p.parse::<u32>().is_ok()));
        let (d, v) = feature(&ext[1]);
        assert_eq!(
            d,
            "http://hl7.org/fhir/uv/tx-ecosystem/FeatureDefinition/CodeSystemAsParameter"
        );
        assert_eq!(v["valueBoolean"], true);

        let rest = &cs["rest"][0];
        assert_eq!(rest["mode"], "server");
        let resources = rest["resource"].as_array().unwrap();
        let find = |ty: &str| {
            resources
                .iter()
                .find(|r| r["type"] == ty)
                .unwrap_or_else(|| panic!("no {ty}"))
        };
        let ops = |ty: &str| names(&find(ty)["operation"], "name");
        assert_eq!(ops("CodeSystem"), ["lookup", "subsumes", "validate-code"]);
        assert_eq!(ops("ValueSet"), ["expand", "validate-code"]);
        assert_eq!(ops("ConceptMap"), ["translate"]);
        assert_eq!(
            names(&find("ValueSet")["interaction"], "code"),
            ["read", "search-type"]
        );
        assert_eq!(names(&rest["operation"], "name"), ["versions"]);
        assert_eq!(
            rest["operation"][0]["definition"],
            "http://hl7.org/fhir/OperationDefinition/CapabilityStatement-versions"
        );
        assert_eq!(
            find("ValueSet")["operation"][0]["definition"],
            "http://hl7.org/fhir/OperationDefinition/ValueSet-expand"
        );
        for r in resources.iter().chain([rest]) {
            for op in r["operation"].as_array().unwrap() {
                let d = op["definition"].as_str().unwrap();
                assert!(
                    d.starts_with("http://hl7.org/fhir/OperationDefinition/"),
                    "{d}"
                );
            }
        }

        // The same resource whatever the JSON spelling asked for.
        for (uri, headers) in [
            (format!("{base}/metadata?_format=json"), vec![]),
            (
                format!("{base}/metadata?_format=application/fhir%2Bjson"),
                vec![],
            ),
            (
                format!("{base}/metadata?_format=application/fhir+json"),
                vec![],
            ),
            (format!("{base}/metadata?mode=full"), vec![]),
            (
                format!("{base}/metadata"),
                vec![("accept", "application/json")],
            ),
            (
                format!("{base}/metadata"),
                vec![("accept", "application/json, application/fhir+json")],
            ),
            (
                format!("{base}/metadata?_format=json"),
                vec![("accept", "application/fhir+xml")],
            ),
        ] {
            let again = resource(&app, &uri, &headers).await;
            assert_eq!(again["fhirVersion"], fhir_version, "{uri}");
            assert_eq!(again["rest"], cs["rest"], "{uri}");
        }
    }
}

#[tokio::test]
async fn terminology_capabilities_list_the_loaded_editions() {
    let state = state();
    let (all, default) = loaded_versions(&state);
    assert_eq!(all.len(), 2);
    assert_ne!(all[0], all[1], "the two editions need distinct versions");
    let app = router(state.clone());
    for (base, _, _) in VERSIONS {
        let tc = resource(&app, &format!("{base}/metadata?mode=terminology"), &[]).await;
        assert_eq!(tc["resourceType"], "TerminologyCapabilities");
        assert_eq!(tc["status"], "active");
        assert_eq!(tc["kind"], "instance");
        assert_eq!(tc["date"], RELEASE_DATE);
        assert_eq!(tc["version"], SOFTWARE_VERSION);
        assert!(tc["name"].is_string() && tc["title"].is_string());

        let systems = tc["codeSystem"].as_array().unwrap();
        assert_eq!(systems.len(), 1);
        let sct = &systems[0];
        assert_eq!(sct["uri"], "http://snomed.info/sct");
        let mut expected = all.clone();
        expected.sort();
        assert_eq!(names(&sct["version"], "code"), expected);
        for v in sct["version"].as_array().unwrap() {
            let is_default = v["code"] == default.as_str();
            assert_eq!(
                v.get("isDefault").and_then(Value::as_bool).unwrap_or(false),
                is_default,
                "{v}"
            );
        }
        // R5 added codeSystem.content (1..1); R4 has no such element.
        match base {
            "/r5" => assert_eq!(sct["content"], "complete"),
            _ => assert!(sct.get("content").is_none(), "{sct}"),
        }

        let params = names(&tc["expansion"]["parameter"], "name");
        for p in [
            "activeOnly",
            "check-system-version",
            "count",
            "displayLanguage",
            "excludeNested",
            "force-system-version",
            "includeDefinition",
            "includeDesignations",
            "offset",
            "property",
            "system-version",
            "tx-resource",
        ] {
            assert!(params.iter().any(|x| x == p), "{p} missing: {params:?}");
        }
    }
}

#[tokio::test]
async fn versions_by_get_and_post() {
    let app = router(state());
    for (base, _, short) in VERSIONS {
        for method in [Method::GET, Method::POST] {
            let (status, h, body) = call(
                &app,
                method.clone(),
                &format!("{base}/$versions?_format=json&nocache=1"),
                &[("accept", "application/json, application/fhir+json")],
            )
            .await;
            assert_eq!(status, StatusCode::OK, "{method} {base}: {body}");
            assert_eq!(h["content-type"], FHIR_JSON);
            let v: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(v["resourceType"], "Parameters");
            let params = v["parameter"].as_array().unwrap();
            let values = |name: &str| -> Vec<&str> {
                params
                    .iter()
                    .filter(|p| p["name"] == name)
                    .map(|p| p["valueCode"].as_str().unwrap())
                    .collect()
            };
            assert_eq!(values("version"), [short]);
            assert_eq!(values("default"), [short]);
        }
    }
}

#[tokio::test]
async fn xml_is_refused_with_406_and_an_operation_outcome() {
    let app = router(state());
    for (base, _, _) in VERSIONS {
        for (uri, headers) in [
            (format!("{base}/metadata?_format=xml"), vec![]),
            (
                format!("{base}/metadata?_format=application/fhir%2Bxml"),
                vec![],
            ),
            (
                format!("{base}/metadata?mode=terminology&_format=text/xml"),
                vec![],
            ),
            (format!("{base}/$versions?_format=xml"), vec![]),
            (
                format!("{base}/metadata"),
                vec![("accept", "application/fhir+xml")],
            ),
            (
                format!("{base}/metadata?_format=xml"),
                vec![("accept", "application/fhir+json")],
            ),
        ] {
            let (status, h, body) = call(&app, Method::GET, &uri, &headers).await;
            assert_eq!(status, StatusCode::NOT_ACCEPTABLE, "{uri} {headers:?}");
            assert_eq!(h["content-type"], FHIR_JSON);
            let v: Value = serde_json::from_str(&body).unwrap();
            assert_eq!(v["resourceType"], "OperationOutcome");
            assert_eq!(v["issue"][0]["severity"], "error");
            assert_eq!(v["issue"][0]["code"], "not-supported");
            assert!(
                v["issue"][0]["details"]["text"]
                    .as_str()
                    .unwrap()
                    .contains("JSON only")
            );
        }
        // XML preferred but JSON acceptable: JSON.
        resource(
            &app,
            &format!("{base}/metadata"),
            &[(
                "accept",
                "application/fhir+xml, application/fhir+json;q=0.5",
            )],
        )
        .await;
        // A browser's Accept ends in */*.
        resource(
            &app,
            &format!("{base}/metadata"),
            &[(
                "accept",
                "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            )],
        )
        .await;
    }
}

#[tokio::test]
async fn bad_requests_get_operation_outcomes() {
    let app = router(state());
    let outcome = |body: &str| -> Value {
        let v: Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["resourceType"], "OperationOutcome", "{body}");
        v
    };
    let (status, _, body) = call(&app, Method::GET, "/r4/metadata?mode=bogus", &[]).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(outcome(&body)["issue"][0]["code"], "invalid");
    let (status, _, body) = call(&app, Method::POST, "/r5/metadata", &[]).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    outcome(&body);
    let (status, _, body) = call(&app, Method::GET, "/r6/metadata", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    outcome(&body);
    let (status, _, body) = call(&app, Method::GET, "/r4/CodeSystem/$nothing", &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    outcome(&body);
}

#[tokio::test]
async fn metadata_goes_through_the_memory_guard() {
    // 900 MB anonymous out of a 1 GB limit: above refuse_at (0.85).
    let limit = Limit {
        bytes: 1_000_000_000,
        source: LimitSource::Configured,
    };
    let guard = Guard::with_reader(GuardConfig::default(), Some(limit), false, || {
        Some(ProcessMemory {
            vm_rss: Some(900_000_000),
            rss_anon: Some(900_000_000),
            rss_file: Some(0),
            ..Default::default()
        })
    });
    let state = Arc::new(AppState {
        editions: Arc::new(Editions {
            list: Vec::new(),
            default: Default::default(),
            code_systems: Vec::new(),
        }),
        stored: None,
        auth: Default::default(),
        guard: Arc::new(guard),
        root: Root::system(),
        configured_limit: None,
        started: Instant::now(),
        limits: Default::default(),
        lanes: Arc::new(txmap_server::lanes::Lanes::new(1, 1)),
        packages: Default::default(),
        public: Default::default(),
        stopping: Default::default(),
        store_errors: Default::default(),
        reloads: Default::default(),
    });
    let app = router(state);
    for uri in [
        "/r4/metadata",
        "/r5/metadata?mode=terminology",
        "/r4/$versions",
    ] {
        let (status, h, body) = call(&app, Method::GET, uri, &[]).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{uri}");
        assert_eq!(h["retry-after"], "5");
        assert!(body.contains("\"transient\""), "{body}");
    }
    assert_eq!(
        call(&app, Method::GET, "/health", &[]).await.0,
        StatusCode::OK
    );
}

/// A simple version of the runner's pattern-mode comparison: every
/// property of `expected` must be in `actual` (extra ones are fine), every
/// item of an expected array must match an actual item after the previous
/// match, non-template strings and other scalars must be equal, and
/// templates (`$...$`) are checked loosely by kind. Returns the path of
/// the first difference.
fn pattern_match(
    expected: &Value,
    actual: &Value,
    fhir_version: &str,
    path: &str,
) -> Result<(), String> {
    match (expected, actual) {
        (Value::Object(e), Value::Object(a)) => {
            for (k, ev) in e {
                if k.starts_with('$') {
                    continue;
                }
                let here = format!("{path}.{k}");
                let av = a.get(k).ok_or_else(|| format!("{here}: missing"))?;
                pattern_match(ev, av, fhir_version, &here)?;
            }
            Ok(())
        }
        (Value::Array(e), Value::Array(a)) => {
            let mut next = 0;
            for (i, ev) in e.iter().enumerate() {
                let found = (next..a.len())
                    .find(|&j| pattern_match(ev, &a[j], fhir_version, path).is_ok())
                    .ok_or_else(|| format!("{path}[{i}]: no match for {ev} in {actual}"))?;
                next = found + 1;
            }
            Ok(())
        }
        (Value::String(e), Value::String(a))
            if e.len() > 1 && e.starts_with('$') && e.ends_with('$') =>
        {
            let ok = match e.as_str() {
                "$version$" => a == fhir_version,
                "$url$" => a.starts_with("http://") || a.starts_with("https://"),
                "$token$" => {
                    !a.is_empty()
                        && !a.starts_with(['.', '-'])
                        && a.chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
                }
                "$semver$" => {
                    let core = a.split(['-', '+']).next().unwrap_or_default();
                    let parts: Vec<&str> = core.split('.').collect();
                    parts.len() == 3 && parts.iter().all(|p| p.parse::<u64>().is_ok())
                }
                "$date$" => {
                    let b = a.as_bytes();
                    b.len() >= 10
                        && b[4] == b'-'
                        && b[7] == b'-'
                        && [0, 1, 2, 3, 5, 6, 8, 9]
                            .iter()
                            .all(|&i| b[i].is_ascii_digit())
                        && (b.len() == 10 || b[10] == b'T')
                }
                "$string$" => !a.is_empty() && a.trim() == a,
                _ => true,
            };
            if ok {
                Ok(())
            } else {
                Err(format!("{path}: {a:?} does not match {e}"))
            }
        }
        (e, a) if e == a => Ok(()),
        (e, a) => Err(format!("{path}: expected {e}, found {a}")),
    }
}

#[tokio::test]
async fn the_suites_metadata_expectations_are_met() {
    let Some(dir) = common::tx_ecosystem("tests", "capstmt.json") else {
        return;
    };
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    let (capstmt, capterms) = (read("capstmt.json"), read("capterms.json"));
    let app = router(state());
    for (base, fhir_version, _) in VERSIONS {
        // As the runner asks.
        let accept = [("accept", "application/fhir+json")];
        let cs = resource(&app, &format!("{base}/metadata"), &accept).await;
        pattern_match(&capstmt, &cs, fhir_version, "CapabilityStatement")
            .unwrap_or_else(|e| panic!("{base}: {e}"));
        let tc = resource(&app, &format!("{base}/metadata?mode=terminology"), &accept).await;
        pattern_match(&capterms, &tc, fhir_version, "TerminologyCapabilities")
            .unwrap_or_else(|e| panic!("{base}: {e}"));
    }
    // The checker itself notices a difference.
    let mut wrong = capstmt.clone();
    wrong["kind"] = "capability".into();
    let cs = resource(&app, "/r4/metadata", &[]).await;
    assert!(pattern_match(&wrong, &cs, "4.0.1", "CapabilityStatement").is_err());
    assert!(pattern_match(&capstmt, &cs, "5.0.0", "CapabilityStatement").is_err());
}
