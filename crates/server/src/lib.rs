//! The txmap server.
//!
//! Startup reads the config (or, with none, makes a demo edition), reads
//! each edition file's identity from its header and trailer, decides its
//! load mode from the `[snomed]` block, loads it (`txmap-load`) and opens it
//! with the store — the same code whatever the mode — then serves.
//!
//! This crate is where async lives: tokio, hyper and axum stay here, out
//! of the core crates. It serves `/health`, `/status` and `/metrics`, and
//! at the FHIR bases `/r4` and `/r5` the metadata, read and search of the
//! terminology resources, and every FHIR terminology operation, which the
//! engine answers ([`fhir`]); [`http`] bounds connections, headers, bodies
//! and shutdown.

#![forbid(unsafe_code)]

pub mod admin;
pub mod app;
pub mod auth;
pub mod config;
pub mod editions;
pub mod error;
pub mod fhir;
pub mod http;
pub mod outcome;
pub mod packages;
pub mod pages;
pub mod public;
pub mod reload;
pub use error::ServeError;
pub use reload::reload;
pub mod lanes;
pub mod state;
pub mod status;
pub mod version;

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use txmap_load::{LoadMode, Loader};
use txmap_memory::{Guard, GuardConfig, Root};

pub use crate::config::Config;
use crate::state::AppState;

/// Default listen address.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";

/// Concepts in the demo edition made on first run.
pub const DEMO_CONCEPTS: usize = 20_000;

/// How `txmap serve` was invoked.
#[derive(Clone, Debug, Default)]
pub struct ServeOptions {
    /// The config file; `None` serves the demo edition.
    pub config: Option<PathBuf>,
    /// Overrides the config's `listen`.
    pub listen: Option<String>,
    /// Set SO_REUSEPORT so several processes share the port.
    pub reuse_port: bool,
    /// Where the demo edition lives.
    pub data_dir: PathBuf,
}

/// Everything startup decides, before any socket is bound.
#[derive(Debug)]
pub struct Prepared {
    pub state: Arc<AppState>,
    pub listen: String,
    /// The admin listener's address (`[admin] listen`), if it is on.
    pub admin_listen: Option<String>,
    /// How often served files are read through again (`[snomed]
    /// scrub_seconds`; never: `Duration::MAX`).
    pub scrub: std::time::Duration,
}

/// Reads the config (or makes the demo edition) and loads the editions.
pub fn prepare(options: &ServeOptions, loader: &Loader) -> Result<Prepared, ServeError> {
    let started = Instant::now();
    let mut base = PathBuf::new();
    let (config, files) = match &options.config {
        Some(path) => {
            let config = Config::load(path)?;
            base = path.parent().map(Path::to_owned).unwrap_or_default();
            let files = editions::edition_files(&config, &base)?;
            (config, files)
        }
        None => {
            let demo = demo_edition(&options.data_dir)?;
            let config = Config {
                snomed: Some(config::SnomedConfig {
                    load: Some(LoadMode::Mmap.to_string()),
                    ..Default::default()
                }),
                ..Default::default()
            };
            (config, vec![demo])
        }
    };
    let limit = match &config.memory.limit {
        Some(s) => Some(
            config::parse_size(s)
                .map_err(|e| ServeError::Config(format!("[memory] limit: {e}")))?,
        ),
        None => None,
    };
    let mut guard_config = GuardConfig::default();
    if let Some(r) = config.memory.refuse_at {
        guard_config.refuse_at = r;
    }
    if let Some(a) = config.memory.abort_at {
        guard_config.abort_at = a;
    }
    if let Err(e) = guard_config.validate() {
        tracing::warn!("[memory] {e}; using the defaults");
        guard_config = GuardConfig::default();
    }
    let limits = app::Limits::from_config(&config.limits).map_err(ServeError::Config)?;
    let public = public::Public::from_config(&config.http).map_err(ServeError::Config)?;
    let auth = auth::Auth::from_config(&config.auth, &config.http).map_err(ServeError::Config)?;
    if config.admin.listen.is_some() && !auth.any_with(auth::Scope::Admin) {
        return Err(ServeError::Config(
            "[admin] listen needs a token with the admin scope ([[auth.tokens]] or [http] admin_token): every admin call is checked against it"
                .to_owned(),
        ));
    }
    let stored = open_store(&config, &base)?;
    let editions = editions::load_editions(&config, &files, loader)?;
    let packages = packages::FhirPackages::load(
        &config,
        &base,
        &editions,
        limits.ecl_max_work,
        stored.as_deref(),
    )?;
    // Every edition is open: background prewarm reads may take the disk now.
    loader.release_prewarm();
    // Every served file is verified: small ones now, large ones in the
    // background (503 until they pass).
    editions::verify(&editions);
    let root = Root::system();
    let guard = Guard::new(
        guard_config,
        txmap_memory::effective_limit(&root, limit),
        editions.any_mapped(),
    );
    check_limit(&guard, limit)?;
    let state = Arc::new(AppState {
        editions: Arc::new(editions),
        stored,
        auth: Arc::new(auth),
        guard: Arc::new(guard),
        root,
        configured_limit: limit,
        started,
        lanes: Arc::new(lanes::Lanes::new(
            limits.heavy_concurrency,
            limits.heavy_per_client,
        )),
        limits,
        packages,
        public,
        stopping: Default::default(),
        store_errors: Default::default(),
        reloads: Default::default(),
    });
    let mem = txmap_memory::process_memory(&state.root);
    let lim = txmap_memory::effective_limit(&state.root, limit);
    tracing::info!(
        "ready in {:.1} ms: {} editions ({} mapped); RSS {} anonymous {} file-backed {}; limit {}",
        started.elapsed().as_secs_f64() * 1e3,
        state.editions.list.len(),
        state.editions.list.iter().filter(|e| e.file.mapped).count(),
        show(mem.vm_rss),
        show(mem.rss_anon),
        show(mem.rss_file),
        show(lim.map(|l| l.bytes)),
    );
    let listen = options
        .listen
        .clone()
        .or(config.listen.clone())
        .unwrap_or_else(|| DEFAULT_LISTEN.to_owned());
    let scrub = match config.snomed.as_ref().and_then(|s| s.scrub_seconds) {
        None => std::time::Duration::from_secs(6 * 3600),
        Some(0) => std::time::Duration::MAX,
        Some(n) => std::time::Duration::from_secs(n),
    };
    Ok(Prepared {
        state,
        listen,
        admin_listen: config.admin.listen.clone(),
        scrub,
    })
}

