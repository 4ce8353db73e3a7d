//! The container: header, sections, and the trailer that lists them.
//!
//! This layer knows nothing about SNOMED CT. It gives a byte slice's
//! sections by kind after checking, in time independent of the file's size,
//! that the file is ours, of a version we read, not truncated, and that every
//! section lies inside it, aligned and apart from the others. Checking the
//! bytes *inside* the sections is `verify`'s job, which reads everything.

use std::collections::BTreeMap;
use std::ops::Range;

use xxhash_rust::xxh3::Xxh3Default;
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::{FormatError, SectionKind};

/// The first eight bytes of every edition file.
pub const MAGIC: [u8; 8] = *b"TXMAPED\0";
/// Readers refuse files with another major version.
pub const FORMAT_MAJOR: u16 = 7;
/// Additions that older readers can ignore (new section kinds, new metadata
/// keys) raise the minor version.
pub const FORMAT_MINOR: u16 = 0;
/// Sections start at multiples of this, so each can be mapped, advised and
/// evicted on its own pages.
pub const ALIGN: u64 = 4096;

/// The fixed header at offset 0. It is followed by zero padding up to
/// [`ALIGN`], where the first section starts.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct Header {
    pub magic: [u8; 8],
    pub format_major: U16,
    pub format_minor: U16,
    /// Size of this struct, so a later minor version may grow it.
    pub header_len: U32,
    /// Length of the whole file in bytes.
    pub file_len: U64,
    /// Offset of the section table (an array of [`SectionEntry`]).
    pub table_offset: U64,
    pub section_count: U32,
    /// Length of the metadata block that follows the section table.
    pub metadata_len: U32,
    /// XXH3-64 of this header with this field zeroed, then the section
    /// table, then the metadata block. The table holds every section's
    /// checksum, so this one value covers the whole file.
    pub checksum: U64,
    pub reserved: [u8; 16],
}

pub const HEADER_LEN: usize = size_of::<Header>();

/// One row of the section table.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
pub struct SectionEntry {
    /// A [`SectionKind`] code; unknown codes are skipped by readers.
    pub kind: U32,
    pub reserved: U32,
    pub offset: U64,
    pub len: U64,
    /// Number of records (or bytes, for heaps): informative only.
    pub count: U64,
    /// XXH3-64 of the section's bytes.
    pub checksum: U64,
}

/// Metadata: ordered `key` → `value` strings from the metadata block.
pub type Metadata = BTreeMap<String, String>;

/// A checked view of an edition file's container over any byte slice.
#[derive(Debug, Clone)]
pub struct Container<'a> {
    bytes: &'a [u8],
    header: Header,
    entries: Vec<SectionEntry>,
    metadata: Metadata,
}

impl<'a> Container<'a> {
    /// Checks the header, the section table and the metadata block (a few
    /// kilobytes at the start and end of the file) and the placement of
    /// every section. Section contents are not read.
    pub fn open(bytes: &'a [u8]) -> Result<Self, FormatError> {
        let len = bytes.len() as u64;
        let (header, table) = check_header(bytes, len)?;
        let table_bytes = &bytes[table.clone()];
        let meta_bytes = &bytes[table.end..table.end + header.metadata_len.get() as usize];
        if header_checksum(&header, table_bytes, meta_bytes) != header.checksum.get() {
            return Err(FormatError::HeaderChecksum);
        }
        let entries = <[SectionEntry]>::ref_from_bytes(table_bytes)
            .map_err(|_| FormatError::BadTrailer("section table"))?
            .to_vec();
        check_placement(&entries, table.start as u64)?;
        let metadata = parse_metadata(meta_bytes)?;
        Ok(Container {
            bytes,
            header,
            entries,
            metadata,
        })
    }

    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn entries(&self) -> &[SectionEntry] {
        &self.entries
    }

    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The table entry of a section, if present.
    pub fn entry(&self, kind: SectionKind) -> Option<&SectionEntry> {
        self.entries.iter().find(|e| e.kind.get() == kind as u32)
    }

