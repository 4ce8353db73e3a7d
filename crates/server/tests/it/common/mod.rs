//! What the server's integration tests share: small synthetic editions made
//! in a temp dir, a server prepared from a config text, and FHIR calls to
//! its router in process.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt;
use txmap_load::Loader;
use txmap_server::app::{AppState, router};
use txmap_server::{ServeOptions, prepare};

/// Imports a synthetic edition of `concepts` concepts as `dir/{name}.txmap`.
pub fn edition(dir: &Path, name: &str, concepts: usize, seed: u64, effective_time: u32) -> PathBuf {
    let rf2 = dir.join(format!("{name}-rf2"));
    let mut config = txmap_synth::SynthConfig::new(concepts, seed);
    config.effective_time = effective_time;
    txmap_synth::generate(&config, &rf2).unwrap();
    let file = dir.join(format!("{name}.txmap"));
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![rf2], file.clone()),
        &txmap_import::Quiet,
    )
    .unwrap();
    file
}

/// A server prepared from `config` (TOML) written into `dir`.
pub fn serve(dir: &Path, config: &str) -> Arc<AppState> {
    let path = dir.join("txmap.toml");
    std::fs::write(&path, config).unwrap();
    let options = ServeOptions {
        config: Some(path),
        data_dir: dir.join("data"),
        ..Default::default()
    };
    prepare(&options, &Loader::new()).unwrap().state
}

/// A FHIR call through the router: status and JSON body, which must be
/// `application/fhir+json`.
pub async fn call(
    state: Arc<AppState>,
    method: Method,
    uri: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    call_with_headers(state, method, uri, &[], body).await
}

/// [`call`] with extra request headers.
pub async fn call_with_headers(
    state: Arc<AppState>,
    method: Method,
    uri: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut r = Request::builder().method(method).uri(uri);
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let body = match body {
        Some(b) => {
            r = r.header("content-type", "application/fhir+json;charset=UTF-8");
            Body::from(b.to_string())
        }
        None => Body::empty(),
    };
    let response = router(state).oneshot(r.body(body).unwrap()).await.unwrap();
    let status = response.status();
    assert_eq!(
        response.headers()["content-type"],
        "application/fhir+json; charset=utf-8"
    );
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// A server on a real socket (127.0.0.1, a free port) in a thread of its
/// own, serving what `live` serves until `stop` is sent: its address,
/// the sender, and when it stopped.
pub fn listen(
    live: Arc<txmap_server::state::Live>,
) -> (
    std::net::SocketAddr,
    tokio::sync::oneshot::Sender<()>,
    std::sync::mpsc::Receiver<std::time::Instant>,
) {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let listener = txmap_server::bind("127.0.0.1:0", false).unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            txmap_server::http::serve(listener, live, async {
                let _ = stop_rx.await;
            })
            .await;
            let _ = done_tx.send(std::time::Instant::now());
        });
    });
    (addr_rx.recv().unwrap(), stop_tx, done_rx)
}

/// An unversioned SNOMED CT `$lookup` of `code` at `/r4`.
pub async fn snomed_lookup(state: &Arc<AppState>, code: &str) -> (StatusCode, Value) {
    call(
        Arc::clone(state),
        Method::GET,
        &format!("/r4/CodeSystem/$lookup?system=http://snomed.info/sct&code={code}"),
        None,
    )
    .await
}

/// A GET of a diagnostics path (`/livez`, `/readyz`, `/status`): plain
/// JSON, not FHIR.
pub async fn diagnostics(state: Arc<AppState>, uri: &str) -> (StatusCode, Value) {
    let r = Request::builder().uri(uri).body(Body::empty()).unwrap();
    let response = router(state).oneshot(r).await.unwrap();
    let status = response.status();
    assert_eq!(response.headers()["content-type"], "application/json");
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// A POST of a Parameters resource with these parameters.
pub fn parameters(parameters: Value) -> Value {
    json!({ "resourceType": "Parameters", "parameter": parameters })
}

/// The Parameters parameter named `name`, whole.
pub fn param<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["parameter"]
        .as_array()?
        .iter()
        .find(|p| p["name"] == name)
}

