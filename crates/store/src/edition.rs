//! [`Edition`]: opening an edition file and answering questions from it.

mod columns;

use std::fmt;
use std::ops::Range;

use txmap_format::schema::{
    AcceptabilityRecord, AssociationTargetEntry, ComponentMemberEntry, ConceptIdEntry,
    ConceptRecord, ConcreteRecord, DescriptionKindRecord, DescriptionProfileRecord,
    DescriptionRecord, IdentifierRecord, MemberMetaRecord, MemberRecord, NO_CODE, NO_ORDINAL,
    NO_PROFILE, PreferredTermEntry, RefsetKind, RefsetRecord, RelationshipKindRecord,
    RelationshipRecord, TARGET_BLOCK, TypeSourcesEntry, concept_flags, description_flags,
    identifier_hash,
};
use txmap_format::{Container, Metadata, SectionEntry, SectionKind, U24, ids, records};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, Immutable, KnownLayout, Unaligned};

use crate::StoreError;
use crate::sctid;
use crate::types::{
    Association, AssociationSource, Concept, ConceptFacts, ConceptTable, ConcreteLink,
    ConcreteValue, CopiedTable, Description, DescriptionKindTable, DescriptionRow, Identity, Link,
    Member, Ordinals, RefsetInfo, Relationship, SectionInfo, Status, checked_code,
};

use SectionKind::*;

pub use columns::MemberTable;

/// Sections every edition has. The others (stated relationships, concrete
/// values, inbound relationships, association targets) may be absent and
/// then read as empty.
const REQUIRED: &[SectionKind] = &[
    ConceptIds,
    ConceptIdIndex,
    Concepts,
    PreferredTermIndex,
    ParentsIndex,
    Parents,
    ChildrenIndex,
    Children,
    AncestorsIndex,
    Ancestors,
    DescendantsIndex,
    Descendants,
    Descriptions,
    ConceptDescriptionsIndex,
    DescriptionsById,
    TermHeap,
    DescriptionAcceptability,
    AcceptabilitySetsIndex,
    AcceptabilitySets,
    AttributesIndex,
    Attributes,
    RelationshipKinds,
    DescriptionKinds,
    Refsets,
    Members,
    MemberConcepts,
    MemberFieldHeap,
    ComponentMembers,
    RefsetSchemaHeap,
    Codes,
    Languages,
    WordFst,
    WordPostingsIndex,
    WordPostings,
];

/// Sections small enough to checksum and parse on every open. The fst is
/// among them because the `fst` crate trusts its input: it must not be
/// built over bytes that fail their checksum.
const VERIFIED_ON_OPEN: &[SectionKind] = &[
    Codes,
    Languages,
    Refsets,
    RefsetSchemaHeap,
    RelationshipKinds,
    DescriptionKinds,
    AcceptabilitySetsIndex,
    AcceptabilitySets,
    WordFst,
];
/// Small optional sections parsed at open (format 1.3).
const VERIFIED_ON_OPEN_IF_PRESENT: &[SectionKind] = &[
    InactiveRefsets,
    MemberModules,
    MemberTimes,
    DescriptionProfilesIndex,
    DescriptionProfiles,
];

/// One slot per section kind code.
const SLOTS: usize = {
    let mut max = 0;
    let mut i = 0;
    while i < SectionKind::ALL.len() {
        let code = SectionKind::ALL[i] as u32 as usize;
        if code > max {
            max = code;
        }
        i += 1;
    }
    max + 1
};

/// What [`Edition::members_of`] reads a list's members' metadata from.
#[derive(Clone, Copy, Debug)]
struct MemberView<'a> {
    kind: SectionKind,
    active: bool,
    /// Each member's index into `table` (format 6).
    stamps: &'a [U16],
    table: &'a [MemberMetaRecord],
    modules: &'a [U64],
    times: &'a [U32],
}

impl<'a> MemberView<'a> {
    /// Member `index`'s (module, time) codes; `None` without the section
    /// (before format 1.3) or, in a damaged file, past the table.
    fn meta(&self, index: usize) -> Option<&'a MemberMetaRecord> {
        self.table.get(usize::from(self.stamps.get(index)?.get()))
    }

    fn member(
        &self,
        refset: u64,
        index: usize,
        m: &MemberRecord,
        fields: &'a str,
    ) -> Result<Member<'a>, StoreError> {
        let (module, effective_time) = match self.stamps.get(index) {
            Some(s) => {
                let Some(r) = self.table.get(usize::from(s.get())) else {
                    return Err(StoreError::corrupt(
                        self.kind,
                        format!("member {index}: stamp {} out of range", s.get()),
                    ));
                };
                let (module, time) = (r.module.get() as usize, r.time.get() as usize);
                match (self.modules.get(module), self.times.get(time)) {
                    (Some(m), Some(t)) => (Some(m.get()), Some(t.get())),
                    _ => {
                        return Err(StoreError::corrupt(
                            self.kind,
                            format!("member {index}: module {module} or time {time} out of range"),
                        ));
                    }
                }
            }
            None => (None, None),
        };
        Ok(Member {
            refset,
            component: m.component.get(),
            fields,
            active: self.active,
            module,
            effective_time,
        })
    }
}

/// The two lists of refset members.
#[derive(Clone, Copy)]
enum MemberList {
    Active,
    Inactive,
}

/// A refset's row, parsed on open.
#[derive(Debug)]
struct RefsetEntry {
    id: u64,
    kind: RefsetKind,
    first_member: u32,
    member_count: u32,
    pattern: String,
    columns: Vec<String>,
}

/// A read-only view of an edition file over `B`: a `Vec<u8>`, a memory map,
/// a `&[u8]` — anything that derefs to the file's bytes.
///
/// The edition keeps only where each section lies and a few small parsed
/// tables; every call re-slices `B`, which costs a bounds check. Accessors
/// never panic and never trust the bytes: whatever the file holds, they
/// answer or return [`StoreError::Corrupt`].
pub struct Edition<B: AsRef<[u8]>> {
    bytes: B,
    slots: [Option<(usize, usize)>; SLOTS],
    entries: Vec<SectionEntry>,
    metadata: Metadata,
    identity: Identity,
    concept_count: u32,
    description_count: u32,
    /// What one-byte codes in records stand for.
    codes: Vec<u64>,
    /// `RelationshipKinds`, which relationship and concrete value records
    /// index: the type ordinal, characteristic code and group of each
    /// kind, copied on open so that a relationship read costs an index,
    /// not a section lookup.
    relationship_kinds: Vec<(u32, u8, u16)>,
    /// `DescriptionKinds`, which description records number, copied
    /// and checked on open.
    pub(crate) description_kinds: DescriptionKindTable,
    /// `AcceptabilitySetsIndex` and `AcceptabilitySets`, which
    /// `DescriptionAcceptability` numbers, copied on open.
    acceptability_sets: CopiedTable<AcceptabilityRecord>,
    /// `DescriptionProfilesIndex` and `DescriptionProfiles` (format 6.1),
    /// copied and checked on open like the acceptability sets; empty when
    /// the file has no profiles.
    description_profiles: CopiedTable<DescriptionProfileRecord>,
    languages: Vec<String>,
    /// Ascending by refset SCTID.
    refsets: Vec<RefsetEntry>,
    /// The same for the refsets with inactive members (ranges into
    /// `InactiveMembers`); empty before format 1.3.
    inactive_refsets: Vec<RefsetEntry>,
    /// Ordinal of the default language refset, if it is a concept here.
    default_language: Option<u64>,
    /// Asks for bytes about to be read as a run (see [`Prefetch`]).
    prefetch: Option<Prefetch>,
    /// The root concept's ordinal, and whether concept records carry
    /// [`concept_flags::IN_HIERARCHY`]: files since format 1.6 do, and
    /// then the root's record has it (it is in its own hierarchy).
    root: Option<u32>,
    hierarchy_flags: bool,
    /// The active concepts outside the root's hierarchy, found once on
    /// first use ([`Edition::active_off_hierarchy`]).
    off_hierarchy: std::sync::OnceLock<Vec<u32>>,
    /// The commonest words' postings as bitmaps, built on first use by a
    /// search that matches a short list against them
    /// ([`txmap_text::DenseWords`]).
    pub(crate) dense_words: txmap_text::DenseWords,
}

/// Told of a run of the edition's bytes that a call is about to read in
/// order — a word's postings, a concept's descendants as the
/// evaluator copies them ([`Edition::read_ahead`]) — so that a mapping
/// can ask the kernel for the run in one read (`madvise(MADV_WILLNEED)`,
/// `txmap_load::will_need`) rather than fault it in a page at a time.
/// Only runs longer than [`PREFETCH_MIN`] are told. A hint: answers do not
/// depend on it.
pub type Prefetch = fn(&[u8]);

/// The shortest run worth a prefetch: two pages. A shorter one costs a
/// fault or two whatever is asked.
pub const PREFETCH_MIN: usize = 8192;

impl<B: AsRef<[u8]>> fmt::Debug for Edition<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Edition")
            .field("identity", &self.identity)
            .field("len", &self.bytes.as_ref().len())
            .field("concepts", &self.concept_count)
            .field("descriptions", &self.description_count)
            .field("refsets", &self.refsets.len())
            .finish_non_exhaustive()
    }
}

impl<B: AsRef<[u8]>> Edition<B> {
    /// Opens an edition in time independent of its size: checks the
    /// container (header, section table, metadata checksum), that every
    /// required section is present with a whole number of records and that
    /// indexes have one entry per concept or description, and checksums
    /// and parses the few small sections (codes, languages, refsets, the
    /// word fst). The big sections are checked by [`verify`](Self::verify).
    pub fn open(bytes: B) -> Result<Self, StoreError> {
        let (slots, entries, metadata, identity) = {
            let c = Container::open(bytes.as_ref())?;
            let identity = parse_identity(c.metadata())?;
            for &kind in REQUIRED {
                c.require(kind)?;
            }
            for &kind in VERIFIED_ON_OPEN {
                c.verify_section(kind)?;
            }
            for &kind in VERIFIED_ON_OPEN_IF_PRESENT {
                if c.entry(kind).is_some() {
                    c.verify_section(kind)?;
                }
            }
            let mut slots = [None; SLOTS];
            for e in c.entries() {
                let Some(kind) = SectionKind::from_code(e.kind.get()) else {
                    continue;
                };
                let range = usize::try_from(e.offset.get())
                    .ok()
                    .and_then(|s| Some((s, s.checked_add(usize::try_from(e.len.get()).ok()?)?)));
                let Some(range) = range else {
                    return Err(StoreError::corrupt(
                        kind,
                        "section lies beyond the address space",
                    ));
                };
                if let Some(slot) = slots.get_mut(kind as u32 as usize) {
                    *slot = Some(range);
                }
            }
            (slots, c.entries().to_vec(), c.metadata().clone(), identity)
        };
        let mut edition = Edition {
            bytes,
            slots,
            entries,
            metadata,
            identity,
            concept_count: 0,
            description_count: 0,
            codes: Vec::new(),
            relationship_kinds: Vec::new(),
            description_kinds: DescriptionKindTable::default(),
            acceptability_sets: CopiedTable::default(),
            description_profiles: CopiedTable::default(),
            languages: Vec::new(),
            refsets: Vec::new(),
            inactive_refsets: Vec::new(),
            default_language: None,
            prefetch: None,
            root: None,
            hierarchy_flags: false,
            off_hierarchy: std::sync::OnceLock::new(),
            dense_words: txmap_text::DenseWords::new(),
        };
        edition.check_layout()?;
        edition.load_tables()?;
        edition.text_index()?;
        Ok(edition)
    }

    /// The memory held by what searches built and keep: the commonest
    /// words' bitmaps ([`txmap_text::DenseWords`]).
    pub fn kept_search_bytes(&self) -> usize {
        self.dense_words.bytes()
    }

