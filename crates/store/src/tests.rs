//! Tests over the hand-built edition of [`crate::testfile`].

use std::sync::OnceLock;

use txmap_format::{ALIGN, Container, FormatError, HEADER_LEN};

use crate::sctid::*;
use crate::testfile::*;
use crate::*;

fn tiny_bytes() -> &'static [u8] {
    static BYTES: OnceLock<Vec<u8>> = OnceLock::new();
    BYTES.get_or_init(|| TestEdition::tiny().write())
}

fn tiny() -> Edition<&'static [u8]> {
    Edition::open(tiny_bytes()).unwrap()
}

#[test]
fn every_description_names_its_concept() {
    // A description record does not hold its concept (format 5): it is
    // found from where the description is stored. Checked against the
    // test edition's own list, for every description, by SCTID and by
    // ordinal.
    let t = TestEdition::tiny();
    let e = tiny();
    assert_eq!(e.description_count() as usize, t.descriptions.len());
    for d in &t.descriptions {
        let got = e.description(d.id).unwrap().expect("every description");
        assert_eq!(got.concept, d.concept, "description {}", d.id);
        assert_eq!(got.term, d.term);
        let at = e.description_at(got.ordinal).unwrap();
        assert_eq!((at.id, at.concept), (d.id, d.concept));
    }
}

fn ord<B: AsRef<[u8]>>(e: &Edition<B>, id: u64) -> u32 {
    e.ordinal(id)
        .unwrap_or_else(|| panic!("{id} not in the edition"))
}

fn ids<B: AsRef<[u8]>>(e: &Edition<B>, ords: Ordinals<'_>) -> Vec<u64> {
    ords.iter().map(|o| e.sctid(o).unwrap()).collect()
}

#[test]
fn identity_metadata_and_sections() {
    let e = tiny();
    let id = e.identity();
    assert_eq!(id.edition_uri, "http://snomed.info/sct/900000000000207008");
    assert_eq!(
        id.version_uri,
        "http://snomed.info/sct/900000000000207008/version/20240101"
    );
    assert_eq!(id.edition_module, CORE);
    assert_eq!(id.effective_time, 20240101);
    assert_eq!(id.status, Status::Published);
    assert_eq!(id.status.to_string(), "published");
    assert_eq!(id.default_language_refset, US);
    assert_eq!(id.txmap_version, "0.1.0");
    assert_eq!(e.metadata()["status"], "published");
    assert_eq!(e.concept_count(), 18);
    assert_eq!(e.description_count(), 41);

    let sections = e.sections();
    assert!(sections.windows(2).all(|w| w[0].offset < w[1].offset));
    let concepts = sections.iter().find(|s| s.name == "Concepts").unwrap();
    assert_eq!(concepts.code, SectionKind::Concepts as u32);
    assert_eq!(concepts.len, 18 * 8);
    assert_eq!(concepts.count, 18);
    assert!(sections.iter().any(|s| s.name == "Stated"));
    assert!(format!("{e:?}").contains("concepts: 18"));
    e.verify(|_| {}).unwrap();
}

#[test]
fn works_over_any_owner() {
    let owned = Edition::open(tiny_bytes().to_vec()).unwrap();
    assert_eq!(owned.concept_count(), 18);
    let boxed = Edition::open(tiny_bytes().to_vec().into_boxed_slice()).unwrap();
    assert_eq!(
        boxed.preferred_term(ord(&boxed, MI)).unwrap(),
        Some("Myocardial infarction")
    );
    assert_eq!(owned.into_inner().len(), tiny_bytes().len());
}

#[test]
fn concepts() {
    let e = tiny();
    let n = e.concept_count();
    let mut seen = std::collections::BTreeSet::new();
    for o in 0..n {
        let id = e.sctid(o).unwrap();
        assert!(seen.insert(id), "{id} numbered twice");
        assert_eq!(e.ordinal(id), Some(o));
        let c = e.concept_at(o).unwrap();
        assert_eq!((c.id, c.ordinal), (id, o));
        assert_eq!(c.module, CORE);
        assert_eq!(c.effective_time, 20240101);
        assert_eq!(c.active, id != OLD_MI);
        assert_eq!(c.defined, id == MI);
        let f = e.concept_facts(o).unwrap();
        assert_eq!((f.active, f.defined), (c.active, c.defined));
        assert_eq!(f.effective_time, c.effective_time);
        assert_eq!(e.sctid(f.module_ord).unwrap(), c.module);
    }
    assert!(e.concept_facts(n).is_err());
    assert_eq!(e.concept(MI).unwrap().unwrap().id, MI);
    assert_eq!(e.concept(12345).unwrap(), None);
    assert_eq!(e.ordinal(0), None);
    assert_eq!(e.ordinal(u64::MAX), None);
    assert!(matches!(
        e.sctid(n),
        Err(StoreError::OutOfRange {
            what: "concept",
            ordinal,
            count
        }) if ordinal == n && count == n
    ));
    assert!(e.concept_at(u32::MAX).is_err());
    for f in [
        |e: &Edition<&[u8]>, o| e.parents(o).map(drop),
        |e: &Edition<&[u8]>, o| e.descriptions(o).map(drop),
        |e: &Edition<&[u8]>, o| e.attributes(o).map(drop),
        |e: &Edition<&[u8]>, o| e.preferred_term(o).map(drop),
    ] {
        let err = f(&e, n).unwrap_err();
        assert_eq!(
            err.to_string(),
            "concept ordinal 18 out of range (the edition has 18)"
        );
    }
}

#[test]
fn descriptions() {
    let e = tiny();
    let mi = ord(&e, MI);
    let ds = e.descriptions(mi).unwrap();
    let got: Vec<u64> = ds.iter().map(|d| d.id).collect();
    let mut want = vec![
        MI_PT,
        MI_FSN,
        MI_CARDIAC,
        MI_ATTACK,
        MI_FRENCH,
        MI_DEFINITION,
        MI_INACTIVE,
    ];
    want.sort();
    assert_eq!(got, want);
    for d in &ds {
        assert_eq!(d.concept, MI);
        assert_eq!(d.module, CORE);
        assert_eq!(d.case_significance, CASE_INSENSITIVE);
        assert_eq!(e.description(d.id).unwrap(), Some(*d));
        assert_eq!(e.description_at(d.ordinal).unwrap(), *d);
    }
    let french = e.description(MI_FRENCH).unwrap().unwrap();
    assert_eq!(
        (french.language, french.term, french.type_id),
        ("fr", "Infarctus du myocarde", SYNONYM)
    );
    let fsn = e.description(MI_FSN).unwrap().unwrap();
    assert_eq!((fsn.language, fsn.type_id), ("en", FSN));
    assert!(!e.description(MI_INACTIVE).unwrap().unwrap().active);
    assert_eq!(
        e.description(MI_DEFINITION).unwrap().unwrap().type_id,
        DEFINITION
    );
    assert_eq!(e.description(1).unwrap(), None);
    assert!(matches!(
        e.description_at(e.description_count()),
        Err(StoreError::OutOfRange {
            what: "description",
            ..
        })
    ));
    // Every description is reachable both ways.
    let mut seen = 0;
    for o in 0..e.concept_count() {
        for d in e.descriptions(o).unwrap() {
            assert_eq!(d.concept, e.sctid(o).unwrap());
            seen += 1;
        }
    }
    assert_eq!(seen, e.description_count());
}

#[test]
fn acceptability_and_preferred_terms() {
    let e = tiny();
    let mi = ord(&e, MI);
    let cardiac = e.description(MI_CARDIAC).unwrap().unwrap();
    let mut acc = e.acceptability(cardiac.ordinal).unwrap();
    acc.sort();
    assert_eq!(acc, vec![(GB, PREFERRED), (US, ACCEPTABLE)]);
    let french = e.description(MI_FRENCH).unwrap().unwrap();
    assert!(e.acceptability(french.ordinal).unwrap().is_empty());
    assert!(e.acceptability(e.description_count()).is_err());

    assert_eq!(e.preferred_term(mi).unwrap(), Some("Myocardial infarction"));
    assert_eq!(
        e.preferred_term(ord(&e, OLD_MI)).unwrap(),
        Some("Heart attack concept")
    );
    for o in 0..e.concept_count() {
        // The compact table agrees with the language refset rows.
        let pt = e.preferred_term(o).unwrap();
        let from_refset = e.preferred_term_in(o, &[US]).unwrap().map(|d| d.term);
        assert_eq!(pt, from_refset);
        assert!(pt.is_some());
    }
    let term = |refsets: &[u64]| e.preferred_term_in(mi, refsets).unwrap().map(|d| d.id);
    assert_eq!(term(&[US]), Some(MI_PT));
    assert_eq!(term(&[GB]), Some(MI_CARDIAC));
    assert_eq!(term(&[GB, US]), Some(MI_CARDIAC));
    assert_eq!(term(&[12345, US]), Some(MI_PT));
    assert_eq!(term(&[ICD10]), None);
    assert_eq!(term(&[]), None);

    let fsn = |refsets: &[u64]| e.fsn(mi, refsets).unwrap().map(|d| d.term);
    assert_eq!(fsn(&[US]), Some("Myocardial infarction (disorder)"));
    // Not preferred anywhere listed: any active FSN.
    assert_eq!(fsn(&[]), Some("Myocardial infarction (disorder)"));

    assert!(
        e.is_preferred_term(e.description(MI_PT).unwrap().unwrap().ordinal)
            .unwrap()
    );
    assert!(!e.is_preferred_term(cardiac.ordinal).unwrap());
    // FSNs are preferred in the refset but are not preferred *terms*.
    assert!(
        !e.is_preferred_term(e.description(MI_FSN).unwrap().unwrap().ordinal)
            .unwrap()
    );
}

