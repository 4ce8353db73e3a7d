//! `ConceptMap/$translate` over SNOMED CT's implicit concept maps, and the
//! CodeSystem search and read, at `/r4` and `/r5`, checked against what the
//! store says.

use crate::common;

use common::param;

use axum::http::StatusCode;
use serde_json::{Value, json};
use txmap_store::RefsetKind;

const SCT: &str = "http://snomed.info/sct";
const SAME_AS: u64 = 900000000000527005;
const WAS_A: u64 = 900000000000528000;

one_server!(|dir| {
    common::edition(dir, "ed", 800, 11, 20250131);
    common::serve(dir, "editions = [\"ed.txmap\"]\n")
});

fn matches(v: &Value) -> Vec<&Value> {
    v["parameter"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["name"] == "match")
        .collect()
}

fn part<'a>(m: &'a Value, name: &str) -> &'a Value {
    m["part"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no {name} in {m}"))
}

/// An inactive concept with an association from `refset`: its SCTID and
/// every (refset, target) association it has.
fn associated(refset: u64) -> (u64, Vec<(u64, u64)>) {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    (0..ed.concept_count())
        .map(|o| ed.sctid(o).unwrap())
        .find_map(|id| {
            let a = ed.associations(id).unwrap();
            a.iter()
                .any(|a| a.refset == refset)
                .then(|| (id, a.iter().map(|a| (a.refset, a.target)).collect()))
        })
        .expect("a concept with that association")
}

