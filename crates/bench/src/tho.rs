//! One large value set of a FHIR package (`hl7.terminology.r4`, "THO"),
//! in process through the router (issue 7).
//!
//! The server state is built by [`txmap_server::prepare`] from a config
//! naming the packages (and, optionally, a SNOMED CT edition, mapped and
//! prewarmed), as `txmap serve` builds it. The value set is expanded once
//! on that state; the request pools are drawn from the expansion with a
//! seed:
//!
//! - `expand-all`: `ValueSet/$expand?url=VS`, the whole value set;
//! - `expand-page`: `count=20` at random offsets;
//! - `expand-filter`: `filter=<word>`, words of four letters or more from
//!   the expansion's displays;
//! - `validate-in`: `ValueSet/$validate-code?url=VS&system=CS&code=C`,
//!   codes of the expansion (abstract ones left out);
//! - `validate-out`: the same with codes not in it (expansion codes with a
//!   suffix no code has);
//! - `lookup`: `CodeSystem/$lookup?system=CS&code=C`, codes of the
//!   expansion.
//!
//! Packaged resources are parsed on first use and kept, so the first call
//! is measured apart: for each op, a fresh state (nothing parsed yet) and
//! one call, `cold_runs` times (ops taking turns), the median `cold_us`. The warm numbers are then taken on one
//! state: one uncounted call per pooled request (for at most a quarter of
//! the time limit, checking `result` of the `$validate-code` answers), then
//! the timed calls, one at a time on a current-thread runtime; every
//! latency is kept and percentiles are exact. A latency runs from handing
//! the request to the router to having the whole body.
//!
//! If `$expand?url=VS` alone is not answered 200 but is with `system=CS`
//! added (the server routes a request to the general engine by the system
//! it names), the `$expand` requests carry `system=CS` and the report says
//! so (`expand_system_param`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::http::{Request, StatusCode, Uri};
use serde_json::{Value, json};
use tower::ServiceExt;
use txmap_server::app::{AppState, router};

use crate::BenchError;
use crate::pools::{Rng, encode};
use crate::report::{Latencies, round};

/// The value set measured unless another is named: the whole of the
/// package's largest code system of a plain compose (1,302 codes in
/// `hl7.terminology.r4` 7.0.1).
pub const DEFAULT_VALUE_SET: &str = "http://terminology.hl7.org/ValueSet/v3-ActCode";

/// The operations, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThoOp {
    ExpandAll,
    ExpandPage,
    ExpandFilter,
    ValidateIn,
    ValidateOut,
    Lookup,
}

impl ThoOp {
    pub const ALL: [ThoOp; 6] = [
        ThoOp::ExpandAll,
        ThoOp::ExpandPage,
        ThoOp::ExpandFilter,
        ThoOp::ValidateIn,
        ThoOp::ValidateOut,
        ThoOp::Lookup,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ThoOp::ExpandAll => "expand-all",
            ThoOp::ExpandPage => "expand-page",
            ThoOp::ExpandFilter => "expand-filter",
            ThoOp::ValidateIn => "validate-in",
            ThoOp::ValidateOut => "validate-out",
            ThoOp::Lookup => "lookup",
        }
    }

    pub fn from_name(s: &str) -> Option<ThoOp> {
        ThoOp::ALL.into_iter().find(|o| o.name() == s)
    }

    /// What `result` a `$validate-code` answer must carry.
    fn expected_result(self) -> Option<bool> {
        match self {
            ThoOp::ValidateIn => Some(true),
            ThoOp::ValidateOut => Some(false),
            _ => None,
        }
    }
}

