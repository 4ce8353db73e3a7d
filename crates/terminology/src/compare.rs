//! `ValueSet/$compare`: how the codes of two value sets relate — the
//! same, one a subset or a superset of the other, disjoint, overlapping,
//! or both empty — as tx.fhir.org answers it (the HL7 suite's `compare`
//! and `related2` suites).
//!
//! The definitions decide it where that is sound, without expanding
//! (`performed-expansion` false):
//!
//! * value sets that only enumerate codes compare their code lists;
//! * value sets with the same includes (in any order) are the same;
//! * otherwise each code system apart: a system only one side includes
//!   adds codes the other lacks; two includes of a whole system are the
//!   same, whatever versions they name (the code system, not one of its
//!   versions, is what both select); two enumerations compare; and one
//!   `is-a` filter on each side compares by subsumption when the code
//!   system is a resource whose hierarchy is a tree — where a concept has
//!   one parent, two subtrees either nest or share nothing. A
//!   polyhierarchy (SNOMED CT) gives no such answer, so it is expanded.
//!
//! Anything else — excludes, imported value sets, other filters, filters
//! against enumerations, versions that differ — is decided by expanding
//! both and comparing their codes by system and code. An expansion that
//! fails (an unknown code system, too many codes) makes the answer
//! `indeterminate`, with the reason; a spent time budget is an error.
//!
//! The answer lists the codes found on both sides (`common-codes`), only
//! in this value set (`missing-codes`: missing from the other) and only in
//! the other (`extra-codes`) when it compared codes: sorted for
//! enumerations, in expansion order for expansions, where a `same` answer
//! lists none.

use std::collections::{HashMap, HashSet};

use crate::engine::Engine;
use crate::error::Error;
use crate::parameters::{Param, Parameters, Scalar};
use crate::provider::CodeSystemProvider;
use crate::request::Request;
use crate::resolver::Resolver;
use crate::valueset::{FilterDef, Rule, ValueSet};

/// How this value set's codes relate to the other's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    Same,
    /// Every code of this one is in the other, which has more.
    Subset,
    /// Every code of the other is in this one, which has more.
    Superset,
    Disjoint,
    Overlapping,
    /// Neither has a code.
    Empty,
}

impl Relation {
    pub fn code(self) -> &'static str {
        match self {
            Relation::Same => "same",
            Relation::Subset => "subset",
            Relation::Superset => "superset",
            Relation::Disjoint => "disjoint",
            Relation::Overlapping => "overlapping",
            Relation::Empty => "empty",
        }
    }

    /// From what holds between the two sets.
    fn of(this_in_other: bool, other_in_this: bool, shared: bool) -> Relation {
        match (this_in_other, other_in_this) {
            (true, true) => Relation::Same,
            (true, false) => Relation::Subset,
            (false, true) => Relation::Superset,
            (false, false) if shared => Relation::Overlapping,
            (false, false) => Relation::Disjoint,
        }
    }
}

/// The codes a comparison found: on both sides, only in this value set,
/// only in the other.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Codes {
    pub common: Vec<String>,
    pub missing: Vec<String>,
    pub extra: Vec<String>,
}

impl Codes {
    /// Each list in code order (how enumerations report them).
    fn sort(&mut self) {
        for list in [&mut self.common, &mut self.missing, &mut self.extra] {
            list.sort();
        }
    }
}

/// A comparison's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comparison {
    /// `Err`: indeterminate, for the reason given.
    pub relation: Result<Relation, String>,
    pub expanded: bool,
    /// The codes compared, when codes were compared.
    pub codes: Option<Codes>,
}

/// `ValueSet/$compare`: `thisValueSet` or `thisUrl` against
/// `otherValueSet` or `otherUrl`.
pub fn compare(req: &Request) -> Result<Parameters<'static>, Error> {
    let (mut this_inline, mut other_inline) = (None, None);
    let this = side(req, "thisValueSet", "thisUrl", &mut this_inline)?;
    let other = side(req, "otherValueSet", "otherUrl", &mut other_inline)?;
    let engine = Engine::new(&req.resolver, req.max_expansion, true)
        .with_stop(req.stop())
        .with_versions(crate::version::VersionRules::from_request(req));
    let c = compare_sets(this, other, &req.resolver, &engine)?;
    Ok(answer(this, other, &c))
}