/// The stored resources' database (`[store] path`, relative to the
/// config file), opened, if the config names one.
fn open_store(
    config: &Config,
    base: &Path,
) -> Result<Option<Arc<txmap_stored::Store>>, ServeError> {
    let Some(path) = &config.store.path else {
        return Ok(None);
    };
    let store = txmap_stored::Store::open(&base.join(path))
        .map_err(|e| ServeError::Config(format!("[store] path: {e}")))?;
    Ok(Some(Arc::new(store)))
}

/// The least `[memory] limit` a server may have: below it no request
/// would find room (the runtime, the parsed packages and a request's
/// working set take more).
pub const MIN_MEMORY_LIMIT: u64 = 64 << 20;

/// A configured `[memory] limit` the server could not serve under —
/// below [`MIN_MEMORY_LIMIT`], or with what the server holds once loaded
/// already above `refuse_at` of it (every request would be refused,
/// forever) — stops the start.
fn check_limit(guard: &Guard, configured: Option<u64>) -> Result<(), ServeError> {
    let Some(limit) = configured else {
        return Ok(());
    };
    let mib = |b: u64| format!("{:.0} MiB", b as f64 / f64::from(1 << 20));
    if limit < MIN_MEMORY_LIMIT {
        return Err(ServeError::Config(format!(
            "[memory] limit = {}: below the least a server needs ({})",
            mib(limit),
            mib(MIN_MEMORY_LIMIT)
        )));
    }
    if let Some(m) = guard.measure()
        && guard.check_new_request() != txmap_memory::GuardDecision::Accept
    {
        return Err(ServeError::Config(format!(
            "[memory] limit = {}: the server holds {} itself once loaded, above refuse_at ({}) of the limit, so it would refuse every request; raise the limit",
            mib(limit),
            mib(m.bytes),
            guard.config().refuse_at
        )));
    }
    Ok(())
}

fn show(v: Option<u64>) -> String {
    match v {
        Some(b) => format!("{:.1} MiB", b as f64 / (1 << 20) as f64),
        None => "unknown".into(),
    }
}

