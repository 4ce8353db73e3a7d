//! Search heads: the answers of the searches a person types first,
//! computed once at import.
//!
//! A one-word prefix search costs its candidates: "s" or "of" is most of
//! an edition's descriptions, "structure" tens of thousands, and each is
//! ranked before its first ten concepts are known. What such a search
//! answers depends on the edition alone, so the importer asks it once
//! for every *head* — a word prefix whose words' postings number at least
//! [`SEARCH_HEAD_MIN_POSTINGS`] (every prefix a person types on the way
//! to a common word) — and stores how many concepts it finds and the
//! first [`SEARCH_HEAD_LIST`] in rank order, active only and with
//! inactive ones (`SearchHeads`, FORMAT.md). A search for a head then
//! reads its answer: a binary search among the heads and a slice. The
//! stored answer is the ranked search's own ([`Edition::build_search_heads`]
//! runs it), so both give the same concepts in the same order
//! ([`Edition::check_search_heads`] compares them in tests).

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use txmap_format::SectionKind::{SearchHeadLists, SearchHeadText, SearchHeads};
use txmap_format::U24;
use txmap_format::schema::{SEARCH_HEAD_LIST, SEARCH_HEAD_MIN_POSTINGS, SearchHeadRecord};
use txmap_text::{fold, words};
use zerocopy::IntoBytes;
use zerocopy::little_endian::U32;

use crate::search::{Collect, Scope, SearchOptions};
use crate::{Edition, StoreError};

/// The three head sections, as the importer writes them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SearchHeadSections {
    /// `[SearchHeadRecord]`, sorted by text.
    pub records: Vec<u8>,
    pub count: u64,
    /// The heads' texts.
    pub text: Vec<u8>,
    /// `[U24]` concept ordinals (three bytes since 6.0).
    pub lists: Vec<u8>,
}

impl<B: AsRef<[u8]>> Edition<B> {
    /// The stored answer of a one-word prefix search for `query`, when
    /// it is a head: how many concepts it finds, and the first (at most
    /// [`SEARCH_HEAD_LIST`]) in rank order.
    pub(crate) fn search_head(
        &self,
        query: &str,
        include_inactive: bool,
    ) -> Result<Option<(usize, &[U24])>, StoreError> {
        if !self.present(SearchHeads) {
            return Ok(None);
        }
        let folded = fold(query);
        let mut w = words(&folded);
        let (Some(word), None) = (w.next(), w.next()) else {
            return Ok(None);
        };
        let records: &[SearchHeadRecord] = self.recs(SearchHeads)?;
        let text = self.raw(SearchHeadText)?;
        let text_of = |r: &SearchHeadRecord| -> Result<&[u8], StoreError> {
            let start = r.text_offset.get() as usize;
            text.get(start..start + r.text_len.get() as usize)
                .ok_or_else(|| StoreError::corrupt(SearchHeadText, "a head's text out of range"))
        };
        let (mut lo, mut hi) = (0, records.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match text_of(&records[mid])?.cmp(word.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => {
                    let r = &records[mid];
                    let (total, start, len) = if include_inactive {
                        (r.total_all, r.all_start, r.all_len)
                    } else {
                        (r.total_active, r.active_start, r.active_len)
                    };
                    let lists: &[U24] = self.recs(SearchHeadLists)?;
                    let start = start.get() as usize;
                    let list = lists
                        .get(start..start + len.get() as usize)
                        .ok_or_else(|| {
                            StoreError::corrupt(SearchHeadLists, "a head's list out of range")
                        })?;
                    return Ok(Some((total.get() as usize, list)));
                }
            }
        }
        Ok(None)
    }

    /// The heads of this edition's word index: every word prefix (on a
    /// character boundary) whose words' postings sum to at least
    /// [`SEARCH_HEAD_MIN_POSTINGS`], in byte order.
    fn heads(&self) -> Result<Vec<String>, StoreError> {
        let index = self.text_index()?;
        let mut sums: BTreeMap<String, usize> = BTreeMap::new();
        index.for_each_with_prefix("", |word, postings| {
            for (end, _) in word.char_indices().skip(1).chain([(word.len(), ' ')]) {
                *sums.entry(word[..end].to_owned()).or_default() += postings.len();
            }
            ControlFlow::Continue(())
        })?;
        Ok(sums
            .into_iter()
            .filter(|(_, n)| *n >= SEARCH_HEAD_MIN_POSTINGS)
            .map(|(h, _)| h)
            .collect())
    }

