//! `txmap-sync`: new releases from terminology syndication feeds, made
//! into files the server serves — without ever changing a file it serves.
//!
//! Release centres publish SNOMED CT editions, LOINC and FHIR packages as
//! Atom feeds with the NCTS extensions (NCTS, MLDS, national centres;
//! written down by HL7's Terminology Syndication Feed IG). A run of
//! [`sync`]:
//!
//! 1. reads each feed ([`feed::parse`]: by namespace, any link order);
//! 2. honours retractions (`*_RETRACT`) of what it installed: the file is
//!    moved out of the served folder;
//! 3. picks, per content item identifier, the latest version
//!    ([`version_cmp`]: SNOMED CT dates, semantic versions) of the
//!    categories asked for, and the versions it depends on
//!    (`sct:packageDependency`, installed first);
//! 4. downloads what it does not have yet ([`fetch`]), checking the
//!    declared length and digest — SHA-256, or MD5 where the feed gives
//!    only that — as the bytes stream, and refusing an entry with no
//!    digest (fail closed);
//! 5. compiles it in a staging folder ([`install`]) and renames the result
//!    into the served folder: never a partial file, never one in place;
//! 6. remembers what it did ([`state`]).
//!
//! A wrong feed, download, digest or release is an error naming it, and
//! nothing already served changes; the caller asks the server to reload
//! only when something was installed or retracted. No async: blocking
//! HTTP (ureq, rustls) on the caller's thread.
#![forbid(unsafe_code)]

pub mod config;
pub mod feed;
pub mod fetch;
pub mod install;
pub mod state;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

pub use config::SyncConfig;
use feed::Entry;
use fetch::{Client, FetchError};
use install::Kind;
use state::{Installed, State};

/// How deep dependencies may chain (a feed controls it).
pub const MAX_DEPENDENCY_DEPTH: usize = 16;

/// Why a run stopped.
#[derive(Debug)]
pub enum SyncError {
    /// The state file, or a folder, could not be read or written.
    Local(String),
    /// A feed could not be fetched.
    Fetch(FetchError),
    /// A feed is not an Atom feed, or its XML is broken.
    Feed { url: String, error: feed::FeedError },
    /// An entry could not be installed: its download or its release.
    Entry { version: String, why: String },
    /// An entry depends on a version neither installed nor in the feed.
    Dependency { version: String, missing: String },
}

impl std::fmt::Display for SyncError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SyncError::Local(why) => f.write_str(why),
            SyncError::Fetch(e) => write!(f, "{e}"),
            SyncError::Feed { url, error } => write!(f, "{url}: {error}"),
            SyncError::Entry { version, why } => write!(f, "{version}: {why}"),
            SyncError::Dependency { version, missing } => write!(
                f,
                "{version} depends on {missing}, which is neither installed nor in the feed"
            ),
        }
    }
}

impl std::error::Error for SyncError {}

/// What a run did.
#[derive(Debug, Default)]
pub struct Report {
    /// Content item versions installed, with the file each became.
    pub installed: Vec<(String, PathBuf)>,
    /// Content item versions retracted.
    pub retracted: Vec<String>,
    /// Entries taken that were installed already.
    pub unchanged: usize,
}

impl Report {
    /// Whether the served folder changed (so the server should reload).
    pub fn changed(&self) -> bool {
        !self.installed.is_empty() || !self.retracted.is_empty()
    }
}

/// Orders two content item versions: SNOMED CT version URIs by their
/// date, `url|version` and plain versions by their dotted numbers
/// (semantic versions; a pre-release below its release), else as text.
pub fn version_cmp(a: &str, b: &str) -> Ordering {
    fn tail(v: &str) -> &str {
        if let Some((_, date)) = v.rsplit_once("/version/") {
            return date;
        }
        v.rsplit_once('|').map_or(v, |(_, t)| t)
    }
    fn numbers(v: &str) -> Option<(Vec<u64>, Option<&str>)> {
        let (core, pre) = match v.split_once('-') {
            Some((c, p)) => (c, Some(p)),
            None => (v, None),
        };
        let nums = core
            .split('.')
            .map(|p| p.parse().ok())
            .collect::<Option<Vec<u64>>>()?;
        Some((nums, pre))
    }
    let (ta, tb) = (tail(a), tail(b));
    match (numbers(ta), numbers(tb)) {
        (Some((na, pa)), Some((nb, pb))) => na.cmp(&nb).then_with(|| match (pa, pb) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Greater,
            (Some(_), None) => Ordering::Less,
            (Some(x), Some(y)) => x.cmp(y),
        }),
        _ => ta.cmp(tb),
    }
    .then_with(|| a.cmp(b))
}

/// One feed's run.
struct Run<'a> {
    config: &'a SyncConfig,
    client: &'a mut Client,
    state: &'a mut State,
    report: &'a mut Report,
    /// Every entry of the feed, by content item version.
    by_version: BTreeMap<String, Entry>,
    log: &'a mut dyn FnMut(&str),
}

