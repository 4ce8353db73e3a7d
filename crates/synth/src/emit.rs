//! The rows of one concept: concept, descriptions, language members,
//! relationships, concrete values, and refset members.
//!
//! Each kind of row is drawn from the concept's own random stream (see
//! `rng`), and the functions that build descriptions and relationships
//! return plain values before anything is written. That is what lets an
//! extension rebuild exactly the base rows it overrides (same ids, same
//! destinations) and re-emit them with a later effective time.

use crate::SynthError;
use crate::meta::{self, META};
use crate::model::{DESC_STRIDE, Model, Origin, Pools, REL_STRIDE};
use crate::out::{Rf2, Sink};
use crate::rng::{Rng, Stream};
use crate::vocab::{self, Branch, Profile, Term, Vocab};

/// Everything emission needs to know besides the concept.
#[derive(Debug)]
pub(crate) struct Ctx<'a> {
    pub(crate) model: &'a Model,
    pub(crate) vocab: &'a Vocab,
    /// Attribute destinations and association targets come from here.
    pub(crate) pools: &'a Pools,
    /// Effective times rows may carry, oldest first, the release's last.
    pub(crate) hist: &'a [u32],
    /// Language refsets: slot 0 uses US spelling, slot 1 GB spelling.
    pub(crate) langs: [u64; 2],
    /// Whether to write simple refset and map members (base releases).
    pub(crate) content_refsets: bool,
}

/// A description or text definition, before writing.
#[derive(Clone, Debug)]
pub(crate) struct Desc {
    pub(crate) id: u64,
    pub(crate) et: u32,
    pub(crate) active: bool,
    pub(crate) type_id: u64,
    pub(crate) term: String,
    pub(crate) case: u64,
    /// Acceptability in each language refset slot (`None`: no member).
    pub(crate) acc: [Option<u64>; 2],
}

/// What a relationship points at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    Concept(u64),
    /// A concrete value in RF2 syntax (`#250`, `"text"`).
    Value(&'static str),
}

/// A relationship or concrete value, before writing.
#[derive(Clone, Debug)]
pub(crate) struct Rel {
    pub(crate) id: u64,
    pub(crate) et: u32,
    pub(crate) active: bool,
    pub(crate) group: u8,
    pub(crate) type_id: u64,
    pub(crate) target: Target,
    pub(crate) characteristic: u64,
}

/// Reusable buffers.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) terms: Vec<Term>,
    pub(crate) descs: Vec<Desc>,
    pub(crate) rels: Vec<Rel>,
    attrs: Vec<Attr>,
}

/// Counters that cannot be read off the files' row counts.
#[derive(Clone, Debug, Default)]
pub(crate) struct Stats {
    pub(crate) active_concepts: u64,
    pub(crate) active_descriptions: u64,
    pub(crate) active_relationships: u64,
    pub(crate) active_is_a: u64,
}

/// An effective time from the release history; a third of rows carry the
/// release date itself. Always consumes the same number of draws.
pub(crate) fn pick_et(rng: &mut Rng, hist: &[u32]) -> u32 {
    let recent = rng.chance(0.3);
    let i = rng.below(hist.len());
    match (recent, hist.last()) {
        (true, Some(&last)) => last,
        _ => hist.get(i).copied().unwrap_or(0),
    }
}

/// Release dates (January and July) from 2002 up to `et`, then `et`.
pub(crate) fn history(et: u32) -> Vec<u32> {
    let mut dates = Vec::new();
    for year in 2002..=et / 10_000 {
        for md in [131, 731] {
            let d = year * 10_000 + md;
            if d < et {
                dates.push(d);
            }
        }
    }
    dates.push(et);
    dates
}

fn add_desc(model: &Model, i: u32, k: &mut u64, out: &mut Vec<Desc>, mut d: Desc) {
    if *k < DESC_STRIDE {
        d.id = model.desc_id(i, *k);
        *k += 1;
        out.push(d);
    }
}

fn desc(
    et: u32,
    active: bool,
    type_id: u64,
    term: String,
    case: u64,
    acc: [Option<u64>; 2],
) -> Desc {
    Desc {
        id: 0,
        et,
        active,
        type_id,
        term,
        case,
        acc,
    }
}

