//! Imports the HL7 terminology test edition (../shared/tx-ecosystem) and
//! checks facts read from its RF2 files. Skipped, with a notice, when the
//! suite is not beside the checkout.

mod common;

use std::path::PathBuf;

use txmap_import::{ImportOptions, Quiet};
use txmap_store::Edition;

fn snomed_dir() -> Option<PathBuf> {
    let base = std::env::var_os("TX_ECOSYSTEM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tx-ecosystem")
        });
    let dir = base.join("tx-source/snomed");
    if dir.is_dir() {
        Some(dir)
    } else {
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
}

#[test]
fn hl7_test_edition() {
    let Some(dir) = snomed_dir() else { return };
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("hl7.txmap");
    let report =
        txmap_import::import(&ImportOptions::new(vec![dir.clone()], file.clone()), &Quiet).unwrap();
    assert_eq!(
        report.identity.version_uri,
        "http://snomed.info/xsct/31000003106/version/20250909"
    );
    let bytes = std::fs::read(&file).unwrap();
    let e = Edition::open(bytes).unwrap();
    e.verify(|_| {}).unwrap();
    assert_eq!(
        e.identity().version_uri,
        "http://snomed.info/xsct/31000003106/version/20250909"
    );
    // The concept file has 2,258 rows.
    assert_eq!(e.concept_count(), 2258);
    assert_eq!(e.identity().default_language_refset, 900000000000509007);

    // A few facts read from the RF2 files by eye...
    let finding = e.ordinal(404684003).unwrap();
    assert_eq!(e.preferred_term(finding).unwrap(), Some("Clinical finding"));
    let fsn = e.fsn(finding, &[900000000000509007]).unwrap().unwrap();
    assert_eq!(fsn.term, "Clinical finding (finding)");
    assert_eq!(
        e.sctid(e.parents(finding).unwrap().first().unwrap())
            .unwrap(),
        138875005
    );
    // der2_cRefset_AssociationSnapshot: 28273000 is a member of 734139008
    // with target 372166008.
    let assoc = e.associations(28273000).unwrap();
    assert!(
        assoc
            .iter()
            .any(|a| a.refset == 734139008 && a.target == 372166008),
        "{assoc:?}"
    );

    // ...and every component compared with a naive reading of the files.
    common::compare(&[dir], &std::fs::read(&file).unwrap());
}
