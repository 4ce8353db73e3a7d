//! A synthetic RxNorm release compiled and read back: the concepts,
//! displays, term types, sources, relationships, semantic types and
//! suppression of the RRF files (read here on their own) against the
//! file and the provider; and malformed rows named by file and line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use txmap_codesystems::ImportOptions;
use txmap_codesystems::rxnorm::{URL, import};
use txmap_codesystems::{CodeSystemFile, Compiled, synth};
use txmap_terminology::provider::CodeSystemProvider;
use txmap_terminology::valueset::FilterDef;

fn rrf(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(str::to_owned).collect())
        .collect()
}

fn values(cs: &Compiled<Vec<u8>>, id: u32, name: &str) -> BTreeSet<String> {
    cs.properties(id)
        .iter()
        .filter(|p| p.code == name)
        .map(|p| p.value.as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_file_holds_what_the_rrf_files_say() {
    let dir = tempfile::tempdir().unwrap();
    let release = dir.path().join("RxNorm_full");
    synth::write_rxnorm(&release, 60).unwrap();
    let out = dir.path().join("rxnorm.txmap");
    let report = import(&release, &out, &ImportOptions::default()).unwrap();
    assert_eq!(report.version, "08042025", "from RXNSAB's 20AA_250804F");
    let file = CodeSystemFile::open(std::fs::read(&out).unwrap()).unwrap();
    let cs = Compiled::new(file.into());
    assert_eq!(cs.url(), URL);
    assert_eq!(cs.version(), Some("08042025"));

    let conso = rrf(&release.join("rrf/RXNCONSO.RRF"));
    // Codes: the RXCUIs with an RXNORM atom, and no others.
    let rxnorm: Vec<&Vec<String>> = conso.iter().filter(|r| r[11] == "RXNORM").collect();
    let codes: BTreeSet<&String> = rxnorm.iter().map(|r| &r[0]).collect();
    assert_eq!(cs.len(), codes.len());
    for r in &conso {
        assert_eq!(
            cs.locate(&r[0]).is_some(),
            codes.contains(&r[0]),
            "{}",
            r[0]
        );
    }
    // The display: the first primary term type, else PSN, else SY.
    let rank = |tty: &str| match tty {
        "SY" | "TMSY" => 2,
        "PSN" => 1,
        _ => 0,
    };
    let mut best: BTreeMap<&String, (u8, &String)> = BTreeMap::new();
    let mut ttys: BTreeMap<&String, BTreeSet<String>> = BTreeMap::new();
    let mut live: BTreeSet<&String> = BTreeSet::new();
    for r in &rxnorm {
        let e = best.entry(&r[0]).or_insert((u8::MAX, &r[14]));
        if rank(&r[12]) < e.0 {
            *e = (rank(&r[12]), &r[14]);
        }
        ttys.entry(&r[0]).or_default().insert(r[12].clone());
        if r[16] == "N" {
            live.insert(&r[0]);
        }
    }
    let mut sabs: BTreeMap<&String, BTreeSet<String>> = BTreeMap::new();
    for r in conso.iter().filter(|r| codes.contains(&r[0])) {
        sabs.entry(&r[0]).or_default().insert(r[11].clone());
    }
    for code in &codes {
        let id = cs.locate(code).unwrap().id;
        assert_eq!(cs.display(id), Some(best[code].1.as_str()), "{code}");
        assert_eq!(&values(&cs, id, "TTY"), &ttys[code], "{code}");
        assert_eq!(&values(&cs, id, "SAB"), &sabs[code], "{code}");
        assert_eq!(cs.status(id).inactive, !live.contains(code), "{code}");
        let designations: BTreeSet<String> = cs
            .designations(id)
            .iter()
            .map(|d| d.value.clone())
            .collect();
        for r in rxnorm.iter().filter(|r| &&r[0] == code) {
            assert!(designations.contains(&r[14]));
        }
    }
    assert!(
        codes.len() > live.len(),
        "the release has suppressed concepts"
    );

    // Relationships: RXCUI2 has RELA RXCUI1.
    let mut rels: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for r in rrf(&release.join("rrf/RXNREL.RRF")) {
        if r[9] == "RXNORM" && codes.contains(&r[0]) && codes.contains(&r[4]) {
            rels.entry((r[4].clone(), r[7].clone()))
                .or_default()
                .insert(r[0].clone());
        }
    }
    assert!(!rels.is_empty());
    for ((code, rela), targets) in &rels {
        let id = cs.locate(code).unwrap().id;
        assert_eq!(&values(&cs, id, rela), targets, "{code} {rela}");
    }
    for r in rrf(&release.join("rrf/RXNSTY.RRF")) {
        let id = cs.locate(&r[0]).unwrap().id;
        assert!(values(&cs, id, "STY").contains(&r[3]));
    }

    // A filter on a stored property, against the RRF.
    let def = FilterDef {
        property: "TTY".into(),
        op: "=".into(),
        value: Some("SCD".into()),
    };
    let scd: BTreeSet<String> = cs
        .native_filters(&[def], None)
        .unwrap()
        .unwrap()
        .members()
        .unwrap()
        .into_iter()
        .map(|id| cs.code(id).into_owned())
        .collect();
    let want: BTreeSet<String> = rxnorm
        .iter()
        .filter(|r| r[12] == "SCD")
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(scd, want);
    // RxNorm codes are case-sensitive digits: nothing found by case.
    assert!(cs.case_sensitive());
}

#[test]
fn malformed_rows_and_missing_files_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rx.txmap");
    let e = import(dir.path(), &out, &ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("RXNCONSO.RRF: not found"), "{e}");

    let release = dir.path().join("release");
    synth::write_rxnorm(&release, 5).unwrap();
    let conso = release.join("rrf/RXNCONSO.RRF");
    let text = std::fs::read_to_string(&conso).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    lines[3] = "123|ENG|short|";
    std::fs::write(&conso, lines.join("\n") + "\n").unwrap();
    let e = import(&release, &out, &ImportOptions::default()).unwrap_err();
    assert!(e.to_string().contains("RXNCONSO.RRF: line 4:"), "{e}");
    assert!(!out.exists());

    // No RXNSAB.RRF and no --rxnorm-version: no version to give.
    std::fs::write(&conso, text).unwrap();
    std::fs::remove_file(release.join("rrf/RXNSAB.RRF")).unwrap();
    let e = import(&release, &out, &ImportOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("cannot tell the release version"),
        "{e}"
    );
    let options = ImportOptions {
        version: Some("01012030".into()),
        temp_dir: None,
    };
    assert_eq!(
        import(&release, &out, &options).unwrap().version,
        "01012030"
    );
}
