//! The provider inside the terminology engine, on a synthetic edition:
//! expected memberships come from the release's RF2 files, read here
//! without the importer or the store.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};
use txmap_terminology::{CodeSystem, Request, ResourceSource, ValueSet};

use super::*;

type Ed = Edition<Vec<u8>>;

/// The editions as the engine's source beyond the request.
#[derive(Debug)]
struct Editions(Vec<SnomedCt<Vec<u8>>>);

impl ResourceSource for Editions {
    fn code_systems(&self, _url: &str) -> Vec<&CodeSystem> {
        Vec::new()
    }
    fn value_sets(&self, _url: &str) -> Vec<&ValueSet> {
        Vec::new()
    }
    fn providers(&self, url: &str) -> Vec<&dyn CodeSystemProvider> {
        if url != SNOMED_CT {
            return Vec::new();
        }
        self.0
            .iter()
            .map(|e| e as &dyn CodeSystemProvider)
            .collect()
    }
    fn implicit_value_set(&self, url: &str) -> Option<(&dyn CodeSystemProvider, Vec<FilterDef>)> {
        implicit_value_set(url, &self.0)
    }
}

/// The active is-a parents of every active concept, from the RF2
/// Concept and (inferred) Relationship snapshot files.
struct Rf2 {
    parents: HashMap<u64, Vec<u64>>,
    active: BTreeSet<u64>,
}

impl Rf2 {
    fn read(dir: &Path) -> Rf2 {
        let files = walk_files(dir);
        let rows = |prefix: &str| -> Vec<Vec<String>> {
            let f = files
                .iter()
                .find(|f| f.file_name().unwrap().to_str().unwrap().starts_with(prefix))
                .unwrap();
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .skip(1)
                .map(|l| l.split('\t').map(str::to_owned).collect())
                .collect()
        };
        let active: BTreeSet<u64> = rows("sct2_Concept_Snapshot")
            .iter()
            .filter(|r| r[2] == "1")
            .map(|r| r[0].parse().unwrap())
            .collect();
        let mut parents: HashMap<u64, Vec<u64>> = HashMap::new();
        for r in rows("sct2_Relationship_Snapshot") {
            if r[2] == "1" && r[7] == "116680003" {
                parents
                    .entry(r[4].parse().unwrap())
                    .or_default()
                    .push(r[5].parse().unwrap());
            }
        }
        Rf2 { parents, active }
    }

    /// `x` and every concept below it.
    fn self_and_below(&self, x: u64) -> BTreeSet<u64> {
        let mut out = BTreeSet::from([x]);
        loop {
            let before = out.len();
            for (c, ps) in &self.parents {
                if ps.iter().any(|p| out.contains(p)) {
                    out.insert(*c);
                }
            }
            if out.len() == before {
                return out;
            }
        }
    }
}

/// A synthetic release of 800 concepts in `dir` and its edition file:
/// the release's folder and the file.
fn release(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let rf2 = dir.join("rf2");
    txmap_synth::generate(&txmap_synth::SynthConfig::new(800, 5), &rf2).unwrap();
    let file = dir.join("ed.txmap");
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![rf2.clone()], file.clone()),
        &txmap_import::Quiet,
    )
    .unwrap();
    (rf2, file)
}

fn setup() -> (tempfile::TempDir, Rf2, Arc<Editions>) {
    let dir = tempfile::tempdir().unwrap();
    let (rf2, file) = release(dir.path());
    let ed: Ed = Edition::open(std::fs::read(&file).unwrap()).unwrap();
    let version = format!(
        "http://snomed.info/xsct/{}/version/{}",
        ed.identity().edition_module,
        ed.identity().effective_time
    );
    let edition = format!("http://snomed.info/xsct/{}", ed.identity().edition_module);
    let provider = SnomedCt::new(Arc::new(ed), version, edition, 10_000_000, true);
    (dir, Rf2::read(&rf2), Arc::new(Editions(vec![provider])))
}

/// A concept with a few descendants, and one of its children.
fn subtree(rf2: &Rf2) -> (u64, u64, BTreeSet<u64>) {
    rf2.active
        .iter()
        .find_map(|&x| {
            let below = rf2.self_and_below(x);
            let child = rf2
                .parents
                .iter()
                .find(|(_, ps)| ps.contains(&x))
                .map(|(c, _)| *c)?;
            (6..60).contains(&below.len()).then_some((x, child, below))
        })
        .expect("a concept with a few descendants")
}