fn preferred(id: u64) -> String {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    ed.preferred_term(ed.ordinal(id).unwrap())
        .unwrap()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn same_as_translates_in_both_shapes_by_get_and_post() {
    let (id, all) = associated(SAME_AS);
    let &(_, target) = all.iter().find(|(r, _)| *r == SAME_AS).unwrap();
    let cm = format!("{SCT}?fhir_cm={SAME_AS}");
    for (base, key, rel, source) in [
        ("/r4", "equivalence", "equal", "source"),
        ("/r5", "relationship", "equivalent", "originMap"),
    ] {
        let (status, by_get) = get(&format!(
            "{base}/ConceptMap/$translate?system={SCT}&code={id}&url={cm}"
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{by_get}");
        let (status, by_post) = post(
            &format!("{base}/ConceptMap/$translate"),
            json!([
                {"name": "url", "valueUri": cm},
                {"name": "sourceCoding", "valueCoding": {"system": SCT, "code": id.to_string()}},
            ]),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{by_post}");
        assert_eq!(by_get, by_post);
        assert_eq!(param(&by_get, "result").unwrap()["valueBoolean"], true);
        let m = matches(&by_get);
        assert_eq!(m.len(), 1, "{by_get}");
        assert_eq!(part(m[0], key)["valueCode"], rel);
        assert_eq!(
            part(m[0], "concept")["valueCoding"],
            json!({"system": SCT, "code": target.to_string(), "display": preferred(target)})
        );
        let s = part(m[0], source);
        assert_eq!(
            s.get("valueUri").or(s.get("valueCanonical")).unwrap(),
            &json!(cm)
        );
    }
}

#[tokio::test]
async fn without_url_every_historical_association_answers() {
    let (id, all) = associated(WAS_A);
    let (status, v) = get(&format!("/r5/ConceptMap/$translate?system={SCT}&code={id}")).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let m = matches(&v);
    assert_eq!(m.len(), all.len(), "{v}");
    for (refset, target) in &all {
        let found = m
            .iter()
            .find(|m| {
                part(m, "concept")["valueCoding"]["code"]
                    .as_str()
                    .and_then(|c| c.parse::<u64>().ok())
                    == Some(*target)
                    && part(m, "originMap")["valueCanonical"] == format!("{SCT}?fhir_cm={refset}")
            })
            .unwrap_or_else(|| panic!("{refset} {target} in {v}"));
        if *refset == WAS_A {
            assert_eq!(
                part(found, "relationship")["valueCode"],
                "source-is-narrower-than-target"
            );
        }
    }
    // Another target system excludes SNOMED CT targets.
    let (status, v) = get(&format!(
        "/r4/ConceptMap/$translate?system={SCT}&code={id}&targetSystem=http://hl7.org/fhir/sid/icd-10"
    ))
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(param(&v, "result").unwrap()["valueBoolean"], false);
    assert!(matches(&v).is_empty());
}

#[tokio::test]
async fn a_map_refset_gives_its_map_targets() {
    let state = state();
    let ed = &state.editions.default_edition().unwrap().edition;
    let Some(r) = ed.refsets().find(|r| {
        matches!(
            r.kind,
            RefsetKind::SimpleMap | RefsetKind::ComplexMap | RefsetKind::ExtendedMap
        ) && r.member_count > 0
    }) else {
        eprintln!("the synthetic edition has no map refset: skipped");
        return;
    };
    let column = r
        .field_names()
        .iter()
        .position(|c| c == "mapTarget")
        .unwrap_or(0);
    let member = ed.members(r.id).unwrap()[0];
    let expected: Vec<String> = ed
        .members(r.id)
        .unwrap()
        .iter()
        .filter(|m| m.component == member.component)
        .filter_map(|m| m.field(column).filter(|t| !t.is_empty()).map(str::to_owned))
        .collect();
    assert!(!expected.is_empty());
    let (status, v) = get(&format!(
        "/r4/ConceptMap/$translate?system={SCT}&code={}&url={SCT}?fhir_cm={}&targetSystem=urn:x",
        member.component, r.id
    ))
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let got: Vec<String> = matches(&v)
        .iter()
        .map(|m| {
            let c = &part(m, "concept")["valueCoding"];
            assert_eq!(c["system"], "urn:x");
            c["code"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(got, expected);
}

#[tokio::test]
async fn unknown_codes_and_maps() {
    for base in ["/r4", "/r5"] {
        let (status, v) = get(&format!(
            "{base}/ConceptMap/$translate?system={SCT}&code=12345678"
        ))
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        assert_eq!(param(&v, "result").unwrap()["valueBoolean"], false);
        assert!(
            param(&v, "message").unwrap()["valueString"]
                .as_str()
                .unwrap()
                .contains("12345678")
        );
        let (status, v) = get(&format!(
            "{base}/ConceptMap/$translate?system={SCT}&code=138875005&url=http://example.org/cm"
        ))
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        assert_eq!(v["resourceType"], "OperationOutcome");
        let (status, v) = get(&format!(
            "{base}/ConceptMap/$translate?system={SCT}&code=138875005&url={SCT}?fhir_cm=900000000000509007"
        ))
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
        let (status, v) = get(&format!("{base}/ConceptMap/$translate?system={SCT}")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
        assert_eq!(v["resourceType"], "OperationOutcome");
        let (status, v) = get(&format!(
            "{base}/ConceptMap/$translate?system=http://loinc.org&code=1"
        ))
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
    }
}

#[tokio::test]
async fn codesystems_are_searched_and_read() {
    let state = state();
    let e = state.editions.default_edition().unwrap();
    let version = e.file.names.version_uri.clone();
    for base in ["/r4", "/r5"] {
        let (status, b) = get(&format!("{base}/CodeSystem?url={SCT}&version={version}")).await;
        assert_eq!(status, StatusCode::OK, "{b}");
        assert_eq!(b["resourceType"], "Bundle");
        assert_eq!(b["type"], "searchset");
        assert_eq!(b["total"], 1);
        let cs = &b["entry"][0]["resource"];
        assert_eq!(cs["url"], SCT);
        assert_eq!(cs["version"], version.as_str());
        assert_eq!(cs["status"], "active");
        assert_eq!(cs["content"], "not-present");
        assert_eq!(cs["count"], e.edition.concept_count());
        let id = cs["id"].as_str().unwrap();
        assert_eq!(
            id,
            "sct-".to_owned() + &e.edition.identity().edition_module.to_string() + "-20250131"
        );
        let (status, read) = get(&format!("{base}/CodeSystem/{id}")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(&read, cs);
        let (status, b) = get(&format!("{base}/CodeSystem?url=http://loinc.org")).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(b["total"], 0);
        let (status, b) = get(&format!(
            "{base}/CodeSystem?url={SCT}&version={SCT}/1/version/2"
        ))
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(b["total"], 0);
        let (status, v) = get(&format!("{base}/CodeSystem/nope")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(v["resourceType"], "OperationOutcome");
    }
}
