//! `txmap bench`: benchmarks of the FHIR operations (see `txmap-bench`).
//!
//! `handlers` times each operation in process on an edition file;
//! `http` drives a running server with a closed-loop load generator;
//! `ecl` times ECL evaluation over a corpus of expressions. The first two
//! sample their requests from the edition with a seed; all three write
//! JSON to `--out` and print a Markdown table.
//!
//! `tho` times one large value set of a FHIR package (default
//! `v3-ActCode` of `hl7.terminology.r4`) in process: `$expand`,
//! `$validate-code` and `$lookup`, first calls apart (issue 7).
//!
//! `corpus` draws a traffic corpus (JSON Lines) from one or more editions
//! with a realistic mix and skew, or one tx-benchmark shape (`--workload`);
//! `load` replays it against a running server over C keep-alive
//! connections, for a time or one pass, per operation and overall (issue 8).
//!
//! `scan` (Linux) times a newline scan of a large file by `read()` and four
//! kinds of mmap, cold and warm, each run in a fresh child: this binary
//! again, as the hidden `scan-child`.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
use txmap_bench::ecl::{self, EclOptions};
use txmap_bench::handlers::{self, HandlerOptions};
use txmap_bench::http::{self, HttpOptions, Target};
use txmap_bench::{Op, Pools, Summary, report};
use txmap_load::LoadMode;
use txmap_store::Edition;

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Time each operation in process, through the server's router.
    Handlers(HandlersArgs),
    /// Drive a running server over HTTP with C keep-alive connections.
    Http(HttpArgs),
    /// Time ECL evaluation over a corpus of expressions, each under the
    /// server's budget.
    Ecl(EclArgs),
    /// Draw a traffic corpus (one request per line) from editions.
    Corpus(CorpusArgs),
    /// Replay a traffic corpus against a running server.
    Load(LoadArgs),
    /// Time $expand, $validate-code and $lookup of one large value set of
    /// a FHIR package, in process; first (parsing) calls apart.
    Tho(ThoArgs),
    /// Time given GET requests in process, each on its own, against the
    /// packages and an edition.
    Requests(RequestsArgs),
    /// Send hostile requests to a running server and judge every answer
    /// (issue 14); exits non-zero if any rule is broken.
    Hostile(HostileArgs),
    /// Time a newline scan of a large file by read() and four kinds of
    /// mmap, cold and warm, each in a fresh child process (issue 8).
    #[cfg(target_os = "linux")]
    Scan(ScanArgs),
    /// One scan, in this process: the child `scan` runs.
    #[cfg(target_os = "linux")]
    #[command(hide = true)]
    ScanChild(ScanChildArgs),
    /// The first pass after a restart: replay a corpus in process on a
    /// mapped edition evicted from the page cache, then again warm, each
    /// arm (load mode and madvise advice) in a fresh child process; with
    /// --by-op, the pages of each section each kind of call touches
    /// (issue 16).
    #[cfg(target_os = "linux")]
    Cold(ColdArgs),
    /// One cold run, in this process: the child `cold` runs.
    #[cfg(target_os = "linux")]
    #[command(hide = true)]
    ColdChild(ColdChildArgs),
}

