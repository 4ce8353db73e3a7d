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