#[test]
fn hierarchy() {
    let e = tiny();
    let (root, finding, disease, mi) = (
        ord(&e, ROOT),
        ord(&e, FINDING),
        ord(&e, DISEASE),
        ord(&e, MI),
    );
    assert_eq!(ids(&e, e.parents(mi).unwrap()), vec![DISEASE]);
    assert!(e.parents(root).unwrap().is_empty());
    assert!(e.parents(ord(&e, OLD_MI)).unwrap().is_empty());
    let mut kids = ids(&e, e.children(disease).unwrap());
    kids.sort();
    assert_eq!(kids, vec![MI, ARRHYTHMIA]);
    let anc = e.ancestors(mi).unwrap();
    assert_eq!(anc.len(), 3);
    assert!(
        anc.iter()
            .collect::<Vec<_>>()
            .windows(2)
            .all(|w| w[0] < w[1])
    );
    assert!(anc.contains(root) && anc.contains(finding) && anc.contains(disease));
    assert!(!anc.contains(mi));
    assert_eq!(anc.to_vec(), anc.into_iter().collect::<Vec<_>>());
    let desc = e.descendants(finding).unwrap();
    assert_eq!(desc.len(), 3);
    assert!(desc.contains(mi) && desc.contains(disease));
    assert_eq!(e.descendants(root).unwrap().len(), 16); // all but itself and the inactive one
    assert!(e.descendants(mi).unwrap().is_empty());
    assert_eq!(desc.first(), desc.iter().next());

    assert!(e.subsumes(root, mi).unwrap());
    assert!(e.subsumes(disease, mi).unwrap());
    assert!(e.subsumes(mi, mi).unwrap());
    assert!(!e.subsumes(mi, disease).unwrap());
    assert!(!e.subsumes(ord(&e, BODY), mi).unwrap());
    assert!(!e.subsumes(root, ord(&e, OLD_MI)).unwrap());
    assert!(e.subsumes(root, e.concept_count()).is_err());
    assert!(e.subsumes(e.concept_count(), root).is_err());
}

#[test]
fn adjacency_view_reads_what_parents_reads() {
    let e = tiny();
    let parents = e.parent_lists().unwrap();
    for o in 0..e.concept_count() {
        assert_eq!(
            parents.get(o).unwrap().to_vec(),
            e.parents(o).unwrap().to_vec()
        );
    }
    assert_eq!(ids(&e, parents.get(ord(&e, MI)).unwrap()), vec![DISEASE]);
    // Past the last concept: the error `parents` gives, not the next
    // index entry (the index holds one offset more than concepts).
    let past = e.concept_count();
    assert!(matches!(
        parents.get(past),
        Err(StoreError::OutOfRange { .. })
    ));
    assert!(matches!(
        e.parents(past),
        Err(StoreError::OutOfRange { .. })
    ));
}

#[test]
fn relationships() {
    let e = tiny();
    let (mi, heart) = (ord(&e, MI), ord(&e, HEART));
    let site = Relationship {
        type_id: FINDING_SITE,
        target: HEART,
        type_ord: ord(&e, FINDING_SITE),
        target_ord: heart,
        group: 1,
        characteristic_type: INFERRED,
    };
    assert_eq!(e.attributes(mi).unwrap(), vec![site]);
    assert!(e.attributes(heart).unwrap().is_empty());
    assert_eq!(
        e.inbound(heart).unwrap(),
        vec![Relationship {
            target: MI,
            target_ord: mi,
            ..site
        }]
    );
    assert!(e.inbound(mi).unwrap().is_empty());
    assert_eq!(
        e.stated(mi).unwrap(),
        vec![
            Relationship {
                type_id: IS_A,
                target: DISEASE,
                type_ord: ord(&e, IS_A),
                target_ord: ord(&e, DISEASE),
                group: 0,
                characteristic_type: STATED
            },
            Relationship {
                characteristic_type: STATED,
                ..site
            },
        ]
    );
    assert_eq!(
        e.concrete_values(heart).unwrap(),
        vec![ConcreteValue {
            type_id: COUNT,
            type_ord: ord(&e, COUNT),
            group: 0,
            characteristic_type: INFERRED,
            value: "#4"
        }]
    );
    assert!(e.concrete_values(mi).unwrap().is_empty());
}

#[test]
fn optional_sections_may_be_absent() {
    let mut t = TestEdition::tiny();
    t.with_stated = false;
    t.with_inbound = false;
    t.with_concrete = false;
    let bytes = t.write();
    let e = Edition::open(&bytes[..]).unwrap();
    for o in 0..e.concept_count() {
        assert!(e.stated(o).unwrap().is_empty());
        assert!(e.inbound(o).unwrap().is_empty());
        assert!(e.concrete_values(o).unwrap().is_empty());
    }
    assert_eq!(e.attributes(ord(&e, MI)).unwrap().len(), 1);
    assert!(e.stated(e.concept_count()).is_err());
}

#[test]
fn refsets_and_members() {
    let e = tiny();
    let all: Vec<(u64, RefsetKind, u32)> = e
        .refsets()
        .map(|r| (r.id, r.kind, r.member_count))
        .collect();
    assert_eq!(
        all,
        vec![
            (ICD10, RefsetKind::ComplexMap, 1),
            (LATERALIZABLE, RefsetKind::Simple, 2),
            (INACTIVATION, RefsetKind::AttributeValue, 1),
            (SAME_AS, RefsetKind::Association, 1),
        ]
    );
    let map = e.refset(ICD10).unwrap();
    assert_eq!(map.pattern, "iissscc");
    assert_eq!(map.columns.len(), 13);
    assert_eq!(map.columns[0], "id");
    assert_eq!(map.field_names()[4], "mapTarget");
    let simple = e.refset(LATERALIZABLE).unwrap();
    assert_eq!(simple.pattern, "");
    assert!(simple.field_names().is_empty());
    assert!(e.refset(US).is_none(), "language refsets are not listed");
    assert!(e.refset(MI).is_none());

    let members = e.members(LATERALIZABLE).unwrap();
    assert_eq!(
        members.iter().map(|m| m.component).collect::<Vec<_>>(),
        vec![HEART, BODY]
    );
    assert!(
        members
            .iter()
            .all(|m| m.refset == LATERALIZABLE && m.field(0).is_none())
    );
    assert_eq!(members[0].field_values().count(), 0);
    assert_eq!(e.members_page(LATERALIZABLE, 1, 10).unwrap(), members[1..]);
    assert_eq!(e.members_page(LATERALIZABLE, 0, 1).unwrap(), members[..1]);
    assert!(e.members_page(LATERALIZABLE, 5, 10).unwrap().is_empty());
    assert!(e.members(12345).unwrap().is_empty());
    // The concepts members reference, as ordinals: the same answer as
    // looking each member up.
    for r in e.refsets() {
        let mut expected: Vec<u32> = e
            .members(r.id)
            .unwrap()
            .iter()
            .filter_map(|m| e.ordinal(m.component))
            .collect();
        expected.sort_unstable();
        expected.dedup();
        assert_eq!(
            e.member_concepts(r.id).unwrap(),
            expected,
            "refset {}",
            r.id
        );
    }
    let mut lateralizable = vec![ord(&e, HEART), ord(&e, BODY)];
    lateralizable.sort_unstable();
    assert_eq!(e.member_concepts(LATERALIZABLE).unwrap(), lateralizable);
    assert!(e.member_concepts(12345).unwrap().is_empty());
    for r in e.refsets() {
        let each: Vec<_> = e.members_iter(r.id).unwrap().map(Result::unwrap).collect();
        assert_eq!(each, e.members(r.id).unwrap());
    }
    assert_eq!(e.members_iter(12345).unwrap().len(), 0);

    let icd = e.members(ICD10).unwrap();
    assert_eq!(icd.len(), 1);
    assert_eq!(icd[0].component, MI);
    assert_eq!(icd[0].field(4), Some("I21.9"));
    assert_eq!(icd[0].field(7), None);
    assert_eq!(icd[0].field_values().count(), 7);

    assert!(e.is_member(LATERALIZABLE, HEART).unwrap());
    assert!(e.is_member(LATERALIZABLE, BODY).unwrap());
    assert!(!e.is_member(LATERALIZABLE, MI).unwrap());
    assert!(!e.is_member(12345, HEART).unwrap());
    assert!(e.is_member(SAME_AS, OLD_MI).unwrap());

    let mut of_old = e.component_refsets(OLD_MI).unwrap();
    of_old.sort_by_key(|m| m.refset);
    assert_eq!(
        of_old,
        vec![
            Member {
                refset: INACTIVATION,
                component: OLD_MI,
                fields: "900000000000482003",
                active: true,
                module: None,
                effective_time: None,
            },
            Member {
                refset: SAME_AS,
                component: OLD_MI,
                fields: "22298006",
                active: true,
                module: None,
                effective_time: None,
            },
        ]
    );
    assert_eq!(e.component_refsets(HEART).unwrap().len(), 1);
    assert!(e.component_refsets(ROOT).unwrap().is_empty());
    assert!(e.component_refsets(u64::MAX).unwrap().is_empty());

    assert_eq!(
        e.associations(OLD_MI).unwrap(),
        vec![Association {
            refset: SAME_AS,
            target: MI
        }]
    );
    assert!(e.associations(MI).unwrap().is_empty());
    assert!(e.associations(HEART).unwrap().is_empty());

    assert!(e.has_association_targets());
    assert_eq!(
        e.associations_to(ord(&e, MI)).unwrap().collect::<Vec<_>>(),
        vec![AssociationSource {
            refset: SAME_AS,
            source: OLD_MI,
            source_ordinal: Some(ord(&e, OLD_MI)),
        }]
    );
    assert_eq!(e.associations_to(ord(&e, HEART)).unwrap().len(), 0);
    assert_eq!(e.associations_to(ord(&e, OLD_MI)).unwrap().len(), 0);
    assert!(matches!(
        e.associations_to(e.concept_count()),
        Err(StoreError::OutOfRange { .. })
    ));
}