/// Adds a synonym, split into a US and a GB description when the two
/// spellings differ (each then belongs to one dialect only).
fn add_synonym(
    model: &Model,
    i: u32,
    k: &mut u64,
    out: &mut Vec<Desc>,
    (term, et, acceptability): (&Term, u32, u64),
) {
    match vocab::gb_spelling(&term.text) {
        None => {
            let a = Some(acceptability);
            let d = desc(
                et,
                true,
                meta::SYNONYM,
                term.text.clone(),
                term.case,
                [a, a],
            );
            add_desc(model, i, k, out, d);
        }
        Some(gb) => {
            let a = Some(acceptability);
            let us = desc(
                et,
                true,
                meta::SYNONYM,
                term.text.clone(),
                term.case,
                [a, None],
            );
            add_desc(model, i, k, out, us);
            let gb = desc(et, true, meta::SYNONYM, gb, term.case, [None, a]);
            add_desc(model, i, k, out, gb);
        }
    }
}

/// The descriptions (and text definitions) of concept `i`.
pub(crate) fn descriptions(ctx: &Ctx<'_>, i: u32, scratch: &mut Scratch) {
    let m = ctx.model;
    let out = &mut scratch.descs;
    out.clear();
    let c = &m.concepts[i as usize];
    let mut rng = Rng::derive(m.seed_of(i), Stream::Descriptions, u64::from(i));
    let mut k = 0u64;
    let first = ctx.hist.first().copied().unwrap_or(0);
    let pref = Some(meta::PREFERRED);
    let fixed = |fsn: String, pt: String| {
        [
            desc(
                first,
                true,
                meta::FSN,
                fsn,
                meta::CASE_INSENSITIVE,
                [pref, pref],
            ),
            desc(
                first,
                true,
                meta::SYNONYM,
                pt,
                meta::CASE_INSENSITIVE,
                [pref, pref],
            ),
        ]
    };
    match c.origin {
        Origin::Meta(mi) => {
            let mc = &META[usize::from(mi)];
            let case = meta::case_id(mc.case);
            let d = desc(
                first,
                true,
                meta::FSN,
                mc.fsn.to_string(),
                case,
                [pref, pref],
            );
            add_desc(m, i, &mut k, out, d);
            for (j, s) in mc.synonyms.iter().enumerate() {
                let a = Some(if j == 0 {
                    meta::PREFERRED
                } else {
                    meta::ACCEPTABLE
                });
                let d = desc(first, true, meta::SYNONYM, s.to_string(), case, [a, a]);
                add_desc(m, i, &mut k, out, d);
            }
        }
        Origin::ExtModule | Origin::ExtRefset => {
            let ns = m.ext.map_or(0, |e| e.namespace);
            let (fsn, pt) = if c.origin == Origin::ExtModule {
                (
                    format!("Synthetic extension {ns} module (core metadata concept)"),
                    format!("Synthetic extension {ns} module"),
                )
            } else {
                (
                    format!(
                        "Synthetic extension {ns} English language reference set (foundation metadata concept)"
                    ),
                    format!("Synthetic extension {ns} English language reference set"),
                )
            };
            for d in fixed(fsn, pt) {
                add_desc(m, i, &mut k, out, d);
            }
        }
        Origin::Base | Origin::Ext => {
            let Some(b) = m.branch(i) else { return };
            ctx.vocab.terms(b, c.ordinal, &mut scratch.terms);
            let terms = &scratch.terms;
            let Some(pt) = terms.first() else { return };
            let et = pick_et(&mut rng, ctx.hist);
            let fsn = format!("{} ({})", pt.text, b.def().tag);
            add_desc(
                m,
                i,
                &mut k,
                out,
                desc(et, true, meta::FSN, fsn, pt.case, [pref, pref]),
            );
            let et = pick_et(&mut rng, ctx.hist);
            add_synonym(m, i, &mut k, out, (pt, et, meta::PREFERRED));
            let extra = rng.weighted(&[0.22, 0.45, 0.23, 0.10]);
            let others = &terms[1..];
            let start = rng.below(others.len().max(1));
            for j in 0..extra.min(others.len()) {
                let t = &others[(start + j) % others.len()];
                let et = pick_et(&mut rng, ctx.hist);
                add_synonym(m, i, &mut k, out, (t, et, meta::ACCEPTABLE));
            }
            if rng.chance(0.07) {
                let et = pick_et(&mut rng, ctx.hist);
                let acc = Some(meta::ACCEPTABLE);
                let term = format!("{} NOS", pt.text);
                let d = desc(et, false, meta::SYNONYM, term, pt.case, [acc, acc]);
                add_desc(m, i, &mut k, out, d);
            }
            if c.active && rng.chance(0.004) {
                let et = pick_et(&mut rng, ctx.hist);
                let text = vocab::definition(b, pt);
                let d = desc(
                    et,
                    true,
                    meta::DEFINITION,
                    text,
                    meta::CASE_SENSITIVE,
                    [pref, pref],
                );
                add_desc(m, i, &mut k, out, d);
            }
        }
    }
}

