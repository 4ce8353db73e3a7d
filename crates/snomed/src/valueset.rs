//! SNOMED CT value sets: what a request names, and which codes are in it.
//!
//! A value set comes from `url` (an implicit SNOMED CT value set, or a
//! `tx-resource` whose `url` matches) or from an inline `valueSet`
//! ([`resolve_value_set`]). Implicit value sets (`?fhir_vs`,
//! `?fhir_vs=isa/X`, `?fhir_vs=refset/R`, `?fhir_vs=ecl/E`, also after an
//! edition URI: `http://snomed.info/sct/{module}[/version/{date}]?fhir_vs…`)
//! and compose includes and excludes become [`Rule`]s.
//!
//! Every filter means an ECL constraint, and is kept as one ([`Filter`],
//! [`crate::constraint`], where the mapping is written down): the same
//! compilation serves the engine's SNOMED CT provider ([`crate::SnomedCt`]),
//! so both paths give one answer.
//!
//! Post-coordinated expressions are members when listed verbatim, when
//! an include is the whole of SNOMED CT, when the include has ECL and the
//! expression satisfies it (as a virtual concept below its focus
//! concepts, see [`txmap_ecl_eval::matches`]), or when the include says
//! `expressions = true` and the focus concepts pass the other filters.

use std::sync::Arc;

use serde_json::Value;
use txmap_ecl_eval::{Budget, ExpressionSubject, Subject};
use txmap_store::Edition;
use txmap_terminology::Error;
use txmap_terminology::params::Params;

use crate::{SNOMED_CT, Stored, percent_decode};

/// How a value set's membership is decided.
#[derive(Clone, Debug)]
pub enum ValueSetDef {
    /// `url|version`, as messages name it, and its compose.
    Compose {
        name: String,
        include: Vec<Rule>,
        exclude: Vec<Rule>,
    },
}

/// One include or exclude: all its conditions hold.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    pub version: Option<String>,
    /// `None`: any concept. Codes as written (expressions may be listed).
    pub concepts: Option<Vec<String>>,
    pub filters: Vec<Filter>,
    /// Whether expressions match: the whole code system, or a filter
    /// `expressions = true` (then their focus concepts must match).
    pub expressions: bool,
    /// Whether expressions were excluded explicitly (`expressions = false`).
    pub expressions_off: bool,
}

/// One filter, as the ECL constraint it means (shared with the
/// terminology engine's SNOMED CT provider).
pub use crate::Constraint as Filter;

/// What a validated code is, for value set membership.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// Unknown or invalid.
    None,
    Concept(u32),
    /// A valid expression.
    Expression(ExpressionSubject),
}

pub(super) fn vs_not_found(url: &str) -> Error {
    Error::ValueSetNotFound {
        url: url.to_owned(),
    }
}

/// An implicit SNOMED CT value set URL (`http://snomed.info/sct?fhir_vs…`,
/// or after an edition or version URI), or `None` when `url` is not one.
pub fn implicit_value_set(url: &str) -> Option<Result<Rule, Error>> {
    let (base, query) = url.split_once('?')?;
    let qualified =
        base.starts_with("http://snomed.info/sct/") || base.starts_with("http://snomed.info/xsct/");
    if base != SNOMED_CT && !qualified {
        return None;
    }
    let version = (base != SNOMED_CT).then(|| base.to_owned());
    let rule = |filters: Vec<Filter>, whole: bool| Rule {
        version: version.clone(),
        concepts: None,
        filters,
        expressions: whole,
        expressions_off: false,
    };
    let id = |s: &str| s.parse::<u64>().map_err(|_| vs_not_found(url));
    // An SCTID the ECL parser refuses (a bad check digit) names no value set.
    let filter = |ecl: String| -> Result<Filter, Error> {
        Ok(Filter {
            ecl: Arc::new(txmap_ecl::parse(&ecl).map_err(|_| vs_not_found(url))?),
            written: ecl,
            is_ecl: false,
        })
    };
    Some(match query {
        "fhir_vs" => Ok(rule(vec![], true)),
        q => match q.strip_prefix("fhir_vs=") {
            Some(v) => {
                if let Some(x) = v.strip_prefix("isa/") {
                    id(x)
                        .and_then(|x| filter(format!("<< {x}")))
                        .map(|f| rule(vec![f], false))
                } else if let Some(r) = v.strip_prefix("refset/") {
                    id(r)
                        .and_then(|r| filter(format!("^ {r}")))
                        .map(|f| rule(vec![f], false))
                } else if let Some(e) = v.strip_prefix("ecl/") {
                    Filter::ecl(&percent_decode(e))
                        .map(|f| rule(vec![f], false))
                        .map_err(Error::from)
                } else if v == "refset" {
                    Err(Error::NotSupported(format!(
                        "the value set {url} (all reference sets) is not supported for $validate-code"
                    )))
                } else {
                    Err(vs_not_found(url))
                }
            }
            None => Err(vs_not_found(url)),
        },
    })
}

