//! What the sections of an edition file hold: their kinds and record types.
//!
//! Everything is little-endian and unaligned (zerocopy's byte-order types),
//! so a record view over a section is a length check, whatever the address
//! of the buffer. Concepts are numbered by *ordinal*: their index in
//! [`SectionKind::ConceptIds`], in depth-first order of the is-a hierarchy
//! (format 7), and [`SectionKind::ConceptIdIndex`] finds an SCTID's.
//! Descriptions have ordinals too, their index in
//! [`SectionKind::Descriptions`].
//!
//! Indexed lists use one layout throughout ("CSR"): an `*Index` section of
//! `n + 1` offsets and a section of items, where the items of entry `i`
//! are `items[index[i]..index[i + 1]]`. The offsets are [`U24`](crate::U24) where the
//! items are at most 2^24 − 1 records ([`SectionKind::is_narrow_index`]),
//! else `U32`.

use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::FormatError;

macro_rules! section_kinds {
    ($($(#[$doc:meta])* $name:ident = $code:literal,)*) => {
        /// The kinds of section. Codes are stable across format versions;
        /// readers ignore codes they do not know.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u32)]
        pub enum SectionKind {
            $($(#[$doc])* $name = $code,)*
        }

        impl SectionKind {
            pub const ALL: &'static [SectionKind] = &[$(SectionKind::$name,)*];

            pub fn from_code(code: u32) -> Option<SectionKind> {
                match code {
                    $($code => Some(SectionKind::$name),)*
                    _ => None,
                }
            }

            pub fn name(self) -> &'static str {
                match self {
                    $(SectionKind::$name => stringify!($name),)*
                }
            }
        }
    };
}

section_kinds! {
    /// `[U64]`: every concept's SCTID, by ordinal. A concept's ordinal is
    /// its index here. Since format 7 concepts are numbered depth-first
    /// down the is-a hierarchy, so a hierarchy's concepts are neighbours
    /// in every section by ordinal; before, ordinals followed SCTIDs.
    ConceptIds = 10,
    /// `[ConceptRecord]`, by ordinal.
    Concepts = 11,
    /// `[PreferredTermEntry; n + 1]`: concept `c`'s preferred term (in
    /// the edition's default language refset) is `TermHeap[offset ..
    /// offset + len]` of entry `c`. It lies in its *carrier*, at the
    /// start of `TermHeap`, where the carriers follow each other in
    /// concept order: the term that holds the preferred term as a prefix —
    /// the fully specified name when that is `preferred term (tag)`, else
    /// the preferred term itself. Entry `n`'s offset is where the carriers
    /// end. The common "code → display" call reads one entry and a compact
    /// table, and the two commonest terms of a concept are stored once
    /// (format 3).
    PreferredTermIndex = 12,
    /// CSR of active inferred is-a parents (concept ordinals, ascending).
    ParentsIndex = 14,
    Parents = 15,
    /// CSR of active inferred is-a children.
    ChildrenIndex = 16,
    Children = 17,
    /// Each concept's proper ancestors (the transitive closure of parents),
    /// as a [packed](crate::packed) list: `AncestorsIndex` holds `n + 1`
    /// `U32` byte offsets into `Ancestors`, and concept `c`'s list is
    /// `Ancestors[index[c] .. index[c + 1]]` (format 4). Subsumption reads
    /// one short list, a few dozen bytes.
    AncestorsIndex = 18,
    Ancestors = 19,
    /// Each concept's proper descendants, ascending, as a
    /// [chunked](crate::chunked) list: `DescendantsIndex` holds `n + 1`
    /// `U32` byte offsets into `Descendants` (format 5). `<< X` copies
    /// the list in one vectorised loop (varint gaps decoded ten times
    /// slower than a copy).
    DescendantsIndex = 20,
    Descendants = 21,

    /// `[DescriptionRecord]`: descriptions and text definitions, sorted by
    /// (concept ordinal, description SCTID).
    Descriptions = 30,
    /// `[U24; n + 1]`: a concept's descriptions are
    /// `Descriptions[index[c]..index[c + 1]]`.
    ConceptDescriptionsIndex = 31,
    /// UTF-8 terms, referenced by `DescriptionRecord::term_offset`: first
    /// every concept's preferred term (see `PreferredTermIndex`), then the
    /// others.
    TermHeap = 33,
    // Codes 34 and 35 (`AcceptabilityIndex`, `Acceptability`: each
    // description's rows, 11 MB on the International-scale synthetic
    // edition) were retired in 6.0 for the sets of 89–91.

    /// CSR by source concept ordinal of `[RelationshipRecord]`: active
    /// inferred (and additional) attribute relationships other than is-a,
    /// sorted by (group, type, target).
    AttributesIndex = 40,
    Attributes = 41,
    /// CSR by destination concept ordinal of `[RelationshipRecord]` whose
    /// `target` is the *source*: the same relationships read backwards.
    InboundIndex = 42,
    Inbound = 43,
    /// CSR by source concept ordinal of `[ConcreteRecord]`.
    ConcreteIndex = 44,
    Concrete = 45,
    /// UTF-8 concrete values exactly as in RF2 (`#12.5`, `"text"`).
    ConcreteHeap = 46,
    /// CSR by source concept ordinal of `[RelationshipRecord]`: active stated
    /// relationships, is-a included. Present only if the release had them.
    StatedIndex = 47,
    Stated = 48,

    /// `[RefsetRecord]` sorted by refset SCTID.
    Refsets = 50,
    /// `[MemberRecord]`: active members of every refset except language
    /// refsets, grouped by refset in `Refsets` order, each group sorted by
    /// referenced component. A member's refset is the `Refsets` entry whose
    /// range holds it.
    Members = 51,
    /// UTF-8: each member's columns after `referencedComponentId`, joined by
    /// tabs exactly as in RF2.
    MemberFieldHeap = 52,
    /// `[ComponentMemberEntry]` sorted by (component SCTID, member index):
    /// the refsets a component belongs to.
    ComponentMembers = 53,
    /// UTF-8: per refset, its RF2 field pattern and column names, e.g.
    /// `c\tid\teffectiveTime\t...\ttargetComponentId`.
    RefsetSchemaHeap = 54,
    /// `[AssociationTargetEntry]` sorted by (target concept ordinal, member
    /// index): the members of association refsets whose first additional
    /// field (`targetComponentId`) is a concept of the edition, read from
    /// the target back to the source. Optional (format 1.1): without it,
    /// readers scan the association refsets.
    AssociationTargets = 55,
    /// `[TypeSourcesEntry]` sorted by type ordinal, closed by one entry of
    /// type `u32::MAX`: entry `i` says that `AttributeTypeSources[start_i ..
    /// start_{i+1}]` are the concepts with an attribute relationship (as in
    /// `Attributes`) of that type. Optional (format 1.2): without it,
    /// readers test concepts one by one.
    AttributeTypesIndex = 56,
    /// `u32` concept ordinals, ascending and unique within each type.
    AttributeTypeSources = 57,
    /// The same as `AttributeTypesIndex` for the types of concrete values
    /// (as in `Concrete`). Optional (format 1.2).
    ConcreteTypesIndex = 58,
    /// `u32` concept ordinals, ascending and unique within each type.
    ConcreteTypeSources = 59,

    /// `[U64]`: the concepts that one-byte codes in records stand for
    /// (description types, case significance, acceptability, characteristic
    /// types, language refsets); code `0xFF` means "none".
    Codes = 60,
    /// UTF-8 language codes, one per line; a record's language byte indexes
    /// this list.
    Languages = 61,

    /// `[U16]`, one per `Members` record in the same order: each member's
    /// module and effective time, as an index into `MemberMetaTable`
    /// (format 6; a `MemberMetaRecord` each before). Optional (format
    /// 1.3): without it, member filters on `moduleId` and `effectiveTime`
    /// are unanswerable.
    MemberMeta = 62,
    /// `[RefsetRecord]` sorted by refset SCTID, ranges into
    /// `InactiveMembers`: the refsets with inactive members (language
    /// refsets excepted). Optional (format 1.3).
    InactiveRefsets = 63,
    /// `[MemberRecord]`: inactive members, grouped by refset in
    /// `InactiveRefsets` order, each group sorted by referenced component;
    /// fields in `MemberFieldHeap`. Optional (format 1.3).
    InactiveMembers = 64,
    /// `[U16]`, one per `InactiveMembers` record, as `MemberMeta`.
    /// Optional (format 1.3).
    InactiveMemberMeta = 65,
    /// `[U64]` ascending: the module SCTIDs that `MemberMetaRecord::module`
    /// indexes. Optional (format 1.3).
    MemberModules = 66,
    /// `[U32]` ascending: the effective times (`YYYYMMDD`) that
    /// `MemberMetaRecord::time` indexes. Optional (format 1.3).
    MemberTimes = 67,
    /// `[IdentifierRecord]` sorted by (scheme, hash, text): the active
    /// alternate identifiers of the Identifier file (`LOINC#54486-6`).
    /// Optional (format 1.3).
    Identifiers = 68,
    /// UTF-8: the alternate identifiers' texts.
    IdentifierHeap = 69,

    /// An `fst::Map` from folded words to their index (see txmap-text).
    WordFst = 70,
    /// `[U32; words + 1]` offsets into `WordPostings`.
    WordPostingsIndex = 71,
    /// `[U24]` description ordinals, ascending per word (three bytes each,
    /// since 6.0).
    WordPostings = 72,
    /// `[U32; refsets + 1]` byte offsets into `RefsetConcepts`, one per
    /// `Refsets` entry (entry offsets before format 7). Optional (format
    /// 1.3).
    RefsetConceptsIndex = 73,
    /// The concepts among each refset's active members, each once, as a
    /// [chunked](crate::chunked) list of ordinals (format 7; plain `U32`s
    /// before), so that `^ R` is a copy, not a lookup of every member's
    /// SCTID.
    RefsetConcepts = 74,
    /// `[MemberColumnsEntry; refsets + 1]`, one per `Refsets` entry: where
    /// the refset's codes start in `MemberCodes` and its first column's
    /// slot in `MemberDictionaryIndex`. Optional (format 1.4).
    MemberColumns = 75,
    /// `[U16]`, row-major: for each active member (in `Members` order),
    /// one code per column after `referencedComponentId` — the index of
    /// its value in the column's dictionary, or [`UNCODED`] when the
    /// dictionary was full (the member's text in `MemberFieldHeap` is the
    /// value). Optional (format 1.4).
    MemberCodes = 76,
    /// `[U32; columns + 1]` offsets into `MemberDictionary`, one per
    /// (refset, column) in `Refsets` order. Optional (format 1.4).
    MemberDictionaryIndex = 77,
    /// `[MemberValueRecord]`: each column's distinct values in code order,
    /// as ranges of `MemberFieldHeap`. Optional (format 1.4).
    MemberDictionary = 78,
    /// One bit a `WordPostings` entry, least significant bit first, the
    /// last byte zero-padded: set when the posting's word is the first
    /// word of its description's folded term. With `DescriptionSearch`, a
    /// one-word search ranks its candidates without reading their terms.
    /// Optional (format 1.5).
    WordFirstWords = 79,
    /// `[U16]` by description ordinal ([`description_search`] bits): a
    /// description's length in characters, whether it and its concept are
    /// active, is a definition, is one word, is the preferred synonym in
    /// the default language. A search filters and ranks its candidates
    /// from these two bytes, not from their records (32 bytes then) and their
    /// acceptability rows. Optional (format 1.5).
    DescriptionSearch = 80,
    /// `[U32]` description ordinals, sorted by their description's SCTID
    /// (`DescriptionRecord::id`): finding a description by SCTID is a
    /// binary search that reads the records it probes. It replaced
    /// `DescriptionIds` (code 32, `(id, ordinal)` pairs) in format 2.0,
    /// which held every SCTID a second time for a lookup that few calls
    /// make — 13 MB of the International-scale edition.
    DescriptionsById = 81,
    /// `[SearchHeadRecord]` sorted by their text's bytes: for each search
    /// head — a folded word prefix whose words' postings number at least
    /// [`SEARCH_HEAD_MIN_POSTINGS`] — how many concepts a one-word prefix
    /// search for it finds and the first [`SEARCH_HEAD_LIST`] of them in
    /// rank order, active only and with inactive ones. Optional (format
    /// 2.2): without it such a search ranks all its candidates.
    SearchHeads = 82,
    /// UTF-8: the heads' texts, referenced by `SearchHeadRecord`.
    /// Optional (format 2.2).
    SearchHeadText = 83,
    /// `[U32]` concept ordinals: the heads' lists, in rank order.
    /// Optional (format 2.2).
    SearchHeadLists = 84,
    /// `[RelationshipKindRecord]`: the distinct (attribute type,
    /// characteristic type, group) of the relationship sections and of
    /// `Concrete`, which [`RelationshipRecord::kind`] and
    /// [`ConcreteRecord::kind`] index (format 4; the group and the concrete
    /// values since 6):
    /// an edition has a few thousand at most, so a relationship holds two
    /// bytes for them, not seven. Checksummed on open.
    RelationshipKinds = 85,
    // Codes 86 and 87 (`DescriptionModules`, `DescriptionTimes`, format 4)
    // were retired in 6.0 for `DescriptionKinds` (92).
    /// `[U16]` by description ordinal: the number of the description's
    /// *acceptability set*, its active language refset rows (format 6).
    /// Thousands of descriptions share each set — a release has a few
    /// language refsets and two acceptabilities — so a description holds
    /// two bytes, not an offset and its rows.
    DescriptionAcceptability = 89,
    /// CSR by set number of `[AcceptabilityRecord]`, `U32` offsets: the
    /// rows of each acceptability set, sorted by refset code; every set
    /// distinct. Checksummed and copied on open (format 6).
    AcceptabilitySetsIndex = 90,
    AcceptabilitySets = 91,
    /// `[DescriptionKindRecord]`: the distinct (module, effective time,
    /// type, case significance, language, status) of the descriptions,
    /// numbered in the order the importer first staged them, which
    /// [`DescriptionRecord::kind`] indexes (format 6). Checksummed and
    /// copied on open.
    DescriptionKinds = 92,
    /// `[MemberMetaRecord]`: the distinct (module, effective time) of the
    /// refset members, active and inactive, numbered in order of first
    /// appearance, which `MemberMeta` and `InactiveMemberMeta` index
    /// (format 6): a release has a few hundred, so a member holds two
    /// bytes for them, not four. Present when they are.
    MemberMetaTable = 93,
    /// CSR by profile number of `[DescriptionProfileRecord]`, `U32`
    /// offsets: each *description profile*, the distinct (type, language,
    /// acceptability set) of a concept's active descriptions, sorted
    /// (format 6.1). At most 255 profiles; checksummed and copied on open.
    /// Optional: without these three sections a description filter reads
    /// each concept's description records.
    DescriptionProfilesIndex = 94,
    DescriptionProfiles = 95,
    /// `[u8]` by concept ordinal: the number of the concept's description
    /// profile, or [`NO_PROFILE`] for a concept whose profile is not among
    /// the 255 commonest (format 6.1). A description filter on type,
    /// language and dialect alone tests a concept's profile, once per
    /// profile, not its descriptions.
    ConceptDescriptionProfiles = 96,
    /// `ceil(n / TARGET_BLOCK) + 1` `U32` indexes into `AssociationTargets`:
    /// the entries whose target is in block `b` (ordinals `b · 64 ..
    /// (b + 1) · 64`) are `AssociationTargets[index[b] .. index[b + 1]]`
    /// (format 6.1). A concept's historical associations are then a
    /// search of a few dozen entries, not of the whole section. Optional:
    /// without it readers search `AssociationTargets` whole.
    AssociationTargetBlocks = 97,
    /// `[ConceptIdEntry]` sorted by SCTID, one per concept: an SCTID's
    /// ordinal is a binary search here, whose last probe reads it (format
    /// 7, when ordinals stopped following SCTIDs).
    ConceptIdIndex = 98,
    /// `[U24]` by active member (`Members` order): the ordinal of the
    /// member's referenced component, or `U24::MAX` when that is no
    /// concept of the edition (format 7). A member filter keeps members,
    /// and their concepts are read here, not searched for by SCTID.
    MemberConcepts = 99,

    /// A compiled code system other than SNOMED CT (format 2.1; metadata
    /// `content = "codesystem"`): `[CsConceptRecord]` sorted by the bytes
    /// of their codes. A concept's ordinal is its index here.
    CsConcepts = 100,
    /// UTF-8 text that `CsStr` references point into: codes, displays,
    /// property values, designations.
    CsStrings = 101,
    /// UTF-8, one name per line: the property codes, languages, designation
    /// uses, statuses and concept kinds that `u16` fields of the records
    /// index. Parsed (and checksummed) on open.
    CsNames = 102,
    /// CSR by concept ordinal of `[CsPropertyRecord]`: each concept's
    /// property values, in the release's order.
    CsPropertiesIndex = 103,
    CsProperties = 104,
    /// CSR by concept ordinal of `[CsDesignationRecord]`.
    CsDesignationsIndex = 105,
    CsDesignations = 106,
    /// CSR by concept ordinal of `u32` ordinals: the parents in the code
    /// system's hierarchy (LOINC's multiaxial hierarchy), ascending.
    CsParentsIndex = 107,
    CsParents = 108,
    /// CSR of the children, in the release's sequence order.
    CsChildrenIndex = 109,
    CsChildren = 110,
}

impl SectionKind {
    /// Whether the kind belongs to a compiled code system file (codes
    /// 100–110) rather than to an edition.
    pub fn is_code_system(self) -> bool {
        (self as u32) >= 100
    }

    /// Whether the kind is a CSR index of three-byte offsets ([`U24`](crate::U24)):
    /// the indexes whose items are records, counted in the millions at
    /// most (since 6.0). The closures' indexes (`AncestorsIndex`,
    /// `DescendantsIndex`) hold byte offsets into lists that pass 2^24
    /// bytes, and the word and member indexes are small: they keep `U32`.
    pub fn is_narrow_index(self) -> bool {
        use SectionKind::*;
        matches!(
            self,
            ParentsIndex
                | ChildrenIndex
                | ConceptDescriptionsIndex
                | AttributesIndex
                | InboundIndex
                | ConcreteIndex
                | StatedIndex
        )
    }

    /// A kind's name, or its code when this reader does not know it.
    pub fn describe(code: u32) -> String {
        match SectionKind::from_code(code) {
            Some(k) => k.name().to_owned(),
            None => format!("#{code}"),
        }
    }
}

/// Code meaning "no value" in one-byte code fields.
pub const NO_CODE: u8 = 0xFF;

/// Flag bits of [`ConceptRecord::flags`].
pub mod concept_flags {
    pub const ACTIVE: u8 = 1;
    /// Definition status is 900000000000073002 |Defined| (sufficiently
    /// defined); otherwise primitive.
    pub const DEFINED: u8 = 2;
    /// The concept is the root, 138875005 |SNOMED CT Concept|, or one of
    /// its descendants by the inferred is-a closure: a member of ECL's
    /// `*` hierarchy (since 1.6; readers of older files search the
    /// concept's ancestors instead).
    pub const IN_HIERARCHY: u8 = 4;
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct ConceptRecord {
    /// RF2 effectiveTime as the integer YYYYMMDD.
    pub effective_time: U32,
    /// Ordinal of the module concept, in three bytes since 6.0 (`U24::MAX`,
    /// out of range, when the release lacks it). An ordinal, not a number
    /// into a table of modules: a concept filter tests thousands of
    /// records, and the table's dependent load made `{{ C effectiveTime }}`
    /// half again slower.
    pub module: crate::U24,
    pub flags: u8,
}

/// Flag bits of [`DescriptionRecord::flags`].
pub mod description_flags {
    pub const ACTIVE: u8 = 1;
}

/// The bits of a `DescriptionSearch` entry (format 1.5): what a search
/// reads of a candidate description instead of its record and its term.
pub mod description_search {
    /// The term's length in characters (Unicode scalar values); `CHARS`
    /// itself means that many or more (read the term to know).
    pub const CHARS: u16 = 0x07FF;
    /// The description is active.
    pub const ACTIVE: u16 = 1 << 11;
    /// Its concept is active.
    pub const CONCEPT_ACTIVE: u16 = 1 << 12;
    /// Its type is text definition.
    pub const DEFINITION: u16 = 1 << 13;
    /// Its folded term is one word.
    pub const ONE_WORD: u16 = 1 << 14;
    /// It is an active synonym preferred in the default language refset.
    pub const PREFERRED: u16 = 1 << 15;
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct DescriptionRecord {
    pub id: U64,
    /// Where the term starts in `TermHeap`.
    pub term_offset: U32,
    pub term_len: U16,
    /// Index into `DescriptionKinds`: the module, effective time, type,
    /// case significance, language and status (since 6.0).
    pub kind: U16,
}

/// What descriptions share (`DescriptionKinds`, format 6): a release's
/// 1.6 million descriptions have a few hundred distinct combinations of
/// these, so a description holds a two-byte number for them.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct DescriptionKindRecord {
    /// Ordinal of the module concept (`NO_ORDINAL` when the release lacks
    /// it).
    pub module: U32,
    /// RF2 effectiveTime as the integer YYYYMMDD.
    pub effective_time: U32,
    /// Code of the description type (FSN, synonym, definition).
    pub type_code: u8,
    /// Code of the case significance.
    pub case_code: u8,
    /// Index into `Languages`.
    pub language: u8,
    pub flags: u8,
}

/// A concept's SCTID and ordinal (`ConceptIdIndex`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct ConceptIdEntry {
    pub id: U64,
    pub ordinal: crate::U24,
}

/// A concept's preferred term in `TermHeap` (`PreferredTermIndex`).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct PreferredTermEntry {
    pub offset: U32,
    /// 0 when the concept has none.
    pub len: U16,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct AcceptabilityRecord {
    /// Code of the language refset: language refsets are few, and their
    /// concepts need not be in the release.
    pub refset_code: u8,
    /// Code of the acceptability (preferred, acceptable).
    pub acceptability_code: u8,
}

/// The concepts (by ordinal) of one block of `AssociationTargetBlocks`.
pub const TARGET_BLOCK: u32 = 64;

/// The byte of `ConceptDescriptionProfiles` for a concept whose profile
/// the file does not number: its descriptions are read instead.
pub const NO_PROFILE: u8 = u8::MAX;

/// One (type, language, acceptability set) of a description profile.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    FromBytes,
    IntoBytes,
    KnownLayout,
    Immutable,
    Unaligned,
)]
#[repr(C)]
pub struct DescriptionProfileRecord {
    /// Code of the description type.
    pub type_code: u8,
    /// Index into `Languages`.
    pub language: u8,
    /// Number of the acceptability set (`AcceptabilitySetsIndex`).
    pub acceptability_set: U16,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct RelationshipRecord {
    /// Ordinal of the other end: the destination in `Attributes` and
    /// `Stated`, the source in `Inbound` (three bytes since 6.0: an
    /// edition holds at most 2^24 concepts).
    pub target: crate::U24,
    /// Index into `RelationshipKinds`: the attribute type, the
    /// characteristic type and the group.
    pub kind: U16,
}

/// One (attribute type, characteristic type, group) of `RelationshipKinds`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct RelationshipKindRecord {
    /// Ordinal of the attribute (relationship type) concept.
    pub type_ord: U32,
    /// Code of the characteristic type (inferred, additional, stated).
    pub characteristic_code: u8,
    /// The relationship group (since 6.0).
    pub group: U16,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct ConcreteRecord {
    /// Index into `RelationshipKinds`: the attribute type, the
    /// characteristic type and the group (since 6.0).
    pub kind: U16,
    /// Where the value starts in `ConcreteHeap`.
    pub value_offset: U32,
    pub value_len: U16,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct RefsetRecord {
    /// SCTID of the refset concept, which need not be in the release (a
    /// subset release may ship members of refsets whose concepts it lacks).
    pub refset: U64,
    /// Index of its first member in `Members`.
    pub first_member: U32,
    pub member_count: U32,
    /// Where its schema line lies in `RefsetSchemaHeap`.
    pub schema_offset: U32,
    pub schema_len: U32,
    /// A [`RefsetKind`] code.
    pub kind: u8,
    pub reserved: [u8; 7],
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct MemberRecord {
    /// SCTID of the referenced component (concept, description or
    /// relationship).
    pub component: U64,
    pub fields_offset: U32,
    pub fields_len: U32,
}

/// An alternate identifier: `text` (in `IdentifierHeap`) identifies
/// `component` in `scheme`. `hash` is [`identifier_hash`] of the text, so
/// that a lookup by (scheme, text) is a binary search on fixed-size keys.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct IdentifierRecord {
    pub scheme: U64,
    pub hash: U64,
    pub component: U64,
    pub text_offset: U32,
    pub text_len: U32,
}

/// The hash `IdentifierRecord`s are sorted by: XXH3-64 (seed 0) of the
/// identifier's UTF-8 bytes.
pub fn identifier_hash(text: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(text.as_bytes())
}

/// A piece of `CsStrings`: `len` bytes from `offset`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct CsStr {
    pub offset: U32,
    pub len: U32,
}

/// `u16` name fields that name nothing.
pub const CS_NO_NAME: u16 = 0xFFFF;

/// Flag bits of [`CsConceptRecord::flags`].
pub mod cs_flags {
    /// Not active (LOINC `DEPRECATED`).
    pub const INACTIVE: u8 = 1;
    /// Active but not to be used for new data (LOINC `DISCOURAGED`).
    pub const DEPRECATED: u8 = 2;
    /// Not for use in data: a grouper (LOINC answer lists and parts).
    pub const NOT_SELECTABLE: u8 = 4;
}

/// A concept of a compiled code system.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct CsConceptRecord {
    pub code: CsStr,
    /// Empty when the concept has no display.
    pub display: CsStr,
    /// Index into `CsNames`: the concept's kind (LOINC: `term`, `part`,
    /// `answer-list`, `answer`).
    pub kind: U16,
    /// Index into `CsNames` of the release's status (`ACTIVE`, ...), or
    /// [`CS_NO_NAME`].
    pub status: U16,
    pub flags: u8,
    pub reserved: [u8; 3],
}

/// What a [`CsPropertyRecord`]'s value is, as FHIR types it.
pub mod cs_value {
    /// `valueCode`: a code of this code system or a token.
    pub const CODE: u8 = 0;
    /// `valueString`.
    pub const STRING: u8 = 1;
    /// `valueBoolean`: the text is `true` or `false`.
    pub const BOOLEAN: u8 = 2;
    /// `valueInteger`: the text is a decimal integer.
    pub const INTEGER: u8 = 3;
}

/// One property value of a concept.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct CsPropertyRecord {
    /// Index into `CsNames` of the property's code.
    pub property: U16,
    /// A [`cs_value`] code.
    pub value_type: u8,
    pub reserved: u8,
    pub value: CsStr,
}