    /// Tells `prefetch` of every run a call is about to read in order (a
    /// server sets it for mapped editions).
    pub fn set_prefetch(&mut self, prefetch: Prefetch) {
        self.prefetch = Some(prefetch);
    }

    /// Whether a prefetch hook is set (so finding runs is worth it).
    pub(crate) fn prefetches(&self) -> bool {
        self.prefetch.is_some()
    }

    /// Hands `run` to the prefetch hook if it is long enough.
    pub(crate) fn ahead(&self, run: &[u8]) {
        if let Some(f) = self.prefetch
            && run.len() >= PREFETCH_MIN
        {
            f(run);
        }
    }

    /// Record sizes and index lengths: O(1) per section.
    fn check_layout(&mut self) -> Result<(), StoreError> {
        let ids: &[U64] = self.recs(ConceptIds)?;
        let n = u32::try_from(ids.len())
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or_else(|| StoreError::corrupt(ConceptIds, "more concepts than u32 ordinals"))?;
        let concepts: &[ConceptRecord] = self.recs(Concepts)?;
        expect_count(Concepts, concepts.len(), n)?;
        let index: &[ConceptIdEntry] = self.recs(ConceptIdIndex)?;
        expect_count(ConceptIdIndex, index.len(), n)?;
        let descriptions: &[DescriptionRecord] = self.recs(Descriptions)?;
        let d = u32::try_from(descriptions.len())
            .ok()
            .filter(|&d| d < u32::MAX)
            .ok_or_else(|| StoreError::corrupt(Descriptions, "more descriptions than u32"))?;
        let by_id: &[U24] = self.recs(DescriptionsById)?;
        expect_count(DescriptionsById, by_id.len(), d)?;

        self.check_preferred_term_index(n)?;
        for (index, items) in [(ParentsIndex, Parents), (ChildrenIndex, Children)] {
            self.check_csr::<U32>(index, items, n)?;
        }
        // Byte offsets into packed and chunked lists.
        self.check_csr::<u8>(AncestorsIndex, Ancestors, n)?;
        self.check_csr::<u8>(DescendantsIndex, Descendants, n)?;
        self.check_csr::<DescriptionRecord>(ConceptDescriptionsIndex, Descriptions, n)?;
        let sets: &[U16] = self.recs(DescriptionAcceptability)?;
        expect_count(DescriptionAcceptability, sets.len(), d)?;
        if self.present(ConceptDescriptionProfiles) {
            let profiles: &[u8] = self.recs(ConceptDescriptionProfiles)?;
            expect_count(ConceptDescriptionProfiles, profiles.len(), n)?;
        }
        for (index, items) in [
            (AttributesIndex, Attributes),
            (InboundIndex, Inbound),
            (StatedIndex, Stated),
        ] {
            self.check_csr::<RelationshipRecord>(index, items, n)?;
        }
        self.check_csr::<ConcreteRecord>(ConcreteIndex, Concrete, n)?;

        let members: &[MemberRecord] = self.recs(Members)?;
        let concepts: &[U24] = self.recs(MemberConcepts)?;
        expect_count(MemberConcepts, concepts.len(), members.len() as u32)?;
        let by_component: &[ComponentMemberEntry] = self.recs(ComponentMembers)?;
        if members.len() != by_component.len() {
            return Err(StoreError::corrupt(
                ComponentMembers,
                format!(
                    "{} entries for {} members",
                    by_component.len(),
                    members.len()
                ),
            ));
        }
        for (members, meta) in [(Members, MemberMeta), (InactiveMembers, InactiveMemberMeta)] {
            let n = self.recs::<MemberRecord>(members)?.len();
            let m = self.recs::<U16>(meta)?.len();
            if self.present(meta) && m != n {
                return Err(StoreError::corrupt(
                    meta,
                    format!("{m} records for {n} members"),
                ));
            }
        }
        let _: &[U64] = self.recs(MemberModules)?;
        let _: &[IdentifierRecord] = self.recs(Identifiers)?;
        let _: &[U32] = self.recs(RefsetConceptsIndex)?;
        let _: &[U32] = self.recs(MemberTimes)?;
        let _: &[AssociationTargetEntry] = self.recs(AssociationTargets)?;
        if self.present(AssociationTargetBlocks) {
            let blocks: &[U32] = self.recs(AssociationTargetBlocks)?;
            expect_count(
                AssociationTargetBlocks,
                blocks.len(),
                n.div_ceil(TARGET_BLOCK) + 1,
            )?;
        }
        let _: &[TypeSourcesEntry] = self.recs(AttributeTypesIndex)?;
        let _: &[U32] = self.recs(AttributeTypeSources)?;
        let _: &[TypeSourcesEntry] = self.recs(ConcreteTypesIndex)?;
        let _: &[U32] = self.recs(ConcreteTypeSources)?;
        let _: &[U32] = self.recs(WordPostingsIndex)?;
        self.concept_count = n;
        self.description_count = d;
        Ok(())
    }

    /// `PreferredTermIndex` has `n + 1` entries, the last saying where the
    /// carriers end, within `TermHeap` (each term is checked when read).
    fn check_preferred_term_index(&self, n: u32) -> Result<(), StoreError> {
        let entries: &[PreferredTermEntry] = self.recs(PreferredTermIndex)?;
        let heap = self.raw(TermHeap)?.len();
        if entries.len() as u64 != u64::from(n) + 1 {
            return Err(StoreError::corrupt(
                PreferredTermIndex,
                format!("{} entries for {n} concepts", entries.len()),
            ));
        }
        let end = entries.last().map_or(0, |e| e.offset.get());
        if end as usize > heap {
            return Err(StoreError::corrupt(
                PreferredTermIndex,
                format!("carriers end at {end}, past the {heap}-byte TermHeap"),
            ));
        }
        Ok(())
    }