const REPLACED_BY: u64 = 900000000000526001;
const WAS_A: u64 = 900000000000528000;

/// The tiny edition with more associations: several per target, from
/// concepts and a description, to concepts and to what is not a concept.
fn with_associations() -> TestEdition {
    let mut t = TestEdition::tiny();
    t.refsets.push(TestRefset {
        id: REPLACED_BY,
        kind: RefsetKind::Association,
        pattern: "c",
        extra_columns: vec!["targetComponentId"],
        members: vec![
            (OLD_MI, "22298006"),
            (ARRHYTHMIA, "22298006"),
            (MI_INACTIVE, "22298006"),
            (OLD_MI, "80891009"),
            // Not concepts of the edition: not indexed.
            (HEART, "999999999"),
            (BODY, ""),
        ],
    });
    t.refsets.push(TestRefset {
        id: WAS_A,
        kind: RefsetKind::Association,
        pattern: "c",
        extra_columns: vec!["targetComponentId"],
        members: vec![(OLD_MI, "64572001"), (OLD_MI, "22298006")],
    });
    t
}

#[test]
fn associations_to_reads_the_reverse_index() {
    let e = Edition::open(with_associations().write()).unwrap();
    let to = |id: u64| -> Vec<(u64, u64)> {
        e.associations_to(ord(&e, id))
            .unwrap()
            .map(|a| (a.refset, a.source))
            .collect()
    };
    assert_eq!(
        to(MI),
        // By member: by refset SCTID, then by source.
        vec![
            (REPLACED_BY, OLD_MI),
            (REPLACED_BY, ARRHYTHMIA),
            (REPLACED_BY, MI_INACTIVE),
            (SAME_AS, OLD_MI),
            (WAS_A, OLD_MI),
        ]
    );
    assert_eq!(to(HEART), vec![(REPLACED_BY, OLD_MI)]);
    assert_eq!(to(DISEASE), vec![(WAS_A, OLD_MI)]);
    assert!(to(ROOT).is_empty());

    // The same associations as reading every component forwards.
    let mut forward: Vec<(u64, u64, u64)> = Vec::new();
    for r in e.refsets().filter(|r| r.kind == RefsetKind::Association) {
        for m in e.members(r.id).unwrap() {
            if let Some(target) = m.field(0).and_then(|t| t.parse().ok())
                && e.concept(target).unwrap().is_some()
            {
                forward.push((target, m.refset, m.component));
            }
        }
    }
    let mut backward: Vec<(u64, u64, u64)> = Vec::new();
    for o in 0..e.concept_count() {
        for a in e.associations_to(o).unwrap() {
            // The source's ordinal, when it is a concept.
            assert_eq!(a.source_ordinal, e.ordinal(a.source), "{a:?}");
        }
        let target = e.sctid(o).unwrap();
        backward.extend(
            e.associations_to(o)
                .unwrap()
                .map(|a| (target, a.refset, a.source)),
        );
    }
    forward.sort();
    backward.sort();
    assert_eq!(forward, backward);

    // Many targets at once: the same as one at a time, for every subset
    // pattern (all, none, every k-th, just the ends).
    let n = e.concept_count();
    let mut subsets: Vec<Vec<u32>> = vec![(0..n).collect(), Vec::new(), vec![0, n - 1]];
    for k in 1..=n {
        subsets.push((0..n).step_by(k as usize).collect());
        subsets.push((0..n).filter(|o| o % k != 0).collect());
    }
    for targets in subsets {
        let one_by_one: Vec<(u32, AssociationSource)> = targets
            .iter()
            .flat_map(|&t| e.associations_to(t).unwrap().map(move |a| (t, a)))
            .collect();
        // The sources of chosen refsets, against the one-at-a-time answer
        // kept to them: every refset alone, all of them, and none.
        let ids: Vec<u64> = one_by_one.iter().map(|(_, a)| a.refset).collect();
        let mut choices: Vec<Vec<u64>> = ids.iter().map(|&r| vec![r]).collect();
        choices.push(ids.clone());
        choices.push(Vec::new());
        for chosen in choices {
            let want: Vec<u32> = one_by_one
                .iter()
                .filter(|(_, a)| chosen.contains(&a.refset))
                .filter_map(|(_, a)| a.source_ordinal)
                .collect();
            assert_eq!(
                e.association_sources(&targets, &chosen).unwrap(),
                want,
                "{targets:?} {chosen:?}"
            );
        }
    }
    // Out-of-range and unsorted targets are not errors.
    let every: Vec<u64> = e.refsets().map(|r| r.id).collect();
    assert!(
        e.association_sources(&[u32::MAX], &every)
            .unwrap()
            .is_empty()
    );
    assert!(e.association_sources(&[n, ord(&e, MI), 0], &every).is_ok());
}

#[test]
fn gallop_finds_the_partition_point() {
    for len in 0..70usize {
        let s: Vec<usize> = (0..len).collect();
        for k in 0..=len + 1 {
            assert_eq!(
                super::edition::gallop(&s, |&x| x < k),
                s.partition_point(|&x| x < k),
                "len {len}, k {k}"
            );
        }
    }
}

#[test]
fn sorted_unique_sorts_short_and_long_lists_alike() {
    // A pseudo-random list with repeats, cut at lengths either side of the
    // bitmap's threshold (1,024, and one in 512 of the count).
    let mut x = 0x2545_f491_u32;
    let list: Vec<u32> = (0..20_000)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x % 50_000
        })
        .collect();
    for len in [0, 1, 97, 98, 100, 1023, 1024, 4096, 20_000] {
        let v = list[..len].to_vec();
        let mut want = v.clone();
        want.sort_unstable();
        want.dedup();
        assert_eq!(
            super::edition::sorted_unique(v.clone(), 50_000),
            want,
            "len {len}"
        );
        let few = 2_000_000; // 1,024 of 2 million is below one in 512
        assert_eq!(super::edition::sorted_unique(v, few), want, "len {len}");
    }
}

#[test]
fn editions_without_association_targets_open() {
    let mut t = with_associations();
    t.with_association_targets = false;
    let e = Edition::open(t.write()).unwrap();
    assert!(!e.has_association_targets());
    for o in 0..e.concept_count() {
        assert_eq!(e.associations_to(o).unwrap().len(), 0);
    }
    let all: Vec<u32> = (0..e.concept_count()).collect();
    let every: Vec<u64> = e.refsets().map(|r| r.id).collect();
    assert!(e.association_sources(&all, &every).unwrap().is_empty());
    assert_eq!(e.associations(OLD_MI).unwrap().len(), 5);
}

#[test]
fn corrupt_association_targets_are_errors() {
    use SectionKind::*;
    // An entry pointing past the members (a 9-byte entry: target,
    // member, source, three bytes each).
    let bytes = with_section(AssociationTargets, |b| {
        b[3..6].copy_from_slice(&1000u32.to_le_bytes()[..3])
    });
    let e = Edition::open(bytes).unwrap();
    let err = e.associations_to(ord(&e, MI)).err().unwrap();
    assert!(err.to_string().contains("AssociationTargets"), "{err}");
    let all: Vec<u32> = (0..e.concept_count()).collect();
    let every: Vec<u64> = e.refsets().map(|r| r.id).collect();
    assert!(e.association_sources(&all, &every).is_err());
    // An entry pointing at a member of a refset that is not an association.
    let bytes = with_section(AssociationTargets, |b| b[3..6].fill(0));
    let e = Edition::open(bytes).unwrap();
    assert!(matches!(
        e.associations_to(ord(&e, MI)),
        Err(StoreError::Corrupt {
            section: AssociationTargets,
            ..
        })
    ));
    // A torn record is caught on open.
    let bytes = with_section(AssociationTargets, |b| b.truncate(b.len() - 1));
    assert!(Edition::open(bytes).is_err());
}

#[test]
fn type_indexes_list_the_concepts_having_each_type() {
    let e = tiny();
    let n = e.concept_count();
    let mut attribute: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    let mut concrete: Vec<Vec<u32>> = vec![Vec::new(); n as usize];
    for o in 0..n {
        for r in e.attributes(o).unwrap() {
            attribute[r.type_ord as usize].push(o);
        }
        for c in e.concrete_values(o).unwrap() {
            concrete[c.type_ord as usize].push(o);
        }
    }
    let mut seen = 0;
    for t in 0..n {
        for (expected, got) in [
            (&mut attribute[t as usize], e.attribute_type_sources(t)),
            (&mut concrete[t as usize], e.concrete_type_sources(t)),
        ] {
            expected.dedup();
            seen += expected.len();
            assert_eq!(got.unwrap().unwrap().to_vec(), *expected, "type {t}");
        }
    }
    assert!(seen > 0);
    assert!(
        e.attribute_type_sources(u32::MAX - 1)
            .unwrap()
            .unwrap()
            .is_empty()
    );

    // Files before format 1.2 have none: the reader says so.
    let mut t = TestEdition::tiny();
    t.with_type_indexes = false;
    let old = Edition::open(t.write()).unwrap();
    assert!(old.attribute_type_sources(0).unwrap().is_none());
    assert!(old.concrete_type_sources(0).unwrap().is_none());
}

