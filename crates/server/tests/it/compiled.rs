//! Compiled code system files (LOINC, RxNorm) served beside a SNOMED CT
//! edition: found by their metadata in `editions`, loaded in the mode the
//! config gives them, shown in `/status`, and answering `$lookup`,
//! `$validate-code` and `$expand` as the release's files say — the same
//! bytes read or mapped.

use crate::common;

use common::param;

use std::collections::BTreeMap;
use std::path::Path;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt;
use txmap_server::app::router;

const LOINC: &str = "http://loinc.org";

/// A synthetic LOINC release compiled into `dir/loinc.txmap`; its
/// `Loinc.csv` rows by code.
fn loinc(dir: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let release = dir.join("Loinc_2.99");
    txmap_codesystems::synth::write_release(
        &release,
        txmap_codesystems::synth::Shape { terms: 400 },
    )
    .unwrap();
    txmap_codesystems::loinc::import(
        &release,
        &dir.join("loinc.txmap"),
        &txmap_codesystems::ImportOptions::default(),
    )
    .unwrap();
    let mut r = csv::Reader::from_path(release.join("LoincTable/Loinc.csv")).unwrap();
    let headers: Vec<String> = r.headers().unwrap().iter().map(str::to_owned).collect();
    r.records()
        .map(|rec| {
            let row: BTreeMap<String, String> = headers
                .iter()
                .cloned()
                .zip(rec.unwrap().iter().map(str::to_owned))
                .collect();
            (row["LOINC_NUM"].clone(), row)
        })
        .collect()
}

