//! The concept graph of a synthetic release, held compactly in memory.
//!
//! Only the graph is kept: per concept its id, branch, status, depth, role
//! group count and is-a parents (about 40 bytes per concept, so ~25 MB at
//! International scale). Everything written to the files (terms,
//! relationships, refset members) is derived later from per-concept random
//! streams, which keeps memory flat and lets the extension generator
//! rebuild any base component without re-reading files.
//!
//! Shape: concepts are generated one at a time, and an active concept takes
//! its parents among the *earlier* active concepts of its branch, so the
//! is-a graph is acyclic by construction. Parent choice mixes a few hubs
//! per branch (Zipf), preferential attachment (a concept is picked in
//! proportion to 1 + its children) and uniform choice (which grows depth),
//! giving the heavy-tailed fan-out of the real hierarchy: most concepts
//! have a handful of children, a few have thousands. Extra parents are
//! rejected when they would be redundant (an ancestor or descendant of
//! another parent), as in a classified inferred view.

use std::collections::BTreeMap;

use txmap_rf2::sctid::{self, ComponentKind};

use crate::meta::{self, META, SYNTHETIC_META};
use crate::rng::{Rng, Stream, shuffle};
use crate::vocab::{BRANCH_COUNT, Branch};

/// Longest is-a path from the root (the root has depth 0).
pub(crate) const MAX_DEPTH: u8 = 17;
const HUBS_PER_BRANCH: usize = 4;
const P_HUB: f64 = 0.05;
const P_PREFERENTIAL: f64 = 0.62;
/// Probabilities of 0, 1, 2 and 3 extra parents (≈1.45 parents on average).
const EXTRA_PARENTS: [f64; 4] = [0.585, 0.36, 0.05, 0.005];
/// Share of concept rows that are active in a base release.
pub(crate) const ACTIVE_SHARE: f64 = 0.70;
/// Share of extension concepts that are active.
pub(crate) const EXT_ACTIVE_SHARE: f64 = 0.95;

/// Description ids per concept (item = base + index * stride + k).
pub(crate) const DESC_STRIDE: u64 = 16;
/// Relationship and concrete value ids per concept.
pub(crate) const REL_STRIDE: u64 = 64;
/// First item identifier of synthetic core components. Real core concept
/// items are below two million today, so these can never collide with a
/// real SCTID; the allocator still skips the metadata ids defensively.
const BASE_ITEM: u64 = 10_000_000;
/// First item identifier of extension concepts (the module and language
/// refset take items 100 and 101).
const EXT_ITEM: u64 = 1_000;

/// Where a concept comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// A row of [`META`].
    Meta(u16),
    /// A synthetic concept of the base release.
    Base,
    /// The extension's module concept.
    ExtModule,
    /// The extension's language refset concept.
    ExtRefset,
    /// A synthetic concept of the extension.
    Ext,
}

#[derive(Clone, Debug)]
pub(crate) struct Concept {
    pub(crate) id: u64,
    pub(crate) origin: Origin,
    /// `Branch as u8`, or `u8::MAX` for metadata.
    pub(crate) branch: u8,
    pub(crate) active: bool,
    pub(crate) depth: u8,
    /// Role groups of grouped attributes (0 when the branch has none).
    pub(crate) groups: u8,
    /// Index among the concepts of its branch (drives the term).
    pub(crate) ordinal: u32,
    /// Active is-a children.
    pub(crate) children: u32,
    pub(crate) parent_start: u32,
    pub(crate) parent_len: u8,
}

/// Candidate parents and attribute destinations, per branch.
#[derive(Clone, Debug, Default)]
pub(crate) struct Pools {
    /// Active concepts of the branch (the branch root first).
    pub(crate) members: Vec<Vec<u32>>,
    /// Each member once, plus once per child it gained: picking uniformly
    /// from this list is preferential attachment.
    pub(crate) pa: Vec<Vec<u32>>,
    /// The first few children of the branch root, which attract a fixed
    /// share of new children and so grow to thousands of children.
    pub(crate) hubs: Vec<Vec<u32>>,
}

/// Extension identity.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ExtInfo {
    pub(crate) seed: u64,
    pub(crate) namespace: u32,
    pub(crate) module: u64,
    pub(crate) refset: u64,
}

