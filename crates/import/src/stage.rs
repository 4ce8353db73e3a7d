//! Spill files for variable-length text, and staged sections.
//!
//! Sections are produced in the order the data allows (concepts, then
//! relationships, then descriptions, ...) but laid out in the order reads
//! want (concept records, preferred terms and hierarchy first, so a cold
//! lookup faults few pages). So each section is first written to its own
//! temporary file, and the edition file is assembled from them at the end.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Seek, Write};
use std::os::unix::fs::FileExt;
use std::path::Path;

use txmap_format::{FileWriter, FormatError, SectionKind, U24};
use zerocopy::little_endian::U32;
use zerocopy::{Immutable, IntoBytes};

/// An append-only temporary file of byte strings, read back by offset.
#[derive(Debug)]
pub struct Spill {
    out: BufWriter<File>,
    len: u64,
}

impl Spill {
    pub fn new(temp_dir: &Path) -> io::Result<Spill> {
        Ok(Spill {
            out: BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(temp_dir)?),
            len: 0,
        })
    }

    /// Appends and returns the offset.
    pub fn push(&mut self, bytes: &[u8]) -> io::Result<u64> {
        let at = self.len;
        self.out.write_all(bytes)?;
        self.len += bytes.len() as u64;
        Ok(at)
    }

    /// Switches to reading: flushes and returns a reader.
    pub fn into_reader(self) -> io::Result<SpillReader> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        Ok(SpillReader { file })
    }
}

#[derive(Debug)]
pub struct SpillReader {
    file: File,
}

impl SpillReader {
    pub fn read_into(&self, offset: u64, len: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        buf.clear();
        buf.resize(len, 0);
        self.file.read_exact_at(buf, offset)
    }
}

/// One section being written to a temporary file.
#[derive(Debug)]
pub struct Staged {
    out: BufWriter<File>,
    pub len: u64,
    pub count: u64,
}

impl Staged {
    pub fn write_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all(bytes)
    }

    /// Switches to reading the bytes written so far, from the start.
    pub fn into_reader(self) -> io::Result<io::BufReader<File>> {
        let mut file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.rewind()?;
        Ok(io::BufReader::with_capacity(1 << 20, file))
    }

    pub fn record<T: IntoBytes + Immutable>(&mut self, r: &T) -> io::Result<()> {
        self.write_bytes(r.as_bytes())?;
        self.count += 1;
        Ok(())
    }
}

impl Write for Staged {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.len += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// All staged sections of one import.
#[derive(Debug)]
pub struct Stages<'t> {
    temp_dir: &'t Path,
    sections: HashMap<SectionKind, Staged>,
}

impl<'t> Stages<'t> {
    pub fn new(temp_dir: &'t Path) -> Self {
        Stages {
            temp_dir,
            sections: HashMap::new(),
        }
    }

    /// The staged section of this kind, created empty on first use.
    pub fn get(&mut self, kind: SectionKind) -> io::Result<&mut Staged> {
        use std::collections::hash_map::Entry;
        Ok(match self.sections.entry(kind) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(v) => v.insert(Staged {
                out: BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(self.temp_dir)?),
                len: 0,
                count: 0,
            }),
        })
    }

    /// A staged section not yet attached to a kind, for writers that need
    /// several sections open at once.
    pub fn detached(&self) -> io::Result<Staged> {
        Ok(Staged {
            out: BufWriter::with_capacity(1 << 20, tempfile::tempfile_in(self.temp_dir)?),
            len: 0,
            count: 0,
        })
    }

    /// Takes over the sections another importer staged (for other kinds).
    pub fn absorb(&mut self, other: Stages<'_>) {
        self.sections.extend(other.sections);
    }

    pub fn attach(&mut self, kind: SectionKind, staged: Staged) {
        self.sections.insert(kind, staged);
    }

    /// Stages a whole section from memory.
    pub fn put(&mut self, kind: SectionKind, bytes: &[u8], count: u64) -> io::Result<()> {
        let s = self.get(kind)?;
        s.write_bytes(bytes)?;
        s.count += count;
        Ok(())
    }

    /// Stages a whole section of records from memory, counted as records.
    pub fn put_records<T: IntoBytes + Immutable>(
        &mut self,
        kind: SectionKind,
        records: &[T],
    ) -> io::Result<()> {
        self.put(kind, records.as_bytes(), records.len() as u64)
    }

    /// Stages a small table of rows as a CSR index (`rows + 1` `U32`
    /// offsets, in `index`) and the rows' records one after another (in
    /// `items`): the numbered sets that records refer to by number.
    pub fn put_table<T, R>(
        &mut self,
        index: SectionKind,
        items: SectionKind,
        rows: impl IntoIterator<Item = R>,
    ) -> io::Result<()>
    where
        T: IntoBytes + Immutable,
        R: IntoIterator<Item = T>,
    {
        let (mut offsets, mut records) = (vec![0u32], Vec::new());
        for row in rows {
            records.extend(row);
            let end = u32::try_from(records.len()).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{}: too many rows", items.name()),
                )
            })?;
            offsets.push(end);
        }
        self.put_index(index, &offsets)?;
        self.put_records(items, &records)
    }

    /// Stages a CSR index (`n + 1` offsets), in three bytes an offset
    /// when the kind [is narrow](SectionKind::is_narrow_index): an error
    /// names the section when its items pass what three bytes count.
    pub fn put_index(&mut self, kind: SectionKind, offsets: &[u32]) -> io::Result<()> {
        if !kind.is_narrow_index() {
            let le: Vec<U32> = offsets.iter().map(|&o| U32::new(o)).collect();
            return self.put_records(kind, &le);
        }
        let le = (offsets.iter())
            .map(|&o| U24::new(o))
            .collect::<Option<Vec<U24>>>()
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "{}: more than {} items, the most an edition file indexes",
                        kind.name(),
                        U24::MAX
                    ),
                )
            })?;
        self.put_records(kind, &le)
    }

    /// Reads a staged section back (used where a later stage needs an
    /// earlier one's output in order).
    pub fn reopen(&mut self, kind: SectionKind) -> io::Result<io::BufReader<File>> {
        let s = self.get(kind)?;
        s.out.flush()?;
        let mut f = s.out.get_ref().try_clone()?;
        f.rewind()?;
        Ok(io::BufReader::with_capacity(1 << 20, f))
    }

    /// Copies the staged sections into `writer` in `order`; sections staged
    /// but not named in `order` are an error (they would be lost).
    pub fn assemble(
        mut self,
        writer: &mut FileWriter,
        order: &[SectionKind],
    ) -> Result<(), FormatError> {
        for &kind in order {
            let Some(staged) = self.sections.remove(&kind) else {
                continue;
            };
            let mut file = staged
                .out
                .into_inner()
                .map_err(|e| FormatError::Io(e.into_error()))?;
            file.rewind()?;
            let mut section = writer.section(kind)?;
            io::copy(
                &mut io::BufReader::with_capacity(1 << 20, file),
                &mut section,
            )?;
            section.finish(staged.count)?;
        }
        if let Some(kind) = self.sections.keys().next() {
            return Err(FormatError::Invalid(format!(
                "section {} staged but not laid out",
                kind.name()
            )));
        }
        Ok(())
    }
}

