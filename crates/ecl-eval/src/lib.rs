//! Evaluates Expression Constraint Language over one [`Edition`].
//!
//! [`evaluate`] turns a parsed [`Expr`] into the sorted ordinals of the
//! concepts it selects; [`matches`] decides whether one [`Subject`] — a
//! concept, or a post-coordinated expression — is selected, testing it
//! directly where that is cheaper than building the set (`<< X` is one
//! binary search in the subject's ancestors).
//!
//! # Semantics
//!
//! The specification leaves room in places; these are the choices, and the
//! test suite's expected answers follow from them.
//!
//! * **Concepts.** `X` is `{X}` whether X is active or not. Every concept
//!   reference in the expression (focus, attribute names and values, filter
//!   values) is checked before evaluation starts, so an unknown SCTID is
//!   [`EvalError::UnknownConcept`] even in a branch that would not be
//!   reached.
//! * **`*`** is the hierarchy: the root 138875005 and its descendants (the
//!   closure is active inferred is-a, so this is the active concepts that
//!   reach the root). The HL7 suite expects this: its `*` expansions list
//!   the hierarchy from 138875005, never the concepts outside it (its test
//!   edition holds three module concepts with no is-a row). Under a
//!   filter (`* {{ C … }}`, `* {{ term = … }}`), `*` is every active
//!   concept, those with no path to the root too
//!   (`Edition::active_off_hierarchy`, none in a full edition): a filter
//!   over `*` finds a concept as the same filter on the concept itself
//!   does. When a concept filter keeps inactive concepts (`active = false`
//!   or `active = *`), `*` is every concept. As an attribute name or
//!   value, a bare `*` means any type, any target.
//! * **Hierarchy operators** apply to every concept of the focus and take
//!   the union, from the closure index: descendants of a set are unioned in
//!   a bitmap, visiting members in decreasing closure size so that a member
//!   already covered by an earlier one is skipped (its closure is a
//!   subset). `!!>` keeps the members with no proper ancestor in the set
//!   (the set minus the union of its members' descendants), `!!<` those
//!   with no proper descendant in it (no child in the set, then none of
//!   the descendants, which leaves mostly have none of).
//! * **Order inside a sub-expression**: focus, then `^`, then the
//!   hierarchy operator, then filters in the order written, then the
//!   history supplement.
//! * **`^ R`**: the concepts referenced by active members of each refset in
//!   R; a concept that is no refset adds nothing. `^ [*] R`: the
//!   referenced components and the values of the refset's own columns.
//!   `^ [f] R`: the values of
//!   field `f` that are concepts of the edition (`referencedComponentId`,
//!   `refsetId` and `moduleId` included); a value that is no SCTID is
//!   [`EvalError::NotSupported`], as are the `id` column (the UUID, not
//!   kept) and `effectiveTime` and `active` (no concepts). Member filters
//!   compare the refset's own fields by name, and `moduleId`,
//!   `effectiveTime` and `active` the member row's own (format 1.3 keeps
//!   them, with the inactive members: the latest row of a member's UUID).
//!   Without an `active` filter the members are the active ones; `active =
//!   0` or `active = *` reads the inactive ones too. On a file before
//!   format 1.3 those filters are `NotSupported` (the file does not know),
//!   never an empty answer. A filter on a column (and a projection `^ [f]`)
//!   is tested once per distinct value of the column where the file codes
//!   it (format 1.4, `Edition::member_table`), then each member is a code
//!   look-up: the same answer as reading every member's text, which
//!   uncoded values and older files do.
//! * **`^R C`** (ECL 2.3, refsets containing any): the refsets with an
//!   active member (passing the member filters) whose referenced component
//!   is a concept of C — language refsets excepted, as for `^`. A few
//!   concepts look up their memberships (`Edition::component_refsets`);
//!   many walk every refset's members once.
//! * **Refinements** test inferred attributes (is-a excluded) and concrete
//!   values. An attribute `[m..n] name op value` outside a group counts the
//!   relationships of the candidate, across all groups, whose type is in
//!   `name` and whose target is in (`=`) or not in (`!=`) `value`; it holds
//!   when `m ≤ count ≤ n` (default `[1..*]`). A reverse attribute
//!   `[m..n] R name = value` counts the distinct concepts of `value` with
//!   a relationship of a type in `name` to the candidate, ignoring groups:
//!   the specification's example 3.14 ("substances that are the active
//!   ingredient of exactly three products") counts products, so a product
//!   naming the substance in two groups is one. A group `[m..n] { … }`
//!   counts the candidate's role groups — relationships sharing a group
//!   number above 0 — in which the whole attribute set holds
//!   (cardinalities counted within the group). An ungrouped relationship
//!   (group 0, RF2's "not grouped") is in no role group, so it never
//!   satisfies a group constraint: `{ 272741003 = X }` needs laterality
//!   inside a role group, as snomed-ecl-engine and an independent RF2
//!   model also read it (issue 15 measured 20 of 30 such expressions
//!   differing when group 0 counted). Concrete values compare as numbers
//!   (`#12.5`) or strings; booleans are accepted as `true`/`false` or
//!   `#1`/`#0`. A plain string value (`= "PANADOL"`) is compared whole, as
//!   ECL 1.x–2.0 defined it; an explicit `match:` term searches word
//!   prefixes and `wild:` matches a pattern, as in a term filter; a set of
//!   terms holds when one does.
//! * **Set-wise refinements**: a refinement made of `=` attributes each
//!   `[1..*]` or `[0..0]` (values a set or `*`), plain or reverse, and of
//!   `[1..*]`/`[0..0]` groups of such attributes, under any `AND`/`OR`, is
//!   computed as a set — an attribute's sources from its values' inbound
//!   lists (or the type index for `*`), a group's as (concept, group)
//!   pairs intersected across its attributes, `AND`/`OR` as intersection
//!   and union, `[0..0]` as a complement kept symbolic — then intersected
//!   with the focus, when reading those lists costs at most two
//!   relationships per concept of the focus. Otherwise:
//! * **Cost rule** for `focus : refinement`: the candidates are the focus
//!   set, filtered by the refinement — unless the refinement (or a conjunct
//!   of it, or an attribute inside a group that must occur) is an `=`
//!   attribute with `min ≥ 1` whose value set V is small: when `8·|V| <
//!   |focus|`, the candidates are instead the sources of the inbound
//!   relationships of V with a matching type (for a reverse attribute, the
//!   targets of V's own relationships of a matching type), intersected
//!   with the focus. When the refinement is that one attribute (`[1..*]`,
//!   bare or alone in a `[1..*]` group), the candidates are the answer and
//!   no candidate is tested again. When the focus is a bare `*`, `< X` or
//!   `<< X` at least 32 times bigger than the candidates, the focus is not
//!   built: each candidate is tested against it (a search in its
//!   ancestors). Failing a small value set, a required attribute naming
//!   at most 16 types drives from the edition's type index (format 1.2:
//!   the concepts having a relationship, or a concrete value, of a type)
//!   when that is under a quarter of the focus; for `T = *` alone the
//!   candidates are the answer. Files without type indexes test the focus
//!   one by one.
//!   Likewise a `match` term filter over a set of 2,000 concepts or more
//!   first narrows the set through the word index (`Edition::search_with`,
//!   inactive descriptions and definitions included), then tests the
//!   survivors' descriptions; so does a `wild` pattern, by its words that
//!   start after a separator or at its start (`*(finding)` narrows to the
//!   concepts with a word "finding…", a semantic tag's), and a pattern
//!   without one (`*ache*`) tests every concept.
//! * **Dotted** `S . a . b`: the targets of `a`-typed relationships from S,
//!   then of `b`-typed ones from those.
//! * **Description filters**: a concept passes a `{{ D … }}` block when one
//!   of its descriptions — active ones only, unless the block has an
//!   `active` filter — satisfies every filter of the block. `match` terms:
//!   every word of the search text is a prefix of a word of the term, both
//!   case- and accent-folded and split into words as the word index does
//!   (`txmap_text::fold`, `words`); `wild`: `*` is any run of characters
//!   over the whole folded term. `dialect` knows the 28 aliases of the
//!   specification's table (Appendix C, "Dialect Aliases": `en-us`,
//!   `en-gb`, `en-nhs-clinical`, `sv-se`, …; `filter::DIALECTS`); another
//!   language refset is named by its SCTID (`dialectId`). `active = *`
//!   keeps active and inactive descriptions (concepts, members) alike, and
//!   `active != *` none.
//! * **History supplements** add the inactive concepts whose historical
//!   association targets a concept of the result: `MIN` SAME AS; `MOD` also
//!   REPLACED BY, WAS A, PARTIALLY EQUIVALENT TO; `MAX` and plain `HISTORY`
//!   every association refset; `HISTORY (expr)` the association refsets
//!   the expression selects — MOVED TO never: its target is the namespace
//!   concept of the extension the concept moved to (RF2's definition of
//!   the association), not a concept with the same meaning, so it would
//!   add the concepts moved out to whatever the namespace concept is in
//!   (snomed-ecl-engine excludes it too; issue 15's side-by-side found it).
//! * **Alternate identifiers** `scheme#code`: the concepts the Identifier
//!   file's active rows say `code` identifies (format 1.3 keeps the latest
//!   row of each (scheme, code)), in every scheme the alias names. The
//!   specification gives aliases no registry, so an alias names the
//!   schemes the edition's identifiers use whose concept has an active
//!   term that is the alias or starts with it as a word, in any case
//!   (`LOINC` for |LOINC code identifier scheme|). A code that identifies
//!   nothing selects nothing; an alias that names no scheme, or a file
//!   before format 1.3, is [`EvalError::NotSupported`].
//!
//! A post-coordinated expression ([`Subject::Expression`]) is a virtual
//! concept just below its focus concepts: `<< X` and `< X` hold when X
//! subsumes one of its focus concepts; a bare reference, `<!`, `<<!`, the
//! `>` family, `!!>`, `!!<` and `^` never hold (its proximal parents are
//! only known after classification, and it is no member of anything); `*`
//! holds. Its refinement is its own attributes plus the inferred
//! attributes of its focus concepts, their groups renumbered after its own.
//! Description filters never hold for it and concept filters only when
//! they are all `active = true`.
//!
//! # Budget
//!
//! Evaluation counts work — concepts, list elements and relationships
//! touched — and checks the [`Budget`]'s deadline every 4096 units; going
//! past either is [`EvalError::TooCostly`]. Everything that loops (closures,
//! dotted chains, history, member scans) draws on the same counter, so no
//! expression runs unbounded.

