//! The FHIR API: one router per FHIR version, `/r4` (4.0.1) and `/r5`
//! (5.0.0), with format negotiation in front ([`format`]) and the
//! resources that describe the server ([`metadata`]).
//!
//! Routes: `GET [base]/metadata` (a CapabilityStatement, or with
//! `mode=terminology` a TerminologyCapabilities), `GET|POST
//! [base]/$versions`, the operations — `CodeSystem/$lookup`,
//! `$subsumes`, `$validate-code`, `ValueSet/$validate-code`, `$expand`,
//! `$batch-validate-code`, `$compare`, `ConceptMap/$translate` — by GET
//! and POST, and
//! read and search of CodeSystem, ValueSet and ConceptMap
//! ([`resources`]). Each operation's route (`operation`) reads its
//! parameters ([`params`]) into one [`params::Request`] (time budget,
//! expansion limit, language, the memory guard as its watch) and gives
//! it to the terminology engine ([`txmap_terminology::operation`]), which
//! says what it costs and answers it; [`work`] runs it where the cost
//! says, within the time budget. The server never decides what a request
//! means.

pub mod format;
pub mod metadata;
pub mod params;
pub mod resources;
pub mod work;
pub mod writes;

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware;
use axum::response::Response;
use axum::routing::get;

use txmap_terminology::operation::Operation;

use self::params::{Request, Respond};

use self::work::{answer, answered};
use crate::outcome::{self, fhir_json, method_not_allowed};
pub use crate::outcome::{FHIR_JSON, fhir_json_text, to_fhir_json};
use crate::public::Connection;
use crate::state::AppState;
pub use crate::version::FhirVersion;

/// Every FHIR base, nested under its path. The caller adds the fallback
/// and the memory guard.
pub fn routes() -> Router<Arc<AppState>> {
    FhirVersion::ALL
        .into_iter()
        .fold(Router::new(), |r, v| r.nest(v.path(), version_routes(v)))
}

/// The routes of one FHIR base. Format negotiation runs on matched routes
/// only, so an unknown path is still a 404.
pub fn version_routes(v: FhirVersion) -> Router<Arc<AppState>> {
    Router::new()
        .route(
            "/metadata",
            get(
                move |State(state): State<Arc<AppState>>, request: HttpRequest| async move {
                    metadata_handler(v, &state, &request)
                },
            )
            .fallback(method_not_allowed),
        )
        .route(
            "/$versions",
            get(move || async move { fhir_json(StatusCode::OK, &metadata::versions(v)) })
                .post(move || async move { fhir_json(StatusCode::OK, &metadata::versions(v)) })
                .fallback(method_not_allowed),
        )
        .route("/CodeSystem/$lookup", operation(v, Operation::Lookup))
        .route("/CodeSystem/$subsumes", operation(v, Operation::Subsumes))
        .route(
            "/CodeSystem/$validate-code",
            operation(v, Operation::CsValidate),
        )
        .route("/ConceptMap/$translate", operation(v, Operation::Translate))
        .route("/ValueSet/$expand", operation(v, Operation::Expand))
        .route(
            "/ValueSet/$batch-validate-code",
            operation(v, Operation::BatchValidate),
        )
        .route(
            "/ValueSet/$validate-code",
            operation(v, Operation::VsValidate),
        )
        .route("/ValueSet/$compare", operation(v, Operation::Compare))
        .merge(resources::routes(v))
        .merge(writes::routes(v))
        .route_layer(middleware::from_fn(format::negotiate))
}

/// An operation's route: its parameters from the query (GET) or the body
/// (POST), with the headers that matter, handed to the engine; other
/// methods are 405.
fn operation(v: FhirVersion, op: Operation) -> axum::routing::MethodRouter<Arc<AppState>> {
    get(
        move |State(state): State<Arc<AppState>>,
              conn: Option<Extension<Connection>>,
              headers: HeaderMap,
              uri: Uri| async move {
            let arrived = Instant::now();
            let client = conn.map(|c| c.remote.ip());
            match params::from_query(&uri) {
                Ok(r) => run(state, v, op, r, &headers, client, arrived).await,
                Err(e) => e.response(),
            }
        },
    )
    .post(
        move |State(state): State<Arc<AppState>>,
              conn: Option<Extension<Connection>>,
              headers: HeaderMap,
              body: Body| async move {
            let client = conn.map(|c| c.remote.ip());
            let body = match crate::http::read_body(&headers, body, &state.limits).await {
                Ok(b) => b,
                Err(e) => return body_refused(&e),
            };
            // What parsing and indexing the body will take, set aside
            // before they start, until the answer is sent.
            let _reserved = match crate::state::reserve_for_body(&state, body.len()) {
                Ok(r) => r,
                Err(no_room) => return no_room.response(),
            };
            // The time budget runs from here: parsing and indexing the
            // body count against it (the body's arrival has its own limit).
            let arrived = Instant::now();
            match params::from_body(&headers, &body) {
                Ok(r) => run(state, v, op, r, &headers, client, arrived).await,
                Err(e) => e.response(),
            }
        },
    )
    .fallback(method_not_allowed)
}

/// Runs one call within its time budget, counted from `arrived`, and
/// answers it: the engine's answer as FHIR JSON, or its error.
async fn run(
    state: Arc<AppState>,
    v: FhirVersion,
    op: Operation,
    call: Request,
    headers: &HeaderMap,
    client: Option<std::net::IpAddr>,
    arrived: Instant,
) -> Response {
    match answer(&state, v, op, call, headers, client, arrived).await {
        Ok(json) => answered(&state, json),
        Err(e) => e.response(),
    }
}

/// A body that was not read, as its 413 or 408 (the connection is closed
/// after it).
pub(crate) fn body_refused(e: &crate::http::BodyError) -> Response {
    let (status, code) = match e {
        crate::http::BodyError::TooLarge { .. } => (StatusCode::PAYLOAD_TOO_LARGE, "too-costly"),
        crate::http::BodyError::TooSlow { .. } => (StatusCode::REQUEST_TIMEOUT, "timeout"),
        crate::http::BodyError::Broken(_) => (StatusCode::BAD_REQUEST, "invalid"),
    };
    let mut r = outcome::response(status, code, &e.to_string());
    r.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    r
}

fn metadata_handler(v: FhirVersion, state: &AppState, request: &HttpRequest) -> Response {
    let params = match format::query_pairs(request.uri()) {
        Ok(p) => p,
        Err(e) => return outcome::response(StatusCode::BAD_REQUEST, "invalid", &e),
    };
    let base = state
        .public
        .fhir_base(v, request.headers(), request.extensions());
    let mode = params
        .iter()
        .find(|(k, _)| k == "mode")
        .map(|(_, m)| m.as_str());
    match mode {
        // `normative` asks for the normative parts only; all of ours are.
        None | Some("full" | "normative") => fhir_json(
            StatusCode::OK,
            &metadata::capability_statement(
                v,
                &base,
                metadata::Offers {
                    writes: state.stored.is_some(),
                    reads_closed: state.auth.reads_closed(),
                },
            ),
        ),
        Some("terminology") => fhir_json(
            StatusCode::OK,
            &metadata::terminology_capabilities(v, &base, &resources::code_systems(state, v)),
        ),
        Some(other) => outcome::response(
            StatusCode::BAD_REQUEST,
            "invalid",
            &format!("metadata mode {other:?} is not one of full, normative or terminology"),
        ),
    }
}
