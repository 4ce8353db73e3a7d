//! Word search over descriptions, ranked.
//!
//! The word index (txmap-text) turns the query into candidate description
//! ordinals, refusing queries whose most selective word has more than
//! `max_candidates` postings: that bound is what keeps a search's time and
//! memory bounded whatever the user types. The store then filters the
//! candidates (active, not a text definition, ...) and sorts them by how
//! well the term matches ([`txmap_text::rank`]), then preferred terms
//! first, then by concept ordinal (the hierarchy's depth-first order,
//! format 7) and description SCTID so that results are deterministic.

use txmap_format::SectionKind::{
    ConceptDescriptionsIndex, Concepts, DescriptionSearch, Descriptions, TermHeap, WordFirstWords,
    WordFst, WordPostings, WordPostingsIndex,
};
use txmap_format::U24;
use txmap_format::schema::description_search as search_bits;
use txmap_format::schema::{ConceptRecord, DescriptionRecord, concept_flags, description_flags};
use txmap_text::{Among, MatchMode, MatchTier, RankKey, RankQuery, TextIndex, fold, words};
use zerocopy::little_endian::U16;

use crate::{Edition, ScopeSet, SearchHit, StoreError, sctid};

/// The most candidate descriptions a search considers by default before it
/// is refused as [`StoreError::TooCostly`].
pub const SEARCH_MAX_CANDIDATES: usize = 2_000_000;

/// The most concepts a scope may have for its descriptions to be listed
/// as the seed of a search ([`TextIndex::search_among`]) when the query's
/// words have more postings than it has concepts: a refset of a few
/// thousand members searched for "of" starts from the members'
/// descriptions. A bigger scope filters the search's answer instead.
pub(crate) const SEED_SCOPE_UP_TO: usize = 65_536;

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
    /// Only descriptions with an active row in this language refset
    /// (preferred or acceptable) match: a search in one dialect or
    /// translation. `None` by default: every language.
    pub acceptable_in: Option<u64>,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            mode: MatchMode::Prefix,
            include_inactive: false,
            include_definitions: false,
            best_per_concept: false,
            max_candidates: SEARCH_MAX_CANDIDATES,
            acceptable_in: None,
        }
    }
}

/// Which concepts a search may return.
pub enum Scope<'s> {
    /// Every concept.
    All,
    /// The concepts listed (ascending ordinals): a small list's
    /// descriptions seed the search, a long one's are picked out of the
    /// candidates by a walk of both lists. Suits a list at hand (a value
    /// set's concepts) searched once.
    Concepts(&'s [u32]),
    /// The concepts `test` passes, asked once per concept among the
    /// candidates: for a selective query, where testing a few thousand
    /// concepts costs less than building the scope's set.
    Test(&'s mut dyn FnMut(u32) -> bool),
    /// A scope built for searching ([`ScopeSet`]): only its candidates are
    /// listed, and a search head's page is filtered, not ranked again.
    Set(&'s ScopeSet),
}

impl Scope<'_> {
    fn is_all(&self) -> bool {
        matches!(self, Scope::All)
    }
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::All => f.write_str("All"),
            Scope::Concepts(c) => write!(f, "Concepts({} concepts)", c.len()),
            Scope::Test(_) => f.write_str("Test"),
            Scope::Set(s) => write!(f, "Set({} concepts)", s.concepts().len()),
        }
    }
}