#[test]
fn corrupt_type_indexes_are_errors() {
    use SectionKind::*;
    // A range past the sources.
    let bytes = with_section(AttributeTypesIndex, |b| {
        let last = b.len() - 4;
        b[last..].copy_from_slice(&1000u32.to_le_bytes());
    });
    let e = Edition::open(bytes).unwrap();
    let any_err = (0..e.concept_count()).any(|t| e.attribute_type_sources(t).is_err());
    assert!(any_err);
    // No closing entry at all.
    let bytes = with_section(ConcreteTypesIndex, Vec::clear);
    let e = Edition::open(bytes).unwrap();
    assert!(e.concrete_type_sources(0).is_err());
    // A torn record is caught on open.
    let bytes = with_section(AttributeTypesIndex, |b| b.truncate(b.len() - 1));
    assert!(Edition::open(bytes).is_err());
}

#[test]
fn description_rows_read_what_descriptions_resolve() {
    let e = tiny();
    for o in 0..e.concept_count() {
        let full = e.descriptions(o).unwrap();
        let rows: Vec<_> = e.description_rows(o).unwrap().collect();
        assert_eq!(rows.len(), full.len());
        for (r, d) in rows.iter().zip(&full) {
            assert_eq!((r.ordinal, r.id(), r.active()), (d.ordinal, d.id, d.active));
            assert_eq!(e.sctid(r.module_ordinal()).unwrap(), d.module);
            assert_eq!(r.effective_time().unwrap(), d.effective_time);
            let type_code = usize::from(r.type_code().unwrap());
            assert_eq!(e.code_ids().get(type_code).copied().unwrap_or(0), d.type_id);
            assert_eq!(
                e.languages()[usize::from(r.language().unwrap())],
                d.language
            );
            let codes: Vec<(u64, u64)> = e
                .acceptability_codes(r.ordinal)
                .unwrap()
                .map(|c| {
                    let (refset, a) = c.unwrap();
                    (
                        e.code_ids()[usize::from(refset)],
                        e.code_ids()[usize::from(a)],
                    )
                })
                .collect();
            assert_eq!(codes, e.acceptability(d.ordinal).unwrap());
        }
    }
}

#[test]
fn member_columns_hold_each_distinct_value_once() {
    let e = tiny();
    let map = e
        .refsets()
        .find(|r| r.field_names().len() == 7)
        .expect("the map refset")
        .id;
    let table = e.member_table(map).unwrap();
    assert_eq!((table.len(), table.columns()), (1, 7));
    let row = table.member(0).unwrap();
    assert_eq!(row.component, MI);
    for c in 0..7 {
        let code = table.code(0, c).unwrap();
        assert_eq!(Some(table.dictionary(c).unwrap()[code]), row.field(c));
    }
    assert_eq!(table.code(0, 7), None);
    assert_eq!(table.code(1, 0), None);
    // A simple refset has no columns; a refset the edition lacks, no rows.
    let simple = e.refsets().find(|r| r.field_names().is_empty()).unwrap().id;
    assert_eq!(e.member_table(simple).unwrap().columns(), 0);
    assert!(e.member_table(1).unwrap().is_empty());
}

#[test]
fn corrupt_member_columns_are_errors() {
    use SectionKind::*;
    // Codes that do not cover the members of every refset.
    let bytes = with_section(MemberCodes, |b| b.truncate(b.len() - 2));
    let e = Edition::open(bytes).unwrap();
    let ids: Vec<u64> = e.refsets().map(|r| r.id).collect();
    assert!(ids.iter().any(|&r| e.member_table(r).is_err()));
    // A dictionary range past the values.
    let bytes = with_section(MemberDictionaryIndex, |b| {
        let last = b.len() - 4;
        b[last..].copy_from_slice(&1000u32.to_le_bytes());
    });
    let e = Edition::open(bytes).unwrap();
    let bad = ids.iter().any(|&r| {
        e.member_table(r)
            .is_ok_and(|t| (0..t.columns()).any(|c| t.dictionary(c).is_err()))
    });
    assert!(bad);
}

#[test]
fn search_ranks_hits() {
    let e = tiny();
    fn terms<'a>(hits: &[SearchHit<'a>]) -> Vec<&'a str> {
        hits.iter().map(|h| h.description.term).collect()
    }

    let hits = e.search("myocardial infarction", 10).unwrap();
    assert_eq!(
        terms(&hits),
        vec!["Myocardial infarction", "Myocardial infarction (disorder)"]
    );
    assert_eq!(hits[0].rank.tier(), MatchTier::Exact);
    assert!(hits[0].preferred && !hits[1].preferred);

    // Same tier and length: the preferred term wins over a lower concept id.
    let hits = e.search("Cardiac", 10).unwrap();
    assert_eq!(
        terms(&hits),
        vec![
            "Cardiac arrhythmia",
            "Cardiac infarction",
            "Cardiac arrhythmia (disorder)"
        ]
    );
    assert_eq!(hits[0].rank, hits[1].rank);
    assert_eq!(hits[1].description.concept, MI);

    // Prefixes, any word order, accents and case folded; inactive
    // descriptions, inactive concepts and definitions excluded.
    let hits = e.search("INF MYÓ", 10).unwrap();
    assert_eq!(
        terms(&hits),
        vec![
            "Myocardial infarction",
            "Infarctus du myocarde",
            "Myocardial infarction (disorder)"
        ]
    );
    assert_eq!(
        terms(&e.search("heart att", 10).unwrap()),
        vec!["Heart attack"]
    );
    assert_eq!(e.search("myocardial", 1).unwrap().len(), 1);
    assert!(e.search("zzz", 10).unwrap().is_empty());
    assert!(e.search("necrosis", 10).unwrap().is_empty());

    let all = SearchOptions {
        include_inactive: true,
        include_definitions: true,
        ..SearchOptions::default()
    };
    let hits = e.search_with("heart", 20, &all).unwrap();
    assert!(terms(&hits).contains(&"Heart attack concept"));
    assert!(
        terms(&hits).contains(
            &"Necrosis of the heart muscle caused by an interruption of the blood supply"
        )
    );
    let hits = e.search_with("myocardial", 20, &all).unwrap();
    assert!(terms(&hits).contains(&"Myocardial infarct"));

    let per_concept = SearchOptions {
        best_per_concept: true,
        ..SearchOptions::default()
    };
    let hits = e.search_with("heart", 20, &per_concept).unwrap();
    assert_eq!(terms(&hits), vec!["Heart attack", "Heart structure"]);
    // Each hit's rank and preferred flag are what the description says,
    // hits come in the documented order, and the concepts-only search gives
    // the same concepts in the same order, for every query and option set.
    for q in ["heart", "myo", "h", "infarct heart", "attack"] {
        for options in [all, per_concept, SearchOptions::default()] {
            let hits = e.search_with(q, usize::MAX, &options).unwrap();
            for h in &hits {
                assert_eq!(
                    h.rank,
                    txmap_text::rank(&txmap_text::fold(q), h.description.term)
                );
                assert_eq!(
                    h.preferred,
                    e.is_preferred_term(h.description.ordinal).unwrap()
                );
                assert_eq!(e.sctid(h.concept_ordinal).unwrap(), h.description.concept);
            }
            let keys: Vec<_> = hits
                .iter()
                .map(|h| {
                    (
                        h.rank,
                        !h.preferred,
                        h.description.concept,
                        h.description.id,
                    )
                })
                .collect();
            assert!(keys.is_sorted(), "{q:?}");
            let by_hits: Vec<u32> = e
                .search_with(
                    q,
                    usize::MAX,
                    &SearchOptions {
                        best_per_concept: true,
                        ..options
                    },
                )
                .unwrap()
                .iter()
                .map(|h| h.concept_ordinal)
                .collect();
            assert_eq!(e.search_concepts(q, &options).unwrap(), by_hits, "{q:?}");
            // Each concept's best hit is its first in the whole sorted
            // list; a page is the list's prefix, selected without
            // sorting the rest, among the concepts kept.
            let mut seen = std::collections::HashSet::new();
            let naive: Vec<u32> = hits
                .iter()
                .map(|h| h.concept_ordinal)
                .filter(|&c| seen.insert(c))
                .collect();
            assert_eq!(by_hits, naive, "{q:?}");
            for k in [0, 1, 3, 10, usize::MAX] {
                let (total, top) = e.search_concepts_top(q, &options, Scope::All, k).unwrap();
                assert_eq!(total, naive.len(), "{q:?}");
                assert_eq!(top, naive[..k.min(naive.len())], "{q:?} k={k}");
                let odd: Vec<u32> = naive.iter().copied().filter(|c| c % 2 == 1).collect();
                let odd_concepts: Vec<u32> =
                    (0..e.concept_count()).filter(|c| c % 2 == 1).collect();
                let (total, top) = e
                    .search_concepts_top(q, &options, Scope::Concepts(&odd_concepts), k)
                    .unwrap();
                assert_eq!(total, odd.len(), "{q:?}");
                assert_eq!(top, odd[..k.min(odd.len())], "{q:?} k={k} odd");
                // The same scope as a test: asked once per concept.
                let mut asked = Vec::new();
                let mut test = |c: u32| {
                    asked.push(c);
                    c % 2 == 1
                };
                let (total, top) = e
                    .search_concepts_top(q, &options, Scope::Test(&mut test), k)
                    .unwrap();
                assert_eq!(total, odd.len(), "{q:?} test");
                assert_eq!(top, odd[..k.min(odd.len())], "{q:?} k={k} test");
                // And built for searching: the same answer (a head's page
                // filtered by the scope, or the masked candidates ranked).
                let set = e.scope_set(odd_concepts.clone()).unwrap();
                let (total, top) = e
                    .search_concepts_top(q, &options, Scope::Set(&set), k)
                    .unwrap();
                assert_eq!(total, odd.len(), "{q:?} set");
                assert_eq!(top, odd[..k.min(odd.len())], "{q:?} k={k} set");
                let asked_once = asked.len();
                asked.sort_unstable();
                asked.dedup();
                assert_eq!(asked.len(), asked_once, "{q:?}: a concept asked twice");
                // A small scope: a few of the hits, and concepts no hit has.
                let mut few: Vec<u32> = naive.iter().copied().step_by(3).take(4).collect();
                let kept = few.clone();
                few.extend([0, e.concept_count() - 1]);
                few.sort_unstable();
                few.dedup();
                let want: Vec<u32> = naive.iter().copied().filter(|c| few.contains(c)).collect();
                assert!(kept.iter().all(|c| want.contains(c)));
                let (total, top) = e
                    .search_concepts_top(q, &options, Scope::Concepts(&few), k)
                    .unwrap();
                assert_eq!(total, want.len(), "{q:?} few");
                assert_eq!(top, want[..k.min(want.len())], "{q:?} k={k} few");
                let set = e.scope_set(few.clone()).unwrap();
                let (total, top) = e
                    .search_concepts_top(q, &options, Scope::Set(&set), k)
                    .unwrap();
                assert_eq!(total, want.len(), "{q:?} few set");
                assert_eq!(top, want[..k.min(want.len())], "{q:?} k={k} few set");
            }
        }
    }

    let words = SearchOptions {
        mode: MatchMode::Words,
        ..SearchOptions::default()
    };
    assert!(e.search_with("myo", 10, &words).unwrap().is_empty());

    assert!(matches!(e.search("--", 10), Err(StoreError::EmptyQuery)));
    let tight = SearchOptions {
        max_candidates: 1,
        ..SearchOptions::default()
    };
    let err = e.search_with("heart", 10, &tight).unwrap_err();
    assert!(matches!(err, StoreError::TooCostly));
    assert!(err.to_string().contains("too broad"));
}

