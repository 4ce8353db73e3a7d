//! Term folding, tokenising, and the word index over description terms.
//!
//! txmap answers FHIR `$expand?filter=` and similar text searches from an
//! immutable edition file that is memory-mapped, not loaded. This crate
//! provides the three pieces of that search:
//!
//! * [`fold()`] / [`fold_into`] and [`words`]: the *one* definition of how a
//!   term or a query is normalised (case, accents, compatibility forms) and
//!   split into words, shared by the importer (indexing) and the store
//!   (querying) so both sides always agree. Rules in [`mod@fold`].
//! * [`IndexWriter`] (and the in-memory [`TermIndexBuilder`] over it) writes
//!   the word index as three byte sections that the edition file stores
//!   verbatim; [`TextIndex`] reads them in place from `&[u8]` (heap buffer
//!   or memory map) and answers exact-word, prefix and multi-word AND
//!   queries ([`TextIndex::search`], [`MatchMode`]).
//! * [`rank`] / [`RankQuery`]: a sort key for hits (exact > starts with >
//!   word prefixes, then shorter terms first).
//!
//! # Why three sections and not one structure
//!
//! An `fst::Map` gives compact, sorted word lookup and prefix ranges but
//! stores only one `u64` per key; postings lists must live elsewhere. Keeping
//! the fst, the offsets and the postings as separate sections lets the edition
//! file checksum and align each on its own and lets the reader view the two
//! offsets and each word's postings directly, with no decoding and no copy
//! at open time. A word's postings are a [chunked](txmap_format::chunked)
//! list: runs of description ordinals sharing their high 16 bits, two
//! bytes an ordinal (20.9 MB on the International-scale synthetic edition,
//! against 41.7 MB as `u32`s). A search meets a run with the candidates in
//! its range by galloping over the two-byte low halves, so a long list is
//! still searched, not walked.
//!
//! # Safety model
//!
//! No `unsafe`. The arrays are viewed as [`zerocopy::little_endian::U32`]
//! and [`txmap_format::chunked::Chunked`] lists: alignment 1 (sections may sit at any file offset), explicit byte
//! order (files are portable between hosts), and the cast is checked by
//! zerocopy instead of a pointer cast. The bytes may be corrupt (a damaged or
//! hostile file): [`TextIndex::open`] does only O(1) checks, and every later
//! access bounds-checks the offsets it uses, so corruption surfaces as a
//! [`TextError`], never as a panic or an out-of-bounds read. The one thing
//! not defended here is a corrupt fst *interior* (the `fst` crate may panic
//! on it): the edition reader verifies the fst section's checksum before
//! calling `open`; [`TextIndex::verify`] does a full check for tools.
//!
//! # FORMAT
//!
//! All integers are little-endian. Words are folded ([`fold()`]) single words
//! ([`words()`]), non-empty UTF-8; `N` is the number of distinct words, `P`
//! the total number of postings. Word `i` (0-based) is the `i`-th word in
//! byte order.
//!
//! **fst section**: an `fst::Map` as written by `fst` 0.4
//! (`fst::MapBuilder`): format version 3, map type 0, i.e.
//!
//! ```text
//! offset 0      u64  version = 3
//! offset 8      u64  fst type = 0
//! offset 16..   fst nodes
//! len-20        u64  number of keys = N
//! len-12        u64  root address = len-21 (address of the root node's last byte)
//! len-4         u32  CRC32C of everything before it
//! ```
//!
//! mapping word `i` to the value `i` (so values are `0..N` in key order).
//! The empty index is a 39-byte map (its root is a 3-byte non-final node).
//! (`fst` also allows root address 0 with length 36, the map holding only
//! the empty key; this crate never writes it since words are non-empty.)
//!
//! **offsets section**: `N + 1` `u32`s, `(N + 1) * 4` bytes. `offsets[0] =
//! 0`, `offsets[N] = P`, non-decreasing. Word `i`'s postings are
//! `postings[offsets[i] .. offsets[i + 1]]` (indexes in `u32`s, not bytes).
//!
//! **postings section**: `P` `u32`s, `P * 4` bytes: description ordinals
//! (the store's dense numbering of descriptions), each word's run strictly
//! increasing (sorted, no duplicates). A word may have an empty run.
//!
//! Limits: `P` and `N + 1` fit in `u32` (the writer refuses more). No
//! alignment or padding is required of or added to any section.
//!
//! # Query semantics
//!
//! See [`TextIndex::search`]: raw query text is folded and split; every
//! query word must match (AND), exactly or as a prefix per [`MatchMode`]; an
//! empty query is [`TextError::EmptyQuery`]; a query whose most selective
//! word still has more than `max_candidates` postings is
//! [`TextError::TooCostly`].

mod dense;
mod error;
pub mod fold;
mod index;
mod rank;
mod search;

pub use dense::{DENSE_FROM, DENSE_WORDS_KEPT, DenseWords};
pub use error::{Section, TextError};
pub use fold::{Words, fold, fold_into, words};
pub use index::{
    FinishedIndex, FirstWordsWriter, IndexBytes, IndexStats, IndexWriter, Postings, PostingsIter,
    TermIndexBuilder, TextIndex,
};
pub use rank::{MatchTier, RankKey, RankQuery, rank};
pub use search::{Among, MatchMode, has_bit};
