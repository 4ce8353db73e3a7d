//! Parse errors.
//!
//! One error, the first, with its position in three forms: the byte offset
//! for programs (it indexes the text the caller holds), and the line and
//! column in characters for people, who count characters rather than bytes.

use std::fmt;

/// Why and where an expression constraint did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// Byte offset into the text.
    pub offset: usize,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub column: u32,
    pub kind: ParseErrorKind,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// A token that cannot stand here, with what could have.
    Unexpected {
        found: String,
        expected: Vec<&'static str>,
    },
    /// The text ended where `expected` was needed.
    UnexpectedEnd { expected: Vec<&'static str> },
    /// A complete expression followed by more text.
    TrailingInput { found: String },
    /// Operators mixed at one level without brackets (`AND` with `OR`,
    /// `MINUS` with anything, refinement or dots with either): ECL 6.4
    /// makes the brackets mandatory.
    MixedOperators {
        first: &'static str,
        second: &'static str,
    },
    /// Digits that are not an SCTID: 6 to 18 digits, no leading zero, a
    /// known partition and a correct Verhoeff check digit.
    InvalidSctid(String),
    /// `[min..max]` with `min > max`.
    InvalidCardinality { min: u32, max: u32 },
    /// A number that the grammar does not allow (`#05`, `#1.`) or that
    /// does not fit.
    InvalidNumber(String),
    /// A time value that is not a `YYYYMMDD` date.
    InvalidDate(String),
    /// A `|term|`, `"string"` or `/* comment */` with no end.
    Unterminated(&'static str),
    /// An empty `||` term or `""` search term.
    Empty(&'static str),
    /// A filter keyword this kind of filter does not have.
    UnknownFilter(String),
    /// A filter where it cannot be: member filters without `^` or after
    /// other filters, anything after the history supplement.
    MisplacedFilter(&'static str),
    /// Brackets, groups or filters nested more than 200 levels deep, or
    /// deep enough to use the parser's stack budget (unoptimised builds
    /// reach it after about 70 levels).
    TooDeep,
}

impl ParseError {
    pub(crate) fn new(text: &str, offset: usize, kind: ParseErrorKind) -> ParseError {
        let before = text.get(..offset).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let line = before.matches('\n').count() + 1;
        let column = before.get(line_start..).unwrap_or("").chars().count() + 1;
        ParseError {
            offset,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
            kind,
        }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "syntax error at line {}, column {}: {}",
            self.line, self.column, self.kind
        )
    }
}

impl std::error::Error for ParseError {}

impl fmt::Display for ParseErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseErrorKind::Unexpected { found, expected } => {
                write!(f, "expected {}, found `{found}`", Alternatives(expected))
            }
            ParseErrorKind::UnexpectedEnd { expected } => {
                write!(
                    f,
                    "expected {}, found the end of the text",
                    Alternatives(expected)
                )
            }
            ParseErrorKind::TrailingInput { found } => {
                write!(f, "unexpected `{found}` after a complete expression")
            }
            ParseErrorKind::MixedOperators { first, second } if first == second => {
                write!(f, "`{first}` cannot be chained without brackets")
            }
            ParseErrorKind::MixedOperators { first, second } => {
                write!(f, "`{second}` cannot follow `{first}` without brackets")
            }
            ParseErrorKind::InvalidSctid(s) => {
                write!(f, "`{s}` is not a valid SNOMED CT identifier")
            }
            ParseErrorKind::InvalidCardinality { min, max } => {
                write!(
                    f,
                    "cardinality [{min}..{max}] has a minimum above its maximum"
                )
            }
            ParseErrorKind::InvalidNumber(s) => write!(f, "`{s}` is not a valid number"),
            ParseErrorKind::InvalidDate(s) => {
                write!(f, "`\"{s}\"` is not a valid date (YYYYMMDD)")
            }
            ParseErrorKind::Unterminated(what) => write!(f, "unterminated {what}"),
            ParseErrorKind::Empty(what) => write!(f, "empty {what}"),
            ParseErrorKind::UnknownFilter(word) => write!(f, "unknown filter `{word}`"),
            ParseErrorKind::MisplacedFilter(why) => f.write_str(why),
            ParseErrorKind::TooDeep => f.write_str("nested too deeply (at most 200 levels)"),
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
struct Alternatives<'a>(&'a [&'static str]);

impl fmt::Display for Alternatives<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, what) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(if i + 1 == self.0.len() { " or " } else { ", " })?;
            }
            f.write_str(what)?;
        }
        Ok(())
    }
}
