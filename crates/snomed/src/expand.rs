//! `ValueSet/$expand` for SNOMED CT value sets.
//!
//! The value set is resolved as `ValueSet/$validate-code` resolves it
//! ([`crate::valueset::resolve_value_set`]): an implicit SNOMED CT `url`
//! (`?fhir_vs`, `?fhir_vs=isa/X`, `?fhir_vs=refset/R`), an inline
//! `valueSet`, or a `tx-resource` whose `url` matches; of a compose,
//! concept lists (SCTIDs and post-coordinated expressions) and the
//! `concept` `is-a`, `descendent-of`, `=` and `in` filters are expanded,
//! and excludes removed. The edition comes from `system-version`, the
//! includes' `version`, or the default edition.
//!
//! Parameters: `count`/`offset` (paging; `total` is always given),
//! `filter` (the store's ranked word search; results in rank order,
//! otherwise by code), `activeOnly`, `includeDesignations` (active
//! descriptions preferred in a language refset), `displayLanguage` or
//! `Accept-Language` ([`crate::language`]; a language refset named by
//! its SCTID, `x-sctlang-…`, also keeps the filter to the descriptions
//! that refset has a row for). An expansion that would return
//! more than the configured `max_expansion` codes (or the
//! `X-TOO-COSTLY-THRESHOLD` header's number, or a smaller `limit`
//! parameter) is refused with 422 `too-costly`; the walk over the members
//! checks the request's deadline and watch (the memory guard) as it goes.
//!
//! Inactive concepts carry `inactive` and the `status` property (as the
//! R5 element, or its cross-version extension for R4). Filter-based
//! includes that allow expressions mark the expansion
//! `valueset-unclosed`.

use serde_json::{Value, json};
use txmap_ecl_eval::Budget;
use txmap_store::{Edition, MatchMode, Scope, SearchOptions};
use txmap_terminology::expand::{
    EXT_CONTAINS_PROPERTY, EXT_EXPANSION_PROPERTY, STATUS_URI, UNCLOSED, UNCLOSED_REASON,
};
use txmap_terminology::params::{ParamValue, Params};
use txmap_terminology::{Error, Request};

use crate::constraint::ConstraintError;
use crate::language::DisplayLanguage;
use crate::lookup::description_type_display;
use crate::operations::Editions;
use crate::valueset::{Resolved, Rule, Target, ValueSetDef, check_implicit, resolve_value_set};
use crate::{SNOMED_CT, SnomedCt, Stored, expression, term_of};

/// The expansion's request options.
#[derive(Clone, Debug, Default)]
struct Options {
    count: Option<usize>,
    offset: usize,
    offset_given: bool,
    filter: Option<String>,
    active_only: bool,
    designations: bool,
    limit: usize,
    /// The displays' language, from `displayLanguage` or
    /// `Accept-Language`.
    language: DisplayLanguage,
}

