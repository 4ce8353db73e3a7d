//! `txmap`: the command line.
//!
//! This crate is glue: it parses arguments, maps or reads edition files,
//! draws progress, and prints. The work happens in the library crates, which
//! know nothing of terminals. Errors are printed as one line, with the
//! chain of context that led to them, and a non-zero exit.

mod bench;
mod commands;
mod logging;
mod progress;

use std::process::ExitCode;

use clap::Parser;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // `{:#}` prints the whole context chain on one line:
            // "edition.txmap: section TermHeap checksum mismatch".
            eprintln!("txmap: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
