//! What a benchmark reports: per operation and mode, the calls made, the
//! errors by status, the rate, and exact latency percentiles; as JSON and
//! as a Markdown table.
//!
//! Percentiles come from every latency, sorted (nearest rank). At a few
//! hundred thousand calls per run that is a few megabytes and a sort, and
//! it is exact, so there is no histogram to configure or to doubt.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Value, json};

use crate::pools::Op;

/// How the calls were made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Through the router in process, one call at a time.
    InProcess,
    /// Over HTTP with this many concurrent keep-alive connections.
    Http(usize),
}

impl Mode {
    /// `in-process`, `http-1`, `http-16`.
    pub fn label(self) -> String {
        match self {
            Mode::InProcess => "in-process".to_owned(),
            Mode::Http(c) => format!("http-{c}"),
        }
    }
}

/// One operation's result in one mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub op: Op,
    pub mode: Mode,
    /// Calls completed in the timed window, errors included.
    pub calls: u64,
    /// Calls whose answer was not 200.
    pub errors: u64,
    /// Errors by status code, or `io` when there was no HTTP answer.
    pub errors_by_status: BTreeMap<String, u64>,
    /// The timed window's length.
    pub seconds: f64,
    pub calls_per_s: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl Summary {
    /// Summarises latencies in nanoseconds (every call, errors included)
    /// measured over `seconds`.
    pub fn new(
        op: Op,
        mode: Mode,
        mut latencies_ns: Vec<u64>,
        errors_by_status: BTreeMap<String, u64>,
        seconds: f64,
    ) -> Summary {
        latencies_ns.sort_unstable();
        let us = |ns: u64| ns as f64 / 1e3;
        let at = |p: f64| us(percentile(&latencies_ns, p));
        let calls = latencies_ns.len() as u64;
        Summary {
            op,
            mode,
            calls,
            errors: errors_by_status.values().sum(),
            errors_by_status,
            seconds,
            calls_per_s: if seconds > 0.0 {
                calls as f64 / seconds
            } else {
                0.0
            },
            p50_us: at(0.50),
            p90_us: at(0.90),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: us(latencies_ns.last().copied().unwrap_or(0)),
        }
    }

    pub fn to_json(&self) -> Value {
        let round = |x: f64| (x * 100.0).round() / 100.0;
        json!({
            "op": self.op.name(),
            "mode": self.mode.label(),
            "calls": self.calls,
            "errors": self.errors,
            "errors_by_status": self.errors_by_status,
            "seconds": round(self.seconds),
            "calls_per_s": round(self.calls_per_s),
            "p50_us": round(self.p50_us),
            "p90_us": round(self.p90_us),
            "p99_us": round(self.p99_us),
            "p999_us": round(self.p999_us),
            "max_us": round(self.max_us),
        })
    }
}

/// The nearest-rank percentile of sorted values (0 when empty).
pub fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// The summaries as a JSON array.
pub fn to_json(summaries: &[Summary]) -> Value {
    Value::Array(summaries.iter().map(Summary::to_json).collect())
}

/// The summaries as a Markdown table.
pub fn markdown(summaries: &[Summary]) -> String {
    let mut out = String::from(
        "| op | mode | calls | errors | calls/s | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs |\n\
         |---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for s in summaries {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            s.op.name(),
            s.mode.label(),
            s.calls,
            if s.errors == 0 {
                "0".to_owned()
            } else {
                let by: Vec<String> = s
                    .errors_by_status
                    .iter()
                    .map(|(k, v)| format!("{v}×{k}"))
                    .collect();
                by.join(" ")
            },
            s.calls_per_s,
            s.p50_us,
            s.p90_us,
            s.p99_us,
            s.p999_us,
            s.max_us,
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(percentile(&v, 0.5), 500);
        assert_eq!(percentile(&v, 0.99), 990);
        assert_eq!(percentile(&v, 0.999), 999);
        assert_eq!(percentile(&v, 1.0), 1000);
        assert_eq!(percentile(&[7], 0.5), 7);
        assert_eq!(percentile(&[], 0.5), 0);
    }

    #[test]
    fn summaries_count_errors_and_rate() {
        let mut errors = BTreeMap::new();
        errors.insert("404".to_owned(), 2);
        let s = Summary::new(
            Op::Lookup,
            Mode::Http(16),
            vec![3000, 1000, 2000, 4000],
            errors,
            2.0,
        );
        assert_eq!((s.calls, s.errors, s.calls_per_s), (4, 2, 2.0));
        assert_eq!((s.p50_us, s.max_us), (2.0, 4.0));
        let j = s.to_json();
        assert_eq!(j["mode"], "http-16");
        assert_eq!(j["op"], "lookup");
        assert!(markdown(&[s]).contains("2×404"));
    }
}