    /// An index of `entries + 1` offsets into `items`, starting at 0 and
    /// ending at the number of items. An absent optional index reads as
    /// empty, but not when its items are present.
    fn check_csr<T>(
        &self,
        index: SectionKind,
        items: SectionKind,
        entries: u32,
    ) -> Result<(), StoreError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        // A whole number of offsets (read in place from here on).
        if index.is_narrow_index() {
            let _: &[U24] = self.recs(index)?;
        } else {
            let _: &[U32] = self.recs(index)?;
        }
        let offsets = self.offsets(index)?;
        let values: &[T] = self.recs(items)?;
        if !self.present(index) {
            if self.present(items) {
                return Err(StoreError::corrupt(
                    index,
                    format!("absent, but {} is present", items.name()),
                ));
            }
            return Ok(());
        }
        if !self.present(items) {
            return Err(StoreError::corrupt(
                items,
                format!("absent, but {} is present", index.name()),
            ));
        }
        if offsets.len() as u64 != u64::from(entries) + 1 {
            return Err(StoreError::corrupt(
                index,
                format!(
                    "{} offsets for {entries} entries (expected {})",
                    offsets.len(),
                    u64::from(entries) + 1
                ),
            ));
        }
        let first = offsets.get(0).unwrap_or(0);
        let last = offsets.get(offsets.len().wrapping_sub(1)).unwrap_or(0);
        if first != 0 || last as usize != values.len() {
            return Err(StoreError::corrupt(
                index,
                format!(
                    "offsets run {first}..{last} over {} items of {}",
                    values.len(),
                    items.name()
                ),
            ));
        }
        Ok(())
    }

    /// Parses the small sections verified on open.
    fn load_tables(&mut self) -> Result<(), StoreError> {
        let codes: &[U64] = self.recs(Codes)?;
        if codes.len() >= usize::from(NO_CODE) {
            return Err(StoreError::corrupt(
                Codes,
                format!("{} codes; at most 255 fit in a code byte", codes.len()),
            ));
        }
        let codes = codes.iter().map(|c| c.get()).collect();
        let kinds: &[RelationshipKindRecord] = self.recs(RelationshipKinds)?;
        self.relationship_kinds = (kinds.iter())
            .map(|k| (k.type_ord.get(), k.characteristic_code, k.group.get()))
            .collect();
        self.acceptability_sets = self.copied_table(AcceptabilitySetsIndex, AcceptabilitySets)?;

        let languages = std::str::from_utf8(self.raw(Languages)?)
            .map_err(|e| StoreError::corrupt(Languages, e.to_string()))?
            .split_terminator('\n')
            .map(str::to_owned)
            .collect();

        let refsets = self.parse_refsets(Refsets, Members)?;
        let inactive_refsets = self.parse_refsets(InactiveRefsets, InactiveMembers)?;
        self.codes = codes;
        self.languages = languages;
        // A kind's codes and language index tables copied above: checked
        // once here, not on every description read.
        let kinds: &[DescriptionKindRecord] = self.recs(DescriptionKinds)?;
        for (i, k) in kinds.iter().enumerate() {
            checked_code(k.type_code, self.codes.len(), DescriptionKinds)?;
            checked_code(k.case_code, self.codes.len(), DescriptionKinds)?;
            if usize::from(k.language) >= self.languages.len() {
                return Err(StoreError::corrupt(
                    DescriptionKinds,
                    format!(
                        "kind {i}: language {} out of range ({} languages)",
                        k.language,
                        self.languages.len()
                    ),
                ));
            }
        }
        self.description_kinds = DescriptionKindTable(kinds.to_vec());
        self.load_description_profiles()?;
        self.refsets = refsets;
        self.inactive_refsets = inactive_refsets;
        self.default_language = Some(self.identity.default_language_refset).filter(|&r| r != 0);
        self.root = self.ordinal(ids::ROOT);
        self.hierarchy_flags = match self.root {
            Some(root) => self.concept_record(root)?.flags & concept_flags::IN_HIERARCHY != 0,
            None => false,
        };
        Ok(())
    }

    /// Copies and checks the description profiles (format 6.1), if the
    /// file has them: every code, language and acceptability set a
    /// profile names is in its table, so a filter reads them unchecked.
    fn load_description_profiles(&mut self) -> Result<(), StoreError> {
        let present = [
            DescriptionProfilesIndex,
            DescriptionProfiles,
            ConceptDescriptionProfiles,
        ]
        .map(|k| self.present(k));
        if present == [false; 3] {
            return Ok(());
        }
        if present != [true; 3] {
            return Err(StoreError::corrupt(
                ConceptDescriptionProfiles,
                "the three description profile sections are not all present",
            ));
        }
        let table = self.copied_table::<DescriptionProfileRecord>(
            DescriptionProfilesIndex,
            DescriptionProfiles,
        )?;
        let count = table.len();
        if count > usize::from(NO_PROFILE) {
            return Err(StoreError::corrupt(
                DescriptionProfilesIndex,
                format!("{count} profiles; at most 255 fit in a byte"),
            ));
        }
        let sets = self.acceptability_sets.len();
        for (i, r) in table.rows.iter().enumerate() {
            checked_code(r.type_code, self.codes.len(), DescriptionProfiles)?;
            if usize::from(r.language) >= self.languages.len()
                || usize::from(r.acceptability_set.get()) >= sets
            {
                return Err(StoreError::corrupt(
                    DescriptionProfiles,
                    format!(
                        "row {i}: language {} or acceptability set {} out of range",
                        r.language,
                        r.acceptability_set.get()
                    ),
                ));
            }
        }
        self.description_profiles = table;
        Ok(())
    }

    /// A small CSR table (`U32` offsets into `items`) checked and copied
    /// on open: every offset within `items`, none running backwards. Row
    /// `i` is then `rows[index[i]..index[i + 1]]`, read without a check.
    fn copied_table<T>(
        &self,
        index: SectionKind,
        items: SectionKind,
    ) -> Result<CopiedTable<T>, StoreError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned + Clone,
    {
        let offsets: &[U32] = self.recs(index)?;
        self.check_csr::<T>(index, items, offsets.len().saturating_sub(1) as u32)?;
        if offsets.windows(2).any(|w| w[0].get() > w[1].get()) {
            return Err(StoreError::corrupt(index, "offsets run backwards"));
        }
        let rows: &[T] = self.recs(items)?;
        Ok(CopiedTable {
            index: offsets.iter().map(|o| o.get()).collect(),
            rows: rows.to_vec(),
        })
    }

    /// The `RefsetRecord`s of `section` (ascending, disjoint ranges into
    /// `members`), with their schemas parsed.
    fn parse_refsets(
        &self,
        section: SectionKind,
        members: SectionKind,
    ) -> Result<Vec<RefsetEntry>, StoreError> {
        let records: &[RefsetRecord] = self.recs(section)?;
        let member_total = self.recs::<MemberRecord>(members)?.len();
        let mut refsets: Vec<RefsetEntry> = Vec::with_capacity(records.len());
        for r in records {
            let id = r.refset.get();
            if refsets.last().is_some_and(|prev| prev.id >= id) {
                return Err(StoreError::corrupt(
                    section,
                    "refsets not in ascending SCTID order",
                ));
            }
            if refsets.last().is_some_and(|prev| {
                prev.first_member as u64 + prev.member_count as u64 > r.first_member.get() as u64
            }) {
                return Err(StoreError::corrupt(
                    section,
                    "refset member ranges overlap or are out of order",
                ));
            }
            let (first, count) = (r.first_member.get(), r.member_count.get());
            let end = (first as usize).checked_add(count as usize);
            if end.is_none_or(|end| end > member_total) {
                return Err(StoreError::corrupt(
                    section,
                    format!(
                        "members {first}+{count} of refset {id} exceed the {member_total} members"
                    ),
                ));
            }
            let schema = self.heap_str(
                RefsetSchemaHeap,
                r.schema_offset.get(),
                r.schema_len.get() as usize,
            )?;
            let mut parts = schema.split('\t');
            let pattern = parts.next().unwrap_or_default().to_owned();
            let columns = parts.map(str::to_owned).collect();
            refsets.push(RefsetEntry {
                id,
                kind: RefsetKind::from_code(r.kind),
                first_member: first,
                member_count: count,
                pattern,
                columns,
            });
        }
        Ok(refsets)
    }

    // ----- raw access -------------------------------------------------------

    pub(crate) fn present(&self, kind: SectionKind) -> bool {
        matches!(self.slots.get(kind as u32 as usize), Some(Some(_)))
    }

    /// A section's bytes; an absent section is empty.
    pub(crate) fn raw(&self, kind: SectionKind) -> Result<&[u8], StoreError> {
        match self.slots.get(kind as u32 as usize) {
            Some(Some((start, end))) => self
                .bytes
                .as_ref()
                .get(*start..*end)
                .ok_or_else(|| StoreError::corrupt(kind, "section lies outside the buffer")),
            _ => Ok(&[]),
        }
    }

    pub(crate) fn recs<T>(&self, kind: SectionKind) -> Result<&[T], StoreError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        records::<T>(kind, self.raw(kind)?).map_err(StoreError::from)
    }

    /// A CSR index's offsets, three or four bytes each as its kind says
    /// ([`SectionKind::is_narrow_index`]).
    #[inline]
    fn offsets(&self, index: SectionKind) -> Result<Offsets<'_>, StoreError> {
        Ok(Offsets {
            bytes: self.raw(index)?,
            narrow: index.is_narrow_index(),
        })
    }

    /// Entry `i` of a CSR index as a range of items. The two offsets are
    /// read from the bytes in one bounds check: the hot path of every
    /// list a concept has (a call, not inlined, per relationship list
    /// read made reverse refinements 15% slower when it also viewed the
    /// whole section as records).
    #[inline]
    fn csr_range(&self, index: SectionKind, i: u32) -> Result<Range<usize>, StoreError> {
        self.offsets(index)?.range(index, i)
    }

    /// The items of CSR entry `i`, and the index of the first.
    fn csr<T>(
        &self,
        index: SectionKind,
        items: SectionKind,
        i: u32,
    ) -> Result<(usize, &[T]), StoreError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let range = self.csr_range(index, i)?;
        let values: &[T] = self.recs(items)?;
        Ok((range.start, items_at(index, i, range, values)?))
    }

    pub(crate) fn heap_str(
        &self,
        kind: SectionKind,
        offset: u32,
        len: usize,
    ) -> Result<&str, StoreError> {
        str_in(self.raw(kind)?, kind, offset, len)
    }

    /// The SCTID of a concept ordinal read from section `origin`.
    fn id_at(&self, ordinal: u32, origin: SectionKind) -> Result<u64, StoreError> {
        id_in(self.recs(ConceptIds)?, ordinal, origin)
    }

    /// The SCTID a code byte stands for; 0 for "none".
    pub(crate) fn code(&self, code: u8, origin: SectionKind) -> Result<u64, StoreError> {
        if code == NO_CODE {
            return Ok(0);
        }
        self.codes.get(usize::from(code)).copied().ok_or_else(|| {
            StoreError::corrupt(
                origin,
                format!("code {code} out of range ({} codes)", self.codes.len()),
            )
        })
    }

    fn check_concept(&self, ordinal: u32) -> Result<(), StoreError> {
        concept_in_range(ordinal, self.concept_count)
    }

    fn check_description(&self, ordinal: u32) -> Result<(), StoreError> {
        if ordinal < self.description_count {
            Ok(())
        } else {
            Err(StoreError::OutOfRange {
                what: "description",
                ordinal,
                count: self.description_count,
            })
        }
    }

    // ----- identity ---------------------------------------------------------

    /// Checks every byte of the file against its checksums, then the word
    /// index's internal consistency; reads it all. `progress` is told how
    /// many bytes have been checked so far.
    pub fn verify(&self, progress: impl FnMut(u64)) -> Result<(), StoreError> {
        Container::open(self.bytes.as_ref())?.verify(progress)?;
        self.verify_word_index()
    }

    pub fn identity(&self) -> &Identity {
        &self.identity
    }

    /// All metadata, including `count.*` keys.
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// The section table, in file order.
    pub fn sections(&self) -> Vec<SectionInfo> {
        let mut out: Vec<SectionInfo> = self
            .entries
            .iter()
            .map(|e| SectionInfo {
                name: SectionKind::describe(e.kind.get()),
                code: e.kind.get(),
                offset: e.offset.get(),
                len: e.len.get(),
                count: e.count.get(),
            })
            .collect();
        out.sort_by_key(|s| s.offset);
        out
    }

    /// The underlying bytes.
    pub fn bytes(&self) -> &B {
        &self.bytes
    }

    pub fn into_inner(self) -> B {
        self.bytes
    }

    // ----- concepts ---------------------------------------------------------

    pub fn concept_count(&self) -> u32 {
        self.concept_count
    }

    pub fn description_count(&self) -> u32 {
        self.description_count
    }

    /// A concept's ordinal: a binary search of `ConceptIdIndex`. An
    /// ordinal out of range (a damaged file) finds nothing.
    pub fn ordinal(&self, sctid: u64) -> Option<u32> {
        let index: &[ConceptIdEntry] = self.recs(ConceptIdIndex).ok()?;
        let i = index.binary_search_by(|e| e.id.get().cmp(&sctid)).ok()?;
        self.ordinal_in(&index[i]).ok()
    }

    /// The ordinal an entry of `ConceptIdIndex` gives, checked.
    fn ordinal_in(&self, e: &ConceptIdEntry) -> Result<u32, StoreError> {
        let o = e.ordinal.get();
        self.check_concept(o).map(|()| o)
    }

    pub fn sctid(&self, ordinal: u32) -> Result<u64, StoreError> {
        self.check_concept(ordinal)?;
        self.id_at(ordinal, ConceptIds)
    }

    /// Concept `sctid`, if the edition has it: its record and the index
    /// entry that found it (not `ConceptIds`, a page more in a cold
    /// lookup).
    pub fn concept(&self, sctid: u64) -> Result<Option<Concept>, StoreError> {
        match self.ordinal(sctid) {
            Some(o) => self.concept_with_id(o, sctid).map(Some),
            None => Ok(None),
        }
    }

    /// Whether the concept is active: [`concept_at`](Self::concept_at)`.active`
    /// reading only its record, for callers that test many concepts.
    pub fn is_active(&self, ordinal: u32) -> Result<bool, StoreError> {
        Ok(self.concept_record(ordinal)?.flags & concept_flags::ACTIVE != 0)
    }

    /// The ordinal of the root, 138875005 |SNOMED CT Concept|, if the
    /// edition has it (found once, on open).
    pub fn root(&self) -> Option<u32> {
        self.root
    }

    /// Whether the concept is the root (138875005 |SNOMED CT Concept|) or
    /// one of its descendants: a member of ECL's `*`. A refinement of `*`
    /// asks it of every candidate, so it reads one bit of the concept's
    /// record (format 1.6) rather than search the concept's ancestors —
    /// which, asked of most concepts, read the whole `Ancestors` section.
    /// Files before 1.6 take the search.
    pub fn in_hierarchy(&self, ordinal: u32) -> Result<bool, StoreError> {
        let flags = self.concept_record(ordinal)?.flags;
        if self.hierarchy_flags {
            return Ok(flags & concept_flags::IN_HIERARCHY != 0);
        }
        match self.root {
            Some(root) => Ok(ordinal == root || self.ancestors(ordinal)?.contains(root)),
            None => Ok(false),
        }
    }

    /// The active concepts with no path to the root (a subset edition
    /// can hold a concept whose parents it lacks, and that concept's
    /// descendants): with the hierarchy, ECL's `*`. A full edition has
    /// none. Found by one pass over the concept records on first use and
    /// kept (four bytes a concept found).
    pub fn active_off_hierarchy(&self) -> Result<&[u32], StoreError> {
        if let Some(found) = self.off_hierarchy.get() {
            return Ok(found);
        }
        let mut found = Vec::new();
        for o in 0..self.concept_count {
            if self.is_active(o)? && !self.in_hierarchy(o)? {
                found.push(o);
            }
        }
        Ok(self.off_hierarchy.get_or_init(|| found))
    }

    fn concept_record(&self, ordinal: u32) -> Result<&ConceptRecord, StoreError> {
        self.check_concept(ordinal)?;
        let records: &[ConceptRecord] = self.recs(Concepts)?;
        records
            .get(ordinal as usize)
            .ok_or_else(|| StoreError::corrupt(Concepts, "fewer records than concepts"))
    }

    /// The concept records, viewed once for tests of many concepts' facts
    /// (ECL concept filters over big sets).
    pub fn concept_table(&self) -> Result<ConceptTable<'_>, StoreError> {
        let records: &[ConceptRecord] = self.recs(Concepts)?;
        let n = (self.concept_count as usize).min(records.len());
        Ok(ConceptTable {
            records: records.get(..n).unwrap_or_default(),
        })
    }

    /// [`concept_at`](Self::concept_at) without the SCTIDs: one record read.
    pub fn concept_facts(&self, ordinal: u32) -> Result<ConceptFacts, StoreError> {
        Ok(ConceptFacts::of(self.concept_record(ordinal)?))
    }

    /// The concepts a refset's active members reference, as sorted, unique
    /// ordinals (members referencing descriptions or relationships, or
    /// concepts the edition lacks, add nothing): a copy of the refset's
    /// `RefsetConcepts` slice (format 1.3), checked; in older files, one
    /// forward walk over the members and the concept ids, both sorted.
    pub fn member_concepts(&self, refset: u64) -> Result<Vec<u32>, StoreError> {
        let Some(i) = refset_index(&self.refsets, refset) else {
            return Ok(Vec::new());
        };
        // Format 1.3: the ordinals are stored, a slice to copy.
        if let Some(view) = self.refset_ordinals(i)? {
            let out = view.to_vec();
            // Strictly ascending, so the last is the largest.
            if !out.is_sorted_by(|a, b| a < b)
                || out.last().is_some_and(|&o| o >= self.concept_count)
            {
                return Err(StoreError::corrupt(
                    RefsetConcepts,
                    "ordinals not ascending or out of range",
                ));
            }
            return Ok(out);
        }
        let e = &self.refsets[i];
        let (_, records) = self.member_records(e, MemberList::Active)?;
        self.ordinals_of_sorted(records.iter().map(|m| m.component.get()))
    }

    /// The concepts among refset `refset`'s active members, viewed in
    /// place (format 1.3; `None` for older files): each once, ascending.
    /// A damaged file may hold ordinals out of range, which accessors
    /// report, or out of order; [`member_concepts`](Self::member_concepts)
    /// checks both.
    pub fn member_ordinals(&self, refset: u64) -> Result<Option<Ordinals<'_>>, StoreError> {
        match refset_index(&self.refsets, refset) {
            Some(i) => self.refset_ordinals(i),
            None if self.present(RefsetConceptsIndex) => Ok(Some(Ordinals::new(&[]))),
            None => Ok(None),
        }
    }

    /// `RefsetConcepts` of the `i`th refset.
    fn refset_ordinals(&self, i: usize) -> Result<Option<Ordinals<'_>>, StoreError> {
        if !self.present(RefsetConceptsIndex) {
            return Ok(None);
        }
        let offsets: &[U32] = self.recs(RefsetConceptsIndex)?;
        let items = self.raw(RefsetConcepts)?;
        let (Some(start), Some(end)) = (offsets.get(i), offsets.get(i + 1)) else {
            return Err(StoreError::corrupt(
                RefsetConceptsIndex,
                format!(
                    "{} offsets for {} refsets",
                    offsets.len(),
                    self.refsets.len()
                ),
            ));
        };
        let slice = items
            .get(start.get() as usize..end.get() as usize)
            .ok_or_else(|| {
                StoreError::corrupt(RefsetConceptsIndex, "offsets out of order or past the end")
            })?;
        let list = Ordinals::chunked(slice).ok_or_else(|| {
            StoreError::corrupt(RefsetConcepts, "not a chunked list of refset concepts")
        })?;
        Ok(Some(list))
    }

    /// The ordinals of the concepts among `sctids`, which come in ascending
    /// order (repeats allowed): sorted and unique, found by one galloping
    /// walk over `ConceptIdIndex` instead of a binary search each. Ids
    /// that are no concept of the edition are skipped. Out-of-order input
    /// costs more but gives the same answer.
    pub fn ordinals_of_sorted(
        &self,
        sctids: impl IntoIterator<Item = u64>,
    ) -> Result<Vec<u32>, StoreError> {
        let index: &[ConceptIdEntry] = self.recs(ConceptIdIndex)?;
        let mut out = Vec::new();
        let (mut at, mut previous) = (0usize, 0u64);
        for c in sctids {
            if c < previous {
                at = 0; // out of order: search from the start
            }
            previous = c;
            // Gallop from the last one: sorted ids are usually close together.
            let i = at + gallop(index.get(at..).unwrap_or_default(), |e| e.id.get() < c);
            if let Some(e) = index.get(i).filter(|e| e.id.get() == c) {
                out.push(self.ordinal_in(e)?);
            }
            at = i;
        }
        // Ordinals do not follow SCTIDs (format 7).
        Ok(sorted_unique(out, self.concept_count))
    }

    pub fn concept_at(&self, ordinal: u32) -> Result<Concept, StoreError> {
        self.concept_with_id(ordinal, self.id_at(ordinal, ConceptIds)?)
    }

    fn concept_with_id(&self, ordinal: u32, id: u64) -> Result<Concept, StoreError> {
        let r = self.concept_record(ordinal)?;
        Ok(Concept {
            id,
            ordinal,
            active: r.flags & concept_flags::ACTIVE != 0,
            defined: r.flags & concept_flags::DEFINED != 0,
            module: self.id_at(r.module.get(), Concepts)?,
            effective_time: r.effective_time.get(),
        })
    }

    // ----- descriptions -----------------------------------------------------

    /// Description `ordinal` of concept `concept`, from its record.
    pub(crate) fn make_description(
        &self,
        concept: u32,
        ordinal: u32,
        r: &DescriptionRecord,
    ) -> Result<Description<'_>, StoreError> {
        let mut d = self.description_facts_in(self.recs(ConceptIds)?, concept, ordinal, r)?;
        d.term = self.heap_str(TermHeap, r.term_offset.get(), usize::from(r.term_len.get()))?;
        Ok(d)
    }

    /// A description without its term (`term` is empty), the concept ids
    /// found already: what filters on everything but the term read, for
    /// many descriptions, without the terms' UTF-8 checks. Inlined: a
    /// `Result<Description>` returned through memory cost its callers a
    /// stalled reload of each field (store forwarding fails on the wide
    /// loads), which was most of a description filter's time.
    #[inline(always)]
    fn description_facts_in(
        &self,
        ids: &[U64],
        concept: u32,
        ordinal: u32,
        r: &DescriptionRecord,
    ) -> Result<Description<'_>, StoreError> {
        let id_at = |o: u32| id_in(ids, o, Descriptions);
        let k = self.description_kinds.of(r)?;
        // Checked on open: the kinds' languages are in the table.
        let language = self
            .languages
            .get(usize::from(k.language))
            .map_or("", |l| l);
        Ok(Description {
            id: r.id.get(),
            ordinal,
            concept: id_at(concept)?,
            active: k.flags & description_flags::ACTIVE != 0,
            module: id_at(k.module.get())?,
            effective_time: k.effective_time.get(),
            type_id: self.code(k.type_code, Descriptions)?,
            case_significance: self.code(k.case_code, Descriptions)?,
            language,
            term: "",
        })
    }

    /// A concept's descriptions and text definitions, active or not, in
    /// description-SCTID order.
    pub fn descriptions(&self, ordinal: u32) -> Result<Vec<Description<'_>>, StoreError> {
        let mut out = Vec::new();
        self.descriptions_into(ordinal, true, &mut out)?;
        Ok(out)
    }

    /// [`descriptions`](Self::descriptions) into `out` (cleared first), for
    /// callers that test many concepts' descriptions with one buffer (ECL
    /// description filters); without `terms`, every `term` is empty and
    /// the terms' UTF-8 checks are spared.
    pub fn descriptions_into<'e>(
        &'e self,
        ordinal: u32,
        terms: bool,
        out: &mut Vec<Description<'e>>,
    ) -> Result<(), StoreError> {
        out.clear();
        self.check_concept(ordinal)?;
        let (first, records) =
            self.csr::<DescriptionRecord>(ConceptDescriptionsIndex, Descriptions, ordinal)?;
        // Found once for all of them (a lookup per description showed).
        let ids: &[U64] = self.recs(ConceptIds)?;
        for (r, i) in records.iter().zip(first..) {
            let mut d = self.description_facts_in(ids, ordinal, desc_ordinal(i)?, r)?;
            if terms {
                let len = usize::from(r.term_len.get());
                d.term = self.heap_str(TermHeap, r.term_offset.get(), len)?;
            }
            out.push(d);
        }
        Ok(())
    }

    /// A concept's description records in place, in description-SCTID
    /// order: [`descriptions`](Self::descriptions) for callers that test a
    /// few fields of many (ECL description filters).
    pub fn description_rows(
        &self,
        ordinal: u32,
    ) -> Result<impl ExactSizeIterator<Item = DescriptionRow<'_>> + '_, StoreError> {
        self.check_concept(ordinal)?;
        let (first, records) =
            self.csr::<DescriptionRecord>(ConceptDescriptionsIndex, Descriptions, ordinal)?;
        // Description ordinals fit in u32: checked on open.
        let kinds = &self.description_kinds;
        Ok(records
            .iter()
            .enumerate()
            .map(move |(i, record)| DescriptionRow {
                ordinal: (first + i) as u32,
                record,
                kinds,
            }))
    }

    /// Concept `ordinal`'s description profile (format 6.1): its number,
    /// under 255, and its rows, the distinct (type, language,
    /// acceptability set) of the concept's active descriptions. `None`
    /// when the file has no profiles or does not number this concept's;
    /// the concept's descriptions then say the same.
    pub fn description_profile(
        &self,
        ordinal: u32,
    ) -> Result<Option<(u8, &[DescriptionProfileRecord])>, StoreError> {
        let profiles = &self.description_profiles;
        if profiles.index.is_empty() {
            return Ok(None);
        }
        self.check_concept(ordinal)?;
        let bytes: &[u8] = self.recs(ConceptDescriptionProfiles)?;
        // One byte a concept: checked on open.
        let p = bytes.get(ordinal as usize).copied().unwrap_or(NO_PROFILE);
        if p == NO_PROFILE {
            return Ok(None);
        }
        match profiles.row(usize::from(p)) {
            Some(rows) => Ok(Some((p, rows))),
            None => Err(StoreError::corrupt(
                ConceptDescriptionProfiles,
                format!("concept {ordinal}: profile {p} past the table"),
            )),
        }
    }

    /// The rows of acceptability set `set` (a description profile's), as
    /// [`acceptability_codes`](Self::acceptability_codes) gives a
    /// description's.
    pub fn acceptability_set(
        &self,
        set: u16,
    ) -> Result<impl ExactSizeIterator<Item = Result<(u8, u8), StoreError>> + '_, StoreError> {
        let rows = (self.acceptability_sets.row(usize::from(set))).ok_or_else(|| {
            StoreError::corrupt(AcceptabilitySets, format!("set {set} past the table"))
        })?;
        Ok(self.coded(rows))
    }

    /// Acceptability rows as (refset, acceptability) codes, each checked.
    fn coded<'r>(
        &self,
        rows: &'r [AcceptabilityRecord],
    ) -> impl ExactSizeIterator<Item = Result<(u8, u8), StoreError>> + 'r {
        let n = self.codes.len();
        rows.iter().map(move |r| {
            Ok((
                checked_code(r.refset_code, n, AcceptabilitySets)?,
                checked_code(r.acceptability_code, n, AcceptabilitySets)?,
            ))
        })
    }

    /// The concepts that one-byte codes stand for, by code (description
    /// types, acceptabilities, language refsets...): what
    /// [`DescriptionRow::type_code`] and
    /// [`acceptability_codes`](Self::acceptability_codes) index. `NO_CODE`
    /// stands for none.
    pub fn code_ids(&self) -> &[u64] {
        &self.codes
    }

    /// The language codes that [`DescriptionRow::language`] indexes.
    pub fn languages(&self) -> &[String] {
        &self.languages
    }

    /// The one-byte code standing for SCTID `id` in records, if any
    /// record can name it.
    pub(crate) fn code_of(&self, id: u64) -> Option<u8> {
        self.codes
            .iter()
            .position(|&c| c == id)
            .and_then(|i| u8::try_from(i).ok())
            .filter(|&c| c != NO_CODE)
    }

    /// The language refsets the descriptions have rows in, ascending: one
    /// pass over the acceptability rows (a few million on an
    /// International edition: milliseconds; callers keep the answer).
    pub fn language_refsets(&self) -> Result<Vec<u64>, StoreError> {
        let rows = &self.acceptability_sets.rows;
        let mut seen = [false; 256];
        for r in rows {
            seen[usize::from(r.refset_code)] = true;
        }
        let mut out = Vec::new();
        for (code, _) in seen.iter().enumerate().filter(|(_, s)| **s) {
            match self.code(code as u8, AcceptabilitySets)? {
                0 => {}
                id => out.push(id),
            }
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// A description's language refset rows as codes: (refset, acceptability),
    /// each an index into [`code_ids`](Self::code_ids).
    pub fn acceptability_codes(
        &self,
        desc_ordinal: u32,
    ) -> Result<impl ExactSizeIterator<Item = Result<(u8, u8), StoreError>> + '_, StoreError> {
        self.check_description(desc_ordinal)?;
        Ok(self.coded(self.acceptability_rows(desc_ordinal)?))
    }

    /// A description by its ordinal.
    pub fn description_at(&self, ordinal: u32) -> Result<Description<'_>, StoreError> {
        self.check_description(ordinal)?;
        let records: &[DescriptionRecord] = self.recs(Descriptions)?;
        let r = records
            .get(ordinal as usize)
            .ok_or_else(|| StoreError::corrupt(Descriptions, "fewer records than counted"))?;
        self.make_description(self.concept_of_description(ordinal)?, ordinal, r)
    }

    /// A description by its SCTID: a binary search of `DescriptionsById`,
    /// each probe reading the record it names (the one found is the
    /// answer's).
    pub fn description(&self, desc_sctid: u64) -> Result<Option<Description<'_>>, StoreError> {
        let by_id: &[U24] = self.recs(DescriptionsById)?;
        let records: &[DescriptionRecord] = self.recs(Descriptions)?;
        let (mut lo, mut hi) = (0, by_id.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let ordinal = by_id[mid].get();
            let r = records.get(ordinal as usize).ok_or_else(|| {
                StoreError::corrupt(
                    DescriptionsById,
                    format!("description ordinal {ordinal} out of range"),
                )
            })?;
            match r.id.get().cmp(&desc_sctid) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let concept = self.concept_of_description(ordinal)?;
                    return self.make_description(concept, ordinal, r).map(Some);
                }
            }
        }
        Ok(None)
    }

    /// A description's language refset rows, as codes: the rows of its
    /// acceptability set.
    fn acceptability_rows(&self, desc_ordinal: u32) -> Result<&[AcceptabilityRecord], StoreError> {
        let sets: &[U16] = self.recs(DescriptionAcceptability)?;
        let set = sets.get(desc_ordinal as usize).map_or(0, |s| s.get());
        (self.acceptability_sets.row(usize::from(set))).ok_or_else(|| {
            StoreError::corrupt(
                DescriptionAcceptability,
                format!(
                    "description {desc_ordinal}: set {set} of {}",
                    self.acceptability_sets.len()
                ),
            )
        })
    }

    /// A description's active language refset rows: (refset, acceptability)
    /// SCTIDs.
    pub fn acceptability(&self, desc_ordinal: u32) -> Result<Vec<(u64, u64)>, StoreError> {
        self.check_description(desc_ordinal)?;
        let rows = self.acceptability_rows(desc_ordinal)?;
        rows.iter()
            .map(|r| {
                Ok((
                    self.code(r.refset_code, AcceptabilitySets)?,
                    self.code(r.acceptability_code, AcceptabilitySets)?,
                ))
            })
            .collect()
    }

    /// [`acceptability`](Self::acceptability) into `out` (cleared first),
    /// for callers that read many descriptions' rows with one buffer.
    pub fn acceptability_into(
        &self,
        desc_ordinal: u32,
        out: &mut Vec<(u64, u64)>,
    ) -> Result<(), StoreError> {
        out.clear();
        self.check_description(desc_ordinal)?;
        let rows = self.acceptability_rows(desc_ordinal)?;
        for r in rows {
            out.push((
                self.code(r.refset_code, AcceptabilitySets)?,
                self.code(r.acceptability_code, AcceptabilitySets)?,
            ));
        }
        Ok(())
    }

    /// Whether a description is preferred in the language refset `refset`.
    fn preferred_in(&self, desc_ordinal: u32, refset: u64) -> Result<bool, StoreError> {
        let rows = self.acceptability_rows(desc_ordinal)?;
        for r in rows {
            if self.code(r.refset_code, AcceptabilitySets)? == refset
                && self.code(r.acceptability_code, AcceptabilitySets)? == sctid::PREFERRED
            {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A concept's preferred term in the edition's default language refset,
    /// from the compact preferred-term table.
    pub fn preferred_term(&self, ordinal: u32) -> Result<Option<&str>, StoreError> {
        self.check_concept(ordinal)?;
        let entries: &[PreferredTermEntry] = self.recs(PreferredTermIndex)?;
        let Some(e) = entries.get(ordinal as usize) else {
            return Err(StoreError::corrupt(
                PreferredTermIndex,
                format!("no entry {ordinal} among {}", entries.len()),
            ));
        };
        let term = self.heap_str(TermHeap, e.offset.get(), usize::from(e.len.get()))?;
        Ok(if term.is_empty() { None } else { Some(term) })
    }

    /// The active description of `type_id` preferred in the first of
    /// `language_refsets` that has one.
    fn preferred_of_type(
        &self,
        ordinal: u32,
        type_id: u64,
        language_refsets: &[u64],
    ) -> Result<Option<Description<'_>>, StoreError> {
        let candidates: Vec<Description<'_>> = self
            .descriptions(ordinal)?
            .into_iter()
            .filter(|d| d.active && d.type_id == type_id)
            .collect();
        for &refset in language_refsets {
            for d in &candidates {
                if self.preferred_in(d.ordinal, refset)? {
                    return Ok(Some(*d));
                }
            }
        }
        Ok(None)
    }

    /// The concept's preferred synonym in the first of `language_refsets`
    /// that has one.
    pub fn preferred_term_in(
        &self,
        ordinal: u32,
        language_refsets: &[u64],
    ) -> Result<Option<Description<'_>>, StoreError> {
        self.preferred_of_type(ordinal, sctid::SYNONYM, language_refsets)
    }

    /// The concept's FSN preferred in the first of `language_refsets` that
    /// has one, else its first active FSN.
    pub fn fsn(
        &self,
        ordinal: u32,
        language_refsets: &[u64],
    ) -> Result<Option<Description<'_>>, StoreError> {
        if let Some(d) = self.preferred_of_type(ordinal, sctid::FSN, language_refsets)? {
            return Ok(Some(d));
        }
        Ok(self
            .descriptions(ordinal)?
            .into_iter()
            .find(|d| d.active && d.type_id == sctid::FSN))
    }

    /// Whether a description is its concept's preferred synonym in the
    /// default language refset.
    pub fn is_preferred_term(&self, desc_ordinal: u32) -> Result<bool, StoreError> {
        self.is_preferred_description(&self.description_at(desc_ordinal)?)
    }

    pub(crate) fn is_preferred_description(&self, d: &Description<'_>) -> Result<bool, StoreError> {
        self.is_preferred_synonym(d.ordinal, d.active, d.type_id)
    }

    /// Whether a description (by ordinal, with its active flag and type) is
    /// an active synonym preferred in the default language refset.
    pub(crate) fn is_preferred_synonym(
        &self,
        desc_ordinal: u32,
        active: bool,
        type_id: u64,
    ) -> Result<bool, StoreError> {
        match self.default_language {
            Some(refset) if active && type_id == sctid::SYNONYM => {
                self.preferred_in(desc_ordinal, refset)
            }
            _ => Ok(false),
        }
    }

    // ----- hierarchy --------------------------------------------------------

    fn adjacency(
        &self,
        index: SectionKind,
        items: SectionKind,
    ) -> Result<Adjacency<'_>, StoreError> {
        Ok(Adjacency {
            index,
            concepts: self.concept_count,
            offsets: self.offsets(index)?,
            items: self.recs(items)?,
        })
    }

    /// Every concept's parents, with the sections found once: a walk up
    /// the hierarchy reads a list a concept without a section lookup each.
    pub fn parent_lists(&self) -> Result<Adjacency<'_>, StoreError> {
        self.adjacency(ParentsIndex, Parents)
    }

    fn ordinals(
        &self,
        index: SectionKind,
        items: SectionKind,
        ordinal: u32,
    ) -> Result<Ordinals<'_>, StoreError> {
        self.check_concept(ordinal)?;
        Ok(Ordinals::new(self.csr::<U32>(index, items, ordinal)?.1))
    }

    /// Active inferred is-a parents.
    pub fn parents(&self, ordinal: u32) -> Result<Ordinals<'_>, StoreError> {
        self.ordinals(ParentsIndex, Parents, ordinal)
    }

    pub fn children(&self, ordinal: u32) -> Result<Ordinals<'_>, StoreError> {
        self.ordinals(ChildrenIndex, Children, ordinal)
    }

    /// Proper ancestors (the transitive closure of parents), packed.
    pub fn ancestors(&self, ordinal: u32) -> Result<Ordinals<'_>, StoreError> {
        self.check_concept(ordinal)?;
        self.encoded(
            AncestorsIndex,
            Ancestors,
            ordinal,
            Ordinals::packed,
            "not a packed list: cut off, or a length that does not fit",
        )
    }

    /// Proper descendants, chunked.
    pub fn descendants(&self, ordinal: u32) -> Result<Ordinals<'_>, StoreError> {
        self.check_concept(ordinal)?;
        self.encoded(
            DescendantsIndex,
            Descendants,
            ordinal,
            Ordinals::chunked,
            "not a chunked list: an odd length, or short of its chunk headers",
        )
    }

    /// Entry `i` of a CSR index of byte offsets into a section of encoded
    /// lists, opened by `open`; `what` says what a list it refuses is.
    fn encoded<'s>(
        &'s self,
        index: SectionKind,
        items: SectionKind,
        i: u32,
        open: fn(&'s [u8]) -> Option<Ordinals<'s>>,
        what: &str,
    ) -> Result<Ordinals<'s>, StoreError> {
        let range = self.csr_range(index, i)?;
        let heap = self.raw(items)?;
        let bytes = heap.get(range.clone()).ok_or_else(|| {
            StoreError::corrupt(
                index,
                format!(
                    "entry {i} spans bytes {}..{} of {}",
                    range.start,
                    range.end,
                    heap.len()
                ),
            )
        })?;
        open(bytes).ok_or_else(|| StoreError::corrupt(items, format!("entry {i} is {what}")))
    }

    /// A bound on the number of `ordinal`'s proper descendants from the
    /// index alone, without reading the list: at least the count and at
    /// most four times it, and above every descendant's own bound (a list
    /// that holds another holds its chunks too). A set's members are
    /// ordered by it by the thousand, where opening each list to count it
    /// cost a cache miss a member.
    pub fn descendants_bound(&self, ordinal: u32) -> Result<usize, StoreError> {
        self.check_concept(ordinal)?;
        // A chunked list of `n` items in `k` chunks is `2 + 4k + 2n` bytes.
        Ok(self.csr_range(DescendantsIndex, ordinal)?.len() / 2)
    }

    /// Tells the prefetch hook (if any) that `list`, a closure or
    /// adjacency list of this edition, is about to be read whole and in
    /// order: a caller copying a concept's descendants calls it first.
    /// Accessors do not, since most reads of a list are its length or a
    /// search, which would make every call a system call.
    pub fn read_ahead(&self, list: &Ordinals<'_>) {
        self.ahead(list.as_bytes());
    }

    /// Whether `a` subsumes `b`: `a == b` or `a` is an ancestor of `b`.
    pub fn subsumes(&self, a: u32, b: u32) -> Result<bool, StoreError> {
        self.check_concept(a)?;
        Ok(a == b || self.ancestors(b)?.contains(a))
    }

    // ----- relationships ----------------------------------------------------

    fn relationships(
        &self,
        index: SectionKind,
        items: SectionKind,
        ordinal: u32,
    ) -> Result<Vec<Relationship>, StoreError> {
        self.check_concept(ordinal)?;
        let (_, rows) = self.csr::<RelationshipRecord>(index, items, ordinal)?;
        rows.iter()
            .map(|r| {
                let (type_ord, characteristic, group) = self.kind_of(r.kind.get(), items)?;
                Ok(Relationship {
                    type_id: self.id_at(type_ord, items)?,
                    target: self.id_at(r.target.get(), items)?,
                    type_ord,
                    target_ord: r.target.get(),
                    group,
                    characteristic_type: self.code(characteristic, items)?,
                })
            })
            .collect()
    }

    /// The type ordinal, characteristic code and group of kind `k` of a
    /// relationship or concrete value of section `origin`.
    fn kind_of(&self, k: u16, origin: SectionKind) -> Result<(u32, u8, u16), StoreError> {
        self.relationship_kinds
            .get(usize::from(k))
            .copied()
            .ok_or_else(|| {
                StoreError::corrupt(
                    origin,
                    format!(
                        "relationship kind {k} out of range ({} kinds)",
                        self.relationship_kinds.len()
                    ),
                )
            })
    }

    fn links(
        &self,
        index: SectionKind,
        items: SectionKind,
        ordinal: u32,
    ) -> Result<impl ExactSizeIterator<Item = Link> + '_, StoreError> {
        self.check_concept(ordinal)?;
        let (_, rows) = self.csr::<RelationshipRecord>(index, items, ordinal)?;
        let kinds = &self.relationship_kinds;
        Ok(rows.iter().map(|r| {
            let (type_ord, group) = type_and_group(kinds, r.kind);
            Link {
                type_ord,
                target_ord: r.target.get(),
                group,
            }
        }))
    }

    /// [`attributes`](Self::attributes) as stored, in ordinals, read in
    /// place: for callers that test many concepts (ECL refinements). A
    /// damaged file may give ordinals out of range, which
    /// [`sctid`](Self::sctid) and friends then report.
    pub fn attribute_links(
        &self,
        ordinal: u32,
    ) -> Result<impl ExactSizeIterator<Item = Link> + '_, StoreError> {
        self.links(AttributesIndex, Attributes, ordinal)
    }

    /// [`inbound`](Self::inbound) as stored, in ordinals (`target_ord` is
    /// the source).
    pub fn inbound_links(
        &self,
        ordinal: u32,
    ) -> Result<impl ExactSizeIterator<Item = Link> + '_, StoreError> {
        self.links(InboundIndex, Inbound, ordinal)
    }

    /// The concepts with an attribute relationship of type `type_ord` (as
    /// [`attributes`](Self::attributes) lists them), ascending, from the
    /// edition's type index; `None` when the file has no type index (before
    /// format 1.2): then the concepts must be tested one by one.
    pub fn attribute_type_sources(
        &self,
        type_ord: u32,
    ) -> Result<Option<Ordinals<'_>>, StoreError> {
        self.type_sources(AttributeTypesIndex, AttributeTypeSources, type_ord)
    }

    /// [`attribute_type_sources`](Self::attribute_type_sources) for the
    /// types of concrete values.
    pub fn concrete_type_sources(&self, type_ord: u32) -> Result<Option<Ordinals<'_>>, StoreError> {
        self.type_sources(ConcreteTypesIndex, ConcreteTypeSources, type_ord)
    }

    fn type_sources(
        &self,
        index: SectionKind,
        items: SectionKind,
        type_ord: u32,
    ) -> Result<Option<Ordinals<'_>>, StoreError> {
        if !self.present(index) {
            return Ok(None);
        }
        let entries: &[TypeSourcesEntry] = self.recs(index)?;
        let i = entries.partition_point(|e| e.type_ord.get() < type_ord);
        let sources: &[U32] = self.recs(items)?;
        match (entries.get(i), entries.get(i + 1)) {
            (Some(e), Some(next)) if e.type_ord.get() == type_ord => {
                let (start, end) = (e.start.get() as usize, next.start.get() as usize);
                sources
                    .get(start..end)
                    .map(|list| Some(Ordinals::new(list)))
                    .ok_or_else(|| {
                        StoreError::corrupt(
                            index,
                            format!(
                                "type {type_ord} spans {start}..{end} of {} sources",
                                sources.len()
                            ),
                        )
                    })
            }
            (Some(_), _) => Ok(Some(Ordinals::new(&[]))),
            (None, _) => Err(StoreError::corrupt(index, "no closing entry")),
        }
    }

    /// Active inferred (and additional) attribute relationships, is-a
    /// excluded, sorted by (group, type, target).
    pub fn attributes(&self, ordinal: u32) -> Result<Vec<Relationship>, StoreError> {
        self.relationships(AttributesIndex, Attributes, ordinal)
    }

    /// The attribute relationships pointing at the concept; `target` is
    /// their source. Empty if the edition has no inbound index.
    pub fn inbound(&self, ordinal: u32) -> Result<Vec<Relationship>, StoreError> {
        self.relationships(InboundIndex, Inbound, ordinal)
    }

    /// Active stated relationships, is-a included; empty if the release had
    /// none.
    pub fn stated(&self, ordinal: u32) -> Result<Vec<Relationship>, StoreError> {
        self.relationships(StatedIndex, Stated, ordinal)
    }

    /// Each concrete value of the concept by ordinals, its text read only
    /// when asked: [`concrete_values`](Self::concrete_values) for callers
    /// that test many concepts (ECL refinements), which mostly look at the
    /// type first.
    pub fn concrete_links(
        &self,
        ordinal: u32,
    ) -> Result<impl ExactSizeIterator<Item = ConcreteLink<'_>> + '_, StoreError> {
        self.check_concept(ordinal)?;
        let (_, rows) = self.csr::<ConcreteRecord>(ConcreteIndex, Concrete, ordinal)?;
        let heap = self.raw(ConcreteHeap)?;
        let kinds = &self.relationship_kinds;
        Ok(rows.iter().map(move |r| {
            let (type_ord, group) = type_and_group(kinds, r.kind);
            ConcreteLink {
                type_ord,
                group,
                heap,
                offset: r.value_offset.get(),
                len: u32::from(r.value_len.get()),
            }
        }))
    }

    pub fn concrete_values(&self, ordinal: u32) -> Result<Vec<ConcreteValue<'_>>, StoreError> {
        self.check_concept(ordinal)?;
        let (_, rows) = self.csr::<ConcreteRecord>(ConcreteIndex, Concrete, ordinal)?;
        rows.iter()
            .map(|r| {
                let (type_ord, characteristic, group) = self.kind_of(r.kind.get(), Concrete)?;
                Ok(ConcreteValue {
                    type_id: self.id_at(type_ord, Concrete)?,
                    type_ord,
                    group,
                    characteristic_type: self.code(characteristic, Concrete)?,
                    value: self.heap_str(
                        ConcreteHeap,
                        r.value_offset.get(),
                        r.value_len.get() as usize,
                    )?,
                })
            })
            .collect()
    }

    // ----- refsets ----------------------------------------------------------

    fn info<'s>(&'s self, e: &'s RefsetEntry) -> RefsetInfo<'s> {
        RefsetInfo {
            id: e.id,
            kind: e.kind,
            member_count: e.member_count,
            pattern: &e.pattern,
            columns: &e.columns,
        }
    }

    fn refset_entry(&self, id: u64) -> Option<&RefsetEntry> {
        self.refsets.get(refset_index(&self.refsets, id)?)
    }

    /// The refset whose member range holds member `index`.
    fn refset_of_member(&self, index: usize) -> Option<&RefsetEntry> {
        let i = self
            .refsets
            .partition_point(|e| e.first_member as usize <= index)
            .checked_sub(1)?;
        let e = self.refsets.get(i)?;
        (index < e.first_member as usize + e.member_count as usize).then_some(e)
    }

    /// The edition's refsets (language refsets excluded), by SCTID.
    pub fn refsets(&self) -> impl ExactSizeIterator<Item = RefsetInfo<'_>> {
        self.refsets.iter().map(|e| self.info(e))
    }

    pub fn refset(&self, id: u64) -> Option<RefsetInfo<'_>> {
        self.refset_entry(id).map(|e| self.info(e))
    }

    /// Member `index` of `list` (record `m`) of `refset`, with its module
    /// and effective time when the file keeps them.
    fn member_from(
        &self,
        refset: u64,
        list: MemberList,
        index: usize,
        m: &MemberRecord,
    ) -> Result<Member<'_>, StoreError> {
        let fields = self.heap_str(
            MemberFieldHeap,
            m.fields_offset.get(),
            m.fields_len.get() as usize,
        )?;
        self.member_view(list)?.member(refset, index, m, fields)
    }

    /// The sections a list's members are read from, found once.
    fn member_view(&self, list: MemberList) -> Result<MemberView<'_>, StoreError> {
        let (kind, active) = match list {
            MemberList::Active => (MemberMeta, true),
            MemberList::Inactive => (InactiveMemberMeta, false),
        };
        Ok(MemberView {
            kind,
            active,
            stamps: self.recs(kind)?,
            table: self.recs(MemberMetaTable)?,
            modules: self.recs(MemberModules)?,
            times: self.recs(MemberTimes)?,
        })
    }

    /// The members `records` (from the `start`th of `list`) of `refset`,
    /// one at a time: the sections found once, and the refset's fields
    /// (one run of `MemberFieldHeap`, as members are written in order)
    /// checked as UTF-8 once rather than member by member.
    fn members_of<'s>(
        &'s self,
        refset: u64,
        list: MemberList,
        start: usize,
        records: &'s [MemberRecord],
    ) -> Result<impl ExactSizeIterator<Item = Result<Member<'s>, StoreError>> + 's, StoreError>
    {
        let view = self.member_view(list)?;
        let heap = self.raw(MemberFieldHeap)?;
        let span = |m: &MemberRecord| {
            let s = m.fields_offset.get() as usize;
            (s, s.saturating_add(m.fields_len.get() as usize))
        };
        let (lo, hi) = records
            .iter()
            .map(span)
            .fold((usize::MAX, 0), |(lo, hi), (s, e)| (lo.min(s), hi.max(e)));
        let lo = lo.min(hi);
        let run = heap
            .get(lo..hi)
            .ok_or_else(|| StoreError::corrupt(MemberFieldHeap, "member fields past the end"))
            .and_then(|b| {
                std::str::from_utf8(b)
                    .map_err(|e| StoreError::corrupt(MemberFieldHeap, format!("at {lo}: {e}")))
            })?;
        Ok(records.iter().enumerate().map(move |(i, m)| {
            let (s, e) = span(m);
            let fields = run.get(s - lo..e - lo).ok_or_else(|| {
                StoreError::corrupt(
                    MemberFieldHeap,
                    format!("member fields {s}..{e} split a character"),
                )
            })?;
            view.member(refset, start + i, m, fields)
        }))
    }

    fn member_at(&self, index: usize) -> Result<Member<'_>, StoreError> {
        let records: &[MemberRecord] = self.recs(Members)?;
        let m = records.get(index).ok_or_else(|| {
            StoreError::corrupt(
                Members,
                format!("member {index} out of range ({})", records.len()),
            )
        })?;
        let refset = self
            .refset_of_member(index)
            .ok_or_else(|| {
                StoreError::corrupt(Members, format!("member {index} belongs to no refset"))
            })?
            .id;
        self.member_from(refset, MemberList::Active, index, m)
    }

    /// The member records of a refset.
    /// The member records of a refset's entry in `list`, with the index of
    /// the first.
    fn member_records(
        &self,
        e: &RefsetEntry,
        list: MemberList,
    ) -> Result<(usize, &[MemberRecord]), StoreError> {
        let (members, refsets) = match list {
            MemberList::Active => (Members, Refsets),
            MemberList::Inactive => (InactiveMembers, InactiveRefsets),
        };
        let records: &[MemberRecord] = self.recs(members)?;
        let start = e.first_member as usize;
        start
            .checked_add(e.member_count as usize)
            .and_then(|end| records.get(start..end))
            .map(|r| (start, r))
            .ok_or_else(|| StoreError::corrupt(refsets, "member range past the end"))
    }

    /// A refset's active members, by referenced component. Empty if the
    /// refset is not in the edition (see [`refset`](Self::refset)).
    pub fn members(&self, refset: u64) -> Result<Vec<Member<'_>>, StoreError> {
        self.members_page(refset, 0, usize::MAX)
    }

    /// [`members`](Self::members) one at a time, for callers that scan a
    /// whole refset (ECL member filters) and keep few.
    pub fn members_iter(
        &self,
        refset: u64,
    ) -> Result<impl ExactSizeIterator<Item = Result<Member<'_>, StoreError>> + '_, StoreError>
    {
        let (start, records) = match self.refset_entry(refset) {
            Some(e) => self.member_records(e, MemberList::Active)?,
            None => (0, &[][..]),
        };
        self.members_of(refset, MemberList::Active, start, records)
    }

    /// Whether the file keeps each member's module and effective time
    /// (format 1.3), which `Member::module` and `Member::effective_time`
    /// then give.
    pub fn has_member_meta(&self) -> bool {
        self.present(MemberMeta)
    }

    /// Whether the file keeps inactive refset members (format 1.3); before,
    /// [`inactive_members_iter`](Self::inactive_members_iter) is empty
    /// because they were dropped, not because there are none.
    pub fn has_inactive_members(&self) -> bool {
        self.present(InactiveMembers)
    }

    /// A refset's inactive members (the latest row of each member is
    /// inactive), by referenced component: what `{{ M active = 0 }}` reads.
    pub fn inactive_members_iter(
        &self,
        refset: u64,
    ) -> Result<impl ExactSizeIterator<Item = Result<Member<'_>, StoreError>> + '_, StoreError>
    {
        let entry =
            refset_index(&self.inactive_refsets, refset).and_then(|i| self.inactive_refsets.get(i));
        let (start, records) = match entry {
            Some(e) => self.member_records(e, MemberList::Inactive)?,
            None => (0, &[][..]),
        };
        self.members_of(refset, MemberList::Inactive, start, records)
    }

    /// Whether the file has the Identifier file's alternate identifiers
    /// (format 1.3; the section may be empty: the release had none).
    pub fn has_identifiers(&self) -> bool {
        self.present(Identifiers)
    }

    /// The identifier schemes that alternate identifiers use, ascending.
    pub fn identifier_schemes(&self) -> Result<Vec<u64>, StoreError> {
        let records: &[IdentifierRecord] = self.recs(Identifiers)?;
        let mut out: Vec<u64> = Vec::new();
        let mut i = 0;
        // Records are sorted by scheme: jump from one scheme to the next.
        while let Some(r) = records.get(i) {
            let scheme = r.scheme.get();
            out.push(scheme);
            i += records[i..].partition_point(|r| r.scheme.get() == scheme);
        }
        Ok(out)
    }

    /// The component that `text` identifies in `scheme`, if any: a binary
    /// search on (scheme, hash), then the texts of that run compared.
    pub fn by_identifier(&self, scheme: u64, text: &str) -> Result<Option<u64>, StoreError> {
        let records: &[IdentifierRecord] = self.recs(Identifiers)?;
        let key = (scheme, identifier_hash(text));
        let first = records.partition_point(|r| (r.scheme.get(), r.hash.get()) < key);
        for r in records.get(first..).unwrap_or_default() {
            if (r.scheme.get(), r.hash.get()) != key {
                break;
            }
            let found = self.heap_str(
                IdentifierHeap,
                r.text_offset.get(),
                r.text_len.get() as usize,
            )?;
            if found == text {
                return Ok(Some(r.component.get()));
            }
        }
        Ok(None)
    }

    /// The refsets with inactive members, by SCTID.
    pub fn inactive_refsets(&self) -> impl ExactSizeIterator<Item = RefsetInfo<'_>> {
        self.inactive_refsets.iter().map(|e| self.info(e))
    }

    /// At most `limit` members of a refset from the `skip`th.
    pub fn members_page(
        &self,
        refset: u64,
        skip: usize,
        limit: usize,
    ) -> Result<Vec<Member<'_>>, StoreError> {
        let Some(e) = self.refset_entry(refset) else {
            return Ok(Vec::new());
        };
        let (start, records) = self.member_records(e, MemberList::Active)?;
        let records = records.get(skip..).unwrap_or_default();
        let records = &records[..records.len().min(limit)];
        self.members_of(e.id, MemberList::Active, start + skip, records)?
            .collect()
    }

    /// Whether `component` is an active member of `refset`: binary search.
    pub fn is_member(&self, refset: u64, component: u64) -> Result<bool, StoreError> {
        let Some(e) = self.refset_entry(refset) else {
            return Ok(false);
        };
        let (_, records) = self.member_records(e, MemberList::Active)?;
        let i = records.partition_point(|m| m.component.get() < component);
        Ok(records
            .get(i)
            .is_some_and(|m| m.component.get() == component))
    }

    /// Every active refset membership of a component (concept, description
    /// or relationship), language refsets excluded.
    pub fn component_refsets(&self, component: u64) -> Result<Vec<Member<'_>>, StoreError> {
        let entries: &[ComponentMemberEntry] = self.recs(ComponentMembers)?;
        let first = entries.partition_point(|e| e.component.get() < component);
        let mut out = Vec::new();
        for e in entries.get(first..).unwrap_or_default() {
            if e.component.get() != component {
                break;
            }
            let m = self.member_at(e.member.get() as usize)?;
            if m.component != component {
                return Err(StoreError::corrupt(
                    ComponentMembers,
                    format!(
                        "entry for {component} points at member {} of {}",
                        e.member.get(),
                        m.component
                    ),
                ));
            }
            out.push(m);
        }
        Ok(out)
    }

    /// Whether the edition has the `AssociationTargets` index that
    /// [`associations_to`](Self::associations_to) reads. Files written
    /// before format 1.1 lack it; callers then scan the association refsets
    /// ([`members`](Self::members)).
    pub fn has_association_targets(&self) -> bool {
        self.present(AssociationTargets)
    }

    /// The entries of `entries` (`AssociationTargets`) that can target
    /// `target`: its block's, from `AssociationTargetBlocks` (format 6.1),
    /// or, without that section, all of them. The block's bounds are
    /// checked against the entries beside them (the one before targets an
    /// earlier block, the one after a later one), so a damaged index is an
    /// error, not a run missed.
    fn target_block<'e>(
        &self,
        entries: &'e [AssociationTargetEntry],
        target: u32,
    ) -> Result<&'e [AssociationTargetEntry], StoreError> {
        if !self.present(AssociationTargetBlocks) {
            return Ok(entries);
        }
        // No concept, no associations (callers may ask).
        if target >= self.concept_count {
            return Ok(&[]);
        }
        let index: &[U32] = self.recs(AssociationTargetBlocks)?;
        let b = (target / TARGET_BLOCK) as usize;
        let (lo, hi) = (b as u32 * TARGET_BLOCK, (b as u32 + 1) * TARGET_BLOCK);
        let range = index
            .get(b)
            .zip(index.get(b + 1))
            .map(|(s, e)| s.get() as usize..e.get() as usize);
        let fits = |r: &std::ops::Range<usize>| {
            r.start <= r.end
                && r.end <= entries.len()
                && (r.start == 0 || entries[r.start - 1].target.get() < lo)
                && entries.get(r.end).is_none_or(|e| e.target.get() >= hi)
        };
        match range.filter(fits) {
            Some(r) => Ok(&entries[r]),
            None => Err(StoreError::corrupt(
                AssociationTargetBlocks,
                format!("block {b} does not bound its targets' entries"),
            )),
        }
    }

    /// The historical associations whose target is concept `target` (an
    /// ordinal): for each, the association refset and the source component
    /// (an SCTID: usually an inactive concept, possibly a description).
    /// Ordered by member, hence by (refset, source). Two binary searches
    /// over the target's block of the index (its whole, in files before
    /// 6.1), then the matching entries read in place.
    ///
    /// Empty if the edition has no `AssociationTargets` section: check
    /// [`has_association_targets`](Self::has_association_targets) first.
    pub fn associations_to(
        &self,
        target: u32,
    ) -> Result<impl ExactSizeIterator<Item = AssociationSource> + '_, StoreError> {
        self.check_concept(target)?;
        let entries: &[AssociationTargetEntry] = self.recs(AssociationTargets)?;
        let members: &[MemberRecord] = self.recs(Members)?;
        let block = self.target_block(entries, target)?;
        let first = block.partition_point(|e| e.target.get() < target);
        let rest = block.get(first..).unwrap_or_default();
        let run = &rest[..rest.partition_point(|e| e.target.get() == target)];
        // Check the run up front, so the iterator has nothing to report.
        for e in run {
            let i = e.member.get() as usize;
            if members.get(i).is_none()
                || !self
                    .refset_of_member(i)
                    .is_some_and(|r| r.kind == RefsetKind::Association)
            {
                return Err(StoreError::corrupt(
                    AssociationTargets,
                    format!(
                        "entry for concept {target} points at member {i}, \
                         not a member of an association refset"
                    ),
                ));
            }
        }
        Ok(run.iter().map(move |e| {
            let i = e.member.get() as usize;
            AssociationSource {
                refset: self.refset_of_member(i).map_or(0, |r| r.id),
                source: members.get(i).map_or(0, |m| m.component.get()),
                source_ordinal: source_ordinal(e),
            }
        }))
    }

    /// The concepts that are sources of an association of `refsets` (ids;
    /// association refsets only count) whose target is in `targets`
    /// (ordinals, ascending), in (target, member) order, duplicates kept:
    /// what an ECL history supplement adds. Each entry's refset is known by
    /// its member index falling in one of the few chosen refsets' ranges,
    /// not searched for among every refset (that search and the per-entry
    /// refset lookups were half of `<< X {{ + HISTORY-MIN }}`); a big set
    /// is met by one pass over the index through a bitmap, a small one
    /// target by target in its block (`AssociationTargetBlocks`), or, in
    /// files before 6.1, by a merge of `targets` with the index that
    /// gallops over whichever side is behind: O(min(t, e) · log(max(t, e)
    /// / min(t, e))) for `t` targets and `e` entries. Unsorted `targets`
    /// give missed answers, never a panic. Empty if the edition has no
    /// `AssociationTargets` section: check
    /// [`has_association_targets`](Self::has_association_targets) first.
    pub fn association_sources(
        &self,
        targets: &[u32],
        refsets: &[u64],
    ) -> Result<Vec<u32>, StoreError> {
        let ranges: Vec<std::ops::Range<usize>> = refsets
            .iter()
            .filter_map(|&id| self.refset_entry(id))
            .filter(|e| e.kind == RefsetKind::Association)
            .map(|e| e.first_member as usize..e.first_member as usize + e.member_count as usize)
            .collect();
        let mut out = Vec::new();
        if ranges.is_empty() {
            return Ok(out);
        }
        let entries: &[AssociationTargetEntry] = self.recs(AssociationTargets)?;
        let members = self.recs::<MemberRecord>(Members)?.len();
        let mut take = |e: &AssociationTargetEntry| -> Result<(), StoreError> {
            let m = e.member.get() as usize;
            if m >= members {
                return Err(StoreError::corrupt(
                    AssociationTargets,
                    format!(
                        "entry for concept {} points at member {m}, past the members",
                        e.target.get()
                    ),
                ));
            }
            if ranges.iter().any(|r| r.contains(&m))
                && let Some(o) = source_ordinal(e)
            {
                out.push(o);
            }
            Ok(())
        };
        // A big set (a hierarchy's worth of targets): one pass over the
        // index testing each entry's target in a bitmap of the set — no
        // search at all. A small one: the galloping merge, a binary search
        // or so per target.
        if targets.len().saturating_mul(8) >= entries.len() {
            let n = self.concept_count as usize;
            let mut bits = vec![0u64; n.div_ceil(64)];
            for &t in targets {
                if let Some(w) = bits.get_mut(t as usize / 64) {
                    *w |= 1 << (t % 64);
                }
            }
            for e in entries {
                let t = e.target.get() as usize;
                if bits.get(t / 64).is_some_and(|w| w & (1 << (t % 64)) != 0) {
                    take(e)?;
                }
            }
            return Ok(out);
        }
        // A few targets and the block index: each target's run searched
        // in its block, a few dozen entries, read forward as the targets
        // ascend. (Written out as in `associations_to`: one helper for
        // both made this function's bitmap pass above half again slower
        // in the generated corpus's history categories, measured.)
        if self.present(AssociationTargetBlocks) {
            for &t in targets {
                let block = self.target_block(entries, t)?;
                let first = block.partition_point(|e| e.target.get() < t);
                for e in block.get(first..).unwrap_or_default() {
                    if e.target.get() != t {
                        break;
                    }
                    take(e)?;
                }
            }
            return Ok(out);
        }
        let (mut i, mut j) = (0usize, 0usize);
        while let (Some(e), Some(&want)) = (entries.get(i), targets.get(j)) {
            let t = e.target.get();
            if t < want {
                i += gallop(entries.get(i..).unwrap_or_default(), |e| {
                    e.target.get() < want
                });
            } else if t > want {
                j += gallop(targets.get(j..).unwrap_or_default(), |&x| x < t);
            } else {
                i += 1;
                take(e)?;
            }
        }
        Ok(out)
    }

    /// Historical associations from `concept` (a concept SCTID), from the
    /// association refsets.
    pub fn associations(&self, concept: u64) -> Result<Vec<Association>, StoreError> {
        let entries: &[ComponentMemberEntry] = self.recs(ComponentMembers)?;
        let members: &[MemberRecord] = self.recs(Members)?;
        let first = entries.partition_point(|e| e.component.get() < concept);
        let mut out = Vec::new();
        for e in entries.get(first..).unwrap_or_default() {
            if e.component.get() != concept {
                break;
            }
            if members.get(e.member.get() as usize).is_none() {
                return Err(StoreError::corrupt(
                    ComponentMembers,
                    format!("member {} out of range", e.member.get()),
                ));
            }
            let is_association = self
                .refset_of_member(e.member.get() as usize)
                .is_some_and(|r| r.kind == RefsetKind::Association);
            if !is_association {
                continue;
            }
            let m = self.member_at(e.member.get() as usize)?;
            let target = m
                .field(0)
                .and_then(|t| t.parse::<u64>().ok())
                .ok_or_else(|| {
                    StoreError::corrupt(
                        MemberFieldHeap,
                        format!("association target {:?} is not an SCTID", m.fields),
                    )
                })?;
            out.push(Association {
                refset: m.refset,
                target,
            });
        }
        Ok(out)
    }
}

