//! End-to-end checks of generated releases: they are read back as an
//! importer would (by file name, header and tab-separated CRLF rows) and
//! checked against RF2's rules and the generator's promises.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::path::Path;

use txmap_rf2::sctid::{self, ComponentKind};
use txmap_synth::{ExtensionConfig, SynthConfig, SynthError, SynthSummary, generate};

const IS_A: &str = "116680003";
const FSN: &str = "900000000000003001";
const SYNONYM: &str = "900000000000013009";
const PREFERRED: &str = "900000000000548007";
const US: &str = "900000000000509007";
const GB: &str = "900000000000508004";
const INACTIVATION: &str = "900000000000489007";
const FINDING_SITE: &str = "363698007";

/// The kinds of file, with a distinctive part of the name and the exact
/// RF2 header.
const KINDS: &[(&str, &str, &str)] = &[
    (
        "concept",
        "sct2_Concept_Snapshot_",
        "id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId",
    ),
    (
        "description",
        "sct2_Description_Snapshot-en_",
        "id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\tcaseSignificanceId",
    ),
    (
        "definition",
        "sct2_TextDefinition_Snapshot-en_",
        "id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\tcaseSignificanceId",
    ),
    (
        "relationship",
        "sct2_Relationship_Snapshot_",
        "id\teffectiveTime\tactive\tmoduleId\tsourceId\tdestinationId\trelationshipGroup\ttypeId\tcharacteristicTypeId\tmodifierId",
    ),
    (
        "concrete",
        "sct2_RelationshipConcreteValues_Snapshot_",
        "id\teffectiveTime\tactive\tmoduleId\tsourceId\tvalue\trelationshipGroup\ttypeId\tcharacteristicTypeId\tmodifierId",
    ),
    (
        "language",
        "Language/der2_cRefset_LanguageSnapshot-en_",
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId",
    ),
    (
        "association",
        "Content/der2_cRefset_AssociationSnapshot_",
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\ttargetComponentId",
    ),
    (
        "simple",
        "Content/der2_Refset_SimpleSnapshot_",
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId",
    ),
    (
        "attribute",
        "Content/der2_cRefset_AttributeValueSnapshot_",
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tvalueId",
    ),
    (
        "simplemap",
        "Map/der2_sRefset_SimpleMapSnapshot_",
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tmapTarget",
    ),
    (
        "extmap",
        "Map/der2_iisssccRefset_ExtendedMapSnapshot_",
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tmapGroup\tmapPriority\tmapRule\tmapAdvice\tmapTarget\tcorrelationId\tmapCategoryId",
    ),
    (
        "moduledep",
        "Metadata/der2_ssRefset_ModuleDependencySnapshot_",
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tsourceEffectiveTime\ttargetEffectiveTime",
    ),
];

type Row = Vec<String>;

/// A release read back: rows (without header) per kind of file.
struct Release {
    tables: BTreeMap<&'static str, Vec<Row>>,
}

impl Release {
    fn load(dir: &Path, summary: &SynthSummary) -> Release {
        assert_eq!(summary.files.len(), KINDS.len());
        let mut tables = BTreeMap::new();
        for (rel, rows) in &summary.files {
            let (kind, _, header) = KINDS
                .iter()
                .find(|(_, part, _)| rel.contains(part))
                .unwrap_or_else(|| panic!("unexpected file {rel}"));
            assert!(
                rel.starts_with(&format!("{}/Snapshot/", summary.package)),
                "{rel}"
            );
            let text = fs::read_to_string(dir.join(rel)).expect("UTF-8 file");
            let parsed = parse(&text, header, rel);
            assert_eq!(parsed.len() as u64, *rows, "{rel}");
            tables.insert(*kind, parsed);
        }
        Release { tables }
    }

    fn t(&self, kind: &str) -> &[Row] {
        &self.tables[kind]
    }
}

/// Splits CRLF lines and tab fields, checking the header and that every
/// row has as many fields as it.
fn parse(text: &str, header: &str, name: &str) -> Vec<Row> {
    assert!(text.ends_with("\r\n"), "{name} must end with CRLF");
    let mut lines = text[..text.len() - 2].split("\r\n");
    assert_eq!(lines.next(), Some(header), "{name} header");
    let columns = header.split('\t').count();
    lines
        .map(|line| {
            assert!(
                !line.contains('\n') && !line.contains('\r'),
                "{name}: bare line break"
            );
            let row: Row = line.split('\t').map(str::to_string).collect();
            assert_eq!(row.len(), columns, "{name}: {line:?}");
            row
        })
        .collect()
}