#[test]
fn metadata_is_checked() {
    for key in [
        "edition_uri",
        "version_uri",
        "edition_module",
        "effective_time",
        "status",
        "default_language_refset",
        "txmap_version",
    ] {
        let mut t = TestEdition::tiny();
        t.metadata.remove(key);
        let err = Edition::open(t.write()).unwrap_err();
        assert!(
            matches!(err, StoreError::MissingMetadata(k) if k == key),
            "{err}"
        );
        assert!(err.to_string().contains(key));
    }
    for (key, value) in [
        ("status", "draft"),
        ("effective_time", "2024-01-01"),
        ("effective_time", "240101"),
        ("edition_module", "core"),
        ("default_language_refset", "-1"),
    ] {
        let mut t = TestEdition::tiny();
        t.metadata.insert(key.into(), value.into());
        let err = Edition::open(t.write()).unwrap_err();
        assert!(
            matches!(&err, StoreError::BadMetadata { key: k, value: v } if *k == key && v == value),
            "{err}"
        );
    }
    let mut t = TestEdition::tiny();
    t.metadata.insert("status".into(), "unpublished".into());
    t.metadata.insert("count.concepts".into(), "18".into());
    let e = Edition::open(t.write()).unwrap();
    assert_eq!(e.identity().status, Status::Unpublished);
    assert_eq!(e.metadata()["count.concepts"], "18");
}

#[test]
fn foreign_and_truncated_files_are_refused() {
    let bytes = tiny_bytes();
    let err = Edition::open(&bytes[..bytes.len() - 1]).unwrap_err();
    assert!(matches!(
        err,
        StoreError::Format(FormatError::LengthMismatch { .. })
    ));
    assert!(err.to_string().contains("truncated"), "{err}");
    let err = Edition::open(&bytes[..100]).unwrap_err();
    assert!(err.to_string().contains("truncated"), "{err}");
    let err = Edition::open(&bytes[..10]).unwrap_err();
    assert!(err.to_string().contains("too short"), "{err}");
    let err = Edition::open(&b""[..]).unwrap_err();
    assert!(err.to_string().contains("too short"), "{err}");

    let mut zip = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
    zip.resize(5000, 0);
    let err = Edition::open(zip).unwrap_err();
    assert!(matches!(err, StoreError::Format(FormatError::BadMagic)));
    assert!(
        err.to_string().contains("not a txmap edition file"),
        "{err}"
    );
}

#[test]
fn missing_required_sections_are_refused() {
    let t = TestEdition::tiny();
    for kind in [
        SectionKind::Concepts,
        SectionKind::WordFst,
        SectionKind::AncestorsIndex,
    ] {
        let err = Edition::open(without_section(&t, kind)).unwrap_err();
        assert!(
            matches!(err, StoreError::Format(FormatError::MissingSection(k)) if k == kind),
            "{err}"
        );
        assert!(err.to_string().contains(kind.name()));
    }
}

/// Writes the tiny edition with one section's bytes replaced.
fn with_section(kind: SectionKind, f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    with_section_of(&TestEdition::tiny(), kind, f)
}

/// Writes `t` with one section's bytes replaced.
/// The bytes of `t`'s file without its section `kind`.
fn without_section(t: &TestEdition, kind: SectionKind) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.txmap");
    let mut w = txmap_format::FileWriter::create(&path).unwrap();
    for (k, bytes, count) in t.sections() {
        if k != kind {
            w.add_section(k, &bytes, count).unwrap();
        }
    }
    w.finish(&t.metadata).unwrap();
    std::fs::read(&path).unwrap()
}

fn with_section_of(t: &TestEdition, kind: SectionKind, f: impl Fn(&mut Vec<u8>)) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.txmap");
    let mut w = txmap_format::FileWriter::create(&path).unwrap();
    for (k, mut bytes, count) in t.sections() {
        if k == kind {
            f(&mut bytes);
        }
        w.add_section(k, &bytes, count).unwrap();
    }
    w.finish(&t.metadata).unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn layout_errors_are_caught_on_open() {
    use SectionKind::*;
    // Checksums are right (the writer computed them); the contents are not.
    type Edit = Box<dyn Fn(&mut Vec<u8>)>;
    let cases: Vec<(SectionKind, Edit, &str)> = vec![
        (
            Concepts,
            Box::new(|b| b.truncate(b.len() - 1)),
            "not a multiple",
        ),
        (
            Concepts,
            Box::new(|b| b.truncate(b.len() - 8)),
            "17 records, expected 18",
        ),
        // Three-byte offsets (format 6).
        (
            ParentsIndex,
            Box::new(|b| b.truncate(b.len() - 3)),
            "expected 19",
        ),
        (
            ParentsIndex,
            Box::new(|b| b.truncate(b.len() - 4)),
            "not a multiple",
        ),
        (ParentsIndex, Box::new(|b| b[0] = 1), "offsets run 1.."),
        (Ancestors, Box::new(|b| b.extend([0; 4])), "over"),
        (
            DescriptionsById,
            Box::new(|b| b.truncate(b.len() - 3)),
            "expected 41",
        ),
        (
            ComponentMembers,
            Box::new(|b| b.truncate(b.len() - 11)),
            "entries for",
        ),
        (Codes, Box::new(|b| b.resize(255 * 8, 0)), "at most 255"),
        (Languages, Box::new(|b| b[0] = 0xFF), "Languages is corrupt"),
        (Refsets, Box::new(|b| b[12] = 200), "exceed"),
        (Refsets, Box::new(|b| b[7] = 0x7F), "ascending"),
        (
            RefsetSchemaHeap,
            Box::new(|b| b.truncate(3)),
            "past the end",
        ),
        (
            WordPostingsIndex,
            Box::new(|b| b.truncate(b.len() - 4)),
            "word index",
        ),
        (WordFst, Box::new(|b| b.truncate(b.len() - 1)), "fst"),
    ];
    for (kind, f, message) in cases {
        let bytes = with_section(kind, f);
        let err = Edition::open(bytes).unwrap_err();
        assert!(err.to_string().contains(message), "{kind:?}: {err}");
    }
}

/// Whether `err` reports `section` as corrupt.
fn corrupt_in(err: &StoreError, section: SectionKind) -> bool {
    matches!(err, StoreError::Corrupt { section: s, .. } if *s == section)
}

