//! Random syntax trees, printed and parsed back: the result must equal the
//! tree. The generator makes only trees the grammar allows (the parser's
//! normal forms): `And` operands are sub-expressions, refinements are
//! flattened, member filters come with `^`, SCTIDs carry a correct
//! Verhoeff check digit, one-element sets are written as single values.

use txmap_ecl::*;

/// xorshift64*: small, fast, deterministic.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn many<T>(&mut self, min: usize, max: usize, mut f: impl FnMut(&mut Rng) -> T) -> Vec<T> {
        let n = min + self.below(max - min + 1);
        (0..n).map(|_| f(self)).collect()
    }
}

/// `payload` with its Verhoeff check digit appended.
fn with_check_digit(payload: u64) -> u64 {
    payload * 10 + u64::from(txmap_sctid::check_digit(payload))
}

fn sctid(rng: &mut Rng) -> u64 {
    // An item, a partition (00, 01, 02; 10, 11, 12 after a namespace) and
    // the check digit: 6 to 18 digits in all.
    let partition = *rng.pick(&[0, 1, 2]);
    let payload = if rng.chance(20) {
        let item = 1 + rng.next() % 10u64.pow(1 + rng.below(8) as u32);
        (item * 10_000_000 + rng.next() % 10_000_000) * 100 + 10 + partition
    } else {
        let item = 100 + rng.next() % (10u64.pow(3 + rng.below(13) as u32) - 100);
        item * 100 + partition
    };
    with_check_digit(payload)
}

fn span() -> Span {
    Span::default()
}

fn word(rng: &mut Rng, min: usize, max: usize) -> String {
    rng.many(min, max, |r| *r.pick(b"abQzxE"))
        .into_iter()
        .map(char::from)
        .collect()
}

fn concept(rng: &mut Rng) -> ConceptRef {
    let term = rng.chance(30).then(|| {
        let parts = rng.many(1, 3, |r| {
            r.pick(&["Heart", "x", "é", "(a)", "1-2", "\"q\"", "{{", "/*"])
                .to_string()
        });
        parts.join(" ")
    });
    ConceptRef {
        id: sctid(rng),
        term,
        span: span(),
    }
}

fn focus(rng: &mut Rng, depth: u32) -> Focus {
    match rng.below(if depth == 0 { 3 } else { 6 }) {
        0 | 1 => Focus::Concept(concept(rng)),
        2 => Focus::Any(span()),
        3 | 4 => Focus::Nested(Box::new(expr(rng, depth - 1))),
        _ => {
            let scheme = format!("{}-{}", word(rng, 1, 4), rng.below(10));
            let id = if rng.chance(50) {
                format!("{}.{}_-9", word(rng, 1, 3), rng.below(100))
            } else {
                "a b#|c".to_string()
            };
            Focus::AlternateId {
                scheme,
                id,
                span: span(),
            }
        }
    }
}

const OPERATORS: [Operator; 10] = [
    Operator::DescendantOf,
    Operator::DescendantOrSelfOf,
    Operator::ChildOf,
    Operator::ChildOrSelfOf,
    Operator::AncestorOf,
    Operator::AncestorOrSelfOf,
    Operator::ParentOf,
    Operator::ParentOrSelfOf,
    Operator::Top,
    Operator::Bottom,
];
const NUMERIC: [NumericOp; 6] = NumericOp::ALL;

/// A sub-expression; `simple` keeps it to an operator and a concept (for
/// filter values, to bound the size).
fn sub(rng: &mut Rng, depth: u32) -> SubExpr {
    let member_of = rng.chance(20).then(|| match rng.below(4) {
        0 => MemberOf::Components,
        1 => MemberOf::AllFields,
        2 => MemberOf::Refsets,
        _ => MemberOf::Fields(rng.many(1, 3, |r| word(r, 1, 6))),
    });
    let member_filters = if member_of.is_some() && depth > 0 && rng.chance(30) {
        rng.many(1, 2, |r| MemberFilterSet {
            filters: r.many(1, 3, |r| member_filter(r, depth - 1)),
            span: span(),
        })
    } else {
        Vec::new()
    };
    let filters = if depth > 0 && rng.chance(25) {
        rng.many(1, 2, |r| filter(r, depth - 1))
    } else {
        Vec::new()
    };
    let history = (depth > 0 && rng.chance(10)).then(|| match rng.below(5) {
        0 => History::Default,
        1 => History::Min,
        2 => History::Mod,
        3 => History::Max,
        _ => History::Subset(Box::new(expr(rng, depth - 1))),
    });
    SubExpr {
        operator: rng.chance(50).then(|| *rng.pick(&OPERATORS)),
        member_of,
        focus: focus(rng, depth),
        member_filters,
        filters,
        history,
        span: span(),
    }
}

