//! `CodeSystem/$validate-code` and `ValueSet/$validate-code` for SNOMED CT.
//!
//! The code comes from `code` (+`system`, `version`, `display`), `coding`
//! or the SNOMED CT coding of `codeableConcept` (a concept with several
//! codings against a value set, and a code without a system, go to the
//! generic engine, which weighs every coding and infers systems:
//! [`crate::operations`]); the edition from
//! `version`, `system-version` (`http://snomed.info/sct|<version>`), the
//! value set's include, or the default edition (see
//! [`crate::editions::resolve`]). An SCTID is checked against the
//! edition (unknown → `result` false; inactive → a warning and `inactive`);
//! a `display` against the concept's active descriptions in the languages
//! asked for (`displayLanguage`, else `Accept-Language`; one of its
//! inactive ones is a warning, anything else an error, worded with those
//! languages; with no description in them, the default language's
//! display is information); a simple
//! post-coordinated expression ([`expression`]) has each concept checked,
//! each attribute type checked to descend from |Concept model attribute|
//! or |Linkage concept|, and each attribute checked against the MRCM
//! domain and range rules ([`mrcm`]): a violation is a warning (the HL7
//! suite counts such expressions valid); the rest of the concept model
//! (cardinality, grouping) is not checked, which an informational issue
//! says.
//!
//! `ValueSet/$validate-code` asks [`crate::valueset`] whether the code is
//! in the value set named by `url` or given inline: one membership test
//! per include, never an expansion.
//!
//! Messages are worded as the HL7 terminology suite expects.

use serde_json::{Value, json};
use txmap_ecl_eval::{Budget, ExpressionSubject, SubjectAttribute, SubjectValue};
use txmap_store::Edition;
use txmap_terminology::parameters::{Param, Parameters, Scalar};
use txmap_terminology::params::{Coding, Params, merge};
use txmap_terminology::{Error, Issue, Request};

