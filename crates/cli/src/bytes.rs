//! Getting an edition file's bytes: mapped where possible, read otherwise.

use std::fs::File;
use std::path::Path;

use anyhow::{Context, Result};

/// An edition file's bytes, either mapped or read into memory.
pub enum EditionBytes {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl AsRef<[u8]> for EditionBytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            EditionBytes::Mapped(m) => m,
            EditionBytes::Read(v) => v,
        }
    }
}

/// Maps `path` read-only; falls back to reading it if mapping fails.
pub fn open(path: &Path) -> Result<EditionBytes> {
    let file = File::open(path).with_context(|| format!("{}: cannot open", path.display()))?;
    // SAFETY: memmap2's contract is that the file is not modified or
    // truncated while mapped. Edition files are immutable by design: txmap
    // writes them once to a temporary name and renames them into place, and
    // never writes to an existing one (see crates/format/FORMAT.md). A file
    // changed by someone else while this process runs would break that
    // promise — a SIGBUS on truncation — which is why the docs tell
    // operators to install new editions as new files.
    #[allow(unsafe_code)]
    let mapped = unsafe { memmap2::Mmap::map(&file) };
    match mapped {
        Ok(m) => Ok(EditionBytes::Mapped(m)),
        Err(_) => {
            let bytes =
                std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
            Ok(EditionBytes::Read(bytes))
        }
    }
}
