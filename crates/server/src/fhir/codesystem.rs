//! `CodeSystem/$lookup` and `CodeSystem/$subsumes` for SNOMED CT: the
//! edition a request names, and where its work runs.
//!
//! The edition is chosen by `version`: a version URI names one edition
//! version, an edition URI the latest loaded version of that edition, and
//! none the default edition. Operations run where their [`Cost`] says:
//! cheap ones on the calling worker, long ones on the blocking pool.
//!
//! `$lookup` itself — the properties, designations and expressions the
//! HL7 suite expects — is `txmap_snomed::lookup`, over the edition's code
//! system provider; this module picks the edition and where the work runs.

use std::sync::Arc;
use std::time::Instant;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use txmap_load::EditionBytes;
use txmap_store::Edition;

use super::metadata::SNOMED_CT;
use super::params::{Error, Params, Request, Respond, Stored, merge};
use super::{FhirVersion, fhir_json, fhir_json_text};
use crate::app::AppState;
use crate::editions::Editions;
use txmap_snomed::SnomedCt;
use txmap_snomed::language::DisplayLanguage;
use txmap_snomed::lookup::find;
pub use txmap_snomed::lookup::{PropertyFilter, lookup_code, normal_form};

pub(super) type Ed = Edition<EditionBytes>;

/// The edition at `index` as a code system: the engine's provider for it,
/// which the SNOMED CT operations of `txmap-snomed` answer from.
pub(super) fn edition(state: &AppState, index: usize) -> Result<&SnomedCt<EditionBytes>, Error> {
    state
        .packages
        .edition(index)
        .ok_or_else(|| Error::Internal(format!("edition {index} is not served")))
}

pub(super) use txmap_snomed::term_of;

/// The edition `version` names, or the default one.
pub fn resolve_edition(editions: &Editions, version: Option<&str>) -> Result<usize, Error> {
    let Some(version) = version.filter(|v| !v.is_empty()) else {
        return editions
            .default
            .filter(|&i| i < editions.list.len())
            .ok_or_else(|| Error::not_found("no SNOMED CT edition is loaded"));
    };
    if let Some(i) = editions
        .list
        .iter()
        .position(|e| e.names.version_uri == version)
    {
        return Ok(i);
    }
    let latest = editions
        .list
        .iter()
        .enumerate()
        .filter(|(_, e)| e.names.edition_uri == version)
        .max_by(|(_, a), (_, b)| {
            a.edition
                .identity()
                .effective_time
                .cmp(&b.edition.identity().effective_time)
                .then_with(|| a.names.version_uri.cmp(&b.names.version_uri))
        })
        .map(|(i, _)| i);
    latest.ok_or_else(|| {
        let valid: Vec<String> = super::snomed_versions(editions)
            .into_iter()
            .map(|v| v.code)
            .collect();
        Error::not_found(format!(
            "A definition for CodeSystem '{SNOMED_CT}' version '{version}' could not be found. Valid versions: {}",
            if valid.is_empty() {
                "(none)".to_owned()
            } else {
                valid.join(", ")
            }
        ))
    })
}

pub(super) use txmap_snomed::check_system;

/// The ECL budget of a request: its deadline and the configured work
/// limit.
pub(super) fn ecl_budget(state: &AppState, deadline: Option<Instant>) -> txmap_ecl_eval::Budget {
    txmap_ecl_eval::Budget {
        deadline,
        max_work: state.limits.ecl_max_work,
    }
}

/// Where an operation runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Cost {
    /// A few store lookups (`$lookup`, `$subsumes`, `$validate-code` of a
    /// code): on the calling worker. The hop to the blocking pool and back
    /// costs more than such an operation (measured: tens of µs on this
    /// 2-vCPU machine, most of a `$subsumes`); what a cold page of a mapped
    /// edition costs the worker is one read from disk.
    Cheap,
    /// Expansions, ECL, text search: on the blocking pool, so a long one
    /// never holds up the workers that answer cheap ones, and at most
    /// `heavy_concurrency` at once, so they never take every CPU.
    Heavy,
}

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

/// Runs `f` over the shared state, where `cost` says.
pub(super) async fn run<T: Send + 'static>(
    state: Arc<AppState>,
    cost: Cost,
    f: impl FnOnce(&AppState) -> Result<T, Error> + Send + 'static,
) -> Result<T, Error> {
    if cost == Cost::Cheap {
        return f(&state);
    }
    // The semaphore is never closed; waiting counts against the request's
    // time budget like the work itself.
    let permits = state.clone();
    let _permit = permits.heavy.acquire().await.ok();
    tokio::task::spawn_blocking(move || {
        lower_priority();
        f(&state)
    })
    .await
    .map_err(|e| {
        tracing::error!("an operation's task failed: {e}");
        Error::Internal("the operation failed unexpectedly".into())
    })?
}