fn generate_dir(config: &SynthConfig) -> (tempfile::TempDir, SynthSummary, Release) {
    let dir = tempfile::tempdir().expect("tempdir");
    let summary = generate(config, dir.path()).expect("generate");
    let release = Release::load(dir.path(), &summary);
    (dir, summary, release)
}

fn base_config() -> SynthConfig {
    SynthConfig::new(4000, 11)
}

fn ext_config() -> SynthConfig {
    let mut c = SynthConfig::new(600, 3);
    c.effective_time = 20250731;
    c.extension = Some(ExtensionConfig::new(4000, 11, 1_000_124));
    c
}

fn all_bytes(dir: &Path, summary: &SynthSummary) -> Vec<(String, Vec<u8>)> {
    summary
        .files
        .iter()
        .map(|(rel, _)| (rel.clone(), fs::read(dir.join(rel)).expect("read")))
        .collect()
}

#[test]
fn same_config_same_bytes_other_seed_other_bytes() {
    for config in [SynthConfig::new(1500, 7), {
        let mut c = SynthConfig::new(200, 9);
        c.effective_time = 20250731;
        c.extension = Some(ExtensionConfig::new(1500, 7, 1_000_124));
        c
    }] {
        let (a, sa, _) = generate_dir(&config);
        let (b, sb, _) = generate_dir(&config);
        assert_eq!(sa, sb);
        assert_eq!(all_bytes(a.path(), &sa), all_bytes(b.path(), &sb));
        let mut other = config.clone();
        other.seed += 1;
        let (c, sc, _) = generate_dir(&other);
        let (x, y) = (all_bytes(a.path(), &sa), all_bytes(c.path(), &sc));
        assert_eq!(x.len(), y.len());
        // Every file with content differs (the module dependency of an
        // extension too: its UUIDs come from the seed).
        for ((name, bx), (_, by)) in x.iter().zip(&y) {
            if bx.len() > 200 {
                assert_ne!(bx, by, "{name}");
            }
        }
    }
}

#[test]
fn layout_headers_and_counts() {
    let (_dir, summary, r) = generate_dir(&base_config());
    assert_eq!(summary.package, "SnomedCT_SyntheticRF2_SYNTH_20250131");
    assert!(
        summary.files[0]
            .0
            .ends_with("Snapshot/Terminology/sct2_Concept_Snapshot_INT_20250131.txt")
    );
    assert_eq!(summary.concepts, 4000);
    assert_eq!(r.t("concept").len(), 4000);
    let active = r.t("concept").iter().filter(|c| c[2] == "1").count() as u64;
    assert_eq!(active, summary.active_concepts);
    let share = active as f64 / 4000.0;
    assert!((0.65..0.75).contains(&share), "{share}");
    for kind in [
        "description",
        "definition",
        "relationship",
        "concrete",
        "language",
        "association",
        "simple",
        "attribute",
        "simplemap",
        "extmap",
        "moduledep",
    ] {
        assert!(!r.t(kind).is_empty(), "{kind} is empty");
    }
    assert_eq!(summary.descriptions, r.t("description").len() as u64);
    assert_eq!(summary.language_rows, r.t("language").len() as u64);
    // Roughly three descriptions per concept, two language rows each.
    let per_concept = summary.descriptions as f64 / 4000.0;
    assert!((2.5..3.5).contains(&per_concept), "{per_concept}");
    let lang =
        summary.language_rows as f64 / (summary.descriptions + summary.text_definitions) as f64;
    assert!((1.85..2.05).contains(&lang), "{lang}");
    // Module dependency: core module on model component module.
    let md = &r.t("moduledep")[0];
    assert_eq!(
        &md[3..8],
        [
            "900000000000207008",
            "900000000000534007",
            "900000000000012004",
            "20250131",
            "20250131"
        ]
    );
    // Member ids are lower-case 8-4-4-4-12 UUIDs, unique per file.
    for kind in [
        "language",
        "association",
        "simple",
        "attribute",
        "simplemap",
        "extmap",
        "moduledep",
    ] {
        let mut seen = HashSet::new();
        for row in r.t(kind) {
            let id = &row[0];
            let groups: Vec<usize> = id.split('-').map(str::len).collect();
            assert_eq!(groups, [8, 4, 4, 4, 12], "{id}");
            assert!(
                id.chars()
                    .all(|c| c == '-' || c.is_ascii_digit() || ('a'..='f').contains(&c)),
                "{id}"
            );
            assert!(seen.insert(id.clone()), "duplicate member id {id}");
        }
    }
}