/// What to load and how much to measure.
#[derive(Clone, Debug)]
pub struct ThoOptions {
    /// FHIR packages (`.tgz`) for the config's `packages`.
    pub packages: Vec<PathBuf>,
    /// A SNOMED CT edition to serve too (mapped, prewarmed), if any.
    pub edition: Option<PathBuf>,
    /// The value set's canonical URL.
    pub value_set: String,
    /// The FHIR endpoint: `r4` or `r5`.
    pub endpoint: String,
    /// Timed calls per operation.
    pub calls: usize,
    /// An operation stops early once its timed calls take this long.
    pub max_time: Duration,
    /// Seed of the request pools.
    pub seed: u64,
    /// Page size of `expand-page`.
    pub page: usize,
    /// Fresh states per op for the first-call latency (the median is
    /// kept).
    pub cold_runs: usize,
    pub ops: Vec<ThoOp>,
}

impl Default for ThoOptions {
    fn default() -> Self {
        ThoOptions {
            packages: Vec::new(),
            edition: None,
            value_set: DEFAULT_VALUE_SET.to_owned(),
            endpoint: "r4".to_owned(),
            calls: 10_000,
            max_time: Duration::from_secs(10),
            seed: 1,
            page: 20,
            cold_runs: 5,
            ops: ThoOp::ALL.to_vec(),
        }
    }
}

/// One operation's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ThoSummary {
    pub op: ThoOp,
    /// Distinct requests the calls cycle through.
    pub pool: usize,
    /// One of them, as sent.
    pub example: String,
    /// The first call on a fresh state (nothing parsed): the median over
    /// `cold_runs` fresh states, each one, and the worst status.
    pub cold_us: f64,
    pub cold_all_us: Vec<f64>,
    pub cold_status: u16,
    /// Warm-up `$validate-code` answers whose `result` was not the
    /// expected one (or missing).
    pub unexpected: u64,
    /// The timed calls.
    pub latencies: Latencies,
}

impl ThoSummary {
    pub fn to_json(&self) -> Value {
        let mut v = json!({
            "op": self.op.name(),
            "pool": self.pool,
            "example": self.example,
            "cold_us": round(self.cold_us),
            "cold_all_us": self.cold_all_us.iter().map(|&x| round(x)).collect::<Vec<_>>(),
            "cold_status": self.cold_status,
            "unexpected": self.unexpected,
            "seconds": round(self.latencies.seconds),
        });
        if let Value::Object(obj) = &mut v {
            self.latencies.insert_json(obj);
        }
        v
    }
}

/// A whole run.
#[derive(Clone, Debug)]
pub struct ThoReport {
    pub value_set: String,
    /// The code system of the expansion's first code.
    pub system: String,
    /// The expansion's `total` (or its code count).
    pub total: usize,
    /// Codes in the expansion marked abstract.
    pub abstract_codes: usize,
    pub packages: Vec<String>,
    pub edition: Option<String>,
    /// `prepare` of the measured state, in milliseconds.
    pub startup_ms: f64,
    /// Whether `$expand` needed `system=CS` to be answered 200.
    pub expand_system_param: bool,
    /// The status of `$expand?url=VS` alone.
    pub expand_plain_status: u16,
    pub seed: u64,
    pub ops: Vec<ThoSummary>,
}

impl ThoReport {
    pub fn to_json(&self) -> Value {
        json!({
            "value_set": self.value_set,
            "system": self.system,
            "total": self.total,
            "abstract_codes": self.abstract_codes,
            "packages": self.packages,
            "edition": self.edition,
            "startup_ms": round(self.startup_ms),
            "expand_system_param": self.expand_system_param,
            "expand_plain_status": self.expand_plain_status,
            "seed": self.seed,
            "ops": self.ops.iter().map(ThoSummary::to_json).collect::<Vec<_>>(),
        })
    }

