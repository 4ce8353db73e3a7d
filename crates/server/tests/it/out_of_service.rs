//! A file out of service is never "unknown": for a SNOMED CT edition and
//! LOINC, RxNorm and NDC files whose checksums fail, every operation that
//! needs one — its own operations, value sets from a package by URL and
//! sent inline, implicit value sets, through SNOMED CT's native path and
//! the generic engine — answers 503 naming the system and the file (by
//! its name, not its path), never 404, never `result: false`. The same
//! requests answer 200 (and `true`) on the same files undamaged.

use crate::common;

use std::path::Path;
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use txmap_server::app::AppState;

const SCT: &str = "http://snomed.info/sct";
const LOINC: &str = txmap_codesystems::loinc::URL;
const RXNORM: &str = txmap_codesystems::rxnorm::URL;
const NDC: &str = txmap_codesystems::ndc::URL;

/// One file of each kind in `dir`, and a code of each, read from the
/// release files that made it.
fn files(dir: &Path) -> Vec<(&'static str, &'static str, String)> {
    // SNOMED CT: the synthetic release's first active concept.
    common::edition(dir, "sct", 300, 1, 20250131);
    let concepts = std::fs::read_dir(dir.join("sct-rf2"))
        .unwrap()
        .flat_map(|d| walk(&d.unwrap().path()))
        .find(|p| p.to_string_lossy().contains("sct2_Concept_Snapshot"))
        .unwrap();
    let sct = std::fs::read_to_string(concepts)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find(|f| f[2] == "1")
        .unwrap()[0]
        .to_owned();
    // LOINC: the first row of Loinc.csv.
    let loinc = dir.join("Loinc_2.99");
    txmap_codesystems::synth::write_release(&loinc, txmap_codesystems::synth::Shape { terms: 50 })
        .unwrap();
    let options = txmap_codesystems::ImportOptions::default();
    txmap_codesystems::loinc::import(&loinc, &dir.join("loinc.txmap"), &options).unwrap();
    let mut rows = csv::Reader::from_path(loinc.join("LoincTable/Loinc.csv")).unwrap();
    let loinc_code = rows.records().next().unwrap().unwrap()[0].to_owned();
    // RxNorm: the first RXNORM atom's RXCUI.
    let rx = dir.join("rxnorm");
    txmap_codesystems::synth::write_rxnorm(&rx, 10).unwrap();
    txmap_codesystems::rxnorm::import(&rx, &dir.join("rxnorm.txmap"), &options).unwrap();
    let rxcui = std::fs::read_to_string(rx.join("rrf/RXNCONSO.RRF"))
        .unwrap()
        .lines()
        .map(|l| l.split('|').map(str::to_owned).collect::<Vec<_>>())
        .find(|f| f[11] == "RXNORM")
        .unwrap()[0]
        .clone();
    // NDC: one product with one package, written here.
    let ndc = dir.join("2025-07-11");
    std::fs::create_dir_all(&ndc).unwrap();
    std::fs::write(
        ndc.join("product.txt"),
        "PRODUCTID\tPRODUCTNDC\tPRODUCTTYPENAME\tPROPRIETARYNAME\tPROPRIETARYNAMESUFFIX\tNONPROPRIETARYNAME\tDOSAGEFORMNAME\tROUTENAME\tSTARTMARKETINGDATE\tENDMARKETINGDATE\tMARKETINGCATEGORYNAME\tAPPLICATIONNUMBER\tLABELERNAME\tSUBSTANCENAME\tNDC_EXCLUDE_FLAG\r\n\
         p1\t0002-0152\tHUMAN PRESCRIPTION DRUG\tZepbound\t\ttirzepatide\tINJECTION\tSUBCUTANEOUS\t20231108\t\tNDA\tNDA1\tEli Lilly\tTIRZEPATIDE\tN\r\n",
    )
    .unwrap();
    std::fs::write(
        ndc.join("package.txt"),
        "PRODUCTID\tPRODUCTNDC\tNDCPACKAGECODE\tPACKAGEDESCRIPTION\tSTARTMARKETINGDATE\tENDMARKETINGDATE\tNDC_EXCLUDE_FLAG\tSAMPLE_PACKAGE\r\n\
         p1\t0002-0152\t0002-0152-01\t1 VIAL in 1 CARTON\t20240328\t\tN\tN\r\n",
    )
    .unwrap();
    txmap_codesystems::ndc::import(&ndc, &dir.join("ndc.txmap"), &options).unwrap();
    vec![
        ("sct.txmap", SCT, sct),
        ("loinc.txmap", LOINC, loinc_code),
        ("rxnorm.txmap", RXNORM, rxcui),
        ("ndc.txmap", NDC, "0002-0152".to_owned()),
    ]
}

