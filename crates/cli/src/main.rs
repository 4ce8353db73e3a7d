//! `txmap`: the command line.
//!
//! This crate is glue: it parses arguments, maps or reads edition files,
//! draws progress, and prints. The work happens in the library crates, which
//! know nothing of terminals. Errors are printed as one line, with the
//! chain of context that led to them, and exit status 2 (1 is "nothing
//! found" for the query commands, as for grep).

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
        Err(err) => {
            // `{:#}` prints the whole context chain on one line:
            // "edition.txmap: section TermHeap checksum mismatch".
            eprintln!("txmap: error: {err:#}");
            ExitCode::from(2)
        }
    }
}
