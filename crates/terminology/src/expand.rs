//! `ValueSet/$expand`: the value set's codes from [`Engine::expand`],
//! paged (`offset`, `count`), filtered by text (`filter`), optionally
//! nested by hierarchy, with the designations, definitions and properties
//! asked for, wrapped in the value set with its `expansion`.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Map, Value, json};

use crate::engine::{Engine, Entry};
use crate::error::Error;
use crate::language::{self, Chosen, Prefs};
use crate::provider::CodeSystemProvider;
use crate::request::Request;
use crate::valueset::ValueSet;

/// The value set properties an expansion repeats (for every code system:
/// the server's SNOMED CT expansions keep the same).
pub const KEPT: [&str; 11] = [
    "language",
    "resourceType",
    "id",
    "url",
    "identifier",
    "version",
    "name",
    "title",
    "status",
    "experimental",
    "date",
];

/// Request parameters echoed in `expansion.parameter`, in this order.
const ECHOED: [&str; 8] = [
    "designation",
    "excludeNested",
    "activeOnly",
    "includeDesignations",
    "includeDefinition",
    "filter",
    "count",
    "offset",
];

/// `$expand`: returns the expanded ValueSet.
pub fn expand(req: &Request, identifier: &str, timestamp: &str) -> Result<Value, Error> {
    let mut inline = None;
    let vs: &ValueSet = req.value_set(&mut inline)?;
    crate::language::check_request(req)?;
    let sups = crate::supplement::requested(req, Some(vs))?;
    let supplemented = crate::supplement::resolver_with(&req.resolver, &sups);
    let resolver = supplemented.as_ref().unwrap_or(&req.resolver);
    let engine = Engine::new(resolver, req.expansion_limit()?, true)
        .with_stop(req.stop())
        .with_versions(crate::version::VersionRules::from_request(req));
    let mut entries = engine.expand(vs)?;
    let active_only = req.flag("activeOnly")?.unwrap_or(false);
    if active_only {
        entries.retain(|e| !e.cs.status(e.id).inactive);
    }
    if let Some(text) = req.text("filter") {
        let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
        entries.retain(|e| {
            let d = display(e).unwrap_or_default().to_lowercase();
            let c = e.cs.code(e.id).to_lowercase();
            words
                .iter()
                .all(|w| d.contains(w.as_str()) || c.contains(w.as_str()))
        });
    }
    let total = entries.len();
    let offset = req.number("offset")?.unwrap_or(0);
    let count = req.number("count")?;
    // Enumerations keep their order; hierarchies nest unless asked not to.
    let nested = req.flag("excludeNested")? != Some(true)
        && count.is_none()
        && nests(&vs.compose.include, req.text("filter").is_some());
    let language = req
        .text("displayLanguage")
        .or_else(|| vs.expansion_parameter("displayLanguage"))
        .or_else(|| req.accept_language.clone());
    let opts = Options {
        prefs: language.as_deref().map(Prefs::parse).unwrap_or_default(),
        designation_langs: req
            .texts("designation")
            .iter()
            .map(|d| d.rsplit('|').next().unwrap_or_default().to_owned())
            .collect(),
        designations: req.flag("includeDesignations")?.unwrap_or(false),
        properties: req.texts("property"),
        versioned: several_versions(vs, &entries),
    };
    let page: Vec<Entry> = entries
        .iter()
        .skip(offset)
        .take(count.unwrap_or(usize::MAX))
        .copied()
        .collect();
    let contains = if nested {
        nest(&page, &opts)
    } else {
        page.iter().map(|e| contains(e, &opts)).collect()
    };

    let mut parameters: Vec<Value> = Vec::new();
    if let Some(l) = &language {
        parameters.push(json!({"name": "displayLanguage", "valueCode": l}));
    }
    for name in ECHOED {
        for p in req_params(req, name) {
            parameters.push(p.clone());
        }
    }
    for (name, canonical) in engine.versions.applied() {
        parameters.push(json!({"name": name, "valueUri": canonical}));
    }
    if engine.versions_matched.get()
        || vs.expansion_parameter("versionsMatch").as_deref() == Some("true")
    {
        parameters.push(json!({"name": "versionsMatch", "valueBoolean": true}));
    }
    let used = engine.used_code_systems();
    for cs in &used {
        parameters.push(json!({"name": "used-codesystem", "valueUri": cs.versioned_url()}));
    }
    for cs in used
        .iter()
        .filter(|cs| cs.content() == crate::provider::Content::Fragment)
    {
        parameters.push(json!({"name": "used-fragment", "valueUri": cs.versioned_url()}));
    }
    for s in sups.iter().filter(|s| {
        used.iter()
            .any(|cs| crate::supplement::supplements(s, cs.url()))
            && crate::supplement::reported(req, Some(vs), s)
    }) {
        parameters.push(json!({"name": "used-supplement", "valueUri": s.versioned_url()}));
    }
    for v in engine.used_value_sets() {
        if !std::ptr::eq(v, vs) && !vs.contained.iter().any(|c| std::ptr::eq(c, v)) {
            parameters.push(json!({"name": "used-valueset", "valueUri": v.versioned_url()}));
        }
    }
    let mut cautions: Vec<(String, String)> = Vec::new();
    for cs in &used {
        if let Some(c) = crate::provider::caution(*cs) {
            cautions.push((c.to_owned(), cs.versioned_url()));
        }
    }
    for v in engine.used_value_sets() {
        if let Some(c) = crate::valueset::value_set_caution(&v.resource) {
            cautions.push((c.to_owned(), v.versioned_url()));
        }
    }
    let sampled = engine.sampled();
    for s in &sampled {
        if let Some(c) = crate::valueset::status_caution(&s.common.resource) {
            cautions.push((c.to_owned(), s.common.versioned_url()));
        }
    }
    for (c, url) in cautions {
        parameters.push(json!({"name": format!("warning-{c}"), "valueUri": url}));
    }

    let mut out = Map::new();
    if let Value::Object(src) = &vs.resource {
        for (k, v) in src {
            if KEPT.contains(&k.as_str()) {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out.insert("resourceType".into(), json!("ValueSet"));
    // An enumerated value set keeps its extensions (as the tooling does).
    if !vs.compose.include.is_empty()
        && vs
            .compose
            .include
            .iter()
            .all(|r| !r.concepts.is_empty() && r.filters.is_empty() && r.value_sets.is_empty())
        && let Some(exts) = vs.resource.get("extension")
    {
        out.insert("extension".into(), exts.clone());
    }
    let mut expansion = Map::new();
    expansion.insert("identifier".into(), json!(identifier));
    expansion.insert("timestamp".into(), json!(timestamp));
    // A grammar's codes are without number: listing its common codes for
    // the whole of it, the expansion has no total.
    if !sampled.iter().any(|s| s.whole) {
        expansion.insert("total".into(), json!(total));
    }
    if req.text("offset").is_some() {
        expansion.insert("offset".into(), json!(offset));
    }
    if !parameters.is_empty() {
        expansion.insert("parameter".into(), Value::Array(parameters));
    }
    // A fragment does not hold every code, nor a grammar's common codes
    // all of the grammar: the expansion may be incomplete.
    if let Some(s) = sampled.first() {
        expansion.insert(
            "extension".into(),
            json!([
                {"url": UNCLOSED, "valueBoolean": true},
                {"url": UNCLOSED_REASON, "valueString": format!(
                    "The code System '{}' has a grammar and so has infinite members. This extension is based on {}",
                    s.system, s.common.url.as_deref().unwrap_or_default())},
            ]),
        );
    } else if let Some(cs) = used
        .iter()
        .find(|cs| cs.content() == crate::provider::Content::Fragment)
    {
        expansion.insert(
            "extension".into(),
            json!([
                {"url": UNCLOSED, "valueBoolean": true},
                {"url": UNCLOSED_REASON, "valueString": format!(
                    "This extension is based on a fragment of the code system {}", cs.url())},
            ]),
        );
    }
    let mut declared = declared_properties(&used, &opts.properties);
    if !opts.properties.iter().any(|p| p == "status")
        && entries.iter().any(|e| {
            let s = e.cs.status(e.id);
            (s.inactive || s.deprecated) && s.status.is_some()
        })
    {
        declared.push(json!({"code": "status", "uri": STATUS_URI}));
    }
    for e in &entries {
        let from_vs = e
            .concept
            .map(|rc| crate::supplement::value_set_extensions(&rc.extensions).0)
            .unwrap_or_default();
        let from_cs = crate::supplement::extension_properties(crate::provider::concept_extensions(
            e.cs, e.id,
        ));
        for p in from_vs.into_iter().chain(from_cs) {
            if !declared.iter().any(|d| d["code"] == p.code) {
                declared.push(json!({"code": p.code, "uri": p.uri}));
            }
        }
    }
    if !declared.is_empty() {
        expansion.insert("property".into(), Value::Array(declared));
    }
    if !contains.is_empty() {
        expansion.insert("contains".into(), Value::Array(contains));
    }
    out.insert("expansion".into(), Value::Object(expansion));
    Ok(Value::Object(out))
}

/// Whether codes say their version: the expansion holds several versions
/// of one code system, or the value set's rules name several (even
/// when a forced version makes them one).
fn several_versions(vs: &ValueSet, entries: &[Entry]) -> bool {
    let mut first: HashMap<&str, Option<&str>> = HashMap::new();
    let held = entries
        .iter()
        .any(|e| *first.entry(e.cs.url()).or_insert(e.version()) != e.version());
    let mut named: HashMap<&str, &str> = HashMap::new();
    let rules = vs.compose.include.iter().chain(&vs.compose.exclude);
    held || rules.into_iter().any(|r| match (&r.system, &r.version) {
        (Some(s), Some(v)) => *named.entry(s.as_str()).or_insert(v.as_str()) != v.as_str(),
        _ => false,
    })
}

/// `expansion.property`: the properties asked for, with their URIs.
fn declared_properties(used: &[&dyn CodeSystemProvider], wanted: &[String]) -> Vec<Value> {
    let mut out = Vec::new();
    for w in wanted {
        if w == "*" {
            continue;
        }
        let uri = if w == "definition" {
            Some("http://hl7.org/fhir/concept-properties#definition".to_owned())
        } else {
            used.iter()
                .find_map(|cs| cs.property_def(w))
                .and_then(|(uri, _)| uri.map(str::to_owned))
        };
        let mut p = Map::new();
        p.insert("code".into(), json!(w));
        if let Some(u) = uri {
            p.insert("uri".into(), json!(u));
        }
        out.push(Value::Object(p));
    }
    out
}

fn req_params<'a>(req: &'a Request, name: &'a str) -> Vec<&'a Value> {
    req.raw(name)
}

struct Options {
    prefs: Prefs,
    /// Languages of the `designation` parameters: only those are listed.
    designation_langs: Vec<String>,
    designations: bool,
    properties: Vec<String>,
    /// Several versions of one system: each code says its version.
    versioned: bool,
}

fn display<'a>(e: &Entry<'a>) -> Option<&'a str> {
    e.concept
        .and_then(|c| c.display.as_deref())
        .or_else(|| e.cs.display(e.id))
}

/// Marks an expansion that may not hold every code.
pub const UNCLOSED: &str = "http://hl7.org/fhir/StructureDefinition/valueset-unclosed";
pub const UNCLOSED_REASON: &str =
    "http://hl7.org/fhir/StructureDefinition/valueset-unclosed-reason";
pub const STATUS_URI: &str = "http://hl7.org/fhir/concept-properties#status";

const PREFERRED: &str = "http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra";

fn contains(e: &Entry, opts: &Options) -> Value {
    let cs = e.cs;
    let status = cs.status(e.id);
    let mut c = Map::new();
    c.insert("system".into(), json!(cs.url()));
    if opts.versioned
        && let Some(v) = e.version()
    {
        c.insert("version".into(), json!(v));
    }
    if status.not_selectable {
        c.insert("abstract".into(), json!(true));
    }
    if status.inactive {
        c.insert("inactive".into(), json!(true));
    }
    c.insert("code".into(), json!(cs.code(e.id)));
    let chosen = if opts.prefs.is_empty() {
        Chosen {
            display: display(e).map(Cow::Borrowed),
            designation: None,
        }
    } else {
        language::choose(cs, e.id, &opts.prefs)
    };
    if let Some(d) = &chosen.display {
        c.insert("display".into(), json!(d));
    }
    let concept_extensions = crate::provider::concept_extensions(cs, e.id);
    let mut exts = crate::supplement::echoed_extensions(concept_extensions);
    let (vs_props, vs_exts) = e
        .concept
        .map(|rc| crate::supplement::value_set_extensions(&rc.extensions))
        .unwrap_or_default();
    exts.extend(vs_exts);
    if !exts.is_empty() {
        c.insert("extension".into(), Value::Array(exts));
    }
    if opts.designations {
        let mut ds: Vec<Value> = Vec::new();
        // The code system's display is listed when it is not the one
        // shown: a designation was chosen, or a hard language request
        // found none.
        if (chosen.designation.is_some() || (chosen.display.is_none() && !opts.prefs.is_empty()))
            && let Some(own) = cs.display(e.id)
        {
            let mut m = Map::new();
            if let Some(l) = cs.language() {
                m.insert("language".into(), json!(l));
            }
            m.insert(
                "use".into(),
                json!({"system": PREFERRED, "code": "preferredForLanguage", "display": "Preferred For Language"}),
            );
            m.insert("value".into(), json!(own));
            ds.push(Value::Object(m));
        }
        let listed = |lang: Option<&str>| {
            opts.designation_langs.is_empty()
                || lang.is_some_and(|l| {
                    // A `designation` language names that language
                    // exactly, not its regional variants.
                    opts.designation_langs
                        .iter()
                        .any(|w| w.eq_ignore_ascii_case(l))
                })
        };
        ds.extend(
            cs.designations(e.id)
                .iter()
                .enumerate()
                .filter(|(i, d)| Some(*i) != chosen.designation && listed(d.language.as_deref()))
                .map(|(_, d)| {
                    let mut m = Map::new();
                    let exts = crate::supplement::core_extensions(&d.extensions);
                    if !exts.is_empty() {
                        m.insert("extension".into(), Value::Array(exts));
                    }
                    if let Some(l) = &d.language {
                        m.insert("language".into(), json!(l));
                    }
                    if let Some(u) = &d.use_ {
                        m.insert("use".into(), u.clone());
                    }
                    m.insert("value".into(), json!(d.value));
                    Value::Object(m)
                }),
        );
        if let Some(rc) = e.concept {
            ds.extend(
                rc.designations
                    .iter()
                    .filter(|d| listed(d.get("language").and_then(Value::as_str)))
                    .map(crate::supplement::value_set_designation),
            );
        }
        if !ds.is_empty() {
            c.insert("designation".into(), Value::Array(ds));
        }
    }
    let mut ps: Vec<Value> = Vec::new();
    if !opts.properties.iter().any(|p| p == "status" || p == "*")
        && (status.inactive || status.deprecated)
        && let Some(s) = &status.status
    {
        ps.push(json!({"code": "status", "valueCode": s}));
    }
    if !opts.properties.is_empty() {
        let wanted = |p: &str| opts.properties.iter().any(|w| w == p || w == "*");
        if wanted("definition")
            && let Some(d) = cs.definition(e.id)
        {
            ps.push(json!({"code": "definition", "valueString": d}));
        }
        ps.extend(
            cs.properties(e.id)
                .iter()
                .filter(|p| wanted(&p.code))
                .map(|p| json!({"code": p.code, p.key.clone(): p.value})),
        );
    }
    for p in vs_props
        .into_iter()
        .chain(crate::supplement::extension_properties(concept_extensions))
    {
        if !ps.iter().any(|q| q["code"] == p.code) {
            ps.push(json!({"code": p.code, p.key: p.value}));
        }
    }
    if !ps.is_empty() {
        c.insert("property".into(), Value::Array(ps));
    }
    Value::Object(c)
}

/// Whether an expansion of these includes is a tree: every include names
/// a system and neither lists codes nor imports value sets. A text
/// `filter` over a whole code system is a flat search result, but one
/// over includes that all select by property filters (`is-a` and the
/// like) keeps the hierarchy those filters select.
fn nests(include: &[crate::valueset::Rule], text_filter: bool) -> bool {
    include.iter().all(|r| {
        r.system.is_some()
            && r.concepts.is_empty()
            && r.value_sets.is_empty()
            && (!text_filter || !r.filters.is_empty())
    })
}

/// The page as a tree: each code under its nearest parent in the page.
fn nest(page: &[Entry], opts: &Options) -> Vec<Value> {
    let index: HashMap<(&str, u32), usize> = page
        .iter()
        .enumerate()
        .map(|(i, e)| ((e.cs.url(), e.id), i))
        .collect();
    let mut kids: Vec<Vec<usize>> = vec![Vec::new(); page.len()];
    let mut roots = Vec::new();
    for (i, e) in page.iter().enumerate() {
        let parent =
            e.cs.parents(e.id)
                .iter()
                .find_map(|p| index.get(&(e.cs.url(), *p)).copied());
        match parent {
            Some(p) if p != i => kids[p].push(i),
            _ => roots.push(i),
        }
    }
    fn build(i: usize, page: &[Entry], kids: &[Vec<usize>], opts: &Options, depth: usize) -> Value {
        let mut v = contains(&page[i], opts);
        if depth < 64 && !kids[i].is_empty() {
            v["contains"] = Value::Array(
                kids[i]
                    .iter()
                    .map(|&k| build(k, page, kids, opts, depth + 1))
                    .collect(),
            );
        }
        v
    }
    roots
        .into_iter()
        .map(|i| build(i, page, &kids, opts, 0))
        .collect()
}

// ----- the answer's shape ---------------------------------------------------

/// R5's `expansion.property` as an R4 extension.
pub const EXT_EXPANSION_PROPERTY: &str =
    "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.property";
/// R5's `expansion.contains.property` as an R4 extension.
pub const EXT_CONTAINS_PROPERTY: &str =
    "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property";

/// R4 has no `expansion.property` nor `contains.property`: they become
/// the R5 cross-version extensions.
pub fn to_r4(vs: &mut Value) {
    let Some(expansion) = vs.get_mut("expansion").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(Value::Array(props)) = expansion.remove("property") {
        let ext = expansion.entry("extension").or_insert_with(|| json!([]));
        if let Value::Array(list) = ext {
            for p in props {
                let mut parts = vec![json!({"url": "code", "valueCode": p["code"]})];
                if let Some(u) = p.get("uri") {
                    parts.push(json!({"url": "uri", "valueUri": u}));
                }
                list.push(json!({"url": EXT_EXPANSION_PROPERTY, "extension": parts}));
            }
        }
    }
    fn contains(list: &mut Value) {
        let Some(items) = list.as_array_mut() else {
            return;
        };
        for c in items.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(Value::Array(props)) = c.remove("property") {
                let ext = c.entry("extension").or_insert_with(|| json!([]));
                if let Value::Array(exts) = ext {
                    for p in props {
                        let mut parts = vec![json!({"url": "code", "valueCode": p["code"]})];
                        if let Some((k, v)) = p
                            .as_object()
                            .and_then(|o| o.iter().find(|(k, _)| k.starts_with("value")))
                        {
                            parts.push(json!({"url": "value", k.clone(): v.clone()}));
                        }
                        exts.push(json!({"url": EXT_CONTAINS_PROPERTY, "extension": parts}));
                    }
                }
            }
            if let Some(nested) = c.get_mut("contains") {
                contains(nested);
            }
        }
    }
    if let Some(list) = expansion.get_mut("contains") {
        contains(list);
    }
}