#[test]
fn corrupt_values_in_big_sections_are_errors() {
    use SectionKind::*;
    let mi_index = |e: &Edition<Vec<u8>>| ord(e, MI);
    // A parent ordinal out of range.
    let bytes = with_section(Parents, |b| b[0..4].copy_from_slice(&1000u32.to_le_bytes()));
    let e = Edition::open(bytes).unwrap();
    let o = (0..e.concept_count())
        .find(|&o| !e.parents(o).unwrap().is_empty())
        .unwrap();
    let p = e.parents(o).unwrap().first().unwrap();
    assert_eq!(p, 1000);
    assert!(matches!(e.sctid(p), Err(StoreError::OutOfRange { .. })));
    // A packed ancestor list whose last number is cut off (the high bit
    // of its last byte set): an error for that concept, and for a
    // subsumption test that reads it.
    let bytes = with_section(Ancestors, |b| *b.last_mut().unwrap() |= 0x80);
    let e = Edition::open(bytes).unwrap();
    let o = (0..e.concept_count())
        .find(|&o| e.ancestors(o).is_err())
        .expect("a cut-off list");
    let err = e.ancestors(o).unwrap_err();
    assert!(corrupt_in(&err, Ancestors), "{err}");
    assert!(err.to_string().contains("not a packed list"), "{err}");
    assert!(corrupt_in(&e.subsumes(0, o).unwrap_err(), Ancestors));
    // Overlong numbers (every byte 0xFF but the section's last): lists
    // that end inside a number are errors, the last one's numbers decode
    // to some ordinals, which are errors where an SCTID is asked for;
    // never a panic.
    let bytes = with_section(Ancestors, |b| {
        let n = b.len();
        b.iter_mut().take(n - 1).for_each(|x| *x |= 0x80);
    });
    let e = Edition::open(bytes).unwrap();
    exercise(&e);
    // Every byte of the ancestors 1: lengths of 1 over lists of several
    // numbers, refused where they cannot fit, read as one item where they
    // can.
    let bytes = with_section(Ancestors, |b| b.fill(1));
    let e = Edition::open(bytes).unwrap();
    exercise(&e);
    // A chunked descendant list that claims more chunk headers than it
    // has bytes: an error for that concept (the section's first list).
    let bytes = with_section(Descendants, |b| b[..2].copy_from_slice(&[0xFF, 0xFF]));
    let e = Edition::open(bytes).unwrap();
    let o = (0..e.concept_count())
        .find(|&o| e.descendants(o).is_err())
        .expect("a list with too few bytes for its headers");
    let err = e.descendants(o).unwrap_err();
    assert!(corrupt_in(&err, Descendants), "{err}");
    assert!(err.to_string().contains("not a chunked list"), "{err}");
    exercise(&e);
    // Every byte 0xFF: every list claims 65,536 chunks; never a panic.
    let bytes = with_section(Descendants, |b| b.fill(0xFF));
    let e = Edition::open(bytes).unwrap();
    exercise(&e);
    // The first list's first chunk under the high half 0xFFFF: ordinals
    // past the last concept, errors where an SCTID is asked for.
    let bytes = with_section(Descendants, |b| b[2..4].copy_from_slice(&[0xFF, 0xFF]));
    let e = Edition::open(bytes).unwrap();
    let big = (0..e.concept_count())
        .filter_map(|o| e.descendants(o).ok())
        .flat_map(|l| l.to_vec())
        .find(|&x| x >= e.concept_count())
        .expect("an ordinal out of range");
    assert!(matches!(e.sctid(big), Err(StoreError::OutOfRange { .. })));
    exercise(&e);
    // Relationship kinds past the table: an error where the relationship
    // is read whole, a type ordinal out of range where it is read in
    // place.
    let bytes = with_section(Attributes, |b| {
        // A 5-byte record: target (3 bytes), kind (2).
        b.chunks_exact_mut(5)
            .for_each(|r| r[3..5].copy_from_slice(&[0xFF, 0xFF]))
    });
    let e = Edition::open(bytes).unwrap();
    let o = (0..e.concept_count())
        .find(|&o| e.attribute_links(o).unwrap().len() > 0)
        .expect("a concept with attributes");
    let err = e.attributes(o).unwrap_err();
    assert!(corrupt_in(&err, Attributes), "{err}");
    assert!(err.to_string().contains("relationship kind 65535"), "{err}");
    let link = e.attribute_links(o).unwrap().next().unwrap();
    assert!(e.sctid(link.type_ord).is_err());
    exercise(&e);
    // Description kinds past their table (a 16-byte record: id, term
    // offset and length, kind): a module ordinal out of range where the
    // record is read in place, an error where the description is made.
    let bytes = with_section(Descriptions, |b| {
        b.chunks_exact_mut(16)
            .for_each(|r| r[14..16].copy_from_slice(&[0xFF; 2]))
    });
    let e = Edition::open(bytes).unwrap();
    let o = (0..e.concept_count())
        .find(|&o| e.description_rows(o).unwrap().len() > 0)
        .expect("a concept with descriptions");
    let err = e.descriptions(o).unwrap_err();
    assert!(corrupt_in(&err, Descriptions), "{err}");
    let row = e.description_rows(o).unwrap().next().unwrap();
    assert!(e.sctid(row.module_ordinal()).is_err());
    let err = row.effective_time().unwrap_err();
    assert!(err.to_string().contains("kind 65535"), "{err}");
    assert!(row.type_code().is_err() && row.language().is_err());
    exercise(&e);
    // A kind whose language or code is past its table is refused on open.
    let bytes = with_section(DescriptionKinds, |b| b[10] = 200);
    let err = Edition::open(bytes).unwrap_err();
    assert!(corrupt_in(&err, DescriptionKinds), "{err}");
    let bytes = with_section(DescriptionKinds, |b| b[8] = 200);
    let err = Edition::open(bytes).unwrap_err();
    assert!(corrupt_in(&err, DescriptionKinds), "{err}");
    exercise(&e);
    // Concept modules out of range (an 8-byte record: time, module,
    // flags): an ordinal out of range in the facts, an error where the
    // concept is made, and a moduleId filter that matches nothing.
    let bytes = with_section(Concepts, |b| {
        b.chunks_exact_mut(8)
            .for_each(|r| r[4..7].copy_from_slice(&[0xFF, 0xFF, 0xFF]))
    });
    let e = Edition::open(bytes).unwrap();
    let o = e.ordinal(MI).unwrap();
    assert!(e.sctid(e.concept_facts(o).unwrap().module_ord).is_err());
    assert!(e.concept_at(o).is_err());
    let table = e.concept_table().unwrap();
    assert!(
        table
            .select(|f| f.module_ord < e.concept_count())
            .is_empty()
    );
    exercise(&e);
    // Acceptability set numbers past the sets: an error naming the
    // section where a description's rows are read.
    let bytes = with_section(DescriptionAcceptability, |b| b.fill(0xFF));
    let e = Edition::open(bytes).unwrap();
    let mi = e.description(MI_FSN).unwrap().unwrap();
    let err = e.acceptability(mi.ordinal).unwrap_err();
    assert!(corrupt_in(&err, DescriptionAcceptability), "{err}");
    exercise(&e);
    // Sets whose offsets run backwards are refused on open.
    let bytes = with_section(AcceptabilitySetsIndex, |b| b[4] = 0xFF);
    let err = Edition::open(bytes).unwrap_err();
    assert!(corrupt_in(&err, AcceptabilitySetsIndex), "{err}");
    // A description ordinal out of range where a search by SCTID probes:
    // every entry points past the records, so any lookup meets one.
    let bytes = with_section(DescriptionsById, |b| {
        for o in b.chunks_exact_mut(3) {
            o.copy_from_slice(&[0xFF; 3]);
        }
    });
    let e = Edition::open(bytes).unwrap();
    let err = e.description(MI_FSN).unwrap_err();
    assert!(corrupt_in(&err, DescriptionsById), "{err}");
    // A preferred term past the heap; an entry missing.
    let bytes = with_section(PreferredTermIndex, |b| {
        let last = b.len() - 6;
        for e in b[..last].chunks_exact_mut(6) {
            e[4..6].copy_from_slice(&u16::MAX.to_le_bytes());
        }
    });
    let e = Edition::open(bytes).unwrap();
    let err = (0..e.concept_count())
        .find_map(|o| e.preferred_term(o).err())
        .expect("a preferred term past the heap");
    assert!(corrupt_in(&err, TermHeap), "{err}");
    let bytes = with_section(PreferredTermIndex, |b| b.truncate(b.len() - 6));
    let err = Edition::open(bytes).unwrap_err();
    assert!(err.to_string().contains("PreferredTermIndex"), "{err}");
    // A term past the heap, bad UTF-8 in the term heap.
    // (Truncated past the preferred terms' carriers, which open checks:
    // where the last entry of their index says they end. A synonym that
    // is no part of its concept's carrier lies after them.)
    let carriers_end = {
        let c = Container::open(tiny_bytes()).unwrap();
        let index = c.section(PreferredTermIndex).unwrap();
        let last = &index[index.len() - 6..];
        u32::from_le_bytes(last[..4].try_into().unwrap()) as usize
    };
    let bytes = with_section(TermHeap, |b| b.truncate(carriers_end + 1));
    let e = Edition::open(bytes).unwrap();
    let err = (0..e.concept_count())
        .find_map(|o| e.descriptions(o).err())
        .expect("a term past the truncated heap");
    assert!(corrupt_in(&err, TermHeap), "{err}");
    let bytes = with_section(TermHeap, |b| b.iter_mut().for_each(|c| *c = 0xFF));
    let e = Edition::open(bytes).unwrap();
    let err = e.descriptions(mi_index(&e)).unwrap_err();
    assert!(err.to_string().contains("TermHeap is corrupt"), "{err}");
    assert!(matches!(
        e.search("heart", 10),
        Err(StoreError::Corrupt { .. })
    ));
    // Verify catches what open does not read.
    let mut bytes = tiny_bytes().to_vec();
    let c = Container::open(tiny_bytes()).unwrap();
    let at = c.entry(TermHeap).unwrap().offset.get() as usize;
    bytes[at] ^= 1;
    let e = Edition::open(&bytes[..]).unwrap();
    let err = e.verify(|_| {}).unwrap_err();
    assert!(err.to_string().contains("TermHeap checksum"), "{err}");
}

