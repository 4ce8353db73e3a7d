//! The parser: recursive descent directly over the bytes.
//!
//! There is no separate lexer because ECL's tokens depend on where they
//! are: `<` is an operator before a focus and a comparison after an
//! attribute name, `en-gb` is one word in a dialect filter, `R` is a flag
//! before an attribute and `|…|` swallows anything. Each function reads
//! what its grammar rule allows at the cursor.
//!
//! Conventions: a function is called at a non-blank position and returns
//! right after its last token, so a node's span is `start..pos`. Looking
//! past blanks for an optional continuation restores the cursor when there
//! is none.
//!
//! Two places of the grammar are ambiguous with one token of look-ahead,
//! and both are settled without unbounded backtracking:
//!
//! - `(` opening a sub-refinement or a nested attribute name
//!   (`(<< 1 OR << 2) = 3`): the bracket is skipped to its match and the
//!   next token decides (a comparison operator means an attribute name);
//! - `(` opening a set of concept references or a nested expression
//!   (`moduleId = (1 2)`): the set is tried first, and it never recurses,
//!   so trying costs at most its length.

use crate::ast::*;
use crate::error::{ParseError, ParseErrorKind};

/// Deepest nesting of sub-expressions, refinement brackets and groups.
const MAX_DEPTH: u32 = 200;

/// The most stack the parser may use. An optimised build needs 2 to 4 KiB
/// per level of nesting, so [`MAX_DEPTH`] is reached first; an unoptimised
/// one needs up to 15 KiB, and 200 levels would overflow the 2 MiB stack of
/// a spawned thread (tests, tokio workers) and abort the process. Past this
/// budget the parser reports [`ParseErrorKind::TooDeep`] instead.
const STACK_BUDGET: usize = 1 << 20;

/// An address in the current stack frame: how deep the stack is, give or
/// take a frame.
#[inline(never)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::ptr::addr_of!(marker) as usize
}

const FOCUS: &[&str] = &["a concept id", "`*`", "`(`"];
const COMPARISON: &[&str] = &["`=`", "`!=`", "`<`", "`<=`", "`>`", "`>=`"];
const DESCRIPTION_FILTERS: &[&str] = &[
    "term",
    "language",
    "typeid",
    "type",
    "dialectid",
    "dialect",
    "moduleid",
    "effectivetime",
    "active",
    "id",
];
const CONCEPT_FILTERS: &[&str] = &[
    "definitionstatusid",
    "definitionstatus",
    "moduleid",
    "effectivetime",
    "active",
];
const ACCEPTABLE: u64 = 900000000000549004;
const PREFERRED: u64 = 900000000000548007;

pub(crate) fn parse(text: &str) -> std::result::Result<Expr, ParseError> {
    let mut p = Parser {
        text,
        b: text.as_bytes(),
        pos: 0,
        depth: 0,
        stack_base: stack_position(),
    };
    p.top()
        .map_err(|fail| ParseError::new(text, fail.offset, fail.kind))
}

/// An error before its line and column are worked out.
struct Fail {
    offset: usize,
    kind: ParseErrorKind,
}

type Result<T> = std::result::Result<T, Fail>;

/// The kinds of `AND`/`,`, `OR` and `MINUS`: the same kind may repeat at
/// one level, different kinds may not.
fn same_kind(a: &str, b: &str) -> bool {
    let kind = |op| match op {
        "AND" | "," => 0,
        "OR" => 1,
        _ => 2,
    };
    a != "MINUS" && kind(a) == kind(b)
}

/// A byte that may continue an alternate identifier's scheme (`^RXN#1`
/// is `^` and an identifier, not `^R`).
fn scheme_part(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'#' | b'-' | b'_')
}

fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

/// `\"` and `\\` replaced by what they stand for.
fn unescape(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    while let Some(c) = chars.next() {
        match (c, chars.clone().next()) {
            ('\\', Some(next @ ('"' | '\\'))) => {
                out.push(next);
                chars.next();
            }
            _ => out.push(c),
        }
    }
    out
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[derive(Clone, Copy)]
struct Parser<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: u32,
    stack_base: usize,
}

/// One `{{ … }}` block.
enum Block {
    Member(MemberFilterSet),
    Filter(Filter),
    History(History),
}

