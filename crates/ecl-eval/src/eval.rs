//! The evaluator: one [`Ctx`] per call, holding the edition, the work
//! counter and the sets already computed for sub-expressions.

use std::collections::BTreeMap;
use std::collections::HashMap;
use std::collections::btree_map::Entry;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;
use std::time::Instant;

use txmap_ecl::{
    Activity, ConceptFilter, ConceptRef, ConceptSet, DescriptionFilter, Expr, FieldComparison,
    Filter, Focus, History, MemberFilter, MemberFilterSet, MemberOf, Operator, Refinement, Span,
    SubExpr,
};
use txmap_store::sctid::association::{
    MOVED_TO, PARTIALLY_EQUIVALENT_TO, REPLACED_BY, SAME_AS, WAS_A,
};
use txmap_store::{Edition, Member, RefsetKind};

use crate::filter::dialect_id;
use crate::refine::{Compiled, SetWise, Sets};
use crate::set::{
    BITMAP_FROM, Bits, contains, difference, intersect, normalize, union, union_into,
};
use crate::{Budget, EvalError, ExpressionSubject};

pub(crate) type R<T> = Result<T, EvalError>;

/// A refinement's candidates are tested against a hierarchy focus one by
/// one (instead of building the focus) when the focus is this many times
/// bigger: a test is a search in the candidate's ancestors, several cache
/// misses, against a pass over the focus's closure slice.
const LAZY_FOCUS_RATIO: usize = 32;

/// The closure of a set whose lists hold at most this many ordinals is
/// sorted, not set in a bitmap.
const SMALL_CLOSURE: usize = 4096;

/// The ancestors of a set of at least this many members are found by a
/// walk up `Parents` through a bitmap, not from each member's packed
/// ancestors: at 832 members of `> (<< X)` the walk took half the time,
/// at 82 the bitmap's clearing and reading cost more than it saved.
const WALK_UP_FROM: usize = 64;

/// A set's closure lists, when there are at most this many, are merged
/// into the union one after another rather than sorted together:
/// merging `k` lists costs about `k` passes over the union, sorting them
/// `log(total)`.
const MERGE_LISTS: usize = 12;

/// A refinement is evaluated set-wise (`Ctx::set_wise`) when its values'
/// relationships number at most this many per concept of the focus:
/// testing a concept reads its own few relationships.
const SET_WISE_LINKS: usize = 2;

/// The concepts of a focus whose inbound relationships are counted to
/// estimate the cost of testing all of them against a reverse attribute.
const INBOUND_SAMPLE: usize = 256;

/// How often (in work units) the deadline is checked.
const CHECK_EVERY: u64 = 4096;
const OLD_FILE_META: &str =
    "a member's module or effective time (this edition file predates format 1.3: import it again)";
const OLD_FILE_INACTIVE: &str =
    "inactive refset members (this edition file predates format 1.3: import it again)";

/// `^R` over more than one concept in this many refset members walks the
/// refsets instead of looking up each concept's memberships (a search
/// among every member each) — with member filters, which a walk applies to
/// every member, it takes more concepts.
const REFSETS_SCAN_RATIO: usize = 16;
/// [`REFSETS_SCAN_RATIO`] without member filters, when a walk is a bit
/// test per member: measured on 620,000 members, 5,000 concepts' look-ups
/// took 2.4 ms against 0.2 ms for a walk, 1,000 concepts' 136 µs against
/// 172 µs.
const REFSETS_PLAIN_SCAN_RATIO: usize = 512;

/// Hashes the memo keys, node addresses: unique already, so one multiply
/// per word spreads them (SipHash showed up in per-member filter loops).
#[derive(Default, Clone, Copy)]
pub(crate) struct AddrHasher(u64);

impl Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        bytes.iter().for_each(|&b| self.write_u64(u64::from(b)));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

/// A map keyed by node address (or [`Key`]).
pub(crate) type AddrMap<K, V> = HashMap<K, V, BuildHasherDefault<AddrHasher>>;

/// What a memoised set was computed from (the node's address and kind).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Expr(usize),
    Sub(usize),
    Base(usize),
}

pub(crate) struct Ctx<'a, B: AsRef<[u8]>> {
    pub(crate) ed: &'a Edition<B>,
    budget: &'a Budget,
    work: u64,
    next_check: u64,
    memo: AddrMap<Key, Rc<Vec<u32>>>,
    /// Bitmaps of the big memoised sub-expression sets, by node address.
    bits: AddrMap<usize, Bits>,
    /// The SCTIDs of the small memoised sub-expression sets, by node
    /// address.
    ids: AddrMap<usize, Rc<Vec<u64>>>,
    /// Search terms folded once, by node address.
    pub(crate) terms: AddrMap<usize, crate::filter::Folded>,
    /// SCTIDs already looked up: the expression's concepts (checked, then
    /// evaluated), and the few that filters ask for (modules, statuses,
    /// types). A cell, since the check reads the edition only.
    ordinals: std::cell::RefCell<Vec<(u64, Option<u32>)>>,
    /// Scratch space for folding texts.
    pub(crate) fold_buf: String,
    /// The language refsets of dialect filters' aliases, by node address.
    pub(crate) dialects: AddrMap<usize, Rc<[u64]>>,
    /// Description filter blocks compiled to tests on records, by node
    /// address.
    pub(crate) row_tests: AddrMap<usize, Rc<crate::filter::RowTest>>,
    /// The module filter set last resolved, by node address.
    pub(crate) last_modules: Option<(usize, Rc<Vec<u32>>)>,
    /// The descriptions of the concept being tested, reused.
    pub(crate) desc_buf: Vec<txmap_store::Description<'a>>,
    /// The acceptability rows of the description being tested, reused.
    pub(crate) accept_buf: Vec<(u64, u64)>,
    /// The relationships of the candidate being tested, reused.
    pub(crate) rels: Vec<crate::refine::Rel<'a>>,
}

/// Whether a sub-expression's concept filters ask for inactive concepts,
/// which makes its `*` every concept.
fn all_concepts(s: &SubExpr) -> bool {
    s.filters.iter().any(|f| {
        matches!(f, Filter::Concept(cs, _)
            if cs.iter().any(|c| matches!(c, ConceptFilter::Active(a, _) if a.keeps(false))))
    })
}

/// A bare `*`: as an attribute name or value, any type or target.
pub(crate) fn is_wildcard(s: &SubExpr) -> bool {
    matches!(s.focus, Focus::Any(_))
        && s.operator.is_none()
        && s.member_of.is_none()
        && s.filters.is_empty()
        && s.history.is_none()
}

fn not_supported(what: impl Into<String>, span: Span) -> EvalError {
    EvalError::NotSupported {
        what: what.into(),
        span,
    }
}

impl<'a, B: AsRef<[u8]>> Ctx<'a, B> {
    pub(crate) fn new(ed: &'a Edition<B>, budget: &'a Budget) -> Self {
        Ctx {
            ed,
            budget,
            work: 0,
            next_check: 0,
            memo: AddrMap::default(),
            bits: AddrMap::default(),
            ids: AddrMap::default(),
            terms: AddrMap::default(),
            ordinals: std::cell::RefCell::new(Vec::new()),
            fold_buf: String::new(),
            dialects: AddrMap::default(),
            row_tests: AddrMap::default(),
            last_modules: None,
            desc_buf: Vec::new(),
            accept_buf: Vec::new(),
            rels: Vec::new(),
        }
    }

    /// Counts `n` units of work against the budget: inlined, with the
    /// limits' tests out of line, since a walk ticks once a concept.
    #[inline]
    pub(crate) fn tick(&mut self, n: usize) -> R<()> {
        self.work = self.work.saturating_add(n as u64);
        if self.work >= self.next_check || self.work > self.budget.max_work {
            return self.check_budget();
        }
        Ok(())
    }

    #[cold]
    fn check_budget(&mut self) -> R<()> {
        if self.work > self.budget.max_work {
            return Err(EvalError::TooCostly {
                why: format!("work limit of {} units exceeded", self.budget.max_work),
            });
        }
        if self.work >= self.next_check {
            self.next_check = self.work.saturating_add(CHECK_EVERY);
            if self.budget.deadline.is_some_and(|d| Instant::now() >= d) {
                return Err(EvalError::TooCostly {
                    why: "deadline passed".into(),
                });
            }
        }
        Ok(())
    }

    pub(crate) fn concept(&self, r: &ConceptRef) -> R<u32> {
        self.ordinal_of(r.id).ok_or(EvalError::UnknownConcept {
            id: r.id,
            span: r.span,
        })
    }

    /// [`Edition::ordinal`], remembering the first few SCTIDs asked for:
    /// the check of an expression asks for its concepts before the
    /// evaluation does, and filters ask for the same handful (modules,
    /// types) concept after concept.
    pub(crate) fn ordinal_of(&self, id: u64) -> Option<u32> {
        let mut known = self.ordinals.borrow_mut();
        if let Some(&(_, o)) = known.iter().find(|(x, _)| *x == id) {
            return o;
        }
        let o = self.ed.ordinal(id);
        if known.len() < 32 {
            known.push((id, o));
        }
        o
    }

