//! `CodeSystem/$validate-code` and `ValueSet/$validate-code` for SNOMED CT.
//!
//! The code comes from `code` (+`system`, `version`, `display`), `coding`
//! or the first SNOMED CT coding of `codeableConcept`; the edition from
//! `version`, `system-version` (`http://snomed.info/sct|<version>`), the
//! value set's include, or the default edition (see
//! [`codesystem::resolve_edition`]). An SCTID is checked against the
//! edition (unknown → `result` false; inactive → a warning and `inactive`);
//! a `display` against the concept's active descriptions (one of its
//! inactive ones is a warning, anything else an error); a simple
//! post-coordinated expression ([`expression`]) has each concept checked
//! and each attribute type checked to descend from |Concept model
//! attribute| or |Linkage concept|, but not the rest of the concept model
//! (MRCM), which an informational issue says.
//!
//! `ValueSet/$validate-code` reads the value set from `url` (an implicit
//! SNOMED CT value set: `http://snomed.info/sct?fhir_vs`, `?fhir_vs=isa/X`,
//! `?fhir_vs=refset/R`), or from an inline `valueSet` or a `tx-resource`
//! whose `url` matches. Of a compose, SNOMED CT includes and excludes with
//! `concept` lists and `concept` `is-a`, `descendent-of`, `=`, `in`
//! filters, and the `expressions = true|false` filter, are understood;
//! anything else is a 4xx. An expression is a member when it is listed
//! verbatim, when the include is the whole of SNOMED CT, or when
//! `expressions = true` and its focus concepts pass the include's filters.
//!
//! Messages are worded as the HL7 terminology suite expects.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};

use super::codesystem::{self, Ed, blocking, check_system, respond, term_of};
use super::expression;
use super::metadata::SNOMED_CT;
use super::params::{Call, Coding, MESSAGE_ID, OpError, Params, TX_ISSUE_TYPE, merge};
use crate::app::AppState;
use crate::editions::ServedEdition;

/// One issue of the `issues` OperationOutcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    pub severity: &'static str,
    pub code: &'static str,
    pub tx_type: &'static str,
    pub message_id: Option<&'static str>,
    pub text: String,
    pub expression: &'static str,
}

impl Issue {
    fn to_json(&self) -> Value {
        let mut v = json!({
            "severity": self.severity,
            "code": self.code,
            "details": {
                "coding": [{ "system": TX_ISSUE_TYPE, "code": self.tx_type }],
                "text": self.text,
            },
            "expression": [self.expression],
        });
        if let Some(id) = self.message_id {
            v["extension"] = json!([{ "url": MESSAGE_ID, "valueString": id }]);
        }
        v
    }
}

/// What validating one code found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub code: String,
    pub display: Option<String>,
    pub inactive: bool,
    /// Whether the code is valid (before any value set check).
    pub valid: bool,
    pub issues: Vec<Issue>,
}

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

/// What a validated code is, for value set membership.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// Unknown or invalid.
    None,
    Concept(u32),
    /// A valid expression: its focus concepts' ordinals.
    Expression(Vec<u32>),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Filter {
    IsA(u64),
    DescendentOf(u64),
    Equals(u64),
    In(u64),
}

fn bad_request(code: &'static str, text: String) -> OpError {
    OpError {
        status: StatusCode::BAD_REQUEST,
        code,
        tx_type: None,
        message_id: None,
        text,
    }
}

fn vs_not_found(url: &str) -> OpError {
    OpError::not_found(format!(
        "A definition for the value Set '{url}' could not be found"
    ))
}