/// The type ordinal and group of relationship (or concrete value) kind
/// `k`, read in place: a kind past the table (a damaged file) gives a type
/// ordinal out of range, which `sctid` and friends report, as a damaged
/// ordinal would.
#[inline]
fn type_and_group(kinds: &[(u32, u8, u16)], k: U16) -> (u32, u16) {
    kinds
        .get(usize::from(k.get()))
        .map_or((NO_ORDINAL, 0), |&(type_ord, _, group)| (type_ord, group))
}

/// The source's ordinal, unless it is no concept of the edition
/// (`U24::MAX`, format 6).
fn source_ordinal(e: &AssociationTargetEntry) -> Option<u32> {
    Some(e.source.get()).filter(|&o| o != U24::MAX)
}

/// `ordinals` (each below `count`) ascending, each once. A list of 1,024
/// or more, and at least one in 512 of the concepts, is put in order
/// through a bitmap of them (`count` bits, read back word by word),
/// in time linear in both, which is several times quicker than sorting
/// (15,000 ordinals of 535,000 concepts: 0.15 ms less); a shorter one is
/// sorted.
pub fn sorted_unique(mut ordinals: Vec<u32>, count: u32) -> Vec<u32> {
    if ordinals.len() < 1024 || ordinals.len() < count as usize / 512 {
        ordinals.sort_unstable();
        ordinals.dedup();
        return ordinals;
    }
    let mut words = vec![0u64; (count as usize).div_ceil(64)];
    for &o in &ordinals {
        if let Some(w) = words.get_mut(o as usize / 64) {
            *w |= 1 << (o % 64);
        }
    }
    ordinals.clear();
    for (i, &w) in words.iter().enumerate() {
        let mut w = w;
        while w != 0 {
            ordinals.push(i as u32 * 64 + w.trailing_zeros());
            w &= w - 1;
        }
    }
    ordinals
}

