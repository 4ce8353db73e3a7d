//! A request's parameters as typed values: the view the operations read
//! single-valued parameters through, strictly — a parameter given twice
//! with different values, or a Coding and a separate `code` that
//! disagree, is an error rather than a guess. [`crate::Request`] holds it
//! beside the Parameters resource it came from (kept as JSON for the
//! operations that echo parameters as given).

use std::sync::Arc;

use serde_json::{Value, json};

use crate::error::Error;
pub use crate::request::Coding;

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
    /// A parameter's `resource` (e.g. `valueSet`, `tx-resource`), shared:
    /// a request holds each resource once, however many views it has.
    Resource(Arc<Value>),
}

/// The parameters every operation reads as integers: sent as a FHIR
/// Parameters resource they must be `valueInteger` (or an unsigned or
/// positive one); in a query string, digits.
pub const INTEGERS: [&str; 3] = ["count", "offset", "limit"];

/// The parameters every operation reads as booleans: `valueBoolean`, or
/// `true`/`false` in a query string.
pub const BOOLEANS: [&str; 8] = [
    "activeOnly",
    "includeDesignations",
    "excludeNested",
    "includeDefinition",
    "abstract",
    "lenient-display-validation",
    "valueset-membership-only",
    "inferSystem",
];

/// The type a parameter of every operation is read as, if it has one:
/// `valueInteger` ([`INTEGERS`]) or `valueBoolean` ([`BOOLEANS`]).
fn declared(name: &str) -> Option<&'static str> {
    if INTEGERS.contains(&name) {
        Some("valueInteger")
    } else if BOOLEANS.contains(&name) {
        Some("valueBoolean")
    } else {
        None
    }
}

/// The parameters of one request, in order; repeats kept. Parameters with
/// parts and complex values other than Coding and CodeableConcept are not
/// kept; a `resource` is kept as JSON.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params(pub Vec<(String, ParamValue)>);

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

    /// As a `Parameters` resource: text as `valueString`.
    pub fn to_parameters(&self) -> Value {
        let coding = |c: &Coding| {
            let mut m = serde_json::Map::new();
            for (k, v) in [
                ("system", &c.system),
                ("version", &c.version),
                ("code", &c.code),
                ("display", &c.display),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), Value::String(v.clone()));
                }
            }
            Value::Object(m)
        };
        let list: Vec<Value> = self
            .0
            .iter()
            .map(|(name, v)| match v {
                ParamValue::Text(t) => json!({"name": name, "valueString": t}),
                ParamValue::Coding(c) => json!({"name": name, "valueCoding": coding(c)}),
                ParamValue::CodeableConcept(cs) => json!({
                    "name": name,
                    "valueCodeableConcept": {"coding": cs.iter().map(coding).collect::<Vec<_>>()},
                }),
                ParamValue::Resource(r) => json!({"name": name, "resource": (**r).clone()}),
            })
            .collect();
        json!({"resourceType": "Parameters", "parameter": list})
    }

    /// From a `Parameters` resource.
    pub fn from_parameters(v: &Value) -> Result<Params, Error> {
        Params::take_from(&mut v.clone())
    }

    /// From a `Parameters` resource, moving its parameters' resources
    /// out of it (each is left `null`): a request's resources, which may
    /// be megabytes of JSON, are then held once.
    pub fn take_from(v: &mut Value) -> Result<Params, Error> {
        if v.get("resourceType").and_then(Value::as_str) != Some("Parameters") {
            return Err(Error::invalid(
                "the body must be a FHIR Parameters resource",
            ));
        }
        let mut out = Vec::new();
        let list = match v.get_mut("parameter") {
            None => return Ok(Params(out)),
            Some(Value::Array(a)) => a,
            Some(_) => return Err(Error::invalid("Parameters.parameter must be an array")),
        };
        for p in list {
            let Some(name) = p.get("name").and_then(Value::as_str).map(str::to_owned) else {
                return Err(Error::invalid("a parameter has no name"));
            };
            let Value::Object(map) = p else { continue };
            let value = map
                .iter()
                .find(|(k, _)| k.starts_with("value") && k.len() > 5)
                .map(|(k, v)| (k.as_str(), v));
            // One rule for every operation: a parameter of a declared type
            // sent as another (`count` as "3", null, [1, 2] or 2.5) is
            // refused, not read as whatever it can be read as.
            if let Some(want) = declared(&name) {
                let ok = match (want, value) {
                    ("valueInteger", Some((key, v))) => {
                        matches!(
                            key,
                            "valueInteger"
                                | "valueUnsignedInt"
                                | "valuePositiveInt"
                                | "valueInteger64"
                        ) && v.is_u64()
                    }
                    // The HL7 suite sends `"valueBoolean": "true"`, and
                    // tx.fhir.org reads it: so does this.
                    (_, Some(("valueBoolean", Value::String(t)))) => t == "true" || t == "false",
                    (_, Some(("valueBoolean", v))) => v.is_boolean(),
                    _ => false,
                };
                if !ok {
                    let sent = value.map_or("no value".to_owned(), |(k, v)| format!("{k} {v}"));
                    return Err(Error::invalid(format!(
                        "the parameter {name:?} must be a {want}, not {sent}"
                    )));
                }
            }
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
                _ => map
                    .get_mut("resource")
                    .map(|r| ParamValue::Resource(Arc::new(std::mem::take(r)))),
            };
            if let Some(value) = value {
                out.push((name, value));
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

    /// A single-valued non-negative integer parameter (digits, nothing
    /// else); the one reader of [`INTEGERS`] for every operation.
    pub fn number(&self, name: &str) -> Result<Option<usize>, Error> {
        self.text(name)?
            .map(|t| {
                t.parse::<usize>()
                    .ok()
                    .filter(|_| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "the parameter {name:?} must be a non-negative integer, not {t:?}"
                        ))
                    })
            })
            .transpose()
    }

    /// A single-valued boolean parameter; the one reader of [`BOOLEANS`]
    /// for every operation.
    pub fn flag(&self, name: &str) -> Result<Option<bool>, Error> {
        match self.text(name)? {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(Error::invalid(format!(
                "the parameter {name:?} must be true or false, not {other:?}"
            ))),
        }
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
                ParamValue::Resource(r) => Some(&**r),
                _ => None,
            })
            .collect()
    }
}

fn coding(v: &Value) -> Coding {
    Coding::from_json(v)
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