#[derive(Debug, Args)]
pub struct EclArgs {
    /// The edition file (loaded and read through once before timing).
    #[arg(long, value_name = "FILE")]
    edition: PathBuf,
    /// How the edition is loaded: mmap, read (into the heap, as a peer that
    /// reads its index does), prewarm or prewarm-hot.
    #[arg(long, value_name = "MODE", default_value = "mmap")]
    load: LoadMode,
    /// The corpus: one expression per line, `# category: NAME` headers.
    #[arg(long, value_name = "FILE")]
    corpus: PathBuf,
    /// Timed evaluations per expression (the median is kept).
    #[arg(long, default_value_t = 5)]
    runs: usize,
    /// Untimed evaluations per expression before the timed ones.
    #[arg(long, default_value_t = 0)]
    warmup: usize,
    /// Time the parse of each expression's text with its evaluation.
    #[arg(long)]
    with_parse: bool,
    /// Deadline of one evaluation, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    budget_ms: u64,
    /// Work cap of one evaluation (the server's default ecl_max_work).
    #[arg(long, default_value_t = 50_000_000)]
    max_work: u64,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[derive(Debug, Args)]
pub struct HandlersArgs {
    /// The edition file (mapped and read through once before timing).
    #[arg(long, value_name = "FILE")]
    edition: PathBuf,
    /// Timed calls per operation, after one warm-up call per pooled
    /// request.
    #[arg(long, default_value_t = 20_000)]
    calls: usize,
    /// Stop an operation once its timed calls take this many seconds.
    #[arg(long, default_value_t = 30.0)]
    max_seconds: f64,
    /// Operations to run (default all): lookup, validate-code,
    /// validate-code-isa, subsumes, expand-isa, expand-filter.
    #[arg(long, value_delimiter = ',', value_parser = parse_op)]
    op: Vec<Op>,
    /// Seed of the request pools.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[derive(Debug, Args)]
pub struct ThoArgs {
    /// A FHIR package (.tgz) to load, as `packages = [...]` does
    /// (repeatable).
    #[arg(long, value_name = "FILE.tgz", required = true)]
    package: Vec<PathBuf>,
    /// A SNOMED CT edition to serve as well (mapped and read through once).
    #[arg(long, value_name = "FILE")]
    edition: Option<PathBuf>,
    /// The value set's canonical URL.
    #[arg(long, value_name = "URL", default_value = txmap_bench::tho::DEFAULT_VALUE_SET)]
    value_set: String,
    /// The FHIR endpoint: r4 or r5.
    #[arg(long, default_value = "r4")]
    endpoint: String,
    /// Timed calls per operation, after one warm-up call per pooled
    /// request.
    #[arg(long, default_value_t = 10_000)]
    calls: usize,
    /// Stop an operation once its timed calls take this many seconds.
    #[arg(long, default_value_t = 10.0)]
    max_seconds: f64,
    /// Operations to run (default all): expand-all, expand-page,
    /// expand-filter, validate-in, validate-out, lookup.
    #[arg(long, value_delimiter = ',', value_parser = parse_tho_op)]
    op: Vec<txmap_bench::tho::ThoOp>,
    /// Fresh server states per operation for its first (parsing) call;
    /// the median is reported.
    #[arg(long, default_value_t = 5)]
    cold_runs: usize,
    /// Seed of the request pools.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[derive(Debug, Args)]
pub struct HostileArgs {
    /// The server, e.g. `http://127.0.0.1:8080`.
    #[arg(long)]
    server: String,
    /// Requests to send.
    #[arg(long, default_value_t = 10_000)]
    requests: usize,
    /// Client threads.
    #[arg(long, default_value_t = 4)]
    connections: usize,
    /// Seed of the generator.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The server's `[limits] request_seconds`: no answer may take a
    /// second longer.
    #[arg(long, default_value_t = 10.0)]
    budget_seconds: f64,
    /// A SNOMED CT code of the server's default edition.
    #[arg(long, default_value = "138875005")]
    code: String,
    /// The default edition's RF2 release: its concepts, read here, are
    /// the right answers the `known-codes` category checks.
    #[arg(long, value_name = "DIR")]
    rf2: Option<PathBuf>,
    /// A code system whose file is out of service, as `SYSTEM|CODE` or
    /// `SYSTEM|VERSION|CODE` (repeatable): every request that needs it
    /// must be a 503.
    #[arg(long, value_name = "SYSTEM|CODE")]
    out_of_service: Vec<String>,
    /// Write the JSON report here.
    #[arg(long, value_name = "FILE.json")]
    out: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RequestsArgs {
    /// A FHIR package (.tgz) to load, as `packages = [...]` does
    /// (repeatable).
    #[arg(long, value_name = "FILE.tgz")]
    package: Vec<PathBuf>,
    /// A SNOMED CT edition to serve (mapped and read through once).
    #[arg(long, value_name = "FILE")]
    edition: Option<PathBuf>,
    /// A GET path with its query, percent-encoded (repeatable), e.g.
    /// `/r4/ValueSet?url=http://hl7.org/fhir/uv/ips/ValueSet/problems-uv-ips`.
    #[arg(long, value_name = "PATH", required = true)]
    request: Vec<String>,
    /// Timed calls per request, after a warm-up.
    #[arg(long, default_value_t = 20_000)]
    calls: usize,
    /// Stop a request once its timed calls take this many seconds.
    #[arg(long, default_value_t = 10.0)]
    max_seconds: f64,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

fn parse_tho_op(s: &str) -> Result<txmap_bench::tho::ThoOp, String> {
    use txmap_bench::tho::ThoOp;
    ThoOp::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = ThoOp::ALL.iter().map(|o| o.name()).collect();
        format!("unknown op {s:?}; one of {}", names.join(", "))
    })
}

#[derive(Debug, Args)]
pub struct HttpArgs {
    /// The server's root URL: http://127.0.0.1:PORT.
    #[arg(long, value_name = "URL")]
    server: String,
    /// Concurrent keep-alive connections, one thread each.
    #[arg(long, default_value_t = 1)]
    connections: usize,
    /// Seconds of measured calls per operation.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Seconds of uncounted calls before that.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// Operations to run, one after another (default lookup).
    #[arg(long, value_delimiter = ',', value_parser = parse_op, default_value = "lookup")]
    op: Vec<Op>,
    /// The edition the server serves, to sample requests from.
    #[arg(long, value_name = "FILE")]
    edition: PathBuf,
    /// Seed of the request pools.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[derive(Debug, Args)]
pub struct CorpusArgs {
    /// An edition file (repeatable). The first is the default edition
    /// (unversioned calls); with several, the first two take 97% of calls.
    #[arg(long, value_name = "FILE", required = true)]
    edition: Vec<PathBuf>,
    /// Requests to draw.
    #[arg(long, default_value_t = 100_000)]
    calls: usize,
    /// Seed of every draw.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Only this tx-benchmark shape instead of the realistic mix: LK01,
    /// LK05, VC01, VC03, VCCS, SS01, EX01, EX03, EX05, EX08, CM01.
    #[arg(long, value_parser = parse_shape)]
    workload: Option<txmap_bench::corpus::Shape>,
    /// Write the corpus (JSON Lines) here.
    #[arg(long, value_name = "FILE.jsonl")]
    out: PathBuf,
}

fn parse_shape(s: &str) -> Result<txmap_bench::corpus::Shape, String> {
    use txmap_bench::corpus::Shape;
    Shape::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Shape::ALL.iter().map(|o| o.name()).collect();
        format!("unknown workload {s:?}; one of {}", names.join(", "))
    })
}

#[derive(Debug, Args)]
pub struct LoadArgs {
    /// The server's root URL: http://127.0.0.1:PORT.
    #[arg(long, value_name = "URL")]
    server: String,
    /// The corpus, as `txmap bench corpus` writes it.
    #[arg(long, value_name = "FILE.jsonl")]
    corpus: PathBuf,
    /// Concurrent keep-alive connections; a list runs one replay each.
    #[arg(long, value_delimiter = ',', default_value = "1")]
    connections: Vec<usize>,
    /// Seconds of measured calls per replay.
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Seconds of uncounted calls before that.
    #[arg(long, default_value_t = 1.0)]
    warmup: f64,
    /// One pass over the corpus instead (every call counted, no warm-up).
    #[arg(long)]
    once: bool,
    /// Replay only client K's share of N (0-based): the requests at K,
    /// K+N, K+2N, …, so N clients run side by side cover the corpus once.
    #[arg(long, value_name = "K/N", value_parser = parse_part)]
    part: Option<(usize, usize)>,
    /// Also write every counted call (connections, op, status, latency in
    /// ns) here, tab-separated, to merge several clients' percentiles
    /// exactly.
    #[arg(long, value_name = "FILE.tsv")]
    latencies: Option<PathBuf>,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

fn parse_part(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{s:?}: expected K/N with 0 <= K < N, e.g. 0/4");
    let (k, n) = s.split_once('/').ok_or_else(bad)?;
    let (k, n): (usize, usize) = (
        k.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || k >= n {
        return Err(bad());
    }
    Ok((k, n))
}

fn run_corpus(a: CorpusArgs) -> Result<()> {
    let mut editions = Vec::new();
    for file in &a.edition {
        let ctx = || file.display().to_string();
        let loaded = txmap_load::load(file, LoadMode::Mmap).with_context(ctx)?;
        let edition = Edition::open(loaded.bytes).with_context(ctx)?;
        eprintln!("{}: {}", file.display(), edition.identity().version_uri);
        editions.push(edition);
    }
    let refs: Vec<_> = editions.iter().collect();
    let requests = txmap_bench::corpus::generate(&refs, a.calls, a.seed, a.workload)?;
    std::fs::write(&a.out, txmap_bench::corpus::to_jsonl(&requests))
        .with_context(|| format!("{}: writing", a.out.display()))?;
    let mut by_op = std::collections::BTreeMap::<&str, usize>::new();
    let mut by_edition = std::collections::BTreeMap::<&str, usize>::new();
    for r in &requests {
        *by_op.entry(&r.op).or_default() += 1;
        *by_edition
            .entry(r.edition.as_deref().unwrap_or("(unversioned)"))
            .or_default() += 1;
    }
    eprintln!("{} requests to {}", requests.len(), a.out.display());
    for (k, v) in by_op.iter().chain(by_edition.iter()) {
        eprintln!("  {k}: {v}");
    }
    Ok(())
}

fn run_load(a: LoadArgs) -> Result<()> {
    use txmap_bench::load::{self, LoadOptions};
    let target = Target::parse(&a.server)?;
    let text = std::fs::read_to_string(&a.corpus)
        .with_context(|| format!("{}: reading", a.corpus.display()))?;
    let mut corpus =
        txmap_bench::corpus::from_jsonl(&text).with_context(|| a.corpus.display().to_string())?;
    if let Some((k, n)) = a.part {
        corpus = load::part(&corpus, k, n)?;
        if corpus.is_empty() {
            bail!("part {k}/{n} of {}: no requests", a.corpus.display());
        }
    }
    let duration = if a.once {
        None
    } else {
        let d = seconds(a.seconds, "seconds")?;
        if d.is_zero() {
            bail!("--seconds must be more than 0");
        }
        Some(d)
    };
    let mut reports = Vec::new();
    for &c in &a.connections {
        eprintln!(
            "{} requests, {c} connection(s), {}",
            corpus.len(),
            match duration {
                Some(d) => format!("{d:?}"),
                None => "one pass".to_owned(),
            }
        );
        let options = LoadOptions {
            connections: c,
            warmup: seconds(a.warmup, "warmup")?,
            duration,
        };
        reports.push(load::run(&target, &corpus, &options)?);
    }
    let json = serde_json::Value::Array(reports.iter().map(|r| r.to_json()).collect());
    std::fs::write(&a.out, serde_json::to_string_pretty(&json)? + "\n")
        .with_context(|| format!("{}: writing", a.out.display()))?;
    if let Some(path) = &a.latencies {
        std::fs::write(path, load::raw_tsv(&corpus, &reports))
            .with_context(|| format!("{}: writing", path.display()))?;
    }
    out!("{}", load::markdown(&reports));
    Ok(())
}

fn parse_op(s: &str) -> Result<Op, String> {
    Op::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
        format!("unknown op {s:?}; one of {}", names.join(", "))
    })
}

fn seconds(s: f64, what: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(s).with_context(|| format!("--{what} {s}: not a duration"))
}

pub fn run(command: BenchCommand) -> Result<()> {
    match command {
        BenchCommand::Handlers(a) => run_handlers(a),
        BenchCommand::Http(a) => run_http(a),
        BenchCommand::Ecl(a) => run_ecl(a),
        BenchCommand::Corpus(a) => run_corpus(a),
        BenchCommand::Load(a) => run_load(a),
        BenchCommand::Tho(a) => run_tho(a),
        BenchCommand::Requests(a) => run_requests(a),
        BenchCommand::Hostile(a) => run_hostile(a),
        #[cfg(target_os = "linux")]
        BenchCommand::Scan(a) => run_scan(a),
        #[cfg(target_os = "linux")]
        BenchCommand::ScanChild(a) => {
            outln!("{}", txmap_bench::scan::child_main(&a.args)?);
            Ok(())
        }
        #[cfg(target_os = "linux")]
        BenchCommand::Cold(a) => run_cold(a),
        #[cfg(target_os = "linux")]
        BenchCommand::ColdChild(a) => {
            outln!("{}", txmap_bench::cold::child_main(&a.args)?);
            Ok(())
        }
    }
}

fn run_ecl(a: EclArgs) -> Result<()> {
    let ctx = || a.edition.display().to_string();
    let text = std::fs::read_to_string(&a.corpus)
        .with_context(|| format!("{}: reading", a.corpus.display()))?;
    let corpus = ecl::read_corpus(&text);
    let (exprs, parse_total) =
        ecl::parse_corpus(&corpus).with_context(|| a.corpus.display().to_string())?;
    eprintln!("{}: loading ({}) and reading through once", ctx(), a.load);
    let loaded = txmap_load::load(&a.edition, a.load).with_context(ctx)?;
    let edition = Edition::open(loaded.bytes).with_context(ctx)?;
    ecl::warm(&edition)?;
    let options = EclOptions {
        runs: a.runs,
        warmup: a.warmup,
        with_parse: a.with_parse,
        budget: Duration::from_millis(a.budget_ms),
        max_work: a.max_work,
    };
    eprintln!(
        "{} expressions, {} run(s) each, budget {} ms",
        corpus.len(),
        options.runs,
        a.budget_ms
    );
    let report = ecl::run(&edition, &corpus, &exprs, parse_total, &options, |_| {})?;
    let mut json = report.to_json();
    json["load"] = a.load.as_str().into();
    let json = serde_json::to_string_pretty(&json)?;
    std::fs::write(&a.out, json + "\n").with_context(|| format!("{}: writing", a.out.display()))?;
    out!("{}", report.markdown());
    Ok(())
}

fn run_requests(a: RequestsArgs) -> Result<()> {
    let options = txmap_bench::requests::RequestOptions {
        packages: a.package,
        edition: a.edition,
        requests: a.request,
        calls: a.calls,
        max_time: seconds(a.max_seconds, "max-seconds")?,
    };
    let report = txmap_bench::requests::run(&options)?;
    let json = serde_json::to_string_pretty(&report.to_json())?;
    std::fs::write(&a.out, json + "\n").with_context(|| format!("{}: writing", a.out.display()))?;
    out!("{}", report.markdown());
    Ok(())
}

fn run_hostile(a: HostileArgs) -> Result<()> {
    let target = Target::parse(&a.server)?;
    let options = txmap_bench::hostile::HostileOptions {
        requests: a.requests,
        seed: a.seed,
        connections: a.connections,
        budget: seconds(a.budget_seconds, "budget-seconds")?,
        code: a.code,
        known: match &a.rf2 {
            Some(dir) => txmap_bench::hostile::known_concepts(dir)
                .with_context(|| format!("--rf2 {}", dir.display()))?,
            None => Vec::new(),
        },
        out_of_service: a
            .out_of_service
            .iter()
            .map(|s| {
                txmap_bench::hostile::OutOfService::parse(s).with_context(|| {
                    format!("--out-of-service {s:?}: not SYSTEM|CODE or SYSTEM|VERSION|CODE")
                })
            })
            .collect::<Result<_>>()?,
    };
    let report = txmap_bench::hostile::run(&target, &options)?;
    let json = report.to_json();
    if let Some(out) = &a.out {
        std::fs::write(out, serde_json::to_string_pretty(&json)? + "\n")
            .with_context(|| format!("{}: writing", out.display()))?;
    }
    outln!(
        "{} hostile requests in {:.1} s, slowest answer {:.0} ms; by status {}; after: {}",
        report.sent,
        report.seconds,
        report.slowest_ms,
        serde_json::to_string(&json["byStatus"])?,
        serde_json::to_string(&json["after"])?
    );
    for v in report.violations.iter().take(20) {
        outln!("VIOLATION [{}] {}: {}", v.category, v.request, v.what);
    }
    if !report.violations.is_empty() {
        bail!("{} answers broke the rules", report.violations.len());
    }
    Ok(())
}

fn run_tho(a: ThoArgs) -> Result<()> {
    use txmap_bench::tho::{self, ThoOp, ThoOptions};
    if a.endpoint != "r4" && a.endpoint != "r5" {
        bail!("--endpoint {}: r4 or r5", a.endpoint);
    }
    let options = ThoOptions {
        packages: a.package,
        edition: a.edition,
        value_set: a.value_set,
        endpoint: a.endpoint,
        calls: a.calls,
        max_time: seconds(a.max_seconds, "max-seconds")?,
        seed: a.seed,
        cold_runs: a.cold_runs,
        ops: if a.op.is_empty() {
            ThoOp::ALL.to_vec()
        } else {
            a.op
        },
        ..Default::default()
    };
    eprintln!(
        "{}: {} call(s) per op, at most {:?} each",
        options.value_set, options.calls, options.max_time
    );
    let report = tho::run(&options)?;
    if report.expand_system_param {
        eprintln!(
            "warning: $expand?url={} alone answered {}; $expand requests carry system={}",
            report.value_set, report.expand_plain_status, report.system
        );
    }
    let json = serde_json::to_string_pretty(&report.to_json())?;
    std::fs::write(&a.out, json + "\n").with_context(|| format!("{}: writing", a.out.display()))?;
    out!("{}", report.markdown());
    Ok(())
}

fn run_handlers(a: HandlersArgs) -> Result<()> {
    let edition = a.edition.display().to_string();
    eprintln!("{edition}: mapping and reading through once");
    let state = handlers::serve_state(&a.edition).context("preparing the server state")?;
    let pools = handlers::sample(&state, a.seed).with_context(|| edition.clone())?;
    describe(&pools);
    let options = HandlerOptions {
        calls: a.calls,
        max_time: seconds(a.max_seconds, "max-seconds")?,
        ops: if a.op.is_empty() {
            Op::ALL.to_vec()
        } else {
            a.op
        },
    };
    let summaries = handlers::run(&state, &pools, &options)?;
    write(&a.out, &summaries)
}

fn run_http(a: HttpArgs) -> Result<()> {
    let target = Target::parse(&a.server)?;
    let pools = sample(&a.edition, a.seed)?;
    describe(&pools);
    let options = HttpOptions {
        connections: a.connections,
        warmup: seconds(a.warmup, "warmup")?,
        duration: seconds(a.seconds, "seconds")?,
    };
    if options.duration.is_zero() {
        bail!("--seconds must be more than 0");
    }
    let mut summaries = Vec::new();
    for op in a.op {
        eprintln!(
            "{}: {} connection(s), {:?}",
            op.name(),
            options.connections,
            options.duration
        );
        summaries.push(
            http::run(&target, op, pools.requests(op), &options)
                .with_context(|| op.name().to_owned())?,
        );
    }
    write(&a.out, &summaries)
}

/// What was sampled, on stderr: the is-a roots and the filter words.
fn describe(pools: &Pools) {
    let roots: Vec<String> = pools
        .isa_roots
        .iter()
        .map(|(id, d)| format!("{id} ({d})"))
        .collect();
    eprintln!(
        "is-a value sets (descendants): {}; {} filter words",
        roots.join(", "),
        pools.words.len()
    );
}

fn sample(file: &std::path::Path, seed: u64) -> Result<Pools> {
    let ctx = || file.display().to_string();
    let loaded = txmap_load::load(file, LoadMode::Mmap).with_context(ctx)?;
    let edition = Edition::open(loaded.bytes).with_context(ctx)?;
    Pools::sample(&edition, seed).with_context(ctx)
}

fn write(out: &std::path::Path, summaries: &[Summary]) -> Result<()> {
    let json = serde_json::to_string_pretty(&report::to_json(summaries))?;
    std::fs::write(out, json + "\n").with_context(|| format!("{}: writing", out.display()))?;
    out!("{}", report::markdown(summaries));
    Ok(())
}

#[cfg(target_os = "linux")]
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// Bytes to scan (each a prefix of one test file as large as the
    /// largest) [default: 256MiB, 1GiB, and 1/8, 1/4, 1/2 of RAM]. Sizes
    /// beyond RAM are allowed if the disk has room.
    #[arg(long, value_delimiter = ',', value_parser = txmap_server::config::parse_size)]
    sizes: Vec<u64>,
    /// Arms to run (default all): read, mmap, mmap-seq, mmap-willneed,
    /// mmap-populate.
    #[arg(long, value_delimiter = ',', value_parser = parse_arm)]
    arms: Vec<txmap_bench::scan::Arm>,
    /// Runs of each size, temperature and arm (the median is kept).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// Run cold (the file dropped from the page cache first). With neither
    /// --cold nor --warm, both.
    #[arg(long)]
    cold: bool,
    /// Run warm (the file read through once first).
    #[arg(long)]
    warm: bool,
    /// The read arm's buffer.
    #[arg(long, default_value = "1MiB", value_parser = txmap_server::config::parse_size)]
    buffer: u64,
    /// Where to write the test file.
    #[arg(long, value_name = "DIR", default_value = "bench/out/scan")]
    dir: PathBuf,
    /// Keep the test file (and reuse it next time).
    #[arg(long)]
    keep: bool,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[cfg(target_os = "linux")]
#[derive(Debug, Args)]
pub struct ScanChildArgs {
    /// `key=value` arguments, as `txmap_bench::scan::ChildArgs` writes them.
    args: Vec<std::ffi::OsString>,
}

#[cfg(target_os = "linux")]
fn parse_arm(s: &str) -> Result<txmap_bench::scan::Arm, String> {
    use txmap_bench::scan::Arm;
    Arm::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Arm::ALL.iter().map(|a| a.name()).collect();
        format!("unknown arm {s:?}; one of {}", names.join(", "))
    })
}

