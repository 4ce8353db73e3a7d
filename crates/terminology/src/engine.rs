//! Value set semantics over the request's resources: membership of one
//! code (no enumeration: the code is located, then each rule's concept
//! list or compiled filters test it) and expansion (each include
//! enumerated once, narrowed by its filters, deduplicated by a hash set,
//! excludes removed by another). A rule's filters are its code system's
//! own when it compiles them (SNOMED CT: ECL), else the generic ones; a
//! code system's implicit value sets import like any other. Imports
//! recurse with the path kept, so a cycle is an error, and the depth is
//! bounded ([`MAX_IMPORT_DEPTH`]), so a long chain is one too rather than
//! a stack overflow. Each value set is expanded, searched for a code and
//! checked for cycles once per request (memoised by identity): a value
//! set imported along many paths — a diamond of imports, 2^depth paths —
//! costs what one path does, and an expansion is linear in its codes.

use crate::request::Stop;
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};

use std::borrow::Cow;

use crate::error::Error;
use crate::filter::Filter;
use crate::provider::{CodeSystemProvider, ConceptId, NativeFilters, same};
use crate::resolver::{CsMiss, Resolver};
use crate::valueset::FilterDef;
use crate::valueset::{Rule, RuleConcept, ValueSet};

/// One code of an expansion.
#[derive(Clone, Copy, Debug)]
pub struct Entry<'r> {
    pub cs: &'r dyn CodeSystemProvider,
    pub id: ConceptId,
    /// The value set's entry for the code, when it lists it.
    pub concept: Option<&'r RuleConcept>,
    /// The version the code is reported in, when several versions were
    /// merged (`versionsMatch`): the last one to include it.
    pub reported: Option<&'r dyn CodeSystemProvider>,
}

impl<'r> Entry<'r> {
    fn key(&self) -> (&'r str, Cow<'r, str>) {
        let cs: &'r dyn CodeSystemProvider = self.cs;
        (cs.url(), cs.code(self.id))
    }

    /// The key of the code in its version of the code system.
    fn versioned_key(&self) -> (&'r str, Option<&'r str>, Cow<'r, str>) {
        let cs: &'r dyn CodeSystemProvider = self.cs;
        (cs.url(), cs.version(), cs.code(self.id))
    }

    /// The code system version the entry is reported in.
    pub fn version(&self) -> Option<&'r str> {
        self.reported.unwrap_or(self.cs).version()
    }
}

/// A value set a rule imports.
#[derive(Debug)]
enum Imported<'r> {
    Set(&'r ValueSet),
    /// A code system's implicit value set: its filters (none: every
    /// concept).
    Implicit(&'r dyn CodeSystemProvider, Vec<FilterDef>),
}

/// What membership found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Membership {
    pub found: bool,
    /// Found, but inactive and the value set excludes inactive codes.
    pub inactive_excluded: bool,
}

/// A grammar's common codes, listed in an expansion in place of the whole
/// code system ([`crate::grammar`]).
#[derive(Clone, Copy, Debug)]
pub struct Sampled<'r> {
    pub system: &'r str,
    /// The value set of the common codes.
    pub common: &'r ValueSet,
    /// Listed for an include of the whole system (no filters).
    pub whole: bool,
}

/// Evaluates value sets against one [`Resolver`].
#[derive(Debug)]
pub struct Engine<'r> {
    pub resolver: &'r Resolver,
    /// The most codes an expansion may hold.
    pub max: usize,
    /// Whether an expansion is being made (changes the version message).
    pub expanding: bool,
    /// The code systems and value sets used so far, each once.
    used_cs: RefCell<Vec<&'r dyn CodeSystemProvider>>,
    used_vs: RefCell<Vec<&'r ValueSet>>,
    /// Grammars whose common codes stood for them.
    sampled: RefCell<Vec<Sampled<'r>>>,
    /// The request's version parameters (`system-version`...).
    pub versions: crate::version::VersionRules,
    /// An exclude of another version than the one expanded removed codes
    /// by code alone (`versionsMatch`).
    pub versions_matched: Cell<bool>,
    /// When the request's work must stop.
    stop: Stop,
    /// Each value set's expansion, made once (by the value set's address:
    /// a request's resources do not move while its engine lives).
    expanded: RefCell<HashMap<usize, Vec<Entry<'r>>>>,
    /// Each value set's membership of a code, found once: (value set,
    /// system, version, code).
    found: RefCell<HashMap<Asked, Membership>>,
    /// Value sets whose imports are known to hold no cycle.
    acyclic: RefCell<HashSet<usize>>,
}