fn run(body: &Value, source: &Arc<Editions>, op: &str) -> Value {
    let mut req = Request::new(body.clone());
    req.resolver
        .set_external(Some(Arc::clone(source) as Arc<dyn ResourceSource>));
    let out = match op {
        "expand" => txmap_terminology::expand::expand(&req, "urn:uuid:t", "2026-01-01T00:00:00Z"),
        _ => txmap_terminology::validate::validate_code(&req, true).map(|p| p.to_value()),
    };
    out.unwrap()
}

fn codes(expansion: &Value) -> BTreeSet<String> {
    fn walk(list: &Value, out: &mut BTreeSet<String>) {
        for c in list.as_array().into_iter().flatten() {
            out.insert(format!(
                "{}#{}",
                c["system"].as_str().unwrap(),
                c["code"].as_str().unwrap()
            ));
            walk(&c["contains"], out);
        }
    }
    let mut out = BTreeSet::new();
    walk(&expansion["expansion"]["contains"], &mut out);
    out
}

fn result(answer: &Value) -> bool {
    answer["parameter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "result")
        .unwrap()["valueBoolean"]
        .as_bool()
        .unwrap()
}

#[test]
fn a_value_set_mixing_snomed_ct_with_another_system_expands_and_validates() {
    let (_dir, rf2, source) = setup();
    let (x, child, below) = subtree(&rf2);
    let value_set = json!({
        "resourceType": "ValueSet", "url": "http://example.org/vs/mixed",
        "compose": {
            "include": [
                {"system": "http://example.org/cs", "concept": [{"code": "a"}]},
                {"system": SNOMED_CT, "filter": [{"property": "concept", "op": "is-a", "value": x.to_string()}]},
            ],
            "exclude": [{"system": SNOMED_CT, "concept": [{"code": child.to_string()}]}],
        }
    });
    let cs = json!({"resourceType": "CodeSystem", "url": "http://example.org/cs", "content": "complete",
        "concept": [{"code": "a", "display": "A"}, {"code": "b", "display": "B"}]});
    let params = |extra: Vec<Value>| {
        let mut p = vec![
            json!({"name": "tx-resource", "resource": cs}),
            json!({"name": "tx-resource", "resource": value_set}),
            json!({"name": "url", "valueUri": "http://example.org/vs/mixed"}),
        ];
        p.extend(extra);
        json!({"resourceType": "Parameters", "parameter": p})
    };
    let mut expected: BTreeSet<String> = below
        .iter()
        .filter(|&&c| c != child)
        .map(|c| format!("{SNOMED_CT}#{c}"))
        .collect();
    expected.insert("http://example.org/cs#a".into());
    let expansion = run(&params(vec![]), &source, "expand");
    assert_eq!(codes(&expansion), expected);
    assert_eq!(expansion["expansion"]["total"], expected.len());

    // Pages of the mixed expansion are slices of one list, whatever the
    // systems, and `total` is the whole list's.
    let flat = |v: &Value| -> Vec<String> {
        v["expansion"]["contains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                format!(
                    "{}#{}",
                    c["system"].as_str().unwrap(),
                    c["code"].as_str().unwrap()
                )
            })
            .collect()
    };
    let whole = flat(&run(
        &params(vec![json!({"name": "excludeNested", "valueBoolean": true})]),
        &source,
        "expand",
    ));
    assert_eq!(whole.len(), expected.len());
    let mut paged = Vec::new();
    for offset in (0..whole.len()).step_by(3) {
        let page = run(
            &params(vec![
                json!({"name": "offset", "valueInteger": offset}),
                json!({"name": "count", "valueInteger": 3}),
            ]),
            &source,
            "expand",
        );
        assert_eq!(page["expansion"]["total"], whole.len());
        paged.extend(flat(&page));
    }
    assert_eq!(paged, whole);

    let validate = |system: &str, code: String| {
        result(&run(
            &params(vec![
                json!({"name": "system", "valueUri": system}),
                json!({"name": "code", "valueCode": code}),
            ]),
            &source,
            "validate",
        ))
    };
    assert!(validate(SNOMED_CT, x.to_string()));
    assert!(!validate(SNOMED_CT, child.to_string()), "excluded");
    let outside = rf2.active.iter().find(|c| !below.contains(c)).unwrap();
    assert!(!validate(SNOMED_CT, outside.to_string()));
    assert!(validate("http://example.org/cs", "a".into()));
    assert!(!validate("http://example.org/cs", "b".into()));
}

