//! FHIR packages named in the config (`packages = [...]`), read at
//! startup (`txmap-packages`) and served to the general terminology
//! engine per FHIR endpoint: the request's own `tx-resource`s first, then
//! the packages.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use txmap_packages::{Package, Packages};
use txmap_terminology::ResourceSource;

use crate::ServeError;
use crate::config::Config;
use crate::fhir::FhirVersion;

/// The loaded packages and each endpoint's view of them.
#[derive(Debug, Default)]
pub struct FhirPackages {
    pub list: Vec<Arc<Package>>,
    r4: Option<Arc<Packages>>,
    r5: Option<Arc<Packages>>,
}

impl FhirPackages {
    /// Reads every package of the config, in parallel; relative paths are
    /// relative to `base` (the config file's folder).
    pub fn load(config: &Config, base: &Path) -> Result<FhirPackages, ServeError> {
        if config.packages.is_empty() {
            return Ok(FhirPackages::default());
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
        let r4 = Arc::new(Packages::new(&list, FhirVersion::R4.full()));
        let r5 = Arc::new(Packages::new(&list, FhirVersion::R5.full()));
        tracing::info!(
            "FHIR packages read in {:.1} ms",
            started.elapsed().as_secs_f64() * 1e3
        );
        Ok(FhirPackages {
            list,
            r4: Some(r4),
            r5: Some(r5),
        })
    }

    /// What the general engine of endpoint `v` may look up beyond the
    /// request.
    pub fn source(&self, v: FhirVersion) -> Option<Arc<dyn ResourceSource>> {
        let p = match v {
            FhirVersion::R4 => self.r4.clone(),
            FhirVersion::R5 => self.r5.clone(),
        };
        p.map(|p| p as Arc<dyn ResourceSource>)
    }

    /// The endpoint view, for ConceptMaps and statistics.
    pub fn view(&self, v: FhirVersion) -> Option<&Packages> {
        match v {
            FhirVersion::R4 => self.r4.as_deref(),
            FhirVersion::R5 => self.r5.as_deref(),
        }
    }
}
