//! The resources a request can see: its `tx-resource` CodeSystems and
//! ValueSets, found by URL and by `url|version`. Supplements are kept
//! apart and applied to the code system they supplement when a value set
//! or the request asks for them. A URL the request does not define is
//! looked up in the loaded FHIR packages ([`ResourceSource`]), if any.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::codesystem::CodeSystem;
use crate::external::ResourceSource;
use crate::grammar::{Grammar, GrammarProvider};
use crate::provider::{CodeSystemProvider, Content};
use crate::valueset::ValueSet;

/// The code systems and value sets of one request.
#[derive(Clone, Debug, Default)]
pub struct Resolver {
    code_systems: Vec<CodeSystem>,
    value_sets: Vec<ValueSet>,
    /// Code system positions by URL, in the order given.
    cs_by_url: HashMap<String, Vec<usize>>,
    /// Resources from FHIR packages, asked after the request's own.
    external: Option<Arc<dyn ResourceSource>>,
    /// The grammar code systems of the external source, as this
    /// request's providers: made on first use, and a clone starts over.
    grammars: OnceLock<Vec<GrammarProvider>>,
}

/// An implicit value set: the code system version it is of, and the
/// filters it means.
pub type Implicit<'a> = (&'a dyn CodeSystemProvider, Vec<crate::valueset::FilterDef>);

/// Why a code system could not be found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CsMiss {
    /// No version of the system is known.
    Unknown,
    /// The system is known, not in that version; the known versions.
    Version(Vec<String>),
    /// The version asked for (or the default one) is held, and out of
    /// service now: why ([`CodeSystemProvider::in_service`]).
    Unavailable(crate::Error),
}

