//! Search semantics, on hand-written terms and against a naive scan.

mod common;

use std::collections::BTreeSet;

use common::{Rng, random_word};
use txmap_text::{Among, IndexBytes, MatchMode, TermIndexBuilder, TextError, fold, words};

const TERMS: &[&str] = &[
    "Diabetes mellitus",            // 0
    "Type 2 diabetes mellitus",     // 1
    "Type 1 diabetes mellitus",     // 2
    "Diabetes insipidus",           // 3
    "Ménière's disease",            // 4
    "Sjögren's syndrome",           // 5
    "Fracture of left/right tibia", // 6
    "Diabetic retinopathy",         // 7
    "STRASSE injury",               // 8
    "Straße injury of leg",         // 9
    "Сахарный диабет",              // 10
    "2型糖尿病",                    // 11
    "Disorder of eye (disorder)",   // 12
];

fn index_bytes() -> IndexBytes {
    let mut b = TermIndexBuilder::new();
    for (i, t) in TERMS.iter().enumerate() {
        b.add(i as u32, t);
    }
    b.build().unwrap()
}

fn s(bytes: &IndexBytes, q: &str, mode: MatchMode) -> Vec<u32> {
    bytes.open().unwrap().search(q, mode, 1000).unwrap()
}

#[test]
fn words_mode_is_and_of_exact_words() {
    let b = index_bytes();
    use MatchMode::Words;
    assert_eq!(s(&b, "diabetes", Words), [0, 1, 2, 3]);
    assert_eq!(s(&b, "DIABETES Mellitus", Words), [0, 1, 2]);
    assert_eq!(s(&b, "mellitus diabetes type", Words), [1, 2]);
    assert_eq!(s(&b, "type 2 diabetes", Words), [1]);
    assert_eq!(s(&b, "diab", Words), Vec::<u32>::new());
    assert_eq!(s(&b, "diabetes nothere", Words), Vec::<u32>::new());
    assert_eq!(s(&b, "meniere", Words), [4]);
    assert_eq!(s(&b, "Ménière's", Words), [4]);
    assert_eq!(s(&b, "sjogren", Words), [5]);
    assert_eq!(s(&b, "tibia left", Words), [6]);
    assert_eq!(s(&b, "strasse", Words), [8, 9]);
    assert_eq!(s(&b, "straße", Words), [8, 9]);
    assert_eq!(s(&b, "ДИАБЕТ", Words), [10]);
    assert_eq!(s(&b, "糖尿", Words), [11]);
    assert_eq!(s(&b, "disorder", Words), [12]);
}

#[test]
fn prefix_mode_every_word_is_a_prefix() {
    let b = index_bytes();
    use MatchMode::Prefix;
    assert_eq!(s(&b, "diab", Prefix), [0, 1, 2, 3, 7]);
    assert_eq!(s(&b, "diab mel", Prefix), [0, 1, 2]);
    assert_eq!(s(&b, "mel diab t", Prefix), [1, 2]);
    assert_eq!(s(&b, "d", Prefix), [0, 1, 2, 3, 4, 7, 12]);
    assert_eq!(s(&b, "dis", Prefix), [4, 12]);
    assert_eq!(s(&b, "men dis", Prefix), [4]);
    assert_eq!(s(&b, "str inj l", Prefix), [9]);
    assert_eq!(s(&b, "diab diabetes", Prefix), [0, 1, 2, 3]);
    assert_eq!(s(&b, "zzz", Prefix), Vec::<u32>::new());
    assert_eq!(s(&b, "диаб", Prefix), [10]);
}

#[test]
fn last_prefix_mode() {
    let b = index_bytes();
    use MatchMode::LastPrefix;
    assert_eq!(s(&b, "diabetes mel", LastPrefix), [0, 1, 2]);
    assert_eq!(s(&b, "diab mel", LastPrefix), Vec::<u32>::new());
    assert_eq!(s(&b, "type 2 d", LastPrefix), [1]);
    assert_eq!(s(&b, "diabeti", LastPrefix), [7]);
}

#[test]
fn empty_query_is_an_error() {
    let b = index_bytes();
    let index = b.open().unwrap();
    for q in ["", "   ", "--/()", "'"] {
        for mode in [MatchMode::Words, MatchMode::Prefix, MatchMode::LastPrefix] {
            assert!(matches!(
                index.search(q, mode, 1000),
                Err(TextError::EmptyQuery)
            ));
        }
    }
}

#[test]
fn too_costly() {
    let b = index_bytes();
    let index = b.open().unwrap();
    // "diabetes" has 4 postings; with a limit of 3 it cannot seed.
    assert!(matches!(
        index.search("diabetes", MatchMode::Words, 3),
        Err(TextError::TooCostly { limit: 3 })
    ));
    // But a more selective word makes the query cheap again.
    assert_eq!(
        index
            .search("diabetes insipidus", MatchMode::Words, 1)
            .unwrap(),
        [3]
    );
    assert_eq!(index.search("d insip", MatchMode::Prefix, 1).unwrap(), [3]);
    assert!(matches!(
        index.search("d", MatchMode::Prefix, 5),
        Err(TextError::TooCostly { .. })
    ));
    // An absent word answers empty regardless of the limit.
    assert!(
        index
            .search("diabetes nothere", MatchMode::Words, 0)
            .unwrap()
            .is_empty()
    );
}

