//! The first pass after a restart (issue 16): how many pages of each
//! section each kind of call touches, and what each way of asking the
//! kernel for help costs and saves, cold, in a fresh child process per
//! arm.
//!
//! Each run: the parent drops the edition file from the page cache
//! (`posix_fadvise(POSIX_FADV_DONTNEED)`, residency checked by `mincore`)
//! and starts a child ([`child_main`]). The child builds the server state
//! as `txmap serve` does from a config that maps the edition with the
//! arm's `[snomed]` settings (trusted unverified, so the pass starts at
//! once; verification leaves the cache as it found it anyway), waits for a
//! prewarm read if the arm has one, then replays the corpus through the
//! router one call at a time (the **cold pass**), takes `mincore` of every
//! section, and replays it again (the **warm pass**). It reports both
//! passes' times and percentiles, the major and minor faults of the cold
//! pass (`getrusage`), and the bytes of each section in the page cache
//! after it.
//!
//! Arms ([`Arm`]): `random`, `normal` and `sections` are the server's
//! `[snomed] advice` values; `willneed-hot` and `populate-hot` map random
//! and then advise the hot ranges (`txmap_store::access::hot_ranges`)
//! `MADV_WILLNEED` or `MADV_POPULATE_READ` at open; `prewarm` and
//! `prewarm-hot` are the load modes, with `sections` advice, the pass
//! waiting for the read as `bench/matrix.py` does.
//!
//! With `--by-op`, each call kind of the corpus runs alone, cold, with
//! `random` advice (no readahead, so what is resident after the pass is
//! what the calls touched): the page map.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use axum::body::Body;
use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use txmap_load::Advice;
use txmap_server::app::{AppState, router};

use crate::BenchError;
use crate::corpus::{Request, from_jsonl};
use crate::report::percentile;
use crate::scan::{evict, usage};

/// One way of loading and advising the edition. See the [module docs](self).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Arm {
    Random,
    Normal,
    Sections,
    WillneedHot,
    PopulateHot,
    Prewarm,
    PrewarmHot,
}

impl Arm {
    pub const ALL: [Arm; 7] = [
        Arm::Random,
        Arm::Normal,
        Arm::Sections,
        Arm::WillneedHot,
        Arm::PopulateHot,
        Arm::Prewarm,
        Arm::PrewarmHot,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Arm::Random => "random",
            Arm::Normal => "normal",
            Arm::Sections => "sections",
            Arm::WillneedHot => "willneed-hot",
            Arm::PopulateHot => "populate-hot",
            Arm::Prewarm => "prewarm",
            Arm::PrewarmHot => "prewarm-hot",
        }
    }

    pub fn from_name(s: &str) -> Option<Arm> {
        Arm::ALL.into_iter().find(|a| a.name() == s)
    }

    /// The `[snomed]` block's lines for this arm, the edition named `name`.
    fn snomed(self, name: &str) -> String {
        let advice = match self {
            Arm::Random | Arm::WillneedHot | Arm::PopulateHot => "random",
            Arm::Normal => "normal",
            _ => "sections",
        };
        let mut s =
            format!("load = \"mmap\"\nadvice = \"{advice}\"\ntrust_unverified = [{name}]\n");
        match self {
            Arm::Prewarm => s.push_str(&format!("prewarm = [{name}]\n")),
            Arm::PrewarmHot => s.push_str(&format!("prewarm_hot = [{name}]\n")),
            _ => {}
        }
        s
    }
}

/// What a child is asked to do.
#[derive(Clone, Debug)]
pub struct ChildArgs {
    pub edition: PathBuf,
    pub corpus: PathBuf,
    pub arm: Arm,
    /// Only calls of these kinds (`LK01`…); all when empty.
    pub ops: Vec<String>,
}

impl ChildArgs {
    fn to_json(&self) -> String {
        json!({
            "edition": self.edition,
            "corpus": self.corpus,
            "arm": self.arm.name(),
            "ops": self.ops,
        })
        .to_string()
    }

    fn from_json(text: &str) -> Result<ChildArgs, BenchError> {
        let v: Value = serde_json::from_str(text)
            .map_err(|e| BenchError::new(format!("cold child arguments: {e}")))?;
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default();
        Ok(ChildArgs {
            edition: PathBuf::from(s("edition")),
            corpus: PathBuf::from(s("corpus")),
            arm: Arm::from_name(s("arm"))
                .ok_or_else(|| BenchError::new(format!("unknown arm {:?}", s("arm"))))?,
            ops: v
                .get("ops")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|o| o.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        })
    }
}

/// One pass's numbers.
#[derive(Clone, Debug, Default)]
struct Pass {
    seconds: f64,
    p50_us: f64,
    p99_us: f64,
    statuses: BTreeMap<u16, u64>,
}