#![forbid(unsafe_code)]

mod eval;
mod filter;
mod refine;
mod set;

use std::fmt;
use std::time::Instant;

use txmap_ecl::{Expr, Span};
use txmap_store::{Edition, StoreError};

use crate::eval::Ctx;

/// Limits on one evaluation. Default: no deadline, max_work = 50_000_000.
#[derive(Clone, Debug)]
pub struct Budget {
    pub deadline: Option<Instant>,
    pub max_work: u64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            deadline: None,
            max_work: 50_000_000,
        }
    }
}

/// Sorted, deduplicated concept ordinals.
pub type Ordinals = Vec<u32>;

/// The concepts `expr` selects, as sorted ordinals.
pub fn evaluate<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    expr: &Expr,
    budget: &Budget,
) -> Result<Vec<u32>, EvalError> {
    let mut cx = Ctx::new(ed, budget);
    cx.check(expr)?;
    cx.expr(expr)
}

/// Whether one subject satisfies the constraint, testing it directly where
/// that is cheaper than materialising the set. For a concept this always
/// agrees with `evaluate(..).contains(..)`.
pub fn matches<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    expr: &Expr,
    subject: &Subject,
    budget: &Budget,
) -> Result<bool, EvalError> {
    Matcher::new(ed, expr, budget)?.matches(subject)
}

