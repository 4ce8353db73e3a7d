//! Real IG content: every value set of the International Patient Summary
//! IG (`hl7.fhir.uv.ips` 2.0.0, from `../shared/fhir-packages`) over the
//! HL7 test edition of SNOMED CT, asked by URL (the package's copy),
//! inline (`valueSet`) and as a `tx-resource`, with the same answer in all
//! three. The expected members come from the value set definitions and
//! the edition's RF2 files, read here by a small evaluator of their own
//! (is-a closure from the Relationship snapshot, concepts from the
//! Concept snapshot), never from txmap.

use crate::common;

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use txmap_server::app::AppState;

const SCT: &str = "http://snomed.info/sct";
const IPS: &str = "hl7.fhir.uv.ips-2.0.0.tgz";

/// The HL7 test edition as RF2 says it is.
struct Rf2 {
    /// Every concept, active or not.
    concepts: BTreeSet<u64>,
    active: BTreeSet<u64>,
    /// Active inferred is-a children of each concept.
    children: HashMap<u64, Vec<u64>>,
}

impl Rf2 {
    fn read(dir: &Path) -> Rf2 {
        let rows = |prefix: &str| common::rf2_rows(&dir.join("Terminology"), prefix);
        let mut rf2 = Rf2 {
            concepts: BTreeSet::new(),
            active: BTreeSet::new(),
            children: HashMap::new(),
        };
        for r in rows("sct2_Concept_Snapshot") {
            let id: u64 = r[0].parse().unwrap();
            rf2.concepts.insert(id);
            if r[2] == "1" {
                rf2.active.insert(id);
            }
        }
        for r in rows("sct2_Relationship_Snapshot") {
            if r[2] == "1" && r[7] == "116680003" {
                rf2.children
                    .entry(r[5].parse().unwrap())
                    .or_default()
                    .push(r[4].parse().unwrap());
            }
        }
        rf2
    }

    /// The concepts strictly below `x`.
    fn below(&self, x: u64) -> BTreeSet<u64> {
        let mut out = BTreeSet::new();
        let mut stack = vec![x];
        while let Some(c) = stack.pop() {
            for &k in self.children.get(&c).into_iter().flatten() {
                if out.insert(k) {
                    stack.push(k);
                }
            }
        }
        out
    }
}

/// The IPS package's value sets by URL (the tarball read by the package
/// crate's reader, which only locates each resource's JSON).
fn value_sets(package: &Path) -> HashMap<String, Value> {
    let tgz = std::fs::read(package).unwrap();
    let p = txmap_packages::Package::from_tgz(&tgz[..], "ips").unwrap();
    p.entries()
        .iter()
        .filter(|e| e.kind == txmap_packages::Kind::ValueSet)
        .map(|e| {
            let v: Value = serde_json::from_slice(p.json(e)).unwrap();
            (v["url"].as_str().unwrap().to_owned(), v)
        })
        .collect()
}

/// The SNOMED CT codes of a value set, or `None` when it needs a code
/// system the test edition is not (LOINC, DICOM...).
fn expected(vs: &Value, all: &HashMap<String, Value>, rf2: &Rf2) -> Option<BTreeSet<u64>> {
    let rule = |r: &Value| -> Option<BTreeSet<u64>> {
        // Each condition of the rule narrows the set; none is everything.
        let mut parts: Vec<BTreeSet<u64>> = Vec::new();
        if let Some(system) = r["system"].as_str() {
            if system != SCT {
                return None;
            }
            if let Some(list) = r["concept"].as_array() {
                parts.push(
                    list.iter()
                        .map(|c| c["code"].as_str().unwrap().parse::<u64>().unwrap())
                        .filter(|c| rf2.concepts.contains(c))
                        .collect(),
                );
            }
            for f in r["filter"].as_array().into_iter().flatten() {
                let x: u64 = f["value"].as_str().unwrap().parse().unwrap();
                let known = rf2.concepts.contains(&x);
                let mut s = if known { rf2.below(x) } else { BTreeSet::new() };
                match f["op"].as_str().unwrap() {
                    "is-a" if known => {
                        s.insert(x);
                    }
                    "is-a" | "descendent-of" => {}
                    op => panic!("filter op {op} is not in the IPS value sets"),
                }
                parts.push(s);
            }
            if parts.is_empty() {
                parts.push(rf2.concepts.clone());
            }
        }
        for imported in r["valueSet"].as_array().into_iter().flatten() {
            parts.push(expected(&all[imported.as_str().unwrap()], all, rf2)?);
        }
        let mut parts = parts.into_iter();
        let first = parts.next().unwrap_or_default();
        Some(parts.fold(first, |a, b| a.intersection(&b).copied().collect()))
    };
    let mut out = BTreeSet::new();
    for r in vs["compose"]["include"].as_array().into_iter().flatten() {
        out.extend(rule(r)?);
    }
    for r in vs["compose"]["exclude"].as_array().into_iter().flatten() {
        for c in rule(r)? {
            out.remove(&c);
        }
    }
    Some(out)
}