fn expr(rng: &mut Rng, depth: u32) -> Expr {
    if depth == 0 {
        return Expr::Sub(sub(rng, 0));
    }
    let d = depth - 1;
    match rng.below(7) {
        0 => Expr::And(rng.many(2, 4, |r| Expr::Sub(sub(r, d))), span()),
        1 => Expr::Or(rng.many(2, 4, |r| Expr::Sub(sub(r, d))), span()),
        2 => Expr::Minus(
            Box::new(Expr::Sub(sub(rng, d))),
            Box::new(Expr::Sub(sub(rng, d))),
            span(),
        ),
        3 => Expr::Refined(
            Box::new(sub(rng, d)),
            Box::new(refinement(rng, d, true)),
            span(),
        ),
        4 => Expr::Dotted(Box::new(sub(rng, d)), rng.many(1, 3, |r| sub(r, d)), span()),
        _ => Expr::Sub(sub(rng, depth)),
    }
}

fn cardinality(rng: &mut Rng) -> Option<Cardinality> {
    rng.chance(30).then(|| {
        let min = rng.below(3) as u32;
        Cardinality {
            min,
            max: rng.chance(50).then(|| min + rng.below(3) as u32),
        }
    })
}

fn number(rng: &mut Rng) -> Number {
    let text = rng
        .pick(&["0", "5", "-1.5", "+20", "0.25", "123456789", "-0.0"])
        .to_string();
    let value = text.parse().unwrap();
    Number { text, value }
}

fn attribute(rng: &mut Rng, depth: u32) -> Attribute {
    let comparison = match rng.below(5) {
        0 | 1 => Comparison::Concept {
            equal: rng.chance(70),
            value: sub(rng, depth),
        },
        2 => Comparison::Number {
            op: *rng.pick(&NUMERIC),
            value: number(rng),
        },
        3 => Comparison::String {
            equal: rng.chance(50),
            terms: rng.many(1, 3, search_term),
        },
        _ => Comparison::Boolean {
            equal: rng.chance(50),
            value: rng.chance(50),
        },
    };
    Attribute {
        cardinality: cardinality(rng),
        reverse: rng.chance(15),
        name: sub(rng, depth),
        comparison,
        span: span(),
    }
}

/// A refinement in normal form: no `And` directly in `And`, no `Or` in
/// `Or`, groups only where `groups` allows.
fn refinement(rng: &mut Rng, depth: u32, groups: bool) -> Refinement {
    let leaf = |rng: &mut Rng| {
        if groups && rng.chance(25) {
            Refinement::Group(Group {
                cardinality: cardinality(rng),
                attributes: Box::new(refinement(rng, depth.saturating_sub(1), false)),
                span: span(),
            })
        } else {
            Refinement::Attribute(Box::new(attribute(rng, depth)))
        }
    };
    if depth == 0 || rng.chance(40) {
        return leaf(rng);
    }
    let or = rng.chance(50);
    let items = rng.many(2, 3, |r| {
        if r.chance(30) {
            // A bracketed list of the other kind.
            let inner = r.many(2, 3, |r| {
                Refinement::Attribute(Box::new(attribute(r, depth - 1)))
            });
            if or {
                Refinement::And(inner)
            } else {
                Refinement::Or(inner)
            }
        } else {
            leaf(r)
        }
    });
    if or {
        Refinement::Or(items)
    } else {
        Refinement::And(items)
    }
}

fn concept_set(rng: &mut Rng, depth: u32) -> ConceptSet {
    if rng.chance(40) {
        ConceptSet::Set(rng.many(2, 3, concept))
    } else {
        ConceptSet::Sub(Box::new(sub(rng, depth)))
    }
}

fn search_term(rng: &mut Rng) -> SearchTerm {
    if rng.chance(40) {
        let raw = rng
            .many(1, 4, |r| {
                r.pick(&["*", "heart", " ", "\\*", "\\\"", "\\\\", "é"])
                    .to_string()
            })
            .concat();
        SearchTerm::Wild(raw)
    } else {
        let text = rng
            .pick(&["heart", "hea att", "a\"b", "c\\d", "ü"])
            .to_string();
        SearchTerm::Match {
            text,
            explicit: rng.chance(50),
        }
    }
}

fn date(rng: &mut Rng) -> u32 {
    (1970 + rng.below(80) as u32) * 10000
        + (1 + rng.below(12) as u32) * 100
        + 1
        + rng.below(28) as u32
}

fn time_filter(rng: &mut Rng) -> TimeFilter {
    TimeFilter {
        op: *rng.pick(&NUMERIC),
        times: rng.many(1, 3, date),
    }
}

fn module(rng: &mut Rng, depth: u32) -> ModuleFilter {
    ModuleFilter {
        equal: rng.chance(50),
        modules: concept_set(rng, depth),
    }
}

fn acceptability(rng: &mut Rng) -> Option<Vec<Acceptability>> {
    rng.chance(50).then(|| {
        rng.many(1, 2, |r| match r.below(3) {
            0 => Acceptability::Acceptable,
            1 => Acceptability::Preferred,
            _ => Acceptability::Id(sctid(r)),
        })
    })
}

