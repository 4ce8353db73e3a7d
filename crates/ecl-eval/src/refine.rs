//! Refinements: compiled once per evaluation (attribute names and values
//! turned into sets), then tested against each candidate's relationships.

use std::rc::Rc;

use txmap_ecl::{Cardinality, Comparison, NumericOp, Refinement, SearchTerm, SubExpr};

use crate::eval::{Ctx, R, is_wildcard, parse_bool};
use crate::set::{BITMAP_FROM, Bits, contains, difference, intersect, normalize, union};

use crate::{ExpressionSubject, SubjectValue};

/// A required attribute naming at most this many types can drive a
/// refinement from the edition's type index.
const DRIVING_TYPES: usize = 16;

/// The concepts an attribute name or value stands for.
pub(crate) enum Set<'x> {
    /// A bare `*`.
    Any,
    /// Evaluated once; big sets also as a bitmap, so that testing a
    /// candidate's every relationship is a bit test, not a binary search.
    Of(Rc<Vec<u32>>, Option<Bits>),
    /// Tested concept by concept (for [`matches`](crate::matches)).
    Lazy(&'x SubExpr),
}

pub(crate) enum Compiled<'x> {
    And(Vec<Compiled<'x>>),
    Or(Vec<Compiled<'x>>),
    Attr(Attr<'x>),
    Group {
        min: u32,
        max: Option<u32>,
        inner: Box<Compiled<'x>>,
    },
}

pub(crate) struct Attr<'x> {
    min: u32,
    max: Option<u32>,
    reverse: bool,
    types: Set<'x>,
    test: Test<'x>,
}

enum Test<'x> {
    Concept {
        equal: bool,
        values: Set<'x>,
    },
    Number {
        op: NumericOp,
        value: f64,
    },
    /// Any of the terms: a plain string compared whole, `match:` and
    /// `wild:` as in a term filter.
    String {
        equal: bool,
        terms: &'x [SearchTerm],
    },
    Boolean {
        equal: bool,
        value: bool,
    },
}

impl Compiled<'_> {
    /// Whether any attribute is reversed (`R A = V`): testing a concept
    /// against it reads the concept's inbound relationships.
    pub(crate) fn has_reverse(&self) -> bool {
        match self {
            Compiled::And(xs) | Compiled::Or(xs) => xs.iter().any(Compiled::has_reverse),
            Compiled::Group { inner, .. } => inner.has_reverse(),
            Compiled::Attr(a) => a.reverse,
        }
    }

    /// Whether any attribute compares concrete values.
    pub(crate) fn has_values_test(&self) -> bool {
        match self {
            Compiled::And(xs) | Compiled::Or(xs) => xs.iter().any(Compiled::has_values_test),
            Compiled::Group { inner, .. } => inner.has_values_test(),
            Compiled::Attr(a) => !matches!(a.test, Test::Concept { .. }),
        }
    }
}

/// One attribute of a candidate: relationship or concrete value. Strings
/// borrow from the edition (or the expression being tested).
pub(crate) struct Rel<'v> {
    group: u32,
    /// Ordinal of the type; `None` if it is no concept of the edition.
    type_ord: Option<u32>,
    value: Value<'v>,
}

enum Value<'v> {
    Concept(Option<u32>),
    Number(f64),
    Str(&'v str),
    Bool(bool),
    Other,
}

impl<'v> Value<'v> {
    /// An RF2 concrete value: `#12.5`, `"text"`, `true`.
    fn concrete(c: &txmap_store::ConcreteLink<'v>) -> R<Value<'v>> {
        if let Some(n) = c.number() {
            return Ok(Value::Number(n));
        }
        let v = c.value()?;
        if v.starts_with('#') {
            return Ok(Value::Other);
        }
        if let Some(s) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
            return Ok(Value::Str(s));
        }
        Ok(parse_bool(v).map_or(Value::Other, Value::Bool))
    }
}

fn intersect_u64(a: &[u64], b: &[u64]) -> Vec<u64> {
    let (small, big) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    small
        .iter()
        .copied()
        .filter(|x| big.binary_search(x).is_ok())
        .collect()
}

fn union_u64(mut a: Vec<u64>, b: Vec<u64>) -> Vec<u64> {
    a.extend(b);
    a.sort_unstable();
    a.dedup();
    a
}