/// The SNOMED CT concepts a mixed value set lists, as the edition has
/// them: the answer for those codes whatever the other systems hold.
fn listed_snomed(vs: &Value, rf2: &Rf2) -> Vec<(u64, bool)> {
    vs["compose"]["include"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["system"] == SCT && r["filter"].is_null())
        .flat_map(|r| r["concept"].as_array().cloned().unwrap_or_default())
        .map(|c| {
            let id: u64 = c["code"].as_str().unwrap().parse().unwrap();
            (id, rf2.concepts.contains(&id))
        })
        .collect()
}

/// A server with the HL7 test edition and the IPS package, what RF2 says
/// of the edition, and the package's value sets by URL.
struct Fixture {
    state: Arc<AppState>,
    rf2: Rf2,
    all: HashMap<String, Value>,
    _dir: tempfile::TempDir,
}

fn setup() -> Option<Fixture> {
    let snomed = common::tx_ecosystem("tx-source/snomed", "Terminology")?;
    let ips = common::fhir_package(IPS)?;
    let dir = tempfile::tempdir().unwrap();
    txmap_import::import(
        &txmap_import::ImportOptions::new(vec![snomed.clone()], dir.path().join("hl7.txmap")),
        &txmap_import::Quiet,
    )
    .unwrap();
    let config = format!(
        "editions = [\"hl7.txmap\"]\npackages = [{:?}]\n",
        ips.display().to_string()
    );
    let state = common::serve(dir.path(), &config);
    Some(Fixture {
        state,
        rf2: Rf2::read(&snomed),
        all: value_sets(&ips),
        _dir: dir,
    })
}

/// How a value set is named to an operation.
#[derive(Clone, Copy, Debug)]
enum Mode {
    Url,
    Inline,
    TxResource,
}

const MODES: [Mode; 3] = [Mode::Url, Mode::Inline, Mode::TxResource];

async fn ask(
    state: &Arc<AppState>,
    op: &str,
    mode: Mode,
    vs: &Value,
    extra: Vec<Value>,
) -> (StatusCode, Value) {
    let url = json!({"name": "url", "valueUri": vs["url"]});
    let mut params = match mode {
        Mode::Url => vec![url],
        Mode::Inline => vec![json!({"name": "valueSet", "resource": vs})],
        Mode::TxResource => vec![url, json!({"name": "tx-resource", "resource": vs})],
    };
    params.extend(extra);
    common::call(
        state.clone(),
        Method::POST,
        &format!("/r4/ValueSet/{op}"),
        Some(common::parameters(Value::Array(params))),
    )
    .await
}

