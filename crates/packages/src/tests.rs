use super::*;
use serde_json::json;

/// A gzipped tarball of `(path, JSON)` files, as `npm pack` makes.
pub(crate) fn tgz(files: &[(&str, Value)]) -> Vec<u8> {
    crate::pack_json(files).unwrap()
}

fn package(name: &str, fhir: &str, extra: &[(&str, Value)]) -> Package {
    let mut files = vec![(
        "package/package.json",
        json!({"name": name, "version": "1.0.0", "fhirVersions": [fhir]}),
    )];
    files.extend(extra.iter().cloned());
    Package::from_tgz(&tgz(&files)[..], name).unwrap()
}

fn gender(version: &str) -> Value {
    json!({"resourceType": "CodeSystem", "url": "http://hl7.org/fhir/administrative-gender",
        "version": version, "status": "active", "content": "complete",
        "concept": [{"code": "male", "display": "Male"}, {"code": "female", "display": "Female"}]})
}

#[test]
fn only_top_level_terminology_resources_are_indexed() {
    let p = package(
        "example.terminology",
        "4.0.1",
        &[
            (
                "package/CodeSystem-a.json",
                json!({"resourceType": "CodeSystem", "url": "http://a", "version": "2", "concept": [{"code": "x"}]}),
            ),
            (
                "package/ValueSet-a.json",
                json!({"resourceType": "ValueSet", "url": "http://a/vs", "compose": {"include": [{"system": "http://a"}]}}),
            ),
            (
                "package/ConceptMap-m.json",
                json!({"resourceType": "ConceptMap", "url": "http://m"}),
            ),
            (
                "package/StructureDefinition-s.json",
                json!({"resourceType": "StructureDefinition", "url": "http://s"}),
            ),
            (
                "package/example/CodeSystem-e.json",
                json!({"resourceType": "CodeSystem", "url": "http://e"}),
            ),
            (
                "package/other/notes.json",
                json!({"resourceType": "CodeSystem", "url": "http://o"}),
            ),
            ("package/broken.json", json!("not a resource")),
        ],
    );
    assert_eq!(p.name, "example.terminology");
    assert_eq!(p.files, 8);
    let urls: Vec<_> = p
        .entries()
        .iter()
        .map(|e| (e.kind, e.url.as_str()))
        .collect();
    assert_eq!(
        urls,
        [
            (Kind::CodeSystem, "http://a"),
            (Kind::ValueSet, "http://a/vs"),
            (Kind::ConceptMap, "http://m")
        ]
    );
    let json: Value = serde_json::from_slice(p.json(&p.entries()[0])).unwrap();
    assert_eq!(json["version"], "2");
    assert!(!p.is_core());

    let view = Packages::new(&[Arc::new(p)], "5.0.0");
    assert_eq!((view.len(), view.parsed()), (3, 0));
    let cs = view.code_systems("http://a");
    assert_eq!(cs.len(), 1);
    assert_eq!(cs[0].version.as_deref(), Some("2"));
    assert_eq!(view.parsed(), 1);
    assert!(view.code_systems("http://s").is_empty());
    assert_eq!(view.value_sets("http://a/vs").len(), 1);
    assert_eq!(view.resources(Kind::ConceptMap, "http://m").len(), 1);
}

