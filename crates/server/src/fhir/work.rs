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
//! Heavy work waits its turn in [`crate::lanes::Lanes`]: at most
//! `heavy_per_client` at once for one client, `heavy_concurrency` in all.
//!
//! Every request carries the memory guard as its watch ([`GuardWatch`]):
//! the engine's loops ask it, with the deadline, whether to go on.
//! [`answer`] is the one path from an operation to its JSON text — plan,
//! lane, budget — which the FHIR routes and the pages
//! ([`crate::pages`]) share, and [`answered`] makes that text a response
//! within `max_answer_bytes` and the guard's reservations.

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use txmap_terminology::ResourceSource;
use txmap_terminology::operation::{self, Answer, Fhir, Operation};

use txmap_memory::Sampler;
use txmap_terminology::operation::Cost;
use txmap_terminology::request::Watch;

use super::params::{self, Error, Request, Respond};
use crate::outcome::{fhir_json_text, to_fhir_json};
use crate::state::AppState;
use crate::version::FhirVersion;

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

/// How long past its budget a handler may run before it is abandoned: the
/// long loops check the deadline themselves and answer first.
const GRACE: Duration = Duration::from_millis(250);

/// One call's answer as JSON text, within its time budget counted from
/// `arrived`: the engine plans it, [`work`] runs it where its cost says.
/// The operations' routes and the pages ([`crate::pages`]) both ask here,
/// so a page shows what the FHIR request answers.
pub(crate) async fn answer(
    state: &Arc<AppState>,
    v: FhirVersion,
    op: Operation,
    mut call: Request,
    headers: &HeaderMap,
    client: Option<std::net::IpAddr>,
    arrived: Instant,
) -> Result<String, Error> {
    let budget = state.limits.request;
    params::limit(&mut call, headers, &state.limits, arrived);
    let watch = Arc::new(GuardWatch::new(Arc::clone(state)));
    let _cancel = CancelOnDrop(Arc::clone(&watch));
    call.watch = Some(watch);
    let source: Arc<dyn ResourceSource> = state.packages.source(v);
    let plan = operation::plan(op, &call, &*source);
    let fhir = match v {
        FhirVersion::R4 => Fhir::R4,
        FhirVersion::R5 => Fhir::R5,
    };
    // The answer is written as text where it was made (on the heavy
    // lane for heavy work), not on the async worker.
    let answer = run(Arc::clone(state), plan.cost, client, move || {
        operation::answer(plan, call, source, fhir).map(|a| match a {
            Answer::Text(json) => json,
            Answer::Parameters(p) => p.to_json(),
            Answer::Resource(r) => to_fhir_json(&r),
        })
    });
    let give_up = tokio::time::Instant::from_std(arrived + budget + GRACE);
    match tokio::time::timeout_at(give_up, answer).await {
        Ok(Ok(json)) => Ok(json),
        Ok(Err(e)) => {
            if matches!(e, Error::Store(_)) {
                state
                    .store_errors
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
            Err(e)
        }
        Err(_) => Err(out_of_budget("operation", budget)),
    }
}

/// The 422 of work (`what`) abandoned when its time budget ran out.
pub(super) fn budget_spent(what: &str, budget: Duration) -> Response {
    out_of_budget(what, budget).response()
}

/// Why work (`what`) was abandoned when its time budget ran out.
pub(crate) fn out_of_budget(what: &str, budget: Duration) -> Error {
    Error::too_costly(format!(
        "the {what} did not finish within its time budget of {:.1} s",
        budget.as_secs_f64()
    ))
}

/// An answer as a response: one larger than `max_answer_bytes` is a 422
/// (dropped, not sent), and what it takes counts with the memory guard's
/// reservations until it is sent, so answers being sent together are
/// judged together; one the guard has no room for is a 503.
pub(super) fn answered(state: &AppState, json: String) -> Response {
    let limit = state.limits.max_answer;
    if json.len() > limit {
        return Error::too_costly(format!(
            "the answer would be {} bytes, more than this server sends ({limit} bytes, [limits] max_answer_bytes): ask for less (count, a filter, fewer codings)",
            json.len()
        ))
        .response();
    }
    if json.len() < crate::state::RESERVE_FROM {
        return fhir_json_text(StatusCode::OK, json);
    }
    match state.guard.reserve(json.len() as u64) {
        Ok(reservation) => {
            let mut r = fhir_json_text(StatusCode::OK, json);
            let body = std::mem::take(r.body_mut());
            *r.body_mut() = Body::new(crate::http::Holding::new(body, reservation));
            r
        }
        Err(_) => crate::state::NoRoom {
            len: json.len(),
            need: json.len() as u64,
        }
        .response(),
    }
}
