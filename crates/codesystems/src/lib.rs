//! Code systems compiled like SNOMED CT editions: LOINC, RxNorm and NDC.
//!
//! A release (LOINC's CSV files: terms, parts, answer lists, the
//! multiaxial hierarchy, linguistic variants; RxNorm's RRF files:
//! concepts, relationships, semantic types; the FDA's NDC directory) is
//! compiled once by `txmap import --loinc DIR` ([`loinc::import`]),
//! `--rxnorm DIR` ([`rxnorm::import`]) or `--ndc DIR` ([`ndc::import`])
//! into one immutable, checksummed file of
//! offset-addressed sections ([`file`]; the layout is in
//! `crates/format/FORMAT.md`, "Compiled code systems"). A server loads it
//! as it loads an edition — read, mapped or prewarmed — and serves it
//! through [`Compiled`], a code system provider of the terminology
//! engine, so every FHIR operation answers these code systems the way it
//! answers any other. Startup reads a few kilobytes; a lookup reads a
//! concept record, its index entries and its strings.
//!
//! [`synth`] writes LOINC- and RxNorm-shaped releases of any size for the
//! tests and the benchmarks, since the real releases are licensed and not
//! reachable here.

mod error;
pub mod file;
mod header;
pub mod loinc;
pub mod ndc;
mod provider;
pub mod rxnorm;
pub mod synth;

use std::path::{Path, PathBuf};

pub use error::CodeSystemError;
pub use file::{BuildSummary, CodeSystemFile, FileBuilder};
pub use provider::Compiled;

/// How to compile a release.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The release's version; by default what the release says of itself
    /// (LOINC: its folder's name, `Loinc_2.82`; RxNorm: `RXNSAB.RRF`; NDC:
    /// its folder's name, `2025-07-11`).
    pub version: Option<String>,
    /// Where the builder's temporary text heap goes; default: beside the
    /// output.
    pub temp_dir: Option<PathBuf>,
}

impl ImportOptions {
    /// The release's version: the one given, else what `found` reads of
    /// the release in `dir`; neither is an error naming `dir`.
    fn version(
        &self,
        dir: &Path,
        found: impl FnOnce() -> Result<Option<String>, CodeSystemError>,
    ) -> Result<String, CodeSystemError> {
        match &self.version {
            Some(v) => Ok(v.clone()),
            None => found()?.ok_or_else(|| CodeSystemError::NoVersion(dir.to_owned())),
        }
    }

    /// A builder for the file `out`.
    fn builder(&self, out: &Path) -> Result<FileBuilder, CodeSystemError> {
        let beside = || {
            out.parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_owned)
        };
        FileBuilder::new(&self.temp_dir.clone().unwrap_or_else(beside))
    }
}
