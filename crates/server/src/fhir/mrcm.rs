//! The SNOMED CT concept model (MRCM) as far as a post-coordinated
//! expression's attributes are concerned: each attribute must be allowed
//! on a focus concept (its *domain*) and its value must satisfy the
//! attribute's *range* constraint, an ECL expression.
//!
//! The rules come from the edition's MRCM attribute domain and attribute
//! range refsets; an edition without them is not checked. Only mandatory
//! rules (|Mandatory concept model rule|) count. Rules for postcoordinated
//! content (|All postcoordinated SNOMED CT content|, |All SNOMED CT
//! content|) are used when an attribute has them, else the precoordinated
//! ones: most attributes have only those, and an expression should not
//! say what a concept could not. Cardinality and grouping rules and
//! concrete ranges are not checked.

use txmap_ecl_eval::{Budget, Subject};
use txmap_store::{Member, RefsetKind};

use super::codesystem::{Ed, term_of};
use super::expression::{AttributeValue, Expression};
use super::params::OpError;

/// |Mandatory concept model rule|.
const MANDATORY: &str = "723597001";
/// |All postcoordinated SNOMED CT content| and |All SNOMED CT content|.
const POSTCOORDINATED: [&str; 2] = ["723594008", "723595009"];
/// |All precoordinated SNOMED CT content|.
const PRECOORDINATED: &str = "723596005";

/// The first attribute of `expr` that breaks a domain or range rule, and
/// why; `None` when every attribute passes (or the edition has no MRCM).
pub fn violation(ed: &Ed, expr: &Expression, budget: &Budget) -> Result<Option<String>, OpError> {
    let focus: Vec<u32> = expr.focus.iter().filter_map(|&c| ed.ordinal(c)).collect();
    let named = |id: u64| -> Result<String, OpError> {
        Ok(match term_of(ed, id)? {
            Some(t) => format!("{id} |{t}|"),
            None => id.to_string(),
        })
    };
    for a in expr.attributes() {
        let domains = rules(ed, a.type_id, RefsetKind::MrcmAttributeDomain, "domainId")?;
        if !domains.is_empty() {
            let mut allowed = false;
            'domains: for d in &domains {
                let Some(d) = d.parse::<u64>().ok().and_then(|d| ed.ordinal(d)) else {
                    continue;
                };
                for &f in &focus {
                    if ed.subsumes(d, f)? {
                        allowed = true;
                        break 'domains;
                    }
                }
            }
            if !allowed {
                return Ok(Some(format!(
                    "the attribute {} is not allowed on {} by the concept model (its domain is {})",
                    named(a.type_id)?,
                    expr.focus
                        .iter()
                        .map(|&f| named(f))
                        .collect::<Result<Vec<_>, _>>()?
                        .join(" + "),
                    domains.join(" or ")
                )));
            }
        }
        let AttributeValue::Concept(value) = a.value else {
            continue;
        };
        let Some(v) = ed.ordinal(value) else { continue };
        let ranges = rules(
            ed,
            a.type_id,
            RefsetKind::MrcmAttributeRange,
            "rangeConstraint",
        )?;
        // Ranges that are not ECL (concrete ranges) are not checked.
        let parsed: Vec<txmap_ecl::Expr> = ranges
            .iter()
            .filter_map(|r| txmap_ecl::parse(r).ok())
            .collect();
        if parsed.is_empty() {
            continue;
        }
        let mut inside = false;
        for r in &parsed {
            match txmap_ecl_eval::matches(ed, r, &Subject::Concept(v), budget) {
                Ok(true) => {
                    inside = true;
                    break;
                }
                Ok(false) => {}
                Err(txmap_ecl_eval::EvalError::TooCostly { why }) => {
                    return Err(OpError::too_costly(format!(
                        "checking the concept model was too costly: {why}"
                    )));
                }
                // A rule naming what this edition lacks cannot be applied.
                Err(_) => inside = true,
            }
        }
        if !inside {
            return Ok(Some(format!(
                "the value {} is not in the range of the attribute {} ({})",
                named(value)?,
                named(a.type_id)?,
                ranges.join(" or ")
            )));
        }
    }
    Ok(None)
}

/// The `field` of the applicable mandatory rules for `attribute` in the
/// refsets of `kind`.
fn rules(ed: &Ed, attribute: u64, kind: RefsetKind, field: &str) -> Result<Vec<String>, OpError> {
    let mut post = Vec::new();
    let mut pre = Vec::new();
    for m in ed.component_refsets(attribute)? {
        let Some(info) = ed.refset(m.refset).filter(|r| r.kind == kind) else {
            continue;
        };
        let names = info.field_names();
        fn get<'m>(names: &[String], m: &Member<'m>, name: &str) -> Option<&'m str> {
            names
                .iter()
                .position(|n| n == name)
                .and_then(|i| m.field(i))
                .map(str::trim)
        }
        if get(names, &m, "ruleStrengthId") != Some(MANDATORY) {
            continue;
        }
        let Some(value) = get(names, &m, field).filter(|v| !v.is_empty()) else {
            continue;
        };
        match get(names, &m, "contentTypeId") {
            Some(c) if POSTCOORDINATED.contains(&c) => post.push(value.to_owned()),
            Some(PRECOORDINATED) => pre.push(value.to_owned()),
            _ => {}
        }
    }
    Ok(if post.is_empty() { pre } else { post })
}
