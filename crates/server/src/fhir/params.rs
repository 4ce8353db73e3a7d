//! Operation input as transport reads it: the parameters of a GET query
//! string or of a POSTed FHIR `Parameters` resource (or form body) become
//! the engine's one [`Request`], with what the headers and limits add; and
//! the engine's [`Error`] as a response.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use std::time::Instant;

use crate::state::Limits;

pub use txmap_terminology::Request;

/// An operation's failure is the engine's [`Error`]: one type of reasons,
/// with their HTTP status and OperationOutcome, whoever answers.
pub use txmap_terminology::Error;

/// An error as the response to send.
pub trait Respond {
    fn response(&self) -> Response;
}

impl Respond for Error {
    fn response(&self) -> Response {
        let status = StatusCode::from_u16(self.status()).unwrap_or(StatusCode::BAD_REQUEST);
        // A 503 is the server working as meant (an edition not yet in
        // service, said once in the log when it changes), not a failure.
        if status.is_server_error() && status != StatusCode::SERVICE_UNAVAILABLE {
            tracing::error!("{self}");
        }
        let mut r = crate::outcome::issue_response(status, self.issue());
        if status == StatusCode::SERVICE_UNAVAILABLE {
            r.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(crate::state::RETRY_AFTER_SECONDS),
            );
        }
        r
    }
}

/// The request header that overrides the expansion size limit, as the
/// HL7 suite sends it.
pub const THRESHOLD_HEADER: &str = "x-too-costly-threshold";

/// A request from its query string (GET): every value is text.
pub fn from_query(uri: &axum::http::Uri) -> Result<Request, Error> {
    super::format::query_pairs(uri)
        .map(Request::from_pairs)
        .map_err(Error::invalid)
}

/// A request from a POST body: a FHIR `Parameters` resource in JSON, or a
/// form when the content type says so.
pub fn from_body(headers: &HeaderMap, body: &[u8]) -> Result<Request, Error> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|h| h.to_str().ok())
        .map(|c| {
            c.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    match content_type.as_str() {
        "application/x-www-form-urlencoded" => {
            let text = std::str::from_utf8(body)
                .map_err(|_| Error::invalid("the form body is not UTF-8"))?;
            let uri: axum::http::Uri = format!("/?{text}")
                .parse()
                .map_err(|_| Error::invalid("the form body cannot be read"))?;
            from_query(&uri)
        }
        "" | "application/fhir+json" | "application/json" | "application/json+fhir" => {
            let v: Value = serde_json::from_slice(body).map_err(|e| {
                Error::invalid(format!("the body is not a JSON Parameters resource: {e}"))
            })?;
            Request::from_parameters(v)
        }
        other => Err(Error::UnsupportedMediaType(format!(
            "Content-Type {other} is not supported: POST a Parameters resource as application/fhir+json"
        ))),
    }
}

/// What the headers and the configured limits add to a request: its
/// `Accept-Language`, its expansion limit ([`expansion_limit`]) and its
/// deadline, `request_seconds` after it `arrived`.
pub fn limit(request: &mut Request, headers: &HeaderMap, limits: &Limits, arrived: Instant) {
    let header_text = |name: &str| headers.get(name).and_then(|h| h.to_str().ok());
    request.accept_language = header_text(header::ACCEPT_LANGUAGE.as_str())
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned);
    request.max_expansion = expansion_limit(header_text(THRESHOLD_HEADER), limits);
    request.deadline = Some(arrived + limits.request);
}

/// The most codes an expansion may return: the configured
/// `max_expansion`, lowered (never raised) by an `X-TOO-COSTLY-THRESHOLD`
/// header, so no client can lift the operator's limit.
pub fn expansion_limit(header: Option<&str>, limits: &Limits) -> usize {
    header
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(limits.max_expansion, |n| n.min(limits.max_expansion))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_is_text_parameters_and_limits_come_from_headers() {
        let uri: axum::http::Uri = "/x?system=http://s&code=a&count=2".parse().unwrap();
        let mut r = from_query(&uri).unwrap();
        assert_eq!(r.params.text("code").unwrap(), Some("a"));
        assert_eq!(r.number("count").unwrap(), Some(2));
        let mut headers = HeaderMap::new();
        headers.insert(THRESHOLD_HEADER, "5".parse().unwrap());
        headers.insert(header::ACCEPT_LANGUAGE, "de".parse().unwrap());
        let limits = Limits::default();
        let arrived = Instant::now();
        limit(&mut r, &headers, &limits, arrived);
        assert_eq!(r.max_expansion, 5);
        assert_eq!(r.display_language_param().unwrap(), Some("de"));
        // The budget runs from the request's arrival.
        assert_eq!(r.deadline, Some(arrived + limits.request));
        let mut json = HeaderMap::new();
        json.insert(header::CONTENT_TYPE, "text/plain".parse().unwrap());
        assert_eq!(from_body(&json, b"x").unwrap_err().status(), 415);
        json.insert(
            header::CONTENT_TYPE,
            "application/fhir+json".parse().unwrap(),
        );
        assert!(from_body(&json, br#"{"resourceType":"Bundle"}"#).is_err());
    }
}
