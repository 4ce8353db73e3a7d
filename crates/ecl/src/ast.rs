//! The syntax tree of an expression constraint.
//!
//! The tree follows the specification's grammar (ECL 2.2 with the 2.3
//! additions) closely enough that every construct keeps its meaning, and
//! loosely enough to be pleasant to evaluate: conjunctions and disjunctions
//! are flattened into n-ary nodes, concept references keep their optional
//! pipe term (parsed, ignored by evaluation) and every node that an error
//! message may point at carries its [`Span`].
//!
//! Equality ignores nothing: two trees are equal when they would print the
//! same ECL. Property tests rely on `parse(print(ast)) == ast` with spans
//! compared separately (see [`Span`]'s `PartialEq`).

use std::fmt;

/// Byte offsets `[start, end)` into the parsed text.
///
/// Spans never take part in equality (`PartialEq` is always true), so that
/// a tree parsed from pretty-printed text equals the tree it was printed
/// from.
#[derive(Clone, Copy, Debug, Default, Eq)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl PartialEq for Span {
    fn eq(&self, _: &Span) -> bool {
        true
    }
}

/// Hashes nothing, to agree with `PartialEq`: equal values must hash alike.
impl std::hash::Hash for Span {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end as u32,
        }
    }
}

/// A whole expression constraint. The refinement is boxed: inline it
/// made every `Expr` 368 bytes, moved whole through the parser's results
/// (a fifth of a parse was `memmove`).
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// `A AND B AND C` or `A, B, C` (the operands are never `And`).
    And(Vec<Expr>, Span),
    /// `A OR B OR C` (the operands are never `Or`).
    Or(Vec<Expr>, Span),
    /// `A MINUS B` (binary: chains need brackets).
    Minus(Box<Expr>, Box<Expr>, Span),
    /// `focus : refinement`.
    Refined(Box<SubExpr>, Box<Refinement>, Span),
    /// `focus . attr . attr`: the values of the attributes named.
    Dotted(Box<SubExpr>, Vec<SubExpr>, Span),
    Sub(SubExpr),
}

/// A sub-expression constraint: an optional hierarchy operator, an
/// optional memberOf, a focus and its filters.
#[derive(Clone, Debug, PartialEq)]
pub struct SubExpr {
    pub operator: Option<Operator>,
    /// `^` (or `^ [fields]`): the focus names reference sets and the
    /// sub-expression stands for their members.
    pub member_of: Option<MemberOf>,
    pub focus: Focus,
    /// `{{ M … }}`, only with `member_of`.
    pub member_filters: Vec<MemberFilterSet>,
    /// `{{ D … }}` / `{{ term … }}` and `{{ C … }}` in the order written.
    pub filters: Vec<Filter>,
    pub history: Option<History>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// `<`
    DescendantOf,
    /// `<<`
    DescendantOrSelfOf,
    /// `<!`
    ChildOf,
    /// `<<!`
    ChildOrSelfOf,
    /// `>`
    AncestorOf,
    /// `>>`
    AncestorOrSelfOf,
    /// `>!`
    ParentOf,
    /// `>>!`
    ParentOrSelfOf,
    /// `!!>`: the members that have no parent in the set.
    Top,
    /// `!!<`: the members that have no child in the set.
    Bottom,
}

impl Operator {
    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        match self {
            Operator::DescendantOf => "<",
            Operator::DescendantOrSelfOf => "<<",
            Operator::ChildOf => "<!",
            Operator::ChildOrSelfOf => "<<!",
            Operator::AncestorOf => ">",
            Operator::AncestorOrSelfOf => ">>",
            Operator::ParentOf => ">!",
            Operator::ParentOrSelfOf => ">>!",
            Operator::Top => "!!>",
            Operator::Bottom => "!!<",
        }
    }
}

/// `^` with its optional field selection.
#[derive(Clone, Debug, PartialEq)]
pub enum MemberOf {
    /// `^`: the referenced components.
    Components,
    /// `^ [field, field]`: those fields of the members.
    Fields(Vec<String>),
    /// `^ [*]`: every field.
    AllFields,
    /// `^R` (ECL 2.3, `refsetContainingAny`): the reference sets that have
    /// any of the focus concepts as a member — the inverse of `^`.
    Refsets,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Focus {
    Concept(ConceptRef),
    /// `*`
    Any(Span),
    /// `( expression )`
    Nested(Box<Expr>),
    /// `scheme#identifier` (ECL 2.2 alternate identifiers): parsed, not
    /// evaluated.
    AlternateId {
        scheme: String,
        id: String,
        span: Span,
    },
}

/// An SCTID with its optional `|term|`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConceptRef {
    pub id: u64,
    /// The pipe term, trimmed, if written.
    pub term: Option<String>,
    pub span: Span,
}

