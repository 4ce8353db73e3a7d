//! The evaluator against a deliberately naive one, on random expressions
//! over small synthetic editions.
//!
//! The reference shares nothing with the evaluator but the syntax tree and
//! the store's plain accessors: it walks `children()`/`parents()` breadth
//! first instead of reading the closure, keeps sets as `BTreeSet`s, counts
//! attributes from its own copy of every concept's relationships (reverse
//! attributes from its own inverted copy, not the inbound index), finds
//! history through `associations()` of every inactive concept instead of
//! scanning association refsets, and evaluates every operand.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::*;
use txmap_ecl::{
    Acceptability, Activity, Attribute, Cardinality, Comparison, ConceptFilter, ConceptSet,
    DescriptionFilter, DescriptionType, Expr, Filter, Focus, History, MemberOf, ModuleFilter,
    Number, NumericOp, Refinement, SearchTerm, Span, SubExpr, TimeFilter,
};
use txmap_ecl_eval::{Budget, Subject, evaluate, matches};
use txmap_store::RefsetKind;
use txmap_text::{fold, words};

type S = BTreeSet<u32>;

const ROOT: u64 = 138875005;

#[derive(Clone, Debug)]
enum Val {
    C(u32),
    N(f64),
    T(String),
    B(bool),
    X,
}

#[derive(Clone, Debug)]
struct Rel {
    group: u16,
    ty: u64,
    val: Val,
}

struct Reference<'a> {
    ed: &'a Ed,
    n: u32,
    rels: Vec<Vec<Rel>>,
    /// (source, type) of the concept relationships pointing at each concept.
    inbound: Vec<Vec<(u32, u64)>>,
}

fn concrete(v: &str) -> Val {
    if let Some(n) = v.strip_prefix('#') {
        return n.parse().map(Val::N).unwrap_or(Val::X);
    }
    if v.len() >= 2 && v.starts_with('"') && v.ends_with('"') {
        return Val::T(v[1..v.len() - 1].to_owned());
    }
    match v {
        "true" => Val::B(true),
        "false" => Val::B(false),
        _ => Val::X,
    }
}

/// Whether acceptability `a` is among those asked for (any, if none).
fn accept_ok(wanted: &Option<Vec<Acceptability>>, a: u64) -> bool {
    wanted.as_ref().is_none_or(|w| {
        w.iter().any(|x| {
            a == match x {
                Acceptability::Preferred => 900000000000548007,
                Acceptability::Acceptable => 900000000000549004,
                Acceptability::Id(id) => *id,
            }
        })
    })
}

fn glob(p: &[char], t: &[char]) -> bool {
    match p.split_first() {
        None => t.is_empty(),
        Some(('*', rest)) => (0..=t.len()).any(|i| glob(rest, &t[i..])),
        Some((c, rest)) => t.first() == Some(c) && glob(rest, &t[1..]),
    }
}

fn term_matches(term: &SearchTerm, text: &str) -> bool {
    let folded = fold(text);
    match term {
        SearchTerm::Match { text: q, .. } => {
            let tw: Vec<&str> = words(&folded).collect();
            fold(q)
                .split_whitespace()
                .all(|w| tw.iter().any(|t| t.starts_with(w)))
        }
        SearchTerm::Wild(p) => {
            let p: Vec<char> = fold(p).chars().collect();
            let t: Vec<char> = folded.chars().collect();
            glob(&p, &t)
        }
    }
}

fn within(n: usize, c: &Option<Cardinality>) -> bool {
    let (min, max) = c.map_or((1, None), |c| (c.min, c.max));
    n >= min as usize && max.is_none_or(|m| n <= m as usize)
}

fn time_ok(t: &TimeFilter, v: u32) -> bool {
    if t.op == NumericOp::Ne {
        !t.times.contains(&v)
    } else {
        t.times.iter().any(|&x| t.op.holds(v, x))
    }
}

fn bare_star(s: &SubExpr) -> bool {
    matches!(s.focus, Focus::Any(_))
        && s.operator.is_none()
        && s.member_of.is_none()
        && s.filters.is_empty()
        && s.history.is_none()
}

impl<'a> Reference<'a> {
    fn new(ed: &'a Ed) -> Self {
        let n = ed.concept_count();
        let mut rels = Vec::new();
        let mut inbound = vec![Vec::new(); n as usize];
        for o in 0..n {
            let mut v = Vec::new();
            for r in ed.attributes(o).unwrap() {
                let t = ed.ordinal(r.target).unwrap();
                inbound[t as usize].push((o, r.type_id));
                v.push(Rel {
                    group: r.group,
                    ty: r.type_id,
                    val: Val::C(t),
                });
            }
            for c in ed.concrete_values(o).unwrap() {
                v.push(Rel {
                    group: c.group,
                    ty: c.type_id,
                    val: concrete(c.value),
                });
            }
            rels.push(v);
        }
        Reference {
            ed,
            n,
            rels,
            inbound,
        }
    }

    fn o(&self, id: u64) -> u32 {
        self.ed.ordinal(id).unwrap()
    }

    fn bfs(&self, o: u32, down: bool) -> S {
        let mut seen = S::new();
        let mut queue = vec![o];
        while let Some(x) = queue.pop() {
            let next = if down {
                self.ed.children(x).unwrap()
            } else {
                self.ed.parents(x).unwrap()
            };
            for y in next.iter() {
                if seen.insert(y) {
                    queue.push(y);
                }
            }
        }
        seen
    }

