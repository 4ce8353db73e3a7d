//! What a mapping's reader tells the kernel about how it will read.

/// How a range of a mapping will be read: `madvise(2)`'s advice, the kinds
/// txmap chooses between. Which range gets which is decided by measurement
/// (BENCHMARKS.md, "The first pass after a restart"), not here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Advice {
    /// The kernel's default: a fault reads ahead around it and maps the
    /// neighbouring cached pages too (fault-around).
    Normal,
    /// No readahead and no fault-around: a fault reads and maps one page.
    Random,
    /// Aggressive readahead, pages dropped soon after they are read.
    Sequential,
    /// Start reading the range into the page cache now, in the background.
    WillNeed,
    /// Read the range in and map it before returning (Linux 5.14+).
    PopulateRead,
}

impl Advice {
    pub const ALL: [Advice; 5] = [
        Advice::Normal,
        Advice::Random,
        Advice::Sequential,
        Advice::WillNeed,
        Advice::PopulateRead,
    ];

    /// The name used in benchmarks and tables: `normal`, `random`,
    /// `sequential`, `willneed`, `populate`.
    pub fn as_str(self) -> &'static str {
        match self {
            Advice::Normal => "normal",
            Advice::Random => "random",
            Advice::Sequential => "sequential",
            Advice::WillNeed => "willneed",
            Advice::PopulateRead => "populate",
        }
    }

    pub fn from_name(name: &str) -> Option<Advice> {
        Advice::ALL.into_iter().find(|a| a.as_str() == name)
    }

    #[cfg(unix)]
    pub(crate) fn to_memmap(self) -> memmap2::Advice {
        match self {
            Advice::Normal => memmap2::Advice::Normal,
            Advice::Random => memmap2::Advice::Random,
            Advice::Sequential => memmap2::Advice::Sequential,
            Advice::WillNeed => memmap2::Advice::WillNeed,
            #[cfg(target_os = "linux")]
            Advice::PopulateRead => memmap2::Advice::PopulateRead,
            #[cfg(not(target_os = "linux"))]
            Advice::PopulateRead => memmap2::Advice::WillNeed,
        }
    }
}