    /// The results as a Markdown table.
    pub fn markdown(&self) -> String {
        use std::fmt::Write as _;
        let mut out = format!(
            "{} ({} codes, {} abstract; system {}){}\n\n\
             | op | pool | calls | errors | first call µs | p50 µs | p90 µs | p99 µs | max µs |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
            self.value_set,
            self.total,
            self.abstract_codes,
            self.system,
            if self.expand_system_param {
                format!(
                    "; $expand?url= alone answered {}, so $expand carries system=",
                    self.expand_plain_status
                )
            } else {
                String::new()
            }
        );
        for s in &self.ops {
            let errors = if s.latencies.errors == 0 && s.unexpected == 0 {
                "0".to_owned()
            } else {
                let mut by: Vec<String> = s
                    .latencies
                    .errors_by_status
                    .iter()
                    .map(|(k, v)| format!("{v}×{k}"))
                    .collect();
                if s.unexpected > 0 {
                    by.push(format!("{} unexpected result", s.unexpected));
                }
                by.join(" ")
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {:.0}{} | {:.1} | {:.1} | {:.1} | {:.1} |",
                s.op.name(),
                s.pool,
                s.latencies.calls,
                errors,
                s.cold_us,
                if s.cold_status == 200 {
                    String::new()
                } else {
                    format!(" ({})", s.cold_status)
                },
                s.latencies.p50_us,
                s.latencies.p90_us,
                s.latencies.p99_us,
                s.latencies.max_us,
            );
        }
        out
    }
}

/// The server state for `packages` (and `edition` — an edition or a
/// compiled code system file — mapped and read through once), as `txmap
/// serve` prepares it; and how long `prepare` took, in milliseconds.
pub fn serve_state(
    packages: &[PathBuf],
    edition: Option<&Path>,
) -> Result<(Arc<AppState>, f64), BenchError> {
    let toml = |p: &Path| -> Result<String, BenchError> {
        let abs =
            std::path::absolute(p).map_err(|e| BenchError::new(format!("{}: {e}", p.display())))?;
        Ok(serde_json::to_string(&abs.to_string_lossy()).unwrap_or_default())
    };
    let list = packages
        .iter()
        .map(|p| toml(p))
        .collect::<Result<Vec<_>, _>>()?;
    let mut config = format!("packages = [{}]\n", list.join(", "));
    if let Some(e) = edition {
        let name = e
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| BenchError::new(format!("{}: no file name", e.display())))?;
        let name = serde_json::to_string(name).unwrap_or_default();
        config = format!(
            "editions = [{}]\n{config}[snomed]\nload = \"mmap\"\nprewarm = [{name}]\n",
            toml(e)?
        );
    }
    let started = Instant::now();
    let state = crate::handlers::state_from_config(&config)?;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    crate::handlers::wait_until_served(&state);
    Ok((state, ms))
}

/// What the expansion gave: codes (abstract ones marked) and displays.
struct Expansion {
    system: String,
    total: usize,
    codes: Vec<(String, bool)>,
    displays: Vec<String>,
}

fn read_expansion(body: &[u8]) -> Result<Expansion, BenchError> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| BenchError::new(format!("the expansion is not JSON: {e}")))?;
    let expansion = v
        .get("expansion")
        .ok_or_else(|| BenchError::new("the answer has no expansion"))?;
    let mut codes = Vec::new();
    let mut displays = Vec::new();
    let mut system = None;
    let mut stack: Vec<&Value> = vec![expansion];
    while let Some(node) = stack.pop() {
        for c in node
            .get("contains")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(code) = c.get("code").and_then(Value::as_str) {
                let s = c.get("system").and_then(Value::as_str).unwrap_or_default();
                if system.is_none() {
                    system = Some(s.to_owned());
                }
                // Pools keep to one code system, the first one's.
                if system.as_deref() == Some(s) {
                    let abs = c.get("abstract").and_then(Value::as_bool) == Some(true);
                    codes.push((code.to_owned(), abs));
                    if let Some(d) = c.get("display").and_then(Value::as_str) {
                        displays.push(d.to_owned());
                    }
                }
            }
            stack.push(c);
        }
    }
    let system = system.ok_or_else(|| BenchError::new("the expansion has no codes"))?;
    let total = expansion
        .get("total")
        .and_then(Value::as_u64)
        .map_or(codes.len(), |t| t as usize);
    Ok(Expansion {
        system,
        total,
        codes,
        displays,
    })
}

