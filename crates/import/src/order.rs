//! The order concepts are numbered in: depth-first down the is-a
//! hierarchy (format 7).
//!
//! Every section by concept ordinal — records, preferred terms and their
//! carriers, attributes, descendants — is laid out in ordinal order, so
//! the numbering decides which pages an answer touches. Numbered by
//! SCTID, the members of `<< X` were spread over the whole file: an
//! expansion of twenty of them read twenty pages of each section, and
//! ancestor and descendant lists were gaps across the whole range.
//! Numbered depth-first, a concept's first-reached descendants follow it,
//! so a hierarchy is mostly one run of each section, and lists of
//! neighbours pack into fewer bytes (BENCHMARKS.md, "Format 7.0").
//!
//! The numbering is a layout choice, never part of an answer: any
//! permutation gives the same answers. So it is computed from what is
//! cheap to know before the concepts are numbered — a pass over the
//! relationship files keeping the latest row of each is-a relationship —
//! and whatever that pass misses (a relationship whose type changed) only
//! places a concept less well.

/// Every concept's SCTID and ordinal, both ways.
#[derive(Clone, Debug, Default)]
pub(crate) struct ConceptNumbers {
    /// SCTID by ordinal.
    by_ordinal: Vec<u64>,
    /// The SCTIDs ascending, and the ordinal of each (`ordinal_of[i]` is
    /// the ordinal of `sorted[i]`).
    sorted: Vec<u64>,
    ordinal_of: Vec<u32>,
}

impl ConceptNumbers {
    /// Concepts numbered in `order`: `order[o]` is the position in
    /// `sorted` (strictly ascending SCTIDs) of the concept given ordinal
    /// `o`, each position once.
    pub(crate) fn new(sorted: Vec<u64>, order: &[u32]) -> ConceptNumbers {
        debug_assert_eq!(sorted.len(), order.len());
        let mut ordinal_of = vec![0u32; sorted.len()];
        for (o, &rank) in order.iter().enumerate() {
            ordinal_of[rank as usize] = o as u32;
        }
        ConceptNumbers {
            by_ordinal: order.iter().map(|&r| sorted[r as usize]).collect(),
            sorted,
            ordinal_of,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.by_ordinal.len()
    }

    pub(crate) fn ordinal(&self, id: u64) -> Option<u32> {
        let i = self.sorted.binary_search(&id).ok()?;
        Some(self.ordinal_of[i])
    }

    /// The SCTID of concept `ordinal` (which must be one).
    pub(crate) fn id(&self, ordinal: u32) -> u64 {
        self.by_ordinal[ordinal as usize]
    }

    /// The SCTIDs ascending, each with its ordinal.
    pub(crate) fn by_id(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.sorted
            .iter()
            .copied()
            .zip(self.ordinal_of.iter().copied())
    }
}

/// Pre-order of a depth-first walk over `n` concepts, given `(child,
/// parent)` is-a pairs of positions: `order[o]` is the concept numbered
/// `o`. The walk starts at `root` (when given), then at every concept
/// without a parent, ascending; children are taken ascending, and a
/// concept reached again by another parent keeps its first number.
/// Concepts on a cycle unreachable from any start come last, ascending,
/// so the order is always a permutation (the relationship stage refuses a
/// cycle with the concept it runs through).
pub(crate) fn depth_first(n: usize, mut edges: Vec<(u32, u32)>, root: Option<u32>) -> Vec<u32> {
    edges.retain(|&(c, p)| (c as usize) < n && (p as usize) < n && c != p);
    // Children of each concept, ascending: CSR by parent.
    edges.sort_unstable_by_key(|&(c, p)| (p, c));
    edges.dedup();
    let mut start = vec![0u32; n + 1];
    let mut has_parent = vec![false; n];
    for &(c, p) in &edges {
        start[p as usize + 1] += 1;
        has_parent[c as usize] = true;
    }
    for i in 0..n {
        start[i + 1] += start[i];
    }
    let children: Vec<u32> = edges.iter().map(|&(c, _)| c).collect();
    drop(edges);

    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let starts = root
        .into_iter()
        .chain((0..n as u32).filter(|&c| !has_parent[c as usize]))
        .chain(0..n as u32);
    for s in starts {
        if seen[s as usize] {
            continue;
        }
        stack.push(s);
        while let Some(c) = stack.pop() {
            if std::mem::replace(&mut seen[c as usize], true) {
                continue;
            }
            order.push(c);
            let kids = &children[start[c as usize] as usize..start[c as usize + 1] as usize];
            // Pushed in reverse so that the smallest is taken first.
            stack.extend(kids.iter().rev().filter(|&&k| !seen[k as usize]));
        }
    }
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_permutation(order: &[u32]) -> bool {
        let mut v = order.to_vec();
        v.sort_unstable();
        v.iter().enumerate().all(|(i, &x)| i as u32 == x)
    }

    #[test]
    fn a_tree_is_numbered_subtree_by_subtree() {
        // 0 is the root; 1 and 4 its children; 2, 3 under 1; 5 under 4.
        let edges = vec![(1, 0), (4, 0), (2, 1), (3, 1), (5, 4)];
        let order = depth_first(6, edges, Some(0));
        assert_eq!(order, vec![0, 1, 2, 3, 4, 5]);
        // Children taken ascending whatever their input order.
        let edges = vec![(5, 0), (1, 5), (3, 0), (2, 3), (4, 3)];
        assert_eq!(depth_first(6, edges, Some(0)), vec![0, 3, 2, 4, 5, 1]);
    }

    #[test]
    fn a_concept_with_two_parents_is_numbered_once_under_the_first() {
        // 3 is a child of 1 and of 2.
        let edges = vec![(1, 0), (2, 0), (3, 1), (3, 2)];
        assert_eq!(depth_first(4, edges, Some(0)), vec![0, 1, 3, 2]);
    }

    #[test]
    fn concepts_off_the_root_and_on_cycles_still_get_numbers() {
        // 0 root, 1 under it; 2 has no parent (inactive, or a second
        // top); 3 and 4 are a cycle reachable from nothing; 5 under 2.
        let edges = vec![(1, 0), (5, 2), (3, 4), (4, 3)];
        let order = depth_first(6, edges, Some(0));
        assert!(is_permutation(&order));
        assert_eq!(order, vec![0, 1, 2, 5, 3, 4]);
        // Without a root the parentless concepts start, ascending.
        let order = depth_first(6, vec![(1, 0), (5, 2)], None);
        assert_eq!(order, vec![0, 1, 2, 5, 3, 4]);
        // Edges naming concepts out of range, or a concept as its own
        // parent, are ignored.
        let order = depth_first(3, vec![(1, 0), (7, 1), (2, 9), (2, 2)], Some(0));
        assert_eq!(order, vec![0, 1, 2]);
    }

    #[test]
    fn numbers_go_both_ways() {
        let sorted = vec![10, 20, 30, 40];
        let numbers = ConceptNumbers::new(sorted, &[2, 0, 3, 1]);
        assert_eq!(
            (0..4).map(|o| numbers.id(o)).collect::<Vec<_>>(),
            [30, 10, 40, 20]
        );
        assert_eq!(numbers.ordinal(30), Some(0));
        assert_eq!(numbers.ordinal(20), Some(3));
        assert_eq!(numbers.ordinal(25), None);
        let pairs: Vec<_> = numbers.by_id().collect();
        assert_eq!(pairs, [(10, 1), (20, 3), (30, 0), (40, 2)]);
        assert_eq!(numbers.len(), 4);
    }
}