// ----- refinements ----------------------------------------------------------

/// A refinement: attributes and groups joined by conjunction or
/// disjunction. An attribute is boxed: inline (300-odd bytes, its name and
/// value sub-expressions) it was moved whole through the parser's results,
/// most of the time of parsing a refinement.
#[derive(Clone, Debug, PartialEq)]
pub enum Refinement {
    And(Vec<Refinement>),
    Or(Vec<Refinement>),
    Attribute(Box<Attribute>),
    /// `[m..n] { attribute set }`.
    Group(Group),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Group {
    pub cardinality: Option<Cardinality>,
    /// Only `And`, `Or` and `Attribute` occur inside a group.
    pub attributes: Box<Refinement>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub cardinality: Option<Cardinality>,
    /// `R`: the focus concepts are the attribute's values, and the
    /// constraint applies to its sources.
    pub reverse: bool,
    /// The attribute type: a sub-expression (usually one concept, `*`, or
    /// `<< X`).
    pub name: SubExpr,
    pub comparison: Comparison,
    pub span: Span,
}

/// `[min..max]`; `max = None` is `*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cardinality {
    pub min: u32,
    pub max: Option<u32>,
}

/// What an attribute's value is compared with.
#[derive(Clone, Debug, PartialEq)]
pub enum Comparison {
    /// `= sub` / `!= sub`: concept values.
    Concept { equal: bool, value: SubExpr },
    /// `op #number`.
    Number { op: NumericOp, value: Number },
    /// `= "text"`, `!= match:"text"`, `= wild:"te*"`, `= ("a" "b")`: a
    /// plain string (a [`SearchTerm::Match`] that is not `explicit`) is
    /// compared whole; `match:` and `wild:` search as in a term filter.
    String { equal: bool, terms: Vec<SearchTerm> },
    /// `= true` / `!= false`.
    Boolean { equal: bool, value: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NumericOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl NumericOp {
    /// Every operator, in declaration order.
    pub const ALL: [NumericOp; 6] = [
        NumericOp::Eq,
        NumericOp::Ne,
        NumericOp::Lt,
        NumericOp::Le,
        NumericOp::Gt,
        NumericOp::Ge,
    ];

    pub fn symbol(self) -> &'static str {
        match self {
            NumericOp::Eq => "=",
            NumericOp::Ne => "!=",
            NumericOp::Lt => "<",
            NumericOp::Le => "<=",
            NumericOp::Gt => ">",
            NumericOp::Ge => ">=",
        }
    }

    /// Whether `a op b` holds.
    pub fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            NumericOp::Eq => a == b,
            NumericOp::Ne => a != b,
            NumericOp::Lt => a < b,
            NumericOp::Le => a <= b,
            NumericOp::Gt => a > b,
            NumericOp::Ge => a >= b,
        }
    }
}

/// A decimal as written (`#5`, `#-0.25`): the text, so that printing is
/// exact, and its value.
#[derive(Clone, Debug)]
pub struct Number {
    pub text: String,
    pub value: f64,
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        self.text == other.text
    }
}

// ----- filters --------------------------------------------------------------