/// The request pools, drawn from the expansion with `seed`.
fn pools(
    base: &str,
    vs: &str,
    expand_system: Option<&str>,
    x: &Expansion,
    options: &ThoOptions,
) -> BTreeMap<&'static str, Vec<String>> {
    let mut rng = Rng::new(options.seed);
    let vs = encode(vs);
    let system = encode(&x.system);
    let expand = match expand_system {
        Some(s) => format!("{base}/ValueSet/$expand?url={vs}&system={}", encode(s)),
        None => format!("{base}/ValueSet/$expand?url={vs}"),
    };
    let concrete: Vec<&str> = x
        .codes
        .iter()
        .filter(|(_, abs)| !abs)
        .map(|(c, _)| c.as_str())
        .collect();
    let concrete = if concrete.is_empty() {
        x.codes.iter().map(|(c, _)| c.as_str()).collect()
    } else {
        concrete
    };
    let all: Vec<&str> = x.codes.iter().map(|(c, _)| c.as_str()).collect();
    let mut draw = |from: &[&str], n: usize| -> Vec<String> {
        (0..n)
            .map(|_| from[rng.below(from.len() as u64) as usize].to_owned())
            .collect()
    };
    let validate_in = draw(&concrete, 1000);
    let validate_out = draw(&all, 1000);
    let lookup = draw(&all, 1000);
    let mut words = BTreeSet::new();
    for d in &x.displays {
        for w in d.split(|c: char| !c.is_ascii_alphabetic()) {
            if w.len() >= 4 {
                words.insert(w.to_ascii_lowercase());
            }
        }
    }
    let words: Vec<String> = words.into_iter().collect();
    let mut out = BTreeMap::new();
    out.insert(ThoOp::ExpandAll.name(), vec![expand.clone()]);
    let last = x.total.saturating_sub(options.page) as u64 + 1;
    out.insert(
        ThoOp::ExpandPage.name(),
        (0..200)
            .map(|_| format!("{expand}&count={}&offset={}", options.page, rng.below(last)))
            .collect(),
    );
    let filter: Vec<String> = if words.is_empty() {
        vec![format!("{expand}&filter=a")]
    } else {
        (0..200.min(words.len() * 4))
            .map(|_| {
                let w = &words[rng.below(words.len() as u64) as usize];
                format!("{expand}&filter={}", encode(w))
            })
            .collect()
    };
    out.insert(ThoOp::ExpandFilter.name(), filter);
    let validate = |code: &str| {
        format!(
            "{base}/ValueSet/$validate-code?url={vs}&system={system}&code={}",
            encode(code)
        )
    };
    out.insert(
        ThoOp::ValidateIn.name(),
        validate_in.iter().map(|c| validate(c)).collect(),
    );
    // No code of the system ends so.
    out.insert(
        ThoOp::ValidateOut.name(),
        validate_out
            .iter()
            .map(|c| validate(&format!("{c}-not-a-code")))
            .collect(),
    );
    out.insert(
        ThoOp::Lookup.name(),
        lookup
            .iter()
            .map(|c| {
                format!(
                    "{base}/CodeSystem/$lookup?system={system}&code={}",
                    encode(c)
                )
            })
            .collect(),
    );
    out
}

fn uris(requests: &[String]) -> Result<Vec<Uri>, BenchError> {
    requests
        .iter()
        .map(|r| {
            r.parse::<Uri>()
                .map_err(|e| BenchError::new(format!("{r}: bad request target: {e}")))
        })
        .collect()
}

