//! Writing an edition file: sections in order, then the trailer, then the
//! header, into a temporary file that is renamed into place only when
//! complete and synced. A failed or interrupted write leaves the target path
//! as it was.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;
use xxhash_rust::xxh3::Xxh3Default;
use zerocopy::IntoBytes;
use zerocopy::little_endian::{U16, U32, U64};

use crate::container::{
    ALIGN, FORMAT_MAJOR, FORMAT_MINOR, HEADER_LEN, Header, MAGIC, SectionEntry,
};
use crate::container::{Metadata, encode_metadata, header_checksum};
use crate::{FormatError, SectionKind};

/// Writes sections one after another into a temporary file beside `path`.
///
/// ```no_run
/// # use txmap_format::{FileWriter, SectionKind, Metadata};
/// # fn main() -> Result<(), txmap_format::FormatError> {
/// let mut w = FileWriter::create("edition.txmap".as_ref())?;
/// w.add_section(SectionKind::ConceptIds, &[0u8; 16], 2)?;
/// w.finish(&Metadata::new())?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FileWriter {
    out: BufWriter<File>,
    temp: NamedTempFile,
    path: PathBuf,
    pos: u64,
    entries: Vec<SectionEntry>,
}

impl FileWriter {
    /// Starts a new file that will replace `path` when finished. The
    /// temporary file is created in the same directory, so the final rename
    /// is atomic, and is deleted if the writer is dropped unfinished.
    pub fn create(path: &Path) -> Result<FileWriter, FormatError> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("edition");
        let temp = tempfile::Builder::new()
            .prefix(&format!(".{name}."))
            .suffix(".tmp")
            .tempfile_in(dir)?;
        let mut out = BufWriter::with_capacity(1 << 20, temp.reopen()?);
        out.write_all(&[0u8; ALIGN as usize])?;
        Ok(FileWriter {
            out,
            temp,
            path: path.to_owned(),
            pos: ALIGN,
            entries: Vec::new(),
        })
    }

    /// Starts a section; write its bytes to the returned writer, then call
    /// [`SectionWriter::finish`] with its record count.
    pub fn section(&mut self, kind: SectionKind) -> Result<SectionWriter<'_>, FormatError> {
        if self.entries.iter().any(|e| e.kind.get() == kind as u32) {
            return Err(FormatError::DuplicateSection { kind: kind as u32 });
        }
        Ok(SectionWriter {
            start: self.pos,
            len: 0,
            hasher: Xxh3Default::new(),
            kind,
            file: self,
        })
    }

    /// Writes a whole section from memory.
    pub fn add_section(
        &mut self,
        kind: SectionKind,
        bytes: &[u8],
        count: u64,
    ) -> Result<(), FormatError> {
        let mut s = self.section(kind)?;
        s.write_all(bytes)?;
        s.finish(count)
    }

    /// Writes the trailer and header, syncs, and renames the file into place.
    pub fn finish(mut self, metadata: &Metadata) -> Result<PathBuf, FormatError> {
        let meta = encode_metadata(metadata)?;
        let table: Vec<u8> = self.entries.as_bytes().to_vec();
        let table_offset = self.pos;
        self.out.write_all(&table)?;
        self.out.write_all(&meta)?;
        let file_len = table_offset + table.len() as u64 + meta.len() as u64;
        let mut header = Header {
            magic: MAGIC,
            format_major: U16::new(FORMAT_MAJOR),
            format_minor: U16::new(FORMAT_MINOR),
            header_len: U32::new(HEADER_LEN as u32),
            file_len: U64::new(file_len),
            table_offset: U64::new(table_offset),
            section_count: U32::new(self.entries.len() as u32),
            metadata_len: U32::new(
                u32::try_from(meta.len())
                    .map_err(|_| FormatError::Invalid("metadata block over 4 GiB".into()))?,
            ),
            checksum: U64::new(0),
            reserved: [0; 16],
        };
        header.checksum = U64::new(header_checksum(&header, &table, &meta));
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(header.as_bytes())?;
        let file = self
            .out
            .into_inner()
            .map_err(|e| FormatError::Io(e.into_error()))?;
        // Temporary files are created private (0600); an edition file is
        // read by servers that may run as another user.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            file.set_permissions(std::fs::Permissions::from_mode(0o644))?;
        }
        file.sync_all()?;
        drop(file);
        self.temp
            .persist(&self.path)
            .map_err(|e| FormatError::Io(e.error))?;
        // The rename is durable only once the directory entry is synced.
        let dir = self.path.parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(Ok(d)) = dir.map(File::open) {
            let _ = d.sync_all();
        }
        Ok(self.path)
    }
}

/// Streams one section's bytes, hashing them as they go.
pub struct SectionWriter<'w> {
    file: &'w mut FileWriter,
    kind: SectionKind,
    start: u64,
    len: u64,
    hasher: Xxh3Default,
}

impl std::fmt::Debug for SectionWriter<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SectionWriter")
            .field("kind", &self.kind)
            .field("start", &self.start)
            .field("len", &self.len)
            .finish_non_exhaustive()
    }
}

impl SectionWriter<'_> {
    /// Ends the section, pads to the next alignment boundary, and records it
    /// in the table. `count` is its number of records, for `inspect`.
    pub fn finish(self, count: u64) -> Result<(), FormatError> {
        let pad = (ALIGN - self.len % ALIGN) % ALIGN;
        self.file.out.write_all(&vec![0u8; pad as usize])?;
        self.file.pos = self.start + self.len + pad;
        self.file.entries.push(SectionEntry {
            kind: U32::new(self.kind as u32),
            reserved: U32::new(0),
            offset: U64::new(self.start),
            len: U64::new(self.len),
            count: U64::new(count),
            checksum: U64::new(self.hasher.digest()),
        });
        Ok(())
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Write for SectionWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.out.flush()
    }
}
