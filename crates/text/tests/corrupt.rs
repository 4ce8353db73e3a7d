//! Corrupt or truncated sections give errors, never panics.

mod common;

use std::ops::ControlFlow;

use common::{Rng, random_word};
use txmap_text::{IndexBytes, MatchMode, Section, TermIndexBuilder, TextError, TextIndex};

fn sample() -> IndexBytes {
    let mut rng = Rng::new(99);
    let alphabet = ['a', 'b', 'c', 'd'];
    let mut b = TermIndexBuilder::new();
    for i in 0..400u32 {
        let n = 1 + rng.below(4);
        let term: Vec<String> = (0..n)
            .map(|_| random_word(&mut rng, &alphabet, 4))
            .collect();
        b.add(i, &term.join(" "));
    }
    b.build().unwrap()
}

const QUERIES: &[&str] = &["a", "ab", "abc d", "b c", "dd", "a b c d", "cab", "x"];

/// Runs every kind of query; the results do not matter, only that nothing
/// panics and that errors are well formed.
fn exercise(index: &TextIndex<'_>) -> usize {
    let mut errors = 0;
    let mut note = |r: Result<(), TextError>| match r {
        Ok(()) | Err(TextError::TooCostly { .. }) => {}
        Err(e) => {
            assert!(!e.to_string().is_empty());
            errors += 1;
        }
    };
    note(index.verify());
    let mut words = Vec::new();
    note(index.for_each_with_prefix("", |w, p| {
        words.push(w.to_owned());
        let _ = p.iter().map(u64::from).sum::<u64>();
        ControlFlow::Continue(())
    }));
    for w in &words {
        note(index.postings(w).map(|p| {
            let v = p.to_vec();
            if let Some(&x) = v.first() {
                let _ = p.contains(x);
            }
        }));
    }
    for i in 0..index.word_count() as u64 {
        note(index.postings_at(i).map(drop));
    }
    for i in [index.word_count() as u64, u64::MAX] {
        assert!(matches!(
            index.postings_at(i),
            Err(TextError::CorruptFstValue { .. })
        ));
    }
    for q in QUERIES {
        note(index.prefix(q, 50).map(drop));
        note(index.prefix_union(q, 500).map(drop));
        for mode in [MatchMode::Words, MatchMode::Prefix, MatchMode::LastPrefix] {
            match index.search(q, mode, 1000) {
                Ok(v) => assert!(v.windows(2).all(|w| w[0] < w[1]), "unsorted result"),
                Err(e) => note(Err(e)),
            }
        }
    }
    errors
}

fn open<'a>(fst: &'a [u8], offsets: &'a [u8], postings: &'a [u8]) -> Option<TextIndex<'a>> {
    match TextIndex::open(fst, offsets, postings) {
        Ok(i) => Some(i),
        Err(e) => {
            assert!(!e.to_string().is_empty());
            None
        }
    }
}

#[test]
fn intact_sample_has_no_errors() {
    let b = sample();
    let index = b.open().unwrap();
    assert_eq!(exercise(&index), 0);
}

#[test]
fn truncated_sections_are_rejected() {
    let b = sample();
    for cut in 1..=b.offsets.len() {
        let r = TextIndex::open(&b.fst, &b.offsets[..b.offsets.len() - cut], &b.postings);
        assert!(r.is_err(), "offsets cut by {cut}");
    }
    for cut in 1..=b.postings.len() {
        let r = TextIndex::open(&b.fst, &b.offsets, &b.postings[..b.postings.len() - cut]);
        assert!(r.is_err(), "postings cut by {cut}");
    }
    for cut in 1..=b.fst.len() {
        let r = TextIndex::open(&b.fst[..b.fst.len() - cut], &b.offsets, &b.postings);
        assert!(r.is_err(), "fst cut by {cut}");
    }
    // Truncated from the front too.
    for cut in 1..b.fst.len() {
        assert!(TextIndex::open(&b.fst[cut..], &b.offsets, &b.postings).is_err());
    }
    assert!(matches!(
        TextIndex::open(&b.fst, &b.offsets[..5], &b.postings),
        Err(TextError::BadSectionLength {
            section: Section::Offsets,
            len: 5
        })
    ));
    assert!(matches!(
        TextIndex::open(&b.fst, &[], &[]),
        Err(TextError::BadSectionLength {
            section: Section::Offsets,
            len: 0
        })
    ));
    assert!(matches!(
        TextIndex::open(&b.fst, &b.offsets, &b.postings[..b.postings.len() - 1]),
        Err(TextError::BadSectionLength {
            section: Section::Postings,
            ..
        })
    ));
    assert!(matches!(
        TextIndex::open(&b.fst, &b.offsets, &b.postings[..b.postings.len() - 2]),
        Err(TextError::CorruptOffsets { .. })
    ));
    assert!(matches!(
        TextIndex::open(&b.fst, &b.offsets[..b.offsets.len() - 4], &b.postings),
        Err(TextError::WordCountMismatch { .. })
    ));
    // Sections swapped around.
    assert!(TextIndex::open(&b.offsets, &b.fst, &b.postings).is_err());
    assert!(TextIndex::open(&b.postings, &b.offsets, &b.fst).is_err());
}

