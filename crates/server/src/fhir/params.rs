//! Operation input: the parameters of a GET query string or of a POSTed
//! FHIR `Parameters` resource (or form body), in one shape, and the
//! errors operations answer with.

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::Response;
use serde_json::Value;

use std::time::Instant;

use crate::app::Limits;

/// A Coding given as a parameter value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coding {
    pub system: Option<String>,
    pub version: Option<String>,
    pub code: Option<String>,
    pub display: Option<String>,
}

/// A code named by separate `system`, `version` and `code` parameters, by a
/// Coding, or by both (which must then agree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Coded<'a> {
    pub system: Option<&'a str>,
    pub version: Option<&'a str>,
    pub code: Option<&'a str>,
}

/// Both given and different is an error; otherwise whichever is given.
pub fn merge<'a>(
    what: &str,
    a: Option<&'a str>,
    b: Option<&'a str>,
) -> Result<Option<&'a str>, Error> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Err(Error::invalid(format!(
            "the {what} is given twice, differently: {x:?} and {y:?}"
        ))),
        (Some(x), _) | (None, Some(x)) => Ok(Some(x)),
        (None, None) => Ok(None),
    }
}

/// One parameter's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParamValue {
    /// Any primitive (`valueCode`, `valueUri`, `valueBoolean`...), as text.
    Text(String),
    Coding(Coding),
    /// A `valueCodeableConcept`: its codings, in order.
    CodeableConcept(Vec<Coding>),
    /// A parameter's `resource` (e.g. `valueSet`, `tx-resource`).
    Resource(Value),
}

/// The parameters of one request, in order; repeats kept. Parameters with
/// parts and complex values other than Coding and CodeableConcept are not
/// kept; a `resource` is kept as JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params(pub Vec<(String, ParamValue)>);

/// An operation's failure is the engine's [`Error`]: one type of reasons,
/// with their HTTP status and OperationOutcome, for both engines.
pub use txmap_terminology::Error;

/// An error as the response to send.
pub trait Respond {
    fn response(&self) -> Response;
}

impl Respond for Error {
    fn response(&self) -> Response {
        crate::outcome::issue_response(
            StatusCode::from_u16(self.status()).unwrap_or(StatusCode::BAD_REQUEST),
            self.issue(),
        )
    }
}

/// `?` for the store's results in handlers: a store error is a 500 that
/// names the cause, and is logged.
pub trait Stored<T> {
    fn stored(self) -> Result<T, Error>;
}

impl<T> Stored<T> for Result<T, txmap_store::StoreError> {
    fn stored(self) -> Result<T, Error> {
        self.map_err(store_error)
    }
}

/// A store error as the 500 it answers, logged.
pub fn store_error(e: txmap_store::StoreError) -> Error {
    tracing::error!("store: {e}");
    Error::Store(format!("the edition could not be read: {e}"))
}

/// The request header that overrides the expansion size limit, as the
/// HL7 suite sends it.
pub const THRESHOLD_HEADER: &str = "x-too-costly-threshold";

/// One operation call: its parameters and what its headers add.
#[derive(Clone, Debug)]
pub struct Call {
    pub params: Params,
    /// `Accept-Language`, which `displayLanguage` overrides.
    pub accept_language: Option<String>,
    /// The most codes an expansion may return ([`expansion_limit`]).
    pub max_expansion: usize,
    /// When the request's time budget runs out.
    pub deadline: Instant,
}

impl Call {
    pub fn new(params: Params, headers: &HeaderMap, limits: &Limits) -> Call {
        let header_text = |name: &str| headers.get(name).and_then(|h| h.to_str().ok());
        Call {
            params,
            accept_language: header_text(header::ACCEPT_LANGUAGE.as_str())
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(str::to_owned),
            max_expansion: expansion_limit(header_text(THRESHOLD_HEADER), limits),
            deadline: Instant::now() + limits.request,
        }
    }

    /// The languages displays are asked in: `displayLanguage`, else
    /// `Accept-Language`.
    pub fn display_language(&self) -> Result<Option<&str>, Error> {
        Ok(self
            .params
            .text("displayLanguage")?
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .or(self.accept_language.as_deref()))
    }

    /// An error once the time budget has run out.
    pub fn check_deadline(&self) -> Result<(), Error> {
        check_deadline(self.deadline)
    }
}

