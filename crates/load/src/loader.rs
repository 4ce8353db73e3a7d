use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bytes::Mapping;
use crate::prewarm::Gate;
use crate::{EditionBytes, LoadError, LoadMode, Prewarm};

/// The prewarm thread's read buffer, unless [`Loader::prewarm_buffer`] says
/// otherwise: 4 MiB.
pub const DEFAULT_PREWARM_BUFFER: usize = 4 << 20;

/// A prewarm progress callback: `(path, bytes read, total bytes)`.
pub type ProgressHook = Box<dyn Fn(&Path, u64, u64) + Send + Sync>;

/// The ranges a [`LoadMode::PrewarmHot`] load reads, given the file's bytes.
pub type HotRanges = Arc<dyn Fn(&[u8]) -> Vec<Range<usize>> + Send + Sync>;

pub(crate) type HookFn = dyn Fn(&Path, u64, u64) + Send + Sync;
pub(crate) type SharedHook = Arc<HookFn>;

/// An edition file's bytes and how they were obtained.
#[derive(Debug)]
pub struct Loaded {
    /// The path as given to [`load`].
    pub path: PathBuf,
    /// The bytes, for `txmap_store::Edition<EditionBytes>`.
    pub bytes: EditionBytes,
    /// The mode asked for.
    pub asked: LoadMode,
    /// The mode obtained: `asked`, or `Read` when mapping failed.
    pub obtained: LoadMode,
    /// True only when `bytes` really are a mapping.
    pub mapped: bool,
    /// The file's size in bytes (the length of `bytes`).
    pub size: u64,
    /// How long opening and mapping or reading took. For `Prewarm` this
    /// excludes the background read.
    pub open_time: Duration,
    /// Why mapping failed and the file was read instead; `None` when the
    /// mode asked was obtained. The caller should warn with it.
    pub fallback: Option<String>,
    /// The background read, when `obtained` is `Prewarm`.
    pub prewarm: Option<Prewarm>,
}

/// Loads `path` in `mode` with default options: mapping failures fall back
/// to reading, prewarm reads through a 4 MiB buffer, no progress hook.
pub fn load(path: &Path, mode: LoadMode) -> Result<Loaded, LoadError> {
    Loader::new().load(path, mode)
}

/// Loading with options: a prewarm buffer size, a progress hook, and for
/// tests (and rehearsing platforms without mmap) a mapper made to fail, so
/// that the fallback path — read instead, `mapped == false`,
/// `fallback == Some(reason)` — can be exercised.
#[derive(Clone)]
pub struct Loader {
    map_fails: Option<String>,
    prewarm_buffer: usize,
    on_progress: Option<SharedHook>,
    gate: Option<Gate>,
    hot: Option<HotRanges>,
}

impl Loader {
    /// Default options, as used by [`load`].
    pub fn new() -> Self {
        Loader {
            map_fails: None,
            prewarm_buffer: DEFAULT_PREWARM_BUFFER,
            on_progress: None,
            gate: None,
            hot: None,
        }
    }

    /// What a [`LoadMode::PrewarmHot`] load reads; without it, such a load
    /// reads the whole file as [`LoadMode::Prewarm`] does.
    pub fn hot_ranges(mut self, ranges: HotRanges) -> Self {
        self.hot = Some(ranges);
        self
    }

    /// Makes every mapping attempt fail with `reason`, which becomes
    /// [`Loaded::fallback`].
    pub fn simulate_map_failure(mut self, reason: impl Into<String>) -> Self {
        self.map_fails = Some(reason.into());
        self
    }

    /// Sets the prewarm thread's read buffer (at least one byte).
    /// Prewarm reads of editions loaded by this loader wait until
    /// [`release_prewarm`](Self::release_prewarm): a server opens all its
    /// editions first, then lets the background reads start.
    pub fn hold_prewarm(mut self) -> Self {
        self.gate = Some(Gate::default());
        self
    }

    /// Lets held prewarm reads start (and later ones start at once).
    pub fn release_prewarm(&self) {
        if let Some(g) = &self.gate {
            g.open();
        }
    }

    pub fn prewarm_buffer(mut self, bytes: usize) -> Self {
        self.prewarm_buffer = bytes.max(1);
        self
    }

    /// Sets a callback for prewarm progress, called on the prewarm thread
    /// with `(path, bytes read, total)` about every tenth of the file and
    /// once when the read ends. If it ends early, the last call has
    /// `bytes read < total` and [`Prewarm::error`] says why. It must not
    /// block for long: it runs between reads.
    pub fn on_prewarm_progress(mut self, hook: ProgressHook) -> Self {
        self.on_progress = Some(Arc::from(hook));
        self
    }

