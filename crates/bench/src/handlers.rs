//! In-process benchmarks: each operation through the server's router,
//! without sockets.
//!
//! The state is built by [`txmap_server::prepare`] from a config naming the
//! edition mapped and prewarmed — what `txmap serve` does with such a
//! config — and the prewarm read is waited for, so every page of the
//! edition is in the page cache before the first timed call. Calls run one
//! at a time on a current-thread runtime (the handlers still hop to tokio's
//! blocking pool, as in the server); each op first makes one warm-up call
//! per pooled request (for at most a quarter of the time limit), then the
//! timed calls. A latency is from handing the request to the router to
//! having the whole body: routing, parameter parsing, the store, JSON
//! serialisation. Building the request is not timed.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, Uri};
use tower::ServiceExt;
use txmap_load::Loader;
use txmap_server::app::{AppState, router};
use txmap_server::{ServeOptions, prepare};

use crate::BenchError;
use crate::pools::{Op, Pools};
use crate::report::{Mode, Summary};

/// How many calls, and for how long at most.
#[derive(Clone, Debug)]
pub struct HandlerOptions {
    /// Timed calls per operation.
    pub calls: usize,
    /// An operation stops early once its timed calls take this long.
    pub max_time: Duration,
    pub ops: Vec<Op>,
}

impl Default for HandlerOptions {
    fn default() -> Self {
        HandlerOptions {
            calls: 20_000,
            max_time: Duration::from_secs(30),
            ops: Op::ALL.to_vec(),
        }
    }
}

/// The server state for `edition`, mapped and read through once, as
/// `txmap serve` prepares it from a config with `load = "mmap"` and the
/// edition in `prewarm`.
pub fn serve_state(edition: &Path) -> Result<Arc<AppState>, BenchError> {
    let (path_toml, name_toml) = edition_toml(edition)?;
    let state = state_from_config(&format!(
        "editions = [{path_toml}]\n[snomed]\nload = \"mmap\"\nprewarm = [{name_toml}]\n"
    ))?;
    wait_until_served(&state);
    for e in &state.editions.list {
        if let Some(why) = e.file.serving.failure() {
            return Err(BenchError::new(format!("{}: {why}", e.file.serving.file())));
        }
    }
    Ok(state)
}

/// Waits for every file's prewarm, then until each is in service: files
/// over 64 MiB are verified in the background and answer 503 until then,
/// and timed calls would count those quick refusals (the lookups of the
/// in-process benchmarks did, up to a third of them, before this wait).
pub(crate) fn wait_until_served(state: &AppState) {
    let files = state.editions.list.iter().map(|e| &e.file);
    let files: Vec<_> = files
        .chain(state.editions.code_systems.iter().map(|c| &c.file))
        .collect();
    for f in &files {
        if let Some(p) = &f.prewarm {
            p.wait();
        }
    }
    for f in &files {
        while !f.serving.is_serving() && f.serving.failure().is_none() {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

/// An edition file's absolute path and its file name, each as a TOML
/// string, for a config's `editions` and `[snomed]` entries.
pub(crate) fn edition_toml(edition: &Path) -> Result<(String, String), BenchError> {
    let edition = std::path::absolute(edition)
        .map_err(|e| BenchError::new(format!("{}: {e}", edition.display())))?;
    let name = edition
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| BenchError::new(format!("{}: no file name", edition.display())))?;
    let quote = |s: &str| serde_json::to_string(s).unwrap_or_default();
    Ok((quote(&edition.to_string_lossy()), quote(name)))
}

/// The server state `txmap serve` prepares from a config of this text
/// (written to a temporary file: `prepare` reads a file).
pub(crate) fn state_from_config(config: &str) -> Result<Arc<AppState>, BenchError> {
    static N: AtomicUsize = AtomicUsize::new(0);
    let file = std::env::temp_dir().join(format!(
        "txmap-bench-{}-{}.toml",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&file, config)
        .map_err(|e| BenchError::new(format!("{}: {e}", file.display())))?;
    let options = ServeOptions {
        config: Some(file.clone()),
        data_dir: std::env::temp_dir(),
        ..Default::default()
    };
    let prepared = prepare(&options, &Loader::new());
    let _ = std::fs::remove_file(&file);
    Ok(prepared.map_err(|e| BenchError::new(e.to_string()))?.state)
}

/// Sends `request` through the router and reads the whole body: the
/// status, or 500 when the body could not be read.
pub(crate) async fn status_of(app: &axum::Router, request: Request<Body>) -> StatusCode {
    match app.clone().oneshot(request).await {
        Ok(response) => {
            let status = response.status();
            match axum::body::to_bytes(response.into_body(), usize::MAX).await {
                Ok(_) => status,
                Err(_) => StatusCode::INTERNAL_SERVER_ERROR,
            }
        }
        Err(never) => match never {},
    }
}

/// The pools, sampled from the state's default edition.
pub fn sample(state: &AppState, seed: u64) -> Result<Pools, BenchError> {
    let served = state
        .editions
        .default_edition()
        .ok_or_else(|| BenchError::new("no default edition"))?;
    Pools::sample(&served.edition, seed)
}

/// Runs every op of `options` in turn.
pub fn run(
    state: &Arc<AppState>,
    pools: &Pools,
    options: &HandlerOptions,
) -> Result<Vec<Summary>, BenchError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| BenchError::new(format!("starting the runtime: {e}")))?;
    let app = router(state.clone());
    let mut out = Vec::new();
    for &op in &options.ops {
        let uris = pools
            .requests(op)
            .iter()
            .map(|r| r.parse::<Uri>())
            .collect::<Result<Vec<Uri>, _>>()
            .map_err(|e| BenchError::new(format!("{}: bad request target: {e}", op.name())))?;
        if uris.is_empty() {
            return Err(BenchError::new(format!("{}: no requests", op.name())));
        }
        let summary = runtime.block_on(time_op(&app, op, &uris, options));
        out.push(summary);
    }
    Ok(out)
}

async fn time_op(app: &axum::Router, op: Op, uris: &[Uri], options: &HandlerOptions) -> Summary {
    let warming = Instant::now();
    for uri in uris.iter().take(options.calls.max(1)) {
        let _ = call(app, uri).await;
        if warming.elapsed() >= options.max_time / 4 {
            break;
        }
    }
    let mut latencies = Vec::with_capacity(options.calls);
    let mut errors = BTreeMap::new();
    let started = Instant::now();
    for i in 0..options.calls {
        let (status, ns) = call(app, &uris[i % uris.len()]).await;
        latencies.push(ns);
        if status != StatusCode::OK {
            *errors.entry(status.as_u16().to_string()).or_insert(0) += 1;
        }
        if started.elapsed() >= options.max_time {
            break;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Summary::new(op, Mode::InProcess, latencies, errors, seconds)
}

/// One call: its status and latency in nanoseconds.
pub(crate) async fn call(app: &axum::Router, uri: &Uri) -> (StatusCode, u64) {
    let request = Request::get(uri.clone())
        .header("accept", "application/fhir+json")
        .body(Body::empty())
        .expect("a GET with a parsed URI is a valid request");
    let t = Instant::now();
    let status = status_of(app, request).await;
    (status, t.elapsed().as_nanos() as u64)
}
