//! The server's startup and diagnostics, in process and over a real port,
//! on small synthetic editions the tests make.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use tower::ServiceExt;
use txmap_load::{LoadMode, Loader};
use txmap_memory::{Guard, GuardConfig, Limit, LimitSource, ProcessMemory, Root};
use txmap_server::app::{AppState, router};
use txmap_server::{ServeOptions, prepare};

/// A small edition file, made once per test in `dir`; each seed a
/// version of its own (a server refuses two files of one version).
fn edition(dir: &Path, name: &str, seed: u64) -> PathBuf {
    common::edition(dir, name, 800, seed, 20250100 + seed as u32)
}

fn config(dir: &Path, text: &str) -> ServeOptions {
    let path = dir.join("txmap.toml");
    std::fs::write(&path, text).unwrap();
    ServeOptions {
        config: Some(path),
        data_dir: dir.join("data"),
        ..Default::default()
    }
}

/// Captures what the server logs while `f` runs.
fn logged<T>(f: impl FnOnce() -> T) -> (T, String) {
    #[derive(Clone, Default)]
    struct Buf(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Buf {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let buf = Buf::default();
    let writer = buf.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let out = tracing::subscriber::with_default(subscriber, f);
    let text = String::from_utf8(buf.0.lock().unwrap().clone()).unwrap();
    (out, text)
}

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, axum::http::HeaderMap, String) {
    let r = app
        .clone()
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = r.status();
    let headers = r.headers().clone();
    let body = axum::body::to_bytes(r.into_body(), 1 << 24).await.unwrap();
    (status, headers, String::from_utf8(body.to_vec()).unwrap())
}

#[test]
fn modes_follow_the_config_and_mapped_means_mapped() {
    let dir = tempfile::tempdir().unwrap();
    let a = edition(dir.path(), "a", 1);
    let b = edition(dir.path(), "b", 2);
    let c = edition(dir.path(), "c", 3);
    let _ = (&b, &c);
    let options = config(
        dir.path(),
        r#"
        editions = ["a.txmap", "b.txmap", "c.txmap"]
        default_edition = "b"
        [snomed]
        load = "mmap"
        prewarm = ["c"]
        read = ["a.txmap", "nothing-here"]
        "#,
    );
    let (prepared, log) = logged(|| prepare(&options, &Loader::new()).unwrap());
    let list = &prepared.state.editions.list;
    let modes: Vec<(LoadMode, bool)> = list
        .iter()
        .map(|e| (e.file.obtained, e.file.mapped))
        .collect();
    assert_eq!(
        modes,
        vec![
            (LoadMode::Read, false),
            (LoadMode::Mmap, true),
            (LoadMode::Prewarm, true)
        ]
    );
    assert_eq!(prepared.state.editions.default_index(), Some(1));
    // A mapped edition is in /proc/self/maps; a read one is not.
    assert!(txmap_memory::is_mapped(&Root::system(), &list[1].file.path));
    assert!(!txmap_memory::is_mapped(&Root::system(), &a));
    // One startup line per edition, and the warning for the stray entry.
    assert_eq!(
        log.matches("asked mmap, loaded mmap (mapped)").count(),
        1,
        "{log}"
    );
    assert_eq!(log.matches("asked read, loaded read").count(), 1, "{log}");
    assert!(
        log.contains("read entry \"nothing-here\" matches no loaded edition"),
        "{log}"
    );
    let p = list[2].file.prewarm.as_ref().unwrap();
    p.wait();
    assert_eq!(p.bytes_read(), list[2].file.size);
}

#[test]
fn mapped_and_read_loads_answer_identically() {
    let dir = tempfile::tempdir().unwrap();
    let file = edition(dir.path(), "e", 9);
    let read = txmap_store::Edition::open(Loader::new().load(&file, LoadMode::Read).unwrap().bytes)
        .unwrap();
    let mapped =
        txmap_store::Edition::open(Loader::new().load(&file, LoadMode::Mmap).unwrap().bytes)
            .unwrap();
    assert!(!read.bytes().is_mapped() && mapped.bytes().is_mapped());
    for s in read.sections() {
        let (a, b) = (read.bytes().as_ref(), mapped.bytes().as_ref());
        let r = s.offset as usize..(s.offset + s.len) as usize;
        assert!(a[r.clone()] == b[r], "section {} differs", s.name);
    }
    for o in 0..read.concept_count() {
        assert_eq!(read.concept_at(o).unwrap(), mapped.concept_at(o).unwrap());
        assert_eq!(
            read.descriptions(o).unwrap(),
            mapped.descriptions(o).unwrap()
        );
        assert_eq!(
            read.parents(o).unwrap().to_vec(),
            mapped.parents(o).unwrap().to_vec()
        );
        assert_eq!(
            read.ancestors(o).unwrap().to_vec(),
            mapped.ancestors(o).unwrap().to_vec()
        );
        assert_eq!(read.attributes(o).unwrap(), mapped.attributes(o).unwrap());
        assert_eq!(
            read.preferred_term(o).unwrap(),
            mapped.preferred_term(o).unwrap()
        );
    }
}

#[test]
fn a_failed_mapping_falls_back_to_read_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    edition(dir.path(), "e", 4);
    let options = config(
        dir.path(),
        "editions = [\"e.txmap\"]\n[snomed]\nload = \"mmap\"\n",
    );
    let loader = Loader::new().simulate_map_failure("mmap is not available here");
    let (prepared, log) = logged(|| prepare(&options, &loader).unwrap());
    let e = &prepared.state.editions.list[0];
    assert!(!e.file.mapped);
    assert_eq!(e.file.obtained, LoadMode::Read);
    assert_eq!(e.file.asked, LoadMode::Mmap);
    assert!(
        e.file
            .fallback
            .as_deref()
            .unwrap()
            .contains("mmap is not available here")
    );
    assert!(
        log.contains("WARN") && log.contains("could not map (mmap is not available here)"),
        "{log}"
    );
    assert!(!txmap_memory::is_mapped(&Root::system(), &e.file.path));
}

