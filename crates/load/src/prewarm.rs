//! The background read that fills the page cache behind a mapping.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::loader::{HookFn, SharedHook};

/// A background read of a mapped edition file, filling the page cache so
/// that the mapping's first touches are minor faults, not disk reads.
///
/// Cheap to clone: clones observe the same read. The read runs on a std
/// thread named `txmap-prewarm-<file name>` that reads the file with
/// `read(2)` through a fixed buffer and never touches the mapping. Dropping
/// the [`crate::Loaded`] does not stop it; it ends at the end of the file.
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

    /// The file's size: what [`Prewarm::bytes_read`] reaches on success.
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

    /// Starts reading `file` (positioned at its start) on a new thread.
    /// If the thread cannot be spawned, the returned `Prewarm` is already
    /// done, with the reason as its error.
    pub(crate) fn start(
        file: File,
        path: PathBuf,
        total: u64,
        buffer: usize,
        hook: Option<SharedHook>,
        gate: Option<Gate>,
    ) -> Prewarm {
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
            guard.error = run(&file, &path, total, buffer, &guard.shared, hook.as_deref());
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

/// Reads `file` to `total` bytes; returns why it stopped early, if it did.
/// Calls `hook` about every tenth of the file and once at the end.
fn run(
    file: &File,
    path: &Path,
    total: u64,
    buffer: usize,
    shared: &Shared,
    hook: Option<&HookFn>,
) -> Option<String> {
    let mut buf = vec![0u8; buffer.max(1)];
    let mut reader = file.take(total);
    let step = (total / 10).max(1);
    let mut next_report = step;
    let mut done = 0u64;
    let mut error = None;
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
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
                error = Some(format!("read failed at byte {done} of {total}: {e}"));
                break;
            }
        }
    }
    if error.is_none() && done < total {
        error = Some(format!(
            "file ended at byte {done} of {total}: truncated while mapped"
        ));
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
