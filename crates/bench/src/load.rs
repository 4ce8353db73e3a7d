//! Replays a traffic corpus ([`crate::corpus`]) against a server (issue 8).
//!
//! C threads, each with one keep-alive HTTP/1.1 connection (the client of
//! [`crate::http`]), send the corpus's requests in a closed loop: either
//! for a fixed time after a warm-up, each thread cycling through the corpus
//! from its own place in it, or for exactly one pass, the threads taking
//! the next request in corpus order from a shared counter. Every counted
//! call's latency and status is kept; the report gives calls/s, exact
//! percentiles and errors by status per operation (the corpus's `op`) and
//! overall.
//!
//! Several clients can share one pass exactly: [`part`] gives client K of
//! N every Nth request from the K-th, and [`raw_tsv`] writes a replay's
//! every call (operation, status, latency), so a driver running N clients
//! side by side merges their raw latencies into exact percentiles of the
//! whole pass rather than averaging theirs (bench/matrix.py does).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::BenchError;
use crate::corpus::Request;
use crate::http::{Conn, Target};
use crate::report::{Latencies, round};

/// How long, and how many connections.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    pub connections: usize,
    /// Uncounted calls first (time mode only).
    pub warmup: Duration,
    /// Measured time; `None`: one pass over the corpus, every call counted.
    pub duration: Option<Duration>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            connections: 1,
            warmup: Duration::from_secs(1),
            duration: Some(Duration::from_secs(10)),
        }
    }
}

/// One operation's (or all operations') numbers.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub op: String,
    pub latencies: Latencies,
}

impl Row {
    fn new(op: String, ns: Vec<u64>, errors_by_status: BTreeMap<String, u64>, s: f64) -> Row {
        Row {
            op,
            latencies: Latencies::new(ns, errors_by_status, s),
        }
    }

    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("op".into(), json!(self.op));
        obj.insert("mean_us".into(), json!(round(self.latencies.mean_us)));
        self.latencies.insert_json(&mut obj);
        Value::Object(obj)
    }

    /// Answers 500 and up.
    pub fn server_errors(&self) -> u64 {
        self.latencies
            .errors_by_status
            .iter()
            .filter(|(k, _)| k.starts_with('5'))
            .map(|(_, v)| v)
            .sum()
    }
}

/// One replay.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadReport {
    pub connections: usize,
    /// `time` or `pass`.
    pub mode: &'static str,
    pub seconds: f64,
    pub corpus_len: usize,
    /// Every operation, by name.
    pub ops: Vec<Row>,
    /// All calls.
    pub overall: Row,
    /// Every counted call: the request's index in the corpus, its latency
    /// in nanoseconds and its status (0: no answer), in completion order
    /// per connection.
    pub calls: Vec<(u32, u64, u16)>,
}

impl LoadReport {
    pub fn to_json(&self) -> Value {
        json!({
            "connections": self.connections,
            "mode": self.mode,
            "seconds": (self.seconds * 1000.0).round() / 1000.0,
            "corpus_requests": self.corpus_len,
            "overall": self.overall.to_json(),
            "ops": self.ops.iter().map(Row::to_json).collect::<Vec<_>>(),
        })
    }
}

/// Reports as a Markdown table: every operation, then all, per run.
pub fn markdown(reports: &[LoadReport]) -> String {
    let mut out = String::from(
        "| op | conns | calls | calls/s | p50 µs | p90 µs | p99 µs | p99.9 µs | max µs | errors |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n",
    );
    for r in reports {
        for row in r.ops.iter().chain(std::iter::once(&r.overall)) {
            let errors = if row.latencies.errors == 0 {
                "0".to_owned()
            } else {
                let by: Vec<String> = row
                    .latencies
                    .errors_by_status
                    .iter()
                    .map(|(k, v)| format!("{v}×{k}"))
                    .collect();
                by.join(" ")
            };
            let op = if row.op == "all" {
                "**all**".to_owned()
            } else {
                let d = crate::corpus::Shape::from_name(&row.op)
                    .map(|s| format!(" {}", s.describe()))
                    .unwrap_or_default();
                format!("{}{d}", row.op)
            };
            let _ = writeln!(
                out,
                "| {op} | {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} | {errors} |",
                r.connections,
                row.latencies.calls,
                row.latencies.calls_per_s,
                row.latencies.p50_us,
                row.latencies.p90_us,
                row.latencies.p99_us,
                row.latencies.p999_us,
                row.latencies.max_us,
            );
        }
    }
    out
}

/// A call: the request's index in the corpus, its latency, its status
/// (0: no answer).
type Call = (u32, u64, u16);