/// The child: one arm, cold then warm. Prints one JSON line.
pub fn child_main(args: &str) -> Result<String, BenchError> {
    let args = ChildArgs::from_json(args)?;
    let text = std::fs::read_to_string(&args.corpus)
        .map_err(|e| BenchError::new(format!("{}: {e}", args.corpus.display())))?;
    let requests: Vec<Request> = from_jsonl(&text)?
        .into_iter()
        .filter(|r| args.ops.is_empty() || args.ops.contains(&r.op))
        .collect();
    if requests.is_empty() {
        return Err(BenchError::new("no requests of the asked kinds"));
    }
    let opened = Instant::now();
    let state = state(&args.edition, args.arm)?;
    let served = state
        .editions
        .default_edition()
        .ok_or_else(|| BenchError::new("no edition"))?;
    let bytes = served.edition.bytes();
    let hot = txmap_store::access::hot_ranges(bytes);
    match args.arm {
        Arm::WillneedHot => hot.iter().for_each(|r| {
            let _ = bytes.advise(r.clone(), Advice::WillNeed);
        }),
        Arm::PopulateHot => hot.iter().for_each(|r| {
            let _ = bytes.advise(r.clone(), Advice::PopulateRead);
        }),
        _ => {}
    }
    if let Some(p) = &served.file.prewarm {
        p.wait();
    }
    let open_s = opened.elapsed().as_secs_f64();
    let resident_at_start = bytes.resident_bytes().unwrap_or(0);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::new(format!("runtime: {e}")))?;
    let app = router(state.clone());
    let (maj0, min0) = usage()?;
    let cold = runtime.block_on(replay(&app, &requests));
    let (maj1, min1) = usage()?;
    let residency = bytes.residency();
    let sections: Vec<Value> = served
        .edition
        .sections()
        .iter()
        .map(|s| {
            let r = s.offset as usize..(s.offset + s.len) as usize;
            json!({
                "section": s.name,
                "bytes": s.len,
                "resident": residency.as_ref().map_or(0, |res| res.bytes_in(r)),
            })
        })
        .collect();
    let warm = runtime.block_on(replay(&app, &requests));
    let pass = |p: &Pass| {
        json!({
            "seconds": p.seconds,
            "p50_us": p.p50_us,
            "p99_us": p.p99_us,
            "statuses": p.statuses.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        })
    };
    Ok(json!({
        "arm": args.arm.name(),
        "ops": args.ops,
        "calls": requests.len(),
        "file_bytes": bytes.len(),
        "hot_bytes": hot.iter().map(|r| r.len()).sum::<usize>(),
        "open_s": open_s,
        "resident_at_start": resident_at_start,
        "cold": pass(&cold),
        "warm": pass(&warm),
        "majflt": maj1 - maj0,
        "minflt": min1 - min0,
        "resident_after_cold": residency.as_ref().map_or(0, |r| r.bytes_in(0..bytes.len())),
        "sections": sections,
    })
    .to_string())
}

fn state(edition: &Path, arm: Arm) -> Result<Arc<AppState>, BenchError> {
    let (path, name) = crate::handlers::edition_toml(edition)?;
    crate::handlers::state_from_config(&format!(
        "editions = [{path}]\n[snomed]\n{}",
        arm.snomed(&name)
    ))
}

async fn replay(app: &axum::Router, requests: &[Request]) -> Pass {
    let mut ns = Vec::with_capacity(requests.len());
    let mut statuses = BTreeMap::new();
    let started = Instant::now();
    for r in requests {
        let t = Instant::now();
        let status = call(app, r).await;
        ns.push(t.elapsed().as_nanos() as u64);
        *statuses.entry(status.as_u16()).or_insert(0) += 1;
    }
    let seconds = started.elapsed().as_secs_f64();
    ns.sort_unstable();
    Pass {
        seconds,
        p50_us: percentile(&ns, 0.5) as f64 / 1e3,
        p99_us: percentile(&ns, 0.99) as f64 / 1e3,
        statuses,
    }
}

async fn call(app: &axum::Router, r: &Request) -> StatusCode {
    let method = if r.method == "POST" {
        Method::POST
    } else {
        Method::GET
    };
    let mut builder = axum::http::Request::builder()
        .method(method)
        .uri(&r.path)
        .header("accept", "application/fhir+json");
    if r.body.is_some() {
        builder = builder.header("content-type", "application/fhir+json");
    }
    let Ok(request) = builder.body(Body::from(r.body.clone().unwrap_or_default())) else {
        return StatusCode::BAD_REQUEST;
    };
    crate::handlers::status_of(app, request).await
}

/// What to run.
#[derive(Clone, Debug)]
pub struct ColdOptions {
    pub edition: PathBuf,
    pub corpus: PathBuf,
    pub arms: Vec<Arm>,
    pub repeats: usize,
    /// The page map: each call kind alone, under each of `arms` (`random`
    /// for what the calls touch; `prewarm-hot` for what a hot prewarm
    /// leaves them to fault in).
    pub by_op: bool,
    /// This binary and the arguments before the child's (`bench cold-child`).
    pub child_program: PathBuf,
    pub child_prefix: Vec<String>,
}