/// An implicit SNOMED CT value set URL (`http://snomed.info/sct?fhir_vs…`),
/// or `None` when `url` is not one.
pub fn implicit_value_set(url: &str) -> Option<Result<Rule, OpError>> {
    let (base, query) = url.split_once('?')?;
    if base != SNOMED_CT && !base.starts_with("http://snomed.info/sct/") {
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
    Some(match query {
        "fhir_vs" => Ok(rule(vec![], true)),
        q => match q.strip_prefix("fhir_vs=") {
            Some(v) => {
                if let Some(x) = v.strip_prefix("isa/") {
                    id(x).map(|x| rule(vec![Filter::IsA(x)], false))
                } else if let Some(r) = v.strip_prefix("refset/") {
                    id(r).map(|r| rule(vec![Filter::In(r)], false))
                } else if v == "refset" {
                    Err(bad_request(
                        "not-supported",
                        format!(
                            "the value set {url} (all reference sets) is not supported for $validate-code"
                        ),
                    ))
                } else {
                    Err(vs_not_found(url))
                }
            }
            None => Err(vs_not_found(url)),
        },
    })
}

fn parse_rules(list: Option<&Value>) -> Result<Vec<Rule>, OpError> {
    let mut out = Vec::new();
    let Some(list) = list else { return Ok(out) };
    let Some(list) = list.as_array() else {
        return Err(OpError::invalid("compose.include must be an array"));
    };
    for inc in list {
        let system = inc.get("system").and_then(Value::as_str);
        if inc.get("valueSet").is_some() {
            return Err(bad_request(
                "not-supported",
                "a value set including other value sets is not supported".into(),
            ));
        }
        if system != Some(SNOMED_CT) {
            return Err(bad_request(
                "not-supported",
                format!(
                    "value set includes of {} are not supported: this server serves {SNOMED_CT} only",
                    system.unwrap_or("(no system)")
                ),
            ));
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
            let property = f.get("property").and_then(Value::as_str).unwrap_or("");
            let op = f.get("op").and_then(Value::as_str).unwrap_or("");
            let value = f.get("value").and_then(Value::as_str).unwrap_or("");
            let not_supported = || {
                bad_request(
                    "not-supported",
                    format!("the filter {property} {op} {value} is not supported"),
                )
            };
            if property == "expressions" && op == "=" {
                match value {
                    "true" => rule.expressions = true,
                    "false" => {
                        rule.expressions = false;
                        rule.expressions_off = true;
                    }
                    _ => return Err(not_supported()),
                }
                continue;
            }
            if property != "concept" {
                return Err(not_supported());
            }
            let id: u64 = value.trim().parse().map_err(|_| not_supported())?;
            rule.filters.push(match op {
                "is-a" => Filter::IsA(id),
                "descendent-of" => Filter::DescendentOf(id),
                "=" => Filter::Equals(id),
                "in" => Filter::In(id),
                _ => return Err(not_supported()),
            });
        }
        if rule.concepts.is_none() && rule.filters.is_empty() {
            rule.expressions = true;
        }
        out.push(rule);
    }
    Ok(out)
}

/// A ValueSet resource's definition.
pub fn value_set_def(vs: &Value) -> Result<ValueSetDef, OpError> {
    let url = vs.get("url").and_then(Value::as_str).unwrap_or("");
    let name = match vs.get("version").and_then(Value::as_str) {
        Some(v) => format!("{url}|{v}"),
        None => url.to_owned(),
    };
    let Some(compose) = vs.get("compose") else {
        return Err(bad_request(
            "not-supported",
            format!("the value set {name} has no compose"),
        ));
    };
    Ok(ValueSetDef::Compose {
        name,
        include: parse_rules(compose.get("include"))?,
        exclude: parse_rules(compose.get("exclude"))?,
    })
}

impl ValueSetDef {
    pub(super) fn name(&self) -> &str {
        match self {
            ValueSetDef::Compose { name, .. } => name,
        }
    }

    pub(super) fn version(&self) -> Option<&str> {
        match self {
            ValueSetDef::Compose { include, .. } => {
                include.iter().find_map(|r| r.version.as_deref())
            }
        }
    }

    /// Whether the code (as written, and what it is) is in.
    fn contains(&self, ed: &Ed, code: &str, target: &Target) -> Result<bool, OpError> {
        let ValueSetDef::Compose {
            include, exclude, ..
        } = self;
        let mut inside = false;
        for r in include {
            if rule_matches(ed, r, code, target)? {
                inside = true;
                break;
            }
        }
        if !inside {
            return Ok(false);
        }
        for r in exclude {
            if rule_matches(ed, r, code, target)? {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

pub(super) fn rule_matches(
    ed: &Ed,
    r: &Rule,
    code: &str,
    target: &Target,
) -> Result<bool, OpError> {
    let code = code.trim();
    match target {
        Target::None => Ok(false),
        Target::Concept(ord) => {
            let id = ed.sctid(*ord)?;
            if let Some(list) = &r.concepts
                && !list.iter().any(|c| c.parse::<u64>().ok() == Some(id))
            {
                return Ok(false);
            }
            concept_matches(ed, &r.filters, *ord, id)
        }
        Target::Expression(focus) => {
            if let Some(list) = &r.concepts {
                return Ok(list.iter().any(|c| c == code));
            }
            if !r.expressions || focus.is_empty() {
                return Ok(false);
            }
            for &f in focus {
                if !concept_matches(ed, &r.filters, f, ed.sctid(f)?)? {
                    return Ok(false);
                }
            }
            Ok(true)
        }
    }
}

pub(super) fn concept_matches(
    ed: &Ed,
    filters: &[Filter],
    ord: u32,
    id: u64,
) -> Result<bool, OpError> {
    for f in filters {
        let ok = match *f {
            Filter::Equals(x) => x == id,
            Filter::IsA(x) => {
                x == id
                    || match ed.ordinal(x) {
                        Some(a) => ed.subsumes(a, ord)?,
                        None => false,
                    }
            }
            Filter::DescendentOf(x) => match ed.ordinal(x) {
                Some(a) => a != ord && ed.subsumes(a, ord)?,
                None => false,
            },
            Filter::In(refset) => ed.is_member(refset, id)?,
        };
        if !ok {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Checks the value set's own references against the edition: an
/// implicit value set on an unknown concept or refset is not found.
pub(super) fn check_implicit(ed: &Ed, url: &str, rule: &Rule) -> Result<(), OpError> {
    for f in &rule.filters {
        let ok = match *f {
            Filter::IsA(x) | Filter::DescendentOf(x) | Filter::Equals(x) => ed.ordinal(x).is_some(),
            Filter::In(r) => ed.refset(r).is_some(),
        };
        if !ok {
            return Err(vs_not_found(url));
        }
    }
    Ok(())
}

/// A term list as the suite words it: `'a' (en), 'b' (en) or 'c' (en)`.
fn choices(terms: &[(String, String)]) -> String {
    let items: Vec<String> = terms.iter().map(|(t, l)| format!("'{t}' ({l})")).collect();
    match items.len() {
        0 => String::new(),
        1 => format!("Valid display is {}", items[0]),
        n => format!(
            "Valid display is one of {n} choices: {} or {}",
            items[..n - 1].join(", "),
            items[n - 1]
        ),
    }
}

/// A display list as the suite words it for inactive displays: sorted,
/// quoted when not a single word.
fn quoted_list(terms: &[String]) -> String {
    let mut t: Vec<&String> = terms.iter().collect();
    t.sort();
    t.dedup();
    t.iter()
        .map(|s| {
            if s.chars().all(char::is_alphanumeric) {
                (*s).clone()
            } else {
                format!("\"{s}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// |Concept model attribute| and |Linkage concept|: every attribute type
/// descends from one of them.
const ATTRIBUTE_ROOTS: [u64; 2] = [410662002, 106237007];

/// Why an expression's attribute type cannot be one, if it cannot: it
/// must descend from [`ATTRIBUTE_ROOTS`] (when the edition has them).
fn misplaced_attribute(ed: &Ed, expr: &expression::Expression) -> Result<Option<String>, OpError> {
    let roots: Vec<u32> = ATTRIBUTE_ROOTS
        .iter()
        .filter_map(|&r| ed.ordinal(r))
        .collect();
    if roots.is_empty() {
        return Ok(None);
    }
    for a in expr.attributes() {
        let Some(t) = ed.ordinal(a.type_id) else {
            continue;
        };
        let mut ok = false;
        for &r in &roots {
            if r != t && ed.subsumes(r, t)? {
                ok = true;
                break;
            }
        }
        if !ok {
            let list: Vec<String> = ATTRIBUTE_ROOTS.iter().map(u64::to_string).collect();
            return Ok(Some(format!(
                "Concept {} is not valid in this context (must be a descendent of one of {})",
                a.type_id,
                list.join(",")
            )));
        }
    }
    Ok(None)
}

/// Validates `code` (an SCTID or an expression) with an optional
/// `display` against edition `e`.
pub fn validate_code(
    e: &ServedEdition,
    code: &str,
    display: Option<&str>,
) -> Result<(Outcome, Target), OpError> {
    let ed = &e.edition;
    let version_uri = &e.names.version_uri;
    let unknown = |what: &str| Issue {
        severity: "error",
        code: "code-invalid",
        tx_type: "invalid-code",
        message_id: Some("Unknown_Code_in_Version"),
        text: format!(
            "Unknown code '{what}' in the CodeSystem '{SNOMED_CT}' version '{version_uri}' ({})",
            e.edition_name()
        ),
        expression: "code",
    };
    let mut out = Outcome {
        code: code.to_owned(),
        ..Outcome::default()
    };
    let trimmed = code.trim();
    if trimmed.is_empty() || !trimmed.bytes().all(|b| b.is_ascii_digit()) {
        // An expression. Each way it can be invalid makes the code unknown,
        // with a note saying why.
        let invalid = |mut out: Outcome, why: String| {
            out.issues.push(unknown(code));
            out.issues.push(Issue {
                severity: "information",
                code: "code-invalid",
                tx_type: "invalid-code",
                message_id: None,
                text: format!("Not a valid expression: {why}"),
                expression: "code",
            });
            Ok((out, Target::None))
        };
        let expr = match expression::parse(code) {
            Ok(x) => x,
            Err(why) => return invalid(out, why.to_string()),
        };
        if let Some(missing) = expr
            .concepts()
            .into_iter()
            .find(|c| ed.ordinal(*c).is_none())
        {
            return invalid(out, format!("Concept {missing} not found"));
        }
        if let Some(why) = misplaced_attribute(ed, &expr)? {
            return invalid(out, why.to_string());
        }
        out.valid = true;
        out.display = Some(expr.render(&|c| term_of(ed, c).ok().flatten().map(str::to_owned)));
        out.issues.push(Issue {
            severity: "information",
            code: "informational",
            tx_type: "process-note",
            message_id: None,
            text: "The expression is grammatically correct and the concepts are valid, but the expression has not been checked against the SNOMED CT concept model (MRCM)".into(),
            expression: "code",
        });
        let focus = expr.focus.iter().filter_map(|&c| ed.ordinal(c)).collect();
        return Ok((out, Target::Expression(focus)));
    }
    let Some(ord) = trimmed.parse::<u64>().ok().and_then(|id| ed.ordinal(id)) else {
        out.issues.push(unknown(code));
        return Ok((out, Target::None));
    };
    let concept = ed.concept_at(ord)?;
    out.code = concept.id.to_string();
    out.valid = true;
    let preferred = match ed.preferred_term(ord)? {
        Some(t) => Some(t.to_owned()),
        None => ed.fsn(ord, &[])?.map(|d| d.term.to_owned()),
    };
    out.display = preferred.clone();
    if !concept.active {
        out.inactive = true;
        out.issues.push(Issue {
            severity: "warning",
            code: "business-rule",
            tx_type: "code-comment",
            message_id: None,
            text: format!(
                "The concept '{}' has a status of inactive and its use should be reviewed",
                concept.id
            ),
            expression: "code",
        });
    }
    if let Some(given) = display.filter(|d| !d.is_empty()) {
        let descriptions = ed.descriptions(ord)?;
        let active: Vec<&txmap_store::Description<'_>> =
            descriptions.iter().filter(|d| d.active).collect();
        let matches = |d: &&txmap_store::Description<'_>| d.term == given;
        let loose = |d: &&txmap_store::Description<'_>| d.term.eq_ignore_ascii_case(given);
        if active.iter().any(matches) || active.iter().any(loose) {
            // Valid.
        } else if descriptions
            .iter()
            .filter(|d| !d.active)
            .any(|d| d.term == given)
        {
            let terms: Vec<String> = active.iter().map(|d| d.term.to_owned()).collect();
            out.issues.push(Issue {
                severity: "warning",
                code: "invalid",
                tx_type: "display-comment",
                message_id: Some("INACTIVE_DISPLAY_FOUND"),
                text: format!(
                    "'{given}' is no longer considered a correct display for code '{}' (status = inactive). The correct display is one of {}.",
                    concept.id,
                    quoted_list(&terms)
                ),
                expression: "display",
            });
        } else {
            let mut terms: Vec<(String, String)> = Vec::new();
            if let Some(p) = &preferred {
                terms.push((p.clone(), "en".into()));
            }
            for d in active
                .iter()
                .filter(|d| d.type_id != txmap_store::sctid::DEFINITION)
            {
                let item = (d.term.to_owned(), d.language.to_owned());
                if !terms.contains(&item) {
                    terms.push(item);
                }
            }
            out.valid = false;
            out.issues.push(Issue {
                severity: "error",
                code: "invalid",
                tx_type: "invalid-display",
                message_id: None,
                text: format!(
                    "Wrong Display Name '{given}' for {SNOMED_CT}#{}. {} (for the language(s) '--')",
                    concept.id,
                    choices(&terms)
                ),
                expression: "display",
            });
        }
    }
    Ok((out, Target::Concept(ord)))
}

/// The answering Parameters.
fn parameters(
    e: &ServedEdition,
    out: &Outcome,
    result: bool,
    codeable: Option<&[Coding]>,
) -> Value {
    let mut p = vec![
        json!({ "name": "code", "valueCode": out.code }),
        json!({ "name": "result", "valueBoolean": result }),
        json!({ "name": "system", "valueUri": SNOMED_CT }),
        json!({ "name": "version", "valueString": e.names.version_uri }),
    ];
    if let Some(d) = &out.display {
        p.push(json!({ "name": "display", "valueString": d }));
    }
    if out.inactive {
        p.push(json!({ "name": "inactive", "valueBoolean": true }));
    }
    if let Some(cc) = codeable {
        let codings: Vec<Value> = cc
            .iter()
            .map(|c| {
                let mut v = json!({});
                for (k, x) in [
                    ("system", &c.system),
                    ("version", &c.version),
                    ("code", &c.code),
                    ("display", &c.display),
                ] {
                    if let Some(x) = x {
                        v[k] = Value::from(x.as_str());
                    }
                }
                v
            })
            .collect();
        p.push(json!({ "name": "codeableConcept", "valueCodeableConcept": { "coding": codings } }));
    }
    let errors: Vec<&str> = out
        .issues
        .iter()
        .filter(|i| i.severity == "error")
        .map(|i| i.text.as_str())
        .collect();
    if !errors.is_empty() {
        p.push(json!({ "name": "message", "valueString": errors.join("; ") }));
    }
    if !out.issues.is_empty() {
        let issues: Vec<Value> = out.issues.iter().map(Issue::to_json).collect();
        p.push(json!({
            "name": "issues",
            "resource": { "resourceType": "OperationOutcome", "issue": issues },
        }));
    }
    json!({ "resourceType": "Parameters", "parameter": p })
}

/// The code to validate, from `code`/`coding`/`codeableConcept`.
struct Input {
    code: String,
    system: Option<String>,
    version: Option<String>,
    display: Option<String>,
    codeable: Option<Vec<Coding>>,
}

fn input(params: &Params) -> Result<Input, OpError> {
    let system_version = params.text("system-version")?.and_then(|sv| {
        sv.strip_prefix(SNOMED_CT)
            .and_then(|r| r.strip_prefix('|'))
            .map(str::to_owned)
    });
    if let Some(cc) = params.codeable_concept("codeableConcept")? {
        let chosen = cc
            .iter()
            .find(|c| c.system.as_deref() == Some(SNOMED_CT) && c.code.is_some())
            .or_else(|| cc.first())
            .ok_or_else(|| OpError::invalid("the codeableConcept has no coding"))?;
        return Ok(Input {
            code: chosen
                .code
                .clone()
                .ok_or_else(|| OpError::required("code"))?,
            system: chosen.system.clone(),
            version: merge(
                "version",
                params.text("version")?,
                chosen.version.as_deref(),
            )?
            .map(str::to_owned)
            .or(system_version),
            display: chosen.display.clone(),
            codeable: Some(cc.to_vec()),
        });
    }
    let coding = params.coding("coding")?;
    let named = params.coded(coding)?;
    let display = merge(
        "display",
        params.text("display")?,
        coding.and_then(|c| c.display.as_deref()),
    )?;
    Ok(Input {
        code: named
            .code
            .ok_or_else(|| OpError::required("code"))?
            .to_owned(),
        system: named.system.map(str::to_owned),
        version: named.version.map(str::to_owned).or(system_version),
        display: display.map(str::to_owned),
        codeable: None,
    })
}

// ----- CodeSystem/$validate-code --------------------------------------------

/// `CodeSystem/$validate-code`.
pub async fn cs_validate_code(state: Arc<AppState>, call: Call) -> Response {
    respond(cs_inner(state, call.params).await)
}

async fn cs_inner(state: Arc<AppState>, params: Params) -> Result<Value, OpError> {
    let input = input(&params)?;
    let url = params.text("url")?;
    let system = merge("system", url, input.system.as_deref())?;
    check_system(system)?;
    let index = codesystem::resolve_edition(&state.editions, input.version.as_deref())?;
    blocking(state, move |state| {
        let e = &state.editions.list[index];
        e.count_use();
        let (out, _) = validate_code(e, &input.code, input.display.as_deref())?;
        Ok(parameters(e, &out, out.valid, input.codeable.as_deref()))
    })
    .await
}

/// A value set named by a request: its definition, the implicit URL and
/// rule when it is an implicit SNOMED CT value set, and the resource when
/// it was given (inline or as a `tx-resource`).
#[derive(Clone, Debug)]
pub struct Resolved {
    pub def: ValueSetDef,
    pub implicit: Option<(String, Rule)>,
    pub resource: Option<Value>,
}

/// The value set of `url` (implicit, or a matching `tx-resource`) or an
/// inline `valueSet`.
pub fn resolve_value_set(params: &Params) -> Result<Resolved, OpError> {
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
            Some(rule) => {
                let rule = rule?;
                Resolved {
                    def: ValueSetDef::Compose {
                        name: u.to_owned(),
                        include: vec![rule.clone()],
                        exclude: vec![],
                    },
                    implicit: Some((u.to_owned(), rule)),
                    resource: None,
                }
            }
            None => {
                let found = params.resources("tx-resource").into_iter().find(|r| {
                    r.get("resourceType").and_then(Value::as_str) == Some("ValueSet")
                        && r.get("url").and_then(Value::as_str) == Some(u)
                        && value_set_version
                            .is_none_or(|v| r.get("version").and_then(Value::as_str) == Some(v))
                });
                match found {
                    Some(vs) => Resolved {
                        def: value_set_def(vs)?,
                        implicit: None,
                        resource: Some(vs.clone()),
                    },
                    None => return Err(vs_not_found(u)),
                }
            }
        },
        (None, None) => return Err(OpError::required("url")),
    })
}

// ----- ValueSet/$validate-code ----------------------------------------------

/// `ValueSet/$validate-code`.
pub async fn vs_validate_code(state: Arc<AppState>, call: Call) -> Response {
    respond(vs_inner(state, call.params).await)
}

async fn vs_inner(state: Arc<AppState>, params: Params) -> Result<Value, OpError> {
    let input = input(&params)?;
    check_system(Some(input.system.as_deref().unwrap_or(SNOMED_CT)))?;
    let Resolved { def, implicit, .. } = resolve_value_set(&params)?;
    let version = input
        .version
        .clone()
        .or_else(|| def.version().map(str::to_owned));
    let index = codesystem::resolve_edition(&state.editions, version.as_deref())?;
    blocking(state, move |state| {
        let e = &state.editions.list[index];
        e.count_use();
        if let Some((u, rule)) = &implicit {
            check_implicit(&e.edition, u, rule)?;
        }
        let (mut out, target) = validate_code(e, &input.code, input.display.as_deref())?;
        // The concept model note is for CodeSystem validation only.
        out.issues.retain(|i| i.tx_type != "process-note");
        let mut result = out.valid;
        if target != Target::None && !def.contains(&e.edition, &input.code, &target)? {
            result = false;
            let shown = match (&target, &out.display) {
                (Target::Concept(_), Some(d)) => format!("{SNOMED_CT}#{} ('{d}')", out.code),
                _ => format!("{SNOMED_CT}#{}", out.code),
            };
            out.issues.push(Issue {
                severity: "error",
                code: "code-invalid",
                tx_type: "not-in-vs",
                message_id: Some("None_of_the_provided_codes_are_in_the_value_set_one"),
                text: format!(
                    "The provided code '{shown}' was not found in the value set '{}'",
                    def.name()
                ),
                expression: "code",
            });
        }
        Ok(parameters(e, &out, result, input.codeable.as_deref()))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_urls() {
        assert!(implicit_value_set("http://example.org/vs").is_none());
        let all = implicit_value_set("http://snomed.info/sct?fhir_vs")
            .unwrap()
            .unwrap();
        assert!(all.expressions);
        let isa = implicit_value_set("http://snomed.info/sct?fhir_vs=isa/71388002")
            .unwrap()
            .unwrap();
        assert_eq!(isa.filters, [Filter::IsA(71388002)]);
        let refset = implicit_value_set("http://snomed.info/sct?fhir_vs=refset/734139008")
            .unwrap()
            .unwrap();
        assert_eq!(refset.filters, [Filter::In(734139008)]);
        assert!(
            implicit_value_set("http://snomed.info/sct?fhir_vs=isa/x")
                .unwrap()
                .is_err()
        );
        assert!(
            implicit_value_set("http://snomed.info/sct?fhir_vs=ecl/x")
                .unwrap()
                .is_err()
        );
    }

    #[test]
    fn display_lists() {
        let t = |s: &str| (s.to_owned(), "en".to_owned());
        assert_eq!(choices(&[t("A")]), "Valid display is 'A' (en)");
        assert_eq!(
            choices(&[t("A"), t("B"), t("C")]),
            "Valid display is one of 3 choices: 'A' (en), 'B' (en) or 'C' (en)"
        );
        assert_eq!(
            quoted_list(&["Opisthorchis species".into(), "Opisthorchis".into()]),
            "Opisthorchis,\"Opisthorchis species\""
        );
    }
}
