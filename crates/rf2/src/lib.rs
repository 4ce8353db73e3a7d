//! Streaming reader for SNOMED CT RF2 Snapshot releases.
//!
//! The importer compiles a release of a gigabyte of tab-separated text into
//! txmap's own files; this crate is everything it needs to get trustworthy
//! rows out of that text, and nothing else (no storage, no async, no HTTP):
//!
//! * [`source`]: a [`Release`] opened from a `.zip` as distributed (entries
//!   are streamed, never unpacked to disk) or from an unpacked folder, with
//!   its recognised Snapshot files and the files it skipped, and why.
//! * [`kind`]: which file is which, from the RF2 file naming convention.
//! * [`rows`]: a [`RowReader`] that splits rows and fields with `memchr`
//!   through one large buffer, with no allocation per row and no CSV
//!   quoting rules (RF2 has none).
//! * [`parse`]: typed rows ([`ConceptRow`], [`DescriptionRow`], …) with
//!   every field validated, borrowing text from the buffer.
//! * [`sctid`]: SNOMED CT identifiers (Verhoeff check digit, partition).
//! * [`error`]: one error type, [`Rf2Error`], that always says which file
//!   and line and renders on one line.
//!
//! ```no_run
//! use txmap_rf2::{ConceptRow, FileKind, Release};
//!
//! # fn main() -> Result<(), txmap_rf2::Rf2Error> {
//! let mut release = Release::open("SnomedCT_International.zip".as_ref())?;
//! for file in release.files_of(FileKind::Concept) {
//!     let mut rows = release.open_file(&file)?;
//!     while let Some(row) = rows.next_row()? {
//!         let concept = ConceptRow::parse(&row).map_err(|e| row.error(e))?;
//!         println!("{} active={}", concept.id, concept.active);
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Nothing here panics on bad input: malformed files produce [`Rf2Error`]s,
//! and errors confined to one row leave the reader ready for the next
//! ([`Rf2Error::is_recoverable`]), so a lenient import can count and skip.

pub mod error;
pub mod kind;
pub mod parse;
pub mod rows;
/// SNOMED CT identifiers, from [`txmap_sctid`] (shared with the ECL parser).
pub use txmap_sctid as sctid;
pub mod source;

pub use error::{HeaderError, Rf2Error, Rf2ErrorKind};
pub use kind::{FileKind, SkipReason};
pub use parse::{
    ConceptRow, ConcreteValueRow, DescriptionRow, FieldProblem, IdentifierRow, RefsetRow,
    RelationshipRow, RowError,
};
pub use rows::{Row, RowReader};
pub use source::{Release, Rf2File, Skipped};
