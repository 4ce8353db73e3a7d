//! The read-only view of a txmap edition file: [`Edition`].
//!
//! An [`Edition`] answers what a terminology server asks of one SNOMED CT
//! edition — concepts, descriptions and preferred terms, the is-a hierarchy
//! and its closure, attribute relationships, refset membership, historical
//! associations and word search — straight from the file's bytes. It is
//! generic over the bytes' owner (`B: AsRef<[u8]>`): the CLI and server hand
//! it a memory map, tests a `Vec<u8>`, and the same code serves both.
//!
//! Opening costs a few milliseconds whatever the file's size: the container
//! checks its header and section table, and the store checks record sizes,
//! index lengths and parses only the small tables (codes, languages,
//! refsets). The big sections are *not* read on open — they are checksummed
//! by [`Edition::verify`], which reads the whole file — so every accessor
//! treats their contents as untrusted: ordinals, offsets and UTF-8 are
//! checked on each use, and damage is reported as [`StoreError::Corrupt`],
//! never a panic or an out-of-bounds read.
//!
//! How each section is read by the calls a server answers — hot, dense or
//! sparse — is data here too ([`access`]): the server asks the kernel for
//! readahead and pre-reads by it, and a [`Prefetch`] hook is told of runs a
//! call is about to read in order, since only the store knows them.
//!
//! The crate forbids `unsafe`: it needs none, since all record access goes
//! through zerocopy's checked views of unaligned little-endian types.
//! Mapping files (the one unsafe operation in the read path) is done by the
//! binaries that own the file's lifetime, not here.

#![forbid(unsafe_code)]

pub mod access;
mod edition;
mod error;
pub mod heads;
mod scope;
mod search;
mod types;

pub use edition::{Adjacency, Edition, MemberTable, PREFETCH_MIN, Prefetch, sorted_unique};
pub use error::StoreError;
pub use scope::ScopeSet;
pub use search::{SEARCH_MAX_CANDIDATES, Scope, SearchOptions};
pub use txmap_format::schema::{DescriptionProfileRecord, NO_CODE, RefsetKind};
pub use txmap_format::{Metadata, SectionKind};
pub use txmap_text::{MatchMode, MatchTier, RankKey};
pub use types::{
    Association, AssociationSource, Concept, ConceptFacts, ConceptTable, ConcreteLink,
    ConcreteValue, Description, DescriptionRow, Identity, Link, Member, Ordinals, RefsetInfo,
    Relationship, SearchHit, SectionInfo, Status,
};

/// Well-known SCTIDs the store interprets.
pub use txmap_format::ids as sctid;

#[cfg(test)]
mod testfile;
#[cfg(test)]
mod tests;
