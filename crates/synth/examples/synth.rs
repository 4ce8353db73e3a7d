//! Generates a synthetic release and prints its summary and timing.
//!
//! ```text
//! cargo run --release -p txmap-synth --example synth -- OUT [CONCEPTS] [SEED]
//! cargo run --release -p txmap-synth --example synth -- OUT CONCEPTS SEED \
//!     --extension BASE_CONCEPTS BASE_SEED NAMESPACE [EFFECTIVE_TIME]
//! ```
//!
//! `OUT` is a directory, or a path ending in `.zip`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use txmap_synth::{ExtensionConfig, INTERNATIONAL_CONCEPTS, SynthConfig, generate};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> Result<T, String> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => s
            .parse()
            .map_err(|_| format!("cannot parse argument {i}: {s:?}")),
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = PathBuf::from(args.first().ok_or("usage: synth OUT [CONCEPTS] [SEED] [--extension BASE_CONCEPTS BASE_SEED NAMESPACE [EFFECTIVE_TIME]]")?);
    let mut config = SynthConfig::new(arg(&args, 1, INTERNATIONAL_CONCEPTS)?, arg(&args, 2, 1)?);
    if args.get(3).map(String::as_str) == Some("--extension") {
        let ext = ExtensionConfig::new(
            arg(&args, 4, INTERNATIONAL_CONCEPTS)?,
            arg(&args, 5, 1)?,
            arg(&args, 6, 1_000_124)?,
        );
        config.effective_time = arg(&args, 7, 20250731)?;
        config.extension = Some(ext);
    }
    let start = Instant::now();
    let summary = generate(&config, &out).map_err(|e| e.to_string())?;
    let elapsed = start.elapsed();
    println!("{summary:#?}");
    println!("generated in {:.2}s", elapsed.as_secs_f64());
    Ok(())
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("synth: {e}");
            ExitCode::FAILURE
        }
    }
}