/// The address of a provider, for telling providers apart without
/// comparing their codes.
fn provider_addr(cs: &dyn CodeSystemProvider) -> usize {
    std::ptr::from_ref(cs).cast::<()>() as usize
}

/// Whether the entries all come from one provider that holds its codes in
/// a store (codes and ids one-to-one: a CodeSystem resource may list a
/// code twice), and which: their keys can then be compared as ids, with
/// no code made as text.
fn one_store<'a, 'r: 'a>(entries: impl IntoIterator<Item = &'a Entry<'r>>) -> Option<usize> {
    let mut entries = entries.into_iter();
    let first = entries.next()?;
    let addr = provider_addr(first.cs);
    (first.cs.resource().is_none() && entries.all(|e| provider_addr(e.cs) == addr)).then_some(addr)
}

/// The codes of a list of entries, for membership tests: as ids when
/// they are of one store ([`one_store`]), else as (system, code).
struct Keys<'r> {
    store: Option<(usize, HashSet<ConceptId>)>,
    entries: &'r [Entry<'r>],
    codes: std::cell::OnceCell<HashSet<(&'r str, Cow<'r, str>)>>,
}

impl<'r> Keys<'r> {
    fn of(entries: &'r [Entry<'r>]) -> Keys<'r> {
        Keys {
            store: one_store(entries).map(|a| (a, entries.iter().map(|e| e.id).collect())),
            entries,
            codes: std::cell::OnceCell::new(),
        }
    }

    /// Whether `e`'s code (of its system) is among them.
    fn contains(&self, e: &Entry<'r>) -> bool {
        if let Some((addr, ids)) = &self.store
            && provider_addr(e.cs) == *addr
        {
            return ids.contains(&e.id);
        }
        self.codes
            .get_or_init(|| self.entries.iter().map(Entry::key).collect())
            .contains(&e.key())
    }
}

/// A membership question: (value set, system, version, code).
type Asked = (usize, String, Option<String>, String);

/// A value set's identity within one request, for the memos.
fn identity(vs: &ValueSet) -> usize {
    std::ptr::from_ref(vs) as usize
}

impl<'r> Engine<'r> {
    pub fn new(resolver: &'r Resolver, max: usize, expanding: bool) -> Engine<'r> {
        Engine {
            resolver,
            max,
            expanding,
            used_cs: RefCell::default(),
            used_vs: RefCell::default(),
            sampled: RefCell::default(),
            versions: Default::default(),
            versions_matched: Cell::new(false),
            stop: Stop::default(),
            expanded: RefCell::default(),
            found: RefCell::default(),
            acyclic: RefCell::default(),
        }
    }

    /// The same engine under a request's time budget and watch.
    pub fn with_stop(mut self, stop: Stop) -> Engine<'r> {
        self.stop = stop;
        self
    }

    /// An error once the time budget has run out or the watch says stop.
    fn check_deadline(&self) -> Result<(), Error> {
        self.stop.check()
    }

