//! Where an operation's work runs, and what stops it.
//!
//! The engine ([`txmap_terminology::operation`]) says what an operation
//! costs; this module runs it there. Cheap operations (a few store
//! lookups) run on the calling async worker: the hop to the blocking pool
//! and back costs more than such an operation (measured: tens of µs on
//! this 2-vCPU machine, most of a `$subsumes`), and what a cold page of a
//! mapped edition costs the worker is one read from disk. Heavy ones
//! (expansions, ECL, text search, the generic engine's parsing and
//! indexing of the request's resources) run on the blocking pool at a
//! lower priority, at most `heavy_concurrency` at once, so a long one
//! never holds up the workers that answer cheap ones nor takes every CPU.
//!
//! Every request carries the memory guard as its watch ([`GuardWatch`]):
//! the engine's loops ask it, with the deadline, whether to go on.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use txmap_memory::Sampler;
use txmap_terminology::operation::Cost;
use txmap_terminology::request::Watch;

use super::params::Error;
use crate::app::AppState;

/// Lowers the calling thread's scheduling priority to about nice 10, once
/// per thread. Only heavy operations run on tokio's blocking pool, so its
/// threads are the heavy ones: when a CPU is contended, a lookup on an
/// async worker (nice 0) gets it first, and a heavy operation still gets
/// about a tenth of it rather than starving. Lowering one's own priority
/// needs no privilege; if the OS refuses, nothing changes.
fn lower_priority() {
    thread_local!(static LOWERED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) });
    LOWERED.with(|done| {
        if !done.replace(true) {
            // Crossplatform 23 of 0..=99 maps to nice 9 under SCHED_OTHER.
            if let Ok(p) = thread_priority::ThreadPriorityValue::try_from(23u8)
                && let Err(e) = thread_priority::set_current_thread_priority(
                    thread_priority::ThreadPriority::Crossplatform(p),
                )
            {
                tracing::debug!("heavy operations keep their priority: {e:?}");
            }
        }
    });
}

/// Runs `f`, where `cost` says.
pub(super) async fn run<T: Send + 'static>(
    state: Arc<AppState>,
    cost: Cost,
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    if cost == Cost::Cheap {
        return f();
    }
    // The semaphore is never closed; waiting counts against the request's
    // time budget like the work itself.
    let _permit = state.heavy.acquire().await.ok();
    tokio::task::spawn_blocking(move || {
        lower_priority();
        f()
    })
    .await
    .map_err(|e| {
        tracing::error!("an operation's task failed: {e}");
        Error::Internal("the operation failed unexpectedly".into())
    })?
}

/// What stops a request's work besides its clock: its client gone or its
/// time up (the handler dropped, [`GuardWatch::cancel`]), shutdown's
/// grace period over ([`AppState::stopping`]), and the memory guard —
/// every [`Sampler::every`]-th check reads the process's memory, and at
/// or above `abort_at` the work stops.
#[derive(Debug)]
pub struct GuardWatch {
    state: Arc<AppState>,
    sampler: Mutex<Sampler>,
    cancelled: AtomicBool,
}

impl GuardWatch {
    pub fn new(state: Arc<AppState>) -> GuardWatch {
        GuardWatch {
            state,
            sampler: Mutex::new(Sampler::default()),
            cancelled: AtomicBool::new(false),
        }
    }

    /// Nobody waits for the answer any more.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
}

/// Cancels a request's work when dropped: when the handler's future goes
/// (the client closed the connection, the time budget's timeout fired)
/// the work on the blocking pool stops at its next check.
#[derive(Debug)]
pub struct CancelOnDrop(pub Arc<GuardWatch>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl Watch for GuardWatch {
    fn check(&self) -> Result<(), String> {
        if self.cancelled.load(Ordering::Relaxed) {
            return Err("the client is gone or the time budget is spent".into());
        }
        if self.state.stopping.load(Ordering::Relaxed) {
            return Err("the server is shutting down".into());
        }
        let Ok(mut sampler) = self.sampler.lock() else {
            return Ok(());
        };
        self.state
            .guard
            .check_running(&mut sampler)
            .map_err(|t| format!("the operation was aborted: {t}"))
    }
}