#[derive(Clone, Debug, PartialEq)]
pub enum Filter {
    /// `{{ D … }}` (or `{{ … }}` with description filters, ECL 2.0).
    Description(Vec<DescriptionFilter>, Span),
    /// `{{ C … }}`.
    Concept(Vec<ConceptFilter>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub enum DescriptionFilter {
    /// `term = "heart"`, `term != match:"x"`, `term = ("a" wild:"b*")`.
    Term {
        equal: bool,
        terms: Vec<SearchTerm>,
    },
    /// `language = en` / `language = (en fr)`.
    Language {
        equal: bool,
        codes: Vec<String>,
    },
    /// `typeId = 900000000000013009` or `= (id id)` or a sub-expression.
    TypeId {
        equal: bool,
        types: ConceptSet,
    },
    /// `type = syn` / `type = (fsn syn)`: the tokens `fsn`, `syn`, `def`.
    TypeToken {
        equal: bool,
        tokens: Vec<DescriptionType>,
    },
    /// `dialectId = 900000000000509007 (prefer)` or a set of them.
    DialectId {
        equal: bool,
        dialects: Vec<(ConceptSet, Option<Vec<Acceptability>>)>,
    },
    /// `dialect = en-gb (accept)`: aliases as written.
    Dialect {
        equal: bool,
        dialects: Vec<(String, Option<Vec<Acceptability>>)>,
    },
    Module(ModuleFilter),
    EffectiveTime(TimeFilter),
    Active(Activity, Span),
    /// `id = 1234` / `id != (1 2)`.
    Id {
        equal: bool,
        ids: Vec<u64>,
    },
}

/// What an `active` filter keeps: `active = 1` (or `true`), `= 0`, `= *`,
/// and `!= *`, which keeps nothing. `active != 1` is `Inactive`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Activity {
    Active,
    Inactive,
    Either,
    Neither,
}

impl Activity {
    /// Whether a component whose active flag is `active` passes.
    pub fn keeps(self, active: bool) -> bool {
        match self {
            Activity::Active => active,
            Activity::Inactive => !active,
            Activity::Either => true,
            Activity::Neither => false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DescriptionType {
    Fsn,
    Synonym,
    Definition,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Acceptability {
    /// `accept` / `acceptable`, or its SCTID.
    Acceptable,
    /// `prefer` / `preferred`, or its SCTID.
    Preferred,
    /// Another SCTID written in the set.
    Id(u64),
}

/// A search term with its kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum SearchTerm {
    /// `"heart att"` or `match:"heart att"`: every word is a prefix of a
    /// word of the term. `explicit` keeps the `match:` prefix for printing.
    /// The text is unescaped and trimmed.
    Match { text: String, explicit: bool },
    /// `wild:"*heart*"`: `*` any run of characters, the whole term. The
    /// text is kept as written between the quotes, escapes included
    /// (`\*` a literal star, `\"` a quote, `\\` a backslash).
    Wild(String),
}

/// Concepts named by one filter value: a concept reference or a set of
/// them, or any sub-expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ConceptSet {
    /// `(a b c)`: a space-separated set of concept references.
    Set(Vec<ConceptRef>),
    Sub(Box<SubExpr>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ConceptFilter {
    /// `definitionStatusId = 900000000000074008`.
    DefinitionStatusId {
        equal: bool,
        ids: ConceptSet,
    },
    /// `definitionStatus = primitive`, `= defined` or
    /// `= (primitive defined)`: `defined` lists, in the order written,
    /// whether each token is `defined`.
    DefinitionStatus {
        equal: bool,
        defined: Vec<bool>,
    },
    Module(ModuleFilter),
    EffectiveTime(TimeFilter),
    Active(Activity, Span),
}

/// `moduleId = X` / `moduleId != (A B)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleFilter {
    pub equal: bool,
    pub modules: ConceptSet,
}

/// `effectiveTime >= "20200131"` or `= ("20200131" "20200731")`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeFilter {
    pub op: NumericOp,
    /// `YYYYMMDD`, or 0 for `""` (no effective time: unpublished).
    pub times: Vec<u32>,
}

/// `{{ M … }}` over the members of the `^` refsets.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberFilterSet {
    pub filters: Vec<MemberFilter>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum MemberFilter {
    /// `field op value` over one of the refset's additional columns.
    Field {
        name: String,
        comparison: FieldComparison,
    },
    Module(ModuleFilter),
    EffectiveTime(TimeFilter),
    Active(Activity, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub enum FieldComparison {
    Concept { equal: bool, value: SubExpr },
    Number { op: NumericOp, value: Number },
    String { equal: bool, terms: Vec<SearchTerm> },
    Boolean { equal: bool, value: bool },
    Time(TimeFilter),
}

/// `{{ + HISTORY… }}`: add the concepts the historical associations link to
/// the result's concepts.
#[derive(Clone, Debug, PartialEq)]
pub enum History {
    /// `HISTORY` alone: every association refset (the same as `-MAX`).
    Default,
    /// `HISTORY-MIN`: SAME AS.
    Min,
    /// `HISTORY-MOD`: SAME AS, REPLACED BY, WAS A, PARTIALLY EQUIVALENT TO.
    Mod,
    /// `HISTORY-MAX`: every association refset.
    Max,
    /// `HISTORY (expression)`: the association refsets the expression
    /// names.
    Subset(Box<Expr>),
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}