/// Checks the id columns of every file: component ids of the right kind
/// and partition, unique within their file; referenced ids valid.
fn check_ids(r: &Release, namespace: Option<u32>, new_ids: impl Fn(u64) -> bool) {
    let partition = |id: u64| ((id / 10) % 100) as u8;
    let expect = |id: &str, kind: ComponentKind, what: &str| -> u64 {
        let (n, k) = sctid::parse(id.as_bytes()).unwrap_or_else(|e| panic!("{what} {id}: {e}"));
        assert_eq!(k, kind, "{what} {id}");
        n
    };
    for (file, kind) in [
        ("concept", ComponentKind::Concept),
        ("description", ComponentKind::Description),
        ("definition", ComponentKind::Description),
        ("relationship", ComponentKind::Relationship),
        ("concrete", ComponentKind::Relationship),
    ] {
        let mut seen = HashSet::new();
        for row in r.t(file) {
            let id = expect(&row[0], kind, file);
            assert!(seen.insert(id), "duplicate id {id} in {file}");
            if new_ids(id) {
                let base = match kind {
                    ComponentKind::Concept => 0,
                    ComponentKind::Description => 1,
                    ComponentKind::Relationship => 2,
                };
                match namespace {
                    None => assert_eq!(partition(id), base, "{id}"),
                    Some(ns) => {
                        assert_eq!(partition(id), 10 + base, "{id}");
                        assert_eq!((id / 1000) % 10_000_000, u64::from(ns), "{id}");
                    }
                }
            }
        }
    }
    let concept_columns: &[(&str, &[usize])] = &[
        ("concept", &[3, 4]),
        ("description", &[3, 4, 6, 8]),
        ("definition", &[3, 4, 6, 8]),
        ("relationship", &[3, 4, 5, 7, 8, 9]),
        ("concrete", &[3, 4, 7, 8, 9]),
        ("language", &[3, 4, 6]),
        ("association", &[3, 4, 5, 6]),
        ("simple", &[3, 4, 5]),
        ("attribute", &[3, 4, 5, 6]),
        ("simplemap", &[3, 4, 5]),
        ("extmap", &[3, 4, 5, 11, 12]),
        ("moduledep", &[3, 4, 5]),
    ];
    for (file, cols) in concept_columns {
        for row in r.t(file) {
            for &c in *cols {
                expect(&row[c], ComponentKind::Concept, file);
            }
        }
    }
    for row in r.t("language") {
        expect(
            &row[5],
            ComponentKind::Description,
            "language referencedComponentId",
        );
    }
}

#[test]
fn every_sctid_is_valid_with_the_right_partition() {
    let (_dir, _s, r) = generate_dir(&base_config());
    check_ids(&r, None, |_| true);
    // Synthetic concept ids never reuse the real ids of the metadata.
    let ids: HashSet<&str> = r.t("concept").iter().map(|c| c[0].as_str()).collect();
    for real in [
        "138875005",
        "404684003",
        "116680003",
        "900000000000207008",
        "1142139005",
        "447562003",
    ] {
        assert!(ids.contains(real), "{real} missing");
    }
}

/// Active is-a edges (source → destinations) of a release.
fn isa(r: &Release) -> HashMap<String, Vec<String>> {
    let mut parents: HashMap<String, Vec<String>> = HashMap::new();
    for row in r.t("relationship") {
        if row[2] == "1" && row[7] == IS_A {
            parents
                .entry(row[4].clone())
                .or_default()
                .push(row[5].clone());
        }
    }
    parents
}