/// The value set one side names: the inline `resource` parameter, else
/// the canonical in `url` (`url|version` allowed).
fn side<'r>(
    req: &'r Request,
    resource: &str,
    url: &str,
    inline: &'r mut Option<ValueSet>,
) -> Result<&'r ValueSet, Error> {
    if let Some(r) = req.resource(resource) {
        let vs = ValueSet::from_json(r)
            .ok_or_else(|| Error::Invalid(format!("The {resource} parameter is not a ValueSet")))?;
        return Ok(inline.insert(vs));
    }
    let Some(canonical) = req.text(url) else {
        return Err(Error::Invalid(format!(
            "Either {resource} or {url} must be given"
        )));
    };
    req.resolver
        .value_set(&canonical, None)
        .ok_or(Error::ValueSetNotFound { url: canonical })
}

/// Compares two value sets: by their definitions where those decide,
/// else by expanding both with `engine`.
pub fn compare_sets<'r>(
    this: &'r ValueSet,
    other: &'r ValueSet,
    resolver: &'r Resolver,
    engine: &Engine<'r>,
) -> Result<Comparison, Error> {
    if let Some((relation, codes)) = by_definition(this, other, resolver) {
        return Ok(Comparison {
            relation: Ok(relation),
            expanded: false,
            codes,
        });
    }
    let expand = |vs: &'r ValueSet| -> Result<Result<Vec<(String, String)>, String>, Error> {
        match engine.expand(vs) {
            Ok(entries) => {
                let mut seen = HashSet::new();
                Ok(Ok(entries
                    .iter()
                    .map(|e| (e.cs.url().to_owned(), e.cs.code(e.id).into_owned()))
                    .filter(|k| seen.insert(k.clone()))
                    .collect()))
            }
            // The request's budget: not an answer about the value sets.
            Err(e @ (Error::OutOfTime | Error::Budget(_))) => Err(e),
            Err(e) => Ok(Err(format!("This expansion failed: {e}"))),
        }
    };
    let (a, b) = match (expand(this)?, expand(other)?) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(why), _) | (_, Err(why)) => {
            return Ok(Comparison {
                relation: Err(why),
                expanded: true,
                codes: None,
            });
        }
    };
    let (relation, mut codes) = relate(&a, &b);
    if relation == Relation::Same {
        codes = Codes::default();
    }
    Ok(Comparison {
        relation: Ok(relation),
        expanded: true,
        codes: Some(codes),
    })
}

/// Two lists of (system, code), each without repeats, compared; the
/// lists of codes keep each side's order.
fn relate(this: &[(String, String)], other: &[(String, String)]) -> (Relation, Codes) {
    if this.is_empty() && other.is_empty() {
        return (Relation::Empty, Codes::default());
    }
    let (in_this, in_other): (HashSet<_>, HashSet<_>) =
        (this.iter().collect(), other.iter().collect());
    let codes = |list: &[(String, String)], keep: &dyn Fn(&(String, String)) -> bool| {
        list.iter()
            .filter(|k| keep(k))
            .map(|(_, c)| c.clone())
            .collect::<Vec<_>>()
    };
    let c = Codes {
        common: codes(this, &|k| in_other.contains(k)),
        missing: codes(this, &|k| !in_other.contains(k)),
        extra: codes(other, &|k| !in_this.contains(k)),
    };
    let relation = Relation::of(
        c.missing.is_empty(),
        c.extra.is_empty(),
        !c.common.is_empty(),
    );
    (relation, c)
}

