//! Format negotiation. txmap answers FHIR in JSON only: `_format` (which
//! wins over `Accept`, as the FHIR spec says) may be `json`,
//! `application/json` or `application/fhir+json` (an empty one counts as
//! none); `Accept` must allow one of the JSON types, directly or by a
//! wildcard, or be absent. Anything else — XML above all — is refused
//! with 406 and an OperationOutcome (in JSON, the one format there is).
//! One exception: a read or search of a CodeSystem, ValueSet or
//! ConceptMap that asks for HTML (a browser, or `_format=html`) gets the
//! resource's page ([`crate::pages`]).

use axum::extract::Request;
use axum::http::{StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::Response;

use crate::outcome;

/// `_format` values meaning JSON, lower-cased, parameters removed.
const JSON_FORMATS: [&str; 4] = [
    "json",
    "application/fhir+json",
    "application/json",
    // The STU3-era name, still sent by some clients.
    "application/json+fhir",
];

/// The media types we produce, as `Accept` ranges are matched against.
const OFFERED: [&str; 3] = [
    "application/fhir+json",
    "application/json",
    "application/json+fhir",
];

/// The decoded query parameters, in order; an undecodable query is an
/// error message.
pub fn query_pairs(uri: &Uri) -> Result<Vec<(String, String)>, String> {
    axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri)
        .map(|q| q.0)
        .map_err(|e| format!("the query string cannot be read: {e}"))
}

/// Whether a request may be answered in JSON; the error says why not.
pub fn check(format: Option<&str>, accept: Option<&str>) -> Result<(), String> {
    if let Some(f) = format.filter(|f| !f.trim().is_empty()) {
        return if format_is_json(f) {
            Ok(())
        } else {
            Err(format!(
                "_format={f} is not supported: this server answers in JSON only (application/fhir+json)"
            ))
        };
    }
    match accept {
        Some(a) if !accept_allows_json(a) => Err(format!(
            "Accept: {a} allows no format this server produces: it answers in JSON only (application/fhir+json)"
        )),
        _ => Ok(()),
    }
}

/// A `_format` value is JSON. A `+` that arrived unencoded in the query
/// string was decoded as a space, so spaces count as `+`.
fn format_is_json(f: &str) -> bool {
    let base = f.split(';').next().unwrap_or_default().trim();
    let base = base.replace(' ', "+").to_ascii_lowercase();
    JSON_FORMATS.contains(&base.as_str())
}

/// Some JSON type we produce gets a non-zero quality from its most
/// specific matching range (RFC 9110 §12.5.1). No ranges at all means
/// anything goes.
fn accept_allows_json(accept: &str) -> bool {
    let ranges = ranges(accept);
    ranges.is_empty() || OFFERED.iter().any(|offer| quality_of(&ranges, offer) > 0)
}

/// The media ranges of an `Accept` header, lower-cased, with their
/// qualities.
fn ranges(accept: &str) -> Vec<(String, u16)> {
    accept
        .split(',')
        .filter_map(|r| {
            let mut parts = r.split(';');
            let range = parts.next()?.trim().to_ascii_lowercase();
            if range.is_empty() {
                return None;
            }
            Some((range, weight(parts)))
        })
        .collect()
}

/// The quality `ranges` give media type `offer`: that of the most
/// specific range matching it, 0 if none does.
fn quality_of(ranges: &[(String, u16)], offer: &str) -> u16 {
    let main = offer.split('/').next().unwrap_or_default();
    ranges
        .iter()
        .filter_map(|(range, q)| {
            let specificity = if range == offer {
                2
            } else if range.strip_suffix("/*") == Some(main) {
                1
            } else if range == "*/*" {
                0
            } else {
                return None;
            };
            Some((specificity, *q))
        })
        .max()
        .map_or(0, |(_, q)| q)
}

/// A read or search of a resource asked for as a page
/// ([`crate::pages`]): the request extension [`negotiate`] adds.
#[derive(Clone, Copy, Debug)]
pub struct Html;

/// Whether a request asks for HTML: `_format=html` (or `text/html`), or
/// an `Accept` that ranks `text/html` above every JSON type, as a
/// browser's does (`text/html,…,*/*;q=0.8`). `*/*` alone, or no header,
/// is JSON.
pub fn wants_html(format: Option<&str>, accept: Option<&str>) -> bool {
    if let Some(f) = format.filter(|f| !f.trim().is_empty()) {
        let f = f.split(';').next().unwrap_or_default().trim();
        return f.eq_ignore_ascii_case("html") || f.eq_ignore_ascii_case("text/html");
    }
    let Some(accept) = accept else {
        return false;
    };
    let ranges = ranges(accept);
    let html = quality_of(&ranges, "text/html");
    html > 0
        && OFFERED
            .iter()
            .all(|offer| quality_of(&ranges, offer) < html)
}