#[cfg(target_os = "linux")]
fn run_scan(a: ScanArgs) -> Result<()> {
    use txmap_bench::scan::{self, Arm, Machine, ScanOptions, Temperature};
    let machine = Machine::current();
    let temperatures = match (a.cold, a.warm) {
        (true, false) => vec![Temperature::Cold],
        (false, true) => vec![Temperature::Warm],
        _ => vec![Temperature::Cold, Temperature::Warm],
    };
    let options = ScanOptions {
        dir: a.dir,
        sizes: if a.sizes.is_empty() {
            scan::default_sizes(machine.mem_total)
        } else {
            a.sizes
        },
        arms: if a.arms.is_empty() {
            Arm::ALL.to_vec()
        } else {
            a.arms
        },
        temperatures,
        repeats: a.repeats,
        buffer: usize::try_from(a.buffer).context("--buffer too large")?,
        keep: a.keep,
        child_program: std::env::current_exe().context("finding this binary to re-run")?,
        child_prefix: vec!["bench".into(), "scan-child".into()],
    };
    let sizes: Vec<String> = options.sizes.iter().map(|&s| scan::human(s)).collect();
    eprintln!(
        "{} CPUs, {} RAM, kernel {}; sizes {}; {} repeat(s)",
        machine.cpus,
        scan::human(machine.mem_total),
        machine.kernel,
        sizes.join(", "),
        options.repeats
    );
    let report = scan::run(&options, |r| {
        let resident = r
            .resident_fraction()
            .map_or("?".to_owned(), |f| format!("{:.1}%", f * 100.0));
        eprintln!(
            "{:>8} {} #{} {:<13} resident before {:>6}: {:6.2} GB/s, majflt {}, minflt {}, peak RSS {}",
            scan::human(r.size),
            r.temperature.name(),
            r.repeat + 1,
            r.scan.arm.name(),
            resident,
            r.scan.gbps(),
            r.scan.majflt,
            r.scan.minflt,
            scan::human(r.scan.peak_rss)
        );
    })?;
    let json = serde_json::to_string_pretty(&report.to_json())?;
    std::fs::write(&a.out, json + "\n").with_context(|| format!("{}: writing", a.out.display()))?;
    out!("{}", report.markdown());
    Ok(())
}