/// A fresh `urn:uuid:` (version 4 layout) from the clock, a counter and
/// the process's hasher keys; unique enough for an expansion identifier.
pub fn identifier() -> String {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let state = std::collections::hash_map::RandomState::new();
    let mut h1 = state.build_hasher();
    h1.write_u128(nanos);
    h1.write_u64(n);
    let a = h1.finish();
    let mut h2 = state.build_hasher();
    h2.write_u64(a);
    h2.write_u64(n ^ 0x9e37_79b9_7f4a_7c15);
    let b = h2.finish();
    let a = (a & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    let b = (b & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "urn:uuid:{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// Now, as a FHIR instant in UTC (`2025-01-31T12:00:00Z`).
pub fn timestamp() -> String {
    crate::time::instant(std::time::SystemTime::now(), false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn instant(secs: u64) -> String {
        crate::time::instant(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs),
            false,
        )
    }

    #[test]
    fn instants_and_identifiers() {
        assert_eq!(instant(0), "1970-01-01T00:00:00Z");
        assert_eq!(instant(1_738_324_800), "2025-01-31T12:00:00Z");
        assert_eq!(instant(951_782_400), "2000-02-29T00:00:00Z");
        let u = identifier();
        assert_eq!(u.len(), "urn:uuid:".len() + 36, "{u}");
        assert_ne!(u, identifier());
    }

    #[test]
    fn r4_expansions_carry_properties_as_extensions() {
        let mut vs = json!({"expansion": {
            "property": [{"code": "status", "uri": "u"}],
            "contains": [{"code": "a", "property": [{"code": "status", "valueCode": "retired"}]}],
        }});
        to_r4(&mut vs);
        assert_eq!(
            vs["expansion"]["extension"][0]["url"],
            EXT_EXPANSION_PROPERTY
        );
        assert_eq!(
            vs["expansion"]["contains"][0]["extension"][0]["extension"][1]["valueCode"],
            "retired"
        );
        assert!(vs["expansion"]["contains"][0].get("property").is_none());
    }

    /// A chain of `n` value sets, each importing the next, the last
    /// including a small code system; `url` names the first.
    fn chain(n: usize) -> Value {
        let mut params = vec![json!({"name": "tx-resource", "resource": {
            "resourceType": "CodeSystem", "url": "http://cs", "content": "complete",
            "concept": [{"code": "a"}]}})];
        for i in 0..n {
            let include = if i + 1 < n {
                json!([{"valueSet": [format!("http://vs{}", i + 1)]}])
            } else {
                json!([{"system": "http://cs"}])
            };
            params.push(json!({"name": "tx-resource", "resource": {
                "resourceType": "ValueSet", "url": format!("http://vs{i}"),
                "compose": {"include": include}}}));
        }
        params.push(json!({"name": "url", "valueUri": "http://vs0"}));
        json!({"resourceType": "Parameters", "parameter": params})
    }

    #[test]
    fn imports_deeper_than_the_limit_are_an_error_not_a_stack_overflow() {
        let ok = expand(
            &Request::new(chain(crate::engine::MAX_IMPORT_DEPTH)),
            "u",
            "t",
        )
        .unwrap();
        assert_eq!(ok["expansion"]["total"], 1);
        for n in [crate::engine::MAX_IMPORT_DEPTH + 1, 5_000] {
            let err = expand(&Request::new(chain(n)), "u", "t").unwrap_err();
            assert!(matches!(err, Error::ImportsTooDeep { .. }), "{n}: {err}");
            assert_eq!(err.status(), 422);
            let body = chain(n);
            let err = crate::validate::validate_code(
                &Request::new(json!({"resourceType": "Parameters", "parameter":
                    body["parameter"].as_array().unwrap().iter().cloned()
                        .chain([json!({"name": "system", "valueUri": "http://cs"}),
                                json!({"name": "code", "valueCode": "a"})])
                        .collect::<Vec<_>>()})),
                true,
            )
            .unwrap_err();
            assert!(matches!(err, Error::ImportsTooDeep { .. }), "{n}: {err}");
        }
    }

    /// A diamond of imports `depth` deep: each level's value set imports
    /// the two of the level below (`http://d{level}a`, `…b`), which
    /// import the two below them, down to a code system of `codes` codes
    /// — 2^depth paths to the bottom.
    fn diamond(depth: usize, codes: usize) -> Vec<Value> {
        let concepts: Vec<Value> = (0..codes)
            .map(|i| json!({"code": format!("c{i}")}))
            .collect();
        let mut params = vec![json!({"name": "tx-resource", "resource": {
            "resourceType": "CodeSystem", "url": "http://cs", "content": "complete",
            "concept": concepts}})];
        for level in 0..depth {
            for side in ["a", "b"] {
                let include = if level + 1 < depth {
                    json!([{"valueSet": [format!("http://d{}a", level + 1), format!("http://d{}b", level + 1)]}])
                } else {
                    json!([{"system": "http://cs"}])
                };
                params.push(json!({"name": "tx-resource", "resource": {
                    "resourceType": "ValueSet", "url": format!("http://d{level}{side}"),
                    "compose": {"include": include}}}));
            }
        }
        params
    }

    /// Each value set is expanded (and searched for a code) once per
    /// request: a 60-deep diamond — 2^60 paths — answers within its time
    /// budget, with the bottom's codes, each once.
    #[test]
    fn a_diamond_of_imports_is_expanded_once_per_value_set() {
        let mut params = diamond(60, 500);
        params.push(json!({"name": "url", "valueUri": "http://d0a"}));
        let mut req =
            Request::new(json!({"resourceType": "Parameters", "parameter": params.clone()}));
        req.deadline = Some(std::time::Instant::now() + std::time::Duration::from_secs(20));
        let out = expand(&req, "u", "t").unwrap();
        assert_eq!(out["expansion"]["total"], 500);
        let codes: std::collections::HashSet<&str> = out["expansion"]["contains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["code"].as_str().unwrap())
            .collect();
        assert_eq!(codes.len(), 500);
        params.extend([
            json!({"name": "system", "valueUri": "http://cs"}),
            json!({"name": "code", "valueCode": "c499"}),
        ]);
        let mut req = Request::new(json!({"resourceType": "Parameters", "parameter": params}));
        req.deadline = Some(std::time::Instant::now() + std::time::Duration::from_secs(20));
        let v = crate::validate::validate_code(&req, true)
            .unwrap()
            .to_json();
        assert!(v.contains(r#""name":"result","valueBoolean":true"#), "{v}");
    }

    /// tx.fhir.org's `limit` lowers the expansion limit for one request
    /// (0 is no limit), never raises the operator's; past it the answer is
    /// the suite's `too-costly` wording (tx.fhir.org/loinc-expand-all).
    #[test]
    fn the_limit_parameter_lowers_the_expansion_limit() {
        let ask = |limit: Option<usize>, max: usize| {
            let mut params = vec![
                json!({"name": "tx-resource", "resource": {
                    "resourceType": "CodeSystem", "url": "http://cs", "content": "complete",
                    "concept": [{"code": "a"}, {"code": "b"}, {"code": "c"}]}}),
                json!({"name": "valueSet", "resource": {
                    "resourceType": "ValueSet", "url": "http://vs", "version": "1",
                    "compose": {"include": [{"system": "http://cs"}]}}}),
            ];
            if let Some(l) = limit {
                params.push(json!({"name": "limit", "valueInteger": l}));
            }
            let mut req = Request::new(json!({"resourceType": "Parameters", "parameter": params}));
            req.max_expansion = max;
            expand(&req, "u", "t")
        };
        for (limit, max) in [(None, 100), (Some(3), 100), (Some(0), 100), (Some(100), 3)] {
            let out = ask(limit, max).unwrap();
            assert_eq!(out["expansion"]["total"], 3, "{limit:?} {max}");
        }
        for (limit, max, past) in [(Some(2), 100, 2), (Some(100), 2, 2), (None, 2, 2)] {
            let err = ask(limit, max).unwrap_err();
            assert_eq!(err.status(), 422, "{err}");
            assert_eq!(
                err.to_string(),
                format!(
                    "The value set 'http://vs|1' expansion has too many codes to produce (>{past})"
                ),
            );
        }
    }

    #[test]
    fn expansions_nest_filter_and_exclude() {
        let body = json!({"resourceType": "Parameters", "parameter": [
            {"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://cs", "version": "1",
                "concept": [{"code": "a", "display": "A", "concept": [
                    {"code": "b", "display": "B"}, {"code": "c", "display": "C"}]}]
            }},
            {"name": "valueSet", "resource": {
                "resourceType": "ValueSet", "url": "http://vs",
                "compose": {
                    "include": [{"system": "http://cs", "filter": [{"property": "concept", "op": "is-a", "value": "a"}]}],
                    "exclude": [{"system": "http://cs", "concept": [{"code": "c"}]}]
                }
            }},
        ]});
        let out = expand(
            &Request::new(body.clone()),
            "urn:uuid:x",
            "2024-01-01T00:00:00Z",
        )
        .unwrap();
        let e = &out["expansion"];
        assert_eq!(e["total"], 2);
        assert_eq!(e["contains"][0]["code"], "a");
        assert_eq!(e["contains"][0]["contains"][0]["code"], "b");
        assert_eq!(e["parameter"][0]["valueUri"], "http://cs|1");
    }

    #[test]
    fn a_text_filter_keeps_the_tree_only_over_property_filters() {
        let body = |include: Value| {
            json!({"resourceType": "Parameters", "parameter": [
                {"name": "tx-resource", "resource": {
                    "resourceType": "CodeSystem", "url": "http://cs", "version": "1",
                    "concept": [{"code": "x", "display": "X"},
                        {"code": "data", "display": "Data", "concept": [
                        {"code": "data1", "display": "Data 1"}]}]
                }},
                {"name": "valueSet", "resource": {
                    "resourceType": "ValueSet", "url": "http://vs",
                    "compose": {"include": [include]}
                }},
                {"name": "filter", "valueString": "data"},
            ]})
        };
        let whole = body(json!({"system": "http://cs"}));
        let out = expand(
            &Request::new(whole.clone()),
            "urn:uuid:x",
            "2024-01-01T00:00:00Z",
        )
        .unwrap();
        assert_eq!(out["expansion"]["contains"].as_array().unwrap().len(), 2);
        let filtered = body(json!({"system": "http://cs",
            "filter": [{"property": "concept", "op": "is-a", "value": "data"}]}));
        let out = expand(
            &Request::new(filtered.clone()),
            "urn:uuid:x",
            "2024-01-01T00:00:00Z",
        )
        .unwrap();
        let e = &out["expansion"];
        assert_eq!(e["total"], 2);
        assert_eq!(e["contains"].as_array().unwrap().len(), 1);
        assert_eq!(e["contains"][0]["contains"][0]["code"], "data1");
    }

    fn two_versions(compose: Value) -> Value {
        let cs = |v: &str, codes: &[&str]| {
            json!({"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://cs", "version": v,
                "concept": codes.iter().map(|c| json!({"code": c, "display": format!("{c} {v}")})).collect::<Vec<_>>()
            }})
        };
        json!({"resourceType": "Parameters", "parameter": [
            cs("1", &["a", "b"]), cs("2", &["a", "c"]),
            {"name": "valueSet", "resource": {"resourceType": "ValueSet", "url": "http://vs", "compose": compose}},
        ]})
    }

    fn codes(out: &Value) -> Vec<String> {
        out["expansion"]["contains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                format!(
                    "{}|{}",
                    c["code"].as_str().unwrap(),
                    c["version"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn versions_of_one_system_are_kept_apart_or_merged() {
        let includes = json!([{"system": "http://cs", "version": "1"}, {"system": "http://cs", "version": "2"}]);
        let out = expand(
            &Request::new(two_versions(json!({"include": includes}))),
            "u",
            "t",
        )
        .unwrap();
        assert_eq!(codes(&out), ["a|2", "a|1", "b|1", "c|2"]);
        let merged = json!({"include": includes, "extension": [{
            "url": "http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter",
            "extension": [{"url": "name", "valueCode": "versionsMatch"}, {"url": "value", "valueString": "true"}]}]});
        let out = expand(&Request::new(two_versions(merged)), "u", "t").unwrap();
        assert_eq!(codes(&out), ["a|2", "b|1", "c|2"]);
        // The merged code keeps its first display.
        assert_eq!(out["expansion"]["contains"][0]["display"], "a 1");
    }

    #[test]
    fn an_exclude_of_another_version_excludes_by_code() {
        let compose = json!({
            "include": [{"system": "http://cs", "version": "2"}],
            "exclude": [{"system": "http://cs", "version": "1", "concept": [{"code": "a"}]}]});
        let out = expand(&Request::new(two_versions(compose)), "u", "t").unwrap();
        assert_eq!(codes(&out), ["c|2"]);
        let echoed = out["expansion"]["parameter"].as_array().unwrap();
        assert!(echoed.iter().any(|p| p["name"] == "versionsMatch"));
        // An exclude of a version the expansion holds excludes that version only.
        let compose = json!({
            "include": [{"system": "http://cs", "version": "1"}, {"system": "http://cs", "version": "2"}],
            "exclude": [{"system": "http://cs", "version": "1", "concept": [{"code": "a"}]}]});
        let out = expand(&Request::new(two_versions(compose)), "u", "t").unwrap();
        assert_eq!(codes(&out), ["a|2", "b|1", "c|2"]);
    }

    #[test]
    fn a_cycle_of_imports_is_an_error() {
        let vs = |url: &str, other: &str| {
            json!({"name": "tx-resource", "resource": {
                "resourceType": "ValueSet", "url": url,
                "compose": {"include": [{"valueSet": [other]}]}
            }})
        };
        let body = json!({"resourceType": "Parameters", "parameter": [
            vs("http://a", "http://b"), vs("http://b", "http://a"),
            {"name": "url", "valueUri": "http://a"},
        ]});
        let err = expand(&Request::new(body.clone()), "urn:uuid:x", "t").unwrap_err();
        assert_eq!(
            err.to_string(),
            "Found a circularity pointing to http://a processing ValueSet with pathway [http://a, http://b]"
        );
    }
}