    fn memo(&mut self, key: Key, f: impl FnOnce(&mut Self) -> R<Vec<u32>>) -> R<Rc<Vec<u32>>> {
        if let Some(v) = self.memo.get(&key) {
            return Ok(Rc::clone(v));
        }
        let v = Rc::new(f(self)?);
        self.memo.insert(key, Rc::clone(&v));
        Ok(v)
    }

    pub(crate) fn memo_sub(&mut self, s: &SubExpr) -> R<Rc<Vec<u32>>> {
        self.memo(Key::Sub(std::ptr::from_ref(s) as usize), |cx| cx.sub(s))
    }

    /// Whether `o` is in `memo_sub(s)`: a binary search, or for a big set a
    /// bit test in a bitmap made once.
    pub(crate) fn in_memo_sub(&mut self, s: &SubExpr, o: u32) -> R<bool> {
        let v = self.memo_sub(s)?;
        if v.len() < BITMAP_FROM {
            return Ok(contains(&v, o));
        }
        let concepts = self.ed.concept_count();
        let bits = self
            .bits
            .entry(std::ptr::from_ref(s) as usize)
            .or_insert_with(|| Bits::of(concepts, &v));
        Ok(bits.contains(o))
    }

    /// The SCTIDs of a concept set, sorted, however big.
    pub(crate) fn sorted_set_ids(&mut self, set: &ConceptSet) -> R<Rc<Vec<u64>>> {
        match set {
            ConceptSet::Set(refs) => {
                Ok(Rc::new(normalize_ids(refs.iter().map(|r| r.id).collect())))
            }
            ConceptSet::Sub(s) => self.sorted_sub_ids(s),
        }
    }

    /// Every SCTID of `memo_sub(s)`, sorted, made once per evaluation: for
    /// tests of values given by SCTID (refset fields, modules), which
    /// search them, or walk them with a cursor in SCTID order, instead of
    /// searching every concept of the edition for each value.
    fn sorted_sub_ids(&mut self, s: &SubExpr) -> R<Rc<Vec<u64>>> {
        let key = std::ptr::from_ref(s) as usize;
        if let Some(ids) = self.ids.get(&key) {
            return Ok(Rc::clone(ids));
        }
        let v = self.memo_sub(s)?;
        self.tick(v.len())?;
        let mut ids = (v.iter())
            .map(|&o| self.ed.sctid(o))
            .collect::<Result<Vec<u64>, _>>()?;
        // Ordinals do not follow SCTIDs (format 7).
        ids.sort_unstable();
        let ids = Rc::new(ids);
        self.ids.insert(key, Rc::clone(&ids));
        Ok(ids)
    }

    fn memo_expr(&mut self, e: &Expr) -> R<Rc<Vec<u32>>> {
        self.memo(Key::Expr(std::ptr::from_ref(e) as usize), |cx| cx.expr(e))
    }

    fn memo_base(&mut self, s: &SubExpr) -> R<Rc<Vec<u32>>> {
        self.memo(Key::Base(std::ptr::from_ref(s) as usize), |cx| cx.base(s))
    }

    // ----- up-front checks ------------------------------------------------

    /// Checks every concept reference and refuses what is not supported,
    /// before any evaluation, so that errors do not depend on the data.
    pub(crate) fn check(&self, e: &Expr) -> R<()> {
        match e {
            Expr::And(xs, _) | Expr::Or(xs, _) => xs.iter().try_for_each(|x| self.check(x)),
            Expr::Minus(a, b, _) => {
                self.check(a)?;
                self.check(b)
            }
            Expr::Refined(s, r, _) => {
                self.check_sub(s)?;
                self.check_refinement(r)
            }
            Expr::Dotted(s, attrs, _) => {
                self.check_sub(s)?;
                attrs.iter().try_for_each(|a| self.check_sub(a))
            }
            Expr::Sub(s) => self.check_sub(s),
        }
    }

    fn check_sub(&self, s: &SubExpr) -> R<()> {
        match &s.focus {
            Focus::Concept(r) => {
                self.concept(r)?;
            }
            Focus::Any(_) => {}
            Focus::Nested(e) => self.check(e)?,
            Focus::AlternateId { scheme, span, .. } => {
                self.schemes(scheme, *span)?;
            }
        }
        for set in &s.member_filters {
            for f in &set.filters {
                match f {
                    MemberFilter::Field {
                        comparison: FieldComparison::Concept { value, .. },
                        ..
                    } => self.check_sub(value)?,
                    MemberFilter::Field { .. } => {}
                    MemberFilter::Active(a, span) if a.keeps(false) => {
                        if !self.ed.has_inactive_members() {
                            return Err(not_supported(OLD_FILE_INACTIVE, *span));
                        }
                    }
                    MemberFilter::Active(..) => {}
                    MemberFilter::Module(m) => {
                        self.check_set(&m.modules)?;
                        if !self.ed.has_member_meta() {
                            return Err(not_supported(OLD_FILE_META, set.span));
                        }
                    }
                    MemberFilter::EffectiveTime(_) => {
                        if !self.ed.has_member_meta() {
                            return Err(not_supported(OLD_FILE_META, set.span));
                        }
                    }
                }
            }
        }
        for f in &s.filters {
            match f {
                Filter::Description(ds, span) => {
                    for d in ds {
                        match d {
                            DescriptionFilter::TypeId { types, .. } => self.check_set(types)?,
                            DescriptionFilter::DialectId { dialects, .. } => {
                                for (set, _) in dialects {
                                    self.check_set(set)?;
                                }
                            }
                            DescriptionFilter::Dialect { dialects, .. } => {
                                for (alias, _) in dialects {
                                    if dialect_id(alias).is_none() {
                                        return Err(not_supported(
                                            format!("dialect alias {alias}"),
                                            *span,
                                        ));
                                    }
                                }
                            }
                            DescriptionFilter::Module(m) => self.check_set(&m.modules)?,
                            _ => {}
                        }
                    }
                }
                Filter::Concept(cs, _) => {
                    for c in cs {
                        match c {
                            ConceptFilter::DefinitionStatusId { ids, .. } => self.check_set(ids)?,
                            ConceptFilter::Module(m) => self.check_set(&m.modules)?,
                            _ => {}
                        }
                    }
                }
            }
        }
        match &s.history {
            Some(History::Subset(e)) => self.check(e),
            _ => Ok(()),
        }
    }

    fn check_set(&self, set: &ConceptSet) -> R<()> {
        match set {
            ConceptSet::Set(refs) => refs.iter().try_for_each(|r| self.concept(r).map(|_| ())),
            ConceptSet::Sub(s) => self.check_sub(s),
        }
    }

    fn check_refinement(&self, r: &Refinement) -> R<()> {
        match r {
            Refinement::And(xs) | Refinement::Or(xs) => {
                xs.iter().try_for_each(|x| self.check_refinement(x))
            }
            Refinement::Group(g) => self.check_refinement(&g.attributes),
            Refinement::Attribute(a) => {
                self.check_sub(&a.name)?;
                match &a.comparison {
                    txmap_ecl::Comparison::Concept { value, .. } => self.check_sub(value),
                    _ if a.reverse => Err(not_supported(
                        "reverse attribute with a concrete value",
                        a.span,
                    )),
                    _ => Ok(()),
                }
            }
        }
    }

    // ----- sets -------------------------------------------------------------

    pub(crate) fn expr(&mut self, e: &Expr) -> R<Vec<u32>> {
        self.tick(1)?;
        match e {
            Expr::And(xs, _) => {
                let mut acc: Option<Vec<u32>> = None;
                for x in xs {
                    if acc.as_ref().is_some_and(Vec::is_empty) {
                        break;
                    }
                    let v = self.expr(x)?;
                    acc = Some(match acc {
                        None => v,
                        Some(a) => intersect(&a, &v),
                    });
                }
                Ok(acc.unwrap_or_default())
            }
            Expr::Or(xs, _) => {
                let mut acc = Vec::new();
                for x in xs {
                    let v = self.expr(x)?;
                    self.tick(v.len())?;
                    acc = union(&acc, &v);
                }
                Ok(acc)
            }
            Expr::Minus(a, b, _) => {
                let a = self.expr(a)?;
                if a.is_empty() {
                    return Ok(a);
                }
                Ok(difference(&a, &self.expr(b)?))
            }
            Expr::Refined(s, r, _) => self.refined(s, r),
            Expr::Dotted(s, attrs, _) => self.dotted(s, attrs),
            Expr::Sub(s) => self.sub(s),
        }
    }

    pub(crate) fn sub(&mut self, s: &SubExpr) -> R<Vec<u32>> {
        let (mut set, filters) = match (&s.focus, &s.member_of, s.operator, &s.filters[..]) {
            // `*` under a block of concept filters: one pass over the
            // concept records, not `*` built and then each member looked up.
            (Focus::Any(_), None, None, [Filter::Concept(cs, _), rest @ ..]) => {
                (self.any_passing(cs, all_concepts(s))?, rest)
            }
            _ => {
                let mut set = self.base(s)?;
                if let Some(op) = s.operator {
                    set = self.apply(op, &set)?;
                }
                (set, &s.filters[..])
            }
        };
        for f in filters {
            set = self.filter(f, set)?;
        }
        match &s.history {
            Some(h) => self.history(h, set),
            None => Ok(set),
        }
    }

