use std::fmt;

/// An edition file's bytes, mapped or read into memory. Store code sees only
/// `AsRef<[u8]>`, so the answers are the same either way.
pub enum EditionBytes {
    /// A read-only mapping of the whole file.
    Mapped(memmap2::Mmap),
    /// The whole file, read into one heap allocation.
    Read(Vec<u8>),
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
            EditionBytes::Mapped(m) => mapped_resident(m),
        }
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
            EditionBytes::Mapped(m) => m,
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

#[cfg(unix)]
fn mapped_resident(m: &memmap2::Mmap) -> Option<u64> {
    if m.is_empty() {
        return Some(0);
    }
    // SAFETY: `sysconf` only reads a configuration value. `mincore` reads
    // the page tables of `m`'s range, which is a live mapping owned by `m`
    // (so its start is page-aligned, as mincore requires) for the whole
    // call, and writes one byte per page of that range into `vec`, which
    // has room for exactly that many pages. It does not touch the mapped
    // bytes, so the mapping's own contract (the file is not modified while
    // mapped, see `Loader::load`) is not involved.
    #[allow(unsafe_code)]
    let (rc, vec, page) = unsafe {
        let page = usize::try_from(libc::sysconf(libc::_SC_PAGESIZE))
            .ok()
            .filter(|&p| p > 0)?;
        let mut vec = vec![0u8; m.len().div_ceil(page)];
        let rc = libc::mincore(
            m.as_ptr() as *mut libc::c_void,
            m.len(),
            vec.as_mut_ptr() as _,
        );
        (rc, vec, page)
    };
    if rc != 0 {
        return None;
    }
    let pages = vec.iter().filter(|&&b| b & 1 == 1).count();
    Some(((pages * page) as u64).min(m.len() as u64))
}

#[cfg(not(unix))]
fn mapped_resident(_: &memmap2::Mmap) -> Option<u64> {
    None
}
