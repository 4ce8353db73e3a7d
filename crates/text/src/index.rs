//! Writing and reading the three sections of the word index.
//!
//! The reader works over plain byte slices that usually come from a memory
//! map of the edition file, so it cannot assume anything about them: the
//! offsets are viewed through [`zerocopy::little_endian::U32`] and each
//! word's postings through [`txmap_format::chunked::Chunked`], which have
//! alignment 1 (sections need not be aligned in the file) and a fixed byte
//! order (the file is portable), and whose views are obtained without
//! `unsafe` or pointer casts. `open`
//! checks only what is O(1) to check; every later access checks the offsets
//! it uses against the slice bounds and reports corruption as an error, so a
//! damaged file degrades into errors, never into a panic or an out-of-bounds
//! read.

use std::collections::HashMap;
use std::fmt;
use std::io::{self, Write};
use std::iter::FusedIterator;
use std::ops::ControlFlow;
use std::sync::Arc;

use fst::{IntoStreamer, Map, MapBuilder, Streamer};
use txmap_format::chunked::{self, Chunked, Unchunk};
use zerocopy::little_endian::U16;
use zerocopy::little_endian::U32;
use zerocopy::{FromBytes, Immutable, KnownLayout};

use crate::dense::{DENSE_FROM, DenseWord, DenseWords};
use crate::error::{Section, TextError};
use crate::fold::{fold_into, words};

/// The summed postings from which [`TextIndex::prefix_union`] merges by
/// bitmap rather than by sorting.
const BITMAP_UNION_FROM: usize = 4096;

/// The `fst` format version this crate writes and accepts.
const FST_VERSION: u64 = 3;
/// Smallest possible fst: version, type, key count, root address, checksum
/// (the map whose only key is the empty word has root address 0 and no nodes).
const FST_MIN_LEN: usize = 36;
/// An fst's root address plus this equals its length (fst v3 layout).
const FST_ROOT_TO_END: u64 = 21;

// ---------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------

/// What [`IndexWriter::finish`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IndexStats {
    /// Number of words.
    pub words: u64,
    /// Total number of postings over all words.
    pub postings: u64,
    /// Bytes written to the fst section.
    pub fst_bytes: u64,
    /// Bytes written to the offsets section (`(words + 1) * 4`).
    pub offsets_bytes: u64,
    /// Bytes written to the postings section: each word's chunked list.
    pub postings_bytes: u64,
}

/// The writers and stats returned by [`IndexWriter::into_inner`].
#[derive(Debug)]
pub struct FinishedIndex<W1, W2, W3> {
    /// What was written.
    pub stats: IndexStats,
    /// The fst section's writer, flushed.
    pub fst: W1,
    /// The offsets section's writer, flushed.
    pub offsets: W2,
    /// The postings section's writer, flushed.
    pub postings: W3,
}

struct CountingWriter<W> {
    inner: W,
    count: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Streams the three sections of a word index to three writers.
///
/// Words must be pushed in strictly increasing byte order, each with its
/// strictly increasing postings. The offsets section gets one 4-byte write
/// per word, so give it a buffered writer (`BufWriter`, `Vec<u8>`, ...).
/// After any error the writer is in an unspecified state: discard it.
pub struct IndexWriter<W1: Write, W2: Write, W3: Write> {
    fst: MapBuilder<CountingWriter<W1>>,
    offsets: W2,
    postings: W3,
    words: u64,
    total_postings: u64,
    total_bytes: u64,
    last_word: Vec<u8>,
    scratch: Vec<u8>,
}

impl<W1: Write, W2: Write, W3: Write> fmt::Debug for IndexWriter<W1, W2, W3> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IndexWriter")
            .field("words", &self.words)
            .field("postings", &self.total_postings)
            .field("last_word", &String::from_utf8_lossy(&self.last_word))
            .finish_non_exhaustive()
    }
}

impl<W1: Write, W2: Write, W3: Write> IndexWriter<W1, W2, W3> {
    /// Starts an index; writes the fst header and the first offset (0).
    pub fn new(fst: W1, mut offsets: W2, postings: W3) -> Result<Self, TextError> {
        let fst = MapBuilder::new(CountingWriter {
            inner: fst,
            count: 0,
        })?;
        offsets.write_all(&0u32.to_le_bytes())?;
        Ok(IndexWriter {
            fst,
            offsets,
            postings,
            words: 0,
            total_postings: 0,
            total_bytes: 0,
            last_word: Vec::new(),
            scratch: Vec::new(),
        })
    }

    /// Adds `word` (folded, UTF-8, non-empty, greater than the previous word
    /// in byte order) with its postings (strictly increasing description
    /// ordinals; may be empty, though the importer never has reason to),
    /// as a [chunked](txmap_format::chunked) list. Returns how many bits
    /// of the first-words bitmap the list's header takes
    /// ([`FirstWordsWriter::push_list`]) before its postings' bits.
    pub fn push(&mut self, word: &[u8], postings: &[u32]) -> Result<usize, TextError> {
        if word.is_empty() {
            return Err(TextError::EmptyWord);
        }
        let word_str = std::str::from_utf8(word).map_err(|_| TextError::NotUtf8 {
            word: word.to_vec(),
        })?;
        if self.words > 0 && word <= self.last_word.as_slice() {
            return Err(TextError::OutOfOrder {
                previous: String::from_utf8_lossy(&self.last_word).into_owned(),
                word: word_str.to_owned(),
            });
        }
        if self.words >= u64::from(u32::MAX) - 1 {
            return Err(TextError::TooLarge { what: "words" });
        }
        self.scratch.clear();
        // The codec checks the postings ascend; the error names where not.
        chunked::chunk(postings, &mut self.scratch).map_err(|_| TextError::UnsortedPostings {
            word: word_str.to_owned(),
            index: first_unsorted(postings).unwrap_or(0),
        })?;
        let bytes = self.total_bytes + self.scratch.len() as u64;
        let end = u32::try_from(bytes).map_err(|_| TextError::TooLarge { what: "postings" })?;
        self.fst.insert(word, self.words)?;
        self.postings.write_all(&self.scratch)?;
        self.offsets.write_all(&end.to_le_bytes())?;

        self.total_postings += postings.len() as u64;
        self.total_bytes = bytes;
        self.words += 1;
        self.last_word.clear();
        self.last_word.extend_from_slice(word);
        Ok((self.scratch.len() - 2 * postings.len()) / 2)
    }

