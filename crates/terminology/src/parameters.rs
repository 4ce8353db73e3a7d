//! `Parameters` resources written straight to JSON text: the one writer of
//! every operation's Parameters answer, the generic engine's and SNOMED
//! CT's (`txmap-snomed`).
//!
//! `$lookup` answers carry dozens of parameters, each with parts; built as
//! `serde_json::Value` trees, every object is a map and every string a
//! copy, and allocation was most of the operation's time (measured with
//! `perf`: malloc, free and map inserts over a third of a `$lookup`). A
//! [`Param`] borrows its strings where it can (from an edition, a
//! request) and serialises in one pass, with the keys in the order
//! `Value`'s sorted maps would give them, so the bytes on the wire are the
//! same as a `Value` tree's.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

/// One `parameter` (or `part`): a name and either a value or parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Param<'a> {
    pub name: Cow<'a, str>,
    pub body: Body<'a>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Body<'a> {
    /// `value[x]`: the element's name (`valueCode`) and its value.
    Value(Cow<'a, str>, Scalar<'a>),
    Parts(Vec<Param<'a>>),
    /// `resource`: a nested resource (an OperationOutcome, a batch's
    /// answers).
    Resource(Resource<'a>),
}

/// A parameter's resource.
#[derive(Clone, Debug, PartialEq)]
pub enum Resource<'a> {
    Parameters(Parameters<'a>),
    Json(Value),
}

/// A primitive or Coding value.
#[derive(Clone, Debug, PartialEq)]
pub enum Scalar<'a> {
    Str(Cow<'a, str>),
    Bool(bool),
    /// Any other JSON (numbers, decimals as parsed).
    Json(Value),
    /// A Coding: system, code, display.
    Coding(&'a str, Cow<'a, str>, Option<Cow<'a, str>>),
}

impl<'a> Param<'a> {
    pub fn value(
        name: impl Into<Cow<'a, str>>,
        kind: impl Into<Cow<'a, str>>,
        value: Scalar<'a>,
    ) -> Self {
        Param {
            name: name.into(),
            body: Body::Value(kind.into(), value),
        }
    }

    /// A `value[x]` given as JSON (a CodeableConcept, a Coding as sent).
    pub fn json(
        name: impl Into<Cow<'a, str>>,
        kind: impl Into<Cow<'a, str>>,
        value: Value,
    ) -> Self {
        Param::value(name, kind, Scalar::Json(value))
    }

    /// A `value[x]` that is a string of some kind (`valueCode`,
    /// `valueString`, `valueUri`...).
    pub fn text(
        name: impl Into<Cow<'a, str>>,
        kind: impl Into<Cow<'a, str>>,
        value: impl Into<Cow<'a, str>>,
    ) -> Self {
        Param::value(name, kind, Scalar::Str(value.into()))
    }

    pub fn parts(name: impl Into<Cow<'a, str>>, parts: Vec<Param<'a>>) -> Self {
        Param {
            name: name.into(),
            body: Body::Parts(parts),
        }
    }

    /// A parameter holding a resource given as JSON.
    pub fn resource(name: impl Into<Cow<'a, str>>, resource: Value) -> Self {
        Param {
            name: name.into(),
            body: Body::Resource(Resource::Json(resource)),
        }
    }

    /// The value of a `value[x]` parameter, as text when it is text.
    pub fn text_value(&self) -> Option<&str> {
        match &self.body {
            Body::Value(_, Scalar::Str(s)) => Some(s),
            Body::Value(_, Scalar::Json(Value::String(s))) => Some(s),
            _ => None,
        }
    }
}

impl Serialize for Param<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("name", &self.name)?;
        match &self.body {
            Body::Parts(parts) => m.serialize_entry("part", parts)?,
            Body::Value(kind, value) => m.serialize_entry(kind.as_ref(), value)?,
            Body::Resource(Resource::Parameters(p)) => m.serialize_entry("resource", p)?,
            Body::Resource(Resource::Json(v)) => m.serialize_entry("resource", v)?,
        }
        m.end()
    }
}

impl Serialize for Scalar<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Scalar::Str(v) => s.serialize_str(v),
            Scalar::Bool(b) => s.serialize_bool(*b),
            Scalar::Json(v) => v.serialize(s),
            Scalar::Coding(system, code, display) => {
                // Sorted keys, as a `Value` map writes them.
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("code", code)?;
                if let Some(d) = display {
                    m.serialize_entry("display", d)?;
                }
                m.serialize_entry("system", system)?;
                m.end()
            }
        }
    }
}

/// A whole `Parameters` resource.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parameters<'a>(pub Vec<Param<'a>>);

impl Serialize for Parameters<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct List<'b, 'a>(&'b [Param<'a>]);
        impl Serialize for List<'_, '_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut seq = s.serialize_seq(Some(self.0.len()))?;
                for p in self.0 {
                    seq.serialize_element(p)?;
                }
                seq.end()
            }
        }
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("resourceType", "Parameters")?;
        m.serialize_entry("parameter", &List(&self.0))?;
        m.end()
    }
}

impl Parameters<'_> {
    /// The resource as JSON text, `resourceType` first.
    pub fn to_json(&self) -> String {
        // Serialising strings, bools and `Value`s into a String cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The resource as a JSON tree (for callers that read it back).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or_default()
    }

    /// The first parameter named `name`.
    pub fn get(&self, name: &str) -> Option<&Param<'_>> {
        self.0.iter().find(|p| p.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn writes_what_a_value_tree_would() {
        let p = Parameters(vec![
            Param::text("code", "valueCode", "22298006"),
            Param::value("inactive", "valueBoolean", Scalar::Bool(false)),
            Param::parts(
                "designation",
                vec![
                    Param::text("language", "valueCode", "en"),
                    Param::value(
                        "use",
                        "valueCoding",
                        Scalar::Coding(
                            "http://snomed.info/sct",
                            "900000000000013009".into(),
                            Some("Synonym".into()),
                        ),
                    ),
                    Param::text("value", "valueString", "Heart \"attack\""),
                ],
            ),
            Param::value("n", "valueInteger", Scalar::Json(json!(12))),
        ]);
        let expected = json!({
            "resourceType": "Parameters",
            "parameter": [
                { "name": "code", "valueCode": "22298006" },
                { "name": "inactive", "valueBoolean": false },
                { "name": "designation", "part": [
                    { "name": "language", "valueCode": "en" },
                    { "name": "use", "valueCoding": {
                        "system": "http://snomed.info/sct",
                        "code": "900000000000013009",
                        "display": "Synonym" } },
                    { "name": "value", "valueString": "Heart \"attack\"" },
                ] },
                { "name": "n", "valueInteger": 12 },
            ],
        });
        let text = p.to_json();
        assert!(
            text.starts_with("{\"resourceType\":\"Parameters\","),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), expected);
        assert_eq!(p.to_value(), expected);
    }
}
