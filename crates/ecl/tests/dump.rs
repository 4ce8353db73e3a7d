//! A compact S-expression of a tree, showing every field that matters and
//! no spans: `(<< 404684003|Clinical finding|)`.
//!
//! Conventions: a sub-expression with nothing but a focus is its focus;
//! otherwise `(operator ^… focus filters…)`. Brackets written in the ECL
//! show as `(paren …)`. Strings are Rust-quoted.

use std::fmt::Write;

use txmap_ecl::*;

pub fn dump(expr: &Expr) -> String {
    let mut out = String::new();
    expr_(&mut out, expr);
    out
}

fn list(out: &mut String, head: &str, items: impl IntoIterator<Item = impl FnOnce(&mut String)>) {
    out.push('(');
    out.push_str(head);
    for item in items {
        out.push(' ');
        item(out);
    }
    out.push(')');
}

fn expr_(out: &mut String, e: &Expr) {
    match e {
        Expr::And(v, _) => list(
            out,
            "and",
            v.iter().map(|e| move |o: &mut String| expr_(o, e)),
        ),
        Expr::Or(v, _) => list(
            out,
            "or",
            v.iter().map(|e| move |o: &mut String| expr_(o, e)),
        ),
        Expr::Minus(a, b, _) => list(
            out,
            "minus",
            [a, b].map(|e| move |o: &mut String| expr_(o, e)),
        ),
        Expr::Refined(s, r, _) => {
            out.push_str("(refine ");
            sub(out, s);
            out.push(' ');
            refinement(out, r);
            out.push(')');
        }
        Expr::Dotted(s, attrs, _) => {
            out.push_str("(dot ");
            sub(out, s);
            for a in attrs {
                out.push(' ');
                sub(out, a);
            }
            out.push(')');
        }
        Expr::Sub(s) => sub(out, s),
    }
}

fn sub(out: &mut String, s: &SubExpr) {
    let bare = s.operator.is_none()
        && s.member_of.is_none()
        && s.filters.is_empty()
        && s.member_filters.is_empty()
        && s.history.is_none();
    if bare {
        return focus(out, &s.focus);
    }
    out.push('(');
    if let Some(op) = s.operator {
        write!(out, "{} ", op.symbol()).unwrap();
    }
    match &s.member_of {
        None => {}
        Some(MemberOf::Components) => out.push_str("^ "),
        Some(MemberOf::Refsets) => out.push_str("^R "),
        Some(MemberOf::AllFields) => out.push_str("^[*] "),
        Some(MemberOf::Fields(v)) => write!(out, "^[{}] ", v.join(",")).unwrap(),
    }
    focus(out, &s.focus);
    for m in &s.member_filters {
        out.push(' ');
        list(
            out,
            "M",
            m.filters
                .iter()
                .map(|f| move |o: &mut String| member_filter(o, f)),
        );
    }
    for f in &s.filters {
        out.push(' ');
        match f {
            Filter::Description(v, _) => list(
                out,
                "D",
                v.iter()
                    .map(|f| move |o: &mut String| description_filter(o, f)),
            ),
            Filter::Concept(v, _) => list(
                out,
                "C",
                v.iter().map(|f| move |o: &mut String| concept_filter(o, f)),
            ),
        }
    }
    match &s.history {
        None => {}
        Some(History::Default) => out.push_str(" (history)"),
        Some(History::Min) => out.push_str(" (history-min)"),
        Some(History::Mod) => out.push_str(" (history-mod)"),
        Some(History::Max) => out.push_str(" (history-max)"),
        Some(History::Subset(e)) => {
            out.push_str(" (history ");
            expr_(out, e);
            out.push(')');
        }
    }
    out.push(')');
}

fn concept(out: &mut String, c: &ConceptRef) {
    write!(out, "{}", c.id).unwrap();
    if let Some(t) = &c.term {
        write!(out, "|{t}|").unwrap();
    }
}

