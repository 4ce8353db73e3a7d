//! `txmap-conformance`: our own runner of the HL7 terminology ecosystem
//! test suite (`HL7/fhir-tx-ecosystem-ig`, `tests/test-cases.json`).
//!
//! The official runner is the Java validator's `txTests` command. We need
//! the same verdicts without a JVM in CI, with output our tools can read
//! (one line per test, a JSON report, a ratchet of tests that must keep
//! passing), and with its one weakness made visible: strings that differ
//! can compare equal through a lenient Base64 fallback, so tests that pass
//! only because of it are flagged, and `strict_strings` turns it off.
//! `shared/guides/tx-ecosystem-runner.md` describes the official runner
//! step by step; each module here says which step it reproduces:
//!
//! * [`suite`] — loading `test-cases.json`; modes, filters, overrides;
//! * [`runner`] — one run against one endpoint: version detection,
//!   requests (GET or POST, headers, `tx-resource` setup, profiles),
//!   reading responses, the verdict;
//! * [`convert`] — R5→R4 requests and R4→R5 responses for R4 endpoints;
//! * [`scrub`] and [`sort`] — what is removed from and how the actual is
//!   ordered before comparing;
//! * [`compare`] — the comparison rules and templates;
//! * [`report`] — lines, summaries, the JSON report, the ratchet;
//! * [`http`] — the [`Transport`] trait and a blocking HTTP/1.1 client;
//! * [`json`] — an ordered JSON tree that keeps number text.
//!
//! The crate has no dependencies and no async: the runner sends one
//! request at a time, as the official one does.

#![forbid(unsafe_code)]

pub mod compare;
pub mod convert;
pub mod http;
pub mod json;
pub mod report;
pub mod runner;
pub mod scrub;
pub mod sort;
pub mod suite;

#[cfg(test)]
mod suite_files;

pub use compare::{Comparator, Comparison, Difference, LenientMatch, TemplateError};
pub use http::{HttpRequest, HttpResponse, HttpTransport, Method, Transport};
pub use json::{Json, Object};
pub use runner::{Outcome, RunOptions, RunReport, TestResult, run};
pub use suite::{Selection, Suite, Test, TestCases};