/// Writes the descriptions of concept `i` and their language members.
fn write_descriptions(
    ctx: &Ctx<'_>,
    sink: &mut Sink,
    stats: &mut Stats,
    i: u32,
    scratch: &mut Scratch,
) -> Result<(), SynthError> {
    descriptions(ctx, i, scratch);
    let m = ctx.model;
    let concept = m.concepts[i as usize].id;
    let module = m.module_of(i);
    let mut rng = Rng::derive(m.seed_of(i), Stream::Descriptions, u64::from(i) | (1 << 40));
    for d in &scratch.descs {
        let file = if d.type_id == meta::DEFINITION {
            Rf2::TextDefinition
        } else {
            Rf2::Description
        };
        if d.active {
            stats.active_descriptions += 1;
        }
        write_description(sink, file, d, concept, module)?;
        for (slot, acc) in d.acc.iter().enumerate() {
            if let Some(a) = acc {
                sink.row(Rf2::Language)
                    .uuid(rng.uuid())
                    .num(u64::from(d.et))
                    .flag(d.active)
                    .num(module)
                    .num(ctx.langs[slot])
                    .num(d.id)
                    .num(*a)
                    .end()?;
            }
        }
    }
    Ok(())
}

/// Writes one description row.
pub(crate) fn write_description(
    sink: &mut Sink,
    file: Rf2,
    d: &Desc,
    concept: u64,
    module: u64,
) -> Result<(), SynthError> {
    sink.row(file)
        .num(d.id)
        .num(u64::from(d.et))
        .flag(d.active)
        .num(module)
        .num(concept)
        .text("en")
        .num(d.type_id)
        .text(&d.term)
        .num(d.case)
        .end()
}

/// A grouped attribute before its destination is drawn.
#[derive(Clone, Copy, Debug)]
struct Attr {
    group: u8,
    type_id: u64,
    to: To,
}

