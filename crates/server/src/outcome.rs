//! FHIR OperationOutcome responses for errors: one issue, written by the
//! terminology engine's writer ([`txmap_terminology::error::outcome`]), so
//! every OperationOutcome the server sends has one shape.

use axum::http::StatusCode;
use axum::response::Response;
use txmap_terminology::Issue;

use crate::fhir;

/// The error issue of `code` saying `text`.
pub fn error_issue(code: &'static str, text: impl Into<String>) -> Issue {
    Issue {
        severity: "error",
        code,
        tx_type: "",
        message_id: None,
        text: text.into(),
        expression: None,
    }
}

/// An OperationOutcome of one issue, as `application/fhir+json`
/// ([`fhir::FHIR_JSON`]).
pub fn issue_response(status: StatusCode, issue: Issue) -> Response {
    fhir::fhir_json(status, &txmap_terminology::error::outcome(&[issue]))
}

/// An OperationOutcome with one error issue.
pub fn response(status: StatusCode, code: &'static str, text: &str) -> Response {
    issue_response(status, error_issue(code, text))
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