/// The request parameters echoed in `expansion.parameter`, typed.
fn echoed(params: &Params) -> Vec<Value> {
    let mut out = Vec::new();
    for (name, value) in &params.0 {
        let ParamValue::Text(t) = value else { continue };
        let v = match name.as_str() {
            "count" | "offset" => match t.parse::<u64>() {
                Ok(n) => json!({ "name": name, "valueInteger": n }),
                Err(_) => continue,
            },
            "includeDesignations" | "activeOnly" | "excludeNested" | "includeDefinition" => {
                match t.as_str() {
                    "true" => json!({ "name": name, "valueBoolean": true }),
                    "false" => json!({ "name": name, "valueBoolean": false }),
                    _ => continue,
                }
            }
            "system-version" | "check-system-version" | "force-system-version" => {
                json!({ "name": name, "valueUri": t })
            }
            "filter" => json!({ "name": name, "valueString": t }),
            _ => continue,
        };
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

/// `ValueSet/$expand` of a SNOMED CT value set, shaped for R5 or R4.
pub fn expand<B: AsRef<[u8]>>(
    editions: &Editions<B>,
    call: &Request,
    r5: bool,
) -> Result<Value, Error> {
    let params = &call.params;
    let deadline = call.deadline;
    let Resolved {
        def,
        implicit,
        resource,
    } = resolve_value_set(params)?;
    let limit = call.expansion_limit()?;
    let options = Options {
        count: params.number("count")?,
        offset: params.number("offset")?.unwrap_or(0),
        offset_given: params.text("offset")?.is_some(),
        filter: params
            .text("filter")?
            .map(str::trim)
            .filter(|f| !f.is_empty())
            .map(str::to_owned),
        active_only: params.flag("activeOnly")?.unwrap_or(false),
        designations: params.flag("includeDesignations")?.unwrap_or(false),
        limit,
        language: DisplayLanguage::parse(call.display_language_param()?),
    };
    let system_version = params.text("system-version")?.and_then(|sv| {
        sv.strip_prefix(SNOMED_CT)
            .and_then(|r| r.strip_prefix('|'))
            .map(str::to_owned)
    });
    let version = system_version.or_else(|| def.version().map(str::to_owned));
    let e = editions.edition(version.as_deref())?;
    let budget = e.budget(deadline);
    let echo = echoed(params);
    let vs_url = resource
        .as_ref()
        .and_then(|r| r.get("url"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| implicit.clone())
        .unwrap_or_else(|| def.name().to_owned());
    {
        let ed = e.edition();
        if let Some(u) = &implicit {
            check_implicit(ed, u)?;
        }
        let mut check = || call.check();
        // The members up to the page's end are enough (a text search
        // then selects them rather than sorting every hit); `total`
        // counts them all.
        let wanted = options
            .count
            .map_or(usize::MAX, |c| options.offset.saturating_add(c));
        let (total, items) = members(e, &def, &options, wanted, &budget, &mut check)?;
        let start = options.offset.min(total);
        let end = match options.count {
            Some(c) => start.saturating_add(c).min(total),
            None => total,
        };
        if end - start > options.limit {
            return Err(Error::TooCostly {
                value_set: vs_url.to_string(),
                limit: options.limit,
            });
        }
        let mut contains = Vec::with_capacity(end - start);
        let mut any_inactive = false;
        for item in &items[start..end] {
            check()?;
            let (c, inactive) = entry(ed, r5, item, &options)?;
            any_inactive |= inactive;
            contains.push(c);
        }
        let mut parameters = echo;
        parameters.push(json!({
            "name": "used-codesystem",
            "valueUri": format!("{SNOMED_CT}|{}", e.version_uri()),
        }));
        let mut expansion = json!({
            "identifier": txmap_terminology::expand::identifier(),
            "timestamp": txmap_terminology::expand::timestamp(),
            "total": total,
            "parameter": parameters,
        });
        if options.offset_given {
            expansion["offset"] = json!(options.offset);
        }
        let mut extensions = Vec::new();
        let ValueSetDef::Compose { include, .. } = &def;
        if include
            .iter()
            .any(|r| r.concepts.is_none() && !r.expressions_off)
        {
            extensions.push(json!({ "url": UNCLOSED, "valueBoolean": true }));
        }
        if include
            .iter()
            .any(|r| r.concepts.is_none() && r.filters.is_empty() && !r.expressions_off)
        {
            extensions.push(json!({
                "url": UNCLOSED_REASON,
                "valueString": format!("The code System '{SNOMED_CT}' has a grammar and so has infinite members"),
            }));
        }
        if any_inactive {
            if r5 {
                expansion["property"] = json!([{ "code": "status", "uri": STATUS_URI }]);
            } else {
                extensions.push(json!({
                    "url": EXT_EXPANSION_PROPERTY,
                    "extension": [
                        { "url": "code", "valueCode": "status" },
                        { "url": "uri", "valueUri": STATUS_URI },
                    ],
                }));
            }
        }
        if !extensions.is_empty() {
            expansion["extension"] = Value::Array(extensions);
        }
        if !contains.is_empty() {
            expansion["contains"] = Value::Array(contains);
        }
        let mut vs = match resource {
            Some(Value::Object(r)) => Value::Object(
                r.into_iter()
                    .filter(|(k, _)| txmap_terminology::expand::KEPT.contains(&k.as_str()))
                    .collect(),
            ),
            _ => implicit_resource(ed, implicit.as_deref())?,
        };
        vs["expansion"] = expansion;
        Ok(vs)
    }
}

/// An implicit value set's resource (without its expansion).
fn implicit_resource<B: AsRef<[u8]>>(ed: &Edition<B>, url: Option<&str>) -> Result<Value, Error> {
    let url = url.unwrap_or(SNOMED_CT);
    let query = url.split_once('?').map(|(_, q)| q).unwrap_or("");
    // The concept's preferred term, or the id as given.
    let term = |id: &'_ str| -> Result<String, Error> {
        let found = match id.parse::<u64>() {
            Ok(i) => term_of(ed, i)?,
            Err(_) => None,
        };
        Ok(found.unwrap_or(id).to_owned())
    };
    let (name, title) = if let Some(id) = query.strip_prefix("fhir_vs=isa/") {
        let term = term(id)?;
        (
            format!("SNOMEDCTIsA{id}"),
            format!("SNOMED CT {term} and its descendants"),
        )
    } else if let Some(id) = query.strip_prefix("fhir_vs=refset/") {
        let term = term(id)?;
        (
            format!("SNOMEDCTRefset{id}"),
            format!("SNOMED CT Reference Set {term}"),
        )
    } else {
        (
            "ALLSNOMEDCT".to_owned(),
            "SNOMED CT Reference Set (All of SNOMED CT)".to_owned(),
        )
    };
    Ok(json!({
        "resourceType": "ValueSet",
        "url": url,
        "name": name,
        "title": title,
        "status": "active",
    }))
}

/// One member of an expansion.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    Concept(u32),
    /// A post-coordinated expression, as listed, and its rendering.
    Expression(String, String),
}

/// The value set's members, filtered by `options` and in output order:
/// by the text filter's rank, otherwise by code.
fn members<B: AsRef<[u8]>>(
    e: &SnomedCt<B>,
    def: &ValueSetDef,
    options: &Options,
    wanted: usize,
    budget: &Budget,
    check: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<(usize, Vec<Item>), Error> {
    let ed = e.edition();
    let ValueSetDef::Compose {
        include, exclude, ..
    } = def;
    // Text search over the whole code system: the hits are the members,
    // with no set of all concepts to check them against.
    let everything = exclude.is_empty()
        && include
            .iter()
            .any(|r| r.concepts.is_none() && r.filters.is_empty());
    if let (true, Some(text)) = (everything, &options.filter) {
        return text_filtered(ed, text, options, Scope::All, wanted);
    }
    // Text search in a scope made of filters alone (ECL, a refset, a
    // hierarchy, a module): the search's hits tested one by one when they
    // are few, else the scope's set, kept for the next keystroke.
    if let Some(text) = &options.filter
        && exclude.is_empty()
        && include.iter().all(|r| r.concepts.is_none())
    {
        return scoped_search(e, include, text, options, wanted, budget);
    }
    let mut concepts: Vec<u32> = Vec::new();
    let mut expressions: Vec<(String, String)> = Vec::new();
    for rule in include {
        rule_members(ed, rule, &mut concepts, &mut expressions, budget, check)?;
    }
    concepts.sort_unstable();
    concepts.dedup();
    for r in exclude {
        match &r.concepts {
            // A list: each listed code that passes the filters goes.
            Some(_) => {
                let mut kept = Vec::with_capacity(concepts.len());
                for &ord in &concepts {
                    check()?;
                    let code = ed.sctid(ord).stored()?.to_string();
                    if !r.matches(ed, &code, &Target::Concept(ord), budget)? {
                        kept.push(ord);
                    }
                }
                concepts = kept;
                expressions
                    .retain(|(code, _)| r.concepts.as_ref().is_none_or(|l| !l.contains(code)));
            }
            // Filters: their set goes, evaluated once.
            None => {
                let out = r.filtered_concepts(ed, budget)?;
                concepts.retain(|o| out.binary_search(o).is_err());
            }
        }
    }
    if options.active_only {
        let mut kept = Vec::with_capacity(concepts.len());
        for &ord in &concepts {
            check()?;
            if ed.concept_at(ord).stored()?.active {
                kept.push(ord);
            }
        }
        concepts = kept;
    }
    if let Some(text) = &options.filter {
        return text_filtered(ed, text, options, Scope::Concepts(&concepts), wanted);
    }
    // In code order, as strings compare — without making a string per
    // concept: a whole `?fhir_vs` is 535,000 of them, for a page of 20.
    let mut out: Vec<(CodeKey, Item)> = Vec::with_capacity(concepts.len() + expressions.len());
    for ord in concepts {
        out.push((CodeKey::id(ed.sctid(ord).stored()?), Item::Concept(ord)));
    }
    check()?;
    expressions.sort_unstable();
    expressions.dedup_by(|a, b| a.0 == b.0);
    for (code, display) in expressions {
        out.push((CodeKey::Text(code.clone()), Item::Expression(code, display)));
    }
    out.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    Ok((out.len(), out.into_iter().map(|(_, i)| i).collect()))
}

/// A code's place in string order. A concept's SCTID is kept as a number
/// whose order is that of its decimal string: the digits left-aligned in a
/// fixed width, then the shorter string first ("1" < "10" < "19" < "2").
/// An expression (rare) keeps its text.
#[derive(PartialEq, Eq)]
enum CodeKey {
    Id { aligned: u128, digits: u8 },
    Text(String),
}

impl CodeKey {
    fn id(id: u64) -> CodeKey {
        let digits = id.checked_ilog10().map_or(1, |d| d + 1);
        CodeKey::Id {
            aligned: u128::from(id) * 10u128.pow(20 - digits),
            digits: digits as u8,
        }
    }

    fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            CodeKey::Id { aligned, digits } => {
                let id = aligned / 10u128.pow(20 - u32::from(*digits));
                id.to_string().into()
            }
            CodeKey::Text(t) => t.as_str().into(),
        }
    }
}