#[derive(Clone, Copy, Debug)]
enum To {
    Branch(Branch),
    Value(&'static str),
}

const NUMERATORS: &[&str] = &[
    "#250", "#0.5", "#1", "#500", "#12.5", "#100", "#5", "#20", "#1000", "#0.25",
];
const COUNTS: &[&str] = &["#1", "#2", "#3"];
const TEXT_VALUES: &[&str] = &["\"text\"", "\"scored tablet\"", "\"child-resistant pack\""];

/// The attributes a concept of branch `b` with `groups` role groups has.
fn attributes(model: &Model, b: Branch, groups: u8, rng: &mut Rng, out: &mut Vec<Attr>) {
    use meta::*;
    out.clear();
    let add = |out: &mut Vec<Attr>, rng: &mut Rng, p: f64, group: u8, type_id: u64, to: To| {
        if rng.chance(p) {
            out.push(Attr { group, type_id, to });
        }
    };
    let q = To::Branch(Branch::Qualifier);
    match b.def().profile {
        Profile::None => {}
        Profile::Disorder => {
            add(out, rng, 0.35, 0, CLINICAL_COURSE, q);
            add(out, rng, 0.20, 0, OCCURRENCE, q);
            for g in 1..=groups {
                add(
                    out,
                    rng,
                    0.95,
                    g,
                    FINDING_SITE,
                    To::Branch(Branch::BodyStructure),
                );
                add(
                    out,
                    rng,
                    0.85,
                    g,
                    ASSOCIATED_MORPHOLOGY,
                    To::Branch(Branch::Morphology),
                );
                add(out, rng, 0.25, g, PATHOLOGICAL_PROCESS, q);
                let agent = if rng.chance(0.7) {
                    Branch::Organism
                } else {
                    Branch::Substance
                };
                add(out, rng, 0.20, g, CAUSATIVE_AGENT, To::Branch(agent));
            }
        }
        Profile::Finding => {
            for g in 1..=groups {
                add(
                    out,
                    rng,
                    0.90,
                    g,
                    FINDING_SITE,
                    To::Branch(Branch::BodyStructure),
                );
                if rng.chance(0.3) {
                    out.push(Attr {
                        group: g,
                        type_id: INTERPRETS,
                        to: To::Branch(Branch::Observable),
                    });
                    out.push(Attr {
                        group: g,
                        type_id: HAS_INTERPRETATION,
                        to: q,
                    });
                }
            }
        }
        Profile::Procedure => {
            add(out, rng, 0.15, 0, HAS_INTENT, q);
            for g in 1..=groups {
                add(out, rng, 0.95, g, METHOD, To::Branch(Branch::Action));
                add(
                    out,
                    rng,
                    0.85,
                    g,
                    PROCEDURE_SITE_DIRECT,
                    To::Branch(Branch::BodyStructure),
                );
                add(
                    out,
                    rng,
                    0.20,
                    g,
                    USING_DEVICE,
                    To::Branch(Branch::PhysicalObject),
                );
                add(
                    out,
                    rng,
                    0.30,
                    g,
                    DIRECT_MORPHOLOGY,
                    To::Branch(Branch::Morphology),
                );
                add(out, rng, 0.15, g, PROCEDURE_APPROACH, q);
            }
        }
        Profile::Product => {
            add(
                out,
                rng,
                1.0,
                0,
                HAS_DOSE_FORM,
                To::Branch(Branch::DoseForm),
            );
            let count = COUNTS[usize::from(groups.clamp(1, 3)) - 1];
            add(out, rng, 1.0, 0, COUNT_OF_BASE, To::Value(count));
            let text = model.synthetic(SyntheticMeta::TextAttribute);
            let value = TEXT_VALUES[rng.below(TEXT_VALUES.len())];
            add(out, rng, 0.05, 0, text, To::Value(value));
            for g in 1..=groups {
                add(
                    out,
                    rng,
                    1.0,
                    g,
                    HAS_ACTIVE_INGREDIENT,
                    To::Branch(Branch::Substance),
                );
                let value = NUMERATORS[rng.below(NUMERATORS.len())];
                add(out, rng, 0.9, g, STRENGTH_NUMERATOR_VALUE, To::Value(value));
                add(
                    out,
                    rng,
                    0.9,
                    g,
                    STRENGTH_DENOMINATOR_VALUE,
                    To::Value("#1"),
                );
            }
        }
        Profile::BodyStructure => add(out, rng, 0.25, 0, LATERALITY, q),
        Profile::Situation => {
            add(
                out,
                rng,
                1.0,
                1,
                ASSOCIATED_FINDING,
                To::Branch(Branch::Finding),
            );
            add(out, rng, 0.9, 1, FINDING_CONTEXT, q);
            add(out, rng, 0.9, 1, TEMPORAL_CONTEXT, q);
            add(out, rng, 0.9, 1, SUBJECT_RELATIONSHIP_CONTEXT, q);
        }
        Profile::Observable => {
            add(out, rng, 0.8, 0, COMPONENT, To::Branch(Branch::Substance));
            add(out, rng, 0.8, 0, PROPERTY, q);
        }
        Profile::Specimen => {
            add(
                out,
                rng,
                0.8,
                0,
                SPECIMEN_SOURCE_TOPOGRAPHY,
                To::Branch(Branch::BodyStructure),
            );
            add(
                out,
                rng,
                0.4,
                0,
                SPECIMEN_SUBSTANCE,
                To::Branch(Branch::Substance),
            );
        }
    }
}

/// A destination in branch `b`: preferential (popular concepts are
/// popular destinations), avoiding the branch root where possible.
fn destination(ctx: &Ctx<'_>, b: Branch, rng: &mut Rng) -> u64 {
    let pa = &ctx.pools.pa[b as usize];
    let mut pick = rng.pick(pa).unwrap_or(0);
    for _ in 0..3 {
        if !matches!(ctx.model.concepts[pick as usize].origin, Origin::Meta(_)) {
            break;
        }
        pick = rng.pick(pa).unwrap_or(0);
    }
    ctx.model.concepts[pick as usize].id
}

/// Any member of branch `b` (for historical, inactive rows).
fn any_member(ctx: &Ctx<'_>, b: Branch, rng: &mut Rng) -> u64 {
    let members = &ctx.pools.members[b as usize];
    let pick = rng.pick(members).unwrap_or(0);
    ctx.model.concepts[pick as usize].id
}

/// The relationships and concrete values of concept `i`.
pub(crate) fn relationships(ctx: &Ctx<'_>, i: u32, scratch: &mut Scratch) {
    let m = ctx.model;
    let out = &mut scratch.rels;
    out.clear();
    let c = &m.concepts[i as usize];
    let mut rng = Rng::derive(m.seed_of(i), Stream::Relationships, u64::from(i));
    let mut k = 0u64;
    let mut push = |out: &mut Vec<Rel>, r: Rel| {
        if k < REL_STRIDE {
            out.push(Rel {
                id: m.rel_id(i, k),
                ..r
            });
            k += 1;
        }
    };
    let rel = |et, active, group, type_id, target, characteristic| Rel {
        id: 0,
        et,
        active,
        group,
        type_id,
        target,
        characteristic,
    };
    let parent_ids: Vec<u64> = m
        .parents_of(i)
        .iter()
        .map(|&p| m.concepts[p as usize].id)
        .collect();
    let Some(b) = m.branch(i) else {
        // Metadata: is-a only.
        let et = match c.origin {
            Origin::Meta(_) => ctx.hist.first().copied().unwrap_or(0),
            _ => ctx.hist.last().copied().unwrap_or(0),
        };
        for p in parent_ids {
            push(
                out,
                rel(et, true, 0, meta::IS_A, Target::Concept(p), meta::INFERRED),
            );
        }
        return;
    };
    if c.active {
        for p in parent_ids {
            let et = pick_et(&mut rng, ctx.hist);
            push(
                out,
                rel(et, true, 0, meta::IS_A, Target::Concept(p), meta::INFERRED),
            );
        }
        attributes(m, b, c.groups, &mut rng, &mut scratch.attrs);
        for a in &scratch.attrs {
            let et = pick_et(&mut rng, ctx.hist);
            let target = match a.to {
                To::Branch(d) => Target::Concept(destination(ctx, d, &mut rng)),
                To::Value(v) => Target::Value(v),
            };
            push(
                out,
                rel(et, true, a.group, a.type_id, target, meta::INFERRED),
            );
        }
        if b.def().profile == Profile::BodyStructure && rng.chance(0.15) {
            let et = pick_et(&mut rng, ctx.hist);
            let to = destination(ctx, Branch::BodyStructure, &mut rng);
            push(
                out,
                rel(
                    et,
                    true,
                    0,
                    meta::PART_OF,
                    Target::Concept(to),
                    meta::ADDITIONAL,
                ),
            );
        }
        // Rows that earlier classifications produced and later retired.
        let history = rng.weighted(&[0.30, 0.30, 0.20, 0.12, 0.08]);
        for _ in 0..history {
            let et = pick_et(&mut rng, ctx.hist);
            if b.def().profile != Profile::None && rng.chance(0.5) {
                attributes(m, b, 1, &mut rng, &mut scratch.attrs);
                if let Some(a) = rng.pick(&scratch.attrs) {
                    let target = match a.to {
                        To::Branch(d) => Target::Concept(any_member(ctx, d, &mut rng)),
                        To::Value(v) => Target::Value(v),
                    };
                    push(
                        out,
                        rel(et, false, a.group, a.type_id, target, meta::INFERRED),
                    );
                }
            } else {
                let to = any_member(ctx, b, &mut rng);
                push(
                    out,
                    rel(
                        et,
                        false,
                        0,
                        meta::IS_A,
                        Target::Concept(to),
                        meta::INFERRED,
                    ),
                );
            }
        }
    } else {
        // An inactive concept keeps its last relationships, all inactive.
        for _ in 0..1 + rng.below(2) {
            let et = pick_et(&mut rng, ctx.hist);
            let to = any_member(ctx, b, &mut rng);
            push(
                out,
                rel(
                    et,
                    false,
                    0,
                    meta::IS_A,
                    Target::Concept(to),
                    meta::INFERRED,
                ),
            );
        }
        attributes(m, b, c.groups, &mut rng, &mut scratch.attrs);
        for a in &scratch.attrs {
            let et = pick_et(&mut rng, ctx.hist);
            let target = match a.to {
                To::Branch(d) => Target::Concept(any_member(ctx, d, &mut rng)),
                To::Value(v) => Target::Value(v),
            };
            push(
                out,
                rel(et, false, a.group, a.type_id, target, meta::INFERRED),
            );
        }
    }
}

/// Writes one relationship or concrete value row.
pub(crate) fn write_relationship(
    sink: &mut Sink,
    r: &Rel,
    source: u64,
    module: u64,
) -> Result<(), SynthError> {
    let row = match r.target {
        Target::Concept(dest) => sink
            .row(Rf2::Relationship)
            .num(r.id)
            .num(u64::from(r.et))
            .flag(r.active)
            .num(module)
            .num(source)
            .num(dest),
        Target::Value(v) => sink
            .row(Rf2::Concrete)
            .num(r.id)
            .num(u64::from(r.et))
            .flag(r.active)
            .num(module)
            .num(source)
            .text(v),
    };
    row.num(u64::from(r.group))
        .num(r.type_id)
        .num(r.characteristic)
        .num(meta::EXISTENTIAL)
        .end()
}

fn write_relationships(
    ctx: &Ctx<'_>,
    sink: &mut Sink,
    stats: &mut Stats,
    i: u32,
    scratch: &mut Scratch,
) -> Result<(), SynthError> {
    relationships(ctx, i, scratch);
    let m = ctx.model;
    let source = m.concepts[i as usize].id;
    let module = m.module_of(i);
    for r in &scratch.rels {
        if r.active && matches!(r.target, Target::Concept(_)) {
            stats.active_relationships += 1;
            if r.type_id == meta::IS_A {
                stats.active_is_a += 1;
            }
        }
        write_relationship(sink, r, source, module)?;
    }
    Ok(())
}

/// Reasons for inactivation with their association refsets and weights.
const REASONS: [(u64, u64, f64); 5] = [
    (meta::DUPLICATE, meta::SAME_AS, 0.15),
    (meta::OUTDATED, meta::REPLACED_BY, 0.35),
    (meta::AMBIGUOUS, meta::POSSIBLY_EQUIVALENT_TO, 0.20),
    (meta::MOVED_ELSEWHERE, meta::MOVED_TO, 0.10),
    (meta::LIMITED, meta::WAS_A, 0.20),
];

/// An active association target in branch `b`. Targets are never leaves
/// of the disorder and procedure branches: those are the concepts an
/// extension may inactivate, and an association must keep pointing at an
/// active concept after layering.
pub(crate) fn association_target(ctx: &Ctx<'_>, b: Branch, rng: &mut Rng) -> u64 {
    let members = &ctx.pools.members[b as usize];
    let root = members.first().copied().unwrap_or(0);
    for _ in 0..8 {
        let Some(t) = rng.pick(members) else { break };
        let c = &ctx.model.concepts[t as usize];
        let fragile = matches!(b, Branch::Disorder | Branch::Procedure) && c.children == 0;
        if t != root && c.active && !fragile {
            return c.id;
        }
    }
    ctx.model.concepts[root as usize].id
}

/// Writes the inactivation indicator and historical associations of an
/// inactive concept.
pub(crate) fn write_inactivation(
    ctx: &Ctx<'_>,
    sink: &mut Sink,
    rng: &mut Rng,
    (b, concept, module, et): (Branch, u64, u64, u32),
) -> Result<(), SynthError> {
    let weights: Vec<f64> = REASONS.iter().map(|r| r.2).collect();
    let (reason, refset, _) = REASONS[rng.weighted(&weights)];
    sink.row(Rf2::AttributeValue)
        .uuid(rng.uuid())
        .num(u64::from(et))
        .flag(true)
        .num(module)
        .num(meta::CONCEPT_INACTIVATION)
        .num(concept)
        .num(reason)
        .end()?;
    let n = match reason {
        meta::AMBIGUOUS => 2 + rng.below(2),
        meta::LIMITED => 1 + rng.below(2),
        _ => 1,
    };
    let mut targets: Vec<u64> = Vec::with_capacity(n);
    for _ in 0..n {
        let t = association_target(ctx, b, rng);
        if !targets.contains(&t) {
            targets.push(t);
        }
    }
    for t in targets {
        sink.row(Rf2::Association)
            .uuid(rng.uuid())
            .num(u64::from(et))
            .flag(true)
            .num(module)
            .num(refset)
            .num(concept)
            .num(t)
            .end()?;
    }
    Ok(())
}

fn icd10_code(rng: &mut Rng) -> String {
    const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTVWXYZ";
    let letter = char::from(LETTERS[rng.below(LETTERS.len())]);
    let n = rng.below(100);
    if rng.chance(0.7) {
        format!("{letter}{n:02}.{}", rng.below(10))
    } else {
        format!("{letter}{n:02}")
    }
}

fn ctv3_code(rng: &mut Rng) -> String {
    const FIRST: &[u8] = b"0123456789ABCDEFGHJKLMNPQRSTUVWXYZ";
    const REST: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
    let mut s = String::with_capacity(5);
    s.push(char::from(FIRST[rng.below(FIRST.len())]));
    let dots = rng.below(3);
    for j in 0..4 {
        if j >= 4 - dots {
            s.push('.');
        } else {
            s.push(char::from(REST[rng.below(REST.len())]));
        }
    }
    s
}

/// The FSN of a synthetic concept (used in map rules).
fn fsn_and_pt(ctx: &Ctx<'_>, i: u32, terms: &mut Vec<Term>) -> Option<(String, String)> {
    let c = &ctx.model.concepts[i as usize];
    let b = ctx.model.branch(i)?;
    ctx.vocab.terms(b, c.ordinal, terms);
    let pt = terms.first()?;
    Some((format!("{} ({})", pt.text, b.def().tag), pt.text.clone()))
}

struct MapRow<'a> {
    group: u64,
    priority: u64,
    rule: &'a str,
    advice: &'a str,
    target: &'a str,
    category: u64,
}

