//! What the server tells strangers: links never come from a stranger's
//! `Host` or `X-Forwarded-Proto` (a configured public base URL wins),
//! `/status` names files by their file name unless the admin token is
//! given, and CORS is off until the config lists an origin.

use crate::common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;
use txmap_server::app::{AppState, router};

fn server(extra: &str) -> (Arc<AppState>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "ed", 200, 1, 20250131);
    let state = common::serve(dir.path(), &format!("editions = [\"ed.txmap\"]\n{extra}"));
    (state, dir)
}

async fn send(
    state: &Arc<AppState>,
    r: Request<Body>,
) -> (StatusCode, axum::http::HeaderMap, String) {
    let response = router(Arc::clone(state)).oneshot(r).await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = axum::body::to_bytes(response.into_body(), 1 << 24)
        .await
        .unwrap();
    (status, headers, String::from_utf8(body.to_vec()).unwrap())
}

/// Every `url` of a search Bundle's links and every `fullUrl`.
fn links(bundle: &Value) -> Vec<String> {
    let mut out: Vec<String> = bundle["link"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["url"].as_str().unwrap().to_owned())
        .collect();
    for e in bundle["entry"].as_array().unwrap() {
        out.push(e["fullUrl"].as_str().unwrap().to_owned());
    }
    out
}

fn hostile_search() -> Request<Body> {
    Request::get("/r4/CodeSystem?_count=1")
        .header("host", "evil.example")
        .header("x-forwarded-proto", "https")
        .header("x-forwarded-host", "evil.example")
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn links_never_come_from_a_strangers_host() {
    let (state, _dir) = server("");
    let (status, _, body) = send(&state, hostile_search()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let bundle: Value = serde_json::from_str(&body).unwrap();
    for l in links(&bundle) {
        assert!(!l.contains("evil"), "{l}");
        assert!(l.starts_with("http://localhost/r4/CodeSystem"), "{l}");
    }
    let (state, _dir) = server("[http]\npublic_base_url = \"https://tx.example.org/fhir\"\n");
    let (_, _, body) = send(&state, hostile_search()).await;
    let bundle: Value = serde_json::from_str(&body).unwrap();
    for l in links(&bundle) {
        assert!(
            l.starts_with("https://tx.example.org/fhir/r4/CodeSystem"),
            "{l}"
        );
    }
}

#[tokio::test]
async fn status_names_files_by_name_unless_the_admin_token_is_given() {
    let (state, dir) = server("[http]\nadmin_token = \"0123456789abcdef0123\"\n");
    let path = dir.path().to_string_lossy().into_owned();
    let get = |token: Option<&str>| {
        let mut r = Request::get("/status");
        if let Some(t) = token {
            r = r.header("authorization", format!("Bearer {t}"));
        }
        r.body(Body::empty()).unwrap()
    };
    let (_, _, public) = send(&state, get(None)).await;
    assert!(!public.contains(&path), "{public}");
    let v: Value = serde_json::from_str(&public).unwrap();
    assert_eq!(v["editions"][0]["file"], "ed.txmap", "{v}");
    let (_, _, wrong) = send(&state, get(Some("not-the-token-at-all"))).await;
    assert!(!wrong.contains(&path));
    let (_, _, admin) = send(&state, get(Some("0123456789abcdef0123"))).await;
    assert!(admin.contains(&path), "{admin}");
}

#[tokio::test]
async fn cors_is_off_until_an_origin_is_listed() {
    let preflight = || {
        Request::options("/r4/CodeSystem/$lookup")
            .header("origin", "https://app.example.org")
            .header("access-control-request-method", "POST")
            .header("access-control-request-headers", "content-type")
            .body(Body::empty())
            .unwrap()
    };
    let lookup = |origin: &str| {
        Request::get("/r4/metadata")
            .header("origin", origin)
            .body(Body::empty())
            .unwrap()
    };
    let (state, _dir) = server("");
    let (status, headers, _) = send(&state, preflight()).await;
    assert_ne!(status, StatusCode::NO_CONTENT);
    assert!(!headers.contains_key("access-control-allow-origin"));
    let (_, headers, _) = send(&state, lookup("https://app.example.org")).await;
    assert!(!headers.contains_key("access-control-allow-origin"));
    let (state, _dir) = server("[http]\ncors_origins = [\"https://app.example.org\"]\n");
    let (status, headers, _) = send(&state, preflight()).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example.org"
    );
    assert!(
        headers["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("POST")
    );
    let (status, headers, _) = send(&state, lookup("https://app.example.org")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        headers["access-control-allow-origin"],
        "https://app.example.org"
    );
    let (_, headers, _) = send(&state, lookup("https://other.example")).await;
    assert!(!headers.contains_key("access-control-allow-origin"));
}
