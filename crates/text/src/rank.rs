//! Ranking of candidate terms against a query, for the store to sort search
//! hits: how well the term matches first, then shorter terms first.
//!
//! Comparison is on the *word sequences* of the folded strings, so case,
//! accents, punctuation and spacing do not matter: "Ménière's  disease."
//! is an exact match for the query "meniere's disease" (both are the words
//! `meniere s disease`).

use crate::fold::{fold_into, words};

/// How a term matches a query, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MatchTier {
    /// The term's words are exactly the query's words.
    Exact,
    /// The term starts with the query: its first words equal the query's,
    /// the last query word being a prefix of the corresponding term word
    /// ("diabetes mel" → "Diabetes mellitus type 2").
    StartsWith,
    /// Every query word is a prefix of some word of the term.
    AllWordPrefixes,
    /// None of the above (e.g. a term found by other means).
    Other,
}

/// Sort key of a candidate term: ascending order is best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RankKey {
    tier: MatchTier,
    len: u32,
}

impl RankKey {
    /// The key of a term that matched as `tier` and is `term_len`
    /// characters long: what [`RankQuery::rank`] computes, for a caller
    /// that knows both without the term (a one-word query ranked from the
    /// first-words bitmap and the stored length).
    pub fn new(tier: MatchTier, term_len: u32) -> RankKey {
        RankKey {
            tier,
            len: term_len,
        }
    }

    /// How the term matched.
    pub fn tier(&self) -> MatchTier {
        self.tier
    }

    /// The term's length in characters (saturating), the tie-breaker.
    pub fn term_len(&self) -> u32 {
        self.len
    }
}

/// A query prepared for ranking many terms (avoids re-splitting the query).
#[derive(Debug, Clone)]
pub struct RankQuery {
    words: Vec<String>,
    scratch: String,
}

impl RankQuery {
    /// Prepares a query. It is expected folded (with [`fold`](crate::fold()))
    /// but is folded again here, which is idempotent, so raw text works too.
    pub fn new(query_folded: &str) -> Self {
        let mut scratch = String::new();
        fold_into(query_folded, &mut scratch);
        RankQuery {
            words: words(&scratch).map(str::to_owned).collect(),
            scratch,
        }
    }

    /// Ranks `term` (raw, unfolded) against the query.
    pub fn rank(&mut self, term: &str) -> RankKey {
        let mut folded = std::mem::take(&mut self.scratch);
        folded.clear();
        fold_into(term, &mut folded);
        let key = self.rank_folded_with_len(&folded, term.chars().count());
        self.scratch = folded;
        key
    }

    /// Ranks an already folded term; the length used is that of `term_folded`.
    pub fn rank_folded(&self, term_folded: &str) -> RankKey {
        self.rank_folded_with_len(term_folded, term_folded.chars().count())
    }

    fn rank_folded_with_len(&self, term_folded: &str, len: usize) -> RankKey {
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        let tier = tier(&self.words, term_folded);
        RankKey { tier, len }
    }
}

fn tier(query: &[String], term_folded: &str) -> MatchTier {
    let Some((last, init)) = query.split_last() else {
        return MatchTier::Other;
    };
    let mut term_words = words(term_folded);
    let mut starts = true;
    for q in init {
        if term_words.next() != Some(q.as_str()) {
            starts = false;
            break;
        }
    }
    if starts {
        match term_words.next() {
            Some(t) if t == last => {
                return if term_words.next().is_none() {
                    MatchTier::Exact
                } else {
                    MatchTier::StartsWith
                };
            }
            Some(t) if t.starts_with(last.as_str()) => return MatchTier::StartsWith,
            _ => {}
        }
    }
    if query
        .iter()
        .all(|q| words(term_folded).any(|t| t.starts_with(q.as_str())))
    {
        MatchTier::AllWordPrefixes
    } else {
        MatchTier::Other
    }
}

/// Ranks a candidate `term` (raw) against `query_folded` (normally already
/// folded; folding again is harmless):
/// exact match of the whole term > term starts with the query > every
/// query word is a prefix of a term word > other; then shorter terms (in
/// characters) first. Sort ascending by the key. For many terms, prepare a
/// [`RankQuery`] once instead.
pub fn rank(query_folded: &str, term: &str) -> RankKey {
    RankQuery::new(query_folded).rank(term)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fold;

    #[test]
    fn tiers() {
        let q = fold("Diabetes mellitus");
        assert_eq!(rank(&q, "Diabetes mellitus").tier(), MatchTier::Exact);
        assert_eq!(rank(&q, "DIABETES  MELLITUS.").tier(), MatchTier::Exact);
        assert_eq!(
            rank(&q, "Diabetes mellitus type 2").tier(),
            MatchTier::StartsWith
        );
        assert_eq!(
            rank(&q, "Type 2 diabetes mellitus").tier(),
            MatchTier::AllWordPrefixes
        );
        assert_eq!(rank(&q, "Diabetes insipidus").tier(), MatchTier::Other);
        let q = fold("diab mel");
        assert_eq!(
            rank(&q, "Diabetes mellitus").tier(),
            MatchTier::AllWordPrefixes
        );
        let q = fold("diabetes mel");
        assert_eq!(rank(&q, "Diabetes mellitus").tier(), MatchTier::StartsWith);
        assert_eq!(rank("", "x").tier(), MatchTier::Other);
        assert_eq!(rank(&fold("Ménière"), "Meniere").tier(), MatchTier::Exact);
        assert_eq!(rank("MÉNIÈRE", "Meniere").tier(), MatchTier::Exact);
    }

    #[test]
    fn ordering() {
        let q = fold("asthma");
        let mut terms = vec![
            "Allergic asthma",
            "Asthma attack",
            "Asthma",
            "Asthmatic bronchitis",
            "Severe persistent asthma",
            "Asthma in pregnancy",
        ];
        let mut rq = RankQuery::new(&q);
        terms.sort_by_key(|t| rq.rank(t));
        assert_eq!(
            terms,
            [
                "Asthma",
                "Asthma attack",
                "Asthma in pregnancy",
                "Asthmatic bronchitis",
                "Allergic asthma",
                "Severe persistent asthma",
            ]
        );
        assert!(rank(&q, "Asthma") < rank(&q, "Asthma attack"));
        assert_eq!(rank(&q, "Asthma attack").term_len(), 13);
    }
}
