//! The memory guard: refuse new requests, abort costly running operations.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::{Limit, ProcessMemory, Root, process_status};

/// The memory guard's thresholds, as fractions of the [`Limit`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuardConfig {
    /// At or above this fraction of the limit, new requests are refused
    /// (HTTP 503). Default 0.85.
    pub refuse_at: f64,
    /// At or above this fraction of the limit, a running costly operation
    /// (an expansion, a search) is aborted (HTTP 422, too costly). Default
    /// 0.95.
    pub abort_at: f64,
}

impl GuardConfig {
    /// The default `refuse_at`.
    pub const DEFAULT_REFUSE_AT: f64 = 0.85;
    /// The default `abort_at`.
    pub const DEFAULT_ABORT_AT: f64 = 0.95;

    /// Checks `0 < refuse_at <= abort_at <= 1` (NaN fails).
    pub fn validate(&self) -> Result<(), GuardConfigError> {
        let ok = 0.0 < self.refuse_at && self.refuse_at <= self.abort_at && self.abort_at <= 1.0;
        if ok {
            Ok(())
        } else {
            Err(GuardConfigError {
                refuse_at: self.refuse_at,
                abort_at: self.abort_at,
            })
        }
    }
}

impl Default for GuardConfig {
    /// `refuse_at` 0.85, `abort_at` 0.95.
    fn default() -> Self {
        GuardConfig {
            refuse_at: Self::DEFAULT_REFUSE_AT,
            abort_at: Self::DEFAULT_ABORT_AT,
        }
    }
}

/// Thresholds that do not satisfy `0 < refuse_at <= abort_at <= 1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GuardConfigError {
    /// The `refuse_at` given.
    pub refuse_at: f64,
    /// The `abort_at` given.
    pub abort_at: f64,
}

impl fmt::Display for GuardConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "memory guard thresholds must satisfy 0 < refuse_at <= abort_at <= 1, \
             got refuse_at = {} and abort_at = {}",
            self.refuse_at, self.abort_at
        )
    }
}

impl std::error::Error for GuardConfigError {}

/// What the guard says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GuardDecision {
    /// Below `refuse_at`: go ahead.
    Accept,
    /// At or above `refuse_at`: refuse new requests (HTTP 503).
    Refuse,
    /// At or above `abort_at`: abort a running costly operation (HTTP 422,
    /// too costly).
    Abort,
}

/// The memory the guard judges, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measured {
    /// The figure judged.
    pub bytes: u64,
    /// Whether resident file-backed pages (mapped editions) were left out:
    /// `bytes` is then anonymous (and shared) memory, not the whole RSS.
    pub excludes_file_backed: bool,
}

/// The memory the guard judges.
///
/// When any edition is mapped (`any_mapped`), its resident pages are page
/// cache, shared and reclaimable, so they are left out: `VmRSS − RssFile`
/// (or, failing those fields, `RssAnon + RssShmem`). Otherwise the whole
/// RSS counts: `VmRSS` (or `Rss` of `smaps_rollup`). Then file-backed pages
/// are only the binary and its libraries, and counting them errs on the safe
/// side. `None` if no figure is known.
pub fn measured(mem: &ProcessMemory, any_mapped: bool) -> Option<Measured> {
    if any_mapped {
        let anonymous = match (mem.vm_rss, mem.rss_file, mem.rss_anon) {
            (Some(rss), Some(file), _) => Some(rss.saturating_sub(file)),
            (_, _, Some(anon)) => Some(anon.saturating_add(mem.rss_shmem.unwrap_or(0))),
            _ => None,
        };
        if let Some(bytes) = anonymous {
            return Some(Measured {
                bytes,
                excludes_file_backed: true,
            });
        }
    }
    mem.vm_rss.or(mem.rss).map(|bytes| Measured {
        bytes,
        excludes_file_backed: false,
    })
}

/// The guard's decision for `measured` bytes against a `limit`:
/// `measured >= abort_at × limit` → [`Abort`](GuardDecision::Abort) (callers
/// use it for running operations), else `measured >= refuse_at × limit` →
/// [`Refuse`](GuardDecision::Refuse), else [`Accept`](GuardDecision::Accept).
/// Computed in `f64`, exact for any realistic byte count (below 2^53).
pub fn decide(measured: u64, limit: u64, config: &GuardConfig) -> GuardDecision {
    let (measured, limit) = (measured as f64, limit as f64);
    if measured >= config.abort_at * limit {
        GuardDecision::Abort
    } else if measured >= config.refuse_at * limit {
        GuardDecision::Refuse
    } else {
        GuardDecision::Accept
    }
}

/// How [`Sampler`] reads by default: once every 4096 checks.
pub const DEFAULT_SAMPLE_EVERY: u32 = 4096;

/// Makes [`Guard::check_running`] cheap enough for a hot loop: only one
/// call in `every` actually reads the process's memory (the `every`-th,
/// `2 × every`-th, …). One per running operation, owned by it.
#[derive(Debug, Clone)]
pub struct Sampler {
    every: u32,
    until_read: u32,
}

