//! A synthetic LOINC release compiled and read back: every term, part,
//! answer list and hierarchy row of the CSV files (read here on their own,
//! by column name) against the file; read and mapped files give the same
//! answers; the LOINC filters against sets computed from the CSV; bad
//! releases and damaged files give errors, never panics.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::{Path, PathBuf};

use txmap_codesystems::ImportOptions;
use txmap_codesystems::{CodeSystemError, CodeSystemFile, Compiled, synth};
use txmap_format::schema::cs_flags;
use txmap_load::{LoadMode, Loader};
use txmap_terminology::provider::CodeSystemProvider;
use txmap_terminology::valueset::FilterDef;

const TERMS: u32 = 600;

/// One CSV file as rows of column name → value.
fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut r = csv::Reader::from_path(path).unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            headers
                .iter()
                .cloned()
                .zip(rec.iter().map(str::to_owned))
                .collect()
        })
        .collect()
}

struct Fixture {
    _dir: tempfile::TempDir,
    release: PathBuf,
    file: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("Loinc_2.99");
    synth::write_release(&release, synth::Shape { terms: TERMS }).unwrap();
    let file = dir.path().join("loinc.txmap");
    let report =
        txmap_codesystems::loinc::import(&release, &file, &ImportOptions::default()).unwrap();
    assert_eq!(
        report.version, "2.99",
        "the version comes from the folder name"
    );
    assert_eq!(report.terms, u64::from(TERMS));
    assert!(report.absent.is_empty(), "{:?}", report.absent);
    Fixture {
        _dir: dir,
        release,
        file,
    }
}

fn open(f: &Fixture) -> CodeSystemFile<Vec<u8>> {
    CodeSystemFile::open(std::fs::read(&f.file).unwrap()).unwrap()
}

fn ord(cs: &CodeSystemFile<Vec<u8>>, code: &str) -> u32 {
    cs.locate(code)
        .unwrap()
        .unwrap_or_else(|| panic!("{code} not found"))
}

fn props(cs: &CodeSystemFile<Vec<u8>>, o: u32, name: &str) -> Vec<String> {
    let index = cs.name_index(name);
    cs.properties(o)
        .unwrap()
        .iter()
        .filter(|p| Some(p.property.get()) == index)
        .map(|p| cs.text(p.value).unwrap().to_owned())
        .collect()
}

