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

/// What `posix_fadvise(2)` is told about a range of an open file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FileHint {
    /// No readahead on this file's reads.
    Random,
    /// Read the range in now, in the background.
    WillNeed,
    /// Drop the range's clean pages from the page cache (pages mapped by
    /// some process stay).
    DontNeed,
}

/// `posix_fadvise(2)` of `range` of `file` (`0..0`: the whole file). A
/// no-op where the platform has none.
pub(crate) fn file_hint(
    file: &std::fs::File,
    range: std::ops::Range<u64>,
    hint: FileHint,
) -> std::io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let advice = match hint {
            FileHint::Random => libc::POSIX_FADV_RANDOM,
            FileHint::WillNeed => libc::POSIX_FADV_WILLNEED,
            FileHint::DontNeed => libc::POSIX_FADV_DONTNEED,
        };
        let too_large = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
        let offset = libc::off_t::try_from(range.start).map_err(|_| too_large())?;
        let len = libc::off_t::try_from(range.end.saturating_sub(range.start))
            .map_err(|_| too_large())?;
        // SAFETY: posix_fadvise only reads its integer arguments; the
        // descriptor is `file`'s, open for the whole call.
        #[allow(unsafe_code)]
        let rc = unsafe { libc::posix_fadvise(file.as_raw_fd(), offset, len, advice) };
        if rc != 0 {
            return Err(std::io::Error::from_raw_os_error(rc));
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, range, hint);
    Ok(())
}
