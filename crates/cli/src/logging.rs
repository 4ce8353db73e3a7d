//! Log lines for the server: to stderr, level from `TXMAP_LOG`
//! (`error`, `warn`, `info` (default), `debug`, `trace`).

use tracing::Level;

pub fn init() {
    let level = std::env::var("TXMAP_LOG")
        .ok()
        .and_then(|l| l.parse::<Level>().ok())
        .unwrap_or(Level::INFO);
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_target(false)
        .with_writer(std::io::stderr)
        .try_init();
}
