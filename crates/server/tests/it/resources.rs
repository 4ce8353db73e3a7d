//! FHIR read and search of CodeSystems, ValueSets and ConceptMaps: the
//! editions and the packages' resources, every search parameter, paging
//! links, `_summary`, `_elements` and `_total`; and the code systems
//! TerminologyCapabilities lists.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};
use txmap_server::app::AppState;

const SCT: &str = "http://snomed.info/sct";

fn package() -> Vec<u8> {
    let vs = |id: &str, name: &str, title: &str, status: &str, version: &str| {
        json!({"resourceType": "ValueSet", "id": id, "url": format!("http://example.org/ValueSet/{id}"),
            "version": version, "name": name, "title": title, "status": status,
            "description": "not in the summary",
            "compose": {"include": [{"system": "http://example.org/cs"}]}})
    };
    txmap_packages::pack_json(&[
        (
            "package/package.json",
            json!({"name": "example.terminology", "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
        ),
        ("package/ValueSet-alpha.json", vs("alpha", "Álpha", "Alpha codes", "active", "1.0.0")),
        ("package/ValueSet-alpha2.json", vs("alpha2", "AlphaTwo", "Alpha, again", "draft", "2.0.0")),
        ("package/ValueSet-beta.json", vs("beta", "Beta", "Codes of beta", "retired", "1.0.0")),
        (
            "package/CodeSystem-cs.json",
            json!({"resourceType": "CodeSystem", "id": "cs", "url": "http://example.org/cs",
                "version": "3", "name": "ExampleCS", "status": "active", "content": "complete",
                "concept": [{"code": "a"}]}),
        ),
        (
            "package/CodeSystem-sup.json",
            json!({"resourceType": "CodeSystem", "id": "sup", "url": "http://example.org/sup",
                "version": "1", "name": "Sup", "status": "active", "content": "supplement",
                "supplements": "http://example.org/cs", "concept": [{"code": "a"}]}),
        ),
        (
            "package/ConceptMap-map.json",
            json!({"resourceType": "ConceptMap", "id": "map", "url": "http://example.org/ConceptMap/map",
                "name": "Map", "status": "active", "sourceUri": "http://example.org/ValueSet/alpha",
                "group": []}),
        ),
    ])
    .unwrap()
}

fn server() -> Arc<AppState> {
    static STATE: std::sync::OnceLock<Arc<AppState>> = std::sync::OnceLock::new();
    STATE
        .get_or_init(|| {
            // Removed once the server holds what it read.
            let dir = tempfile::tempdir().unwrap();
            common::edition(dir.path(), "ed", 200, 1, 20250131);
            std::fs::write(dir.path().join("example.tgz"), package()).unwrap();
            common::serve(
                dir.path(),
                "editions = [\"ed.txmap\"]\npackages = [\"example.tgz\"]\n",
            )
        })
        .clone()
}

async fn get(state: &Arc<AppState>, uri: &str) -> (StatusCode, Value) {
    common::call(state.clone(), Method::GET, uri, None).await
}

fn urls(bundle: &Value) -> Vec<String> {
    bundle["entry"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["resource"]["url"].as_str().unwrap().to_owned())
        .collect()
}

fn ids(bundle: &Value) -> BTreeSet<String> {
    bundle["entry"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["resource"]["id"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn every_search_parameter_narrows_as_fhir_says() {
    let s = server();
    let search = |q: &str| {
        let s = s.clone();
        let q = q.to_owned();
        async move {
            let (status, b) = get(&s, &format!("/r4/ValueSet?{q}")).await;
            assert_eq!(status, StatusCode::OK, "{q}: {b}");
            assert_eq!(b["resourceType"], "Bundle");
            assert_eq!(b["type"], "searchset");
            ids(&b)
        }
    };
    let set = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
    assert_eq!(search("").await, set(&["alpha", "alpha2", "beta"]));
    assert_eq!(
        search("url=http://example.org/ValueSet/alpha").await,
        set(&["alpha"])
    );
    assert_eq!(
        search("url=http://example.org/ValueSet/alpha,http://example.org/ValueSet/beta").await,
        set(&["alpha", "beta"])
    );
    assert!(
        search("url=http://example.org/ValueSet/alp")
            .await
            .is_empty(),
        "uri is exact"
    );
    assert_eq!(search("version=2.0.0").await, set(&["alpha2"]));
    // String search: prefix, blind to case and accents.
    assert_eq!(search("name=alpha").await, set(&["alpha", "alpha2"]));
    assert_eq!(search("name:exact=AlphaTwo").await, set(&["alpha2"]));
    assert!(search("name:exact=alphatwo").await.is_empty());
    assert_eq!(search("name:contains=two").await, set(&["alpha2"]));
    assert_eq!(search("title=codes").await, set(&["beta"]));
    assert_eq!(
        search("title:contains=codes").await,
        set(&["alpha", "beta"])
    );
    assert_eq!(
        search("status=draft,retired").await,
        set(&["alpha2", "beta"])
    );
    assert_eq!(search("_id=beta").await, set(&["beta"]));
    assert_eq!(search("name=alpha&status=active").await, set(&["alpha"]));
    // Parameters a server does not support are ignored.
    assert_eq!(search("publisher=x&_sort=name").await.len(), 3);
    let (status, v) = get(&s, "/r4/ValueSet?url:below=http://example.org").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    assert_eq!(v["resourceType"], "OperationOutcome");
    let (status, _) = get(&s, "/r4/ValueSet?_count=many").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn pages_link_to_each_other_and_cover_the_results_once() {
    let s = server();
    let (_, first) = get(&s, "/r4/ValueSet?_count=2").await;
    assert_eq!(first["total"], 3);
    let link = |b: &Value, rel: &str| {
        b["link"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["relation"] == rel)
            .map(|l| l["url"].as_str().unwrap().to_owned())
    };
    assert!(link(&first, "previous").is_none());
    let mut seen = Vec::new();
    let mut page = first.clone();
    loop {
        seen.extend(urls(&page));
        let Some(next) = link(&page, "next") else {
            break;
        };
        let path = next
            .split_once("/r4")
            .map(|(_, p)| format!("/r4{p}"))
            .unwrap();
        page = get(&s, &path).await.1;
        assert_eq!(page["entry"].as_array().unwrap().len(), 1);
        assert!(link(&page, "previous").is_some());
    }
    assert_eq!(seen.len(), 3);
    assert_eq!(seen.iter().collect::<BTreeSet<_>>().len(), 3);
    assert_eq!(link(&first, "last"), link(&page, "self"));
    let (_, none) = get(&s, "/r4/ValueSet?_total=none").await;
    assert!(none.get("total").is_none());
    assert_eq!(none["entry"].as_array().unwrap().len(), 3);
    let (_, count) = get(&s, "/r4/ValueSet?_summary=count&status=active").await;
    assert_eq!(count["total"], 1);
    assert!(count.get("entry").is_none());
}

#[tokio::test]
async fn summaries_and_elements_trim_resources_and_say_so() {
    let s = server();
    let (_, b) = get(&s, "/r4/ValueSet?_id=alpha&_summary=true").await;
    let r = &b["entry"][0]["resource"];
    assert_eq!(r["url"], "http://example.org/ValueSet/alpha");
    assert_eq!(r["name"], "Álpha");
    assert!(
        r.get("compose").is_none() && r.get("description").is_none(),
        "{r}"
    );
    assert_eq!(r["meta"]["tag"][0]["code"], "SUBSETTED");
    let (_, b) = get(&s, "/r4/ValueSet?_id=alpha&_elements=title,compose").await;
    let r = &b["entry"][0]["resource"];
    let keys: BTreeSet<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        keys,
        ["compose", "id", "meta", "resourceType", "title"]
            .into_iter()
            .collect()
    );
    let (_, b) = get(&s, "/r4/ValueSet?_id=alpha").await;
    let r = &b["entry"][0]["resource"];
    assert!(r.get("compose").is_some() && r.get("meta").is_none());
    assert_eq!(
        b["entry"][0]["fullUrl"],
        "http://localhost/r4/ValueSet/alpha"
    );
}

#[tokio::test]
async fn each_type_reads_by_id_and_code_systems_include_the_editions() {
    let s = server();
    for (path, url) in [
        ("/r4/ValueSet/beta", "http://example.org/ValueSet/beta"),
        ("/r5/CodeSystem/cs", "http://example.org/cs"),
        ("/r4/ConceptMap/map", "http://example.org/ConceptMap/map"),
    ] {
        let (status, v) = get(&s, path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {v}");
        assert_eq!(v["url"], url);
    }
    let (status, v) = get(&s, "/r4/ValueSet/%00%ff").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(v["resourceType"], "OperationOutcome");
    for path in [
        "/r4/ValueSet/nope",
        "/r4/ConceptMap/alpha",
        "/r4/CodeSystem/beta",
    ] {
        let (status, v) = get(&s, path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert_eq!(v["resourceType"], "OperationOutcome");
    }
    let (_, all) = get(&s, "/r4/CodeSystem?_elements=url").await;
    let found: BTreeSet<String> = urls(&all).into_iter().collect();
    assert_eq!(
        found,
        [SCT, "http://example.org/cs", "http://example.org/sup"]
            .into_iter()
            .map(String::from)
            .collect()
    );
    let (_, sct) = get(&s, &format!("/r4/CodeSystem?url={SCT}")).await;
    let e = state_edition(&s);
    assert_eq!(sct["entry"][0]["resource"]["version"], e.0);
    assert_eq!(sct["entry"][0]["resource"]["content"], "not-present");
    assert_eq!(sct["entry"][0]["resource"]["count"], e.1);
    let id = sct["entry"][0]["resource"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let (status, read) = get(&s, &format!("/r4/CodeSystem/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read["version"], e.0);
    // TerminologyCapabilities: SNOMED CT and the package's code system,
    // not its supplement.
    let (_, tc) = get(&s, "/r4/metadata?mode=terminology").await;
    let listed: Vec<&str> = tc["codeSystem"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["uri"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [SCT, "http://example.org/cs"]);
    assert_eq!(tc["codeSystem"][1]["version"][0]["code"], "3");
    assert_eq!(tc["codeSystem"][1]["version"][0]["isDefault"], true);
}

fn state_edition(s: &Arc<AppState>) -> (String, u32) {
    let e = s.editions.default_edition().unwrap();
    (e.file.names.version_uri.clone(), e.edition.concept_count())
}

#[tokio::test]
async fn a_summary_search_pages_through_every_value_set_of_a_real_package() {
    let Some(tho) = common::fhir_package("hl7.terminology.r4-7.0.1.tgz") else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    common::edition(dir.path(), "ed", 200, 1, 20250131);
    let config = format!(
        "editions = [\"ed.txmap\"]\npackages = [{:?}]\n",
        tho.display().to_string()
    );
    let s = common::serve(dir.path(), &config);
    // What the package holds, by (url, version).
    let p = txmap_packages::Package::open(&tho).unwrap();
    let expected: BTreeSet<(String, Option<String>)> = p
        .entries()
        .iter()
        .filter(|e| e.kind == txmap_packages::Kind::ValueSet)
        .map(|e| (e.url.clone(), e.version.clone()))
        .collect();
    assert!(expected.len() > 1000, "{}", expected.len());
    let mut seen = BTreeSet::new();
    let mut offset = 0;
    loop {
        let (status, b) = get(
            &s,
            &format!("/r4/ValueSet?_summary=true&_count=500&_offset={offset}"),
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(b["total"], expected.len());
        let entries = b["entry"].as_array().unwrap();
        for e in entries {
            let r = &e["resource"];
            assert!(r.get("compose").is_none(), "{r}");
            assert_eq!(r["meta"]["tag"][0]["code"], "SUBSETTED");
            seen.insert((
                r["url"].as_str().unwrap().to_owned(),
                r["version"].as_str().map(str::to_owned),
            ));
        }
        offset += entries.len();
        if entries.is_empty() || offset >= expected.len() {
            break;
        }
    }
    assert_eq!(seen, expected);
    // HAPI's question: is this code system here?
    let (_, b) = get(
        &s,
        "/r4/CodeSystem?url=http://terminology.hl7.org/CodeSystem/v3-RoleCode&_summary=true",
    )
    .await;
    assert_eq!(b["total"], 1);
    assert_eq!(b["entry"][0]["resource"]["name"], "RoleCode");
    let (_, tc) = get(&s, "/r4/metadata?mode=terminology").await;
    assert!(
        tc["codeSystem"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["uri"] == "http://terminology.hl7.org/CodeSystem/v3-RoleCode")
    );
}

/// The offset of the query string in `url`.
fn offset_of(url: &str) -> u64 {
    url.split(['?', '&'])
        .find_map(|p| p.strip_prefix("_offset="))
        .map_or(0, |o| o.parse().unwrap())
}

#[tokio::test]
async fn paging_links_never_wrap_around() {
    let s = server();
    for offset in [u64::MAX, u64::MAX - 1, 1 << 63, 4, 3] {
        let (status, b) = get(&s, &format!("/r4/ValueSet?_offset={offset}&_count=5")).await;
        assert_eq!(status, StatusCode::OK, "{b}");
        assert_eq!(b["entry"].as_array().unwrap().len(), 0, "{offset}: {b}");
        for l in b["link"].as_array().unwrap() {
            let url = l["url"].as_str().unwrap();
            match l["relation"].as_str().unwrap() {
                // The page past the end links back, never forward.
                "next" => panic!("{offset}: a next link past the end: {url}"),
                "previous" | "first" | "last" => assert!(offset_of(url) < 3, "{url}"),
                _ => {}
            }
        }
    }
    let (status, b) = get(&s, "/r4/ValueSet?_offset=99999999999999999999999").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{b}");
}

#[tokio::test]
async fn resources_sharing_an_id_across_packages_each_read_by_their_own() {
    let dir = tempfile::tempdir().unwrap();
    let pack = |name: &str, title: &str| {
        txmap_packages::pack_json(&[
            (
                "package/package.json",
                json!({"name": name, "version": "1.0.0", "fhirVersions": ["4.0.1"]}),
            ),
            (
                "package/ValueSet-action-type.json",
                json!({"resourceType": "ValueSet", "id": "action-type",
                    "url": format!("http://{name}/ValueSet/action-type"), "title": title,
                    "status": "active", "compose": {"include": [{"system": "http://example.org/cs"}]}}),
            ),
        ])
        .unwrap()
    };
    std::fs::write(dir.path().join("a.tgz"), pack("tho.example", "THO's")).unwrap();
    std::fs::write(dir.path().join("b.tgz"), pack("core.example", "Core's")).unwrap();
    let s = common::serve(dir.path(), "packages = [\"a.tgz\", \"b.tgz\"]\n");
    let (_, bundle) = get(&s, "/r4/ValueSet").await;
    let entries = bundle["entry"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{bundle}");
    let full: BTreeSet<&str> = entries
        .iter()
        .map(|e| e["fullUrl"].as_str().unwrap())
        .collect();
    assert_eq!(full.len(), 2, "every fullUrl unique: {full:?}");
    for e in entries {
        let id = e["resource"]["id"].as_str().unwrap();
        assert!(
            e["fullUrl"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/ValueSet/{id}"))
        );
        let (status, read) = get(&s, &format!("/r4/ValueSet/{id}")).await;
        assert_eq!(status, StatusCode::OK, "{id}: {read}");
        assert_eq!(read["url"], e["resource"]["url"], "{id} reads its own");
        assert_eq!(read["id"], id);
        let (_, by_id) = get(&s, &format!("/r4/ValueSet?_id={id}")).await;
        assert_eq!(by_id["total"], 1, "{id}: {by_id}");
    }
    // The first package keeps the id; the second's is qualified by its
    // package.
    let (_, read) = get(&s, "/r4/ValueSet/action-type").await;
    assert_eq!(read["title"], "THO's");
    let (_, read) = get(&s, "/r4/ValueSet/core.example-action-type").await;
    assert_eq!(read["title"], "Core's");
}
