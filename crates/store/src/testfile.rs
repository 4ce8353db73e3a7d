//! A tiny, consistent edition built by hand for tests: a miniature importer
//! that derives every section (closures, indexes, heaps, word index) from a
//! few tables, which tests may edit before writing.

use std::collections::BTreeMap;

use txmap_format::schema::{
    AcceptabilityRecord, AssociationTargetEntry, ComponentMemberEntry, ConceptIdEntry,
    ConceptRecord, ConcreteRecord, DescriptionKindRecord, DescriptionProfileRecord,
    DescriptionRecord, MemberColumnsEntry, MemberMetaRecord, MemberRecord, MemberValueRecord,
    NO_CODE, PreferredTermEntry, RefsetKind, RefsetRecord, RelationshipKindRecord,
    RelationshipRecord, TARGET_BLOCK, TypeSourcesEntry, UNCODED, concept_flags, description_flags,
};
use txmap_format::{FileWriter, Metadata, SectionKind, U24};
use txmap_text::TermIndexBuilder;
use zerocopy::IntoBytes;
use zerocopy::little_endian::{U16, U32, U64};

use crate::sctid::*;

pub use txmap_format::ids::ROOT;
pub const FINDING: u64 = 404684003;
pub const DISEASE: u64 = 64572001;
pub const MI: u64 = 22298006;
pub const ARRHYTHMIA: u64 = 698247007;
pub const BODY: u64 = 123037004;
pub const HEART: u64 = 80891009;
pub const FINDING_SITE: u64 = 363698007;
pub const COUNT: u64 = 1142139005;
pub const CORE: u64 = 900000000000207008;
pub const US: u64 = 900000000000509007;
pub const GB: u64 = 900000000000508004;
pub const LATERALIZABLE: u64 = 723264001;
pub const SAME_AS: u64 = 900000000000527005;
pub const INACTIVATION: u64 = 900000000000489007;
pub const ICD10: u64 = 447562003;
/// An inactive concept, SAME AS [`MI`].
pub const OLD_MI: u64 = 1234000;

pub const CASE_INSENSITIVE: u64 = 900000000000448009;
pub const CASE_SENSITIVE: u64 = 900000000000017005;

pub const MI_PT: u64 = 37436014;
pub const MI_FSN: u64 = 751689013;
pub const MI_CARDIAC: u64 = 37442013;
pub const MI_ATTACK: u64 = 37443015;
pub const MI_FRENCH: u64 = 1000001011;
pub const MI_DEFINITION: u64 = 1000002010;
pub const MI_INACTIVE: u64 = 1000003019;

pub struct TestConcept {
    pub id: u64,
    pub active: bool,
    pub defined: bool,
    pub parents: Vec<u64>,
}

pub struct TestDescription {
    pub id: u64,
    pub concept: u64,
    pub active: bool,
    pub type_id: u64,
    pub language: &'static str,
    pub term: &'static str,
    /// (language refset, acceptability)
    pub acceptability: Vec<(u64, u64)>,
}

pub struct TestRelationship {
    pub source: u64,
    pub type_id: u64,
    pub target: u64,
    pub group: u16,
    pub characteristic: u64,
}

pub struct TestConcrete {
    pub source: u64,
    pub type_id: u64,
    pub group: u16,
    pub value: &'static str,
}

