//! `CodeSystem/$lookup` of SNOMED CT: a concept's (or a simple
//! post-coordinated expression's) display, designations and properties as
//! the HL7 terminology suite expects them
//! (`tests/sct/lookup-procedure-response.json`): `code`, `system`,
//! `version`, `name` (`http://snomed.info/sct|<version URI>`), `display`
//! (the preferred term of the edition's default language refset), one
//! `designation` per active description, and the properties `inactive`,
//! `effectiveTime`, `module`, `parent`, `child` and one per defining
//! attribute (its type's SCTID as the code, with `code-display` and the
//! value's term as `description`). `sufficientlyDefined`, `normalForm` and
//! `normalFormTerse` (where role groups show) are returned only when asked
//! for. With `property` parameters only the properties named are returned
//! (`*` means all, an attribute's SCTID that attribute), and designations
//! only if `designation` is among them.
//!
//! A simple post-coordinated expression (`focus:{attribute=value}`, see
//! [`crate::expression`]) is looked up as its focus concept, with the
//! expression as `code`, its rendering with preferred terms as `display`
//! and only designation, and the refinement's attributes added.

use std::borrow::Cow;

use serde_json::Value;
use txmap_store::{Edition, sctid};
use txmap_terminology::Error;
use txmap_terminology::parameters::{Param, Parameters, Scalar};

use crate::language::DisplayLanguage;
use crate::{SNOMED_CT, SnomedCt, Stored, expression, term_of};

/// Which properties a `$lookup` returns.
#[derive(Clone, Debug, Default)]
pub struct PropertyFilter(Option<Vec<String>>);

impl PropertyFilter {
    /// From the request's `property` values; none means the defaults.
    pub fn new(names: &[&str]) -> PropertyFilter {
        if names.is_empty() {
            PropertyFilter(None)
        } else {
            PropertyFilter(Some(names.iter().map(|s| (*s).to_owned()).collect()))
        }
    }

    /// Whether `name` is returned: `default` when no filter was given.
    pub fn has(&self, name: &str, default: bool) -> bool {
        match &self.0 {
            None => default,
            Some(list) => list.iter().any(|p| p == name || p == "*"),
        }
    }
}

fn unknown_code<B: AsRef<[u8]>>(e: &SnomedCt<B>, code: &str) -> Error {
    Error::not_found(unknown_code_text(e, code))
}

fn unknown_code_text<B: AsRef<[u8]>>(e: &SnomedCt<B>, code: &str) -> String {
    format!(
        "Unable to find code '{code}' in {SNOMED_CT} version {}",
        e.version_uri()
    )
}

/// A concept's ordinal from its code as text.
pub fn find<B: AsRef<[u8]>>(e: &SnomedCt<B>, code: &str) -> Result<u32, Error> {
    if let Some(why) = crate::sctid_malformed(code) {
        return Err(Error::not_found(format!(
            "{}: {}",
            unknown_code_text(e, code),
            txmap_terminology::code::invalid_text(code, why)
        )));
    }
    if code.is_empty() || !code.bytes().all(|b| b.is_ascii_digit()) {
        return Err(unknown_code(e, code));
    }
    code.parse::<u64>()
        .ok()
        .and_then(|id| e.edition().ordinal(id))
        .ok_or_else(|| unknown_code(e, code))
}

/// A `property` parameter; parts in the order the HL7 runner sorts them.
fn property<'a>(
    code: impl Into<Cow<'a, str>>,
    code_display: Option<&'a str>,
    description: Option<&'a str>,
    value: (&'static str, Scalar<'a>),
) -> Param<'a> {
    let mut parts = vec![Param::text("code", "valueCode", code)];
    if let Some(d) = code_display {
        parts.push(Param::text("code-display", "valueString", d));
    }
    if let Some(d) = description {
        parts.push(Param::text("description", "valueString", d));
    }
    parts.push(Param::value("value", value.0, value.1));
    Param::parts("property", parts)
}

