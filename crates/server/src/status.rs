//! `/status` (JSON) and `/metrics` (Prometheus text): what the process
//! holds and how it is loaded. Memory is an output: anonymous and
//! file-backed memory, page faults, and per edition whether it is mapped and
//! how much of it is resident.

use std::fmt::Write as _;

use serde_json::{Value, json};
use txmap_memory::{Limit, ProcessMemory};

use crate::editions::ServedFile;
use crate::state::AppState;

/// A snapshot of everything `/status` and `/metrics` report.
#[derive(Debug)]
pub struct Snapshot {
    pub memory: ProcessMemory,
    pub limit: Option<Limit>,
    pub measured: Option<txmap_memory::Measured>,
    pub resident: Vec<Option<u64>>,
}

pub fn snapshot(state: &AppState) -> Snapshot {
    let ranges: Vec<(usize, usize)> = state
        .editions
        .list
        .iter()
        .map(|e| e.address_range())
        .collect();
    Snapshot {
        resident: txmap_memory::resident_bytes(&state.root, &ranges),
        ..process(state)
    }
}

/// [`snapshot`] without each edition's pages in this process's page
/// tables (`resident`, empty), which take a walk of
/// `/proc/self/smaps`: what the status page shows.
fn process(state: &AppState) -> Snapshot {
    let memory = txmap_memory::process_memory(&state.root);
    let limit = txmap_memory::effective_limit(&state.root, state.configured_limit);
    let measured = txmap_memory::measured(&memory, state.editions.any_mapped());
    Snapshot {
        memory,
        limit,
        measured,
        resident: Vec::new(),
    }
}

/// What `/status` says of any served file, edition or code system: where
/// and how it was loaded, what of it is resident, its prewarm and its
/// verification.
fn file_json(f: &ServedFile, resident: Option<u64>, view: View) -> serde_json::Map<String, Value> {
    let prewarm = f.prewarm.as_ref().map(|p| {
        json!({
            "done": p.is_done(),
            "bytesRead": p.bytes_read(),
            "total": p.total(),
            "error": p.error(),
            "seconds": p.elapsed().map(|d| d.as_secs_f64()),
        })
    });
    [
        (
            "file",
            match view {
                View::Admin => json!(f.path),
                View::Public => json!(f.names.file_name),
            },
        ),
        ("versionUri", json!(f.names.version_uri)),
        ("modeAsked", json!(f.asked.to_string())),
        ("mode", json!(f.obtained.to_string())),
        ("mapped", json!(f.mapped)),
        ("size", json!(f.size)),
        ("residentBytes", json!(resident)),
        ("openMs", json!(f.open_time.as_secs_f64() * 1e3)),
        ("fallback", json!(f.fallback)),
        ("prewarm", json!(prewarm)),
        (
            "verification",
            json!({
                "state": f.serving.state().as_str(),
                "checkedBytes": f.serving.checked(),
                "failure": f.serving.failure(),
            }),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect()
}

/// Whom `/status` answers: anyone (files by their name), or an operator
/// with the admin token (`[http] admin_token`: files by their path).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    Public,
    Admin,
}

pub fn status_json(state: &AppState, view: View) -> Value {
    let s = snapshot(state);
    let editions: Vec<Value> = state
        .editions
        .list
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut v = file_json(
                &e.file,
                // Page cache holding the file (mincore) for a mapping, the
                // whole buffer for a read edition.
                e.edition.bytes().resident_bytes(),
                view,
            );
            v.extend([
                ("editionUri".into(), json!(e.file.names.edition_uri)),
                (
                    "default".into(),
                    json!(state.editions.default_index() == Some(i)),
                ),
                // Pages of the edition in this process's page tables.
                (
                    "processRssBytes".into(),
                    json!(s.resident.get(i).copied().flatten()),
                ),
                (
                    "uses".into(),
                    json!(state.packages.edition(i).map(|c| c.uses())),
                ),
                // The scope sets kept for text searches: anonymous memory.
                (
                    "searchScopes".into(),
                    match state.packages.edition(i).map(|c| c.scopes().usage()) {
                        Some((kept, bytes)) => json!({ "kept": kept, "bytes": bytes }),
                        None => Value::Null,
                    },
                ),
                // The commonest words' bitmaps built by searches: the
                // same.
                (
                    "searchWordBytes".into(),
                    json!(e.edition.kept_search_bytes()),
                ),
            ]);
            Value::Object(v)
        })
        .collect();
    let code_systems: Vec<Value> = state
        .editions
        .code_systems
        .iter()
        .map(|c| {
            let mut v = file_json(&c.file, c.code_system.bytes().resident_bytes(), view);
            v.extend([
                ("url".into(), json!(c.file.names.edition_uri)),
                ("concepts".into(), json!(c.code_system.len())),
            ]);
            Value::Object(v)
        })
        .collect();
    let m = &s.memory;
    let reloads = state
        .reloads
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "uptimeSeconds": state.started.elapsed().as_secs_f64(),
        // Which served set answers, since when, and how the reloads went.
        "served": {
            "generation": reloads.generation,
            "builtSecondsAgo": reloads.built.elapsed().map(|d| d.as_secs_f64()).unwrap_or(0.0),
            "reloadFailures": reloads.failures,
            "lastReloadError": reloads.last_error,
            // The resources written through the API, served now (`null`:
            // the server stores none).
            "storedResources": state.stored.as_ref().map(|_| state.packages.stored().map_or(0, |p| p.len())),
        },
        "editions": editions,
        "codeSystems": code_systems,
        "memory": {
            "vmRss": m.vm_rss,
            "rssAnon": m.rss_anon,
            "rssFile": m.rss_file,
            "rssShmem": m.rss_shmem,
            "vmHwm": m.vm_hwm,
            "rss": m.rss,
            "pss": m.pss,
            "anonymous": m.anonymous,
            "majorFaults": m.major_faults,
            "minorFaults": m.minor_faults,
            "measured": s.measured.as_ref().map(|x| x.bytes),
            "measuredExcludesFileBacked": s.measured.as_ref().map(|x| x.excludes_file_backed),
            "limit": s.limit.as_ref().map(|l| l.bytes),
            "limitSource": s.limit.as_ref().map(|l| format!("{:?}", l.source)),
        },
        "guard": {
            "refuseAt": state.guard.config().refuse_at,
            "abortAt": state.guard.config().abort_at,
            "refused": state.guard.refused(),
            "aborted": state.guard.aborted(),
            "reservedBytes": state.guard.reserved(),
        },
    })
}

