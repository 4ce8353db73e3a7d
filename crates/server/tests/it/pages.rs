//! The pages, in process through the router: each page's content against
//! the RF2 files it was imported from (read here line by line), the
//! search page and the suggestions against `$expand` (the one function
//! behind both), HTML only where a page was asked for, and hostile input
//! shown as text. `.ci/browser.py` tries the same pages in Chromium.

use crate::common;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use serde_json::Value;
use tower::ServiceExt;
use txmap_server::app::router;

/// Status, content type, `Location` and body of a GET.
async fn get(
    state: &std::sync::Arc<txmap_server::app::AppState>,
    uri: &str,
    accept: Option<&str>,
) -> (StatusCode, String, Option<String>, String) {
    let mut r = Request::builder().uri(uri);
    if let Some(a) = accept {
        r = r.header("accept", a);
    }
    let response = router(state.clone())
        .oneshot(r.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = response.status();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    let (content_type, location) = (
        header("content-type").unwrap_or_default(),
        header("location"),
    );
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24)
        .await
        .unwrap();
    (
        status,
        content_type,
        location,
        String::from_utf8(bytes.to_vec()).unwrap(),
    )
}

/// What a browser sends.
const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/// Text as the pages escape it (askama's character references).
fn escaped(s: &str) -> String {
    s.replace('&', "&#38;")
        .replace('<', "&#60;")
        .replace('>', "&#62;")
        .replace('"', "&#34;")
        .replace('\'', "&#39;")
}

