//! What the server holds while it runs: [`AppState`], shared by every
//! handler — the editions and packages, the memory guard, the lanes heavy
//! work waits in, what strangers are told — and the [`Limits`] of one
//! request. The state is decided at startup (`config`, `editions`,
//! `packages`) and read by transport (`http`, `app`, `fhir`, `pages`)
//! and reports (`status`); it imports none of them.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;
use txmap_memory::{Guard, Root};

use crate::editions::Editions;
use crate::outcome;

/// What every handler shares: the served set (`editions`, `packages`),
/// which a reload replaces whole ([`Live`]), and what outlives a reload,
/// held by reference so that the next set shares it (the memory guard, the
/// lanes, the shutdown flag, the counters).
#[derive(Debug)]
pub struct AppState {
    /// The served files, shared by the sets a write publishes.
    pub editions: Arc<Editions>,
    pub guard: Arc<Guard>,
    /// Where `/proc` and `/sys` are read from (a fake tree in tests).
    pub root: Root,
    pub configured_limit: Option<u64>,
    pub started: Instant,
    pub limits: Limits,
    /// Where heavy operations wait their turn
    /// ([`Limits::heavy_concurrency`], [`Limits::heavy_per_client`]).
    pub lanes: Arc<crate::lanes::Lanes>,
    /// FHIR packages from the config (`packages`).
    pub packages: crate::packages::FhirPackages,
    /// `[http]`: links, CORS, the admin token ([`crate::public`]).
    pub public: crate::public::Public,
    /// Set when shutdown's grace period is over: running work stops.
    pub stopping: Arc<std::sync::atomic::AtomicBool>,
    /// Requests answered 500 because a store could not be read.
    pub store_errors: Arc<std::sync::atomic::AtomicU64>,
    /// The served set's generation and the reloads' outcome ([`Live`]).
    pub reloads: Arc<std::sync::Mutex<Reloads>>,
    /// The resources written through the API (`[store] path`), if the
    /// server stores any; their current versions are the first package.
    pub stored: Option<Arc<txmap_stored::Store>>,
    /// Who may read, write and administer (`[auth]`).
    pub auth: Arc<crate::auth::Auth>,
}

impl AppState {
    /// The next served set: these files and packages, everything else
    /// this state's (the same guard, lanes, limits and counters).
    pub fn with_files(
        &self,
        editions: Arc<Editions>,
        packages: crate::packages::FhirPackages,
    ) -> AppState {
        AppState {
            stored: self.stored.clone(),
            auth: Arc::clone(&self.auth),
            editions,
            packages,
            guard: Arc::clone(&self.guard),
            root: self.root.clone(),
            configured_limit: self.configured_limit,
            started: self.started,
            limits: self.limits,
            lanes: Arc::clone(&self.lanes),
            public: self.public.clone(),
            stopping: Arc::clone(&self.stopping),
            store_errors: Arc::clone(&self.store_errors),
            reloads: Arc::clone(&self.reloads),
        }
    }
}

impl AppState {
    /// The next served set after a write: these files and packages, with
    /// `stored` as the stored resources.
    pub fn with_stored(&self, stored: txmap_packages::Package) -> AppState {
        self.with_files(
            Arc::clone(&self.editions),
            self.packages.with_stored(stored),
        )
    }
}

/// The served set now, and how it got there. A reload builds the next
/// [`AppState`] in full, and the router that will serve it, and swaps both
/// in here; a request takes the router current when it arrives and keeps
/// it to the end, so requests in flight finish on the set they started
/// with, and an old set — its files mapped, its packages parsed — is
/// dropped, and its files unmapped, when its last request ends.
#[derive(Debug)]
pub struct Live {
    current: std::sync::RwLock<Served>,
    /// Draws a set's routes (`app::router`), once per set.
    make: fn(Arc<AppState>) -> axum::Router,
    /// One reload or write at a time: each builds the next set from the
    /// one served, so two at once would lose one's change.
    pub(crate) reloading: tokio::sync::Mutex<()>,
}

/// A served set and its router.
#[derive(Debug)]
struct Served {
    state: Arc<AppState>,
    router: axum::Router,
}