/// A set of concepts given as the concepts in a set, or as those not in
/// it (for `[0..0]`): so that `AND` and `OR` of both stay set operations.
/// What [`Ctx::set_wise_parts`] computes of a refinement.
pub(crate) enum SetWise<'x> {
    /// All of it.
    All(Sets),
    /// Some parts of a conjunction: the concepts they allow, ascending, and
    /// the other parts.
    Part(Vec<u32>, Compiled<'x>),
    /// Nothing that saves tests: the refinement back.
    None(Compiled<'x>),
}

pub(crate) enum Sets {
    In(Vec<u32>),
    NotIn(Vec<u32>),
}

impl Sets {
    fn and(self, other: Sets) -> Sets {
        use Sets::*;
        match (self, other) {
            (In(a), In(b)) => In(intersect(&a, &b)),
            (In(a), NotIn(b)) | (NotIn(b), In(a)) => In(difference(&a, &b)),
            (NotIn(a), NotIn(b)) => NotIn(union(&a, &b)),
        }
    }

    fn or(self, other: Sets) -> Sets {
        use Sets::*;
        match (self, other) {
            (In(a), In(b)) => In(union(&a, &b)),
            (In(a), NotIn(b)) | (NotIn(b), In(a)) => NotIn(difference(&b, &a)),
            (NotIn(a), NotIn(b)) => NotIn(intersect(&a, &b)),
        }
    }

    /// The concepts of sorted `focus` in the set.
    pub(crate) fn within(&self, focus: &[u32]) -> Vec<u32> {
        match self {
            Sets::In(s) => intersect(focus, s),
            Sets::NotIn(s) => difference(focus, s),
        }
    }
}

/// The sorted union of the type index's lists: one list as it is (each
/// is ascending and unique), unless damaged out of order; more, sorted.
fn union_of(lists: &[txmap_store::Ordinals<'_>]) -> Vec<u32> {
    let mut out = Vec::with_capacity(lists.iter().map(|l| l.len()).sum());
    for l in lists {
        out.extend(l.iter());
    }
    if lists.len() > 1 || out.windows(2).any(|w| w[1] <= w[0]) {
        out = normalize(out);
    }
    out
}

/// The most attributes of one group [`Ctx::groups_hold`] counts at once.
const GROUP_ATTRS: usize = 8;

/// The attributes of a group, when each is a forward concept test
/// required at least once and there are at most [`GROUP_ATTRS`]: such a
/// group is counted link by link ([`Ctx::groups_hold`]).
fn required_in_group<'c, 'x>(inner: &'c Compiled<'x>) -> Option<Vec<&'c Attr<'x>>> {
    let plain = |c: &'c Compiled<'x>| match c {
        Compiled::Attr(a) if !a.reverse && a.min >= 1 && matches!(a.test, Test::Concept { .. }) => {
            Some(a)
        }
        _ => None,
    };
    let attrs: Option<Vec<&Attr<'x>>> = match inner {
        Compiled::And(xs) => xs.iter().map(plain).collect(),
        c => plain(c).map(|a| vec![a]),
    };
    attrs.filter(|a| !a.is_empty() && a.len() <= GROUP_ATTRS)
}

fn cardinality(c: Option<Cardinality>) -> (u32, Option<u32>) {
    c.map_or((1, None), |c| (c.min, c.max))
}

fn within(n: u32, min: u32, max: Option<u32>) -> bool {
    n >= min && max.is_none_or(|m| n <= m)
}

/// What [`Ctx::count_links`] counts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Count {
    All,
    /// Relationships in a role group (group > 0).
    Grouped,
    /// The distinct concepts at the other end.
    Sources,
}

/// A candidate's reverse relationships, loaded on first use.
struct Inbound<'v> {
    ordinal: Option<u32>,
    rels: Option<Vec<Rel<'v>>>,
}

impl Compiled<'_> {
    /// Whether the refinement is one attribute that must occur at least
    /// once, with no upper bound — bare, or alone in a group that must
    /// occur at least once, with no upper bound: then a concept satisfies
    /// it exactly when it has one matching relationship, and the cost
    /// rule's candidates (which are the concepts with one) are the answer.
    fn is_existential(&self) -> bool {
        match self {
            Compiled::Attr(a) => a.min == 1 && a.max.is_none(),
            Compiled::Group {
                min: 1,
                max: None,
                inner,
            } => matches!(&**inner, Compiled::Attr(_)) && inner.is_existential(),
            _ => false,
        }
    }
}