/// The graph rules: active is-a only between existing active concepts,
/// no cycles, every active concept but the root has a parent, inactive
/// concepts have no active relationships, inactive concepts have an
/// indicator and associations to active concepts.
fn check_graph(r: &Release) -> usize {
    let status: HashMap<&str, bool> = r
        .t("concept")
        .iter()
        .map(|c| (c[0].as_str(), c[2] == "1"))
        .collect();
    let parents = isa(r);
    for (child, ps) in &parents {
        assert_eq!(
            status.get(child.as_str()),
            Some(&true),
            "is-a from inactive or unknown {child}"
        );
        for p in ps {
            assert_eq!(
                status.get(p.as_str()),
                Some(&true),
                "{child} has inactive or unknown parent {p}"
            );
        }
    }
    for (id, active) in &status {
        if *active && *id != "138875005" {
            assert!(parents.contains_key(*id), "active {id} has no parent");
        }
    }
    for file in ["relationship", "concrete"] {
        for row in r.t(file) {
            if row[2] == "1" {
                assert_eq!(
                    status.get(row[4].as_str()),
                    Some(&true),
                    "active {file} row from inactive {}",
                    row[4]
                );
                if file == "relationship" {
                    assert_eq!(
                        status.get(row[5].as_str()),
                        Some(&true),
                        "active relationship to inactive {}",
                        row[5]
                    );
                }
            }
        }
    }
    // Kahn's algorithm over child → parent edges.
    let mut indegree: HashMap<&str, usize> = HashMap::new();
    let mut children: HashMap<&str, Vec<&str>> = HashMap::new();
    for (child, ps) in &parents {
        indegree.entry(child.as_str()).or_insert(0);
        for p in ps {
            *indegree.entry(child.as_str()).or_insert(0) += 1;
            indegree.entry(p.as_str()).or_insert(0);
            children.entry(p.as_str()).or_default().push(child.as_str());
        }
    }
    let mut ready: Vec<&str> = indegree
        .iter()
        .filter(|(_, d)| **d == 0)
        .map(|(n, _)| *n)
        .collect();
    let mut seen = 0;
    while let Some(n) = ready.pop() {
        seen += 1;
        for &c in children.get(n).map(Vec::as_slice).unwrap_or(&[]) {
            let d = indegree.get_mut(c).expect("node");
            *d -= 1;
            if *d == 0 {
                ready.push(c);
            }
        }
    }
    assert_eq!(seen, indegree.len(), "is-a graph has a cycle");

    let indicated: HashSet<&str> = r
        .t("attribute")
        .iter()
        .filter(|a| a[2] == "1" && a[4] == INACTIVATION)
        .map(|a| a[5].as_str())
        .collect();
    let mut associated: HashSet<&str> = HashSet::new();
    for a in r.t("association") {
        if a[2] == "1" {
            assert_eq!(
                status.get(a[6].as_str()),
                Some(&true),
                "association target {} inactive",
                a[6]
            );
            associated.insert(a[5].as_str());
        }
    }
    for (id, active) in &status {
        if !active {
            assert!(
                indicated.contains(id),
                "inactive {id} without inactivation indicator"
            );
            assert!(associated.contains(id), "inactive {id} without association");
        }
    }
    status.values().filter(|a| **a).count()
}

#[test]
fn isa_graph_is_acyclic_with_active_parents() {
    let (_dir, summary, r) = generate_dir(&base_config());
    let active = check_graph(&r);
    assert_eq!(active as u64, summary.active_concepts);
    let parents = isa(&r);
    let edges: usize = parents.values().map(Vec::len).sum();
    let mean = edges as f64 / (active - 1) as f64;
    assert!((1.3..1.6).contains(&mean), "mean parents {mean}");
    assert!(
        summary.max_depth >= 8 && summary.max_depth <= 17,
        "{}",
        summary.max_depth
    );
}

