//! How each section of an edition file is read when it answers, so that a
//! server can ask the kernel for the right help per section and pre-read
//! only what pays.
//!
//! The classes come from the page map (BENCHMARKS.md, "The first pass after
//! a restart": the distinct pages of each section that each kind of call
//! touches, measured with `txmap bench cold --by-op`): a section is
//! [`Access::Hot`] when a mixed corpus touches (nearly) all of its pages,
//! so reading it whole costs little more than the calls would read anyway
//! and saves a fault a page; [`Access::Dense`] when they touch a large
//! part; [`Access::Sparse`] when they touch few of its pages, scattered,
//! so reading around a fault reads bytes no call wants.
//!
//! Two small sections are hot for their faults rather than their share:
//! `ComponentMembers` (7 MB at International scale), which a `$translate`
//! binary-searches through three or four pages not yet read, and
//! `DescendantsIndex` (2 MB). With a `prewarm-hot` load and the mixed
//! corpus they took 575 and 99 of the 2,900 faults left (80 and 48 a MiB,
//! where `Ancestors` and `Descriptions` take 24 and 16), so reading them
//! whole costs 9 MB of page cache an edition and saves a fifth of those
//! faults (`txmap bench cold --by-op --arms prewarm-hot`).
//!
//! This module is data, not policy: the server turns the classes into
//! `madvise` advice and a `prewarm-hot` read (`txmap-server`'s
//! `editions`).

use std::ops::Range;

use txmap_format::Container;
use txmap_format::SectionKind;

/// How a section is read by the calls a server answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Access {
    /// Touched (nearly) whole by a mixed corpus (90% or more of its pages),
    /// or small and faulted often (the module docs): read it ahead, and
    /// pre-read it in a `prewarm-hot` load.
    Hot,
    /// Touched in large part (40–90%): reading ahead around a fault pays,
    /// pre-reading it does not.
    Dense,
    /// Touched a page here and there (under 40%): read only the pages
    /// asked for.
    Sparse,
}

/// The class of a section, as the page map measured it (BENCHMARKS.md).
/// Sections of a few bytes, parsed on open or read by every call of a
/// kind, are hot: reading them costs nothing. The term heap is hot for its
/// preferred terms and sparse for the rest ([`ranges`] splits it); here it
/// is sparse, its larger part.
pub fn class(kind: SectionKind) -> Access {
    use SectionKind::*;
    match kind {
        ConceptIdIndex
        | ConceptIds
        | Concepts
        | PreferredTermIndex
        | DescendantsIndex
        | ComponentMembers
        | ConceptDescriptionsIndex
        | AttributesIndex
        | InboundIndex
        | DescriptionSearch
        | SearchHeads
        | SearchHeadText
        | SearchHeadLists
        | WordFst
        | WordPostingsIndex
        | Codes
        | Languages
        | Refsets
        | RefsetSchemaHeap
        | RefsetConceptsIndex
        | AttributeTypesIndex
        | ConcreteTypesIndex
        | RelationshipKinds
        | DescriptionKinds
        | MemberMetaTable
        | AcceptabilitySetsIndex
        | AcceptabilitySets
        | DescriptionProfilesIndex
        | DescriptionProfiles
        | MemberColumns
        | MemberModules
        | MemberTimes
        | MemberDictionaryIndex
        | InactiveRefsets => Access::Hot,
        AncestorsIndex | ParentsIndex | Parents | ChildrenIndex | Attributes | ConcreteIndex
        | Inbound | WordFirstWords => Access::Dense,
        _ => Access::Sparse,
    }
}

/// Every section's byte range in the file with its class, in file order;
/// the term heap in two parts (its preferred terms, which come first, hot;
/// the other terms sparse). A section this reader does not know is
/// sparse. Empty when `bytes` is not an edition file that opens (the
/// reader then reports why; advice is only a hint).
pub fn ranges(bytes: &[u8]) -> Vec<(Range<usize>, Access)> {
    let Ok(container) = Container::open(bytes) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in container.entries() {
        let (start, len) = (e.offset.get() as usize, e.len.get() as usize);
        match SectionKind::from_code(e.kind.get()) {
            Some(SectionKind::TermHeap) => {
                let split = preferred_terms_end(&container).unwrap_or(0).min(len);
                out.push((start..start + split, Access::Hot));
                out.push((start + split..start + len, Access::Sparse));
            }
            kind => out.push((start..start + len, kind.map_or(Access::Sparse, class))),
        }
    }
    out.sort_by_key(|(r, _)| r.start);
    out
}

/// The hot ranges of [`ranges`], adjacent ones merged: what a `prewarm-hot`
/// edition reads.
pub fn hot_ranges(bytes: &[u8]) -> Vec<Range<usize>> {
    let mut out: Vec<Range<usize>> = Vec::new();
    for (r, access) in ranges(bytes) {
        if access != Access::Hot || r.is_empty() {
            continue;
        }
        match out.last_mut() {
            // Sections are page-aligned: a gap of padding below a page
            // still counts as adjacent.
            Some(last) if r.start <= last.end.next_multiple_of(4096) => last.end = r.end,
            _ => out.push(r),
        }
    }
    out
}

/// Where the preferred terms' carriers end in the term heap: the offset
/// of the last entry of `PreferredTermIndex` (the heap starts with them,
/// in concept order).
fn preferred_terms_end(container: &Container<'_>) -> Option<usize> {
    use txmap_format::schema::PreferredTermEntry;
    use zerocopy::FromBytes;
    let index = container.section(SectionKind::PreferredTermIndex)?;
    let entries = <[PreferredTermEntry]>::ref_from_bytes(index).ok()?;
    Some(entries.last()?.offset.get() as usize)
}
