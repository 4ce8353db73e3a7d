//! Reloading the served set while clients keep asking: over a real socket,
//! the set is rebuilt from the config 20 times, an edition added and taken
//! away in turn. Every request is answered from one whole set; a file no
//! longer served is unmapped once its last request ends, and anonymous
//! memory returns to its level; a config that cannot be served leaves the
//! set as it was and says why.

#[path = "it/common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use txmap_server::state::Live;

/// One GET over a fresh connection: status code and body.
fn get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (status, body)
}

/// The process's anonymous memory, in bytes.
fn rss_anon() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("RssAnon:")).unwrap();
    line.split_whitespace()
        .nth(1)
        .unwrap()
        .parse::<u64>()
        .unwrap()
        * 1024
}

/// Whether `file` is mapped into this process.
fn mapped(file: &Path) -> bool {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let name = file.canonicalize().unwrap();
    maps.lines().any(|l| l.ends_with(name.to_str().unwrap()))
}

fn write_config(path: &Path, editions: &[&str]) {
    let list: Vec<String> = editions.iter().map(|e| format!("{e:?}")).collect();
    std::fs::write(
        path,
        format!(
            "editions = [{}]\n[snomed]\nload = \"mmap\"\n",
            list.join(", ")
        ),
    )
    .unwrap();
}

#[test]
fn the_served_set_is_reloaded_under_load_and_what_left_is_let_go() {
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "a", 600, 3, 20250131);
    let b_file: PathBuf = common::edition(dir.path(), "b", 600, 4, 20250731);
    let config = dir.path().join("txmap.toml");
    write_config(&config, &["a.txmap"]);
    let state = common::serve(dir.path(), &std::fs::read_to_string(&config).unwrap());
    let a_version = state.editions.list[0].file.names.version_uri.clone();
    let code = state.editions.list[0].edition.sctid(7).unwrap();
    let live = Live::new(state, txmap_server::app::router);

    let (addr, stop_tx, stopped) = common::listen(Arc::clone(&live));
    let reloader = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();

    // Warm: the first requests' allocations are not the reloads'.
    for _ in 0..20 {
        assert_eq!(get(addr, "/health").0, 200);
    }
    let anon_before = rss_anon();
    assert!(!mapped(&b_file));

    // Clients ask of edition a all along, by version and without.
    let stop = Arc::new(AtomicBool::new(false));
    let answered = Arc::new(AtomicUsize::new(0));
    let sct = "http://snomed.info/sct";
    let version = txmap_pages::encode(&a_version);
    let paths = [
        format!("/r4/CodeSystem/$lookup?system={sct}&code={code}&version={version}"),
        format!("/r4/CodeSystem/$lookup?system={sct}&code={code}"),
        format!("/r4/CodeSystem/$subsumes?system={sct}&codeA={code}&codeB={code}"),
    ];
    let clients: Vec<_> = (0..3)
        .map(|i| {
            let (stop, answered, path) =
                (Arc::clone(&stop), Arc::clone(&answered), paths[i].clone());
            let a_version = a_version.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let (status, body) = get(addr, &path);
                    assert_eq!(status, 200, "{path}: {body}");
                    if path.contains("$lookup") {
                        // One set's answer: a's version, whichever set.
                        assert!(body.contains(&a_version), "{path}: {body}");
                    }
                    answered.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    let b_versioned = {
        let b = txmap_store::Edition::open(std::fs::read(&b_file).unwrap()).unwrap();
        let id = b.identity();
        let v = format!(
            "http://snomed.info/xsct/{}/version/{}",
            id.edition_module, id.effective_time
        );
        format!(
            "/r4/CodeSystem/$lookup?system={sct}&code={}&version={}",
            b.sctid(3).unwrap(),
            txmap_pages::encode(&v)
        )
    };
    for round in 0..20 {
        let with_b = round % 2 == 0;
        let editions: &[&str] = if with_b {
            &["a.txmap", "b.txmap"]
        } else {
            &["a.txmap"]
        };
        write_config(&config, editions);
        let generation = reloader
            .block_on(txmap_server::reload(
                Arc::clone(&live),
                Some(config.clone()),
            ))
            .unwrap();
        assert_eq!(generation, round + 2);
        // The new set answers at once: b is there, or is not.
        let (status, body) = get(addr, &b_versioned);
        assert_eq!(
            status,
            if with_b { 200 } else { 404 },
            "round {round}: {body}"
        );
        if with_b {
            assert!(mapped(&b_file), "round {round}: b served but not mapped");
        }
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.join().unwrap();
    }
    assert!(
        answered.load(Ordering::Relaxed) > 60,
        "only {} answers during the reloads",
        answered.load(Ordering::Relaxed)
    );

    // b left with the last reload: unmapped once its last request ended.
    assert_eq!(live.current().editions.list.len(), 1);
    assert!(!mapped(&b_file), "b.txmap is still mapped");
    let anon_after = rss_anon();
    assert!(
        anon_after < anon_before + (24 << 20),
        "anonymous memory grew from {anon_before} to {anon_after} over 20 reloads"
    );
    let status =
        txmap_server::status::status_json(&live.current(), txmap_server::status::View::Public);
    assert_eq!(status["served"]["generation"], 21, "{status}");
    assert_eq!(status["served"]["reloadFailures"], 0);

    // A config that cannot be served: the set stays, and says why.
    write_config(&config, &["a.txmap", "missing.txmap"]);
    let why = reloader
        .block_on(txmap_server::reload(
            Arc::clone(&live),
            Some(config.clone()),
        ))
        .unwrap_err();
    assert!(why.to_string().contains("missing.txmap"), "{why}");
    let (status, _) = get(addr, &paths[0]);
    assert_eq!(status, 200);
    let status =
        txmap_server::status::status_json(&live.current(), txmap_server::status::View::Public);
    assert_eq!(status["served"]["generation"], 21);
    assert_eq!(status["served"]["reloadFailures"], 1);
    assert!(
        status["served"]["lastReloadError"]
            .as_str()
            .unwrap()
            .contains("missing.txmap")
    );
    let metrics = txmap_server::status::metrics_text(&live.current());
    assert!(
        metrics.contains("txmap_reload_failures_total 1"),
        "{metrics}"
    );

    let _ = stop_tx.send(());
    stopped.recv().unwrap();
}