fn set_offset(offsets: &mut [u8], i: usize, v: u32) {
    offsets[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_offset(offsets: &[u8], i: usize) -> u32 {
    u32::from_le_bytes(offsets[i * 4..i * 4 + 4].try_into().unwrap())
}

#[test]
fn bad_offsets_give_errors() {
    let b = sample();
    let n = b.offsets.len() / 4 - 1;
    let p = b.postings.len() as u32;

    // First offset not 0, last offset not P.
    let mut o = b.offsets.clone();
    set_offset(&mut o, 0, 1);
    assert!(matches!(
        TextIndex::open(&b.fst, &o, &b.postings),
        Err(TextError::CorruptOffsets { word: 0, .. })
    ));
    let mut o = b.offsets.clone();
    set_offset(&mut o, n, p + 1);
    assert!(matches!(
        TextIndex::open(&b.fst, &o, &b.postings),
        Err(TextError::CorruptOffsets { .. })
    ));

    // An interior offset past the end of the postings: the two words around
    // it error, the others still work.
    let mid = n / 2;
    let mut o = b.offsets.clone();
    set_offset(&mut o, mid, p + 100);
    let index = TextIndex::open(&b.fst, &o, &b.postings).unwrap();
    assert!(matches!(
        index.postings_at(mid as u64 - 1),
        Err(TextError::CorruptOffsets { word, .. }) if word == mid - 1
    ));
    assert!(matches!(
        index.postings_at(mid as u64),
        Err(TextError::CorruptOffsets { .. })
    ));
    assert!(index.postings_at(0).is_ok());
    assert!(index.verify().is_err());
    assert!(exercise(&index) > 0);

    // Decreasing offsets.
    let mut o = b.offsets.clone();
    let before = get_offset(&o, mid - 1);
    set_offset(&mut o, mid, before.saturating_sub(1));
    let index = TextIndex::open(&b.fst, &o, &b.postings).unwrap();
    assert!(matches!(
        index.postings_at(mid as u64 - 1),
        Err(TextError::CorruptOffsets { .. })
    ));
    assert!(index.verify().is_err());
    exercise(&index);

    // u32::MAX everywhere but the ends.
    let mut o = b.offsets.clone();
    for i in 1..n {
        set_offset(&mut o, i, u32::MAX);
    }
    let index = TextIndex::open(&b.fst, &o, &b.postings).unwrap();
    assert!(exercise(&index) > 0);
}

#[test]
fn unsorted_postings_are_detected() {
    let b = sample();
    let index = b.open().unwrap();
    // Find a word with at least 3 postings and reverse them.
    let (word, at) = (0..index.word_count() as u64)
        .find_map(|i| {
            let p = index.postings_at(i).unwrap();
            (p.len() >= 3).then(|| (i, get_offset(&b.offsets, i as usize) as usize))
        })
        .unwrap();
    // Swap its first two low halves, after the chunk headers.
    let mut postings = b.postings.clone();
    let chunks = usize::from(u16::from_le_bytes([postings[at], postings[at + 1]])) + 1;
    let lows = at + 2 + 4 * chunks;
    let (first, second) = (
        postings[lows..lows + 2].to_vec(),
        postings[lows + 2..lows + 4].to_vec(),
    );
    postings[lows..lows + 2].copy_from_slice(&second);
    postings[lows + 2..lows + 4].copy_from_slice(&first);
    let index = TextIndex::open(&b.fst, &b.offsets, &postings).unwrap();
    assert!(matches!(
        index.verify(),
        Err(TextError::CorruptPostings { word: w, .. }) if w as u64 == word
    ));
    exercise(&index);
}

#[test]
fn fst_footer_damage() {
    let b = sample();
    let len = b.fst.len();
    // Key count in the footer.
    let mut f = b.fst.clone();
    f[len - 20] ^= 1;
    assert!(matches!(
        TextIndex::open(&f, &b.offsets, &b.postings),
        Err(TextError::WordCountMismatch { .. })
    ));
    // Root address.
    let mut f = b.fst.clone();
    f[len - 12] ^= 1;
    assert!(matches!(
        TextIndex::open(&f, &b.offsets, &b.postings),
        Err(TextError::BadFst { .. })
    ));
    // Version and type.
    for at in [0, 8] {
        let mut f = b.fst.clone();
        f[at] ^= 0x10;
        assert!(matches!(
            TextIndex::open(&f, &b.offsets, &b.postings),
            Err(TextError::BadFst { .. })
        ));
    }
    // Interior damage is caught by verify (checksum), which open leaves to
    // the caller.
    let mut f = b.fst.clone();
    f[len / 2] ^= 0x01;
    if let Ok(index) = TextIndex::open(&f, &b.offsets, &b.postings) {
        assert!(matches!(index.verify(), Err(TextError::Fst(_))));
    }
}

/// Random byte flips and overwrites in the offsets and postings sections.
#[test]
fn random_corruption_never_panics() {
    let b = sample();
    let mut rng = Rng::new(1234);
    let mut opened = 0;
    for round in 0..600 {
        let mut o = b.offsets.clone();
        let mut p = b.postings.clone();
        let target: &mut Vec<u8> = if round % 2 == 0 { &mut o } else { &mut p };
        let flips = 1 + rng.below(8);
        for _ in 0..flips {
            let at = rng.below(target.len());
            match rng.below(3) {
                0 => target[at] ^= 1 << rng.below(8),
                1 => target[at] = rng.next_u64() as u8,
                _ => target[at] = 0xFF,
            }
        }
        if round % 7 == 0 {
            // Also cut a random number of bytes.
            let cut = rng.below(9);
            let keep = target.len().saturating_sub(cut);
            target.truncate(keep);
        }
        if let Some(index) = open(&b.fst, &o, &p) {
            opened += 1;
            exercise(&index);
        }
    }
    assert!(
        opened > 100,
        "too few corrupt indexes got past open: {opened}"
    );
}
