//! The printer: `Display` for the syntax tree, writing canonical ECL.
//!
//! Canonical means one spelling per tree, so that printing and parsing are
//! inverses: upper-case keywords, one blank around binary operators, `AND`
//! between expressions and `,` between attributes, `D` on every
//! description filter, brackets in refinements only where a conjunction
//! and a disjunction meet. Brackets around expressions are part of the
//! tree ([`Focus::Nested`]) and are printed as they are.

use std::fmt::{self, Display, Formatter, Write};

use crate::ast::*;

/// `items` separated by `sep`.
fn join<T: Display>(f: &mut Formatter<'_>, items: &[T], sep: &str) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(sep)?;
        }
        item.fmt(f)?;
    }
    Ok(())
}

/// One value alone, several in brackets separated by blanks.
fn set<T: Display>(f: &mut Formatter<'_>, items: &[T]) -> fmt::Result {
    match items {
        [one] => one.fmt(f),
        _ => {
            f.write_char('(')?;
            join(f, items, " ")?;
            f.write_char(')')
        }
    }
}

/// `"text"` with `"` and `\` escaped.
fn quoted(f: &mut Formatter<'_>, text: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in text.chars() {
        if c == '"' || c == '\\' {
            f.write_char('\\')?;
        }
        f.write_char(c)?;
    }
    f.write_char('"')
}

fn equal(equal: bool) -> &'static str {
    if equal { "=" } else { "!=" }
}

/// An operand of `AND`, `OR` or `MINUS`: the parser only produces
/// sub-expressions there; anything else is bracketed to stay valid.
struct Operand<'a>(&'a Expr);

impl Display for Operand<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            Expr::Sub(sub) => sub.fmt(f),
            e => write!(f, "({e})"),
        }
    }
}

impl Display for Expr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Expr::And(operands, _) => join(
                f,
                &operands.iter().map(Operand).collect::<Vec<_>>(),
                " AND ",
            ),
            Expr::Or(operands, _) => {
                join(f, &operands.iter().map(Operand).collect::<Vec<_>>(), " OR ")
            }
            Expr::Minus(a, b, _) => write!(f, "{} MINUS {}", Operand(a), Operand(b)),
            Expr::Refined(sub, refinement, _) => write!(f, "{sub} : {refinement}"),
            Expr::Dotted(sub, attributes, _) => {
                sub.fmt(f)?;
                attributes.iter().try_for_each(|a| write!(f, " . {a}"))
            }
            Expr::Sub(sub) => sub.fmt(f),
        }
    }
}

impl Display for Operator {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(self.symbol())
    }
}

impl Display for SubExpr {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(op) = self.operator {
            write!(f, "{op} ")?;
        }
        match &self.member_of {
            None => {}
            Some(MemberOf::Components) => f.write_str("^ ")?,
            Some(MemberOf::Refsets) => f.write_str("^R ")?,
            Some(MemberOf::AllFields) => f.write_str("^ [*] ")?,
            Some(MemberOf::Fields(fields)) => {
                f.write_str("^ [")?;
                join(f, fields, ", ")?;
                f.write_str("] ")?;
            }
        }
        self.focus.fmt(f)?;
        for m in &self.member_filters {
            write!(f, " {m}")?;
        }
        for filter in &self.filters {
            write!(f, " {filter}")?;
        }
        match &self.history {
            Some(h) => write!(f, " {h}"),
            None => Ok(()),
        }
    }
}

impl Display for Focus {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Focus::Concept(c) => c.fmt(f),
            Focus::Any(_) => f.write_char('*'),
            Focus::Nested(e) => write!(f, "({e})"),
            Focus::AlternateId { scheme, id, .. } => {
                let bare = !id.is_empty()
                    && id
                        .bytes()
                        .all(|c| c.is_ascii_alphanumeric() || b"-._".contains(&c));
                // Not the specification's `"scheme#code"`: after `=` in a
                // refinement that would read as a string.
                if bare {
                    write!(f, "{scheme}#{id}")
                } else {
                    write!(f, "{scheme}#\"{id}\"")
                }
            }
        }
    }
}

impl Display for ConceptRef {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match &self.term {
            Some(term) => write!(f, "{} |{term}|", self.id),
            None => write!(f, "{}", self.id),
        }
    }
}

// ----- refinements ----------------------------------------------------------

/// An item of a conjunction or disjunction, bracketed if it is one itself.
struct Item<'a>(&'a Refinement);