#[test]
fn implicit_value_sets_import_into_other_value_sets() {
    let (_dir, rf2, source) = setup();
    let (x, _, below) = subtree(&rf2);
    let body = |extra: Vec<Value>| {
        let mut p = vec![json!({"name": "valueSet", "resource": {
            "resourceType": "ValueSet", "url": "http://example.org/vs/imports",
            "compose": {"include": [{"valueSet": [format!("{SNOMED_CT}?fhir_vs=isa/{x}")]}]}
        }})];
        p.extend(extra);
        json!({"resourceType": "Parameters", "parameter": p})
    };
    let expected: BTreeSet<String> = below.iter().map(|c| format!("{SNOMED_CT}#{c}")).collect();
    assert_eq!(codes(&run(&body(vec![]), &source, "expand")), expected);
    let outside = rf2.active.iter().find(|c| !below.contains(c)).unwrap();
    for (code, member) in [(x, true), (*outside, false)] {
        let answer = run(
            &body(vec![
                json!({"name": "coding", "valueCoding": {"system": SNOMED_CT, "code": code.to_string()}}),
            ]),
            &source,
            "validate",
        );
        assert_eq!(result(&answer), member, "{code}: {answer}");
    }
}

#[test]
fn filters_the_edition_refuses_are_errors_not_empty_sets() {
    let (_dir, _, source) = setup();
    let body = json!({"resourceType": "Parameters", "parameter": [
        {"name": "valueSet", "resource": {"resourceType": "ValueSet", "compose": {"include": [
            {"system": SNOMED_CT, "filter": [{"property": "constraint", "op": "=", "value": "<< 404684003 AND"}]}]}}},
    ]});
    let mut req = Request::new(body.clone());
    req.resolver
        .set_external(Some(Arc::clone(&source) as Arc<dyn ResourceSource>));
    let err = txmap_terminology::expand::expand(&req, "u", "t").unwrap_err();
    assert_eq!(err.status(), 400);
    assert!(
        err.to_string()
            .starts_with("Invalid ECL expression '<< 404684003 AND'"),
        "{err}"
    );
}

#[test]
fn implicit_urls_and_versions() {
    let f = |url: &str| {
        implicit_filters(url).map(|(v, fs)| {
            (
                v.map(str::to_owned),
                fs.into_iter()
                    .map(|f| format!("{} {} {}", f.property, f.op, f.value.unwrap_or_default()))
                    .collect::<Vec<_>>(),
            )
        })
    };
    assert_eq!(f("http://snomed.info/sct?fhir_vs"), Some((None, vec![])));
    assert_eq!(
        f("http://snomed.info/sct?fhir_vs=isa/404684003"),
        Some((None, vec!["concept is-a 404684003".into()]))
    );
    assert_eq!(
        f("http://snomed.info/sct/900000000000207008/version/20250201?fhir_vs=refset/734139008"),
        Some((
            Some("http://snomed.info/sct/900000000000207008/version/20250201".into()),
            vec!["concept in 734139008".into()]
        ))
    );
    assert_eq!(
        f("http://snomed.info/sct?fhir_vs=ecl/%3C%3C%2071388002"),
        Some((None, vec!["constraint = << 71388002".into()]))
    );
    assert_eq!(f("http://snomed.info/sct?fhir_vs=isa/x"), None);
    assert_eq!(f("http://example.org/vs?fhir_vs"), None);
    assert_eq!(percent_decode("%3C%3C%20123%2"), "<< 123%2");
    assert_eq!(percent_decode("a+b"), "a+b");

    let v = "http://snomed.info/sct/900000000000207008/version/20250201";
    let e = "http://snomed.info/sct/900000000000207008";
    assert!(names_version(v, v, e));
    assert!(names_version(e, v, e));
    assert!(names_version(
        "http://snomed.info/xsct/900000000000207008",
        v,
        e
    ));
    assert!(names_version("20250201", v, e));
    assert!(!names_version(
        "http://snomed.info/sct/45991000052106",
        v,
        e
    ));
}

#[test]
fn an_include_of_all_of_snomed_ct_is_too_costly_before_its_codes_are_listed() {
    let (_dir, _, source) = setup();
    let body = json!({"resourceType": "Parameters", "parameter": [
        {"name": "valueSet", "resource": {"resourceType": "ValueSet", "url": "http://example.org/vs/all",
            "compose": {"include": [{"system": SNOMED_CT}]}}},
    ]});
    let mut req = Request::new(body);
    req.resolver
        .set_external(Some(Arc::clone(&source) as Arc<dyn ResourceSource>));
    req.max_expansion = 100;
    let err = txmap_terminology::expand::expand(&req, "u", "t").unwrap_err();
    assert_eq!(err.status(), 422);
    assert_eq!(
        err.to_string(),
        "The value set 'http://example.org/vs/all' expansion has too many codes to produce (>100)"
    );
    // Within the limit, the same include lists every concept.
    req.max_expansion = 10_000;
    let all = txmap_terminology::expand::expand(&req, "u", "t").unwrap();
    assert_eq!(all["expansion"]["total"], 800);
}