impl Sampler {
    /// A sampler that reads once every `every` checks (0 is taken as 1).
    pub fn new(every: u32) -> Sampler {
        let every = every.max(1);
        Sampler {
            every,
            until_read: every,
        }
    }

    /// How many checks per read.
    pub fn every(&self) -> u32 {
        self.every
    }

    /// Counts one check; true when this one should read.
    fn tick(&mut self) -> bool {
        self.until_read -= 1;
        if self.until_read == 0 {
            self.until_read = self.every;
            true
        } else {
            false
        }
    }
}

impl Default for Sampler {
    /// Reads once every [`DEFAULT_SAMPLE_EVERY`] checks.
    fn default() -> Self {
        Sampler::new(DEFAULT_SAMPLE_EVERY)
    }
}

/// A running operation crossed `abort_at`: it should stop and answer
/// "too costly" (HTTP 422).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TooCostly {
    /// The memory measured.
    pub measured: Measured,
    /// The limit, in bytes.
    pub limit: u64,
    /// The fraction of the limit that aborts.
    pub abort_at: f64,
}

impl fmt::Display for TooCostly {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = if self.measured.excludes_file_backed {
            "anonymous memory"
        } else {
            "resident memory"
        };
        write!(
            f,
            "operation aborted: {what} of {} bytes reached {}% of the {}-byte memory limit",
            self.measured.bytes,
            self.abort_at * 100.0,
            self.limit
        )
    }
}

impl std::error::Error for TooCostly {}

/// Reads the process's memory for the [`Guard`]; injectable for tests.
pub type MemoryReader = Box<dyn Fn() -> Option<ProcessMemory> + Send + Sync>;

/// The memory guard: thresholds, the limit, whether any edition is mapped,
/// how to read memory, and counters of what it did. Shared by every request
/// (`Arc<Guard>`); every method takes `&self`.
///
/// With no limit, or when memory cannot be read (not Linux), it accepts
/// everything: the guard protects a healthy server, it does not guess.
pub struct Guard {
    config: GuardConfig,
    limit: Option<Limit>,
    any_mapped: AtomicBool,
    read: MemoryReader,
    /// The latest measurement and when it was taken, for new requests.
    latest: Mutex<Option<(Instant, Measured)>>,
    refused: AtomicU64,
    aborted: AtomicU64,
    /// Bytes set aside by [`Reservation`]s not yet dropped.
    reserved: Arc<AtomicU64>,
}

/// Memory set aside for a request that will allocate it — its estimated
/// need, known before the work starts (from its body's size) — counted
/// with the measured memory whenever another reservation is asked for,
/// until it is dropped. It lets the guard refuse the fourth of four large
/// uploads that arrive together, before any of them has allocated what
/// the measurement would show. Requests that reserve nothing (a lookup
/// needs kilobytes) are judged on the measurement alone, so large
/// uploads waiting for their memory do not shut out cheap calls.
#[derive(Debug)]
pub struct Reservation {
    reserved: Arc<AtomicU64>,
    bytes: u64,
}

impl Reservation {
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.reserved.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// How old a measurement may be for judging a new request. Reading
/// `/proc/self/status` costs about 10 µs, as much as a whole `$subsumes`;
/// at this age a server doing 20,000 requests a second reads it once per
/// hundred, and memory cannot grow much in 5 ms that the abort threshold
/// (checked by running operations) would not catch.
pub const NEW_REQUEST_MAX_AGE: Duration = Duration::from_millis(5);

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard")
            .field("config", &self.config)
            .field("limit", &self.limit)
            .field("any_mapped", &self.any_mapped())
            .field("refused", &self.refused())
            .field("aborted", &self.aborted())
            .finish_non_exhaustive()
    }
}

impl Guard {
    /// A guard over this process, reading `/proc/self/status`
    /// ([`process_status`]). `config` should have passed
    /// [`GuardConfig::validate`].
    pub fn new(config: GuardConfig, limit: Option<Limit>, any_mapped: bool) -> Guard {
        Guard::with_root(config, limit, any_mapped, Root::system())
    }

    /// A guard reading `{root}/proc/self/status`.
    pub fn with_root(
        config: GuardConfig,
        limit: Option<Limit>,
        any_mapped: bool,
        root: Root,
    ) -> Guard {
        Guard::with_reader(config, limit, any_mapped, move || {
            Some(process_status(&root))
        })
    }