#[derive(Debug)]
pub(crate) struct Model {
    pub(crate) concepts: Vec<Concept>,
    pub(crate) parents: Vec<u32>,
    /// Concepts `0..base_len` belong to the base release.
    pub(crate) base_len: usize,
    pub(crate) base_seed: u64,
    pub(crate) ext: Option<ExtInfo>,
    pub(crate) base_pools: Pools,
    /// Pools for the extension (base pools without the concepts the
    /// extension inactivates, plus the extension's concepts).
    pub(crate) ext_pools: Pools,
    /// Ids of the synthetic metadata, in [`SYNTHETIC_META`] order.
    pub(crate) synthetic_meta: [u64; 4],
    meta_index: BTreeMap<u64, u32>,
    meta_in_model_module: Vec<bool>,
    ordinals: [u32; BRANCH_COUNT],
    mark: Vec<u32>,
    mark2: Vec<u32>,
    stamp: u32,
    stack: Vec<u32>,
}

impl Model {
    /// Number of metadata concepts (the minimum size of a base release).
    pub(crate) fn meta_count() -> usize {
        META.len()
    }

    /// Builds the graph of a base release with `n` concept rows.
    pub(crate) fn build_base(n: usize, seed: u64) -> Model {
        let mut model = Model {
            concepts: Vec::with_capacity(n),
            parents: Vec::with_capacity(n * 3 / 2),
            base_len: 0,
            base_seed: seed,
            ext: None,
            base_pools: Pools::default(),
            ext_pools: Pools::default(),
            synthetic_meta: [0; 4],
            meta_index: BTreeMap::new(),
            meta_in_model_module: Vec::with_capacity(META.len()),
            ordinals: [0; BRANCH_COUNT],
            mark: Vec::with_capacity(n),
            mark2: Vec::with_capacity(n),
            stamp: 0,
            stack: Vec::new(),
        };
        model.add_meta();
        let mut rng = Rng::derive(seed, Stream::Model, 0);
        let mut pools = model.root_pools();
        let synthetic = n.saturating_sub(META.len());
        let p_active = if synthetic == 0 {
            1.0
        } else {
            ((ACTIVE_SHARE * n as f64 - META.len() as f64) / synthetic as f64).clamp(0.5, 1.0)
        };
        let weights: Vec<f64> = Branch::ALL.iter().map(|b| b.def().weight).collect();
        let first = model.concepts.len();
        for _ in 0..synthetic {
            let b = Branch::ALL[rng.weighted(&weights)];
            let active = rng.chance(p_active);
            model.add(&mut pools, &mut rng, b, active, Origin::Base);
        }
        // Synthetic metadata take the first items, then the synthetic
        // concepts get ids in a shuffled order with small random gaps, so
        // that id order says nothing about the hierarchy.
        let mut next_item = BASE_ITEM;
        let mut alloc = |rng: &mut Rng, meta_index: &BTreeMap<u64, u32>| loop {
            let id = sctid::make(next_item, None, ComponentKind::Concept);
            next_item += 1 + rng.below(3) as u64;
            if !meta_index.contains_key(&id) {
                break id;
            }
        };
        let mut s = 0;
        for (i, c) in model.concepts.iter_mut().enumerate().take(META.len()) {
            if c.id == 0 {
                c.id = alloc(&mut rng, &model.meta_index);
                model.synthetic_meta[s] = c.id;
                s += 1;
                debug_assert!(matches!(c.origin, Origin::Meta(m) if usize::from(m) == i));
            }
        }
        let mut ids: Vec<u64> = (0..synthetic)
            .map(|_| alloc(&mut rng, &model.meta_index))
            .collect();
        shuffle(&mut rng, &mut ids);
        for (c, id) in model.concepts[first..].iter_mut().zip(ids) {
            c.id = id;
        }
        model.base_len = model.concepts.len();
        model.base_pools = pools;
        model
    }

    fn add_meta(&mut self) {
        for (mi, mc) in META.iter().enumerate() {
            let idx = self.concepts.len() as u32;
            let start = self.parents.len() as u32;
            let mut depth = 0u8;
            let mut in_model = mc.id == meta::MODEL_COMPONENT;
            for p in mc.parents {
                // The table test guarantees parents come first.
                if let Some(&pi) = self.meta_index.get(p) {
                    self.parents.push(pi);
                    let parent = &mut self.concepts[pi as usize];
                    parent.children += 1;
                    depth = depth.max(parent.depth + 1);
                    in_model |= self.meta_in_model_module[pi as usize];
                }
            }
            self.concepts.push(Concept {
                id: mc.id,
                origin: Origin::Meta(mi as u16),
                branch: u8::MAX,
                active: true,
                depth,
                groups: 0,
                ordinal: 0,
                children: 0,
                parent_start: start,
                parent_len: (self.parents.len() as u32 - start) as u8,
            });
            self.mark.push(0);
            self.mark2.push(0);
            self.meta_in_model_module.push(in_model);
            if mc.id != 0 {
                self.meta_index.insert(mc.id, idx);
            }
        }
    }