use crate::language::DisplayLanguage;
use crate::operations::Editions;
use crate::valueset::{Resolved, Target, check_implicit, resolve_value_set};
use crate::{SNOMED_CT, SnomedCt, Stored, check_system, expression, mrcm, term_of};

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
fn misplaced_attribute<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    expr: &expression::Expression,
) -> Result<Option<String>, Error> {
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
            if r != t && ed.subsumes(r, t).stored()? {
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

/// An expression (whose concepts are known) as ECL sees it: ungrouped
/// attributes in group 0, each `{…}` group numbered from 1.
fn subject<B: AsRef<[u8]>>(ed: &Edition<B>, expr: &expression::Expression) -> ExpressionSubject {
    let mut attributes = Vec::new();
    let mut push = |group: u16, a: &expression::Attribute| {
        let value = match &a.value {
            expression::AttributeValue::Concept(c) => match ed.ordinal(*c) {
                Some(o) => SubjectValue::Concept(o),
                None => return,
            },
            expression::AttributeValue::Concrete(v) => match v.strip_prefix('#') {
                Some(n) => match n.parse::<f64>() {
                    Ok(n) => SubjectValue::Number(n),
                    Err(_) => return,
                },
                None => SubjectValue::String(v.trim_matches('"').to_owned()),
            },
        };
        attributes.push(SubjectAttribute {
            group,
            type_id: a.type_id,
            value,
        });
    };
    let mut group = 0u16;
    for r in &expr.refinements {
        match r {
            expression::Refinement::Attribute(a) => push(0, a),
            expression::Refinement::Group(g) => {
                group = group.saturating_add(1);
                for a in g {
                    push(group, a);
                }
            }
        }
    }
    ExpressionSubject {
        focus: expr.focus.iter().filter_map(|&c| ed.ordinal(c)).collect(),
        attributes,
    }
}

/// Validates `code` (an SCTID or an expression) with an optional
/// `display` against edition `e`.
pub fn validate_code<B: AsRef<[u8]>>(
    e: &SnomedCt<B>,
    code: &str,
    display: Option<&str>,
    language: &Language,
    budget: &Budget,
) -> Result<(Outcome, Target), Error> {
    let ed = e.edition();
    let version_uri = e.version_uri();
    let unknown = |what: &str| Issue {
        severity: "error",
        code: "code-invalid",
        tx_type: "invalid-code",
        message_id: Some("Unknown_Code_in_Version"),
        text: format!(
            "Unknown code '{what}' in the CodeSystem '{SNOMED_CT}' version '{version_uri}' ({})",
            e.edition_name()
        ),
        expression: Some("code".into()),
    };
    let mut out = Outcome {
        code: code.to_owned(),
        ..Outcome::default()
    };
    // Checked as sent: padding is not a code, nor is an SCTID with
    // leading zeros ([`txmap_terminology::code`]).
    if let Some(why) = txmap_terminology::code::malformed(code) {
        out.issues
            .push(txmap_terminology::code::issue(code, why, "code"));
        return Ok((out, Target::None));
    }
    if let Some(why) = crate::sctid_malformed(code) {
        out.issues.push(unknown(code));
        out.issues.push(Issue {
            severity: "information",
            ..txmap_terminology::code::issue(code, why, "code")
        });
        return Ok((out, Target::None));
    }
    if code.is_empty() || !code.bytes().all(|b| b.is_ascii_digit()) {
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
                expression: Some("code".into()),
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
        // The HL7 suite treats an expression outside the concept model as
        // valid (so do its reference servers): a violation is a warning,
        // and like the note it replaces, a process note for CodeSystem
        // validation only.
        let rules = e.mrcm()?;
        out.issues.push(match mrcm::violation(ed, rules, &expr, budget)? {
            Some(why) => Issue {
                severity: "warning",
                code: "business-rule",
                tx_type: "process-note",
                message_id: None,
                text: format!(
                    "The expression is grammatically correct and the concepts are valid, but it does not conform to the SNOMED CT concept model (MRCM): {why}"
                ),
                expression: Some("code".into()),
            },
            None => Issue {
                severity: "information",
                code: "informational",
                tx_type: "process-note",
                message_id: None,
                // Domains and ranges were checked; cardinality and grouping
                // were not.
                text: "The expression is grammatically correct and the concepts are valid, but the expression has not been checked against the SNOMED CT concept model (MRCM)".into(),
                expression: Some("code".into()),
            },
        });
        return Ok((out, Target::Expression(subject(ed, &expr))));
    }
    // `concept` takes the SCTID from the index entry that found it: a cold
    // call reads no page of `ConceptIds`.
    let found = match code.parse::<u64>() {
        Ok(id) => ed.concept(id).stored()?,
        Err(_) => None,
    };
    let Some(concept) = found else {
        out.issues.push(unknown(code));
        return Ok((out, Target::None));
    };
    let ord = concept.ordinal;
    out.code = concept.id.to_string();
    out.valid = true;
    let preferred = language.wanted.display(ed, ord)?.map(str::to_owned);
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
            expression: Some("code".into()),
        });
    }
    if let Some(given) = display.filter(|d| !d.is_empty()) {
        let descriptions = ed.descriptions(ord).stored()?;
        let active: Vec<&txmap_store::Description<'_>> =
            descriptions.iter().filter(|d| d.active).collect();
        // The displays in the languages asked for (all, when none is).
        let in_language: Vec<&txmap_store::Description<'_>> = active
            .iter()
            .filter(|d| language.text.is_none() || language.wanted.accepts(d.language))
            .copied()
            .collect();
        let langs = language.text.as_deref().unwrap_or("--");
        let matches = |d: &&txmap_store::Description<'_>| d.term == given;
        let loose = |d: &&txmap_store::Description<'_>| d.term.eq_ignore_ascii_case(given);
        if in_language.is_empty() {
            // Nothing in the languages asked for: the default language's
            // display is right or wrong on its own.
            let ok = active.iter().any(matches) || active.iter().any(loose);
            out.valid &= ok;
            out.issues.push(Issue {
                severity: if ok { "information" } else { "error" },
                code: "invalid",
                tx_type: "invalid-display",
                message_id: Some(if ok {
                    "NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_OK"
                } else {
                    "NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_ERR"
                }),
                text: if ok {
                    format!(
                        "There are no valid display names found for the code {SNOMED_CT}#{} for language(s) '{langs}'. The display is '{given}' which is a valid display for the default language",
                        concept.id
                    )
                } else {
                    format!(
                        "Wrong Display Name '{given}' for {SNOMED_CT}#{}. There are no valid display names found for language(s) '{langs}'. Default display is '{}'",
                        concept.id,
                        preferred.as_deref().unwrap_or_default()
                    )
                },
                expression: Some("display".into()),
            });
        } else if in_language.iter().any(matches) || in_language.iter().any(loose) {
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
                expression: Some("display".into()),
            });
        } else {
            let mut terms: Vec<(String, String)> = Vec::new();
            if let Some(p) = &preferred {
                let lang = in_language
                    .iter()
                    .find(|d| d.term == p.as_str())
                    .map_or("en", |d| d.language);
                terms.push((p.clone(), lang.to_owned()));
            }
            for d in in_language
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
                    "Wrong Display Name '{given}' for {SNOMED_CT}#{}. {} (for the language(s) '{langs}')",
                    concept.id,
                    choices(&terms)
                ),
                expression: Some("display".into()),
            });
        }
    }
    Ok((out, Target::Concept(ord)))
}

/// The display languages of a validation: as asked (`displayLanguage`,
/// else `Accept-Language`), for messages, and what they want.
#[derive(Clone, Debug, Default)]
pub struct Language {
    pub text: Option<String>,
    pub wanted: DisplayLanguage,
}