/// How many leading elements of `s` satisfy `below` (a prefix, as in
/// `partition_point`), found by exponential then binary search: O(log k)
/// for an answer `k`, however long `s` is.
pub(crate) fn gallop<T>(s: &[T], below: impl Fn(&T) -> bool) -> usize {
    let mut lo = 0; // s[..lo] are all below
    let mut step = 1usize;
    loop {
        let probe = lo + step - 1;
        match s.get(probe) {
            Some(x) if below(x) => {
                lo = probe + 1;
                step = step.saturating_mul(2);
            }
            _ => {
                let end = probe.min(s.len());
                return lo + s.get(lo..end).map_or(0, |w| w.partition_point(&below));
            }
        }
    }
}

fn desc_ordinal(i: usize) -> Result<u32, StoreError> {
    u32::try_from(i).map_err(|_| StoreError::corrupt(ConceptDescriptionsIndex, "ordinal overflow"))
}

fn expect_count(kind: SectionKind, actual: usize, expected: u32) -> Result<(), StoreError> {
    if actual as u64 == u64::from(expected) {
        Ok(())
    } else {
        Err(StoreError::corrupt(
            kind,
            format!("{actual} records, expected {expected}"),
        ))
    }
}

fn parse_identity(meta: &Metadata) -> Result<Identity, StoreError> {
    let get = |key: &'static str| {
        meta.get(key)
            .map(String::as_str)
            .ok_or(StoreError::MissingMetadata(key))
    };
    let bad = |key: &'static str, value: &str| StoreError::BadMetadata {
        key,
        value: value.to_owned(),
    };
    let sctid = |key: &'static str| {
        let v = get(key)?;
        match v.parse::<u64>() {
            Ok(id) if id > 0 && v.bytes().all(|b| b.is_ascii_digit()) => Ok(id),
            _ => Err(bad(key, v)),
        }
    };
    let time = get("effective_time")?;
    let effective_time = match time.parse::<u32>() {
        Ok(t) if time.len() == 8 && time.bytes().all(|b| b.is_ascii_digit()) => t,
        _ => return Err(bad("effective_time", time)),
    };
    let status = match get("status")? {
        "published" => Status::Published,
        "unpublished" => Status::Unpublished,
        other => return Err(bad("status", other)),
    };
    Ok(Identity {
        edition_uri: get("edition_uri")?.to_owned(),
        version_uri: get("version_uri")?.to_owned(),
        edition_module: sctid("edition_module")?,
        effective_time,
        status,
        default_language_refset: sctid("default_language_refset")?,
        txmap_version: get("txmap_version")?.to_owned(),
    })
}

