//! A search scope built once and searched in many times.
//!
//! A person typing into a box scoped by a hierarchy, a module or a refset
//! searches the same scope at every keystroke. Given only the scope's
//! concepts, each search must pick the scope's descriptions out of its
//! candidates — a walk of both lists — and then read each candidate's
//! search entry to drop inactive ones and definitions: a cache miss per
//! candidate, for words with a hundred thousand of them. A [`ScopeSet`]
//! does that work once: beside the concepts it holds two bitmaps over
//! the edition's descriptions, the scope's searchable descriptions
//! (definitions excluded) and of those the active ones of active
//! concepts. The word search then marks only masked postings
//! ([`txmap_text::Among::Bits`]) and lists only the scope's candidates,
//! each of which is a hit; and a one-word search that is a search head
//! takes its page from the head's stored list, filtered by the scope,
//! and only counts the rest ([`Edition::search_concepts_top`]).
//!
//! A small scope (a refset of a few thousand members) is searched from
//! its own descriptions: they seed the search, and each word filters
//! them. Listing them from the concepts, then finding each hit's concept
//! and search entry again, cost more than the search itself — the hits
//! are scattered over the whole edition, a cache miss each. So a small
//! scope's set also keeps them listed ([`Listed`]), each with its concept
//! and its search entry, which a search reads by position beside its
//! hits ([`txmap_text::TextIndex::prefix_marks`]).

use txmap_format::SectionKind::{ConceptDescriptionsIndex, DescriptionSearch};
use txmap_format::U24;
use txmap_format::schema::description_search as search_bits;
use zerocopy::little_endian::U16;

use crate::search::SEED_SCOPE_UP_TO;
use crate::{Edition, StoreError};

/// The concepts of a scope and its descriptions as bitmaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScopeSet {
    /// Ascending concept ordinals.
    concepts: Vec<u32>,
    /// `[searchable, shown]`: bit `d` of the first is set when description
    /// `d` belongs to a concept of the scope and is no text definition; of
    /// the second when it is also active and of an active concept. `None`
    /// on a file without search entries (before format 1.5).
    masks: Option<[Vec<u64>; 2]>,
    /// Bit `d` set when description `d` is the first of its concept (of
    /// any concept, in the scope or not): how a bitmap of descriptions
    /// is counted in concepts ([`ScopeSet::concepts_in`]).
    starts: Vec<u64>,
    /// A scope of at most [`SEED_SCOPE_UP_TO`] concepts: its searchable
    /// descriptions listed. `None` for a bigger one, or without search
    /// entries.
    listed: Option<Listed>,
}

/// A small scope's searchable descriptions (no text definitions) listed:
/// every one, and the shown ones (active, of an active concept).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Listed {
    any: Rows,
    shown: Rows,
}

impl Listed {
    /// The descriptions a search may return: with inactive ones or not.
    pub(crate) fn rows(&self, include_inactive: bool) -> &Rows {
        if include_inactive {
            &self.any
        } else {
            &self.shown
        }
    }

    fn bytes(&self) -> usize {
        self.any.bytes() + self.shown.bytes()
    }
}

/// Descriptions in ascending order, each with its concept and its search
/// entry (the `DescriptionSearch` bits): the seed of a search in the
/// scope, and what the ranking reads of each hit, by position.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Rows {
    pub(crate) descriptions: Vec<u32>,
    pub(crate) concepts: Vec<u32>,
    pub(crate) entries: Vec<u16>,
}

impl Rows {
    fn push(&mut self, description: u32, concept: u32, entry: u16) {
        self.descriptions.push(description);
        self.concepts.push(concept);
        self.entries.push(entry);
    }

    /// The concept and the search entry of each of `descriptions`
    /// (ascending, each one listed here), by one walk of the rows that
    /// copies every row's and moves on past a match — no branch to
    /// mispredict; `None` if one is not listed.
    pub(crate) fn facts_of(&self, descriptions: &[u32]) -> Option<(Vec<u32>, Vec<u16>)> {
        let n = descriptions.len();
        // One slot more, written past the last match and dropped.
        let mut concepts = vec![0u32; n + 1];
        let mut entries = vec![0u16; n + 1];
        let mut i = 0;
        for ((&d, &c), &e) in self
            .descriptions
            .iter()
            .zip(&self.concepts)
            .zip(&self.entries)
        {
            concepts[i] = c;
            entries[i] = e;
            i += usize::from(descriptions.get(i) == Some(&d));
        }
        if i != n {
            return None;
        }
        concepts.truncate(n);
        entries.truncate(n);
        Some((concepts, entries))
    }

    /// How many concepts have a row marked (`marks` by position, as
    /// [`txmap_text::TextIndex::prefix_marks`] gives them): a concept's
    /// rows are neighbours.
    pub(crate) fn concepts_marked(&self, marks: &[u8]) -> usize {
        let mut last = None;
        let mut count = 0;
        for (&c, _) in self.concepts.iter().zip(marks).filter(|&(_, &m)| m > 0) {
            count += usize::from(last != Some(c));
            last = Some(c);
        }
        count
    }

    fn bytes(&self) -> usize {
        self.descriptions.len() * 10
    }
}

impl ScopeSet {
    /// The scope's concepts, ascending.
    pub fn concepts(&self) -> &[u32] {
        &self.concepts
    }

    /// Whether concept ordinal `c` is in the scope.
    pub fn contains(&self, c: u32) -> bool {
        self.concepts.binary_search(&c).is_ok()
    }

    /// The memory it holds.
    pub fn bytes(&self) -> usize {
        self.concepts.len() * 4
            + self.starts.len() * 8
            + self
                .masks
                .as_ref()
                .map_or(0, |[a, b]| (a.len() + b.len()) * 8)
            + self.listed.as_ref().map_or(0, Listed::bytes)
    }