impl Display for Item<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            r @ (Refinement::And(_) | Refinement::Or(_)) => write!(f, "({r})"),
            r => r.fmt(f),
        }
    }
}

impl Display for Refinement {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Refinement::And(items) => join(f, &items.iter().map(Item).collect::<Vec<_>>(), ", "),
            Refinement::Or(items) => join(f, &items.iter().map(Item).collect::<Vec<_>>(), " OR "),
            Refinement::Attribute(a) => a.fmt(f),
            Refinement::Group(g) => g.fmt(f),
        }
    }
}

impl Display for Cardinality {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.max {
            Some(max) => write!(f, "[{}..{max}]", self.min),
            None => write!(f, "[{}..*]", self.min),
        }
    }
}

impl Display for Group {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(c) = self.cardinality {
            write!(f, "{c} ")?;
        }
        write!(f, "{{ {} }}", self.attributes)
    }
}

impl Display for Attribute {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        if let Some(c) = self.cardinality {
            write!(f, "{c} ")?;
        }
        if self.reverse {
            f.write_str("R ")?;
        }
        write!(f, "{} {}", self.name, self.comparison)
    }
}

impl Display for Comparison {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Comparison::Concept { equal: e, value } => write!(f, "{} {value}", equal(*e)),
            Comparison::Number { op, value } => write!(f, "{} {value}", op.symbol()),
            Comparison::String { equal: e, terms } => {
                write!(f, "{} ", equal(*e))?;
                set(f, terms)
            }
            Comparison::Boolean { equal: e, value } => write!(f, "{} {value}", equal(*e)),
        }
    }
}

impl Display for Number {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.text)
    }
}

// ----- filters --------------------------------------------------------------

impl Display for Filter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Filter::Description(filters, _) => {
                f.write_str("{{ D ")?;
                join(f, filters, ", ")?;
            }
            Filter::Concept(filters, _) => {
                f.write_str("{{ C ")?;
                join(f, filters, ", ")?;
            }
        }
        f.write_str(" }}")
    }
}

impl Display for SearchTerm {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            SearchTerm::Match { text, explicit } => {
                if *explicit {
                    f.write_str("match:")?;
                }
                quoted(f, text)
            }
            // Kept as written, escapes and all: `\*` is a literal star.
            SearchTerm::Wild(raw) => write!(f, "wild:\"{raw}\""),
        }
    }
}

impl Display for DescriptionType {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DescriptionType::Fsn => "fsn",
            DescriptionType::Synonym => "syn",
            DescriptionType::Definition => "def",
        })
    }
}

impl Display for Acceptability {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            Acceptability::Acceptable => f.write_str("accept"),
            Acceptability::Preferred => f.write_str("prefer"),
            Acceptability::Id(id) => write!(f, "{id}"),
        }
    }
}

impl Display for ConceptSet {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ConceptSet::Set(refs) => {
                f.write_char('(')?;
                join(f, refs, " ")?;
                f.write_char(')')
            }
            ConceptSet::Sub(sub) => sub.fmt(f),
        }
    }
}

/// A dialect with its optional acceptability set.
struct Dialect<'a, T>(&'a T, &'a Option<Vec<Acceptability>>);

impl<T: Display> Display for Dialect<'_, T> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)?;
        match self.1 {
            Some(acceptability) => {
                f.write_str(" (")?;
                join(f, acceptability, " ")?;
                f.write_char(')')
            }
            None => Ok(()),
        }
    }
}

/// Each dialect of a set, written without the brackets of a one-reference
/// [`ConceptSet::Set`] (the parser's form for members of `(a b)`).
struct DialectId<'a>(&'a ConceptSet);

impl Display for DialectId<'_> {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            ConceptSet::Set(refs) => join(f, refs, " "),
            sub => sub.fmt(f),
        }
    }
}

