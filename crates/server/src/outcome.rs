//! FHIR OperationOutcome responses for errors.

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::json;

use crate::fhir;

/// An OperationOutcome with one error issue, as `application/fhir+json`
/// ([`fhir::FHIR_JSON`]).
pub fn response(status: StatusCode, code: &str, diagnostics: &str) -> Response {
    let body = json!({
        "resourceType": "OperationOutcome",
        "issue": [{
            "severity": "error",
            "code": code,
            "diagnostics": diagnostics,
        }],
    });
    fhir::fhir_json(status, &body)
}

/// The response for an operation the memory guard aborted.
pub fn too_costly(diagnostics: &str) -> Response {
    response(StatusCode::UNPROCESSABLE_ENTITY, "too-costly", diagnostics)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header;

    #[tokio::test]
    async fn too_costly_is_422_with_its_issue_code() {
        let r = too_costly("expansion aborted: memory");
        assert_eq!(r.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            r.headers()[header::CONTENT_TYPE],
            "application/fhir+json; charset=utf-8"
        );
        let body = axum::body::to_bytes(r.into_body(), 1 << 16).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["resourceType"], "OperationOutcome");
        assert_eq!(v["issue"][0]["code"], "too-costly");
        assert_eq!(v["issue"][0]["severity"], "error");
    }
}
