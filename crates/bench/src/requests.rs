//! Given requests, each timed on its own, in process through the router
//! (issue 13: IG value sets by URL, resource search).
//!
//! The state is [`crate::tho::serve_state`]'s: the packages and an
//! optional edition, mapped and read through, as `txmap serve` prepares
//! them. Each request is a GET path (`/r4/ValueSet/$validate-code?…`);
//! it is called once and its status kept (a request that does not answer
//! 200 is reported, not timed away), then warmed up for a tenth of the
//! time limit, then called `calls` times one at a time on a
//! current-thread runtime. Every latency is kept and percentiles are
//! exact; a latency runs from handing the request to the router to having
//! the whole body.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use axum::http::{StatusCode, Uri};
use serde_json::{Value, json};
use txmap_server::app::router;

use crate::BenchError;
use crate::report::{Latencies, round};

/// What to time.
#[derive(Clone, Debug)]
pub struct RequestOptions {
    pub packages: Vec<PathBuf>,
    pub edition: Option<PathBuf>,
    /// GET paths with their queries, percent-encoded.
    pub requests: Vec<String>,
    /// Timed calls per request.
    pub calls: usize,
    /// A request stops early once its timed calls take this long.
    pub max_time: Duration,
}

/// One request's numbers.
#[derive(Clone, Debug)]
pub struct RequestSummary {
    pub request: String,
    /// The first call's status and time (resources parse on first use).
    pub first_status: u16,
    pub first_us: f64,
    pub latencies: Latencies,
}

/// Every request's numbers.
#[derive(Clone, Debug)]
pub struct RequestReport {
    pub startup_ms: f64,
    pub results: Vec<RequestSummary>,
}

impl RequestReport {
    pub fn to_json(&self) -> Value {
        json!({
            "startup_ms": round(self.startup_ms),
            "requests": self.results.iter().map(|r| {
                let mut o = serde_json::Map::new();
                o.insert("request".into(), json!(r.request));
                o.insert("first_status".into(), json!(r.first_status));
                o.insert("first_us".into(), json!(round(r.first_us)));
                r.latencies.insert_json(&mut o);
                Value::Object(o)
            }).collect::<Vec<_>>(),
        })
    }

    /// The results as a Markdown table.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::from(
            "| request | status | first µs | calls | p50 µs | p90 µs | p99 µs |\n\
             |---|---:|---:|---:|---:|---:|---:|\n",
        );
        for r in &self.results {
            let l = &r.latencies;
            let _ = writeln!(
                out,
                "| `{}` | {} | {:.0} | {} | {:.1} | {:.1} | {:.1} |",
                r.request, r.first_status, r.first_us, l.calls, l.p50_us, l.p90_us, l.p99_us
            );
        }
        out
    }
}

/// Times every request of `options`.
pub fn run(options: &RequestOptions) -> Result<RequestReport, BenchError> {
    let uris = options
        .requests
        .iter()
        .map(|r| {
            r.parse::<Uri>()
                .map_err(|e| BenchError::new(format!("{r:?} is not a request path: {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (state, startup_ms) =
        crate::tho::serve_state(&options.packages, options.edition.as_deref())?;
    let app = router(state);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::new(format!("runtime: {e}")))?;
    let results = runtime.block_on(async {
        let mut out = Vec::new();
        for (request, uri) in options.requests.iter().zip(&uris) {
            let started = Instant::now();
            let (status, _) = crate::handlers::call(&app, uri).await;
            let first_us = started.elapsed().as_secs_f64() * 1e6;
            let warming = Instant::now();
            while warming.elapsed() < options.max_time / 10 {
                crate::handlers::call(&app, uri).await;
            }
            let mut latencies = Vec::with_capacity(options.calls);
            let mut errors = BTreeMap::new();
            let timed = Instant::now();
            for _ in 0..options.calls {
                let (status, ns) = crate::handlers::call(&app, uri).await;
                latencies.push(ns);
                if status != StatusCode::OK {
                    *errors.entry(status.as_u16().to_string()).or_insert(0) += 1;
                }
                if timed.elapsed() >= options.max_time {
                    break;
                }
            }
            out.push(RequestSummary {
                request: request.clone(),
                first_status: status.as_u16(),
                first_us,
                latencies: Latencies::new(latencies, errors, timed.elapsed().as_secs_f64()),
            });
        }
        out
    });
    Ok(RequestReport {
        startup_ms,
        results,
    })
}
