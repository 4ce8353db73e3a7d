//! Serving new content without a restart: the next served set is built
//! from the config file in full — files opened and verified, packages
//! read, a smoke `$lookup` and `$subsumes` per edition through the router
//! that will serve it — and only then swapped in ([`Live::swap`]). What
//! asks for it: `SIGHUP` ([`on_hangup`]), the admin listener's `POST
//! /admin/reload` ([`crate::admin`]) and so `txmap reload`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use txmap_load::Loader;

use crate::config::Config;
use crate::state::{AppState, Live};
use crate::{editions, packages};

/// Why a reload kept the old set.
#[derive(Debug)]
pub enum ReloadError {
    /// The server runs without a config file (the demo edition).
    NoConfig,
    /// The next set could not be built: the config, a file or a package,
    /// said as a start would say it.
    Build(String),
    /// A file of the next set failed its verification.
    Verification { file: String, why: String },
    /// An edition of the next set did not answer its smoke call.
    Smoke {
        file: String,
        call: String,
        status: u16,
    },
}

impl std::fmt::Display for ReloadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReloadError::NoConfig => {
                f.write_str("there is no config file to reload (the demo edition is served)")
            }
            ReloadError::Build(why) => f.write_str(why),
            ReloadError::Verification { file, why } => write!(f, "{file}: {why}"),
            ReloadError::Smoke { file, call, status } => {
                write!(f, "{file}: the smoke call {call} answered {status}")
            }
        }
    }
}

impl std::error::Error for ReloadError {}

/// `SIGHUP` reloads the served set from the config file.
pub fn on_hangup(live: Arc<Live>, config: Option<PathBuf>) {
    tokio::spawn(async move {
        let Ok(mut hangups) =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup())
        else {
            tracing::warn!("SIGHUP cannot be caught: reload through the admin listener");
            return;
        };
        while hangups.recv().await.is_some() {
            tracing::info!("SIGHUP: reloading the served set");
            let _ = reload(Arc::clone(&live), config.clone()).await;
        }
    });
}

/// Builds the next served set from the config file — every edition,
/// code system file and package the config names now, each file opened,
/// its format checked and its checksums read through, then a `$lookup`
/// and a `$subsumes` answered by each edition — and only then serves it
/// (`Live::swap`). The settings that are not files (`listen`, `[limits]`,
/// `[memory]`, `[http]`, `[admin]`) are the running server's and take a
/// restart. A failure leaves the old set serving, is logged, and is what
/// `/status` says until the next reload succeeds. One reload at a time.
pub async fn reload(live: Arc<Live>, config: Option<PathBuf>) -> Result<u64, ReloadError> {
    let _one = live.reloading.lock().await;
    let started = Instant::now();
    let built = async {
        let Some(path) = config else {
            return Err(ReloadError::NoConfig);
        };
        let current = live.current();
        let next = tokio::task::spawn_blocking(move || next_set(&path, &current))
            .await
            .map_err(|e| ReloadError::Build(format!("building the next set: {e}")))??;
        let next = Arc::new(next);
        let router = live.router_for(Arc::clone(&next));
        smoke(&next, &router).await?;
        Ok((next, router))
    }
    .await;
    match built {
        Ok((next, router)) => {
            let (editions, packages) = (next.editions.list.len(), next.packages.list.len());
            let generation = live.swap(next, router);
            tracing::info!(
                "reloaded in {:.0} ms: served set {generation}, {editions} editions, {packages} packages",
                started.elapsed().as_secs_f64() * 1e3
            );
            Ok(generation)
        }
        Err(why) => {
            tracing::warn!("reload failed, the served set is unchanged: {why}");
            live.failed(why.to_string());
            Err(why)
        }
    }
}

/// The files and packages `path` names now, opened and verified, with
/// everything else `current` has.
fn next_set(path: &Path, current: &AppState) -> Result<AppState, ReloadError> {
    let build = |e: &dyn std::fmt::Display| ReloadError::Build(e.to_string());
    let config = Config::load(path).map_err(|e| build(&e))?;
    let base = path.parent().map(Path::to_owned).unwrap_or_default();
    let files = editions::edition_files(&config, &base).map_err(|e| build(&e))?;
    let editions =
        editions::load_editions(&config, &files, &Loader::new()).map_err(|e| build(&e))?;
    // The stored resources as they are now (a write waits for the
    // reload: they take the same lock).
    let packages = packages::FhirPackages::load(
        &config,
        &base,
        &editions,
        current.limits.ecl_max_work,
        current.stored.as_deref(),
    )
    .map_err(|e| build(&e))?;
    editions::verify(&editions);
    // Large files are verified in the background: the set waits for them
    // (a reload serves nothing unverified that a start would not).
    loop {
        if let Some(f) = editions.files().find(|f| f.serving.failure().is_some()) {
            return Err(ReloadError::Verification {
                file: f.names.file_name.clone(),
                why: f.serving.failure().unwrap_or_default().to_owned(),
            });
        }
        if editions.files().all(|f| f.serving.is_serving()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(current.with_files(Arc::new(editions), packages))
}

/// A `$lookup` and a `$subsumes` of one concept answered by each edition
/// of `next`, through the router that will serve it.
async fn smoke(next: &AppState, app: &axum::Router) -> Result<(), ReloadError> {
    use tower::ServiceExt;
    for e in &next.editions.list {
        let Some(code) =
            (0..e.edition.concept_count().min(1)).find_map(|o| e.edition.sctid(o).ok())
        else {
            continue;
        };
        let version = txmap_pages::encode(&e.file.names.version_uri);
        for uri in [
            format!(
                "/r4/CodeSystem/$lookup?system=http://snomed.info/sct&version={version}&code={code}"
            ),
            format!(
                "/r4/CodeSystem/$subsumes?system=http://snomed.info/sct&version={version}&codeA={code}&codeB={code}"
            ),
        ] {
            let request = axum::http::Request::builder()
                .uri(&uri)
                .body(axum::body::Body::empty())
                .map_err(|e| ReloadError::Build(format!("{uri}: {e}")))?;
            let Ok(answer) = app.clone().oneshot(request).await;
            if !answer.status().is_success() {
                return Err(ReloadError::Smoke {
                    file: e.file.names.file_name.clone(),
                    call: uri,
                    status: answer.status().as_u16(),
                });
            }
        }
    }
    Ok(())
}