/// Random documents over a tiny alphabet (lots of shared prefixes), random
/// queries, compared with a scan of every document: the even queries in
/// one test and the odd in another, so that the two run side by side.
#[test]
fn matches_naive_scan_even() {
    matches_naive_scan(0);
}

#[test]
fn matches_naive_scan_odd() {
    matches_naive_scan(1);
}

fn matches_naive_scan(half: usize) {
    let mut rng = Rng::new(7);
    let alphabet = ['a', 'b', 'c', 'é', 'C'];
    let seps = [" ", "-", "/", "'", " (", ") "];
    let mut docs: Vec<String> = Vec::new();
    for _ in 0..3000 {
        let n = 1 + rng.below(6);
        let mut doc = String::new();
        for i in 0..n {
            if i > 0 {
                let sep = seps[rng.below(seps.len())];
                doc.push_str(sep);
            }
            doc.push_str(&random_word(&mut rng, &alphabet, 5));
        }
        docs.push(doc);
    }
    let mut builder = TermIndexBuilder::new();
    // Add in a scrambled order to exercise the builder's sort.
    let mut order: Vec<usize> = (0..docs.len()).collect();
    for i in (1..order.len()).rev() {
        order.swap(i, rng.below(i + 1));
    }
    for &i in &order {
        builder.add(i as u32, &docs[i]);
    }
    let bytes = builder.build().unwrap();
    let index = bytes.open().unwrap();
    index.verify().unwrap();

    let doc_words: Vec<BTreeSet<String>> = docs
        .iter()
        .map(|d| words(&fold(d)).map(str::to_owned).collect())
        .collect();

    let mut checked = 0;
    let mut too_costly = 0;
    let mut coded = 0;
    for i in 0..1500 {
        let n = 1 + rng.below(3);
        let query: Vec<String> = (0..n)
            .map(|_| random_word(&mut rng, &alphabet, 3))
            .collect();
        let query = query.join(" ");
        let qwords: Vec<String> = words(&fold(&query)).map(str::to_owned).collect();
        for mode in [MatchMode::Words, MatchMode::Prefix, MatchMode::LastPrefix] {
            // Drawn for every query, so both halves see the same queries.
            let limit = rng.below(400);
            if i % 2 != half {
                continue;
            }
            let want: Vec<u32> = doc_words
                .iter()
                .enumerate()
                .filter(|(_, ws)| {
                    qwords.iter().enumerate().all(|(i, q)| {
                        let prefix = match mode {
                            MatchMode::Words => false,
                            MatchMode::Prefix => true,
                            MatchMode::LastPrefix => i == qwords.len() - 1,
                        };
                        if prefix {
                            ws.iter().any(|w| w.starts_with(q.as_str()))
                        } else {
                            ws.contains(q)
                        }
                    })
                })
                .map(|(i, _)| i as u32)
                .collect();
            assert_eq!(
                index.search(&query, mode, usize::MAX).unwrap(),
                want,
                "{query:?} {mode:?}"
            );
            // The cost bounds the answer; a scope (small: it seeds the
            // search; big: it filters the answer) keeps what it lists.
            let cost = index.cost(&query, mode, usize::MAX - 1).unwrap();
            assert!(cost >= want.len(), "{query:?} {mode:?} cost {cost}");
            for every in [1, 7, 97] {
                let among: Vec<u32> = (0..docs.len() as u32)
                    .filter(|d| (d * 31 + 5) % every == 0)
                    .collect();
                let kept: Vec<u32> = want
                    .iter()
                    .copied()
                    .filter(|d| among.binary_search(d).is_ok())
                    .collect();
                assert_eq!(
                    index
                        .search_among(&query, mode, usize::MAX, Among::List(&among))
                        .unwrap(),
                    kept,
                    "{query:?} {mode:?} among every {every}"
                );
                // Seeded by a list, a one-word prefix query notes each
                // hit's first-word code as it goes: the codes asked after.
                let (got, codes) = index
                    .search_among_coded(&query, mode, usize::MAX, Among::List(&among))
                    .unwrap();
                assert_eq!(got, kept, "{query:?} {mode:?} coded");
                // (A repeated word is one constraint: "a a" is coded as "a".)
                if let (Some(codes), [word]) = (codes, qwords.as_slice()) {
                    assert_eq!(
                        Some(codes),
                        index.first_word_codes(word, true, &got).unwrap(),
                        "{query:?} {mode:?} codes"
                    );
                    coded += 1;
                }
                let mut bits = vec![0u64; docs.len() / 64 + 1];
                for &d in &among {
                    bits[d as usize / 64] |= 1 << (d % 64);
                }
                assert_eq!(
                    index
                        .search_among(&query, mode, usize::MAX, Among::Bits(&bits))
                        .unwrap(),
                    kept,
                    "{query:?} {mode:?} among bits every {every}"
                );
            }
            match index.search(&query, mode, limit) {
                Ok(got) => {
                    assert_eq!(got, want, "{query:?} {mode:?} limit {limit}");
                    assert!(got.len() <= limit);
                }
                Err(TextError::TooCostly { limit: l }) => {
                    assert_eq!(l, limit);
                    too_costly += 1;
                }
                Err(e) => panic!("{e}"),
            }
            checked += 1;
        }
    }
    assert!(checked > 0 && too_costly > 0 && too_costly < checked);
    assert!(coded > 50, "only {coded} searches gave codes");
}