fn focus(out: &mut String, f: &Focus) {
    match f {
        Focus::Concept(c) => concept(out, c),
        Focus::Any(_) => out.push('*'),
        Focus::Nested(e) => {
            out.push_str("(paren ");
            expr_(out, e);
            out.push(')');
        }
        Focus::AlternateId { scheme, id, .. } => write!(out, "(alt {scheme} {id:?})").unwrap(),
    }
}

fn card(out: &mut String, c: &Option<Cardinality>) {
    if let Some(c) = c {
        match c.max {
            Some(max) => write!(out, "[{}..{max}] ", c.min).unwrap(),
            None => write!(out, "[{}..*] ", c.min).unwrap(),
        }
    }
}

fn refinement(out: &mut String, r: &Refinement) {
    match r {
        Refinement::And(v) => list(
            out,
            "and",
            v.iter().map(|r| move |o: &mut String| refinement(o, r)),
        ),
        Refinement::Or(v) => list(
            out,
            "or",
            v.iter().map(|r| move |o: &mut String| refinement(o, r)),
        ),
        Refinement::Group(g) => {
            out.push_str("(group ");
            card(out, &g.cardinality);
            refinement(out, &g.attributes);
            out.push(')');
        }
        Refinement::Attribute(a) => {
            out.push_str("(attr ");
            card(out, &a.cardinality);
            if a.reverse {
                out.push_str("R ");
            }
            sub(out, &a.name);
            out.push(' ');
            match &a.comparison {
                Comparison::Concept { equal, value } => {
                    out.push_str(eq(*equal));
                    sub(out, value);
                }
                Comparison::Number { op, value } => {
                    write!(out, "{} #{}", op.symbol(), value.text).unwrap()
                }
                Comparison::String { equal, terms: t } => {
                    out.push_str(eq(*equal));
                    terms(out, t);
                }
                Comparison::Boolean { equal, value } => {
                    write!(out, "{}{value}", eq(*equal)).unwrap()
                }
            }
            out.push(')');
        }
    }
}

fn eq(equal: bool) -> &'static str {
    if equal { "= " } else { "!= " }
}

fn terms(out: &mut String, v: &[SearchTerm]) {
    for (i, t) in v.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match t {
            SearchTerm::Match {
                text,
                explicit: false,
            } => write!(out, "{text:?}").unwrap(),
            SearchTerm::Match {
                text,
                explicit: true,
            } => write!(out, "match:{text:?}").unwrap(),
            SearchTerm::Wild(raw) => write!(out, "wild:{raw:?}").unwrap(),
        }
    }
}

fn set(out: &mut String, s: &ConceptSet) {
    match s {
        ConceptSet::Set(v) => list(
            out,
            "set",
            v.iter().map(|c| move |o: &mut String| concept(o, c)),
        ),
        ConceptSet::Sub(s) => sub(out, s),
    }
}

fn acceptability(out: &mut String, a: &Option<Vec<Acceptability>>) {
    if let Some(v) = a {
        let v: Vec<String> = v
            .iter()
            .map(|a| match a {
                Acceptability::Acceptable => "accept".to_string(),
                Acceptability::Preferred => "prefer".to_string(),
                Acceptability::Id(id) => id.to_string(),
            })
            .collect();
        write!(out, ":{}", v.join(",")).unwrap();
    }
}

fn time(out: &mut String, t: &TimeFilter) {
    write!(out, "{}", t.op.symbol()).unwrap();
    for d in &t.times {
        write!(out, " {d}").unwrap();
    }
}

fn module(out: &mut String, m: &ModuleFilter) {
    write!(out, "(moduleId {}", eq(m.equal)).unwrap();
    set(out, &m.modules);
    out.push(')');
}