impl<B: AsRef<[u8]>> Edition<B> {
    /// A reader over the word index sections. Cheap (O(1) checks); the fst
    /// section was checksummed on open, which `fst` needs. The first-words
    /// bitmap is attached when the file has one (format 1.5).
    pub(crate) fn text_index(&self) -> Result<TextIndex<'_>, StoreError> {
        let index = TextIndex::open(
            self.raw(WordFst)?,
            self.raw(WordPostingsIndex)?,
            self.raw(WordPostings)?,
        )?;
        let index = index.with_dense(&self.dense_words);
        Ok(if self.present(WordFirstWords) {
            index.with_first_words(self.raw(WordFirstWords)?)?
        } else {
            index
        })
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
        let descriptions: &[DescriptionRecord] = self.recs(Descriptions)?;
        let (_, ranked) = self.ranked(query, options, Scope::All, limit)?;
        ranked
            .into_iter()
            .map(|h| {
                let r = description_record(descriptions, h.ordinal)?;
                Ok(SearchHit {
                    description: self.make_description(h.concept, h.ordinal, r)?,
                    concept_ordinal: h.concept,
                    rank: h.rank,
                    preferred: !h.not_preferred,
                })
            })
            .collect()
    }

    /// [`search_with`](Self::search_with) for callers that want concepts,
    /// not descriptions (a text-filtered `$expand`): the ordinals of the
    /// concepts with a matching description, best match first, each once
    /// (`best_per_concept` is implied). No description is decoded beyond
    /// what ranking reads, so this is the cheaper call for long results.
    pub fn search_concepts(
        &self,
        query: &str,
        options: &SearchOptions,
    ) -> Result<Vec<u32>, StoreError> {
        Ok(self
            .search_concepts_top(query, options, Scope::All, usize::MAX)?
            .1)
    }

    /// The first `k` of [`search_concepts`](Self::search_concepts) among
    /// the concepts of `scope`, and how
    /// many there are in all: what a page of a text-filtered `$expand`
    /// needs (its `total` and its first `offset + count`). The same order as the whole list,
    /// without sorting it: each concept's best description is found in one
    /// pass (a concept's descriptions are neighbours among the
    /// candidates), the `k` best concepts are selected in linear time, and
    /// only they are sorted. So the commonest word costs its candidates'
    /// count, not that times its logarithm — and a one-word prefix search
    /// that is a search head ([`crate::heads`]) reads its stored answer.
    pub fn search_concepts_top(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: Scope<'_>,
        k: usize,
    ) -> Result<(usize, Vec<u32>), StoreError> {
        // The heads are every language's answers.
        let head = options.mode == MatchMode::Prefix
            && !options.include_definitions
            && options.acceptable_in.is_none()
            && k <= txmap_format::schema::SEARCH_HEAD_LIST;
        if head
            && scope.is_all()
            && let Some((total, list)) = self.search_head(query, options.include_inactive)?
        {
            return Ok((total, list.iter().take(k).map(|o| o.get()).collect()));
        }
        // In a built scope, the head's list in rank order, kept to the
        // scope, is the scoped search's — when it gives a whole page, or
        // is every hit. Then the hits are only counted.
        if head
            && let Scope::Set(set) = &scope
            && let Some(mask) = set.mask(options.include_inactive)
            && let Some((total, list)) = self.search_head(query, options.include_inactive)?
        {
            let page: Vec<u32> = list
                .iter()
                .map(|o| o.get())
                .filter(|&c| set.contains(c))
                .take(k)
                .collect();
            if page.len() == k || list.len() == total {
                let index = self.text_index()?;
                let folded = fold(query);
                let word = words(&folded).next().unwrap_or_default();
                // A small scope (a built one with a mask is listed): its
                // listed descriptions, marked.
                if let Some(listed) = set.listed()
                    && self.seeds(&index, query, options, set.concepts())?
                {
                    let rows = listed.rows(options.include_inactive);
                    let marks = index.prefix_marks(&rows.descriptions, word)?;
                    return Ok((rows.concepts_marked(&marks), page));
                }
                // A head is one word: its prefix's postings, masked,
                // counted by concept in the bitmap, never listed.
                let bits = index.prefix_bits_masked(word, options.max_candidates, mask)?;
                return Ok((set.concepts_in(&bits), page));
            }
        }
        self.search_concepts_ranked(query, options, scope, k)
    }

    /// [`search_concepts_top`](Self::search_concepts_top) by ranking the
    /// candidates, never from the search heads.
    pub(crate) fn search_concepts_ranked(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: Scope<'_>,
        k: usize,
    ) -> Result<(usize, Vec<u32>), StoreError> {
        let options = SearchOptions {
            best_per_concept: true,
            ..*options
        };
        let (total, top) = self.ranked(query, &options, scope, k)?;
        Ok((total, top.into_iter().map(|h| h.concept).collect()))
    }

    /// The candidates of a search, filtered and sorted: the shared part of
    /// both searches.
    ///
    /// With the format 1.5 search sections, a candidate is filtered and
    /// ranked from its two-byte `DescriptionSearch` entry, its concept found
    /// by walking `ConceptDescriptionsIndex` along the sorted candidates,
    /// and a one-word query's tiers come from the first-words bitmap: no
    /// record, acceptability row or term is read but for a term of 2,047
    /// characters or more, and for a longer query the terms whose first
    /// word is the query's first (the bitmap says which; the others can
    /// neither equal nor start with the query). The keys are
    /// exactly those of the record path below, which older files take (the
    /// store tests compare the two).
    ///
    /// Only candidates whose concept is in `scope` count; the answer is
    /// how many hits there are (concepts, with `best_per_concept`) and the
    /// `k` best, in order.
    fn ranked(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: Scope<'_>,
        k: usize,
    ) -> Result<(usize, Vec<Ranked>), StoreError> {
        let mut hits = Collect::new(options.best_per_concept);
        self.rank_into(query, options, scope, &mut hits, None)?;
        Ok(hits.top(k))
    }

    /// [`ranked`](Self::ranked)'s work: the candidates that pass
    /// `options` and `scope` go to `hits`; with `all`, every candidate
    /// `scope` takes, active or not, goes there too — both answers of one
    /// search for the price of one (the importer's search heads).
    pub(crate) fn rank_into(
        &self,
        query: &str,
        options: &SearchOptions,
        scope: Scope<'_>,
        hits: &mut Collect,
        mut all: Option<&mut Collect>,
    ) -> Result<(), StoreError> {
        let index = self.text_index()?;
        let folded = fold(query);
        // Every word's postings are one run of the file (a prefix's words
        // too): ask for them ahead of the search's reads.
        let words_of_query: Vec<&str> = if self.prefetches() {
            words(&folded).collect()
        } else {
            Vec::new()
        };
        for (i, w) in words_of_query.iter().enumerate() {
            let prefix = match options.mode {
                MatchMode::Words => false,
                MatchMode::Prefix => true,
                MatchMode::LastPrefix => i + 1 == words_of_query.len(),
            };
            for run in index.postings_runs(w, prefix)? {
                self.ahead(run);
            }
        }
        // A small scope whose concepts are fewer than the query's most
        // selective word's postings seeds the search with its
        // descriptions. Else a built scope's bitmap keeps only its
        // candidates (when the search wants what the bitmap says:
        // definitions never, inactive descriptions as asked, and no second
        // list of every candidate), and a list of concepts filters the
        // search's answer.
        let within = match &scope {
            Scope::Concepts(within) => Some(*within),
            Scope::Set(set) => Some(set.concepts()),
            _ => None,
        };
        // A built scope drops, before the search, what the ranking would
        // (inactive ones, definitions), as asked; a small one has its
        // descriptions listed, with what the ranking reads of each.
        let built = match &scope {
            Scope::Set(set) if !options.include_definitions && all.is_none() => {
                set.mask(options.include_inactive).map(|mask| (*set, mask))
            }
            _ => None,
        };
        let seeded = match within {
            Some(within) => self.seeds(&index, query, options, within)?,
            None => false,
        };
        let rows = built
            .and_then(|(set, _)| set.listed())
            .map(|listed| listed.rows(options.include_inactive))
            .filter(|_| seeded);
        let mut listed_facts = None;
        let (mut candidates, mut seeded_codes) = match (rows, within) {
            // One word, a prefix, in listed rows: each row marked by
            // position, so its concept and entry are read beside it.
            (Some(rows), _)
                if options.mode == MatchMode::Prefix
                    && self.present(WordFirstWords)
                    && words(&folded).nth(1).is_none()
                    && let Some(word) = words(&folded).next() =>
            {
                let marks = index.prefix_marks(&rows.descriptions, word)?;
                let found = marks.iter().filter(|&&m| m > 0).count();
                let (mut kept, mut codes) = (Vec::with_capacity(found), Vec::with_capacity(found));
                let mut facts = (Vec::with_capacity(found), Vec::with_capacity(found));
                for (p, &m) in marks.iter().enumerate().filter(|&(_, &m)| m > 0) {
                    kept.push(rows.descriptions[p]);
                    codes.push(m - 1);
                    facts.0.push(rows.concepts[p]);
                    facts.1.push(rows.entries[p]);
                }
                listed_facts = Some(facts);
                (kept, Some(codes))
            }
            (Some(rows), _) => {
                let (kept, codes) = index.search_among_coded(
                    query,
                    options.mode,
                    options.max_candidates,
                    Among::List(&rows.descriptions),
                )?;
                listed_facts = rows.facts_of(&kept);
                (kept, codes)
            }
            // Seeded and not listed: a list of concepts, or a set
            // searched as it was not built for (definitions included).
            (None, Some(within)) if seeded => {
                let seed = self.descriptions_of(within)?;
                index.search_among_coded(
                    query,
                    options.mode,
                    options.max_candidates,
                    Among::List(&seed),
                )?
            }
            _ => {
                let among = match built {
                    Some((_, mask)) => Among::Bits(mask),
                    None => Among::All,
                };
                let found =
                    index.search_among(query, options.mode, options.max_candidates, among)?;
                (found, None)
            }
        };
        let within = within.filter(|_| built.is_none());
        match (scope, within) {
            (Scope::Test(test), _) => candidates = self.descriptions_passing(&candidates, test)?,
            (_, Some(within)) if !seeded => {
                candidates = self.descriptions_within(&candidates, within)?;
            }
            _ => {}
        }
        let language = Language::new(self, options.acceptable_in);
        let mut ranker = RankQuery::new(&folded);
        hits.reserve(candidates.len());
        if let Some(all) = all.as_deref_mut() {
            all.reserve(candidates.len());
        }
        if self.present(DescriptionSearch) && self.present(WordFirstWords) {
            let entries: &[U16] = self.recs(DescriptionSearch)?;
            let mut query_words = words(&folded);
            let (first, second) = (query_words.next(), query_words.next());
            let one_word = second.is_none();
            // One word: how each term's first word meets it is the tier. A
            // longer query: a term can match it exactly or start with it
            // only if its first word is the query's first, so only those
            // candidates' terms are read.
            let codes = match (first, seeded_codes.take()) {
                (Some(_), Some(codes)) if one_word && options.mode == MatchMode::Prefix => {
                    Some(codes)
                }
                (Some(word), _) => index.first_word_codes(word, one_word, &candidates)?,
                (None, _) => None,
            };
            let (concepts, listed_entries) = match listed_facts {
                Some((concepts, entries)) => (concepts, Some(entries)),
                None => (self.concepts_of_descriptions(&candidates)?, None),
            };
            for (i, (&ordinal, &concept)) in candidates.iter().zip(&concepts).enumerate() {
                let entry = match &listed_entries {
                    Some(listed) => listed.get(i).copied(),
                    None => entries.get(ordinal as usize).map(|e| e.get()),
                };
                let Some(bits) = entry else {
                    return Err(StoreError::corrupt(
                        DescriptionSearch,
                        format!("description ordinal {ordinal} out of range"),
                    ));
                };
                let active = bits & search_bits::ACTIVE != 0;
                let shown =
                    options.include_inactive || (active && bits & search_bits::CONCEPT_ACTIVE != 0);
                if !shown && all.is_none() {
                    continue;
                }
                if !options.include_definitions && bits & search_bits::DEFINITION != 0 {
                    continue;
                }
                if !language.accepts(self, ordinal)? {
                    continue;
                }
                let chars = bits & search_bits::CHARS;
                let rank = match codes.as_ref().and_then(|c| c.get(i)) {
                    Some(&code) if one_word && chars != search_bits::CHARS => {
                        let tier = match code {
                            2 if bits & search_bits::ONE_WORD != 0 => MatchTier::Exact,
                            1 | 2 => MatchTier::StartsWith,
                            _ => MatchTier::AllWordPrefixes,
                        };
                        RankKey::new(tier, u32::from(chars))
                    }
                    // Every query word is a prefix of a word of the term
                    // (that is how the index found it), and the term does
                    // not start with the query's first word.
                    Some(0) if chars != search_bits::CHARS => {
                        RankKey::new(MatchTier::AllWordPrefixes, u32::from(chars))
                    }
                    _ => ranker.rank(self.term_of(ordinal)?),
                };
                let h = Ranked {
                    rank,
                    not_preferred: bits & search_bits::PREFERRED == 0,
                    concept,
                    ordinal,
                };
                if let Some(all) = all.as_deref_mut() {
                    all.push(h);
                }
                if shown {
                    hits.push(h);
                }
            }
        } else {
            let descriptions: &[DescriptionRecord] = self.recs(Descriptions)?;
            let concepts: &[ConceptRecord] = self.recs(Concepts)?;
            let of = self.concepts_of_descriptions(&candidates)?;
            for (&ordinal, &concept) in candidates.iter().zip(&of) {
                let r = description_record(descriptions, ordinal)?;
                let Some(c) = concepts.get(concept as usize) else {
                    return Err(StoreError::corrupt(
                        Descriptions,
                        format!("description {ordinal}: concept ordinal {concept} out of range"),
                    ));
                };
                let kind = self.description_kinds.of(r)?;
                let active = kind.flags & description_flags::ACTIVE != 0;
                let shown =
                    options.include_inactive || (active && c.flags & concept_flags::ACTIVE != 0);
                if !shown && all.is_none() {
                    continue;
                }
                let type_id = self.code(kind.type_code, Descriptions)?;
                if !options.include_definitions && type_id == sctid::DEFINITION {
                    continue;
                }
                if !language.accepts(self, ordinal)? {
                    continue;
                }
                let term =
                    self.heap_str(TermHeap, r.term_offset.get(), usize::from(r.term_len.get()))?;
                let preferred = self.is_preferred_synonym(ordinal, active, type_id)?;
                let h = Ranked {
                    rank: ranker.rank(term),
                    not_preferred: !preferred,
                    concept,
                    ordinal,
                };
                if let Some(all) = all.as_deref_mut() {
                    all.push(h);
                }
                if shown {
                    hits.push(h);
                }
            }
        }
        Ok(())
    }

    /// An upper bound on the descriptions a search for `query` considers
    /// ([`TextIndex::cost`]), read from the word index alone: how a caller
    /// chooses between testing each hit against a scope
    /// ([`Scope::Test`]) and building the scope's set. Above `limit`, any
    /// number above it.
    pub fn search_cost(
        &self,
        query: &str,
        mode: MatchMode,
        limit: usize,
    ) -> Result<usize, StoreError> {
        Ok(self.text_index()?.cost(query, mode, limit)?)
    }

    /// What a search that found nothing may have meant: `query` with
    /// each word that starts no indexed word replaced by the nearest that
    /// does ([`TextIndex::similar`]: one or two slips away, the commonest
    /// on a tie); `None` when every word is found, or one has no near
    /// word. Never used to widen a search: a page offers it as a link.
    pub fn did_you_mean(&self, query: &str) -> Result<Option<String>, StoreError> {
        let index = self.text_index()?;
        let folded = fold(query);
        let mut changed = false;
        let mut out = Vec::new();
        for w in words(&folded) {
            let mut found = false;
            index.for_each_with_prefix(w, |_, _| {
                found = true;
                std::ops::ControlFlow::Break(())
            })?;
            if found {
                out.push(w.to_owned());
                continue;
            }
            match index.similar(w, 1)?.into_iter().next() {
                Some(near) => {
                    out.push(near);
                    changed = true;
                }
                None => return Ok(None),
            }
        }
        Ok(changed.then(|| out.join(" ")))
    }

    /// Full check of the word index (fst and postings order), for `verify`.
    pub(crate) fn verify_word_index(&self) -> Result<(), StoreError> {
        Ok(self.text_index()?.verify()?)
    }
}