    /// A guard reading memory with `read` (tests; or a cheaper source).
    pub fn with_reader(
        config: GuardConfig,
        limit: Option<Limit>,
        any_mapped: bool,
        read: impl Fn() -> Option<ProcessMemory> + Send + Sync + 'static,
    ) -> Guard {
        Guard {
            config,
            limit,
            any_mapped: AtomicBool::new(any_mapped),
            read: Box::new(read),
            latest: Mutex::new(None),
            refused: AtomicU64::new(0),
            aborted: AtomicU64::new(0),
            reserved: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The thresholds.
    pub fn config(&self) -> &GuardConfig {
        &self.config
    }

    /// The limit, if any.
    pub fn limit(&self) -> Option<&Limit> {
        self.limit.as_ref()
    }

    /// Whether any edition is mapped, so file-backed pages are left out.
    pub fn any_mapped(&self) -> bool {
        self.any_mapped.load(Ordering::Relaxed)
    }

    /// Records whether any edition is mapped (editions loaded or dropped).
    pub fn set_any_mapped(&self, any_mapped: bool) {
        self.any_mapped.store(any_mapped, Ordering::Relaxed);
        // The latest figure was judged the other way.
        if let Ok(mut latest) = self.latest.lock() {
            *latest = None;
        }
    }

    /// Reads the process's memory now and returns the figure judged.
    pub fn measure(&self) -> Option<Measured> {
        let memory = (self.read)()?;
        let m = measured(&memory, self.any_mapped())?;
        if let Ok(mut latest) = self.latest.lock() {
            *latest = Some((Instant::now(), m));
        }
        Some(m)
    }

    /// The latest measurement if it is at most [`NEW_REQUEST_MAX_AGE`]
    /// old, else a new one.
    fn recent(&self) -> Option<Measured> {
        let cached = self.latest.lock().ok().and_then(|l| *l);
        match cached {
            Some((at, m)) if at.elapsed() <= NEW_REQUEST_MAX_AGE => Some(m),
            _ => self.measure(),
        }
    }

    /// For a new request: judges a measurement at most
    /// [`NEW_REQUEST_MAX_AGE`] old (reading `/proc/self/status` if there is
    /// none, about 10 µs) and returns
    /// [`Refuse`](GuardDecision::Refuse) at or above `refuse_at` (counted in
    /// [`refused`](Guard::refused)), else
    /// [`Accept`](GuardDecision::Accept). Never `Abort`: nothing is running
    /// yet, so above `abort_at` a new request is refused too.
    pub fn check_new_request(&self) -> GuardDecision {
        self.judge_new(0, false)
    }

    /// Sets `bytes` aside for a request about to need them, if the
    /// measured memory, what is already reserved and `bytes` stay below
    /// `refuse_at`; else [`GuardDecision::Refuse`] (counted in
    /// [`refused`](Guard::refused)). With no limit, or no measurement,
    /// the reservation is made and only counted.
    pub fn reserve(&self, bytes: u64) -> Result<Reservation, GuardDecision> {
        match self.judge_new(bytes, true) {
            GuardDecision::Accept => {
                self.reserved.fetch_add(bytes, Ordering::Relaxed);
                Ok(Reservation {
                    reserved: Arc::clone(&self.reserved),
                    bytes,
                })
            }
            other => Err(other),
        }
    }

    /// Bytes reserved now ([`Guard::reserve`]).
    pub fn reserved(&self) -> u64 {
        self.reserved.load(Ordering::Relaxed)
    }

    /// A new request that needs `extra` bytes besides what is measured
    /// (and, with `with_reserved`, what is reserved).
    fn judge_new(&self, extra: u64, with_reserved: bool) -> GuardDecision {
        let Some(limit) = &self.limit else {
            return GuardDecision::Accept;
        };
        let Some(measured) = self.recent() else {
            return GuardDecision::Accept;
        };
        let reserved = if with_reserved { self.reserved() } else { 0 };
        let wanted = measured
            .bytes
            .saturating_add(reserved)
            .saturating_add(extra);
        match decide(wanted, limit.bytes, &self.config) {
            GuardDecision::Accept => GuardDecision::Accept,
            GuardDecision::Refuse | GuardDecision::Abort => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                GuardDecision::Refuse
            }
        }
    }

    /// For a running costly operation, in its loop: only every
    /// [`Sampler::every`]-th call reads memory; `Err` at or above
    /// `abort_at` (counted in [`aborted`](Guard::aborted)).
    pub fn check_running(&self, sampler: &mut Sampler) -> Result<(), TooCostly> {
        if !sampler.tick() {
            return Ok(());
        }
        let Some(limit) = &self.limit else {
            return Ok(());
        };
        let Some(measured) = self.measure() else {
            return Ok(());
        };
        match decide(measured.bytes, limit.bytes, &self.config) {
            GuardDecision::Abort => {
                self.aborted.fetch_add(1, Ordering::Relaxed);
                Err(TooCostly {
                    measured,
                    limit: limit.bytes,
                    abort_at: self.config.abort_at,
                })
            }
            GuardDecision::Accept | GuardDecision::Refuse => Ok(()),
        }
    }

    /// New requests refused so far (for `/metrics`).
    pub fn refused(&self) -> u64 {
        self.refused.load(Ordering::Relaxed)
    }

    /// Running operations aborted so far (for `/metrics`).
    pub fn aborted(&self) -> u64 {
        self.aborted.load(Ordering::Relaxed)
    }
}