/// What `/status` and `/metrics` say of the served set.
#[derive(Clone, Debug)]
pub struct Reloads {
    /// 1 for the set built at startup, then one more per reload.
    pub generation: u64,
    /// When the served set was built.
    pub built: std::time::SystemTime,
    /// Reloads that failed (the old set kept serving).
    pub failures: u64,
    /// Why the last reload failed, if it did.
    pub last_error: Option<String>,
}

impl Default for Reloads {
    fn default() -> Reloads {
        Reloads {
            generation: 1,
            built: std::time::SystemTime::now(),
            failures: 0,
            last_error: None,
        }
    }
}

impl Live {
    /// Serves `state` through the routes `make` draws.
    pub fn new(state: Arc<AppState>, make: fn(Arc<AppState>) -> axum::Router) -> Arc<Live> {
        let router = make(Arc::clone(&state));
        Arc::new(Live {
            current: std::sync::RwLock::new(Served { state, router }),
            make,
            reloading: tokio::sync::Mutex::new(()),
        })
    }

    /// The set a request arriving now is answered from.
    pub fn current(&self) -> Arc<AppState> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        Arc::clone(&current.state)
    }

    /// The router of that set.
    pub fn router(&self) -> axum::Router {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        current.router.clone()
    }

    /// The router that would serve `next`, to try before [`swap`](Self::swap).
    pub fn router_for(&self, next: Arc<AppState>) -> axum::Router {
        (self.make)(next)
    }

    /// Serves `next` through `router` from now on; returns its generation.
    pub fn swap(&self, next: Arc<AppState>, router: axum::Router) -> u64 {
        let generation = {
            // The log is every set's (`AppState::with_files`): one count.
            let mut log = next.reloads.lock().unwrap_or_else(|p| p.into_inner());
            log.generation += 1;
            log.built = std::time::SystemTime::now();
            log.last_error = None;
            log.generation
        };
        let mut current = self.current.write().unwrap_or_else(|p| p.into_inner());
        let old = std::mem::replace(
            &mut *current,
            Served {
                state: next,
                router,
            },
        );
        drop(current);
        // The old set goes (its files unmapped, when no request holds it)
        // after the lock: requests arriving now do not wait for that.
        drop(old);
        generation
    }

    /// Notes a reload that failed: the served set stays.
    pub fn failed(&self, why: String) {
        let state = self.current();
        let mut log = state.reloads.lock().unwrap_or_else(|p| p.into_inner());
        log.failures += 1;
        log.last_error = Some(why);
    }
}

/// How much work one request may ask for (`[limits]` in the config).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// How long one operation may run before it is answered 422
    /// `too-costly`. Long loops check it as they go; the handler is also
    /// abandoned a little after it runs out.
    pub request: Duration,
    /// The most codes one `$expand` returns, unless the
    /// `X-TOO-COSTLY-THRESHOLD` header says otherwise.
    pub max_expansion: usize,
    /// The most elements one ECL evaluation may touch.
    pub ecl_max_work: u64,
    /// How many heavy operations run at once, in all.
    pub heavy_concurrency: usize,
    /// How many of them one client (by its address) may run at once.
    pub heavy_per_client: usize,
    /// How many connections are open at once.
    pub max_connections: usize,
    /// How many of them one client (by address) holds.
    pub max_connections_per_client: usize,
    /// How long a request's headers may take (and a keep-alive
    /// connection may sit idle).
    pub header_timeout: Duration,
    /// How long a request's body may take.
    pub body_timeout: Duration,
    /// The largest request body, in bytes.
    pub max_body: usize,
    /// The largest answer, in bytes.
    pub max_answer: usize,
    /// How long shutdown waits for open requests.
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            request: Duration::from_secs(10),
            max_expansion: 10_000,
            ecl_max_work: 50_000_000,
            heavy_concurrency: 2 * cpus(),
            heavy_per_client: cpus().saturating_sub(1).max(1),
            max_connections: 512,
            max_connections_per_client: 128,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            max_body: 8 << 20,
            max_answer: 32 << 20,
            shutdown_grace: Duration::from_secs(10),
        }
    }
}