fn filter(rng: &mut Rng, depth: u32) -> Filter {
    if rng.chance(50) {
        return Filter::Concept(
            rng.many(1, 3, |r| match r.below(5) {
                0 => ConceptFilter::DefinitionStatusId {
                    equal: r.chance(50),
                    ids: concept_set(r, depth),
                },
                1 => ConceptFilter::DefinitionStatus {
                    equal: r.chance(50),
                    defined: r.many(1, 2, |r| r.chance(50)),
                },
                2 => ConceptFilter::Module(module(r, depth)),
                3 => ConceptFilter::EffectiveTime(time_filter(r)),
                _ => ConceptFilter::Active(activity(r), span()),
            }),
            span(),
        );
    }
    let one = |r: &mut Rng| match r.below(10) {
        0 => DescriptionFilter::Term {
            equal: r.chance(50),
            terms: r.many(1, 3, search_term),
        },
        1 => DescriptionFilter::Language {
            equal: r.chance(50),
            codes: r.many(1, 2, |r| word(r, 2, 2)),
        },
        2 => DescriptionFilter::TypeId {
            equal: r.chance(50),
            types: concept_set(r, depth),
        },
        3 => DescriptionFilter::TypeToken {
            equal: r.chance(50),
            tokens: r.many(1, 3, |r| {
                *r.pick(&[
                    DescriptionType::Fsn,
                    DescriptionType::Synonym,
                    DescriptionType::Definition,
                ])
            }),
        },
        4 => {
            // One sub-expression, or a bracketed set of single references.
            let dialects = if r.chance(50) {
                vec![(ConceptSet::Sub(Box::new(sub(r, depth))), acceptability(r))]
            } else {
                // (`(X)` alone is a nested expression.)
                let mut v = r.many(1, 3, |r| {
                    (ConceptSet::Set(vec![concept(r)]), acceptability(r))
                });
                if v.len() == 1 && v[0].1.is_none() {
                    v[0].1 = Some(vec![Acceptability::Preferred]);
                }
                v
            };
            DescriptionFilter::DialectId {
                equal: r.chance(50),
                dialects,
            }
        }
        5 => DescriptionFilter::Dialect {
            equal: r.chance(50),
            dialects: r.many(1, 3, |r| {
                (
                    format!("{}-{}", word(r, 1, 3), word(r, 2, 2)),
                    acceptability(r),
                )
            }),
        },
        6 => DescriptionFilter::Module(module(r, depth)),
        7 => DescriptionFilter::EffectiveTime(time_filter(r)),
        8 => DescriptionFilter::Active(activity(r), span()),
        _ => DescriptionFilter::Id {
            equal: r.chance(50),
            ids: r.many(1, 3, sctid),
        },
    };
    Filter::Description(rng.many(1, 3, one), span())
}

fn activity(rng: &mut Rng) -> Activity {
    *rng.pick(&[
        Activity::Active,
        Activity::Inactive,
        Activity::Either,
        Activity::Neither,
    ])
}

fn member_filter(rng: &mut Rng, depth: u32) -> MemberFilter {
    match rng.below(4) {
        0 => MemberFilter::Module(module(rng, depth)),
        1 => MemberFilter::EffectiveTime(time_filter(rng)),
        2 => MemberFilter::Active(activity(rng), span()),
        _ => {
            let name = rng
                .pick(&[
                    "mapTarget",
                    "referencedComponentId",
                    "mapGroup",
                    "x",
                    "acceptabilityId",
                ])
                .to_string();
            let comparison = match rng.below(5) {
                0 => FieldComparison::Concept {
                    equal: rng.chance(50),
                    value: sub(rng, depth),
                },
                1 => FieldComparison::Number {
                    op: *rng.pick(&NUMERIC),
                    value: number(rng),
                },
                2 => FieldComparison::String {
                    equal: rng.chance(50),
                    terms: rng.many(1, 3, search_term),
                },
                3 => FieldComparison::Boolean {
                    equal: rng.chance(50),
                    value: rng.chance(50),
                },
                _ => {
                    let op =
                        *rng.pick(&[NumericOp::Lt, NumericOp::Le, NumericOp::Gt, NumericOp::Ge]);
                    FieldComparison::Time(TimeFilter {
                        op,
                        times: rng.many(1, 2, date),
                    })
                }
            };
            MemberFilter::Field { name, comparison }
        }
    }
}

#[test]
fn print_then_parse_is_identity() {
    let mut longest = 0;
    for seed in 1..=5_000u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let depth = 1 + rng.below(4) as u32;
        let ast = expr(&mut rng, depth);
        let printed = print(&ast);
        longest = longest.max(printed.len());
        match parse(&printed) {
            Ok(again) => assert_eq!(again, ast, "seed {seed}: {printed}"),
            Err(e) => panic!("seed {seed}: {e}\n{printed}\n{ast:#?}"),
        }
    }
    assert!(longest > 200, "the generator makes only small trees");
}