impl Language {
    pub fn of(call: &Request) -> Result<Language, Error> {
        let text = call.display_language_param()?.map(str::to_owned);
        Ok(Language {
            wanted: DisplayLanguage::parse(text.as_deref()),
            text,
        })
    }
}

/// The answering Parameters.
fn parameters<'a, B: AsRef<[u8]>>(
    e: &'a SnomedCt<B>,
    out: &'a Outcome,
    result: bool,
    codeable: Option<&[Coding]>,
) -> Parameters<'a> {
    let mut p = vec![
        Param::text("code", "valueCode", out.code.as_str()),
        Param::value("result", "valueBoolean", Scalar::Bool(result)),
        Param::text("system", "valueUri", SNOMED_CT),
        Param::text("version", "valueString", e.version_uri()),
    ];
    if let Some(d) = &out.display {
        p.push(Param::text("display", "valueString", d.as_str()));
    }
    if out.inactive {
        p.push(Param::value("inactive", "valueBoolean", Scalar::Bool(true)));
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
        p.push(Param::json(
            "codeableConcept",
            "valueCodeableConcept",
            json!({ "coding": codings }),
        ));
    }
    let errors: Vec<&str> = out
        .issues
        .iter()
        .filter(|i| i.severity == "error")
        .map(|i| i.text.as_str())
        .collect();
    if !errors.is_empty() {
        let errors: Vec<_> = errors
            .iter()
            .map(|e| txmap_terminology::error::shown(e))
            .collect();
        p.push(Param::text("message", "valueString", errors.join("; ")));
    }
    if !out.issues.is_empty() {
        p.push(Param::resource(
            "issues",
            txmap_terminology::error::outcome(&out.issues),
        ));
    }
    Parameters(p)
}

/// The code to validate, from `code`/`coding`/`codeableConcept`.
struct Input {
    code: String,
    system: Option<String>,
    version: Option<String>,
    display: Option<String>,
    codeable: Option<Vec<Coding>>,
}

fn input(params: &Params) -> Result<Input, Error> {
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
            .ok_or_else(|| Error::invalid("the codeableConcept has no coding"))?;
        return Ok(Input {
            code: chosen.code.clone().ok_or_else(|| Error::required("code"))?,
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
            .ok_or_else(|| Error::required("code"))?
            .to_owned(),
        system: named.system.map(str::to_owned),
        version: named.version.map(str::to_owned).or(system_version),
        display: display.map(str::to_owned),
        codeable: None,
    })
}

// ----- CodeSystem/$validate-code --------------------------------------------

/// `CodeSystem/$validate-code` of a SNOMED CT code or expression, as
/// JSON text.
pub fn cs_validate_code<B: AsRef<[u8]>>(
    editions: &Editions<B>,
    call: &Request,
) -> Result<String, Error> {
    let params = &call.params;
    let input = input(params)?;
    let url = params.text("url")?;
    let system = merge("system", url, input.system.as_deref())?;
    check_system(system)?;
    let e = editions.edition(input.version.as_deref())?;
    let budget = e.budget(call.deadline);
    let language = Language::of(call)?;
    let (out, _) = validate_code(e, &input.code, input.display.as_deref(), &language, &budget)?;
    Ok(parameters(e, &out, out.valid, input.codeable.as_deref()).to_json())
}

// ----- ValueSet/$validate-code ----------------------------------------------

/// `ValueSet/$validate-code` against a SNOMED CT value set, as JSON text.
pub fn vs_validate_code<B: AsRef<[u8]>>(
    editions: &Editions<B>,
    call: &Request,
) -> Result<String, Error> {
    let params = &call.params;
    let input = input(params)?;
    check_system(Some(input.system.as_deref().unwrap_or(SNOMED_CT)))?;
    let Resolved { def, implicit, .. } = resolve_value_set(params)?;
    let version = input
        .version
        .clone()
        .or_else(|| def.version().map(str::to_owned));
    let e = editions.edition(version.as_deref())?;
    let budget = e.budget(call.deadline);
    let language = Language::of(call)?;
    if let Some(u) = &implicit {
        check_implicit(e.edition(), u)?;
    }
    let (mut out, target) =
        validate_code(e, &input.code, input.display.as_deref(), &language, &budget)?;
    // The concept model note is for CodeSystem validation only.
    out.issues.retain(|i| i.tx_type != "process-note");
    let mut result = out.valid;
    if target != Target::None && !def.contains(e.edition(), &input.code, &target, &budget)? {
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
            expression: Some("code".into()),
        });
    }
    Ok(parameters(e, &out, result, input.codeable.as_deref()).to_json())
}

#[cfg(test)]
mod tests {
    use super::*;

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