#[test]
fn every_row_of_the_release_is_in_the_file() {
    let f = fixture();
    let cs = open(&f);
    assert_eq!(cs.meta("url"), "http://loinc.org");
    assert_eq!(cs.meta("version"), "2.99");

    // Codes are sorted, so ordinals are a binary search.
    let codes: Vec<String> = (0..cs.len())
        .map(|o| cs.code(o).unwrap().to_owned())
        .collect();
    assert!(codes.windows(2).all(|w| w[0].as_bytes() < w[1].as_bytes()));

    let table = rows(&f.release.join("LoincTable/Loinc.csv"));
    assert_eq!(table.len(), TERMS as usize);
    for row in &table {
        let o = ord(&cs, &row["LOINC_NUM"]);
        assert_eq!(
            cs.display(o).unwrap(),
            Some(row["LONG_COMMON_NAME"].as_str())
        );
        let flags = cs.concept(o).unwrap().flags;
        assert_eq!(
            flags & cs_flags::INACTIVE != 0,
            row["STATUS"] == "DEPRECATED"
        );
        assert_eq!(
            flags & cs_flags::DEPRECATED != 0,
            row["STATUS"] == "DISCOURAGED"
        );
        assert_eq!(props(&cs, o, "STATUS"), [row["STATUS"].clone()]);
        assert_eq!(props(&cs, o, "CLASSTYPE"), [row["CLASSTYPE"].clone()]);
        let copyright = if row["EXTERNAL_COPYRIGHT_NOTICE"].is_empty() {
            "LOINC"
        } else {
            "3rdParty"
        };
        assert_eq!(props(&cs, o, "copyright"), [copyright]);
        let designations: BTreeSet<(String, String)> = cs
            .designations(o)
            .unwrap()
            .iter()
            .map(|d| {
                (
                    cs.name(d.use_.get()).unwrap().to_owned(),
                    cs.text(d.value).unwrap().to_owned(),
                )
            })
            .collect();
        assert!(designations.contains(&("SHORTNAME".into(), row["SHORTNAME"].clone())));
    }

    // Each term's parts, by the link's property URI.
    let links = rows(
        &f.release
            .join("AccessoryFiles/PartFile/LoincPartLink_Primary.csv"),
    );
    let mut expected: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    for l in &links {
        let property = l["Property"].rsplit('/').next().unwrap().to_owned();
        expected
            .entry((l["LoincNumber"].clone(), property))
            .or_default()
            .push(l["PartNumber"].clone());
    }
    for ((term, property), parts) in &expected {
        assert_eq!(
            &props(&cs, ord(&cs, term), property),
            parts,
            "{term} {property}"
        );
    }
    for p in rows(&f.release.join("AccessoryFiles/PartFile/Part.csv")) {
        let o = ord(&cs, &p["PartNumber"]);
        assert_eq!(cs.display(o).unwrap(), Some(p["PartName"].as_str()));
    }

    // Answer lists: their answers in sequence, and each answer's lists.
    let answers = rows(&f.release.join("AccessoryFiles/AnswerFile/AnswerList.csv"));
    let mut lists: BTreeMap<String, Vec<(u32, String)>> = BTreeMap::new();
    for a in &answers {
        lists.entry(a["AnswerListId"].clone()).or_default().push((
            a["SequenceNumber"].parse().unwrap(),
            a["AnswerStringId"].clone(),
        ));
    }
    for (list, mut members) in lists {
        members.sort();
        let want: Vec<String> = members.iter().map(|(_, a)| a.clone()).collect();
        assert_eq!(props(&cs, ord(&cs, &list), "Answer"), want);
        for a in &want {
            assert!(props(&cs, ord(&cs, a), "AnswerList").contains(&list));
        }
    }

    // The hierarchy: each row's parent, children in row order.
    let hierarchy = rows(
        &f.release
            .join("AccessoryFiles/ComponentHierarchyBySystem/ComponentHierarchyBySystem.csv"),
    );
    let mut children: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for h in &hierarchy {
        if h["IMMEDIATE_PARENT"].is_empty() {
            continue;
        }
        let (c, p) = (ord(&cs, &h["CODE"]), ord(&cs, &h["IMMEDIATE_PARENT"]));
        assert!(cs.parents(c).unwrap().contains(&p));
        children
            .entry(h["IMMEDIATE_PARENT"].clone())
            .or_default()
            .push(h["CODE"].clone());
    }
    for (parent, want) in children {
        let got: Vec<String> = cs
            .children(ord(&cs, &parent))
            .unwrap()
            .iter()
            .map(|&c| cs.code(c).unwrap().to_owned())
            .collect();
        assert_eq!(got, want, "children of {parent}");
    }
}

#[test]
fn read_and_mapped_files_answer_alike() {
    let f = fixture();
    let read = Loader::new().load(&f.file, LoadMode::Read).unwrap();
    let mapped = Loader::new().load(&f.file, LoadMode::Mmap).unwrap();
    assert!(!read.mapped);
    assert!(
        mapped.mapped,
        "the mapping fell back: {:?}",
        mapped.fallback
    );
    let a = Compiled::new(CodeSystemFile::open(read.bytes).unwrap().into());
    let b = Compiled::new(CodeSystemFile::open(mapped.bytes).unwrap().into());
    assert_eq!(a.len(), b.len());
    for id in 0..a.len() as u32 {
        assert_eq!(a.code(id), b.code(id));
        assert_eq!(a.display(id), b.display(id));
        assert_eq!(a.properties(id), b.properties(id));
        assert_eq!(a.designations(id), b.designations(id));
        assert_eq!(a.parents(id), b.parents(id));
        assert_eq!(a.children(id), b.children(id));
        assert_eq!(a.status(id), b.status(id));
    }
}

fn members(l: &Compiled<Vec<u8>>, property: &str, op: &str, value: &str) -> BTreeSet<String> {
    let def = FilterDef {
        property: property.into(),
        op: op.into(),
        value: Some(value.into()),
    };
    let native = l.native_filters(&[def], None).unwrap().unwrap();
    let list = native.members().unwrap();
    for &id in &list {
        assert!(native.matches(id).unwrap());
    }
    list.into_iter().map(|id| l.code(id).into_owned()).collect()
}

fn set<'a>(codes: impl IntoIterator<Item = &'a String>) -> BTreeSet<String> {
    codes.into_iter().cloned().collect()
}