/// The language refset a search keeps to, as the one-byte code its
/// acceptability rows carry (looked up once, not per candidate).
enum Language {
    Any,
    /// The refset's code; `None` when no row names it (nothing matches).
    Refset(Option<u8>),
}

impl Language {
    fn new<B: AsRef<[u8]>>(ed: &Edition<B>, refset: Option<u64>) -> Language {
        match refset {
            None => Language::Any,
            Some(id) => Language::Refset(ed.code_of(id)),
        }
    }

    /// Whether description `d` may match.
    fn accepts<B: AsRef<[u8]>>(&self, ed: &Edition<B>, d: u32) -> Result<bool, StoreError> {
        match self {
            Language::Any => Ok(true),
            Language::Refset(None) => Ok(false),
            Language::Refset(Some(code)) => {
                for row in ed.acceptability_codes(d)? {
                    if row?.0 == *code {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
        }
    }
}

/// A search candidate, ranked from its record alone.
#[derive(Clone, Copy)]
pub(crate) struct Ranked {
    rank: RankKey,
    not_preferred: bool,
    /// Concept ordinal.
    pub(crate) concept: u32,
    /// Description ordinal.
    ordinal: u32,
}

impl Ranked {
    /// The documented order: match, preferred first, concept ordinal,
    /// description SCTID (a concept's descriptions are in SCTID order).
    fn key(&self) -> (RankKey, bool, u32, u32) {
        (self.rank, self.not_preferred, self.concept, self.ordinal)
    }
}

/// Ranked candidates as they come, in description order: every one, or
/// each concept's best. A concept's descriptions are neighbours in
/// description order, so its best is known when the next concept's
/// first arrives — no set of the concepts seen.
pub(crate) struct Collect {
    best_per_concept: bool,
    hits: Vec<Ranked>,
    current: Option<Ranked>,
}

impl Collect {
    pub(crate) fn new(best_per_concept: bool) -> Collect {
        Collect {
            best_per_concept,
            hits: Vec::new(),
            current: None,
        }
    }

    /// Room for what `candidates` candidates may give.
    fn reserve(&mut self, candidates: usize) {
        self.hits.reserve(if self.best_per_concept {
            candidates / 2
        } else {
            candidates
        });
    }

    fn push(&mut self, h: Ranked) {
        if !self.best_per_concept {
            self.hits.push(h);
            return;
        }
        match &mut self.current {
            Some(c) if c.concept == h.concept => {
                if h.key() < c.key() {
                    *c = h;
                }
            }
            Some(c) => {
                self.hits.push(*c);
                *c = h;
            }
            None => self.current = Some(h),
        }
    }

    /// How many there are, and the `k` best in order: selected in linear
    /// time, then only those sorted.
    pub(crate) fn top(mut self, k: usize) -> (usize, Vec<Ranked>) {
        if let Some(c) = self.current.take() {
            self.hits.push(c);
        }
        let mut hits = self.hits;
        let total = hits.len();
        if k < total {
            if k == 0 {
                return (total, Vec::new());
            }
            hits.select_nth_unstable_by_key(k - 1, Ranked::key);
            hits.truncate(k);
            // The page, not the buffer that held every hit: callers map it
            // in place (`into_iter().map().collect()` reuses the
            // allocation), and the importer keeps 3,300 of them.
            hits.shrink_to_fit();
        }
        hits.sort_unstable_by_key(Ranked::key);
        (total, hits)
    }
}

impl<B: AsRef<[u8]>> Edition<B> {
    /// Whether a scope of `within` concepts is small enough to seed a
    /// search for `query` ([`SEED_SCOPE_UP_TO`], and fewer than the
    /// query's postings).
    fn seeds(
        &self,
        index: &TextIndex<'_>,
        query: &str,
        options: &SearchOptions,
        within: &[u32],
    ) -> Result<bool, StoreError> {
        Ok(within.len() <= SEED_SCOPE_UP_TO
            && within.len() < index.cost(query, options.mode, options.max_candidates)?)
    }

    /// The descriptions of the concepts `concepts` lists (ascending
    /// ordinals), ascending: each concept's are one range.
    fn descriptions_of(&self, concepts: &[u32]) -> Result<Vec<u32>, StoreError> {
        let index: &[U24] = self.recs(ConceptDescriptionsIndex)?;
        let all = index.last().map_or(0, |e| e.get() as usize);
        let mut out = Vec::with_capacity(concepts.len() * 3);
        for &c in concepts {
            let range = match (index.get(c as usize), index.get(c as usize + 1)) {
                (Some(start), Some(end)) => start.get()..end.get(),
                _ => 0..u32::MAX,
            };
            // Distinct concepts' ranges are disjoint: together no longer
            // than the list of every description (a damaged index could
            // otherwise ask for any amount of memory).
            if range.end as usize > all || out.len() + range.len() > all {
                return Err(StoreError::corrupt(
                    ConceptDescriptionsIndex,
                    format!("concept ordinal {c}: descriptions out of range"),
                ));
            }
            out.extend(range);
        }
        Ok(out)
    }

    /// The candidates whose concept `test` passes, asking once per concept
    /// (a concept's descriptions are neighbours among the candidates).
    fn descriptions_passing(
        &self,
        candidates: &[u32],
        test: &mut dyn FnMut(u32) -> bool,
    ) -> Result<Vec<u32>, StoreError> {
        let concepts = self.concepts_of_descriptions(candidates)?;
        let mut out = Vec::new();
        let mut last: Option<(u32, bool)> = None;
        for (&d, &c) in candidates.iter().zip(&concepts) {
            let pass = match last {
                Some((seen, pass)) if seen == c => pass,
                _ => {
                    let pass = test(c);
                    last = Some((c, pass));
                    pass
                }
            };
            if pass {
                out.push(d);
            }
        }
        Ok(out)
    }

    /// The candidates (ascending description ordinals) that describe a
    /// concept of `within` (ascending concept ordinals): each concept's
    /// descriptions are one range (`ConceptDescriptionsIndex`). The two
    /// sorted lists are walked together, each side galloping over what the
    /// other rules out, so a scope of a few thousand concepts costs that
    /// many short searches among many candidates, and a scope of most of
    /// the edition about one step per candidate.
    fn descriptions_within(
        &self,
        candidates: &[u32],
        within: &[u32],
    ) -> Result<Vec<u32>, StoreError> {
        let index: &[U24] = self.recs(ConceptDescriptionsIndex)?;
        let range = |c: u32| -> Result<(u32, u32), StoreError> {
            match (index.get(c as usize), index.get(c as usize + 1)) {
                (Some(start), Some(end)) => Ok((start.get(), end.get())),
                _ => Err(StoreError::corrupt(
                    ConceptDescriptionsIndex,
                    format!("concept ordinal {c} out of range"),
                )),
            }
        };
        let mut out = Vec::new();
        let (mut i, mut j) = (0, 0);
        while let (Some(&c), true) = (within.get(j), i < candidates.len()) {
            let (start, end) = range(c)?;
            i = gallop(candidates, i, |&d| d < start);
            let Some(&d) = candidates.get(i) else {
                break;
            };
            if d < end {
                out.push(d);
                i += 1;
            } else {
                // The next concept whose descriptions reach `d`.
                let bad = std::cell::Cell::new(None);
                j = gallop(within, j + 1, |&c| match range(c) {
                    Ok((_, end)) => end <= d,
                    Err(e) => {
                        bad.set(Some(e));
                        false
                    }
                });
                if let Some(e) = bad.into_inner() {
                    return Err(e);
                }
            }
        }
        Ok(out)
    }

    /// The concept of each of `descriptions` (ascending ordinals), by one
    /// walk of `ConceptDescriptionsIndex` (a concept's descriptions are
    /// `index[c]..index[c + 1]`): no description record is read, and a
    /// step to a concept further on starts from where the mean
    /// descriptions per concept puts it ([`concept_at_or_after`]).
    fn concepts_of_descriptions(&self, descriptions: &[u32]) -> Result<Vec<u32>, StoreError> {
        let index: &[U24] = self.recs(ConceptDescriptionsIndex)?;
        let mut out = Vec::with_capacity(descriptions.len());
        let mut c = 0usize;
        for &d in descriptions {
            c = concept_at_or_after(index, c, d)?;
            out.push(c as u32);
        }
        Ok(out)
    }

    /// The concept description `d` describes: descriptions are stored by
    /// concept, so it is found in `ConceptDescriptionsIndex`, from where
    /// the mean descriptions per concept put it (a record does not repeat
    /// it: four bytes a description, since format 5).
    pub(crate) fn concept_of_description(&self, d: u32) -> Result<u32, StoreError> {
        let index: &[U24] = self.recs(ConceptDescriptionsIndex)?;
        concept_at_or_after(index, 0, d).map(|c| c as u32)
    }

    /// A description's term, from its record.
    fn term_of(&self, ordinal: u32) -> Result<&str, StoreError> {
        let r = description_record(self.recs(Descriptions)?, ordinal)?;
        self.heap_str(TermHeap, r.term_offset.get(), usize::from(r.term_len.get()))
    }
}

/// The concept of description `d`, searching `index`
/// (`ConceptDescriptionsIndex`) from concept `c` on: the first concept
/// whose descriptions end after `d`. Mostly the same concept or the next;
/// else searched from where the edition's mean descriptions per concept
/// puts it — a concept has a handful, so the guess is a few entries off
/// and the search reads a cache line or two near it, where a gallop from
/// `c` read one per doubling.
fn concept_at_or_after(index: &[U24], c: usize, d: u32) -> Result<usize, StoreError> {
    match (index.get(c + 1), index.get(c + 2)) {
        (Some(end), _) if d < end.get() => return Ok(c),
        (_, Some(end)) if d < end.get() => return Ok(c + 1),
        _ => {}
    }
    // Concept c + 2 ends at or before `d`: the first end after it is
    // further on, and the concept is the one before that end.
    let concepts = index.len().saturating_sub(1) as u64;
    let all = u64::from(index.last().map_or(0, |e| e.get())).max(1);
    let passed = u64::from(d.saturating_sub(index.get(c + 2).map_or(d, |e| e.get())));
    let guess = c + 3 + (passed * concepts / all) as usize;
    let end = gallop_near(index, c + 3, guess, |end| end.get() <= d);
    if end >= index.len() {
        return Err(StoreError::corrupt(
            ConceptDescriptionsIndex,
            format!("description ordinal {d} beyond the last concept's"),
        ));
    }
    Ok(end - 1)
}

/// [`gallop`] from an estimate: the first index at or after `from` where
/// `before` stops holding, searched outwards from `guess` — forwards when
/// `before` holds just before it, else backwards towards `from` — so a
/// guess a few places off costs a few reads near it.
fn gallop_near<T>(list: &[T], from: usize, guess: usize, before: impl Fn(&T) -> bool) -> usize {
    let guess = guess.clamp(from, list.len().max(from));
    if guess == from || list.get(guess - 1).is_none_or(&before) {
        return gallop(list, guess, before);
    }
    // `before` fails at `hi`: the answer is in from..=hi.
    let mut hi = guess - 1;
    let mut step = 1;
    loop {
        let probe = hi.saturating_sub(step).max(from);
        if probe == hi || list.get(probe).is_none_or(&before) {
            let window = list.get(probe..hi).unwrap_or_default();
            return probe + window.partition_point(&before);
        }
        hi = probe;
        step *= 2;
    }
}

fn description_record(
    descriptions: &[DescriptionRecord],
    ordinal: u32,
) -> Result<&DescriptionRecord, StoreError> {
    descriptions.get(ordinal as usize).ok_or_else(|| {
        StoreError::corrupt(
            WordPostings,
            format!(
                "description ordinal {ordinal} out of range ({})",
                descriptions.len()
            ),
        )
    })
}

/// The first index at or after `from` where `before` stops holding (the
/// list is ordered so that it holds for a prefix): doubling steps, then
/// a binary search in the last step, so the cost is the log of the
/// distance moved.
fn gallop<T>(list: &[T], from: usize, before: impl Fn(&T) -> bool) -> usize {
    let rest = list.get(from..).unwrap_or_default();
    let mut step = 1;
    while step <= rest.len() && before(&rest[step - 1]) {
        step *= 2;
    }
    let window = &rest[step / 2..step.min(rest.len())];
    from + step / 2 + window.partition_point(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The concept of each description of an ascending walk, as a scan
    /// of the index finds it: concepts of zero to a dozen descriptions,
    /// walks that step by one and that leap, from every start.
    #[test]
    fn a_description_s_concept_is_found_from_any_guess() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for round in 0..200 {
            let concepts = 1 + next(300) as usize;
            // Mostly a handful each; some rounds with long ones.
            let most = if round % 4 == 0 { 40 } else { 6 };
            let mut ends = vec![0u32];
            for _ in 0..concepts {
                let last = *ends.last().unwrap();
                ends.push(last + next(most + 1) as u32);
            }
            let index: Vec<U24> = ends.iter().map(|&e| U24::new(e).unwrap()).collect();
            let all = *ends.last().unwrap();
            let mut c = 0;
            let mut d = 0;
            while d < all {
                let want = (0..concepts)
                    .find(|&k| ends[k] <= d && d < ends[k + 1])
                    .unwrap();
                c = concept_at_or_after(&index, c, d).unwrap();
                assert_eq!(c, want, "round {round} d {d}");
                d += 1 + next(if round % 2 == 0 { 3 } else { 200 }) as u32;
            }
            assert!(concept_at_or_after(&index, 0, all).is_err());
        }
    }

    #[test]
    fn gallop_near_agrees_with_gallop_from_any_guess() {
        let list: Vec<u32> = (0..300).map(|i| i * 5 + i % 5).collect();
        for from in [0, 1, 17, 150, 299, 300, 400] {
            for guess in [0, 3, 20, 149, 150, 151, 298, 300, 10_000] {
                for target in (0..1600).step_by(7) {
                    let before = |v: &u32| *v < target;
                    assert_eq!(
                        gallop_near(&list, from, guess, before),
                        gallop(&list, from, before),
                        "from {from} guess {guess} target {target}"
                    );
                }
            }
        }
    }
}