#[tokio::test]
async fn pages_show_what_the_release_and_the_engine_say() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::edition(dir.path(), "ed", 3000, 7, 20250131);
    let rf2 = dir.path().join("ed-rf2");
    let state = common::serve(
        dir.path(),
        &format!("editions = [{:?}]\n", file.display().to_string()),
    );

    // The status page: the file, its residency and every section.
    let (status, content_type, _, body) = get(&state, "/", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type.starts_with("text/html"), "{content_type}");
    assert!(body.contains("ed.txmap") && body.contains("In memory now"));
    let bytes = std::fs::read(&file).unwrap();
    let container = txmap_format::Container::open(&bytes).unwrap();
    for entry in container.entries() {
        let Some(kind) = txmap_format::SectionKind::from_code(entry.kind.get()) else {
            continue;
        };
        let name = format!("<td>{}</td>", kind.name());
        assert!(body.contains(&name), "the status page lacks {name}");
    }

    // A concept's page: every active description's term, and its parents,
    // as the RF2 files have them.
    let descriptions = common::rf2_rows(&rf2, "sct2_Description_Snapshot");
    let relationships = common::rf2_rows(&rf2, "sct2_Relationship_Snapshot");
    let is_a = |c: &str| -> Vec<String> {
        relationships
            .iter()
            .filter(|r| r[2] == "1" && r[4] == c && r[7] == "116680003")
            .map(|r| r[5].clone())
            .collect()
    };
    let concept = relationships
        .iter()
        .filter(|r| r[2] == "1" && r[7] == "116680003")
        .map(|r| r[4].clone())
        .find(|c| is_a(c).len() >= 2)
        .expect("a concept with two parents");
    let (status, _, _, body) = get(&state, &format!("/concept/{concept}"), None).await;
    assert_eq!(status, StatusCode::OK);
    for d in descriptions
        .iter()
        .filter(|d| d[2] == "1" && d[4] == concept)
    {
        assert!(body.contains(&escaped(&d[7])), "{concept} lacks {:?}", d[7]);
        assert!(
            body.contains(&d[0]),
            "{concept} lacks description id {}",
            d[0]
        );
    }
    for parent in is_a(&concept) {
        assert!(
            body.contains(&format!("href=\"/concept/{parent}\"")),
            "{concept}'s page does not link parent {parent}"
        );
    }
    let (status, _, _, body) = get(&state, "/concept/999999999999", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("not a concept"));

    // Search: the hits are `$expand`'s, in its order, each with the
    // description that matched (one of the concept's own in RF2).
    let word = descriptions
        .iter()
        .find(|d| d[2] == "1" && d[6] == "900000000000013009")
        .map(|d| d[7].split(' ').next().unwrap().to_lowercase())
        .unwrap();
    let (_, expansion) = common::call(
        state.clone(),
        axum::http::Method::GET,
        &format!("/r4/ValueSet/$expand?url=http://snomed.info/sct?fhir_vs&filter={word}&count=20&offset=0&activeOnly=true"),
        None,
    )
    .await;
    let want: Vec<&str> = expansion["expansion"]["contains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap())
        .collect();
    assert!(!want.is_empty());
    let (status, _, _, body) = get(&state, &format!("/browse?q={word}"), None).await;
    assert_eq!(status, StatusCode::OK);
    let got: Vec<&str> = body
        .split("<li><a href=\"/concept/")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert_eq!(got, want, "the search page's hits are $expand's");
    let total = expansion["expansion"]["total"].as_u64().unwrap();
    assert!(
        body.contains(&format!("{total} concepts")),
        "the total {total}"
    );
    for (code, hit) in want
        .iter()
        .zip(body.split("<details class=\"why\">").skip(1))
    {
        let matched = hit
            .split("Matched “")
            .nth(1)
            .unwrap()
            .split('”')
            .next()
            .unwrap();
        assert!(
            descriptions
                .iter()
                .any(|d| d[4] == *code && escaped(&d[7]) == matched),
            "{matched:?} is not a description of {code}"
        );
    }

    // Facets: the hits counted by the semantic tag of their FSN (RF2's),
    // among the first 200; each a link that narrows the search to it.
    let (_, all_hits) = common::call(
        state.clone(),
        axum::http::Method::GET,
        &format!("/r4/ValueSet/$expand?url=http://snomed.info/sct?fhir_vs&filter={word}&count=200&activeOnly=true"),
        None,
    )
    .await;
    let tag_of = |code: &str| -> String {
        let fsn = descriptions
            .iter()
            .find(|d| d[2] == "1" && d[4] == code && d[6] == "900000000000003001")
            .map(|d| d[7].clone())
            .unwrap();
        fsn.rsplit_once('(')
            .unwrap()
            .1
            .trim_end_matches(')')
            .to_owned()
    };
    let mut tags: std::collections::BTreeMap<String, usize> = Default::default();
    for c in all_hits["expansion"]["contains"].as_array().unwrap() {
        *tags.entry(tag_of(c["code"].as_str().unwrap())).or_default() += 1;
    }
    let at_least = if total > 200 { "at least " } else { "" };
    for (tag, n) in &tags {
        assert!(
            body.contains(&format!(
                ">{}</a> <span class=\"count\">{at_least}{n}</span>",
                escaped(tag)
            )),
            "facet {tag}: {n}"
        );
    }
    let (tag, n) = tags.iter().max_by_key(|(_, n)| **n).unwrap();
    let href = body
        .split("<section class=\"facets\"")
        .nth(1)
        .unwrap()
        .split(&format!(">{}</a>", escaped(tag)))
        .next()
        .unwrap()
        .rsplit("href=\"")
        .next()
        .unwrap()
        .split('"')
        .next()
        .unwrap()
        .replace("&amp;", "&")
        .replace("&#38;", "&");
    let (status, _, _, narrowed) = get(&state, &href, None).await;
    assert_eq!(status, StatusCode::OK, "{href}");
    let narrowed_hits: Vec<&str> = narrowed
        .split("<li><a href=\"/concept/")
        .skip(1)
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert!(narrowed_hits.len() >= (*n).min(20), "{href}");
    for code in narrowed_hits {
        assert_eq!(&tag_of(code), tag, "{href}: {code}");
    }

    // The suggestions: the same answer as JSON.
    let (_, content_type, _, body) = get(&state, &format!("/suggest?q={word}"), None).await;
    assert_eq!(content_type, "application/json");
    let v: Value = serde_json::from_str(&body).unwrap();
    let codes: Vec<&str> = v["suggestions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes, want[..want.len().min(10)]);

    // A slip of the keys finds nothing, and the page offers the word the
    // release has (one edit away), as a link of its own, not as hits.
    let long_word = descriptions
        .iter()
        .filter(|d| d[2] == "1")
        .flat_map(|d| d[7].split(' ').map(str::to_lowercase).collect::<Vec<_>>())
        .find(|w| w.len() >= 8 && w.chars().all(|c| c.is_ascii_lowercase()))
        .unwrap();
    let mut typo: Vec<char> = long_word.chars().collect();
    typo.swap(3, 4);
    let typo: String = typo.into_iter().collect();
    let (_, _, _, body) = get(&state, &format!("/browse?q={typo}"), None).await;
    assert!(
        body.contains("id=\"result-count\">0 concepts</p>"),
        "{typo} matched something"
    );
    let meant = body
        .split("Did you mean <a href=\"")
        .nth(1)
        .expect("a suggestion when nothing matches")
        .split('>')
        .nth(1)
        .unwrap()
        .split('<')
        .next()
        .unwrap()
        .to_owned();
    assert!(
        !body.contains("<ol class=\"hits\""),
        "no hits beside the suggestion"
    );
    let distance = strsim_osa(&typo, &meant);
    assert!(distance <= 1, "{typo} -> {meant}");
    let (_, _, _, found) = get(&state, &format!("/browse?q={meant}"), None).await;
    assert!(
        found.contains("<ol class=\"hits\""),
        "{meant} finds concepts"
    );
    let (_, _, _, json) = get(&state, &format!("/suggest?q={typo}"), None).await;
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["didYouMean"], meant.as_str());

    // An id typed into the box goes to its concept, a description's too.
    let (status, _, location, _) = get(&state, &format!("/browse?q={concept}"), None).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.unwrap(), format!("/concept/{concept}"));
    let d = descriptions.iter().find(|d| d[4] == concept).unwrap();
    let (_, _, location, _) = get(&state, &format!("/browse?q={}", d[0]), None).await;
    assert_eq!(location.unwrap(), format!("/concept/{concept}"));

    // The ECL workbench: the count is `$expand`'s; an error is marked.
    let ecl = format!("<< {concept}");
    let (_, expansion) = common::call(
        state.clone(),
        axum::http::Method::GET,
        &format!(
            "/r4/ValueSet/$expand?url={}&count=0",
            txmap_pages::encode(&format!("http://snomed.info/sct?fhir_vs=ecl/{ecl}"))
        ),
        None,
    )
    .await;
    let total = expansion["expansion"]["total"].as_u64().unwrap();
    let (_, _, _, body) = get(
        &state,
        &format!("/ecl?expression={}", txmap_pages::encode(&ecl)),
        None,
    )
    .await;
    assert!(
        body.contains(&format!("{total} concept")),
        "ECL total {total}"
    );
    let (_, _, _, body) = get(&state, "/ecl?expression=%3C%3C%20138875005%20%3A", None).await;
    assert!(body.contains("aria-invalid=\"true\"") && body.contains("<mark>"));
}