/// The status page's figures ([`txmap_pages::status`]): what
/// [`status_json`] reports, with each file's residency per section.
pub fn status_page(
    state: &AppState,
    chrome: txmap_pages::Chrome,
) -> txmap_pages::status::StatusPage {
    use txmap_pages::status::{FileRow, MemoryRow, SectionRow, StatusPage};
    let s = process(state);
    let row = |f: &ServedFile, kind: String, resident: Option<u64>| FileRow {
        kind,
        file: f.names.file_name.clone(),
        version_uri: f.names.version_uri.clone(),
        mode_asked: f.asked.to_string(),
        mode: f.obtained.to_string(),
        mapped: f.mapped,
        size: f.size,
        resident,
        prewarm: match &f.prewarm {
            None => String::new(),
            Some(p) if p.is_done() => "done".to_owned(),
            Some(p) => format!(
                "{} of {}",
                txmap_pages::status::bytes(&p.bytes_read()),
                txmap_pages::status::bytes(&p.total())
            ),
        },
        uses: None,
        state: match f.serving.failure() {
            Some(why) => format!("{}: {why}", f.serving.state().as_str()),
            None => f.serving.state().as_str().to_owned(),
        },
        default: false,
        sections: Vec::new(),
        browse: None,
    };
    let mut files = Vec::new();
    for (i, e) in state.editions.list.iter().enumerate() {
        let bytes = e.edition.bytes();
        // One `mincore` for the file and its sections.
        let residency = bytes.residency();
        let resident = match &residency {
            Some(res) => Some(res.bytes_in(0..bytes.len())),
            None => bytes.resident_bytes(),
        };
        let mut r = row(&e.file, "SNOMED CT edition".to_owned(), resident);
        r.default = state.editions.default_index() == Some(i);
        r.uses = state.packages.edition(i).map(|c| c.uses());
        r.browse = Some(txmap_pages::query(
            "/browse",
            &[(
                "version",
                if r.default {
                    ""
                } else {
                    &e.file.names.version_uri
                },
            )],
        ));
        r.sections = e
            .edition
            .sections()
            .into_iter()
            .map(|sec| {
                let range = sec.offset as usize..(sec.offset + sec.len) as usize;
                SectionRow {
                    resident: match &residency {
                        Some(res) => res.bytes_in(range),
                        // Read into memory: all of it.
                        None if !e.file.mapped => sec.len,
                        None => 0,
                    },
                    name: sec.name,
                    size: sec.len,
                }
            })
            .collect();
        files.push(r);
    }
    for c in &state.editions.code_systems {
        let kind = match c.code_system.meta("name") {
            "" => c.code_system.meta("url").to_owned(),
            name => name.to_owned(),
        };
        files.push(row(&c.file, kind, c.code_system.bytes().resident_bytes()));
    }
    let m = &s.memory;
    StatusPage {
        chrome,
        uptime_seconds: state.started.elapsed().as_secs(),
        memory: MemoryRow {
            rss: m.vm_rss,
            anonymous: m.rss_anon,
            file_backed: m.rss_file,
            measured: s.measured.as_ref().map(|x| x.bytes),
            measured_excludes_file: s.measured.as_ref().is_some_and(|x| x.excludes_file_backed),
            limit: s.limit.as_ref().map(|l| l.bytes),
            refuse_at: state.guard.config().refuse_at,
            abort_at: state.guard.config().abort_at,
            refused: state.guard.refused(),
            aborted: state.guard.aborted(),
            reserved: state.guard.reserved(),
            major_faults: m.major_faults,
            minor_faults: m.minor_faults,
        },
        files,
    }
}

