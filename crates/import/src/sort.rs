//! External sorting of fixed-size records in bounded memory.
//!
//! The importer never holds a release's rows as Rust objects: each kind of
//! row is reduced to a small fixed-size record (variable-length text goes to
//! a spill file and the record keeps its offset), pushed into a [`Sorter`],
//! and read back in order. A sorter keeps at most `cap` records in memory;
//! when full it sorts them and writes them to a temporary file as a run, and
//! the final read is a k-way merge of the runs and what is left in memory.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::Path;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

/// A record the sorter can move through a temporary file: plain bytes in
/// native byte order (runs never leave this process), ordered by `Ord`.
pub trait Record: Copy + Ord + FromBytes + IntoBytes + Immutable + KnownLayout {}
impl<T: Copy + Ord + FromBytes + IntoBytes + Immutable + KnownLayout> Record for T {}

/// Sorts records in memory up to a cap, spilling sorted runs to disk.
#[derive(Debug)]
pub struct Sorter<'t, R: Record> {
    buf: Vec<R>,
    cap: usize,
    runs: Vec<File>,
    temp_dir: &'t Path,
    pushed: u64,
}

impl<'t, R: Record> Sorter<'t, R> {
    /// A sorter that holds at most `cap_bytes` of records in memory.
    pub fn new(cap_bytes: usize, temp_dir: &'t Path) -> Self {
        let cap = (cap_bytes / size_of::<R>()).max(1024);
        Sorter {
            buf: Vec::new(),
            cap,
            runs: Vec::new(),
            temp_dir,
            pushed: 0,
        }
    }

    pub fn push(&mut self, r: R) -> io::Result<()> {
        if self.buf.len() == self.cap {
            self.spill()?;
        }
        if self.buf.len() == self.buf.capacity() {
            // Grow by doubling, as `Vec` would, but never past the cap: most
            // sorters are far smaller than their cap, and a full one must
            // not hold twice its share while it grows.
            let extra = self
                .buf
                .capacity()
                .max(1 << 12)
                .min(self.cap - self.buf.len());
            self.buf.reserve_exact(extra);
        }
        self.buf.push(r);
        self.pushed += 1;
        Ok(())
    }

    /// Records pushed so far.
    pub fn pushed(&self) -> u64 {
        self.pushed
    }

    /// Number of runs written to disk so far.
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    fn spill(&mut self) -> io::Result<()> {
        self.buf.sort_unstable();
        let file = tempfile::tempfile_in(self.temp_dir)?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        w.write_all(self.buf.as_bytes())?;
        let mut file = w.into_inner().map_err(|e| e.into_error())?;
        io::Seek::rewind(&mut file)?;
        self.runs.push(file);
        self.buf.clear();
        Ok(())
    }

    /// All records in ascending order. Equal records keep no particular
    /// order, so keys must break ties where that matters.
    pub fn finish(mut self) -> io::Result<Sorted<R>> {
        self.buf.sort_unstable();
        if self.runs.is_empty() {
            return Ok(Sorted {
                memory: std::mem::take(&mut self.buf).into_iter(),
                runs: Vec::new(),
                heap: BinaryHeap::new(),
                memory_head: None,
            });
        }
        // Memory is freed before the merge; each run is read through a
        // 256 KiB buffer.
        let memory = std::mem::take(&mut self.buf);
        let mut runs = Vec::with_capacity(self.runs.len());
        let mut heap = BinaryHeap::new();
        for (i, f) in self.runs.drain(..).enumerate() {
            let mut r = BufReader::with_capacity(256 << 10, f);
            if let Some(rec) = read_record::<R>(&mut r)? {
                heap.push(Reverse((rec, i)));
            }
            runs.push(r);
        }
        let mut memory = memory.into_iter();
        let memory_head = memory.next();
        Ok(Sorted {
            memory,
            runs,
            heap,
            memory_head,
        })
    }
}

fn read_record<R: Record>(r: &mut impl Read) -> io::Result<Option<R>> {
    let mut rec = R::new_zeroed();
    match r.read_exact(rec.as_mut_bytes()) {
        Ok(()) => Ok(Some(rec)),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// The sorted stream out of a [`Sorter`].
#[derive(Debug)]
pub struct Sorted<R: Record> {
    memory: std::vec::IntoIter<R>,
    memory_head: Option<R>,
    runs: Vec<BufReader<File>>,
    heap: BinaryHeap<Reverse<(R, usize)>>,
}

impl<R: Record> Sorted<R> {
    /// The next record, or an I/O error reading a run back.
    pub fn next_record(&mut self) -> io::Result<Option<R>> {
        if self.runs.is_empty() {
            return Ok(self.memory.next());
        }
        let from_heap = self.heap.peek().map(|Reverse((r, _))| *r);
        match (from_heap, self.memory_head) {
            (None, None) => Ok(None),
            (Some(h), Some(m)) if m < h => {
                self.memory_head = self.memory.next();
                Ok(Some(m))
            }
            (None, Some(m)) => {
                self.memory_head = self.memory.next();
                Ok(Some(m))
            }
            (Some(_), _) => {
                let Some(Reverse((rec, i))) = self.heap.pop() else {
                    return Ok(None);
                };
                if let Some(next) = read_record::<R>(&mut self.runs[i])? {
                    self.heap.push(Reverse((next, i)));
                }
                Ok(Some(rec))
            }
        }
    }
}

impl<R: Record> Iterator for Sorted<R> {
    type Item = io::Result<R>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(
        Clone,
        Copy,
        Debug,
        PartialEq,
        Eq,
        PartialOrd,
        Ord,
        FromBytes,
        IntoBytes,
        Immutable,
        KnownLayout,
    )]
    #[repr(C)]
    struct Pair {
        key: u64,
        value: u64,
    }

    fn check(n: u64, cap_bytes: usize) -> usize {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Sorter::<Pair>::new(cap_bytes, dir.path());
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut expected = Vec::new();
        for i in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let p = Pair {
                key: x % 1000,
                value: i,
            };
            expected.push(p);
            s.push(p).unwrap();
        }
        let runs = s.runs();
        expected.sort();
        let got: Vec<Pair> = s.finish().unwrap().map(Result::unwrap).collect();
        assert_eq!(got, expected);
        runs
    }

    #[test]
    fn sorts_in_memory() {
        assert_eq!(check(5000, 1 << 20), 0);
    }

    #[test]
    fn sorts_across_spilled_runs() {
        // 16-byte records, at most 1024 in memory: 50,000 records make 48 runs.
        assert!(check(50_000, 0) > 40);
    }

    #[test]
    fn empty() {
        assert_eq!(check(0, 0), 0);
    }
}