#[tokio::test]
async fn html_only_where_a_page_was_asked_for_and_input_is_shown_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::edition(dir.path(), "ed", 500, 3, 20250131);
    let state = common::serve(
        dir.path(),
        &format!("editions = [{:?}]\n", file.display().to_string()),
    );
    let (_, bundle) = common::call(
        state.clone(),
        axum::http::Method::GET,
        "/r4/CodeSystem",
        None,
    )
    .await;
    let id = bundle["entry"][0]["resource"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = format!("/r4/CodeSystem/{id}");
    let (_, content_type, _, body) = get(&state, &read, Some(BROWSER)).await;
    assert!(content_type.starts_with("text/html"));
    assert!(body.contains("Browse this edition"));
    let (_, content_type, _, _) = get(&state, &format!("{read}?_format=html"), None).await;
    assert!(content_type.starts_with("text/html"));
    for (uri, accept) in [
        (read.as_str(), None),
        (read.as_str(), Some("*/*")),
        (read.as_str(), Some("application/fhir+json")),
        (
            "/r4/CodeSystem/$lookup?system=http://snomed.info/sct&code=138875005",
            Some(BROWSER),
        ),
    ] {
        let (status, content_type, _, _) = get(&state, uri, accept).await;
        assert_eq!(status, StatusCode::OK, "{uri} {accept:?}");
        assert!(
            content_type.starts_with("application/fhir+json"),
            "{uri} {accept:?}"
        );
    }
    let (status, _, _, _) = get(
        &state,
        "/r4/CodeSystem/$lookup?system=http://snomed.info/sct&code=138875005&_format=html",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_ACCEPTABLE);
    let (_, content_type, _, body) = get(&state, "/r4/ValueSet", Some(BROWSER)).await;
    assert!(content_type.starts_with("text/html") && body.contains("ValueSet resources"));

    let evil = "<script>alert('x')</script>\"><img src=x onerror=alert(1)>";
    for page in ["/browse?q=", "/ecl?expression=", "/browse?q=a&within="] {
        let (status, _, _, body) = get(
            &state,
            &format!("{page}{}", txmap_pages::encode(evil)),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert!(
            !body.contains("<script>alert") && !body.contains("<img"),
            "{page}: {body}"
        );
        assert!(
            body.contains(&escaped(evil)),
            "{page} does not show the input"
        );
    }
    let (status, _, _, body) = get(
        &state,
        &format!("/concept/{}", txmap_pages::encode(evil)),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(!body.contains("<script>alert") && body.contains(&escaped(evil)));
    let long = "a".repeat(txmap_server::pages::MAX_INPUT + 1);
    let (status, _, _, _) = get(&state, &format!("/browse?q={long}"), None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _, _, body) = get(&state, "/browse?version=http://nowhere", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(body.contains("no edition"));
}

/// The optimal string alignment distance (edits and swaps of neighbours).
fn strsim_osa(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            d[i][j] = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d[i][j] = d[i][j].min(d[i - 2][j - 2] + 1);
            }
        }
    }
    d[a.len()][b.len()]
}