/// Runs every feed of `config` (or only the one whose URL is `only`; a URL
/// the config does not list is read with no credentials of its own but
/// its host's). Stops at the first error; what was installed before it
/// stays installed (whole files, verified), and is in the state.
pub fn sync(
    config: &SyncConfig,
    only: Option<&str>,
    client: &mut Client,
    log: &mut dyn FnMut(&str),
) -> Result<Report, SyncError> {
    let state_file = config.state_file();
    let mut state = State::load(&state_file).map_err(SyncError::Local)?;
    let mut report = Report::default();
    let feeds: Vec<config::FeedConfig> = match only {
        Some(url) => vec![
            config
                .feeds
                .iter()
                .find(|f| f.url == url)
                .cloned()
                .unwrap_or(config::FeedConfig {
                    url: url.to_owned(),
                    categories: Vec::new(),
                    identifiers: Vec::new(),
                }),
        ],
        None => config.feeds.clone(),
    };
    for dir in [
        config.editions.clone(),
        config.packages_dir(),
        config.work_dir().join("downloads"),
        config.work_dir().join("staging"),
    ] {
        std::fs::create_dir_all(&dir)
            .map_err(|e| SyncError::Local(format!("{}: {e}", dir.display())))?;
    }
    for f in &feeds {
        let text = client.feed(&f.url).map_err(SyncError::Fetch)?;
        let parsed = feed::parse(&text).map_err(|error| SyncError::Feed {
            url: f.url.clone(),
            error,
        })?;
        log(&format!(
            "{}: {} entries ({})",
            f.url,
            parsed.entries.len(),
            parsed.title
        ));
        let by_version: BTreeMap<String, Entry> = parsed
            .entries
            .iter()
            .filter(|e| !e.version.is_empty())
            .map(|e| (e.version.clone(), e.clone()))
            .collect();
        let mut run = Run {
            config,
            client,
            state: &mut state,
            report: &mut report,
            by_version,
            log,
        };
        let result = run.feed(f, &parsed.entries);
        state.feeds.insert(
            f.url.clone(),
            state::FeedSeen {
                checked: state::now(),
                versions: parsed.entries.iter().map(|e| e.version.clone()).collect(),
            },
        );
        state.save(&state_file).map_err(SyncError::Local)?;
        result?;
    }
    Ok(report)
}

