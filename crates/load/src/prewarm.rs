//! The background read that fills the page cache behind a mapping.

use std::fmt;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::advice::{FileHint, file_hint};
use crate::loader::{HookFn, SharedHook};

/// A background read of a mapped edition file, filling the page cache so
/// that the mapping's first touches are minor faults, not disk reads.
///
/// Cheap to clone: clones observe the same read. The read runs on a std
/// thread named `txmap-prewarm-<file name>` that reads the file (or, for
/// [`crate::LoadMode::PrewarmHot`], its hot ranges, in order) with
/// `pread(2)` through a fixed buffer and never touches the mapping.
/// Dropping the [`crate::Loaded`] does not stop it; it ends at the end of
/// its last range.
#[derive(Clone)]
pub struct Prewarm {
    shared: Arc<Shared>,
}

struct Shared {
    total: u64,
    bytes_read: AtomicU64,
    finish: Mutex<Option<Finish>>,
    finished: Condvar,
}

struct Finish {
    elapsed: Duration,
    error: Option<String>,
}

impl Prewarm {
    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.shared.bytes_read.load(Ordering::Relaxed)
    }

    /// The bytes to read — the file's size, or the hot ranges' sum: what
    /// [`Prewarm::bytes_read`] reaches on success.
    pub fn total(&self) -> u64 {
        self.shared.total
    }

    /// Whether the read has ended, successfully or not.
    pub fn is_done(&self) -> bool {
        self.finish().is_some()
    }

    /// Why the read stopped early, once it has. The mapping still works;
    /// pages not read are faulted in from disk on first touch.
    pub fn error(&self) -> Option<String> {
        self.finish().as_ref().and_then(|f| f.error.clone())
    }

    /// How long the read took, once it has ended; `None` while it runs.
    pub fn elapsed(&self) -> Option<Duration> {
        self.finish().as_ref().map(|f| f.elapsed)
    }

    /// Blocks until the read has ended (for tests and benchmarks; the server
    /// does not wait). By the time this returns, the progress hook has been
    /// called for the last time.
    pub fn wait(&self) {
        let mut finish = self.finish();
        while finish.is_none() {
            finish = self
                .shared
                .finished
                .wait(finish)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn finish(&self) -> MutexGuard<'_, Option<Finish>> {
        self.shared
            .finish
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts reading `ranges` of `file` on a new thread. With `exact`, the
    /// kernel is asked for each range as a whole and for nothing around
    /// it (no readahead past a range's end: a hot-sections read reads the
    /// hot sections, not their neighbours). If the thread cannot be
    /// spawned, the returned `Prewarm` is already done, with the reason as
    /// its error.
    pub(crate) fn start(
        file: File,
        path: PathBuf,
        ranges: Vec<Range<u64>>,
        exact: bool,
        buffer: usize,
        hook: Option<SharedHook>,
        gate: Option<Gate>,
    ) -> Prewarm {
        let total = ranges.iter().map(|r| r.end - r.start).sum();
        let shared = Arc::new(Shared {
            total,
            bytes_read: AtomicU64::new(0),
            finish: Mutex::new(None),
            finished: Condvar::new(),
        });
        let prewarm = Prewarm {
            shared: shared.clone(),
        };
        let name = format!(
            "txmap-prewarm-{}",
            path.file_name()
                .map_or_else(|| path.to_string_lossy(), |n| n.to_string_lossy())
        );
        let started = Instant::now();
        let guard = FinishGuard {
            shared,
            started,
            error: Some("prewarm thread panicked".to_owned()),
        };
        let spawned = std::thread::Builder::new().name(name).spawn(move || {
            let mut guard = guard;
            if let Some(gate) = gate {
                gate.wait();
                guard.started = Instant::now();
            }
            if exact {
                // Hints: their failure only costs speed.
                let _ = file_hint(&file, 0..0, FileHint::Random);
                for r in &ranges {
                    let _ = file_hint(&file, r.clone(), FileHint::WillNeed);
                }
            }
            guard.error = run(
                &file,
                &path,
                &ranges,
                buffer,
                &guard.shared,
                hook.as_deref(),
            );
            // `guard` drops here and publishes the result.
        });
        if let Err(e) = spawned {
            // `spawn` dropped the closure, and the guard in it, which
            // published "panicked". Say what really happened.
            *prewarm.finish() = Some(Finish {
                elapsed: started.elapsed(),
                error: Some(format!("cannot start prewarm thread: {e}")),
            });
            prewarm.shared.finished.notify_all();
        }
        prewarm
    }
}

/// Holds prewarm reads back until opened. A server opens every edition —
/// small reads whose latency is its startup time — before the prewarms'
/// long sequential reads take the disk; measured on a cold cache, starting
/// them at once made startup several times slower.
#[derive(Clone, Debug, Default)]
pub(crate) struct Gate(Arc<(Mutex<bool>, Condvar)>);

impl Gate {
    pub(crate) fn open(&self) {
        let (open, opened) = &*self.0;
        *open.lock().unwrap_or_else(PoisonError::into_inner) = true;
        opened.notify_all();
    }

    fn wait(&self) {
        let (open, opened) = &*self.0;
        let mut is_open = open.lock().unwrap_or_else(PoisonError::into_inner);
        while !*is_open {
            is_open = opened.wait(is_open).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// Reads `ranges` of `file`; returns why it stopped early, if it did.
/// Calls `hook` about every tenth of the bytes and once at the end.
fn run(
    file: &File,
    path: &Path,
    ranges: &[Range<u64>],
    buffer: usize,
    shared: &Shared,
    hook: Option<&HookFn>,
) -> Option<String> {
    let total = shared.total;
    let mut buf = vec![0u8; buffer.max(1)];
    let step = (total / 10).max(1);
    let mut next_report = step;
    let mut done = 0u64;
    let mut error = None;
    'ranges: for range in ranges {
        let mut at = range.start;
        while at < range.end {
            let want = ((range.end - at) as usize).min(buf.len());
            match file.read_at(&mut buf[..want], at) {
                Ok(0) => {
                    error = Some(format!(
                        "file ended at byte {at}, before {}: truncated while mapped",
                        range.end
                    ));
                    break 'ranges;
                }
                Ok(n) => {
                    at += n as u64;
                    done += n as u64;
                    shared.bytes_read.store(done, Ordering::Relaxed);
                    if done >= next_report && done < total {
                        if let Some(hook) = hook {
                            hook(path, done, total);
                        }
                        next_report = (done / step + 1) * step;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    error = Some(format!(
                        "read failed at byte {at} ({done} of {total} read): {e}"
                    ));
                    break 'ranges;
                }
            }
        }
    }
    if let Some(hook) = hook {
        hook(path, done, total);
    }
    error
}

/// Publishes the end of the read when dropped, so that a panic (in the
/// progress hook, say) still ends [`Prewarm::wait`].
struct FinishGuard {
    shared: Arc<Shared>,
    started: Instant,
    error: Option<String>,
}

impl Drop for FinishGuard {
    fn drop(&mut self) {
        let mut finish = self
            .shared
            .finish
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *finish = Some(Finish {
            elapsed: self.started.elapsed(),
            error: self.error.take(),
        });
        self.shared.finished.notify_all();
    }
}

impl fmt::Debug for Prewarm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let finish = self.finish();
        f.debug_struct("Prewarm")
            .field("bytes_read", &self.bytes_read())
            .field("total", &self.total())
            .field("done", &finish.is_some())
            .field("elapsed", &finish.as_ref().map(|f| f.elapsed))
            .field("error", &finish.as_ref().and_then(|f| f.error.as_deref()))
            .finish()
    }
}
