//! A naive reader of RF2 releases and a comparison of everything it finds
//! with what the store returns for an imported edition. The naive reader
//! layers packages itself (for each component id, the row with the latest
//! effectiveTime wins, later packages winning ties) with plain hash maps.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use txmap_format::schema::{ConceptRecord, concept_flags};
use txmap_format::{Container, SectionKind};
use txmap_rf2::Release;
use txmap_rf2::kind::FileKind;
use txmap_rf2::parse::{ConceptRow, ConcreteValueRow, DescriptionRow, RefsetRow, RelationshipRow};
use txmap_store::Edition;
use zerocopy::FromBytes;

const IS_A: u64 = 116680003;
const ROOT: u64 = 138875005;
const INFERRED: u64 = 900000000000011006;
const ADDITIONAL: u64 = 900000000000227009;

/// A component version: (effectiveTime, package index, value).
type Versions<K, V> = HashMap<K, (u32, u32, V)>;
/// (source, type, group, value, active).
type ConcreteIn = (u64, u64, u32, String, bool);
/// (refset, description, acceptability, active).
type LanguageIn = (u64, u64, u64, bool);
/// (refset, component, fields, active, file kind).
type MemberIn = (u64, u64, String, bool, FileKind);

/// What the naive reader keeps: latest version of each component.
#[derive(Default)]
struct Naive {
    concepts: HashMap<u64, (u32, u32, ConceptRow)>,
    descriptions: HashMap<u64, (u32, u32, Desc)>,
    relationships: HashMap<u64, (u32, u32, RelationshipRow)>,
    concrete: Versions<u64, ConcreteIn>,
    language: Versions<[u8; 16], LanguageIn>,
    members: Versions<[u8; 16], MemberIn>,
}

#[derive(Clone, Debug, PartialEq)]
struct Desc {
    concept: u64,
    active: bool,
    module: u64,
    effective_time: u32,
    language: String,
    type_id: u64,
    term: String,
    case_significance: u64,
}

fn keep<K: std::hash::Hash + Eq, V>(
    map: &mut HashMap<K, (u32, u32, V)>,
    id: K,
    time: u32,
    source: u32,
    v: V,
) {
    match map.get(&id) {
        Some((t, s, _)) if (*t, *s) > (time, source) => {}
        _ => {
            map.insert(id, (time, source, v));
        }
    }
}

fn read_naive(sources: &[PathBuf]) -> Naive {
    let mut n = Naive::default();
    for (source, path) in sources.iter().enumerate() {
        let source = source as u32;
        let mut release = Release::open(path).unwrap();
        for file in release.files().to_vec() {
            let mut rows = release.open_file(&file).unwrap();
            while let Some(row) = rows.next_row().unwrap() {
                match file.kind {
                    FileKind::Concept => {
                        let c = ConceptRow::parse(&row).unwrap();
                        keep(&mut n.concepts, c.id, c.effective_time, source, c);
                    }
                    FileKind::Description | FileKind::TextDefinition => {
                        let d = DescriptionRow::parse(&row).unwrap();
                        let v = Desc {
                            concept: d.concept,
                            active: d.active,
                            module: d.module,
                            effective_time: d.effective_time,
                            language: d.language.to_owned(),
                            type_id: d.type_id,
                            term: d.term.to_owned(),
                            case_significance: d.case_significance,
                        };
                        keep(&mut n.descriptions, d.id, d.effective_time, source, v);
                    }
                    FileKind::Relationship => {
                        let r = RelationshipRow::parse(&row).unwrap();
                        keep(&mut n.relationships, r.id, r.effective_time, source, r);
                    }
                    FileKind::RelationshipConcreteValues => {
                        let r = ConcreteValueRow::parse(&row).unwrap();
                        let v = (r.source, r.type_id, r.group, r.value.to_owned(), r.active);
                        keep(&mut n.concrete, r.id, r.effective_time, source, v);
                    }
                    FileKind::Language => {
                        let r = RefsetRow::parse(&row).unwrap();
                        let acc: u64 = std::str::from_utf8(r.extra).unwrap().parse().unwrap();
                        let v = (r.refset, r.referenced_component, acc, r.active);
                        keep(&mut n.language, r.id, r.effective_time, source, v);
                    }
                    FileKind::StatedRelationship => {}
                    kind => {
                        let r = RefsetRow::parse(&row).unwrap();
                        let v = (
                            r.refset,
                            r.referenced_component,
                            String::from_utf8(r.extra.to_vec()).unwrap(),
                            r.active,
                            kind,
                        );
                        keep(&mut n.members, r.id, r.effective_time, source, v);
                    }
                }
            }
        }
    }
    n
}

