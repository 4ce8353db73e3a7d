//! ISO 3166 against its data file; UCUM, BCP-47 and media types as
//! grammars: what they derive and what they refuse,
//! the examples taken from UCUM's specification and RFC 5646, the names
//! from the registry file read here on its own; and hostile codes answered
//! at once.

use std::collections::HashMap;
use std::time::Instant;

use txmap_builtin::{Bcp47, Ucum};
use txmap_terminology::grammar::Grammar;

#[test]
fn ucum_derives_units_and_refuses_the_rest() {
    let u = Ucum::embedded();
    assert_eq!(u.version(), Some("2.2"));
    // UCUM §§ 2–6 and appendix examples.
    for code in [
        "mg/dL",
        "kg.m/s2",
        "mm[Hg]",
        "10*3/uL",
        "%",
        "/min",
        "{score}",
        "mg/dL{total}",
        "m2",
        "[in_i]",
        "Cel",
        "mL/(24.h)",
        "umol/L",
    ] {
        let c = u.concept(code).unwrap_or_else(|| panic!("{code} refused"));
        assert_eq!(c.code, code);
        assert_eq!(c.display, code);
    }
    for code in [
        "kgXX", "mg/", "", " mg", "mg ", "m//s", "(m", "m)", "[in_i", "mg/dL}",
    ] {
        assert!(u.concept(code).is_none(), "{code:?} accepted");
    }
    // Case matters: `kg` is the kilogram, `KG` nothing (`MG` would be the megagauss).
    assert!(u.concept("KG").is_none());
}

#[test]
fn ucum_gives_the_analysis_and_the_canonical_unit() {
    let c = Ucum::embedded().concept("mg/dL").unwrap();
    let analysis = &c.designations[0].value;
    assert!(
        analysis.contains("milligram") && analysis.contains("deciliter"),
        "{analysis}"
    );
    let canonical = |code: &str| {
        Ucum::embedded().concept(code).unwrap().properties[0]
            .value
            .as_str()
            .unwrap()
            .to_owned()
    };
    // UCUM: the gram is the base unit of mass, the liter is dm3.
    assert_eq!(canonical("mg"), "g");
    assert_eq!(canonical("kg"), "g");
    assert_eq!(canonical("mL"), "m3");
}

#[test]
fn hostile_units_are_refused_at_once() {
    let started = Instant::now();
    let deep = format!("{}m{}", "(".repeat(5000), ")".repeat(5000));
    assert!(Ucum::embedded().concept(&deep).is_none());
    let long = "m.".repeat(400) + "m";
    assert!(
        Ucum::embedded().concept(&long).is_none(),
        "over the length limit"
    );
    let brackets = "[".repeat(400);
    assert!(Ucum::embedded().concept(&brackets).is_none());
    assert!(started.elapsed().as_secs_f64() < 5.0);
}

/// The registry's descriptions, read from the data file by hand.
fn registry() -> HashMap<(String, String), String> {
    include_str!("../data/language-subtags.tsv")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            ((f[0].to_owned(), f[1].to_owned()), f[2].to_owned())
        })
        .collect()
}

#[test]
fn bcp47_derives_registered_tags() {
    let b = Bcp47::embedded();
    let names = registry();
    let name = |kind: &str, code: &str| names[&(kind.to_owned(), code.to_owned())].clone();
    assert!(b.file_date().starts_with("20"), "{}", b.file_date());
    let en_us = b.concept("en-US").unwrap();
    assert_eq!(
        en_us.display,
        format!("{} ({})", name("language", "en"), name("region", "US"))
    );
    assert!(
        en_us
            .designations
            .iter()
            .any(|d| d.value == format!("English (Region={})", name("region", "US")))
    );
    let zh = b.concept("zh-Hans-CN").unwrap();
    assert_eq!(
        zh.display,
        format!(
            "{} ({}, {})",
            name("language", "zh"),
            name("script", "Hans"),
            name("region", "CN")
        )
    );
    // RFC 5646 examples: language, script, region, variant, extension,
    // private use, a UN M.49 region, extended language, grandfathered.
    for code in [
        "de",
        "sr-Latn-RS",
        "de-CH-1996",
        "es-419",
        "en-US-u-islamcal",
        "en-US-x-twain",
        "zh-yue-HK",
        "sl-rozaj-biske",
        "i-klingon",
        "x-whatever",
        // The registry's private-use ranges: qaa..qtz, Qaaa..Qabx, QM..QZ.
        "qaa",
        "qtz-Qabx-QZ",
        "en-XA",
    ] {
        assert!(b.concept(code).is_some(), "{code} refused");
    }
    for code in [
        "en-us",
        "EN",
        "qzz-US",
        "en-USA",
        "en--US",
        "en-US-",
        "de-1996-1996",
        "en-a-bbb-a-ccc",
        "en-a",
        "en-x",
        "x-",
        "x-toolongsubtag",
        "X-whatever",
        "",
        "en-US ",
    ] {
        assert!(b.concept(code).is_none(), "{code:?} accepted");
    }
    let long = "en-".to_owned() + &"x-aaaaaaaa-".repeat(100);
    assert!(b.concept(&long).is_none());
}

