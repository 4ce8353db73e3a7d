//! What the sync has taken, kept between runs (JSON, written whole to a
//! temporary file and renamed, so a crash leaves the old state or the
//! new, never half of one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The state file.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct State {
    /// What is installed, by content item version.
    #[serde(default)]
    pub installed: BTreeMap<String, Installed>,
    /// What each feed gave when last read, by its URL.
    #[serde(default)]
    pub feeds: BTreeMap<String, FeedSeen>,
}

/// One installed release.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct Installed {
    pub identifier: String,
    pub category: String,
    /// The file served (an edition, a code system file or a package).
    pub file: PathBuf,
    /// The download kept for releases that others build on (SNOMED CT
    /// editions a derivative imports with).
    pub download: Option<PathBuf>,
    pub sha256: String,
    /// When it was installed (seconds since the epoch).
    pub at: u64,
}

/// A feed as last read.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct FeedSeen {
    /// When (seconds since the epoch).
    pub checked: u64,
    /// Its entries' content item versions.
    pub versions: Vec<String>,
}

impl State {
    /// The state at `path`; none yet is the empty state. A file that is
    /// not a state is an error naming it (nothing is guessed).
    pub fn load(path: &Path) -> Result<State, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(State::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Writes the state to `path` by a rename.
    pub fn save(&self, path: &Path) -> Result<(), String> {
        let err = |e: std::io::Error| format!("{}: {e}", path.display());
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(err)?;
        }
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        std::fs::write(&tmp, text).map_err(err)?;
        std::fs::rename(&tmp, path).map_err(err)
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