    fn hierarchy(&self) -> S {
        match self.ed.ordinal(ROOT) {
            Some(r) => {
                let mut s = self.bfs(r, true);
                s.insert(r);
                s
            }
            None => S::new(),
        }
    }

    fn expr(&self, e: &Expr) -> S {
        match e {
            Expr::And(xs, _) => {
                let sets: Vec<S> = xs.iter().map(|x| self.expr(x)).collect();
                let mut it = sets.into_iter();
                let first = it.next().unwrap_or_default();
                it.fold(first, |a, b| a.intersection(&b).copied().collect())
            }
            Expr::Or(xs, _) => xs.iter().flat_map(|x| self.expr(x)).collect(),
            Expr::Minus(a, b, _) => {
                let b = self.expr(b);
                self.expr(a).difference(&b).copied().collect()
            }
            Expr::Refined(s, r, _) => {
                let focus = self.sub(s);
                let r = self.compile(r);
                focus
                    .into_iter()
                    .filter(|&x| {
                        self.holds(&r, x, &self.rels[x as usize].iter().collect::<Vec<_>>())
                    })
                    .collect()
            }
            Expr::Dotted(s, attrs, _) => {
                let mut cur = self.sub(s);
                for a in attrs {
                    let names = self.names(a);
                    cur = cur
                        .iter()
                        .flat_map(|&x| self.rels[x as usize].iter())
                        .filter(|r| type_ok(self, &names, r.ty))
                        .filter_map(|r| match r.val {
                            Val::C(t) => Some(t),
                            _ => None,
                        })
                        .collect();
                }
                cur
            }
            Expr::Sub(s) => self.sub(s),
        }
    }

    fn names(&self, s: &SubExpr) -> Option<S> {
        (!bare_star(s)).then(|| self.sub(s))
    }

    fn sub(&self, s: &SubExpr) -> S {
        let all = s.filters.iter().any(|f| {
            matches!(f, Filter::Concept(cs, _)
                if cs.iter().any(|c| matches!(c, ConceptFilter::Active(a, _)
                    if matches!(a, Activity::Inactive | Activity::Either))))
        });
        let mut set: S = match &s.focus {
            Focus::Concept(r) => [self.o(r.id)].into(),
            Focus::Any(_) if all => (0..self.n).collect(),
            Focus::Any(_) => self.hierarchy(),
            Focus::Nested(e) => self.expr(e),
            Focus::AlternateId { .. } => panic!("not generated"),
        };
        if let Some(MemberOf::Components) = &s.member_of {
            set = set
                .iter()
                .flat_map(|&r| self.ed.members(self.ed.sctid(r).unwrap()).unwrap())
                .filter_map(|m| self.ed.ordinal(m.component))
                .collect();
        }
        // `^R`: every refset that has one of the set as a member, found by
        // reading every refset's members.
        if let Some(MemberOf::Refsets) = &s.member_of {
            set = self
                .ed
                .refsets()
                .filter(|r| {
                    self.ed.members(r.id).unwrap().iter().any(|m| {
                        self.ed
                            .ordinal(m.component)
                            .is_some_and(|o| set.contains(&o))
                    })
                })
                .filter_map(|r| self.ed.ordinal(r.id))
                .collect();
        }
        if let Some(op) = s.operator {
            set = self.apply(op, &set);
        }
        for f in &s.filters {
            set.retain(|&o| self.passes(f, o));
        }
        if let Some(h) = &s.history {
            let refsets: Vec<u64> = match h {
                History::Min => vec![900000000000527005],
                // SAME AS, REPLACED BY, WAS A, PARTIALLY EQUIVALENT TO.
                History::Mod => vec![
                    900000000000527005,
                    900000000000526001,
                    900000000000528000,
                    1186924009,
                ],
                // Every association but MOVED TO, whose target is the
                // namespace the concept moved to, not a concept like it.
                _ => self
                    .ed
                    .refsets()
                    .filter(|r| r.kind == RefsetKind::Association && r.id != 900000000000524003)
                    .map(|r| r.id)
                    .collect(),
            };
            let mut added = S::new();
            for c in 0..self.n {
                if self.ed.concept_at(c).unwrap().active {
                    continue;
                }
                for a in self.ed.associations(self.ed.sctid(c).unwrap()).unwrap() {
                    if refsets.contains(&a.refset)
                        && self.ed.ordinal(a.target).is_some_and(|t| set.contains(&t))
                    {
                        added.insert(c);
                    }
                }
            }
            set.extend(added);
        }
        set
    }

    fn apply(&self, op: txmap_ecl::Operator, set: &S) -> S {
        use txmap_ecl::Operator::*;
        let direct = |down: bool| -> S {
            set.iter()
                .flat_map(|&x| {
                    if down {
                        self.ed.children(x).unwrap().to_vec()
                    } else {
                        self.ed.parents(x).unwrap().to_vec()
                    }
                })
                .collect()
        };
        let closure = |down: bool| -> S { set.iter().flat_map(|&x| self.bfs(x, down)).collect() };
        let with_self = |mut s: S| {
            s.extend(set.iter().copied());
            s
        };
        match op {
            DescendantOf => closure(true),
            DescendantOrSelfOf => with_self(closure(true)),
            ChildOf => direct(true),
            ChildOrSelfOf => with_self(direct(true)),
            AncestorOf => closure(false),
            AncestorOrSelfOf => with_self(closure(false)),
            ParentOf => direct(false),
            ParentOrSelfOf => with_self(direct(false)),
            Top => set
                .iter()
                .copied()
                .filter(|&x| self.bfs(x, false).is_disjoint(set))
                .collect(),
            Bottom => set
                .iter()
                .copied()
                .filter(|&x| self.bfs(x, true).is_disjoint(set))
                .collect(),
        }
    }

