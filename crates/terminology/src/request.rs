//! An operation's input: a FHIR `Parameters` resource as JSON, read by
//! name, and the [`Resolver`] over its `tx-resource`s.

use std::time::Instant;

use serde_json::Value;

use crate::error::Error;
use crate::resolver::Resolver;
use crate::valueset::ValueSet;

/// A coding named by a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Coding {
    pub system: Option<String>,
    pub version: Option<String>,
    pub code: Option<String>,
    pub display: Option<String>,
}

impl Coding {
    pub fn from_json(v: &Value) -> Coding {
        let get = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        Coding {
            system: get("system"),
            version: get("version"),
            code: get("code"),
            display: get("display"),
        }
    }
}

/// One request: its parameters, its resources, its language.
#[derive(Debug)]
pub struct Request<'a> {
    params: &'a [Value],
    pub resolver: Resolver,
    /// The `Accept-Language` header, which `displayLanguage` overrides.
    pub accept_language: Option<String>,
    /// The most codes an expansion may hold.
    pub max_expansion: usize,
    /// When the request's time budget runs out; the engine's loops check
    /// it and answer [`Error::OutOfTime`].
    pub deadline: Option<Instant>,
}

impl<'a> Request<'a> {
    /// Reads a Parameters resource; its `tx-resource`s are indexed.
    pub fn new(parameters: &'a Value) -> Request<'a> {
        let params = parameters
            .get("parameter")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let resources = params
            .iter()
            .filter(|p| p.get("name").and_then(Value::as_str) == Some("tx-resource"))
            .filter_map(|p| p.get("resource"));
        Request {
            params,
            resolver: Resolver::new(resources),
            accept_language: None,
            max_expansion: usize::MAX,
            deadline: None,
        }
    }

    fn all(&self, name: &'a str) -> impl Iterator<Item = &'a Value> + use<'a> {
        self.params
            .iter()
            .filter(move |p| p.get("name").and_then(Value::as_str) == Some(name))
    }

    /// Every parameter named `name`, as given.
    pub fn raw(&self, name: &'a str) -> Vec<&'a Value> {
        self.all(name).collect()
    }

    /// The first value of `name` (any `value[x]`) as JSON.
    pub fn value(&self, name: &'a str) -> Option<&'a Value> {
        self.all(name)
            .find_map(|p| crate::codesystem::value_x(p).map(|(_, v)| v))
    }

    /// A primitive parameter as text.
    pub fn text(&self, name: &'a str) -> Option<String> {
        match self.value(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Every text value of a repeatable parameter.
    pub fn texts(&self, name: &'a str) -> Vec<String> {
        self.all(name)
            .filter_map(|p| crate::codesystem::value_x(p).map(|(_, v)| v))
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// A boolean parameter; absent is `None`.
    pub fn flag(&self, name: &'a str) -> Result<Option<bool>, Error> {
        match self.text(name).as_deref() {
            None => Ok(None),
            Some("true") => Ok(Some(true)),
            Some("false") => Ok(Some(false)),
            Some(other) => Err(Error::Invalid(format!(
                "The parameter '{name}' must be true or false, not '{other}'"
            ))),
        }
    }

    /// A non-negative integer parameter.
    pub fn number(&self, name: &'a str) -> Result<Option<usize>, Error> {
        self.text(name)
            .map(|t| {
                t.trim().parse::<usize>().map_err(|_| {
                    Error::Invalid(format!(
                        "The parameter '{name}' must be a non-negative integer, not '{t}'"
                    ))
                })
            })
            .transpose()
    }

    /// An error once the time budget has run out.
    pub fn check_deadline(&self) -> Result<(), Error> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(Error::OutOfTime),
            _ => Ok(()),
        }
    }

    /// A `valueCoding` parameter.
    pub fn coding(&self, name: &'a str) -> Option<Coding> {
        self.all(name)
            .find_map(|p| p.get("valueCoding"))
            .map(Coding::from_json)
    }

    /// A `valueCodeableConcept` parameter's codings.
    pub fn codeable_concept(&self, name: &'a str) -> Option<Vec<Coding>> {
        self.all(name)
            .find_map(|p| p.get("valueCodeableConcept"))
            .map(|cc| {
                cc.get("coding")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().map(Coding::from_json).collect())
                    .unwrap_or_default()
            })
    }

    /// The value set a ValueSet operation is about: the inline `valueSet`
    /// (parsed into `inline`), else the one `url` and `valueSetVersion`
    /// name.
    pub fn value_set<'s>(
        &'s self,
        inline: &'s mut Option<ValueSet>,
    ) -> Result<&'s ValueSet, Error> {
        if let Some(r) = self.resource("valueSet") {
            let vs = ValueSet::from_json(r)
                .ok_or_else(|| Error::Invalid("The valueSet parameter is not a ValueSet".into()))?;
            return Ok(inline.insert(vs));
        }
        let url = self.text("url").ok_or(Error::Required("url"))?;
        let version = self.text("valueSetVersion");
        self.resolver
            .value_set(&url, version.as_deref())
            .ok_or_else(|| Error::ValueSetNotFound {
                url: match &version {
                    Some(v) => format!("{url}|{v}"),
                    None => url.clone(),
                },
            })
    }

    /// A resource parameter.
    pub fn resource(&self, name: &'a str) -> Option<&'a Value> {
        self.all(name).find_map(|p| p.get("resource"))
    }

    /// The languages displays are asked in: `displayLanguage`, else
    /// `Accept-Language`.
    pub fn display_language(&self) -> Option<String> {
        self.text("displayLanguage")
            .or_else(|| self.accept_language.clone())
            .filter(|l| !l.trim().is_empty())
    }
}
