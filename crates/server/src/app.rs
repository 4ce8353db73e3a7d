//! The HTTP application: state, routes and the memory guard's gate.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use txmap_memory::{Guard, GuardDecision, Root};

use crate::editions::Editions;
use crate::{fhir, outcome, status};

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    pub editions: Editions,
    pub guard: Guard,
    /// Where `/proc` and `/sys` are read from (a fake tree in tests).
    pub root: Root,
    pub configured_limit: Option<u64>,
    pub started: Instant,
    pub limits: Limits,
    /// Permits for heavy operations ([`Limits::heavy_concurrency`]).
    pub heavy: tokio::sync::Semaphore,
    /// FHIR packages from the config (`packages`).
    pub packages: crate::packages::FhirPackages,
}

/// How much work one request may ask for (`[limits]` in the config).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// How long one operation may run before it is answered 422
    /// `too-costly`. Long loops check it as they go; the handler is also
    /// abandoned a little after it runs out.
    pub request: Duration,
    /// The most codes one `$expand` returns, unless the
    /// `X-TOO-COSTLY-THRESHOLD` header says otherwise.
    pub max_expansion: usize,
    /// The most elements one ECL evaluation may touch.
    pub ecl_max_work: u64,
    /// How many heavy operations run at once.
    pub heavy_concurrency: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request: Duration::from_secs(10),
            max_expansion: 10_000,
            ecl_max_work: 50_000_000,
            heavy_concurrency: std::thread::available_parallelism()
                .map_or(1, |n| n.get().saturating_sub(1))
                .max(1),
        }
    }
}

impl Limits {
    /// The configured limits, defaults where the config is silent; a
    /// value out of range is an error naming the key.
    pub fn from_config(c: &crate::config::LimitsConfig) -> Result<Limits, String> {
        let d = Limits::default();
        let request = match c.request_seconds {
            None => d.request,
            Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Duration::from_secs_f64(s),
            Some(s) => {
                return Err(format!(
                    "[limits] request_seconds = {s}: must be above 0 and at most 86400"
                ));
            }
        };
        Ok(Limits {
            request,
            max_expansion: c.max_expansion.unwrap_or(d.max_expansion),
            ecl_max_work: c.ecl_max_work.unwrap_or(d.ecl_max_work),
            heavy_concurrency: match c.heavy_concurrency {
                None => d.heavy_concurrency,
                Some(n) if n >= 1 => n,
                Some(_) => return Err("[limits] heavy_concurrency must be at least 1".into()),
            },
        })
    }
}

/// Seconds a client refused for memory should wait.
pub const RETRY_AFTER_SECONDS: u64 = 5;

/// The router. Diagnostics (`/health`, `/status`, `/metrics`) are never
/// refused, so an operator can always see why the server is refusing;
/// the FHIR bases (`/r4`, `/r5`, see [`fhir`]) and every unknown path go
/// through the memory guard.
pub fn router(state: Arc<AppState>) -> Router {
    let guarded = Router::new()
        .merge(fhir::routes())
        .fallback(not_found)
        .layer(middleware::from_fn_with_state(state.clone(), memory_gate));
    Router::new()
        .route("/health", get(health))
        .route("/status", get(status_handler))
        .route("/metrics", get(metrics))
        .merge(guarded)
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

async fn status_handler(State(state): State<Arc<AppState>>) -> Response {
    axum::Json(status::status_json(&state)).into_response()
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

/// Refuses new requests with 503 while measured memory is above the
/// guard's first threshold.
async fn memory_gate(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    match state.guard.check_new_request() {
        GuardDecision::Accept => next.run(request).await,
        GuardDecision::Refuse | GuardDecision::Abort => {
            tracing::warn!(
                "memory guard: refused {} {}",
                request.method(),
                request.uri().path()
            );
            let mut r = outcome::response(
                StatusCode::SERVICE_UNAVAILABLE,
                "transient",
                "the server is short of memory; retry later",
            );
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
            r
        }
    }
}