/// The concepts in the order FORMAT.md gives them ordinals: a pre-order
/// walk down the active is-a relationships from the root, children in
/// SCTID order, each concept where it is first reached; then from each
/// concept without an active parent, in SCTID order; then whatever is
/// left (cycles), in SCTID order.
fn depth_first(n: &Naive) -> Vec<u64> {
    let mut children: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    let mut has_parent = BTreeSet::new();
    for (_, _, r) in n.relationships.values() {
        if r.active
            && r.type_id == IS_A
            && r.source != r.destination
            && n.concepts.contains_key(&r.source)
            && n.concepts.contains_key(&r.destination)
        {
            children.entry(r.destination).or_default().insert(r.source);
            has_parent.insert(r.source);
        }
    }
    let all: BTreeSet<u64> = n.concepts.keys().copied().collect();
    let starts = (all.contains(&ROOT).then_some(ROOT).into_iter())
        .chain(all.iter().copied().filter(|c| !has_parent.contains(c)))
        .chain(all.iter().copied());
    let (mut order, mut seen) = (Vec::new(), BTreeSet::new());
    for start in starts {
        let mut stack = vec![start];
        while let Some(c) = stack.pop() {
            if !seen.insert(c) {
                continue;
            }
            order.push(c);
            let kids = children.get(&c).into_iter().flatten().rev();
            stack.extend(kids.filter(|k| !seen.contains(*k)));
        }
    }
    order
}