impl<'a> Parser<'a> {
    // ----- cursor ---------------------------------------------------------

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.b.get(self.pos + n).copied()
    }

    fn starts_with(&self, s: &str) -> bool {
        self.b
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(s.as_bytes()))
    }

    fn eat(&mut self, s: &str) -> bool {
        let yes = self.starts_with(s);
        if yes {
            self.pos += s.len();
        }
        yes
    }

    fn slice(&self, start: usize, end: usize) -> &'a str {
        self.text.get(start..end).unwrap_or("")
    }

    /// The run of ASCII letters and digits at the cursor.
    fn word(&self) -> &'a str {
        self.word_at(self.pos, |c| c.is_ascii_alphanumeric())
    }

    fn word_at(&self, start: usize, part: impl Fn(u8) -> bool) -> &'a str {
        let len = self
            .b
            .get(start..)
            .map_or(0, |rest| rest.iter().take_while(|&&c| part(c)).count());
        self.slice(start, start + len)
    }

    /// Consumes `keyword` (any case) if it is the whole word at the cursor.
    fn keyword(&mut self, keyword: &str) -> bool {
        let yes = self.word().eq_ignore_ascii_case(keyword);
        if yes {
            self.pos += keyword.len();
        }
        yes
    }

    /// Skips blanks and comments.
    fn ws(&mut self) -> Result<()> {
        self.pos = self.blank_end(self.pos)?;
        Ok(())
    }

    fn blank_end(&self, mut i: usize) -> Result<usize> {
        loop {
            match self.b.get(i) {
                Some(&c) if is_blank(c) => i += 1,
                Some(b'/') if self.b.get(i + 1) == Some(&b'*') => {
                    let body = self.b.get(i + 2..).unwrap_or(&[]);
                    match body.windows(2).position(|w| w == b"*/") {
                        Some(n) => i += n + 4,
                        None => return self.fail_at(i, ParseErrorKind::Unterminated("comment")),
                    }
                }
                _ => return Ok(i),
            }
        }
    }

    /// Looks past blanks: runs `f` there and keeps the new position if it
    /// returns `Some`, else restores the cursor.
    fn after_ws<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<Option<T>>) -> Result<Option<T>> {
        let save = self.pos;
        self.ws()?;
        let found = f(self)?;
        if found.is_none() {
            self.pos = save;
        }
        Ok(found)
    }

    /// Counts one level of nesting; fails past [`MAX_DEPTH`] or
    /// [`STACK_BUDGET`].
    fn enter(&mut self) -> Result<()> {
        if self.depth > MAX_DEPTH || stack_position().abs_diff(self.stack_base) > STACK_BUDGET {
            return self.fail(ParseErrorKind::TooDeep);
        }
        self.depth += 1;
        Ok(())
    }

    // ----- errors ---------------------------------------------------------

    fn fail<T>(&self, kind: ParseErrorKind) -> Result<T> {
        self.fail_at(self.pos, kind)
    }

    fn fail_at<T>(&self, offset: usize, kind: ParseErrorKind) -> Result<T> {
        Err(Fail { offset, kind })
    }

    /// The token at the cursor, for an error message.
    fn found(&self) -> Option<String> {
        let rest = self.text.get(self.pos..)?;
        let first = rest.chars().next()?;
        let run = |part: fn(char) -> bool| rest.chars().take_while(|&c| part(c)).take(40).collect();
        Some(if first.is_ascii_alphanumeric() {
            run(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        } else if "<>!=".contains(first) {
            run(|c| "<>!=".contains(c))
        } else if rest.starts_with("{{") || rest.starts_with("}}") {
            rest[..2].to_string()
        } else {
            first.to_string()
        })
    }

    fn unexpected<T>(&self, expected: &[&'static str]) -> Result<T> {
        let expected = expected.to_vec();
        self.fail(match self.found() {
            Some(found) => ParseErrorKind::Unexpected { found, expected },
            None => ParseErrorKind::UnexpectedEnd { expected },
        })
    }

    fn expect(&mut self, token: &str, what: &'static str) -> Result<()> {
        if self.eat(token) {
            Ok(())
        } else {
            self.unexpected(&[what])
        }
    }

    // ----- expressions ----------------------------------------------------

    fn top(&mut self) -> Result<Expr> {
        self.ws()?;
        let expr = self.expression()?;
        self.ws()?;
        match self.found() {
            Some(found) => self.fail(ParseErrorKind::TrailingInput { found }),
            None => Ok(expr),
        }
    }

    /// `AND`, `,`, `OR`, `MINUS`, `:` or `.` at the cursor, with its length.
    /// Keywords must be followed by a blank, a comment or `(`.
    fn peek_operator(&self) -> Option<(&'static str, usize)> {
        match self.peek()? {
            b',' => return Some((",", 1)),
            b':' => return Some((":", 1)),
            b'.' => return Some((".", 1)),
            _ => {}
        }
        let word = self.word();
        let end = self.pos + word.len();
        let separated = match self.b.get(end) {
            None => true,
            Some(&c) => is_blank(c) || c == b'(' || self.b.get(end..end + 2) == Some(b"/*"),
        };
        let op = ["AND", "OR", "MINUS"]
            .into_iter()
            .find(|k| k.eq_ignore_ascii_case(word))?;
        separated.then_some((op, word.len()))
    }

    fn expression(&mut self) -> Result<Expr> {
        let start = self.pos;
        let first = self.sub_expr()?;
        self.expression_rest(start, first)
    }

    /// What follows the first sub-expression. A function of its own (as
    /// are [`Parser::filters`] and [`Parser::nested`]) to keep the frames
    /// on the path of nested brackets small: unoptimised builds give every
    /// temporary its own stack slot.
    #[inline(never)]
    fn expression_rest(&mut self, start: usize, first: SubExpr) -> Result<Expr> {
        let Some((op, mut len)) = self.after_ws(|p| Ok(p.peek_operator()))? else {
            return Ok(Expr::Sub(first));
        };
        let expr = match op {
            ":" => {
                self.pos += 1;
                self.ws()?;
                let refinement = self.refinement()?;
                Expr::Refined(
                    Box::new(first),
                    Box::new(refinement),
                    Span::new(start, self.pos),
                )
            }
            "." => {
                let mut attributes = Vec::new();
                while self.after_ws(|p| Ok(p.eat(".").then_some(())))?.is_some() {
                    self.ws()?;
                    attributes.push(self.sub_expr()?);
                }
                Expr::Dotted(Box::new(first), attributes, Span::new(start, self.pos))
            }
            "MINUS" => {
                self.pos += len;
                self.ws()?;
                let second = self.sub_expr()?;
                let span = Span::new(start, self.pos);
                Expr::Minus(
                    Box::new(Expr::Sub(first)),
                    Box::new(Expr::Sub(second)),
                    span,
                )
            }
            _ => {
                let mut operands = vec![Expr::Sub(first)];
                loop {
                    self.pos += len;
                    self.ws()?;
                    operands.push(Expr::Sub(self.sub_expr()?));
                    match self.after_ws(|p| Ok(p.peek_operator()))? {
                        Some((next, l)) if same_kind(op, next) => len = l,
                        Some((next, _)) => return self.mixed(op, next),
                        None => break,
                    }
                }
                let span = Span::new(start, self.pos);
                if op == "OR" {
                    Expr::Or(operands, span)
                } else {
                    Expr::And(operands, span)
                }
            }
        };
        // A refinement, dotted or compound expression cannot go on without
        // brackets (`MINUS` after a refinement, `AND` after dots, …).
        match self.after_ws(|p| Ok(p.peek_operator()))? {
            Some((next, _)) => self.mixed(op, next),
            None => Ok(expr),
        }
    }

    fn mixed<T>(&self, first: &'static str, second: &'static str) -> Result<T> {
        self.fail(ParseErrorKind::MixedOperators { first, second })
    }

    fn sub_expr(&mut self) -> Result<SubExpr> {
        self.enter()?;
        let sub = self.sub_expr_inner()?;
        self.depth -= 1;
        Ok(sub)
    }

    fn sub_expr_inner(&mut self) -> Result<SubExpr> {
        let start = self.pos;
        let operator = self.operator();
        if operator.is_some() {
            self.ws()?;
        }
        let member_of = if self.starts_with("^R") && !self.peek_at(2).is_some_and(scheme_part) {
            self.pos += 2;
            self.ws()?;
            Some(MemberOf::Refsets)
        } else if self.eat("^") || self.long_keyword("memberOf") {
            self.ws()?;
            let m = if self.peek() == Some(b'[') {
                self.member_fields()?
            } else {
                MemberOf::Components
            };
            Some(m)
        } else {
            None
        };
        let focus = self.focus()?;
        let sub = SubExpr {
            operator,
            member_of,
            focus,
            member_filters: Vec::new(),
            filters: Vec::new(),
            history: None,
            span: Span::default(),
        };
        self.filters(start, sub)
    }

    /// The filters and history supplement after a focus.
    #[inline(never)]
    fn filters(&mut self, start: usize, mut sub: SubExpr) -> Result<SubExpr> {
        while let Some(at) = self.after_ws(|p| Ok(p.starts_with("{{").then_some(p.pos)))? {
            if sub.history.is_some() {
                return self.fail_at(
                    at,
                    ParseErrorKind::MisplacedFilter("nothing can follow the history supplement"),
                );
            }
            match self.filter_block()? {
                Block::Member(_) if sub.member_of.is_none() => {
                    return self.fail_at(
                        at,
                        ParseErrorKind::MisplacedFilter("member filters need `^`"),
                    );
                }
                Block::Member(_) if !sub.filters.is_empty() => {
                    return self.fail_at(
                        at,
                        ParseErrorKind::MisplacedFilter(
                            "member filters must come before description and concept filters",
                        ),
                    );
                }
                Block::Member(m) => sub.member_filters.push(m),
                Block::Filter(f) => sub.filters.push(f),
                Block::History(h) => sub.history = Some(h),
            }
        }
        sub.span = Span::new(start, self.pos);
        Ok(sub)
    }

    fn operator(&mut self) -> Option<Operator> {
        use Operator::*;
        const OPERATORS: [(&str, Operator); 10] = [
            ("<<!", ChildOrSelfOf),
            ("<<", DescendantOrSelfOf),
            ("<!", ChildOf),
            ("<", DescendantOf),
            (">>!", ParentOrSelfOf),
            (">>", AncestorOrSelfOf),
            (">!", ParentOf),
            (">", AncestorOf),
            ("!!>", Top),
            ("!!<", Bottom),
        ];
        const LONG: [(&str, Operator); 10] = [
            ("descendantOf", DescendantOf),
            ("descendantOrSelfOf", DescendantOrSelfOf),
            ("childOf", ChildOf),
            ("childOrSelfOf", ChildOrSelfOf),
            ("ancestorOf", AncestorOf),
            ("ancestorOrSelfOf", AncestorOrSelfOf),
            ("parentOf", ParentOf),
            ("parentOrSelfOf", ParentOrSelfOf),
            ("top", Top),
            ("bottom", Bottom),
        ];
        if let Some(&(_, op)) = OPERATORS.iter().find(|(s, _)| self.eat(s)) {
            return Some(op);
        }
        let &(_, op) = LONG.iter().find(|(k, _)| self.long_keyword(k))?;
        Some(op)
    }

    /// Consumes `keyword` (any case) if it is the whole word at the cursor
    /// and not the scheme of an alternate identifier (`top#1`): the long
    /// syntax's operators, `memberOf`, `ANY`, `reverseOf`.
    fn long_keyword(&mut self, keyword: &str) -> bool {
        // Most words here are SCTIDs: a first letter that differs ends the
        // test before the word is read (ten operators and `memberOf` read
        // a focus's whole number eleven times).
        let first = keyword.as_bytes().first();
        if !self
            .peek()
            .is_some_and(|c| first.is_some_and(|f| c.eq_ignore_ascii_case(f)))
        {
            return false;
        }
        let word = self.word();
        let yes = word.eq_ignore_ascii_case(keyword)
            && !matches!(self.b.get(self.pos + word.len()), Some(b'#' | b'-' | b'_'));
        if yes {
            self.pos += word.len();
        }
        yes
    }

    /// `[field, field]` or `[*]` after `^`, and the blanks after it.
    fn member_fields(&mut self) -> Result<MemberOf> {
        self.pos += 1;
        self.ws()?;
        let m = if self.eat("*") {
            MemberOf::AllFields
        } else {
            let mut fields = Vec::new();
            loop {
                let name = self.word_at(self.pos, |c| c.is_ascii_alphabetic());
                if name.is_empty() {
                    return self.unexpected(&["a field name", "`*`"]);
                }
                self.pos += name.len();
                fields.push(name.to_string());
                if self.after_ws(|p| Ok(p.eat(",").then_some(())))?.is_none() {
                    break;
                }
                self.ws()?;
            }
            MemberOf::Fields(fields)
        };
        self.ws()?;
        self.expect("]", "`]`")?;
        self.ws()?;
        Ok(m)
    }

    fn focus(&mut self) -> Result<Focus> {
        match self.peek() {
            Some(b'0'..=b'9') => Ok(Focus::Concept(self.concept_ref()?)),
            Some(b'*') => {
                self.pos += 1;
                Ok(Focus::Any(Span::new(self.pos - 1, self.pos)))
            }
            Some(b'(') => self.nested(),
            Some(b'a' | b'A') if self.long_keyword("any") => {
                Ok(Focus::Any(Span::new(self.pos - 3, self.pos)))
            }
            Some(c) if c.is_ascii_alphabetic() || c == b'"' => self.alternate_id(),
            _ => self.unexpected(FOCUS),
        }
    }

    #[inline(never)]
    fn nested(&mut self) -> Result<Focus> {
        self.pos += 1;
        self.ws()?;
        let expr = self.expression()?;
        self.ws()?;
        self.expect(")", "`)`")?;
        Ok(Focus::Nested(Box::new(expr)))
    }

    /// `scheme#code`, `"scheme#code"` or `scheme#"code"`, with an optional
    /// `|term|` that is dropped.
    fn alternate_id(&mut self) -> Result<Focus> {
        let start = self.pos;
        let quoted = self.eat("\"");
        let scheme = self.word_at(self.pos, |c| c.is_ascii_alphanumeric() || c == b'-');
        if !scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            || self.b.get(self.pos + scheme.len()) != Some(&b'#')
        {
            self.pos = start;
            return self.unexpected(FOCUS);
        }
        self.pos += scheme.len() + 1;
        let id = if quoted || self.peek() == Some(b'"') {
            if !quoted {
                self.pos += 1;
            }
            let len = self
                .b
                .get(self.pos..)
                .and_then(|rest| rest.iter().position(|&c| c == b'"'));
            let Some(len) = len else {
                return self.fail_at(start, ParseErrorKind::Unterminated("string"));
            };
            let id = self.slice(self.pos, self.pos + len);
            self.pos += len + 1;
            id
        } else {
            let id = self.word_at(self.pos, |c| {
                c.is_ascii_alphanumeric() || b"-._".contains(&c)
            });
            self.pos += id.len();
            id
        };
        if id.is_empty() {
            return self.fail_at(start, ParseErrorKind::Empty("identifier"));
        }
        let end = self.pos;
        if self
            .after_ws(|p| Ok((p.peek() == Some(b'|')).then_some(())))?
            .is_some()
        {
            self.term()?;
        }
        Ok(Focus::AlternateId {
            scheme: scheme.to_string(),
            id: id.to_string(),
            span: Span::new(start, end),
        })
    }

    fn sctid(&mut self) -> Result<u64> {
        let start = self.pos;
        let digits = self.word_at(start, |c| c.is_ascii_digit());
        if digits.is_empty() {
            return self.unexpected(&["a concept id"]);
        }
        self.pos += digits.len();
        // Any component kind: description filters take description ids.
        match txmap_sctid::parse(digits.as_bytes()) {
            Ok((id, _)) => Ok(id),
            Err(_) => self.fail_at(start, ParseErrorKind::InvalidSctid(digits.to_string())),
        }
    }

    fn concept_ref(&mut self) -> Result<ConceptRef> {
        let start = self.pos;
        let id = self.sctid()?;
        let term = if self
            .after_ws(|p| Ok((p.peek() == Some(b'|')).then_some(())))?
            .is_some()
        {
            Some(self.term()?)
        } else {
            None
        };
        Ok(ConceptRef {
            id,
            term,
            span: Span::new(start, self.pos),
        })
    }

    /// `|term|`, trimmed.
    fn term(&mut self) -> Result<String> {
        let start = self.pos;
        let body = self.b.get(start + 1..).unwrap_or(&[]);
        let Some(len) = body.iter().position(|&c| c == b'|') else {
            return self.fail(ParseErrorKind::Unterminated("term"));
        };
        let term = self.slice(start + 1, start + 1 + len).trim();
        if term.is_empty() {
            return self.fail(ParseErrorKind::Empty("term"));
        }
        self.pos = start + len + 2;
        Ok(term.to_string())
    }

    // ----- refinements ----------------------------------------------------

    fn refinement(&mut self) -> Result<Refinement> {
        self.joined(Self::sub_refinement)
    }

    fn attribute_set(&mut self) -> Result<Refinement> {
        self.joined(Self::sub_attribute_set)
    }

    /// Items joined by `AND`/`,` or by `OR` (not both), nested conjunctions
    /// in conjunctions (and disjunctions in disjunctions) flattened.
    fn joined(&mut self, item: fn(&mut Self) -> Result<Refinement>) -> Result<Refinement> {
        let head = item(self)?;
        let mut items = Vec::new();
        let mut first: Option<&'static str> = None;
        let joiner = |p: &mut Self| {
            Ok(p.peek_operator()
                .filter(|(op, _)| matches!(*op, "AND" | "," | "OR")))
        };
        while let Some((op, len)) = self.after_ws(joiner)? {
            match first {
                Some(f) if !same_kind(f, op) => return self.mixed(f, op),
                _ => first = first.or(Some(op)),
            }
            self.pos += len;
            self.ws()?;
            items.push(item(self)?);
        }
        let Some(first) = first else {
            return Ok(head);
        };
        let or = first == "OR";
        let flat = std::iter::once(head).chain(items).flat_map(|r| match r {
            Refinement::Or(v) if or => v,
            Refinement::And(v) if !or => v,
            r => vec![r],
        });
        Ok(if or {
            Refinement::Or(flat.collect())
        } else {
            Refinement::And(flat.collect())
        })
    }

    fn sub_refinement(&mut self) -> Result<Refinement> {
        if self.peek() == Some(b'(') && !self.paren_is_attribute_name() {
            return self.bracketed(Self::refinement);
        }
        let start = self.pos;
        let cardinality = self.cardinality()?;
        if self.peek() != Some(b'{') {
            return Ok(Refinement::Attribute(Box::new(
                self.attribute(start, cardinality)?,
            )));
        }
        self.enter()?;
        self.pos += 1;
        self.ws()?;
        let attributes = self.attribute_set()?;
        self.ws()?;
        self.expect("}", "`}`")?;
        self.depth -= 1;
        Ok(Refinement::Group(Group {
            cardinality,
            attributes: Box::new(attributes),
            span: Span::new(start, self.pos),
        }))
    }

    fn sub_attribute_set(&mut self) -> Result<Refinement> {
        if self.peek() == Some(b'(') && !self.paren_is_attribute_name() {
            return self.bracketed(Self::attribute_set);
        }
        let start = self.pos;
        let cardinality = self.cardinality()?;
        Ok(Refinement::Attribute(Box::new(
            self.attribute(start, cardinality)?,
        )))
    }

    fn bracketed(&mut self, inner: fn(&mut Self) -> Result<Refinement>) -> Result<Refinement> {
        self.enter()?;
        self.pos += 1;
        self.ws()?;
        let r = inner(self)?;
        self.ws()?;
        self.expect(")", "`)`")?;
        self.depth -= 1;
        Ok(r)
    }

    /// At `(` in a refinement: whether it opens a nested attribute name
    /// rather than a bracketed refinement, i.e. whether a comparison
    /// follows its match (and any filters after it).
    fn paren_is_attribute_name(&self) -> bool {
        let Some(mut i) = self.skip_brackets(self.pos) else {
            return false;
        };
        loop {
            let Ok(j) = self.blank_end(i) else {
                return false;
            };
            i = j;
            if self.b.get(i) != Some(&b'{') {
                break;
            }
            match self.skip_brackets(i) {
                Some(j) => i = j,
                None => return false,
            }
        }
        match self.b.get(i) {
            Some(b'=' | b'<' | b'>') => true,
            Some(b'!') => self.b.get(i + 1) == Some(&b'='),
            // The long syntax's `NOT =`.
            Some(b'n' | b'N') => self
                .word_at(i, |c| c.is_ascii_alphanumeric())
                .eq_ignore_ascii_case("not"),
            _ => false,
        }
    }

    /// The index after the bracket matching the one at `i`, skipping
    /// terms, strings and comments.
    fn skip_brackets(&self, mut i: usize) -> Option<usize> {
        let mut depth = 0usize;
        let skip_to = |from: usize, stop: &[u8]| {
            self.b
                .get(from..)?
                .windows(stop.len())
                .position(|w| w == stop)
                .map(|n| from + n + stop.len() - 1)
        };
        while let Some(&c) = self.b.get(i) {
            match c {
                b'(' | b'{' | b'[' => depth += 1,
                b')' | b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    if depth == 0 {
                        return Some(i + 1);
                    }
                }
                b'|' => i = skip_to(i + 1, b"|")?,
                b'/' if self.b.get(i + 1) == Some(&b'*') => i = skip_to(i + 2, b"*/")?,
                b'"' => {
                    i += 1;
                    while *self.b.get(i)? != b'"' {
                        i += if self.b[i] == b'\\' { 2 } else { 1 };
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// `[min..max]` and the blanks after it, if there.
    fn cardinality(&mut self) -> Result<Option<Cardinality>> {
        let start = self.pos;
        if !self.eat("[") {
            return Ok(None);
        }
        self.ws()?;
        let min = self.integer()?;
        self.ws()?;
        if !self.eat("..") && !self.keyword("to") {
            return self.unexpected(&["`..`", "`to`"]);
        }
        self.ws()?;
        let max = if self.eat("*") || self.keyword("many") {
            None
        } else {
            Some(self.integer()?)
        };
        self.ws()?;
        self.expect("]", "`]`")?;
        if let Some(max) = max.filter(|&max| min > max) {
            return self.fail_at(start, ParseErrorKind::InvalidCardinality { min, max });
        }
        self.ws()?;
        Ok(Some(Cardinality { min, max }))
    }

    fn integer(&mut self) -> Result<u32> {
        let digits = self.word_at(self.pos, |c| c.is_ascii_digit());
        if digits.is_empty() {
            return self.unexpected(&["a number"]);
        }
        match digits.parse() {
            Ok(n) => {
                self.pos += digits.len();
                Ok(n)
            }
            Err(_) => self.fail(ParseErrorKind::InvalidNumber(digits.to_string())),
        }
    }

    fn attribute(&mut self, start: usize, cardinality: Option<Cardinality>) -> Result<Attribute> {
        let flag_end = |c: u8| c.is_ascii_alphanumeric() || b"#-_".contains(&c);
        let reverse =
            if matches!(self.peek(), Some(b'R' | b'r')) && !self.peek_at(1).is_some_and(flag_end) {
                self.pos += 1;
                true
            } else {
                self.long_keyword("reverseOf")
            };
        if reverse {
            self.ws()?;
        }
        let name = self.sub_expr()?;
        self.ws()?;
        let comparison = self.comparison()?;
        Ok(Attribute {
            cardinality,
            reverse,
            name,
            comparison,
            span: Span::new(start, self.pos),
        })
    }

    /// A comparison operator: `=`, `!=` (also `<>` and `NOT =` in the long
    /// syntax), `<`, `<=`, `>`, `>=`.
    fn numeric_op(&mut self) -> Option<NumericOp> {
        use NumericOp::*;
        if self.not_equal_long() {
            return Some(Ne);
        }
        let ops = [
            ("!=", Ne),
            ("<=", Le),
            (">=", Ge),
            ("=", Eq),
            ("<", Lt),
            (">", Gt),
        ];
        let &(_, op) = ops.iter().find(|(s, _)| self.eat(s))?;
        Some(op)
    }

    /// `<>` or `NOT =` at the cursor, consumed.
    fn not_equal_long(&mut self) -> bool {
        if self.eat("<>") {
            return true;
        }
        let save = self.pos;
        if self.keyword("not")
            && let Ok(i) = self.blank_end(self.pos)
            && self.b.get(i) == Some(&b'=')
        {
            self.pos = i + 1;
            return true;
        }
        self.pos = save;
        false
    }

    fn comparison(&mut self) -> Result<Comparison> {
        let Some(op) = self.numeric_op() else {
            return self.unexpected(COMPARISON);
        };
        self.ws()?;
        if self.peek() == Some(b'#') {
            return Ok(Comparison::Number {
                op,
                value: self.number()?,
            });
        }
        let equal = match op {
            NumericOp::Eq => true,
            NumericOp::Ne => false,
            _ => return self.unexpected(&["`#` and a number"]),
        };
        if self.strings_ahead() {
            return Ok(Comparison::String {
                equal,
                terms: self.set_of(Self::search_term)?,
            });
        }
        if let Some(value) = self.boolean() {
            return Ok(Comparison::Boolean { equal, value });
        }
        Ok(Comparison::Concept {
            equal,
            value: self.sub_expr()?,
        })
    }

    /// `true` or `false`, if that is the word at the cursor (and not the
    /// scheme of an alternate identifier).
    fn boolean(&mut self) -> Option<bool> {
        let word = self.word();
        let value = ["false", "true"]
            .iter()
            .position(|b| b.eq_ignore_ascii_case(word))?
            == 1;
        if self.b.get(self.pos + word.len()) == Some(&b'#') {
            return None;
        }
        self.pos += word.len();
        Some(value)
    }

    /// `#` and a decimal: `["-"/"+"] (integer ["." 1*digit])`.
    fn number(&mut self) -> Result<Number> {
        self.pos += 1;
        let start = self.pos;
        let sign = usize::from(matches!(self.peek(), Some(b'-' | b'+')));
        let int = self.word_at(start + sign, |c| c.is_ascii_digit());
        let mut end = start + sign + int.len();
        let frac = if self.b.get(end) == Some(&b'.') {
            let frac = self.word_at(end + 1, |c| c.is_ascii_digit());
            end += 1 + frac.len();
            Some(frac)
        } else {
            None
        };
        let text = self.slice(start, end);
        if int.is_empty() && frac.is_none() {
            return self.unexpected(&["a number"]);
        }
        let value = text.parse::<f64>().ok().filter(|v| v.is_finite());
        let valid = !int.is_empty() && (int == "0" || !int.starts_with('0')) && frac != Some("");
        match value {
            Some(value) if valid => {
                self.pos = end;
                Ok(Number {
                    text: text.to_string(),
                    value,
                })
            }
            _ => self.fail(ParseErrorKind::InvalidNumber(text.to_string())),
        }
    }

    /// A `"…"` string, its contents raw (escapes kept).
    fn quoted(&mut self) -> Result<&'a str> {
        let start = self.pos;
        let mut i = start + 1;
        loop {
            match self.b.get(i) {
                None => return self.fail(ParseErrorKind::Unterminated("string")),
                Some(b'"') => break,
                Some(b'\\') => i += 2,
                Some(_) => i += 1,
            }
        }
        self.pos = i + 1;
        Ok(self.slice(start + 1, i))
    }

    // ----- filters --------------------------------------------------------

    fn filter_block(&mut self) -> Result<Block> {
        let start = self.pos;
        self.pos += 2;
        self.ws()?;
        if self.eat("+") {
            self.ws()?;
            let history = self.history()?;
            self.ws()?;
            self.expect("}}", "`}}`")?;
            return Ok(Block::History(history));
        }
        let marker = self.word();
        let kind = match marker {
            "d" | "D" | "c" | "C" | "m" | "M" => {
                self.pos += 1;
                self.ws()?;
                marker.to_ascii_uppercase()
            }
            _ => "D".to_string(),
        };
        Ok(match kind.as_str() {
            "M" => {
                let filters = self.filter_list(Self::member_filter)?;
                Block::Member(MemberFilterSet {
                    filters,
                    span: Span::new(start, self.pos),
                })
            }
            "C" => {
                let filters = self.filter_list(Self::concept_filter)?;
                Block::Filter(Filter::Concept(filters, Span::new(start, self.pos)))
            }
            _ => {
                let filters = self.filter_list(Self::description_filter)?;
                Block::Filter(Filter::Description(filters, Span::new(start, self.pos)))
            }
        })
    }

    fn filter_list<T>(&mut self, one: fn(&mut Self) -> Result<T>) -> Result<Vec<T>> {
        let mut filters = vec![one(self)?];
        loop {
            self.ws()?;
            if !self.eat(",") {
                break;
            }
            self.ws()?;
            filters.push(one(self)?);
        }
        if !self.eat("}}") {
            return self.unexpected(&["`,`", "`}}`"]);
        }
        Ok(filters)
    }

    fn history(&mut self) -> Result<History> {
        if !self.keyword("history") {
            return self.unexpected(&["`HISTORY`"]);
        }
        if matches!(self.peek(), Some(b'-' | b'_')) {
            self.pos += 1;
            let profile = if self.keyword("min") {
                History::Min
            } else if self.keyword("mod") {
                History::Mod
            } else if self.keyword("max") {
                History::Max
            } else {
                return self.unexpected(&["`MIN`", "`MOD`", "`MAX`"]);
            };
            return Ok(profile);
        }
        if self.after_ws(|p| Ok(p.eat("(").then_some(())))?.is_none() {
            return Ok(History::Default);
        }
        self.ws()?;
        self.enter()?;
        let expr = self.expression()?;
        self.depth -= 1;
        self.ws()?;
        self.expect(")", "`)`")?;
        Ok(History::Subset(Box::new(expr)))
    }

    /// The filter keyword at the cursor, lower-cased, if it is one of
    /// `known`; consumed with the blanks after it.
    fn filter_keyword(&mut self, known: &[&'static str]) -> Result<Option<&'static str>> {
        let word = self.word();
        if word.is_empty() {
            return self.unexpected(&["a filter"]);
        }
        let Some(&keyword) = known.iter().find(|k| k.eq_ignore_ascii_case(word)) else {
            return Ok(None);
        };
        self.pos += word.len();
        self.ws()?;
        Ok(Some(keyword))
    }

    fn unknown_filter<T>(&self) -> Result<T> {
        self.fail(ParseErrorKind::UnknownFilter(self.word().to_string()))
    }

    fn bool_op(&mut self) -> Result<bool> {
        let equal = if self.eat("!=") || self.not_equal_long() {
            false
        } else if self.eat("=") {
            true
        } else {
            return self.unexpected(&["`=`", "`!=`"]);
        };
        self.ws()?;
        Ok(equal)
    }

    fn description_filter(&mut self) -> Result<DescriptionFilter> {
        let start = self.pos;
        let Some(keyword) = self.filter_keyword(DESCRIPTION_FILTERS)? else {
            return self.unknown_filter();
        };
        if keyword == "effectivetime" {
            return Ok(DescriptionFilter::EffectiveTime(self.time_filter()?));
        }
        let equal = self.bool_op()?;
        Ok(match keyword {
            "term" => DescriptionFilter::Term {
                equal,
                terms: self.set_of(Self::search_term)?,
            },
            "language" => DescriptionFilter::Language {
                equal,
                codes: self.set_of(Self::language_code)?,
            },
            "typeid" => DescriptionFilter::TypeId {
                equal,
                types: self.concept_set()?,
            },
            "type" => DescriptionFilter::TypeToken {
                equal,
                tokens: self.set_of(Self::description_type)?,
            },
            "dialectid" => DescriptionFilter::DialectId {
                equal,
                dialects: self.dialect_ids()?,
            },
            "dialect" => {
                let mut dialects = self.set_of(|p| {
                    let alias = p.word_at(p.pos, |c| c.is_ascii_alphanumeric() || c == b'-');
                    if !alias.starts_with(|c: char| c.is_ascii_alphabetic()) {
                        return p.unexpected(&["a dialect alias"]);
                    }
                    p.pos += alias.len();
                    Ok((alias.to_string(), p.acceptability_after()?))
                })?;
                let shared = self.acceptability_after()?;
                for (_, acceptability) in &mut dialects {
                    if acceptability.is_none() {
                        acceptability.clone_from(&shared);
                    }
                }
                DescriptionFilter::Dialect { equal, dialects }
            }
            "moduleid" => DescriptionFilter::Module(ModuleFilter {
                equal,
                modules: self.concept_set()?,
            }),
            "active" => DescriptionFilter::Active(self.active(equal)?, Span::new(start, self.pos)),
            _ => DescriptionFilter::Id {
                equal,
                ids: self.set_of(Self::sctid)?,
            },
        })
    }

    /// One value, or several in brackets separated by blanks.
    fn set_of<T>(&mut self, mut one: impl FnMut(&mut Self) -> Result<T>) -> Result<Vec<T>> {
        if !self.eat("(") {
            return Ok(vec![one(self)?]);
        }
        self.ws()?;
        let mut items = vec![one(self)?];
        loop {
            self.ws()?;
            if self.eat(")") {
                return Ok(items);
            }
            items.push(one(self)?);
        }
    }

    fn typed_term_ahead(&self) -> bool {
        let word = self.word();
        ["match", "wild"]
            .iter()
            .any(|k| k.eq_ignore_ascii_case(word))
            && self
                .blank_end(self.pos + word.len())
                .is_ok_and(|i| self.b.get(i) == Some(&b':'))
    }

    fn search_term(&mut self) -> Result<SearchTerm> {
        let typed = self.typed_term_ahead();
        let wild = typed && self.word().eq_ignore_ascii_case("wild");
        if typed {
            self.pos += self.word().len();
            self.ws()?;
            self.pos += 1;
            self.ws()?;
        }
        if self.peek() != Some(b'"') {
            return self.unexpected(&["a quoted search term"]);
        }
        let start = self.pos;
        let raw = self.quoted()?;
        let term = if wild {
            SearchTerm::Wild(raw.to_string())
        } else {
            SearchTerm::Match {
                text: unescape(raw).trim().to_string(),
                explicit: typed,
            }
        };
        match &term {
            SearchTerm::Wild(t) | SearchTerm::Match { text: t, .. } if t.is_empty() => {
                self.fail_at(start, ParseErrorKind::Empty("search term"))
            }
            _ => Ok(term),
        }
    }

    fn language_code(&mut self) -> Result<String> {
        let code = self.word();
        if code.len() != 2 || !code.bytes().all(|c| c.is_ascii_alphabetic()) {
            return self.unexpected(&["a two-letter language code"]);
        }
        self.pos += 2;
        Ok(code.to_string())
    }

    /// `fsn`, `syn`, `def`, or their long names `fullySpecifiedName`,
    /// `synonym`, `definition`.
    fn description_type(&mut self) -> Result<DescriptionType> {
        let types = [
            ("fsn", DescriptionType::Fsn),
            ("fullySpecifiedName", DescriptionType::Fsn),
            ("syn", DescriptionType::Synonym),
            ("synonym", DescriptionType::Synonym),
            ("def", DescriptionType::Definition),
            ("definition", DescriptionType::Definition),
        ];
        match types.iter().find(|(k, _)| self.keyword(k)) {
            Some(&(_, t)) => Ok(t),
            None => self.unexpected(&["`fsn`", "`syn`", "`def`"]),
        }
    }

    /// A set of two or more concept references, or a sub-expression.
    fn concept_set(&mut self) -> Result<ConceptSet> {
        let save = self.pos;
        if self.eat("(") {
            let mut refs = Vec::new();
            while self.ws().is_ok() && self.peek().is_some_and(|c| c.is_ascii_digit()) {
                match self.concept_ref() {
                    Ok(r) => refs.push(r),
                    Err(_) => break,
                }
            }
            if refs.len() >= 2 && self.eat(")") {
                return Ok(ConceptSet::Set(refs));
            }
            self.pos = save;
        }
        Ok(ConceptSet::Sub(Box::new(self.sub_expr()?)))
    }

    /// `dialectId = X (prefer)` or `dialectId = (X (prefer) Y) (accept)`;
    /// an acceptability after a set applies to the members without one.
    /// Each member of a set becomes a one-reference [`ConceptSet::Set`].
    fn dialect_ids(&mut self) -> Result<Vec<(ConceptSet, Option<Vec<Acceptability>>)>> {
        let save = self.pos;
        let mut dialects = Vec::new();
        if self.eat("(") {
            let set = (|| -> Result<Vec<_>> {
                let mut items = Vec::new();
                loop {
                    self.ws()?;
                    if self.eat(")") && !items.is_empty() {
                        return Ok(items);
                    }
                    let r = self.concept_ref()?;
                    items.push((ConceptSet::Set(vec![r]), self.acceptability_after()?));
                }
            })();
            // `(X)` alone is a nested expression, not a set.
            match set {
                Ok(items) if items.len() > 1 || items[0].1.is_some() => dialects = items,
                _ => self.pos = save,
            }
        }
        if dialects.is_empty() {
            let sub = self.sub_expr()?;
            dialects.push((ConceptSet::Sub(Box::new(sub)), None));
        }
        let shared = self.acceptability_after()?;
        for (_, acceptability) in &mut dialects {
            if acceptability.is_none() {
                acceptability.clone_from(&shared);
            }
        }
        Ok(dialects)
    }

    /// An acceptability set after blanks, if there.
    fn acceptability_after(&mut self) -> Result<Option<Vec<Acceptability>>> {
        if self
            .after_ws(|p| Ok((p.peek() == Some(b'(')).then_some(())))?
            .is_none()
        {
            return Ok(None);
        }
        let set = self.set_of(|p| {
            if p.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Ok(match p.concept_ref()?.id {
                    ACCEPTABLE => Acceptability::Acceptable,
                    PREFERRED => Acceptability::Preferred,
                    id => Acceptability::Id(id),
                });
            }
            if p.keyword("accept") || p.keyword("acceptable") {
                Ok(Acceptability::Acceptable)
            } else if p.keyword("prefer") || p.keyword("preferred") {
                Ok(Acceptability::Preferred)
            } else {
                p.unexpected(&["`accept`", "`prefer`", "a concept id"])
            }
        })?;
        Ok(Some(set))
    }

    fn active(&mut self, equal: bool) -> Result<Activity> {
        if self.eat("*") {
            return Ok(if equal {
                Activity::Either
            } else {
                Activity::Neither
            });
        }
        let word = self.word();
        let value = if word == "1" || word.eq_ignore_ascii_case("true") {
            true
        } else if word == "0" || word.eq_ignore_ascii_case("false") {
            false
        } else {
            return self.unexpected(&["`true`", "`false`", "`1`", "`0`", "`*`"]);
        };
        self.pos += word.len();
        Ok(if value == equal {
            Activity::Active
        } else {
            Activity::Inactive
        })
    }

    /// `op "YYYYMMDD"` or `op ("YYYYMMDD" …)`.
    fn time_filter(&mut self) -> Result<TimeFilter> {
        let Some(op) = self.numeric_op() else {
            return self.unexpected(COMPARISON);
        };
        self.ws()?;
        Ok(TimeFilter {
            op,
            times: self.set_of(Self::date)?,
        })
    }

    fn date(&mut self) -> Result<u32> {
        let start = self.pos;
        if self.peek() != Some(b'"') {
            return self.unexpected(&["a quoted date"]);
        }
        let raw = self.quoted()?;
        // `""`: no effective time (an unpublished component).
        if raw.is_empty() {
            return Ok(0);
        }
        let date = Some(raw)
            .filter(|d| d.len() == 8 && d.bytes().all(|c| c.is_ascii_digit()))
            .and_then(|d| d.parse::<u32>().ok())
            .filter(|&d| {
                let (year, month, day) = (d / 10000, d / 100 % 100, d % 100);
                year >= 1000
                    && (1..=12).contains(&month)
                    && (1..=days_in_month(year, month)).contains(&day)
            });
        match date {
            Some(date) => Ok(date),
            None => self.fail_at(start, ParseErrorKind::InvalidDate(raw.to_string())),
        }
    }

    fn concept_filter(&mut self) -> Result<ConceptFilter> {
        let start = self.pos;
        let Some(keyword) = self.filter_keyword(CONCEPT_FILTERS)? else {
            return self.unknown_filter();
        };
        if keyword == "effectivetime" {
            return Ok(ConceptFilter::EffectiveTime(self.time_filter()?));
        }
        let equal = self.bool_op()?;
        Ok(match keyword {
            "definitionstatusid" => ConceptFilter::DefinitionStatusId {
                equal,
                ids: self.concept_set()?,
            },
            "definitionstatus" => {
                let defined = self.set_of(|p| {
                    if p.keyword("primitive") {
                        Ok(false)
                    } else if p.keyword("defined") {
                        Ok(true)
                    } else {
                        p.unexpected(&["`primitive`", "`defined`"])
                    }
                })?;
                ConceptFilter::DefinitionStatus { equal, defined }
            }
            "moduleid" => ConceptFilter::Module(ModuleFilter {
                equal,
                modules: self.concept_set()?,
            }),
            _ => ConceptFilter::Active(self.active(equal)?, Span::new(start, self.pos)),
        })
    }

    fn member_filter(&mut self) -> Result<MemberFilter> {
        let start = self.pos;
        match self.filter_keyword(&["moduleid", "effectivetime", "active"])? {
            Some("moduleid") => {
                let equal = self.bool_op()?;
                return Ok(MemberFilter::Module(ModuleFilter {
                    equal,
                    modules: self.concept_set()?,
                }));
            }
            Some("effectivetime") => return Ok(MemberFilter::EffectiveTime(self.time_filter()?)),
            Some(_) => {
                let equal = self.bool_op()?;
                return Ok(MemberFilter::Active(
                    self.active(equal)?,
                    Span::new(start, self.pos),
                ));
            }
            None => {}
        }
        let name = self.word_at(self.pos, |c| c.is_ascii_alphabetic());
        if name.is_empty() || name.len() != self.word().len() {
            return self.unexpected(&["a field name"]);
        }
        self.pos += name.len();
        self.ws()?;
        let Some(op) = self.numeric_op() else {
            return self.unexpected(COMPARISON);
        };
        self.ws()?;
        let comparison = if self.peek() == Some(b'#') {
            FieldComparison::Number {
                op,
                value: self.number()?,
            }
        } else if !matches!(op, NumericOp::Eq | NumericOp::Ne) {
            if !matches!(self.peek(), Some(b'"' | b'(')) {
                return self.unexpected(&["`#` and a number", "a quoted date"]);
            }
            FieldComparison::Time(TimeFilter {
                op,
                times: self.set_of(Self::date)?,
            })
        } else {
            let equal = op == NumericOp::Eq;
            if self.strings_ahead() {
                FieldComparison::String {
                    equal,
                    terms: self.set_of(Self::search_term)?,
                }
            } else if let Some(value) = self.boolean() {
                FieldComparison::Boolean { equal, value }
            } else {
                FieldComparison::Concept {
                    equal,
                    value: self.sub_expr()?,
                }
            }
        };
        Ok(MemberFilter::Field {
            name: name.to_string(),
            comparison,
        })
    }

    /// Whether search terms (rather than an expression) start here: `"`,
    /// `match:`, `wild:`, or `(` followed by one of them.
    fn strings_ahead(&self) -> bool {
        let mut p = *self;
        if p.eat("(") && p.ws().is_err() {
            return false;
        }
        p.peek() == Some(b'"') || p.typed_term_ahead()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unescape_keeps_unknown_escapes() {
        assert_eq!(unescape(r#"a\"b\\c\d"#), r#"a"b\c\d"#);
    }

    #[test]
    fn nesting_is_bounded() {
        // Run where the stack is as small as a tokio worker's.
        let deep = |open: &str, close: &str, n| {
            let (open, close) = (open.repeat(n), close.repeat(n));
            move || parse(&format!("{open}<< 73211009{close}")).map_err(|e| e.kind)
        };
        let run = |f: Box<dyn FnOnce() -> std::result::Result<Expr, ParseErrorKind> + Send>| {
            std::thread::Builder::new()
                .stack_size(2 << 20)
                .spawn(f)
                .unwrap()
                .join()
                .unwrap()
        };
        assert!(run(Box::new(deep("(", ")", 60))).is_ok());
        for (open, close) in [("(", ")"), ("< 1 : 2 = (", ")"), ("(", "")] {
            let (open, close) = (
                open.replace('1', "404684003").replace('2', "363698007"),
                close,
            );
            assert_eq!(
                run(Box::new(deep(&open, close, 5000))).err(),
                Some(ParseErrorKind::TooDeep)
            );
        }
        let refinement = "< 404684003 : ".to_string() + &"(".repeat(5000) + "363698007 = *";
        let filters = "< 404684003".to_string() + &" {{ C moduleId = << 404684003".repeat(5000);
        for text in [refinement, filters] {
            let kind = run(Box::new(move || parse(&text).map_err(|e| e.kind))).err();
            assert_eq!(kind, Some(ParseErrorKind::TooDeep));
        }
    }

    #[test]
    fn leap_years() {
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2024, 2), 29);
    }

    #[test]
    fn brackets_are_matched_past_terms_and_strings() {
        let text = r#"(1 |a ) b| "x)" /* ) */) = 2"#;
        let p = Parser {
            text,
            b: text.as_bytes(),
            pos: 0,
            depth: 0,
            stack_base: 0,
        };
        assert_eq!(p.skip_brackets(0), text.find(" = "));
        assert!(p.paren_is_attribute_name());
    }
}