/// Client `k` of `n`'s share of a corpus: the requests at `k`, `k + n`,
/// `k + 2n`, … (so every share has the corpus's mix, and the shares of
/// `0..n` are the corpus, each request once).
pub fn part(corpus: &[Request], k: usize, n: usize) -> Result<Vec<Request>, BenchError> {
    if n == 0 || k >= n {
        return Err(BenchError::new(format!(
            "part {k}/{n}: K must be below N (and N above 0)"
        )));
    }
    Ok(corpus.iter().skip(k).step_by(n).cloned().collect())
}

/// Every call of `reports` as tab-separated lines with a header:
/// `connections`, `op`, `status` (0: no answer), `ns` (latency).
pub fn raw_tsv(corpus: &[Request], reports: &[LoadReport]) -> String {
    let mut out = String::from("connections\top\tstatus\tns\n");
    for r in reports {
        for &(i, ns, status) in &r.calls {
            let _ = writeln!(
                out,
                "{}\t{}\t{status}\t{ns}",
                r.connections, corpus[i as usize].op
            );
        }
    }
    out
}

/// Replays `corpus` against `target`.
pub fn run(
    target: &Target,
    corpus: &[Request],
    options: &LoadOptions,
) -> Result<LoadReport, BenchError> {
    if corpus.is_empty() {
        return Err(BenchError::new("the corpus is empty"));
    }
    Conn::open(target.addr).map_err(|e| BenchError::new(format!("http://{}: {e}", target.host)))?;
    let wire: Arc<Vec<Vec<u8>>> = Arc::new(corpus.iter().map(|r| wire(r, &target.host)).collect());
    let connections = options.connections.max(1);
    let start = Instant::now();
    let (measure_from, end) = match options.duration {
        Some(d) => (start + options.warmup, Some(start + options.warmup + d)),
        None => (start, None),
    };
    let next = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..connections)
        .map(|t| {
            let wire = wire.clone();
            let next = next.clone();
            let addr = target.addr;
            let first = t * wire.len() / connections;
            std::thread::spawn(move || match end {
                Some(end) => client(addr, &wire, Some(first), &next, measure_from, Some(end)),
                None => client(addr, &wire, None, &next, measure_from, None),
            })
        })
        .collect();
    let mut calls: Vec<Call> = Vec::new();
    for t in threads {
        calls.extend(
            t.join()
                .map_err(|_| BenchError::new("a client thread panicked"))?,
        );
    }
    let seconds = match options.duration {
        Some(d) => d.as_secs_f64(),
        None => start.elapsed().as_secs_f64(),
    };
    Ok(summarise(corpus, &calls, connections, options, seconds))
}

fn summarise(
    corpus: &[Request],
    calls: &[Call],
    connections: usize,
    options: &LoadOptions,
    seconds: f64,
) -> LoadReport {
    type Acc = (Vec<u64>, BTreeMap<String, u64>);
    let mut by_op: BTreeMap<&str, Acc> = BTreeMap::new();
    let mut all: Acc = Default::default();
    for &(i, ns, status) in calls {
        let op = corpus[i as usize].op.as_str();
        let acc = by_op.entry(op).or_default();
        acc.0.push(ns);
        all.0.push(ns);
        if status != 200 {
            let key = if status == 0 {
                "io".to_owned()
            } else {
                status.to_string()
            };
            *acc.1.entry(key.clone()).or_insert(0) += 1;
            *all.1.entry(key).or_insert(0) += 1;
        }
    }
    LoadReport {
        connections,
        mode: if options.duration.is_some() {
            "time"
        } else {
            "pass"
        },
        seconds,
        corpus_len: corpus.len(),
        ops: by_op
            .into_iter()
            .map(|(op, (ns, e))| Row::new(op.to_owned(), ns, e, seconds))
            .collect(),
        overall: Row::new("all".to_owned(), all.0, all.1, seconds),
        calls: calls.to_vec(),
    }
}