/// FSN and preferred-term rules per active concept: exactly one active
/// FSN, exactly one preferred synonym in each dialect refset.
fn check_terms(r: &Release, dialects: &[&str]) {
    let status: HashMap<&str, bool> = r
        .t("concept")
        .iter()
        .map(|c| (c[0].as_str(), c[2] == "1"))
        .collect();
    let mut fsns: HashMap<&str, usize> = HashMap::new();
    let mut desc_of: HashMap<&str, (&str, &str, bool)> = HashMap::new();
    let mut active_fsn_terms = HashSet::new();
    for d in r.t("description") {
        assert!(
            status.contains_key(d[4].as_str()),
            "description of unknown concept {}",
            d[4]
        );
        assert_eq!(d[5], "en");
        assert!(!d[7].is_empty() && d[7].trim() == d[7], "{:?}", d[7]);
        desc_of.insert(d[0].as_str(), (d[4].as_str(), d[6].as_str(), d[2] == "1"));
        if d[2] == "1" && d[6] == FSN {
            *fsns.entry(d[4].as_str()).or_default() += 1;
            assert!(
                d[7].ends_with(')') && d[7].contains(" ("),
                "FSN without tag {:?}",
                d[7]
            );
            assert!(
                active_fsn_terms.insert(d[7].as_str()),
                "duplicate FSN {:?}",
                d[7]
            );
        }
    }
    let mut preferred: HashMap<(&str, &str), usize> = HashMap::new();
    for l in r.t("language") {
        if l[2] != "1" || l[6] != PREFERRED {
            continue;
        }
        if let Some(&(concept, type_id, active)) = desc_of.get(l[5].as_str())
            && active
            && type_id == SYNONYM
        {
            *preferred.entry((concept, l[4].as_str())).or_default() += 1;
        }
    }
    for (id, active) in &status {
        if *active {
            assert_eq!(fsns.get(id), Some(&1), "{id} active FSNs");
            for refset in dialects {
                assert_eq!(
                    preferred.get(&(*id, *refset)),
                    Some(&1),
                    "{id} preferred synonyms in {refset}"
                );
            }
        }
    }
}

#[test]
fn active_concepts_have_one_fsn_and_one_preferred_term_per_dialect() {
    let (_dir, _s, r) = generate_dir(&base_config());
    check_terms(&r, &[US, GB]);
    // Realistic text: semantic tags, accents, case-sensitive terms and
    // US/GB pairs are all present.
    let terms: Vec<&str> = r.t("description").iter().map(|d| d[7].as_str()).collect();
    for tag in [
        "(disorder)",
        "(finding)",
        "(procedure)",
        "(body structure)",
        "(substance)",
        "(organism)",
    ] {
        assert!(terms.iter().any(|t| t.ends_with(tag)), "no {tag}");
    }
    assert!(terms.iter().any(|t| !t.is_ascii()), "no accented term");
    assert!(
        r.t("description")
            .iter()
            .any(|d| d[8] == "900000000000017005"),
        "no case-sensitive term"
    );
    let us_only = r.t("language").iter().filter(|l| l[4] == US).count();
    let gb_only = r.t("language").iter().filter(|l| l[4] == GB).count();
    assert!(us_only > 0 && gb_only > 0);
}

#[test]
fn attributes_point_into_the_right_hierarchy() {
    let (_dir, _s, r) = generate_dir(&base_config());
    let fsn: HashMap<&str, &str> = r
        .t("description")
        .iter()
        .filter(|d| d[6] == FSN && d[2] == "1")
        .map(|d| (d[4].as_str(), d[7].as_str()))
        .collect();
    let mut sites = 0;
    let mut groups = BTreeSet::new();
    for row in r.t("relationship") {
        if row[2] == "1" && row[7] == FINDING_SITE {
            sites += 1;
            let dest = fsn[row[5].as_str()];
            assert!(dest.ends_with("(body structure)"), "finding site → {dest}");
            groups.insert(row[6].clone());
        }
    }
    assert!(sites > 100);
    assert!(groups.len() >= 3, "{groups:?}");
    let values: Vec<&str> = r.t("concrete").iter().map(|c| c[5].as_str()).collect();
    for v in &values {
        let number = v
            .strip_prefix('#')
            .is_some_and(|n| n.parse::<f64>().is_ok());
        let string = v.len() >= 2 && v.starts_with('"') && v.ends_with('"');
        assert!(number || string, "{v}");
    }
    for expected in ["#1", "#250", "#0.5"] {
        assert!(values.contains(&expected), "no {expected}");
    }
    assert!(values.iter().any(|v| v.starts_with('"')), "no string value");
}

