use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

/// Why an edition file's bytes could not be loaded.
///
/// `Display` is one self-contained line naming the path and, for I/O
/// failures, the operating system's reason. Because that reason is already
/// in the message, [`std::error::Error::source`] returns `None`, so that
/// printing the chain (anyhow's `{:#}`) does not repeat it; the
/// [`io::Error`] itself is in the variant and [`LoadError::io_error`].
///
/// A failure to *map* is not an error: the file is read instead (see
/// [`crate::Loaded::fallback`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// The file could not be opened (missing, permission denied, ...).
    Open { path: PathBuf, source: io::Error },
    /// The opened file's metadata could not be read.
    Metadata { path: PathBuf, source: io::Error },
    /// The path is a directory or another kind of non-regular file.
    NotAFile { path: PathBuf },
    /// The file is larger than this platform's address space.
    TooLarge { path: PathBuf, size: u64 },
    /// Reading the file into memory failed (including failing to allocate
    /// the buffer, reported as [`io::ErrorKind::OutOfMemory`]).
    Read { path: PathBuf, source: io::Error },
}

impl LoadError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            LoadError::Open { path, .. }
            | LoadError::Metadata { path, .. }
            | LoadError::NotAFile { path }
            | LoadError::TooLarge { path, .. }
            | LoadError::Read { path, .. } => path,
        }
    }

    /// The underlying I/O error, if there is one.
    pub fn io_error(&self) -> Option<&io::Error> {
        match self {
            LoadError::Open { source, .. }
            | LoadError::Metadata { source, .. }
            | LoadError::Read { source, .. } => Some(source),
            LoadError::NotAFile { .. } | LoadError::TooLarge { .. } => None,
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path().display();
        match self {
            LoadError::Open { source, .. } => write!(f, "{path}: cannot open: {source}"),
            LoadError::Metadata { source, .. } => {
                write!(f, "{path}: cannot read file metadata: {source}")
            }
            LoadError::NotAFile { .. } => write!(f, "{path}: not a regular file"),
            LoadError::TooLarge { size, .. } => write!(
                f,
                "{path}: {size} bytes is too large for this platform's address space"
            ),
            LoadError::Read { source, .. } => write!(f, "{path}: cannot read: {source}"),
        }
    }
}

impl std::error::Error for LoadError {}
