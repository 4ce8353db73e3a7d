//! LOINC, compiled like SNOMED CT.
//!
//! A LOINC release (tens of megabytes of CSV: terms, parts, answer lists,
//! the multiaxial hierarchy, linguistic variants) is compiled once by
//! `txmap import --loinc DIR` ([`release::import`]) into one immutable,
//! checksummed file of offset-addressed sections ([`file`]; the layout is
//! in `crates/format/FORMAT.md`, "Compiled code systems"). A server loads
//! it as it loads an edition — read, mapped or prewarmed — and serves it
//! through [`Loinc`], a code system provider of the terminology engine, so
//! every FHIR operation answers LOINC the way it answers any code system.
//! Startup reads a few kilobytes; a lookup reads a concept record, its
//! two index entries and its strings.
//!
//! [`synth`] writes LOINC-shaped releases of any size for the tests and the
//! benchmarks, since the real release is licensed and not reachable here.

mod error;
pub mod file;
mod provider;
pub mod release;
pub mod synth;

pub use error::LoincError;
pub use file::{BuildSummary, CodeSystemFile, FileBuilder};
pub use provider::{Loinc, implicit_filters};
pub use release::{ImportOptions, ImportReport, import};

/// LOINC's canonical URL.
pub const LOINC: &str = "http://loinc.org";
