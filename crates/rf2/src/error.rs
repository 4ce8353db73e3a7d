//! Errors for reading a release, with enough context to act on them.
//!
//! An RF2 release is a few million lines spread over a dozen files; an error
//! that only says "bad SCTID" is useless. Every [`Rf2Error`] therefore names
//! the file (the release path plus the path inside it), the line number, the
//! problem and a truncated copy of the offending row, and renders all of that
//! on one line (`<file>:<line>: <problem>: <row>`) so that logs stay greppable
//! and a `--lenient` import can print one line per skipped row.
//!
//! Errors are plain enums rather than boxed trait objects so that callers can
//! decide what is recoverable: see [`Rf2Error::is_recoverable`].

use std::fmt;
use std::io;

use crate::parse::RowError;

/// How many characters of an offending row are kept in an error.
pub const ROW_SNIPPET_CHARS: usize = 200;

/// An error while opening or reading a release.
#[derive(Debug)]
pub struct Rf2Error {
    /// The release path, followed for files inside it by `/` and the path
    /// inside the release (for a zip, the entry name).
    pub path: String,
    /// The 1-based line number in that file (the header is line 1), when the
    /// error is about a line.
    pub line: Option<u64>,
    /// What went wrong.
    pub kind: Rf2ErrorKind,
    /// The offending row, lossily decoded and truncated to about
    /// [`ROW_SNIPPET_CHARS`] characters.
    pub row: Option<String>,
}

/// What went wrong; the `kind` of an [`Rf2Error`].
#[derive(Debug)]
#[non_exhaustive]
pub enum Rf2ErrorKind {
    /// Reading the file system or decompressing a zip entry failed.
    Io(io::Error),
    /// The zip archive could not be opened or an entry could not be found.
    Zip(zip::result::ZipError),
    /// The path holds no file recognised as an RF2 Snapshot file.
    NotARelease,
    /// The header line is missing or does not match the file kind. (Boxed,
    /// like `Row`, to keep `Result<_, Rf2Error>` small on the hot path.)
    Header(Box<HeaderError>),
    /// A row has another number of tab-separated columns than the header.
    ColumnCount { expected: usize, found: usize },
    /// An empty line that is followed by more rows (a blank line at the end
    /// of a file is accepted).
    BlankLine,
    /// A line longer than the reader's limit; it was skipped.
    LineTooLong { limit: usize },
    /// A field of a row failed validation.
    Row(Box<RowError>),
}

/// A problem with the header line of a file.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HeaderError {
    /// The file is empty or its first line is empty.
    Missing,
    /// The header is not valid UTF-8.
    NotUtf8,
    /// The header has another number of columns than the file kind needs
    /// (for reference sets: 6 plus one per letter of the field pattern).
    ColumnCount { expected: usize, found: usize },
    /// A column (1-based) has another name than the file kind needs.
    Column {
        column: usize,
        expected: &'static str,
        found: String,
    },
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Missing => f.write_str("missing header line"),
            HeaderError::NotUtf8 => f.write_str("header is not valid UTF-8"),
            HeaderError::ColumnCount { expected, found } => {
                write!(f, "header has {found} columns, expected {expected}")
            }
            HeaderError::Column {
                column,
                expected,
                found,
            } => write!(
                f,
                "header column {column} is {found:?}, expected {expected:?}"
            ),
        }
    }
}

impl std::error::Error for HeaderError {}

impl fmt::Display for Rf2ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Rf2ErrorKind::Io(e) => write!(f, "I/O error: {e}"),
            Rf2ErrorKind::Zip(e) => write!(f, "zip error: {e}"),
            Rf2ErrorKind::NotARelease => {
                f.write_str("not an RF2 release: no RF2 Snapshot files found")
            }
            Rf2ErrorKind::Header(e) => e.fmt(f),
            Rf2ErrorKind::ColumnCount { expected, found } => {
                write!(f, "row has {found} columns, header has {expected}")
            }
            Rf2ErrorKind::BlankLine => f.write_str("blank line"),
            Rf2ErrorKind::LineTooLong { limit } => {
                write!(f, "line longer than {limit} bytes, skipped")
            }
            Rf2ErrorKind::Row(e) => e.fmt(f),
        }
    }
}

