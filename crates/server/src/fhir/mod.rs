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

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::middleware;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::Value;

use txmap_terminology::ResourceSource;
use txmap_terminology::operation::{self, Answer, Fhir, Operation};

use self::params::{Error, Request, Respond};

use crate::app::AppState;
use crate::outcome;
use crate::public::Connection;

/// The content type of every FHIR response. The HL7 runner cuts the
/// parameters off at the first `;` and matches the rest exactly.
pub const FHIR_JSON: &str = "application/fhir+json; charset=utf-8";

/// The FHIR versions served, each at its own base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FhirVersion {
    R4,
    R5,
}

impl FhirVersion {
    pub const ALL: [FhirVersion; 2] = [FhirVersion::R4, FhirVersion::R5];

    /// `CapabilityStatement.fhirVersion`: `4.0.1` or `5.0.0`.
    pub fn full(self) -> &'static str {
        match self {
            FhirVersion::R4 => "4.0.1",
            FhirVersion::R5 => "5.0.0",
        }
    }

    /// The major.minor form `$versions` uses: `4.0` or `5.0`.
    pub fn short(self) -> &'static str {
        match self {
            FhirVersion::R4 => "4.0",
            FhirVersion::R5 => "5.0",
        }
    }

    /// Where this version is served: `/r4` or `/r5`.
    pub fn path(self) -> &'static str {
        match self {
            FhirVersion::R4 => "/r4",
            FhirVersion::R5 => "/r5",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            FhirVersion::R4 => "R4",
            FhirVersion::R5 => "R5",
        }
    }
}

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
        .route_layer(middleware::from_fn(format::negotiate))
}

