//! The txmap edition file: one immutable file per SNOMED CT edition version.
//!
//! An edition file is written once by `txmap import` and never modified: a
//! server may have it memory-mapped, and a mapped file that changes or
//! shrinks under a process is undefined behaviour or a SIGBUS. So files are
//! written to a temporary name, synced and renamed ([`FileWriter`]), and
//! readers ([`Container`]) accept any byte slice — a heap buffer or a mapping
//! — and check cheaply on open what can be checked without reading it all.
//!
//! The byte-level layout is specified in `FORMAT.md` beside this crate; this
//! crate is its only implementation. It has two layers:
//!
//! - the *container* ([`Container`], [`FileWriter`]): a header, 4 KiB-aligned
//!   sections each with an XXH3 checksum, and a trailer with the section table
//!   and a metadata block, itself covered by a checksum in the header;
//! - the *schema* ([`schema`]): which sections an edition has and the
//!   fixed-width little-endian records inside them, read through zerocopy
//!   views — no pointer casts, no deserialisation on the hot path.

#![forbid(unsafe_code)]

pub mod chunked;
mod container;
mod error;
pub mod ids;
mod narrow;
pub mod packed;
pub mod schema;
mod writer;

pub use container::{
    ALIGN, Container, FORMAT_MAJOR, FORMAT_MINOR, HEADER_LEN, Header, MAGIC, Metadata,
    SectionEntry, VERIFY_CHUNK, peek_metadata,
};
pub use error::FormatError;
pub use narrow::U24;
pub use schema::{SectionKind, records};
pub use writer::{FileWriter, SectionWriter};

#[cfg(test)]
mod tests;
