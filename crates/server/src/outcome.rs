//! FHIR JSON responses: a resource as `application/fhir+json`
//! (`resourceType` first), and the OperationOutcome of an error — one
//! issue, written by the terminology engine's writer
//! ([`txmap_terminology::error::outcome`]), so every OperationOutcome the
//! server sends has one shape.

use axum::extract::Request as HttpRequest;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use txmap_terminology::Issue;

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
/// ([`FHIR_JSON`]).
pub fn issue_response(status: StatusCode, issue: Issue) -> Response {
    fhir_json(status, &txmap_terminology::error::outcome(&[issue]))
}

/// An OperationOutcome with one error issue.
pub fn response(status: StatusCode, code: &'static str, text: &str) -> Response {
    issue_response(status, error_issue(code, text))
}

/// The response for an operation the memory guard aborted.
pub fn too_costly(diagnostics: &str) -> Response {
    response(StatusCode::UNPROCESSABLE_ENTITY, "too-costly", diagnostics)
}

/// The content type of every FHIR response. The HL7 runner cuts the
/// parameters off at the first `;` and matches the rest exactly.
pub const FHIR_JSON: &str = "application/fhir+json; charset=utf-8";

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

/// 405 with an OperationOutcome, for a method a route does not take.
pub(crate) async fn method_not_allowed(request: HttpRequest) -> Response {
    response(
        StatusCode::METHOD_NOT_ALLOWED,
        "not-supported",
        &format!(
            "{} is not supported on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// The weak ETag of version `version` of a stored resource: `W/"n"`.
pub fn etag(version: u64) -> HeaderValue {
    HeaderValue::from_str(&format!("W/\"{version}\""))
        .unwrap_or(HeaderValue::from_static("W/\"0\""))
}

/// The ETag of a resource that has a `meta.versionId` (a stored one).
pub fn etag_of(resource: &Value) -> Option<HeaderValue> {
    let v = resource
        .pointer("/meta/versionId")?
        .as_str()?
        .parse()
        .ok()?;
    Some(etag(v))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
