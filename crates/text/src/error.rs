//! The crate's single error type.
//!
//! One enum for writer, reader and query errors so that callers (the importer
//! and the store) can propagate with `?` and still match on the few variants
//! that are part of normal operation ([`TextError::EmptyQuery`],
//! [`TextError::TooCostly`]). Every corruption the reader can detect has its
//! own variant carrying the offending numbers, so a bug report from a damaged
//! edition file says *what* was wrong, not just "corrupt".

use std::fmt;
use std::io;

/// Which of the three byte sections of the word index a problem was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Section {
    /// The `fst::Map` from folded word to word index.
    Fst,
    /// The `word_count + 1` little-endian `u32` start positions.
    Offsets,
    /// The little-endian `u32` description ordinals.
    Postings,
    /// One bit a posting: the word is the first of the term.
    FirstWords,
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Section::Fst => "fst",
            Section::FirstWords => "first words",
            Section::Offsets => "offsets",
            Section::Postings => "postings",
        })
    }
}

/// Errors from building, opening or querying a word index.
#[derive(Debug)]
#[non_exhaustive]
pub enum TextError {
    /// Writing one of the sections failed.
    Io(io::Error),
    /// The `fst` crate reported an error (building, opening, or checksum
    /// verification in [`TextIndex::verify`](crate::TextIndex::verify)).
    Fst(fst::Error),
    /// [`IndexWriter::push`](crate::IndexWriter::push) was given an empty word.
    EmptyWord,
    /// [`IndexWriter::push`](crate::IndexWriter::push) was given a word that is not UTF-8.
    NotUtf8 {
        /// The rejected word.
        word: Vec<u8>,
    },
    /// Words must be pushed in strictly increasing byte order.
    OutOfOrder {
        /// The word pushed before.
        previous: String,
        /// The rejected word (not greater than `previous`).
        word: String,
    },
    /// A word's postings were not strictly increasing (unsorted or duplicated).
    UnsortedPostings {
        /// The word whose postings were rejected.
        word: String,
        /// Index into the postings of the first element not greater than its predecessor.
        index: usize,
    },
    /// A count does not fit the format's `u32` fields.
    TooLarge {
        /// What overflowed ("postings", "words").
        what: &'static str,
    },
    /// A section's length is impossible (not a multiple of 4, or too short).
    BadSectionLength {
        /// The section.
        section: Section,
        /// Its length in bytes.
        len: usize,
    },
    /// The fst section's header or footer is not that of an `fst::Map`
    /// written by this crate (format version 3, map type 0, consistent root).
    BadFst {
        /// What check failed.
        reason: &'static str,
    },
    /// The fst and the offsets section disagree on the number of words.
    WordCountMismatch {
        /// Key count recorded in the fst footer.
        fst: usize,
        /// `offsets.len() / 4 - 1`.
        offsets: usize,
    },
    /// A word's `offsets[i]..offsets[i+1]` range is decreasing or runs past
    /// the end of the postings section (or `offsets[0] != 0`, or the last offset
    /// is not the postings length).
    CorruptOffsets {
        /// The word index `i`.
        word: usize,
        /// `offsets[i]`.
        start: u32,
        /// `offsets[i + 1]`.
        end: u32,
        /// Length of the postings section in bytes.
        postings_len: usize,
    },
    /// The fst maps a word to an index `>= word_count`, or the word indexes
    /// are not `0, 1, 2, ...` in key order (found by `verify`).
    CorruptFstValue {
        /// The value found.
        value: u64,
        /// The number of words.
        word_count: usize,
    },
    /// A word stored in the fst is empty or not UTF-8.
    CorruptWord {
        /// The word index it maps to.
        value: u64,
    },
    /// A word's postings are not strictly increasing (found by `verify` or
    /// when a posting list is used as the seed of a search).
    CorruptPostings {
        /// The word index.
        word: usize,
        /// Position inside that word's postings of the first out-of-order ordinal.
        index: usize,
    },
    /// The query contains no word after folding and tokenising (e.g. `""`,
    /// `"--"`). Deliberately an error: "match everything" is never what a
    /// text filter means, and the caller decides what an empty filter does.
    EmptyQuery,
    /// The query is too broad: even its most selective word (or prefix)
    /// would need more than `limit` intermediate candidates.
    TooCostly {
        /// The `max_candidates` that was exceeded.
        limit: usize,
    },
}

impl fmt::Display for TextError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TextError::Io(e) => write!(f, "word index I/O error: {e}"),
            TextError::Fst(e) => match e {
                fst::Error::Fst(inner) => write!(f, "word index fst error: {inner}"),
                fst::Error::Io(inner) => write!(f, "word index fst I/O error: {inner}"),
            },
            TextError::EmptyWord => f.write_str("word index: empty word pushed"),
            TextError::NotUtf8 { word } => {
                write!(f, "word index: word is not UTF-8: {word:?}")
            }
            TextError::OutOfOrder { previous, word } => write!(
                f,
                "word index: word {word:?} pushed after {previous:?}; words must be strictly increasing"
            ),
            TextError::UnsortedPostings { word, index } => write!(
                f,
                "word index: postings of {word:?} not strictly increasing at position {index}"
            ),
            TextError::TooLarge { what } => {
                write!(f, "word index: too many {what} for the u32 format")
            }
            TextError::BadSectionLength { section, len } => {
                write!(
                    f,
                    "word index: {section} section has impossible length {len}"
                )
            }
            TextError::BadFst { reason } => write!(f, "word index: bad fst section: {reason}"),
            TextError::WordCountMismatch { fst, offsets } => write!(
                f,
                "word index: fst has {fst} words but offsets describe {offsets}"
            ),
            TextError::CorruptOffsets {
                word,
                start,
                end,
                postings_len,
            } => write!(
                f,
                "word index: corrupt offsets for word {word}: {start}..{end} with {postings_len} bytes of postings"
            ),
            TextError::CorruptFstValue { value, word_count } => write!(
                f,
                "word index: fst value {value} is not a valid word index (word count {word_count})"
            ),
            TextError::CorruptWord { value } => {
                write!(
                    f,
                    "word index: word {value} in the fst is empty or not UTF-8"
                )
            }
            TextError::CorruptPostings { word, index } => write!(
                f,
                "word index: postings of word {word} not strictly increasing at position {index}"
            ),
            TextError::EmptyQuery => f.write_str("text query contains no words"),
            TextError::TooCostly { limit } => write!(
                f,
                "text query too broad: needs more than {limit} candidates; use longer or more words"
            ),
        }
    }
}

impl std::error::Error for TextError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            TextError::Io(e) => Some(e),
            TextError::Fst(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for TextError {
    fn from(e: io::Error) -> Self {
        TextError::Io(e)
    }
}

impl From<fst::Error> for TextError {
    fn from(e: fst::Error) -> Self {
        TextError::Fst(e)
    }
}