/// Every loaded edition has its pages, named by `version=`: a concept of
/// the second edition only is found there and not in the default one,
/// and the chooser lists both.
#[tokio::test]
async fn each_edition_has_its_pages_by_version() {
    let dir = tempfile::tempdir().unwrap();
    let first = common::edition(dir.path(), "a", 500, 3, 20250131);
    let second = common::edition(dir.path(), "b", 800, 4, 20250301);
    let ids = |name: &str| -> std::collections::BTreeSet<String> {
        common::rf2_rows(
            &dir.path().join(format!("{name}-rf2")),
            "sct2_Concept_Snapshot",
        )
        .into_iter()
        .filter(|r| r[2] == "1")
        .map(|r| r[0].clone())
        .collect()
    };
    let (in_a, in_b) = (ids("a"), ids("b"));
    let only_b = in_b
        .difference(&in_a)
        .next()
        .expect("a concept of b only")
        .clone();
    let state = common::serve(
        dir.path(),
        &format!(
            "editions = [{:?}, {:?}]\n",
            first.display().to_string(),
            second.display().to_string()
        ),
    );
    let version = state
        .editions
        .list
        .iter()
        .find(|e| e.file.names.file_name == "b.txmap")
        .unwrap()
        .file
        .names
        .version_uri
        .clone();
    let (status, _, _, _) = get(&state, &format!("/concept/{only_b}"), None).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "{only_b} is not in the default edition"
    );
    let (status, _, _, body) = get(
        &state,
        &format!(
            "/concept/{only_b}?version={}",
            txmap_pages::encode(&version)
        ),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(body.contains(&format!("<option value=\"{version}\" selected>")));
    // Links stay in the edition.
    assert!(body.contains(&format!("?version={}", txmap_pages::encode(&version))));

    // With the second edition the default, a page of the first (listed
    // first) still names it in its links: only the default goes unnamed.
    let state = common::serve(
        dir.path(),
        &format!(
            "editions = [{:?}, {:?}]\ndefault_edition = \"b.txmap\"\n",
            first.display().to_string(),
            second.display().to_string()
        ),
    );
    let version_a = state.editions.list[0].file.names.version_uri.clone();
    let only_a = in_a
        .difference(&in_b)
        .next()
        .expect("a concept of a only")
        .clone();
    let (status, _, _, body) = get(
        &state,
        &format!(
            "/concept/{only_a}?version={}",
            txmap_pages::encode(&version_a)
        ),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.contains(&format!("?version={}", txmap_pages::encode(&version_a))),
        "links from edition a's page name edition a"
    );
    let (status, _, _, _) = get(&state, &format!("/concept/{only_b}"), None).await;
    assert_eq!(status, StatusCode::OK, "b is the default now");
}