    fn in_refs(&self, set: &ConceptSet, id: u64) -> bool {
        match set {
            ConceptSet::Set(refs) => refs.iter().any(|r| r.id == id),
            ConceptSet::Sub(s) => self
                .ed
                .ordinal(id)
                .is_some_and(|o| self.sub(s).contains(&o)),
        }
    }

    fn passes(&self, f: &Filter, o: u32) -> bool {
        match f {
            Filter::Concept(cs, _) => {
                let c = self.ed.concept_at(o).unwrap();
                cs.iter().all(|f| match f {
                    ConceptFilter::Active(a, _) => active_ok(*a, c.active),
                    ConceptFilter::DefinitionStatus { equal, defined } => {
                        defined.contains(&c.defined) == *equal
                    }
                    ConceptFilter::DefinitionStatusId { equal, ids } => {
                        let id = if c.defined {
                            900000000000073002
                        } else {
                            900000000000074008
                        };
                        self.in_refs(ids, id) == *equal
                    }
                    ConceptFilter::Module(m) => self.in_refs(&m.modules, c.module) == m.equal,
                    ConceptFilter::EffectiveTime(t) => time_ok(t, c.effective_time),
                })
            }
            Filter::Description(ds, _) => {
                let explicit = ds
                    .iter()
                    .any(|d| matches!(d, DescriptionFilter::Active(..)));
                self.ed.descriptions(o).unwrap().iter().any(|d| {
                    (explicit || d.active)
                        && ds.iter().all(|f| match f {
                            DescriptionFilter::Term { equal, terms } => {
                                terms.iter().any(|t| term_matches(t, d.term)) == *equal
                            }
                            DescriptionFilter::TypeToken { equal, tokens } => {
                                tokens.iter().any(|t| {
                                    d.type_id
                                        == match t {
                                            DescriptionType::Fsn => 900000000000003001,
                                            DescriptionType::Synonym => 900000000000013009,
                                            DescriptionType::Definition => 900000000000550004,
                                        }
                                }) == *equal
                            }
                            DescriptionFilter::Language { equal, codes } => {
                                codes.iter().any(|c| c == d.language) == *equal
                            }
                            DescriptionFilter::Active(a, _) => active_ok(*a, d.active),
                            DescriptionFilter::Id { equal, ids } => ids.contains(&d.id) == *equal,
                            DescriptionFilter::Module(m) => {
                                self.in_refs(&m.modules, d.module) == m.equal
                            }
                            DescriptionFilter::EffectiveTime(t) => time_ok(t, d.effective_time),
                            DescriptionFilter::TypeId { equal, types } => {
                                self.in_refs(types, d.type_id) == *equal
                            }
                            // The specification's aliases (Appendix C).
                            DescriptionFilter::Dialect { equal, dialects } => {
                                let rows = self.ed.acceptability(d.ordinal).unwrap();
                                dialects.iter().any(|(alias, accept)| {
                                    let refset = match alias.to_ascii_lowercase().as_str() {
                                        "en-us" => 900000000000509007,
                                        "en-gb" => 900000000000508004,
                                        other => panic!("not generated: {other}"),
                                    };
                                    rows.iter()
                                        .any(|&(r, a)| r == refset && accept_ok(accept, a))
                                }) == *equal
                            }
                            DescriptionFilter::DialectId { equal, dialects } => {
                                let rows = self.ed.acceptability(d.ordinal).unwrap();
                                dialects.iter().any(|(set, accept)| {
                                    rows.iter()
                                        .any(|&(r, a)| self.in_refs(set, r) && accept_ok(accept, a))
                                }) == *equal
                            }
                        })
                })
            }
        }
    }

    fn compile(&self, r: &Refinement) -> RR {
        match r {
            Refinement::And(xs) => RR::And(xs.iter().map(|x| self.compile(x)).collect()),
            Refinement::Or(xs) => RR::Or(xs.iter().map(|x| self.compile(x)).collect()),
            Refinement::Group(g) => RR::Group(g.cardinality, Box::new(self.compile(&g.attributes))),
            Refinement::Attribute(a) => RR::Attr(
                a.clone(),
                self.names(&a.name),
                match &a.comparison {
                    Comparison::Concept { value, .. } => self.names(value),
                    _ => None,
                },
            ),
        }
    }