#[test]
fn core_code_systems_are_reported_at_the_endpoint_fhir_version() {
    let r5 = Arc::new(package(
        "hl7.fhir.r5.core",
        "5.0.0",
        &[(
            "package/CodeSystem-administrative-gender.json",
            gender("5.0.0"),
        )],
    ));
    assert!(r5.is_core() && r5.is_for("5.0.0") && !r5.is_for("4.0.1"));
    let version = |view: &Packages| {
        view.code_systems("http://hl7.org/fhir/administrative-gender")
            .iter()
            .map(|cs| cs.version.clone().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        version(&Packages::new(std::slice::from_ref(&r5), "5.0.0")),
        ["5.0.0"]
    );
    assert_eq!(
        version(&Packages::new(std::slice::from_ref(&r5), "4.0.1")),
        ["4.0.1"]
    );
    // With the endpoint's own core package, the other is not used.
    let r4 = Arc::new(package(
        "hl7.fhir.r4.core",
        "4.0.1",
        &[(
            "package/CodeSystem-administrative-gender.json",
            gender("4.0.1"),
        )],
    ));
    assert_eq!(
        version(&Packages::new(&[r5.clone(), r4.clone()], "4.0.1")),
        ["4.0.1"]
    );
    assert_eq!(version(&Packages::new(&[r5, r4], "5.0.0")), ["5.0.0"]);
}

#[test]
fn the_resolver_prefers_the_request_resources() {
    let p = Arc::new(package(
        "hl7.fhir.r5.core",
        "5.0.0",
        &[(
            "package/CodeSystem-administrative-gender.json",
            gender("5.0.0"),
        )],
    ));
    let source: Arc<dyn ResourceSource> = Arc::new(Packages::new(&[p], "5.0.0"));
    let mut r = txmap_terminology::Resolver::new([]);
    r.set_external(Some(source.clone()));
    let url = "http://hl7.org/fhir/administrative-gender";
    assert!(r.knows_system(url));
    assert_eq!(r.code_system(url, None).unwrap().version(), Some("5.0.0"));
    let own = gender("9");
    let mut r = txmap_terminology::Resolver::new([&own]);
    r.set_external(Some(source));
    assert_eq!(r.versions(url), ["9"]);
}

#[test]
fn a_tarball_without_a_manifest_or_not_gzipped_is_an_error() {
    let e = Package::from_tgz(&tgz(&[])[..], "empty").unwrap_err();
    assert!(e.to_string().contains("package.json"), "{e}");
    assert!(Package::from_tgz(&b"not gzip"[..], "junk").is_err());
}

#[test]
fn the_narrative_is_cut_wherever_it_is() {
    let cases = [
        r#"{"text": {"div": "<div>a, \"b\"</div>"}, "resourceType": "CodeSystem", "url": "u"}"#,
        r#"{"resourceType": "CodeSystem",
            "text" : {"div": "x"} ,
            "url": "u"}"#,
        r#"{"resourceType": "CodeSystem", "url": "u", "text": {"div": "}"}}"#,
    ];
    for case in cases {
        let head: Head = serde_json::from_str(case).unwrap();
        let cut: Vec<u8> = without_text(case.as_bytes(), head.text.unwrap()).concat();
        let v: Value = serde_json::from_slice(&cut).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(
            v,
            json!({"resourceType": "CodeSystem", "url": "u"}),
            "{case}"
        );
    }
    // Indexed resources are stored without it.
    let p = package(
        "x",
        "4.0.1",
        &[(
            "package/CodeSystem-a.json",
            json!({"resourceType": "CodeSystem", "url": "http://a", "text": {"div": "<div/>"}}),
        )],
    );
    let stored: Value = serde_json::from_slice(p.json(&p.entries()[0])).unwrap();
    assert_eq!(
        stored,
        json!({"resourceType": "CodeSystem", "url": "http://a"})
    );
}

/// A damaged byte anywhere in a package is an error naming it, never a
/// package read with other bytes: the gzip stream is read to its end and
/// its CRC-32 checked, also past the end of the tar.
#[test]
fn a_damaged_package_is_refused() {
    let files: Vec<(String, Value)> = std::iter::once((
        "package/package.json".to_owned(),
        json!({"name": "p", "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
    ))
    .chain((0..40).map(|i| {
        (
            format!("package/CodeSystem-{i}.json"),
            json!({"resourceType": "CodeSystem", "url": format!("http://example.org/cs{i}"),
                "status": "active", "content": "complete",
                "concept": (0..50).map(|c| json!({"code": format!("c{c}"), "display": format!("Display {i} {c}")})).collect::<Vec<_>>()}),
        )
    }))
    .collect();
    let refs: Vec<(&str, Value)> = files.iter().map(|(p, v)| (p.as_str(), v.clone())).collect();
    let good = tgz(&refs);
    let read = Package::from_tgz(&good[..], "p").unwrap();
    let (mut errors, mut same) = (0, 0);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..200 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let mut bad = good.clone();
        let at = 10 + (x as usize % (bad.len() - 10));
        bad[at] ^= 1 << (x % 8);
        match Package::from_tgz(&bad[..], "p.tgz") {
            Err(e) => {
                assert!(e.to_string().contains("p.tgz"), "{e}");
                errors += 1;
            }
            // Only a flip that changes nothing read (the gzip header's
            // optional fields) may pass, and then with the same content.
            Ok(p) => {
                assert!(p.bytes == read.bytes, "flip at {at} read as other content");
                same += 1;
            }
        }
    }
    assert!(errors > 150, "{errors} errors, {same} unchanged");
}
