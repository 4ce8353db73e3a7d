//! Writer → reader round trips checked against a naive in-memory map.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{Rng, random_word};
use txmap_text::{IndexBytes, IndexWriter, TextError, TextIndex};

type Naive = BTreeMap<String, BTreeSet<u32>>;

fn random_naive(rng: &mut Rng, words: usize, max_ordinal: u32) -> Naive {
    let alphabet = ['a', 'b', 'c', 'd', 'e', 'ø', 'λ', '語', '2'];
    let mut naive = Naive::new();
    for _ in 0..words {
        let word = random_word(rng, &alphabet, 6);
        let n = rng.below(20) + usize::from(rng.chance(5)) * 500;
        let set = naive.entry(word).or_default();
        for _ in 0..n {
            set.insert((rng.next_u64() % u64::from(max_ordinal)) as u32);
        }
    }
    naive
}

fn write(naive: &Naive) -> IndexBytes {
    let mut bytes = IndexBytes::default();
    let mut writer =
        IndexWriter::new(&mut bytes.fst, &mut bytes.offsets, &mut bytes.postings).unwrap();
    for (word, set) in naive {
        let list: Vec<u32> = set.iter().copied().collect();
        writer.push(word.as_bytes(), &list).unwrap();
    }
    let stats = writer.finish().unwrap();
    assert_eq!(stats.words, naive.len() as u64);
    assert_eq!(
        stats.postings,
        naive.values().map(|s| s.len() as u64).sum::<u64>()
    );
    assert_eq!(stats.fst_bytes, bytes.fst.len() as u64);
    assert_eq!(stats.offsets_bytes, bytes.offsets.len() as u64);
    assert_eq!(stats.postings_bytes, bytes.postings.len() as u64);
    bytes
}

fn naive_prefix(naive: &Naive, prefix: &str) -> Vec<(String, Vec<u32>)> {
    naive
        .range(prefix.to_owned()..)
        .take_while(|(w, _)| w.starts_with(prefix))
        .map(|(w, s)| (w.clone(), s.iter().copied().collect()))
        .collect()
}

fn check(index: &TextIndex<'_>, naive: &Naive, rng: &mut Rng) {
    assert_eq!(index.word_count(), naive.len());
    index.verify().unwrap();
    for (word, set) in naive {
        let p = index.postings(word).unwrap();
        assert_eq!(
            p.to_vec(),
            set.iter().copied().collect::<Vec<_>>(),
            "{word}"
        );
        assert_eq!(p.len(), set.len());
        assert!(index.contains_word(word));
        for &o in set {
            assert!(p.contains(o));
        }
        assert_eq!(p.iter().len(), set.len());
        assert_eq!(p.last(), set.last().copied());
    }
    let alphabet = ['a', 'b', 'c', 'ø', 'λ', 'x'];
    let mut prefixes: Vec<String> = vec![String::new()];
    for word in naive.keys().take(200) {
        for (i, _) in word.char_indices().skip(1) {
            prefixes.push(word[..i].to_owned());
        }
        prefixes.push(word.clone());
    }
    for _ in 0..200 {
        let w = random_word(rng, &alphabet, 4);
        assert!(naive.contains_key(&w) || index.postings(&w).unwrap().is_empty());
        prefixes.push(w);
    }
    for prefix in &prefixes {
        let want = naive_prefix(naive, prefix);
        let got: Vec<(String, Vec<u32>)> = index
            .prefix(prefix, usize::MAX)
            .unwrap()
            .into_iter()
            .map(|(w, p)| (w, p.to_vec()))
            .collect();
        assert_eq!(got, want, "prefix {prefix:?}");

        let union: BTreeSet<u32> = want.iter().flat_map(|(_, l)| l.iter().copied()).collect();
        let sum: usize = want.iter().map(|(_, l)| l.len()).sum();
        assert_eq!(
            index.prefix_union(prefix, sum.max(want.len())).unwrap(),
            union.iter().copied().collect::<Vec<_>>()
        );
        if sum > 0 {
            assert!(matches!(
                index.prefix_union(prefix, sum - 1),
                Err(TextError::TooCostly { .. })
            ));
        }
        if !want.is_empty() {
            assert!(matches!(
                index.prefix(prefix, want.len() - 1),
                Err(TextError::TooCostly { .. })
            ));
            assert_eq!(index.prefix(prefix, want.len()).unwrap().len(), want.len());
        }
    }
}

#[test]
fn random_round_trips() {
    let mut rng = Rng::new(0x7478_6d61_7021);
    for (words, max_ordinal) in [(0, 10), (1, 1), (5, 10), (300, 50), (3000, 100_000)] {
        let naive = random_naive(&mut rng, words, max_ordinal);
        let bytes = write(&naive);
        let index = bytes.open().unwrap();
        check(&index, &naive, &mut rng);
    }
}