/// What the definitions alone decide, or `None` when only the expansions
/// can.
fn by_definition(
    this: &ValueSet,
    other: &ValueSet,
    resolver: &Resolver,
) -> Option<(Relation, Option<Codes>)> {
    let (a, b) = (&this.compose, &other.compose);
    let plain = |c: &crate::valueset::Compose| {
        c.exclude.is_empty()
            && c.include
                .iter()
                .all(|r| r.value_sets.is_empty() && r.system.is_some())
    };
    if !plain(a) || !plain(b) || a.inactive != b.inactive {
        return None;
    }
    if a.include.iter().chain(&b.include).all(enumerates) {
        let (relation, mut codes) = relate(&enumerated(&a.include), &enumerated(&b.include));
        codes.sort();
        return Some((relation, Some(codes)));
    }
    if rule_keys(&a.include) == rule_keys(&b.include) {
        return Some((Relation::Same, None));
    }
    // System by system: codes of two systems are never the same code.
    // Each system's rules on this side and the other, in order of first
    // appearance.
    let mut order: Vec<&str> = Vec::new();
    let mut parts: HashMap<&str, (Vec<&Rule>, Vec<&Rule>)> = HashMap::new();
    for (side, rules) in [(0, &a.include), (1, &b.include)] {
        for r in rules {
            let s = r.system.as_deref().unwrap_or_default();
            let part = parts.entry(s).or_insert_with(|| {
                order.push(s);
                (Vec::new(), Vec::new())
            });
            if side == 0 { &mut part.0 } else { &mut part.1 }.push(r);
        }
    }
    let (mut this_in_other, mut other_in_this, mut shared) = (true, true, false);
    let mut listed: Option<Codes> = None;
    for s in order {
        let (x, y) = parts.remove(s).unwrap_or_default();
        // A part only one side has adds codes the other lacks (a rule is
        // taken to select something).
        let relation = if y.is_empty() {
            Relation::Superset
        } else if x.is_empty() {
            Relation::Subset
        } else if x.iter().chain(&y).all(|r| whole(r)) {
            Relation::Same
        } else if x.iter().chain(&y).all(|r| enumerates(r)) {
            let (relation, codes) = relate(
                &enumerated(x.iter().copied()),
                &enumerated(y.iter().copied()),
            );
            let l = listed.get_or_insert_with(Codes::default);
            l.common.extend(codes.common);
            l.missing.extend(codes.missing);
            l.extra.extend(codes.extra);
            relation
        } else {
            by_subsumption(&x, &y, resolver)?
        };
        let only_one_side = x.is_empty() || y.is_empty();
        this_in_other &= matches!(relation, Relation::Same | Relation::Subset);
        other_in_this &= matches!(relation, Relation::Same | Relation::Superset);
        shared |= !only_one_side && relation != Relation::Disjoint;
    }
    if let Some(l) = &mut listed {
        l.sort();
    }
    Some((Relation::of(this_in_other, other_in_this, shared), listed))
}

/// One `concept is-a` filter on each side, on the same version of a code
/// system given as a resource whose hierarchy is a tree: the two
/// subtrees nest or share nothing.
fn by_subsumption(this: &[&Rule], other: &[&Rule], resolver: &Resolver) -> Option<Relation> {
    let ([x], [y]) = (this, other) else {
        return None;
    };
    if x.version != y.version {
        return None;
    }
    let (Some(p), Some(q)) = (is_a(x), is_a(y)) else {
        return None;
    };
    let cs = resolver
        .code_system(x.system.as_deref()?, x.version.as_deref())
        .ok()?;
    cs.resource()?;
    if !is_tree(cs) {
        return None;
    }
    let (p, q) = (cs.locate(p)?.id, cs.locate(q)?.id);
    Some(match (cs.subsumed_by(p, q), cs.subsumed_by(q, p)) {
        (true, true) => Relation::Same,
        (true, false) => Relation::Subset,
        (false, true) => Relation::Superset,
        (false, false) => Relation::Disjoint,
    })
}