fn walk(p: &Path) -> Vec<std::path::PathBuf> {
    if p.is_dir() {
        std::fs::read_dir(p)
            .unwrap()
            .flat_map(|d| walk(&d.unwrap().path()))
            .collect()
    } else {
        vec![p.to_owned()]
    }
}

/// Flips a byte in the middle of the largest section of `file` that
/// opening does not read (it still opens; its checksum then fails).
fn damage(file: &Path) {
    let good = std::fs::read(file).unwrap();
    let container = txmap_format::Container::open(&good).unwrap();
    let mut sections: Vec<(u64, u64)> = container
        .entries()
        .iter()
        .map(|e| (e.offset.get(), e.len.get()))
        .filter(|&(_, len)| len > 0)
        .collect();
    sections.sort_by_key(|&(_, len)| std::cmp::Reverse(len));
    for (offset, len) in sections {
        let mut bad = good.clone();
        bad[(offset + len / 2) as usize] ^= 0x10;
        let opens = txmap_store::Edition::open(bad.clone()).is_ok()
            || txmap_codesystems::CodeSystemFile::open(bad.clone()).is_ok();
        if opens {
            std::fs::write(file, bad).unwrap();
            return;
        }
    }
    panic!("{}: no section is read lazily", file.display());
}

/// A package holding, for each system, a value set of all its codes.
fn package(dir: &Path) {
    let mut files = vec![(
        "package/package.json".to_owned(),
        json!({"name": "example.vs", "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
    )];
    for (name, system) in [("sct", SCT), ("loinc", LOINC), ("rx", RXNORM), ("ndc", NDC)] {
        files.push((
            format!("package/ValueSet-{name}.json"),
            json!({"resourceType": "ValueSet", "url": format!("http://example.org/vs/{name}"),
                "status": "active", "compose": {"include": [{"system": system}]}}),
        ));
    }
    let files: Vec<(&str, Value)> = files.iter().map(|(p, v)| (p.as_str(), v.clone())).collect();
    std::fs::write(
        dir.join("vs.tgz"),
        txmap_packages::pack_json(&files).unwrap(),
    )
    .unwrap();
}

/// Every request that needs `system`'s file, by GET or with a body.
fn requests(name: &str, system: &str, code: &str) -> Vec<(String, Option<Value>)> {
    let vs_url = format!(
        "http://example.org/vs/{}",
        match system {
            SCT => "sct",
            LOINC => "loinc",
            RXNORM => "rx",
            _ => "ndc",
        }
    );
    let inline = json!({"resourceType": "ValueSet", "url": "http://example.org/inline",
        "status": "active", "compose": {"include": [{"system": system}]}});
    let mut out = vec![
        (
            format!("/r4/CodeSystem/$lookup?system={system}&code={code}"),
            None,
        ),
        (
            format!("/r4/CodeSystem/$validate-code?url={system}&code={code}"),
            None,
        ),
        (
            format!("/r5/ValueSet/$validate-code?url={vs_url}&system={system}&code={code}"),
            None,
        ),
        (format!("/r4/ValueSet/$expand?url={vs_url}&count=5"), None),
        (
            "/r4/ValueSet/$validate-code".to_owned(),
            Some(common::parameters(json!([
                {"name": "valueSet", "resource": inline},
                {"name": "coding", "valueCoding": {"system": system, "code": code}},
            ]))),
        ),
        (
            "/r4/ValueSet/$validate-code".to_owned(),
            Some(common::parameters(json!([
                {"name": "valueSet", "resource": inline},
                {"name": "codeableConcept", "valueCodeableConcept": {"coding": [
                    {"system": system, "code": code}]}},
            ]))),
        ),
        (
            "/r4/ValueSet/$expand".to_owned(),
            Some(common::parameters(json!([
                {"name": "valueSet", "resource": inline},
                {"name": "count", "valueInteger": 5},
            ]))),
        ),
        (
            "/r4/ValueSet/$batch-validate-code".to_owned(),
            Some(common::parameters(json!([
                {"name": "url", "valueUri": vs_url},
                {"name": "validation", "resource": common::parameters(json!([
                    {"name": "coding", "valueCoding": {"system": system, "code": code}}]))},
            ]))),
        ),
    ];
    match name {
        "sct.txmap" => {
            out.push((
                format!("/r4/ValueSet/$expand?url={SCT}?fhir_vs=isa/{code}"),
                None,
            ));
            out.push((
                format!("/r4/ValueSet/$validate-code?url={SCT}?fhir_vs&system={SCT}&code={code}"),
                None,
            ));
            out.push((
                format!("/r4/CodeSystem/$subsumes?system={SCT}&codeA={code}&codeB={code}"),
                None,
            ));
        }
        "loinc.txmap" => {
            out.push((format!("/r4/ValueSet/$expand?url={LOINC}/vs&count=5"), None));
            out.push((
                format!("/r4/CodeSystem/$subsumes?system={LOINC}&codeA={code}&codeB={code}"),
                None,
            ));
        }
        _ => {}
    }
    out
}

/// The refusal's text: a 503 OperationOutcome's — or, in a batch (200,
/// each validation answered on its own), the validation's
/// OperationOutcome's, whose issue is `transient`.
fn refusal(uri: &str, status: StatusCode, v: &Value) -> String {
    let outcome = if uri.contains("$batch-validate-code") {
        assert_eq!(status, StatusCode::OK, "{uri}: {v}");
        let inner = &v["parameter"][0]["resource"];
        assert_eq!(inner["issue"][0]["code"], "transient", "{uri}: {v}");
        inner
    } else {
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{uri}: {v}");
        v
    };
    assert_eq!(outcome["resourceType"], "OperationOutcome", "{uri}: {v}");
    outcome["issue"][0]["details"]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

async fn ask(state: &Arc<AppState>, uri: &str, body: &Option<Value>) -> (StatusCode, Value) {
    let method = if body.is_some() {
        Method::POST
    } else {
        Method::GET
    };
    common::call(Arc::clone(state), method, uri, body.clone()).await
}

/// Every `result` in an answer (a batch has one per validation).
fn results(v: &Value) -> Vec<bool> {
    let mut out = Vec::new();
    if let Some(r) = common::param(v, "result") {
        out.extend(r["valueBoolean"].as_bool());
    }
    for p in v["parameter"].as_array().into_iter().flatten() {
        if let Some(inner) = p.get("resource") {
            out.extend(results(inner));
        }
    }
    out
}

#[tokio::test]
async fn a_file_out_of_service_is_503_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    package(dir.path());
    let config = "editions = [\"sct.txmap\", \"loinc.txmap\", \"rxnorm.txmap\", \"ndc.txmap\"]\npackages = [\"vs.tgz\"]\n";
    let good = common::serve(dir.path(), config);
    for (name, system, code) in &files {
        for (uri, body) in requests(name, system, code) {
            let (status, v) = ask(&good, &uri, &body).await;
            assert_eq!(status, StatusCode::OK, "{name}: {uri} {body:?}: {v}");
            assert!(results(&v).iter().all(|&r| r), "{name}: {uri}: {v}");
        }
    }
    drop(good);
    for (name, _, _) in &files {
        damage(&dir.path().join(name));
    }
    let damaged = common::serve(dir.path(), config);
    let status = txmap_server::status::status_json(&damaged, txmap_server::status::View::Admin);
    for (name, system, code) in &files {
        for (uri, body) in requests(name, system, code) {
            let (status, v) = ask(&damaged, &uri, &body).await;
            let text = refusal(&uri, status, &v);
            let shown = if *system == SCT { "SNOMED CT" } else { system };
            assert!(
                text.contains(name) && text.contains(shown) && text.contains("failed verification"),
                "{uri}: {text}"
            );
            assert!(
                !text.contains(&*dir.path().to_string_lossy()),
                "a client is not told where files live: {text}"
            );
        }
    }
    assert!(status.to_string().contains("failed"), "{status}");
}

/// While a file is being verified (as a large one is for a while after a
/// start, or again after a change), what needs it is a 503 with
/// `Retry-After`, through the native path and the generic engine alike.
#[tokio::test]
async fn a_file_being_verified_is_503_with_retry_after() {
    let dir = tempfile::tempdir().unwrap();
    let files = files(dir.path());
    package(dir.path());
    let state = common::serve(
        dir.path(),
        "editions = [\"sct.txmap\", \"loinc.txmap\"]\npackages = [\"vs.tgz\"]\n",
    );
    state.editions.list[0].file.serving.begin();
    state.editions.code_systems[0].file.serving.begin();
    for (name, system, code) in files.iter().take(2) {
        for (uri, body) in requests(name, system, code) {
            let method = if body.is_some() { "POST" } else { "GET" };
            let mut r = axum::http::Request::builder().method(method).uri(&uri);
            if body.is_some() {
                r = r.header("content-type", "application/fhir+json");
            }
            let body = body.map_or(axum::body::Body::empty(), |b| b.to_string().into());
            let response = tower::ServiceExt::oneshot(
                txmap_server::app::router(Arc::clone(&state)),
                r.body(body).unwrap(),
            )
            .await
            .unwrap();
            let status = response.status();
            if status == StatusCode::SERVICE_UNAVAILABLE {
                assert!(response.headers().contains_key("retry-after"), "{uri}");
            }
            let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
                .await
                .unwrap();
            let v: Value = serde_json::from_slice(&bytes).unwrap();
            let text = refusal(&uri, status, &v);
            assert!(
                text.contains(name) && text.contains("being verified"),
                "{uri}: {text}"
            );
        }
    }
}