/// [`matches`] for many subjects against one expression: what one test
/// learns — a sub-expression's set it had to build (`^ R`, a history
/// supplement), folded search terms, compiled description filters — is
/// kept for the next, so testing the few thousand hits of a word search
/// against a scope costs a test each, not the scope's set each. The work
/// counter is shared too: the budget bounds all the tests together.
pub struct Matcher<'a, B: AsRef<[u8]>> {
    cx: Ctx<'a, B>,
    expr: &'a Expr,
}

impl<B: AsRef<[u8]>> fmt::Debug for Matcher<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Matcher")
            .field("expr", self.expr)
            .finish_non_exhaustive()
    }
}

impl<'a, B: AsRef<[u8]>> Matcher<'a, B> {
    /// Checks the expression's concept references against the edition
    /// ([`EvalError::UnknownConcept`]), once.
    pub fn new(
        ed: &'a Edition<B>,
        expr: &'a Expr,
        budget: &'a Budget,
    ) -> Result<Matcher<'a, B>, EvalError> {
        let cx = Ctx::new(ed, budget);
        cx.check(expr)?;
        Ok(Matcher { cx, expr })
    }

    /// Whether `subject` satisfies the expression.
    pub fn matches(&mut self, subject: &Subject) -> Result<bool, EvalError> {
        match subject {
            Subject::Concept(o) => self.matches_concept(*o),
            Subject::Expression(e) => self.cx.matches_expression(self.expr, e),
        }
    }

    /// Whether the concept at ordinal `o` satisfies the expression.
    pub fn matches_concept(&mut self, o: u32) -> Result<bool, EvalError> {
        self.cx.ed.sctid(o)?;
        self.cx.matches(self.expr, o)
    }
}

