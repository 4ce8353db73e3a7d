//! Word search over descriptions, ranked.
//!
//! The word index (txmap-text) turns the query into candidate description
//! ordinals, refusing queries whose most selective word has more than
//! `max_candidates` postings: that bound is what keeps a search's time and
//! memory bounded whatever the user types. The store then filters the
//! candidates (active, not a text definition, ...) and sorts them by how
//! well the term matches ([`txmap_text::rank`]), then preferred terms
//! first, then by concept and description SCTID so that results are
//! deterministic.

use std::collections::HashSet;

use txmap_format::SectionKind::{Concepts, Descriptions, WordFst, WordPostings, WordPostingsIndex};
use txmap_format::schema::{ConceptRecord, DescriptionRecord, concept_flags, description_flags};
use txmap_text::{MatchMode, RankQuery, TextIndex, fold};

use crate::{Edition, SearchHit, StoreError, sctid};

/// The most candidate descriptions a search considers by default before it
/// is refused as [`StoreError::TooCostly`].
pub const SEARCH_MAX_CANDIDATES: usize = 200_000;

/// What [`Edition::search_with`] matches and returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchOptions {
    /// How query words match term words; [`MatchMode::Prefix`] by default
    /// (`"diab mel"` finds "Diabetes mellitus").
    pub mode: MatchMode,
    /// Also return inactive descriptions and descriptions of inactive
    /// concepts. Off by default.
    pub include_inactive: bool,
    /// Also search text definitions. Off by default: they are long prose
    /// that matches almost any word.
    pub include_definitions: bool,
    /// Return only the best hit of each concept. Off by default.
    pub best_per_concept: bool,
    /// The work bound, see [`SEARCH_MAX_CANDIDATES`].
    pub max_candidates: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            mode: MatchMode::Prefix,
            include_inactive: false,
            include_definitions: false,
            best_per_concept: false,
            max_candidates: SEARCH_MAX_CANDIDATES,
        }
    }
}

impl<B: AsRef<[u8]>> Edition<B> {
    /// A reader over the word index sections. Cheap (O(1) checks); the fst
    /// section was checksummed on open, which `fst` needs.
    pub(crate) fn text_index(&self) -> Result<TextIndex<'_>, StoreError> {
        Ok(TextIndex::open(
            self.raw(WordFst)?,
            self.raw(WordPostingsIndex)?,
            self.raw(WordPostings)?,
        )?)
    }

    /// Searches the terms of active descriptions of active concepts (text
    /// definitions excluded) for every word of `query` as a word prefix,
    /// and returns the `limit` best hits. See [`search_with`](Self::search_with).
    pub fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit<'_>>, StoreError> {
        self.search_with(query, limit, &SearchOptions::default())
    }

    /// Searches description terms: every word of `query` (folded: case and
    /// accents do not matter) must match a word of the term as
    /// `options.mode` says. Hits are sorted by match quality (exact term,
    /// then term starting with the query, then the rest; shorter terms
    /// first within each), then the concept's preferred terms in the
    /// default language before its other descriptions, then concept and
    /// description SCTID.
    ///
    /// Errors: [`StoreError::EmptyQuery`] if the query has no words,
    /// [`StoreError::TooCostly`] if its most selective word matches more
    /// than `options.max_candidates` descriptions.
    pub fn search_with(
        &self,
        query: &str,
        limit: usize,
        options: &SearchOptions,
    ) -> Result<Vec<SearchHit<'_>>, StoreError> {
        let index = self.text_index()?;
        let candidates = index.search(query, options.mode, options.max_candidates)?;
        let descriptions: &[DescriptionRecord] = self.recs(Descriptions)?;
        let concepts: &[ConceptRecord] = self.recs(Concepts)?;
        let folded = fold(query);
        let mut ranker = RankQuery::new(&folded);
        let mut hits = Vec::new();
        for ordinal in candidates {
            let Some(r) = descriptions.get(ordinal as usize) else {
                return Err(StoreError::corrupt(
                    WordPostings,
                    format!(
                        "description ordinal {ordinal} out of range ({})",
                        descriptions.len()
                    ),
                ));
            };
            if !options.include_inactive {
                let concept_active = concepts
                    .get(r.concept.get() as usize)
                    .is_some_and(|c| c.flags & concept_flags::ACTIVE != 0);
                if r.flags & description_flags::ACTIVE == 0 || !concept_active {
                    continue;
                }
            }
            let d = self.make_description(ordinal, r)?;
            if !options.include_definitions && d.type_id == sctid::DEFINITION {
                continue;
            }
            let preferred = self.is_preferred_description(&d)?;
            hits.push(SearchHit {
                concept_ordinal: r.concept.get(),
                rank: ranker.rank(d.term),
                preferred,
                description: d,
            });
        }
        hits.sort_unstable_by_key(|h| {
            (
                h.rank,
                !h.preferred,
                h.description.concept,
                h.description.id,
            )
        });
        if options.best_per_concept {
            let mut seen = HashSet::new();
            hits.retain(|h| seen.insert(h.description.concept));
        }
        hits.truncate(limit);
        Ok(hits)
    }

    /// Full check of the word index (fst and postings order), for `verify`.
    pub(crate) fn verify_word_index(&self) -> Result<(), StoreError> {
        Ok(self.text_index()?.verify()?)
    }
}