#[test]
fn loinc_filters_match_the_release() {
    let f = fixture();
    let l = Compiled::new(open(&f).into());
    let table = rows(&f.release.join("LoincTable/Loinc.csv"));
    let links = rows(
        &f.release
            .join("AccessoryFiles/PartFile/LoincPartLink_Primary.csv"),
    );

    // A part property by part code and by part name (any case).
    let component = &table[7]["COMPONENT"];
    let by_name = set(table
        .iter()
        .filter(|r| &r["COMPONENT"] == component)
        .map(|r| &r["LOINC_NUM"]));
    let part = links
        .iter()
        .find(|k| &k["PartName"] == component && k["PartTypeName"] == "COMPONENT")
        .unwrap()["PartNumber"]
        .clone();
    assert!(!by_name.is_empty());
    assert_eq!(members(&l, "COMPONENT", "=", &part), by_name);
    assert_eq!(
        members(&l, "COMPONENT", "=", &component.to_uppercase()),
        by_name
    );
    let doc = set(table
        .iter()
        .filter(|r| r["SCALE_TYP"] == "Doc")
        .map(|r| &r["LOINC_NUM"]));
    assert_eq!(members(&l, "SCALE_TYP", "=", "DOC"), doc);

    // CLASS by regex over the class text.
    let re = regex::Regex::new("^(?:CHEM|HEM/.*)$").unwrap();
    let classes = set(table
        .iter()
        .filter(|r| re.is_match(&r["CLASS"]))
        .map(|r| &r["LOINC_NUM"]));
    assert!(!classes.is_empty());
    assert_eq!(members(&l, "CLASS", "regex", "CHEM|HEM/.*"), classes);

    // Generic property filters.
    let deprecated = set(table
        .iter()
        .filter(|r| r["STATUS"] == "DEPRECATED")
        .map(|r| &r["LOINC_NUM"]));
    assert!(!deprecated.is_empty());
    assert_eq!(members(&l, "STATUS", "=", "DEPRECATED"), deprecated);
    let retired = set(table
        .iter()
        .filter(|r| r["STATUS"] == "DEPRECATED" || r["STATUS"] == "DISCOURAGED")
        .map(|r| &r["LOINC_NUM"]));
    assert!(retired.len() > deprecated.len());
    assert_eq!(
        members(&l, "STATUS", "in", "DEPRECATED, DISCOURAGED"),
        retired
    );
    let third = set(table
        .iter()
        .filter(|r| !r["EXTERNAL_COPYRIGHT_NOTICE"].is_empty())
        .map(|r| &r["LOINC_NUM"]));
    assert_eq!(members(&l, "copyright", "=", "3rdParty"), third);

    // Answer lists: LIST, and answers-for by list and by term.
    let answers = rows(&f.release.join("AccessoryFiles/AnswerFile/AnswerList.csv"));
    let list = answers[3]["AnswerListId"].clone();
    let in_list = set(answers
        .iter()
        .filter(|a| a["AnswerListId"] == list)
        .map(|a| &a["AnswerStringId"]));
    assert_eq!(members(&l, "LIST", "=", &list), in_list);
    assert_eq!(members(&l, "answers-for", "=", &list), in_list);
    let link = rows(
        &f.release
            .join("AccessoryFiles/AnswerFile/LoincAnswerListLink.csv"),
    );
    let term = &link[2]["LoincNumber"];
    let lists: HashSet<&String> = link
        .iter()
        .filter(|k| &k["LoincNumber"] == term)
        .map(|k| &k["AnswerListId"])
        .collect();
    let for_term = set(answers
        .iter()
        .filter(|a| lists.contains(&a["AnswerListId"]))
        .map(|a| &a["AnswerStringId"]));
    assert!(!for_term.is_empty());
    assert_eq!(members(&l, "answers-for", "=", term), for_term);
    let with_lists = set(link.iter().map(|k| &k["LoincNumber"]));
    assert_eq!(members(&l, "answer-list", "exists", "true"), with_lists);

    // The hierarchy: parent = X is X's children; is-a reaches the terms.
    let hierarchy = rows(
        &f.release
            .join("AccessoryFiles/ComponentHierarchyBySystem/ComponentHierarchyBySystem.csv"),
    );
    let root = hierarchy[0]["CODE"].clone();
    let class = hierarchy[1]["CODE"].clone();
    let under_class = set(hierarchy
        .iter()
        .filter(|h| h["IMMEDIATE_PARENT"] == class)
        .map(|h| &h["CODE"]));
    assert_eq!(members(&l, "parent", "=", &class), under_class);
    let everything = members(&l, "concept", "is-a", &root);
    for r in &table {
        assert!(everything.contains(&r["LOINC_NUM"]));
    }
    assert_eq!(members(&l, "parent", "=", "LP0-0"), BTreeSet::new());
}