/// A text filter in a scope (`$expand` with `filter` on an ECL, is-a or
/// refset value set) answers the concepts of the scope with a matching
/// description, whether the engine tests each hit against the scope or
/// builds the scope's set: both against the RF2 files.
#[test]
fn a_scoped_text_search_tests_hits_or_builds_the_scope_with_one_answer() {
    let dir = tempfile::tempdir().unwrap();
    let (rf2_dir, file) = release(dir.path());
    let rf2 = Rf2::read(&rf2_dir);
    let (x, _, below) = subtree(&rf2);
    // Every description but text definitions, active or not (the search
    // an `$expand` without `activeOnly` makes), by concept.
    let mut terms: HashMap<u64, Vec<String>> = HashMap::new();
    for f in walk_files(&rf2_dir) {
        let name = f.file_name().unwrap().to_str().unwrap().to_owned();
        if !name.starts_with("sct2_Description_Snapshot") {
            continue;
        }
        for line in std::fs::read_to_string(&f).unwrap().lines().skip(1) {
            let r: Vec<&str> = line.split('\t').collect();
            if r[6] != "900000000000550004" {
                terms
                    .entry(r[4].parse().unwrap())
                    .or_default()
                    .push(r[7].to_lowercase());
            }
        }
    }
    let matches = |c: &u64, prefix: &str| {
        terms.get(c).is_some_and(|ts| {
            ts.iter().any(|t| {
                t.split(|ch: char| !ch.is_alphanumeric())
                    .any(|w| w.starts_with(prefix))
            })
        })
    };
    // Prefixes of the words of the subtree's terms: some in most of it.
    let mut prefixes: BTreeSet<String> = BTreeSet::new();
    for c in &below {
        for t in terms.get(c).into_iter().flatten() {
            for w in t.split(|ch: char| !ch.is_alphanumeric()) {
                if w.len() >= 3 && w.is_ascii() {
                    prefixes.insert(w[..3].to_owned());
                    prefixes.insert(w[..1].to_owned());
                }
            }
        }
    }
    let open = |up_to: usize| {
        let ed: Ed = Edition::open(std::fs::read(&file).unwrap()).unwrap();
        let e = SnomedCt::new(Arc::new(ed), "v".into(), "e".into(), 10_000_000, true)
            .with_test_each_up_to(up_to);
        crate::operations::Editions::new(Arc::from(vec![e]))
    };
    let (tested, built) = (open(usize::MAX), open(0));
    let expand = |editions: &crate::operations::Editions<Vec<u8>>, url: &str, filter: &str| {
        let req = Request::new(json!({"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": url},
            {"name": "filter", "valueString": filter},
            {"name": "count", "valueInteger": 1000},
        ]}));
        crate::expand::expand(editions, &req, true).unwrap()
    };
    let listed = |v: &Value| -> Vec<u64> {
        v["expansion"]["contains"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| c["code"].as_str().unwrap().parse().unwrap())
            .collect()
    };
    let mut found = 0;
    for prefix in &prefixes {
        let want: BTreeSet<u64> = below
            .iter()
            .copied()
            .filter(|c| matches(c, prefix))
            .collect();
        for url in [
            format!("{SNOMED_CT}?fhir_vs=ecl/<< {x}"),
            format!("{SNOMED_CT}?fhir_vs=isa/{x}"),
        ] {
            let a = expand(&tested, &url, prefix);
            let b = expand(&built, &url, prefix);
            assert_eq!(
                listed(&a),
                listed(&b),
                "{url} {prefix}: the same page, in order"
            );
            assert_eq!(a["expansion"]["total"], want.len(), "{url} {prefix}");
            assert_eq!(b["expansion"]["total"], want.len(), "{url} {prefix}");
            let got: BTreeSet<u64> = listed(&a).into_iter().collect();
            assert_eq!(got, want, "{url} {prefix}");
            found += want.len();
        }
    }
    assert!(
        found > 0,
        "no prefix found anything: the test proves nothing"
    );
    // The second path kept the scope for the next search.
    assert!(built.list()[0].scopes().usage().0 >= 1);
    assert_eq!(tested.list()[0].scopes().usage().0, 0);
}

fn walk_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    files
}