    /// Computes the head sections by running each head's search: what
    /// the importer stores. The edition's own heads, if it has any, are
    /// not consulted. Each head is ranked once, its candidates collected
    /// for both answers; one head at a time (two threads took 4.1–6.0 s
    /// against 5.8–7.2 s on the International-scale synthetic edition
    /// when each answer was its own search: not worth a second set of
    /// buffers).
    pub fn build_search_heads(&self) -> Result<SearchHeadSections, StoreError> {
        let heads = self.heads()?;
        type Answer = (usize, Vec<u32>);
        // One ranking a head, its candidates collected twice: active
        // only, and all.
        let answer = |head: &str| -> Result<(Answer, Answer), StoreError> {
            let options = SearchOptions {
                max_candidates: usize::MAX,
                best_per_concept: true,
                ..SearchOptions::default()
            };
            let (mut active, mut all) = (Collect::new(true), Collect::new(true));
            self.rank_into(head, &options, Scope::All, &mut active, Some(&mut all))?;
            let concepts = |(total, top): (usize, Vec<crate::search::Ranked>)| {
                (total, top.iter().map(|h| h.concept).collect())
            };
            Ok((
                concepts(active.top(SEARCH_HEAD_LIST)),
                concepts(all.top(SEARCH_HEAD_LIST)),
            ))
        };
        let mut out = SearchHeadSections::default();
        let mut lists: Vec<u32> = Vec::new();
        let mut push = |(total, top): Answer| -> Result<(u32, u32, u32), StoreError> {
            let start = u32::try_from(lists.len()).map_err(|_| too_big())?;
            lists.extend(&top);
            Ok((
                u32::try_from(total).map_err(|_| too_big())?,
                start,
                top.len() as u32,
            ))
        };
        for head in &heads {
            let (active, all) = answer(head)?;
            let (total_active, active_start, active_len) = push(active)?;
            let (total_all, all_start, all_len) = push(all)?;
            let record = SearchHeadRecord {
                text_offset: U32::new(u32::try_from(out.text.len()).map_err(|_| too_big())?),
                text_len: U32::new(head.len() as u32),
                total_active: U32::new(total_active),
                total_all: U32::new(total_all),
                active_start: U32::new(active_start),
                active_len: U32::new(active_len),
                all_start: U32::new(all_start),
                all_len: U32::new(all_len),
            };
            out.text.extend_from_slice(head.as_bytes());
            out.records.extend_from_slice(record.as_bytes());
            out.count += 1;
        }
        // Concept ordinals: below 2^24, as the importer checked.
        out.lists = (lists.iter())
            .map(|&o| U24::new(o).ok_or_else(too_big))
            .collect::<Result<Vec<U24>, _>>()?
            .as_bytes()
            .to_vec();
        Ok(out)
    }

    /// Whether every stored head answers as the ranked search does (both
    /// variants, total and list): `Ok(n)` with the heads compared, an
    /// error naming the first that differs. For tests and `verify`-style
    /// tools; a search does not need it.
    pub fn check_search_heads(&self) -> Result<usize, StoreError> {
        let mut n = 0;
        for head in self.heads()? {
            for include_inactive in [false, true] {
                let options = SearchOptions {
                    include_inactive,
                    max_candidates: usize::MAX,
                    ..SearchOptions::default()
                };
                let ranked =
                    self.search_concepts_ranked(&head, &options, Scope::All, SEARCH_HEAD_LIST)?;
                let stored = self
                    .search_head(&head, include_inactive)?
                    .map(|(total, list)| (total, list.iter().map(|o| o.get()).collect::<Vec<_>>()));
                if stored.as_ref() != Some(&ranked) {
                    return Err(StoreError::corrupt(
                        SearchHeads,
                        format!(
                            "head {head:?} (inactive {include_inactive}): stored {stored:?}, ranked {ranked:?}"
                        ),
                    ));
                }
            }
            n += 1;
        }
        Ok(n)
    }
}

fn too_big() -> StoreError {
    StoreError::corrupt(SearchHeadLists, "over 4 GiB of search heads")
}