    fn holds(&self, r: &RR, x: u32, rels: &[&Rel]) -> bool {
        match r {
            RR::And(xs) => xs.iter().all(|r| self.holds(r, x, rels)),
            RR::Or(xs) => xs.iter().any(|r| self.holds(r, x, rels)),
            RR::Group(card, inner) => {
                // A group constraint counts role groups: relationships with
                // the same group number above 0. Ungrouped ones are in none.
                let mut groups: BTreeMap<u16, Vec<&Rel>> = BTreeMap::new();
                for &r in rels {
                    if r.group != 0 {
                        groups.entry(r.group).or_default().push(r);
                    }
                }
                let n = groups
                    .into_values()
                    .filter(|g| self.holds(inner, x, g))
                    .count();
                within(n, card)
            }
            RR::Attr(a, names, values) => {
                let in_values = |o: u32| values.as_ref().is_none_or(|v| v.contains(&o));
                let n = if a.reverse {
                    let Comparison::Concept { equal, .. } = &a.comparison else {
                        panic!("not generated")
                    };
                    // The distinct concepts the matching relationships
                    // come from.
                    self.inbound[x as usize]
                        .iter()
                        .filter(|(src, ty)| type_ok(self, names, *ty) && in_values(*src) == *equal)
                        .map(|(src, _)| *src)
                        .collect::<BTreeSet<u32>>()
                        .len()
                } else {
                    rels.iter()
                        .filter(|r| type_ok(self, names, r.ty))
                        .filter(|r| match (&a.comparison, &r.val) {
                            (Comparison::Concept { equal, .. }, Val::C(t)) => {
                                in_values(*t) == *equal
                            }
                            (Comparison::Number { op, value }, Val::N(v)) => {
                                op.holds(*v, value.value)
                            }
                            (Comparison::String { equal, terms }, Val::T(t)) => {
                                terms.iter().any(|term| match term {
                                    SearchTerm::Match {
                                        text,
                                        explicit: false,
                                    } => t == text,
                                    term => term_matches(term, t),
                                }) == *equal
                            }
                            (Comparison::Boolean { equal, value }, Val::B(b)) => {
                                (b == value) == *equal
                            }
                            _ => false,
                        })
                        .count()
                };
                within(n, &a.cardinality)
            }
        }
    }
}

fn active_ok(a: Activity, active: bool) -> bool {
    match a {
        Activity::Active => active,
        Activity::Inactive => !active,
        Activity::Either => true,
        Activity::Neither => false,
    }
}

fn type_ok(r: &Reference<'_>, names: &Option<S>, ty: u64) -> bool {
    names
        .as_ref()
        .is_none_or(|s| r.ed.ordinal(ty).is_some_and(|o| s.contains(&o)))
}

enum RR {
    And(Vec<RR>),
    Or(Vec<RR>),
    Group(Option<Cardinality>, Box<RR>),
    Attr(Box<Attribute>, Option<S>, Option<S>),
}

// ----- random expressions ---------------------------------------------------

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }
    fn pick<T: Clone>(&mut self, v: &[T]) -> T {
        v[self.below(v.len())].clone()
    }
}

/// What random expressions are made of, drawn from the edition.
struct Pools {
    hierarchy: Vec<u64>,
    inner: Vec<u64>,
    inactive: Vec<u64>,
    /// (source, type, target) of concept relationships.
    rels: Vec<(u64, u64, u64)>,
    concrete: Vec<(u64, Val)>,
    refsets: Vec<u64>,
    modules: Vec<u64>,
    times: Vec<u32>,
    words: Vec<String>,
    /// Description SCTIDs, and the modules of descriptions.
    descriptions: Vec<u64>,
    description_modules: Vec<u64>,
}

impl Pools {
    fn new(ed: &Ed, r: &Reference<'_>) -> Pools {
        let id = |o: u32| ed.sctid(o).unwrap();
        let hierarchy: Vec<u64> = r.hierarchy().into_iter().map(id).collect();
        let inner = (0..r.n)
            .filter(|&o| !ed.children(o).unwrap().is_empty())
            .map(id)
            .collect();
        let inactive = (0..r.n)
            .filter(|&o| !ed.concept_at(o).unwrap().active)
            .map(id)
            .collect();
        let mut rels = Vec::new();
        let mut concrete = Vec::new();
        for o in 0..r.n {
            for x in &r.rels[o as usize] {
                match &x.val {
                    Val::C(t) => rels.push((id(o), x.ty, id(*t))),
                    v => concrete.push((x.ty, v.clone())),
                }
            }
        }
        let mut refsets: Vec<u64> = ed
            .refsets()
            .filter(|r| matches!(r.kind, RefsetKind::Simple | RefsetKind::Association))
            .map(|r| r.id)
            .collect();
        refsets.push(ROOT);
        let modules: BTreeSet<u64> = (0..r.n).map(|o| ed.concept_at(o).unwrap().module).collect();
        let times: BTreeSet<u32> = (0..r.n)
            .map(|o| ed.concept_at(o).unwrap().effective_time)
            .collect();
        let mut words = Vec::new();
        let (mut descriptions, mut description_modules) = (Vec::new(), BTreeSet::new());
        for o in (0..r.n).step_by(7) {
            for d in ed.descriptions(o).unwrap().iter().take(2) {
                words.extend(txmap_text::words(&fold(d.term)).map(str::to_owned));
                descriptions.push(d.id);
                description_modules.insert(d.module);
            }
        }
        Pools {
            hierarchy,
            inner,
            inactive,
            rels,
            concrete,
            refsets,
            modules: modules.into_iter().collect(),
            times: times.into_iter().collect(),
            words,
            descriptions,
            description_modules: description_modules.into_iter().collect(),
        }
    }
}