    /// Number of words pushed so far.
    pub fn word_count(&self) -> u64 {
        self.words
    }

    /// Finishes the fst, flushes all three writers and returns what was written.
    pub fn finish(self) -> Result<IndexStats, TextError> {
        self.into_inner().map(|f| f.stats)
    }

    /// Like [`finish`](Self::finish), and also hands back the three writers.
    pub fn into_inner(mut self) -> Result<FinishedIndex<W1, W2, W3>, TextError> {
        let mut fst = self.fst.into_inner()?;
        fst.flush()?;
        self.offsets.flush()?;
        self.postings.flush()?;
        let stats = IndexStats {
            words: self.words,
            postings: self.total_postings,
            fst_bytes: fst.count,
            offsets_bytes: (self.words + 1) * 4,
            postings_bytes: self.total_bytes,
        };
        Ok(FinishedIndex {
            stats,
            fst: fst.inner,
            offsets: self.offsets,
            postings: self.postings,
        })
    }
}

/// Index of the first element not greater than its predecessor.
pub(crate) fn first_unsorted(v: &[u32]) -> Option<usize> {
    v.windows(2).position(|w| w[0] >= w[1]).map(|i| i + 1)
}

/// The three sections of a word index, in memory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IndexBytes {
    /// The fst section.
    pub fst: Vec<u8>,
    /// The offsets section.
    pub offsets: Vec<u8>,
    /// The postings section.
    pub postings: Vec<u8>,
    /// The first-words bitmap, one bit a posting.
    pub first_words: Vec<u8>,
}

impl IndexBytes {
    /// Opens a reader over these bytes (the first-words bitmap attached
    /// when there is one).
    pub fn open(&self) -> Result<TextIndex<'_>, TextError> {
        let index = TextIndex::open(&self.fst, &self.offsets, &self.postings)?;
        if self.first_words.is_empty() {
            return Ok(index);
        }
        index.with_first_words(&self.first_words)
    }
}

/// Writes the first-words bitmap, least significant bit first: a bit
/// every two bytes of the postings — for each list the bits of its header
/// ([`push_list`](Self::push_list)), then one a posting, set when the posting's word
/// is the first word of its description's folded term
/// ([`words`](crate::words()) of [`fold`](crate::fold())).
#[derive(Debug)]
pub struct FirstWordsWriter<W: Write> {
    out: W,
    byte: u8,
    bits: u64,
}

impl<W: Write> FirstWordsWriter<W> {
    pub fn new(out: W) -> Self {
        FirstWordsWriter {
            out,
            byte: 0,
            bits: 0,
        }
    }

    /// The bits of one word's list: zero for its header, `header` of them
    /// as [`IndexWriter::push`] returned, then one a posting.
    pub fn push_list(
        &mut self,
        header: usize,
        firsts: impl IntoIterator<Item = bool>,
    ) -> io::Result<()> {
        for first in std::iter::repeat_n(false, header).chain(firsts) {
            self.push(first)?;
        }
        Ok(())
    }

    fn push(&mut self, first: bool) -> io::Result<()> {
        self.byte |= u8::from(first) << (self.bits % 8);
        self.bits += 1;
        if self.bits.is_multiple_of(8) {
            self.out.write_all(&[self.byte])?;
            self.byte = 0;
        }
        Ok(())
    }

    /// Writes the last partial byte; returns the writer and the bits
    /// written.
    pub fn finish(mut self) -> io::Result<(W, u64)> {
        if !self.bits.is_multiple_of(8) {
            self.out.write_all(&[self.byte])?;
        }
        self.out.flush()?;
        Ok((self.out, self.bits))
    }
}

/// Collects description terms in memory, then writes their word index.
///
/// A convenience over [`IndexWriter`] for the importer and for tests: each
/// term is folded and split with [`fold`](crate::fold()) and
/// [`words`](crate::words()); every word gets the ordinal. Adding terms in
/// increasing ordinal order is cheapest, but any order works.
#[derive(Debug, Default)]
pub struct TermIndexBuilder {
    /// Each word's postings as `ordinal << 1 | first`, `first` when the
    /// word is the term's first.
    map: HashMap<String, Vec<u64>>,
    folded: String,
    unsorted: bool,
}