    /// Pools holding only each branch's root.
    fn root_pools(&self) -> Pools {
        let mut pools = Pools::default();
        for b in Branch::ALL {
            let root = self.meta_index.get(&b.def().root).copied().unwrap_or(0);
            pools.members.push(vec![root]);
            pools.pa.push(vec![root]);
            pools.hubs.push(Vec::new());
        }
        pools
    }

    /// Index of a real metadata concept.
    pub(crate) fn meta(&self, id: u64) -> Option<u32> {
        self.meta_index.get(&id).copied()
    }

    pub(crate) fn parents_of(&self, i: u32) -> &[u32] {
        let c = &self.concepts[i as usize];
        let start = c.parent_start as usize;
        &self.parents[start..start + usize::from(c.parent_len)]
    }

    pub(crate) fn branch(&self, i: u32) -> Option<Branch> {
        Branch::from_index(self.concepts[i as usize].branch)
    }

    pub(crate) fn is_ext(&self, i: u32) -> bool {
        i as usize >= self.base_len
    }

    /// The module a concept (and its own components) belong to.
    pub(crate) fn module_of(&self, i: u32) -> u64 {
        match self.concepts[i as usize].origin {
            Origin::Meta(m) if self.meta_in_model_module[usize::from(m)] => meta::MODEL_MODULE,
            Origin::Meta(_) | Origin::Base => meta::CORE_MODULE,
            Origin::ExtModule | Origin::ExtRefset | Origin::Ext => {
                self.ext.map_or(meta::CORE_MODULE, |e| e.module)
            }
        }
    }

    /// The seed of the release a concept belongs to.
    pub(crate) fn seed_of(&self, i: u32) -> u64 {
        match (self.is_ext(i), self.ext) {
            (true, Some(e)) => e.seed,
            _ => self.base_seed,
        }
    }

    fn item_id(&self, i: u32, k: u64, stride: u64, kind: ComponentKind) -> u64 {
        match (self.is_ext(i), self.ext) {
            (true, Some(e)) => {
                let j = (i as usize - self.base_len) as u64;
                sctid::make(EXT_ITEM + j * stride + k, Some(e.namespace), kind)
            }
            _ => sctid::make(BASE_ITEM + u64::from(i) * stride + k, None, kind),
        }
    }

    /// The `k`-th description id of concept `i` (`k < DESC_STRIDE`).
    pub(crate) fn desc_id(&self, i: u32, k: u64) -> u64 {
        self.item_id(i, k, DESC_STRIDE, ComponentKind::Description)
    }

    /// The `k`-th relationship id of concept `i` (`k < REL_STRIDE`).
    pub(crate) fn rel_id(&self, i: u32, k: u64) -> u64 {
        self.item_id(i, k, REL_STRIDE, ComponentKind::Relationship)
    }

    /// Relationship ids for extension rows not owned by one extension
    /// concept (added parents of base concepts).
    pub(crate) fn ext_extra_rel_id(&self, k: u64) -> u64 {
        match self.ext {
            Some(e) => {
                let j = (self.concepts.len() - self.base_len) as u64;
                sctid::make(
                    EXT_ITEM + j * REL_STRIDE + k,
                    Some(e.namespace),
                    ComponentKind::Relationship,
                )
            }
            None => 0,
        }
    }