/// The demo edition in `data_dir`, generated and imported on first run —
/// and again when the file there does not open as an edition of this
/// txmap (one of another major, or of a txmap built between changes of
/// one major, left by an older txmap, or a damaged one): it is ours to
/// remake, where an edition the operator configured gets the error that
/// says to re-import it. Opening a mapped edition reads a few pages, so
/// the check is the store's own open, not only the header's version.
pub fn demo_edition(data_dir: &Path) -> Result<PathBuf, ServeError> {
    let file = data_dir.join("demo.txmap");
    if file.is_file() {
        let opened = txmap_load::load(&file, txmap_load::LoadMode::Mmap)
            .map_err(|e| e.to_string())
            .and_then(|l| txmap_store::Edition::open(l.bytes).map_err(|e| e.to_string()));
        match opened {
            Ok(_) => return Ok(file),
            Err(e) => tracing::info!("{}: {e}; making it again", file.display()),
        }
    }
    let err = |e: &dyn fmt::Display| {
        ServeError::Demo(format!(
            "making the demo edition in {}: {e}",
            data_dir.display()
        ))
    };
    std::fs::create_dir_all(data_dir).map_err(|e| err(&e))?;
    let rf2 = data_dir.join("demo-rf2");
    tracing::info!(
        "first run: generating a synthetic SNOMED CT edition of {DEMO_CONCEPTS} concepts in {}",
        data_dir.display()
    );
    txmap_synth::generate(&txmap_synth::SynthConfig::new(DEMO_CONCEPTS, 1), &rf2)
        .map_err(|e| err(&e))?;
    let options = txmap_import::ImportOptions::new(vec![rf2.clone()], file.clone());
    txmap_import::import(&options, &txmap_import::Quiet).map_err(|e| err(&e))?;
    let _ = std::fs::remove_dir_all(&rf2);
    Ok(file)
}

/// Binds the listening socket, with SO_REUSEPORT if asked.
pub fn bind(listen: &str, reuse_port: bool) -> Result<tokio::net::TcpListener, ServeError> {
    let err = |e: std::io::Error| ServeError::Io(format!("listen on {listen}: {e}"));
    let addr: SocketAddr = listen.parse().map_err(|e| {
        ServeError::Config(format!(
            "listen: {listen:?} is not an address like 127.0.0.1:8080 ({e})"
        ))
    })?;
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()
    } else {
        tokio::net::TcpSocket::new_v6()
    }
    .map_err(err)?;
    socket.set_reuseaddr(true).map_err(err)?;
    if reuse_port {
        socket.set_reuseport(true).map_err(err)?;
    }
    socket.bind(addr).map_err(err)?;
    socket.listen(1024).map_err(err)
}

/// How long an idle blocking-pool thread is kept (tokio's default: 10 s).
pub const BLOCKING_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(1);

/// Runs the server until Ctrl-C or SIGTERM.
pub fn run(options: ServeOptions) -> Result<(), ServeError> {
    let loader = Loader::new().hold_prewarm().on_prewarm_progress(Box::new(
        |path: &Path, done: u64, total: u64| {
            if done >= total {
                tracing::info!("prewarm of {} done: {total} bytes", path.display());
            } else {
                tracing::info!(
                    "prewarm of {}: {}%",
                    path.display(),
                    done * 100 / total.max(1)
                );
            }
        },
    ));
    let prepared = prepare(&options, &loader)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // A heavy operation's thread goes soon after it idles: the
        // allocator returns a thread's freed memory to the system when the
        // thread ends, so the guard's measure falls when the work is done
        // (BENCHMARKS.md, the memory guard).
        .thread_keep_alive(BLOCKING_KEEP_ALIVE)
        .build()
        .map_err(|e| ServeError::Io(format!("starting the runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = bind(&prepared.listen, options.reuse_port)?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServeError::Io(e.to_string()))?;
        tracing::info!("listening on http://{addr}");
        if options.config.is_none() {
            println!("txmap is serving a synthetic demo edition at http://{addr}");
            println!("  open http://{addr}/ in a browser (status, concept browser, ECL)");
            println!("  curl http://{addr}/health");
            println!("  curl http://{addr}/status");
            println!("  curl http://{addr}/metrics");
            println!("  curl http://{addr}/r4/metadata");
        }
        let live = state::Live::new(prepared.state, app::router);
        state::scrub(Arc::clone(&live), prepared.scrub);
        if let Some(admin_listen) = &prepared.admin_listen {
            let admin_listener = bind(admin_listen, false)?;
            let addr = admin_listener
                .local_addr()
                .map_err(|e| ServeError::Io(e.to_string()))?;
            tracing::info!("admin listener on http://{addr}");
            let admin = admin::router(Arc::clone(&live), options.config.clone());
            tokio::spawn(async move {
                if let Err(e) = axum::serve(admin_listener, admin).await {
                    tracing::error!("admin listener stopped: {e}");
                }
            });
        }
        reload::on_hangup(Arc::clone(&live), options.config.clone());
        http::serve(listener, live, shutdown()).await;
        Ok::<(), ServeError>(())
    })?;
    // Heavy work past the grace period has been told to stop; it checks
    // as it goes, so a moment is enough. Then the process exits whatever
    // is left.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    tracing::info!("stopped");
    Ok(())
}

async fn shutdown() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
}