/// How long past its budget a handler may run before it is abandoned: the
/// long loops check the deadline themselves and answer first.
const GRACE: Duration = Duration::from_millis(250);

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
            let _reserved = match crate::app::reserve_for_body(&state, body.len()) {
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

/// One call's answer as JSON text, within its time budget counted from
/// `arrived`: the engine plans it, [`work`] runs it where its cost says.
/// The operations' routes and the pages ([`crate::pages`]) both ask here,
/// so a page shows what the FHIR request answers.
pub(crate) async fn answer(
    state: &Arc<AppState>,
    v: FhirVersion,
    op: Operation,
    mut call: Request,
    headers: &HeaderMap,
    client: Option<std::net::IpAddr>,
    arrived: Instant,
) -> Result<String, Error> {
    let budget = state.limits.request;
    params::limit(&mut call, headers, &state.limits, arrived);
    let watch = Arc::new(work::GuardWatch::new(Arc::clone(state)));
    let _cancel = work::CancelOnDrop(Arc::clone(&watch));
    call.watch = Some(watch);
    let source: Arc<dyn ResourceSource> = state.packages.source(v);
    let plan = operation::plan(op, &call, &*source);
    let fhir = match v {
        FhirVersion::R4 => Fhir::R4,
        FhirVersion::R5 => Fhir::R5,
    };
    // The answer is written as text where it was made (on the heavy
    // lane for heavy work), not on the async worker.
    let answer = work::run(Arc::clone(state), plan.cost, client, move || {
        operation::answer(plan, call, source, fhir).map(|a| match a {
            Answer::Text(json) => json,
            Answer::Parameters(p) => p.to_json(),
            Answer::Resource(r) => to_fhir_json(&r),
        })
    });
    let give_up = tokio::time::Instant::from_std(arrived + budget + GRACE);
    match tokio::time::timeout_at(give_up, answer).await {
        Ok(Ok(json)) => Ok(json),
        Ok(Err(e)) => {
            if matches!(e, Error::Store(_)) {
                state
                    .store_errors
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Err(e)
        }
        Err(_) => Err(out_of_budget("operation", budget)),
    }
}

/// The 422 of work (`what`) abandoned when its time budget ran out.
pub(super) fn budget_spent(what: &str, budget: Duration) -> Response {
    out_of_budget(what, budget).response()
}

/// Why work (`what`) was abandoned when its time budget ran out.
pub(crate) fn out_of_budget(what: &str, budget: Duration) -> Error {
    Error::too_costly(format!(
        "the {what} did not finish within its time budget of {:.1} s",
        budget.as_secs_f64()
    ))
}

/// An answer as a response: one larger than `max_answer_bytes` is a 422
/// (dropped, not sent), and what it takes counts with the memory guard's
/// reservations until it is sent, so answers being sent together are
/// judged together; one the guard has no room for is a 503.
pub(super) fn answered(state: &AppState, json: String) -> Response {
    let limit = state.limits.max_answer;
    if json.len() > limit {
        return Error::too_costly(format!(
            "the answer would be {} bytes, more than this server sends ({limit} bytes, [limits] max_answer_bytes): ask for less (count, a filter, fewer codings)",
            json.len()
        ))
        .response();
    }
    if json.len() < crate::app::RESERVE_FROM {
        return fhir_json_text(StatusCode::OK, json);
    }
    match state.guard.reserve(json.len() as u64) {
        Ok(reservation) => {
            let mut r = fhir_json_text(StatusCode::OK, json);
            let body = std::mem::take(r.body_mut());
            *r.body_mut() = Body::new(crate::http::Holding::new(body, reservation));
            r
        }
        Err(_) => crate::app::NoRoom {
            len: json.len(),
            need: json.len() as u64,
        }
        .response(),
    }
}

/// A body that was not read, as its 413 or 408 (the connection is closed
/// after it).
fn body_refused(e: &crate::http::BodyError) -> Response {
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
    let base = base_url(v, state, request.headers(), request.extensions());
    let mode = params
        .iter()
        .find(|(k, _)| k == "mode")
        .map(|(_, m)| m.as_str());
    match mode {
        // `normative` asks for the normative parts only; all of ours are.
        None | Some("full" | "normative") => {
            fhir_json(StatusCode::OK, &metadata::capability_statement(v, &base))
        }
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

pub(crate) async fn method_not_allowed(request: HttpRequest) -> Response {
    outcome::response(
        StatusCode::METHOD_NOT_ALLOWED,
        "not-supported",
        &format!(
            "{} is not supported on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// The base URL of endpoint `v` for this request's links, e.g.
/// `https://tx.example.org/r4`: as [`crate::public`] decides, never from a
/// stranger's `Host`.
pub fn base_url(
    v: FhirVersion,
    state: &AppState,
    headers: &HeaderMap,
    request: &axum::http::Extensions,
) -> String {
    let conn = request.get::<crate::public::Connection>();
    format!("{}{}", state.public.base_url(headers, conn), v.path())
}

/// A FHIR resource as `application/fhir+json`, `resourceType` first.
pub fn fhir_json(status: StatusCode, resource: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static(FHIR_JSON))],
        to_fhir_json(resource),
    )
        .into_response()
}

/// A resource already written as JSON text.
pub fn fhir_json_text(status: StatusCode, json: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, HeaderValue::from_static(FHIR_JSON))],
        json,
    )
        .into_response()
}

/// Serialises a resource with `resourceType` as its first property, as
/// FHIR JSON is conventionally written (serde_json sorts object keys).
pub fn to_fhir_json(resource: &Value) -> String {
    let Value::Object(map) = resource else {
        return resource.to_string();
    };
    let Some(rt) = map.get("resourceType") else {
        return resource.to_string();
    };
    let mut out = String::with_capacity(256);
    out.push_str("{\"resourceType\":");
    out.push_str(&rt.to_string());
    for (k, v) in map.iter().filter(|(k, _)| *k != "resourceType") {
        out.push(',');
        out.push_str(&Value::String(k.clone()).to_string());
        out.push(':');
        out.push_str(&v.to_string());
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resource_type_comes_first_and_the_json_is_the_same() {
        let v = json!({"issue": [{"code": "x"}], "resourceType": "OperationOutcome", "a\"b": 1});
        let s = to_fhir_json(&v);
        assert!(
            s.starts_with("{\"resourceType\":\"OperationOutcome\","),
            "{s}"
        );
        assert_eq!(serde_json::from_str::<Value>(&s).unwrap(), v);
        assert_eq!(to_fhir_json(&json!([1])), "[1]");
    }
}
