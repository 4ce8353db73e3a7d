//! What the terminology engine sees beyond a request, per FHIR endpoint
//! ([`Sources`]): the FHIR packages named in the config (`packages =
//! [...]`, read at startup by `txmap-packages`) and every loaded SNOMED CT
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
use txmap_packages::{Package, Packages};
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

/// The loaded packages and each endpoint's view of them and the editions.
#[derive(Debug, Default)]
pub struct FhirPackages {
    pub list: Vec<Arc<Package>>,
    r4: Arc<Sources>,
    r5: Arc<Sources>,
}

/// One endpoint's resources beyond the request: its view of the packages
/// and the SNOMED CT editions.
#[derive(Debug, Default)]
pub struct Sources {
    pub packages: Option<Packages>,
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
        let from_packages = self
            .packages
            .as_ref()
            .map(|p| p.code_systems(url))
            .unwrap_or_default();
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
        let from_packages = self
            .packages
            .as_ref()
            .map(|p| p.value_sets(url))
            .unwrap_or_default();
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

impl FhirPackages {
    /// Reads every package of the config, in parallel; relative paths are
    /// relative to `base` (the config file's folder). Each endpoint's
    /// sources also hold every edition as a code system.
    pub fn load(
        config: &Config,
        base: &Path,
        editions: &Editions,
        ecl_max_work: u64,
    ) -> Result<FhirPackages, ServeError> {
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
        let builtin: Arc<[CodeSystem]> = txmap_builtin::code_systems().into();
        let grammars = txmap_builtin::all();
        let sources = |packages| {
            Arc::new(Sources {
                packages,
                snomed: SnomedEditions::new(Arc::clone(&snomed)),
                compiled: Arc::clone(&compiled),
                grammars: grammars.clone(),
                builtin: Arc::clone(&builtin),
            })
        };
        if config.packages.is_empty() {
            return Ok(FhirPackages {
                list: Vec::new(),
                r4: sources(None),
                r5: sources(None),
            });
        }
        let started = Instant::now();
        let paths: Vec<_> = config.packages.iter().map(|p| base.join(p)).collect();
        let read: Vec<Result<Package, String>> = std::thread::scope(|s| {
            let jobs: Vec<_> = paths
                .iter()
                .map(|p| s.spawn(move || Package::open(p).map_err(|e| e.to_string())))
                .collect();
            jobs.into_iter()
                .map(|j| j.join().unwrap_or_else(|_| Err("reading panicked".into())))
                .collect()
        });
        let mut list = Vec::new();
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
        let r4 = sources(Some(Packages::new(&list, FhirVersion::R4.full())));
        let r5 = sources(Some(Packages::new(&list, FhirVersion::R5.full())));
        tracing::info!(
            "FHIR packages read in {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        Ok(FhirPackages { list, r4, r5 })
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

    /// The endpoint's view of the packages, for ConceptMaps, search and
    /// statistics.
    pub fn view(&self, v: FhirVersion) -> Option<&Packages> {
        match v {
            FhirVersion::R4 => self.r4.packages.as_ref(),
            FhirVersion::R5 => self.r5.packages.as_ref(),
        }
    }
}
