use std::fmt;
use std::fs::File;
use std::io;
use std::ops::Range;

use crate::Advice;

/// An edition file's bytes, mapped or read into memory. Store code sees only
/// `AsRef<[u8]>`, so the answers are the same either way.
pub enum EditionBytes {
    /// A read-only mapping of the whole file.
    Mapped(Mapping),
    /// The whole file, read into one heap allocation.
    Read(Vec<u8>),
}

/// A read-only mapping of a whole file, with the file it maps: page-cache
/// hints ([`EditionBytes::release`]) and ranged prewarm reads need the file
/// as well as the mapping.
#[derive(Debug)]
pub struct Mapping {
    pub(crate) map: memmap2::Mmap,
    pub(crate) file: File,
}

impl EditionBytes {
    /// Whether the bytes are a mapping of the file (as opposed to a copy in
    /// process memory).
    pub fn is_mapped(&self) -> bool {
        matches!(self, EditionBytes::Mapped(_))
    }

    /// The bytes' start address and length, for residency accounting: the
    /// range to look up in `/proc/self/smaps`. For a mapping, the start is
    /// page-aligned and is the start of its `/proc/self/maps` line.
    pub fn address_range(&self) -> (usize, usize) {
        let bytes = self.as_ref();
        (bytes.as_ptr().addr(), bytes.len())
    }

    /// How many of the bytes are resident in memory. For a mapping, the
    /// pages of the file in the page cache, by `mincore(2)` — what a prewarm
    /// fills, and what a cold start lacks — whether or not this process has
    /// touched them yet. For read bytes, all of them (they were read in).
    /// `None` where the platform cannot tell.
    pub fn resident_bytes(&self) -> Option<u64> {
        match self {
            EditionBytes::Read(v) => Some(v.len() as u64),
            EditionBytes::Mapped(m) => Some(m.residency()?.bytes_in(0..m.map.len())),
        }
    }

    /// Which pages of a mapping are in the page cache now, one flag a page
    /// (`mincore(2)`); `None` for read bytes and where the platform cannot
    /// tell. A snapshot: the kernel may read or drop pages right after.
    pub fn residency(&self) -> Option<Residency> {
        match self {
            EditionBytes::Read(_) => None,
            EditionBytes::Mapped(m) => m.residency(),
        }
    }

    /// Tells the kernel how `range` of a mapping will be read (see
    /// [`Advice`]); nothing for read bytes. The range is widened to whole
    /// pages and clipped to the bytes. Advice is a hint: callers may
    /// ignore the error, which only says the kernel refused it.
    pub fn advise(&self, range: Range<usize>, advice: Advice) -> io::Result<()> {
        let EditionBytes::Mapped(m) = self else {
            return Ok(());
        };
        let end = range.end.min(m.map.len());
        if range.start >= end {
            return Ok(());
        }
        #[cfg(unix)]
        {
            m.map
                .advise_range(advice.to_memmap(), range.start, end - range.start)
        }
        #[cfg(not(unix))]
        {
            let _ = advice;
            Ok(())
        }
    }

    /// Gives back the pages of `range` that `keep` says were not resident:
    /// drops them from this mapping and from the page cache, so that a pass
    /// over the file (verification) leaves the cache as it found it. Pages
    /// resident in `keep` stay. Only clean pages of an immutable file are
    /// dropped, so no data is lost: a later read faults them in again.
    /// Nothing for read bytes.
    pub fn release(&self, range: Range<usize>, keep: &Residency) -> io::Result<()> {
        let EditionBytes::Mapped(m) = self else {
            return Ok(());
        };
        for run in keep.absent_runs(range.start..range.end.min(m.map.len())) {
            m.release(run)?;
        }
        Ok(())
    }

    /// The number of bytes.
    pub fn len(&self) -> usize {
        self.as_ref().len()
    }

    /// Whether there are no bytes.
    pub fn is_empty(&self) -> bool {
        self.as_ref().is_empty()
    }
}