#[test]
fn media_types_follow_rfc_6838() {
    let m = txmap_builtin::MediaTypes;
    assert!(!m.case_sensitive());
    // RFC 6838 and RFC 2045 examples, and what FHIR attachments carry.
    for (code, canonical) in [
        ("text/plain", "text/plain"),
        ("application/fhir+json", "application/fhir+json"),
        ("image/svg+xml", "image/svg+xml"),
        ("application/vnd.ms-excel", "application/vnd.ms-excel"),
        ("text/plain; charset=UTF-8", "text/plain; charset=UTF-8"),
        ("Text/HTML;charset=\"utf-8\"", "text/html;charset=\"utf-8\""),
        (
            "multipart/form-data; boundary=abc123",
            "multipart/form-data; boundary=abc123",
        ),
    ] {
        let c = m.concept(code).unwrap_or_else(|| panic!("{code} refused"));
        assert_eq!(c.code, canonical);
    }
    for code in [
        "text",
        "text/",
        "/plain",
        "texts/plain",
        "text/pla in",
        "text/plain;",
        "text/plain; charset",
        "text/plain; charset=\"a\"b\"",
        "x-foo/bar",
        " text/plain",
        "text/-plain",
    ] {
        assert!(m.concept(code).is_none(), "{code:?} accepted");
    }
}

#[test]
fn iso3166_lists_every_country_and_the_user_assigned_ranges() {
    use txmap_terminology::provider::CodeSystemProvider;
    let cs = txmap_builtin::iso3166::code_system().unwrap();
    let rows: Vec<Vec<&str>> = include_str!("../data/iso3166.tsv")
        .lines()
        .map(|l| l.split('\t').collect())
        .collect();
    assert_eq!(rows.len(), 249, "the 249 countries of ISO 3166-1");
    for r in &rows {
        for code in &r[..3] {
            let id = cs.locate(code).unwrap_or_else(|| panic!("{code}")).id;
            assert_eq!(cs.display(id), Some(r[3]));
        }
    }
    // ISO 3166-1 § 8.1.3: AA, QM–QZ, XA–XZ, ZZ; the same followed by any
    // letter; 900–999.
    let mut alpha2 = vec!["AA".to_owned(), "ZZ".to_owned()];
    alpha2.extend(('M'..='Z').map(|c| format!("Q{c}")));
    alpha2.extend(('A'..='Z').map(|c| format!("X{c}")));
    assert_eq!(alpha2.len(), 42);
    for two in &alpha2 {
        let id = cs.locate(two).unwrap().id;
        assert_eq!(cs.display(id), Some("User-assigned"));
        assert!(cs.locate(&format!("{two}Q")).is_some());
    }
    assert!(cs.locate("950").is_some());
    for code in ["QL", "XK1", "1000", "de", "ZZZZ"] {
        assert!(cs.locate(code).is_none(), "{code}");
    }
    assert_eq!(cs.len(), 249 * 3 + 42 + 42 * 26 + 100);
}

#[test]
fn the_common_codes_are_compiled_in_and_each_is_a_code() {
    let ucum = Ucum::embedded();
    let vs = ucum.common_codes().expect("ucum-common compiled in");
    assert_eq!(
        vs.versioned_url(),
        "http://hl7.org/fhir/ValueSet/ucum-common|5.0.0"
    );
    for c in vs.compose.include.iter().flat_map(|r| &r.concepts) {
        assert!(ucum.concept(&c.code).is_some(), "{} refused", c.code);
    }
    let bcp47 = Bcp47::embedded();
    let vs = bcp47.common_codes().expect("THO Languages compiled in");
    assert_eq!(
        vs.url.as_deref(),
        Some("http://terminology.hl7.org/ValueSet/Languages")
    );
    for c in vs.compose.include.iter().flat_map(|r| &r.concepts) {
        assert!(bcp47.concept(&c.code).is_some(), "{} refused", c.code);
    }
}

#[test]
fn ucum_says_why_a_unit_is_not_one_or_not_in_a_filter() {
    let u = Ucum::embedded();
    // The words of the HL7 suite's UCUM tests (tx.fhir.org's library).
    assert_eq!(
        u.why_not("kgXX").as_deref(),
        Some("Error processing unit 'kgXX': The unit 'kgXX' is unknown at character 1")
    );
    assert_eq!(u.why_not("mg/dL"), None, "a unit has nothing wrong");
    let mass = txmap_terminology::valueset::FilterDef {
        property: "canonical".into(),
        op: "=".into(),
        value: Some("g".into()),
    };
    assert_eq!(
        u.why_filtered_out("mL", &mass).as_deref(),
        Some("Code mL has canonical form m3, not g as required")
    );
    assert_eq!(u.why_filtered_out("mg", &mass), None);
}
