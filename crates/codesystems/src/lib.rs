//! Code systems compiled like SNOMED CT editions: LOINC and RxNorm.
//!
//! A release (LOINC's CSV files: terms, parts, answer lists, the
//! multiaxial hierarchy, linguistic variants; RxNorm's RRF files:
//! concepts, relationships, semantic types) is compiled once by `txmap
//! import --loinc DIR` ([`loinc::import`]) or `--rxnorm DIR`
//! ([`rxnorm::import`]) into one immutable, checksummed file of
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
pub mod loinc;
mod provider;
pub mod rxnorm;
pub mod synth;

pub use error::CodeSystemError;
pub use file::{BuildSummary, CodeSystemFile, FileBuilder};
pub use provider::Compiled;