impl AsRef<[u8]> for EditionBytes {
    fn as_ref(&self) -> &[u8] {
        match self {
            EditionBytes::Mapped(m) => &m.map,
            EditionBytes::Read(v) => v,
        }
    }
}

impl std::ops::Deref for EditionBytes {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_ref()
    }
}

/// Shows the kind, address and length, never the contents (which may be
/// gigabytes).
impl fmt::Debug for EditionBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (start, len) = self.address_range();
        let kind = if self.is_mapped() { "Mapped" } else { "Read" };
        f.debug_struct(kind)
            .field("start", &format_args!("{start:#x}"))
            .field("len", &len)
            .finish()
    }
}

/// Which pages of a mapping were in the page cache, one flag a page, as
/// `mincore(2)` saw them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Residency {
    page: usize,
    len: usize,
    resident: Vec<bool>,
}

impl Residency {
    /// The page size the flags count in.
    pub fn page_size(&self) -> usize {
        self.page
    }

    /// Whether the page holding byte `offset` was resident.
    pub fn is_resident(&self, offset: usize) -> bool {
        self.resident
            .get(offset / self.page)
            .copied()
            .unwrap_or(false)
    }

    /// Resident bytes among the pages that `range` touches, never more than
    /// the bytes mapped.
    pub fn bytes_in(&self, range: Range<usize>) -> u64 {
        let end = range.end.min(self.len);
        if range.start >= end {
            return 0;
        }
        let (first, last) = (range.start / self.page, (end - 1) / self.page);
        let pages = self.resident[first..=last].iter().filter(|&&r| r).count();
        let whole = (pages * self.page) as u64;
        // The last page of the file may be partial.
        if self.resident[last] && last == (self.len - 1) / self.page {
            whole - ((last + 1) * self.page - self.len) as u64
        } else {
            whole
        }
    }

    /// Maximal byte ranges of pages within `range` that were not resident,
    /// page-aligned and clipped to the mapping. A partial first or last
    /// page is left out: it may hold bytes outside `range` that a reader
    /// still wants.
    pub fn absent_runs(&self, range: Range<usize>) -> Vec<Range<usize>> {
        let first = range.start.div_ceil(self.page);
        let end_page = if range.end >= self.len {
            self.len.div_ceil(self.page)
        } else {
            range.end / self.page
        };
        let mut runs = Vec::new();
        let mut start = None;
        for p in first..end_page.max(first) {
            match (self.resident[p], start) {
                (false, None) => start = Some(p),
                (true, Some(s)) => {
                    runs.push(s * self.page..p * self.page);
                    start = None;
                }
                _ => {}
            }
        }
        if let Some(s) = start {
            runs.push(s * self.page..(end_page * self.page).min(self.len));
        }
        runs
    }

    #[cfg(test)]
    pub(crate) fn from_flags(page: usize, len: usize, resident: Vec<bool>) -> Residency {
        assert_eq!(resident.len(), len.div_ceil(page));
        Residency {
            page,
            len,
            resident,
        }
    }
}

impl Mapping {
    #[cfg(unix)]
    fn residency(&self) -> Option<Residency> {
        let m = &self.map;
        let page = page_size()?;
        if m.is_empty() {
            return Some(Residency {
                page,
                len: 0,
                resident: Vec::new(),
            });
        }
        let mut vec = vec![0u8; m.len().div_ceil(page)];
        // SAFETY: `mincore` reads the page tables of `m`'s range, which is a
        // live mapping owned by `m` (so its start is page-aligned, as
        // mincore requires) for the whole call, and writes one byte per
        // page of that range into `vec`, which has room for exactly that
        // many pages. It does not touch the mapped bytes, so the mapping's
        // own contract (the file is not modified while mapped, see
        // `Loader::load`) is not involved.
        #[allow(unsafe_code)]
        let rc = unsafe {
            libc::mincore(
                m.as_ptr() as *mut libc::c_void,
                m.len(),
                vec.as_mut_ptr() as _,
            )
        };
        (rc == 0).then(|| Residency {
            page,
            len: m.len(),
            resident: vec.iter().map(|&b| b & 1 == 1).collect(),
        })
    }

