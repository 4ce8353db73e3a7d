//! A damaged edition file never answers: for random flips in every
//! section of a file, the server either refuses to start on it (the
//! sections checked on open) or serves it out of service — every request
//! that needs it is a 503 OperationOutcome naming the file, `/status` says
//! `failed` and why — and never a 200 with data from the damaged bytes.
//! Sections are found from the file's own section table, read here with
//! `txmap-format`, not through the server.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::Value;
use txmap_load::Loader;
use txmap_server::app::AppState;
use txmap_server::{ServeOptions, prepare};

const SCT: &str = "http://snomed.info/sct";

/// A server on `file` (in `dir`), or why it would not start.
fn server(dir: &Path, extra: &str) -> Result<Arc<AppState>, String> {
    let path = dir.join("txmap.toml");
    std::fs::write(&path, format!("editions = [\"ed.txmap\"]\n{extra}")).unwrap();
    let options = ServeOptions {
        config: Some(path),
        data_dir: dir.join("data"),
        ..Default::default()
    };
    prepare(&options, &Loader::new())
        .map(|p| p.state)
        .map_err(|e| e.to_string())
}

/// Requests that between them read every kind of data: concepts,
/// descriptions, relationships, refsets, the closure, the text index.
fn requests(codes: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for c in codes {
        out.push(format!("/r4/CodeSystem/$lookup?system={SCT}&code={c}"));
        out.push(format!(
            "/r4/CodeSystem/$validate-code?url={SCT}&code={c}&display=x"
        ));
        out.push(format!(
            "/r4/ValueSet/$expand?url={SCT}?fhir_vs=isa/{c}&count=5"
        ));
        out.push(format!(
            "/r4/CodeSystem/$subsumes?system={SCT}&codeA={c}&codeB={}",
            codes[0]
        ));
    }
    out.push(format!(
        "/r4/ValueSet/$expand?url={SCT}?fhir_vs&filter=a&count=5"
    ));
    // Every concept with its display: every preferred term. (A one-word
    // filter reads the terms of its page only: the search sections rank
    // the rest.)
    out.push(format!("/r4/ValueSet/$expand?url={SCT}?fhir_vs&count=1000"));
    out
}

#[tokio::test]
async fn a_damaged_section_is_never_served() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::edition(dir.path(), "ed", 400, 3, 20250131);
    let good = std::fs::read(&file).unwrap();
    // A few concepts of the edition, from the good file.
    let state = server(dir.path(), "").unwrap();
    let ed = &state.editions.list[0].edition;
    let codes: Vec<String> = [0, 7, 50, 120]
        .iter()
        .map(|&o| ed.sctid(o).unwrap().to_string())
        .collect();
    for uri in requests(&codes) {
        let (status, v) = common::call(Arc::clone(&state), Method::GET, &uri, None).await;
        assert_eq!(status, StatusCode::OK, "{uri} on the good file: {v}");
    }
    // Live and ready: every file answers.
    for (uri, want) in [("/livez", "ok"), ("/readyz", "ready")] {
        let (status, v) = common::diagnostics(Arc::clone(&state), uri).await;
        assert_eq!(
            (status, v["status"].as_str()),
            (StatusCode::OK, Some(want)),
            "{uri}"
        );
    }
    drop(state);

    let container = txmap_format::Container::open(&good).unwrap();
    let sections: Vec<(u32, u64, u64)> = container
        .entries()
        .iter()
        .filter(|e| e.len.get() > 0)
        .map(|e| (e.kind.get(), e.offset.get(), e.len.get()))
        .collect();
    assert!(sections.len() > 10, "{sections:?}");
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let (mut refused_to_start, mut out_of_service) = (0, 0);
    // Sections read on demand, not checked on open.
    let mut lazy = Vec::new();
    for &(kind, offset, len) in &sections {
        for _ in 0..3 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bad = good.clone();
            let at = (offset + x % len) as usize;
            bad[at] ^= 1 << (x % 8);
            std::fs::write(&file, &bad).unwrap();
            let state = match server(dir.path(), "") {
                Ok(s) => s,
                Err(e) => {
                    // The sections checked on open stop the start, naming
                    // the file.
                    assert!(e.contains("ed.txmap"), "section {kind}: {e}");
                    refused_to_start += 1;
                    continue;
                }
            };
            out_of_service += 1;
            if !lazy.contains(&(kind, offset, len)) {
                lazy.push((kind, offset, len));
            }
            for uri in requests(&codes) {
                let (status, v) = common::call(Arc::clone(&state), Method::GET, &uri, None).await;
                assert_ne!(
                    status,
                    StatusCode::OK,
                    "section {kind} flipped at {at}: {uri} answered {v}"
                );
                if uri.contains(&codes[0]) && uri.contains("$lookup") {
                    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{uri}: {v}");
                    assert_eq!(v["resourceType"], "OperationOutcome");
                    let text = v["issue"][0]["details"]["text"].as_str().unwrap_or("");
                    assert!(
                        text.contains("ed.txmap") && text.contains("failed verification"),
                        "{text}"
                    );
                }
            }
            // Alive, not ready: the file that does not answer, and why.
            let (live, _) = common::diagnostics(Arc::clone(&state), "/livez").await;
            assert_eq!(live, StatusCode::OK);
            let (ready, v) = common::diagnostics(Arc::clone(&state), "/readyz").await;
            assert_eq!(ready, StatusCode::SERVICE_UNAVAILABLE, "{v}");
            assert_eq!(v["files"][0]["file"], "ed.txmap", "{v}");
            assert_eq!(v["files"][0]["state"], "failed", "{v}");
            assert!(v["files"][0]["failure"].is_string(), "{v}");
            let status =
                txmap_server::status::status_json(&state, txmap_server::status::View::Admin);
            assert_eq!(
                status["editions"][0]["verification"]["state"], "failed",
                "{status}"
            );
            assert!(status["editions"][0]["verification"]["failure"].is_string());
        }
    }
    assert!(out_of_service > 0 && refused_to_start + out_of_service == 3 * sections.len());

    // Trusting the file is the config's explicit choice.
    // High bits flipped all over every section: bytes that no longer read
    // as text or as records.
    let mut bad = good.clone();
    for &(_, offset, len) in &lazy {
        for k in 1..8 {
            bad[(offset + len * k / 8) as usize] ^= 0x80;
        }
    }
    std::fs::write(&file, &bad).unwrap();
    let state = server(dir.path(), "[snomed]\ntrust_unverified = [\"ed\"]\n").unwrap();
    let status: Value =
        txmap_server::status::status_json(&state, txmap_server::status::View::Admin);
    assert_eq!(status["editions"][0]["verification"]["state"], "trusted");
    // A trusted damaged file may answer; a store error it meets is a 500
    // that names the file, and is counted.
    let mut errors = 0;
    for uri in requests(&codes) {
        let (status, v) = common::call(Arc::clone(&state), Method::GET, &uri, None).await;
        if status == StatusCode::INTERNAL_SERVER_ERROR {
            errors += 1;
            let text = v["issue"][0]["details"]["text"].as_str().unwrap_or("");
            assert!(text.contains("ed.txmap"), "{uri}: {text}");
        }
    }
    assert!(errors > 0, "so much damage meets the store somewhere");
    let metrics = txmap_server::status::metrics_text(&state);
    assert!(metrics.contains("txmap_edition_serving{"), "{metrics}");
    assert!(
        metrics.contains(&format!("txmap_store_errors_total {errors}\n")),
        "{errors} store errors: {metrics}"
    );
}