    /// Adds one synthetic concept of branch `b`, choosing its parents from
    /// `pools` when active.
    pub(crate) fn add(
        &mut self,
        pools: &mut Pools,
        rng: &mut Rng,
        b: Branch,
        active: bool,
        origin: Origin,
    ) -> u32 {
        let idx = self.concepts.len() as u32;
        let bi = b as usize;
        let ordinal = self.ordinals[bi];
        self.ordinals[bi] += 1;
        let start = self.parents.len() as u32;
        self.mark.push(0);
        self.mark2.push(0);
        if !active {
            self.concepts.push(Concept {
                id: 0,
                origin,
                branch: b as u8,
                active: false,
                depth: 0,
                groups: 1 + rng.below(2) as u8,
                ordinal,
                children: 0,
                parent_start: start,
                parent_len: 0,
            });
            return idx;
        }
        let mut primary = self.pick_parent(pools, bi, rng);
        while self.concepts[primary as usize].depth >= MAX_DEPTH {
            match self.parents_of(primary).first() {
                Some(&p) => primary = p,
                None => break,
            }
        }
        let mut ps: Vec<u32> = vec![primary];
        let extra = rng.weighted(&EXTRA_PARENTS);
        for _ in 0..extra {
            for _ in 0..4 {
                let list = if rng.chance(0.5) {
                    &pools.pa[bi]
                } else {
                    &pools.members[bi]
                };
                let Some(cand) = rng.pick(list) else { break };
                if self.acceptable_parent(cand, &ps) {
                    ps.push(cand);
                    break;
                }
            }
        }
        let depth = 1 + ps
            .iter()
            .map(|&p| self.concepts[p as usize].depth)
            .max()
            .unwrap_or(0);
        let cap = b.def().group_cap;
        let groups = if cap == 0 {
            0
        } else {
            // Children refine their parent's definition, so they tend to
            // carry at least as many role groups.
            let inherited = i32::from(self.concepts[primary as usize].groups).max(1);
            let r = rng.unit();
            let delta = if r < 0.55 {
                1
            } else if r < 0.60 {
                -1
            } else {
                0
            };
            (inherited + delta).clamp(1, i32::from(cap)) as u8
        };
        let primary_is_meta = matches!(self.concepts[primary as usize].origin, Origin::Meta(_));
        self.concepts.push(Concept {
            id: 0,
            origin,
            branch: b as u8,
            active: true,
            depth,
            groups,
            ordinal,
            children: 0,
            parent_start: start,
            parent_len: ps.len() as u8,
        });
        for &p in &ps {
            self.parents.push(p);
            self.concepts[p as usize].children += 1;
            pools.pa[bi].push(p);
        }
        pools.members[bi].push(idx);
        pools.pa[bi].push(idx);
        if primary_is_meta && pools.hubs[bi].len() < HUBS_PER_BRANCH {
            pools.hubs[bi].push(idx);
        }
        idx
    }

    fn pick_parent(&self, pools: &Pools, bi: usize, rng: &mut Rng) -> u32 {
        let root = pools.members[bi].first().copied().unwrap_or(0);
        let r = rng.unit();
        let hubs = &pools.hubs[bi];
        let chosen = if r < P_HUB && !hubs.is_empty() {
            let weights: Vec<f64> = (0..hubs.len()).map(|h| 1.0 / (h as f64 + 1.0)).collect();
            Some(hubs[rng.weighted(&weights)])
        } else if r < P_HUB + P_PREFERENTIAL {
            rng.pick(&pools.pa[bi])
        } else {
            rng.pick(&pools.members[bi])
        };
        chosen.unwrap_or(root)
    }

    /// Marks `from` and all its ancestors in `mark` with `stamp`, calling
    /// `hit` on each newly marked node; stops early when `hit` says so.
    fn walk_up(
        parents: &[u32],
        concepts: &[Concept],
        mark: &mut [u32],
        stack: &mut Vec<u32>,
        stamp: u32,
        from: &[u32],
        mut hit: impl FnMut(u32) -> bool,
    ) -> bool {
        stack.clear();
        stack.extend_from_slice(from);
        while let Some(n) = stack.pop() {
            if mark[n as usize] == stamp {
                continue;
            }
            mark[n as usize] = stamp;
            if hit(n) {
                return true;
            }
            let c = &concepts[n as usize];
            let start = c.parent_start as usize;
            stack.extend_from_slice(&parents[start..start + usize::from(c.parent_len)]);
        }
        false
    }

    /// Whether `cand` can join `ps` as a further parent of a new concept
    /// without redundancy or exceeding the maximum depth.
    pub(crate) fn acceptable_parent(&mut self, cand: u32, ps: &[u32]) -> bool {
        if ps.contains(&cand)
            || !self.concepts[cand as usize].active
            || self.concepts[cand as usize].depth >= MAX_DEPTH
        {
            return false;
        }
        self.stamp = self.stamp.wrapping_add(1);
        let stamp = self.stamp;
        // cand must not be an ancestor of an existing parent...
        let is_ancestor = Model::walk_up(
            &self.parents,
            &self.concepts,
            &mut self.mark,
            &mut self.stack,
            stamp,
            ps,
            |n| n == cand,
        );
        if is_ancestor {
            return false;
        }
        // ...nor a descendant of one.
        let is_descendant = Model::walk_up(
            &self.parents,
            &self.concepts,
            &mut self.mark2,
            &mut self.stack,
            stamp,
            &[cand],
            |n| ps.contains(&n),
        );
        !is_descendant
    }