/// One designation of a concept.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct CsDesignationRecord {
    /// Index into `CsNames` of its language (BCP-47), or [`CS_NO_NAME`].
    pub language: U16,
    /// Index into `CsNames` of its use (a code of the code system itself,
    /// LOINC's `LONG_COMMON_NAME`...), or [`CS_NO_NAME`].
    pub use_: U16,
    pub value: CsStr,
}

/// A refset member's module and effective time, as indexes into
/// `MemberModules` and `MemberTimes`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct MemberMetaRecord {
    pub module: U16,
    pub time: U16,
}

/// A [`MemberCodes`](SectionKind::MemberCodes) code meaning "not in the
/// dictionary: read the member's text".
pub const UNCODED: u16 = 0xFFFF;

/// Where a refset's member columns are: its codes' start in `MemberCodes`
/// (in codes) and its first column's slot in `MemberDictionaryIndex`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct MemberColumnsEntry {
    pub codes: U32,
    pub columns: U32,
}

/// One distinct value of a member column: `MemberFieldHeap[offset..offset
/// + len]`.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct MemberValueRecord {
    pub offset: U32,
    pub len: U32,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct ComponentMemberEntry {
    pub component: U64,
    /// Index into `Members` (three bytes since 6.0: an edition holds at
    /// most 2^24 active members).
    pub member: crate::U24,
}