impl Resolver {
    /// Indexes the resources; others (ConceptMaps...) are ignored.
    pub fn new<'a>(resources: impl IntoIterator<Item = &'a Value>) -> Resolver {
        let mut r = Resolver::default();
        for v in resources {
            match v.get("resourceType").and_then(Value::as_str) {
                Some("CodeSystem") => {
                    if let Some(cs) = CodeSystem::from_json(v) {
                        r.cs_by_url
                            .entry(cs.url.clone())
                            .or_default()
                            .push(r.code_systems.len());
                        r.code_systems.push(cs);
                    }
                }
                Some("ValueSet") => r.value_sets.extend(ValueSet::from_json(v)),
                _ => {}
            }
        }
        r
    }

    /// The language packs the request sent ([`crate::supplement`]), which
    /// apply without being named.
    pub fn language_packs(&self) -> impl Iterator<Item = &CodeSystem> {
        self.code_systems
            .iter()
            .filter(|cs| crate::supplement::is_language_pack(cs))
    }

    /// Adds the resources of loaded FHIR packages, consulted for URLs the
    /// request's `tx-resource`s do not define.
    pub fn set_external(&mut self, source: Option<Arc<dyn ResourceSource>>) {
        self.external = source;
    }

    /// Every version of the code system `url`: the request's, else the
    /// packages' and the stores', else a grammar's.
    fn cs_candidates(&self, url: &str) -> Vec<&dyn CodeSystemProvider> {
        let mut v: Vec<&dyn CodeSystemProvider> = ResourceSource::code_systems(self, url)
            .into_iter()
            .map(|cs| cs as &dyn CodeSystemProvider)
            .collect();
        v.extend(ResourceSource::providers(self, url));
        // A grammar answers when nothing else holds the system's codes (a
        // package's `not-present` CodeSystem only names it).
        if v.iter().all(|cs| cs.content() == Content::NotPresent) {
            let grammars = self.grammars.get_or_init(|| {
                self.external
                    .as_deref()
                    .map(|e| e.grammars().into_iter().map(GrammarProvider::new).collect())
                    .unwrap_or_default()
            });
            let matching = grammars.iter().filter(|g| g.url() == url);
            let matching: Vec<&dyn CodeSystemProvider> =
                matching.map(|g| g as &dyn CodeSystemProvider).collect();
            if !matching.is_empty() {
                v = matching;
            }
        }
        v
    }

    /// The code system `url` in `version` (wildcards `x` and `*` match a
    /// segment), or the latest version when none is asked for (a
    /// provider's default version first); if that one is out of service,
    /// why.
    pub fn code_system(
        &self,
        url: &str,
        version: Option<&str>,
    ) -> Result<&dyn CodeSystemProvider, CsMiss> {
        let found = self.pick(url, version)?;
        found.in_service().map_err(CsMiss::Unavailable)?;
        Ok(found)
    }

    /// The version [`Resolver::code_system`] picks, in service or not: for
    /// choosing which version a coding means (its `version()`), never for
    /// reading its concepts.
    pub fn pick(
        &self,
        url: &str,
        version: Option<&str>,
    ) -> Result<&dyn CodeSystemProvider, CsMiss> {
        let (url, pinned) = crate::valueset::split_canonical(url);
        let version = version.or(pinned);
        let list = self.cs_candidates(url);
        if list.is_empty() {
            return Err(CsMiss::Unknown);
        }
        let candidates = list.into_iter();
        let found = match version {
            None => candidates.max_by(|a, b| {
                (a.is_default_version().cmp(&b.is_default_version()))
                    .then_with(|| version_cmp(a.version(), b.version()))
            }),
            Some(v) => candidates
                .filter(|cs| cs.version_matches(v))
                .max_by(|a, b| version_cmp(a.version(), b.version())),
        };
        found.ok_or_else(|| CsMiss::Version(self.versions(url)))
    }

    /// The known versions of `url`, sorted.
    pub fn versions(&self, url: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .cs_candidates(url)
            .into_iter()
            .filter_map(|cs| cs.version().map(str::to_owned))
            .collect();
        v.sort_by(|a, b| version_cmp(Some(a), Some(b)));
        v.dedup();
        v
    }

    /// Whether any version of `url` is a code system here (not a
    /// supplement).
    pub fn knows_system(&self, url: &str) -> bool {
        !self.cs_candidates(url).is_empty()
    }

    /// The value set `url` (`url|version` allowed), the latest version
    /// when none is asked for.
    pub fn value_set(&self, url: &str, version: Option<&str>) -> Option<&ValueSet> {
        let (url, pinned) = crate::valueset::split_canonical(url);
        let version = version.or(pinned);
        ResourceSource::value_sets(self, url)
            .into_iter()
            .filter(|vs| vs.url.as_deref() == Some(url))
            .filter(|vs| version.is_none_or(|v| vs.version.as_deref() == Some(v)))
            .max_by(|a, b| version_cmp(a.version.as_deref(), b.version.as_deref()))
    }

    /// A code system's implicit value set named by `url`
    /// (`http://snomed.info/sct?fhir_vs=isa/…`): the code system version
    /// and the filters it means — or, when that version is out of service,
    /// why.
    pub fn implicit_value_set(&self, url: &str) -> Option<Result<Implicit<'_>, crate::Error>> {
        let (cs, filters) = self.external.as_deref()?.implicit_value_set(url)?;
        Some(cs.in_service().map(|()| (cs, filters)))
    }

    /// The supplement with canonical `url` (`url|version` allowed).
    pub fn supplement(&self, canonical: &str) -> Option<&CodeSystem> {
        self.code_system(canonical, None)
            .ok()
            .and_then(|cs| cs.resource())
            .filter(|cs| cs.content == Content::Supplement)
    }

    /// A copy with `sups` applied to every version of the code systems
    /// they supplement (a code system from the packages is copied in
    /// first).
    pub fn with_supplements(&self, sups: &[&CodeSystem]) -> Resolver {
        let mut r = self.clone();
        for sup in sups {
            let Some(base) = sup.supplements.as_deref() else {
                continue;
            };
            let url = crate::valueset::split_canonical(base).0;
            if !r.cs_by_url.contains_key(url) {
                let external: Vec<CodeSystem> = r
                    .cs_candidates(url)
                    .into_iter()
                    .filter_map(|cs| cs.resource().cloned())
                    .collect();
                for cs in external {
                    r.cs_by_url
                        .entry(cs.url.clone())
                        .or_default()
                        .push(r.code_systems.len());
                    r.code_systems.push(cs);
                }
            }
            for &i in r.cs_by_url.get(url).into_iter().flatten() {
                r.code_systems[i].apply_supplement(sup);
            }
        }
        r
    }
}