    /// Starts the extension part: registers the extension, derives its
    /// pools (base pools without `excluded` concepts) and adds its module
    /// and language refset concepts.
    pub(crate) fn begin_extension(&mut self, seed: u64, namespace: u32, excluded: &[bool]) {
        let module = sctid::make(100, Some(namespace), ComponentKind::Concept);
        let refset = sctid::make(101, Some(namespace), ComponentKind::Concept);
        self.ext = Some(ExtInfo {
            seed,
            namespace,
            module,
            refset,
        });
        let keep = |i: &u32| !excluded.get(*i as usize).copied().unwrap_or(false);
        let mut pools = self.base_pools.clone();
        for list in pools
            .members
            .iter_mut()
            .chain(pools.pa.iter_mut())
            .chain(pools.hubs.iter_mut())
        {
            list.retain(keep);
        }
        self.ext_pools = pools;
        for (origin, id, parent) in [
            (Origin::ExtModule, module, meta::MODULE),
            (Origin::ExtRefset, refset, meta::LANGUAGE_TYPE_REFSET),
        ] {
            let start = self.parents.len() as u32;
            let p = self.meta(parent).unwrap_or(0);
            self.parents.push(p);
            self.concepts[p as usize].children += 1;
            let depth = self.concepts[p as usize].depth + 1;
            self.concepts.push(Concept {
                id,
                origin,
                branch: u8::MAX,
                active: true,
                depth,
                groups: 0,
                ordinal: 0,
                children: 0,
                parent_start: start,
                parent_len: 1,
            });
            self.mark.push(0);
            self.mark2.push(0);
        }
    }

    /// Adds `n` extension concepts (after [`Model::begin_extension`]) and
    /// gives them ids in the extension's namespace.
    pub(crate) fn grow_extension(&mut self, n: usize) {
        let Some(ext) = self.ext else { return };
        let mut rng = Rng::derive(ext.seed, Stream::Model, 1);
        let weights: Vec<f64> = Branch::ALL.iter().map(|b| b.def().weight).collect();
        let mut pools = std::mem::take(&mut self.ext_pools);
        let first = self.concepts.len();
        for _ in 0..n {
            let b = Branch::ALL[rng.weighted(&weights)];
            let active = rng.chance(EXT_ACTIVE_SHARE);
            self.add(&mut pools, &mut rng, b, active, Origin::Ext);
        }
        self.ext_pools = pools;
        let mut items: Vec<u64> = Vec::with_capacity(n);
        let mut next = EXT_ITEM;
        for _ in 0..n {
            items.push(next);
            next += 1 + rng.below(3) as u64;
        }
        shuffle(&mut rng, &mut items);
        for (c, item) in self.concepts[first..].iter_mut().zip(items) {
            c.id = sctid::make(item, Some(ext.namespace), ComponentKind::Concept);
        }
    }

    /// Records an extra is-a parent added by an extension to a base concept.
    pub(crate) fn note_added_parent(&mut self, parent: u32) {
        self.concepts[parent as usize].children += 1;
    }

    /// The id of a synthetic metadata concept.
    pub(crate) fn synthetic(&self, which: meta::SyntheticMeta) -> u64 {
        SYNTHETIC_META
            .iter()
            .position(|s| *s == which)
            .map_or(0, |p| self.synthetic_meta[p])
    }

    pub(crate) fn max_depth(&self) -> u8 {
        self.concepts.iter().map(|c| c.depth).max().unwrap_or(0)
    }

    pub(crate) fn max_children(&self) -> u32 {
        self.concepts
            .iter()
            .filter(|c| !matches!(c.origin, Origin::Meta(_)))
            .map(|c| c.children)
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_are_earlier_active_and_ids_unique() {
        let m = Model::build_base(3000, 5);
        assert_eq!(m.concepts.len(), 3000);
        let mut ids: Vec<u64> = m.concepts.iter().map(|c| c.id).collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), 3000);
        for (i, c) in m.concepts.iter().enumerate() {
            assert!(sctid::validate(c.id).is_ok());
            for &p in m.parents_of(i as u32) {
                assert!((p as usize) < i);
                assert!(m.concepts[p as usize].active);
            }
            if c.active && i > 0 {
                assert!(c.parent_len >= 1);
                assert!(c.depth <= MAX_DEPTH);
            }
        }
    }
}