fn write_map_row(
    sink: &mut Sink,
    rng: &mut Rng,
    (et, module, concept): (u32, u64, u64),
    r: &MapRow<'_>,
) -> Result<(), SynthError> {
    sink.row(Rf2::ExtendedMap)
        .uuid(rng.uuid())
        .num(u64::from(et))
        .flag(true)
        .num(module)
        .num(meta::ICD10_MAP)
        .num(concept)
        .num(r.group)
        .num(r.priority)
        .text(r.rule)
        .text(r.advice)
        .text(r.target)
        .num(meta::MAP_CORRELATION_NOT_SPECIFIED)
        .num(r.category)
        .end()
}

/// Refset members whose referenced component is concept `i`.
fn write_refsets(
    ctx: &Ctx<'_>,
    sink: &mut Sink,
    i: u32,
    scratch: &mut Scratch,
) -> Result<(), SynthError> {
    let m = ctx.model;
    let c = &m.concepts[i as usize];
    if !matches!(c.origin, Origin::Base | Origin::Ext) {
        return Ok(());
    }
    let Some(b) = m.branch(i) else { return Ok(()) };
    let mut rng = Rng::derive(m.seed_of(i), Stream::Refsets, u64::from(i));
    let module = m.module_of(i);
    let et = pick_et(&mut rng, ctx.hist);
    if !c.active {
        write_inactivation(ctx, sink, &mut rng, (b, c.id, module, et))?;
    }
    if !ctx.content_refsets {
        return Ok(());
    }
    use meta::SyntheticMeta;
    let simple = match b {
        Branch::Disorder | Branch::Finding => Some((SyntheticMeta::FindingRefset, 0.06)),
        Branch::Procedure => Some((SyntheticMeta::ProcedureRefset, 0.08)),
        Branch::Product | Branch::Substance => Some((SyntheticMeta::MedicationRefset, 0.10)),
        _ => None,
    };
    if let Some((refset, p)) = simple
        && c.active
        && rng.chance(p)
    {
        let active = rng.chance(0.97);
        sink.row(Rf2::Simple)
            .uuid(rng.uuid())
            .num(u64::from(et))
            .flag(active)
            .num(module)
            .num(m.synthetic(refset))
            .num(c.id)
            .end()?;
    }
    if rng.chance(0.25) {
        let code = ctv3_code(&mut rng);
        sink.row(Rf2::SimpleMap)
            .uuid(rng.uuid())
            .num(u64::from(et))
            .flag(true)
            .num(module)
            .num(meta::CTV3_SIMPLE_MAP)
            .num(c.id)
            .text(&code)
            .end()?;
    }
    if c.active && matches!(b, Branch::Disorder | Branch::Finding) && rng.chance(0.5) {
        let key = (et, module, c.id);
        let groups = if rng.chance(0.15) { 2 } else { 1 };
        for group in 1..=groups {
            let code = icd10_code(&mut rng);
            if rng.chance(0.2) {
                let findings = &ctx.pools.members[Branch::Finding as usize];
                let r = rng.pick(&findings[1.min(findings.len())..]);
                let named = r.and_then(|r| fsn_and_pt(ctx, r, &mut scratch.terms).map(|t| (r, t)));
                if let Some((r, (fsn, pt))) = named {
                    let rule = format!("IFA {} | {fsn} |", m.concepts[r as usize].id);
                    let advice = format!(
                        "IF {} CHOOSE {code} | MAP OF SOURCE CONCEPT IS CONTEXT DEPENDENT",
                        pt.to_uppercase()
                    );
                    let row = MapRow {
                        group,
                        priority: 1,
                        rule: &rule,
                        advice: &advice,
                        target: &code,
                        category: meta::MAP_CONTEXT_DEPENDENT,
                    };
                    write_map_row(sink, &mut rng, key, &row)?;
                    let other = icd10_code(&mut rng);
                    let advice = format!("ALWAYS {other}");
                    let row = MapRow {
                        group,
                        priority: 2,
                        rule: "OTHERWISE TRUE",
                        advice: &advice,
                        target: &other,
                        category: meta::MAP_PROPERLY_CLASSIFIED,
                    };
                    write_map_row(sink, &mut rng, key, &row)?;
                    continue;
                }
            }
            if rng.chance(0.05) {
                let row = MapRow {
                    group,
                    priority: 1,
                    rule: "TRUE",
                    advice: "MAP SOURCE CONCEPT CANNOT BE CLASSIFIED WITH AVAILABLE DATA",
                    target: "",
                    category: meta::MAP_CANNOT_CLASSIFY,
                };
                write_map_row(sink, &mut rng, key, &row)?;
            } else {
                let advice = format!("ALWAYS {code}");
                let row = MapRow {
                    group,
                    priority: 1,
                    rule: "TRUE",
                    advice: &advice,
                    target: &code,
                    category: meta::MAP_PROPERLY_CLASSIFIED,
                };
                write_map_row(sink, &mut rng, key, &row)?;
            }
        }
    }
    Ok(())
}