/// The position of refset `id` in `refsets` (ascending by SCTID).
fn refset_index(refsets: &[RefsetEntry], id: u64) -> Option<usize> {
    refsets.binary_search_by(|e| e.id.cmp(&id)).ok()
}

/// The SCTID of concept `ordinal` in the `ConceptIds` records `ids`.
fn id_in(ids: &[U64], ordinal: u32, origin: SectionKind) -> Result<u64, StoreError> {
    ids.get(ordinal as usize).map(|id| id.get()).ok_or_else(|| {
        StoreError::corrupt(
            origin,
            format!("concept ordinal {ordinal} out of range ({})", ids.len()),
        )
    })
}

/// String `offset..offset + len` of `heap`, the bytes of section `kind`.
pub(crate) fn str_in(
    heap: &[u8],
    kind: SectionKind,
    offset: u32,
    len: usize,
) -> Result<&str, StoreError> {
    let start = offset as usize;
    let bytes = start
        .checked_add(len)
        .and_then(|end| heap.get(start..end))
        .ok_or_else(|| {
            StoreError::corrupt(
                kind,
                format!("string {start}+{len} past the end ({} bytes)", heap.len()),
            )
        })?;
    std::str::from_utf8(bytes)
        .map_err(|e| StoreError::corrupt(kind, format!("string at {start}: {e}")))
}