/// The request's bytes on the wire.
fn wire(r: &Request, host: &str) -> Vec<u8> {
    let mut head = format!(
        "{} {} HTTP/1.1\r\nHost: {host}\r\nAccept: application/fhir+json\r\nConnection: keep-alive\r\n",
        r.method, r.path
    );
    let body = r.body.as_deref().unwrap_or("");
    if r.body.is_some() || r.method != "GET" {
        let _ = write!(
            head,
            "Content-Type: application/fhir+json\r\nContent-Length: {}\r\n",
            body.len()
        );
    }
    head.push_str("\r\n");
    let mut out = head.into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// One connection's loop. With `end`, cycles from `first` until then,
/// counting calls started from `measure_from`; without, takes requests
/// from `next` until the corpus is done, counting all.
fn client(
    addr: std::net::SocketAddr,
    wire: &[Vec<u8>],
    first: Option<usize>,
    next: &AtomicUsize,
    measure_from: Instant,
    end: Option<Instant>,
) -> Vec<Call> {
    let mut calls = Vec::with_capacity(1 << 16);
    let mut conn: Option<Conn> = None;
    let mut i = first.unwrap_or(0);
    let mut pending: Option<usize> = None;
    loop {
        let now = Instant::now();
        if end.is_some_and(|end| now >= end) {
            break;
        }
        let index = match (pending.take(), first) {
            (Some(p), _) => p,
            (None, Some(_)) => {
                let x = i % wire.len();
                i += 1;
                x
            }
            (None, None) => {
                let x = next.fetch_add(1, Ordering::Relaxed);
                if x >= wire.len() {
                    break;
                }
                x
            }
        };
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match Conn::open(addr) {
                Ok(c) => conn.insert(c),
                Err(_) => {
                    if now >= measure_from {
                        calls.push((index as u32, 0, 0));
                    } else {
                        pending = Some(index);
                    }
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                }
            },
        };
        let t = Instant::now();
        let result = c.call(&wire[index]);
        let ns = t.elapsed().as_nanos() as u64;
        let status = match result {
            Ok((status, keep_alive)) => {
                if !keep_alive {
                    conn = None;
                }
                status
            }
            Err(_) => {
                conn = None;
                0
            }
        };
        if t >= measure_from {
            calls.push((index as u32, ns, status));
        }
    }
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(op: &str) -> Request {
        Request {
            op: op.into(),
            edition: None,
            method: "GET".into(),
            path: "/x".into(),
            body: None,
        }
    }

    #[test]
    fn summaries_group_by_op_and_count_statuses() {
        let corpus = vec![req("LK01"), req("SS01")];
        let calls = vec![(0, 1000, 200), (0, 3000, 404), (1, 2000, 200), (1, 4000, 0)];
        let r = summarise(&corpus, &calls, 2, &LoadOptions::default(), 2.0);
        assert_eq!(r.ops.len(), 2);
        assert_eq!(
            (r.ops[0].op.as_str(), r.ops[0].latencies.calls),
            ("LK01", 2)
        );
        assert_eq!(r.ops[0].latencies.errors_by_status["404"], 1);
        assert_eq!(r.ops[1].latencies.errors_by_status["io"], 1);
        assert_eq!(
            (r.overall.latencies.calls, r.overall.latencies.errors),
            (4, 2)
        );
        assert_eq!(r.overall.latencies.calls_per_s, 2.0);
        assert_eq!(r.overall.latencies.mean_us, 2.5);
        assert_eq!(r.overall.server_errors(), 0);
        let md = markdown(std::slice::from_ref(&r));
        assert!(md.contains("| LK01 $lookup | 2 | 2 |"), "{md}");
        assert!(md.contains("**all**"));
        assert_eq!(r.to_json()["overall"]["calls"], 4);
    }

    #[test]
    fn posts_carry_their_body() {
        let mut r = req("EX08");
        r.method = "POST".into();
        r.body = Some("{}".into());
        let w = String::from_utf8(wire(&r, "h:1")).unwrap();
        assert!(w.starts_with("POST /x HTTP/1.1\r\nHost: h:1\r\n"));
        assert!(w.ends_with("Content-Length: 2\r\n\r\n{}"), "{w}");
    }

    #[test]
    fn parts_cover_the_corpus_once() {
        let corpus: Vec<Request> = (0..10).map(|i| req(&format!("op{i}"))).collect();
        let mut seen: Vec<String> = Vec::new();
        for k in 0..4 {
            let p = part(&corpus, k, 4).unwrap();
            assert_eq!(p.len(), if k < 2 { 3 } else { 2 });
            assert_eq!(p[0].op, format!("op{k}"));
            seen.extend(p.into_iter().map(|r| r.op));
        }
        seen.sort();
        let mut all: Vec<String> = corpus.into_iter().map(|r| r.op).collect();
        all.sort();
        assert_eq!(seen, all);
        assert!(part(&[req("x")], 4, 4).is_err());
        assert!(part(&[req("x")], 0, 0).is_err());
    }

    #[test]
    fn raw_calls_as_tsv() {
        let corpus = vec![req("LK01"), req("SS01")];
        let calls = vec![(1, 2000, 200), (0, 1000, 0)];
        let r = summarise(&corpus, &calls, 2, &LoadOptions::default(), 1.0);
        assert_eq!(
            raw_tsv(&corpus, &[r]),
            "connections\top\tstatus\tns\n2\tSS01\t200\t2000\n2\tLK01\t0\t1000\n"
        );
    }
}