#[test]
fn unusable_configs_stop_startup_naming_file_and_key() {
    let dir = tempfile::tempdir().unwrap();
    let err = prepare(
        &config(dir.path(), "editions = [\"missing.txmap\"]\n"),
        &Loader::new(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("missing.txmap"), "{err}");
    let err = prepare(
        &config(dir.path(), "[snomed]\nloads = \"mmap\"\n"),
        &Loader::new(),
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("txmap.toml") && text.contains("loads"),
        "{text}"
    );
    std::fs::write(dir.path().join("junk.txmap"), b"not an edition").unwrap();
    let err = prepare(
        &config(dir.path(), "editions = [\"junk.txmap\"]\n"),
        &Loader::new(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("junk.txmap"), "{err}");
}

/// The config mistakes a server cannot serve well under stop the start
/// with one line naming the file or key; the one it can serve on under
/// (a file named twice) is loaded once, with a warning.
#[test]
fn config_mistakes_are_refused_not_served() {
    let dir = tempfile::tempdir().unwrap();
    let a = edition(dir.path(), "a", 1);
    // The same version in two files.
    std::fs::copy(&a, dir.path().join("copy.txmap")).unwrap();
    let refused = |text: &str| {
        prepare(&config(dir.path(), text), &Loader::new())
            .map(|_| ())
            .unwrap_err()
            .to_string()
    };
    let e = refused("editions = [\"a.txmap\", \"copy.txmap\"]\n");
    assert!(
        e.contains("a.txmap") && e.contains("copy.txmap") && e.contains("same version"),
        "{e}"
    );
    // A directory of no edition file.
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    let e = refused("editions = [\"empty\"]\n");
    assert!(e.contains("empty") && e.contains("no *.txmap"), "{e}");
    // Limits no request could live under.
    for (text, key) in [
        ("[memory]\nlimit = \"1MiB\"\n", "limit"),
        ("[memory]\nlimit = \"0\"\n", "limit"),
        ("[limits]\nmax_expansion = 0\n", "max_expansion"),
    ] {
        let e = refused(&format!("editions = [\"a.txmap\"]\n{text}"));
        assert!(e.contains(key), "{text}: {e}");
    }
    // A package resource that is not JSON.
    let tgz = txmap_packages::pack(&[
        (
            "package/package.json",
            br#"{"name": "broken", "version": "1.0.0"}"#,
        ),
        (
            "package/ValueSet-x.json",
            br#"{"resourceType": "ValueSet", "url": "#,
        ),
    ])
    .unwrap();
    std::fs::write(dir.path().join("broken.tgz"), tgz).unwrap();
    let e = refused("packages = [\"broken.tgz\"]\n");
    assert!(
        e.contains("ValueSet-x.json") && e.contains("not JSON"),
        "{e}"
    );
    // The same file named twice (as a file and in its directory): once.
    std::fs::remove_file(dir.path().join("copy.txmap")).unwrap();
    let sub = dir.path().join("eds");
    std::fs::create_dir(&sub).unwrap();
    std::fs::rename(&a, sub.join("a.txmap")).unwrap();
    let (prepared, log) = logged(|| {
        prepare(
            &config(dir.path(), "editions = [\"eds\", \"eds/a.txmap\"]\n"),
            &Loader::new(),
        )
        .unwrap()
    });
    assert_eq!(prepared.state.editions.list.len(), 1);
    assert!(log.contains("named more than once"), "{log}");
}

#[tokio::test]
async fn status_and_metrics_report_editions_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    edition(dir.path(), "e", 5);
    let options = config(
        dir.path(),
        "editions = [\"e.txmap\"]\n[snomed]\nload = \"mmap\"\n",
    );
    let prepared = prepare(&options, &Loader::new()).unwrap();
    let e = &prepared.state.editions.list[0];
    let (size, version) = (e.file.size, e.file.names.version_uri.clone());
    let app = router(prepared.state.clone());

    let (status, _, body) = get(&app, "/health").await;
    assert_eq!(
        (status, body.as_str()),
        (StatusCode::OK, "{\"status\":\"ok\"}")
    );

    let (status, _, body) = get(&app, "/status").await;
    assert_eq!(status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let ed = &v["editions"][0];
    assert_eq!(ed["mode"], "mmap");
    assert_eq!(ed["mapped"], true);
    assert_eq!(ed["size"], size);
    assert_eq!(ed["versionUri"], version.as_str());
    assert_eq!(ed["default"], true);
    // Just written, so the whole file is in the page cache; the process has
    // mapped at most all of it.
    assert_eq!(ed["residentBytes"], size);
    assert!(ed["processRssBytes"].as_u64().unwrap() <= size.div_ceil(4096) * 4096);
    let m = &v["memory"];
    assert!(m["vmRss"].as_u64().unwrap() > 0);
    assert!(m["rssFile"].as_u64().is_some());
    assert_eq!(m["measuredExcludesFileBacked"], true);
    assert!(m["limit"].as_u64().unwrap() > 0);

    let (status, headers, body) = get(&app, "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain")
    );
    for name in [
        "txmap_memory_rss_bytes",
        "txmap_memory_rss_anon_bytes",
        "txmap_memory_rss_file_bytes",
        "txmap_memory_measured_bytes",
        "txmap_page_faults_minor_total",
        "txmap_guard_refused_total 0",
    ] {
        assert!(body.contains(name), "{name} missing from /metrics");
    }
    let line = format!("txmap_edition_size_bytes{{version=\"{version}\",mode=\"mmap\"}} {size}");
    assert!(body.contains(&line), "{line} missing:\n{body}");
    assert!(body.contains(&format!(
        "txmap_edition_mapped{{version=\"{version}\",mode=\"mmap\"}} 1"
    )));

    let (status, _, body) = get(&app, "/r4/nothing").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("\"resourceType\":\"OperationOutcome\""));
}