async fn raw(
    state: std::sync::Arc<txmap_server::app::AppState>,
    uri: &str,
) -> (StatusCode, String) {
    let r = router(state)
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = r.status();
    let body = axum::body::to_bytes(r.into_body(), 1 << 24).await.unwrap();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn loinc_answers_from_its_file_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let rows = loinc(dir.path());
    common::edition(dir.path(), "sct", 300, 1, 20250131);
    let mapped = common::serve(
        dir.path(),
        "editions = [\"sct.txmap\", \"loinc.txmap\"]\n[snomed]\nload = \"mmap\"\n",
    );
    let read_dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        dir.path().join("loinc.txmap"),
        read_dir.path().join("loinc.txmap"),
    )
    .unwrap();
    let read = common::serve(read_dir.path(), "editions = [\"loinc.txmap\"]\n");

    // /status lists the file as a code system, mapped or read as asked.
    let (status, body) = raw(mapped.clone(), "/status").await;
    assert_eq!(status, StatusCode::OK);
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["editions"].as_array().unwrap().len(), 1);
    let cs = &v["codeSystems"][0];
    assert_eq!(cs["url"], LOINC);
    assert_eq!(cs["versionUri"], "http://loinc.org|2.99");
    assert_eq!(cs["mode"], "mmap");
    assert_eq!(cs["mapped"], true);
    assert_eq!(cs["verification"]["state"], "verified");
    let (status, metrics) = raw(mapped.clone(), "/metrics").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        metrics
            .contains("txmap_codesystem_mapped{version=\"http://loinc.org|2.99\",mode=\"mmap\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "txmap_codesystem_serving{version=\"http://loinc.org|2.99\",mode=\"mmap\"} 1"
        )
    );
    let (_, body) = raw(read.clone(), "/status").await;
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["codeSystems"][0]["mapped"], false);
    assert_eq!(v["codeSystems"][0]["mode"], "read");

    for (code, row) in rows.iter().step_by(37) {
        let uri = format!("/r4/CodeSystem/$lookup?system={LOINC}&code={code}");
        let (status, a) = raw(mapped.clone(), &uri).await;
        assert_eq!(status, StatusCode::OK, "{a}");
        let (_, b) = raw(read.clone(), &uri).await;
        assert_eq!(a, b, "read and mapped answers differ for {code}");
        let v: Value = serde_json::from_str(&a).unwrap();
        assert_eq!(
            param(&v, "display").unwrap()["valueString"],
            row["LONG_COMMON_NAME"]
        );
        assert_eq!(param(&v, "version").unwrap()["valueString"], "2.99");
        let props: Vec<&Value> = v["parameter"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["name"] == "property")
            .collect();
        let status_prop = props
            .iter()
            .find(|p| p["part"][0]["valueCode"] == "STATUS")
            .unwrap();
        assert_eq!(status_prop["part"][1]["valueString"], row["STATUS"]);

        // $validate-code: the long common name is the display; another
        // text is an error naming the right one.
        let (_, v) = common::call(
            mapped.clone(),
            Method::POST,
            "/r4/CodeSystem/$validate-code",
            Some(common::parameters(json!([
                {"name": "url", "valueUri": LOINC},
                {"name": "code", "valueCode": code},
                {"name": "display", "valueString": row["LONG_COMMON_NAME"]},
            ]))),
        )
        .await;
        assert_eq!(param(&v, "result").unwrap()["valueBoolean"], true, "{v}");
        let (_, v) = common::call(
            mapped.clone(),
            Method::POST,
            "/r4/CodeSystem/$validate-code",
            Some(common::parameters(json!([
                {"name": "url", "valueUri": LOINC},
                {"name": "code", "valueCode": code},
                {"name": "display", "valueString": "not the display"},
            ]))),
        )
        .await;
        assert_eq!(param(&v, "result").unwrap()["valueBoolean"], false, "{v}");
    }

    // An unknown code.
    let (_, v) = common::call(
        mapped.clone(),
        Method::GET,
        &format!("/r4/CodeSystem/$validate-code?url={LOINC}&code=99999-9"),
        None,
    )
    .await;
    assert_eq!(param(&v, "result").unwrap()["valueBoolean"], false, "{v}");

    // $expand of a value set filtering on a part name, against the CSV.
    let component = rows.values().nth(5).unwrap()["COMPONENT"].clone();
    let mut want: Vec<&String> = rows
        .values()
        .filter(|r| r["COMPONENT"] == component)
        .map(|r| &r["LOINC_NUM"])
        .collect();
    want.sort();
    let vs = json!({"resourceType": "ValueSet", "status": "active", "compose": {"include": [
        {"system": LOINC, "filter": [{"property": "COMPONENT", "op": "=", "value": component}]}
    ]}});
    for state in [mapped.clone(), read.clone()] {
        let (status, v) = common::call(
            state,
            Method::POST,
            "/r5/ValueSet/$expand",
            Some(common::parameters(
                json!([{"name": "valueSet", "resource": vs}]),
            )),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
        let mut got: Vec<String> = v["expansion"]["contains"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["code"].as_str().unwrap().to_owned())
            .collect();
        got.sort();
        assert_eq!(got.iter().collect::<Vec<_>>(), want);
        assert_eq!(v["expansion"]["total"], want.len());
    }
}

