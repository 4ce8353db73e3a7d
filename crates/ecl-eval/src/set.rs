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
    let (mut i, mut j, mut out) = (0, 0, Vec::with_capacity(a.len() + b.len()));
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
                return out;
            }
            (None, Some(_)) => {
                out.extend_from_slice(b.get(j..).unwrap_or_default());
                return out;
            }
            (None, None) => return out,
        }
    }
}

pub(crate) fn difference(a: &[u32], b: &[u32]) -> Vec<u32> {
    a.iter().copied().filter(|&o| !contains(b, o)).collect()
}

/// Sorts and deduplicates.
pub(crate) fn normalize(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v.dedup();
    v
}

/// One bit per concept ordinal; ordinals past the end are ignored (the
/// store reports them as errors where they come from).
#[derive(Debug)]
pub(crate) struct Bits(Vec<u64>);

impl Bits {
    pub(crate) fn new(concepts: u32) -> Bits {
        Bits(vec![0; (concepts as usize).div_ceil(64)])
    }

    pub(crate) fn insert(&mut self, o: u32) {
        if let Some(w) = self.0.get_mut((o / 64) as usize) {
            *w |= 1 << (o % 64);
        }
    }

    pub(crate) fn contains(&self, o: u32) -> bool {
        self.0
            .get((o / 64) as usize)
            .is_some_and(|w| w & (1 << (o % 64)) != 0)
    }

    pub(crate) fn to_vec(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for (i, &w) in self.0.iter().enumerate() {
            let mut w = w;
            while w != 0 {
                out.push(i as u32 * 64 + w.trailing_zeros());
                w &= w - 1;
            }
        }
        out
    }
}