#[cfg(target_os = "linux")]
#[derive(Debug, Args)]
pub struct ColdArgs {
    /// The edition file (mapped; evicted from the page cache before each run).
    #[arg(long, value_name = "FILE")]
    edition: PathBuf,
    /// The traffic corpus (`txmap bench corpus --edition FILE`).
    #[arg(long, value_name = "FILE.jsonl")]
    corpus: PathBuf,
    /// Arms to run (default all): random, normal, sections, willneed-hot,
    /// populate-hot, prewarm, prewarm-hot.
    #[arg(long, value_delimiter = ',', value_parser = parse_cold_arm)]
    arms: Vec<txmap_bench::cold::Arm>,
    /// Runs of each arm, interleaved (tables show medians).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// The page map instead: each kind of call alone, cold, under each arm
    /// given (default random, where what is resident is what was touched).
    #[arg(long)]
    by_op: bool,
    /// Write the JSON results here.
    #[arg(long, value_name = "FILE.json")]
    out: PathBuf,
}

#[cfg(target_os = "linux")]
#[derive(Debug, Args)]
pub struct ColdChildArgs {
    /// The run, as JSON (`txmap_bench::cold::ChildArgs`).
    args: String,
}

#[cfg(target_os = "linux")]
fn parse_cold_arm(s: &str) -> Result<txmap_bench::cold::Arm, String> {
    use txmap_bench::cold::Arm;
    Arm::from_name(s).ok_or_else(|| {
        let names: Vec<&str> = Arm::ALL.iter().map(|a| a.name()).collect();
        format!("unknown arm {s:?}; one of {}", names.join(", "))
    })
}