impl<'a, B: AsRef<[u8]>> Ctx<'a, B> {
    pub(crate) fn set<'x>(&mut self, s: &'x SubExpr, lazy: bool) -> R<Set<'x>> {
        Ok(if is_wildcard(s) {
            Set::Any
        } else if lazy {
            Set::Lazy(s)
        } else {
            let v = self.memo_sub(s)?;
            let bits = (v.len() >= BITMAP_FROM).then(|| Bits::of(self.ed.concept_count(), &v));
            Set::Of(v, bits)
        })
    }

    pub(crate) fn in_set(&mut self, set: &Set<'_>, o: Option<u32>) -> R<bool> {
        match (set, o) {
            (Set::Any, _) => Ok(true),
            (_, None) => Ok(false),
            (Set::Of(_, Some(b)), Some(o)) => Ok(b.contains(o)),
            (Set::Of(v, None), Some(o)) => Ok(contains(v, o)),
            (Set::Lazy(s), Some(o)) => self.matches_sub(s, o),
        }
    }

    /// The concepts with an attribute relationship of one of `types`, from
    /// the edition's type index: `None` when `types` is not a few named
    /// types, when the file has no type index, or when they have `than`
    /// sources or more (then reading each candidate's attributes costs
    /// less than merging).
    pub(crate) fn attribute_sources(
        &mut self,
        types: &Set<'_>,
        than: usize,
    ) -> R<Option<Vec<u32>>> {
        let Set::Of(types, _) = types else {
            return Ok(None);
        };
        if types.len() > DRIVING_TYPES {
            return Ok(None);
        }
        let Some(lists) = self.type_sources(types, false)? else {
            return Ok(None);
        };
        let total = lists.iter().map(|l| l.len()).sum::<usize>();
        if total >= than {
            return Ok(None);
        }
        self.tick(total + 1)?;
        Ok(Some(union_of(&lists)))
    }

    /// The type index's list of the concepts with an attribute
    /// relationship (`concrete`: a concrete value) of each of `types`;
    /// `None` for an edition without type indexes (before format 1.2).
    fn type_sources(
        &self,
        types: &[u32],
        concrete: bool,
    ) -> R<Option<Vec<txmap_store::Ordinals<'a>>>> {
        let ed = self.ed;
        let mut lists = Vec::with_capacity(types.len());
        for &t in types {
            let sources = if concrete {
                ed.concrete_type_sources(t)?
            } else {
                ed.attribute_type_sources(t)?
            };
            let Some(sources) = sources else {
                return Ok(None);
            };
            lists.push(sources);
        }
        Ok(Some(lists))
    }

    /// Compiles a refinement; `lazy` leaves attribute names and values as
    /// membership tests instead of evaluating them.
    pub(crate) fn compile<'x>(&mut self, r: &'x Refinement, lazy: bool) -> R<Compiled<'x>> {
        Ok(match r {
            Refinement::And(xs) => {
                Compiled::And(xs.iter().map(|x| self.compile(x, lazy)).collect::<R<_>>()?)
            }
            Refinement::Or(xs) => {
                Compiled::Or(xs.iter().map(|x| self.compile(x, lazy)).collect::<R<_>>()?)
            }
            Refinement::Group(g) => {
                let (min, max) = cardinality(g.cardinality);
                Compiled::Group {
                    min,
                    max,
                    inner: Box::new(self.compile(&g.attributes, lazy)?),
                }
            }
            Refinement::Attribute(a) => {
                let (min, max) = cardinality(a.cardinality);
                let test = match &a.comparison {
                    Comparison::Concept { equal, value } => Test::Concept {
                        equal: *equal,
                        values: self.set(value, lazy)?,
                    },
                    Comparison::Number { op, value } => Test::Number {
                        op: *op,
                        value: value.value,
                    },
                    Comparison::String { equal, terms } => Test::String {
                        equal: *equal,
                        terms,
                    },
                    Comparison::Boolean { equal, value } => Test::Boolean {
                        equal: *equal,
                        value: *value,
                    },
                };
                Compiled::Attr(Attr {
                    min,
                    max,
                    reverse: a.reverse,
                    types: self.set(&a.name, lazy)?,
                    test,
                })
            }
        })
    }

    /// The cost rule: when an attribute that must hold (`=`, `min ≥ 1`,
    /// not under a disjunction) has a value set much smaller than the
    /// focus, the candidates are the sources of the values' inbound
    /// relationships of a matching type (a superset of the answer) — for a
    /// reverse attribute, the targets of the values' own relationships.
    /// Otherwise, when the concepts having an attribute of the types that
    /// must occur (one of a disjunction's, if every branch needs one) are
    /// few, they are the candidates, from the type index.
    /// Returns the candidates, and whether they are the answer (see
    /// [`Compiled::is_existential`]) rather than a superset of it.
    pub(crate) fn drive(&mut self, c: &Compiled<'_>, focus: usize) -> R<Option<(Vec<u32>, bool)>> {
        /// What every answer must have: for each entry, one of its
        /// attributes. An attribute with `min ≥ 1` (inside groups that must
        /// occur) is an entry of one; a disjunction whose every branch
        /// needs something is an entry of one such attribute of each branch
        /// (an answer meets some branch, so has that branch's).
        fn required<'c, 'x>(c: &'c Compiled<'x>, out: &mut Vec<Vec<&'c Attr<'x>>>) {
            match c {
                Compiled::And(xs) => xs.iter().for_each(|x| required(x, out)),
                Compiled::Group { min, inner, .. } if *min >= 1 => required(inner, out),
                Compiled::Attr(a) if a.min >= 1 => out.push(vec![a]),
                Compiled::Or(xs) => {
                    let mut any = Vec::new();
                    for x in xs {
                        let mut branch = Vec::new();
                        required(x, &mut branch);
                        match branch.into_iter().next() {
                            Some(mut first) => any.append(&mut first),
                            None => return,
                        }
                    }
                    out.push(any);
                }
                _ => {}
            }
        }
        let mut needs = Vec::new();
        required(c, &mut needs);
        let found: Vec<&Attr<'_>> = needs
            .iter()
            .filter_map(|n| match n.as_slice() {
                [a] => Some(*a),
                _ => None,
            })
            .collect();
        // From the values: the smallest `=` value set.
        let best = found
            .iter()
            .filter_map(|&a| match &a.test {
                Test::Concept {
                    equal: true,
                    values: Set::Of(v, _),
                } => Some((a, v)),
                _ => None,
            })
            .min_by_key(|(_, v)| v.len());
        // `{ A = X }` alone needs a grouped relationship: ungrouped ones
        // (group 0) are no candidates.
        let grouped = matches!(c, Compiled::Group { .. });
        if let Some((a, values)) = best
            && values.len().saturating_mul(8) < focus
        {
            let ed = self.ed;
            let mut out = Vec::new();
            for &v in values.iter() {
                // `target` is the other end either way: the source in an
                // inbound list, the target in the value's own attributes.
                let links: Vec<txmap_store::Link> = if a.reverse {
                    ed.attribute_links(v)?.collect()
                } else {
                    ed.inbound_links(v)?.collect()
                };
                self.tick(links.len() + 1)?;
                for l in links {
                    if (!grouped || l.group != 0) && self.in_set(&a.types, Some(l.type_ord))? {
                        out.push(l.target_ord);
                    }
                }
            }
            return Ok(Some((normalize(out), c.is_existential())));
        }
        // From the types: the concepts having a relationship (or concrete
        // value) of one of a few named types, read from the edition's type
        // index, when that is much smaller than the focus.
        let mut by_type: Option<(usize, Vec<txmap_store::Ordinals<'_>>, &[&Attr<'_>])> = None;
        'needs: for n in &needs {
            let (mut lists, mut total) = (Vec::new(), 0);
            for &a in n {
                let Set::Of(types, _) = &a.types else {
                    continue 'needs;
                };
                if a.reverse || types.len() > DRIVING_TYPES {
                    continue 'needs;
                }
                let concrete = !matches!(a.test, Test::Concept { .. });
                // An edition without type indexes (before format 1.2).
                let Some(sources) = self.type_sources(types, concrete)? else {
                    break 'needs;
                };
                total += sources.iter().map(|s| s.len()).sum::<usize>();
                lists.extend(sources);
            }
            if by_type.as_ref().is_none_or(|(n, ..)| total < *n) {
                by_type = Some((total, lists, n.as_slice()));
            }
        }
        let Some((total, lists, need)) = by_type else {
            return Ok(None);
        };
        if total.saturating_mul(4) >= focus {
            return Ok(None);
        }
        self.tick(total + 1)?;
        let candidates = union_of(&lists);
        // `T = *` alone: having a relationship of type T is the answer
        // (the type index does not say which are grouped).
        let exact = c.is_existential()
            && !grouped
            && matches!(
                need,
                [Attr {
                    test: Test::Concept {
                        equal: true,
                        values: Set::Any
                    },
                    ..
                }]
            );
        Ok(Some((candidates, exact)))
    }

    /// The refinement as a set of concepts, computed from the values'
    /// relationships instead of by testing each concept of the focus:
    /// possible when it is ungrouped attributes `A = V` (and `R A = V`),
    /// each required once (`[1..*]`, the default) or absent (`[0..0]`),
    /// under any `AND`/`OR` — for then a concept satisfies `A = V` exactly
    /// when it is the source of a relationship of a type in A to a value
    /// in V (the inbound lists of V), and `AND`/`OR` are intersection and
    /// union. `None` when the refinement has another shape, or when
    /// reading the values' relationships would cost more than
    /// `max_links`: then concepts are tested one by one.
    pub(crate) fn set_wise(&mut self, c: &Compiled<'_>, max_links: usize) -> R<Option<Sets>> {
        let mut budget = max_links;
        self.sets_of(c, &mut budget)
    }

    /// [`set_wise`](Self::set_wise), and for a conjunction of which it
    /// computes only some parts, those parts: the concepts they allow, and
    /// the other parts, to test on those concepts alone — `<< X : A = #n,
    /// B = << Y` tests the concrete values of the concepts with a `B` in
    /// `<< Y` only, not of all of `<< X`. The parts share one budget, as
    /// the whole conjunction's would; one that cannot be computed gives
    /// back what it took.
    pub(crate) fn set_wise_parts<'x>(
        &mut self,
        c: Compiled<'x>,
        max_links: usize,
    ) -> R<SetWise<'x>> {
        let Compiled::And(xs) = c else {
            return Ok(match self.set_wise(&c, max_links)? {
                Some(sets) => SetWise::All(sets),
                None => SetWise::None(c),
            });
        };
        let mut budget = max_links;
        let mut sets = Vec::with_capacity(xs.len());
        for x in &xs {
            let mut left = budget;
            let set = self.sets_of(x, &mut left)?;
            if set.is_some() {
                budget = left;
            }
            sets.push(set);
        }
        let (mut settled, mut parts, mut rest) = (None::<Sets>, Vec::new(), Vec::new());
        for (x, set) in xs.into_iter().zip(sets) {
            match set {
                Some(set) => {
                    settled = Some(match settled {
                        None => set,
                        Some(acc) => acc.and(set),
                    });
                    parts.push(x);
                }
                None => rest.push(x),
            }
        }
        Ok(match settled {
            Some(sets) if rest.is_empty() => SetWise::All(sets),
            Some(Sets::In(within)) => SetWise::Part(
                within,
                match <[Compiled<'x>; 1]>::try_from(rest) {
                    Ok([one]) => one,
                    Err(rest) => Compiled::And(rest),
                },
            ),
            // Nothing computed, or only what excludes a few concepts (no
            // fewer tests).
            _ => {
                parts.append(&mut rest);
                SetWise::None(Compiled::And(parts))
            }
        })
    }

    fn sets_of(&mut self, c: &Compiled<'_>, budget: &mut usize) -> R<Option<Sets>> {
        match c {
            Compiled::And(xs) | Compiled::Or(xs) => {
                let and = matches!(c, Compiled::And(_));
                let mut acc: Option<Sets> = None;
                for x in xs {
                    let Some(s) = self.sets_of(x, budget)? else {
                        return Ok(None);
                    };
                    acc = Some(match acc {
                        None => s,
                        Some(a) if and => a.and(s),
                        Some(a) => a.or(s),
                    });
                }
                Ok(acc)
            }
            Compiled::Group { min, max, inner } => {
                let present = match (min, max) {
                    (1, None) => true,
                    (0, Some(0)) => false,
                    _ => return Ok(None),
                };
                let Some(pairs) = self.group_pairs(inner, budget)? else {
                    return Ok(None);
                };
                // The concepts with one role group that satisfies it all.
                let set = normalize(pairs.iter().map(|&p| (p >> 16) as u32).collect());
                Ok(Some(if present {
                    Sets::In(set)
                } else {
                    Sets::NotIn(set)
                }))
            }
            Compiled::Attr(a) => {
                let Set::Of(types, type_bits) = &a.types else {
                    return Ok(None);
                };
                let present = match (a.min, a.max) {
                    (1, None) => true,
                    (0, Some(0)) => false,
                    _ => return Ok(None),
                };
                let values = match &a.test {
                    Test::Concept {
                        equal: true,
                        values: Set::Of(values, _),
                    } => values,
                    // `A = *`: the concepts with a relationship of a type
                    // in A, from the edition's type index.
                    Test::Concept {
                        equal: true,
                        values: Set::Any,
                    } if !a.reverse && types.len() <= DRIVING_TYPES => {
                        let mut out = Vec::new();
                        for &t in types.iter() {
                            let Some(sources) = self.ed.attribute_type_sources(t)? else {
                                return Ok(None);
                            };
                            if sources.len() > *budget {
                                return Ok(None);
                            }
                            *budget -= sources.len();
                            self.tick(sources.len() + 1)?;
                            out = union(&out, &sources.to_vec());
                        }
                        return Ok(Some(if present {
                            Sets::In(out)
                        } else {
                            Sets::NotIn(out)
                        }));
                    }
                    _ => return Ok(None),
                };
                // What the values' lists hold, before reading them.
                let ed = self.ed;
                let mut total = 0usize;
                for &v in values.iter() {
                    total += if a.reverse {
                        ed.attribute_links(v)?.len()
                    } else {
                        ed.inbound_links(v)?.len()
                    };
                    if total > *budget {
                        return Ok(None);
                    }
                }
                *budget -= total;
                self.tick(total + values.len())?;
                let mut out = Vec::with_capacity(total);
                let has_type = |t: u32| match type_bits {
                    Some(b) => b.contains(t),
                    None => contains(types, t),
                };
                for &v in values.iter() {
                    // The other end either way: the source in an inbound
                    // list, the target in the value's own attributes.
                    if a.reverse {
                        out.extend(
                            ed.attribute_links(v)?
                                .filter(|l| has_type(l.type_ord))
                                .map(|l| l.target_ord),
                        );
                    } else {
                        out.extend(
                            ed.inbound_links(v)?
                                .filter(|l| has_type(l.type_ord))
                                .map(|l| l.target_ord),
                        );
                    }
                }
                let set = normalize(out);
                Ok(Some(if present {
                    Sets::In(set)
                } else {
                    Sets::NotIn(set)
                }))
            }
        }
    }

    /// Inside a group: the (concept, role group) pairs, as `concept << 16 |
    /// group`, sorted, whose relationships satisfy `c` — attributes `A =
    /// V` required once (`[1..*]`) under `AND` (the same group has both)
    /// and `OR`. Ungrouped relationships (group 0) are in no group.
    fn group_pairs(&mut self, c: &Compiled<'_>, budget: &mut usize) -> R<Option<Vec<u64>>> {
        match c {
            Compiled::And(xs) | Compiled::Or(xs) => {
                let and = matches!(c, Compiled::And(_));
                let mut acc: Option<Vec<u64>> = None;
                for x in xs {
                    let Some(p) = self.group_pairs(x, budget)? else {
                        return Ok(None);
                    };
                    acc = Some(match acc {
                        None => p,
                        Some(a) if and => intersect_u64(&a, &p),
                        Some(a) => union_u64(a, p),
                    });
                }
                Ok(acc)
            }
            Compiled::Group { .. } => Ok(None),
            Compiled::Attr(a) => {
                let (
                    Test::Concept {
                        equal: true,
                        values: Set::Of(values, _),
                    },
                    Set::Of(types, type_bits),
                    1,
                    None,
                    false,
                ) = (&a.test, &a.types, a.min, a.max, a.reverse)
                else {
                    return Ok(None);
                };
                let ed = self.ed;
                let mut total = 0usize;
                for &v in values.iter() {
                    total += ed.inbound_links(v)?.len();
                    if total > *budget {
                        return Ok(None);
                    }
                }
                *budget -= total;
                self.tick(total + values.len())?;
                let has_type = |t: u32| match type_bits {
                    Some(b) => b.contains(t),
                    None => contains(types, t),
                };
                let mut out = Vec::with_capacity(total);
                for &v in values.iter() {
                    out.extend(
                        ed.inbound_links(v)?
                            .filter(|l| l.group != 0 && has_type(l.type_ord))
                            .map(|l| u64::from(l.target_ord) << 16 | u64::from(l.group)),
                    );
                }
                out.sort_unstable();
                out.dedup();
                Ok(Some(out))
            }
        }
    }

    /// A concept's attributes, sorted by group. Concrete values are read
    /// only when `values` (a refinement with a concrete test); otherwise
    /// they still count as attributes of their group, valued `Other`.
    fn concept_rels(&mut self, o: u32, values: bool, rels: &mut Vec<Rel<'a>>) -> R<()> {
        let ed = self.ed;
        let links = ed.attribute_links(o)?;
        rels.extend(links.map(|l| Rel {
            group: u32::from(l.group),
            type_ord: Some(l.type_ord),
            value: Value::Concept(Some(l.target_ord)),
        }));
        let attributes = rels.len();
        if values {
            for c in ed.concrete_links(o)? {
                rels.push(Rel {
                    group: u32::from(c.group),
                    type_ord: Some(c.type_ord),
                    value: Value::concrete(&c)?,
                });
            }
        } else {
            rels.extend(ed.concrete_links(o)?.map(|c| Rel {
                group: u32::from(c.group),
                type_ord: Some(c.type_ord),
                value: Value::Other,
            }));
        }
        self.tick(rels.len() + 1)?;
        // Stored sorted by group already; concrete values come after.
        if rels.len() > attributes && !rels.is_sorted_by_key(|r| r.group) {
            rels.sort_by_key(|r| r.group);
        }
        Ok(())
    }

    /// Whether concept `o` satisfies the refinement; `values` is
    /// `c.has_values_test()`, which callers testing many concepts compute
    /// once.
    pub(crate) fn concept_holds(&mut self, c: &Compiled<'_>, o: u32, values: bool) -> R<bool> {
        match c {
            Compiled::Attr(a) => return self.attr_holds(a, o, false),
            // One attribute that must occur, in a group that must occur:
            // the same as the attribute alone, counted in role groups only.
            // (Not for a reverse one: a group needs a relationship of the
            // candidate's own.)
            Compiled::Group { inner, .. } if c.is_existential() => {
                if let Compiled::Attr(a) = &**inner
                    && !a.reverse
                {
                    return self.attr_holds(a, o, true);
                }
            }
            Compiled::Group { min, max, inner } => {
                if let Some(attrs) = required_in_group(inner) {
                    return self.groups_hold(*min, *max, &attrs, o);
                }
            }
            _ => {}
        }
        // One buffer serves every candidate (a nested refinement, tested
        // from inside this one, finds it taken and allocates its own).
        let mut rels = std::mem::take(&mut self.rels);
        rels.clear();
        let result = self.concept_rels(o, values, &mut rels).and_then(|()| {
            let mut inbound = Inbound {
                ordinal: Some(o),
                rels: None,
            };
            self.holds(c, &rels, &mut inbound)
        });
        rels.clear();
        self.rels = rels;
        result
    }

    /// A refinement of one attribute (`grouped`: in role groups only),
    /// counted straight from the one list it can match in: a concept test
    /// counts relationships (concrete values never satisfy it) — a reverse
    /// one the distinct concepts they come from — and a value test counts
    /// concrete values.
    fn attr_holds(&mut self, a: &Attr<'_>, o: u32, grouped: bool) -> R<bool> {
        let ed = self.ed;
        let mut n = 0;
        match &a.test {
            Test::Concept { equal, values } if a.reverse => {
                let links = ed.inbound_links(o)?;
                n = self.count_links(links, &a.types, *equal, values, Count::Sources)?;
            }
            Test::Concept { equal, values } => {
                let links = ed.attribute_links(o)?;
                let count = if grouped { Count::Grouped } else { Count::All };
                n = self.count_links(links, &a.types, *equal, values, count)?;
            }
            test => {
                // (Reverse attributes with values are refused up front.)
                let rows = ed.concrete_links(o)?;
                self.tick(rows.len() + 1)?;
                for row in rows {
                    if (!grouped || row.group != 0)
                        && self.in_set(&a.types, Some(row.type_ord))?
                        && self.test(test, &Value::concrete(&row)?)?
                    {
                        n += 1;
                    }
                }
            }
        }
        Ok(within(n, a.min, a.max))
    }

    /// A group of attributes each required at least once (`{ A = V, B =
    /// W }`, `[1..1] { A = V }`), counted from the candidate's attribute
    /// links as they are stored, by group: no relationship is copied and
    /// no concrete value read, since a group of concrete values alone has
    /// no concept attribute to satisfy. A group counts when each
    /// attribute's matches in it are within its cardinality.
    fn groups_hold(&mut self, min: u32, max: Option<u32>, attrs: &[&Attr<'_>], o: u32) -> R<bool> {
        let links = self.ed.attribute_links(o)?;
        self.tick(links.len() + 1)?;
        let mut counts = [0u32; GROUP_ATTRS];
        let passes = |counts: &[u32; GROUP_ATTRS]| {
            (attrs.iter().zip(counts)).all(|(a, &n)| within(n, a.min, a.max))
        };
        let (mut n, mut current) = (0, None);
        // Stored sorted by group; ungrouped relationships (group 0) first.
        for l in links.filter(|l| l.group != 0) {
            if current != Some(l.group) {
                if current.is_some() && passes(&counts) {
                    n += 1;
                }
                counts = [0; GROUP_ATTRS];
                current = Some(l.group);
            }
            for (a, count) in attrs.iter().zip(counts.iter_mut()) {
                let Test::Concept { equal, values } = &a.test else {
                    continue;
                };
                if self.in_set(values, Some(l.target_ord))? == *equal
                    && self.in_set(&a.types, Some(l.type_ord))?
                {
                    *count += 1;
                }
            }
        }
        if current.is_some() && passes(&counts) {
            n += 1;
        }
        Ok(within(n, min, max))
    }

    /// The links whose type is in `types` and whose other end is in
    /// (`equal`) or not in `values`, counted as `count` says.
    fn count_links(
        &mut self,
        links: impl ExactSizeIterator<Item = txmap_store::Link>,
        types: &Set<'_>,
        equal: bool,
        values: &Set<'_>,
        count: Count,
    ) -> R<u32> {
        self.tick(links.len() + 1)?;
        let mut n = 0;
        let mut sources = Vec::new();
        for l in links {
            if (count != Count::Grouped || l.group != 0)
                && self.in_set(values, Some(l.target_ord))? == equal
                && self.in_set(types, Some(l.type_ord))?
            {
                n += 1;
                if count == Count::Sources {
                    sources.push(l.target_ord);
                }
            }
        }
        if count == Count::Sources {
            sources.sort_unstable();
            sources.dedup();
            n = sources.len() as u32;
        }
        Ok(n)
    }

    /// Tests an expression's own attributes plus its focus concepts'
    /// (groups renumbered after the expression's own).
    pub(crate) fn expression_holds(&mut self, c: &Compiled<'_>, x: &ExpressionSubject) -> R<bool> {
        let ed = self.ed;
        let mut rels: Vec<Rel<'_>> = x
            .attributes
            .iter()
            .map(|a| Rel {
                group: u32::from(a.group),
                type_ord: ed.ordinal(a.type_id),
                value: match &a.value {
                    SubjectValue::Concept(o) => Value::Concept(Some(*o)),
                    SubjectValue::Number(n) => Value::Number(*n),
                    SubjectValue::String(s) => Value::Str(s),
                },
            })
            .collect();
        let mut offset = rels.iter().map(|r| r.group).max().unwrap_or(0);
        for &f in &x.focus {
            let mut own: Vec<Rel<'a>> = Vec::new();
            self.concept_rels(f, c.has_values_test(), &mut own)?;
            let top = own.iter().map(|r| r.group).max().unwrap_or(0);
            for r in &mut own {
                if r.group != 0 {
                    r.group = r.group.saturating_add(offset);
                }
            }
            offset = offset.saturating_add(top);
            rels.extend(own);
        }
        rels.sort_by_key(|r| r.group);
        let mut inbound = Inbound {
            ordinal: None,
            rels: Some(Vec::new()),
        };
        self.holds(c, &rels, &mut inbound)
    }

    fn holds<'v>(
        &mut self,
        c: &Compiled<'_>,
        rels: &[Rel<'v>],
        inbound: &mut Inbound<'v>,
    ) -> R<bool> {
        match c {
            Compiled::And(xs) => {
                for x in xs {
                    if !self.holds(x, rels, inbound)? {
                        return Ok(false);
                    }
                }
                Ok(true)
            }
            Compiled::Or(xs) => {
                for x in xs {
                    if self.holds(x, rels, inbound)? {
                        return Ok(true);
                    }
                }
                Ok(false)
            }
            Compiled::Attr(a) => {
                let n = if a.reverse {
                    let rels = self.inbound(inbound)?;
                    self.count_sources(a, rels)?
                } else {
                    self.count(a, rels)?
                };
                Ok(within(n, a.min, a.max))
            }
            Compiled::Group { min, max, inner } => {
                // Role groups only: ungrouped relationships (group 0) are
                // in no group (see the crate doc). `rels` is sorted by
                // group, so they come first.
                let grouped = rels.partition_point(|r| r.group == 0);
                let mut n = 0;
                for g in rels[grouped..].chunk_by(|x, y| x.group == y.group) {
                    if self.holds(inner, g, inbound)? {
                        n += 1;
                    }
                }
                Ok(within(n, *min, *max))
            }
        }
    }

    fn inbound<'i, 'v>(&mut self, inbound: &'i mut Inbound<'v>) -> R<&'i [Rel<'v>]> {
        if inbound.rels.is_none() {
            let ed = self.ed;
            let rels: Vec<Rel<'v>> = match inbound.ordinal {
                Some(o) => ed
                    .inbound_links(o)?
                    .map(|l| Rel {
                        group: u32::from(l.group),
                        type_ord: Some(l.type_ord),
                        value: Value::Concept(Some(l.target_ord)),
                    })
                    .collect(),
                None => Vec::new(),
            };
            self.tick(rels.len() + 1)?;
            inbound.rels = Some(rels);
        }
        Ok(inbound.rels.as_deref().unwrap_or_default())
    }

    /// A reverse attribute's count: the distinct concepts whose
    /// relationships to the candidate match (the specification counts
    /// concepts, not relationships).
    fn count_sources(&mut self, a: &Attr<'_>, rels: &[Rel<'_>]) -> R<u32> {
        self.tick(rels.len())?;
        let mut sources = Vec::new();
        for r in rels {
            if let Value::Concept(o) = r.value
                && self.test(&a.test, &r.value)?
                && self.in_set(&a.types, r.type_ord)?
            {
                sources.push(o);
            }
        }
        sources.sort_unstable();
        sources.dedup();
        Ok(sources.len() as u32)
    }

    fn count(&mut self, a: &Attr<'_>, rels: &[Rel<'_>]) -> R<u32> {
        self.tick(rels.len())?;
        let mut n = 0;
        for r in rels {
            if self.test(&a.test, &r.value)? && self.in_set(&a.types, r.type_ord)? {
                n += 1;
            }
        }
        Ok(n)
    }

    fn test(&mut self, t: &Test<'_>, v: &Value<'_>) -> R<bool> {
        Ok(match (t, v) {
            (Test::Concept { equal, values }, Value::Concept(o)) => {
                self.in_set(values, *o)? == *equal
            }
            (Test::Number { op, value }, Value::Number(x)) => op.holds(*x, *value),
            (Test::String { equal, terms }, Value::Str(s)) => {
                let any = terms.iter().any(|t| match t {
                    SearchTerm::Match {
                        text,
                        explicit: false,
                    } => text == s,
                    t => self.term_holds(t, s),
                });
                any == *equal
            }
            (Test::Boolean { equal, value }, Value::Bool(b)) => (b == value) == *equal,
            (Test::Boolean { equal, value }, Value::Number(x)) if *x == 0.0 || *x == 1.0 => {
                ((*x == 1.0) == *value) == *equal
            }
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `AND` and `OR` of sets given either way, against membership tests
    /// over a small universe.
    #[test]
    fn set_algebra_of_in_and_not_in() {
        let universe: Vec<u32> = (0..40).collect();
        let a: Vec<u32> = (0..40).filter(|x| x % 3 == 0).collect();
        let b: Vec<u32> = (0..40).filter(|x| x % 5 < 2).collect();
        let make = |v: &[u32], inside: bool| {
            if inside {
                Sets::In(v.to_vec())
            } else {
                Sets::NotIn(v.to_vec())
            }
        };
        let holds = |v: &[u32], inside: bool, x: u32| v.contains(&x) == inside;
        for ia in [true, false] {
            for ib in [true, false] {
                let and = make(&a, ia).and(make(&b, ib)).within(&universe);
                let or = make(&a, ia).or(make(&b, ib)).within(&universe);
                let expect_and: Vec<u32> = universe
                    .iter()
                    .copied()
                    .filter(|&x| holds(&a, ia, x) && holds(&b, ib, x))
                    .collect();
                let expect_or: Vec<u32> = universe
                    .iter()
                    .copied()
                    .filter(|&x| holds(&a, ia, x) || holds(&b, ib, x))
                    .collect();
                assert_eq!(and, expect_and, "AND, in: {ia} {ib}");
                assert_eq!(or, expect_or, "OR, in: {ia} {ib}");
            }
        }
    }
}