/// Runs the benchmark: the state, the expansion, the cold first calls,
/// then the warm timed calls of every op.
pub fn run(options: &ThoOptions) -> Result<ThoReport, BenchError> {
    if options.packages.is_empty() {
        return Err(BenchError::new("no package to load"));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::new(format!("starting the runtime: {e}")))?;
    let base = format!("/{}", options.endpoint);
    let (state, startup_ms) = serve_state(&options.packages, options.edition.as_deref())?;
    let app = router(state.clone());

    // The expansion, plain and, if that fails, naming the system.
    let vs = encode(&options.value_set);
    let plain: Uri = format!("{base}/ValueSet/$expand?url={vs}")
        .parse()
        .map_err(|e| BenchError::new(format!("bad value set URL: {e}")))?;
    let (plain_status, _, body) = runtime.block_on(call(&app, &plain));
    let (expansion, expand_system) = if plain_status == StatusCode::OK {
        (read_expansion(&body)?, None)
    } else {
        let system = compose_system(&state, &options.value_set).ok_or_else(|| {
            BenchError::new(format!(
                "$expand?url={}: {plain_status}, and no system in its compose to retry with",
                options.value_set
            ))
        })?;
        let hinted: Uri = format!(
            "{base}/ValueSet/$expand?url={vs}&system={}",
            encode(&system)
        )
        .parse()
        .map_err(|e| BenchError::new(format!("bad system URL: {e}")))?;
        let (status, _, body) = runtime.block_on(call(&app, &hinted));
        if status != StatusCode::OK {
            return Err(BenchError::new(format!(
                "$expand?url={}: {plain_status}; with system={system}: {status}: {}",
                options.value_set,
                String::from_utf8_lossy(&body[..body.len().min(500)])
            )));
        }
        (read_expansion(&body)?, Some(system))
    };
    let pools = pools(
        &base,
        &options.value_set,
        expand_system.as_deref(),
        &expansion,
        options,
    );

    // First calls: each on a fresh state, ops taking turns.
    let mut cold: Vec<(u16, Vec<f64>)> = vec![(200, Vec::new()); options.ops.len()];
    for _ in 0..options.cold_runs.max(1) {
        for (i, &op) in options.ops.iter().enumerate() {
            let first = uris(&pools[op.name()][..1])?;
            let (fresh, _) = serve_state(&options.packages, options.edition.as_deref())?;
            let fresh_app = router(fresh);
            let (status, ns, _) = runtime.block_on(call(&fresh_app, &first[0]));
            if status != StatusCode::OK {
                cold[i].0 = status.as_u16();
            }
            cold[i].1.push(ns as f64 / 1e3);
        }
    }

    let mut ops = Vec::new();
    for (&op, (cold_status, cold_all)) in options.ops.iter().zip(cold) {
        let requests = &pools[op.name()];
        let uris = uris(requests)?;
        let mut s = runtime.block_on(time_op(&app, op, &uris, options));
        s.example = requests[0].clone();
        s.cold_status = cold_status;
        let mut sorted = cold_all.clone();
        sorted.sort_by(f64::total_cmp);
        s.cold_us = sorted[sorted.len() / 2];
        s.cold_all_us = cold_all;
        ops.push(s);
    }
    let abstract_codes = expansion.codes.iter().filter(|(_, a)| *a).count();
    Ok(ThoReport {
        value_set: options.value_set.clone(),
        system: expansion.system,
        total: expansion.total,
        abstract_codes,
        packages: options
            .packages
            .iter()
            .map(|p| p.display().to_string())
            .collect(),
        edition: options.edition.as_ref().map(|e| e.display().to_string()),
        startup_ms,
        expand_system_param: expand_system.is_some(),
        expand_plain_status: plain_status.as_u16(),
        seed: options.seed,
        ops,
    })
}

/// The first `system` of the value set's compose, as the packages hold it.
fn compose_system(state: &AppState, url: &str) -> Option<String> {
    let bare = url.split('|').next().unwrap_or(url);
    state.packages.list.iter().find_map(|p| {
        p.entries()
            .iter()
            .filter(|e| e.kind == txmap_packages::Kind::ValueSet && e.url == bare)
            .find_map(|e| {
                let v: Value = serde_json::from_slice(p.json(e)).ok()?;
                v.pointer("/compose/include")?
                    .as_array()?
                    .iter()
                    .find_map(|i| i.get("system")?.as_str().map(str::to_owned))
            })
    })
}