/// Writes every row owned by concept `i`.
pub(crate) fn write_concept(
    ctx: &Ctx<'_>,
    sink: &mut Sink,
    stats: &mut Stats,
    i: u32,
    scratch: &mut Scratch,
) -> Result<(), SynthError> {
    let m = ctx.model;
    let c = &m.concepts[i as usize];
    let mut rng = Rng::derive(m.seed_of(i), Stream::Concept, u64::from(i));
    let (et, status) = match c.origin {
        Origin::Meta(_) => (ctx.hist.first().copied().unwrap_or(0), meta::PRIMITIVE),
        Origin::ExtModule | Origin::ExtRefset => {
            (ctx.hist.last().copied().unwrap_or(0), meta::PRIMITIVE)
        }
        Origin::Base | Origin::Ext => {
            let et = pick_et(&mut rng, ctx.hist);
            let has_attributes = m
                .branch(i)
                .is_some_and(|b| b.def().profile != Profile::None);
            let defined = rng.chance(0.35);
            let status = if c.active && has_attributes && defined {
                meta::DEFINED
            } else {
                meta::PRIMITIVE
            };
            (et, status)
        }
    };
    if c.active {
        stats.active_concepts += 1;
    }
    sink.row(Rf2::Concept)
        .num(c.id)
        .num(u64::from(et))
        .flag(c.active)
        .num(m.module_of(i))
        .num(status)
        .end()?;
    write_descriptions(ctx, sink, stats, i, scratch)?;
    write_relationships(ctx, sink, stats, i, scratch)?;
    write_refsets(ctx, sink, i, scratch)
}
