//! A file changed under a running server is taken out of service: one
//! replaced, truncated or rewritten (its size, inode or modification time
//! changed) as soon as its identity is next looked at, before a request
//! reads it again; one rewritten in place behind an unchanged identity
//! when the scrub reads its checksums through again. Either way requests
//! that need it are 503 naming the file, never answers from changed bytes.

use crate::common;

use std::io::{Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Arc;

use axum::http::StatusCode;
use txmap_server::app::AppState;
use txmap_server::editions::{check_identities, scrub_once};

fn server(dir: &Path) -> (Arc<AppState>, String) {
    common::edition(dir, "ed", 300, 1, 20250131);
    let state = common::serve(
        dir,
        "editions = [\"ed.txmap\"]\n[snomed]\nload = \"mmap\"\n",
    );
    let code = state.editions.list[0].edition.sctid(5).unwrap().to_string();
    (state, code)
}

async fn lookup(state: &Arc<AppState>, code: &str) -> (StatusCode, String) {
    let (status, v) = common::snomed_lookup(state, code).await;
    (status, v.to_string())
}

/// The middle of the file's largest section.
fn middle_of_largest_section(file: &Path) -> u64 {
    let bytes = std::fs::read(file).unwrap();
    let c = txmap_format::Container::open(&bytes).unwrap();
    let (offset, len) = c
        .entries()
        .iter()
        .map(|e| (e.offset.get(), e.len.get()))
        .max_by_key(|&(_, len)| len)
        .unwrap();
    offset + len / 2
}

#[tokio::test]
async fn a_file_rewritten_in_place_is_taken_out_of_service_by_the_scrub() {
    let dir = tempfile::tempdir().unwrap();
    let (state, code) = server(dir.path());
    assert_eq!(lookup(&state, &code).await.0, StatusCode::OK);
    // Nothing changed: the scrub leaves it in service.
    scrub_once(&state.editions);
    assert_eq!(lookup(&state, &code).await.0, StatusCode::OK);
    // One byte rewritten in place, the modification time put back: the
    // identity is the same, the bytes are not.
    let path = dir.path().join("ed.txmap");
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    let at = middle_of_largest_section(&path);
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&path)
        .unwrap();
    let mut byte = [0u8; 1];
    f.seek(SeekFrom::Start(at)).unwrap();
    std::io::Read::read_exact(&mut f, &mut byte).unwrap();
    f.seek(SeekFrom::Start(at)).unwrap();
    f.write_all(&[byte[0] ^ 0x20]).unwrap();
    f.sync_all().unwrap();
    f.set_modified(modified).unwrap();
    drop(f);
    check_identities(&state.editions);
    assert_eq!(
        lookup(&state, &code).await.0,
        StatusCode::OK,
        "same identity"
    );
    scrub_once(&state.editions);
    let (status, text) = lookup(&state, &code).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    assert!(text.contains("ed.txmap"), "{text}");
}

#[tokio::test]
async fn a_file_changed_or_truncated_is_out_of_service_before_it_is_read() {
    for truncate in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (state, code) = server(dir.path());
        assert_eq!(lookup(&state, &code).await.0, StatusCode::OK);
        let path = dir.path().join("ed.txmap");
        if truncate {
            let len = std::fs::metadata(&path).unwrap().len();
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .unwrap()
                .set_len(len / 2)
                .unwrap();
        } else {
            // Replaced by another file under the same name.
            std::fs::copy(&path, dir.path().join("other")).unwrap();
            std::fs::rename(dir.path().join("other"), &path).unwrap();
        }
        // The identity is looked at before any request reads it again
        // (the scrub does so every second; here, at once).
        check_identities(&state.editions);
        let (status, text) = lookup(&state, &code).await;
        assert_eq!(
            status,
            StatusCode::SERVICE_UNAVAILABLE,
            "{truncate}: {text}"
        );
        assert!(
            text.contains("ed.txmap") && text.contains("changed"),
            "{text}"
        );
        let status = txmap_server::status::status_json(&state, txmap_server::status::View::Public);
        assert_eq!(status["editions"][0]["verification"]["state"], "failed");
    }
}