    /// Loads `path` in `mode`.
    ///
    /// Errors are for files that cannot be opened or read. A failure to map
    /// is not one: the file is read instead and [`Loaded::fallback`] says
    /// why. An empty file is never mapped; it loads as an empty `Read`
    /// buffer with a fallback reason when a mapping mode was asked.
    pub fn load(&self, path: &Path, mode: LoadMode) -> Result<Loaded, LoadError> {
        let started = Instant::now();
        let mut file = File::open(path).map_err(|source| LoadError::Open {
            path: path.to_path_buf(),
            source,
        })?;
        let meta = file.metadata().map_err(|source| LoadError::Metadata {
            path: path.to_path_buf(),
            source,
        })?;
        if !meta.is_file() {
            return Err(LoadError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let size = meta.len();

        let mut fallback = None;
        if mode.maps() {
            let mapped = if size == 0 {
                Err("the file is empty: there is nothing to map".to_owned())
            } else {
                self.map(&file)
            };
            match mapped {
                Ok(map) => {
                    let size = map.len() as u64;
                    let whole = std::iter::once(0..size).collect::<Vec<_>>();
                    let ranges = match mode {
                        LoadMode::Prewarm => Some((whole, false)),
                        LoadMode::PrewarmHot => Some(match &self.hot {
                            Some(hot) => (
                                hot(&map)
                                    .into_iter()
                                    .map(|r| r.start as u64..(r.end as u64).min(size))
                                    .filter(|r| r.start < r.end)
                                    .collect(),
                                true,
                            ),
                            None => (whole, false),
                        }),
                        _ => None,
                    };
                    let prewarm = match ranges {
                        None => None,
                        // The read has its own open file, so that its
                        // readahead state is not the mapping's.
                        Some((ranges, exact)) => Some(Prewarm::start(
                            File::open(path).map_err(|source| LoadError::Open {
                                path: path.to_path_buf(),
                                source,
                            })?,
                            path.to_path_buf(),
                            ranges,
                            exact,
                            self.prewarm_buffer,
                            self.on_progress.clone(),
                            self.gate.clone(),
                        )),
                    };
                    return Ok(Loaded {
                        path: path.to_path_buf(),
                        bytes: EditionBytes::Mapped(Mapping { map, file }),
                        asked: mode,
                        obtained: mode,
                        mapped: true,
                        size,
                        open_time: started.elapsed(),
                        fallback: None,
                        prewarm,
                    });
                }
                Err(reason) => fallback = Some(reason),
            }
        }

        // Mapping does not move the file position, so `file` is still at
        // its start.
        let bytes = read_all(&mut file, path, size)?;
        Ok(Loaded {
            path: path.to_path_buf(),
            size: bytes.len() as u64,
            bytes: EditionBytes::Read(bytes),
            asked: mode,
            obtained: LoadMode::Read,
            mapped: false,
            open_time: started.elapsed(),
            fallback,
            prewarm: None,
        })
    }

    /// Maps `file` read-only and advises random access; the error is the
    /// fallback reason. Callers that know the file's layout advise its
    /// parts afterwards ([`EditionBytes::advise`]).
    fn map(&self, file: &File) -> Result<memmap2::Mmap, String> {
        if let Some(reason) = &self.map_fails {
            return Err(reason.clone());
        }
        // SAFETY: memmap2's contract is that the file is not modified or
        // truncated while mapped. Edition files are immutable by design:
        // txmap writes them once to a temporary name and renames them into
        // place, and never writes to an existing one (see
        // crates/format/FORMAT.md). A file changed by someone else while this
        // process runs would break that promise — a SIGBUS on truncation —
        // which is why the docs tell operators to install new editions as
        // new files.
        #[allow(unsafe_code)]
        let mapped = unsafe { memmap2::Mmap::map(file) };
        let mmap = mapped.map_err(|e| format!("cannot map: {e}"))?;
        // Random access: no readahead on faults, so RSS grows by the pages
        // queries touch and no more. (This advises the mapping only; the
        // prewarm thread's read(2) keeps the file's own readahead.) Advice
        // is a hint, so its failure is ignored.
        #[cfg(unix)]
        let _ = mmap.advise(memmap2::Advice::Random);
        Ok(mmap)
    }
}

impl Default for Loader {
    fn default() -> Self {
        Loader::new()
    }
}

impl fmt::Debug for Loader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Loader")
            .field("map_fails", &self.map_fails)
            .field("prewarm_buffer", &self.prewarm_buffer)
            .field("on_prewarm_progress", &self.on_progress.is_some())
            .field("hold_prewarm", &self.gate.is_some())
            .field("hot_ranges", &self.hot.is_some())
            .finish()
    }
}

/// Reads the whole file into one allocation sized from its metadata, so the
/// bytes are held once and never reallocated (unless the file grew since).
fn read_all(file: &mut File, path: &Path, size: u64) -> Result<Vec<u8>, LoadError> {
    let len = usize::try_from(size).map_err(|_| LoadError::TooLarge {
        path: path.to_path_buf(),
        size,
    })?;
    let read_error = |source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut bytes = Vec::new();
    bytes.try_reserve_exact(len).map_err(|_| {
        read_error(io::Error::new(
            io::ErrorKind::OutOfMemory,
            format!("cannot allocate {size} bytes to read the file into"),
        ))
    })?;
    // With the capacity exact, read_to_end fills it and confirms the end of
    // the file with a small probe read rather than growing the buffer.
    file.read_to_end(&mut bytes).map_err(read_error)?;
    Ok(bytes)
}