/// A resolver is itself a source for another one: a batch's shared
/// `tx-resource`s, parsed once, behind each validation's own (which win),
/// with the packages and stores behind them.
impl ResourceSource for Resolver {
    fn code_systems(&self, url: &str) -> Vec<&CodeSystem> {
        match self.cs_by_url.get(url) {
            Some(list) => list.iter().map(|&i| &self.code_systems[i]).collect(),
            None => self
                .external
                .as_deref()
                .map(|e| e.code_systems(url))
                .unwrap_or_default(),
        }
    }

    fn value_sets(&self, url: &str) -> Vec<&ValueSet> {
        if self
            .value_sets
            .iter()
            .any(|vs| vs.url.as_deref() == Some(url))
        {
            return self.value_sets.iter().collect();
        }
        self.external
            .as_deref()
            .map(|e| e.value_sets(url))
            .unwrap_or_default()
    }

    fn providers(&self, url: &str) -> Vec<&dyn CodeSystemProvider> {
        if self.cs_by_url.contains_key(url) {
            return Vec::new();
        }
        self.external
            .as_deref()
            .map(|e| e.providers(url))
            .unwrap_or_default()
    }

    fn implicit_value_set(
        &self,
        url: &str,
    ) -> Option<(&dyn CodeSystemProvider, Vec<crate::valueset::FilterDef>)> {
        self.external.as_deref()?.implicit_value_set(url)
    }

    fn grammars(&self) -> Vec<Arc<dyn Grammar>> {
        self.external
            .as_deref()
            .map(|e| e.grammars())
            .unwrap_or_default()
    }
}

/// Whether a requested version (possibly with `x`/`*` wildcard segments,
/// or a prefix such as `1.0`) names `have`.
pub fn version_matches(asked: &str, have: &str) -> bool {
    if asked == have {
        return true;
    }
    if !asked.contains(['x', 'X', '*']) {
        return false;
    }
    let a: Vec<&str> = asked.split('.').collect();
    let h: Vec<&str> = have.split('.').collect();
    a.len() <= h.len()
        && a.iter()
            .zip(&h)
            .all(|(x, y)| matches!(*x, "x" | "X" | "*") || x == y)
}

/// Orders versions: numerically by dot-separated segments when both are
/// numbers, else as text; a missing version first.
pub fn version_cmp(a: Option<&str>, b: Option<&str>) -> std::cmp::Ordering {
    let (Some(a), Some(b)) = (a, b) else {
        return a.is_some().cmp(&b.is_some());
    };
    let mut x = a.split('.');
    let mut y = b.split('.');
    loop {
        match (x.next(), y.next()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, Some(_)) => return std::cmp::Ordering::Less,
            (Some(_), None) => return std::cmp::Ordering::Greater,
            (Some(p), Some(q)) => {
                let o = match (p.parse::<u64>(), q.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    _ => p.cmp(q),
                };
                if o.is_ne() {
                    return o;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cs(version: &str) -> Value {
        json!({"resourceType": "CodeSystem", "url": "http://cs", "version": version, "concept": []})
    }

    #[test]
    fn versions_resolve_exactly_by_wildcard_or_to_the_latest() {
        let (a, b, c) = (cs("1.0.0"), cs("1.2.0"), cs("1.10.0"));
        let r = Resolver::new([&a, &b, &c]);
        let v = |asked: Option<&str>| {
            r.code_system("http://cs", asked)
                .map(|cs| cs.version().unwrap().to_owned())
        };
        assert_eq!(v(None).unwrap(), "1.10.0");
        assert_eq!(v(Some("1.2.0")).unwrap(), "1.2.0");
        assert_eq!(v(Some("1.0.x")).unwrap(), "1.0.0");
        assert_eq!(
            v(Some("2.0.0")),
            Err(CsMiss::Version(vec![
                "1.0.0".into(),
                "1.2.0".into(),
                "1.10.0".into()
            ]))
        );
        assert_eq!(
            r.code_system("http://cs|1.2.0", None).unwrap().version(),
            Some("1.2.0")
        );
        assert!(matches!(
            r.code_system("http://other", None),
            Err(CsMiss::Unknown)
        ));
    }
}