struct Gen<'p> {
    p: &'p Pools,
    rng: Rng,
}

impl Gen<'_> {
    fn concept(&mut self) -> u64 {
        match self.rng.below(10) {
            0..=5 => self.rng.pick(&self.p.hierarchy),
            6..=8 => self.rng.pick(&self.p.inner),
            _ if !self.p.inactive.is_empty() => self.rng.pick(&self.p.inactive),
            _ => self.rng.pick(&self.p.hierarchy),
        }
    }

    fn operator(&mut self) -> Option<txmap_ecl::Operator> {
        use txmap_ecl::Operator::*;
        let ops = [
            DescendantOf,
            DescendantOrSelfOf,
            ChildOf,
            ChildOrSelfOf,
            AncestorOf,
            AncestorOrSelfOf,
            ParentOf,
            ParentOrSelfOf,
            Top,
            Bottom,
        ];
        (!self.rng.chance(35)).then(|| self.rng.pick(&ops))
    }

    fn expr(&mut self, depth: u32) -> Expr {
        let r = self.rng.below(100);
        match r {
            _ if depth == 0 || r < 40 => e(self.sub(depth)),
            40..=51 => and((0..2 + self.rng.below(2))
                .map(|_| self.expr(depth - 1))
                .collect()),
            52..=63 => or((0..2 + self.rng.below(2))
                .map(|_| self.expr(depth - 1))
                .collect()),
            64..=73 => minus(self.expr(depth - 1), self.expr(depth - 1)),
            74..=91 => {
                let focus = self.refinement_focus(depth);
                refined(focus, self.refinement(2))
            }
            _ => {
                let hops = 1 + self.rng.below(2);
                let attrs = (0..hops).map(|_| self.attribute_name()).collect();
                dotted(self.sub(depth - 1), attrs)
            }
        }
    }

    fn refinement_focus(&mut self, depth: u32) -> SubExpr {
        // `*` often: a big focus is what makes the evaluator compute a
        // refinement set-wise, from its values, instead of per concept.
        if self.rng.chance(25) {
            return any();
        }
        if self.rng.chance(60) {
            let c = self.rng.pick(&self.p.inner);
            op(
                if self.rng.chance(50) {
                    DescendantOf
                } else {
                    DescendantOrSelfOf
                },
                common::c(c),
            )
        } else {
            self.sub(depth.saturating_sub(1))
        }
    }

    fn sub(&mut self, depth: u32) -> SubExpr {
        let mut s = match self.rng.below(100) {
            0..=6 => any(),
            7..=19 if depth > 0 => nested(self.expr(depth - 1)),
            20..=25 => member_of(c(self.rng.pick(&self.p.refsets))),
            26..=27 => {
                // `^R *` as well as `^R X`: the first reads the concepts'
                // hierarchy flags rather than the hierarchy.
                let mut s = if self.rng.chance(25) {
                    any()
                } else {
                    c(self.concept())
                };
                s.member_of = Some(MemberOf::Refsets);
                s
            }
            _ => c(self.concept()),
        };
        s.operator = self.operator();
        if self.rng.chance(12) {
            s.filters.push(self.concept_filter());
        }
        if self.rng.chance(10) {
            s.filters.push(self.description_filter());
        }
        if self.rng.chance(6) {
            s.history = Some(match self.rng.below(4) {
                0 => History::Min,
                1 => History::Mod,
                2 => History::Max,
                _ => History::Default,
            });
        }
        s
    }

    fn concept_filter(&mut self) -> Filter {
        let mut fs = Vec::new();
        for _ in 0..1 + self.rng.below(2) {
            let equal = self.rng.chance(75);
            fs.push(match self.rng.below(5) {
                0 => ConceptFilter::Active(self.activity(), Span::default()),
                1 => ConceptFilter::DefinitionStatus {
                    equal,
                    defined: (0..1 + self.rng.below(2))
                        .map(|_| self.rng.chance(50))
                        .collect(),
                },
                2 => ConceptFilter::Module(ModuleFilter {
                    equal,
                    modules: ConceptSet::Set(vec![cref(self.rng.pick(&self.p.modules))]),
                }),
                3 => ConceptFilter::DefinitionStatusId {
                    equal,
                    ids: ConceptSet::Set(vec![cref(900000000000074008)]),
                },
                _ => ConceptFilter::EffectiveTime(self.time()),
            });
        }
        Filter::Concept(fs, Span::default())
    }

    fn activity(&mut self) -> Activity {
        match self.rng.below(10) {
            0..=4 => Activity::Active,
            5..=7 => Activity::Inactive,
            8 => Activity::Either,
            _ => Activity::Neither,
        }
    }

    fn time(&mut self) -> TimeFilter {
        TimeFilter {
            op: self.rng.pick(&NumericOp::ALL),
            times: (0..1 + self.rng.below(2))
                .map(|_| self.rng.pick(&self.p.times))
                .collect(),
        }
    }

    fn description_filter(&mut self) -> Filter {
        let word: String = self.rng.pick(&self.p.words);
        let cut: String = word.chars().take(1 + self.rng.below(4)).collect();
        let term = if self.rng.chance(70) {
            let extra: String = if self.rng.chance(30) {
                format!(" {}", self.rng.pick(&self.p.words))
            } else {
                String::new()
            };
            SearchTerm::Match {
                text: format!("{}{extra}", cut.to_uppercase()),
                explicit: false,
            }
        } else {
            SearchTerm::Wild(format!("*{cut}*"))
        };
        // Half the blocks have no term filter: they are tested on the
        // description records' codes, not on whole descriptions.
        let mut fs = Vec::new();
        if self.rng.chance(50) {
            fs.push(DescriptionFilter::Term {
                equal: self.rng.chance(85),
                terms: vec![term],
            });
        }
        let acceptability = |g: &mut Self| match g.rng.below(3) {
            0 => None,
            1 => Some(vec![Acceptability::Preferred]),
            _ => Some(vec![Acceptability::Acceptable]),
        };
        match self.rng.below(11) {
            // (Every concept has an FSN and a synonym: only definitions,
            // which few have, tell a type test from its negation.)
            0 => fs.push(DescriptionFilter::TypeToken {
                equal: self.rng.chance(75),
                tokens: vec![match self.rng.below(3) {
                    0 => DescriptionType::Fsn,
                    1 => DescriptionType::Synonym,
                    _ => DescriptionType::Definition,
                }],
            }),
            1 => fs.push(DescriptionFilter::Active(self.activity(), Span::default())),
            2 => fs.push(DescriptionFilter::Language {
                equal: true,
                codes: vec!["en".into()],
            }),
            3 => fs.push(DescriptionFilter::EffectiveTime(self.time())),
            4 => fs.push(DescriptionFilter::TypeId {
                equal: self.rng.chance(75),
                types: match self.rng.below(3) {
                    0 => ConceptSet::Set(vec![cref(900000000000013009), cref(900000000000550004)]),
                    1 => ConceptSet::Set(vec![cref(900000000000003001)]),
                    _ => ConceptSet::Set(vec![cref(900000000000550004)]),
                },
            }),
            5 => {
                let accept = acceptability(self);
                let alias = if self.rng.chance(50) {
                    "en-us"
                } else {
                    "EN-GB"
                };
                fs.push(DescriptionFilter::Dialect {
                    equal: self.rng.chance(80),
                    dialects: vec![(alias.into(), accept)],
                });
                // Type and dialect of one description: tested by the
                // concept's description profile, row by row.
                if self.rng.chance(40) {
                    fs.push(DescriptionFilter::TypeToken {
                        equal: self.rng.chance(75),
                        tokens: vec![if self.rng.chance(50) {
                            DescriptionType::Fsn
                        } else {
                            DescriptionType::Synonym
                        }],
                    });
                }
            }
            6 => {
                let (a, b) = (acceptability(self), acceptability(self));
                fs.push(DescriptionFilter::DialectId {
                    equal: self.rng.chance(80),
                    dialects: vec![
                        (ConceptSet::Set(vec![cref(900000000000509007)]), a),
                        (ConceptSet::Set(vec![cref(900000000000508004)]), b),
                    ],
                });
            }
            7 => fs.push(DescriptionFilter::Module(ModuleFilter {
                equal: self.rng.chance(75),
                modules: ConceptSet::Set(vec![cref(self.rng.pick(&self.p.description_modules))]),
            })),
            8 => fs.push(DescriptionFilter::Id {
                equal: self.rng.chance(75),
                ids: vec![
                    self.rng.pick(&self.p.descriptions),
                    self.rng.pick(&self.p.descriptions),
                ],
            }),
            _ => {}
        }
        if fs.is_empty() {
            fs.push(DescriptionFilter::Active(self.activity(), Span::default()));
        }
        Filter::Description(fs, Span::default())
    }

    fn attribute_name(&mut self) -> SubExpr {
        let (_, ty, _) = self.rng.pick(&self.p.rels);
        match self.rng.below(10) {
            0 => any(),
            1 => op(DescendantOrSelfOf, c(ty)),
            _ => c(ty),
        }
    }

    fn cardinality(&mut self) -> Option<Cardinality> {
        let choices = [
            (0, Some(0)),
            (1, Some(1)),
            (0, Some(1)),
            (2, None),
            (1, Some(2)),
            (0, None),
        ];
        if self.rng.chance(50) {
            None
        } else {
            let (min, max) = self.rng.pick(&choices);
            card(min, max)
        }
    }

    fn attribute(&mut self) -> Refinement {
        let (src, ty, target) = self.rng.pick(&self.p.rels);
        let cardinality = self.cardinality();
        let name = match self.rng.below(10) {
            0 => any(),
            1 => op(DescendantOrSelfOf, c(ty)),
            _ => c(ty),
        };
        if self.rng.chance(8) {
            let value = if self.rng.chance(50) {
                c(src)
            } else {
                op(DescendantOrSelfOf, c(self.rng.pick(&self.p.inner)))
            };
            return attr(cardinality, true, name, self.rng.chance(85), value);
        }
        if !self.p.concrete.is_empty() && self.rng.chance(15) {
            let (ty, v) = self.rng.pick(&self.p.concrete);
            let comparison = match v {
                Val::N(x) => Comparison::Number {
                    op: self.rng.pick(&NumericOp::ALL),
                    value: Number {
                        text: x.to_string(),
                        value: x,
                    },
                },
                Val::T(t) => {
                    let cut: String = t.chars().take(1 + self.rng.below(3)).collect();
                    let term = match self.rng.below(4) {
                        0 => SearchTerm::Match {
                            text: cut,
                            explicit: true,
                        },
                        1 => SearchTerm::Wild(format!("{cut}*")),
                        _ => SearchTerm::Match {
                            text: t,
                            explicit: false,
                        },
                    };
                    Comparison::String {
                        equal: self.rng.chance(80),
                        terms: vec![term],
                    }
                }
                Val::B(b) => Comparison::Boolean {
                    equal: self.rng.chance(80),
                    value: b,
                },
                _ => Comparison::Boolean {
                    equal: true,
                    value: true,
                },
            };
            return Refinement::Attribute(Box::new(Attribute {
                cardinality,
                reverse: false,
                name: if self.rng.chance(90) { c(ty) } else { any() },
                comparison,
                span: Span::default(),
            }));
        }
        let value = match self.rng.below(20) {
            0..=7 => c(target),
            8..=14 => op(DescendantOrSelfOf, c(target)),
            15..=16 => any(),
            _ => op(DescendantOf, c(self.rng.pick(&self.p.inner))),
        };
        attr(cardinality, false, name, self.rng.chance(85), value)
    }

    fn refinement(&mut self, depth: u32) -> Refinement {
        match self.rng.below(100) {
            r if depth == 0 || r < 50 => self.attribute(),
            50..=69 => {
                let inner = if self.rng.chance(50) {
                    self.attribute()
                } else {
                    Refinement::And(vec![self.attribute(), self.attribute()])
                };
                group(self.cardinality(), inner)
            }
            70..=87 => {
                Refinement::And(vec![self.refinement(depth - 1), self.refinement(depth - 1)])
            }
            _ => Refinement::Or(vec![self.refinement(depth - 1), self.refinement(depth - 1)]),
        }
    }
}