/// The display of a description type.
pub fn description_type_display<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    type_id: u64,
) -> Result<Option<&str>, Error> {
    Ok(match type_id {
        sctid::FSN => Some("Fully specified name"),
        sctid::SYNONYM => Some("Synonym"),
        sctid::DEFINITION => Some("Definition"),
        0 => None,
        other => term_of(ed, other)?,
    })
}

/// `YYYYMMDD` as a FHIR date.
fn fhir_date(d: u32) -> String {
    format!("{:04}-{:02}-{:02}", d / 10000, d / 100 % 100, d % 100)
}

/// A concrete value as a FHIR `value[x]`: `#12` an integer, `#1.5` a
/// decimal, `"text"` a string.
fn concrete(value: &str) -> (&'static str, Scalar<'_>) {
    if let Some(n) = value.strip_prefix('#') {
        if let Ok(i) = n.parse::<i64>() {
            return ("valueInteger", Scalar::Json(Value::from(i)));
        }
        if let Ok(Value::Number(d)) = serde_json::from_str::<Value>(n) {
            return ("valueDecimal", Scalar::Json(Value::Number(d)));
        }
        return ("valueString", Scalar::Str(n.into()));
    }
    let s = value
        .strip_prefix('"')
        .and_then(|v| v.strip_suffix('"'))
        .unwrap_or(value);
    ("valueString", Scalar::Str(s.into()))
}

/// The `$lookup` answer for `code`, an SCTID or a simple post-coordinated
/// expression ([`expression`]), in edition `e`.
pub fn lookup_code<'e, B: AsRef<[u8]>>(
    e: &'e SnomedCt<B>,
    code: &str,
    filter: &PropertyFilter,
    language: &DisplayLanguage,
) -> Result<Parameters<'e>, Error> {
    let parameters = if !code.is_empty() && code.bytes().all(|b| b.is_ascii_digit()) {
        concept_parameters(e, find(e, code)?, filter, language, true)?
    } else {
        let expr = expression::parse(code).map_err(|why| {
            Error::not_found(format!(
                "{}: it is neither an SCTID nor an expression ({why})",
                unknown_code_text(e, code)
            ))
        })?;
        expression_parameters(e, code, &expr, filter)?
    };
    Ok(Parameters(parameters))
}

/// The BCP-47 tag of the edition's default language refset.
fn default_language_tag<B: AsRef<[u8]>>(ed: &Edition<B>) -> &'static str {
    match ed.identity().default_language_refset {
        sctid::US_ENGLISH => "en-US",
        crate::language::GB_ENGLISH => "en-GB",
        _ => "en",
    }
}

/// A post-coordinated expression's lookup: its focus concept's, with the
/// expression as `code`, its rendering with preferred terms as `display`
/// and only designation, and the refinement's attributes added to the
/// focus concept's.
fn expression_parameters<'e, B: AsRef<[u8]>>(
    e: &'e SnomedCt<B>,
    code: &str,
    expr: &expression::Expression,
    filter: &PropertyFilter,
) -> Result<Vec<Param<'e>>, Error> {
    let ed = e.edition();
    for c in expr.concepts() {
        find(e, &c.to_string())?;
    }
    let [focus] = expr.focus[..] else {
        return Err(Error::NotSupported(format!(
            "$lookup of an expression with more than one focus concept is not supported: {code}"
        )));
    };
    let focus = find(e, &focus.to_string())?;
    let mut out = concept_parameters(e, focus, filter, &DisplayLanguage::default(), false)?;
    let display = expr.render(&|c| term_of(ed, c).ok().flatten().map(str::to_owned));
    out.retain(|p| p.name != "code" && p.name != "display");
    out.insert(0, Param::text("code", "valueCode", code.to_owned()));
    out.push(Param::text("display", "valueString", display.clone()));
    if filter.has("designation", true) {
        out.push(Param::parts(
            "designation",
            vec![
                Param::text("language", "valueCode", default_language_tag(ed)),
                Param::text("value", "valueString", display),
            ],
        ));
    }
    let own = ed.attributes(focus).stored()?;
    for a in expr.attributes() {
        let type_code = a.type_id.to_string();
        if !filter.has(&type_code, true) {
            continue;
        }
        match &a.value {
            expression::AttributeValue::Concept(v) => {
                if own.iter().any(|r| r.type_id == a.type_id && r.target == *v) {
                    continue;
                }
                out.push(property(
                    type_code,
                    term_of(ed, a.type_id)?,
                    term_of(ed, *v)?,
                    ("valueCode", Scalar::Str(v.to_string().into())),
                ));
            }
            expression::AttributeValue::Concrete(v) => {
                let (kind, value) = concrete(v);
                let value: Scalar<'e> = match value {
                    Scalar::Str(t) => Scalar::Str(t.into_owned().into()),
                    Scalar::Json(j) => Scalar::Json(j),
                    Scalar::Bool(b) => Scalar::Bool(b),
                    Scalar::Coding(..) => continue,
                };
                out.push(property(
                    type_code,
                    term_of(ed, a.type_id)?,
                    None,
                    (kind, value),
                ));
            }
        }
    }
    Ok(out)
}