#[test]
fn extension_overrides_have_later_effective_times() {
    let (_b, base_summary, base) = generate_dir(&base_config());
    let (_e, summary, ext) = generate_dir(&ext_config());
    assert_eq!(
        summary.package,
        "SnomedCT_SyntheticExtensionRF2_SYNTH_1000124_20250731"
    );
    assert!(
        summary.files[0]
            .0
            .ends_with("sct2_Concept_Snapshot_1000124_20250731.txt")
    );
    let overrides = summary.extension.clone().expect("extension summary");
    assert!(overrides.inactivated_concepts >= 1);
    assert!(overrides.changed_descriptions >= 1);
    assert!(overrides.added_parents >= 1);
    assert_eq!(summary.concepts, 600 + 2 + overrides.inactivated_concepts);
    assert!(base_summary.concepts > 0);

    let base_ids: HashSet<&str> = ["concept", "description", "relationship", "concrete"]
        .iter()
        .flat_map(|k| base.t(k).iter().map(|r| r[0].as_str()))
        .collect();
    check_ids(&ext, Some(1_000_124), |id| {
        !base_ids.contains(id.to_string().as_str())
    });
    let module = summary.module_id.to_string();
    for kind in [
        "concept",
        "description",
        "relationship",
        "concrete",
        "language",
        "association",
        "attribute",
        "moduledep",
    ] {
        let base_et: HashMap<&str, &str> = base
            .t(kind)
            .iter()
            .map(|r| (r[0].as_str(), r[1].as_str()))
            .collect();
        for row in ext.t(kind) {
            assert_eq!(row[3], module, "{kind} row outside the extension module");
            assert_eq!(row[1], "20250731");
            if let Some(old) = base_et.get(row[0].as_str()) {
                assert!(
                    row[1].as_str() > *old,
                    "{kind} {} not later than base",
                    row[0]
                );
            }
        }
    }
    // Overrides really reuse base ids: inactivated concepts, a re-termed
    // description, retired relationships.
    let base_terms: HashMap<&str, &str> = base
        .t("description")
        .iter()
        .map(|d| (d[0].as_str(), d[7].as_str()))
        .collect();
    let retermed = ext
        .t("description")
        .iter()
        .filter(|d| base_terms.get(d[0].as_str()).is_some_and(|t| *t != d[7]))
        .count();
    assert_eq!(retermed as u64, overrides.changed_descriptions);
    let reused = ext
        .t("concept")
        .iter()
        .filter(|c| base_ids.contains(c[0].as_str()))
        .count();
    assert_eq!(reused as u64, overrides.inactivated_concepts);
    for md in ext.t("moduledep") {
        assert_eq!(md[7], "20250131", "target effective time is the base's");
    }
    let targets: BTreeSet<&str> = ext.t("moduledep").iter().map(|m| m[5].as_str()).collect();
    assert_eq!(
        targets,
        BTreeSet::from(["900000000000012004", "900000000000207008"])
    );
}

/// Layers `top` over `base`: per file and id, the later effective time wins.
fn layer(base: &Release, top: &Release) -> Release {
    let mut tables = BTreeMap::new();
    for (kind, rows) in &base.tables {
        let mut by_id: BTreeMap<String, Row> = BTreeMap::new();
        for row in rows.iter().chain(top.t(kind)) {
            match by_id.get(&row[0]) {
                Some(old) if old[1] >= row[1] => {}
                _ => {
                    by_id.insert(row[0].clone(), row.clone());
                }
            }
        }
        tables.insert(*kind, by_id.into_values().collect());
    }
    Release { tables }
}

#[test]
fn layered_extension_is_consistent() {
    let (_b, _bs, base) = generate_dir(&base_config());
    let (_e, summary, ext) = generate_dir(&ext_config());
    let merged = layer(&base, &ext);
    check_graph(&merged);
    check_terms(&merged, &[US]);
    // The extension has its own language refset next to US English.
    let refset = ext
        .t("description")
        .iter()
        .find(|d| d[6] == FSN && d[7].contains("English language reference set"))
        .map(|d| d[4].as_str())
        .expect("extension language refset concept");
    let used: BTreeSet<&str> = ext.t("language").iter().map(|l| l[4].as_str()).collect();
    assert_eq!(used, BTreeSet::from([US, refset]));
    assert_ne!(summary.module_id.to_string(), refset);
    // The added parents are in the layered graph.
    let parents = isa(&merged);
    let added = ext
        .t("relationship")
        .iter()
        .filter(|r| r[7] == IS_A && r[2] == "1" && base.t("concept").iter().any(|c| c[0] == r[4]))
        .count();
    assert!(added >= 1);
    assert!(parents.values().map(Vec::len).sum::<usize>() > 0);
}