fn parse_rules(list: Option<&Value>) -> Result<Vec<Rule>, Error> {
    let mut out = Vec::new();
    let Some(list) = list else { return Ok(out) };
    let Some(list) = list.as_array() else {
        return Err(Error::invalid("compose.include must be an array"));
    };
    for inc in list {
        let system = inc.get("system").and_then(Value::as_str);
        if inc.get("valueSet").is_some() {
            return Err(Error::NotSupported(
                "a value set including other value sets is not supported".into(),
            ));
        }
        if system != Some(SNOMED_CT) {
            return Err(Error::NotSupported(format!(
                "value set includes of {} are not supported: this server serves {SNOMED_CT} only",
                system.unwrap_or("(no system)")
            )));
        }
        let mut rule = Rule {
            version: inc
                .get("version")
                .and_then(Value::as_str)
                .map(str::to_owned),
            ..Rule::default()
        };
        if let Some(concepts) = inc.get("concept").and_then(Value::as_array) {
            rule.concepts = Some(
                concepts
                    .iter()
                    .map(|c| {
                        let code = c.get("code").and_then(Value::as_str).unwrap_or_default();
                        code.trim().to_owned()
                    })
                    .collect(),
            );
        }
        for f in inc
            .get("filter")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            let text = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("");
            let (property, op, value) = (text("property"), text("op"), text("value"));
            if property == "expressions" && op == "=" {
                match value {
                    "true" => rule.expressions = true,
                    "false" => {
                        rule.expressions = false;
                        rule.expressions_off = true;
                    }
                    _ => {
                        return Err(Error::NotSupported(format!(
                            "the filter {property} {op} {value} is not supported"
                        )));
                    }
                }
                continue;
            }
            rule.filters.push(Filter::compose(property, op, value)?);
        }
        if rule.concepts.is_none() && rule.filters.is_empty() {
            rule.expressions = true;
        }
        out.push(rule);
    }
    Ok(out)
}

/// A ValueSet resource's definition.
pub fn value_set_def(vs: &Value) -> Result<ValueSetDef, Error> {
    let url = vs.get("url").and_then(Value::as_str).unwrap_or("");
    let name = match vs.get("version").and_then(Value::as_str) {
        Some(v) => format!("{url}|{v}"),
        None => url.to_owned(),
    };
    let Some(compose) = vs.get("compose") else {
        return Err(Error::NotSupported(format!(
            "the value set {name} has no compose"
        )));
    };
    Ok(ValueSetDef::Compose {
        name,
        include: parse_rules(compose.get("include"))?,
        exclude: parse_rules(compose.get("exclude"))?,
    })
}

impl ValueSetDef {
    pub fn name(&self) -> &str {
        match self {
            ValueSetDef::Compose { name, .. } => name,
        }
    }