impl TermIndexBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Indexes the words of `term` (raw, unfolded) under `ordinal`.
    pub fn add(&mut self, ordinal: u32, term: &str) {
        self.folded.clear();
        fold_into(term, &mut self.folded);
        for (i, word) in words(&self.folded).enumerate() {
            let list = match self.map.get_mut(word) {
                Some(list) => list,
                None => self.map.entry(word.to_owned()).or_default(),
            };
            let entry = u64::from(ordinal) << 1 | u64::from(i == 0);
            match list.last_mut() {
                Some(last) if *last >> 1 == u64::from(ordinal) => *last |= entry,
                Some(last) => {
                    self.unsorted |= *last > entry;
                    list.push(entry);
                }
                None => list.push(entry),
            }
        }
    }

    /// Number of distinct words so far.
    pub fn word_count(&self) -> usize {
        self.map.len()
    }

    /// Writes the index to three writers and its first-words bitmap to a
    /// fourth.
    pub fn write<W1: Write, W2: Write, W3: Write, W4: Write>(
        self,
        fst: W1,
        offsets: W2,
        postings: W3,
        first_words: W4,
    ) -> Result<IndexStats, TextError> {
        let mut entries: Vec<(String, Vec<u64>)> = self.map.into_iter().collect();
        entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        let mut writer = IndexWriter::new(fst, offsets, postings)?;
        let mut first = FirstWordsWriter::new(first_words);
        let mut list = Vec::new();
        for (word, mut entries) in entries {
            if self.unsorted {
                entries.sort_unstable();
                // The same ordinal twice: keep one, first if either is.
                entries.dedup_by(|b, a| {
                    let same = *a >> 1 == *b >> 1;
                    if same {
                        *a |= *b;
                    }
                    same
                });
            }
            list.clear();
            list.extend(entries.iter().map(|&e| (e >> 1) as u32));
            let header = writer.push(word.as_bytes(), &list)?;
            first.push_list(header, entries.iter().map(|e| e & 1 == 1))?;
        }
        first.finish()?;
        writer.finish()
    }

    /// Writes the index into memory.
    pub fn build(self) -> Result<IndexBytes, TextError> {
        let mut bytes = IndexBytes::default();
        self.write(
            &mut bytes.fst,
            &mut bytes.offsets,
            &mut bytes.postings,
            &mut bytes.first_words,
        )?;
        Ok(bytes)
    }
}

// ---------------------------------------------------------------------------
// Postings
// ---------------------------------------------------------------------------

/// A word's postings: a [chunked](txmap_format::chunked) list of
/// description ordinals, ascending (if the index is intact), viewed in
/// place. Cheap to copy.
#[derive(Clone, Copy)]
pub struct Postings<'a> {
    list: Chunked<'a>,
    /// The first-words bit of the list's first item: the byte position of
    /// its low half in the postings section, halved.
    first_bit: usize,
}

impl Default for Postings<'_> {
    fn default() -> Self {
        Postings::EMPTY
    }
}

impl<'a> Postings<'a> {
    /// No postings.
    pub const EMPTY: Postings<'static> = Postings {
        list: Chunked::EMPTY,
        first_bit: 0,
    };

    /// Number of ordinals.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are no ordinals.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The greatest ordinal (the last, in an intact list).
    pub fn last(&self) -> Option<u32> {
        let (high, run) = self.list.runs().filter(|(_, run)| !run.is_empty()).last()?;
        run.last().map(|l| high | u32::from(l.get()))
    }

    /// Whether the `i`-th posting's word is the first word of its term,
    /// by the index's first-words bitmap (`None` without one).
    pub(crate) fn is_first(&self, first: Option<&[u8]>, i: usize) -> Option<bool> {
        let bit = self.first_bit.checked_add(i)?;
        Some(first?.get(bit / 8)? >> (bit % 8) & 1 == 1)
    }

    /// Iterates the ordinals in stored (ascending) order.
    pub fn iter(&self) -> PostingsIter<'a> {
        PostingsIter {
            inner: self.list.iter(),
        }
    }

    /// Whether `ordinal` is present (its chunk, then a binary search; on
    /// corrupt, unsorted data the answer may be wrong but the call never
    /// panics).
    pub fn contains(&self, ordinal: u32) -> bool {
        self.list.contains(ordinal)
    }

    /// Copies the ordinals into a vector.
    pub fn to_vec(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.list.append_to(&mut out);
        out
    }

    /// The list's bytes, headers and all.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.list.as_bytes()
    }

    /// Each run of ordinals sharing their high half: the high half
    /// (shifted into place), the low halves, and the position of the
    /// run's first item in the list.
    pub(crate) fn runs(&self) -> impl Iterator<Item = (u32, &'a [U16], usize)> + use<'a> {
        let mut at = 0;
        self.list.runs().map(move |(high, run)| {
            let first = at;
            at += run.len();
            (high, run, first)
        })
    }

    /// The list's first bit in the first-words bitmap: which word's it is.
    pub(crate) fn start(&self) -> usize {
        self.first_bit
    }

    /// The list in `bytes`, as if it began the postings section.
    #[cfg(test)]
    pub(crate) fn of(bytes: &'a [u8]) -> Option<Postings<'a>> {
        let list = Chunked::new(bytes)?;
        Some(Postings {
            list,
            first_bit: list.lows_offset() / 2,
        })
    }
}

impl fmt::Debug for Postings<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 16;
        let mut list = f.debug_list();
        list.entries(self.iter().take(SHOWN));
        if self.len() > SHOWN {
            list.entry(&format_args!("... {} total", self.len()));
        }
        list.finish()
    }
}

impl PartialEq for Postings<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Postings<'_> {}

impl<'a> IntoIterator for Postings<'a> {
    type Item = u32;
    type IntoIter = PostingsIter<'a>;

    fn into_iter(self) -> PostingsIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Postings<'a> {
    type Item = u32;
    type IntoIter = PostingsIter<'a>;

