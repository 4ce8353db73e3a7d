//! SNOMED CT Expression Constraint Language: text to a typed syntax tree
//! and back.
//!
//! [`parse`] reads an expression constraint (ECL 2.2, with the 2.3
//! additions) into an [`Expr`] whose nodes carry byte [`Span`]s; the
//! `Display` impls (and [`print()`]) write a tree back as canonical ECL. The
//! two are inverses on every tree the parser produces:
//! `parse(&print(&ast)) == Ok(ast)`, which the property test and the fuzz
//! target check.
//!
//! ```
//! let expr = txmap_ecl::parse("<<404684003|Clinical finding| : 363698007=<<39057004").unwrap();
//! assert_eq!(
//!     txmap_ecl::print(&expr),
//!     "<< 404684003 |Clinical finding| : 363698007 = << 39057004"
//! );
//! let err = txmap_ecl::parse("<< abc").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "syntax error at line 1, column 4: expected a concept id, `*` or `(`, found `abc`"
//! );
//! ```
//!
//! This crate is syntax only: it knows nothing of editions, the store or
//! FHIR. Evaluation lives elsewhere and depends on these types.
//!
//! # What is supported
//!
//! Every production of the specification's grammar — the brief syntax
//! (`syntax/ECL.g4` and `abnf-brief.txt` of
//! IHTSDO/snomed-expression-constraint-language, with ECL 2.3's `^R`) and
//! the long syntax (`abnf-long.txt`) — and every example the specification
//! publishes (121 of them, all parsed by hand at each grammar change). Where
//! each lives:
//!
//! | productions | where |
//! |---|---|
//! | `expressionConstraint`, `refined…`, `compound…` (`conjunction`, `disjunction`, `exclusion`), `dotted…` | `Parser::expression_rest` → [`Expr`] |
//! | `subExpressionConstraint`, `constraintOperator` (`<` … `>>!`, `!!>`, `!!<`, and the long `descendantOf` … `parentOrSelfOf`, `top`, `bottom`) | `Parser::sub_expr_inner`, `Parser::operator` → [`SubExpr`], [`Operator`] |
//! | `refsetOperator`: `memberOf` (`^`, `memberOf`, `[fields]`, `[*]`) and `refsetContainingAny` (`^R`) | `Parser::sub_expr_inner`, `Parser::member_fields` → [`MemberOf`] |
//! | `eclFocusConcept`: `eclConceptReference` with its `\|term\|`, `wildCard` (`*`, `ANY`), `altIdentifier` (`LOINC#54486-6`, `"scheme#code"`) | `Parser::focus`, `Parser::alternate_id` → [`Focus`] |
//! | `eclRefinement`, `subRefinement`, `eclAttributeSet`, `eclAttributeGroup`, `cardinality` (`..` or `to`, `*` or `many`), `reverseFlag` (`R`, `reverseOf`), `eclAttribute` | `Parser::refinement`, `Parser::cardinality`, `Parser::attribute` → [`Refinement`] |
//! | `expressionComparisonOperator` … `idComparisonOperator` (`=`, `!=`, and the long `<>`, `NOT =`) | `Parser::numeric_op`, `Parser::bool_op` |
//! | concrete values: `numericValue`, `typedSearchTerm(Set)` (strings, `match:`, `wild:`), `booleanValue` | `Parser::comparison` → [`Comparison`] |
//! | `descriptionFilterConstraint`: `termFilter`, `languageFilter`, `typeIdFilter`, `typeTokenFilter` (`syn`/`synonym`, `fsn`/`fullySpecifiedName`, `def`/`definition`), `dialectIdFilter`, `dialectAliasFilter`, `acceptabilitySet` (`accept(able)`, `prefer(red)`, ids), `moduleFilter`, `effectiveTimeFilter` (`""` = no time), `activeFilter` (`1`, `0`, `true`, `false`, `*`), `descriptionIdFilter` (`=`, `!=`) | `Parser::description_filter` → [`DescriptionFilter`] |
//! | `conceptFilterConstraint`: `definitionStatusIdFilter`, `definitionStatusTokenFilter` (a token or a set), `moduleFilter`, `effectiveTimeFilter`, `activeFilter` | `Parser::concept_filter` → [`ConceptFilter`] |
//! | `memberFilterConstraint`: `memberFieldFilter`, `moduleFilter`, `effectiveTimeFilter`, `activeFilter` | `Parser::member_filter` → [`MemberFilter`] |
//! | `historySupplement`: `HISTORY`, `-MIN`/`-MOD`/`-MAX` (or `_`), `historySubset` | `Parser::history` → [`History`] |
//! | `ws`, `mws`, `comment` | `Parser::ws` |
//!
//! The long syntax reads to the tree its brief form reads to (a test pairs
//! every keyword form with its brief form); keywords are case-insensitive
//! whole words, so `top#1` is still an alternate identifier. `^R` is the
//! two characters `^R` with nothing between them (as `CARAT CAP_R` in the
//! ANTLR grammar): `^RXN#1` is `^` and an alternate identifier.
//!
//! A code that needs quotes is printed as `scheme#"code"` rather than the
//! specification's `"scheme#code"`, which after `=` in a refinement would
//! read as a string; both forms parse. The `|term|` after an alternate
//! identifier is parsed and dropped.
//!
//! Search terms keep what evaluation needs: a `match:` term is unescaped
//! and trimmed, a `wild:` term is kept as written between its quotes,
//! escapes included, because `\*` (a literal star) and `*` (any run of
//! characters) must stay apart. An attribute's string value is a search
//! term too (the grammar's `typedSearchTerm`); a plain `"…"` there, which
//! ECL 1.x–2.0 compared whole, is kept apart from an explicit `match:`
//! (`SearchTerm::Match::explicit`) so that an evaluator can keep that
//! meaning.

//! # Normalisation
//!
//! The tree keeps what changes meaning and drops what does not, so printing
//! is canonical rather than a copy of the input: keywords are printed in
//! upper case, `,` between expressions becomes `AND` (in refinements `AND`
//! becomes `,`), brackets in refinements are printed only where needed,
//! `active != true` becomes `active = false`, description filters always
//! carry their `D`, and a one-element set such as `language = (en)` is
//! printed as a single value. Brackets around expressions are kept (as
//! [`Focus::Nested`]), so the tree mirrors what was written.
//!
//! # Errors
//!
//! Parsing stops at the first error. A [`ParseError`] has the byte offset,
//! the line and column (in characters) and a [`ParseErrorKind`] saying what
//! was found and what would have been accepted there; its `Display` is one
//! line for a user. The parser never panics, whatever the input: nesting
//! deeper than 200 levels is an error ([`ParseErrorKind::TooDeep`]) rather
//! than a stack overflow.

pub mod ast;
mod error;
mod parse;
mod print;

pub use ast::*;
pub use error::{ParseError, ParseErrorKind};

/// Parses an expression constraint.
pub fn parse(text: &str) -> Result<Expr, ParseError> {
    parse::parse(text)
}

/// Writes an expression constraint as canonical ECL (the same as
/// `expr.to_string()`).
pub fn print(expr: &Expr) -> String {
    expr.to_string()
}