#[test]
fn bad_releases_are_errors_that_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.txmap");
    let opts = ImportOptions {
        version: Some("2.99".into()),
        temp_dir: None,
    };

    // No Loinc.csv.
    let e = txmap_codesystems::loinc::import(dir.path(), &out, &opts).unwrap_err();
    assert!(matches!(e, CodeSystemError::MissingFile(_)), "{e}");

    // No version, from neither the folder nor the options.
    let release = dir.path().join("release");
    synth::write_release(&release, synth::Shape { terms: 20 }).unwrap();
    let e =
        txmap_codesystems::loinc::import(&release, &out, &ImportOptions::default()).unwrap_err();
    assert!(matches!(e, CodeSystemError::NoVersion(_)), "{e}");

    // A row with a field too few.
    let table = release.join("LoincTable/Loinc.csv");
    let text = std::fs::read_to_string(&table).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let cut = lines[5].rfind(',').unwrap();
    lines[5].truncate(cut);
    std::fs::write(&table, lines.join("\r\n")).unwrap();
    let e = txmap_codesystems::loinc::import(&release, &out, &opts).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("Loinc.csv: line 6:"), "{msg}");
    assert!(!out.exists(), "a failed import left a file");

    // A header without a column txmap needs.
    std::fs::write(
        &table,
        text.replacen("\"LONG_COMMON_NAME\"", "\"LONG_NAME\"", 1),
    )
    .unwrap();
    let e = txmap_codesystems::loinc::import(&release, &out, &opts).unwrap_err();
    assert!(
        e.to_string().contains("no column \"LONG_COMMON_NAME\""),
        "{e}"
    );
    assert!(!out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

#[test]
fn damaged_files_are_errors_not_panics() {
    let f = fixture();
    let good = std::fs::read(&f.file).unwrap();
    let l = Compiled::new(CodeSystemFile::open(good.clone()).unwrap().into());
    let probe = |bytes: Vec<u8>| -> bool {
        let Ok(cs) = CodeSystemFile::open(bytes) else {
            return false;
        };
        let failed = cs.verify(|_| {}).is_err();
        let l = Compiled::new(cs.into());
        // Every accessor answers something, whatever the bytes.
        for id in (0..l.len() as u32).step_by(7) {
            let _ = (
                l.code(id),
                l.display(id),
                l.properties(id),
                l.designations(id),
            );
            let _ = (l.parents(id), l.children(id), l.status(id));
        }
        let _ = l.locate("10007-3");
        failed
    };
    assert!(!probe(good.clone()));
    // A byte flipped every 997 bytes, one at a time: open refuses or
    // verify fails, and nothing panics.
    for at in (0..good.len()).step_by(997) {
        let mut bad = good.clone();
        bad[at] ^= 0x5A;
        let opened = CodeSystemFile::open(bad.clone()).is_ok();
        assert!(!opened || probe(bad), "a flip at {at} passed verification");
    }
    // Truncated files do not open.
    for len in [0, 100, 4096, good.len() / 2, good.len() - 1] {
        assert!(CodeSystemFile::open(good[..len].to_vec()).is_err());
    }
    assert!(l.len() > TERMS as usize);
}

#[test]
fn an_edition_is_not_a_code_system_file() {
    let dir = tempfile::tempdir().unwrap();
    let rf2 = dir.path().join("rf2");
    txmap_synth::generate(&txmap_synth::SynthConfig::new(300, 1), &rf2).unwrap();
    let file = dir.path().join("e.txmap");
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![rf2], file.clone()),
        &txmap_import::Quiet,
    )
    .unwrap();
    let e = CodeSystemFile::open(std::fs::read(&file).unwrap()).unwrap_err();
    assert!(matches!(e, CodeSystemError::NotACodeSystem { .. }), "{e}");
}

#[test]
fn the_version_comes_from_loincs_folder_name() {
    use txmap_codesystems::loinc::version_from_path;
    assert_eq!(
        version_from_path(Path::new("/x/Loinc_2.82")),
        Some("2.82".into())
    );
    assert_eq!(
        version_from_path(Path::new("/x/LOINC_2.80_Text/y")),
        Some("2.80".into())
    );
    assert_eq!(version_from_path(Path::new("/x/loinc")), None);
    assert_eq!(version_from_path(Path::new("/x/Loinc_latest")), None);
}

#[test]
fn the_layout_holds_every_code_system_section() {
    let kinds: Vec<_> = txmap_format::SectionKind::ALL
        .iter()
        .filter(|k| k.is_code_system())
        .collect();
    assert_eq!(kinds.len(), txmap_codesystems::file::LAYOUT.len());
    for k in kinds {
        assert!(txmap_codesystems::file::LAYOUT.contains(k), "{k:?}");
    }
}