/// Compares everything the naive reader found with the store.
pub fn compare(sources: &[PathBuf], bytes: &[u8]) {
    let n = read_naive(sources);
    let e = Edition::open(bytes).unwrap();
    e.verify(|_| {}).unwrap();

    // Concepts, active or not.
    assert_eq!(e.concept_count() as usize, n.concepts.len());
    for (id, (_, _, c)) in &n.concepts {
        let s = e
            .concept(*id)
            .unwrap()
            .unwrap_or_else(|| panic!("concept {id} missing"));
        assert_eq!(s.active, c.active, "{id}");
        assert_eq!(s.module, c.module, "{id}");
        assert_eq!(s.effective_time, c.effective_time, "{id}");
        assert_eq!(s.defined, c.definition_status == 900000000000073002, "{id}");
    }

    // Numbered depth-first down the is-a hierarchy (FORMAT.md,
    // "Ordinals").
    let numbered: Vec<u64> = (0..e.concept_count())
        .map(|o| e.sctid(o).unwrap())
        .collect();
    assert_eq!(
        numbered,
        depth_first(&n),
        "concepts not numbered depth-first"
    );

    // Descriptions, active or not, with their active language rows.
    assert_eq!(e.description_count() as usize, n.descriptions.len());
    let mut acceptability: HashMap<u64, BTreeSet<(u64, u64)>> = HashMap::new();
    for (_, _, (refset, desc, acc, active)) in n.language.values() {
        if *active {
            acceptability
                .entry(*desc)
                .or_default()
                .insert((*refset, *acc));
        }
    }
    for (id, (_, _, d)) in &n.descriptions {
        let s = e
            .description(*id)
            .unwrap()
            .unwrap_or_else(|| panic!("description {id} missing"));
        let got = Desc {
            concept: s.concept,
            active: s.active,
            module: s.module,
            effective_time: s.effective_time,
            language: s.language.to_owned(),
            type_id: s.type_id,
            term: s.term.to_owned(),
            case_significance: s.case_significance,
        };
        assert_eq!(&got, d, "description {id}");
        let acc: BTreeSet<(u64, u64)> = e.acceptability(s.ordinal).unwrap().into_iter().collect();
        assert_eq!(
            acc,
            acceptability.remove(id).unwrap_or_default(),
            "acceptability of {id}"
        );
        let listed = e.descriptions(e.ordinal(d.concept).unwrap()).unwrap();
        assert!(
            listed.iter().any(|x| x.id == *id),
            "{id} not listed under its concept"
        );
    }

    // Relationships: is-a as parents, the rest as attributes.
    let mut parents: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    let mut attributes: BTreeMap<u64, Vec<(u64, u64, u16)>> = BTreeMap::new();
    for (_, _, r) in n.relationships.values() {
        if !r.active || !(r.characteristic_type == INFERRED || r.characteristic_type == ADDITIONAL)
        {
            continue;
        }
        if r.type_id == IS_A {
            parents.entry(r.source).or_default().insert(r.destination);
        } else {
            attributes.entry(r.source).or_default().push((
                r.type_id,
                r.destination,
                r.group as u16,
            ));
        }
    }
    let ids: Vec<u64> = {
        let mut v: Vec<u64> = n.concepts.keys().copied().collect();
        v.sort();
        v
    };
    let sctids =
        |o: Vec<u32>| -> BTreeSet<u64> { o.into_iter().map(|o| e.sctid(o).unwrap()).collect() };
    for &id in &ids {
        let o = e.ordinal(id).unwrap();
        assert_eq!(
            sctids(e.parents(o).unwrap().to_vec()),
            parents.get(&id).cloned().unwrap_or_default(),
            "parents of {id}"
        );
        let mut want = attributes.get(&id).cloned().unwrap_or_default();
        want.sort();
        let mut got: Vec<(u64, u64, u16)> = e
            .attributes(o)
            .unwrap()
            .iter()
            .map(|r| (r.type_id, r.target, r.group))
            .collect();
        got.sort();
        assert_eq!(got, want, "attributes of {id}");
    }
    // A type index against (source, type) pairs: for each type, the
    // concepts having it.
    let check_type_index = |pairs: &mut dyn Iterator<Item = (u64, u64)>,
                            sources: &dyn Fn(u32) -> Option<Vec<u32>>,
                            what: &str| {
        let mut by_type: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
        for (source, ty) in pairs {
            by_type.entry(ty).or_default().insert(source);
        }
        for &id in &ids {
            let got = sources(e.ordinal(id).unwrap()).expect("a type index");
            assert_eq!(
                sctids(got),
                by_type.remove(&id).unwrap_or_default(),
                "concepts with {what} of type {id}"
            );
        }
    };
    check_type_index(
        &mut attributes
            .iter()
            .flat_map(|(s, rels)| rels.iter().map(|r| (*s, r.0))),
        &|t| e.attribute_type_sources(t).unwrap().map(|l| l.to_vec()),
        "an attribute",
    );

    // Ancestors against a naive closure; descendants against its transpose.
    let mut memo: HashMap<u64, BTreeSet<u64>> = HashMap::new();
    let container = Container::open(bytes).unwrap();
    let concepts =
        <[ConceptRecord]>::ref_from_bytes(container.require(SectionKind::Concepts).unwrap())
            .unwrap();
    fn naive_ancestors(
        id: u64,
        parents: &BTreeMap<u64, BTreeSet<u64>>,
        memo: &mut HashMap<u64, BTreeSet<u64>>,
    ) -> BTreeSet<u64> {
        if let Some(a) = memo.get(&id) {
            return a.clone();
        }
        let mut out = BTreeSet::new();
        for &p in parents.get(&id).into_iter().flatten() {
            out.insert(p);
            out.extend(naive_ancestors(p, parents, memo));
        }
        memo.insert(id, out.clone());
        out
    }
    let mut descendants: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
    for &id in &ids {
        let anc = naive_ancestors(id, &parents, &mut memo);
        for &a in &anc {
            descendants.entry(a).or_default().insert(id);
        }
        let o = e.ordinal(id).unwrap();
        assert_eq!(
            sctids(e.ancestors(o).unwrap().to_vec()),
            anc,
            "ancestors of {id}"
        );
        for &a in &anc {
            assert!(e.subsumes(e.ordinal(a).unwrap(), o).unwrap());
        }
        // And no to everything else (a spread of concepts, itself among
        // them once).
        let step = (ids.len() / 64).max(1);
        for (i, &other) in ids.iter().enumerate() {
            if i % step != 0 && other != id {
                continue;
            }
            let want = other == id || anc.contains(&other);
            let got = e.subsumes(e.ordinal(other).unwrap(), o).unwrap();
            assert_eq!(got, want, "{other} subsumes {id}");
        }
        // The records' hierarchy flag: the root and what descends from it,
        // in the record itself (a reader without it would search the
        // ancestors and agree anyway) and as the store answers.
        let below = id == ROOT || anc.contains(&ROOT);
        let record = &concepts[o as usize];
        assert_eq!(
            record.flags & concept_flags::IN_HIERARCHY != 0,
            below,
            "IN_HIERARCHY of {id}"
        );
        assert_eq!(e.in_hierarchy(o).unwrap(), below, "in_hierarchy of {id}");
    }
    for &id in &ids {
        let o = e.ordinal(id).unwrap();
        assert_eq!(
            sctids(e.descendants(o).unwrap().to_vec()),
            descendants.remove(&id).unwrap_or_default(),
            "descendants of {id}"
        );
    }

    // Concrete values.
    let mut concrete: BTreeMap<u64, Vec<(u64, u16, String)>> = BTreeMap::new();
    for (_, _, (source, ty, group, value, active)) in n.concrete.values() {
        if *active {
            concrete
                .entry(*source)
                .or_default()
                .push((*ty, *group as u16, value.clone()));
        }
    }
    for &id in &ids {
        let mut got: Vec<(u64, u16, String)> = e
            .concrete_values(e.ordinal(id).unwrap())
            .unwrap()
            .iter()
            .map(|v| (v.type_id, v.group, v.value.to_owned()))
            .collect();
        got.sort();
        let mut want = concrete.get(&id).cloned().unwrap_or_default();
        want.sort();
        assert_eq!(got, want, "concrete values of {id}");
    }
    check_type_index(
        &mut concrete
            .iter()
            .flat_map(|(s, values)| values.iter().map(|v| (*s, v.0))),
        &|t| e.concrete_type_sources(t).unwrap().map(|l| l.to_vec()),
        "a concrete value",
    );

    // Refset members, both directions, and historical associations.
    let mut by_refset: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    let mut by_component: BTreeMap<u64, Vec<(u64, String)>> = BTreeMap::new();
    let mut associations: BTreeMap<u64, Vec<(u64, u64)>> = BTreeMap::new();
    for (_, _, (refset, component, fields, active, kind)) in n.members.values() {
        if !*active {
            continue;
        }
        by_refset
            .entry(*refset)
            .or_default()
            .push((*component, fields.clone()));
        by_component
            .entry(*component)
            .or_default()
            .push((*refset, fields.clone()));
        if *kind == FileKind::Association {
            associations
                .entry(*component)
                .or_default()
                .push((*refset, fields.parse().unwrap()));
        }
    }
    assert!(!by_refset.is_empty());
    for (refset, mut want) in by_refset {
        let mut got: Vec<(u64, String)> = e
            .members(refset)
            .unwrap()
            .iter()
            .map(|m| (m.component, m.fields.to_owned()))
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "members of {refset}");
        for (component, _) in &want {
            assert!(e.is_member(refset, *component).unwrap());
        }
    }
    for (component, mut want) in by_component {
        let mut got: Vec<(u64, String)> = e
            .component_refsets(component)
            .unwrap()
            .iter()
            .map(|m| (m.refset, m.fields.to_owned()))
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "refsets of {component}");
    }
    assert!(!associations.is_empty());
    for (concept, mut want) in associations {
        let mut got: Vec<(u64, u64)> = e
            .associations(concept)
            .unwrap()
            .iter()
            .map(|a| (a.refset, a.target))
            .collect();
        got.sort();
        want.sort();
        assert_eq!(got, want, "associations of {concept}");
    }

    // Every active concept's preferred term is an active synonym of it, and
    // a word search finds the concept by it.
    let mut searched = 0;
    for &id in ids.iter().step_by(37) {
        let o = e.ordinal(id).unwrap();
        let Some(pt) = e.preferred_term(o).unwrap() else {
            continue;
        };
        let ds = e.descriptions(o).unwrap();
        assert!(
            ds.iter().any(|d| d.active && d.term == pt),
            "{id}: preferred term {pt:?} is not an active term"
        );
        if e.concept_at(o).unwrap().active {
            let hits = e.search(pt, 1000).unwrap();
            assert!(
                hits.iter().any(|h| h.description.concept == id),
                "search for {pt:?} misses {id}"
            );
            searched += 1;
        }
    }
    assert!(searched > 10);
}