#[test]
fn evaluator_agrees_with_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let budget = Budget::default();
    let (mut cases, mut nonempty, mut checked) = (0, 0, 0);
    for (size, seed) in [(320, 1), (450, 2), (600, 3), (800, 4)] {
        let size = size.max(txmap_synth::min_concepts() + 100);
        let ed = synth(dir.path(), size, seed);
        // History supplements read the reverse association index, and
        // refinements the type indexes; files without them (format 1.0)
        // scan the association refsets and test concepts one by one. Both
        // must agree.
        assert!(ed.has_association_targets());
        assert!(
            (0..ed.concept_count()).any(|o| ed.associations_to(o).unwrap().len() > 0),
            "seed {seed}: no associations to test history supplements with"
        );
        use txmap_store::SectionKind::*;
        let old = without_sections(
            &ed,
            &[
                AssociationTargets,
                AttributeTypesIndex,
                AttributeTypeSources,
                ConcreteTypesIndex,
                ConcreteTypeSources,
                RefsetConceptsIndex,
                RefsetConcepts,
            ],
            &dir.path().join(format!("old-{seed}.txmap")),
        );
        assert!(!old.has_association_targets());
        assert!(old.attribute_type_sources(0).unwrap().is_none());
        let reference = Reference::new(&ed);
        let pools = Pools::new(&ed, &reference);
        let mut g = Gen {
            p: &pools,
            rng: Rng(0x9E37_79B9_7F4A_7C15 ^ seed),
        };
        for _ in 0..900 {
            let x = g.expr(3);
            let expected: Vec<u32> = reference.expr(&x).into_iter().collect();
            let got = evaluate(&ed, &x, &budget).unwrap();
            assert_eq!(got, expected, "seed {seed}: {x:#?}");
            let scanned = evaluate(&old, &x, &budget).unwrap();
            assert_eq!(scanned, expected, "seed {seed}, without index: {x:#?}");
            cases += 1;
            nonempty += usize::from(!got.is_empty());
            let mut sample: Vec<u32> = (0..4)
                .map(|_| g.rng.below(ed.concept_count() as usize) as u32)
                .collect();
            sample.extend(
                (0..4)
                    .filter(|_| !got.is_empty())
                    .map(|_| got[g.rng.below(got.len())]),
            );
            for o in sample {
                let m = matches(&ed, &x, &Subject::Concept(o), &budget).unwrap();
                assert_eq!(
                    m,
                    got.binary_search(&o).is_ok(),
                    "seed {seed}, concept {o}: {x:#?}"
                );
                checked += 1;
            }
        }
    }
    eprintln!("{cases} expressions ({nonempty} non-empty), {checked} membership tests");
    assert!(
        nonempty * 3 > cases,
        "too few non-empty results: {nonempty} of {cases}"
    );
}

