//! An operation's input: a FHIR `Parameters` resource as JSON, read by
//! name, and the [`Resolver`] over its `tx-resource`s.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::Value;

use crate::error::Error;
use crate::params::{ParamValue, Params};
use crate::resolver::Resolver;
use crate::valueset::ValueSet;

/// [`Error::OutOfTime`] once `deadline` (if any) has passed: the one
/// check every loop that works for a request makes.
pub fn check_deadline(deadline: Option<Instant>) -> Result<(), Error> {
    match deadline {
        Some(d) if Instant::now() >= d => Err(Error::OutOfTime),
        _ => Ok(()),
    }
}

/// What stops a request's work besides its clock: the server's memory
/// guard. The engine's loops call [`Request::check`], which asks it.
pub trait Watch: Send + Sync + std::fmt::Debug {
    /// `Err` with the reason when the work must stop now.
    fn check(&self) -> Result<(), String>;
}

/// When a request's work must stop: its deadline and its watch, as the
/// engine's loops carry them.
#[derive(Clone, Debug, Default)]
pub struct Stop {
    pub deadline: Option<Instant>,
    pub watch: Option<Arc<dyn Watch>>,
}

impl Stop {
    /// [`Error::OutOfTime`] once the deadline has passed, [`Error::Budget`]
    /// when the watch says stop.
    pub fn check(&self) -> Result<(), Error> {
        check_stop(self.deadline, self.watch.as_deref())
    }
}

/// The deadline, then the watch.
fn check_stop(deadline: Option<Instant>, watch: Option<&dyn Watch>) -> Result<(), Error> {
    check_deadline(deadline)?;
    match watch {
        Some(w) => w.check().map_err(Error::Budget),
        None => Ok(()),
    }
}

