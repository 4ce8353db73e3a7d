//! Where an operation's work runs, and what stops it.
//!
//! The engine ([`txmap_terminology::operation`]) says what an operation
//! costs; this module runs it there. Cheap operations (a few store
//! lookups) run on the calling async worker: the hop to the blocking pool
//! and back costs more than such an operation (measured: tens of µs on
//! this 2-vCPU machine, most of a `$subsumes`), and what a cold page of a
//! mapped edition costs the worker is one read from disk. Heavy ones
//! (expansions, ECL, text search, FHIR search, the generic engine's
//! parsing and indexing of the request's resources) run on the blocking
//! pool at a lower priority, so a long one never holds up the workers
//! that answer cheap ones nor takes every CPU.
//!
//! Heavy work waits its turn in [`Lanes`]: at most `heavy_per_client` at
//! once for one client (by its address), and `heavy_concurrency` in all.
//! One slot for everyone let two clients that kept budget-long requests
//! running make every other client's small expansion wait out their
//! budgets (5 of 6 failed after 10 s); now a client's long requests queue
//! behind each other, and another client's find a slot, sharing the CPUs
//! at the same low priority.
//!
//! Every request carries the memory guard as its watch ([`GuardWatch`]):
//! the engine's loops ask it, with the deadline, whether to go on.

use std::collections::HashMap;
use std::net::IpAddr;
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

/// Where heavy work waits its turn: see the module doc.
#[derive(Debug)]
pub struct Lanes {
    total: tokio::sync::Semaphore,
    per_client: usize,
    clients: Mutex<HashMap<Option<IpAddr>, Arc<tokio::sync::Semaphore>>>,
}

/// A place in the lanes, held while the work runs.
#[derive(Debug)]
pub struct Turn<'a> {
    _client: Option<tokio::sync::OwnedSemaphorePermit>,
    _total: Option<tokio::sync::SemaphorePermit<'a>>,
}

impl Lanes {
    /// `total` heavy operations at once, `per_client` of them for one
    /// client.
    pub fn new(total: usize, per_client: usize) -> Lanes {
        Lanes {
            total: tokio::sync::Semaphore::new(total),
            per_client,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Waits for a turn of `client`'s (`None`: a request without a
    /// connection, as in tests): first behind the client's own, then in
    /// the common lane. The semaphores are never closed.
    pub async fn turn(&self, client: Option<IpAddr>) -> Turn<'_> {
        let own = {
            let Ok(mut clients) = self.clients.lock() else {
                return Turn {
                    _client: None,
                    _total: self.total.acquire().await.ok(),
                };
            };
            // Clients with nothing running or waiting are forgotten.
            if clients.len() > 4096 {
                let per_client = self.per_client;
                clients
                    .retain(|_, s| Arc::strong_count(s) > 1 || s.available_permits() < per_client);
            }
            Arc::clone(
                clients
                    .entry(client)
                    .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(self.per_client))),
            )
        };
        let client = own.acquire_owned().await.ok();
        Turn {
            _client: client,
            _total: self.total.acquire().await.ok(),
        }
    }
}

/// Runs `f`, where `cost` says; heavy work as `client`'s.
pub(crate) async fn run<T: Send + 'static>(
    state: Arc<AppState>,
    cost: Cost,
    client: Option<IpAddr>,
    f: impl FnOnce() -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    if cost == Cost::Cheap {
        return f();
    }
    // Waiting counts against the request's time budget like the work.
    let _turn = state.lanes.turn(client).await;
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Whether a turn is given now (it is not, when it has to wait).
    async fn given_now(lanes: &Lanes, client: Option<IpAddr>) -> Option<Turn<'_>> {
        tokio::time::timeout(Duration::from_millis(20), lanes.turn(client))
            .await
            .ok()
    }

    #[tokio::test]
    async fn a_clients_heavy_work_waits_behind_its_own_not_in_front_of_others() {
        let lanes = Lanes::new(3, 1);
        let (a, b, c) = (
            Some("192.0.2.1".parse().unwrap()),
            Some("192.0.2.2".parse().unwrap()),
            Some("192.0.2.3".parse().unwrap()),
        );
        let first_a = given_now(&lanes, a).await.expect("a's first");
        // a's second waits for a's first; b and c go ahead of it.
        assert!(given_now(&lanes, a).await.is_none());
        let first_b = given_now(&lanes, b).await.expect("b's first");
        let first_c = given_now(&lanes, c).await.expect("c's first");
        // Every slot taken: a fourth client waits for one.
        let d = Some("192.0.2.4".parse().unwrap());
        assert!(given_now(&lanes, d).await.is_none());
        drop(first_b);
        assert!(given_now(&lanes, d).await.is_some());
        drop((first_a, first_c));
        assert!(given_now(&lanes, a).await.is_some());
    }
}