/// A refinement whose few candidates sit in a focus far larger than they
/// are (`<< X : T = V` with V a rare value) tests each candidate against
/// the focus rather than building it (`LAZY_FOCUS_RATIO`), a path the
/// random expressions over small editions rarely take; every such
/// expression over rare (type, value) pairs of a larger edition agrees
/// with the reference.
#[test]
fn few_candidates_in_a_large_focus_agree_with_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let ed = synth(dir.path(), 3000, 9);
    let reference = Reference::new(&ed);
    let budget = Budget::default();
    let id = |o: u32| ed.sctid(o).unwrap();
    let root = ed.ordinal(ROOT).unwrap();
    let mut tops: Vec<u32> = vec![root];
    tops.extend(ed.children(root).unwrap().iter());
    // (type, value) pairs with few sources.
    let mut pairs: BTreeMap<(u64, u32), usize> = BTreeMap::new();
    for rels in &reference.rels {
        for r in rels {
            if let Val::C(v) = r.val {
                *pairs.entry((r.ty, v)).or_default() += 1;
            }
        }
    }
    let mut lazy = 0;
    for (&(ty, v), &n) in pairs.iter().filter(|(_, n)| **n <= 20).take(60) {
        for &x in &tops {
            let size = ed.descendants(x).unwrap().len();
            for op in ["<<", "<"] {
                let text = format!("{op} {} : {ty} = {}", id(x), id(v));
                let e = txmap_ecl::parse(&text).unwrap();
                let expected: Vec<u32> = reference.expr(&e).into_iter().collect();
                assert_eq!(evaluate(&ed, &e, &budget).unwrap(), expected, "{text}");
                lazy += usize::from(n * 32 < size);
            }
        }
    }
    assert!(lazy > 50, "only {lazy} expressions had few candidates");
}

