//! The operator's listener (`[admin] listen`): calls that change what the
//! server serves, on an address of their own that a firewall can keep in,
//! each behind a token with the admin scope ([`crate::auth`]) — a missing
//! or unknown token is 401, one without the scope 403, and nothing
//! changes.
//!
//! `POST /admin/reload` builds the next served set from the config file
//! and serves it, or says why not ([`crate::reload`]).
//!
//! `GET /admin/default` says which edition unversioned calls mean, and
//! `PUT /admin/default?edition=ENTRY` moves that pointer (and moves it
//! back) while requests run, without reloading a file: `ENTRY` names one
//! served edition as `[snomed]` entries do — file name, its stem, version
//! URI, or an edition URI when one version of it is served. Requests
//! that started before the move finish with the edition they resolved.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::auth::Scope;
use crate::outcome;
use crate::state::{AppState, Live};

/// What the admin calls act on: the served set, and the config file a
/// reload reads.
#[derive(Debug)]
pub struct Admin {
    pub live: Arc<Live>,
    pub config: Option<PathBuf>,
}

/// The admin routes, every one behind the token.
pub fn router(live: Arc<Live>, config: Option<PathBuf>) -> Router {
    let admin = Arc::new(Admin { live, config });
    Router::new()
        .route("/admin/default", get(default).put(move_default))
        .route("/admin/reload", post(reload))
        .fallback(|| async {
            outcome::response(StatusCode::NOT_FOUND, "not-found", "no such admin call")
        })
        .layer(middleware::from_fn_with_state(admin.clone(), token))
        .with_state(admin)
}

/// 401 without a bearer token or with one not configured, 403 with one
/// that lacks the admin scope ([`crate::auth`]).
async fn token(State(admin): State<Arc<Admin>>, request: Request, next: Next) -> Response {
    let checked = admin
        .live
        .current()
        .auth
        .check(request.headers(), Scope::Admin);
    match checked {
        Ok(()) => next.run(request).await,
        Err(denied) => denied.response(),
    }
}

/// The default edition, as its file and version URI.
fn described(state: &AppState) -> Value {
    match state.editions.default_edition() {
        Some(e) => json!({
            "file": e.file.names.file_name,
            "version": e.file.names.version_uri,
        }),
        None => Value::Null,
    }
}

async fn default(State(admin): State<Arc<Admin>>) -> Response {
    axum::Json(json!({ "default": described(&admin.live.current()) })).into_response()
}

#[derive(serde::Deserialize)]
struct Reload {
    /// `false`: answer 202 at once and reload in the background.
    wait: Option<bool>,
}

/// Builds the next served set from the config file and serves it
/// ([`crate::reload`]); answers when it serves, or why not (the old set
/// serving on) — or at once with 202, `?wait=false`.
async fn reload(State(admin): State<Arc<Admin>>, Query(r): Query<Reload>) -> Response {
    if r.wait == Some(false) {
        let (live, config) = (Arc::clone(&admin.live), admin.config.clone());
        tokio::spawn(async move {
            let _ = crate::reload::reload(live, config).await;
        });
        return (
            StatusCode::ACCEPTED,
            axum::Json(json!({ "reloading": true })),
        )
            .into_response();
    }
    match crate::reload::reload(Arc::clone(&admin.live), admin.config.clone()).await {
        Ok(generation) => {
            let state = admin.live.current();
            axum::Json(json!({
                "generation": generation,
                "editions": state.editions.list.iter().map(|e| &e.file.names.file_name).collect::<Vec<_>>(),
                "default": described(&state),
            }))
            .into_response()
        }
        Err(why) => outcome::response(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid",
            &format!("the reload failed and the served set is unchanged: {why}"),
        ),
    }
}

#[derive(serde::Deserialize)]
struct Move {
    edition: Option<String>,
}

async fn move_default(State(admin): State<Arc<Admin>>, Query(m): Query<Move>) -> Response {
    let state = admin.live.current();
    let Some(entry) = m.edition.filter(|e| !e.trim().is_empty()) else {
        return outcome::response(
            StatusCode::BAD_REQUEST,
            "required",
            "name the edition: ?edition= a file name, version URI or edition URI",
        );
    };
    let entry = entry.trim();
    let found: Vec<usize> = state
        .editions
        .list
        .iter()
        .enumerate()
        .filter(|(_, e)| e.file.names.matches(entry))
        .map(|(i, _)| i)
        .collect();
    let index = match found.as_slice() {
        [i] => *i,
        [] => {
            return outcome::response(
                StatusCode::NOT_FOUND,
                "not-found",
                &format!("{entry:?} names no served edition"),
            );
        }
        several => {
            return outcome::response(
                StatusCode::BAD_REQUEST,
                "invalid",
                &format!(
                    "{entry:?} names {} served editions; name one by its file or version URI",
                    several.len()
                ),
            );
        }
    };
    let was = described(&state);
    state.editions.default.set(index);
    let now = described(&state);
    tracing::info!("default edition moved from {was} to {now}");
    axum::Json(json!({ "default": now, "was": was })).into_response()
}
