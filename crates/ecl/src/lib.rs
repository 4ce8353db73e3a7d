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
//! Everything in the specification's grammar (chapter 5, "Formal syntax"):
//!
//! - focus concepts with their `|term|`, `*`, nested `( … )`, and
//!   alternate identifiers (`LOINC#54486-6`, `"scheme#code"`);
//! - the hierarchy operators `<`, `<<`, `<!`, `<<!`, `>`, `>>`, `>!`,
//!   `>>!`, top `!!>` and bottom `!!<`; memberOf `^`, `^ [fields]`, `^ [*]`;
//! - `AND` / `,`, `OR`, `MINUS`, refinements (attribute sets, groups,
//!   cardinalities, reverse flags, concept, numeric, string and boolean
//!   values), dotted attributes;
//! - description, concept and member filters, and history supplements;
//! - comments `/* … */` wherever white space may be.
//!
//! Alternate identifiers are parsed but cannot be evaluated against a
//! SNOMED CT edition; an evaluator should report them as unsupported. A
//! code that needs quotes is printed as `scheme#"code"` rather than the
//! specification's `"scheme#code"`, which after `=` in a refinement would
//! read as a string; both forms parse.
//!
//! Search terms keep what evaluation needs: a `match:` term is unescaped
//! and trimmed, a `wild:` term is kept as written between its quotes,
//! escapes included, because `\*` (a literal star) and `*` (any run of
//! characters) must stay apart.
//!
//! A few constructs of the grammar are rejected with
//! [`ParseErrorKind::Unsupported`] because the tree has no place for them:
//! `active = *`, `id != …`, `match:`/`wild:` and term sets as attribute
//! values (plain `"strings"` are fine), and `definitionStatus =
//! (primitive defined)`. The `|term|` after an alternate identifier is
//! parsed and dropped.
//!
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