/// A server on a small edition whose memory guard sees `anonymous` bytes
/// of anonymous memory against a 1 GB limit.
fn with_memory(anonymous: u64) -> Arc<AppState> {
    let dir = tempfile::tempdir().unwrap();
    edition(dir.path(), "e", 6);
    let options = config(dir.path(), "editions = [\"e.txmap\"]\n");
    let prepared = prepare(&options, &Loader::new()).unwrap();
    let state = Arc::into_inner(prepared.state).unwrap();
    let limit = Limit {
        bytes: 1_000_000_000,
        source: LimitSource::Configured,
    };
    let guard = Guard::with_reader(GuardConfig::default(), Some(limit), false, move || {
        Some(ProcessMemory {
            vm_rss: Some(anonymous),
            rss_anon: Some(anonymous),
            rss_file: Some(0),
            ..Default::default()
        })
    });
    Arc::new(AppState {
        guard: Arc::new(guard),
        started: Instant::now(),
        ..state
    })
}

/// A request's watch says stop once its handler is gone (the client
/// closed the connection, or its time ran out) and once shutdown's grace
/// period is over; the engine's loops then end the work.
#[test]
fn work_stops_when_nobody_waits_for_it() {
    use txmap_server::fhir::work::{CancelOnDrop, GuardWatch};
    use txmap_terminology::request::Watch;
    let state = with_memory(1_000_000);
    let watch = Arc::new(GuardWatch::new(Arc::clone(&state)));
    let handler = CancelOnDrop(Arc::clone(&watch));
    assert!(watch.check().is_ok());
    drop(handler);
    let why = watch.check().unwrap_err();
    assert!(why.contains("client is gone"), "{why}");

    let other = GuardWatch::new(Arc::clone(&state));
    assert!(other.check().is_ok());
    state
        .stopping
        .store(true, std::sync::atomic::Ordering::Relaxed);
    assert!(other.check().unwrap_err().contains("shutting down"));
    // Through a request: the engine's check is a 422 too-costly.
    let mut req = txmap_terminology::Request::from_pairs(Vec::new());
    req.watch = Some(Arc::new(other));
    assert_eq!(req.check().unwrap_err().status(), 422);
}