/// Calls every accessor with every ordinal (and some beyond); only panics
/// matter, the results are ignored.
fn exercise<B: AsRef<[u8]>>(e: &Edition<B>) {
    let _ = e.identity();
    let _ = e.sections();
    let n = e.concept_count();
    for o in 0..n.saturating_add(2) {
        let _ = e.sctid(o);
        let _ = e.concept_at(o);
        let _ = e.descriptions(o);
        let _ = e.preferred_term(o);
        let _ = e.preferred_term_in(o, &[US, GB]);
        let _ = e.fsn(o, &[GB]);
        let _ = e.fsn(o, &[]);
        for list in [
            e.parents(o),
            e.children(o),
            e.ancestors(o),
            e.descendants(o),
        ]
        .into_iter()
        .flatten()
        {
            for x in list.iter() {
                let _ = e.sctid(x);
                let _ = e.subsumes(x, o);
            }
            let _ = list.contains(o);
        }
        let _ = e.subsumes(0, o);
        let _ = e.attributes(o);
        let _ = e.inbound(o);
        let _ = e.stated(o);
        let _ = e.concrete_values(o);
        if let Ok(Some((_, profile))) = e.description_profile(o) {
            for p in profile {
                if let Ok(rows) = e.acceptability_set(p.acceptability_set.get()) {
                    rows.for_each(drop);
                }
            }
        }
        if let Ok(rows) = e.description_rows(o) {
            for r in rows {
                let _ = (r.type_code(), r.language(), r.id(), r.active());
                let _ = (r.module_ordinal(), r.effective_time());
                if let Ok(codes) = e.acceptability_codes(r.ordinal) {
                    codes.for_each(drop);
                }
            }
        }
        let _ = e.concept_facts(o);
        if let Ok(rows) = e.concrete_links(o) {
            rows.for_each(|r| drop(r.value()));
        }
        if let Ok(links) = e.attribute_links(o) {
            links.for_each(drop);
        }
        if let Ok(links) = e.inbound_links(o) {
            links.for_each(drop);
        }
        let _ = e.attribute_type_sources(o);
        let _ = e.concrete_type_sources(o);
        if let Ok(id) = e.sctid(o) {
            let _ = e.concept(id);
            let _ = e.component_refsets(id);
            let _ = e.associations(id);
        }
        let every: Vec<u64> = e.refsets().map(|r| r.id).collect();
        let _ = e.association_sources(&[0, o, o.saturating_add(1)], &every);
        if let Ok(sources) = e.associations_to(o) {
            for a in sources {
                let _ = e.concept(a.source);
            }
        }
    }
    for d in 0..e.description_count().saturating_add(2) {
        let _ = e.description_at(d);
        let _ = e.acceptability(d);
        let _ = e.is_preferred_term(d);
        if let Ok(desc) = e.description_at(d) {
            let _ = e.description(desc.id);
        }
    }
    for id in [MI_PT, MI_FRENCH, 0, u64::MAX] {
        let _ = e.description(id);
    }
    let refsets: Vec<u64> = e.refsets().map(|r| r.id).collect();
    for r in refsets {
        let _ = e.refset(r).map(|r| r.field_names());
        if let Ok(members) = e.members(r) {
            for m in members {
                let _ = m.field(0);
                let _ = m.field_values().count();
                let _ = e.is_member(r, m.component);
            }
        }
        let _ = e.members_page(r, 1, 1);
        let _ = e.member_concepts(r);
        if let Ok(members) = e.members_iter(r) {
            members.for_each(drop);
        }
        if let Ok(table) = e.member_table(r) {
            for c in 0..table.columns() + 1 {
                let _ = table.dictionary(c);
                for i in 0..table.len() + 1 {
                    let _ = table.code(i, c);
                }
            }
            for i in 0..table.len() + 1 {
                let _ = (table.component(i), table.member(i));
                let _ = (table.module_code(i), table.time_code(i));
            }
            let _ = (table.modules().count(), table.times().count());
        }
        let _ = e.is_member(r, HEART);
    }
    for id in [OLD_MI, HEART, MI] {
        let _ = e.component_refsets(id);
        let _ = e.associations(id);
    }
    let all = SearchOptions {
        include_inactive: true,
        include_definitions: true,
        best_per_concept: true,
        ..SearchOptions::default()
    };
    for q in ["heart", "myo inf", "cardiac", "c", "--"] {
        let _ = e.search(q, 5);
        let _ = e.search_with(q, 5, &all);
    }
}

/// Every byte that carries information flipped, each opened and read:
/// the even positions in one test and the odd in another, so that the two
/// run side by side.
#[test]
fn no_byte_flip_panics_even() {
    no_byte_flip_panics(0);
}

#[test]
fn no_byte_flip_panics_odd() {
    no_byte_flip_panics(1);
}

fn no_byte_flip_panics(half: usize) {
    let original = tiny_bytes();
    exercise(&Edition::open(original).unwrap());
    // Every byte that carries information: the header, each section and
    // the trailer. Padding between them is zeros that no reader looks at
    // (a flip there is caught by `verify` only), so only a sample of it.
    let c = Container::open(original).unwrap();
    let mut positions: Vec<usize> = (0..HEADER_LEN).collect();
    for e in c.entries() {
        let start = e.offset.get() as usize;
        positions.extend(start..start + e.len.get() as usize);
    }
    positions.extend(c.header().table_offset.get() as usize..original.len());
    positions.extend((HEADER_LEN..original.len()).step_by(ALIGN as usize / 2 + 1));
    positions.sort_unstable();
    positions.dedup();

    let mut bytes = original.to_vec();
    let (mut opened, mut tried) = (0, 0);
    for &at in positions.iter().skip(half).step_by(2) {
        let before = bytes[at];
        // A flip of every bit, and a small change that keeps offsets and
        // ordinals plausible but wrong.
        for after in [before ^ 0xFF, before ^ 0x01] {
            bytes[at] = after;
            tried += 1;
            if let Ok(e) = Edition::open(&bytes[..]) {
                opened += 1;
                exercise(&e);
            }
        }
        bytes[at] = before;
    }
    // Most flips land in the big sections, which open does not read.
    assert!(opened > tried / 2, "{opened} of {tried}");
}

#[test]
fn errors_display_clearly() {
    let e = StoreError::Corrupt {
        section: SectionKind::Parents,
        detail: "x".into(),
    };
    assert_eq!(e.to_string(), "section Parents is corrupt: x");
    assert_eq!(
        StoreError::MissingMetadata("status").to_string(),
        "edition metadata has no \"status\" entry"
    );
    // A wrapped error's message is this one's; the chain does not repeat it.
    let e: StoreError = FormatError::BadMagic.into();
    assert_eq!(e.to_string(), FormatError::BadMagic.to_string());
    assert!(std::error::Error::source(&e).is_none());
}

#[test]
fn member_fields_split_on_tabs() {
    for fields in ["a\tb\t\tc", "x", "a\t", "\t", "\tlead", "ä\tß\t€"] {
        let m = crate::Member {
            refset: 1,
            component: 2,
            fields,
            active: true,
            module: None,
            effective_time: None,
        };
        let expected: Vec<&str> = fields.split('\t').collect();
        for i in 0..expected.len() + 2 {
            assert_eq!(m.field(i), expected.get(i).copied(), "{fields:?} {i}");
        }
        assert_eq!(m.field_values().collect::<Vec<_>>(), expected);
    }
    let empty = crate::Member {
        refset: 1,
        component: 2,
        fields: "",
        active: true,
        module: None,
        effective_time: None,
    };
    assert_eq!(empty.field(0), None);
    assert_eq!(empty.field_values().count(), 0);
}

/// A one-word query ranks from the first-words bitmap and the records'
/// lengths without reading terms, and a longer one reads only the terms
/// whose first word is the query's first; the key must be exactly the one
/// ranking the terms gives, which is what a file without the bitmap
/// (format 1.4) does. Every word and word prefix of every term, and every
/// pair of a term's words in both orders (the second also cut short), in
/// every mode.
#[test]
fn searches_rank_as_the_terms_do() {
    let mut t = TestEdition::tiny();
    let terms = [
        "Fever",
        "Fever.",
        "FEVER fever",
        "Fevers of unknown origin",
        "Feverish",
        "Low fever",
        "Fièvre",
        "fièvre légère",
        "Fever (finding)",
    ];
    for (i, term) in terms.into_iter().enumerate() {
        let concept = if i % 2 == 0 { FINDING } else { MI };
        let mut d = desc(
            4_000_000_011 + 100 * i as u64,
            concept,
            SYNONYM,
            term,
            &[(US, ACCEPTABLE)],
        );
        d.active = i != 3;
        t.descriptions.push(d);
    }
    let with = t.write();
    t.search_sections = false;
    let without = t.write();
    let (a, b) = (
        Edition::open(&with[..]).unwrap(),
        Edition::open(&without[..]).unwrap(),
    );
    assert!(a.present(SectionKind::WordFirstWords) && !b.present(SectionKind::WordFirstWords));

    let mut queries: Vec<String> = Vec::new();
    for d in &t.descriptions {
        for w in txmap_text::words(&txmap_text::fold(d.term)) {
            for end in w.char_indices().map(|(i, _)| i).skip(1).chain([w.len()]) {
                queries.push(w[..end].to_owned());
            }
        }
    }
    for d in &t.descriptions {
        let folded = txmap_text::fold(d.term);
        let ws: Vec<&str> = txmap_text::words(&folded).collect();
        for (i, a) in ws.iter().enumerate() {
            for b in &ws[i + 1..] {
                for (x, y) in [(a, b), (b, a)] {
                    queries.push(format!("{x} {y}"));
                    let cut = y.char_indices().nth(2).map_or(y.len(), |(at, _)| at);
                    queries.push(format!("{x} {}", &y[..cut]));
                }
            }
        }
    }
    queries.sort();
    queries.dedup();
    let mut tiers = std::collections::BTreeSet::new();
    let mut multi_word_tiers = std::collections::BTreeSet::new();
    for q in &queries {
        for mode in [MatchMode::Prefix, MatchMode::Words, MatchMode::LastPrefix] {
            for (inactive, definitions) in [(false, false), (true, true)] {
                let options = SearchOptions {
                    mode,
                    include_inactive: inactive,
                    include_definitions: definitions,
                    ..SearchOptions::default()
                };
                let key = |h: &SearchHit<'_>| (h.description.id, h.rank, h.preferred);
                let x: Vec<_> = a
                    .search_with(q, 1000, &options)
                    .unwrap()
                    .iter()
                    .map(key)
                    .collect();
                let y: Vec<_> = b
                    .search_with(q, 1000, &options)
                    .unwrap()
                    .iter()
                    .map(key)
                    .collect();
                assert_eq!(x, y, "{q:?} {mode:?} inactive {inactive}");
                if q.contains(' ') {
                    multi_word_tiers.extend(x.iter().map(|(_, r, _)| r.tier()));
                } else {
                    tiers.extend(x.iter().map(|(_, r, _)| r.tier()));
                }
                assert_eq!(
                    a.search_concepts(q, &options).unwrap(),
                    b.search_concepts(q, &options).unwrap(),
                    "{q:?} {mode:?}"
                );
            }
        }
    }
    // The cases the bitmap must tell apart all occurred.
    for tier in [
        MatchTier::Exact,
        MatchTier::StartsWith,
        MatchTier::AllWordPrefixes,
    ] {
        assert!(tiers.contains(&tier), "{tier:?} never ranked");
        assert!(
            multi_word_tiers.contains(&tier),
            "{tier:?} never ranked for a longer query"
        );
    }
}

