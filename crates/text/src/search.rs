//! Multi-word queries over a [`TextIndex`]: AND of words, exact or prefix.
//!
//! Plan: fold and split the query; each word becomes a constraint, exact
//! (one posting list) or prefix (the union of the lists of every word in the
//! fst range). Redundant constraints are dropped (duplicates, and a prefix
//! implied by a longer word of the query). The most selective constraint is
//! materialised as the candidate set; if even that is larger than
//! `max_candidates` the query is refused with [`TextError::TooCostly`], which
//! bounds memory and the cost of every later step. The other constraints
//! then only *filter* the candidates: exact words shortest first, with a
//! galloping intersection (cost `O(c·log(n/c))` for `c` candidates against a
//! list of `n`, so long lists like "of" are cheap to intersect with); prefix
//! constraints by walking their fst range and marking the candidates found
//! in each word's list (galloping from whichever side is shorter), stopping
//! early once every candidate is marked.
//!
//! On corrupt postings (unsorted) nothing panics or loops: gallops only move
//! forward and every index is bounds-checked; the seed list is checked to be
//! strictly increasing, and the result is always sorted and deduplicated.

use std::ops::ControlFlow;

use zerocopy::little_endian::U16;

use crate::error::TextError;
use crate::fold::{fold, words};
use crate::index::{Postings, TextIndex, first_unsorted, first_unsorted_in};

/// How query words match the words of a term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MatchMode {
    /// Every query word must equal a word of the term.
    Words,
    /// Every query word must be a prefix of some word of the term
    /// (`"diab mel"` finds "Diabetes mellitus"). The usual FHIR `filter`.
    #[default]
    Prefix,
    /// Type-ahead: every query word except the last must equal a word of the
    /// term; the last must be a prefix of one (`"diabetes mel"`).
    LastPrefix,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Constraint<'q> {
    word: &'q str,
    prefix: bool,
}

/// The constraints of a folded query, without redundant ones.
fn constraints(folded: &str, mode: MatchMode) -> Vec<Constraint<'_>> {
    let all: Vec<&str> = words(folded).collect();
    let last = all.len().saturating_sub(1);
    let mut cs: Vec<Constraint<'_>> = Vec::with_capacity(all.len());
    for (i, &word) in all.iter().enumerate() {
        let prefix = match mode {
            MatchMode::Words => false,
            MatchMode::Prefix => true,
            MatchMode::LastPrefix => i == last,
        };
        let c = Constraint { word, prefix };
        if !cs.contains(&c) {
            cs.push(c);
        }
    }
    // A prefix constraint is implied by any other constraint whose word
    // starts with it (exact "diabetes" or prefix "diabetes" implies prefix
    // "diab").
    let implied = |i: usize, c: &Constraint<'_>| {
        c.prefix
            && cs.iter().enumerate().any(|(j, other)| {
                j != i
                    && other.word.starts_with(c.word)
                    && (other.word.len() > c.word.len() || !other.prefix || j < i)
            })
    };
    let keep: Vec<bool> = cs.iter().enumerate().map(|(i, c)| !implied(i, c)).collect();
    cs.into_iter()
        .zip(keep)
        .filter_map(|(c, k)| k.then_some(c))
        .collect()
}

