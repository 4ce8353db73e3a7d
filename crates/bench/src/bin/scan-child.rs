//! The child process of the scan benchmark, for `txmap-bench`'s own tests
//! (`txmap bench scan` re-runs the `txmap` binary as `txmap bench
//! scan-child` instead). Takes `key=value` arguments, scans, and prints
//! one line of JSON; see `txmap_bench::scan`.

use std::process::ExitCode;

#[cfg(target_os = "linux")]
fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    match txmap_bench::scan::child_main(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("scan-child: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn main() -> ExitCode {
    eprintln!("scan-child: the scan benchmark runs on Linux only");
    ExitCode::FAILURE
}
