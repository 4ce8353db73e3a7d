//! FHIR OperationOutcome responses for errors.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An OperationOutcome with one error issue, as `application/fhir+json`.
pub fn response(status: StatusCode, code: &str, diagnostics: &str) -> Response {
    let body = json!({
        "resourceType": "OperationOutcome",
        "issue": [{
            "severity": "error",
            "code": code,
            "diagnostics": diagnostics,
        }],
    });
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/fhir+json"),
        )],
        body.to_string(),
    )
        .into_response()
}

/// The response for an operation the memory guard aborted.
pub fn too_costly(diagnostics: &str) -> Response {
    response(StatusCode::UNPROCESSABLE_ENTITY, "too-costly", diagnostics)
}
