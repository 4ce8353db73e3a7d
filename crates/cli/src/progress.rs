//! Import progress: bars on a terminal, one line per stage otherwise.

use std::io::IsTerminal;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressStyle};
use txmap_import::{Observer, StageReport};

pub struct Progress {
    bar: Option<Mutex<Option<ProgressBar>>>,
    quiet: bool,
}

impl Progress {
    pub fn new(quiet: bool) -> Progress {
        let tty = std::io::stderr().is_terminal();
        Progress {
            bar: (tty && !quiet).then(|| Mutex::new(None)),
            quiet,
        }
    }

    fn with_bar(&self, f: impl FnOnce(&mut Option<ProgressBar>)) {
        if let Some(Ok(mut b)) = self.bar.as_ref().map(|m| m.lock()) {
            f(&mut b);
        }
    }
}

impl Observer for Progress {
    fn stage(&self, name: &str, total_bytes: u64) {
        self.with_bar(|b| {
            if let Some(old) = b.take() {
                old.finish_and_clear();
            }
            let bar = ProgressBar::new(total_bytes.max(1));
            let style = ProgressStyle::with_template(
                "{prefix:>20} [{bar:30}] {bytes}/{total_bytes} {elapsed}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_prefix(name.to_owned());
            *b = Some(bar);
        });
    }

    fn progress(&self, bytes: u64) {
        self.with_bar(|b| {
            if let Some(bar) = b {
                bar.set_position(bytes);
            }
        });
    }

    fn stage_done(&self, r: &StageReport) {
        let line = (!self.quiet).then(|| {
            let rss = r
                .rss
                .map(|b| format!(", rss {}", human(b)))
                .unwrap_or_default();
            format!(
                "{:>20}: {:>10} rows in {:.2} s{rss}",
                r.name, r.rows, r.seconds
            )
        });
        // Two stages run at once (relationships and refsets on a second
        // thread): the bar is the other's if its name differs, and stays.
        let mut printed = false;
        self.with_bar(|b| match b {
            Some(bar) if bar.prefix() == r.name => {
                bar.finish_and_clear();
                *b = None;
            }
            Some(bar) => {
                if let Some(line) = &line {
                    bar.suspend(|| eprintln!("{line}"));
                }
                printed = true;
            }
            None => {}
        });
        if let (Some(line), false) = (line, printed) {
            eprintln!("{line}");
        }
    }

    fn skipped(&self, problem: &str) {
        if !self.quiet {
            self.with_bar(|b| {
                if let Some(bar) = b {
                    bar.suspend(|| eprintln!("skipped: {problem}"));
                }
            });
            if self.bar.is_none() {
                eprintln!("skipped: {problem}");
            }
        }
    }
}

/// Bytes in binary units, e.g. `312.4 MiB`.
pub fn human(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{bytes} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}