pub struct TestRefset {
    pub id: u64,
    pub kind: RefsetKind,
    pub pattern: &'static str,
    pub extra_columns: Vec<&'static str>,
    /// (referenced component, tab-joined fields)
    pub members: Vec<(u64, &'static str)>,
}

pub struct TestEdition {
    pub concepts: Vec<TestConcept>,
    pub descriptions: Vec<TestDescription>,
    pub attributes: Vec<TestRelationship>,
    pub concrete: Vec<TestConcrete>,
    pub refsets: Vec<TestRefset>,
    pub codes: Vec<u64>,
    pub metadata: Metadata,
    pub with_stated: bool,
    pub with_inbound: bool,
    pub with_concrete: bool,
    /// Write `AssociationTargets` (files before format 1.1 lack it).
    pub with_association_targets: bool,
    /// Write `AssociationTargetBlocks` (files before format 6.1 lack it).
    pub with_target_blocks: bool,
    /// Write the type indexes (files before format 1.2 lack them).
    pub with_type_indexes: bool,
    /// Write `WordFirstWords` and `DescriptionSearch` (files before format
    /// 1.5 lack them).
    pub search_sections: bool,
    /// Set `IN_HIERARCHY` in concept records (files before format 1.6
    /// lack it).
    pub hierarchy_flags: bool,
    /// Write the members' modules and effective times (`MemberMeta` and
    /// its tables: every member in `CORE` at 20240101).
    pub with_member_meta: bool,
    /// Write the description profiles (files before format 6.1 lack
    /// them).
    pub with_profiles: bool,
}

fn concept(id: u64, parents: &[u64]) -> TestConcept {
    TestConcept {
        id,
        active: true,
        defined: false,
        parents: parents.to_vec(),
    }
}

pub(crate) fn desc(
    id: u64,
    concept: u64,
    type_id: u64,
    term: &'static str,
    acceptability: &[(u64, u64)],
) -> TestDescription {
    TestDescription {
        id,
        concept,
        active: true,
        type_id,
        language: "en",
        term,
        acceptability: acceptability.to_vec(),
    }
}

impl TestEdition {
    pub fn tiny() -> TestEdition {
        let mut concepts = vec![
            concept(ROOT, &[]),
            concept(FINDING, &[ROOT]),
            concept(DISEASE, &[FINDING]),
            TestConcept {
                defined: true,
                ..concept(MI, &[DISEASE])
            },
            concept(ARRHYTHMIA, &[DISEASE]),
            concept(BODY, &[ROOT]),
            concept(HEART, &[BODY]),
            concept(FINDING_SITE, &[ROOT]),
            concept(IS_A, &[ROOT]),
            concept(COUNT, &[ROOT]),
            concept(CORE, &[ROOT]),
            concept(US, &[ROOT]),
            concept(GB, &[ROOT]),
            concept(LATERALIZABLE, &[ROOT]),
            concept(SAME_AS, &[ROOT]),
            concept(INACTIVATION, &[ROOT]),
            concept(ICD10, &[ROOT]),
            TestConcept {
                active: false,
                ..concept(OLD_MI, &[])
            },
        ];
        concepts.sort_by_key(|c| c.id);

        let both_pref = [(US, PREFERRED), (GB, PREFERRED)];
        let mut descriptions = Vec::new();
        let mut next_id = 2000000010u64;
        let mut pt_fsn = |concept: u64, pt: &'static str, fsn: &'static str| {
            let (a, b) = (next_id, next_id + 1000);
            next_id += 2000;
            [
                desc(a, concept, SYNONYM, pt, &both_pref),
                desc(b, concept, FSN, fsn, &both_pref),
            ]
        };
        for (c, pt, fsn) in [
            (
                ROOT,
                "SNOMED CT Concept",
                "SNOMED CT Concept (SNOMED RT+CTV3)",
            ),
            (FINDING, "Clinical finding", "Clinical finding (finding)"),
            (DISEASE, "Disease", "Disease (disorder)"),
            (
                ARRHYTHMIA,
                "Cardiac arrhythmia",
                "Cardiac arrhythmia (disorder)",
            ),
            (BODY, "Body structure", "Body structure (body structure)"),
            (HEART, "Heart structure", "Heart structure (body structure)"),
            (FINDING_SITE, "Finding site", "Finding site (attribute)"),
            (IS_A, "Is a", "Is a (attribute)"),
            (
                COUNT,
                "Count of base of active ingredient",
                "Count of base (attribute)",
            ),
            (
                CORE,
                "SNOMED CT core module",
                "SNOMED CT core module (core metadata concept)",
            ),
            (
                US,
                "US English",
                "US English language reference set (foundation metadata concept)",
            ),
            (
                GB,
                "GB English",
                "GB English language reference set (foundation metadata concept)",
            ),
            (
                LATERALIZABLE,
                "Lateralizable body structure reference set",
                "Lateralizable body structure reference set (foundation metadata concept)",
            ),
            (
                SAME_AS,
                "SAME AS association reference set",
                "SAME AS association reference set (foundation metadata concept)",
            ),
            (
                INACTIVATION,
                "Concept inactivation indicator reference set",
                "Concept inactivation indicator attribute value reference set (foundation metadata concept)",
            ),
            (
                ICD10,
                "ICD-10 complex map reference set",
                "ICD-10 complex map reference set (foundation metadata concept)",
            ),
        ] {
            descriptions.extend(pt_fsn(c, pt, fsn));
        }
        descriptions.extend([
            desc(
                MI_PT,
                MI,
                SYNONYM,
                "Myocardial infarction",
                &[(US, PREFERRED), (GB, ACCEPTABLE)],
            ),
            desc(
                MI_FSN,
                MI,
                FSN,
                "Myocardial infarction (disorder)",
                &both_pref,
            ),
            desc(
                MI_CARDIAC,
                MI,
                SYNONYM,
                "Cardiac infarction",
                &[(US, ACCEPTABLE), (GB, PREFERRED)],
            ),
            desc(
                MI_ATTACK,
                MI,
                SYNONYM,
                "Heart attack",
                &[(US, ACCEPTABLE), (GB, ACCEPTABLE)],
            ),
            TestDescription {
                language: "fr",
                ..desc(MI_FRENCH, MI, SYNONYM, "Infarctus du myocarde", &[])
            },
            desc(
                MI_DEFINITION,
                MI,
                DEFINITION,
                "Necrosis of the heart muscle caused by an interruption of the blood supply",
                &[(US, PREFERRED)],
            ),
            TestDescription {
                active: false,
                ..desc(MI_INACTIVE, MI, SYNONYM, "Myocardial infarct", &[])
            },
            desc(
                1000004015,
                OLD_MI,
                FSN,
                "Heart attack concept (disorder)",
                &both_pref,
            ),
            desc(
                1000005016,
                OLD_MI,
                SYNONYM,
                "Heart attack concept",
                &both_pref,
            ),
        ]);

        let attributes = vec![TestRelationship {
            source: MI,
            type_id: FINDING_SITE,
            target: HEART,
            group: 1,
            characteristic: INFERRED,
        }];
        let concrete = vec![TestConcrete {
            source: HEART,
            type_id: COUNT,
            group: 0,
            value: "#4",
        }];
        let refsets = vec![
            TestRefset {
                id: LATERALIZABLE,
                kind: RefsetKind::Simple,
                pattern: "",
                extra_columns: vec![],
                members: vec![(HEART, ""), (BODY, "")],
            },
            TestRefset {
                id: SAME_AS,
                kind: RefsetKind::Association,
                pattern: "c",
                extra_columns: vec!["targetComponentId"],
                members: vec![(OLD_MI, "22298006")],
            },
            TestRefset {
                id: INACTIVATION,
                kind: RefsetKind::AttributeValue,
                pattern: "c",
                extra_columns: vec!["valueId"],
                members: vec![(OLD_MI, "900000000000482003")],
            },
            TestRefset {
                id: ICD10,
                kind: RefsetKind::ComplexMap,
                pattern: "iissscc",
                extra_columns: vec![
                    "mapGroup",
                    "mapPriority",
                    "mapRule",
                    "mapAdvice",
                    "mapTarget",
                    "correlationId",
                    "mapCategoryId",
                ],
                members: vec![(MI, "1\t1\tTRUE\tALWAYS I21.9\tI21.9\t447561005\t447637006")],
            },
        ];
        let mut metadata = Metadata::new();
        for (k, v) in [
            ("edition_uri", "http://snomed.info/sct/900000000000207008"),
            (
                "version_uri",
                "http://snomed.info/sct/900000000000207008/version/20240101",
            ),
            ("edition_module", "900000000000207008"),
            ("effective_time", "20240101"),
            ("status", "published"),
            ("default_language_refset", "900000000000509007"),
            ("txmap_version", "0.1.0"),
        ] {
            metadata.insert(k.into(), v.into());
        }
        TestEdition {
            concepts,
            descriptions,
            attributes,
            concrete,
            refsets,
            codes: vec![
                FSN,
                SYNONYM,
                DEFINITION,
                PREFERRED,
                ACCEPTABLE,
                INFERRED,
                ADDITIONAL,
                STATED,
                CASE_INSENSITIVE,
                CASE_SENSITIVE,
                US,
                GB,
            ],
            metadata,
            with_stated: true,
            with_inbound: true,
            with_concrete: true,
            with_association_targets: true,
            with_target_blocks: true,
            with_type_indexes: true,
            search_sections: true,
            hierarchy_flags: true,
            with_member_meta: false,
            with_profiles: true,
        }
    }