/// An answer already written as JSON text (Parameters from the one
/// writer, [`txmap_terminology::parameters`]), or its error.
pub(super) fn respond_text(r: Result<String, Error>) -> Response {
    match r {
        Ok(json) => fhir_json_text(StatusCode::OK, json),
        Err(e) => e.response(),
    }
}

pub(super) fn respond(r: Result<Value, Error>) -> Response {
    match r {
        Ok(v) => fhir_json(StatusCode::OK, &v),
        Err(e) => e.response(),
    }
}

// ----- $lookup ---------------------------------------------------------------

/// `CodeSystem/$lookup`.
pub async fn lookup(state: Arc<AppState>, call: Request) -> Response {
    respond_text(lookup_inner(state, call).await)
}

async fn lookup_inner(state: Arc<AppState>, call: Request) -> Result<String, Error> {
    let params = &call.params;
    let named = params.coded(params.coding("coding")?)?;
    let code = named
        .code
        .ok_or_else(|| Error::required("code"))?
        .to_owned();
    check_system(named.system)?;
    let index = resolve_edition(&state.editions, named.version)?;
    let filter = PropertyFilter::new(&params.all_text("property"));
    let language = DisplayLanguage::parse(call.display_language_param()?);
    run(state, Cost::Cheap, move |state| {
        state.editions.list[index].count_use();
        let e = edition(state, index)?;
        lookup_code(e, &code, &filter, &language).map(|p| p.to_json())
    })
    .await
}

// ----- $subsumes -------------------------------------------------------------

/// `CodeSystem/$subsumes`.
pub async fn subsumes(state: Arc<AppState>, call: Request) -> Response {
    respond(subsumes_inner(state, call.params).await)
}

async fn subsumes_inner(state: Arc<AppState>, params: Params) -> Result<Value, Error> {
    let coding_a = params.coding("codingA")?;
    let coding_b = params.coding("codingB")?;
    let code_a = merge(
        "codeA",
        params.text("codeA")?,
        coding_a.and_then(|c| c.code.as_deref()),
    )?
    .ok_or_else(|| Error::required("codeA"))?
    .to_owned();
    let code_b = merge(
        "codeB",
        params.text("codeB")?,
        coding_b.and_then(|c| c.code.as_deref()),
    )?
    .ok_or_else(|| Error::required("codeB"))?
    .to_owned();
    let system = params.text("system")?;
    for s in [
        coding_a.and_then(|c| c.system.as_deref()),
        coding_b.and_then(|c| c.system.as_deref()),
    ]
    .into_iter()
    .flatten()
    {
        check_system(Some(s))?;
    }
    if system.is_some() || (coding_a.is_none() && coding_b.is_none()) {
        check_system(system)?;
    }
    let version = merge(
        "version",
        params.text("version")?,
        merge(
            "version",
            coding_a.and_then(|c| c.version.as_deref()),
            coding_b.and_then(|c| c.version.as_deref()),
        )?,
    )?;
    let index = resolve_edition(&state.editions, version)?;
    run(state, Cost::Cheap, move |state| {
        state.editions.list[index].count_use();
        let e = edition(state, index)?;
        let a = find(e, &code_a)?;
        let b = find(e, &code_b)?;
        let outcome = if a == b {
            "equivalent"
        } else if e.edition().subsumes(a, b).stored()? {
            "subsumes"
        } else if e.edition().subsumes(b, a).stored()? {
            "subsumed-by"
        } else {
            "not-subsumed"
        };
        Ok(json!({
            "resourceType": "Parameters",
            "parameter": [{ "name": "outcome", "valueCode": outcome }],
        }))
    })
    .await
}

// ----- $translate ------------------------------------------------------------

/// `ConceptMap/$translate` over SNOMED CT's implicit concept maps
/// (`txmap_snomed::translate`), in the edition the request names.
pub async fn translate(state: Arc<AppState>, v: FhirVersion, call: Request) -> Response {
    respond_text(translate_inner(state, v, call.params).await)
}

async fn translate_inner(
    state: Arc<AppState>,
    v: FhirVersion,
    params: Params,
) -> Result<String, Error> {
    let asked = txmap_snomed::translate::asked(&params)?;
    let index = resolve_edition(&state.editions, asked.version.as_deref())?;
    run(state, Cost::Cheap, move |state| {
        state.editions.list[index].count_use();
        txmap_snomed::translate::translate(edition(state, index)?, v == FhirVersion::R5, &asked)
    })
    .await
}
