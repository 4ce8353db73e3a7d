//! The concept model rules (`txmap_snomed::mrcm`) on the HL7 test edition, whose
//! release carries the International MRCM domain and range refsets:
//! expressions inside the model pass, an attribute outside its domain and
//! a value outside its range are each reported. Skipped with a notice when
//! the suite's sources are absent.

use std::path::PathBuf;

use txmap_ecl_eval::Budget;
use txmap_snomed::{expression, mrcm};
use txmap_store::Edition;

/// The HL7 suite's SNOMED CT release (`$TX_ECOSYSTEM_DIR`, else
/// `../shared/tx-ecosystem`), or `None` with a notice; under CI
/// (`CI=true`) its absence fails the test.
fn hl7_release() -> Option<PathBuf> {
    let base = std::env::var_os("TX_ECOSYSTEM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tx-ecosystem")
        });
    let dir = base.join("tx-source/snomed");
    if dir.exists() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing under CI",
        dir.display()
    );
    eprintln!(
        "skipped: {} not found (set TX_ECOSYSTEM_DIR)",
        dir.display()
    );
    None
}

#[test]
fn domains_and_ranges_of_the_international_mrcm() {
    let Some(release) = hl7_release() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![release], dir.path().join("hl7.txmap")),
        &txmap_import::Quiet,
    )
    .unwrap();
    let ed = &Edition::open(std::fs::read(dir.path().join("hl7.txmap")).unwrap()).unwrap();
    let rules = mrcm::Rules::load(ed).unwrap();
    let check = |text: &str| {
        let x = expression::parse(text).unwrap();
        mrcm::violation(ed, &rules, &x, &Budget::default()).unwrap()
    };

    // The suite's good expression: a finding site that is a body structure.
    assert_eq!(check("128241005:{363698007=181268008}"), None);
    // |Laterality| is not allowed on |Repair of tendon of hand|.
    let why = check("367430006:272741003=24028007").expect("a domain violation");
    assert!(
        why.contains("272741003") && why.contains("not allowed"),
        "{why}"
    );
    // A finding site must be a body structure, not a disorder.
    let why = check("128241005:{363698007=128241005}").expect("a range violation");
    assert!(
        why.contains("not in the range") && why.contains("442083009"),
        "{why}"
    );
}