async fn validate(state: &Arc<AppState>, mode: Mode, vs: &Value, code: u64) -> bool {
    let (status, v) = ask(
        state,
        "$validate-code",
        mode,
        vs,
        vec![
            json!({"name": "system", "valueUri": SCT}),
            json!({"name": "code", "valueCode": code.to_string()}),
        ],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{} {mode:?} {code}: {v}", vs["url"]);
    v["parameter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "result")
        .unwrap_or_else(|| panic!("{v}"))["valueBoolean"]
        .as_bool()
        .unwrap()
}

fn expansion_codes(v: &Value) -> BTreeSet<u64> {
    fn walk(list: &Value, out: &mut BTreeSet<u64>) {
        for c in list.as_array().into_iter().flatten() {
            assert_eq!(c["system"], SCT, "{c}");
            out.insert(c["code"].as_str().unwrap().parse().unwrap());
            walk(&c["contains"], out);
        }
    }
    let mut out = BTreeSet::new();
    walk(&v["expansion"]["contains"], &mut out);
    out
}

#[tokio::test]
async fn every_ips_value_set_expands_and_validates_alike_by_url_inline_and_as_tx_resource() {
    let Some(Fixture {
        state, rf2, all, ..
    }) = setup()
    else {
        return;
    };
    assert!(all.len() >= 30, "{} value sets", all.len());
    let mut urls: Vec<&String> = all.keys().collect();
    urls.sort();
    let (mut checked, mut mixed) = (0, 0);
    for url in urls {
        let vs = &all[url];
        let Some(members) = expected(vs, &all, &rf2) else {
            // A value set that needs a code system the edition is not:
            // its SNOMED CT codes still answer from the edition.
            let listed = listed_snomed(vs, &rf2);
            for &(code, known) in &listed {
                for mode in MODES {
                    assert_eq!(
                        validate(&state, mode, vs, code).await,
                        known,
                        "{url} {mode:?} {code}"
                    );
                }
            }
            mixed += usize::from(!listed.is_empty());
            continue;
        };
        checked += 1;
        for mode in MODES {
            let (status, v) = ask(&state, "$expand", mode, vs, vec![]).await;
            assert_eq!(status, StatusCode::OK, "{url} {mode:?}: {v}");
            assert_eq!(expansion_codes(&v), members, "{url} {mode:?}");
            assert_eq!(v["expansion"]["total"], members.len(), "{url} {mode:?}");
        }
        // Members, and concepts that are not: those just outside (a
        // descendent-of filter's own concept), and others.
        let mut probes: Vec<(u64, bool)> = members.iter().take(4).map(|&c| (c, true)).collect();
        let outside = rf2.active.iter().filter(|c| !members.contains(c));
        probes.extend(outside.step_by(97).take(3).map(|&c| (c, false)));
        for f in vs["compose"]["include"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|r| r["filter"].as_array().cloned().unwrap_or_default())
            .filter(|f| f["op"] == "descendent-of")
            .take(2)
        {
            let x: u64 = f["value"].as_str().unwrap().parse().unwrap();
            if rf2.concepts.contains(&x) {
                probes.push((x, members.contains(&x)));
            }
        }
        for (code, member) in probes {
            for mode in MODES {
                assert_eq!(
                    validate(&state, mode, vs, code).await,
                    member,
                    "{url} {mode:?} {code}"
                );
            }
        }
    }
    // The package has SNOMED CT value sets of every kind: by filter, by
    // concept list, with excludes, importing others; and mixed ones.
    assert!(checked >= 19, "{checked} value sets checked");
    assert!(mixed >= 2, "{mixed} mixed value sets checked");
}

#[tokio::test]
async fn a_mixed_include_excludes_snomed_concepts_and_imports_implicit_value_sets() {
    let Some(Fixture {
        state, rf2, all, ..
    }) = setup()
    else {
        return;
    };
    // Built from IPS content: the problems value set's SNOMED CT include,
    // beside a concept of another system, minus one of its concepts, and
    // an implicit SNOMED CT value set imported.
    let problems = &all["http://hl7.org/fhir/uv/ips/ValueSet/problems-uv-ips"];
    let members = expected(problems, &all, &rf2).unwrap();
    let mut list = members.iter();
    let (dropped, kept) = (*list.next().unwrap(), *list.next().unwrap());
    let x: u64 = 404684003;
    let implicit_members: BTreeSet<u64> = rf2.below(x).into_iter().chain([x]).collect();
    let vs = json!({
        "resourceType": "ValueSet", "url": "http://example.org/ValueSet/mixed", "version": "1",
        "status": "active",
        "compose": {
            "include": [
                {"valueSet": ["http://hl7.org/fhir/uv/ips/ValueSet/problems-uv-ips"]},
                {"valueSet": [format!("{SCT}?fhir_vs=isa/{x}")]},
                {"system": "http://terminology.hl7.org/CodeSystem/condition-category", "concept": [{"code": "problem-list-item"}]},
            ],
            "exclude": [{"system": SCT, "concept": [{"code": dropped.to_string()}]}],
        }
    });
    let cs = json!({"resourceType": "CodeSystem", "url": "http://terminology.hl7.org/CodeSystem/condition-category",
        "content": "complete", "concept": [{"code": "problem-list-item", "display": "Problem List Item"}]});
    for mode in [Mode::Inline, Mode::TxResource] {
        let extra = || vec![json!({"name": "tx-resource", "resource": cs})];
        let (status, v) = ask(&state, "$expand", mode, &vs, extra()).await;
        assert_eq!(status, StatusCode::OK, "{v}");
        let codes: BTreeSet<(String, String)> = v["expansion"]["contains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["system"].as_str().unwrap().into(),
                    c["code"].as_str().unwrap().into(),
                )
            })
            .collect();
        // The includes' union, less the exclude.
        let mut want: BTreeSet<(String, String)> = members
            .union(&implicit_members)
            .filter(|&&c| c != dropped)
            .map(|c| (SCT.to_owned(), c.to_string()))
            .collect();
        want.insert((
            "http://terminology.hl7.org/CodeSystem/condition-category".into(),
            "problem-list-item".into(),
        ));
        assert_eq!(codes, want, "{mode:?}");
        for (code, member) in [(kept, true), (dropped, false), (x, true)] {
            let (_, v) = ask(
                &state,
                "$validate-code",
                mode,
                &vs,
                vec![
                    json!({"name": "tx-resource", "resource": cs}),
                    json!({"name": "system", "valueUri": SCT}),
                    json!({"name": "code", "valueCode": code.to_string()}),
                ],
            )
            .await;
            let result = v["parameter"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == "result")
                .unwrap()["valueBoolean"]
                .as_bool()
                .unwrap();
            assert_eq!(result, member, "{mode:?} {code}: {v}");
        }
    }
}
