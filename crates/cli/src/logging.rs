//! Log lines for the server: to stderr, level from `TXMAP_LOG`
//! (`error`, `warn`, `info` (default), `debug`, `trace`); coloured only
//! when stderr is a terminal, so a log file or pipe gets plain text.

use std::io::IsTerminal;

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
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}