#[cfg(target_os = "linux")]
fn run_cold(a: ColdArgs) -> Result<()> {
    use txmap_bench::cold::{self, Arm, ColdOptions};
    let options = ColdOptions {
        edition: a.edition,
        corpus: a.corpus,
        arms: match (a.arms.is_empty(), a.by_op) {
            (false, _) => a.arms,
            (true, true) => vec![Arm::Random],
            (true, false) => Arm::ALL.to_vec(),
        },
        repeats: a.repeats,
        by_op: a.by_op,
        child_program: std::env::current_exe().context("finding this binary to re-run")?,
        child_prefix: vec!["bench".into(), "cold-child".into()],
    };
    let (json, markdown) = cold::run(&options, |r| {
        eprintln!(
            "{} {}: cold {:.3} s, warm {:.3} s, {} major faults, {:.1} MiB resident",
            r["arm"].as_str().unwrap_or("?"),
            r["ops"],
            r["cold"]["seconds"].as_f64().unwrap_or(0.0),
            r["warm"]["seconds"].as_f64().unwrap_or(0.0),
            r["majflt"],
            r["resident_after_cold"].as_f64().unwrap_or(0.0) / (1 << 20) as f64,
        );
    })?;
    let text = serde_json::to_string_pretty(&json)?;
    std::fs::write(&a.out, text + "\n").with_context(|| format!("{}: writing", a.out.display()))?;
    out!("{markdown}");
    Ok(())
}