    /// The focus, and the members of its refsets with `^`.
    fn base(&mut self, s: &SubExpr) -> R<Vec<u32>> {
        if let (Focus::Any(_), [], Some(MemberOf::Refsets), []) = (
            &s.focus,
            &s.filters[..],
            &s.member_of,
            &s.member_filters[..],
        ) {
            // `^R *`: a concept's record says whether it is in `*`; the
            // hierarchy is not built to be searched.
            let table = self.ed.concept_table()?;
            return self.refsets_with_any(|o| table.facts(o).is_some_and(|c| c.in_hierarchy));
        }
        let focus = match &s.focus {
            Focus::Concept(r) => vec![self.concept(r)?],
            Focus::Any(_) if all_concepts(s) => {
                let n = self.ed.concept_count();
                self.tick(n as usize)?;
                (0..n).collect()
            }
            Focus::Any(_) if !s.filters.is_empty() => self.filtered_any()?,
            Focus::Any(_) => self.hierarchy()?,
            Focus::Nested(e) => self.expr(e)?,
            Focus::AlternateId { scheme, id, span } => self.alternate(scheme, id, *span)?,
        };
        match &s.member_of {
            None => Ok(focus),
            Some(MemberOf::Refsets) => self.refsets_containing(&focus, &s.member_filters, s.span),
            Some(m) => self.members(m, &focus, &s.member_filters, s.span),
        }
    }