/// Builds a CSR (`n + 1` offsets and items) from items that arrive grouped
/// by ascending key.
#[derive(Debug)]
pub struct CsrBuilder {
    offsets: Vec<u32>,
    items: u64,
}

impl CsrBuilder {
    pub fn new(n: usize) -> Self {
        let mut offsets = Vec::with_capacity(n + 1);
        offsets.push(0);
        CsrBuilder { offsets, items: 0 }
    }

    /// Notes one item for `key`, which must not be less than the previous key.
    pub fn add(&mut self, key: u32) -> Result<(), String> {
        let key = key as usize;
        if key + 1 < self.offsets.len() {
            return Err(format!("CSR keys out of order at {key}"));
        }
        let at = u32::try_from(self.items)
            .map_err(|_| "more than 2^32 items in one section".to_owned())?;
        while self.offsets.len() <= key {
            self.offsets.push(at);
        }
        self.items += 1;
        Ok(())
    }

    /// The offsets, padded to `n + 1` entries.
    pub fn finish(mut self, n: usize) -> Vec<u32> {
        let end = self.items as u32;
        while self.offsets.len() < n + 1 {
            self.offsets.push(end);
        }
        self.offsets
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csr_offsets() {
        let mut b = CsrBuilder::new(4);
        for k in [0, 0, 2, 3, 3, 3] {
            b.add(k).unwrap();
        }
        assert_eq!(b.finish(5), vec![0, 2, 2, 3, 6, 6]);
        let mut b = CsrBuilder::new(2);
        b.add(1).unwrap();
        assert!(b.add(0).is_err());
    }

    #[test]
    fn narrow_indexes_take_three_bytes_an_offset_and_refuse_more() {
        let dir = tempfile::tempdir().unwrap();
        let mut stages = Stages::new(dir.path());
        let big = 1 << 24;
        stages
            .put_index(SectionKind::ParentsIndex, &[0, 1, big - 1])
            .unwrap();
        assert_eq!(stages.get(SectionKind::ParentsIndex).unwrap().len, 9);
        // Byte offsets into the closures' lists stay four bytes.
        stages
            .put_index(SectionKind::AncestorsIndex, &[0, big])
            .unwrap();
        assert_eq!(stages.get(SectionKind::AncestorsIndex).unwrap().len, 8);
        let err = (stages.put_index(SectionKind::InboundIndex, &[0, big])).unwrap_err();
        assert!(
            err.to_string().starts_with("InboundIndex: more than"),
            "{err}"
        );
        assert!(!stages.sections.contains_key(&SectionKind::InboundIndex));
    }

    #[test]
    fn spill_round_trip() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spill::new(dir.path()).unwrap();
        let a = s.push(b"alpha").unwrap();
        let b = s.push(b"beta").unwrap();
        let r = s.into_reader().unwrap();
        let mut buf = Vec::new();
        r.read_into(b, 4, &mut buf).unwrap();
        assert_eq!(buf, b"beta");
        r.read_into(a, 5, &mut buf).unwrap();
        assert_eq!(buf, b"alpha");
    }
}