/// Every concept's parents, viewed in place ([`Edition::parent_lists`]).
#[derive(Clone, Copy, Debug)]
pub struct Adjacency<'a> {
    index: SectionKind,
    concepts: u32,
    offsets: Offsets<'a>,
    items: &'a [U32],
}

impl<'a> Adjacency<'a> {
    /// Concept `ordinal`'s list; an ordinal past the last concept, or an
    /// entry that does not lie in the items, is an error.
    #[inline]
    pub fn get(&self, ordinal: u32) -> Result<Ordinals<'a>, StoreError> {
        concept_in_range(ordinal, self.concepts)?;
        let range = self.offsets.range(self.index, ordinal)?;
        items_at(self.index, ordinal, range, self.items).map(Ordinals::new)
    }
}

/// `Ok` if `ordinal` is one of `count` concepts.
#[inline]
fn concept_in_range(ordinal: u32, count: u32) -> Result<(), StoreError> {
    if ordinal < count {
        Ok(())
    } else {
        Err(StoreError::OutOfRange {
            what: "concept",
            ordinal,
            count,
        })
    }
}

/// The items of CSR entry `i` of `index`, `range` of `items`: an entry
/// that does not lie in the items is an error.
#[inline]
fn items_at<T>(
    index: SectionKind,
    i: u32,
    range: Range<usize>,
    items: &[T],
) -> Result<&[T], StoreError> {
    match items.get(range.clone()) {
        Some(v) => Ok(v),
        None => Err(StoreError::corrupt(
            index,
            format!(
                "entry {i} spans {}..{} of {} items",
                range.start,
                range.end,
                items.len()
            ),
        )),
    }
}

