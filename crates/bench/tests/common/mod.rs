//! What the bench crate's tests share: a tiny synthetic edition made in a
//! temp dir, and a server answering over a real loopback port.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use txmap_bench::http::Target;
use txmap_server::app::AppState;

/// Imports an 800-concept synthetic edition as `dir/tiny.txmap`.
pub fn tiny_edition(dir: &Path) -> PathBuf {
    let rf2 = dir.join("rf2");
    txmap_synth::generate(&txmap_synth::SynthConfig::new(800, 1), &rf2).unwrap();
    let file = dir.join("tiny.txmap");
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![rf2], file.clone()),
        &txmap_import::Quiet,
    )
    .unwrap();
    file
}

/// Serves `state` on a free loopback port from a two-thread runtime, which
/// the caller keeps alive as long as it calls the server.
pub fn serve(state: Arc<AppState>) -> (tokio::runtime::Runtime, Target) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime
        .block_on(async { txmap_server::bind("127.0.0.1:0", false) })
        .unwrap();
    let addr = listener.local_addr().unwrap();
    let app = txmap_server::app::router(state);
    runtime.spawn(async move { axum::serve(listener, app).await });
    let target = Target::parse(&format!("http://{addr}")).unwrap();
    (runtime, target)
}