async fn time_op(app: &axum::Router, op: ThoOp, uris: &[Uri], options: &ThoOptions) -> ThoSummary {
    let mut unexpected = 0;
    let warming = Instant::now();
    for uri in uris.iter().take(options.calls.max(1)) {
        let (status, _, body) = call(app, uri).await;
        if let Some(want) = op.expected_result()
            && (status != StatusCode::OK || validate_result(&body) != Some(want))
        {
            unexpected += 1;
        }
        if warming.elapsed() >= options.max_time / 4 {
            break;
        }
    }
    let mut latencies = Vec::with_capacity(options.calls);
    let mut errors = BTreeMap::new();
    let started = Instant::now();
    for i in 0..options.calls {
        let (status, ns, _) = call(app, &uris[i % uris.len()]).await;
        latencies.push(ns);
        if status != StatusCode::OK {
            *errors.entry(status.as_u16().to_string()).or_insert(0) += 1;
        }
        if started.elapsed() >= options.max_time {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    ThoSummary {
        op,
        pool: uris.len(),
        example: String::new(),
        cold_us: 0.0,
        cold_all_us: Vec::new(),
        cold_status: 0,
        unexpected,
        latencies: Latencies::new(latencies, errors, seconds),
    }
}

/// The `result` parameter of a `$validate-code` answer.
fn validate_result(body: &[u8]) -> Option<bool> {
    let v: Value = serde_json::from_slice(body).ok()?;
    v.get("parameter")?
        .as_array()?
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some("result"))?
        .get("valueBoolean")?
        .as_bool()
}

/// One call: its status, latency in nanoseconds, and body.
async fn call(app: &axum::Router, uri: &Uri) -> (StatusCode, u64, Bytes) {
    let request = Request::get(uri.clone())
        .header("accept", "application/fhir+json")
        .body(Body::empty())
        .expect("a GET with a parsed URI is a valid request");
    let t = Instant::now();
    let (status, body) = match app.clone().oneshot(request).await {
        Ok(response) => {
            let status = response.status();
            match axum::body::to_bytes(response.into_body(), usize::MAX).await {
                Ok(b) => (status, b),
                Err(_) => (StatusCode::INTERNAL_SERVER_ERROR, Bytes::new()),
            }
        }
        Err(never) => match never {},
    };
    (status, t.elapsed().as_nanos() as u64, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_round_trip() {
        for op in ThoOp::ALL {
            assert_eq!(ThoOp::from_name(op.name()), Some(op));
        }
    }

    #[test]
    fn expansions_are_read_nested() {
        let body = json!({"expansion": {"total": 3, "contains": [
            {"system": "s", "code": "A", "display": "Alpha one", "abstract": true,
             "contains": [{"system": "s", "code": "B", "display": "Beta"}]},
            {"system": "t", "code": "C"}]}});
        let x = read_expansion(body.to_string().as_bytes()).unwrap();
        assert_eq!((x.system.as_str(), x.total), ("s", 3));
        assert_eq!(x.codes.len(), 2);
        assert_eq!(x.codes.iter().filter(|(_, a)| *a).count(), 1);
        let p = pools("/r4", "http://x/vs", None, &x, &ThoOptions::default());
        assert!(p["validate-in"].iter().all(|r| r.ends_with("code=B")));
        assert!(
            p["expand-filter"]
                .iter()
                .all(|r| r.ends_with("filter=alpha") || r.ends_with("filter=beta"))
        );
        assert_eq!(
            p["expand-all"],
            vec!["/r4/ValueSet/$expand?url=http%3A%2F%2Fx%2Fvs"]
        );
    }
}
