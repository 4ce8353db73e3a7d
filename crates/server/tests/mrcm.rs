//! The concept model rules (`fhir::mrcm`) on the HL7 test edition, whose
//! release carries the International MRCM domain and range refsets:
//! expressions inside the model pass, an attribute outside its domain and
//! a value outside its range are each reported. Skipped with a notice when
//! the suite's sources are absent.

#[macro_use]
mod common;

use txmap_ecl_eval::Budget;
use txmap_server::fhir::{expression, mrcm};

#[test]
fn domains_and_ranges_of_the_international_mrcm() {
    let Some(release) = common::tx_ecosystem("tx-source/snomed", "") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![release], dir.path().join("hl7.txmap")),
        &txmap_import::Quiet,
    )
    .unwrap();
    let state = common::serve(dir.path(), "editions = [\"hl7.txmap\"]\n");
    let ed = &state.editions.default_edition().unwrap().edition;
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