    fn into_iter(self) -> PostingsIter<'a> {
        self.iter()
    }
}

/// Iterator over [`Postings`].
#[derive(Debug, Clone)]
pub struct PostingsIter<'a> {
    inner: Unchunk<'a>,
}

impl Iterator for PostingsIter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        self.inner.next()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl ExactSizeIterator for PostingsIter<'_> {}
impl FusedIterator for PostingsIter<'_> {}

// ---------------------------------------------------------------------------
// Reader
// ---------------------------------------------------------------------------

/// A word index over three byte sections (see the crate's FORMAT docs).
#[derive(Clone)]
pub struct TextIndex<'a> {
    map: Map<&'a [u8]>,
    /// Byte offsets into `postings`, one a word and one closing.
    offsets: &'a [U32],
    /// Each word's chunked list, one after another.
    postings: &'a [u8],
    /// One bit every two bytes of `postings`, least significant first:
    /// for the low half of a posting at byte `b`, bit `b / 2` says
    /// whether the posting's word is the first word of its description's
    /// (folded) term; the bits of the lists' headers are zero. Absent in
    /// files written before it existed; ranking then reads the terms.
    first: Option<&'a [u8]>,
    /// The commonest words' postings as bitmaps, when the caller keeps
    /// them ([`TextIndex::with_dense`]).
    dense: Option<&'a DenseWords>,
}

impl fmt::Debug for TextIndex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TextIndex")
            .field("words", &self.word_count())
            .field("postings", &self.postings.len())
            .field("fst_bytes", &self.map.as_fst().as_bytes().len())
            .finish()
    }
}

fn section<T: FromBytes + KnownLayout + Immutable>(
    bytes: &[u8],
    section: Section,
) -> Result<&[T], TextError> {
    <[T]>::ref_from_bytes(bytes).map_err(|_| TextError::BadSectionLength {
        section,
        len: bytes.len(),
    })
}