/// The text of an OperationOutcome's first issue ("" if none).
pub fn issue_text(v: &Value) -> String {
    v["issue"][0]["details"]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A `$validate-code` answer's `result`; a panic naming the answer when
/// it has none.
pub fn result(v: &Value) -> bool {
    param(v, "result").unwrap_or_else(|| panic!("no result: {v}"))["valueBoolean"]
        .as_bool()
        .unwrap_or_else(|| panic!("no result: {v}"))
}

/// Defines, in a test file, `state()` (one server for the whole file, made
/// once by `$make`, a `fn(&Path) -> Arc<AppState>` given a temp dir),
/// `get(uri)` and `post(uri, parameters)`.
#[macro_export]
macro_rules! one_server {
    ($make:expr) => {
        fn state() -> std::sync::Arc<txmap_server::app::AppState> {
            static STATE: std::sync::OnceLock<std::sync::Arc<txmap_server::app::AppState>> =
                std::sync::OnceLock::new();
            STATE
                .get_or_init(|| {
                    let dir = tempfile::tempdir().unwrap();
                    let make: fn(&std::path::Path) -> std::sync::Arc<txmap_server::app::AppState> =
                        $make;
                    make(dir.path())
                })
                .clone()
        }

        async fn get(uri: &str) -> (axum::http::StatusCode, serde_json::Value) {
            common::call(state(), axum::http::Method::GET, uri, None).await
        }

        async fn post(
            uri: &str,
            parameters: serde_json::Value,
        ) -> (axum::http::StatusCode, serde_json::Value) {
            common::call(
                state(),
                axum::http::Method::POST,
                uri,
                Some(common::parameters(parameters)),
            )
            .await
        }
    };
}

/// `folder` of the HL7 tx-ecosystem data (`$TX_ECOSYSTEM_DIR`, else
/// `../shared/tx-ecosystem` beside the checkout) when it holds `probe`, or
/// `None` with a notice: tests that need it skip without it, except under
/// CI (`CI=true`), where its absence fails them.
pub fn tx_ecosystem(folder: &str, probe: &str) -> Option<PathBuf> {
    let base = std::env::var_os("TX_ECOSYSTEM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tx-ecosystem")
        });
    let dir = base.join(folder);
    if dir.join(probe).exists() {
        Some(dir)
    } else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} is missing under CI",
            dir.join(probe).display()
        );
        eprintln!(
            "skipped: {} not found (set TX_ECOSYSTEM_DIR)",
            dir.join(probe).display()
        );
        None
    }
}

/// `../shared/fhir-packages/{file}`, or `None` with a notice; under CI
/// (`CI=true`) a missing package fails the test.
pub fn fhir_package(file: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/fhir-packages")
        .join(file);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing under CI",
        path.display()
    );
    eprintln!("skipped: {} not found", path.display());
    None
}

/// An answer read off a real socket: status, headers (names lower-case)
/// and body.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    /// The first header `name` (lower-case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The body as JSON (`Null` when it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }
}

/// One HTTP/1.1 exchange over a fresh connection to `addr`.
pub fn exchange(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Answer {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n");
    for (k, v) in headers {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some(b) = body {
        request.push_str(&format!(
            "Content-Type: application/fhir+json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    request.push_str("\r\n");
    request.push_str(body.unwrap_or_default());
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

/// The rows of the first RF2 file under `dir` whose name starts with
/// `prefix`, split at tabs, header left out.
pub fn rf2_rows(dir: &Path, prefix: &str) -> Vec<Vec<String>> {
    fn find(dir: &Path, prefix: &str) -> Option<PathBuf> {
        for e in std::fs::read_dir(dir).ok()? {
            let p = e.ok()?.path();
            if p.is_dir() {
                if let Some(f) = find(&p, prefix) {
                    return Some(f);
                }
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
            {
                return Some(p);
            }
        }
        None
    }
    let file = find(dir, prefix).unwrap_or_else(|| panic!("no {prefix} file"));
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect()
}