impl Rf2Error {
    /// An error about a whole file or release (no line, no row).
    pub fn new(path: impl Into<String>, kind: Rf2ErrorKind) -> Rf2Error {
        Rf2Error {
            path: path.into(),
            line: None,
            kind,
            row: None,
        }
    }

    /// Sets the line number.
    pub fn at_line(mut self, line: u64) -> Rf2Error {
        self.line = Some(line);
        self
    }

    /// Sets the offending row, lossily decoded and truncated.
    pub fn with_row(mut self, row: &[u8]) -> Rf2Error {
        self.row = Some(snippet(row));
        self
    }

    /// True for errors confined to one row: the reader has already moved
    /// past it and the next call to `next_row` continues with the following
    /// line. A lenient import counts and skips these; everything else (I/O,
    /// zip, header, not a release) is fatal for the file.
    pub fn is_recoverable(&self) -> bool {
        matches!(
            self.kind,
            Rf2ErrorKind::ColumnCount { .. }
                | Rf2ErrorKind::BlankLine
                | Rf2ErrorKind::LineTooLong { .. }
                | Rf2ErrorKind::Row(_)
        )
    }
}

impl fmt::Display for Rf2Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.path)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ": {}", self.kind)?;
        if let Some(row) = &self.row {
            // Debug formatting quotes the row and escapes tabs and control
            // characters, which keeps the message on one line.
            write!(f, ": {row:?}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Rf2Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            Rf2ErrorKind::Io(e) => Some(e),
            Rf2ErrorKind::Zip(e) => Some(e),
            Rf2ErrorKind::Header(e) => Some(&**e),
            Rf2ErrorKind::Row(e) => Some(&**e),
            _ => None,
        }
    }
}

/// Lossily decodes at most [`ROW_SNIPPET_CHARS`] characters of `bytes`,
/// marking a cut with `…`.
pub(crate) fn snippet(bytes: &[u8]) -> String {
    truncate_chars(bytes, ROW_SNIPPET_CHARS)
}

/// Lossily decodes at most `max` characters of `bytes`, marking a cut with `…`.
pub(crate) fn truncate_chars(bytes: &[u8], max: usize) -> String {
    // A character is at most four bytes, so decoding more than that is waste.
    let head = &bytes[..bytes.len().min(max.saturating_mul(4).saturating_add(4))];
    let text = String::from_utf8_lossy(head);
    let mut out = String::with_capacity(text.len().min(max * 4) + 3);
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push('…');
            return out;
        }
        out.push(c);
    }
    if head.len() < bytes.len() {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_one_line() {
        let e = Rf2Error::new("rel/sct2_Concept.txt", Rf2ErrorKind::BlankLine)
            .at_line(7)
            .with_row(b"a\tb\nc");
        let s = e.to_string();
        assert_eq!(s, r#"rel/sct2_Concept.txt:7: blank line: "a\tb\nc""#);
        assert!(!s.contains('\n'));
        assert!(e.is_recoverable());
        let e = Rf2Error::new("rel", Rf2ErrorKind::NotARelease);
        assert_eq!(
            e.to_string(),
            "rel: not an RF2 release: no RF2 Snapshot files found"
        );
        assert!(!e.is_recoverable());
    }

    #[test]
    fn snippets_are_truncated_on_char_boundaries() {
        let long = "é".repeat(500);
        let s = snippet(long.as_bytes());
        assert_eq!(s.chars().count(), ROW_SNIPPET_CHARS + 1);
        assert!(s.ends_with('…'));
        assert_eq!(snippet(b"short"), "short");
        assert_eq!(snippet(b"\xff"), "\u{fffd}");
        assert_eq!(truncate_chars(b"abcdef", 3), "abc…");
        assert_eq!(truncate_chars(b"abc", 3), "abc");
    }
}