#[test]
fn zip_output_round_trips() {
    let config = SynthConfig::new(1200, 5);
    let dir = tempfile::tempdir().expect("tempdir");
    let zip_path = dir.path().join("out/release.zip");
    let summary = generate(&config, &zip_path).expect("zip");
    let plain = dir.path().join("plain");
    let plain_summary = generate(&config, &plain).expect("dir");
    assert_eq!(summary, plain_summary);
    // Nothing but the archive is left next to it.
    let siblings: Vec<_> = fs::read_dir(dir.path().join("out"))
        .expect("ls")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(siblings, ["release.zip"]);

    let mut archive = zip::ZipArchive::new(fs::File::open(&zip_path).expect("open")).expect("zip");
    let names: Vec<String> = archive
        .file_names()
        .map(|n| n.expect("entry name").into_owned())
        .collect();
    let expected: Vec<String> = summary.files.iter().map(|(n, _)| n.clone()).collect();
    assert_eq!(
        names.iter().collect::<BTreeSet<_>>(),
        expected.iter().collect::<BTreeSet<_>>()
    );
    for name in &expected {
        let mut entry = archive.by_name(name).expect("entry");
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).expect("read");
        assert_eq!(bytes, fs::read(plain.join(name)).expect("plain"), "{name}");
    }
    // Reproducible archive bytes.
    let again = dir.path().join("again.zip");
    generate(&config, &again).expect("zip again");
    assert_eq!(
        fs::read(&zip_path).expect("a"),
        fs::read(&again).expect("b")
    );
}

#[test]
fn bad_configurations_are_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut cases = vec![SynthConfig::new(10, 1)];
    let mut bad_date = SynthConfig::new(2000, 1);
    bad_date.effective_time = 20250230;
    cases.push(bad_date);
    let mut not_later = ext_config();
    not_later.effective_time = 20250131;
    cases.push(not_later);
    let mut bad_ns = ext_config();
    if let Some(e) = bad_ns.extension.as_mut() {
        e.namespace = 123;
    }
    cases.push(bad_ns);
    let mut small_base = ext_config();
    if let Some(e) = small_base.extension.as_mut() {
        e.base_concepts = 3;
    }
    cases.push(small_base);
    for config in cases {
        match generate(&config, dir.path()) {
            Err(e @ SynthError::InvalidConfig { .. }) => assert!(!e.to_string().is_empty()),
            other => panic!("{config:?}: {other:?}"),
        }
    }
    // The smallest release is just the metadata.
    let min = SynthConfig::new(txmap_synth::min_concepts(), 1);
    let (_d, s, r) = generate_dir(&min);
    assert_eq!(s.concepts as usize, txmap_synth::min_concepts());
    check_graph(&r);
    check_terms(&r, &[US, GB]);
    // A file where the output directory should be is an I/O error.
    let file = dir.path().join("file");
    fs::write(&file, b"x").expect("write");
    assert!(matches!(
        generate(&SynthConfig::new(500, 1), &file),
        Err(SynthError::Io { .. })
    ));
}

/// International scale; run with
/// `cargo test --release -p txmap-synth -- --ignored --nocapture`.
#[test]
#[ignore]
fn international_scale() {
    let dir = tempfile::tempdir().expect("tempdir");
    let start = std::time::Instant::now();
    let s = generate(
        &SynthConfig::new(txmap_synth::INTERNATIONAL_CONCEPTS, 1),
        dir.path(),
    )
    .expect("generate");
    println!("{s:#?}\ngenerated in {:.2?}", start.elapsed());
    assert!((360_000..390_000).contains(&s.active_concepts));
    assert!((1_500_000..1_750_000).contains(&s.descriptions));
    assert!((3_000_000..3_400_000).contains(&s.language_rows));
    assert!(s.relationships >= 3_000_000);
    assert!(s.max_children >= 1000);
}