enum Source<'a, 'q> {
    /// Word index and postings.
    Exact(usize, Postings<'a>),
    /// A prefix; `Some(n)`: the summed postings length of its words, which
    /// is at most `max_candidates`; `None`: more than that.
    Prefix(&'q str, Option<usize>),
}

impl Source<'_, '_> {
    fn cost(&self) -> usize {
        match self {
            Source::Exact(_, p) => p.len(),
            Source::Prefix(_, n) => n.unwrap_or(usize::MAX),
        }
    }
}

impl<'a> TextIndex<'a> {
    /// All description ordinals whose terms contain every word of `query`,
    /// matched according to `mode`; sorted ascending, no duplicates.
    ///
    /// `query` is raw user text: it is folded and split here. A query with
    /// no words (`""`, `"--"`) is [`TextError::EmptyQuery`]. If even the
    /// most selective query word (for a prefix: the summed postings of the
    /// words it matches) has more than `max_candidates` postings, the query
    /// is refused with [`TextError::TooCostly`]; the result then can never
    /// exceed `max_candidates` either.
    pub fn search(
        &self,
        query: &str,
        mode: MatchMode,
        max_candidates: usize,
    ) -> Result<Vec<u32>, TextError> {
        self.search_among(query, mode, max_candidates, Among::All)
    }

    /// [`search`](Self::search) among the descriptions of a scope
    /// ([`Among`]). A list shorter than the query's most selective word is
    /// the seed every word filters — a scope of twenty thousand
    /// descriptions searched for "of" (eight hundred thousand) costs twenty
    /// thousand short gallops, not the union of the words starting with
    /// "of" — and a query refused as too costly is then not refused; a
    /// longer list filters the search's answer. A bitmap filters the seed
    /// as its postings are read, so only the scope's candidates are ever
    /// listed.
    pub fn search_among(
        &self,
        query: &str,
        mode: MatchMode,
        max_candidates: usize,
        among: Among<'_>,
    ) -> Result<Vec<u32>, TextError> {
        Ok(self
            .search_inner(query, mode, max_candidates, among, false)?
            .0)
    }

    /// [`search_among`](Self::search_among), and for a one-word prefix
    /// query seeded by a list, the [`first_word_codes`](Self::first_word_codes)
    /// of its answer, found while the word's postings were matched
    /// against the seed (`None` otherwise: the caller asks for them).
    pub fn search_among_coded(
        &self,
        query: &str,
        mode: MatchMode,
        max_candidates: usize,
        among: Among<'_>,
    ) -> Result<(Vec<u32>, Option<Vec<u8>>), TextError> {
        self.search_inner(query, mode, max_candidates, among, true)
    }

    fn search_inner(
        &self,
        query: &str,
        mode: MatchMode,
        max_candidates: usize,
        among: Among<'_>,
        coded: bool,
    ) -> Result<(Vec<u32>, Option<Vec<u8>>), TextError> {
        let folded = fold(query);
        let cs = constraints(&folded, mode);
        if cs.is_empty() {
            return Err(TextError::EmptyQuery);
        }

        let mut sources = Vec::with_capacity(cs.len());
        for c in &cs {
            if c.prefix {
                match self.prefix_cost(c.word, max_candidates)? {
                    PrefixCost::NoWords => return Ok((Vec::new(), coded.then(Vec::new))),
                    PrefixCost::Within(n) => sources.push(Source::Prefix(c.word, Some(n))),
                    PrefixCost::Over => sources.push(Source::Prefix(c.word, None)),
                }
            } else {
                match self.lookup(c.word)? {
                    Some((i, p)) if !p.is_empty() => sources.push(Source::Exact(i, p)),
                    _ => return Ok((Vec::new(), None)),
                }
            }
        }

        // Most selective first; exact lists before prefixes on ties.
        sources.sort_by_key(|s| (s.cost(), matches!(s, Source::Prefix(..))));
        let one_prefix = match sources.as_slice() {
            [Source::Prefix(word, _)] if self.first_bits().is_some() => Some(*word),
            _ => None,
        };
        let mut sources = sources.into_iter();
        let Some(seed) = sources.next() else {
            return Err(TextError::EmptyQuery);
        };
        let (mut candidates, rest) = match among {
            Among::List(among) if among.len() < seed.cost() && among.len() <= max_candidates => {
                let mut among = among.to_vec();
                if first_unsorted(&among).is_some() {
                    among.sort_unstable();
                    among.dedup();
                }
                (among, Some(seed))
            }
            _ => {
                if seed.cost() > max_candidates {
                    return Err(TextError::TooCostly {
                        limit: max_candidates,
                    });
                }
                let candidates = match (seed, among) {
                    (Source::Exact(_, p), Among::Bits(bits)) => {
                        p.iter().filter(|&v| has_bit(bits, v)).collect()
                    }
                    (Source::Exact(word, p), _) => {
                        if let Some(index) = first_unsorted_in(p.iter(), p.len()) {
                            return Err(TextError::CorruptPostings { word, index });
                        }
                        p.to_vec()
                    }
                    (Source::Prefix(word, _), Among::Bits(bits)) => {
                        self.prefix_union_masked(word, max_candidates, bits)?
                    }
                    (Source::Prefix(word, _), _) => self.prefix_union(word, max_candidates)?,
                };
                let candidates = match among {
                    Among::List(among) => intersect_sorted(&candidates, among),
                    Among::All | Among::Bits(_) => candidates,
                };
                (candidates, None)
            }
        };

        // One prefix word seeded by a list: the seed filtered by the
        // word's postings, each kept one's first-word code noted on the way.
        if coded && let (Some(word), Some(Source::Prefix(..))) = (one_prefix, &rest) {
            let (kept, codes) = self.filter_by_prefix_coded(&candidates, word)?;
            return Ok((kept, Some(codes)));
        }
        // Exact lists come before prefixes because of the sort above.
        for source in rest.into_iter().chain(sources) {
            if candidates.is_empty() {
                break;
            }
            candidates = match source {
                Source::Exact(_, p) => intersect(&candidates, p),
                Source::Prefix(word, _) => self.filter_by_prefix(&candidates, word)?,
            };
        }
        // Only reachable with corrupt postings, but keep the promise.
        if first_unsorted(&candidates).is_some() {
            candidates.sort_unstable();
            candidates.dedup();
        }
        Ok((candidates, None))
    }

    /// How many candidates [`search`](Self::search) would start from: the
    /// postings of the query's most selective word (for a prefix, summed
    /// over the words it matches), an upper bound on its answer — or
    /// `limit + 1` when every word has more than `limit`. Walks the same
    /// index entries as the search's plan, and reads no postings. A query
    /// with no words costs 0.
    pub fn cost(&self, query: &str, mode: MatchMode, limit: usize) -> Result<usize, TextError> {
        let folded = fold(query);
        let mut best = limit.saturating_add(1);
        for c in constraints(&folded, mode) {
            let n = if c.prefix {
                match self.prefix_cost(c.word, best.min(limit))? {
                    PrefixCost::NoWords => 0,
                    PrefixCost::Within(n) => n,
                    PrefixCost::Over => continue,
                }
            } else {
                self.lookup(c.word)?.map_or(0, |(_, p)| p.len())
            };
            best = best.min(n);
        }
        Ok(best)
    }

    fn prefix_cost(&self, prefix: &str, limit: usize) -> Result<PrefixCost, TextError> {
        let mut words_seen = 0usize;
        let mut sum = 0usize;
        let mut over = false;
        self.for_each_with_prefix(prefix, |_, p| {
            words_seen += 1;
            sum = sum.saturating_add(p.len());
            if sum > limit || words_seen > limit {
                over = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        })?;
        Ok(if over {
            PrefixCost::Over
        } else if words_seen == 0 {
            PrefixCost::NoWords
        } else {
            PrefixCost::Within(sum)
        })
    }

    /// The candidates present in the postings of some word starting with `prefix`.
    fn filter_by_prefix(&self, candidates: &[u32], prefix: &str) -> Result<Vec<u32>, TextError> {
        let mut keep = vec![false; candidates.len()];
        let mut kept = 0usize;
        self.for_each_with_prefix(prefix, |_, p| {
            self.mark(candidates, p, |i, _| {
                if let Some(k) = keep.get_mut(i)
                    && !*k
                {
                    *k = true;
                    kept += 1;
                }
            });
            if kept >= candidates.len() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
        Ok(candidates
            .iter()
            .zip(keep)
            .filter_map(|(&c, k)| k.then_some(c))
            .collect())
    }

    /// [`filter_by_prefix`](Self::filter_by_prefix) and the
    /// [`first_word_codes`](Self::first_word_codes) of what it keeps
    /// (`prefix` the one word of a prefix query), from the same walk.
    fn filter_by_prefix_coded(
        &self,
        candidates: &[u32],
        prefix: &str,
    ) -> Result<(Vec<u32>, Vec<u8>), TextError> {
        let marks = self.prefix_marks(candidates, prefix)?;
        let mut kept = Vec::new();
        let mut codes = Vec::new();
        for (&c, &m) in candidates.iter().zip(&marks) {
            if m > 0 {
                kept.push(c);
                codes.push(m - 1);
            }
        }
        Ok((kept, codes))
    }

    /// For each of `among` (ascending description ordinals), whether a
    /// word of its term starts with `prefix` (one folded word), and how:
    /// 0 when none does, else 1 + its [`first_word_codes`](Self::first_word_codes)
    /// code. One walk of the prefix's postings, each met with `among`
    /// from the shorter side; answers by position, so a caller holding
    /// facts beside `among` reads them without a search.
    pub fn prefix_marks(&self, among: &[u32], prefix: &str) -> Result<Vec<u8>, TextError> {
        let mut marks = vec![0u8; among.len()];
        let first = self.first_bits();
        self.for_each_with_prefix(prefix, |word, p| {
            let code = if word == prefix { 2 } else { 1 };
            self.mark(among, p, |i, is_first| {
                let c = if is_first(first) == Some(true) {
                    code
                } else {
                    0
                };
                if let Some(m) = marks.get_mut(i) {
                    *m = (*m).max(c + 1);
                }
            });
            ControlFlow::Continue(())
        })?;
        Ok(marks)
    }

    /// Calls `found(i, is_first)` for each of `among` (ascending) in
    /// `p`, where `is_first(first_bits)` says whether the word is the
    /// first of that description's term: from the word's bitmaps when it
    /// is common enough to keep them ([`DenseWords`](crate::DenseWords)),
    /// else by walking both lists.
    fn mark(
        &self,
        among: &[u32],
        p: Postings<'a>,
        mut found: impl FnMut(usize, &dyn Fn(Option<&[u8]>) -> Option<bool>),
    ) {
        if let Some(dense) = self.dense_word(p, among.len()) {
            for (i, &d) in among.iter().enumerate() {
                if let Some(first) = dense.get(d) {
                    found(i, &|_| Some(first));
                }
            }
            return;
        }
        meet(among, p, |i, j| found(i, &|bits| p.is_first(bits, j)));
    }
}

enum PrefixCost {
    NoWords,
    Within(usize),
    Over,
}

/// First index `>= from` whose key is `>= target` (or `s.len()`), by
/// exponential then binary search. Never moves backwards, never panics.
pub(crate) fn gallop<T>(s: &[T], from: usize, target: u32, key: impl Fn(&T) -> u32) -> usize {
    let len = s.len();
    let mut lo = from;
    match s.get(lo) {
        None => return len,
        Some(x) if key(x) >= target => return lo,
        Some(_) => {}
    }
    // Invariant: key(s[lo]) < target.
    let mut step = 1usize;
    let mut hi = lo.saturating_add(step);
    while let Some(x) = s.get(hi) {
        if key(x) >= target {
            break;
        }
        lo = hi;
        step = step.saturating_mul(2);
        hi = lo.saturating_add(step);
    }
    let hi = hi.min(len);
    let window = s.get(lo + 1..hi).unwrap_or(&[]);
    lo + 1 + window.partition_point(|x| key(x) < target)
}

/// Which descriptions a search may return ([`TextIndex::search_among`]).
#[derive(Debug, Clone, Copy)]
pub enum Among<'x> {
    /// Every description.
    All,
    /// The descriptions listed: ascending ordinals.
    List(&'x [u32]),
    /// The descriptions whose bit is set (ordinal `d` is bit `d % 64` of
    /// word `d / 64`); an ordinal past the end is not among them.
    Bits(&'x [u64]),
}

/// Whether ordinal `v`'s bit is set in `bits` (as [`Among::Bits`] reads
/// them).
pub fn has_bit(bits: &[u64], v: u32) -> bool {
    bits.get(v as usize / 64)
        .is_some_and(|w| w & (1 << (v % 64)) != 0)
}

/// The values in both ascending lists.
fn intersect_sorted(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (small, big) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(small.len());
    let mut j = 0;
    for &x in small {
        j = gallop(big, j, x, |&v| v);
        match big.get(j) {
            None => break,
            Some(&v) if v == x => out.push(x),
            Some(_) => {}
        }
    }
    out
}

/// The values of `a` (ascending) among the postings `p`.
pub(crate) fn intersect(a: &[u32], p: Postings<'_>) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len().min(p.len()));
    meet(a, p, |i, _| out.push(a[i]));
    out
}

/// Calls `found(i, j)` for each `a[i]` (ascending) that is the `j`th
/// posting of `p`, in order. A run of postings sharing their high half
/// meets the values of `a` in that half's range, galloping from the
/// shorter side: over the run's two-byte low halves when it is the
/// longer, so a long list is searched in its chunk, not walked.
pub(crate) fn meet(a: &[u32], p: Postings<'_>, mut found: impl FnMut(usize, usize)) {
    let mut from = 0;
    for (high, run, first) in p.runs() {
        // The values of `a` in the run's range: `high` to `high + 0xFFFF`.
        let rest = a.get(from..).unwrap_or_default();
        let lo = from + rest.partition_point(|&x| x < high);
        let rest = a.get(lo..).unwrap_or_default();
        let hi = lo + rest.partition_point(|&x| x >> 16 <= high >> 16);
        let key = |l: &U16| high | u32::from(l.get());
        if hi - lo <= run.len() {
            let mut j = 0;
            for (i, &x) in a.iter().enumerate().take(hi).skip(lo) {
                j = gallop(run, j, x, key);
                match run.get(j) {
                    None => break,
                    Some(l) if key(l) == x => found(i, first + j),
                    Some(_) => {}
                }
            }
        } else {
            let mut i = lo;
            for (j, l) in run.iter().enumerate() {
                let y = key(l);
                i = gallop(a, i, y, |&v| v);
                match a.get(i) {
                    Some(&v) if i < hi && v == y => found(i, first + j),
                    Some(_) if i < hi => {}
                    _ => break,
                }
            }
        }
        from = hi;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(word: &str, prefix: bool) -> Constraint<'_> {
        Constraint { word, prefix }
    }

    #[test]
    fn constraint_reduction() {
        assert_eq!(
            constraints("diab diabetes mel", MatchMode::Prefix),
            [c("diabetes", true), c("mel", true)]
        );
        assert_eq!(constraints("mel mel", MatchMode::Prefix), [c("mel", true)]);
        assert_eq!(
            constraints("type 2 diabetes 2", MatchMode::Words),
            [c("type", false), c("2", false), c("diabetes", false)]
        );
        assert_eq!(
            constraints("diabetes diab", MatchMode::LastPrefix),
            [c("diabetes", false)]
        );
        assert_eq!(
            constraints("diab diabetes", MatchMode::LastPrefix),
            [c("diab", false), c("diabetes", true)]
        );
        assert_eq!(
            constraints("diabetes diabetes", MatchMode::LastPrefix),
            [c("diabetes", false)]
        );
        assert!(constraints("", MatchMode::Prefix).is_empty());
    }

    fn chunked(v: &[u32]) -> Vec<u8> {
        let mut bytes = Vec::new();
        txmap_format::chunked::chunk(v, &mut bytes).unwrap();
        bytes
    }

    #[test]
    fn gallop_finds_lower_bound() {
        let s: Vec<u32> = (0..100).map(|x| x * 3).collect();
        for from in [0, 1, 5, 50, 99, 100, 200] {
            for target in 0..310 {
                let want = s
                    .iter()
                    .enumerate()
                    .skip(from)
                    .find(|&(_, &v)| v >= target)
                    .map_or(s.len(), |(i, _)| i);
                assert_eq!(gallop(&s, from, target, |&v| v), want, "{from} {target}");
            }
        }
        // Unsorted input: any answer, but in bounds and no panic.
        let junk = [5u32, 1, 9, 0, 3, 3, 100, 2];
        for t in 0..120 {
            assert!(gallop(&junk, 0, t, |&v| v) <= junk.len());
        }
    }

    #[test]
    fn intersections() {
        let a = [1, 3, 5, 7, 9, 11];
        let b_list = [0, 1, 2, 3, 4, 9, 10, 11, 12, 13, 14, 15, 16, 17];
        let bytes = chunked(&b_list);
        let b = Postings::of(&bytes).unwrap();
        assert_eq!(intersect(&a, b), [1, 3, 9, 11]);
        let long: Vec<u32> = (0..1000).collect();
        let bytes = chunked(&[5, 500, 999, 1000]);
        assert_eq!(
            intersect(&long, Postings::of(&bytes).unwrap()),
            [5, 500, 999]
        );
        assert_eq!(intersect(&[], b), Vec::<u32>::new());
        // Each match as (candidate, list) positions, from either side.
        let mut found = Vec::new();
        meet(&a, b, |i, j| found.push((i, j)));
        assert_eq!(found, [(0, 1), (1, 3), (4, 5), (5, 7)]);
        let mut found = Vec::new();
        meet(&long, b, |i, j| found.push((i, j)));
        assert_eq!(found.len(), b.len(), "every value of b is in 0..1000");
        assert!(found.iter().all(|&(i, j)| long[i] == b_list[j]));
    }

    #[test]
    fn meetings_across_chunks_match_a_naive_intersection() {
        // Lists whose values cross many high halves, met from both sides.
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for round in 0..200 {
            let spread = [1 << 10, 1 << 17, 1 << 20, 1 << 24][round % 4];
            let mut list: Vec<u32> = (0..next(300)).map(|_| next(spread) as u32).collect();
            let mut among: Vec<u32> = (0..next(300)).map(|_| next(spread) as u32).collect();
            for v in [&mut list, &mut among] {
                v.sort_unstable();
                v.dedup();
            }
            let bytes = chunked(&list);
            let p = Postings::of(&bytes).unwrap();
            let mut found = Vec::new();
            meet(&among, p, |i, j| found.push((i, j)));
            let want: Vec<(usize, usize)> = (among.iter().enumerate())
                .filter_map(|(i, x)| list.binary_search(x).ok().map(|j| (i, j)))
                .collect();
            assert_eq!(found, want, "round {round}");
        }
    }
}
