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
    /// Mapped, then only its hot ranges read in the background
    /// ([`crate::Loader::hot_ranges`]; the whole file when none are given).
    PrewarmHot,
}

impl LoadMode {
    /// Every mode, in the order the docs list them.
    pub const ALL: [LoadMode; 4] = [
        LoadMode::Read,
        LoadMode::Mmap,
        LoadMode::Prewarm,
        LoadMode::PrewarmHot,
    ];

    /// The mode's name as configured and displayed: `read`, `mmap`,
    /// `prewarm`, `prewarm-hot`.
    pub fn as_str(self) -> &'static str {
        match self {
            LoadMode::Read => "read",
            LoadMode::Mmap => "mmap",
            LoadMode::Prewarm => "prewarm",
            LoadMode::PrewarmHot => "prewarm-hot",
        }
    }

    /// Whether this mode maps the file (if mapping succeeds).
    pub fn maps(self) -> bool {
        !matches!(self, LoadMode::Read)
    }

    /// Whether this mode reads (some of) the file in the background.
    pub fn prewarms(self) -> bool {
        matches!(self, LoadMode::Prewarm | LoadMode::PrewarmHot)
    }
}

impl fmt::Display for LoadMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LoadMode {
    type Err = ParseLoadModeError;

    /// Parses `read`, `mmap`, `prewarm` or `prewarm-hot`, ignoring ASCII case and
    /// surrounding whitespace.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        LoadMode::ALL
            .into_iter()
            .find(|m| t.eq_ignore_ascii_case(m.as_str()))
            .ok_or_else(|| ParseLoadModeError(s.to_owned()))
    }
}

/// A load mode name that is not `read`, `mmap`, `prewarm` or `prewarm-hot`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseLoadModeError(pub String);

impl fmt::Display for ParseLoadModeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown load mode {:?} (expected read, mmap, prewarm or prewarm-hot)",
            self.0
        )
    }
}

impl std::error::Error for ParseLoadModeError {}
