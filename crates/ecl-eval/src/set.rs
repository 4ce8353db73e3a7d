//! Operations on sorted, deduplicated ordinal vectors, and a bitmap for
//! unions too big to sort.

use std::cmp::Ordering;

pub(crate) fn contains(set: &[u32], o: u32) -> bool {
    set.binary_search(&o).is_ok()
}

pub(crate) fn intersect(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (small, big) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if small.len().saturating_mul(16) < big.len() {
        return small
            .iter()
            .copied()
            .filter(|&o| contains(big, o))
            .collect();
    }
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while let (Some(&x), Some(&y)) = (a.get(i), b.get(j)) {
        match x.cmp(&y) {
            Ordering::Less => i += 1,
            Ordering::Greater => j += 1,
            Ordering::Equal => {
                out.push(x);
                i += 1;
                j += 1;
            }
        }
    }
    out
}

pub(crate) fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    union_into(a, b, &mut out);
    out
}

/// [`union`] into `out` (cleared first), whose allocation is reused.
pub(crate) fn union_into(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    loop {
        match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) => match x.cmp(&y) {
                Ordering::Less => {
                    out.push(x);
                    i += 1;
                }
                Ordering::Greater => {
                    out.push(y);
                    j += 1;
                }
                Ordering::Equal => {
                    out.push(x);
                    i += 1;
                    j += 1;
                }
            },
            (Some(_), None) => {
                out.extend_from_slice(a.get(i..).unwrap_or_default());
                return;
            }
            (None, Some(_)) => {
                out.extend_from_slice(b.get(j..).unwrap_or_default());
                return;
            }
            (None, None) => return,
        }
    }
}

pub(crate) fn difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    if b.len() > a.len().saturating_mul(16) || a.len() > b.len().saturating_mul(16) {
        // Lopsided: a binary search per element of `a` costs less than a
        // walk through both (and when `b` is tiny, each search is short).
        return a.iter().copied().filter(|&o| !contains(b, o)).collect();
    }
    let (mut j, mut out) = (0, Vec::with_capacity(a.len()));
    for &x in a {
        while b.get(j).is_some_and(|&y| y < x) {
            j += 1;
        }
        if b.get(j) != Some(&x) {
            out.push(x);
        }
    }
    out
}

/// Sorts and deduplicates.
pub(crate) fn normalize(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Sets at least this big are also kept as bitmaps (concept count / 8
/// bytes each) when many membership tests will follow.
pub(crate) const BITMAP_FROM: usize = 1024;

/// One bit per concept ordinal; ordinals past the last word are ignored
/// (the store reports them as errors where they come from).
///
/// A second, 64 times smaller bitmap marks the words that hold a bit, so
/// reading the set back visits those words alone: the ancestors of a few
/// hundred concepts set a few hundred of the 8,400 words of an
/// International edition, whose scan was a quarter of `> (<< X)`.
#[derive(Debug)]
pub(crate) struct Bits {
    words: Vec<u64>,
    used: Vec<u64>,
}

impl Bits {
    pub(crate) fn new(concepts: u32) -> Bits {
        let words = (concepts as usize).div_ceil(64);
        Bits {
            words: vec![0; words],
            used: vec![0; words.div_ceil(64)],
        }
    }

    /// The bitmap of a set.
    pub(crate) fn of(concepts: u32, set: &[u32]) -> Bits {
        let mut b = Bits::new(concepts);
        set.iter().for_each(|&o| b.insert(o));
        b
    }

    #[inline]
    pub(crate) fn insert(&mut self, o: u32) {
        let i = (o / 64) as usize;
        if let Some(w) = self.words.get_mut(i) {
            *w |= 1 << (o % 64);
            self.used[i / 64] |= 1 << (i % 64);
        }
    }

    #[inline]
    pub(crate) fn contains(&self, o: u32) -> bool {
        self.words
            .get((o / 64) as usize)
            .is_some_and(|w| w & (1 << (o % 64)) != 0)
    }

    /// The set's ordinals, ascending.
    pub(crate) fn to_vec(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (u, &used) in self.used.iter().enumerate() {
            let mut used = used;
            while used != 0 {
                let i = u * 64 + used.trailing_zeros() as usize;
                used &= used - 1;
                let mut w = self.words[i];
                while w != 0 {
                    out.push(i as u32 * 64 + w.trailing_zeros());
                    w &= w - 1;
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_read_back_ascending_across_their_summary() {
        // Ordinals in the first and last words, two in one word, and
        // words under different summary words; one past the last word
        // ignored.
        let concepts = 64 * 64 * 3 + 5;
        let set = [0, 1, 63, 64, 4095, 4096, 8191, 9000, concepts - 1];
        let mut b = Bits::of(concepts, &set);
        b.insert(concepts + 64);
        assert_eq!(b.to_vec(), set);
        assert!(set.iter().all(|&o| b.contains(o)));
        assert!(!b.contains(2) && !b.contains(concepts + 64));
        assert!(Bits::new(concepts).to_vec().is_empty());
    }

    #[test]
    fn difference_by_merge_and_by_search_agree() {
        let a: Vec<u32> = (0..2000).filter(|x| x % 3 != 0).collect();
        for b in [
            (0..2000).filter(|x| x % 5 == 0).collect::<Vec<u32>>(),
            vec![4, 5, 1999],
            (0..100_000).collect(),
            Vec::new(),
        ] {
            let naive: Vec<u32> = a.iter().copied().filter(|x| !b.contains(x)).collect();
            assert_eq!(difference(&a, &b), naive);
        }
    }
}