    /// A section's bytes, if present.
    pub fn section(&self, kind: SectionKind) -> Option<&'a [u8]> {
        let e = self.entry(kind)?;
        // Placement was checked in `open`.
        let start = e.offset.get() as usize;
        Some(&self.bytes[start..start + e.len.get() as usize])
    }

    /// A section's bytes, or an error naming it.
    pub fn require(&self, kind: SectionKind) -> Result<&'a [u8], FormatError> {
        self.section(kind).ok_or(FormatError::MissingSection(kind))
    }

    /// Checks a section's bytes against its checksum.
    pub fn verify_section(&self, kind: SectionKind) -> Result<(), FormatError> {
        let e = self.entry(kind).ok_or(FormatError::MissingSection(kind))?;
        self.verify_entry(e)
    }

    fn verify_entry(&self, e: &SectionEntry) -> Result<(), FormatError> {
        let start = e.offset.get() as usize;
        let data = &self.bytes[start..start + e.len.get() as usize];
        if xxhash_rust::xxh3::xxh3_64(data) != e.checksum.get() {
            return Err(FormatError::SectionChecksum { kind: e.kind.get() });
        }
        Ok(())
    }

    /// Reads the whole file: every section against its checksum, and every
    /// byte outside sections, header and trailer must be zero padding.
    /// `progress` is told how many bytes have been checked so far, at least
    /// every [`VERIFY_CHUNK`] bytes, in file order: a caller reading a
    /// mapping can give back each chunk's pages once it is checked.
    pub fn verify(&self, mut progress: impl FnMut(u64)) -> Result<(), FormatError> {
        let mut sorted: Vec<&SectionEntry> = self.entries.iter().collect();
        sorted.sort_by_key(|e| e.offset.get());
        let mut pos = HEADER_LEN as u64;
        for e in sorted {
            check_zero(self.bytes, pos, e.offset.get())?;
            let start = e.offset.get() as usize;
            let data = &self.bytes[start..start + e.len.get() as usize];
            let mut hash = Xxh3Default::new();
            let mut at = start as u64;
            for chunk in data.chunks(VERIFY_CHUNK) {
                hash.update(chunk);
                at += chunk.len() as u64;
                progress(at);
            }
            if hash.digest() != e.checksum.get() {
                return Err(FormatError::SectionChecksum { kind: e.kind.get() });
            }
            pos = e.offset.get() + e.len.get();
            progress(pos);
        }
        check_zero(self.bytes, pos, self.header.table_offset.get())?;
        progress(self.bytes.len() as u64);
        Ok(())
    }
}

/// How many bytes [`Container::verify`] checks between progress reports.
pub const VERIFY_CHUNK: usize = 4 << 20;

/// Reads only the header and the trailer of an edition file — a few
/// kilobytes — and returns its metadata, checked as [`Container::open`]
/// checks them (magic, version, length, header checksum). A server uses it
/// to learn which edition a file holds before deciding how to load it.
pub fn peek_metadata(file: &std::fs::File) -> Result<Metadata, FormatError> {
    use std::os::unix::fs::FileExt;
    let len = file.metadata()?.len();
    let mut head = [0u8; HEADER_LEN];
    if len < HEADER_LEN as u64 {
        return Err(FormatError::TooShort { len });
    }
    file.read_exact_at(&mut head, 0)?;
    let (header, table) = check_header(&head, len)?;
    let mut trailer = vec![0u8; (len - table.start as u64) as usize];
    file.read_exact_at(&mut trailer, table.start as u64)?;
    let (table_bytes, meta_bytes) = trailer.split_at(table.len());
    if header_checksum(&header, table_bytes, meta_bytes) != header.checksum.get() {
        return Err(FormatError::HeaderChecksum);
    }
    parse_metadata(meta_bytes)
}

/// Checks the fixed header at the start of `head` against a file of `len`
/// bytes — magic, major version, header length, file length — and returns
/// it with the range of the section table.
fn check_header(head: &[u8], len: u64) -> Result<(Header, Range<usize>), FormatError> {
    let Ok((header, _)) = Header::read_from_prefix(head) else {
        return Err(FormatError::TooShort { len });
    };
    if header.magic != MAGIC {
        return Err(FormatError::BadMagic);
    }
    let (major, minor) = (header.format_major.get(), header.format_minor.get());
    if major != FORMAT_MAJOR {
        return Err(FormatError::UnsupportedVersion { major, minor });
    }
    if (header.header_len.get() as usize) < HEADER_LEN || u64::from(header.header_len.get()) > ALIGN
    {
        return Err(FormatError::BadTrailer("header"));
    }
    if header.file_len.get() != len {
        return Err(FormatError::LengthMismatch {
            expected: header.file_len.get(),
            actual: len,
        });
    }
    let table = trailer_range(&header, len)?;
    Ok((header, table))
}

