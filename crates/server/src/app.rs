//! The HTTP application: routes and the memory guard's gate. What the
//! handlers share is [`crate::state`].

use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use txmap_memory::GuardDecision;

pub use crate::state::{AppState, Limits, NoRoom, RETRY_AFTER_SECONDS, reserve_for_body};
use crate::{fhir, outcome, status};

/// The router. Diagnostics (`/health` and `/livez`, `/readyz`, `/status`,
/// `/metrics`, the status page `/` and its assets) are never refused, so
/// an operator can always see why the server is refusing; the FHIR bases
/// (`/r4`, `/r5`, see
/// [`fhir`]), the other pages ([`crate::pages`]) and every unknown path go
/// through the memory guard, and, when reads are closed (`[auth] read =
/// "token"`), need a token.
pub fn router(state: Arc<AppState>) -> Router {
    let guarded = Router::new()
        .merge(fhir::routes())
        .merge(crate::pages::routes())
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), memory_gate))
        .layer(middleware::from_fn_with_state(state.clone(), read_gate));
    Router::new()
        .route("/health", get(health))
        .route("/livez", get(health))
        .route("/readyz", get(readyz))
        .route("/status", get(status_handler))
        .route("/metrics", get(metrics))
        .merge(crate::pages::open_routes())
        .merge(guarded)
        .layer(middleware::from_fn_with_state(
            Arc::new(state.public.clone()),
            crate::public::cors,
        ))
        .with_state(state)
}

async fn health() -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        "{\"status\":\"ok\"}",
    )
        .into_response()
}

/// Ready when every served file answers: none is still being verified
/// (files over 64 MiB are, in the background, after the server listens)
/// and none failed. Otherwise 503 with the files that do not answer and
/// why — a load balancer sends this replica nothing until they do, or,
/// for a failed file, until an operator replaces it (`/status` has the
/// details). The process itself answering is `/livez`.
async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    let waiting: Vec<serde_json::Value> = state
        .editions
        .files()
        .filter(|f| !f.serving.is_serving())
        .map(|f| {
            serde_json::json!({
                "file": f.names.file_name,
                "state": f.serving.state().as_str(),
                "failure": f.serving.failure(),
            })
        })
        .collect();
    if waiting.is_empty() {
        return axum::Json(serde_json::json!({ "status": "ready" })).into_response();
    }
    let verifying = waiting.iter().any(|w| w["state"] == "verifying");
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        axum::Json(serde_json::json!({ "status": "not ready", "files": waiting })),
    )
        .into_response();
    if verifying {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
    }
    response
}

async fn status_handler(
    State(state): State<Arc<AppState>>,
    headers: axum::http::HeaderMap,
) -> Response {
    let view = if state.auth.is_admin(&headers) {
        status::View::Admin
    } else {
        status::View::Public
    };
    axum::Json(status::status_json(&state, view)).into_response()
}

async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/plain; version=0.0.4"),
        )],
        status::metrics_text(&state),
    )
        .into_response()
}

async fn not_found(request: Request) -> Response {
    outcome::response(
        StatusCode::NOT_FOUND,
        "not-found",
        &format!(
            "no such endpoint: {} {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// With `[auth] read = "token"`, lets through only requests with a
/// configured token (401 otherwise, before the memory guard is asked).
async fn read_gate(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    match state
        .auth
        .check(request.headers(), crate::auth::Scope::Read)
    {
        Ok(()) => next.run(request).await,
        Err(denied) => denied.response(),
    }
}

/// Refuses new requests with 503 while measured memory is above the
/// guard's first threshold. The body is read and thrown away first
/// (without keeping it), so the client reads the 503 rather than a reset.
async fn memory_gate(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    match state.guard.check_new_request() {
        GuardDecision::Accept => next.run(request).await,
        GuardDecision::Refuse | GuardDecision::Abort => {
            tracing::warn!(
                "memory guard: refused {} {}",
                request.method(),
                request.uri().path()
            );
            let drained = crate::http::drain(request.into_body(), state.limits.body_timeout).await;
            let mut r = outcome::response(
                StatusCode::SERVICE_UNAVAILABLE,
                "transient",
                "the server is short of memory; retry later",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
            if !drained {
                r.headers_mut()
                    .insert(header::CONNECTION, HeaderValue::from_static("close"));
            }
            r
        }
    }
}