/// The `parameter` list of a Parameters resource.
fn list(parameters: &Value) -> &[Value] {
    parameters
        .get("parameter")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A coding named by a request.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
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

/// One request: its parameters (a FHIR Parameters resource, as sent or
/// as the transport read it from a query), its resources, its language
/// and its limits. It owns its parameters, so it can travel to the
/// thread that answers it.
#[derive(Debug)]
pub struct Request {
    /// The Parameters resource: as sent, or made from the typed view on
    /// first use (a query string's pairs, which most requests never need
    /// as JSON).
    parameters: OnceLock<Value>,
    /// The parameters as typed values, read strictly.
    pub params: Params,
    pub resolver: Resolver,
    /// The `Accept-Language` header, which `displayLanguage` overrides.
    pub accept_language: Option<String>,
    /// The most codes an expansion may hold.
    pub max_expansion: usize,
    /// When the request's time budget runs out; the engine's loops check
    /// it and answer [`Error::OutOfTime`].
    pub deadline: Option<Instant>,
    /// What else may stop the work (the memory guard); its refusal is
    /// [`Error::Budget`].
    pub watch: Option<Arc<dyn Watch>>,
}

impl Request {
    /// Reads a Parameters resource; its `tx-resource`s are indexed. What
    /// the typed view cannot read is left out of it.
    pub fn new(mut parameters: Value) -> Request {
        let params = Params::take_from(&mut parameters).unwrap_or_default();
        Request::with(parameters, params)
    }

    /// Reads a Parameters resource a client sent: one that is not a
    /// Parameters resource, or has a parameter without a name, is an
    /// error.
    pub fn from_parameters(mut parameters: Value) -> Result<Request, Error> {
        let params = Params::take_from(&mut parameters)?;
        Ok(Request::with(parameters, params))
    }

    /// Reads name-value pairs (a query string, a form): every value is
    /// text, given as `valueString`.
    pub fn from_pairs(pairs: Vec<(String, String)>) -> Request {
        Request {
            parameters: OnceLock::new(),
            params: Params::from_pairs(pairs),
            // Text carries no resources.
            resolver: Resolver::default(),
            accept_language: None,
            max_expansion: usize::MAX,
            deadline: None,
            watch: None,
        }
    }

    /// `parameters` as [`Params::take_from`] left it: its resources are
    /// in `params`.
    fn with(parameters: Value, params: Params) -> Request {
        let resolver = Resolver::new(params.resources("tx-resource"));
        Request {
            parameters: OnceLock::from(parameters),
            params,
            resolver,
            accept_language: None,
            max_expansion: usize::MAX,
            deadline: None,
            watch: None,
        }
    }

    /// The Parameters resource, its resources back in place, and the
    /// resolver over them.
    pub fn into_parts(self) -> (Value, Resolver) {
        let Some(mut parameters) = self.parameters.into_inner() else {
            return (self.params.to_parameters(), self.resolver);
        };
        let mut resources = self.params.0.into_iter().filter_map(|(_, v)| match v {
            ParamValue::Resource(r) => Some(r),
            _ => None,
        });
        if let Some(Value::Array(list)) = parameters.get_mut("parameter") {
            for p in list {
                if let Some(slot @ Value::Null) = p.get_mut("resource")
                    && let Some(r) = resources.next()
                {
                    *slot = Arc::try_unwrap(r).unwrap_or_else(|r| (*r).clone());
                }
            }
        }
        (parameters, self.resolver)
    }

    /// The Parameters resource, without its parameters' resources (see
    /// [`Request::resource`]).
    pub fn parameters(&self) -> &Value {
        self.parameters.get_or_init(|| self.params.to_parameters())
    }

    fn all<'s>(&'s self, name: &'s str) -> impl Iterator<Item = &'s Value> + use<'s> {
        list(self.parameters())
            .iter()
            .filter(move |p| p.get("name").and_then(Value::as_str) == Some(name))
    }

    /// Every parameter named `name`, as given.
    pub fn raw<'s>(&'s self, name: &'s str) -> Vec<&'s Value> {
        self.all(name).collect()
    }

    /// The first value of `name` (any `value[x]`) as JSON.
    pub fn value<'s>(&'s self, name: &'s str) -> Option<&'s Value> {
        self.all(name)
            .find_map(|p| crate::codesystem::value_x(p).map(|(_, v)| v))
    }

    /// A primitive parameter as text.
    pub fn text<'s>(&'s self, name: &'s str) -> Option<String> {
        match self.value(name)? {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    /// Every text value of a repeatable parameter.
    pub fn texts<'s>(&'s self, name: &'s str) -> Vec<String> {
        self.all(name)
            .filter_map(|p| crate::codesystem::value_x(p).map(|(_, v)| v))
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    }

    /// A boolean parameter; absent is `None` ([`Params::flag`]: one
    /// reader for every operation).
    pub fn flag(&self, name: &str) -> Result<Option<bool>, Error> {
        self.params.flag(name)
    }

    /// A non-negative integer parameter ([`Params::number`]).
    pub fn number(&self, name: &str) -> Result<Option<usize>, Error> {
        self.params.number(name)
    }

    /// The most codes this `$expand` may hold: [`max_expansion`](Self::max_expansion)
    /// (the operator's limit, lowered by the client's `X-TOO-COSTLY-THRESHOLD`),
    /// lowered further by tx.fhir.org's `limit` parameter when it is given
    /// and not 0. Past it the answer is `too-costly`, as tx.fhir.org's is.
    pub fn expansion_limit(&self) -> Result<usize, Error> {
        Ok(match self.number("limit")? {
            Some(l) if l > 0 => l.min(self.max_expansion),
            _ => self.max_expansion,
        })
    }

    /// The languages displays are asked in, read strictly — the same rule
    /// for every operation and code system: `displayLanguage` (a language
    /// tag or a weighted list of at most
    /// [`MAX_LANGUAGES`](crate::language::MAX_LANGUAGES), else 400), else
    /// `Accept-Language`.
    pub fn display_language_param(&self) -> Result<Option<&str>, Error> {
        let asked = self
            .params
            .text("displayLanguage")?
            .map(str::trim)
            .filter(|l| !l.is_empty());
        if let Some(l) = asked
            && !crate::language::is_valid_param(l)
        {
            return Err(Error::InvalidDisplayLanguage(l.to_owned()));
        }
        Ok(asked.or(self.accept_language.as_deref()))
    }

    /// An error once the time budget has run out.
    pub fn check_deadline(&self) -> Result<(), Error> {
        check_deadline(self.deadline)
    }

    /// An error once the time budget has run out or the watch says stop:
    /// what every loop that works for the request checks.
    pub fn check(&self) -> Result<(), Error> {
        check_stop(self.deadline, self.watch.as_deref())
    }

    /// The deadline and watch, for loops that outlive a borrow of the
    /// request.
    pub fn stop(&self) -> Stop {
        Stop {
            deadline: self.deadline,
            watch: self.watch.clone(),
        }
    }

    /// A `valueCoding` parameter.
    pub fn coding<'s>(&'s self, name: &'s str) -> Option<Coding> {
        self.all(name)
            .find_map(|p| p.get("valueCoding"))
            .map(Coding::from_json)
    }

    /// A `valueCodeableConcept` parameter's codings.
    pub fn codeable_concept<'s>(&'s self, name: &'s str) -> Option<Vec<Coding>> {
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
    /// name, else the implicit value set `url` names (made into `inline`).
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
        if let Some(vs) = self.resolver.value_set(&url, version.as_deref()) {
            return Ok(vs);
        }
        // A code system's implicit value set (`http://loinc.org/vs/LL…`):
        // a value set that imports it, so that every operation reads it as
        // any other import.
        if version.is_none() && self.resolver.implicit_value_set(&url).is_some() {
            let vs = ValueSet::from_json(&serde_json::json!({
                "resourceType": "ValueSet",
                "url": url,
                "status": "active",
                "compose": {"include": [{"valueSet": [url]}]},
            }))
            .ok_or_else(|| Error::Internal(format!("the implicit value set {url}")))?;
            return Ok(inline.insert(vs));
        }
        Err(Error::ValueSetNotFound {
            url: match &version {
                Some(v) => format!("{url}|{v}"),
                None => url.clone(),
            },
        })
    }

    /// A resource parameter.
    pub fn resource<'s>(&'s self, name: &'s str) -> Option<&'s Value> {
        self.params.resources(name).into_iter().next()
    }

    /// The languages displays are asked in: `displayLanguage`, else
    /// `Accept-Language`.
    pub fn display_language(&self) -> Option<String> {
        self.text("displayLanguage")
            .or_else(|| self.accept_language.clone())
            .filter(|l| !l.trim().is_empty())
    }
}