    #[cfg(not(unix))]
    fn residency(&self) -> Option<Residency> {
        None
    }

    /// Drops the page-aligned `run` from this mapping's page tables and
    /// then from the page cache.
    #[cfg(target_os = "linux")]
    fn release(&self, run: Range<usize>) -> io::Result<()> {
        let len = run.end - run.start;
        // SAFETY: MADV_DONTNEED on a read-only shared mapping of a file only
        // removes this process's page-table entries for the range; the
        // next read of those bytes faults the same file contents in again
        // (the file is immutable while mapped, the mapping's contract, see
        // `Loader::load`). No reference into the range is invalidated:
        // the bytes a `&[u8]` into the mapping reads stay the file's bytes.
        #[allow(unsafe_code)]
        unsafe {
            self.map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, run.start, len)?;
        }
        crate::advice::file_hint(
            &self.file,
            run.start as u64..run.end as u64,
            crate::advice::FileHint::DontNeed,
        )
    }

    #[cfg(not(target_os = "linux"))]
    fn release(&self, _run: Range<usize>) -> io::Result<()> {
        Ok(())
    }
}

/// Asks the kernel to read the pages under `bytes` — a run of a mapped
/// edition that a call is about to read in order — now, in one request,
/// rather than a fault a page (`madvise(MADV_WILLNEED)`). A hint: nothing
/// happens where the platform has none, and errors are ignored. Meant for
/// slices of a mapping (the store's `Prefetch` hook); on other memory
/// it is a no-op the kernel may honour by reading swap ahead.
pub fn will_need(bytes: &[u8]) {
    #[cfg(unix)]
    {
        let Some(page) = page_size() else {
            return;
        };
        if bytes.is_empty() {
            return;
        }
        let start = bytes.as_ptr().addr();
        let aligned = start - start % page;
        let len = bytes.len() + (start - aligned);
        // SAFETY: MADV_WILLNEED only schedules reads of the pages backing
        // the range; it changes no mapping and no byte. The range is the
        // pages under `bytes`, a live borrow, widened down to its first
        // page's start (madvise wants page alignment), so every page in
        // it is mapped for the whole call.
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_WILLNEED);
        }
    }
    #[cfg(not(unix))]
    let _ = bytes;
}

#[cfg(unix)]
fn page_size() -> Option<usize> {
    // SAFETY: `sysconf` only reads a configuration value.
    #[allow(unsafe_code)]
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().filter(|&p| p > 0)
}

#[cfg(test)]
mod tests {
    use super::Residency;

    #[test]
    fn residency_counts_and_finds_runs() {
        // 10 pages of 4 bytes, the last one 2 bytes long.
        let flags = [
            true, false, false, true, true, false, true, false, false, true,
        ];
        let r = Residency::from_flags(4, 38, flags.to_vec());
        assert_eq!(r.bytes_in(0..38), 4 * 4 + 2);
        assert_eq!(r.bytes_in(0..4), 4);
        assert_eq!(r.bytes_in(1..2), 4, "a touched page counts whole");
        assert_eq!(r.bytes_in(5..12), 0);
        assert_eq!(r.bytes_in(30..100), 2);
        assert!(r.is_resident(13) && !r.is_resident(4) && !r.is_resident(1000));
        assert_eq!(r.absent_runs(0..38), vec![4..12, 20..24, 28..36]);
        // Partial pages at either end are kept.
        assert_eq!(r.absent_runs(5..23), vec![8..12]);
        // To the end of the mapping, the short last page included.
        let last_absent = Residency::from_flags(4, 38, {
            let mut f = flags.to_vec();
            f[9] = false;
            f
        });
        assert_eq!(last_absent.absent_runs(30..38), vec![32..38]);
        assert_eq!(r.absent_runs(20..20), vec![]);
    }
}
