//! The commonest words' postings as bitmaps, built on first use and kept.
//!
//! A search in a small scope (a refset of seven thousand members) or a
//! phrase ("fracture of") matches a short list of descriptions against
//! the postings of each query word. For a word in half the edition's
//! terms ("of": 800,000 postings, 1.6 MB) each match is a gallop through
//! megabytes — a few cache misses a description, the most of such a
//! search's time. As a bitmap over the descriptions (200 KB for 1.6
//! million), with a second for the postings whose word is its term's
//! first, each match is a bit or two in a cache-resident array.
//!
//! The file keeps the lists (every other reader wants them), so the
//! bitmaps are built from them the first time a search meets such a word
//! (a few milliseconds) and kept beside the index ([`DenseWords`]): at
//! most [`DENSE_WORDS_KEPT`] words, least recently used out, each at most
//! the size of its list — anonymous memory the memory guard counts, and
//! what [`DenseWords::bytes`] reports.

use std::sync::{Arc, Mutex};

use crate::index::Postings;

/// The fewest postings a word has for its bitmaps to be built and kept.
pub const DENSE_FROM: usize = 65_536;

/// How many words' bitmaps an index keeps at most.
pub const DENSE_WORDS_KEPT: usize = 16;

/// One word's postings as bitmaps over description ordinals.
#[derive(Debug)]
pub(crate) struct DenseWord {
    /// Bit `d`: description `d` is among the postings.
    has: Vec<u64>,
    /// Bit `d`: and the word is its term's first.
    first: Vec<u64>,
}

impl DenseWord {
    /// `None` when the list is too sparse for bitmaps to cost no more
    /// than it (its greatest ordinal beyond 32 a posting: a damaged list
    /// of huge ordinals never asks for more memory than its own size).
    fn build(p: Postings<'_>, first_bits: Option<&[u8]>) -> Option<DenseWord> {
        let greatest = p.iter().max()?;
        if greatest as usize >= p.len().saturating_mul(32) {
            return None;
        }
        let words = greatest as usize / 64 + 1;
        let (mut has, mut first) = (vec![0u64; words], vec![0u64; words]);
        for (i, d) in p.iter().enumerate() {
            let (w, bit) = (d as usize / 64, 1u64 << (d % 64));
            has[w] |= bit;
            if p.is_first(first_bits, i) == Some(true) {
                first[w] |= bit;
            }
        }
        Some(DenseWord { has, first })
    }

    /// Whether description `d` is among the postings, and if so whether
    /// the word is its term's first.
    #[inline]
    pub(crate) fn get(&self, d: u32) -> Option<bool> {
        let (w, bit) = (d as usize / 64, 1u64 << (d % 64));
        let has = self.has.get(w)? & bit != 0;
        has.then(|| self.first[w] & bit != 0)
    }

    fn bytes(&self) -> usize {
        (self.has.len() + self.first.len()) * 8
    }
}

/// The bitmaps of the commonest words an index has met, kept for the next
/// search (see the [module docs](self)). One per edition; shared by every
/// search on it.
#[derive(Debug, Default)]
pub struct DenseWords {
    /// By the word's first posting's position in the postings section;
    /// the most recently used last. `None`: the list was too sparse.
    kept: Mutex<Vec<(usize, Option<Arc<DenseWord>>)>>,
}

impl DenseWords {
    /// No words yet.
    pub fn new() -> DenseWords {
        DenseWords::default()
    }

    /// The memory the kept bitmaps hold.
    pub fn bytes(&self) -> usize {
        self.lock()
            .iter()
            .filter_map(|(_, w)| w.as_ref())
            .map(|w| w.bytes())
            .sum()
    }