/// A word prefix's postings from which the importer precomputes its
/// search answer (`SearchHeads`).
pub const SEARCH_HEAD_MIN_POSTINGS: usize = 10_000;

/// How many concepts each `SearchHeads` list holds at most: the first
/// pages of a search.
pub const SEARCH_HEAD_LIST: usize = 200;

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct SearchHeadRecord {
    /// The head (a folded word prefix) in `SearchHeadText`.
    pub text_offset: U32,
    pub text_len: U32,
    /// The concepts a search for it finds: with an active description
    /// (not a definition) and active themselves; and with any
    /// description, active or not (not a definition).
    pub total_active: U32,
    pub total_all: U32,
    /// The first of them in rank order, in `SearchHeadLists`.
    pub active_start: U32,
    pub active_len: U32,
    pub all_start: U32,
    pub all_len: U32,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct TypeSourcesEntry {
    /// Ordinal of the attribute type; `u32::MAX` in the closing entry.
    pub type_ord: U32,
    /// Where the type's concepts start in the matching `…TypeSources`.
    pub start: U32,
}

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct AssociationTargetEntry {
    /// Ordinal of the association's target concept.
    pub target: crate::U24,
    /// Index into `Members` of the association row; its referenced
    /// component is the source.
    pub member: crate::U24,
    /// Ordinal of the source, if it is a concept of the edition; else
    /// `U24::MAX` (a description, or a concept the release lacks). Three
    /// bytes each since 6.0: an edition holds fewer than 2^24 − 1
    /// concepts.
    pub source: crate::U24,
}

/// "Not a concept of this edition" in ordinal fields that may hold none.
pub const NO_ORDINAL: u32 = u32::MAX;

/// What a refset is, as far as txmap treats refsets differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum RefsetKind {
    Simple = 0,
    Association = 1,
    AttributeValue = 2,
    SimpleMap = 3,
    ComplexMap = 4,
    ExtendedMap = 5,
    MrcmDomain = 6,
    MrcmAttributeDomain = 7,
    MrcmAttributeRange = 8,
    MrcmModuleScope = 9,
    ModuleDependency = 10,
    OwlExpression = 11,
    DescriptionType = 12,
    RefsetDescriptor = 13,
    Other = 255,
}

