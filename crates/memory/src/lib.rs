//! Memory accounting for the running process, and the memory guard's
//! arithmetic.
//!
//! # Why anonymous memory
//!
//! txmap serves SNOMED CT editions either read into process memory or
//! memory-mapped. Mapped pages are file-backed page cache: shared between
//! processes and reclaimable by the kernel under pressure. Counting them as
//! the process's memory would refuse requests on a healthy server. So the
//! guard judges *anonymous* memory: the measured figure is
//! `VmRSS − RssFile` once any edition is actually mapped, and `VmRSS`
//! otherwise (see [`measured`]).
//!
//! # The limit
//!
//! The limit ([`effective_limit`]) is the smallest of: the cgroup v2
//! `memory.max` (and v1 `memory.limit_in_bytes`) of every cgroup from the
//! process's own up to the root (under systemd the root has none), a
//! configured limit, and physical RAM.
//!
//! # Reading kernel files
//!
//! Every function that reads `/proc` or `/sys` takes a [`Root`]: `/` in
//! production, a temporary directory holding a fake tree in tests. Nothing
//! here fails or panics because a file is missing or malformed (not Linux,
//! an old kernel, a sandbox): each figure degrades to `None`.
//!
//! This is a core crate: no async runtime, no HTTP, no `unsafe`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};

mod guard;
mod limit;
mod maps;
mod process;

pub use guard::{
    DEFAULT_SAMPLE_EVERY, Guard, GuardConfig, GuardConfigError, GuardDecision, Measured,
    MemoryReader, NEW_REQUEST_MAX_AGE, Reservation, Sampler, TooCostly, decide, measured,
};
pub use limit::{Limit, LimitSource, effective_limit};
pub use maps::{is_mapped, resident_bytes};
pub use process::{
    ProcessMemory, SmapsRollup, Status, parse_smaps_rollup, parse_status, process_memory,
    process_status,
};

/// Where to read kernel files from: `/` normally; a temporary directory in
/// tests (a fake `/proc` and `/sys/fs/cgroup` tree).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root(PathBuf);

impl Root {
    /// The real system: kernel files are read from `/`.
    pub fn system() -> Root {
        Root(PathBuf::from("/"))
    }

    /// Kernel files are read from under `path` (`{path}/proc/self/status`, …).
    pub fn at(path: impl Into<PathBuf>) -> Root {
        Root(path.into())
    }

    /// The directory kernel paths are resolved under.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Whether this is the real system root, so that figures that do not
    /// come from files (`getrusage`) describe the same process.
    pub fn is_system(&self) -> bool {
        self.0 == Path::new("/")
    }

    /// `{root}/{relative}`; `relative` is given without a leading `/`.
    fn join(&self, relative: &str) -> PathBuf {
        self.0.join(relative.trim_start_matches('/'))
    }

    /// A kernel text file, or `None` if it is missing, unreadable or not UTF-8.
    fn read(&self, relative: &str) -> Option<String> {
        std::fs::read_to_string(self.join(relative)).ok()
    }
}

/// Parses a `/proc` value in kibibytes (`"  123456 kB"`) into bytes.
/// `None` on anything else, or on overflow.
fn parse_kb(value: &str) -> Option<u64> {
    let mut parts = value.split_whitespace();
    let number: u64 = parts.next()?.parse().ok()?;
    match (parts.next(), parts.next()) {
        (Some("kB"), None) => number.checked_mul(1024),
        _ => None,
    }
}

/// Splits a `Key:   value` line into `("Key", "   value")`.
fn key_value(line: &str) -> Option<(&str, &str)> {
    let (key, value) = line.split_once(':')?;
    Some((key.trim(), value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kb_values() {
        assert_eq!(parse_kb("  123 kB"), Some(123 * 1024));
        assert_eq!(parse_kb("\t0 kB"), Some(0));
        assert_eq!(parse_kb("123"), None);
        assert_eq!(parse_kb("123 MB"), None);
        assert_eq!(parse_kb("12x kB"), None);
        assert_eq!(parse_kb("-1 kB"), None);
        assert_eq!(parse_kb("1 kB extra"), None);
        assert_eq!(parse_kb(&format!("{} kB", u64::MAX)), None);
        assert_eq!(parse_kb(""), None);
    }

    #[test]
    fn roots() {
        assert!(Root::system().is_system());
        assert!(!Root::at("/tmp/x").is_system());
        assert_eq!(
            Root::at("/tmp/x").join("/proc/self/status"),
            PathBuf::from("/tmp/x/proc/self/status")
        );
    }
}
