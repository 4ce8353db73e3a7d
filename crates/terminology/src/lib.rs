//! `txmap-terminology`: the terminology engine — FHIR CodeSystem and
//! ValueSet semantics that do not depend on the code system, for every
//! code system.
//!
//! Real value sets mix systems, import each other and come from IG
//! packages; clients also send CodeSystems and ValueSets inline, as
//! `tx-resource` parameters. This crate answers `$validate-code`,
//! `$expand`, `$lookup`, `$subsumes`, `$translate`, `$compare` and
//! `$batch-validate-code` over all
//! of them in-process: no async, no HTTP, no store. A code system is
//! anything that implements [`CodeSystemProvider`] — a CodeSystem
//! resource here, a SNOMED CT edition in `txmap-snomed` — found through
//! the request's resources and a [`ResourceSource`] (packages, editions).
//! The server names the operation and hands it a [`Request`]
//! ([`operation`]: the one entry, which also asks a code system that
//! answers some operations itself, SNOMED CT) and gets back the resource
//! to send, or an [`Error`] that knows its HTTP status and
//! OperationOutcome.
//!
//! * [`codesystem`] and [`valueset`] read the resources (R4 or R5 JSON),
//!   and [`code`] says what a code is before any code system is asked;
//! * [`resolver`] finds them by URL and version, in the request and then
//!   in the sources behind it ([`external`]: packages, editions);
//! * [`provider`] is what operations ask of a code system
//!   ([`CodeSystemProvider`]), whoever holds it, and [`serving`] whether
//!   one held in a file may answer now;
//! * [`request`] and [`params`] are an operation's input, the JSON and its
//!   strict typed view;
//! * [`filter`] compiles value set filters, [`engine`] evaluates
//!   membership and expansions;
//! * [`supplement`] decides which supplements a request applies
//!   (`useSupplement`, `valueset-supplement`) and what concept extensions
//!   show in expansions; [`language`] reads display language preferences;
//! * [`validate`] (and [`batch`]), [`expand`], [`lookup`], [`subsumes`],
//!   [`translate`] and [`compare`] are the operations, [`error`] their issues and errors,
//!   with the tooling's messages, and [`parameters`] the writer of their
//!   Parameters answers.
#![forbid(unsafe_code)]

pub mod batch;
pub mod code;
pub mod codesystem;
pub mod compare;
pub mod engine;
pub mod error;
pub mod expand;
pub mod external;
pub mod filter;
pub mod grammar;
pub mod language;
pub mod lookup;
pub mod operation;
pub mod parameters;
pub mod params;
pub mod provider;
pub mod request;
pub mod resolver;
pub mod serving;
pub mod subsumes;
pub mod supplement;
pub mod time;
pub mod translate;
pub mod validate;
pub mod valueset;
pub mod version;

pub use codesystem::CodeSystem;
pub use error::{Error, Issue};
pub use external::ResourceSource;
pub use provider::CodeSystemProvider;
pub use request::Request;
pub use resolver::Resolver;
pub use valueset::ValueSet;