/// Whether a path (below a FHIR base) reads or searches one of the
/// resource types that have pages: `/ValueSet`, `/CodeSystem/{id}`…, not
/// an operation.
fn has_page(path: &str) -> bool {
    let mut segments = path.trim_start_matches('/').split('/');
    matches!(
        segments.next(),
        Some("CodeSystem" | "ValueSet" | "ConceptMap")
    ) && segments.next().is_none_or(|id| !id.starts_with('$'))
        && segments.next().is_none()
}

/// The quality (`q=`) among the parameters after a media range or a
/// language tag, in thousandths; none means 1.
pub(super) fn weight<'a>(params: impl Iterator<Item = &'a str>) -> u16 {
    params
        .filter_map(|p| p.trim().split_once('='))
        .find(|(k, _)| k.trim().eq_ignore_ascii_case("q"))
        .map_or(1000, |(_, v)| quality(v.trim()))
}

/// A quality value in thousandths; an unreadable one counts as 1.
fn quality(v: &str) -> u16 {
    match v.parse::<f32>() {
        Ok(q) if (0.0..=1.0).contains(&q) => (q * 1000.0).round() as u16,
        _ => 1000,
    }
}

/// Middleware: 406 with an OperationOutcome unless the request can be
/// answered in JSON — or is a read or search that asks for a page
/// ([`wants_html`]: marked [`Html`] for the handler); 400 if the query
/// string cannot be decoded.
pub async fn negotiate(request: Request, next: Next) -> Response {
    let params = match query_pairs(request.uri()) {
        Ok(p) => p,
        Err(e) => return outcome::response(StatusCode::BAD_REQUEST, "invalid", &e),
    };
    let format = params
        .iter()
        .find(|(k, _)| k == "_format")
        .map(|(_, v)| v.as_str());
    let accept: Vec<&str> = request
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .collect();
    let accept = (!accept.is_empty()).then(|| accept.join(","));
    if has_page(request.uri().path()) && wants_html(format, accept.as_deref()) {
        let mut request = request;
        request.extensions_mut().insert(Html);
        return next.run(request).await;
    }
    match check(format, accept.as_deref()) {
        Ok(()) => next.run(request).await,
        Err(why) => outcome::response(StatusCode::NOT_ACCEPTABLE, "not-supported", &why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_parameter_wins_and_means_json_or_nothing() {
        for f in [
            "json",
            "JSON",
            "application/fhir+json",
            "application/fhir json",
            "application/json",
            "application/fhir+json;fhirVersion=4.0",
            "application/json+fhir",
        ] {
            assert!(check(Some(f), Some("application/fhir+xml")).is_ok(), "{f}");
        }
        for f in [
            "xml",
            "application/fhir+xml",
            "text/xml",
            "application/xml",
            "ttl",
            "html",
        ] {
            let e = check(Some(f), None).unwrap_err();
            assert!(e.contains("JSON only"), "{e}");
        }
    }

    #[test]
    fn accept_must_allow_json() {
        for a in [
            "application/fhir+json",
            "application/json, application/fhir+json",
            "*/*",
            "application/*",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
            "application/fhir+xml, application/fhir+json;q=0.1",
            "",
            " , ",
        ] {
            assert!(check(None, Some(a)).is_ok(), "{a}");
        }
        assert!(check(None, None).is_ok());
        assert!(check(Some(" "), None).is_ok());
        for a in [
            "application/fhir+xml",
            "application/xml, text/xml",
            "text/html",
            "application/fhir+json;q=0, application/json;q=0",
            "*/*;q=0",
        ] {
            assert!(check(None, Some(a)).is_err(), "{a}");
        }
        assert!(!wants_html(None, Some("*/*")));
        assert!(!wants_html(None, None));
        assert!(!wants_html(None, Some("application/fhir+json, text/html")));
        assert!(wants_html(
            None,
            Some("text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
        ));
        assert!(wants_html(Some("html"), Some("application/fhir+json")));
        assert!(!wants_html(Some("json"), Some("text/html")));
        assert!(has_page("/ValueSet") && has_page("/CodeSystem/sct-1-2"));
        assert!(!has_page("/ValueSet/$expand") && !has_page("/metadata"));
        // The most specific range decides.
        assert!(
            check(
                None,
                Some("application/fhir+json;q=0, application/json;q=0, application/json+fhir;q=0, */*")
            )
            .is_err()
        );
    }
}
