//! The admin listener's calls, through its router: the token guards every
//! one, and the default edition is a pointer an operator moves and moves
//! back while the server runs, which unversioned calls then follow.

use crate::common;

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;
use txmap_server::app::AppState;

const TOKEN: &str = "an-admin-token-of-some-length";
const WRITER: &str = "a-writer-token-of-some-length";

/// An admin call: status and JSON body.
async fn admin(
    state: &Arc<AppState>,
    method: Method,
    uri: &str,
    token: Option<&str>,
) -> (StatusCode, Value) {
    let mut r = Request::builder().method(method).uri(uri);
    if let Some(t) = token {
        r = r.header("authorization", format!("Bearer {t}"));
    }
    let live = txmap_server::state::Live::new(Arc::clone(state), txmap_server::app::router);
    let response = txmap_server::admin::router(live, None)
        .oneshot(r.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .unwrap();
    (status, serde_json::from_slice(&bytes).unwrap())
}

/// An unversioned `$lookup`: its status and the version that answered.
async fn lookup(state: &Arc<AppState>, code: u64) -> (StatusCode, Option<String>) {
    let (status, v) = common::snomed_lookup(state, &code.to_string()).await;
    (
        status,
        common::param(&v, "version").and_then(|p| p["valueString"].as_str().map(str::to_owned)),
    )
}

#[tokio::test]
async fn the_default_edition_moves_and_moves_back_behind_the_token() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "a", 400, 3, 20250131);
    common::edition(dir.path(), "b", 400, 4, 20250731);
    let state = common::serve(
        dir.path(),
        &format!(
            "editions = [\"a.txmap\", \"b.txmap\"]\n[http]\nadmin_token = \"{TOKEN}\"\n[admin]\nlisten = \"127.0.0.1:0\"\n[auth]\ntokens = [{{ name = \"ci\", sha256 = \"{}\", scopes = [\"write\"] }}]\n",
            txmap_server::auth::hash(WRITER)
        ),
    );
    let (a, b) = (&state.editions.list[0], &state.editions.list[1]);
    let versions = [
        a.file.names.version_uri.clone(),
        b.file.names.version_uri.clone(),
    ];
    assert_ne!(versions[0], versions[1]);
    // A concept of b that a lacks: which edition answers shows.
    let only_b = (0..b.edition.concept_count())
        .map(|o| b.edition.sctid(o).unwrap())
        .find(|&id| a.edition.ordinal(id).is_none())
        .expect("a concept only b has");

    // No token, an unknown one, one without the admin scope: refused,
    // nothing moves.
    let (status, _) = admin(&state, Method::GET, "/admin/default", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let put_b = "/admin/default?edition=b.txmap";
    let (status, v) = admin(
        &state,
        Method::PUT,
        put_b,
        Some("a-wrong-token-of-some-length"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{v}");
    assert_eq!(v["resourceType"], "OperationOutcome");
    let (status, v) = admin(&state, Method::PUT, put_b, Some(WRITER)).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{v}");
    let (status, v) = admin(&state, Method::GET, "/admin/default", Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(v["default"]["file"], "a.txmap", "{v}");
    assert_eq!(lookup(&state, only_b).await.0, StatusCode::NOT_FOUND);

    // Moved to b: unversioned calls mean b.
    let (status, v) = admin(&state, Method::PUT, put_b, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(
        (v["default"]["file"].as_str(), v["was"]["file"].as_str()),
        (Some("b.txmap"), Some("a.txmap"))
    );
    assert_eq!(
        lookup(&state, only_b).await,
        (StatusCode::OK, Some(versions[1].clone()))
    );
    let status = txmap_server::status::status_json(&state, txmap_server::status::View::Admin);
    assert_eq!(status["editions"][1]["default"], true, "{status}");
    assert_eq!(status["editions"][0]["default"], false);

    // Names that are not one edition: nothing moves.
    for (entry, want) in [
        ("nothing.txmap", StatusCode::NOT_FOUND),
        (a.file.names.edition_uri.as_str(), StatusCode::BAD_REQUEST),
        ("", StatusCode::BAD_REQUEST),
    ] {
        let uri = format!("/admin/default?edition={}", txmap_pages::encode(entry));
        let (status, v) = admin(&state, Method::PUT, &uri, Some(TOKEN)).await;
        assert_eq!(status, want, "{entry:?}: {v}");
    }
    assert_eq!(
        lookup(&state, only_b).await.1.as_deref(),
        Some(versions[1].as_str())
    );

    // And back, by its version URI.
    let back = format!(
        "/admin/default?edition={}",
        txmap_pages::encode(&versions[0])
    );
    let (status, _) = admin(&state, Method::PUT, &back, Some(TOKEN)).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(lookup(&state, only_b).await.0, StatusCode::NOT_FOUND);
    let code_a = a.edition.sctid(0).unwrap();
    assert_eq!(
        lookup(&state, code_a).await,
        (StatusCode::OK, Some(versions[0].clone()))
    );
}

#[test]
fn an_admin_listener_without_a_token_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "a", 400, 3, 20250131);
    let path = dir.path().join("txmap.toml");
    std::fs::write(
        &path,
        "editions = [\"a.txmap\"]\n[admin]\nlisten = \"127.0.0.1:0\"\n",
    )
    .unwrap();
    let options = txmap_server::ServeOptions {
        config: Some(path),
        data_dir: dir.path().join("data"),
        ..Default::default()
    };
    let Err(err) = txmap_server::prepare(&options, &txmap_load::Loader::new()) else {
        panic!("an admin listener without a token started");
    };
    assert!(
        err.to_string()
            .contains("[admin] listen needs a token with the admin scope"),
        "{err}"
    );
}
