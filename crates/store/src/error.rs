//! The crate's error type.

use std::fmt;

use txmap_format::{FormatError, SectionKind};
use txmap_text::TextError;

/// Everything that can go wrong opening or reading an edition.
///
/// Variants fall in three groups: the file is not a usable edition
/// ([`Format`](StoreError::Format), [`Corrupt`](StoreError::Corrupt), the
/// metadata variants); the caller asked for something that does not exist
/// ([`OutOfRange`](StoreError::OutOfRange)); or a search cannot be answered
/// as asked ([`EmptyQuery`](StoreError::EmptyQuery),
/// [`TooCostly`](StoreError::TooCostly)).
#[derive(Debug)]
#[non_exhaustive]
pub enum StoreError {
    /// The container is unreadable: not an edition file, truncated, a
    /// checksum mismatch, a missing section...
    Format(FormatError),
    /// A section holds values that contradict its own layout or another
    /// section: an offset past the end, an ordinal out of range, bad UTF-8.
    /// Run `verify`: a file that passes it and still reports this was
    /// written wrongly.
    Corrupt {
        section: SectionKind,
        detail: String,
    },
    /// A metadata key every edition must have is absent.
    MissingMetadata(&'static str),
    /// A metadata value cannot be parsed.
    BadMetadata { key: &'static str, value: String },
    /// The caller gave a concept or description ordinal that does not exist.
    OutOfRange {
        what: &'static str,
        ordinal: u32,
        count: u32,
    },
    /// The word index is unusable.
    Text(TextError),
    /// The search text has no words after folding (e.g. `""` or `"--"`).
    EmptyQuery,
    /// The search is too broad to answer in bounded time: even its most
    /// selective word would need more candidates than allowed
    /// ([`SEARCH_MAX_CANDIDATES`](crate::SEARCH_MAX_CANDIDATES) by default).
    TooCostly,
}

impl StoreError {
    pub(crate) fn corrupt(section: SectionKind, detail: impl Into<String>) -> StoreError {
        StoreError::Corrupt {
            section,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StoreError::Format(e) => write!(f, "{e}"),
            StoreError::Corrupt { section, detail } => {
                write!(f, "section {} is corrupt: {detail}", section.name())
            }
            StoreError::MissingMetadata(key) => {
                write!(f, "edition metadata has no {key:?} entry")
            }
            StoreError::BadMetadata { key, value } => {
                write!(f, "edition metadata {key:?} has an invalid value {value:?}")
            }
            StoreError::OutOfRange {
                what,
                ordinal,
                count,
            } => write!(
                f,
                "{what} ordinal {ordinal} out of range (the edition has {count})"
            ),
            StoreError::Text(e) => {
                write!(
                    f,
                    "word index (sections WordFst, WordPostingsIndex, WordPostings): {e}"
                )
            }
            StoreError::EmptyQuery => f.write_str("search text contains no words"),
            StoreError::TooCostly => f.write_str(
                "search too broad: it matches too many descriptions; use longer or more words",
            ),
        }
    }
}

impl std::error::Error for StoreError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        // The wrapped errors' messages are already part of this one's, so
        // their sources, not themselves, come next in the chain.
        match self {
            StoreError::Format(e) => e.source(),
            StoreError::Text(e) => e.source(),
            _ => None,
        }
    }
}

impl From<FormatError> for StoreError {
    fn from(e: FormatError) -> Self {
        StoreError::Format(e)
    }
}

impl From<TextError> for StoreError {
    fn from(e: TextError) -> Self {
        match e {
            TextError::EmptyQuery => StoreError::EmptyQuery,
            TextError::TooCostly { .. } => StoreError::TooCostly,
            e => StoreError::Text(e),
        }
    }
}
