//! `txmap bench`: benchmarks of the FHIR operations (see `txmap-bench`).
//!
//! `handlers` times each operation in process on an edition file;
//! `http` drives a running server with a closed-loop load generator. Both
//! sample their requests from the edition with a seed, write JSON to
//! `--out` and print a Markdown table.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand};
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
    }
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
    print!("{}", report::markdown(summaries));
    Ok(())
}