/// The hierarchy operators over big sets — whole hierarchies, unions of
/// two, refsets' members scattered over the edition — take the set-wise
/// paths (a walk up `Parents` for ancestors, a bitmap union of
/// descendants) that the random expressions over small editions rarely
/// reach; every such expression agrees with the reference.
#[test]
fn hierarchy_operators_over_big_sets_agree_with_the_reference() {
    let dir = tempfile::tempdir().unwrap();
    let ed = synth(dir.path(), 3000, 11);
    let reference = Reference::new(&ed);
    let budget = Budget::default();
    let id = |o: u32| ed.sctid(o).unwrap();
    let big: Vec<u32> = (0..ed.concept_count())
        .filter(|&o| ed.descendants(o).unwrap().len() >= 64)
        .collect();
    assert!(
        big.len() >= 10,
        "only {} concepts with 64 descendants",
        big.len()
    );
    let mut operands: Vec<String> = big
        .iter()
        .take(40)
        .map(|&x| format!("<< {}", id(x)))
        .collect();
    operands.extend(
        big.windows(2)
            .take(20)
            .map(|w| format!("(< {} OR < {})", id(w[0]), id(w[1]))),
    );
    operands.extend(ed.refsets().map(|r| format!("^ {}", r.id)));
    let mut walked = 0;
    for operand in &operands {
        for op in [">", ">>", "<", "<<", "!!>", "!!<", ">!", "<!"] {
            let text = format!("{op} ({operand})");
            let e = txmap_ecl::parse(&text).unwrap();
            let expected: Vec<u32> = reference.expr(&e).into_iter().collect();
            assert_eq!(evaluate(&ed, &e, &budget).unwrap(), expected, "{text}");
        }
        let e = txmap_ecl::parse(operand).unwrap();
        walked += usize::from(evaluate(&ed, &e, &budget).unwrap().len() >= 64);
    }
    assert!(walked >= 20, "only {walked} operands of 64 members or more");
}

/// `wild` patterns over every concept (a set big enough for the word
/// index to narrow it first, by the words of the pattern that start after
/// a separator) agree with the reference: semantic tags, term starts,
/// words inside, pieces of words, and patterns with no such word. The
/// even patterns here, the odd in the next test, which runs beside it.
#[test]
fn wild_patterns_over_every_concept_agree_with_the_reference_even() {
    wild_patterns_agree(0);
}

/// The odd patterns: the two halves run side by side.
#[test]
fn wild_patterns_over_every_concept_agree_with_the_reference_odd() {
    wild_patterns_agree(1);
}

fn wild_patterns_agree(half: usize) {
    let dir = tempfile::tempdir().unwrap();
    let ed = synth(dir.path(), 3000, 5);
    let reference = Reference::new(&ed);
    let budget = Budget::default();
    let mut patterns: BTreeSet<String> = BTreeSet::new();
    for o in (0..ed.concept_count()).step_by(331) {
        for d in ed.descriptions(o).unwrap() {
            let t = d.term.to_lowercase();
            if let Some((_, tag)) = t.rsplit_once('(') {
                patterns.insert(format!("*({tag}"));
            }
            let ws: Vec<&str> = t.split(' ').filter(|w| w.len() > 3).collect();
            if let [first, .., last] = ws.as_slice() {
                patterns.insert(format!("{}*", &first[..3]));
                patterns.insert(format!("* {last}*"));
                patterns.insert(format!("*{}*", &last[1..3]));
                patterns.insert(format!("{first} *"));
                patterns.insert(format!("*{first}*{}*", &last[..2]));
            }
        }
    }
    assert!(patterns.len() > 20, "{} patterns", patterns.len());
    let mut found = 0;
    for p in patterns.iter().skip(half).step_by(2) {
        for text in [
            format!("* {{{{ D term = wild:\"{p}\" }}}}"),
            format!("* {{{{ D term = wild:\"{p}\", type = fsn }}}}"),
            format!("<< 138875005 {{{{ D term = (wild:\"{p}\" \"zz\") }}}}"),
        ] {
            let e = txmap_ecl::parse(&text).unwrap();
            let expected: Vec<u32> = reference.expr(&e).into_iter().collect();
            found += expected.len();
            assert_eq!(evaluate(&ed, &e, &budget).unwrap(), expected, "{text}");
        }
    }
    assert!(found > 500, "the patterns matched only {found} concepts");
}