    /// A small scope's descriptions, listed.
    pub(crate) fn listed(&self) -> Option<&Listed> {
        self.listed.as_ref()
    }

    /// How many concepts have a description in `bits` (a bitmap over
    /// the descriptions, as the masks are).
    pub(crate) fn concepts_in(&self, bits: &[u64]) -> usize {
        count_runs(bits, &self.starts)
    }

    /// The descriptions a search may return: with inactive ones or not.
    pub(crate) fn mask(&self, include_inactive: bool) -> Option<&[u64]> {
        self.masks.as_ref().map(|[any, shown]| {
            if include_inactive {
                &any[..]
            } else {
                &shown[..]
            }
        })
    }
}

impl<B: AsRef<[u8]>> Edition<B> {
    /// The scope of `concepts` (ordinals; sorted and deduplicated here),
    /// ready for searches ([`crate::Scope::Set`]). Reads each concept's
    /// descriptions' search entries once: about a millisecond for a
    /// hierarchy of a hundred thousand concepts.
    pub fn scope_set(&self, mut concepts: Vec<u32>) -> Result<ScopeSet, StoreError> {
        concepts.sort_unstable();
        concepts.dedup();
        if let Some(&last) = concepts.last()
            && last >= self.concept_count()
        {
            return Err(StoreError::corrupt(
                ConceptDescriptionsIndex,
                format!("concept ordinal {last} out of range"),
            ));
        }
        if !self.present(DescriptionSearch) {
            return Ok(ScopeSet {
                concepts,
                masks: None,
                starts: Vec::new(),
                listed: None,
            });
        }
        let index: &[U24] = self.recs(ConceptDescriptionsIndex)?;
        let entries: &[U16] = self.recs(DescriptionSearch)?;
        let words = entries.len() / 64 + 1;
        let mut starts = vec![0u64; words];
        for start in index {
            let d = start.get() as usize;
            if let Some(w) = starts.get_mut(d / 64) {
                *w |= 1 << (d % 64);
            }
        }
        let (mut any, mut shown) = (vec![0u64; words], vec![0u64; words]);
        let mut listed = (concepts.len() <= SEED_SCOPE_UP_TO).then(Listed::default);
        for &c in &concepts {
            let (Some(start), Some(end)) = (index.get(c as usize), index.get(c as usize + 1))
            else {
                return Err(StoreError::corrupt(
                    ConceptDescriptionsIndex,
                    format!("concept ordinal {c} out of range"),
                ));
            };
            let Some(range) = entries.get(start.get() as usize..end.get() as usize) else {
                return Err(StoreError::corrupt(
                    ConceptDescriptionsIndex,
                    format!("concept ordinal {c}: descriptions out of range"),
                ));
            };
            for (d, e) in (start.get()..).zip(range) {
                let bits = e.get();
                if bits & search_bits::DEFINITION != 0 {
                    continue;
                }
                let (w, bit) = (d as usize / 64, 1u64 << (d % 64));
                any[w] |= bit;
                let active =
                    bits & search_bits::ACTIVE != 0 && bits & search_bits::CONCEPT_ACTIVE != 0;
                if active {
                    shown[w] |= bit;
                }
                if let Some(l) = &mut listed {
                    l.any.push(d, c, bits);
                    if active {
                        l.shown.push(d, c, bits);
                    }
                }
            }
        }
        Ok(ScopeSet {
            concepts,
            masks: Some([any, shown]),
            starts,
            listed,
        })
    }
}

/// How many runs hold a bit of `bits` — a run starts at each bit of
/// `starts` and ends before the next; a bit before the first start is in
/// none — a word at a time, by addition. A start on a bit of `bits` is
/// that run's first. From any other start a one is added just above it,
/// into a number whose ones are the positions neither in `bits` nor
/// starts: the carry runs up to the first bit of `bits` (setting it: the
/// run's first) or to the next start (the run was empty), never past
/// either, so no two carries meet; a carry out of a word goes into the
/// next.
fn count_runs(bits: &[u64], starts: &[u64]) -> usize {
    let mut count = 0usize;
    let mut carry = 0u64;
    for (i, &m) in bits.iter().enumerate() {
        let s = starts.get(i).copied().unwrap_or(0);
        let open = s & !m;
        let (sum, over) = (!m & !s).overflowing_add((open << 1) | carry);
        carry = u64::from(over) | (open >> 63);
        count += ((sum | s) & m).count_ones() as usize;
    }
    count
}

#[cfg(test)]
mod tests {
    use super::count_runs;

    /// Against a bit-by-bit walk, on random bitmaps of every density.
    #[test]
    fn runs_are_counted_as_a_walk_counts_them() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..2000 {
            let words = 1 + (next() % 6) as usize;
            // Density 1/2, 1/4, 1/8, 1/16 by and-ing random words.
            let mut draw = |k: u32| (0..k).fold(next(), |acc, _| acc & next());
            let (ks, kb) = ((round % 4) as u32, ((round / 4) % 4) as u32);
            let starts: Vec<u64> = (0..words).map(|_| draw(ks)).collect();
            let bits: Vec<u64> = (0..words).map(|_| draw(kb)).collect();
            let mut want = 0;
            let (mut in_run, mut counted) = (false, false);
            for d in 0..words * 64 {
                if starts[d / 64] >> (d % 64) & 1 == 1 {
                    in_run = true;
                    counted = false;
                }
                if bits[d / 64] >> (d % 64) & 1 == 1 && in_run && !counted {
                    want += 1;
                    counted = true;
                }
            }
            assert_eq!(count_runs(&bits, &starts), want, "{starts:x?} {bits:x?}");
        }
    }
}