fn description_filter(out: &mut String, f: &DescriptionFilter) {
    match f {
        DescriptionFilter::Term { equal, terms: t } => {
            write!(out, "(term {}", eq(*equal)).unwrap();
            terms(out, t);
            out.push(')');
        }
        DescriptionFilter::Language { equal, codes } => {
            write!(out, "(language {}{})", eq(*equal), codes.join(" ")).unwrap()
        }
        DescriptionFilter::TypeId { equal, types } => {
            write!(out, "(typeId {}", eq(*equal)).unwrap();
            set(out, types);
            out.push(')');
        }
        DescriptionFilter::TypeToken { equal, tokens } => {
            let t: Vec<&str> = tokens
                .iter()
                .map(|t| match t {
                    DescriptionType::Fsn => "fsn",
                    DescriptionType::Synonym => "syn",
                    DescriptionType::Definition => "def",
                })
                .collect();
            write!(out, "(type {}{})", eq(*equal), t.join(" ")).unwrap()
        }
        DescriptionFilter::DialectId { equal, dialects } => {
            write!(out, "(dialectId {}", eq(*equal)).unwrap();
            for (i, (d, a)) in dialects.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                set(out, d);
                acceptability(out, a);
            }
            out.push(')');
        }
        DescriptionFilter::Dialect { equal, dialects } => {
            write!(out, "(dialect {}", eq(*equal)).unwrap();
            for (i, (d, a)) in dialects.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(d);
                acceptability(out, a);
            }
            out.push(')');
        }
        DescriptionFilter::Module(m) => module(out, m),
        DescriptionFilter::EffectiveTime(t) => {
            out.push_str("(effectiveTime ");
            time(out, t);
            out.push(')');
        }
        DescriptionFilter::Active(a, _) => write!(out, "(active {})", activity(*a)).unwrap(),
        DescriptionFilter::Id { equal, ids } => {
            let ids: Vec<String> = ids.iter().map(u64::to_string).collect();
            write!(out, "(id {}{})", eq(*equal), ids.join(" ")).unwrap()
        }
    }
}

fn concept_filter(out: &mut String, f: &ConceptFilter) {
    match f {
        ConceptFilter::DefinitionStatusId { equal, ids } => {
            write!(out, "(definitionStatusId {}", eq(*equal)).unwrap();
            set(out, ids);
            out.push(')');
        }
        ConceptFilter::DefinitionStatus { equal, defined } => {
            let tokens: Vec<_> = defined
                .iter()
                .map(|&d| if d { "defined" } else { "primitive" })
                .collect();
            write!(out, "(definitionStatus {}{})", eq(*equal), tokens.join(" ")).unwrap()
        }
        ConceptFilter::Module(m) => module(out, m),
        ConceptFilter::EffectiveTime(t) => {
            out.push_str("(effectiveTime ");
            time(out, t);
            out.push(')');
        }
        ConceptFilter::Active(a, _) => write!(out, "(active {})", activity(*a)).unwrap(),
    }
}

fn member_filter(out: &mut String, f: &MemberFilter) {
    match f {
        MemberFilter::Field { name, comparison } => {
            write!(out, "(field {name} ").unwrap();
            match comparison {
                FieldComparison::Concept { equal, value } => {
                    out.push_str(eq(*equal));
                    sub(out, value);
                }
                FieldComparison::Number { op, value } => {
                    write!(out, "{} #{}", op.symbol(), value.text).unwrap()
                }
                FieldComparison::String { equal, terms: t } => {
                    out.push_str(eq(*equal));
                    terms(out, t);
                }
                FieldComparison::Boolean { equal, value } => {
                    write!(out, "{}{value}", eq(*equal)).unwrap()
                }
                FieldComparison::Time(t) => {
                    out.push_str("time ");
                    time(out, t);
                }
            }
            out.push(')');
        }
        MemberFilter::Module(m) => module(out, m),
        MemberFilter::EffectiveTime(t) => {
            out.push_str("(effectiveTime ");
            time(out, t);
            out.push(')');
        }
        MemberFilter::Active(a, _) => write!(out, "(active {})", activity(*a)).unwrap(),
    }
}

fn activity(a: Activity) -> &'static str {
    match a {
        Activity::Active => "true",
        Activity::Inactive => "false",
        Activity::Either => "*",
        Activity::Neither => "!*",
    }
}
