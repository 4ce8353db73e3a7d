//! Extension packages layered over a regenerated base.
//!
//! An importer must layer an extension over its base by taking, per
//! component id, the row with the latest effective time. To test that, an
//! extension package must contain rows that *reuse* base ids with a later
//! effective time: concepts it inactivates, descriptions whose term it
//! changes, as well as new concepts and relationships of its own. The base
//! is rebuilt in memory from its size and seed (no files are read), and
//! the overridden base rows are regenerated from the same per-concept
//! streams the base release used, so ids and destinations match exactly.
//!
//! Overrides are chosen so that the layered result stays consistent:
//! inactivated concepts are leaves of the disorder or procedure branches
//! (nothing has them as parent, attribute destination or association
//! target), and added parents are earlier concepts that are neither
//! ancestors nor descendants of the concept's current parents, which keeps
//! the layered is-a graph acyclic and non-redundant.

use crate::emit::{self, Ctx, Scratch, Stats};
use crate::meta;
use crate::model::{Model, Origin};
use crate::out::{Rf2, Sink};
use crate::rng::{Rng, Stream};
use crate::vocab::Branch;
use crate::{ExtensionConfig, ExtensionSummary, SynthConfig, SynthError};

/// Share of base concept rows the extension inactivates.
const INACTIVATE_SHARE: f64 = 0.005;
/// Share of active base concepts with one synonym re-termed (≈0.5% of
/// base descriptions).
const RETERM_SHARE: f64 = 0.022;
/// Share of active base concepts given an extra parent.
const ADD_PARENT_SHARE: f64 = 0.001;

/// The base components an extension overrides.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    pub(crate) inactivated: Vec<u32>,
    pub(crate) retermed: Vec<u32>,
    pub(crate) added_parents: Vec<(u32, u32)>,
}

/// Rebuilds the base, chooses overrides, and grows the extension.
pub(crate) fn build(config: &SynthConfig, ext: &ExtensionConfig) -> (Model, Plan) {
    let mut model = Model::build_base(ext.base_concepts, ext.base_seed);
    let mut rng = Rng::derive(config.seed, Stream::Overrides, 0);
    let mut plan = Plan::default();
    let base_len = model.base_len;
    let synthetic = |m: &Model, i: u32| {
        let c = &m.concepts[i as usize];
        c.origin == Origin::Base && c.active
    };

    let hubs: Vec<u32> = model.base_pools.hubs.iter().flatten().copied().collect();
    let candidates: Vec<u32> = (0..base_len as u32)
        .filter(|&i| {
            synthetic(&model, i)
                && matches!(model.branch(i), Some(Branch::Disorder | Branch::Procedure))
                && model.concepts[i as usize].children == 0
                && !hubs.contains(&i)
        })
        .collect();
    if !candidates.is_empty() {
        let want = (base_len as f64 * INACTIVATE_SHARE).max(1.0);
        let p = (want / candidates.len() as f64).min(1.0);
        plan.inactivated = candidates
            .iter()
            .copied()
            .filter(|_| rng.chance(p))
            .collect();
        if plan.inactivated.is_empty() {
            plan.inactivated
                .push(candidates[rng.below(candidates.len())]);
        }
    }
    let mut excluded = vec![false; base_len];
    for &i in &plan.inactivated {
        excluded[i as usize] = true;
    }

    model.begin_extension(config.seed, ext.namespace, &excluded);
    model.grow_extension(config.concepts);

    for i in 0..base_len as u32 {
        if synthetic(&model, i) && !excluded[i as usize] && rng.chance(RETERM_SHARE) {
            plan.retermed.push(i);
        }
    }
    if plan.retermed.is_empty()
        && let Some(i) =
            (0..base_len as u32).find(|&i| synthetic(&model, i) && !excluded[i as usize])
    {
        plan.retermed.push(i);
    }

    for i in 0..base_len as u32 {
        if rng.chance(ADD_PARENT_SHARE)
            && let Some(p) = try_add_parent(&mut model, &mut rng, i, &excluded)
        {
            plan.added_parents.push((i, p));
        }
    }
    // Small releases: make sure the layering of an added parent is tested.
    let mut i = base_len as u32;
    let mut tries = 0;
    while plan.added_parents.is_empty() && i > 0 && tries < 2000 {
        i -= 1;
        tries += 1;
        if let Some(p) = try_add_parent(&mut model, &mut rng, i, &excluded) {
            plan.added_parents.push((i, p));
        }
    }
    (model, plan)
}