/// The most codes an expansion may return: the configured
/// `max_expansion`, lowered (never raised) by an `X-TOO-COSTLY-THRESHOLD`
/// header, so no client can lift the operator's limit.
pub fn expansion_limit(header: Option<&str>, limits: &Limits) -> usize {
    header
        .and_then(|s| s.trim().parse::<usize>().ok())
        .map_or(limits.max_expansion, |n| n.min(limits.max_expansion))
}

/// An error once `deadline` has passed.
pub fn check_deadline(deadline: Instant) -> Result<(), Error> {
    if Instant::now() >= deadline {
        Err(Error::OutOfTime)
    } else {
        Ok(())
    }
}

impl Params {
    /// From decoded query pairs (all values are text).
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Params {
        Params(
            pairs
                .into_iter()
                .map(|(k, v)| (k, ParamValue::Text(v)))
                .collect(),
        )
    }

    /// From the request's query string.
    pub fn from_query(uri: &axum::http::Uri) -> Result<Params, Error> {
        super::format::query_pairs(uri)
            .map(Params::from_pairs)
            .map_err(Error::invalid)
    }

    /// From a POST body: a FHIR `Parameters` resource in JSON, or a form
    /// when the content type says so.
    pub fn from_body(headers: &HeaderMap, body: &[u8]) -> Result<Params, Error> {
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
                super::format::query_pairs(&uri)
                    .map(Params::from_pairs)
                    .map_err(Error::invalid)
            }
            "" | "application/fhir+json" | "application/json" | "application/json+fhir" => {
                let v: Value = serde_json::from_slice(body).map_err(|e| {
                    Error::invalid(format!("the body is not a JSON Parameters resource: {e}"))
                })?;
                Params::from_parameters(&v)
            }
            other => Err(Error::UnsupportedMediaType(format!(
                "Content-Type {other} is not supported: POST a Parameters resource as application/fhir+json"
            ))),
        }
    }

    /// From a `Parameters` resource.
    pub fn from_parameters(v: &Value) -> Result<Params, Error> {
        if v.get("resourceType").and_then(Value::as_str) != Some("Parameters") {
            return Err(Error::invalid(
                "the body must be a FHIR Parameters resource",
            ));
        }
        let mut out = Vec::new();
        let list = match v.get("parameter") {
            None => return Ok(Params(out)),
            Some(Value::Array(a)) => a,
            Some(_) => return Err(Error::invalid("Parameters.parameter must be an array")),
        };
        for p in list {
            let Some(name) = p.get("name").and_then(Value::as_str) else {
                return Err(Error::invalid("a parameter has no name"));
            };
            let Value::Object(map) = p else { continue };
            let value = map
                .iter()
                .find(|(k, _)| k.starts_with("value") && k.len() > 5)
                .map(|(k, v)| (k.as_str(), v));
            let value = match value {
                Some(("valueCoding", c)) => Some(ParamValue::Coding(coding(c))),
                Some(("valueCodeableConcept", c)) => Some(ParamValue::CodeableConcept(
                    c.get("coding")
                        .and_then(Value::as_array)
                        .map(|a| a.iter().map(coding).collect())
                        .unwrap_or_default(),
                )),
                Some((_, Value::String(s))) => Some(ParamValue::Text(s.clone())),
                Some((_, Value::Bool(b))) => Some(ParamValue::Text(b.to_string())),
                Some((_, Value::Number(n))) => Some(ParamValue::Text(n.to_string())),
                _ => map.get("resource").cloned().map(ParamValue::Resource),
            };
            if let Some(value) = value {
                out.push((name.to_owned(), value));
            }
        }
        Ok(Params(out))
    }

    fn values<'a>(&'a self, name: &str) -> impl Iterator<Item = &'a ParamValue> + use<'a> {
        let name = name.to_owned();
        self.0
            .iter()
            .filter(move |(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// A single-valued text parameter; given twice with different values
    /// or as a Coding, it is an error.
    pub fn text(&self, name: &str) -> Result<Option<&str>, Error> {
        let mut found: Option<&str> = None;
        for v in self.values(name) {
            let t = match v {
                ParamValue::Text(t) => t,
                ParamValue::Resource(_) => continue,
                _ => {
                    return Err(Error::invalid(format!(
                        "the parameter {name:?} must be a primitive value"
                    )));
                }
            };
            match found {
                Some(f) if f != t => {
                    return Err(Error::invalid(format!(
                        "the parameter {name:?} is given more than once"
                    )));
                }
                _ => found = Some(t),
            }
        }
        Ok(found)
    }

    /// A single-valued Coding parameter.
    /// The code the request names, from the `system`, `version` and `code`
    /// parameters and `coding`, each field merged by [`merge`].
    pub fn coded<'a>(&'a self, coding: Option<&'a Coding>) -> Result<Coded<'a>, Error> {
        let field = |name: &str, of: fn(&Coding) -> &Option<String>| {
            merge(
                name,
                self.text(name)?,
                coding.and_then(|c| of(c).as_deref()),
            )
        };
        Ok(Coded {
            system: field("system", |c| &c.system)?,
            version: field("version", |c| &c.version)?,
            code: field("code", |c| &c.code)?,
        })
    }

    pub fn coding(&self, name: &str) -> Result<Option<&Coding>, Error> {
        let mut found: Option<&Coding> = None;
        for v in self.values(name) {
            let ParamValue::Coding(c) = v else {
                return Err(Error::invalid(format!(
                    "the parameter {name:?} must be a Coding"
                )));
            };
            if found.is_some_and(|f| f != c) {
                return Err(Error::invalid(format!(
                    "the parameter {name:?} is given more than once"
                )));
            }
            found = Some(c);
        }
        Ok(found)
    }

    /// Every text value of a repeatable parameter.
    pub fn all_text(&self, name: &str) -> Vec<&str> {
        self.values(name)
            .filter_map(|v| match v {
                ParamValue::Text(t) => Some(t.as_str()),
                _ => None,
            })
            .collect()
    }

    /// A single-valued CodeableConcept parameter's codings.
    pub fn codeable_concept(&self, name: &str) -> Result<Option<&[Coding]>, Error> {
        let mut found: Option<&[Coding]> = None;
        for v in self.values(name) {
            let ParamValue::CodeableConcept(c) = v else {
                return Err(Error::invalid(format!(
                    "the parameter {name:?} must be a CodeableConcept"
                )));
            };
            if found.is_some_and(|f| f != c.as_slice()) {
                return Err(Error::invalid(format!(
                    "the parameter {name:?} is given more than once"
                )));
            }
            found = Some(c);
        }
        Ok(found)
    }

    /// Every resource given in parameters named `name`.
    pub fn resources(&self, name: &str) -> Vec<&Value> {
        self.values(name)
            .filter_map(|v| match v {
                ParamValue::Resource(r) => Some(r),
                _ => None,
            })
            .collect()
    }
}

fn coding(v: &Value) -> Coding {
    let get = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    Coding {
        system: get("system"),
        version: get("version"),
        code: get("code"),
        display: get("display"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parameters_keep_primitives_and_codings_and_skip_the_rest() {
        let p = Params::from_parameters(&json!({
            "resourceType": "Parameters",
            "parameter": [
                {"name": "system", "valueUri": "http://snomed.info/sct"},
                {"name": "code", "valueCode": "123"},
                {"name": "property", "valueCode": "parent"},
                {"name": "property", "valueString": "child"},
                {"name": "flag", "valueBoolean": true},
                {"name": "coding", "valueCoding": {"system": "s", "code": "c"}},
                {"name": "tx-resource", "resource": {"resourceType": "CodeSystem"}},
            ],
        }))
        .unwrap();
        assert_eq!(p.text("code").unwrap(), Some("123"));
        assert_eq!(p.text("flag").unwrap(), Some("true"));
        assert_eq!(p.all_text("property"), ["parent", "child"]);
        assert_eq!(
            p.coding("coding").unwrap().unwrap().code.as_deref(),
            Some("c")
        );
        assert!(p.text("coding").is_err());
        assert_eq!(p.text("tx-resource").unwrap(), None);
        assert!(Params::from_parameters(&json!({"resourceType": "Bundle"})).is_err());
    }

    #[test]
    fn a_repeated_single_parameter_must_agree() {
        let p = Params::from_pairs(vec![
            ("code".into(), "1".into()),
            ("code".into(), "1".into()),
            ("version".into(), "a".into()),
            ("version".into(), "b".into()),
        ]);
        assert_eq!(p.text("code").unwrap(), Some("1"));
        assert!(p.text("version").is_err());
    }
}