fn read_u64(bytes: &[u8], at: usize) -> Option<u64> {
    let end = at.checked_add(8)?;
    let chunk: [u8; 8] = bytes.get(at..end)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// O(1) checks of the fst header and footer, stricter than `fst::Map::new`
/// (whose root-address check is skipped for non-empty maps, so a truncated
/// fst would otherwise be accepted and panic on first use). Returns the key
/// count recorded in the footer.
fn check_fst(bytes: &[u8]) -> Result<u64, TextError> {
    let len = bytes.len();
    let bad = |reason| TextError::BadFst { reason };
    if len < FST_MIN_LEN {
        return Err(bad("shorter than the smallest fst"));
    }
    if read_u64(bytes, 0) != Some(FST_VERSION) {
        return Err(bad("not fst format version 3"));
    }
    if read_u64(bytes, 8) != Some(0) {
        return Err(bad("fst type is not 0"));
    }
    let end = len - 4;
    let root = read_u64(bytes, end - 8).ok_or(bad("truncated footer"))?;
    let keys = read_u64(bytes, end - 16).ok_or(bad("truncated footer"))?;
    let root_ok = if root == 0 {
        len == FST_MIN_LEN
    } else {
        root.checked_add(FST_ROOT_TO_END) == Some(len as u64)
    };
    if !root_ok {
        return Err(bad("root address does not match the length (truncated?)"));
    }
    Ok(keys)
}

/// Upper bound (exclusive) of the keys starting with `prefix`, or `None`
/// when there is none (`prefix` empty or all `0xFF`).
fn prefix_upper_bound(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut upper = prefix.to_vec();
    while let Some(last) = upper.pop() {
        if last < 0xFF {
            upper.push(last + 1);
            return Some(upper);
        }
    }
    None
}

impl<'a> TextIndex<'a> {
    /// Opens an index over its three sections. Cheap: checks the fst header
    /// and footer, that the offsets' length is a multiple of 4 and the
    /// postings' of 2,
    /// that the word counts agree, and the first and last offsets; nothing
    /// is scanned. The caller is expected to have verified the fst section's
    /// checksum (a corrupt fst interior can make the `fst` crate panic);
    /// offsets and postings are checked on every access.
    pub fn open(fst: &'a [u8], offsets: &'a [u8], postings: &'a [u8]) -> Result<Self, TextError> {
        let offsets: &[U32] = section(offsets, Section::Offsets)?;
        if !postings.len().is_multiple_of(2) {
            return Err(TextError::BadSectionLength {
                section: Section::Postings,
                len: postings.len(),
            });
        }
        let Some((first, _)) = offsets.split_first() else {
            return Err(TextError::BadSectionLength {
                section: Section::Offsets,
                len: 0,
            });
        };
        let word_count = offsets.len() - 1;
        let fst_keys = check_fst(fst)?;
        if fst_keys != word_count as u64 {
            return Err(TextError::WordCountMismatch {
                fst: usize::try_from(fst_keys).unwrap_or(usize::MAX),
                offsets: word_count,
            });
        }
        let map = Map::new(fst)?;
        let last = offsets.last().map_or(0, |v| v.get());
        if first.get() != 0 || last as usize != postings.len() {
            return Err(TextError::CorruptOffsets {
                word: if first.get() != 0 { 0 } else { word_count },
                start: first.get(),
                end: last,
                postings_len: postings.len(),
            });
        }
        Ok(TextIndex {
            map,
            offsets,
            postings,
            first: None,
            dense: None,
        })
    }

    /// Number of distinct words.
    pub fn word_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// The postings section's length in bytes.
    pub fn postings_bytes(&self) -> usize {
        self.postings.len()
    }

    /// Attaches the first-words bitmap (a bit every two bytes of the
    /// postings, see [`FirstWordsWriter`]), which lets
    /// [`first_word_codes`](Self::first_word_codes) answer. Its length
    /// must be the postings' bytes halved, in bits, rounded up to bytes.
    pub fn with_first_words(mut self, bits: &'a [u8]) -> Result<Self, TextError> {
        if bits.len() != (self.postings.len() / 2).div_ceil(8) {
            return Err(TextError::BadSectionLength {
                section: Section::FirstWords,
                len: bits.len(),
            });
        }
        self.first = Some(bits);
        Ok(self)
    }

    /// Attaches where the commonest words' bitmaps are kept
    /// ([`DenseWords`]): a short list matched against a word of at least
    /// [`DENSE_FROM`](crate::DENSE_FROM) postings then reads a bit for
    /// each of its entries instead of galloping through the word's list.
    pub fn with_dense(mut self, dense: &'a DenseWords) -> Self {
        self.dense = Some(dense);
        self
    }

    /// The bitmaps of the word whose postings are `p`, when it is common
    /// enough, the list it is matched with short enough for them to pay,
    /// and the caller keeps them.
    pub(crate) fn dense_word(&self, p: Postings<'a>, against: usize) -> Option<Arc<DenseWord>> {
        if p.len() < DENSE_FROM || p.len() < against.saturating_mul(8) {
            return None;
        }
        self.dense?.get(p, self.first)
    }

    /// The bytes a search for `word` (folded) reads: its postings, or with
    /// `prefix` the postings of every word starting with it — one run,
    /// since words and their postings are in byte order — and their
    /// first-words bits. For a caller that asks for them ahead of the
    /// search (a mapped file's readahead); empty when nothing matches.
    pub fn postings_runs(&self, word: &str, prefix: bool) -> Result<[&'a [u8]; 2], TextError> {
        let (mut start, mut end) = (usize::MAX, 0usize);
        // Each list's bytes start its header's length before its first
        // low half, which is at byte `2 * first_bit`.
        let mut note = |p: Postings<'a>| {
            let bytes = p.as_bytes().len();
            let at = (2 * p.first_bit).saturating_sub(p.list.lows_offset());
            start = start.min(at);
            end = end.max(at + bytes);
        };
        if prefix {
            self.for_each_with_prefix(word, |_, p| {
                note(p);
                ControlFlow::Continue(())
            })?;
        } else if let Some((_, p)) = self.lookup(word)? {
            note(p);
        }
        if start >= end {
            return Ok([&[], &[]]);
        }
        let postings = self.postings.get(start..end).unwrap_or(&[]);
        let bits = self
            .first
            .and_then(|f| f.get(start / 16..end.div_ceil(16)))
            .unwrap_or(&[]);
        Ok([postings, bits])
    }

    /// For each of `candidates` (ascending description ordinals), how the
    /// first word of its term meets `word` (folded, one word): `2` when it
    /// is `word`, `1` when it starts with `word` and is longer (only with
    /// `prefix`; without, only `word`'s own postings are read), `0`
    /// otherwise. What ranking needs without reading a term: for a
    /// one-word query (with `prefix`) the tier (exact term, term starting
    /// with the query, other); for a longer one whether the term can start
    /// with the query at all, which needs its first word to be the query's
    /// first. `None` when the index has no first-words bitmap. The work is
    /// the postings read, as for the search that found the candidates.
    /// The first-words bitmap, when the index has one.
    pub(crate) fn first_bits(&self) -> Option<&'a [u8]> {
        self.first
    }

    pub fn first_word_codes(
        &self,
        word: &str,
        prefix: bool,
        candidates: &[u32],
    ) -> Result<Option<Vec<u8>>, TextError> {
        let Some(first) = self.first else {
            return Ok(None);
        };
        let mut codes = vec![0u8; candidates.len()];
        let mut mark = |w: &str, p: Postings<'a>| {
            let code = if w == word { 2 } else { 1 };
            crate::search::meet(candidates, p, |i, j| {
                if p.is_first(Some(first), j) == Some(true) {
                    codes[i] = codes[i].max(code);
                }
            });
        };
        if prefix {
            self.for_each_with_prefix(word, |w, p| {
                mark(w, p);
                ControlFlow::Continue(())
            })?;
        } else if let Some((_, p)) = self.lookup(word)? {
            mark(word, p);
        }
        Ok(Some(codes))
    }

    /// The postings of word number `index` (the fst value), bounds-checked.
    pub fn postings_at(&self, index: u64) -> Result<Postings<'a>, TextError> {
        let word_count = self.word_count();
        let corrupt_value = || TextError::CorruptFstValue {
            value: index,
            word_count,
        };
        let i = usize::try_from(index).map_err(|_| corrupt_value())?;
        if i >= word_count {
            return Err(corrupt_value());
        }
        let (Some(start), Some(end)) = (self.offsets.get(i), self.offsets.get(i + 1)) else {
            return Err(corrupt_value());
        };
        let (start, end) = (start.get(), end.get());
        let corrupt = || TextError::CorruptOffsets {
            word: i,
            start,
            end,
            postings_len: self.postings.len(),
        };
        if start > end {
            return Err(corrupt());
        }
        let bytes = self
            .postings
            .get(start as usize..end as usize)
            .ok_or_else(corrupt)?;
        let list = Chunked::new(bytes).ok_or_else(corrupt)?;
        Ok(Postings {
            list,
            first_bit: (start as usize + list.lows_offset()) / 2,
        })
    }

    /// The postings of `word`, which must already be folded (see
    /// [`fold`](crate::fold())); empty if the word is not in the index.
    pub fn postings(&self, word: &str) -> Result<Postings<'a>, TextError> {
        match self.map.get(word) {
            Some(index) => self.postings_at(index),
            None => Ok(Postings::default()),
        }
    }

    /// The word index and postings of `word` (folded), if present.
    pub(crate) fn lookup(&self, word: &str) -> Result<Option<(usize, Postings<'a>)>, TextError> {
        match self.map.get(word) {
            // postings_at checked that the value fits in usize.
            Some(index) => Ok(Some((index as usize, self.postings_at(index)?))),
            None => Ok(None),
        }
    }

    /// Whether `word` (folded) is in the index.
    pub fn contains_word(&self, word: &str) -> bool {
        self.map.contains_key(word)
    }

    /// The indexed words nearest `word` (folded): those at the smallest
    /// edit distance (insertions, deletions, substitutions, and swaps of
    /// two neighbours — the typist's slips), at most one for a word of up
    /// to five characters and two for a longer one, that start with the
    /// same character; the words with the most postings first, at most
    /// `limit`. Empty when `word` itself is indexed. What a search
    /// suggests when nothing matches; the work is one pass over the words
    /// sharing the first character.
    pub fn similar(&self, word: &str, limit: usize) -> Result<Vec<String>, TextError> {
        let Some(first) = word.chars().next() else {
            return Ok(Vec::new());
        };
        if self.contains_word(word) || limit == 0 {
            return Ok(Vec::new());
        }
        let target: Vec<char> = word.chars().collect();
        let most = if target.len() <= 5 { 1 } else { 2 };
        let mut found: Vec<(usize, usize, String)> = Vec::new();
        let mut prefix = [0u8; 4];
        self.for_each_with_prefix(first.encode_utf8(&mut prefix), |w, postings| {
            let candidate: Vec<char> = w.chars().collect();
            if candidate.len().abs_diff(target.len()) <= most
                && let Some(d) = edit_distance(&target, &candidate, most)
            {
                found.push((d, usize::MAX - postings.len(), w.to_owned()));
            }
            ControlFlow::Continue(())
        })?;
        found.sort_unstable();
        let best = found.first().map_or(0, |f| f.0);
        Ok(found
            .into_iter()
            .take_while(|f| f.0 == best)
            .take(limit)
            .map(|f| f.2)
            .collect())
    }

    /// Calls `f` with every word starting with `prefix` (folded; may be
    /// empty) and its postings, in byte order, until `f` breaks. This is the
    /// fst range `[prefix, prefix+1)`; the work is proportional to the
    /// number of words visited.
    pub fn for_each_with_prefix<F>(&self, prefix: &str, mut f: F) -> Result<(), TextError>
    where
        F: FnMut(&str, Postings<'a>) -> ControlFlow<()>,
    {
        let upper = prefix_upper_bound(prefix.as_bytes());
        let mut range = self.map.range().ge(prefix);
        if let Some(upper) = &upper {
            range = range.lt(upper);
        }
        let mut stream = range.into_stream();
        while let Some((key, value)) = stream.next() {
            let word = match std::str::from_utf8(key) {
                Ok(w) if !w.is_empty() => w,
                _ => return Err(TextError::CorruptWord { value }),
            };
            let postings = self.postings_at(value)?;
            if f(word, postings).is_break() {
                break;
            }
        }
        Ok(())
    }

    /// All words starting with `prefix` (folded) with their postings, in
    /// byte order. Errors with [`TextError::TooCostly`] if more than
    /// `max_words` words match (the work stops there).
    pub fn prefix(
        &self,
        prefix: &str,
        max_words: usize,
    ) -> Result<Vec<(String, Postings<'a>)>, TextError> {
        let mut out = Vec::new();
        let mut too_many = false;
        self.for_each_with_prefix(prefix, |word, postings| {
            if out.len() >= max_words {
                too_many = true;
                return ControlFlow::Break(());
            }
            out.push((word.to_owned(), postings));
            ControlFlow::Continue(())
        })?;
        if too_many {
            return Err(TextError::TooCostly { limit: max_words });
        }
        Ok(out)
    }

    /// The sorted, deduplicated union of the postings of all words starting
    /// with `prefix` (folded). Errors with [`TextError::TooCostly`] if the
    /// summed length of those postings exceeds `max_candidates` (the work
    /// stops there).
    ///
    /// One word's postings are the answer as they are. Many long lists (a
    /// short prefix: "st" is the union of hundreds of words) are merged
    /// through a bitmap over the ordinals, linear in their length, rather
    /// than sorted — when the ordinals are dense enough for the bitmap to
    /// cost no more than the lists (a damaged list of huge ordinals falls
    /// back to sorting, so memory stays proportional to the postings).
    pub fn prefix_union(&self, prefix: &str, max_candidates: usize) -> Result<Vec<u32>, TextError> {
        let mut lists: Vec<Postings<'a>> = Vec::new();
        let mut total = 0usize;
        let mut too_many = false;
        self.for_each_with_prefix(prefix, |_, postings| {
            total = total.saturating_add(postings.len());
            if total > max_candidates || lists.len() >= max_candidates {
                too_many = true;
                return ControlFlow::Break(());
            }
            lists.push(postings);
            ControlFlow::Continue(())
        })?;
        if too_many {
            return Err(TextError::TooCostly {
                limit: max_candidates,
            });
        }
        let largest = (lists.iter())
            .filter_map(|l| l.last())
            .map(|v| v as usize)
            .max()
            .unwrap_or(0);
        let mut out: Vec<u32> = Vec::with_capacity(total);
        if let [one] = lists.as_slice()
            && first_unsorted_in(one.iter(), one.len()).is_none()
        {
            out = one.to_vec();
        } else if total >= BITMAP_UNION_FROM && largest / 64 <= total.saturating_mul(4) {
            let mut bits = vec![0u64; largest / 64 + 1];
            for list in &lists {
                for (high, run, _) in list.runs() {
                    for low in run {
                        let v = (high | u32::from(low.get())) as usize;
                        if let Some(word) = bits.get_mut(v / 64) {
                            *word |= 1 << (v % 64);
                        }
                    }
                }
            }
            for (i, &word) in bits.iter().enumerate() {
                let mut w = word;
                while w != 0 {
                    out.push((i * 64) as u32 + w.trailing_zeros());
                    w &= w - 1;
                }
            }
        } else {
            for list in &lists {
                out.extend(list.iter());
            }
            out.sort_unstable();
            out.dedup();
        }
        Ok(out)
    }

    /// [`prefix_union`](Self::prefix_union) of the ordinals whose bit is
    /// set in `mask` (see [`crate::Among::Bits`]), listed.
    pub fn prefix_union_masked(
        &self,
        prefix: &str,
        max_candidates: usize,
        mask: &[u64],
    ) -> Result<Vec<u32>, TextError> {
        let bits = self.prefix_bits_masked(prefix, max_candidates, mask)?;
        let mut out = Vec::new();
        for (i, &word) in bits.iter().enumerate() {
            let mut w = word;
            while w != 0 {
                out.push((i * 64) as u32 + w.trailing_zeros());
                w &= w - 1;
            }
        }
        Ok(out)
    }

    /// The same union as a bitmap the mask's size: the postings are read
    /// as for the union (and refused past `max_candidates` alike), but
    /// only the masked ordinals are marked.
    pub fn prefix_bits_masked(
        &self,
        prefix: &str,
        max_candidates: usize,
        mask: &[u64],
    ) -> Result<Vec<u64>, TextError> {
        let mut bits = vec![0u64; mask.len()];
        let mut total = 0usize;
        let mut words = 0usize;
        let mut too_many = false;
        self.for_each_with_prefix(prefix, |_, postings| {
            total = total.saturating_add(postings.len());
            words += 1;
            if total > max_candidates || words > max_candidates {
                too_many = true;
                return ControlFlow::Break(());
            }
            for v in postings.iter() {
                let v = v as usize;
                if let (Some(word), Some(m)) = (bits.get_mut(v / 64), mask.get(v / 64)) {
                    *word |= m & (1 << (v % 64));
                }
            }
            ControlFlow::Continue(())
        })?;
        if too_many {
            return Err(TextError::TooCostly {
                limit: max_candidates,
            });
        }
        Ok(bits)
    }

    /// Full consistency check, O(size of the index): the fst checksum, that
    /// the fst maps its words in order to `0, 1, 2, ...`, that every word is
    /// non-empty UTF-8, that offsets never decrease, and that every word's
    /// postings are strictly increasing. For `fsck`-style tools and tests;
    /// queries do not need it.
    pub fn verify(&self) -> Result<(), TextError> {
        self.map.as_fst().verify()?;
        let word_count = self.word_count();
        let mut expected = 0u64;
        let mut stream = self.map.stream();
        while let Some((key, value)) = stream.next() {
            if value != expected {
                return Err(TextError::CorruptFstValue { value, word_count });
            }
            if key.is_empty() || std::str::from_utf8(key).is_err() {
                return Err(TextError::CorruptWord { value });
            }
            let postings = self.postings_at(value)?;
            if let Some(index) = first_unsorted_in(postings.iter(), postings.len()) {
                return Err(TextError::CorruptPostings {
                    word: expected as usize,
                    index,
                });
            }
            expected += 1;
        }
        if expected != word_count as u64 {
            return Err(TextError::WordCountMismatch {
                fst: expected as usize,
                offsets: word_count,
            });
        }
        Ok(())
    }
}