impl Display for DescriptionFilter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            DescriptionFilter::Term { equal: e, terms } => {
                write!(f, "term {} ", equal(*e))?;
                set(f, terms)
            }
            DescriptionFilter::Language { equal: e, codes } => {
                write!(f, "language {} ", equal(*e))?;
                set(f, codes)
            }
            DescriptionFilter::TypeId { equal: e, types } => {
                write!(f, "typeId {} {types}", equal(*e))
            }
            DescriptionFilter::TypeToken { equal: e, tokens } => {
                write!(f, "type {} ", equal(*e))?;
                set(f, tokens)
            }
            DescriptionFilter::DialectId { equal: e, dialects } => {
                write!(f, "dialectId {} ", equal(*e))?;
                match dialects.as_slice() {
                    [(ConceptSet::Sub(sub), acceptability)] => Dialect(sub, acceptability).fmt(f),
                    _ => {
                        let ids: Vec<_> = dialects.iter().map(|(d, _)| DialectId(d)).collect();
                        let items: Vec<_> = ids
                            .iter()
                            .zip(dialects)
                            .map(|(d, (_, a))| Dialect(d, a))
                            .collect();
                        f.write_char('(')?;
                        join(f, &items, " ")?;
                        f.write_char(')')
                    }
                }
            }
            DescriptionFilter::Dialect { equal: e, dialects } => {
                write!(f, "dialect {} ", equal(*e))?;
                set(
                    f,
                    &dialects
                        .iter()
                        .map(|(d, a)| Dialect(d, a))
                        .collect::<Vec<_>>(),
                )
            }
            DescriptionFilter::Module(m) => m.fmt(f),
            DescriptionFilter::EffectiveTime(t) => t.fmt(f),
            DescriptionFilter::Active(active, _) => active.fmt(f),
            DescriptionFilter::Id { equal: e, ids } => {
                write!(f, "id {} ", equal(*e))?;
                set(f, ids)
            }
        }
    }
}

impl Display for Activity {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Activity::Active => "active = true",
            Activity::Inactive => "active = false",
            Activity::Either => "active = *",
            Activity::Neither => "active != *",
        })
    }
}

impl Display for ModuleFilter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "moduleId {} {}", equal(self.equal), self.modules)
    }
}

/// A `YYYYMMDD` time value.
struct Date(u32);

impl Display for Date {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("\"\""),
            t => write!(f, "\"{t:08}\""),
        }
    }
}

impl Display for TimeFilter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        write!(f, "effectiveTime {} ", self.op.symbol())?;
        set(f, &self.times.iter().map(|&t| Date(t)).collect::<Vec<_>>())
    }
}

impl Display for ConceptFilter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            ConceptFilter::DefinitionStatusId { equal: e, ids } => {
                write!(f, "definitionStatusId {} {ids}", equal(*e))
            }
            ConceptFilter::DefinitionStatus { equal: e, defined } => {
                write!(f, "definitionStatus {} ", equal(*e))?;
                let tokens: Vec<_> = defined
                    .iter()
                    .map(|&d| if d { "defined" } else { "primitive" })
                    .collect();
                set(f, &tokens)
            }
            ConceptFilter::Module(m) => m.fmt(f),
            ConceptFilter::EffectiveTime(t) => t.fmt(f),
            ConceptFilter::Active(active, _) => active.fmt(f),
        }
    }
}

impl Display for MemberFilterSet {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        f.write_str("{{ M ")?;
        join(f, &self.filters, ", ")?;
        f.write_str(" }}")
    }
}

impl Display for MemberFilter {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            MemberFilter::Field { name, comparison } => {
                write!(f, "{name} ")?;
                match comparison {
                    FieldComparison::Concept { equal: e, value } => {
                        write!(f, "{} {value}", equal(*e))
                    }
                    FieldComparison::Number { op, value } => write!(f, "{} {value}", op.symbol()),
                    FieldComparison::String { equal: e, terms } => {
                        write!(f, "{} ", equal(*e))?;
                        set(f, terms)
                    }
                    FieldComparison::Boolean { equal: e, value } => {
                        write!(f, "{} {value}", equal(*e))
                    }
                    FieldComparison::Time(t) => {
                        write!(f, "{} ", t.op.symbol())?;
                        set(f, &t.times.iter().map(|&t| Date(t)).collect::<Vec<_>>())
                    }
                }
            }
            MemberFilter::Module(m) => m.fmt(f),
            MemberFilter::EffectiveTime(t) => t.fmt(f),
            MemberFilter::Active(active, _) => active.fmt(f),
        }
    }
}

impl Display for History {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        match self {
            History::Default => f.write_str("{{ + HISTORY }}"),
            History::Min => f.write_str("{{ + HISTORY-MIN }}"),
            History::Mod => f.write_str("{{ + HISTORY-MOD }}"),
            History::Max => f.write_str("{{ + HISTORY-MAX }}"),
            History::Subset(e) => write!(f, "{{{{ + HISTORY ({e}) }}}}"),
        }
    }
}