/// The `$lookup` parameters of the concept at `ord`.
fn concept_parameters<'e, B: AsRef<[u8]>>(
    e: &'e SnomedCt<B>,
    ord: u32,
    filter: &PropertyFilter,
    language: &DisplayLanguage,
    designations: bool,
) -> Result<Vec<Param<'e>>, Error> {
    let ed = e.edition();
    let version_uri = e.version_uri();
    let concept = ed.concept_at(ord).stored()?;
    let mut out = vec![
        Param::text("code", "valueCode", concept.id.to_string()),
        Param::text("system", "valueUri", SNOMED_CT),
        Param::text("version", "valueString", version_uri),
        Param::text("name", "valueString", format!("{SNOMED_CT}|{version_uri}")),
    ];
    if let Some(d) = language.display(ed, ord)? {
        out.push(Param::text("display", "valueString", d));
    }
    if designations && filter.has("designation", true) {
        for d in ed
            .descriptions(ord)
            .stored()?
            .into_iter()
            .filter(|d| d.active)
        {
            let use_ = Scalar::Coding(
                SNOMED_CT,
                d.type_id.to_string().into(),
                description_type_display(ed, d.type_id)?.map(Cow::Borrowed),
            );
            out.push(Param::parts(
                "designation",
                vec![
                    Param::text("language", "valueCode", d.language),
                    Param::value("use", "valueCoding", use_),
                    Param::text("value", "valueString", d.term),
                ],
            ));
        }
    }
    if filter.has("inactive", true) {
        out.push(property(
            "inactive",
            None,
            None,
            ("valueBoolean", Scalar::Bool(!concept.active)),
        ));
    }
    if filter.has("effectiveTime", true) {
        out.push(property(
            "effectiveTime",
            None,
            None,
            (
                "valueDateTime",
                Scalar::Str(fhir_date(concept.effective_time).into()),
            ),
        ));
    }
    if filter.has("module", true) || filter.has("moduleId", false) {
        out.push(property(
            "module",
            None,
            term_of(ed, concept.module)?,
            ("valueCode", Scalar::Str(concept.module.to_string().into())),
        ));
    }
    if filter.has("sufficientlyDefined", false) {
        out.push(property(
            "sufficientlyDefined",
            None,
            None,
            ("valueBoolean", Scalar::Bool(concept.defined)),
        ));
    }
    for (name, list) in [
        ("parent", ed.parents(ord).stored()?),
        ("child", ed.children(ord).stored()?),
    ] {
        if !filter.has(name, true) {
            continue;
        }
        for o in list.iter() {
            out.push(property(
                name,
                None,
                ed.preferred_term(o).stored()?,
                (
                    "valueCode",
                    Scalar::Str(ed.sctid(o).stored()?.to_string().into()),
                ),
            ));
        }
    }
    for r in ed.attributes(ord).stored()? {
        let type_code = r.type_id.to_string();
        if filter.has(&type_code, true) {
            out.push(property(
                type_code,
                term_of(ed, r.type_id)?,
                term_of(ed, r.target)?,
                ("valueCode", Scalar::Str(r.target.to_string().into())),
            ));
        }
    }
    for c in ed.concrete_values(ord).stored()? {
        let type_code = c.type_id.to_string();
        if filter.has(&type_code, true) {
            out.push(property(
                type_code,
                term_of(ed, c.type_id)?,
                None,
                concrete(c.value),
            ));
        }
    }
    for (name, terse) in [("normalForm", false), ("normalFormTerse", true)] {
        if filter.has(name, false) {
            let text = normal_form(ed, ord, concept.defined, terse)?;
            out.push(property(
                name,
                None,
                None,
                ("valueString", Scalar::Str(text.into())),
            ));
        }
    }
    Ok(out)
}