/// Where `items` (a list of `len` items) first fails to rise above the
/// item before it, or falls short of `len` (a chunked list whose chunks'
/// counts and low halves disagree).
pub(crate) fn first_unsorted_in(items: impl Iterator<Item = u32>, len: usize) -> Option<usize> {
    let mut previous = None;
    let mut n = 0;
    for item in items {
        if previous.is_some_and(|p| p >= item) {
            return Some(n);
        }
        previous = Some(item);
        n += 1;
    }
    (n < len).then_some(n)
}

/// The optimal string alignment distance of `a` and `b` (Levenshtein
/// with swaps of neighbours), if it is at most `most`.
fn edit_distance(a: &[char], b: &[char], most: usize) -> Option<usize> {
    let (n, m) = (a.len(), b.len());
    let mut rows = vec![vec![0usize; m + 1]; n + 1];
    for (i, row) in rows.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in rows[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=n {
        let mut least = usize::MAX;
        for j in 1..=m {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[i - 1][j] + 1)
                .min(rows[i][j - 1] + 1)
                .min(rows[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[i - 2][j - 2] + 1);
            }
            rows[i][j] = d;
            least = least.min(d);
        }
        if least > most {
            return None;
        }
    }
    Some(rows[n][m]).filter(|&d| d <= most)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upper_bound() {
        assert_eq!(prefix_upper_bound(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_upper_bound(b"a\xff"), Some(b"b".to_vec()));
        assert_eq!(prefix_upper_bound(b"\xff\xff"), None);
        assert_eq!(prefix_upper_bound(b""), None);
    }

    #[test]
    fn empty_index() {
        let bytes = TermIndexBuilder::new().build().unwrap();
        assert_eq!(bytes.fst.len(), 39);
        assert_eq!(bytes.offsets, [0, 0, 0, 0]);
        assert!(bytes.postings.is_empty());
        let index = bytes.open().unwrap();
        assert_eq!(index.word_count(), 0);
        assert!(index.postings("x").unwrap().is_empty());
        assert!(index.prefix("", 10).unwrap().is_empty());
        index.verify().unwrap();
    }

    #[test]
    fn similar_words_are_the_nearest_by_edits_commonest_first() {
        let mut b = TermIndexBuilder::new();
        let terms = [
            "Fracture of femur",
            "Fracture of tibia",
            "Fraction",
            "Diabetes mellitus",
            "Diabetic foot",
            "Sjögren syndrome",
            "Anemia, aplastic",
        ];
        for (i, term) in terms.into_iter().enumerate() {
            b.add(i as u32, term);
        }
        let bytes = b.build().unwrap();
        let index = bytes.open().unwrap();
        // A swap, a missing letter, a wrong one: one edit each.
        assert_eq!(index.similar("fracutre", 3).unwrap(), ["fracture"]);
        assert_eq!(index.similar("fractre", 3).unwrap(), ["fracture"]);
        assert_eq!(index.similar("diabeles", 3).unwrap(), ["diabetes"]);
        // Two edits for a long word; the commoner word first on a tie.
        assert_eq!(index.similar("fractiom", 3).unwrap(), ["fraction"]);
        // Folded: "sjogren" is indexed, so nothing is suggested for it.
        assert!(index.similar("sjogren", 3).unwrap().is_empty());
        assert_eq!(index.similar("sjogran", 3).unwrap(), ["sjogren"]);
        // Too far, or another first letter: nothing.
        assert!(index.similar("xyz", 3).unwrap().is_empty());
        assert!(index.similar("racture", 3).unwrap().is_empty());
        assert_eq!(edit_distance(&['a', 'b'], &['b', 'a'], 1), Some(1));
        assert_eq!(edit_distance(&['a'], &['b', 'c', 'd'], 1), None);
    }

    #[test]
    fn first_word_codes_say_how_the_first_word_meets_the_query() {
        let mut b = TermIndexBuilder::new();
        for (i, term) in ["Fever", "fever fever", "Feverish cold", "Low fever", "Fe"]
            .into_iter()
            .enumerate()
        {
            b.add(i as u32, term);
        }
        // Out of order, and a word twice: still one posting, first if
        // either is.
        b.add(9, "cold fever");
        b.add(7, "fever cold fever");
        let bytes = b.build().unwrap();
        let index = bytes.open().unwrap();
        let all: Vec<u32> = vec![0, 1, 2, 3, 4, 7, 9];
        assert_eq!(
            index.first_word_codes("fever", true, &all).unwrap(),
            Some(vec![2, 2, 1, 0, 0, 2, 0])
        );
        assert_eq!(
            index.first_word_codes("fe", true, &all).unwrap(),
            Some(vec![1, 1, 1, 0, 2, 1, 0])
        );
        assert_eq!(
            index.first_word_codes("cold", true, &[2, 9]).unwrap(),
            Some(vec![0, 2])
        );
        // The word alone: "Feverish cold" (2) starts with "fever" but its
        // first word is not "fever"; "fe" is nobody's first word.
        assert_eq!(
            index.first_word_codes("fever", false, &all).unwrap(),
            Some(vec![2, 2, 0, 0, 0, 2, 0])
        );
        assert_eq!(
            index.first_word_codes("fe", false, &all).unwrap(),
            Some(vec![0, 0, 0, 0, 2, 0, 0])
        );
        assert_eq!(
            index.first_word_codes("absent", false, &all).unwrap(),
            Some(vec![0; 7])
        );
        // Without the bitmap there is no answer.
        let plain = TextIndex::open(&bytes.fst, &bytes.offsets, &bytes.postings).unwrap();
        assert_eq!(plain.first_word_codes("fever", true, &all).unwrap(), None);
        // A bitmap of the wrong length is refused.
        assert!(plain.with_first_words(&bytes.first_words[1..]).is_err());
    }

    #[test]
    fn stats() {
        let mut b = TermIndexBuilder::new();
        b.add(0, "a b");
        b.add(1, "b c");
        let mut bytes = IndexBytes::default();
        let stats = b
            .write(
                &mut bytes.fst,
                &mut bytes.offsets,
                &mut bytes.postings,
                &mut bytes.first_words,
            )
            .unwrap();
        // Postings a: [0], b: [0, 1], c: [1]; first words: a of 0, b of 1.
        // Each list's one-chunk header takes 6 bytes, 3 bits: a's posting
        // is bit 3, b's bits 7 and 8, c's bit 12.
        assert_eq!(bytes.first_words, vec![0b1000, 0b1]);
        assert_eq!(bytes.postings.len(), 3 * 6 + 4 * 2);
        assert_eq!(stats.words, 3);
        assert_eq!(stats.postings, 4);
        assert_eq!(stats.fst_bytes, bytes.fst.len() as u64);
        assert_eq!(stats.offsets_bytes, bytes.offsets.len() as u64);
        assert_eq!(stats.postings_bytes, bytes.postings.len() as u64);
    }
}