/// A CSR index's offsets: three bytes each for the indexes of records,
/// four for the byte offsets into the closures' lists (see
/// [`SectionKind::is_narrow_index`]), read from the bytes as they lie.
#[derive(Clone, Copy, Debug)]
struct Offsets<'a> {
    bytes: &'a [u8],
    narrow: bool,
}

impl Offsets<'_> {
    #[inline]
    fn width(self) -> usize {
        if self.narrow { 3 } else { 4 }
    }

    fn len(self) -> usize {
        self.bytes.len() / self.width()
    }

    #[inline]
    fn get(self, i: usize) -> Option<u32> {
        let w = self.width();
        let at = i.checked_mul(w)?;
        self.bytes
            .get(at..at.checked_add(w)?)
            .map(|b| Self::read(b, self.narrow))
    }

    /// Entry `i` as a range of items (`0..0` for an absent optional
    /// index); `index` names the section in an error.
    #[inline]
    fn range(self, index: SectionKind, i: u32) -> Result<Range<usize>, StoreError> {
        if self.bytes.is_empty() {
            return Ok(0..0);
        }
        match self.pair(i as usize) {
            Some((s, e)) if s <= e => Ok(s as usize..e as usize),
            pair => Err(Self::bad_entry(index, i, pair, self.len())),
        }
    }

    /// Offsets `i` and `i + 1`.
    #[inline]
    fn pair(self, i: usize) -> Option<(u32, u32)> {
        let w = self.width();
        let at = i.checked_mul(w)?;
        let b = self.bytes.get(at..at.checked_add(2 * w)?)?;
        Some((
            Self::read(&b[..w], self.narrow),
            Self::read(&b[w..], self.narrow),
        ))
    }

    #[inline]
    fn read(b: &[u8], narrow: bool) -> u32 {
        match (narrow, b) {
            (true, &[x, y, z]) => u32::from_le_bytes([x, y, z, 0]),
            (false, &[x, y, z, w]) => u32::from_le_bytes([x, y, z, w]),
            _ => 0,
        }
    }

    #[cold]
    fn bad_entry(index: SectionKind, i: u32, pair: Option<(u32, u32)>, len: usize) -> StoreError {
        match pair {
            Some((s, e)) => {
                StoreError::corrupt(index, format!("entry {i} runs backwards ({s}..{e})"))
            }
            None => StoreError::corrupt(index, format!("no entry {i} among {len} offsets")),
        }
    }
}