/// What [`matches`] tests.
#[derive(Clone, Debug, PartialEq)]
pub enum Subject {
    /// A concept ordinal.
    Concept(u32),
    Expression(ExpressionSubject),
}

/// A post-coordinated expression: focus concepts and its refinement.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExpressionSubject {
    /// Concept ordinals.
    pub focus: Vec<u32>,
    pub attributes: Vec<SubjectAttribute>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SubjectAttribute {
    /// 0 = ungrouped; each `{…}` group of the expression gets 1, 2, …
    pub group: u16,
    /// SCTID of the attribute type.
    pub type_id: u64,
    pub value: SubjectValue,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SubjectValue {
    /// A concept ordinal.
    Concept(u32),
    Number(f64),
    String(String),
}

/// Why an expression could not be evaluated.
#[derive(Debug)]
pub enum EvalError {
    /// The expression names an SCTID that is no concept of the edition.
    UnknownConcept {
        id: u64,
        span: Span,
    },
    /// A construct this evaluator does not implement (alternate
    /// identifiers, refset columns the edition does not keep...).
    NotSupported {
        what: String,
        span: Span,
    },
    /// The budget was exceeded (time or work).
    TooCostly {
        why: String,
    },
    Store(StoreError),
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::UnknownConcept { id, span } => write!(f, "unknown concept {id} at {span}"),
            EvalError::NotSupported { what, span } => write!(f, "not supported: {what} at {span}"),
            EvalError::TooCostly { why } => write!(f, "expression too costly: {why}"),
            EvalError::Store(e) => write!(f, "edition: {e}"),
        }
    }
}

impl std::error::Error for EvalError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            EvalError::Store(e) => Some(e),
            _ => None,
        }
    }
}

impl From<StoreError> for EvalError {
    fn from(e: StoreError) -> EvalError {
        EvalError::Store(e)
    }
}