    pub fn version(&self) -> Option<&str> {
        match self {
            ValueSetDef::Compose { include, .. } => {
                include.iter().find_map(|r| r.version.as_deref())
            }
        }
    }

    /// Whether any include or exclude has a filter given as ECL text.
    pub fn has_ecl(&self) -> bool {
        let ValueSetDef::Compose {
            include, exclude, ..
        } = self;
        include
            .iter()
            .chain(exclude)
            .any(|r| r.filters.iter().any(|f| f.is_ecl))
    }

    /// Whether the code (as written, and what it is) is in.
    pub fn contains<B: AsRef<[u8]>>(
        &self,
        ed: &Edition<B>,
        code: &str,
        target: &Target,
        budget: &Budget,
    ) -> Result<bool, Error> {
        let ValueSetDef::Compose {
            include, exclude, ..
        } = self;
        let mut inside = false;
        for r in include {
            if r.matches(ed, code, target, budget)? {
                inside = true;
                break;
            }
        }
        if !inside {
            return Ok(false);
        }
        for r in exclude {
            if r.matches(ed, code, target, budget)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl Rule {
    /// Whether the code (as written, and what it is) passes the rule.
    pub fn matches<B: AsRef<[u8]>>(
        &self,
        ed: &Edition<B>,
        code: &str,
        target: &Target,
        budget: &Budget,
    ) -> Result<bool, Error> {
        let code = code.trim();
        match target {
            Target::None => Ok(false),
            Target::Concept(ord) => {
                if let Some(list) = &self.concepts {
                    let id = ed.sctid(*ord).stored()?;
                    if !list.iter().any(|c| c.parse::<u64>().ok() == Some(id)) {
                        return Ok(false);
                    }
                }
                self.concept_passes(ed, *ord, budget)
            }
            Target::Expression(subject) => {
                if let Some(list) = &self.concepts {
                    return Ok(list.iter().any(|c| c == code));
                }
                if subject.focus.is_empty() {
                    return Ok(false);
                }
                let as_expression = Subject::Expression(subject.clone());
                if self.filters.iter().any(|f| f.is_ecl) {
                    for f in &self.filters {
                        if !f.matches(ed, &as_expression, budget)? {
                            return Ok(false);
                        }
                    }
                    return Ok(true);
                }
                if !self.expressions {
                    return Ok(false);
                }
                for &f in &subject.focus {
                    if !self.concept_passes(ed, f, budget)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
        }
    }

    /// Whether the concept at `ord` passes every filter.
    pub fn concept_passes<B: AsRef<[u8]>>(
        &self,
        ed: &Edition<B>,
        ord: u32,
        budget: &Budget,
    ) -> Result<bool, Error> {
        for f in &self.filters {
            if !f.matches(ed, &Subject::Concept(ord), budget)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The concepts that pass every filter (all concepts when there are
    /// none), sorted by ordinal. Concept lists are the caller's.
    pub fn filtered_concepts<B: AsRef<[u8]>>(
        &self,
        ed: &Edition<B>,
        budget: &Budget,
    ) -> Result<Vec<u32>, Error> {
        Ok(crate::constraint::evaluate_all(&self.filters, ed, budget)?)
    }
}

/// Checks an implicit value set's own references against the edition: an
/// implicit value set on an unknown concept or refset is not found.
pub fn check_implicit<B: AsRef<[u8]>>(ed: &Edition<B>, url: &str) -> Result<(), Error> {
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let ok = if let Some(x) = query.strip_prefix("fhir_vs=isa/") {
        x.parse::<u64>().ok().and_then(|x| ed.ordinal(x)).is_some()
    } else if let Some(r) = query.strip_prefix("fhir_vs=refset/") {
        r.parse::<u64>().ok().and_then(|r| ed.refset(r)).is_some()
    } else {
        true
    };
    if ok { Ok(()) } else { Err(vs_not_found(url)) }
}

/// A value set named by a request: its definition, the implicit URL when
/// it is an implicit SNOMED CT value set, and the resource when it was
/// given (inline or as a `tx-resource`).
#[derive(Clone, Debug)]
pub struct Resolved {
    pub def: ValueSetDef,
    pub implicit: Option<String>,
    pub resource: Option<Value>,
}

/// The `tx-resource` ValueSet a canonical names: `url` or `url|version`.
pub fn tx_resource_value_set<'p>(params: &'p Params, canonical: &str) -> Option<&'p Value> {
    let (url, version) = match canonical.split_once('|') {
        Some((u, v)) => (u, Some(v)),
        None => (canonical, None),
    };
    params.resources("tx-resource").into_iter().find(|r| {
        r.get("resourceType").and_then(Value::as_str) == Some("ValueSet")
            && r.get("url").and_then(Value::as_str) == Some(url)
            && version.is_none_or(|v| r.get("version").and_then(Value::as_str) == Some(v))
    })
}

/// The value set of `url` (implicit, or a matching `tx-resource`) or an
/// inline `valueSet`.
pub fn resolve_value_set(params: &Params) -> Result<Resolved, Error> {
    let url = params.text("url")?.map(str::to_owned);
    let value_set_version = params.text("valueSetVersion")?;
    let inline = params.resources("valueSet").into_iter().next();
    Ok(match (inline, url.as_deref()) {
        (Some(vs), _) => Resolved {
            def: value_set_def(vs)?,
            implicit: None,
            resource: Some(vs.clone()),
        },
        (None, Some(u)) => match implicit_value_set(u) {
            Some(rule) => Resolved {
                def: ValueSetDef::Compose {
                    name: u.to_owned(),
                    include: vec![rule?],
                    exclude: vec![],
                },
                implicit: Some(u.to_owned()),
                resource: None,
            },
            None => {
                let named = match value_set_version {
                    Some(v) => format!("{u}|{v}"),
                    None => u.to_owned(),
                };
                match tx_resource_value_set(params, &named) {
                    Some(vs) => Resolved {
                        def: value_set_def(vs)?,
                        implicit: None,
                        resource: Some(vs.clone()),
                    },
                    None => return Err(vs_not_found(u)),
                }
            }
        },
        (None, None) => return Err(Error::required("url")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(rule: &Rule) -> Vec<String> {
        rule.filters.iter().map(|f| f.ecl.to_string()).collect()
    }

    #[test]
    fn implicit_urls() {
        assert!(implicit_value_set("http://example.org/vs").is_none());
        let all = implicit_value_set("http://snomed.info/sct?fhir_vs")
            .unwrap()
            .unwrap();
        assert!(all.expressions && all.filters.is_empty());
        let isa = implicit_value_set("http://snomed.info/sct?fhir_vs=isa/71388002")
            .unwrap()
            .unwrap();
        assert_eq!(written(&isa), ["<< 71388002"]);
        let refset = implicit_value_set(
            "http://snomed.info/sct/900000000000207008/version/20250201?fhir_vs=refset/734139008",
        )
        .unwrap()
        .unwrap();
        assert_eq!(written(&refset), ["^ 734139008"]);
        assert_eq!(
            refset.version.as_deref(),
            Some("http://snomed.info/sct/900000000000207008/version/20250201")
        );
        let ecl = implicit_value_set("http://snomed.info/sct?fhir_vs=ecl/%3C%3C%2071388002")
            .unwrap()
            .unwrap();
        assert_eq!(written(&ecl), ["<< 71388002"]);
        assert!(ecl.filters[0].is_ecl);
        assert!(
            implicit_value_set("http://snomed.info/sct?fhir_vs=isa/x")
                .unwrap()
                .is_err()
        );
        let bad = implicit_value_set("http://snomed.info/sct?fhir_vs=ecl/%3C%3C")
            .unwrap()
            .unwrap_err();
        assert_eq!(bad.issue().message_id, Some("INVALID_ECL"));
    }
}
