//! The is-a hierarchy: children and the transitive closure in both
//! directions, from the parent lists.
//!
//! The closure is what makes subsumption a binary search and descendant
//! enumeration a slice. It is computed in topological order (Kahn's
//! algorithm), each concept's ancestors being the sorted union of its
//! parents and their ancestors; a cycle — impossible in a valid release —
//! is reported rather than looped on.

/// A compressed sparse row adjacency: `items[offsets[i]..offsets[i + 1]]`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Csr {
    pub offsets: Vec<u32>,
    pub items: Vec<u32>,
}

#[allow(clippy::len_without_is_empty)]
impl Csr {
    pub fn row(&self, i: usize) -> &[u32] {
        &self.items[self.offsets[i] as usize..self.offsets[i + 1] as usize]
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// From (key, item) pairs sorted by key then item, for keys `0..n`.
    pub fn from_sorted_pairs(n: usize, pairs: &[(u32, u32)]) -> Csr {
        let mut offsets = vec![0u32; n + 1];
        for &(k, _) in pairs {
            offsets[k as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        Csr {
            offsets,
            items: pairs.iter().map(|&(_, v)| v).collect(),
        }
    }

    /// The reverse relation: row `j` lists every `i` whose row holds `j`,
    /// ascending.
    pub fn transpose(&self) -> Csr {
        let n = self.len();
        let mut offsets = vec![0u32; n + 1];
        for &j in &self.items {
            offsets[j as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut items = vec![0u32; self.items.len()];
        for i in 0..n {
            for &j in self.row(i) {
                items[fill[j as usize] as usize] = i as u32;
                fill[j as usize] += 1;
            }
        }
        Csr { offsets, items }
    }
}

/// Proper ancestors of every concept, given parents; `Err(concept)` names a
/// concept on a cycle.
pub fn ancestors(parents: &Csr) -> Result<Csr, u32> {
    let n = parents.len();
    let children = parents.transpose();
    let mut pending: Vec<u32> = (0..n).map(|i| parents.row(i).len() as u32).collect();
    let mut queue: Vec<u32> = (0..n as u32)
        .filter(|&i| pending[i as usize] == 0)
        .collect();
    // Rows are computed in topological order into one buffer, then copied
    // into ordinal order.
    let mut spans = vec![(0usize, 0usize); n];
    let mut buf: Vec<u32> = Vec::new();
    let mut scratch: Vec<u32> = Vec::new();
    let mut head = 0;
    while head < queue.len() {
        let c = queue[head] as usize;
        head += 1;
        scratch.clear();
        for &p in parents.row(c) {
            scratch.push(p);
            let (s, e) = spans[p as usize];
            scratch.extend_from_slice(&buf[s..e]);
        }
        scratch.sort_unstable();
        scratch.dedup();
        let start = buf.len();
        buf.extend_from_slice(&scratch);
        spans[c] = (start, buf.len());
        for &ch in children.row(c) {
            pending[ch as usize] -= 1;
            if pending[ch as usize] == 0 {
                queue.push(ch);
            }
        }
    }
    if queue.len() < n {
        let on_cycle = (0..n).find(|&i| pending[i] > 0).unwrap_or(0);
        return Err(on_cycle as u32);
    }
    let mut offsets = Vec::with_capacity(n + 1);
    let mut items = Vec::with_capacity(buf.len());
    offsets.push(0);
    for &(s, e) in &spans {
        items.extend_from_slice(&buf[s..e]);
        offsets.push(items.len() as u32);
    }
    Ok(Csr { offsets, items })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond() {
        // 0 is the root; 1 and 2 are children of 0; 3 is a child of 1 and 2.
        let parents = Csr::from_sorted_pairs(4, &[(1, 0), (2, 0), (3, 1), (3, 2)]);
        let anc = ancestors(&parents).unwrap();
        assert_eq!(anc.row(0), &[] as &[u32]);
        assert_eq!(anc.row(3), &[0, 1, 2]);
        let desc = anc.transpose();
        assert_eq!(desc.row(0), &[1, 2, 3]);
        assert_eq!(desc.row(1), &[3]);
        assert_eq!(parents.transpose().row(0), &[1, 2]);
    }

    #[test]
    fn cycle_is_reported() {
        let parents = Csr::from_sorted_pairs(3, &[(1, 2), (2, 1)]);
        assert!(matches!(ancestors(&parents), Err(1 | 2)));
    }
}