/// The CPUs this process may use.
fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A count from the config: at least 1 (0 of any of them would refuse
/// every request).
fn at_least_one<T: PartialOrd + From<u8>>(
    key: &str,
    value: Option<T>,
    default: T,
) -> Result<T, String> {
    match value {
        None => Ok(default),
        Some(n) if n >= T::from(1) => Ok(n),
        Some(_) => Err(format!("[limits] {key} must be at least 1")),
    }
}

/// A size from the config — `"8MiB"` or a number of bytes — of at least
/// `least` bytes.
fn size(
    key: &str,
    value: Option<&toml::Value>,
    default: usize,
    least: u64,
) -> Result<usize, String> {
    let bytes = match value {
        None => return Ok(default),
        Some(toml::Value::Integer(n)) => u64::try_from(*n).unwrap_or(0),
        Some(toml::Value::String(s)) => {
            crate::config::parse_size(s).map_err(|e| format!("[limits] {key}: {e}"))?
        }
        Some(other) => {
            return Err(format!(
                "[limits] {key} = {other}: must be a size like \"8MiB\" or a number of bytes"
            ));
        }
    };
    if bytes < least {
        return Err(format!("[limits] {key} must be at least {least} bytes"));
    }
    usize::try_from(bytes).map_err(|_| format!("[limits] {key} is too large"))
}

/// A number of seconds from the config: above 0 and at most a day.
fn seconds(key: &str, value: Option<f64>, default: Duration) -> Result<Duration, String> {
    match value {
        None => Ok(default),
        Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Ok(Duration::from_secs_f64(s)),
        Some(s) => Err(format!(
            "[limits] {key} = {s}: must be above 0 and at most 86400"
        )),
    }
}

impl Limits {
    /// The configured limits, defaults where the config is silent; a
    /// value out of range is an error naming the key.
    pub fn from_config(c: &crate::config::LimitsConfig) -> Result<Limits, String> {
        let d = Limits::default();
        let max_body = size("max_body", c.max_body.as_ref(), d.max_body, 1 << 10)?;
        let max_answer = size(
            "max_answer_bytes",
            c.max_answer_bytes.as_ref(),
            d.max_answer,
            1 << 16,
        )?;
        Ok(Limits {
            max_answer,
            request: seconds("request_seconds", c.request_seconds, d.request)?,
            max_connections: at_least_one("max_connections", c.max_connections, d.max_connections)?,
            max_connections_per_client: at_least_one(
                "max_connections_per_client",
                c.max_connections_per_client,
                d.max_connections_per_client,
            )?,
            header_timeout: seconds("header_seconds", c.header_seconds, d.header_timeout)?,
            body_timeout: seconds("body_seconds", c.body_seconds, d.body_timeout)?,
            max_body,
            shutdown_grace: seconds(
                "shutdown_grace_seconds",
                c.shutdown_grace_seconds,
                d.shutdown_grace,
            )?,
            max_expansion: at_least_one("max_expansion", c.max_expansion, d.max_expansion)?,
            ecl_max_work: at_least_one("ecl_max_work", c.ecl_max_work, d.ecl_max_work)?,
            heavy_concurrency: at_least_one(
                "heavy_concurrency",
                c.heavy_concurrency,
                d.heavy_concurrency,
            )?,
            heavy_per_client: at_least_one(
                "heavy_per_client",
                c.heavy_per_client,
                d.heavy_per_client,
            )?,
        })
    }
}

/// Seconds a client refused for memory should wait.
pub const RETRY_AFTER_SECONDS: u64 = 5;

/// Bodies below this size reserve nothing: the guard's measurement
/// covers them.
pub const RESERVE_FROM: usize = 64 << 10;

/// Bytes of memory a request body takes once parsed and indexed, per byte
/// of JSON (measured: a 1.79 MB CodeSystem of 100,000 concepts sent as a
/// `tx-resource` peaked at about 100 MB, 56×; JSON trees of small objects
/// and the engine's index of them).
pub const MEMORY_PER_BODY_BYTE: u64 = 64;

/// A body the memory guard has no room for now.
#[derive(Debug)]
pub struct NoRoom {
    pub len: usize,
    pub need: u64,
}

impl NoRoom {
    /// The 503 to send.
    pub fn response(&self) -> Response {
        let mut r = outcome::response(
            StatusCode::SERVICE_UNAVAILABLE,
            "transient",
            &format!(
                "the server has not the memory this request needs now (a {}-byte body needs about {} MiB); retry later",
                self.len,
                self.need >> 20
            ),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
        r
    }
}

/// Sets aside what a large body will need ([`MEMORY_PER_BODY_BYTE`]) if
/// the memory guard has room: four large uploads that arrive together are
/// judged together, before any of them has allocated.
pub fn reserve_for_body(
    state: &AppState,
    len: usize,
) -> Result<Option<txmap_memory::Reservation>, NoRoom> {
    if len < RESERVE_FROM {
        return Ok(None);
    }
    let need = (len as u64).saturating_mul(MEMORY_PER_BODY_BYTE);
    match state.guard.reserve(need) {
        Ok(r) => Ok(Some(r)),
        Err(_) => {
            tracing::warn!(
                "memory guard: refused a body of {len} bytes (would need about {need} bytes)"
            );
            Err(NoRoom { len, need })
        }
    }
}

/// Files changed under a running server, found.
///
/// Served files are never to be changed in place (docs/config.md), but
/// nothing stopped it: a mapped file rewritten in place silently changed
/// 29 of 400 lookups while `/status` said "verified", and truncating one
/// killed the server (SIGBUS). So, on a thread of its own at the lowest
/// priority (which is also the kernel's I/O priority for it):
///
/// * every [`IDENTITY_EVERY`](crate::editions::IDENTITY_EVERY), each file's device, inode, size and
///   modification time are compared with the ones loaded
///   ([`check_identities`](crate::editions::check_identities)): a file replaced, truncated or rewritten is
///   taken out of service at once, before a request reads it again (503
///   naming it; serve the new file by restarting);
/// * every `interval` (`[snomed] scrub_seconds`), each file in service is
///   read through again ([`scrub_once`](crate::editions::scrub_once)): a checksum that no longer
///   matches takes it out of service. The page cache is left as found.
///
/// A file trusted unverified is left alone.
pub fn scrub(live: Arc<Live>, interval: Duration) {
    let spawned = std::thread::Builder::new()
        .name("txmap-scrub".into())
        .spawn(move || {
            let _ =
                thread_priority::set_current_thread_priority(thread_priority::ThreadPriority::Min);
            let mut last = std::time::Instant::now();
            loop {
                std::thread::sleep(crate::editions::IDENTITY_EVERY);
                // The set served now, held only for this round: an old
                // set is not kept alive by its scrub.
                let state = live.current();
                if state.stopping.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                crate::editions::check_identities(&state.editions);
                if last.elapsed() >= interval {
                    crate::editions::scrub_once(&state.editions);
                    last = std::time::Instant::now();
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("could not start the scrub of served files: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;

    fn limits(toml: &str) -> Result<Limits, String> {
        Limits::from_config(&Config::parse(toml).unwrap().limits)
    }

    #[test]
    fn connection_limits_come_from_the_config() {
        let d = limits("").unwrap();
        assert_eq!(d, Limits::default());
        let l = limits(
            "[limits]\nmax_connections = 3\nheader_seconds = 2.5\nbody_seconds = 4\nmax_body = \"1MiB\"\nshutdown_grace_seconds = 7\n",
        )
        .unwrap();
        assert_eq!(l.max_connections, 3);
        assert_eq!(l.header_timeout, Duration::from_millis(2500));
        assert_eq!(l.body_timeout, Duration::from_secs(4));
        assert_eq!(l.max_body, 1 << 20);
        assert_eq!(l.shutdown_grace, Duration::from_secs(7));
        assert_eq!(
            limits("[limits]\nmax_body = 4096\n").unwrap().max_body,
            4096
        );
        for bad in [
            "max_connections = 0",
            "header_seconds = 0",
            "body_seconds = -1",
            "max_body = 10",
            "max_body = \"lots\"",
            "shutdown_grace_seconds = 1e9",
            "max_expansion = 0",
            "ecl_max_work = 0",
        ] {
            let e = limits(&format!("[limits]\n{bad}\n")).unwrap_err();
            let key = bad.split(' ').next().unwrap();
            assert!(e.contains(key), "{bad}: {e}");
        }
    }
}
