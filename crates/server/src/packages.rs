//! What the terminology engine sees beyond a request, per FHIR endpoint
//! ([`Sources`]): the resources written through the API (`txmap-stored`,
//! asked first, a layer of their own so that a write re-indexes only
//! them), the FHIR packages named in the config (`packages = [...]`, files
//! or folders of them, read at startup by `txmap-packages`) and every loaded SNOMED CT
//! edition as a code system ([`txmap_snomed::SnomedCt`]), whose own
//! operations ([`txmap_snomed::operations`]) the engine asks first, and
//! every compiled code system file — LOINC, RxNorm
//! ([`txmap_codesystems::Compiled`]) — and the code
//! systems txmap carries itself (UCUM, BCP-47, media types, HGVS, ISO
//! 3166: [`txmap_builtin`]), with the value sets of UCUM's and BCP-47's
//! common codes. The request's own `tx-resource`s come first, then these.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use txmap_codesystems::Compiled;
use txmap_load::EditionBytes;
use txmap_packages::{Kind, Package, Packages};
use txmap_snomed::SnomedCt;
use txmap_snomed::operations::Editions as SnomedEditions;
use txmap_terminology::grammar::Grammar;
use txmap_terminology::operation::NativeOperations;
use txmap_terminology::provider::CodeSystemProvider;
use txmap_terminology::valueset::FilterDef;
use txmap_terminology::{CodeSystem, ResourceSource, ValueSet};

use crate::config::Config;
use crate::editions::Editions;
use crate::error::ServeError;
use crate::version::FhirVersion;

/// The loaded packages and each endpoint's view of them and the editions,
/// and the server's own stored resources as one more package
/// ([`txmap_stored::PACKAGE_NAME`]), when it stores any.
#[derive(Debug, Default)]
pub struct FhirPackages {
    /// The config's packages.
    pub list: Vec<Arc<Package>>,
    /// The stored resources' view, the same at both endpoints.
    stored: Option<Arc<Packages>>,
    shared: Shared,
    r4: Arc<Sources>,
    r5: Arc<Sources>,
}

/// What every endpoint's sources hold besides the stored resources, made
/// once per set of files and shared by the sets a write publishes — the
/// packages' views too, so what they parsed stays parsed.
#[derive(Clone, Debug, Default)]
struct Shared {
    r4: Option<Arc<Packages>>,
    r5: Option<Arc<Packages>>,
    snomed: Arc<[SnomedCt<EditionBytes>]>,
    compiled: Arc<[Compiled<EditionBytes>]>,
    grammars: Vec<Arc<dyn Grammar>>,
    builtin: Arc<[CodeSystem]>,
}

/// One endpoint's resources beyond the request: its view of the packages
/// and the SNOMED CT editions.
#[derive(Debug, Default)]
pub struct Sources {
    /// The resources written through the API, asked first.
    pub stored: Option<Arc<Packages>>,
    pub packages: Option<Arc<Packages>>,
    pub snomed: SnomedEditions<EditionBytes>,
    /// The compiled code system files (LOINC, RxNorm, NDC), each with its
    /// verification state.
    pub compiled: Arc<[Compiled<EditionBytes>]>,
    /// UCUM, BCP-47, media types and HGVS ([`txmap_builtin`]).
    pub grammars: Vec<Arc<dyn Grammar>>,
    /// The code systems txmap carries as resources (ISO 3166).
    pub builtin: Arc<[CodeSystem]>,
}

impl ResourceSource for Sources {
    fn code_systems(&self, url: &str) -> Vec<&CodeSystem> {
        let from_packages: Vec<&CodeSystem> = self
            .stored
            .iter()
            .chain(&self.packages)
            .flat_map(|p| p.code_systems(url))
            .collect();
        // What txmap carries itself (ISO 3166), unless a package holds the
        // codes (a `not-present` CodeSystem only names the system).
        let named_only = from_packages
            .iter()
            .all(|cs| cs.content == txmap_terminology::provider::Content::NotPresent);
        let builtin: Vec<&CodeSystem> = self.builtin.iter().filter(|cs| cs.url == url).collect();
        if named_only && !builtin.is_empty() {
            return builtin;
        }
        from_packages
    }

    fn value_sets(&self, url: &str) -> Vec<&ValueSet> {
        let from_packages: Vec<&ValueSet> = self
            .stored
            .iter()
            .chain(&self.packages)
            .flat_map(|p| p.value_sets(url))
            .collect();
        if !from_packages.is_empty() {
            return from_packages;
        }
        // The grammars' common codes (`ucum-common`, THO's `Languages`),
        // unless a package has its own version of them.
        self.grammars
            .iter()
            .filter_map(|g| g.common_codes())
            .filter(|vs| vs.url.as_deref() == Some(url))
            .collect()
    }

