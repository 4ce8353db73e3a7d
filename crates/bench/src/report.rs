//! What a benchmark reports: per operation and mode, the calls made, the
//! errors by status, the rate, and exact latency percentiles; as JSON and
//! as a Markdown table.
//!
//! Percentiles come from every latency, sorted (nearest rank). At a few
//! hundred thousand calls per run that is a few megabytes and a sort, and
//! it is exact, so there is no histogram to configure or to doubt.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{Map, Value, json};

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

/// Counts, rate and exact latency percentiles of a set of calls: what
/// every report of this crate carries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Latencies {
    /// Calls completed in the timed window, errors included.
    pub calls: u64,
    /// Calls whose answer was not 200.
    pub errors: u64,
    /// Errors by status code, or `io` when there was no HTTP answer.
    pub errors_by_status: BTreeMap<String, u64>,
    /// The timed window's length.
    pub seconds: f64,
    pub calls_per_s: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
}

impl Latencies {
    /// Summarises latencies in nanoseconds (every call, errors included)
    /// measured over `seconds`.
    pub fn new(
        mut latencies_ns: Vec<u64>,
        errors_by_status: BTreeMap<String, u64>,
        seconds: f64,
    ) -> Latencies {
        latencies_ns.sort_unstable();
        let us = |ns: u64| ns as f64 / 1e3;
        let at = |p: f64| us(percentile(&latencies_ns, p));
        let calls = latencies_ns.len() as u64;
        Latencies {
            calls,
            errors: errors_by_status.values().sum(),
            errors_by_status,
            seconds,
            calls_per_s: if seconds > 0.0 {
                calls as f64 / seconds
            } else {
                0.0
            },
            mean_us: if calls == 0 {
                0.0
            } else {
                latencies_ns.iter().sum::<u64>() as f64 / calls as f64 / 1e3
            },
            p50_us: at(0.50),
            p90_us: at(0.90),
            p99_us: at(0.99),
            p999_us: at(0.999),
            max_us: us(latencies_ns.last().copied().unwrap_or(0)),
        }
    }

    /// Adds the counts, the rate and the percentiles (not `seconds` or
    /// `mean_us`, which reports add as they need) to a JSON object,
    /// rounded to hundredths.
    pub fn insert_json(&self, obj: &mut Map<String, Value>) {
        obj.insert("calls".into(), json!(self.calls));
        obj.insert("errors".into(), json!(self.errors));
        obj.insert("errors_by_status".into(), json!(self.errors_by_status));
        for (k, v) in [
            ("calls_per_s", self.calls_per_s),
            ("p50_us", self.p50_us),
            ("p90_us", self.p90_us),
            ("p99_us", self.p99_us),
            ("p999_us", self.p999_us),
            ("max_us", self.max_us),
        ] {
            obj.insert(k.into(), json!(round(v)));
        }
    }
}

/// Rounded to hundredths, as reports print figures.
pub fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One operation's result in one mode.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    pub op: Op,
    pub mode: Mode,
    pub latencies: Latencies,
}

impl Summary {
    /// Summarises latencies in nanoseconds (every call, errors included)
    /// measured over `seconds`.
    pub fn new(
        op: Op,
        mode: Mode,
        latencies_ns: Vec<u64>,
        errors_by_status: BTreeMap<String, u64>,
        seconds: f64,
    ) -> Summary {
        Summary {
            op,
            mode,
            latencies: Latencies::new(latencies_ns, errors_by_status, seconds),
        }
    }

    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("op".into(), json!(self.op.name()));
        obj.insert("mode".into(), json!(self.mode.label()));
        obj.insert("seconds".into(), json!(round(self.latencies.seconds)));
        self.latencies.insert_json(&mut obj);
        Value::Object(obj)
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
        let l = &s.latencies;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
            s.op.name(),
            s.mode.label(),
            l.calls,
            if l.errors == 0 {
                "0".to_owned()
            } else {
                let by: Vec<String> = l
                    .errors_by_status
                    .iter()
                    .map(|(k, v)| format!("{v}×{k}"))
                    .collect();
                by.join(" ")
            },
            l.calls_per_s,
            l.p50_us,
            l.p90_us,
            l.p99_us,
            l.p999_us,
            l.max_us,
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
        let l = &s.latencies;
        assert_eq!((l.calls, l.errors, l.calls_per_s), (4, 2, 2.0));
        assert_eq!((l.p50_us, l.max_us, l.mean_us), (2.0, 4.0, 2.5));
        let j = s.to_json();
        assert_eq!(j["mode"], "http-16");
        assert_eq!(j["op"], "lookup");
        assert!(markdown(&[s]).contains("2×404"));
    }
}