impl Ord for CodeKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        match (self, other) {
            (
                CodeKey::Id { aligned, digits },
                CodeKey::Id {
                    aligned: a,
                    digits: d,
                },
            ) => (aligned, digits).cmp(&(a, d)),
            _ => self.text().cmp(&other.text()),
        }
    }
}

impl PartialOrd for CodeKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// The most candidate descriptions a scoped text search tests one by one
/// against its scope ([`Scope::Test`]) when the scope's set is not kept
/// already; above it, the set is built and kept ([`crate::scopes`]). A
/// test costs a search in the concept's ancestors for a hierarchy, and up
/// to a couple of microseconds for a description filter (every
/// description's term read): 4,096 candidates stay within a few
/// milliseconds. A set costs its build once — a hierarchy's a millisecond
/// or two, a semantic tag's about 65 ms on the International-scale
/// edition — and then makes every search in the scope cheaper than
/// testing would.
pub const TEST_EACH_UP_TO: usize = 4_096;

/// [`members`] for a text search among the concepts passing `include`'s
/// filters (any rule's, all of a rule's), none of which lists concepts.
fn scoped_search<B: AsRef<[u8]>>(
    e: &SnomedCt<B>,
    include: &[Rule],
    text: &str,
    options: &Options,
    wanted: usize,
    budget: &Budget,
) -> Result<(usize, Vec<Item>), Error> {
    let ed = e.edition();
    // The scope as written, rule by rule: the same scope, the same set.
    let key = include
        .iter()
        .map(|r| {
            r.filters
                .iter()
                .map(|f| f.written.as_str())
                .collect::<Vec<_>>()
                .join("\u{1f}")
        })
        .collect::<Vec<_>>()
        .join("\u{1e}");
    // A scope built already is the cheapest way, whatever the query.
    if let Some(set) = e.scopes().kept(&key) {
        return text_filtered(ed, text, options, Scope::Set(&set), wanted);
    }
    let up_to = e.test_each_up_to();
    let cost = ed
        .search_cost(text, MatchMode::Prefix, up_to)
        .map_err(crate::store_error)?;
    if cost <= up_to {
        let mut rules = include
            .iter()
            .map(|r| {
                r.filters
                    .iter()
                    .map(|f| f.matcher(ed, budget))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut failed: Option<ConstraintError> = None;
        let mut test = |o: u32| -> bool {
            if failed.is_some() {
                return false;
            }
            let mut passes = || -> Result<bool, ConstraintError> {
                for rule in &mut rules {
                    let mut all = true;
                    for m in rule.iter_mut() {
                        if !m.matches_concept(o)? {
                            all = false;
                            break;
                        }
                    }
                    if all {
                        return Ok(true);
                    }
                }
                Ok(false)
            };
            passes().unwrap_or_else(|e| {
                failed = Some(e);
                false
            })
        };
        let answer = text_filtered(ed, text, options, Scope::Test(&mut test), wanted);
        if let Some(e) = failed {
            return Err(e.into());
        }
        return answer;
    }
    let set = e.scopes().get_or_build(&key, || {
        let mut set = Vec::new();
        for r in include {
            set.extend(r.filtered_concepts(ed, budget)?);
        }
        ed.scope_set(set).map_err(crate::store_error)
    })?;
    text_filtered(ed, text, options, Scope::Set(&set), wanted)
}

/// The concepts whose descriptions match `text`, best first, among
/// the concepts of `scope`: how many, and the first `wanted`.
fn text_filtered<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    text: &str,
    options: &Options,
    scope: Scope<'_>,
    wanted: usize,
) -> Result<(usize, Vec<Item>), Error> {
    let search = SearchOptions {
        include_inactive: !options.active_only,
        // A display language named as a language refset
        // (`x-sctlang-…`) is the search's language too.
        acceptable_in: options.language.named_refset(),
        ..SearchOptions::default()
    };
    let (total, hits) = ed
        .search_concepts_top(text, &search, scope, wanted)
        .map_err(|e| match e {
            txmap_store::StoreError::EmptyQuery => {
                Error::invalid(format!("the filter {text:?} has no words"))
            }
            txmap_store::StoreError::TooCostly => {
                Error::too_costly(format!("the filter {text:?} matches too many descriptions"))
            }
            other => crate::store_error(other),
        })?;
    Ok((total, hits.into_iter().map(Item::Concept).collect()))
}

/// Adds one include's members.
fn rule_members<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    rule: &Rule,
    concepts: &mut Vec<u32>,
    expressions: &mut Vec<(String, String)>,
    budget: &Budget,
    check: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<(), Error> {
    let Some(list) = &rule.concepts else {
        concepts.extend(rule.filtered_concepts(ed, budget)?);
        return Ok(());
    };
    for code in list {
        check()?;
        if !code.is_empty() && code.bytes().all(|b| b.is_ascii_digit()) {
            if let Some(ord) = code.parse::<u64>().ok().and_then(|id| ed.ordinal(id))
                && rule.concept_passes(ed, ord, budget)?
            {
                concepts.push(ord);
            }
            continue;
        }
        let Ok(expr) = expression::parse(code) else {
            continue;
        };
        if expr.concepts().iter().any(|c| ed.ordinal(*c).is_none()) {
            continue;
        }
        let display = expr.render(&|c| term_of(ed, c).ok().flatten().map(str::to_owned));
        expressions.push((code.clone(), display));
    }
    Ok(())
}

/// One `contains` entry, and whether its concept is inactive.
fn entry<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    r5: bool,
    item: &Item,
    options: &Options,
) -> Result<(Value, bool), Error> {
    let ord = match item {
        Item::Expression(code, display) => {
            return Ok((
                json!({ "system": SNOMED_CT, "code": code, "display": display }),
                false,
            ));
        }
        Item::Concept(ord) => *ord,
    };
    let concept = ed.concept_at(ord).stored()?;
    let display = options.language.display(ed, ord)?;
    let mut c = json!({ "system": SNOMED_CT, "code": concept.id.to_string() });
    if let Some(d) = display {
        c["display"] = Value::from(d);
    }
    if !concept.active {
        c["inactive"] = Value::Bool(true);
        if r5 {
            c["property"] = json!([{ "code": "status", "valueCode": "inactive" }]);
        } else {
            c["extension"] = json!([{
                "url": EXT_CONTAINS_PROPERTY,
                "extension": [
                    { "url": "code", "valueCode": "status" },
                    { "url": "value", "valueCode": "inactive" },
                ],
            }]);
        }
    }
    if options.designations {
        // Active descriptions preferred in a language reference set.
        let mut list = Vec::new();
        for d in ed.descriptions(ord).stored()? {
            if d.active
                && ed
                    .acceptability(d.ordinal)
                    .stored()?
                    .iter()
                    .any(|&(_, a)| a == txmap_store::sctid::PREFERRED)
            {
                list.push(d);
            }
        }
        let mut keyed = Vec::with_capacity(list.len());
        for d in list.drain(..) {
            let order = match d.type_id {
                txmap_store::sctid::FSN => 0,
                txmap_store::sctid::SYNONYM => {
                    if ed.is_preferred_term(d.ordinal).stored()? {
                        1
                    } else {
                        2
                    }
                }
                _ => 3,
            };
            keyed.push((order, d));
        }
        keyed.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.term.cmp(b.1.term)));
        let mut out = Vec::with_capacity(keyed.len());
        for (_, d) in keyed {
            let mut item = json!({ "language": d.language, "value": d.term });
            if d.type_id != 0 {
                let mut usage = json!({ "system": SNOMED_CT, "code": d.type_id.to_string() });
                if let Some(t) = description_type_display(ed, d.type_id)? {
                    usage["display"] = Value::from(t);
                }
                item["use"] = usage;
            }
            out.push(item);
        }
        if !out.is_empty() {
            c["designation"] = Value::Array(out);
        }
    }
    Ok((c, !concept.active))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_echoed_typed() {
        let p = Params::from_pairs(vec![
            ("url".into(), "http://snomed.info/sct?fhir_vs".into()),
            ("count".into(), "0".into()),
            ("includeDesignations".into(), "true".into()),
            ("system-version".into(), "http://snomed.info/sct|x".into()),
        ]);
        assert_eq!(
            echoed(&p),
            [
                json!({"name": "count", "valueInteger": 0}),
                json!({"name": "includeDesignations", "valueBoolean": true}),
                json!({"name": "system-version", "valueUri": "http://snomed.info/sct|x"}),
            ]
        );
    }

    #[test]
    fn code_keys_sort_as_their_strings() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut ids: Vec<u64> = vec![
            0,
            1,
            2,
            9,
            10,
            19,
            100,
            101,
            1010,
            138875005,
            999_999_999_999_999_999,
        ];
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Lengths from 1 to 18 digits, many sharing prefixes.
            ids.push(x % 10u64.pow((x % 18) as u32 + 1));
        }
        let mut keys: Vec<(CodeKey, String)> = ids
            .iter()
            .map(|&id| (CodeKey::id(id), id.to_string()))
            .chain(["123:456=789", "9 : 1 = 2"].map(|t| (CodeKey::Text(t.into()), t.into())))
            .collect();
        keys.sort_by(|a, b| a.0.cmp(&b.0));
        let strings: Vec<&String> = keys.iter().map(|(_, s)| s).collect();
        assert!(strings.is_sorted(), "{strings:?}");
        for (k, s) in &keys {
            assert_eq!(k.text(), s.as_str());
        }
    }
}
