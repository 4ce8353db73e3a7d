//! The SNOMED CT concept model (MRCM) as far as a post-coordinated
//! expression's attributes are concerned: each attribute must be allowed
//! on a focus concept (its *domain*) and its value must satisfy the
//! attribute's *range* constraint, an ECL expression.
//!
//! The rules come from the edition's MRCM attribute domain and attribute
//! range refsets, read (and the range constraints parsed) once per edition,
//! on the first expression validated; an edition without them is not
//! checked. Only mandatory
//! rules (|Mandatory concept model rule|) count. Rules for postcoordinated
//! content (|All postcoordinated SNOMED CT content|, |All SNOMED CT
//! content|) are used when an attribute has them, else the precoordinated
//! ones: most attributes have only those, and an expression should not
//! say what a concept could not. Cardinality and grouping rules and
//! concrete ranges are not checked.

use std::collections::HashMap;

use txmap_ecl_eval::{Budget, Subject};
use txmap_store::{Member, RefsetKind};

use txmap_store::Edition;
use txmap_terminology::Error;

use crate::expression::{AttributeValue, Expression};
use crate::{Stored, term_of};

/// |Mandatory concept model rule|.
const MANDATORY: &str = "723597001";
/// |All postcoordinated SNOMED CT content| and |All SNOMED CT content|.
const POSTCOORDINATED: [&str; 2] = ["723594008", "723595009"];
/// |All precoordinated SNOMED CT content|.
const PRECOORDINATED: &str = "723596005";

/// An edition's applicable mandatory rules, by attribute SCTID: read from
/// its MRCM refsets once (the server keeps them with the edition), with
/// the range constraints parsed.
#[derive(Debug, Default)]
pub struct Rules {
    domains: HashMap<u64, Vec<String>>,
    ranges: HashMap<u64, Ranges>,
}

#[derive(Debug)]
struct Ranges {
    text: Vec<String>,
    /// The ranges that are ECL (concrete ranges are not checked).
    parsed: Vec<txmap_ecl::Expr>,
}

impl Rules {
    pub fn load<B: AsRef<[u8]>>(ed: &Edition<B>) -> Result<Rules, Error> {
        let mut rules = Rules::default();
        for (kind, field) in [
            (RefsetKind::MrcmAttributeDomain, "domainId"),
            (RefsetKind::MrcmAttributeRange, "rangeConstraint"),
        ] {
            // Rules for postcoordinated content win over precoordinated
            // ones for the same attribute.
            let mut post: HashMap<u64, Vec<String>> = HashMap::new();
            let mut pre: HashMap<u64, Vec<String>> = HashMap::new();
            for info in ed.refsets().filter(|r| r.kind == kind) {
                let names = info.field_names();
                for m in ed.members(info.id).stored()? {
                    match applicable(names, &m, field) {
                        Some((true, value)) => post.entry(m.component).or_default().push(value),
                        Some((false, value)) => pre.entry(m.component).or_default().push(value),
                        None => {}
                    }
                }
            }
            for (attribute, post) in post {
                pre.insert(attribute, post);
            }
            match kind {
                RefsetKind::MrcmAttributeDomain => rules.domains = pre,
                _ => {
                    rules.ranges = pre
                        .into_iter()
                        .map(|(attribute, text)| {
                            let parsed = text
                                .iter()
                                .filter_map(|r| txmap_ecl::parse(r).ok())
                                .collect();
                            (attribute, Ranges { text, parsed })
                        })
                        .collect();
                }
            }
        }
        Ok(rules)
    }
}

/// The first attribute of `expr` that breaks a domain or range rule, and
/// why; `None` when every attribute passes (or the edition has no MRCM).
pub fn violation<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    rules: &Rules,
    expr: &Expression,
    budget: &Budget,
) -> Result<Option<String>, Error> {
    let focus: Vec<u32> = expr.focus.iter().filter_map(|&c| ed.ordinal(c)).collect();
    let named = |id: u64| -> Result<String, Error> {
        Ok(match term_of(ed, id)? {
            Some(t) => format!("{id} |{t}|"),
            None => id.to_string(),
        })
    };
    for a in expr.attributes() {
        if let Some(domains) = rules.domains.get(&a.type_id) {
            let mut allowed = false;
            'domains: for d in domains {
                let Some(d) = d.parse::<u64>().ok().and_then(|d| ed.ordinal(d)) else {
                    continue;
                };
                for &f in &focus {
                    if ed.subsumes(d, f).stored()? {
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
        let Some(ranges) = rules
            .ranges
            .get(&a.type_id)
            .filter(|r| !r.parsed.is_empty())
        else {
            continue;
        };
        let mut inside = false;
        for r in &ranges.parsed {
            match txmap_ecl_eval::matches(ed, r, &Subject::Concept(v), budget) {
                Ok(true) => {
                    inside = true;
                    break;
                }
                Ok(false) => {}
                Err(txmap_ecl_eval::EvalError::TooCostly { why }) => {
                    return Err(Error::too_costly(format!(
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
                ranges.text.join(" or ")
            )));
        }
    }
    Ok(None)
}

/// A member's `field` if it is a mandatory rule for pre- or postcoordinated
/// content, with whether it is for postcoordinated content.
fn applicable(names: &[String], m: &Member<'_>, field: &str) -> Option<(bool, String)> {
    let get = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .and_then(|i| m.field(i))
            .map(str::trim)
    };
    if get("ruleStrengthId") != Some(MANDATORY) {
        return None;
    }
    let value = get(field).filter(|v| !v.is_empty())?.to_owned();
    match get("contentTypeId") {
        Some(c) if POSTCOORDINATED.contains(&c) => Some((true, value)),
        Some(PRECOORDINATED) => Some((false, value)),
        _ => None,
    }
}