    /// The same engine under a request's version parameters.
    pub fn with_versions(mut self, versions: crate::version::VersionRules) -> Engine<'r> {
        self.versions = versions;
        self
    }

    /// The code systems used, in first-use order.
    pub fn used_code_systems(&self) -> Vec<&'r dyn CodeSystemProvider> {
        self.used_cs.borrow().clone()
    }

    /// The value sets used (the one asked about and its imports).
    pub fn used_value_sets(&self) -> Vec<&'r ValueSet> {
        self.used_vs.borrow().clone()
    }

    /// The grammars whose common codes stood for them, in first-use order.
    pub fn sampled(&self) -> Vec<Sampled<'r>> {
        self.sampled.borrow().clone()
    }

    /// Notes that the answer used `cs` (its status cautions are reported).
    pub(crate) fn use_cs(&self, cs: &'r dyn CodeSystemProvider) {
        let mut u = self.used_cs.borrow_mut();
        if !u.iter().any(|c| same(*c, cs)) {
            u.push(cs);
        }
    }

    fn use_vs(&self, vs: &'r ValueSet) {
        let mut u = self.used_vs.borrow_mut();
        if !u.iter().any(|v| std::ptr::eq(*v, vs)) {
            u.push(vs);
        }
    }

    /// The code system of a rule.
    pub fn code_system(
        &self,
        url: &str,
        version: Option<&str>,
    ) -> Result<&'r dyn CodeSystemProvider, Error> {
        self.resolver
            .code_system(url, version)
            .map_err(|miss| match miss {
                CsMiss::Unknown => Error::CodeSystemNotFound {
                    url: url.to_owned(),
                },
                CsMiss::Version(known) => Error::CodeSystemVersionNotFound {
                    url: url.to_owned(),
                    version: version.unwrap_or_default().to_owned(),
                    known,
                    expanding: self.expanding,
                },
                CsMiss::Unavailable(e) => e,
            })
    }

    /// An imported value set: contained in `from` (`#id`) or a resource,
    /// in the canonical's version, else `default-valueset-version`'s; or
    /// a code system's implicit value set (`http://snomed.info/sct?fhir_vs=…`).
    /// An expansion names a missing version by its own message.
    fn import(&self, from: &'r ValueSet, canonical: &str) -> Result<Imported<'r>, Error> {
        if let Some(vs) = from.contained(canonical) {
            return Ok(Imported::Set(vs));
        }
        let (url, version) = self.versions.import_version(canonical);
        if let Some(vs) = self.resolver.value_set(url, version.as_deref()) {
            return Ok(Imported::Set(vs));
        }
        if let Some(found) = self.resolver.implicit_value_set(canonical) {
            let (cs, filters) = found?;
            self.use_cs(cs);
            return Ok(Imported::Implicit(cs, filters));
        }
        Err(match version {
            Some(version) if self.expanding => Error::ImportVersionNotFound {
                url: url.to_owned(),
                version,
            },
            Some(version) => Error::ValueSetNotFound {
                url: format!("{url}|{version}"),
            },
            None => Error::ValueSetNotFound {
                url: canonical.to_owned(),
            },
        })
    }

    /// Whether `code` of `system` is in an imported value set.
    fn imported_contains(
        &self,
        imported: Imported<'r>,
        system: &str,
        version: Option<&str>,
        code: &str,
        path: &mut Vec<String>,
    ) -> Result<bool, Error> {
        match imported {
            Imported::Set(vs) => Ok(self.contains_in(vs, system, version, code, path)?.found),
            Imported::Implicit(cs, filters) => {
                if cs.url() != system {
                    return Ok(false);
                }
                let Some(located) = cs.locate(code) else {
                    return Ok(false);
                };
                Ok(filters.is_empty() || self.filters(cs, &filters)?.matches(located.id)?)
            }
        }
    }

    /// The codes of an imported value set.
    fn imported_entries(
        &self,
        imported: Imported<'r>,
        path: &mut Vec<String>,
    ) -> Result<Vec<Entry<'r>>, Error> {
        match imported {
            Imported::Set(vs) => self.expand_in(vs, path),
            Imported::Implicit(cs, filters) => {
                let name = path.last().cloned().unwrap_or_default();
                self.members(cs, &filters, Some(&name))
            }
        }
    }

    /// Whether `code` of `system` is in `vs`.
    pub fn contains(
        &self,
        vs: &'r ValueSet,
        system: &str,
        version: Option<&str>,
        code: &str,
    ) -> Result<Membership, Error> {
        self.check_cycles(vs, &mut Vec::new())?;
        self.contains_in(vs, system, version, code, &mut Vec::new())
    }

    /// A cycle among the imports of `vs` (includes and excludes), found
    /// before any code is tested: membership would not always meet it.
    /// Imports that cannot be found are left to the evaluation.
    pub fn check_cycles(&self, vs: &'r ValueSet, path: &mut Vec<String>) -> Result<(), Error> {
        if self.acyclic.borrow().contains(&identity(vs)) {
            return Ok(());
        }
        enter(vs, path)?;
        for rule in vs.compose.include.iter().chain(&vs.compose.exclude) {
            for canonical in &rule.value_sets {
                self.check_deadline()?;
                if let Ok(Imported::Set(imported)) = self.import(vs, canonical) {
                    self.check_cycles(imported, path)?;
                }
            }
        }
        path.pop();
        self.acyclic.borrow_mut().insert(identity(vs));
        Ok(())
    }

    fn contains_in(
        &self,
        vs: &'r ValueSet,
        system: &str,
        version: Option<&str>,
        code: &str,
        path: &mut Vec<String>,
    ) -> Result<Membership, Error> {
        let key = (
            identity(vs),
            system.to_owned(),
            version.map(str::to_owned),
            code.to_owned(),
        );
        if let Some(m) = self.found.borrow().get(&key) {
            return Ok(m.clone());
        }
        let m = self.contains_once(vs, system, version, code, path)?;
        self.found.borrow_mut().insert(key, m.clone());
        Ok(m)
    }

    fn contains_once(
        &self,
        vs: &'r ValueSet,
        system: &str,
        version: Option<&str>,
        code: &str,
        path: &mut Vec<String>,
    ) -> Result<Membership, Error> {
        enter(vs, path)?;
        self.use_vs(vs);
        let mut found = false;
        let mut inactive = false;
        for rule in &vs.compose.include {
            self.check_deadline()?;
            if let Some((hit, id_inactive)) =
                self.rule_contains(vs, rule, system, version, code, path, true)?
                && hit
            {
                found = true;
                inactive = id_inactive;
                break;
            }
        }
        if found {
            for rule in &vs.compose.exclude {
                if let Some((true, _)) =
                    self.rule_contains(vs, rule, system, version, code, path, false)?
                {
                    found = false;
                    break;
                }
            }
        }
        path.pop();
        let inactive_excluded = found && inactive && vs.compose.inactive == Some(false);
        Ok(Membership {
            found: found && !inactive_excluded,
            inactive_excluded,
        })
    }

    /// `Some((in, inactive))` when the rule can speak for the system.
    #[allow(clippy::too_many_arguments)]
    fn rule_contains(
        &self,
        from: &'r ValueSet,
        rule: &'r Rule,
        system: &str,
        version: Option<&str>,
        code: &str,
        path: &mut Vec<String>,
        include: bool,
    ) -> Result<Option<(bool, bool)>, Error> {
        let mut inactive = false;
        if let Some(s) = &rule.system {
            if s != system {
                return Ok(None);
            }
            let asked = self.versions.include_version(s, rule.version.as_deref());
            // A version the include does not include: it says nothing.
            // (An exclude of one version excludes the code.)
            if include
                && let (Some(v), Some(a)) = (version, asked.as_deref())
                && !crate::resolver::version_matches(a, v)
            {
                return Ok(None);
            }
            let cs = if include {
                self.code_system(s, version.or(asked.as_deref()))?
            } else {
                self.code_system(s, asked.as_deref().or(version))?
            };
            self.use_cs(cs);
            let Some(located) = cs.locate(code) else {
                return Ok(Some((false, false)));
            };
            let id = located.id;
            inactive = cs.status(id).inactive;
            if !rule.concepts.is_empty() {
                let listed = rule.concepts.iter().any(|c| {
                    c.code == cs.code(id)
                        || (!cs.case_sensitive() && c.code.eq_ignore_ascii_case(code))
                });
                if !listed {
                    return Ok(Some((false, inactive)));
                }
            }
            if !rule.filters.is_empty() && !self.filters(cs, &rule.filters)?.matches(id)? {
                return Ok(Some((false, inactive)));
            }
        }
        for canonical in &rule.value_sets {
            let imported = self.import(from, canonical)?;
            if !self.imported_contains(imported, system, version, code, path)? {
                return Ok(Some((false, inactive)));
            }
        }
        Ok(Some((true, inactive)))
    }

    /// The codes of `vs`, in include order, each once.
    pub fn expand(&self, vs: &'r ValueSet) -> Result<Vec<Entry<'r>>, Error> {
        self.expand_in(vs, &mut Vec::new())
    }

    fn expand_in(&self, vs: &'r ValueSet, path: &mut Vec<String>) -> Result<Vec<Entry<'r>>, Error> {
        if let Some(done) = self.expanded.borrow().get(&identity(vs)) {
            return Ok(done.clone());
        }
        let out = self.expand_once(vs, path)?;
        self.expanded.borrow_mut().insert(identity(vs), out.clone());
        Ok(out)
    }

    fn expand_once(
        &self,
        vs: &'r ValueSet,
        path: &mut Vec<String>,
    ) -> Result<Vec<Entry<'r>>, Error> {
        enter(vs, path)?;
        let name = vs.versioned_url();
        self.use_vs(vs);
        // Several versions of one system: by default each version's code
        // is its own entry; `versionsMatch` merges them by code.
        let merged = vs.expansion_parameter("versionsMatch").as_deref() == Some("true");
        let separate_excludes = vs.expansion_parameter("versionsMatch").as_deref() == Some("false");
        let mut out: Vec<Entry<'r>> = Vec::new();
        let mut seen: HashMap<(&str, Option<&str>, Cow<str>), usize> = HashMap::new();
        // Codes held in some version: a code new in every version goes at
        // the end without a search (the common case, so expansion is
        // linear); only another version of a held code is placed beside
        // it.
        let mut held: HashSet<(&str, Cow<str>)> = HashSet::new();
        let mut included = Vec::with_capacity(vs.compose.include.len());
        for rule in &vs.compose.include {
            self.check_deadline()?;
            included.push((rule, self.rule_entries(vs, rule, path, true)?));
        }
        // Every code of one store (one system, one version): each code is
        // its id, and an expansion is its ids, each once, in include order.
        if one_store(included.iter().flat_map(|(_, entries)| entries)).is_some() {
            let mut ids = HashSet::new();
            let all = included
                .iter()
                .flat_map(|(_, entries)| entries.iter().copied());
            for (i, e) in all.enumerate() {
                if i % 1024 == 1023 {
                    self.check_deadline()?;
                }
                if ids.insert(e.id) {
                    out.push(e);
                    if out.len() > self.max {
                        return Err(Error::TooCostly {
                            value_set: name,
                            limit: self.max,
                        });
                    }
                }
            }
            included.clear();
        }
        for (rule, entries) in included {
            for e in entries {
                if out.len() % 1024 == 1023 {
                    self.check_deadline()?;
                }
                let key = if merged {
                    let (u, c) = e.key();
                    (u, None, c)
                } else {
                    e.versioned_key()
                };
                if let Some(&at) = seen.get(&key) {
                    if merged && !same(out[at].cs, e.cs) {
                        out[at].reported = Some(e.cs);
                    }
                    continue;
                }
                // Another version of a code already there: an include that
                // names its version goes first, one that does not after
                // them (the pinned versions lead, the latest pinned first).
                let at = if held.insert(e.key()) {
                    None
                } else if rule.version.is_some() {
                    out.iter().position(|o| o.key() == e.key())
                } else {
                    out.iter().rposition(|o| o.key() == e.key()).map(|i| i + 1)
                }
                .unwrap_or(out.len());
                out.insert(at, e);
                if at != out.len() - 1 {
                    for v in seen.values_mut() {
                        if *v >= at {
                            *v += 1;
                        }
                    }
                }
                seen.insert(key, at);
                if out.len() > self.max {
                    return Err(Error::TooCostly {
                        value_set: name,
                        limit: self.max,
                    });
                }
            }
        }
        if !vs.compose.exclude.is_empty() {
            let mut exact: HashSet<(&str, Option<&str>, Cow<str>)> = HashSet::new();
            let mut by_code: HashSet<(&str, Cow<str>)> = HashSet::new();
            for rule in &vs.compose.exclude {
                let entries = self.rule_entries(vs, rule, path, false)?;
                // An exclude of a version the expansion holds excludes that
                // version's codes; of another version (unless versions
                // are kept apart), the codes in whatever version.
                let version_held = rule.version.is_none()
                    || separate_excludes
                    || entries.first().is_none_or(|x| {
                        out.iter()
                            .any(|o| o.cs.url() == x.cs.url() && o.version() == x.cs.version())
                    });
                if rule.version.is_none() || !version_held {
                    if !version_held && !entries.is_empty() {
                        self.versions_matched.set(true);
                    }
                    by_code.extend(entries.iter().map(Entry::key));
                } else {
                    exact.extend(entries.iter().map(Entry::versioned_key));
                }
            }
            out.retain(|e| !exact.contains(&e.versioned_key()) && !by_code.contains(&e.key()));
        }
        if vs.compose.inactive == Some(false) {
            out.retain(|e| !e.cs.status(e.id).inactive);
        }
        path.pop();
        Ok(out)
    }

    fn rule_entries(
        &self,
        from: &'r ValueSet,
        rule: &'r Rule,
        path: &mut Vec<String>,
        include: bool,
    ) -> Result<Vec<Entry<'r>>, Error> {
        let mut entries: Vec<Entry<'r>> = Vec::new();
        let imported = rule
            .value_sets
            .iter()
            .map(|c| {
                let imported = self.import(from, c)?;
                self.imported_entries(imported, path)
            })
            .collect::<Result<Vec<_>, Error>>()?;
        if let Some(s) = &rule.system {
            let asked = self.versions.include_version(s, rule.version.as_deref());
            let cs = self.code_system(s, asked.as_deref())?;
            if let Some(e) = self.versions.check_error(s, cs.version()) {
                return Err(e);
            }
            self.use_cs(cs);
            if !rule.concepts.is_empty() {
                for c in &rule.concepts {
                    if let Some(l) = cs.locate(&c.code) {
                        entries.push(Entry {
                            cs,
                            id: l.id,
                            concept: Some(c),
                            reported: None,
                        });
                    }
                }
            } else {
                // An include alone is the expansion's size; narrowed by
                // imports or excluded, it is not.
                let name = from.versioned_url();
                let limited = (include && imported.is_empty()).then_some(name.as_str());
                entries.extend(self.members(cs, &rule.filters, limited)?);
            }
            for set in &imported {
                let keys = Keys::of(set);
                entries.retain(|e| keys.contains(e));
            }
        } else if let Some((first, rest)) = imported.split_first() {
            let rest: Vec<Keys> = rest.iter().map(|set| Keys::of(set)).collect();
            entries.extend(
                first
                    .iter()
                    .filter(|e| rest.iter().all(|keys| keys.contains(e)))
                    .copied(),
            );
        }
        Ok(entries)
    }
}