/// An extra parent for base concept `i`: an earlier active base concept
/// of its branch, not inactivated, and neither an ancestor nor a
/// descendant of its current parents.
fn try_add_parent(model: &mut Model, rng: &mut Rng, i: u32, excluded: &[bool]) -> Option<u32> {
    let c = &model.concepts[i as usize];
    if c.origin != Origin::Base || !c.active || excluded[i as usize] {
        return None;
    }
    let b = model.branch(i)?;
    let current: Vec<u32> = model.parents_of(i).to_vec();
    for _ in 0..10 {
        let members = &model.base_pools.members[b as usize];
        let cand = rng.pick(members)?;
        let cc = &model.concepts[cand as usize];
        // Earlier concepts can never be descendants of `i`.
        if cand >= i || excluded[cand as usize] || cc.origin != Origin::Base || !cc.active {
            continue;
        }
        if model.acceptable_parent(cand, &current) {
            model.note_added_parent(cand);
            return Some(cand);
        }
    }
    None
}

/// Writes the extension's own concepts, then the overrides, then module
/// dependencies.
pub(crate) fn write(
    model: &Model,
    plan: &Plan,
    ctxs: (&Ctx<'_>, &Ctx<'_>),
    sink: &mut Sink,
    stats: &mut Stats,
    (et, base_et): (u32, u32),
) -> Result<ExtensionSummary, SynthError> {
    let (base_ctx, ext_ctx) = ctxs;
    let Some(info) = model.ext else {
        return Ok(ExtensionSummary::default());
    };
    let module = info.module;
    let mut scratch = Scratch::default();
    let mut order: Vec<u32> = (model.base_len as u32..model.concepts.len() as u32).collect();
    order.sort_by_key(|&i| model.concepts[i as usize].id);
    for i in order {
        emit::write_concept(ext_ctx, sink, stats, i, &mut scratch)?;
    }

    let mut summary = ExtensionSummary::default();
    let mut rng = Rng::derive(info.seed, Stream::Overrides, 1);
    let by_id = |list: &[u32]| {
        let mut v = list.to_vec();
        v.sort_by_key(|&i| model.concepts[i as usize].id);
        v
    };

    for i in by_id(&plan.inactivated) {
        let id = model.concepts[i as usize].id;
        sink.row(Rf2::Concept)
            .num(id)
            .num(u64::from(et))
            .flag(false)
            .num(module)
            .num(meta::PRIMITIVE)
            .end()?;
        emit::relationships(base_ctx, i, &mut scratch);
        for r in scratch.rels.iter().filter(|r| r.active) {
            let retired = emit::Rel {
                et,
                active: false,
                ..r.clone()
            };
            emit::write_relationship(sink, &retired, id, module)?;
            summary.overridden_relationships += 1;
        }
        if let Some(b) = model.branch(i) {
            emit::write_inactivation(ext_ctx, sink, &mut rng, (b, id, module, et))?;
        }
        summary.inactivated_concepts += 1;
    }

    for i in by_id(&plan.retermed) {
        emit::descriptions(base_ctx, i, &mut scratch);
        let synonyms: Vec<&emit::Desc> = scratch
            .descs
            .iter()
            .filter(|d| d.active && d.type_id == meta::SYNONYM)
            .collect();
        let Some(d) = rng.pick(&synonyms) else {
            continue;
        };
        let changed = emit::Desc {
            et,
            term: format!("{}, revised wording", d.term),
            ..d.clone()
        };
        let concept = model.concepts[i as usize].id;
        emit::write_description(sink, Rf2::Description, &changed, concept, module)?;
        stats.active_descriptions += 1;
        if let Some(a) = d.acc[0].or(d.acc[1]) {
            sink.row(Rf2::Language)
                .uuid(rng.uuid())
                .num(u64::from(et))
                .flag(true)
                .num(module)
                .num(info.refset)
                .num(d.id)
                .num(a)
                .end()?;
        }
        summary.changed_descriptions += 1;
    }

    for (k, &(child, parent)) in plan.added_parents.iter().enumerate() {
        let r = emit::Rel {
            id: model.ext_extra_rel_id(k as u64),
            et,
            active: true,
            group: 0,
            type_id: meta::IS_A,
            target: emit::Target::Concept(model.concepts[parent as usize].id),
            characteristic: meta::INFERRED,
        };
        emit::write_relationship(sink, &r, model.concepts[child as usize].id, module)?;
        stats.active_relationships += 1;
        stats.active_is_a += 1;
        summary.added_parents += 1;
    }

    let mut rng = Rng::derive(info.seed, Stream::Release, 0);
    for target in [meta::CORE_MODULE, meta::MODEL_MODULE] {
        sink.row(Rf2::ModuleDependency)
            .uuid(rng.uuid())
            .num(u64::from(et))
            .flag(true)
            .num(module)
            .num(meta::MODULE_DEPENDENCY)
            .num(target)
            .num(u64::from(et))
            .num(u64::from(base_et))
            .end()?;
    }
    Ok(summary)
}