#[tokio::test]
async fn loincs_implicit_value_sets_answer_by_url() {
    let dir = tempfile::tempdir().unwrap();
    let rows = loinc(dir.path());
    let state = common::serve(dir.path(), "editions = [\"loinc.txmap\"]\n");
    let release = dir.path().join("Loinc_2.99/AccessoryFiles");
    let mut answers = csv::Reader::from_path(release.join("AnswerFile/AnswerList.csv")).unwrap();
    let records: Vec<csv::StringRecord> = answers.records().map(Result::unwrap).collect();
    let list = records[4][0].to_owned();
    let mut want: Vec<(u32, String)> = records
        .iter()
        .filter(|r| r[0] == *list)
        .map(|r| (r[5].parse().unwrap(), r[4].to_owned()))
        .collect();
    want.sort();
    let want: Vec<String> = want.into_iter().map(|(_, a)| a).collect();

    let codes = |v: &Value| -> Vec<String> {
        v["expansion"]["contains"]
            .as_array()
            .unwrap_or_else(|| panic!("{v}"))
            .iter()
            .map(|c| c["code"].as_str().unwrap().to_owned())
            .collect()
    };
    let (status, v) = common::call(
        state.clone(),
        Method::GET,
        &format!("/r4/ValueSet/$expand?url=http://loinc.org/vs/{list}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let mut got = codes(&v);
    got.sort();
    let mut sorted = want.clone();
    sorted.sort();
    assert_eq!(got, sorted);

    // A list the release does not have names no value set.
    for missing in ["LL0-0", "LP0-0", "LL"] {
        let (status, v) = common::call(
            state.clone(),
            Method::GET,
            &format!("/r4/ValueSet/$expand?url=http://loinc.org/vs/{missing}"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{missing}: {v}");
    }

    // Every code of the release is in http://loinc.org/vs.
    let code = rows.keys().nth(9).unwrap();
    let (_, v) = common::call(
        state.clone(),
        Method::GET,
        &format!("/r4/ValueSet/$validate-code?url=http://loinc.org/vs&system={LOINC}&code={code}"),
        None,
    )
    .await;
    assert_eq!(param(&v, "result").unwrap()["valueBoolean"], true, "{v}");

    // Below a class part in the hierarchy: its components and their terms.
    let mut h = csv::Reader::from_path(
        release.join("ComponentHierarchyBySystem/ComponentHierarchyBySystem.csv"),
    )
    .unwrap();
    let rows: Vec<csv::StringRecord> = h.records().map(Result::unwrap).collect();
    let class = rows[1][3].to_owned();
    let components: Vec<&str> = rows
        .iter()
        .filter(|r| r[2] == *class)
        .map(|r| &r[3])
        .collect();
    let terms = rows.iter().filter(|r| components.contains(&&r[2])).count();
    let (status, v) = common::call(
        state,
        Method::GET,
        &format!("/r4/ValueSet/$expand?url=http://loinc.org/vs/{class}&count=1"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["expansion"]["total"], components.len() + terms);
}

#[tokio::test]
async fn rxnorm_answers_by_its_url_beside_loinc() {
    let dir = tempfile::tempdir().unwrap();
    loinc(dir.path());
    let release = dir.path().join("rxnorm");
    txmap_codesystems::synth::write_rxnorm(&release, 30).unwrap();
    txmap_codesystems::rxnorm::import(
        &release,
        &dir.path().join("rxnorm.txmap"),
        &txmap_codesystems::ImportOptions::default(),
    )
    .unwrap();
    let state = common::serve(
        dir.path(),
        "editions = [\"loinc.txmap\", \"rxnorm.txmap\"]\n[snomed]\nload = \"mmap\"\n",
    );
    let rx = txmap_codesystems::rxnorm::URL;
    // The first SCD atom of the RRF, and its concept's display.
    let conso = std::fs::read_to_string(release.join("rrf/RXNCONSO.RRF")).unwrap();
    let scd: Vec<&str> = conso
        .lines()
        .map(|l| l.split('|').collect::<Vec<_>>())
        .find(|f| f[11] == "RXNORM" && f[12] == "SCD")
        .unwrap();
    let (status, v) = common::call(
        state.clone(),
        Method::GET,
        &format!("/r4/CodeSystem/$lookup?system={rx}&code={}", scd[0]),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(param(&v, "display").unwrap()["valueString"], scd[14]);
    assert_eq!(param(&v, "version").unwrap()["valueString"], "08042025");
    // A LOINC code is not an RxNorm code: each file answers for its URL.
    let (_, v) = common::call(
        state,
        Method::GET,
        &format!("/r4/CodeSystem/$validate-code?url={rx}&code=10000-8"),
        None,
    )
    .await;
    assert_eq!(param(&v, "result").unwrap()["valueBoolean"], false, "{v}");
}