/// The engine's generic filters over any provider, all of which a
/// concept must pass.
struct Generic<'c> {
    cs: &'c dyn CodeSystemProvider,
    filters: Vec<Filter>,
    stop: Stop,
}

impl NativeFilters for Generic<'_> {
    fn matches(&self, id: ConceptId) -> Result<bool, Error> {
        Ok(self.filters.iter().all(|f| f.matches(self.cs, id)))
    }

    fn members(&self) -> Result<Vec<ConceptId>, Error> {
        let candidates = match self.filters.iter().find_map(|f| f.candidates(self.cs)) {
            Some(c) => c,
            None if !self.cs.enumerable() => {
                return Err(Error::NotEnumerable {
                    system: self.cs.url().to_owned(),
                });
            }
            None => self.cs.all(),
        };
        let mut out = Vec::new();
        for (i, id) in candidates.into_iter().enumerate() {
            if i % 4096 == 4095 {
                self.stop.check()?;
            }
            if self.filters.iter().all(|f| f.matches(self.cs, id)) {
                out.push(id);
            }
        }
        Ok(out)
    }
}

impl<'r> Engine<'r> {
    /// The concepts of `cs` that pass `filters` (all of them when there
    /// are none), as entries. With `limited`, the value set so named may
    /// hold no more than the expansion limit, and more is too costly
    /// before the codes are listed (all of SNOMED CT is 350,000 entries).
    fn members(
        &self,
        cs: &'r dyn CodeSystemProvider,
        filters: &[FilterDef],
        limited: Option<&str>,
    ) -> Result<Vec<Entry<'r>>, Error> {
        let too_many = |n: usize| match limited {
            Some(name) if n > self.max => Err(Error::TooCostly {
                value_set: name.to_owned(),
                limit: self.max,
            }),
            _ => Ok(()),
        };
        let ids = if !cs.enumerable() {
            self.sample(cs, filters)?
        } else if filters.is_empty() {
            too_many(cs.len())?;
            cs.all()
        } else {
            self.filters(cs, filters)?.members()?
        };
        too_many(ids.len())?;
        Ok(ids
            .into_iter()
            .map(|id| Entry {
                cs,
                id,
                concept: None,
                reported: None,
            })
            .collect())
    }

    /// The members of a code system that cannot be enumerated: those its
    /// filters name, else its grammar's common codes that pass them
    /// (noted, for the expansion to say so), else none can be listed.
    fn sample(
        &self,
        cs: &'r dyn CodeSystemProvider,
        filters: &[FilterDef],
    ) -> Result<Vec<ConceptId>, Error> {
        let compiled = self.filters(cs, filters)?;
        if !filters.is_empty() {
            match compiled.members() {
                Err(Error::NotEnumerable { .. }) => {}
                named => return named,
            }
        }
        let Some((common, ids)) = crate::grammar::common_codes(cs) else {
            return Err(Error::NotEnumerable {
                system: cs.url().to_owned(),
            });
        };
        let mut out = Vec::new();
        for id in ids {
            if compiled.matches(id)? {
                out.push(id);
            }
        }
        let mut sampled = self.sampled.borrow_mut();
        let whole = filters.is_empty();
        if !sampled
            .iter()
            .any(|s| std::ptr::eq(s.common, common) && s.whole == whole)
        {
            sampled.push(Sampled {
                system: cs.url(),
                common,
                whole,
            });
        }
        Ok(out)
    }

    /// A rule's filters, compiled by the provider when it compiles its
    /// own (SNOMED CT to ECL), else the generic ones.
    fn filters<'c>(
        &self,
        cs: &'c dyn CodeSystemProvider,
        defs: &[FilterDef],
    ) -> Result<Box<dyn NativeFilters + 'c>, Error> {
        if let Some(native) = cs.native_filters(defs, self.stop.deadline) {
            return native;
        }
        let filters = defs
            .iter()
            .map(|f| Filter::compile(cs, f))
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Box::new(Generic {
            cs,
            filters,
            stop: self.stop.clone(),
        }))
    }
}

/// How deep value sets may import value sets. Imports are followed by
/// recursion, which the request controls: past this it is an error, not a
/// stack overflow (a chain of 1,200 imports overflowed a worker's stack).
/// Real value sets import a few levels deep.
pub const MAX_IMPORT_DEPTH: usize = 64;

/// Puts `vs` on the import path `path`, or fails with the cycle it would
/// close (imports are followed depth first, so a repeat is a cycle).
fn enter(vs: &ValueSet, path: &mut Vec<String>) -> Result<(), Error> {
    let name = vs.versioned_url();
    if path.len() >= MAX_IMPORT_DEPTH {
        return Err(Error::ImportsTooDeep {
            url: name,
            depth: MAX_IMPORT_DEPTH,
        });
    }
    if path.contains(&name) {
        return Err(Error::Circular {
            url: name,
            path: path.clone(),
        });
    }
    path.push(name);
    Ok(())
}