    /// The bitmaps of the word whose postings are `p` (at least
    /// [`DENSE_FROM`] of them), built now if they are not kept.
    pub(crate) fn get(&self, p: Postings<'_>, first_bits: Option<&[u8]>) -> Option<Arc<DenseWord>> {
        let key = p.start();
        {
            let mut kept = self.lock();
            if let Some(at) = kept.iter().position(|(k, _)| *k == key) {
                let entry = kept.remove(at);
                let word = entry.1.clone();
                kept.push(entry);
                return word;
            }
        }
        // Built outside the lock: a search building "of" does not hold
        // up another reading "structure". Two that build the same word
        // keep one.
        let word = DenseWord::build(p, first_bits).map(Arc::new);
        let mut kept = self.lock();
        if !kept.iter().any(|(k, _)| *k == key) {
            if kept.len() >= DENSE_WORDS_KEPT {
                kept.remove(0);
            }
            kept.push((key, word.clone()));
        }
        word
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<(usize, Option<Arc<DenseWord>>)>> {
        // A panic elsewhere while holding the lock left a list that is
        // still whole: every change to it is one push or remove.
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MatchMode, TermIndexBuilder};

    /// 100,000 terms: "of" in two of three ("of" first in some), "office"
    /// in every fifth, a rare word in every 97th. Searches and marks over
    /// short lists answer the same with the bitmaps as without, and keep
    /// the commonest word's.
    #[test]
    fn bitmaps_answer_as_the_lists_do() {
        let mut b = TermIndexBuilder::new();
        for d in 0..100_000u32 {
            let mut term = String::new();
            if d % 7 == 0 {
                term.push_str("of ");
            }
            term.push_str(if d % 5 == 0 { "office " } else { "entry " });
            if d % 3 != 0 {
                term.push_str("structure of ");
            }
            if d % 97 == 0 {
                term.push_str("rare");
            }
            b.add(d, &term);
        }
        let bytes = b.build().unwrap();
        let plain = bytes.open().unwrap();
        let kept = DenseWords::new();
        let dense = bytes.open().unwrap().with_dense(&kept);
        let among: Vec<u32> = (0..100_000)
            .filter(|d| d % 61 < 2 || d % 1000 == 7)
            .collect();
        let mut marked = among.clone();
        marked.push(250_000);
        assert_eq!(
            dense.prefix_marks(&marked, "of").unwrap(),
            plain.prefix_marks(&marked, "of").unwrap()
        );
        // 'of' first in its term: the word itself (2), marked 3.
        assert!(dense.prefix_marks(&among, "of").unwrap().contains(&3));
        for query in [
            "of",
            "structure of",
            "of rare",
            "off",
            "rare of",
            "entry of",
        ] {
            for mode in [MatchMode::Prefix, MatchMode::Words, MatchMode::LastPrefix] {
                let list = crate::Among::List(&among);
                assert_eq!(
                    dense.search_among(query, mode, usize::MAX, list).unwrap(),
                    plain.search_among(query, mode, usize::MAX, list).unwrap(),
                    "{query} {mode:?}"
                );
            }
        }
        // "of", "structure" and "entry" have 65,536 postings or more:
        // kept, each no bigger than its list; "office" (20,000): not.
        let mut common = 0;
        for word in ["of", "structure", "entry", "office"] {
            let p = plain.postings(word).unwrap();
            if p.len() >= DENSE_FROM {
                common += 1;
                assert!(2 * (99_999 / 64 + 1) * 8 < p.len() * 4, "{word}");
            }
        }
        assert_eq!(common, 3);
        assert_eq!(kept.bytes(), common * 2 * (99_999 / 64 + 1) * 8);
    }

    /// A list whose ordinals are too spread for bitmaps (a damaged one)
    /// gets none, and costs no memory.
    #[test]
    fn a_sparse_list_gets_no_bitmaps() {
        let mut b = TermIndexBuilder::new();
        for d in 0..DENSE_FROM as u32 {
            b.add(d * 40, "sparse");
        }
        let bytes = b.build().unwrap();
        let index = bytes.open().unwrap();
        let kept = DenseWords::new();
        let p = index.postings("sparse").unwrap();
        assert!(kept.get(p, None).is_none());
        assert_eq!(kept.bytes(), 0);
        let index = index.with_dense(&kept);
        // The word itself, first in its terms: code 2, marked 3.
        assert_eq!(
            index.prefix_marks(&[0, 40, 41], "sparse").unwrap(),
            [3, 3, 0]
        );
    }
}