impl Run<'_> {
    fn feed(&mut self, f: &config::FeedConfig, entries: &[Entry]) -> Result<(), SyncError> {
        let categories: HashSet<&str> = if f.categories.is_empty() {
            config::DEFAULT_CATEGORIES.into_iter().collect()
        } else {
            f.categories.iter().map(String::as_str).collect()
        };
        // Retractions first: what they name is never installed again.
        let retracted: HashSet<&str> = entries
            .iter()
            .filter(|e| e.is_retraction())
            .map(|e| e.version.as_str())
            .collect();
        for version in &retracted {
            self.retract(version)?;
        }
        // The latest version of each identifier asked for.
        let mut latest: BTreeMap<&str, &Entry> = BTreeMap::new();
        for e in entries {
            let wanted = !e.is_retraction()
                && !retracted.contains(e.version.as_str())
                && e.categories.iter().any(|c| categories.contains(c.as_str()))
                && e.categories.iter().any(|c| Kind::of(c).is_some())
                && (f.identifiers.is_empty() || f.identifiers.contains(&e.identifier));
            if !wanted {
                continue;
            }
            let slot = latest.entry(&e.identifier).or_insert(e);
            if version_cmp(&e.version, &slot.version) == Ordering::Greater {
                *slot = e;
            }
        }
        let chosen: Vec<Entry> = latest.into_values().cloned().collect();
        for e in &chosen {
            self.install(e, 0)?;
        }
        Ok(())
    }

    /// Moves the file `version` became out of the served folder.
    fn retract(&mut self, version: &str) -> Result<(), SyncError> {
        let Some(done) = self.state.installed.remove(version) else {
            return Ok(()); // never installed: nothing to do
        };
        let aside = self.config.work_dir().join("retracted");
        std::fs::create_dir_all(&aside)
            .map_err(|e| SyncError::Local(format!("{}: {e}", aside.display())))?;
        if let Some(name) = done.file.file_name()
            && done.file.exists()
        {
            let to = aside.join(name);
            std::fs::rename(&done.file, &to)
                .map_err(|e| SyncError::Local(format!("{}: {e}", done.file.display())))?;
        }
        (self.log)(&format!("retracted {version}: {}", done.file.display()));
        self.report.retracted.push(version.to_owned());
        Ok(())
    }

    /// Installs `e` after what it depends on; the downloads of its bases
    /// (base first) come back for a derivative's import.
    fn install(&mut self, e: &Entry, depth: usize) -> Result<Vec<PathBuf>, SyncError> {
        if depth > MAX_DEPENDENCY_DEPTH {
            return Err(SyncError::Entry {
                version: e.version.clone(),
                why: format!("dependencies chain deeper than {MAX_DEPENDENCY_DEPTH}"),
            });
        }
        let kind = e
            .categories
            .iter()
            .find_map(|c| Kind::of(c))
            .ok_or_else(|| SyncError::Entry {
                version: e.version.clone(),
                why: format!("no category txmap serves ({})", e.categories.join(", ")),
            })?;
        let mut bases: Vec<PathBuf> = Vec::new();
        for dep in &e.dependencies {
            let installed = self.state.installed.get(dep).cloned();
            let dep_bases = match (installed, self.by_version.get(dep).cloned()) {
                (Some(i), _) if i.download.as_ref().is_some_and(|d| d.exists()) => {
                    vec![i.download.clone().unwrap_or_default()]
                }
                (_, Some(entry)) => {
                    let mut b = self.install(&entry, depth + 1)?;
                    // Its own download, now kept.
                    if let Some(d) = self
                        .state
                        .installed
                        .get(dep)
                        .and_then(|i| i.download.clone())
                    {
                        b.push(d);
                    }
                    b
                }
                (Some(_), None) => Vec::new(),
                (None, None) => {
                    return Err(SyncError::Dependency {
                        version: e.version.clone(),
                        missing: dep.clone(),
                    });
                }
            };
            for b in dep_bases {
                if !bases.contains(&b) {
                    bases.push(b);
                }
            }
        }
        if let Some(i) = self.state.installed.get(&e.version)
            && i.file.exists()
            && (kind != Kind::Edition || i.download.as_ref().is_some_and(|d| d.exists()))
        {
            self.report.unchanged += 1;
            return Ok(bases);
        }
        self.fetch_and_compile(e, kind, &bases)?;
        Ok(bases)
    }

    fn fetch_and_compile(
        &mut self,
        e: &Entry,
        kind: Kind,
        bases: &[PathBuf],
    ) -> Result<(), SyncError> {
        let failed = |why: String| SyncError::Entry {
            version: e.version.clone(),
            why,
        };
        let link = e
            .artefact()
            .ok_or_else(|| failed("no alternate link to download".into()))?
            .clone();
        let work = self.config.work_dir();
        let name = install::file_name(kind, e);
        // Named as the release it is (an edition's file records it).
        let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        let download = work.join("downloads").join(match kind {
            Kind::Package => format!("{stem}.tgz"),
            _ => format!("{stem}.zip"),
        });
        (self.log)(&format!("downloading {} from {}", e.version, link.href));
        let sha256 = self
            .client
            .download(&link, &download)
            .map_err(|err| failed(err.to_string()))?;
        let scratch = work.join("staging").join(format!("{name}.work"));
        let staged = work.join("staging").join(&name);
        std::fs::create_dir_all(&scratch).map_err(|err| failed(err.to_string()))?;
        (self.log)(&format!("compiling {}", e.version));
        let compiled = install::compile(kind, e, &download, bases, &staged, &scratch);
        let _ = std::fs::remove_dir_all(&scratch);
        if let Err(why) = compiled {
            let _ = std::fs::remove_file(&staged);
            let _ = std::fs::remove_file(&download);
            return Err(failed(why));
        }
        let folder = match kind {
            Kind::Package => self.config.packages_dir(),
            _ => self.config.editions.clone(),
        };
        let target = folder.join(&name);
        std::fs::rename(&staged, &target)
            .map_err(|err| failed(format!("{}: {err}", target.display())))?;
        // An edition's download is kept: a derivative imports over it.
        let kept = if kind == Kind::Edition {
            Some(download)
        } else {
            let _ = std::fs::remove_file(&download);
            None
        };
        (self.log)(&format!("installed {} as {}", e.version, target.display()));
        self.state.installed.insert(
            e.version.clone(),
            Installed {
                identifier: e.identifier.clone(),
                category: e.categories.join(" "),
                file: target.clone(),
                download: kept,
                sha256,
                at: state::now(),
            },
        );
        self.state
            .save(&self.config.state_file())
            .map_err(SyncError::Local)?;
        self.report.installed.push((e.version.clone(), target));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_date_and_number_not_text() {
        let lt = |a: &str, b: &str| assert_eq!(version_cmp(a, b), Ordering::Less, "{a} < {b}");
        lt(
            "http://snomed.info/sct/1/version/20250731",
            "http://snomed.info/sct/1/version/20260131",
        );
        lt("pkg|1.9.0", "pkg|1.10.0");
        lt("2.9", "2.10");
        lt("1.0.0-ballot", "1.0.0");
        lt("1.0.0-alpha", "1.0.0-beta");
        assert_eq!(version_cmp("a|1.0", "a|1.0"), Ordering::Equal);
    }
}