/// `in_hierarchy` is the root and what descends from it: an orphan and
/// the concept below it, and an inactive concept, are not. A file with
/// the records' flag (1.6) and one without (which searches ancestors)
/// answer alike; the expected set is walked here from the test concepts'
/// parents.
#[test]
fn in_hierarchy_is_the_root_and_its_descendants_with_or_without_the_flag() {
    const ORPHAN: u64 = 5_000_001_000;
    const BELOW_ORPHAN: u64 = 5_000_002_001;
    let mut t = TestEdition::tiny();
    t.concepts.push(TestConcept {
        id: ORPHAN,
        active: true,
        defined: false,
        parents: vec![],
    });
    t.concepts.push(TestConcept {
        id: BELOW_ORPHAN,
        active: true,
        defined: false,
        parents: vec![ORPHAN],
    });
    t.concepts.sort_by_key(|c| c.id);
    let mut below = std::collections::BTreeSet::from([ROOT]);
    loop {
        let before = below.len();
        for c in &t.concepts {
            if c.parents.iter().any(|p| below.contains(p)) {
                below.insert(c.id);
            }
        }
        if below.len() == before {
            break;
        }
    }
    assert!(!below.contains(&ORPHAN) && !below.contains(&OLD_MI) && below.contains(&MI));
    let with = t.write();
    t.hierarchy_flags = false;
    let without = t.write();
    for bytes in [&with, &without] {
        let ed = Edition::open(&bytes[..]).unwrap();
        for c in &t.concepts {
            let o = ed.ordinal(c.id).unwrap();
            assert_eq!(
                ed.in_hierarchy(o).unwrap(),
                below.contains(&c.id),
                "{}",
                c.id
            );
        }
        assert!(ed.in_hierarchy(t.concepts.len() as u32).is_err());
    }
}

#[test]
fn member_stamps_give_each_members_module_and_time_and_a_damaged_one_is_an_error() {
    use SectionKind::*;
    let mut t = TestEdition::tiny();
    t.with_member_meta = true;
    let e = Edition::open(t.write()).unwrap();
    let refset = (e.refsets())
        .find(|r| r.member_count > 0)
        .expect("a refset with members")
        .id;
    let members = e.members(refset).unwrap();
    assert!(!members.is_empty());
    for m in &members {
        assert_eq!((m.module, m.effective_time), (Some(CORE), Some(20240101)));
    }
    // Stamps past `MemberMetaTable`: an error naming `MemberMeta`.
    let bytes = with_section_of(&t, MemberMeta, |b| b.fill(0xFF));
    let e = Edition::open(bytes).unwrap();
    let err = e.members(refset).unwrap_err();
    assert!(corrupt_in(&err, MemberMeta), "{err}");
    assert!(err.to_string().contains("stamp 65535"), "{err}");
    // A stamp whose module is past `MemberModules`: the same.
    let bytes = with_section_of(&t, MemberMetaTable, |b| b[..2].fill(0xFF));
    let e = Edition::open(bytes).unwrap();
    let err = e.members(refset).unwrap_err();
    assert!(corrupt_in(&err, MemberMeta), "{err}");
}

/// A description profile (format 6.1) is the distinct (type, language,
/// acceptability rows) of the concept's active descriptions, as its
/// description records give them; without the sections there is none;
/// and a damaged profile is refused on open or is an error where read.
#[test]
fn description_profiles_hold_each_concepts_active_descriptions() {
    use SectionKind::*;
    use std::collections::BTreeSet;
    let mut plain = TestEdition::tiny();
    plain.with_profiles = false;
    let plain = Edition::open(plain.write()).unwrap();
    assert!(plain.description_profile(0).unwrap().is_none());
    let t = TestEdition::tiny();
    assert!(t.with_profiles);
    let e = Edition::open(t.write()).unwrap();
    let rows_of = |set: u16| -> Vec<(u8, u8)> {
        (e.acceptability_set(set).unwrap())
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let mut with_inactive = 0;
    for o in 0..e.concept_count() {
        let mut want = BTreeSet::new();
        for r in e.description_rows(o).unwrap() {
            if !r.active() {
                with_inactive += 1;
                continue;
            }
            let rows: Vec<(u8, u8)> = (e.acceptability_codes(r.ordinal).unwrap())
                .collect::<Result<_, _>>()
                .unwrap();
            want.insert((r.type_code().unwrap(), r.language().unwrap(), rows));
        }
        let (_, profile) = e
            .description_profile(o)
            .unwrap()
            .expect("every concept numbered");
        let got: BTreeSet<_> = (profile.iter())
            .map(|p| (p.type_code, p.language, rows_of(p.acceptability_set.get())))
            .collect();
        assert_eq!(got, want, "concept {o}");
        assert_eq!(got.len(), profile.len(), "rows are distinct");
    }
    assert!(
        with_inactive > 0,
        "the edition has an inactive description to leave out"
    );
    assert!(e.description_profile(e.concept_count()).is_err());

    // A concept's number past the table: an error where it is read.
    let bytes = with_section_of(&t, ConceptDescriptionProfiles, |b| b.fill(200));
    let e = Edition::open(bytes).unwrap();
    let err = e.description_profile(0).unwrap_err();
    assert!(corrupt_in(&err, ConceptDescriptionProfiles), "{err}");
    // `NO_PROFILE`: the descriptions are read instead.
    let bytes = with_section_of(&t, ConceptDescriptionProfiles, |b| b.fill(0xFF));
    let e = Edition::open(bytes).unwrap();
    assert!(e.description_profile(0).unwrap().is_none());
    // A row's language or set past its table, offsets that run backwards,
    // a byte too few: refused on open.
    for (kind, edit) in [
        (
            DescriptionProfiles,
            Box::new(|b: &mut Vec<u8>| b[1] = 200) as Box<dyn Fn(&mut Vec<u8>)>,
        ),
        (
            DescriptionProfiles,
            Box::new(|b: &mut Vec<u8>| b[2..4].fill(0xFF)),
        ),
        (
            DescriptionProfilesIndex,
            Box::new(|b: &mut Vec<u8>| b[4..8].fill(0xFF)),
        ),
        (
            ConceptDescriptionProfiles,
            Box::new(|b: &mut Vec<u8>| {
                b.pop();
            }),
        ),
    ] {
        let err = Edition::open(with_section_of(&t, kind, edit)).unwrap_err();
        assert!(corrupt_in(&err, kind), "{kind:?}: {err}");
    }
    // One of the three sections missing: refused on open.
    let err = Edition::open(without_section(&t, DescriptionProfiles)).unwrap_err();
    assert!(corrupt_in(&err, ConceptDescriptionProfiles), "{err}");
}

/// `AssociationTargetBlocks` (format 6.1) narrows a target's search to its
/// block: the answers are those of a file without it, and a block index
/// that does not bound its targets' entries is an error, never a run
/// missed.
#[test]
fn target_blocks_answer_as_the_whole_search() {
    use SectionKind::*;
    let t = with_associations();
    assert!(t.with_target_blocks);
    let with = Edition::open(t.write()).unwrap();
    let mut plain = with_associations();
    plain.with_target_blocks = false;
    let without = Edition::open(plain.write()).unwrap();
    let n = with.concept_count();
    let every: Vec<u64> = with.refsets().map(|r| r.id).collect();
    let mut found = 0;
    for o in 0..n {
        let a: Vec<_> = with.associations_to(o).unwrap().collect();
        let b: Vec<_> = without.associations_to(o).unwrap().collect();
        assert_eq!(a, b, "concept {o}");
        found += a.len();
        let one = [o];
        assert_eq!(
            with.association_sources(&one, &every).unwrap(),
            without.association_sources(&one, &every).unwrap()
        );
    }
    assert!(found > 0);
    // A block that starts past its first entry, or ends before its last.
    for edit in [
        Box::new(|b: &mut Vec<u8>| b[0..4].copy_from_slice(&1u32.to_le_bytes()))
            as Box<dyn Fn(&mut Vec<u8>)>,
        Box::new(|b: &mut Vec<u8>| b[4..8].fill(0)),
        Box::new(|b: &mut Vec<u8>| b[4..8].fill(0xFF)),
    ] {
        let e = Edition::open(with_section_of(&t, AssociationTargetBlocks, edit)).unwrap();
        let mi = ord(&e, MI);
        let err = e.associations_to(mi).err().unwrap();
        assert!(corrupt_in(&err, AssociationTargetBlocks), "{err}");
    }
    // An index of the wrong length is refused on open.
    let bytes = with_section_of(&t, AssociationTargetBlocks, |b| b.extend([0; 4]));
    let err = Edition::open(bytes).unwrap_err();
    assert!(corrupt_in(&err, AssociationTargetBlocks), "{err}");
}