/// The concept's inferred definition in SNOMED CT compositional grammar:
/// `===` (sufficiently defined) or `<<<` (primitive), the parents, then
/// ungrouped attributes and `{…}` role groups. Terse leaves out terms and
/// spaces.
pub fn normal_form<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    ord: u32,
    defined: bool,
    terse: bool,
) -> Result<String, Error> {
    let concept_ref = |id: u64| -> Result<String, Error> {
        Ok(match (terse, term_of(ed, id)?) {
            (false, Some(t)) => format!("{id}|{t}|"),
            _ => id.to_string(),
        })
    };
    let (and, colon, comma, eq) = if terse {
        ("+", ":", ",", "=")
    } else {
        (" + ", " : ", ", ", " = ")
    };
    let mut parents: Vec<u64> = ed
        .parents(ord)
        .stored()?
        .iter()
        .map(|o| ed.sctid(o))
        .collect::<Result<_, _>>()
        .stored()?;
    parents.sort_unstable();
    let mut out = String::from(if defined { "===" } else { "<<<" });
    if !terse {
        out.push(' ');
    }
    let focus: Vec<String> = parents
        .iter()
        .map(|&p| concept_ref(p))
        .collect::<Result<_, _>>()?;
    out.push_str(&focus.join(and));
    // (group, "type = value"), sorted by group then text.
    let mut refinements: Vec<(u16, String)> = Vec::new();
    for r in ed.attributes(ord).stored()? {
        refinements.push((
            r.group,
            format!("{}{eq}{}", concept_ref(r.type_id)?, concept_ref(r.target)?),
        ));
    }
    for c in ed.concrete_values(ord).stored()? {
        refinements.push((
            c.group,
            format!("{}{eq}{}", concept_ref(c.type_id)?, c.value),
        ));
    }
    if refinements.is_empty() {
        return Ok(out);
    }
    refinements.sort();
    out.push_str(colon);
    let mut pieces: Vec<String> = refinements
        .iter()
        .filter(|(g, _)| *g == 0)
        .map(|(_, s)| s.clone())
        .collect();
    let mut groups: Vec<u16> = refinements
        .iter()
        .map(|(g, _)| *g)
        .filter(|&g| g != 0)
        .collect();
    groups.dedup();
    for g in groups {
        let inner: Vec<&str> = refinements
            .iter()
            .filter(|(x, _)| *x == g)
            .map(|(_, s)| s.as_str())
            .collect();
        pieces.push(if terse {
            format!("{{{}}}", inner.join(comma))
        } else {
            format!("{{ {} }}", inner.join(comma))
        });
    }
    out.push_str(&pieces.join(comma));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dates_and_concrete_values() {
        assert_eq!(fhir_date(20050131), "2005-01-31");
        assert_eq!(concrete("#12"), ("valueInteger", Scalar::Json(json!(12))));
        assert_eq!(concrete("#1.5"), ("valueDecimal", Scalar::Json(json!(1.5))));
        assert_eq!(
            concrete("\"abc\""),
            ("valueString", Scalar::Str("abc".into()))
        );
    }

    #[test]
    fn the_filter_defaults_only_without_names() {
        let none = PropertyFilter::new(&[]);
        assert!(none.has("parent", true) && !none.has("normalForm", false));
        let some = PropertyFilter::new(&["normalForm"]);
        assert!(!some.has("parent", true) && some.has("normalForm", false));
        assert!(PropertyFilter::new(&["*"]).has("anything", false));
    }
}
