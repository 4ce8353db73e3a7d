//! `txmap`: the command line.
//!
//! This crate is glue: it parses arguments, maps or reads edition files,
//! draws progress, and prints. The work happens in the library crates, which
//! know nothing of terminals. Errors are printed as one line, with the
//! chain of context that led to them, and exit status 2 (1 is "nothing
//! found" for the query commands, as for grep).

/// `println!`, but a closed standard output (`txmap inspect f | head -1`)
/// is an error for `?` — which `main` takes as the reader having had
/// enough, and ends quietly — rather than a panic.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
            .map_err(anyhow::Error::from)?
    }};
}

/// `print!`, as [`outln`] is `println!`.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
            .map_err(anyhow::Error::from)?
    }};
}

mod bench;
mod commands;
mod logging;
mod progress;
mod query;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(query::Found::Yes) => ExitCode::SUCCESS,
        Ok(query::Found::No) => ExitCode::from(1),
        // Whoever read standard output stopped reading: not an error.
        Err(err) if stdout_closed(&err) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` prints the whole context chain on one line:
            // "edition.txmap: section TermHeap checksum mismatch".
            eprintln!("txmap: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Whether `err` is a write to a standard output nobody reads any more.
fn stdout_closed(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
