//! The crate's error type.

use std::fmt;
use std::path::PathBuf;

use txmap_format::{FormatError, SectionKind};

/// Everything that can go wrong compiling a LOINC release or reading a
/// compiled code system file.
#[derive(Debug)]
#[non_exhaustive]
pub enum LoincError {
    /// The container is unreadable: not a txmap file, truncated, a
    /// checksum mismatch, a missing section...
    Format(FormatError),
    /// The file is a txmap file of another content (a SNOMED CT edition).
    NotACodeSystem { content: String },
    /// A section holds values that contradict its layout: an offset past
    /// the end, an ordinal out of range, bad UTF-8.
    Corrupt {
        section: SectionKind,
        detail: String,
    },
    /// A file of the release could not be read.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A file the release must have is absent.
    MissingFile(PathBuf),
    /// A release file lacks a column it must have.
    MissingColumn { path: PathBuf, column: &'static str },
    /// A row of a release file is malformed.
    Row {
        path: PathBuf,
        line: u64,
        message: String,
    },
    /// The release's version could not be told.
    NoVersion(PathBuf),
    /// The release is larger than the file format can address.
    TooLarge(&'static str),
}

impl LoincError {
    pub(crate) fn corrupt(section: SectionKind, detail: impl Into<String>) -> LoincError {
        LoincError::Corrupt {
            section,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for LoincError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoincError::Format(e) => write!(f, "{e}"),
            LoincError::NotACodeSystem { content } => write!(
                f,
                "not a compiled code system file (its content is {content:?})"
            ),
            LoincError::Corrupt { section, detail } => write!(
                f,
                "corrupt section {}: {detail} (run `txmap verify`)",
                section.name()
            ),
            LoincError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            LoincError::MissingFile(path) => {
                write!(
                    f,
                    "{}: not found (is this a LOINC release folder?)",
                    path.display()
                )
            }
            LoincError::MissingColumn { path, column } => {
                write!(f, "{}: line 1: no column {column:?}", path.display())
            }
            LoincError::Row {
                path,
                line,
                message,
            } => write!(f, "{}: line {line}: {message}", path.display()),
            LoincError::NoVersion(path) => write!(
                f,
                "{}: cannot tell the LOINC version: name the folder Loinc_<version> (as LOINC distributes it) or pass --loinc-version",
                path.display()
            ),
            LoincError::TooLarge(what) => write!(f, "too large for the file format: {what}"),
        }
    }
}

impl std::error::Error for LoincError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoincError::Format(e) => Some(e),
            LoincError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<FormatError> for LoincError {
    fn from(e: FormatError) -> LoincError {
        LoincError::Format(e)
    }
}