    /// Writes the edition file and returns its bytes.
    pub fn write(&self) -> Vec<u8> {
        let sections = self.sections();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tiny.txmap");
        let mut w = FileWriter::create(&path).unwrap();
        for (kind, bytes, count) in &sections {
            w.add_section(*kind, bytes, *count).unwrap();
        }
        w.finish(&self.metadata).unwrap();
        std::fs::read(&path).unwrap()
    }

    fn code(&self, sctid: u64) -> u8 {
        match self.codes.iter().position(|&c| c == sctid) {
            Some(i) => i as u8,
            None => NO_CODE,
        }
    }

    /// Every section: (kind, bytes, count).
    pub fn sections(&self) -> Vec<(SectionKind, Vec<u8>, u64)> {
        use SectionKind::*;
        assert!(self.concepts.windows(2).all(|w| w[0].id < w[1].id));
        // Numbered in reverse SCTID order: readers must find ordinals
        // through `ConceptIdIndex` and never take them to follow SCTIDs
        // (format 7 numbers concepts depth-first).
        let concepts: Vec<&TestConcept> = self.concepts.iter().rev().collect();
        let ids: Vec<u64> = concepts.iter().map(|c| c.id).collect();
        let ord: BTreeMap<u64, u32> = ids
            .iter()
            .enumerate()
            .map(|(i, &id)| (id, i as u32))
            .collect();
        let o = |id: u64| ord[&id];
        let n = ids.len();
        let mut out: Vec<(SectionKind, Vec<u8>, u64)> = Vec::new();
        // CSR indexes are built as `U32`s; the narrow ones are stored in
        // three bytes an offset, as the importer's `put_index` does.
        let mut add = |kind: SectionKind, bytes: Vec<u8>, count: usize| {
            let bytes = if kind.is_narrow_index() {
                (bytes.chunks_exact(4))
                    .map(|o| u32::from_le_bytes(o.try_into().unwrap()))
                    .flat_map(|o| U24::new(o).expect("small test data").as_bytes().to_vec())
                    .collect()
            } else {
                bytes
            };
            out.push((kind, bytes, count as u64))
        };

        let id_recs: Vec<U64> = ids.iter().map(|&i| U64::new(i)).collect();
        add(ConceptIds, id_recs.as_bytes().to_vec(), n);
        let index: Vec<ConceptIdEntry> = (ord.iter())
            .map(|(&id, &o)| ConceptIdEntry {
                id: U64::new(id),
                ordinal: U24::new(o).expect("small test data"),
            })
            .collect();
        add(ConceptIdIndex, index.as_bytes().to_vec(), n);

        // Hierarchy.
        let mut parents: Vec<Vec<u32>> = (concepts.iter())
            .map(|c| c.parents.iter().map(|&p| o(p)).collect())
            .collect();
        parents.iter_mut().for_each(|p| p.sort_unstable());
        let mut children = vec![Vec::new(); n];
        for (c, ps) in parents.iter().enumerate() {
            for &p in ps {
                children[p as usize].push(c as u32);
            }
        }
        let mut ancestors: Vec<Vec<u32>> = Vec::with_capacity(n);
        for c in 0..n {
            let mut seen = std::collections::BTreeSet::new();
            let mut stack = parents[c].clone();
            while let Some(p) = stack.pop() {
                if seen.insert(p) {
                    stack.extend(&parents[p as usize]);
                }
            }
            ancestors.push(seen.into_iter().collect());
        }
        let mut descendants = vec![Vec::new(); n];
        for (c, anc) in ancestors.iter().enumerate() {
            for &a in anc {
                descendants[a as usize].push(c as u32);
            }
        }
        let in_hierarchy = |c: usize| {
            self.hierarchy_flags
                && ord
                    .get(&ROOT)
                    .is_some_and(|&r| c == r as usize || ancestors[c].contains(&r))
        };
        let concept_recs: Vec<ConceptRecord> = (concepts.iter())
            .enumerate()
            .map(|(i, c)| ConceptRecord {
                effective_time: U32::new(20240101),
                module: U24::new(o(CORE)).unwrap(),
                flags: (if c.active { concept_flags::ACTIVE } else { 0 })
                    | (if c.defined { concept_flags::DEFINED } else { 0 })
                    | (if in_hierarchy(i) {
                        concept_flags::IN_HIERARCHY
                    } else {
                        0
                    }),
            })
            .collect();
        add(Concepts, concept_recs.as_bytes().to_vec(), n);
        for (index, items, lists) in [
            (ParentsIndex, Parents, &parents),
            (ChildrenIndex, Children, &children),
        ] {
            let (idx, flat) = csr(lists
                .iter()
                .map(|l| l.iter().map(|&x| U32::new(x)).collect()));
            add(index, idx.as_bytes().to_vec(), n + 1);
            add(items, flat.as_bytes().to_vec(), flat.len());
        }
        // Ancestors packed (format 4), descendants chunked (format 5):
        // the indexes hold byte offsets.
        type Encode = fn(&[u32], &mut Vec<u8>) -> Result<(), txmap_format::packed::NotAscending>;
        let encoded: [(_, _, _, Encode); 2] = [
            (
                AncestorsIndex,
                Ancestors,
                &ancestors,
                txmap_format::packed::pack,
            ),
            (
                DescendantsIndex,
                Descendants,
                &descendants,
                txmap_format::chunked::chunk,
            ),
        ];
        for (index, items, lists, encode) in encoded {
            let (idx, bytes) = csr(lists.iter().map(|l| {
                let mut bytes = Vec::new();
                encode(l, &mut bytes).expect("ascending lists");
                bytes
            }));
            add(index, idx.as_bytes().to_vec(), n + 1);
            add(items, bytes.clone(), bytes.len());
        }

        // Descriptions.
        let mut languages: Vec<&str> = Vec::new();
        let mut descs: Vec<&TestDescription> = self.descriptions.iter().collect();
        descs.sort_by_key(|d| (o(d.concept), d.id));
        let mut term_heap = Vec::new();
        let mut desc_recs = Vec::new();
        let mut per_concept: Vec<Vec<DescriptionRecord>> = vec![Vec::new(); n];
        let mut kinds: Vec<DescriptionKindRecord> = Vec::new();
        let mut accept: Vec<Vec<AcceptabilityRecord>> = Vec::new();
        let mut words = TermIndexBuilder::new();
        let mut search: Vec<U16> = Vec::new();
        let mut pt: Vec<&str> = vec![""; n];
        let mut desc_languages = Vec::new();
        for (i, d) in descs.iter().enumerate() {
            let language = match languages.iter().position(|&l| l == d.language) {
                Some(i) => i,
                None => {
                    languages.push(d.language);
                    languages.len() - 1
                }
            };
            desc_languages.push(language as u8);
            let kind = DescriptionKindRecord {
                module: U32::new(o(CORE)),
                effective_time: U32::new(20240101),
                type_code: self.code(d.type_id),
                case_code: self.code(CASE_INSENSITIVE),
                language: language as u8,
                flags: if d.active {
                    description_flags::ACTIVE
                } else {
                    0
                },
            };
            let number = match kinds.iter().position(|k| *k == kind) {
                Some(i) => i,
                None => {
                    kinds.push(kind);
                    kinds.len() - 1
                }
            };
            let r = DescriptionRecord {
                id: U64::new(d.id),
                term_offset: U32::new(term_heap.len() as u32),
                term_len: U16::new(d.term.len() as u16),
                kind: U16::new(number as u16),
            };
            term_heap.extend_from_slice(d.term.as_bytes());
            desc_recs.push(r);
            per_concept[o(d.concept) as usize].push(r);
            let mut rows: Vec<AcceptabilityRecord> = d
                .acceptability
                .iter()
                .map(|&(refset, a)| AcceptabilityRecord {
                    refset_code: self.code(refset),
                    acceptability_code: self.code(a),
                })
                .collect();
            rows.sort_by_key(|r| r.refset_code);
            accept.push(rows);
            words.add(i as u32, d.term);
            let default_lang: u64 = self
                .metadata
                .get("default_language_refset")
                .and_then(|v| v.parse().ok())
                .unwrap_or(US);
            let concept_active = self.concepts.iter().any(|c| c.id == d.concept && c.active);
            search.push(U16::new(search_entry(d, concept_active, default_lang)));
            if d.active
                && d.type_id == SYNONYM
                && d.acceptability.contains(&(default_lang, PREFERRED))
            {
                pt[o(d.concept) as usize] = d.term;
            }
        }
        // The term heap starts with the preferred terms' carriers in
        // concept order (PreferredTermIndex points there): a fully
        // specified name that starts with the preferred term, else the
        // preferred term. The descriptions' own terms follow. The importer
        // stores each term once; a reader cannot tell.
        let mut pt_index = Vec::new();
        let mut pt_heap = Vec::new();
        for (c, t) in pt.iter().enumerate() {
            let carrier = descs
                .iter()
                .find(|d| {
                    o(d.concept) as usize == c
                        && d.type_id == FSN
                        && d.term.len() > t.len()
                        && d.term.starts_with(t)
                })
                .map_or(*t, |d| d.term);
            pt_index.push(PreferredTermEntry {
                offset: U32::new(pt_heap.len() as u32),
                len: U16::new(t.len() as u16),
            });
            pt_heap.extend_from_slice(carrier.as_bytes());
        }
        pt_index.push(PreferredTermEntry {
            offset: U32::new(pt_heap.len() as u32),
            len: U16::new(0),
        });
        for r in &mut desc_recs {
            r.term_offset = U32::new(r.term_offset.get() + pt_heap.len() as u32);
        }
        let term_heap: Vec<u8> = pt_heap.iter().chain(&term_heap).copied().collect();
        let d = desc_recs.len();
        add(Descriptions, desc_recs.as_bytes().to_vec(), d);
        if self.search_sections {
            add(DescriptionSearch, search.as_bytes().to_vec(), d);
        }
        let (idx, _) = csr(per_concept.into_iter());
        add(ConceptDescriptionsIndex, idx.as_bytes().to_vec(), n + 1);
        let mut by_id: Vec<u32> = (0..d as u32).collect();
        by_id.sort_by_key(|&o| descs[o as usize].id);
        let by_id: Vec<U24> = by_id.into_iter().map(|o| U24::new(o).unwrap()).collect();
        add(DescriptionsById, by_id.as_bytes().to_vec(), d);
        add(TermHeap, term_heap.clone(), term_heap.len());
        add(DescriptionKinds, kinds.as_bytes().to_vec(), kinds.len());
        // Each description's rows as the number of a distinct set.
        let mut sets: Vec<Vec<AcceptabilityRecord>> = Vec::new();
        let mut set_of = Vec::new();
        for rows in accept {
            let number = match sets.iter().position(|s| *s == rows) {
                Some(i) => i,
                None => {
                    sets.push(rows);
                    sets.len() - 1
                }
            };
            set_of.push(U16::new(number as u16));
        }
        add(DescriptionAcceptability, set_of.as_bytes().to_vec(), d);
        let count = sets.len();
        let (idx, flat) = csr(sets.into_iter());
        add(AcceptabilitySetsIndex, idx.as_bytes().to_vec(), count + 1);
        add(AcceptabilitySets, flat.as_bytes().to_vec(), flat.len());
        if self.with_profiles {
            // Each concept's distinct (type, language, set) of its active
            // descriptions, numbered as first seen.
            let mut per: Vec<Vec<DescriptionProfileRecord>> = vec![Vec::new(); n];
            for (i, d) in descs.iter().enumerate().filter(|(_, d)| d.active) {
                per[o(d.concept) as usize].push(DescriptionProfileRecord {
                    type_code: self.code(d.type_id),
                    language: desc_languages[i],
                    acceptability_set: set_of[i],
                });
            }
            let mut profiles: Vec<Vec<DescriptionProfileRecord>> = Vec::new();
            let mut bytes = Vec::new();
            for mut p in per {
                p.sort_unstable();
                p.dedup();
                let number = match profiles.iter().position(|x| *x == p) {
                    Some(i) => i,
                    None => {
                        profiles.push(p);
                        profiles.len() - 1
                    }
                };
                bytes.push(u8::try_from(number).expect("few profiles"));
            }
            let count = profiles.len();
            let (idx, flat) = csr(profiles.into_iter());
            add(DescriptionProfilesIndex, idx.as_bytes().to_vec(), count + 1);
            add(DescriptionProfiles, flat.as_bytes().to_vec(), flat.len());
            add(ConceptDescriptionProfiles, bytes, n);
        }
        add(PreferredTermIndex, pt_index.as_bytes().to_vec(), n + 1);

        // Relationships, their (type, characteristic, group) in a table.
        let kind = |type_id: u64, ch: u64, group: u16| (o(type_id), self.code(ch), group);
        let mut kinds: Vec<(u32, u8, u16)> = (self.attributes.iter())
            .flat_map(|r| {
                [
                    kind(r.type_id, r.characteristic, r.group),
                    kind(r.type_id, STATED, r.group),
                ]
            })
            .chain(
                (self.concepts.iter().any(|c| !c.parents.is_empty()))
                    .then(|| kind(IS_A, STATED, 0)),
            )
            // Concrete values number theirs in the same table.
            .chain((self.concrete.iter()).map(|c| kind(c.type_id, INFERRED, c.group)))
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        let rel = |type_id: u64, target: u64, group: u16, ch: u64| RelationshipRecord {
            target: U24::new(o(target)).unwrap(),
            kind: U16::new(
                kinds
                    .binary_search(&kind(type_id, ch, group))
                    .expect("a kind") as u16,
            ),
        };
        let mut attrs = vec![Vec::new(); n];
        let mut inbound = vec![Vec::new(); n];
        let mut stated = vec![Vec::new(); n];
        for r in &self.attributes {
            attrs[o(r.source) as usize].push(rel(r.type_id, r.target, r.group, r.characteristic));
            inbound[o(r.target) as usize].push(rel(r.type_id, r.source, r.group, r.characteristic));
            stated[o(r.source) as usize].push(rel(r.type_id, r.target, r.group, STATED));
        }
        for c in &self.concepts {
            for &p in &c.parents {
                stated[o(c.id) as usize].push(rel(IS_A, p, 0, STATED));
            }
        }
        let key = |r: &RelationshipRecord| {
            let (type_ord, _, group) = kinds[usize::from(r.kind.get())];
            (group, type_ord, r.target.get())
        };
        for lists in [&mut attrs, &mut inbound, &mut stated] {
            lists.iter_mut().for_each(|l| l.sort_by_key(key));
        }
        let mut rel_sections = vec![(AttributesIndex, Attributes, attrs)];
        if self.with_inbound {
            rel_sections.push((InboundIndex, Inbound, inbound));
        }
        if self.with_stated {
            rel_sections.push((StatedIndex, Stated, stated));
        }
        for (index, items, lists) in rel_sections {
            let (idx, flat) = csr(lists.into_iter());
            add(index, idx.as_bytes().to_vec(), n + 1);
            add(items, flat.as_bytes().to_vec(), flat.len());
        }
        let kind_records: Vec<RelationshipKindRecord> = (kinds.iter())
            .map(|&(type_ord, code, group)| RelationshipKindRecord {
                type_ord: U32::new(type_ord),
                characteristic_code: code,
                group: U16::new(group),
            })
            .collect();
        add(
            RelationshipKinds,
            kind_records.as_bytes().to_vec(),
            kind_records.len(),
        );
        if self.with_type_indexes {
            let attribute_pairs = self.attributes.iter().map(|r| (r.type_id, r.source));
            let concrete_pairs = self.concrete.iter().map(|c| (c.type_id, c.source));
            for (index, items, pairs) in [
                (
                    AttributeTypesIndex,
                    AttributeTypeSources,
                    attribute_pairs.collect::<Vec<_>>(),
                ),
                (
                    ConcreteTypesIndex,
                    ConcreteTypeSources,
                    concrete_pairs.collect(),
                ),
            ] {
                let mut pairs: Vec<(u32, u32)> =
                    pairs.into_iter().map(|(t, s)| (o(t), o(s))).collect();
                pairs.sort_unstable();
                pairs.dedup();
                let mut entries: Vec<TypeSourcesEntry> = Vec::new();
                for (i, &(t, _)) in pairs.iter().enumerate() {
                    if i == 0 || pairs[i - 1].0 != t {
                        entries.push(TypeSourcesEntry {
                            type_ord: U32::new(t),
                            start: U32::new(i as u32),
                        });
                    }
                }
                entries.push(TypeSourcesEntry {
                    type_ord: U32::new(u32::MAX),
                    start: U32::new(pairs.len() as u32),
                });
                let sources: Vec<U32> = pairs.iter().map(|&(_, s)| U32::new(s)).collect();
                add(index, entries.as_bytes().to_vec(), entries.len());
                add(items, sources.as_bytes().to_vec(), sources.len());
            }
        }
        if self.with_concrete {
            let mut heap = Vec::new();
            let mut lists = vec![Vec::new(); n];
            for c in &self.concrete {
                let number = kinds.binary_search(&kind(c.type_id, INFERRED, c.group));
                lists[o(c.source) as usize].push(ConcreteRecord {
                    kind: U16::new(number.expect("a kind") as u16),
                    value_offset: U32::new(heap.len() as u32),
                    value_len: U16::new(c.value.len() as u16),
                });
                heap.extend_from_slice(c.value.as_bytes());
            }
            let (idx, flat) = csr(lists.into_iter());
            add(ConcreteIndex, idx.as_bytes().to_vec(), n + 1);
            add(Concrete, flat.as_bytes().to_vec(), flat.len());
            add(ConcreteHeap, heap.clone(), heap.len());
        }

        // Refsets.
        let mut refsets: Vec<&TestRefset> = self.refsets.iter().collect();
        refsets.sort_by_key(|r| r.id);
        let (mut refset_recs, mut members, mut schema_heap, mut field_heap) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut targets: Vec<AssociationTargetEntry> = Vec::new();
        // The member columns (format 1.4): per refset, each column's
        // distinct values in order of first appearance.
        let (mut column_entries, mut codes, mut dictionary_index, mut dictionary) =
            (Vec::new(), Vec::<U16>::new(), Vec::new(), Vec::new());
        for r in refsets {
            column_entries.push(MemberColumnsEntry {
                codes: U32::new(codes.len() as u32),
                columns: U32::new(dictionary_index.len() as u32),
            });
            let mut seen: Vec<Vec<(&str, MemberValueRecord)>> =
                vec![Vec::new(); r.extra_columns.len()];
            let mut schema = format!(
                "{}\tid\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId",
                r.pattern
            );
            for c in &r.extra_columns {
                schema.push('\t');
                schema.push_str(c);
            }
            refset_recs.push(RefsetRecord {
                refset: U64::new(r.id),
                first_member: U32::new(members.len() as u32),
                member_count: U32::new(r.members.len() as u32),
                schema_offset: U32::new(schema_heap.len() as u32),
                schema_len: U32::new(schema.len() as u32),
                kind: r.kind as u8,
                reserved: [0; 7],
            });
            schema_heap.extend_from_slice(schema.as_bytes());
            let mut ms = r.members.clone();
            ms.sort();
            for (component, fields) in ms {
                let target = fields.split('\t').next().and_then(|t| t.parse().ok());
                if r.kind == RefsetKind::Association
                    && let Some(&target) = target.and_then(|t: u64| ord.get(&t))
                {
                    targets.push(AssociationTargetEntry {
                        target: U24::new(target).unwrap(),
                        member: U24::new(members.len() as u32).unwrap(),
                        source: U24::new(ord.get(&component).copied().unwrap_or(U24::MAX)).unwrap(),
                    });
                }
                members.push(MemberRecord {
                    component: U64::new(component),
                    fields_offset: U32::new(field_heap.len() as u32),
                    fields_len: U32::new(fields.len() as u32),
                });
                let mut at = field_heap.len() as u32;
                let mut values = (!fields.is_empty()).then(|| fields.split('\t'));
                for column in &mut seen {
                    let Some(v) = values.as_mut().and_then(Iterator::next) else {
                        codes.push(U16::new(UNCODED));
                        continue;
                    };
                    let code = match column.iter().position(|(x, _)| *x == v) {
                        Some(code) => code,
                        None => {
                            column.push((
                                v,
                                MemberValueRecord {
                                    offset: U32::new(at),
                                    len: U32::new(v.len() as u32),
                                },
                            ));
                            column.len() - 1
                        }
                    };
                    codes.push(U16::new(code as u16));
                    at += v.len() as u32 + 1;
                }
                field_heap.extend_from_slice(fields.as_bytes());
            }
            for column in seen {
                dictionary_index.push(U32::new(dictionary.len() as u32));
                dictionary.extend(column.into_iter().map(|(_, v)| v));
            }
        }
        column_entries.push(MemberColumnsEntry {
            codes: U32::new(codes.len() as u32),
            columns: U32::new(dictionary_index.len() as u32),
        });
        dictionary_index.push(U32::new(dictionary.len() as u32));
        add(
            MemberColumns,
            column_entries.as_bytes().to_vec(),
            column_entries.len(),
        );
        add(MemberCodes, codes.as_bytes().to_vec(), codes.len());
        add(
            MemberDictionaryIndex,
            dictionary_index.as_bytes().to_vec(),
            dictionary_index.len(),
        );
        add(
            MemberDictionary,
            dictionary.as_bytes().to_vec(),
            dictionary.len(),
        );
        let mut by_component: Vec<ComponentMemberEntry> = members
            .iter()
            .enumerate()
            .map(|(i, m)| ComponentMemberEntry {
                component: m.component,
                member: U24::new(i as u32).unwrap(),
            })
            .collect();
        by_component.sort_by_key(|e| (e.component.get(), e.member.get()));
        add(Refsets, refset_recs.as_bytes().to_vec(), refset_recs.len());
        add(Members, members.as_bytes().to_vec(), members.len());
        let member_concepts: Vec<U24> = (members.iter())
            .map(|m| U24::saturating(ord.get(&m.component.get()).copied().unwrap_or(u32::MAX)))
            .collect();
        add(
            MemberConcepts,
            member_concepts.as_bytes().to_vec(),
            member_concepts.len(),
        );
        if self.with_member_meta {
            add(MemberModules, U64::new(CORE).as_bytes().to_vec(), 1);
            add(MemberTimes, U32::new(20240101).as_bytes().to_vec(), 1);
            let stamp = MemberMetaRecord {
                module: U16::new(0),
                time: U16::new(0),
            };
            add(MemberMetaTable, stamp.as_bytes().to_vec(), 1);
            let stamps = vec![U16::new(0); members.len()];
            add(MemberMeta, stamps.as_bytes().to_vec(), stamps.len());
        }
        add(MemberFieldHeap, field_heap.clone(), field_heap.len());
        add(
            ComponentMembers,
            by_component.as_bytes().to_vec(),
            by_component.len(),
        );
        add(RefsetSchemaHeap, schema_heap.clone(), schema_heap.len());
        if self.with_association_targets {
            targets.sort_by_key(|e| (e.target.get(), e.member.get()));
            add(
                AssociationTargets,
                targets.as_bytes().to_vec(),
                targets.len(),
            );
            if self.with_target_blocks {
                // Entry `b`: how many targets lie below block `b`.
                let block = TARGET_BLOCK as usize;
                let starts: Vec<U32> = (0..=n.div_ceil(block))
                    .map(|b| {
                        let below = targets
                            .iter()
                            .filter(|e| (e.target.get() as usize) < b * block)
                            .count();
                        U32::new(below as u32)
                    })
                    .collect();
                add(
                    AssociationTargetBlocks,
                    starts.as_bytes().to_vec(),
                    starts.len(),
                );
            }
        }

        let codes: Vec<U64> = self.codes.iter().map(|&c| U64::new(c)).collect();
        add(Codes, codes.as_bytes().to_vec(), codes.len());
        let langs: String = languages.iter().map(|l| format!("{l}\n")).collect();
        add(Languages, langs.clone().into_bytes(), languages.len());

        let index = words.build().unwrap();
        add(WordFst, index.fst.clone(), index.fst.len());
        add(
            WordPostingsIndex,
            index.offsets.clone(),
            index.offsets.len() / 4,
        );
        add(WordPostings, index.postings.clone(), index.postings.len());
        if self.search_sections {
            add(
                WordFirstWords,
                index.first_words.clone(),
                index.first_words.len(),
            );
        }
        out
    }
}

/// A description's `DescriptionSearch` entry, from its parts (the test
/// writer's own reading of the format, not the importer's code).
fn search_entry(d: &TestDescription, concept_active: bool, default_language: u64) -> u16 {
    use txmap_format::schema::description_search as bit;
    let folded = txmap_text::fold(d.term);
    let mut words = txmap_text::words(&folded);
    let one_word = words.next().is_some() && words.next().is_none();
    let preferred = d.active
        && d.type_id == SYNONYM
        && d.acceptability.contains(&(default_language, PREFERRED));
    let mut bits = (d.term.chars().count().min(usize::from(bit::CHARS))) as u16;
    for (set, b) in [
        (d.active, bit::ACTIVE),
        (concept_active, bit::CONCEPT_ACTIVE),
        (d.type_id == DEFINITION, bit::DEFINITION),
        (one_word, bit::ONE_WORD),
        (preferred, bit::PREFERRED),
    ] {
        if set {
            bits |= b;
        }
    }
    bits
}

/// CSR layout of lists: `n + 1` offsets and the concatenated items.
fn csr<T: Clone>(lists: impl Iterator<Item = Vec<T>>) -> (Vec<U32>, Vec<T>) {
    let mut idx = vec![U32::new(0)];
    let mut flat = Vec::new();
    for l in lists {
        flat.extend(l);
        idx.push(U32::new(flat.len() as u32));
    }
    (idx, flat)
}