    /// The identifier schemes a scheme alias names: those used by the
    /// edition's alternate identifiers whose concept has an active
    /// description equal to the alias, or starting with it as a word
    /// (`LOINC` names 30051010000102 |LOINC code identifier scheme|), any
    /// case. The specification gives aliases no registry, so they are read
    /// from the scheme concepts' terms.
    fn schemes(&self, alias: &str, span: Span) -> R<Vec<u64>> {
        let ed = self.ed;
        if !ed.has_identifiers() {
            return Err(not_supported(
                "alternate identifiers (this edition file predates format 1.3: import it again)",
                span,
            ));
        }
        let mut found = Vec::new();
        for scheme in ed.identifier_schemes()? {
            let Some(o) = ed.ordinal(scheme) else {
                continue;
            };
            let named = ed.descriptions(o)?.iter().any(|d| {
                d.active
                    && d.term
                        .get(..alias.len())
                        .is_some_and(|head| head.eq_ignore_ascii_case(alias))
                    && d.term
                        .get(alias.len()..)
                        .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric()))
            });
            if named {
                found.push(scheme);
            }
        }
        if found.is_empty() {
            return Err(not_supported(
                format!("identifier scheme {alias} (no scheme of the edition is named so)"),
                span,
            ));
        }
        Ok(found)
    }

    /// `scheme#id`: the concepts that `id` identifies in the schemes the
    /// alias names (none if it identifies nothing, as an expression over
    /// concepts the edition does not map).
    fn alternate(&mut self, scheme: &str, id: &str, span: Span) -> R<Vec<u32>> {
        let mut out = Vec::new();
        for s in self.schemes(scheme, span)? {
            self.tick(1)?;
            if let Some(component) = self.ed.by_identifier(s, id)? {
                out.extend(self.ed.ordinal(component));
            }
        }
        Ok(normalize(out))
    }

    /// The root and its descendants: `*` (memoised with the expression
    /// around it, so built once per evaluation).
    /// `*` under a filter: the root and its descendants, and the active
    /// concepts with no path to it.
    fn filtered_any(&mut self) -> R<Vec<u32>> {
        let off = self.ed.active_off_hierarchy()?;
        let Some(root) = self.ed.root() else {
            self.tick(off.len())?;
            return Ok(off.to_vec());
        };
        let d = self.ed.descendants(root)?;
        self.tick(d.len() + off.len())?;
        // The closure lists are sorted: the root and the concepts off it go
        // in at their places, in one merge, not by a sort of the whole.
        let mut extra = Vec::with_capacity(off.len() + 1);
        let at = off.partition_point(|&o| o < root);
        extra.extend_from_slice(&off[..at]);
        extra.push(root);
        extra.extend_from_slice(&off[at..]);
        let mut v = Vec::with_capacity(d.len() + extra.len());
        let mut rest = extra.iter().copied().peekable();
        for o in d.iter() {
            while let Some(e) = rest.next_if(|&e| e < o) {
                v.push(e);
            }
            v.push(o);
        }
        v.extend(rest);
        Ok(v)
    }

    /// `*` under the concept filters `cs`: the concepts of the hierarchy
    /// and the active ones off it (every concept when `all`) that pass.
    fn any_passing(&mut self, cs: &[ConceptFilter], all: bool) -> R<Vec<u32>> {
        let test = self.concept_test(cs)?.within_any(all);
        let table = self.ed.concept_table()?;
        self.tick(table.len())?;
        Ok(table.select(|c| test.holds(c)))
    }

    /// `*`: the root and its descendants.
    fn hierarchy(&mut self) -> R<Vec<u32>> {
        let Some(root) = self.ed.root() else {
            return Ok(Vec::new());
        };
        let d = self.ed.descendants(root)?;
        self.tick(d.len())?;
        // The closure lists are sorted: the root goes in at its place, in
        // one pass, not by a sort of the whole hierarchy.
        Ok(d.to_vec_with(root))
    }

    /// Whether `o` is in `*` (in the hierarchy; under a filter, also an
    /// active concept off it).
    fn in_any(&mut self, o: u32, filtered: bool) -> R<bool> {
        self.tick(1)?;
        Ok(self.ed.in_hierarchy(o)? || (filtered && self.ed.is_active(o)?))
    }

    fn apply(&mut self, op: Operator, set: &[u32]) -> R<Vec<u32>> {
        use Operator::*;
        Ok(match op {
            DescendantOf => self.closure(set, true)?,
            DescendantOrSelfOf => match set {
                [o] => self.closure_or_self(*o, true)?,
                _ => union(&self.closure(set, true)?, set),
            },
            ChildOf => self.adjacent(set, true)?,
            ChildOrSelfOf => union(&self.adjacent(set, true)?, set),
            AncestorOf => self.closure(set, false)?,
            AncestorOrSelfOf => match set {
                [o] => self.closure_or_self(*o, false)?,
                _ => union(&self.closure(set, false)?, set),
            },
            ParentOf => self.adjacent(set, false)?,
            ParentOrSelfOf => union(&self.adjacent(set, false)?, set),
            // The members that are no member's descendant (ancestor): one
            // union of closures, in which members below (above) others are
            // skipped, instead of a search of the set for every ancestor of
            // every member.
            Top => difference(set, &self.closure(set, true)?),
            // A member with a child in the set has a descendant in it; one
            // without (a leaf of the set, most members) needs its
            // descendants searched — usually none. The union of every
            // member's ancestors took ten times longer on a whole
            // hierarchy.
            Bottom => {
                let bits =
                    (set.len() >= BITMAP_FROM).then(|| Bits::of(self.ed.concept_count(), set));
                let inside = |x: u32| match &bits {
                    Some(b) => b.contains(x),
                    None => contains(set, x),
                };
                let mut out = Vec::new();
                for &o in set {
                    let children = self.ed.children(o)?;
                    self.tick(children.len() + 1)?;
                    if children.any(inside) {
                        continue;
                    }
                    // A leaf of the hierarchy has no descendants to search.
                    if children.is_empty() {
                        out.push(o);
                        continue;
                    }
                    let d = self.ed.descendants(o)?;
                    self.tick(d.len())?;
                    if !d.any(inside) {
                        out.push(o);
                    }
                }
                out
            }
        })
    }

    /// `<< o` or `>> o`: the stored list with `o` in its place, built in
    /// one copy (a copy and then an insertion moved the list twice, most
    /// of the time of `<<` on a big concept).
    fn closure_or_self(&mut self, o: u32, down: bool) -> R<Vec<u32>> {
        let l = if down {
            self.ed.descendants(o)?
        } else {
            self.ed.ancestors(o)?
        };
        self.tick(l.len())?;
        self.ed.read_ahead(&l);
        Ok(l.to_vec_with(o))
    }

    /// Proper descendants (`down`) or ancestors of a set, from the closure
    /// index. Members are visited in decreasing closure size, which puts
    /// every member before its descendants (ancestors), so a member already
    /// in the union brings nothing new and is skipped.
    fn closure(&mut self, set: &[u32], down: bool) -> R<Vec<u32>> {
        let ed = self.ed;
        let get = |o| {
            if down {
                ed.descendants(o)
            } else {
                ed.ancestors(o)
            }
        };
        if let [o] = set {
            let l = get(*o)?;
            self.tick(l.len())?;
            ed.read_ahead(&l);
            return Ok(l.to_vec());
        }
        if !down && set.len() >= WALK_UP_FROM {
            return self.ancestors_of_big_set(set);
        }
        // Each member's closure size and ordinal as one `u64`, to sort by;
        // the lists are looked up again where they are read (most members
        // of a big set are skipped), since a vector of list views was more
        // than the cache holds and writing it cost more than the union.
        // Members with empty lists (leaves, most of a hierarchy) add
        // nothing and are left out of the sort. Descendants are sized by
        // their bound, read from the index without opening the list.
        let size = |o| {
            if down {
                ed.descendants_bound(o)
            } else {
                ed.ancestors(o).map(|l| l.len())
            }
        };
        let mut order = Vec::new();
        let mut total = 0;
        for &o in set {
            let n = size(o)?;
            total += n;
            if n > 0 {
                order.push((n as u64) << 32 | u64::from(o));
            }
        }
        self.tick(set.len())?;
        // A few ordinals in all: sorted, not set in a bitmap of every
        // concept (zeroing and reading it back cost more). Descendants are
        // counted by their bounds here: counting the lists exactly (when
        // the bounds' sum is between one and four times the threshold)
        // took the sorting way more often, which was slower on some sets
        // and faster on others: 12 → 35 µs on `!!> (<< X)` of 700
        // concepts, 10 → 7 µs on one of 200.
        if total <= SMALL_CLOSURE {
            self.tick(total)?;
            // A few lists (each ascending): merged one into the union after
            // another, which costs less than sorting them all together
            // (the sort was two thirds of `> (<< X)` on ten members).
            if order.len() <= MERGE_LISTS {
                // Biggest closure first, so a member already in the union
                // (an ancestor or descendant of one merged) brings nothing.
                order.sort_unstable_by(|a, b| b.cmp(a));
                let (mut out, mut next, mut list) = (Vec::new(), Vec::new(), Vec::new());
                for key in order {
                    if out.binary_search(&(key as u32)).is_ok() {
                        continue;
                    }
                    list.clear();
                    get(key as u32)?.append_to(&mut list);
                    union_into(&out, &list, &mut next);
                    std::mem::swap(&mut out, &mut next);
                }
                return Ok(out);
            }
            let mut out = Vec::with_capacity(total);
            for key in order {
                get(key as u32)?.append_to(&mut out);
            }
            return Ok(normalize(out));
        }
        if !down {
            return self.ancestors_of_big_set(set);
        }
        order.sort_unstable_by(|a, b| b.cmp(a));
        let mut bits = Bits::new(ed.concept_count());
        for key in order {
            let o = key as u32;
            if bits.contains(o) {
                continue;
            }
            let l = get(o)?;
            self.tick(l.len())?;
            l.iter().for_each(|x| bits.insert(x));
        }
        self.tick(ed.concept_count() as usize / 64)?;
        Ok(bits.to_vec())
    }

    /// The proper ancestors of a big set, by a walk up `Parents`: each
    /// concept that goes into the union has its parents read once, and a
    /// parent already in it is not walked again. No member's (packed)
    /// ancestors are decoded. The parent lists are one view, found once
    /// (`Edition::parent_lists`): a section lookup a concept was a quarter
    /// of the walk, and the view halved `> (<< X)` of a few thousand.
    fn ancestors_of_big_set(&mut self, set: &[u32]) -> R<Vec<u32>> {
        let ed = self.ed;
        let lists = ed.parent_lists()?;
        let mut bits = Bits::new(ed.concept_count());
        let mut stack = Vec::new();
        for &o in set {
            // A member already in the union was walked from there, as
            // another member's ancestor.
            if bits.contains(o) {
                continue;
            }
            stack.push(o);
            while let Some(x) = stack.pop() {
                let parents = lists.get(x)?;
                self.tick(parents.len() + 1)?;
                for p in parents.iter() {
                    if !bits.contains(p) {
                        bits.insert(p);
                        stack.push(p);
                    }
                }
            }
        }
        self.tick(ed.concept_count() as usize / 64)?;
        Ok(bits.to_vec())
    }

    /// Children (`down`) or parents of a set.
    fn adjacent(&mut self, set: &[u32], down: bool) -> R<Vec<u32>> {
        let mut out = Vec::new();
        for &o in set {
            let l = if down {
                self.ed.children(o)?
            } else {
                self.ed.parents(o)?
            };
            self.tick(l.len() + 1)?;
            out.extend(l.iter());
        }
        Ok(normalize(out))
    }

    // ----- reference sets ---------------------------------------------------

    fn members(
        &mut self,
        m: &MemberOf,
        refsets: &[u32],
        filters: &[MemberFilterSet],
        span: Span,
    ) -> R<Vec<u32>> {
        let ed = self.ed;
        if let ([r], MemberOf::Components, []) = (refsets, m, filters) {
            // `^ R` alone: the refset's concepts as stored (checked
            // strictly ascending as they are copied), with no second pass.
            let id = ed.sctid(*r)?;
            self.tick(ed.refset(id).map_or(0, |i| i.member_count as usize) + 1)?;
            return Ok(ed.member_concepts(id)?);
        }
        let mut out = Vec::new();
        // Several refsets' concepts: set in a bitmap, not merged pairwise.
        let mut all = (refsets.len() > 2).then(|| Bits::new(ed.concept_count()));
        for &r in refsets {
            let id = ed.sctid(r)?;
            let Some(info) = ed.refset(id) else {
                continue;
            };
            if matches!(m, MemberOf::Components) && filters.is_empty() {
                self.tick(info.member_count as usize + 1)?;
                if let (Some(bits), Some(view)) = (all.as_mut(), ed.member_ordinals(id)?) {
                    view.iter().for_each(|o| bits.insert(o));
                    continue;
                }
                let concepts = ed.member_concepts(id)?;
                out = if out.is_empty() {
                    concepts
                } else {
                    union(&out, &concepts)
                };
                continue;
            }
            let names = info.field_names();
            let checks = self.member_checks(names, filters, span)?;
            // `^ R {{ M referencedComponentId = X }}` alone: the refset's
            // concepts in (or out of) X, a set operation.
            if let (
                MemberOf::Components,
                [
                    MemberCheck::Concept {
                        column: Column::Component,
                        equal,
                        expr,
                        ..
                    },
                    MemberCheck::Active(Activity::Active),
                ],
            ) = (m, checks.as_slice())
            {
                self.tick(info.member_count as usize + 1)?;
                let concepts = ed.member_concepts(id)?;
                let x = self.memo_sub(expr)?;
                let kept = if *equal {
                    intersect(&concepts, &x)
                } else {
                    difference(&concepts, &x)
                };
                out = union(&out, &kept);
                continue;
            }
            let fields = match m {
                MemberOf::Fields(fields) => fields
                    .iter()
                    .map(|f| Ok((f, Column::find(names, f, span)?)))
                    .collect::<R<Vec<_>>>()?,
                _ => Vec::new(),
            };
            let inactive = if wants_inactive(filters) {
                Some(ed.inactive_members_iter(id)?)
            } else {
                None
            };
            let table = ed.member_table(id)?;
            self.tick(table.len() + inactive.as_ref().map_or(0, |i| i.len()) + 1)?;
            // The checks that the columns answer, each distinct value
            // tested once; the rest, and uncoded values, by the row.
            let coded = checks
                .iter()
                .map(|c| self.coded(c, &table))
                .collect::<R<Vec<_>>>()?;
            // The passing active members' concepts are read by member
            // (`MemberConcepts`); the inactive ones' are searched for,
            // their components coming in ascending order.
            let (mut concepts, mut inactive_components) = (Vec::new(), Vec::new());
            let mut projected = Vec::new();
            // `^ [fields]` over coded columns marks the values it uses, and
            // reads each used value once, after the scan.
            let mut dictionaries = Vec::new();
            for &(_, column) in &fields {
                dictionaries.push(match column {
                    Column::Field(c) if c < table.columns() => {
                        let values = table.dictionary(c)?;
                        let used = vec![false; values.len()];
                        Some(UsedValues {
                            column: c,
                            values,
                            used,
                        })
                    }
                    _ => None,
                });
            }
            for i in 0..table.len() {
                let mut row = None;
                let mut passes = true;
                for (check, coded) in checks.iter().zip(&coded) {
                    let pass = match coded.as_ref().and_then(|c| c.lookup(&table, i)) {
                        Some(pass) => pass,
                        None => {
                            let member = match &row {
                                Some(member) => member,
                                None => row.insert(table.member(i)?),
                            };
                            self.member_passes(member, std::slice::from_ref(check))?
                        }
                    };
                    if !pass {
                        passes = false;
                        break;
                    }
                }
                if !passes {
                    continue;
                }
                match m {
                    MemberOf::Components => concepts.extend(table.concept(i)?),
                    MemberOf::Refsets => {}
                    MemberOf::Fields(_)
                        if mark_used(&table, i, &fields, &mut dictionaries, &mut concepts) => {}
                    _ => {
                        let member = match row {
                            Some(member) => member,
                            None => table.member(i)?,
                        };
                        project(m, &member, &fields, names, &mut projected, span)?;
                    }
                }
            }
            for (&(f, _), d) in fields.iter().zip(&dictionaries) {
                if let Some(UsedValues { values, used, .. }) = d {
                    for (v, _) in values.iter().zip(used).filter(|(_, used)| **used) {
                        push_id(&mut projected, f, v, span)?;
                    }
                }
            }
            for member in inactive.into_iter().flatten() {
                let member = &member?;
                if !self.member_passes(member, &checks)? {
                    continue;
                }
                match m {
                    MemberOf::Components => inactive_components.push(member.component),
                    MemberOf::Refsets => {}
                    _ => project(m, member, &fields, names, &mut projected, span)?,
                }
            }
            for concepts in [
                txmap_store::sorted_unique(concepts, ed.concept_count()),
                ed.ordinals_of_sorted(inactive_components)?,
                ed.ordinals_of_sorted(normalize_ids(projected))?,
            ] {
                if !concepts.is_empty() {
                    out = if out.is_empty() {
                        concepts
                    } else {
                        union(&out, &concepts)
                    };
                }
            }
        }
        if let Some(bits) = all {
            out = union(&out, &bits.to_vec());
        }
        // One refset's components, and unions, come out strictly
        // ascending: checked in one pass, not sorted and deduplicated
        // again (a third of `^ R`'s time).
        if out.is_sorted_by(|a, b| a < b) {
            Ok(out)
        } else {
            Ok(normalize(out))
        }
    }

    /// The refsets with an active member among the concepts `inside`
    /// holds: each refset's concepts against it, the first one in it
    /// deciding.
    fn refsets_with_any(&mut self, inside: impl Fn(u32) -> bool) -> R<Vec<u32>> {
        let ed = self.ed;
        let mut out = Vec::new();
        let ids: Vec<u64> = ed.refsets().map(|r| r.id).collect();
        for id in ids {
            let Some(refset) = ed.ordinal(id) else {
                continue;
            };
            let hit = match ed.member_ordinals(id)? {
                Some(view) => {
                    let at = view.position(&inside);
                    self.tick(at.map_or(view.len(), |i| i + 1) + 1)?;
                    at.is_some()
                }
                None => {
                    let members = ed.member_concepts(id)?;
                    self.tick(members.len() + 1)?;
                    members.iter().any(|&o| inside(o))
                }
            };
            if hit {
                out.push(refset);
            }
        }
        Ok(normalize(out))
    }

    /// `^R`: the refsets with an active member (passing the member
    /// filters) whose referenced component is one of `concepts`. A few
    /// concepts look up their memberships; many (more than one in
    /// [`REFSETS_SCAN_RATIO`] of all members) walk every refset instead.
    fn refsets_containing(
        &mut self,
        concepts: &[u32],
        filters: &[MemberFilterSet],
        span: Span,
    ) -> R<Vec<u32>> {
        let ed = self.ed;
        let total: usize = ed.refsets().map(|r| r.member_count as usize).sum();
        let mut out = Vec::new();
        let inactive = wants_inactive(filters);
        // Only active memberships are indexed by component.
        let ratio = if filters.is_empty() {
            REFSETS_PLAIN_SCAN_RATIO
        } else {
            REFSETS_SCAN_RATIO
        };
        if !inactive && concepts.len().saturating_mul(ratio) < total {
            // The filters' tests, per refset (its columns), made once.
            let mut checks: BTreeMap<u64, Vec<MemberCheck<'_>>> = BTreeMap::new();
            // In SCTID order, so that the searches of `ComponentMembers`
            // go one way through it (ordinals do not follow SCTIDs).
            let mut ids = (concepts.iter())
                .map(|&c| ed.sctid(c))
                .collect::<Result<Vec<u64>, _>>()?;
            ids.sort_unstable();
            for id in ids {
                let members = ed.component_refsets(id)?;
                self.tick(members.len() + 1)?;
                for member in &members {
                    if !filters.is_empty() {
                        let tests = match checks.entry(member.refset) {
                            Entry::Occupied(e) => e.into_mut(),
                            Entry::Vacant(e) => {
                                let names = ed.refset(member.refset).map(|r| r.field_names());
                                e.insert(self.member_checks(
                                    names.unwrap_or_default(),
                                    filters,
                                    span,
                                )?)
                            }
                        };
                        if !self.member_passes(member, tests)? {
                            continue;
                        }
                    }
                    out.extend(ed.ordinal(member.refset));
                }
            }
            return Ok(normalize(out));
        }
        let wanted = crate::set::Bits::of(ed.concept_count(), concepts);
        if filters.is_empty() {
            return self.refsets_with_any(|o| wanted.contains(o));
        }
        let mut refsets: Vec<_> = ed.refsets().map(|r| (r.id, r.field_names())).collect();
        if inactive {
            refsets.extend(ed.inactive_refsets().map(|r| (r.id, r.field_names())));
            refsets.sort_by_key(|&(id, _)| id);
            refsets.dedup_by_key(|&mut (id, _)| id);
        }
        for (id, names) in refsets {
            let Some(refset) = ed.ordinal(id) else {
                continue;
            };
            let checks = self.member_checks(names, filters, span)?;
            let members = ed.members_iter(id)?;
            let rest = if inactive {
                Some(ed.inactive_members_iter(id)?)
            } else {
                None
            };
            self.tick(members.len() + rest.as_ref().map_or(0, |r| r.len()) + 1)?;
            for member in members.chain(rest.into_iter().flatten()) {
                let member = &member?;
                if ed
                    .ordinal(member.component)
                    .is_some_and(|o| wanted.contains(o))
                    && self.member_passes(member, &checks)?
                {
                    out.push(refset);
                    break;
                }
            }
        }
        Ok(normalize(out))
    }

    /// The member filters as tests on a refset's columns (with the
    /// default `active = 1` when no filter says otherwise).
    fn member_checks<'f>(
        &mut self,
        names: &[String],
        filters: &'f [MemberFilterSet],
        span: Span,
    ) -> R<Vec<MemberCheck<'f>>> {
        let mut checks = Vec::new();
        for set in filters {
            for f in &set.filters {
                checks.push(match f {
                    MemberFilter::Field {
                        name,
                        comparison: FieldComparison::Concept { equal, value },
                    } => MemberCheck::Concept {
                        column: Column::find(names, name, span)?,
                        equal: *equal,
                        ids: self.sorted_sub_ids(value)?,
                        expr: value,
                    },
                    MemberFilter::Field { name, comparison } => {
                        MemberCheck::Field(Column::find(names, name, span)?, comparison)
                    }
                    MemberFilter::Active(active, _) => MemberCheck::Active(*active),
                    MemberFilter::Module(m) => MemberCheck::Module {
                        equal: m.equal,
                        modules: self.sorted_set_ids(&m.modules)?,
                    },
                    MemberFilter::EffectiveTime(t) => MemberCheck::Time(t),
                });
            }
        }
        // Without an `active` filter, members are the active ones.
        if !checks.iter().any(|c| matches!(c, MemberCheck::Active(_))) {
            checks.push(MemberCheck::Active(Activity::Active));
        }
        Ok(checks)
    }

    /// `check` as a table over the distinct values of what it reads, when
    /// the refset's columns hold them.
    fn coded(
        &mut self,
        check: &MemberCheck<'_>,
        table: &txmap_store::MemberTable<'_>,
    ) -> R<Option<Coded>> {
        let coded = match *check {
            MemberCheck::Concept {
                column: Column::Component,
                equal,
                ref ids,
                ..
            } => Coded::Components {
                equal,
                ids: Rc::clone(ids),
                cursor: std::cell::Cell::new(0),
            },
            // (A column of near-unique values, such as association
            // targets, has a big dictionary: its values are searched among
            // the set's SCTIDs, not among every concept's.)
            MemberCheck::Concept {
                column: Column::Field(c),
                equal,
                ref ids,
                ..
            } if c < table.columns() => {
                let dictionary = table.dictionary(c)?;
                self.tick(dictionary.len())?;
                let pass = dictionary
                    .iter()
                    .map(|v| {
                        let inside = FieldValue::Text(v)
                            .id()
                            .is_some_and(|id| ids.binary_search(&id).is_ok());
                        inside == equal
                    })
                    .collect();
                Coded::Column(c, pass)
            }
            MemberCheck::Field(Column::Field(c), comparison) if c < table.columns() => {
                let dictionary = table.dictionary(c)?;
                self.tick(dictionary.len())?;
                let mut pass = Vec::with_capacity(dictionary.len());
                for v in dictionary {
                    pass.push(self.field_holds(comparison, FieldValue::Text(v))?);
                }
                Coded::Column(c, pass)
            }
            MemberCheck::Module { equal, ref modules } => {
                let mut pass = Vec::with_capacity(table.modules().len());
                for module in table.modules() {
                    pass.push(modules.binary_search(&module).is_ok() == equal);
                }
                Coded::Module(pass)
            }
            MemberCheck::Time(t) => Coded::Time(
                table
                    .times()
                    .map(|time| crate::filter::time_holds(t, time))
                    .collect(),
            ),
            // The table holds the active members.
            MemberCheck::Active(active) => Coded::Always(active.keeps(true)),
            _ => return Ok(None),
        };
        Ok(Some(coded))
    }

    fn member_passes(&mut self, member: &Member<'_>, checks: &[MemberCheck<'_>]) -> R<bool> {
        for check in checks {
            let ok = match *check {
                MemberCheck::Concept {
                    column,
                    equal,
                    ref ids,
                    ..
                } => {
                    let inside = column
                        .value(member)
                        .and_then(FieldValue::id)
                        .is_some_and(|id| ids.binary_search(&id).is_ok());
                    inside == equal
                }
                MemberCheck::Field(column, comparison) => match column.value(member) {
                    Some(v) => self.field_holds(comparison, v)?,
                    None => false,
                },
                MemberCheck::Active(active) => active.keeps(member.active),
                // (`check` refused these for files without the metadata.)
                MemberCheck::Module { equal, ref modules } => match member.module {
                    Some(module) => modules.binary_search(&module).is_ok() == equal,
                    None => false,
                },
                MemberCheck::Time(t) => member
                    .effective_time
                    .is_some_and(|time| crate::filter::time_holds(t, time)),
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn field_holds(&mut self, c: &FieldComparison, v: FieldValue<'_>) -> R<bool> {
        Ok(match c {
            FieldComparison::Concept { equal, value } => {
                let ids = self.sorted_sub_ids(value)?;
                let inside = v.id().is_some_and(|id| ids.binary_search(&id).is_ok());
                inside == *equal
            }
            FieldComparison::Number { op, value } => v
                .text()
                .trim_start_matches('#')
                .parse::<f64>()
                .is_ok_and(|x| op.holds(x, value.value)),
            FieldComparison::String { equal, terms } => {
                let text = v.text();
                terms.iter().any(|t| self.term_holds(t, &text)) == *equal
            }
            FieldComparison::Boolean { equal, value } => {
                parse_bool(&v.text()).is_some_and(|b| (b == *value) == *equal)
            }
            FieldComparison::Time(t) => v
                .text()
                .parse::<u32>()
                .is_ok_and(|x| crate::filter::time_holds(t, x)),
        })
    }

    // ----- refinements, dotted, history -------------------------------------

    fn refined(&mut self, s: &SubExpr, r: &Refinement) -> R<Vec<u32>> {
        // A plain hierarchy focus (`*`, `< X`, `<< X`) has its size in the
        // closure index: when the cost rule picks a few candidates from
        // the values, each is tested against the focus (one search in its
        // ancestors) instead of the whole focus being built.
        let size = self.hierarchy_size(s)?;
        let (mut compiled, mut driven) = (None, None);
        if let Some(size) = size {
            if size == 0 {
                return Ok(Vec::new());
            }
            let c = self.compile(r, false)?;
            // Set-wise, when reading the values' relationships costs less
            // than testing the focus (a few relationships a concept; with
            // a reverse attribute, each concept's inbound ones, which for
            // a value hierarchy are many more: counted from the index).
            let budget = size.saturating_mul(SET_WISE_LINKS);
            let mut set_wise = self.set_wise_parts(c, budget)?;
            if let SetWise::None(c) = set_wise {
                // Only then is the focus built to be counted: `* : R A =
                // X` over a few values needs no count of `*`.
                let more = if c.has_reverse() {
                    self.inbound_count(s)?
                } else {
                    0
                };
                set_wise = if more > budget {
                    self.set_wise_parts(c, more)?
                } else {
                    SetWise::None(c)
                };
            }
            let c = match set_wise {
                SetWise::All(sets) => {
                    if let Sets::In(set) = &sets
                        && set.len().saturating_mul(LAZY_FOCUS_RATIO) < size
                    {
                        let mut out = Vec::new();
                        for &o in set {
                            if self.matches_sub(s, o)? {
                                out.push(o);
                            }
                        }
                        return Ok(out);
                    }
                    let focus = self.sub(s)?;
                    return Ok(sets.within(&focus));
                }
                SetWise::Part(within, rest) => {
                    let focus = self.sub(s)?;
                    return self.holding(intersect(&focus, &within), &rest);
                }
                SetWise::None(c) => c,
            };
            driven = self.drive(&c, size)?;
            if let Some((candidates, exact)) = &driven
                && candidates.len().saturating_mul(LAZY_FOCUS_RATIO) < size
            {
                let values = c.has_values_test();
                let mut out = Vec::new();
                for &o in candidates {
                    if self.matches_sub(s, o)? && (*exact || self.concept_holds(&c, o, values)?) {
                        out.push(o);
                    }
                }
                return Ok(out);
            }
            compiled = Some(c);
        }
        let focus = self.sub(s)?;
        if focus.is_empty() {
            return Ok(focus);
        }
        let c = match compiled {
            Some(c) => c,
            None => self.compile(r, false)?,
        };
        // A hierarchy focus's size was its length: the cost rules have
        // spoken.
        let c = if size.is_none() {
            let c = match self.set_wise_parts(c, focus.len().saturating_mul(SET_WISE_LINKS))? {
                SetWise::All(sets) => return Ok(sets.within(&focus)),
                SetWise::Part(within, rest) => {
                    return self.holding(intersect(&focus, &within), &rest);
                }
                SetWise::None(c) => c,
            };
            driven = self.drive(&c, focus.len())?;
            c
        } else {
            c
        };
        let candidates = match driven {
            Some((from_values, exact)) => {
                let candidates = intersect(&from_values, &focus);
                if exact {
                    return Ok(candidates);
                }
                candidates
            }
            None => focus,
        };
        self.holding(candidates, &c)
    }

    /// About how many inbound relationships a focus's concepts have: what
    /// testing each of them against a reverse attribute reads. Estimated
    /// from at most `INBOUND_SAMPLE` concepts spread over the focus (each
    /// count is a read of the index at a random place: counting them all
    /// took a third of a reverse refinement's time).
    fn inbound_count(&mut self, s: &SubExpr) -> R<usize> {
        let focus = self.memo_sub(s)?;
        let step = focus.len().div_ceil(INBOUND_SAMPLE).max(1);
        self.tick(focus.len() / step)?;
        let mut total = 0usize;
        for &o in focus.iter().step_by(step) {
            total = total.saturating_add(self.ed.inbound_links(o)?.len());
        }
        Ok(total.saturating_mul(step))
    }

    /// The candidates that satisfy `c`, tested one by one.
    fn holding(&mut self, candidates: Vec<u32>, c: &Compiled<'_>) -> R<Vec<u32>> {
        let values = c.has_values_test();
        let mut out = Vec::new();
        for o in candidates {
            if self.concept_holds(c, o, values)? {
                out.push(o);
            }
        }
        Ok(out)
    }

    /// The size of a sub-expression that is `*`, `< X` or `<< X` alone,
    /// read off the closure index; `None` for anything else.
    fn hierarchy_size(&mut self, s: &SubExpr) -> R<Option<usize>> {
        if s.member_of.is_some() || !s.filters.is_empty() || s.history.is_some() {
            return Ok(None);
        }
        let ed = self.ed;
        Ok(match (&s.focus, s.operator) {
            (Focus::Any(_), None) => match ed.root() {
                Some(root) => Some(ed.descendants(root)?.len() + 1),
                None => Some(0),
            },
            (Focus::Concept(r), Some(Operator::DescendantOf)) => {
                Some(ed.descendants(self.concept(r)?)?.len())
            }
            (Focus::Concept(r), Some(Operator::DescendantOrSelfOf)) => {
                Some(ed.descendants(self.concept(r)?)?.len() + 1)
            }
            _ => None,
        })
    }

    fn dotted(&mut self, s: &SubExpr, attrs: &[SubExpr]) -> R<Vec<u32>> {
        let ed = self.ed;
        let mut current = self.sub(s)?;
        for a in attrs {
            let types = self.set(a, false)?;
            // Only the members with an attribute of one of the types have
            // values: with a few named types, the type index's sources
            // meet the set first (`<< X . T` read the attributes of every
            // member of a big set, most of which have none of type T).
            if let Some(sources) = self.attribute_sources(&types, current.len())? {
                self.tick(sources.len())?;
                current = intersect(&current, &sources);
            }
            let mut next = Vec::new();
            for o in current {
                let links = ed.attribute_links(o)?;
                self.tick(links.len() + 1)?;
                for l in links {
                    if self.in_set(&types, Some(l.type_ord))? {
                        next.push(l.target_ord);
                    }
                }
            }
            current = normalize(next);
        }
        Ok(current)
    }

    fn history(&mut self, h: &History, set: Vec<u32>) -> R<Vec<u32>> {
        let ed = self.ed;
        let refsets: Vec<u64> = match h {
            History::Min => vec![SAME_AS],
            History::Mod => vec![SAME_AS, REPLACED_BY, WAS_A, PARTIALLY_EQUIVALENT_TO],
            History::Max | History::Default => ed
                .refsets()
                .filter(|r| r.kind == RefsetKind::Association && r.id != MOVED_TO)
                .map(|r| r.id)
                .collect(),
            History::Subset(e) => {
                let mut ids = Vec::new();
                for o in self.expr(e)? {
                    let id = ed.sctid(o)?;
                    if id != MOVED_TO
                        && ed
                            .refset(id)
                            .is_some_and(|r| r.kind == RefsetKind::Association)
                    {
                        ids.push(id);
                    }
                }
                ids
            }
        };
        let mut added = Vec::new();
        // The reverse index holds the association refsets' members: use it
        // when the edition has one and every chosen refset is indexed.
        let indexed = ed.has_association_targets()
            && refsets.iter().all(|&id| {
                ed.refset(id)
                    .is_none_or(|r| r.kind == RefsetKind::Association)
            });
        if indexed {
            let mut chosen = refsets;
            chosen.sort_unstable();
            chosen.dedup();
            self.tick(set.len())?;
            let sources = ed.association_sources(&set, &chosen)?;
            self.tick(sources.len())?;
            // The sources' flags, read in place (most are inactive).
            let table = ed.concept_table()?;
            for o in sources {
                let facts = table.facts(o).ok_or(txmap_store::StoreError::OutOfRange {
                    what: "concept",
                    ordinal: o,
                    count: ed.concept_count(),
                })?;
                if !facts.active {
                    added.push(o);
                }
            }
            return Ok(union(&set, &normalize(added)));
        }
        // Older files: scan the refsets, parsing each member's target.
        for id in refsets {
            let members = ed.members(id)?;
            self.tick(members.len() + 1)?;
            for m in members {
                let target = m.field(0).and_then(|t| t.parse::<u64>().ok());
                if !target
                    .and_then(|t| ed.ordinal(t))
                    .is_some_and(|t| contains(&set, t))
                {
                    continue;
                }
                if let Some(o) = ed.ordinal(m.component)
                    && !ed.concept_at(o)?.active
                {
                    added.push(o);
                }
            }
        }
        Ok(union(&set, &normalize(added)))
    }

    // ----- membership of one concept ----------------------------------------

    /// Whether concept `o` is in `evaluate(e)`, testing it directly.
    pub(crate) fn matches(&mut self, e: &Expr, o: u32) -> R<bool> {
        self.tick(1)?;
        match e {
            Expr::And(xs, _) => {
                for x in xs {
                    if !self.matches(x, o)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Expr::Or(xs, _) => {
                for x in xs {
                    if self.matches(x, o)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Expr::Minus(a, b, _) => Ok(self.matches(a, o)? && !self.matches(b, o)?),
            Expr::Refined(s, r, _) => {
                if !self.matches_sub(s, o)? {
                    return Ok(false);
                }
                let c = self.compile(r, true)?;
                let values = c.has_values_test();
                self.concept_holds(&c, o, values)
            }
            Expr::Dotted(..) => Ok(contains(&self.memo_expr(e)?, o)),
            Expr::Sub(s) => self.matches_sub(s, o),
        }
    }

    pub(crate) fn matches_sub(&mut self, s: &SubExpr, o: u32) -> R<bool> {
        if s.history.is_some() {
            return Ok(contains(&self.memo_sub(s)?, o));
        }
        if !self.in_operator(s, s.operator, o)? {
            return Ok(false);
        }
        for f in &s.filters {
            if !self.passes(f, o)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether `o` is in the focus (with `^`) of `s`.
    fn in_base(&mut self, s: &SubExpr, o: u32) -> R<bool> {
        if s.member_of.is_some() {
            return Ok(contains(&self.memo_base(s)?, o));
        }
        match &s.focus {
            Focus::Concept(r) => Ok(self.concept(r)? == o),
            Focus::Any(_) if all_concepts(s) => Ok(true),
            Focus::Any(_) => self.in_any(o, !s.filters.is_empty()),
            Focus::Nested(e) => self.matches(e, o),
            Focus::AlternateId { scheme, id, span } => {
                Ok(contains(&self.alternate(scheme, id, *span)?, o))
            }
        }
    }

    fn any_in_base(&mut self, s: &SubExpr, os: impl Iterator<Item = u32>) -> R<bool> {
        for o in os {
            if self.in_base(s, o)? {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `o` has a proper descendant in the sorted set `f`.
    fn has_descendant_in(&mut self, o: u32, f: &[u32]) -> R<bool> {
        let d = self.ed.descendants(o)?;
        self.tick(d.len().min(f.len()))?;
        Ok(if f.len() < d.len() {
            f.iter().any(|&x| d.contains(x))
        } else {
            d.any(|x| contains(f, x))
        })
    }

    /// Whether `o` is in `op(base(s))`.
    pub(crate) fn in_operator(&mut self, s: &SubExpr, op: Option<Operator>, o: u32) -> R<bool> {
        use Operator::*;
        let ed = self.ed;
        let Some(op) = op else {
            return self.in_base(s, o);
        };
        self.tick(1)?;
        if let (None, Focus::Concept(r)) = (&s.member_of, &s.focus) {
            let x = self.concept(r)?;
            return Ok(match op {
                DescendantOf => x != o && ed.subsumes(x, o)?,
                DescendantOrSelfOf => ed.subsumes(x, o)?,
                ChildOf => ed.parents(o)?.contains(x),
                ChildOrSelfOf => x == o || ed.parents(o)?.contains(x),
                AncestorOf => x != o && ed.subsumes(o, x)?,
                AncestorOrSelfOf => ed.subsumes(o, x)?,
                ParentOf => ed.parents(x)?.contains(o),
                ParentOrSelfOf => x == o || ed.parents(x)?.contains(o),
                Top | Bottom => x == o,
            });
        }
        // `*` (hierarchy or every concept) is closed downwards: the
        // descendants of its members are members.
        let closed_down = s.member_of.is_none() && matches!(s.focus, Focus::Any(_));
        let with_self = matches!(
            op,
            DescendantOrSelfOf | ChildOrSelfOf | AncestorOrSelfOf | ParentOrSelfOf
        );
        if with_self && self.in_base(s, o)? {
            return Ok(true);
        }
        match op {
            DescendantOf | DescendantOrSelfOf => {
                let anc = ed.ancestors(o)?;
                self.tick(anc.len())?;
                self.any_in_base(s, anc.iter())
            }
            ChildOf | ChildOrSelfOf => {
                let parents = ed.parents(o)?;
                self.tick(parents.len())?;
                self.any_in_base(s, parents.iter())
            }
            AncestorOf | AncestorOrSelfOf | Bottom if closed_down => {
                let inside = self.in_base(s, o)?;
                if inside {
                    // Every descendant is a member.
                    return Ok(ed.children(o)?.is_empty() == (op == Bottom));
                }
                if op == Bottom {
                    return Ok(false);
                }
                let d = ed.descendants(o)?;
                self.tick(d.len())?;
                self.any_in_base(s, d.iter())
            }
            ParentOf | ParentOrSelfOf if closed_down => {
                let c = ed.children(o)?;
                self.tick(c.len())?;
                self.any_in_base(s, c.iter())
            }
            AncestorOf | AncestorOrSelfOf => {
                let f = self.memo_base(s)?;
                self.has_descendant_in(o, &f)
            }
            ParentOf | ParentOrSelfOf => {
                let f = self.memo_base(s)?;
                let c = ed.children(o)?;
                self.tick(c.len())?;
                Ok(c.any(|x| contains(&f, x)))
            }
            Bottom => {
                let f = self.memo_base(s)?;
                Ok(contains(&f, o) && !self.has_descendant_in(o, &f)?)
            }
            Top => {
                if !self.in_base(s, o)? {
                    return Ok(false);
                }
                let anc = ed.ancestors(o)?;
                self.tick(anc.len())?;
                Ok(!self.any_in_base(s, anc.iter())?)
            }
        }
    }

    // ----- post-coordinated expressions -------------------------------------

    pub(crate) fn matches_expression(&mut self, e: &Expr, x: &ExpressionSubject) -> R<bool> {
        self.tick(1)?;
        match e {
            Expr::And(xs, _) => {
                for e in xs {
                    if !self.matches_expression(e, x)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Expr::Or(xs, _) => {
                for e in xs {
                    if self.matches_expression(e, x)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Expr::Minus(a, b, _) => {
                Ok(self.matches_expression(a, x)? && !self.matches_expression(b, x)?)
            }
            Expr::Refined(s, r, _) => {
                if !self.expression_in_sub(s, x)? {
                    return Ok(false);
                }
                let c = self.compile(r, true)?;
                self.expression_holds(&c, x)
            }
            // Dotted selects attribute values: concepts.
            Expr::Dotted(..) => Ok(false),
            Expr::Sub(s) => self.expression_in_sub(s, x),
        }
    }

    fn expression_in_sub(&mut self, s: &SubExpr, x: &ExpressionSubject) -> R<bool> {
        if s.member_of.is_some() {
            return Ok(false);
        }
        let filters_hold = s.filters.iter().all(|f| match f {
            Filter::Description(..) => false,
            Filter::Concept(cs, _) => cs
                .iter()
                .all(|c| matches!(c, ConceptFilter::Active(a, _) if a.keeps(true))),
        });
        if !filters_hold {
            return Ok(false);
        }
        match (s.operator, &s.focus) {
            (None, Focus::Any(_)) => Ok(true),
            (None, Focus::Nested(e)) => self.matches_expression(e, x),
            (Some(Operator::DescendantOf | Operator::DescendantOrSelfOf), _) => {
                for &f in &x.focus {
                    self.ed.sctid(f)?;
                    if self.in_operator(s, Some(Operator::DescendantOrSelfOf), f)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            _ => Ok(false),
        }
    }
}

/// A member's column: the two id columns as numbers, the others as stored.
#[derive(Clone, Copy)]
enum FieldValue<'m> {
    Id(u64),
    Text(&'m str),
}

impl<'m> FieldValue<'m> {
    fn id(self) -> Option<u64> {
        match self {
            FieldValue::Id(id) => Some(id),
            FieldValue::Text(t) => t.parse().ok(),
        }
    }

    fn text(self) -> std::borrow::Cow<'m, str> {
        match self {
            FieldValue::Id(id) => id.to_string().into(),
            FieldValue::Text(t) => t.into(),
        }
    }
}

/// A member column, found once per refset.
#[derive(Clone, Copy)]
enum Column {
    Component,
    Refset,
    /// `moduleId`, from the member's metadata (format 1.3).
    Module,
    /// The `i`th column after `referencedComponentId`.
    Field(usize),
    /// The refset has no such column.
    Missing,
}

impl Column {
    fn find(names: &[String], name: &str, span: Span) -> R<Column> {
        Ok(match name {
            "referencedComponentId" => Column::Component,
            "refsetId" => Column::Refset,
            "moduleId" => Column::Module,
            "id" => {
                return Err(not_supported(
                    "refset column id (not kept in the edition)",
                    span,
                ));
            }
            "effectiveTime" | "active" => {
                return Err(not_supported(
                    format!("refset column {name} as a value (it holds no concepts)"),
                    span,
                ));
            }
            _ => names
                .iter()
                .position(|n| n == name)
                .map_or(Column::Missing, Column::Field),
        })
    }

    /// A member's value in this column; `None` if the refset has no such
    /// column.
    fn value<'m>(self, member: &Member<'m>) -> Option<FieldValue<'m>> {
        match self {
            Column::Component => Some(FieldValue::Id(member.component)),
            Column::Refset => Some(FieldValue::Id(member.refset)),
            Column::Module => member.module.map(FieldValue::Id),
            Column::Field(i) => member.field(i).map(FieldValue::Text),
            Column::Missing => None,
        }
    }
}

fn normalize_ids(mut ids: Vec<u64>) -> Vec<u64> {
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// One test of a member filter, its column found and its concepts
/// evaluated, once per refset.
enum MemberCheck<'f> {
    /// `column = X` (`equal`) or `!= X`.
    Concept {
        column: Column,
        equal: bool,
        /// `expr`'s SCTIDs, sorted.
        ids: Rc<Vec<u64>>,
        expr: &'f SubExpr,
    },
    Field(Column, &'f FieldComparison),
    Active(Activity),
    Module {
        equal: bool,
        /// Sorted.
        modules: Rc<Vec<u64>>,
    },
    Time(&'f txmap_ecl::TimeFilter),
}

/// Whether the member filters keep inactive members, which are then read
/// too.
fn wants_inactive(filters: &[MemberFilterSet]) -> bool {
    let actives = filters
        .iter()
        .flat_map(|set| &set.filters)
        .filter_map(|f| match f {
            MemberFilter::Active(a, _) => Some(*a),
            _ => None,
        });
    // Every active filter must keep inactive ones (they are conjoined).
    let mut any = false;
    for a in actives {
        if !a.keeps(false) {
            return false;
        }
        any = true;
    }
    any
}

/// Adds what a passing member contributes to `^ [fields]` (`Fields`) or
/// `^ [*]` (`AllFields`): the SCTIDs its fields hold, which become
/// concepts (those of the edition) once all are in, sorted — far fewer
/// searches among the concepts than one a member, since values repeat.
fn project(
    m: &MemberOf,
    member: &Member<'_>,
    fields: &[(&String, Column)],
    names: &[String],
    ids: &mut Vec<u64>,
    span: Span,
) -> R<()> {
    match m {
        MemberOf::Fields(_) => {
            for &(f, column) in fields {
                match column.value(member) {
                    Some(FieldValue::Id(id)) => ids.push(id),
                    Some(FieldValue::Text(v)) => push_id(ids, f, v, span)?,
                    None => {}
                }
            }
        }
        // Every field: the referenced component and the refset's own
        // columns (the row's id, time, module and refset are the row, not
        // its fields).
        MemberOf::AllFields => {
            ids.push(member.component);
            for (f, v) in names.iter().zip(member.field_values()) {
                push_id(ids, f, v, span)?;
            }
        }
        MemberOf::Components | MemberOf::Refsets => {}
    }
    Ok(())
}

/// The number of values of sorted `s` below `c`, found by galloping from
/// the start: cheap when the answer is near it.
fn gallop(s: &[u64], c: u64) -> usize {
    let mut lo = 0; // s[..lo] are all below
    let mut step = 1;
    while let Some(&x) = s.get(lo + step - 1) {
        if x >= c {
            break;
        }
        lo += step;
        step *= 2;
    }
    let end = (lo + step - 1).min(s.len());
    lo + s.get(lo..end).map_or(0, |w| w.partition_point(|&x| x < c))
}

/// A projected column's dictionary and which of its values passing members
/// hold.
struct UsedValues<'e> {
    column: usize,
    values: Vec<&'e str>,
    used: Vec<bool>,
}

/// `^ [fields]` for member `i` from the coded columns: marks the values
/// it uses (the referenced component's concept goes straight in, read by
/// member). `false` when a value is not coded: then the row is projected
/// whole (values already marked come out once all the same).
fn mark_used(
    table: &txmap_store::MemberTable<'_>,
    i: usize,
    fields: &[(&String, Column)],
    dictionaries: &mut [Option<UsedValues<'_>>],
    concepts: &mut Vec<u32>,
) -> bool {
    for (&(_, column), d) in fields.iter().zip(dictionaries.iter_mut()) {
        match (column, d) {
            // The member's concept, read by member (`MemberConcepts`).
            (Column::Component, _) => match table.concept(i) {
                Ok(c) => concepts.extend(c),
                Err(_) => return false,
            },
            (_, Some(d)) => match table.code(i, d.column).and_then(|k| d.used.get_mut(k)) {
                Some(u) => *u = true,
                None => return false,
            },
            _ => return false,
        }
    }
    true
}

/// A member check answered from a refset's columns
/// ([`MemberTable`](txmap_store::MemberTable)): whether each distinct
/// value passes, tested once.
enum Coded {
    Column(usize, Vec<bool>),
    /// The referenced component in (`equal`) or out of a set of SCTIDs,
    /// walked with a cursor: members come by component, ascending.
    Components {
        equal: bool,
        ids: Rc<Vec<u64>>,
        cursor: std::cell::Cell<usize>,
    },
    Module(Vec<bool>),
    Time(Vec<bool>),
    Always(bool),
}

impl Coded {
    /// Member `i`'s result; `None` when its value is not coded (then the
    /// row decides).
    fn lookup(&self, table: &txmap_store::MemberTable<'_>, i: usize) -> Option<bool> {
        let (code, pass) = match self {
            Coded::Column(c, pass) => (table.code(i, *c), pass),
            Coded::Module(pass) => (table.module_code(i), pass),
            Coded::Time(pass) => (table.time_code(i), pass),
            Coded::Always(pass) => return Some(*pass),
            Coded::Components { equal, ids, cursor } => {
                let c = table.component(i)?;
                let mut at = cursor.get();
                if at > 0 && ids.get(at - 1).is_some_and(|&x| x >= c) {
                    at = 0; // out of order (only in a damaged file)
                }
                at += gallop(ids.get(at..).unwrap_or_default(), c);
                cursor.set(at);
                return Some((ids.get(at) == Some(&c)) == *equal);
            }
        };
        pass.get(code?).copied()
    }
}

/// Adds the SCTID a field value holds (empty values add nothing); one
/// that is no SCTID is refused.
fn push_id(ids: &mut Vec<u64>, name: &str, value: &str, span: Span) -> R<()> {
    if value.is_empty() {
        return Ok(());
    }
    match value.parse::<u64>() {
        Ok(id) => {
            ids.push(id);
            Ok(())
        }
        Err(_) => Err(not_supported(
            format!("refset field {name} value {value:?} is not an SCTID"),
            span,
        )),
    }
}

pub(crate) fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "true" | "1" | "#1" => Some(true),
        "false" | "0" | "#0" => Some(false),
        _ => None,
    }
}