#[tokio::test]
async fn the_guard_refuses_new_requests_but_not_diagnostics() {
    // 900 MB anonymous out of a 1 GB limit: above refuse_at (0.85).
    let state = with_memory(900_000_000);
    let app = router(state.clone());
    let (status, headers, body) = get(&app, "/r4/CodeSystem/$lookup").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(headers["retry-after"], "5");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["resourceType"], "OperationOutcome");
    assert_eq!(v["issue"][0]["code"], "transient");
    assert_eq!(get(&app, "/health").await.0, StatusCode::OK);
    let (_, _, metrics) = get(&app, "/metrics").await;
    assert!(metrics.contains("txmap_guard_refused_total 1"), "{metrics}");
}

/// A large body reserves what parsing it will take before the work
/// starts: with 400 MB of a 1 GB limit in use and 200 MB reserved by
/// another request, a 2 MB body (128 MB more: 728 MB) fits under
/// `refuse_at` (850 MB), a 4 MB one (256 MB more: 856 MB) does not.
#[tokio::test]
async fn a_large_body_reserves_memory_before_it_is_parsed() {
    let state = with_memory(400_000_000);
    // A Parameters resource padded to `len` bytes.
    let body = |len: usize| {
        let mut b = String::from(
            "{\"resourceType\":\"Parameters\",\"parameter\":[{\"name\":\"system\",\"valueUri\":\"http://snomed.info/sct\"},{\"name\":\"code\",\"valueCode\":\"138875005\"}]",
        );
        b.push_str(&" ".repeat(len - b.len() - 1));
        b.push('}');
        b
    };
    let post = |len: usize| {
        Request::post("/r4/CodeSystem/$lookup")
            .header("content-type", "application/fhir+json")
            .body(Body::from(body(len)))
            .unwrap()
    };
    let app = router(state.clone());
    let held = state.guard.reserve(200_000_000).unwrap();
    let r = app.clone().oneshot(post(2_000_000)).await.unwrap();
    assert_ne!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    let r = app.clone().oneshot(post(4_000_000)).await.unwrap();
    assert_eq!(r.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(r.headers()["retry-after"], "5");
    let text = axum::body::to_bytes(r.into_body(), 1 << 20).await.unwrap();
    let text = String::from_utf8_lossy(&text);
    assert!(text.contains("4000000-byte body"), "{text}");
    drop(held);
    // Every reservation is returned once its answer is sent.
    assert_eq!(state.guard.reserved(), 0);
}

#[tokio::test]
async fn reuse_port_lets_two_listeners_share_a_port() {
    let first = txmap_server::bind("127.0.0.1:0", true).unwrap();
    let addr = first.local_addr().unwrap().to_string();
    let second = txmap_server::bind(&addr, true).unwrap();
    assert_eq!(second.local_addr().unwrap().to_string(), addr);
    assert!(txmap_server::bind(&addr, false).is_err());

    // And a real request over the port.
    let dir = tempfile::tempdir().unwrap();
    edition(dir.path(), "e", 7);
    let prepared = prepare(
        &config(dir.path(), "editions = [\"e.txmap\"]\n"),
        &Loader::new(),
    )
    .unwrap();
    let listener = txmap_server::bind("127.0.0.1:0", false).unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router(prepared.state)).await });
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).await.unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(response.ends_with("{\"status\":\"ok\"}"), "{response}");

    // FHIR operations over the port: a GET $lookup, and a POSTed $expand
    // of an ECL value set.
    let send = |request: String| async move {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).await.unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap();
        (
            head.to_owned(),
            serde_json::from_str::<serde_json::Value>(body).unwrap(),
        )
    };
    let (head, v) = send(
        "GET /r4/CodeSystem/$lookup?system=http://snomed.info/sct&code=138875005 HTTP/1.1\r\n\
         Host: x\r\nConnection: close\r\n\r\n"
            .to_owned(),
    )
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(head.contains("application/fhir+json"), "{head}");
    assert_eq!(v["resourceType"], "Parameters");
    let body = serde_json::json!({
        "resourceType": "Parameters",
        "parameter": [
            { "name": "url", "valueUri": "http://snomed.info/sct?fhir_vs=ecl/<! 138875005" },
            { "name": "count", "valueInteger": 3 },
        ],
    })
    .to_string();
    let (head, v) = send(format!(
        "POST /r5/ValueSet/$expand HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\
         Content-Type: application/fhir+json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    ))
    .await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(v["expansion"]["total"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(
        v["expansion"]["contains"].as_array().unwrap().len(),
        3,
        "{v}"
    );
}

/// `prewarm_hot` reads only the hot sections, `[snomed] advice` takes
/// the three names and warns on others, and verifying a mapped edition
/// leaves the page cache as it found it: a cold edition stays cold.
#[cfg(target_os = "linux")]
#[test]
fn prewarm_hot_advice_and_a_verification_that_leaves_the_cache_cold() {
    use nix::fcntl::{PosixFadviseAdvice, posix_fadvise};
    let dir = tempfile::tempdir().unwrap();
    let a = common::edition(
        dir.path(),
        "a",
        20_000,
        4,
        txmap_synth::DEFAULT_EFFECTIVE_TIME,
    );
    let c = edition(dir.path(), "c", 6);
    for f in [&a, &c] {
        let file = std::fs::File::open(f).unwrap();
        file.sync_all().unwrap();
        posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED).unwrap();
    }
    let options = config(
        dir.path(),
        r#"
        editions = ["a.txmap", "c.txmap"]
        [snomed]
        load = "mmap"
        advice = "clever"
        prewarm_hot = ["c"]
        "#,
    );
    let (prepared, log) = logged(|| prepare(&options, &Loader::new()).unwrap());
    assert!(
        log.contains("advice = \"clever\" is not \"sections\", \"random\" or \"normal\""),
        "{log}"
    );
    let list = &prepared.state.editions.list;
    assert_eq!(list[0].file.obtained, LoadMode::Mmap);
    assert_eq!(list[1].file.obtained, LoadMode::PrewarmHot);
    // The hot sections are read, and they are not the whole file.
    let p = list[1].file.prewarm.as_ref().unwrap();
    p.wait();
    let bytes = list[1].edition.bytes();
    let hot = txmap_store::access::hot_ranges(bytes);
    assert_eq!(p.total(), hot.iter().map(|r| r.len() as u64).sum::<u64>());
    assert!(p.total() > 0 && p.total() < list[1].file.size, "{p:?}");
    let resident = bytes.residency().unwrap();
    for r in &hot {
        // Whole pages are counted, so a range ending within one counts it.
        assert!(resident.bytes_in(r.clone()) >= r.len() as u64, "{r:?}");
    }
    // `a` (under 64 MiB) was verified before `prepare` returned: every
    // byte read, and then given back.
    assert_eq!(
        list[0].file.serving.state(),
        txmap_terminology::serving::State::Verified
    );
    let cached = list[0].edition.bytes().resident_bytes().unwrap();
    assert!(
        cached < list[0].file.size / 4,
        "{cached} of {} bytes cached after verification",
        list[0].file.size
    );
}

/// The demo edition is made on first run, reused after, and made again
/// when the file there is of another format major (an older txmap's) or
/// damaged.
#[test]
fn the_demo_edition_is_made_once_and_again_when_its_format_is_old() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let file = txmap_server::demo_edition(&data).unwrap();
    let bytes = std::fs::read(&file).unwrap();
    txmap_store::Edition::open(&bytes[..]).unwrap();

    // Reused: the same bytes, not regenerated (a marker in a padding byte
    // of the header page survives only if nobody rewrote the file).
    let mut marked = bytes.clone();
    marked[100] = 0xAB;
    std::fs::write(&file, &marked).unwrap();
    assert_eq!(txmap_server::demo_edition(&data).unwrap(), file);
    assert_eq!(std::fs::read(&file).unwrap()[100], 0xAB);

    // An older major: made again, and it opens.
    let mut old = bytes.clone();
    old[8..10].copy_from_slice(&(txmap_format::FORMAT_MAJOR - 1).to_le_bytes());
    std::fs::write(&file, &old).unwrap();
    assert!(txmap_store::Edition::open(&old[..]).is_err());
    txmap_server::demo_edition(&data).unwrap();
    let again = std::fs::read(&file).unwrap();
    txmap_store::Edition::open(&again[..]).unwrap();
    assert_eq!(again, bytes, "the same synthetic edition, made again");

    // Of this major but without a section this txmap requires (a file
    // left by a txmap built between two changes of one major): made
    // again.
    let c = txmap_format::Container::open(&bytes[..]).unwrap();
    let mut w = txmap_format::FileWriter::create(&file).unwrap();
    for e in c.entries() {
        let k = txmap_format::SectionKind::from_code(e.kind.get()).unwrap();
        if k != txmap_format::SectionKind::DescriptionKinds {
            w.add_section(k, c.section(k).unwrap(), e.count.get())
                .unwrap();
        }
    }
    w.finish(c.metadata()).unwrap();
    let missing = std::fs::read(&file).unwrap();
    // Its header and metadata read as this major's; the store refuses it.
    txmap_format::peek_metadata(&std::fs::File::open(&file).unwrap()).unwrap();
    assert!(txmap_store::Edition::open(&missing[..]).is_err());
    txmap_server::demo_edition(&data).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), bytes);

    // Truncated: made again.
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    txmap_server::demo_edition(&data).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
}