/// Prometheus text exposition format, version 0.0.4.
pub fn metrics_text(state: &AppState) -> String {
    let s = snapshot(state);
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, value: Option<u64>| {
        if let Some(v) = value {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
        }
    };
    let m = &s.memory;
    gauge(
        "txmap_memory_rss_bytes",
        "Resident set size (VmRSS).",
        m.vm_rss,
    );
    gauge(
        "txmap_memory_rss_anon_bytes",
        "Anonymous resident memory (RssAnon): private to this process.",
        m.rss_anon,
    );
    gauge(
        "txmap_memory_rss_file_bytes",
        "File-backed resident memory (RssFile): mapped editions, shared page cache.",
        m.rss_file,
    );
    gauge(
        "txmap_memory_rss_shmem_bytes",
        "Shared memory resident (RssShmem).",
        m.rss_shmem,
    );
    gauge(
        "txmap_memory_peak_rss_bytes",
        "Peak resident set size (VmHWM).",
        m.vm_hwm,
    );
    gauge(
        "txmap_memory_pss_bytes",
        "Proportional set size (smaps_rollup Pss).",
        m.pss,
    );
    gauge(
        "txmap_memory_measured_bytes",
        "What the memory guard judges: RSS minus file-backed pages once an edition is mapped.",
        s.measured.as_ref().map(|x| x.bytes),
    );
    gauge(
        "txmap_memory_limit_bytes",
        "Effective memory limit: smallest of cgroup, configured and physical.",
        s.limit.as_ref().map(|l| l.bytes),
    );
    gauge(
        "txmap_guard_reserved_bytes",
        "Memory set aside for large request bodies being parsed and answered.",
        Some(state.guard.reserved()),
    );
    let mut counter = |name: &str, help: &str, value: Option<u64>| {
        if let Some(v) = value {
            let _ = writeln!(
                out,
                "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}"
            );
        }
    };
    counter(
        "txmap_page_faults_major_total",
        "Major page faults (ru_majflt).",
        m.major_faults,
    );
    counter(
        "txmap_page_faults_minor_total",
        "Minor page faults (ru_minflt).",
        m.minor_faults,
    );
    counter(
        "txmap_guard_refused_total",
        "Requests refused with 503 by the memory guard.",
        Some(state.guard.refused()),
    );
    counter(
        "txmap_guard_aborted_total",
        "Operations aborted with 422 by the memory guard.",
        Some(state.guard.aborted()),
    );

    let reloads = state
        .reloads
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    counter(
        "txmap_served_generation",
        "The served set: 1 as started, one more per reload.",
        Some(reloads.generation),
    );
    counter(
        "txmap_reload_failures_total",
        "Reloads that failed (the served set was kept).",
        Some(reloads.failures),
    );
    counter(
        "txmap_store_errors_total",
        "Requests answered 500 because an edition's store could not be read.",
        Some(
            state
                .store_errors
                .load(std::sync::atomic::Ordering::Relaxed),
        ),
    );

    let families: [(&str, &str, &str); 8] = [
        ("txmap_edition_size_bytes", "gauge", "Edition file size."),
        (
            "txmap_edition_resident_bytes",
            "gauge",
            "Bytes of the edition in memory: page cache for a mapped edition (mincore), the buffer for a read one.",
        ),
        (
            "txmap_edition_process_rss_bytes",
            "gauge",
            "Bytes of the edition in this process's page tables (smaps Rss).",
        ),
        (
            "txmap_edition_mapped",
            "gauge",
            "1 if the edition's bytes are a memory mapping.",
        ),
        (
            "txmap_edition_uses_total",
            "counter",
            "Calls answered from the edition.",
        ),
        (
            "txmap_edition_serving",
            "gauge",
            "1 if the edition answers (verified, or trusted unverified); 0 while it is verified or after its file failed verification.",
        ),
        (
            "txmap_edition_search_scope_bytes",
            "gauge",
            "Anonymous memory of the scope sets kept for text searches in the edition.",
        ),
        (
            "txmap_edition_search_word_bytes",
            "gauge",
            "Anonymous memory of the commonest words' bitmaps kept for text searches in the edition.",
        ),
    ];
    for (name, kind, help) in families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for (i, e) in state.editions.list.iter().enumerate() {
            let value = match name {
                "txmap_edition_size_bytes" => Some(e.file.size),
                "txmap_edition_resident_bytes" => e.edition.bytes().resident_bytes(),
                "txmap_edition_process_rss_bytes" => s.resident.get(i).copied().flatten(),
                "txmap_edition_mapped" => Some(u64::from(e.file.mapped)),
                "txmap_edition_serving" => Some(u64::from(e.file.serving.is_serving())),
                "txmap_edition_search_scope_bytes" => state
                    .packages
                    .edition(i)
                    .map(|c| c.scopes().usage().1 as u64),
                "txmap_edition_search_word_bytes" => Some(e.edition.kept_search_bytes() as u64),
                _ => state.packages.edition(i).map(|c| c.uses()),
            };
            if let Some(v) = value {
                let _ = writeln!(
                    out,
                    "{name}{{version=\"{}\",mode=\"{}\"}} {v}",
                    escape(&e.file.names.version_uri),
                    e.file.obtained
                );
            }
        }
    }
    // The compiled code system files (LOINC, RxNorm), by `url|version`.
    let families: [(&str, &str); 4] = [
        ("txmap_codesystem_size_bytes", "Code system file size."),
        (
            "txmap_codesystem_resident_bytes",
            "Bytes of the code system file in memory: page cache for a mapped file (mincore), the buffer for a read one.",
        ),
        (
            "txmap_codesystem_mapped",
            "1 if the code system file's bytes are a memory mapping.",
        ),
        (
            "txmap_codesystem_serving",
            "1 if the code system file answers (verified, or trusted unverified).",
        ),
    ];
    for (name, help) in families {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
        for c in &state.editions.code_systems {
            let value = match name {
                "txmap_codesystem_size_bytes" => Some(c.file.size),
                "txmap_codesystem_resident_bytes" => c.code_system.bytes().resident_bytes(),
                "txmap_codesystem_mapped" => Some(u64::from(c.file.mapped)),
                _ => Some(u64::from(c.file.serving.is_serving())),
            };
            if let Some(v) = value {
                let _ = writeln!(
                    out,
                    "{name}{{version=\"{}\",mode=\"{}\"}} {v}",
                    escape(&c.file.names.version_uri),
                    c.file.obtained
                );
            }
        }
    }
    out
}

/// Escapes a Prometheus label value.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
