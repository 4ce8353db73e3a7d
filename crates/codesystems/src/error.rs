//! The crate's error type.

use std::fmt;
use std::path::PathBuf;

use txmap_format::{FormatError, SectionKind};

/// Everything that can go wrong compiling a release or reading a
/// compiled code system file.
#[derive(Debug)]
#[non_exhaustive]
pub enum CodeSystemError {
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

impl CodeSystemError {
    pub(crate) fn corrupt(section: SectionKind, detail: impl Into<String>) -> CodeSystemError {
        CodeSystemError::Corrupt {
            section,
            detail: detail.into(),
        }
    }
}

impl fmt::Display for CodeSystemError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CodeSystemError::Format(e) => write!(f, "{e}"),
            CodeSystemError::NotACodeSystem { content } => write!(
                f,
                "not a compiled code system file (its content is {content:?})"
            ),
            CodeSystemError::Corrupt { section, detail } => write!(
                f,
                "corrupt section {}: {detail} (run `txmap verify`)",
                section.name()
            ),
            CodeSystemError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            CodeSystemError::MissingFile(path) => {
                write!(
                    f,
                    "{}: not found (is this the release folder?)",
                    path.display()
                )
            }
            CodeSystemError::MissingColumn { path, column } => {
                write!(f, "{}: line 1: no column {column:?}", path.display())
            }
            CodeSystemError::Row {
                path,
                line,
                message,
            } => write!(f, "{}: line {line}: {message}", path.display()),
            CodeSystemError::NoVersion(path) => write!(
                f,
                "{}: cannot tell the release version: name the folder as it is distributed (LOINC: Loinc_<version>; NDC: its date, 2025-07-11), or pass --loinc-version / --rxnorm-version / --ndc-version",
                path.display()
            ),
            CodeSystemError::TooLarge(what) => write!(f, "too large for the file format: {what}"),
        }
    }
}

impl std::error::Error for CodeSystemError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            CodeSystemError::Format(e) => Some(e),
            CodeSystemError::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

impl From<FormatError> for CodeSystemError {
    fn from(e: FormatError) -> CodeSystemError {
        CodeSystemError::Format(e)
    }
}