impl RefsetKind {
    pub fn from_code(code: u8) -> RefsetKind {
        use RefsetKind::*;
        match code {
            0 => Simple,
            1 => Association,
            2 => AttributeValue,
            3 => SimpleMap,
            4 => ComplexMap,
            5 => ExtendedMap,
            6 => MrcmDomain,
            7 => MrcmAttributeDomain,
            8 => MrcmAttributeRange,
            9 => MrcmModuleScope,
            10 => ModuleDependency,
            11 => OwlExpression,
            12 => DescriptionType,
            13 => RefsetDescriptor,
            _ => Other,
        }
    }

    pub fn name(self) -> &'static str {
        use RefsetKind::*;
        match self {
            Simple => "simple",
            Association => "association",
            AttributeValue => "attribute-value",
            SimpleMap => "simple-map",
            ComplexMap => "complex-map",
            ExtendedMap => "extended-map",
            MrcmDomain => "mrcm-domain",
            MrcmAttributeDomain => "mrcm-attribute-domain",
            MrcmAttributeRange => "mrcm-attribute-range",
            MrcmModuleScope => "mrcm-module-scope",
            ModuleDependency => "module-dependency",
            OwlExpression => "owl-expression",
            DescriptionType => "description-type",
            RefsetDescriptor => "refset-descriptor",
            Other => "other",
        }
    }
}

