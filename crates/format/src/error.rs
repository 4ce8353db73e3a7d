use std::fmt;
use std::io;

use crate::SectionKind;

/// Everything that can be wrong with an edition file, or with writing one.
///
/// Each variant names what was found, so that a CLI can print one line that
/// tells an operator which file is broken and how.
#[derive(Debug)]
#[non_exhaustive]
pub enum FormatError {
    /// Fewer bytes than the fixed header.
    TooShort { len: u64 },
    /// The first eight bytes are not txmap's magic: not an edition file.
    BadMagic,
    /// A major format version this reader does not understand.
    UnsupportedVersion { major: u16, minor: u16 },
    /// The header says the file has another length than it has: the file
    /// was truncated, or something was appended.
    LengthMismatch { expected: u64, actual: u64 },
    /// The header, section table or metadata block fails its checksum.
    HeaderChecksum,
    /// The section table or metadata block lies outside the file.
    BadTrailer(&'static str),
    /// A section lies outside the file, overlaps another, or is misaligned.
    SectionBounds { kind: u32, offset: u64, len: u64 },
    /// A section's bytes fail its checksum (found by `verify`).
    SectionChecksum { kind: u32 },
    /// Bytes between sections that should be zero are not (found by `verify`).
    Padding { offset: u64 },
    /// A section the reader needs is absent.
    MissingSection(SectionKind),
    /// A section appears twice.
    DuplicateSection { kind: u32 },
    /// A section's length is not a whole number of its records.
    RecordSize {
        kind: SectionKind,
        len: u64,
        record: usize,
    },
    /// A section holds values that contradict each other or another section
    /// (an offset past the end, an ordinal out of range, ...).
    Corrupt { kind: SectionKind, detail: String },
    /// The metadata block is not valid `key\tvalue` lines of UTF-8.
    BadMetadata(String),
    /// An I/O error while writing.
    Io(io::Error),
    /// The writer was given something it cannot store.
    Invalid(String),
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use FormatError::*;
        match self {
            TooShort { len } => write!(f, "file too short for an edition header ({len} bytes)"),
            BadMagic => f.write_str("not a txmap edition file (bad magic)"),
            UnsupportedVersion { major, minor } => write!(
                f,
                "edition file format {major}.{minor} is not supported (this txmap reads {}.x): \
                 import it again from its RF2 release",
                crate::FORMAT_MAJOR
            ),
            LengthMismatch { expected, actual } => write!(
                f,
                "file is {actual} bytes but its header says {expected}: truncated or appended to"
            ),
            HeaderChecksum => f.write_str("header or section table checksum mismatch"),
            BadTrailer(what) => write!(f, "{what} lies outside the file"),
            SectionBounds { kind, offset, len } => write!(
                f,
                "section {} at offset {offset} with length {len} is out of bounds, overlapping or misaligned",
                SectionKind::describe(*kind)
            ),
            SectionChecksum { kind } => {
                write!(
                    f,
                    "section {} checksum mismatch",
                    SectionKind::describe(*kind)
                )
            }
            Padding { offset } => write!(f, "non-zero padding byte at offset {offset}"),
            MissingSection(kind) => write!(f, "required section {} is missing", kind.name()),
            DuplicateSection { kind } => {
                write!(f, "section {} appears twice", SectionKind::describe(*kind))
            }
            RecordSize { kind, len, record } => write!(
                f,
                "section {} is {len} bytes, not a multiple of its {record}-byte records",
                kind.name()
            ),
            Corrupt { kind, detail } => write!(f, "section {} is corrupt: {detail}", kind.name()),
            BadMetadata(why) => write!(f, "bad metadata block: {why}"),
            Io(e) => write!(f, "{e}"),
            Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for FormatError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FormatError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<io::Error> for FormatError {
    fn from(e: io::Error) -> Self {
        FormatError::Io(e)
    }
}