/// Runs every arm `repeats` times (arms interleaved, so drift spreads over
/// all), or with `by_op` every call kind once per arm; returns the children's
/// reports and the Markdown table.
pub fn run(
    options: &ColdOptions,
    mut each: impl FnMut(&Value),
) -> Result<(Value, String), BenchError> {
    let text = std::fs::read_to_string(&options.corpus)
        .map_err(|e| BenchError::new(format!("{}: {e}", options.corpus.display())))?;
    let mut kinds: Vec<String> = from_jsonl(&text)?.into_iter().map(|r| r.op).collect();
    kinds.sort();
    kinds.dedup();
    let mut runs = Vec::new();
    if options.by_op {
        for &arm in &options.arms {
            for op in &kinds {
                runs.push(run_child(options, arm, vec![op.clone()])?);
                each(runs.last().unwrap_or(&Value::Null));
            }
        }
    } else {
        for _ in 0..options.repeats.max(1) {
            for &arm in &options.arms {
                runs.push(run_child(options, arm, Vec::new())?);
                each(runs.last().unwrap_or(&Value::Null));
            }
        }
    }
    let markdown = if options.by_op {
        page_map(&runs)
    } else {
        arms_table(&options.arms, &runs)
    };
    Ok((json!({ "by_op": options.by_op, "runs": runs }), markdown))
}

fn run_child(options: &ColdOptions, arm: Arm, ops: Vec<String>) -> Result<Value, BenchError> {
    let left = evict(&options.edition)
        .map_err(|e| BenchError::new(format!("{}: {e}", options.edition.display())))?;
    let args = ChildArgs {
        edition: options.edition.clone(),
        corpus: options.corpus.clone(),
        arm,
        ops,
    };
    let output = Command::new(&options.child_program)
        .args(&options.child_prefix)
        .arg(args.to_json())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| BenchError::new(format!("{}: {e}", options.child_program.display())))?;
    if !output.status.success() {
        return Err(BenchError::new(format!(
            "cold child ({}) failed: {}",
            arm.name(),
            output.status
        )));
    }
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().unwrap_or_default();
    let mut v: Value = serde_json::from_str(line)
        .map_err(|e| BenchError::new(format!("cold child printed {line:?}: {e}")))?;
    v["resident_before_start"] = json!(left);
    Ok(v)
}

fn f(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .fold(v, |v, k| &v[*k])
        .as_f64()
        .unwrap_or(f64::NAN)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

const MIB: f64 = (1u64 << 20) as f64;

/// Per arm, medians over the repeats.
fn arms_table(arms: &[Arm], runs: &[Value]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "| arm | open s | cold s | warm s | cold / warm | cold p99 ms | major faults | minor faults | resident after cold MiB | of the file |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for arm in arms {
        let rs: Vec<&Value> = runs.iter().filter(|r| r["arm"] == arm.name()).collect();
        let m = |path: &[&str]| median(rs.iter().map(|r| f(r, path)).collect());
        let ratio = median(
            rs.iter()
                .map(|r| f(r, &["cold", "seconds"]) / f(r, &["warm", "seconds"]))
                .collect(),
        );
        let resident = m(&["resident_after_cold"]);
        let _ = writeln!(
            out,
            "| {} | {:.3} | {:.3} | {:.3} | {:.2}× | {:.1} | {:.0} | {:.0} | {:.0} | {:.0}% |",
            arm.name(),
            m(&["open_s"]),
            m(&["cold", "seconds"]),
            m(&["warm", "seconds"]),
            ratio,
            m(&["cold", "p99_us"]) / 1e3,
            m(&["majflt"]),
            m(&["minflt"]),
            resident / MIB,
            100.0 * resident / m(&["file_bytes"]),
        );
    }
    out
}

/// Per call kind: calls, bytes touched in all and per call, and the
/// sections that hold most of them.
fn page_map(runs: &[Value]) -> String {
    use std::fmt::Write as _;
    let mut out = String::from(
        "| arm | calls of | calls | major faults | touched MiB | KiB per call | of the file | sections touched most (MiB, share of the section) |\n\
         |---|---|---:|---:|---:|---:|---:|---|\n",
    );
    for r in runs {
        let calls = f(r, &["calls"]);
        let touched = f(r, &["resident_after_cold"]);
        let mut sections: Vec<(&str, f64, f64)> = r["sections"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|s| {
                        (
                            s["section"].as_str().unwrap_or("?"),
                            f(s, &["resident"]),
                            f(s, &["bytes"]),
                        )
                    })
                    .collect()
            })
            .unwrap_or_default();
        sections.sort_by(|a, b| b.1.total_cmp(&a.1));
        let top: Vec<String> = sections
            .iter()
            .take(4)
            .filter(|s| s.1 > 0.0)
            .map(|(n, b, len)| format!("{n} {:.1} ({:.0}%)", b / MIB, 100.0 * b / len.max(1.0)))
            .collect();
        let op = r["ops"][0].as_str().unwrap_or("?");
        let arm = r["arm"].as_str().unwrap_or("?");
        let _ = writeln!(
            out,
            "| {arm} | {op} | {calls:.0} | {:.0} | {:.1} | {:.1} | {:.1}% | {} |",
            f(r, &["majflt"]),
            touched / MIB,
            touched / 1024.0 / calls.max(1.0),
            100.0 * touched / f(r, &["file_bytes"]),
            top.join(", ")
        );
    }
    out
}
