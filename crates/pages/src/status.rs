//! The status page: the server at a glance for an operator. Each served
//! file (SNOMED CT edition or compiled code system) with how it was asked
//! to load and how it did, and how much of it is in memory *now* — by
//! `mincore`, per file and per section, drawn as bars — beside the
//! process's memory split as the guard judges it. The server fills a
//! [`StatusPage`] from what `/status` reports; this module only draws it.
//! The page refreshes itself every few seconds when a script runs (its
//! `#live` part is fetched again), and by reloading when none does.

use askama::Template;

use crate::chrome::Chrome;

/// One section's residency.
#[derive(Debug, Clone)]
pub struct SectionRow {
    pub name: String,
    pub size: u64,
    pub resident: u64,
}

impl SectionRow {
    pub fn percent(&self) -> u64 {
        percent(self.resident, self.size)
    }
}

/// One served file.
#[derive(Debug, Clone, Default)]
pub struct FileRow {
    /// `SNOMED CT edition`, `LOINC`, ….
    pub kind: String,
    pub file: String,
    pub version_uri: String,
    pub mode_asked: String,
    pub mode: String,
    pub mapped: bool,
    pub size: u64,
    /// Bytes of the file in the page cache (mapped) or in memory (read).
    pub resident: Option<u64>,
    /// `done`, `12.5 MiB of 80 MiB`, or empty when not prewarmed.
    pub prewarm: String,
    pub uses: Option<u64>,
    /// `serving`, `verifying`, `out of service: …`.
    pub state: String,
    pub default: bool,
    pub sections: Vec<SectionRow>,
    /// Where to look at it (the edition's browser), if anywhere.
    pub browse: Option<String>,
}

impl FileRow {
    pub fn percent(&self) -> u64 {
        percent(self.resident.unwrap_or(0), self.size)
    }
}

/// The process's memory, as `/status` reports it.
#[derive(Debug, Clone, Default)]
pub struct MemoryRow {
    pub rss: Option<u64>,
    pub anonymous: Option<u64>,
    pub file_backed: Option<u64>,
    /// What the guard judges, and whether file-backed pages are left out.
    pub measured: Option<u64>,
    pub measured_excludes_file: bool,
    pub limit: Option<u64>,
    pub refuse_at: f64,
    pub abort_at: f64,
    pub refused: u64,
    pub aborted: u64,
    pub reserved: u64,
    pub major_faults: Option<u64>,
    pub minor_faults: Option<u64>,
}

impl MemoryRow {
    /// The guard's measure as a share of the limit.
    pub fn percent(&self) -> u64 {
        match (self.measured, self.limit) {
            (Some(m), Some(l)) => percent(m, l),
            _ => 0,
        }
    }
}

#[derive(Template, Debug)]
#[template(path = "status.html")]
pub struct StatusPage {
    pub chrome: Chrome,
    pub uptime_seconds: u64,
    pub memory: MemoryRow,
    pub files: Vec<FileRow>,
}

impl StatusPage {
    pub fn uptime(&self) -> String {
        let s = self.uptime_seconds;
        match s {
            0..60 => format!("{s} s"),
            60..3600 => format!("{} min {} s", s / 60, s % 60),
            _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
        }
    }
}

/// `part` of `whole` in whole percent, at most 100.
fn percent(part: u64, whole: u64) -> u64 {
    part.saturating_mul(100)
        .checked_div(whole)
        .map_or(0, |p| p.min(100))
}

/// Bytes as people read them: `812 KiB`, `3.4 MiB`.
pub fn bytes(n: &u64) -> String {
    let n = *n;
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = n as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else if value < 10.0 {
        format!("{value:.1} {}", UNITS[unit])
    } else {
        format!("{value:.0} {}", UNITS[unit])
    }
}

/// [`bytes`] of a figure the kernel may not have given.
pub fn maybe_bytes(n: &Option<u64>) -> String {
    n.as_ref().map_or_else(|| "unknown".to_owned(), bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_shares_read_as_people_read_them() {
        assert_eq!(bytes(&812), "812 B");
        assert_eq!(bytes(&((3 << 20) + (400 << 10))), "3.4 MiB");
        assert_eq!(bytes(&(600 << 20)), "600 MiB");
        assert_eq!(percent(1, 3), 33);
        assert_eq!(percent(5, 0), 0);
        assert_eq!(percent(7, 5), 100);
    }
}
