//! Benchmarks of txmap's FHIR operations on a real edition file.
//!
//! Two modes, one report shape:
//!
//! - [`handlers`] runs each operation in process: the server state is built
//!   as `txmap serve` builds it, and requests go through the same router
//!   with `tower::ServiceExt::oneshot`, one at a time. This measures the
//!   handlers and the routing, negotiation and serialisation around them,
//!   without sockets.
//! - [`http`] is a closed-loop load generator: C connections, each a
//!   thread with one keep-alive HTTP/1.1 connection, send the next request
//!   as soon as the previous answer is read. This measures what a client
//!   sees, parsing and the network stack included.
//!
//! Both draw their requests from [`pools::Pools`], sampled deterministically
//! from the edition (the seed picks which concepts), so the two modes and
//! successive runs ask the same questions. Every latency is kept and
//! percentiles are exact ([`report::Summary`]); a run with non-200 answers
//! says so in its report rather than failing.
//!
//! [`ecl`] is separate: it times ECL evaluation (`txmap-ecl-eval`) over a
//! corpus of expressions, under the server's budget.
//!
//! `scan` (Linux) is separate too: it times a newline scan of a large file
//! by `read(2)` and by four kinds of memory map, cold and warm, each in a
//! fresh child process (issue 8), to choose the importer's I/O path.
//!
//! `cold` (Linux) measures the first pass after a restart: the pages of
//! each section each kind of call touches, and each way of advising the
//! kernel, cold, each in a fresh child process (issue 16).
//!
//! [`tho`] times one large value set of a FHIR package (`hl7.terminology.r4`)
//! in process, as [`handlers`] does for SNOMED CT: `$expand` (whole, paged,
//! filtered), `$validate-code` in and out of it, `$lookup`, with the first
//! call (which parses the packaged resources) reported apart (issue 7).
//!
//! [`corpus`] draws a traffic corpus from one or more editions — a
//! realistic mix of operations, hot editions, Zipf-skewed concepts, or one
//! tx-benchmark shape — saved one request per line, and [`load`] replays
//! it over C keep-alive connections for a time or one pass, reporting per
//! operation and overall (issue 8).
//!
//! [`hostile`] is not a benchmark but a judge: it sends seeded hostile
//! requests to a running server and checks every answer (issue 14).
//!
//! This crate is the seed of a fuller load generator (several processes,
//! memory over time); it is not a core crate and may use the server's
//! stack (tokio, axum, tower).

// `unsafe` is denied (a workspace lint) everywhere but `scan::map`, where
// the scan benchmark maps its own test file.
#![deny(unsafe_code)]

#[cfg(target_os = "linux")]
pub mod cold;
pub mod corpus;
pub mod ecl;
pub mod handlers;
pub mod hostile;
pub mod http;
pub mod load;
pub mod pools;
pub mod report;
pub mod requests;
#[cfg(target_os = "linux")]
pub mod scan;
pub mod tho;

use std::fmt;

pub use pools::{Op, Pools};
pub use report::{Mode, Summary};

/// Why a benchmark could not run.
#[derive(Debug)]
pub struct BenchError(pub String);

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for BenchError {}

impl BenchError {
    pub(crate) fn new(msg: impl Into<String>) -> BenchError {
        BenchError(msg.into())
    }
}