/// A search in a language refset (the page's language choice, which is
/// `$expand`'s `displayLanguage` naming the refset as `x-sctlang-…`)
/// finds the concepts with a matching description that refset has a row
/// for, and shows their preferred terms there: both from the RF2 files.
#[tokio::test]
async fn a_search_in_a_language_refset_keeps_to_its_descriptions() {
    const US: &str = "900000000000509007";
    const GB: &str = "900000000000508004";
    const SYNONYM: &str = "900000000000013009";
    const DEFINITION: &str = "900000000000550004";
    const PREFERRED: &str = "900000000000548007";
    let dir = tempfile::tempdir().unwrap();
    let file = common::edition(dir.path(), "ed", 3000, 7, 20250131);
    let rf2 = dir.path().join("ed-rf2");
    let state = common::serve(
        dir.path(),
        &format!("editions = [{:?}]\n", file.display().to_string()),
    );
    let active: std::collections::HashSet<String> = common::rf2_rows(&rf2, "sct2_Concept_Snapshot")
        .into_iter()
        .filter(|r| r[2] == "1")
        .map(|r| r[0].clone())
        .collect();
    let descriptions = common::rf2_rows(&rf2, "sct2_Description_Snapshot");
    let language = common::rf2_rows(&rf2, "der2_cRefset_Language");
    let rows_in = |refset: &str| -> std::collections::HashMap<String, String> {
        language
            .iter()
            .filter(|r| r[2] == "1" && r[4] == refset)
            .map(|r| (r[5].clone(), r[6].clone()))
            .collect()
    };
    let (us, gb) = (rows_in(US), rows_in(GB));
    // The concepts with an active description (no definition) of an
    // active concept that has a word starting with `prefix` and a row in
    // `rows`.
    let words_of = |t: &str| -> Vec<String> {
        t.to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let searched: Vec<(&str, &str, Vec<String>)> = descriptions
        .iter()
        .filter(|d| d[2] == "1" && d[6] != DEFINITION && active.contains(&d[4]))
        .map(|d| (d[0].as_str(), d[4].as_str(), words_of(&d[7])))
        .collect();
    let hits = |prefix: &str, rows: Option<&std::collections::HashMap<String, String>>| {
        searched
            .iter()
            .filter(|(id, _, _)| rows.is_none_or(|r| r.contains_key(*id)))
            .filter(|(_, _, words)| words.iter().any(|w| w.starts_with(prefix)))
            .map(|(_, concept, _)| concept.to_string())
            .collect::<std::collections::BTreeSet<String>>()
    };
    // A word of a description the GB refset has a row for and the US one
    // not, whose search in the US refset finds less than in every
    // language.
    let (word, want) = descriptions
        .iter()
        .filter(|d| d[2] == "1" && gb.contains_key(&d[0]) && !us.contains_key(&d[0]))
        .take(50)
        .flat_map(|d| words_of(&d[7]))
        .filter(|w| w.len() >= 4 && w.is_ascii())
        .flat_map(|w| [w[..3].to_owned(), w])
        .find_map(|w| {
            let want = hits(&w, Some(&us));
            (!want.is_empty() && want != hits(&w, None)).then_some((w, want))
        })
        .expect("a word the US refset searches differently from every language");
    let tag = format!("x-sctlang-{}-{}-{}", &US[..8], &US[8..16], &US[16..]);
    let (_, v) = common::call(
        state.clone(),
        axum::http::Method::GET,
        &format!("/r4/ValueSet/$expand?url=http://snomed.info/sct?fhir_vs&filter={word}&activeOnly=true&count=1000&displayLanguage={tag}"),
        None,
    )
    .await;
    let got: std::collections::BTreeSet<String> = v["expansion"]["contains"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["code"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(got, want, "{word} in the US refset");
    assert_eq!(v["expansion"]["total"], want.len());
    // Displays: the US preferred synonym.
    for c in v["expansion"]["contains"].as_array().unwrap() {
        let code = c["code"].as_str().unwrap();
        let preferred = descriptions
            .iter()
            .find(|d| {
                d[2] == "1"
                    && d[4] == code
                    && d[6] == SYNONYM
                    && us.get(&d[0]).is_some_and(|a| a == PREFERRED)
            })
            .map(|d| d[7].as_str());
        if let Some(p) = preferred {
            assert_eq!(c["display"], p, "{code}");
        }
    }
    // The page offers the refsets and searches in the one chosen.
    let (status, _, _, body) = get(
        &state,
        &format!("/browse?q={word}&lang={US}&count=200"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        body.contains(&format!("<option value=\"{US}\" selected>")),
        "US chosen"
    );
    assert!(
        body.contains(&format!("<option value=\"{GB}\">")),
        "GB offered"
    );
    let listed: std::collections::BTreeSet<String> = body
        .split("<li><a href=\"/concept/")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().to_owned())
        .collect();
    assert_eq!(listed.len(), want.len().min(200));
    assert!(listed.is_subset(&want));
    let (status, _, _, _) = get(&state, "/browse?q=a&lang=english", None).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // A scoped search of a common prefix keeps its scope's set, which
    // /status and /metrics count as the edition's anonymous memory.
    let before = txmap_server::status::status_json(&state, txmap_server::status::View::Public);
    assert_eq!(before["editions"][0]["searchScopes"]["kept"], 0, "{before}");
    let (status, _, _, _) = get(&state, "/browse?q=s&within=%3C%3C%20138875005", None).await;
    assert_eq!(status, StatusCode::OK);
    let after = txmap_server::status::status_json(&state, txmap_server::status::View::Public);
    assert_eq!(after["editions"][0]["searchScopes"]["kept"], 1, "{after}");
    let bytes = after["editions"][0]["searchScopes"]["bytes"]
        .as_u64()
        .unwrap();
    assert!(bytes > 0);
    // The demo edition has no word common enough for bitmaps.
    assert_eq!(after["editions"][0]["searchWordBytes"], 0, "{after}");
    let metrics = txmap_server::status::metrics_text(&state);
    assert!(
        metrics.contains("txmap_edition_search_scope_bytes{")
            && metrics.contains(&format!("}} {bytes}\n")),
        "{metrics}"
    );
}