/// The code of a rule that is exactly one `concept is-a` filter.
fn is_a(r: &Rule) -> Option<&str> {
    match r.filters.as_slice() {
        [
            FilterDef {
                property,
                op,
                value: Some(v),
            },
        ] if r.concepts.is_empty() && property == "concept" && op == "is-a" => Some(v),
        _ => None,
    }
}

/// Whether every concept has at most one parent.
fn is_tree(cs: &dyn CodeSystemProvider) -> bool {
    (0..cs.len() as u32).all(|id| cs.parents(id).len() <= 1)
}

/// A rule that lists codes and has no filter.
fn enumerates(r: &Rule) -> bool {
    !r.concepts.is_empty() && r.filters.is_empty()
}

/// A rule that selects a whole code system.
fn whole(r: &Rule) -> bool {
    r.concepts.is_empty() && r.filters.is_empty()
}

/// The (system, code) pairs some rules list, each once, in order.
fn enumerated<'a>(rules: impl IntoIterator<Item = &'a Rule>) -> Vec<(String, String)> {
    let mut seen = HashSet::new();
    rules
        .into_iter()
        .flat_map(|r| {
            let s = r.system.clone().unwrap_or_default();
            r.concepts.iter().map(move |c| (s.clone(), c.code.clone()))
        })
        .filter(|k| seen.insert(k.clone()))
        .collect()
}

/// What a rule selects, order aside: system, version, codes and filters
/// sorted. Two value sets with the same set of these are the same.
type RuleKey = (
    Option<String>,
    Option<String>,
    Vec<String>,
    Vec<(String, String, Option<String>)>,
);

fn rule_keys(rules: &[Rule]) -> std::collections::BTreeSet<RuleKey> {
    rules
        .iter()
        .map(|r| {
            let mut codes: Vec<String> = r.concepts.iter().map(|c| c.code.clone()).collect();
            codes.sort();
            codes.dedup();
            let mut filters: Vec<_> = r
                .filters
                .iter()
                .map(|f| (f.property.clone(), f.op.clone(), f.value.clone()))
                .collect();
            filters.sort();
            filters.dedup();
            (r.system.clone(), r.version.clone(), codes, filters)
        })
        .collect()
}

/// How a value set is named in messages: `url|version`.
fn name(vs: &ValueSet) -> String {
    match (&vs.url, &vs.version) {
        (Some(u), Some(v)) => format!("{u}|{v}"),
        (Some(u), None) => u.clone(),
        (None, _) => "(a value set without a url)".to_owned(),
    }
}

/// The Parameters answer.
fn answer(this: &ValueSet, other: &ValueSet, c: &Comparison) -> Parameters<'static> {
    let (a, b) = (name(this), name(other));
    let (result, message) = match &c.relation {
        Ok(r) => (
            r.code(),
            match r {
                Relation::Same => format!("The value sets {a} and {b} contain the same codes"),
                Relation::Subset => format!("The valueSet {a} is a sub-set of the valueSet {b}"),
                Relation::Superset => {
                    format!("The valueSet {a} is a super-set of the valueSet {b}")
                }
                Relation::Disjoint => {
                    format!("No shared codes between the value sets {a} and {b}")
                }
                Relation::Overlapping => format!(
                    "Both value sets {a} and {b} contain the codes the other doesn't, but there is some overlap"
                ),
                Relation::Empty => format!("Both the value sets {a} and {b} are empty"),
            },
        ),
        Err(why) => (
            "indeterminate",
            format!("Unable to compare {a} and {b}: {why}"),
        ),
    };
    let mut out = vec![
        Param::text("result", "valueCode", result),
        Param::text("message", "valueString", message),
        Param::value(
            "performed-expansion",
            "valueBoolean",
            Scalar::Bool(c.expanded),
        ),
    ];
    if let Some(codes) = &c.codes {
        for (name, list) in [
            ("common-codes", &codes.common),
            ("missing-codes", &codes.missing),
            ("extra-codes", &codes.extra),
        ] {
            if !list.is_empty() {
                out.push(Param::text(name, "valueString", list.join(",")));
            }
        }
    }
    Parameters(out)
}