fn check_zero(bytes: &[u8], from: u64, to: u64) -> Result<(), FormatError> {
    let gap = &bytes[from as usize..to as usize];
    match gap.iter().position(|&b| b != 0) {
        Some(i) => Err(FormatError::Padding {
            offset: from + i as u64,
        }),
        None => Ok(()),
    }
}

/// Where the section table lies, checked against the file length. The
/// metadata block follows it and ends the file.
fn trailer_range(header: &Header, len: u64) -> Result<Range<usize>, FormatError> {
    let table_len = u64::from(header.section_count.get()) * size_of::<SectionEntry>() as u64;
    let start = header.table_offset.get();
    let end = start
        .checked_add(table_len)
        .ok_or(FormatError::BadTrailer("section table"))?;
    if start < ALIGN || end > len {
        return Err(FormatError::BadTrailer("section table"));
    }
    if end + u64::from(header.metadata_len.get()) != len {
        return Err(FormatError::BadTrailer("metadata block"));
    }
    Ok(start as usize..end as usize)
}

/// Sections must be aligned, lie between the header page and the trailer,
/// and not overlap; each known kind appears at most once.
fn check_placement(entries: &[SectionEntry], trailer_start: u64) -> Result<(), FormatError> {
    let mut spans: Vec<(u64, u64, u32)> = Vec::with_capacity(entries.len());
    for e in entries {
        let (kind, offset, len) = (e.kind.get(), e.offset.get(), e.len.get());
        let bad = || FormatError::SectionBounds { kind, offset, len };
        let end = offset.checked_add(len).ok_or_else(bad)?;
        if offset < ALIGN || offset % ALIGN != 0 || end > trailer_start {
            return Err(bad());
        }
        spans.push((offset, end, kind));
    }
    spans.sort_unstable();
    for w in spans.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(FormatError::SectionBounds {
                kind: w[1].2,
                offset: w[1].0,
                len: w[1].1 - w[1].0,
            });
        }
    }
    let mut kinds: Vec<u32> = entries.iter().map(|e| e.kind.get()).collect();
    kinds.sort_unstable();
    if let Some(w) = kinds.windows(2).find(|w| w[0] == w[1]) {
        return Err(FormatError::DuplicateSection { kind: w[0] });
    }
    Ok(())
}

pub(crate) fn header_checksum(header: &Header, table: &[u8], metadata: &[u8]) -> u64 {
    let mut h = *header;
    h.checksum = U64::new(0);
    let mut hasher = Xxh3Default::new();
    hasher.update(h.as_bytes());
    hasher.update(table);
    hasher.update(metadata);
    hasher.digest()
}

/// The metadata block is UTF-8 lines `key<TAB>value<LF>`; keys are unique
/// and neither keys nor values contain tabs or newlines.
fn parse_metadata(bytes: &[u8]) -> Result<Metadata, FormatError> {
    let text = std::str::from_utf8(bytes).map_err(|e| FormatError::BadMetadata(e.to_string()))?;
    let mut map = Metadata::new();
    for line in text.split_terminator('\n') {
        let (k, v) = line
            .split_once('\t')
            .ok_or_else(|| FormatError::BadMetadata(format!("line without a tab: {line:?}")))?;
        if map.insert(k.to_owned(), v.to_owned()).is_some() {
            return Err(FormatError::BadMetadata(format!("duplicate key {k:?}")));
        }
    }
    Ok(map)
}

pub(crate) fn encode_metadata(meta: &Metadata) -> Result<Vec<u8>, FormatError> {
    let mut out = Vec::new();
    for (k, v) in meta {
        let bad = |s: &str| s.contains(['\t', '\n']);
        if k.is_empty() || bad(k) || bad(v) {
            return Err(FormatError::Invalid(format!(
                "metadata {k:?} = {v:?} contains a tab or newline"
            )));
        }
        out.extend_from_slice(k.as_bytes());
        out.push(b'\t');
        out.extend_from_slice(v.as_bytes());
        out.push(b'\n');
    }
    Ok(out)
}