    /// Every file of `url`, in service or not: one being verified, or
    /// whose file failed, is found and then refuses
    /// ([`CodeSystemProvider::in_service`]), so that what needs it is a
    /// 503, never an unknown system.
    fn providers(&self, url: &str) -> Vec<&dyn CodeSystemProvider> {
        if url != txmap_snomed::SNOMED_CT {
            return self
                .compiled
                .iter()
                .filter(|c| c.url() == url)
                .map(|c| c as &dyn CodeSystemProvider)
                .collect();
        }
        self.snomed
            .list()
            .iter()
            .map(|e| e as &dyn CodeSystemProvider)
            .collect()
    }

    fn implicit_value_set(&self, url: &str) -> Option<(&dyn CodeSystemProvider, Vec<FilterDef>)> {
        if let Some(found) = txmap_codesystems::loinc::implicit_value_set(url, self.compiled.iter())
        {
            return found;
        }
        txmap_snomed::implicit_value_set(url, self.snomed.list())
    }

    fn native(&self) -> Option<&dyn NativeOperations> {
        Some(&self.snomed)
    }

    fn grammars(&self) -> Vec<Arc<dyn Grammar>> {
        self.grammars.clone()
    }
}

/// The package files the config names: each entry a `.tgz`, or a folder
/// whose `*.tgz` files are all read (in name order; `txmap sync` puts
/// packages in one). An empty folder is a warning, not an error: a feed
/// may not have given one yet.
fn package_files(config: &Config, base: &Path) -> Result<Vec<std::path::PathBuf>, ServeError> {
    let mut files = Vec::new();
    for entry in &config.packages {
        let path = base.join(entry);
        if !path.is_dir() {
            files.push(path);
            continue;
        }
        let mut found: Vec<_> = std::fs::read_dir(&path)
            .map_err(|e| ServeError::Config(format!("packages: {}: {e}", path.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "tgz") && p.is_file())
            .collect();
        if found.is_empty() {
            tracing::warn!("packages: {} holds no *.tgz file", path.display());
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

impl FhirPackages {
    /// Reads every package of the config, in parallel; relative paths are
    /// relative to `base` (the config file's folder). What `stored` holds
    /// now, the server's own resources, is asked first. Each endpoint's
    /// sources also hold every edition as a code system.
    pub fn load(
        config: &Config,
        base: &Path,
        editions: &Editions,
        ecl_max_work: u64,
        stored: Option<&txmap_stored::Store>,
    ) -> Result<FhirPackages, ServeError> {
        let stored = stored
            .map(|s| s.package())
            .transpose()
            .map_err(|e| ServeError::Config(e.to_string()))?;
        let snomed: Arc<[SnomedCt<EditionBytes>]> = editions
            .list
            .iter()
            .enumerate()
            .map(|(i, e)| {
                SnomedCt::new(
                    Arc::clone(&e.edition),
                    e.file.names.version_uri.clone(),
                    e.file.names.edition_uri.clone(),
                    ecl_max_work,
                    false,
                )
                .with_default_pointer(Arc::clone(&editions.default), i)
                .with_serving(Arc::clone(&e.file.serving))
            })
            .collect();
        let compiled: Arc<[Compiled<EditionBytes>]> = editions
            .code_systems
            .iter()
            .map(|c| {
                Compiled::new(Arc::clone(&c.code_system)).with_serving(Arc::clone(&c.file.serving))
            })
            .collect();
        // Made once: both endpoints share them (the subtag registry is
        // parsed here, not per endpoint).
        let mut list: Vec<Arc<Package>> = Vec::new();
        if !config.packages.is_empty() {
            let started = Instant::now();
            let paths = package_files(config, base)?;
            let read: Vec<Result<Package, String>> = std::thread::scope(|s| {
                let jobs: Vec<_> = paths
                    .iter()
                    .map(|p| s.spawn(move || Package::open(p).map_err(|e| e.to_string())))
                    .collect();
                jobs.into_iter()
                    .map(|j| j.join().unwrap_or_else(|_| Err("reading panicked".into())))
                    .collect()
            });
            for p in read {
                let p = p.map_err(ServeError::Config)?;
                tracing::info!(
                    "FHIR package {}#{} (FHIR {}): {} terminology resources of {} files, {} bytes of JSON",
                    p.name,
                    p.version,
                    p.fhir_versions.join(", "),
                    p.entries().len(),
                    p.files,
                    p.held_bytes()
                );
                list.push(Arc::new(p));
            }
            tracing::info!(
                "FHIR packages read in {:.1} ms",
                started.elapsed().as_secs_f64() * 1e3
            );
        }
        let view =
            |v: FhirVersion| (!list.is_empty()).then(|| Arc::new(Packages::new(&list, v.full())));
        let shared = Shared {
            r4: view(FhirVersion::R4),
            r5: view(FhirVersion::R5),
            snomed,
            compiled,
            grammars: txmap_builtin::all(),
            builtin: txmap_builtin::code_systems().into(),
        };
        Ok(FhirPackages::assemble(list, stored, shared))
    }

    /// These packages with `stored` as the server's own resources, in
    /// place of the ones they had: what a write publishes. Only the stored
    /// resources are indexed again; the packages' views (and what they
    /// parsed) are shared, and no file is read.
    pub fn with_stored(&self, stored: Package) -> FhirPackages {
        FhirPackages::assemble(self.list.clone(), Some(stored), self.shared.clone())
    }

    /// Each endpoint's sources.
    fn assemble(list: Vec<Arc<Package>>, stored: Option<Package>, shared: Shared) -> FhirPackages {
        // Stored resources are no core package: one view serves both.
        let stored =
            stored.map(|p| Arc::new(Packages::new(&[Arc::new(p)], FhirVersion::R4.full())));
        let sources = |packages: &Option<Arc<Packages>>| {
            Arc::new(Sources {
                stored: stored.clone(),
                packages: packages.clone(),
                snomed: SnomedEditions::new(Arc::clone(&shared.snomed)),
                compiled: Arc::clone(&shared.compiled),
                grammars: shared.grammars.clone(),
                builtin: Arc::clone(&shared.builtin),
            })
        };
        FhirPackages {
            r4: sources(&shared.r4),
            r5: sources(&shared.r5),
            list,
            stored,
            shared,
        }
    }

    /// Where content with `url` and `version` of `kind` comes from besides
    /// the stored resources — a package (`name#version`), an edition or a
    /// compiled code system file — if anything else serves it: a write
    /// cannot replace it.
    pub fn other_source(&self, kind: Kind, url: &str, version: Option<&str>) -> Option<String> {
        if kind == Kind::CodeSystem {
            if url == txmap_snomed::SNOMED_CT && !self.shared.snomed.is_empty() {
                return Some("the SNOMED CT editions".to_owned());
            }
            if let Some(c) = self.shared.compiled.iter().find(|c| c.url() == url) {
                return Some(format!("the compiled code system {}", c.url()));
            }
        }
        [FhirVersion::R4, FhirVersion::R5]
            .into_iter()
            .filter_map(|v| self.view(v))
            .flat_map(|view| view.listed_by_url(kind, url).collect::<Vec<_>>())
            .find(|l| l.version == version)
            .map(|l| format!("the package {}#{}", l.package().name, l.package().version))
    }

    /// The package that serves a resource of `kind` as `id`: a write
    /// cannot take its id.
    pub fn id_owner(&self, kind: Kind, id: &str) -> Option<String> {
        [FhirVersion::R4, FhirVersion::R5]
            .into_iter()
            .filter_map(|v| self.view(v))
            .flat_map(|view| view.listed(kind).collect::<Vec<_>>())
            .find(|l| l.id() == Some(id))
            .map(|l| format!("the package {}#{}", l.package().name, l.package().version))
    }

    /// The edition at `index` of the server's editions, as a code system.
    pub fn edition(&self, index: usize) -> Option<&SnomedCt<EditionBytes>> {
        self.r4.snomed.list().get(index)
    }

    /// Every edition, as code systems, in the order of the server's
    /// editions.
    pub fn editions(&self) -> &[SnomedCt<EditionBytes>] {
        self.r4.snomed.list()
    }

    /// What the engine of endpoint `v` may look up beyond the request.
    pub fn source(&self, v: FhirVersion) -> Arc<Sources> {
        match v {
            FhirVersion::R4 => Arc::clone(&self.r4),
            FhirVersion::R5 => Arc::clone(&self.r5),
        }
    }

    /// The endpoint's view of the packages, for search and statistics.
    pub fn view(&self, v: FhirVersion) -> Option<&Packages> {
        match v {
            FhirVersion::R4 => self.r4.packages.as_deref(),
            FhirVersion::R5 => self.r5.packages.as_deref(),
        }
    }

    /// The stored resources' view, for read and search (before the
    /// packages').
    pub fn stored(&self) -> Option<&Packages> {
        self.stored.as_deref()
    }

    /// The endpoint's views in the order they are asked: the stored
    /// resources, then the packages.
    pub fn views(&self, v: FhirVersion) -> impl Iterator<Item = &Packages> {
        self.stored().into_iter().chain(self.view(v))
    }
}