/// A typed view of a section as a slice of records: a length check, O(1).
pub fn records<T>(kind: SectionKind, bytes: &[u8]) -> Result<&[T], FormatError>
where
    T: FromBytes + KnownLayout + Immutable + Unaligned,
{
    <[T]>::ref_from_bytes(bytes).map_err(|_| FormatError::RecordSize {
        kind,
        len: bytes.len() as u64,
        record: size_of::<T>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_sizes_are_part_of_the_format() {
        // Changing any of these is a major format change.
        assert_eq!(size_of::<ConceptRecord>(), 8);
        assert_eq!(size_of::<DescriptionRecord>(), 16);
        assert_eq!(size_of::<DescriptionKindRecord>(), 12);
        assert_eq!(size_of::<AcceptabilityRecord>(), 2);
        assert_eq!(size_of::<DescriptionProfileRecord>(), 4);
        assert_eq!(size_of::<PreferredTermEntry>(), 6);
        assert_eq!(size_of::<ConceptIdEntry>(), 11);
        assert_eq!(size_of::<RelationshipRecord>(), 5);
        assert_eq!(size_of::<RelationshipKindRecord>(), 7);
        assert_eq!(size_of::<ConcreteRecord>(), 8);
        assert_eq!(size_of::<RefsetRecord>(), 32);
        assert_eq!(size_of::<MemberRecord>(), 16);
        assert_eq!(size_of::<MemberMetaRecord>(), 4);
        assert_eq!(size_of::<MemberColumnsEntry>(), 8);
        assert_eq!(size_of::<MemberValueRecord>(), 8);
        assert_eq!(size_of::<IdentifierRecord>(), 32);
        assert_eq!(size_of::<ComponentMemberEntry>(), 11);
        assert_eq!(size_of::<AssociationTargetEntry>(), 9);
        assert_eq!(size_of::<TypeSourcesEntry>(), 8);
        assert_eq!(size_of::<CsStr>(), 8);
        assert_eq!(size_of::<CsConceptRecord>(), 24);
        assert_eq!(size_of::<SearchHeadRecord>(), 32);
        assert_eq!(size_of::<CsPropertyRecord>(), 12);
        assert_eq!(size_of::<CsDesignationRecord>(), 12);
    }

    #[test]
    fn kind_codes_round_trip() {
        for &k in SectionKind::ALL {
            assert_eq!(SectionKind::from_code(k as u32), Some(k));
        }
        assert_eq!(SectionKind::from_code(9999), None);
        for code in 0..=255u8 {
            let k = RefsetKind::from_code(code);
            assert!(k == RefsetKind::Other || k as u8 == code);
        }
    }

    #[test]
    fn records_checks_length_only() {
        let bytes = [0u8; 17];
        assert!(records::<ConceptRecord>(SectionKind::Concepts, &bytes[..16]).is_ok());
        assert!(records::<ConceptRecord>(SectionKind::Concepts, &bytes[1..17]).is_ok());
        assert!(matches!(
            records::<ConceptRecord>(SectionKind::Concepts, &bytes[..15]),
            Err(FormatError::RecordSize { .. })
        ));
    }
}