#[test]
fn sections_need_no_alignment() {
    let mut rng = Rng::new(42);
    let naive = random_naive(&mut rng, 100, 1000);
    let bytes = write(&naive);
    // Place each section at an odd offset inside one buffer, as in a file.
    let mut file = vec![0xAAu8];
    let f0 = file.len();
    file.extend_from_slice(&bytes.fst);
    file.push(0xAA);
    let o0 = file.len();
    file.extend_from_slice(&bytes.offsets);
    file.extend_from_slice(&[0xAA; 3]);
    let p0 = file.len();
    file.extend_from_slice(&bytes.postings);
    let index = TextIndex::open(
        &file[f0..f0 + bytes.fst.len()],
        &file[o0..o0 + bytes.offsets.len()],
        &file[p0..p0 + bytes.postings.len()],
    )
    .unwrap();
    check(&index, &naive, &mut rng);
}

#[test]
fn writer_rejects_bad_input() {
    let mut bytes = IndexBytes::default();
    let mut w = IndexWriter::new(&mut bytes.fst, &mut bytes.offsets, &mut bytes.postings).unwrap();
    assert!(matches!(w.push(b"", &[1]), Err(TextError::EmptyWord)));
    assert!(matches!(
        w.push(b"\xff", &[1]),
        Err(TextError::NotUtf8 { .. })
    ));
    assert!(matches!(
        w.push(b"abc", &[1, 3, 2]),
        Err(TextError::UnsortedPostings { index: 2, .. })
    ));
    assert!(matches!(
        w.push(b"abc", &[1, 1]),
        Err(TextError::UnsortedPostings { index: 1, .. })
    ));
    w.push(b"b", &[1, 2]).unwrap();
    let err = w.push(b"a", &[1]).unwrap_err();
    assert!(
        matches!(&err, TextError::OutOfOrder { previous, word } if previous == "b" && word == "a")
    );
    assert!(err.to_string().contains("\"a\""));
    assert!(matches!(
        w.push(b"b", &[3]),
        Err(TextError::OutOfOrder { .. })
    ));
    // Rejected pushes leave no trace: the writer can go on.
    w.push(b"ba", &[]).unwrap();
    w.push(b"c", &[0]).unwrap();
    assert_eq!(w.word_count(), 3);
    let stats = w.finish().unwrap();
    assert_eq!((stats.words, stats.postings), (3, 3));
    let index = bytes.open().unwrap();
    index.verify().unwrap();
    assert_eq!(index.postings("b").unwrap().to_vec(), [1, 2]);
    assert!(index.postings("ba").unwrap().is_empty());
    assert!(index.contains_word("ba"));
    assert_eq!(index.postings("c").unwrap().to_vec(), [0]);
    assert!(index.postings("a").unwrap().is_empty());
}

#[test]
fn into_inner_returns_writers() {
    let w = IndexWriter::new(Vec::new(), Vec::new(), Vec::new()).unwrap();
    let mut w = w;
    w.push("語".as_bytes(), &[7]).unwrap();
    let done = w.into_inner().unwrap();
    assert_eq!(done.stats.words, 1);
    let index = TextIndex::open(&done.fst, &done.offsets, &done.postings).unwrap();
    assert_eq!(index.postings("語").unwrap().to_vec(), [7]);
    // A chunked list: one chunk (count less one, 0), its high half (0)
    // and item count less one (0), then the low half, little-endian.
    assert_eq!(
        index.postings("語").unwrap().as_bytes(),
        [0, 0, 0, 0, 0, 0, 7, 0]
    );
}

#[test]
fn ordinals_of_any_size_round_trip_and_headers_are_counted() {
    let mut w = IndexWriter::new(Vec::new(), Vec::new(), Vec::new()).unwrap();
    // One chunk: a header of 6 bytes, 3 bits of the first-words bitmap.
    assert_eq!(w.push(b"a", &[0, 5]).unwrap(), 3);
    // Three chunks: 2 + 3 * 4 bytes, 7 bits.
    assert_eq!(w.push(b"b", &[1, 1 << 24, u32::MAX]).unwrap(), 7);
    assert!(matches!(
        w.push(b"c", &[2, 1]),
        Err(TextError::UnsortedPostings { .. })
    ));
    let done = w.into_inner().unwrap();
    let index = TextIndex::open(&done.fst, &done.offsets, &done.postings).unwrap();
    assert_eq!(index.postings("a").unwrap().to_vec(), [0, 5]);
    assert_eq!(
        index.postings("b").unwrap().to_vec(),
        [1, 1 << 24, u32::MAX]
    );
    index.verify().unwrap();
}
