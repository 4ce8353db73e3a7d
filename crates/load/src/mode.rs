use std::fmt;
use std::str::FromStr;

/// How an edition file's bytes get into the process. See the crate docs for
/// what each costs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadMode {
    /// Read into one heap allocation: process memory, paid once on load.
    Read,
    /// Mapped read-only: page cache, paid page by page on first touch.
    Mmap,
    /// Mapped, then read through once in the background to fill the page
    /// cache; startup does not wait.
    Prewarm,
}

impl LoadMode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [LoadMode; 3] = [LoadMode::Read, LoadMode::Mmap, LoadMode::Prewarm];

    /// The mode's name as configured and displayed: `read`, `mmap`, `prewarm`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadMode::Read => "read",
            LoadMode::Mmap => "mmap",
            LoadMode::Prewarm => "prewarm",
        }
    }

    /// Whether this mode maps the file (if mapping succeeds).
    pub fn maps(self) -> bool {
        !matches!(self, LoadMode::Read)
    }
}

impl fmt::Display for LoadMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LoadMode {
    type Err = ParseLoadModeError;

    /// Parses `read`, `mmap` or `prewarm`, ignoring ASCII case and
    /// surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        LoadMode::ALL
            .into_iter()
            .find(|m| t.eq_ignore_ascii_case(m.as_str()))
            .ok_or_else(|| ParseLoadModeError(s.to_owned()))
    }
}

/// A load mode name that is not `read`, `mmap` or `prewarm`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseLoadModeError(pub String);

impl fmt::Display for ParseLoadModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown load mode {:?} (expected read, mmap or prewarm)",
            self.0
        )
    }
}

impl std::error::Error for ParseLoadModeError {}
