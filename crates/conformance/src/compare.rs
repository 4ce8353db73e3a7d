//! The comparison of an expected response with an actual one, as the
//! official runner's `CompareUtilities.checkJsonSrcIsSame` does it.
//!
//! This module reproduces the official rules, quirks included, because a
//! test that passes here must pass there and the other way round:
//!
//! * objects: every actual property must be expected (unless pattern mode),
//!   every expected property must be present unless `$optional$`, listed in
//!   `$optional-properties$` (`*` for all), or an array whose object items
//!   all carry `$optional$`;
//! * arrays: ordered and greedy; optional items (`$optional$` of `true`,
//!   `"m"`, `"!m"`, `"version:N"`, `"warning:…"`) keep their position;
//!   `$count-arrays$` compares lengths only; pattern mode finds each
//!   expected item somewhere after the previous match;
//! * strings: `<div` on both sides skips the comparison; `$…$` templates;
//!   `$version$` substituted inside plain strings; and then the lenient
//!   Base64 fallback (see [`lenient_base64_equal`]), which this module
//!   records every time it is what made two strings equal, so that tests
//!   passing only because of it can be flagged, and which
//!   [`Comparator::strict_strings`] turns off;
//! * numbers by text, booleans by value, null only equals null.
//!
//! An unknown template is an error, as in Java (where it is an `Error`
//! that crashes the test).

use std::collections::BTreeSet;
use std::fmt;

use crate::json::{Json, Object};

/// How to compare, and the variables the templates read.
#[derive(Clone, Debug, Default)]
pub struct Comparator {
    /// The modes that are on (`general`, `snomed`, `tx.fhir.org`, …): they
    /// decide `"$optional$": "m"` and `"!m"`.
    pub modes: BTreeSet<String>,
    /// The FHIR version of the client: `4.0.1` or `5.0.0`. Feeds
    /// `$version$` and `"$optional$": "version:N"`. `None` accepts any
    /// version, as Java does when the variable is unset.
    pub version: Option<String>,
    /// The externals entry for this response file (`{"1": "text", …}`).
    pub externals: Option<Object>,
    /// Turn off the Base64 fallback.
    pub strict_strings: bool,
    /// Pattern mode (metadata and term-caps tests).
    pub pattern: bool,
}

/// The first difference found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Difference {
    /// A JSON path in the runner's notation: `.expansion.contains[2].code`.
    /// Empty for the root.
    pub path: String,
    /// The runner's message, e.g. `string property values differ at …`.
    pub message: String,
    pub expected: Option<String>,
    pub actual: Option<String>,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let (Some(e), Some(a)) = (&self.expected, &self.actual) {
            write!(f, ": expected {e}, actual {a}")?;
        }
        Ok(())
    }
}

/// Two strings judged equal only by the Base64 fallback.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LenientMatch {
    pub path: String,
    pub expected: String,
    pub actual: String,
}

/// What a comparison found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Comparison {
    /// `None` when the two are the same under the rules.
    pub difference: Option<Difference>,
    /// Texts of `"warning:…"` optional items that were absent.
    pub warnings: Vec<String>,
    /// Lenient string matches that the verdict relied on.
    pub lenient: Vec<LenientMatch>,
}

impl Comparison {
    pub fn is_same(&self) -> bool {
        self.difference.is_none()
    }
}

/// A template the runner does not know (Java throws an `Error`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemplateError(pub String);

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Unhandled template: {}", self.0)
    }
}

impl std::error::Error for TemplateError {}

type Step = Result<Option<Difference>, TemplateError>;

struct Run<'a> {
    c: &'a Comparator,
    warnings: Vec<String>,
    lenient: Vec<LenientMatch>,
}

impl Comparator {
    /// A comparator for these modes and FHIR version, lenient strings.
    pub fn new<I, S>(modes: I, version: Option<&str>) -> Comparator
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Comparator {
            modes: modes.into_iter().map(Into::into).collect(),
            version: version.map(str::to_string),
            ..Comparator::default()
        }
    }

    /// Compares expected with actual. Both are usually objects (resources).
    pub fn compare(&self, expected: &Json, actual: &Json) -> Result<Comparison, TemplateError> {
        let mut run = Run {
            c: self,
            warnings: Vec::new(),
            lenient: Vec::new(),
        };
        let difference = match (expected, actual) {
            (Json::Object(e), Json::Object(a)) => run.objects("", e, a)?,
            _ => run.nodes("", expected, actual, false)?,
        };
        Ok(Comparison {
            difference,
            warnings: run.warnings,
            lenient: run.lenient,
        })
    }

    /// Whether an expected array item is optional under the modes and
    /// version (`isOptional` in Java).
    pub fn is_optional_item(&self, item: &Json) -> bool {
        match item.get("$optional$") {
            Some(Json::Bool(b)) => *b,
            Some(Json::String(token)) => self.passes_optional_filter(token),
            _ => false,
        }
    }

    fn passes_optional_filter(&self, token: &str) -> bool {
        if let Some(m) = token.strip_prefix('!') {
            !self.modes.contains(m)
        } else if token.starts_with("warning:") {
            true
        } else if let Some(v) = token.strip_prefix("version:") {
            self.version.as_deref().is_some_and(|x| x.starts_with(v))
        } else {
            self.modes.contains(token)
        }
    }

    /// Whether `actual` matches the expected string `expected` (a template
    /// or a plain string) without the Base64 fallback.
    pub fn string_matches(&self, expected: &str, actual: &str) -> Result<bool, TemplateError> {
        if expected.starts_with('$') && expected.ends_with('$') {
            return self.template_matches(expected, actual);
        }
        Ok(match &self.version {
            Some(v) if expected.contains("$version$") => actual == expected.replace("$version$", v),
            _ => actual == expected,
        })
    }

    fn template_matches(&self, t: &str, actual: &str) -> Result<bool, TemplateError> {
        let inner = &t[1..t.len().saturating_sub(1).max(1)];
        if let Some(list) = t.strip_prefix("$choice:").and_then(|s| s.strip_suffix('$')) {
            return Ok(java_split(list, '|').iter().any(|c| c == actual));
        }
        if let Some(list) = t
            .strip_prefix("$fragments:")
            .and_then(|s| s.strip_suffix('$'))
        {
            return Ok(contains_all(actual, &java_split(list, '|')));
        }
        if t.starts_with("$external:") {
            let cmd = java_split(inner, ':');
            if let Some(ext) = &self.externals {
                let key = cmd.get(1).map(String::as_str).unwrap_or("");
                return Ok(ext.get(key).and_then(Json::as_str) == Some(actual));
            }
            if cmd.len() <= 2 {
                return Ok(true);
            }
            return Ok(contains_all(actual, &java_split(&cmd[2], '|')));
        }
        Ok(match t {
            "$$" => true,
            "$instant$" => is_instant(actual),
            "$date$" => is_date(actual),
            "$uuid$" => is_uuid(actual),
            "$string$" => actual == java_trim(actual),
            "$id$" => is_id(actual),
            "$url$" => is_url(actual),
            "$token$" => is_token(actual),
            "$semver$" => is_semver(actual),
            "$version$" => self.version.as_deref().is_none_or(|v| v == actual),
            _ => return Err(TemplateError(t.to_string())),
        })
    }
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Object(_) => "object",
        Json::Array(_) => "array",
        _ => "primitive",
    }
}

fn diff(
    path: &str,
    message: String,
    expected: impl Into<String>,
    actual: impl Into<String>,
) -> Option<Difference> {
    Some(Difference {
        path: path.to_string(),
        message,
        expected: Some(expected.into()),
        actual: Some(actual.into()),
    })
}

fn plain(path: &str, message: String) -> Option<Difference> {
    Some(Difference {
        path: path.to_string(),
        message,
        expected: None,
        actual: None,
    })
}

/// The names an expected object lists under `key` (`$optional-properties$`
/// or `$count-arrays$`).
fn listed(o: &Object, key: &str) -> Vec<String> {
    match o.get(key) {
        Some(Json::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        Some(Json::String(s)) => vec![s.clone()],
        _ => Vec::new(),
    }
}

impl Run<'_> {
    fn objects(&mut self, path: &str, e: &Object, a: &Object) -> Step {
        let mut optionals = Vec::new();
        if e.contains_key("$optional-properties$") {
            optionals.push("$optional-properties$".to_string());
            optionals.push("$count-arrays$".to_string());
            optionals.extend(listed(e, "$optional-properties$"));
        }
        let count_only = listed(e, "$count-arrays$");
        for (n, av) in a.iter() {
            if n == "fhir_comments" {
                continue;
            }
            match e.get(n) {
                Some(ev) => {
                    let p = format!("{path}.{n}");
                    if let Some(d) = self.nodes(&p, ev, av, count_only.iter().any(|c| c == n))? {
                        return Ok(Some(d));
                    }
                }
                None if !self.c.pattern => {
                    return Ok(diff(
                        path,
                        format!("properties differ at {path}: unexpected property {n}"),
                        "(absent)",
                        av.to_compact(),
                    ));
                }
                None => {}
            }
        }
        for (n, ev) in e.iter() {
            let optional = n == "$optional$" || optionals.iter().any(|o| o == "*" || o == n);
            if n == "fhir_comments" || optional {
                continue;
            }
            if !a.contains_key(n) && !all_optional(ev) {
                return Ok(diff(
                    path,
                    format!("properties differ at {path}: missing property {n}"),
                    ev.to_compact(),
                    "(absent)",
                ));
            }
        }
        Ok(None)
    }

    fn nodes(&mut self, path: &str, e: &Json, a: &Json, count_only: bool) -> Step {
        if !(e.is_primitive() && a.is_primitive()) && kind(e) != kind(a) {
            return Ok(diff(
                path,
                format!("properties differ at {path}"),
                kind(e),
                kind(a),
            ));
        }
        match (e, a) {
            (Json::Object(eo), Json::Object(ao)) => self.objects(path, eo, ao),
            (Json::Array(ea), Json::Array(aa)) => self.arrays(path, ea, aa, count_only),
            (Json::Bool(x), Json::Bool(y)) => Ok(if x == y {
                None
            } else {
                diff(
                    path,
                    format!("boolean property values differ at {path}"),
                    x.to_string(),
                    y.to_string(),
                )
            }),
            (Json::String(x), Json::String(y)) => self.strings(path, x, y),
            (Json::Number(x), Json::Number(y)) => Ok(if x == y {
                None
            } else {
                diff(
                    path,
                    format!("number property values differ at {path}"),
                    x.clone(),
                    y.clone(),
                )
            }),
            (Json::Null, Json::Null) => Ok(None),
            (Json::Null, _) => Ok(diff(
                path,
                format!("null properties differ at {path}"),
                "null",
                a.to_compact(),
            )),
            _ => Ok(diff(
                path,
                format!("property types differ at {path}"),
                e.to_compact(),
                a.to_compact(),
            )),
        }
    }

    fn strings(&mut self, path: &str, e: &str, a: &str) -> Step {
        if a.contains("<div") && e.contains("<div") {
            return Ok(None);
        }
        if self.c.string_matches(e, a)? {
            return Ok(None);
        }
        if !self.c.strict_strings && lenient_base64_equal(e, a) {
            self.lenient.push(LenientMatch {
                path: path.to_string(),
                expected: e.to_string(),
                actual: a.to_string(),
            });
            return Ok(None);
        }
        Ok(diff(
            path,
            format!("string property values differ at {path}"),
            present_expected(e, self.c.version.as_deref()),
            format!("\"{a}\""),
        ))
    }

    /// Compares speculatively: warnings and lenient matches of a failed
    /// comparison are dropped, since the verdict does not rest on them.
    fn attempt(&mut self, path: &str, e: &Json, a: &Json) -> Step {
        let (w, l) = (self.warnings.len(), self.lenient.len());
        let r = self.nodes(path, e, a, false)?;
        if r.is_some() {
            self.warnings.truncate(w);
            self.lenient.truncate(l);
        }
        Ok(r)
    }

    fn arrays(&mut self, path: &str, e: &[Json], a: &[Json], count_only: bool) -> Step {
        let (es, as_) = (e.len(), a.len());
        if count_only {
            return Ok(if es == as_ {
                None
            } else {
                diff(
                    path,
                    format!("array item count differs at {path}"),
                    es.to_string(),
                    as_.to_string(),
                )
            });
        }
        if self.c.pattern {
            let mut c = 0;
            for (i, ei) in e.iter().enumerate() {
                let p = format!("{path}[{i}]");
                let mut found = false;
                while !found && c < as_ {
                    found = self.attempt(&p, ei, &a[c])?.is_none();
                    c += 1;
                }
                if !found {
                    return Ok(plain(
                        &p,
                        format!("The expected item at {path} at index {i} was not found"),
                    ));
                }
            }
            return Ok(None);
        }
        let oc = e.iter().filter(|x| self.c.is_optional_item(x)).count();
        let min = es - oc;
        if as_ > es || as_ < min {
            return Ok(diff(
                path,
                format!("array item count differs at {path}"),
                es.to_string(),
                as_.to_string(),
            ));
        }
        let mut c = 0;
        for (i, ei) in e.iter().enumerate() {
            let optional = self.c.is_optional_item(ei);
            if c >= as_ {
                if i >= es - oc && optional {
                    if let Some(Json::String(t)) = ei.get("$optional$")
                        && let Some(w) = t.strip_prefix("warning:")
                    {
                        self.warnings.push(w.to_string());
                    }
                    return Ok(None);
                }
                return Ok(plain(
                    &format!("{path}[{i}]"),
                    format!(
                        "One or more array items did not match at {path} starting at index {i}"
                    ),
                ));
            }
            let p = format!("{path}[{i}]");
            match self.attempt(&p, ei, &a[c])? {
                None => c += 1,
                Some(d) if !optional => return Ok(Some(d)),
                Some(_) => {}
            }
        }
        if c < as_ {
            return Ok(diff(
                &format!("{path}[{c}]"),
                format!("Unexpected Node found in array at '{path}' at index {c}"),
                "(no item)",
                a[c].to_compact(),
            ));
        }
        Ok(None)
    }
}

/// An absent property is not missing when the expected value is an array
/// whose object items all carry `$optional$` (empty arrays and arrays of
/// primitives count as all optional).
fn all_optional(v: &Json) -> bool {
    match v {
        Json::Array(a) => a.iter().all(|x| match x {
            Json::Object(o) => o.contains_key("$optional$"),
            _ => true,
        }),
        _ => false,
    }
}

/// How the runner shows an expected string in a message.
fn present_expected(e: &str, version: Option<&str>) -> String {
    if !(e.len() >= 2 && e.starts_with('$') && e.ends_with('$')) {
        return format!("\"{e}\"");
    }
    if let Some(l) = e.strip_prefix("$choice:").and_then(|s| s.strip_suffix('$')) {
        return format!("one of {:?}", java_split(l, '|'));
    }
    if let Some(l) = e
        .strip_prefix("$fragments:")
        .and_then(|s| s.strip_suffix('$'))
    {
        return format!("contains all of {:?}", java_split(l, '|'));
    }
    match e {
        "$version$" => version.map_or("(any version)".into(), |v| format!("\"{v}\"")),
        _ => format!("{e} (template)"),
    }
}

/// Java's `String.split(regex)` for a one-character literal: trailing empty
/// strings are removed.
pub(crate) fn java_split(s: &str, sep: char) -> Vec<String> {
    let mut v: Vec<String> = s.split(sep).map(str::to_string).collect();
    while v.len() > 1 && v.last().is_some_and(String::is_empty) {
        v.pop();
    }
    if v.len() == 1 && v[0].is_empty() && !s.is_empty() {
        v.clear();
    }
    v
}

fn contains_all(actual: &str, fragments: &[String]) -> bool {
    let a = actual.to_lowercase();
    fragments.iter().all(|f| a.contains(&f.to_lowercase()))
}

/// Java's `String.trim()`: strips characters up to U+0020 at both ends.
fn java_trim(s: &str) -> &str {
    s.trim_matches(|c: char| c <= ' ')
}

fn all(s: &str, f: impl Fn(u8) -> bool) -> bool {
    s.bytes().all(f)
}

fn digits(s: &str, n: usize) -> bool {
    s.len() == n && all(s, |b| b.is_ascii_digit())
}

fn in_range(s: &str, lo: u32, hi: u32) -> bool {
    digits(s, 2) && s.parse::<u32>().is_ok_and(|v| (lo..=hi).contains(&v))
}

/// `YYYY-MM-DD` with the runner's ranges (year 0000 refused).
fn is_full_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && digits(&s[..4], 4)
        && &s[..4] != "0000"
        && b[4] == b'-'
        && in_range(&s[5..7], 1, 12)
        && b[7] == b'-'
        && in_range(&s[8..10], 1, 31)
}

/// `hh:mm:ss(.f{1,9})?(Z|±hh:mm)`, hours of the offset 00–13 or 14:00.
fn is_time_zoned(s: &str) -> bool {
    if s.len() < 9 {
        return false;
    }
    let b = s.as_bytes();
    if !(in_range(&s[0..2], 0, 23) && b[2] == b':' && in_range(&s[3..5], 0, 59) && b[5] == b':') {
        return false;
    }
    if !(in_range(&s[6..8], 0, 59) || &s[6..8] == "60") {
        return false;
    }
    let mut rest = &s[8..];
    if let Some(f) = rest.strip_prefix('.') {
        let n = f.bytes().take_while(u8::is_ascii_digit).count();
        if !(1..=9).contains(&n) {
            return false;
        }
        rest = &f[n..];
    }
    if rest == "Z" {
        return true;
    }
    let Some(off) = rest.strip_prefix('+').or_else(|| rest.strip_prefix('-')) else {
        return false;
    };
    off == "14:00"
        || (off.len() == 5
            && in_range(&off[0..2], 0, 13)
            && &off[2..3] == ":"
            && in_range(&off[3..5], 0, 59))
}

/// `$instant$`: a full date and time with seconds and a zone.
pub(crate) fn is_instant(s: &str) -> bool {
    s.len() > 11 && is_full_date(&s[..10]) && s.as_bytes()[10] == b'T' && is_time_zoned(&s[11..])
}

/// `$date$`: a full date, optionally with a zoned time.
pub(crate) fn is_date(s: &str) -> bool {
    is_full_date(s) || is_instant(s)
}

/// `$uuid$`: `urn:uuid:` and a lowercase 8-4-4-4-12 uuid.
pub(crate) fn is_uuid(s: &str) -> bool {
    let Some(u) = s.strip_prefix("urn:uuid:") else {
        return false;
    };
    let parts: Vec<&str> = u.split('-').collect();
    parts.len() == 5
        && parts.iter().zip([8, 4, 4, 4, 12]).all(|(p, n)| {
            p.len() == n && all(p, |b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        })
}

/// `$id$`: `[A-Za-z0-9\-\.]{1,64}`.
pub(crate) fn is_id(s: &str) -> bool {
    (1..=64).contains(&s.len()) && all(s, |b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
}

/// `$token$`: `[0-9a-zA-Z_][0-9a-zA-Z_\.\-]*`.
pub(crate) fn is_token(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && all(s, |c| {
            c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
        })
}

/// `$url$`: `(https?://|www\.)[-a-zA-Z0-9+&@#/%?=~_|!:.;]*[-a-zA-Z0-9+&@#/%=~_|]`.
pub(crate) fn is_url(s: &str) -> bool {
    let rest = ["http://", "https://", "www."]
        .iter()
        .find_map(|p| s.strip_prefix(p));
    let Some(rest) = rest else {
        return false;
    };
    let body = |b: u8| b.is_ascii_alphanumeric() || b"-+&@#/%?=~_|!:.;".contains(&b);
    let last = |b: u8| b.is_ascii_alphanumeric() || b"-+&@#/%=~_|".contains(&b);
    match rest.as_bytes().split_last() {
        Some((&l, init)) => last(l) && init.iter().all(|&b| body(b)),
        None => false,
    }
}

/// `$semver$`: the semver.org grammar.
pub(crate) fn is_semver(s: &str) -> bool {
    let numeric = |x: &str| {
        !x.is_empty() && all(x, |b| b.is_ascii_digit()) && (x == "0" || !x.starts_with('0'))
    };
    let ident = |x: &str| !x.is_empty() && all(x, |b| b.is_ascii_alphanumeric() || b == b'-');
    let (rest, build) = match s.split_once('+') {
        Some((r, b)) => (r, Some(b)),
        None => (s, None),
    };
    if let Some(b) = build
        && !b.split('.').all(ident)
    {
        return false;
    }
    let (core, pre) = match rest.split_once('-') {
        Some((c, p)) => (c, Some(p)),
        None => (rest, None),
    };
    let core: Vec<&str> = core.split('.').collect();
    if core.len() != 3 || !core.iter().all(|x| numeric(x)) {
        return false;
    }
    match pre {
        None => true,
        Some(p) => p
            .split('.')
            .all(|x| ident(x) && (numeric(x) || x.bytes().any(|b| !b.is_ascii_digit()))),
    }
}

/// Apache commons-codec's lenient `Base64.decodeBase64(String)`: skips every
/// byte outside the (standard and URL-safe) alphabet, stops at `=`, drops
/// a lone trailing sextet, and keeps the whole bytes of a 2- or 3-character
/// tail.
pub fn lenient_base64_decode(s: &str) -> Vec<u8> {
    let value = |b: u8| -> Option<u32> {
        Some(match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::new();
    let (mut acc, mut n) = (0u32, 0);
    for b in s.bytes() {
        if b == b'=' {
            break;
        }
        let Some(v) = value(b) else { continue };
        acc = (acc << 6) | v;
        n += 1;
        if n == 4 {
            out.extend_from_slice(&[(acc >> 16) as u8, (acc >> 8) as u8, acc as u8]);
            acc = 0;
            n = 0;
        }
    }
    match n {
        2 => out.push((acc >> 4) as u8),
        3 => out.extend_from_slice(&[(acc >> 10) as u8, (acc >> 2) as u8]),
        _ => {}
    }
    out
}

/// The official runner's last resort for two different strings: equal if
/// both decode, leniently, to the same non-empty bytes.
pub fn lenient_base64_equal(a: &str, b: &str) -> bool {
    let (x, y) = (lenient_base64_decode(a), lenient_base64_decode(b));
    !x.is_empty() && x == y
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Json {
        Json::parse(s).unwrap()
    }

    fn general() -> Comparator {
        Comparator::new(["general"], Some("5.0.0"))
    }

    fn same(c: &Comparator, e: &str, a: &str) -> bool {
        c.compare(&j(e), &j(a)).unwrap().is_same()
    }

    #[test]
    fn templates() {
        let c = general();
        let cases: &[(&str, &[&str], &[&str])] = &[
            ("$$", &["", "anything"], &[]),
            (
                "$id$",
                &["a-b.C9", &"x".repeat(64)],
                &["", "a_b", "a b", &"x".repeat(65)],
            ),
            (
                "$instant$",
                &[
                    "2024-02-29T23:59:60Z",
                    "2024-01-01T00:00:00.123456789+14:00",
                    "0001-01-01T00:00:00-13:59",
                ],
                &[
                    "2024-01-01",
                    "2024-01-01T00:00Z",
                    "2024-13-01T00:00:00Z",
                    "0000-01-01T00:00:00Z",
                    "2024-01-01T00:00:00",
                    "2024-01-01T00:00:00+14:01",
                    "2024-01-01T00:00:00.1234567890Z",
                ],
            ),
            (
                "$date$",
                &["2024-01-31", "2024-01-31T10:00:00+01:00"],
                &["2024-01", "2024-01-31T10:00", "2024-01-32"],
            ),
            (
                "$uuid$",
                &["urn:uuid:8acdbfdc-e9d2-11ed-a05b-0242ac120003"],
                &[
                    "8acdbfdc-e9d2-11ed-a05b-0242ac120003",
                    "urn:uuid:8ACDBFDC-e9d2-11ed-a05b-0242ac120003",
                    "urn:uuid:8acdbfdc-e9d2-11ed-a05b",
                ],
            ),
            ("$string$", &["a b", "x"], &[" a", "a\n", "\ta"]),
            (
                "$url$",
                &["http://a.org/x?y=1", "https://hl7.org/fhir/", "www.x.org"],
                &["ftp://a", "http://", "http://a.org.", "urn:x", "http://a b"],
            ),
            (
                "$token$",
                &["a", "_a.b-c", "9"],
                &["", "-a", ".a", "a b", "a/b"],
            ),
            (
                "$semver$",
                &["1.0.0", "0.1.2-alpha.1+build.5", "1.2.3-0a", "10.20.30-x-y"],
                &["1.0", "01.0.0", "1.0.0-01", "1.0.0-", "1.0.0+", "v1.0.0"],
            ),
            ("$version$", &["5.0.0"], &["4.0.1", "5.0"]),
            ("$choice:a|b c|d$", &["a", "b c", "d"], &["", "ab", "A"]),
            (
                "$fragments:Unknown|CODE1x$",
                &["unknown code 'code1X'"],
                &["Unknown code"],
            ),
            ("$external:1$", &["whatever"], &[]),
            (
                "$external:2:http://x.org|Value$",
                &["see HTTP value"],
                &["see value"],
            ),
        ];
        for (t, good, bad) in cases {
            for g in *good {
                assert!(c.string_matches(t, g).unwrap(), "{t} should accept {g:?}");
            }
            for b in *bad {
                assert!(!c.string_matches(t, b).unwrap(), "{t} should refuse {b:?}");
            }
        }
        assert!(c.string_matches("$nope$", "x").is_err());
        assert!(c.string_matches("$", "x").is_err());
        assert!(
            c.compare(&j(r#"{"a":"$nope$"}"#), &j(r#"{"a":"x"}"#))
                .is_err()
        );
        // Plain strings: exact, with $version$ substituted.
        assert!(
            c.string_matches(
                "http://hl7.org/fhir/x|$version$",
                "http://hl7.org/fhir/x|5.0.0"
            )
            .unwrap()
        );
        assert!(
            !c.string_matches(
                "http://hl7.org/fhir/x|$version$",
                "http://hl7.org/fhir/x|4.0.1"
            )
            .unwrap()
        );
        // No version variable: $version$ accepts anything.
        assert!(
            Comparator::default()
                .string_matches("$version$", "3.0.2")
                .unwrap()
        );
    }

    #[test]
    fn externals() {
        let mut c = general();
        c.externals = Some(j(r#"{"1": "Exact text"}"#).as_object().unwrap().clone());
        assert!(
            c.string_matches("$external:1:exact$", "Exact text")
                .unwrap()
        );
        assert!(
            !c.string_matches("$external:1:exact$", "exact text")
                .unwrap()
        );
        assert!(!c.string_matches("$external:2$", "anything").unwrap());
    }

    #[test]
    fn templates_only_match_strings() {
        let c = general();
        assert!(!same(&c, r#"{"a":"$$"}"#, r#"{"a":1}"#));
        assert!(!same(&c, r#"{"a":"$$"}"#, r#"{"a":true}"#));
        assert!(!same(&c, r#"{"a":"$$"}"#, r#"{"a":null}"#));
        assert!(!same(&c, r#"{"a":"$$"}"#, r#"{"a":{}}"#));
    }

    #[test]
    fn primitives() {
        let c = general();
        assert!(same(&c, r#"{"n":1.0}"#, r#"{"n":1.0}"#));
        assert!(!same(&c, r#"{"n":1.0}"#, r#"{"n":1}"#));
        assert!(!same(&c, r#"{"n":1}"#, r#"{"n":"1"}"#));
        assert!(same(&c, r#"{"b":false}"#, r#"{"b":false}"#));
        assert!(!same(&c, r#"{"b":false}"#, r#"{"b":true}"#));
        assert!(same(&c, r#"{"z":null}"#, r#"{"z":null}"#));
        assert!(!same(&c, r#"{"z":null}"#, r#"{"z":"x"}"#));
        assert!(!same(&c, r#"{"z":[]}"#, r#"{"z":{}}"#));
        assert!(same(
            &c,
            r#"{"d":"<div>a</div>"}"#,
            r#"{"d":"<div>b</div>"}"#
        ));
    }

    #[test]
    fn lenient_strings_and_strict_mode() {
        // The runner's Base64 fallback: spaces, punctuation and some last
        // characters do not count.
        for (a, b) in [
            ("code1", "code2"),
            ("code2a", "code2b"),
            ("Display 1", "Display1"),
            ("a-b", "a+b"),
        ] {
            assert!(lenient_base64_equal(a, b), "{a} {b}");
        }
        for (a, b) in [
            ("code1", "code1x"),
            ("abcd", "abce"),
            ("", ""),
            ("!!", "??"),
        ] {
            assert!(!lenient_base64_equal(a, b), "{a} {b}");
        }
        let mut c = general();
        let r = c
            .compare(&j(r#"{"code":"code1"}"#), &j(r#"{"code":"code2"}"#))
            .unwrap();
        assert!(r.is_same());
        assert_eq!(r.lenient.len(), 1);
        assert_eq!(r.lenient[0].path, ".code");
        c.strict_strings = true;
        let r = c
            .compare(&j(r#"{"code":"code1"}"#), &j(r#"{"code":"code2"}"#))
            .unwrap();
        let d = r.difference.unwrap();
        assert_eq!(d.path, ".code");
        assert_eq!(d.expected.as_deref(), Some("\"code1\""));
        assert_eq!(d.actual.as_deref(), Some("\"code2\""));
    }

    #[test]
    fn decoder_matches_commons_codec() {
        assert_eq!(lenient_base64_decode("TWFu"), b"Man");
        assert_eq!(lenient_base64_decode("TWE="), b"Ma");
        assert_eq!(lenient_base64_decode("TWE"), b"Ma");
        assert_eq!(lenient_base64_decode("TQ"), b"M");
        assert_eq!(lenient_base64_decode("T"), b"");
        assert_eq!(lenient_base64_decode("TW Fu\n"), b"Man");
        assert_eq!(lenient_base64_decode("TWFu=TWFu"), b"Man");
        assert_eq!(lenient_base64_decode("é"), b"");
    }

    #[test]
    fn objects_and_optional_properties() {
        let c = general();
        assert!(!same(&c, r#"{"a":"x"}"#, r#"{"a":"x","b":"y"}"#));
        assert!(!same(&c, r#"{"a":"x","b":"y"}"#, r#"{"a":"x"}"#));
        let e = r#"{"$optional-properties$":["b"],"a":"x","b":"y"}"#;
        assert!(same(&c, e, r#"{"a":"x"}"#));
        assert!(same(&c, e, r#"{"a":"x","b":"y"}"#));
        assert!(!same(&c, e, r#"{"a":"x","b":"zzzz"}"#));
        assert!(!same(&c, e, r#"{"a":"x","c":"y"}"#));
        assert!(same(
            &c,
            r#"{"$optional-properties$":["*"],"a":"x","b":"y"}"#,
            "{}"
        ));
        // An absent array of all-optional items is not missing.
        assert!(same(&c, r#"{"a":[{"$optional$":true,"x":1}]}"#, "{}"));
        assert!(same(&c, r#"{"a":[]}"#, "{}"));
        assert!(!same(&c, r#"{"a":[{"$optional$":true},{"x":1}]}"#, "{}"));
        // $count-arrays$ is optional when $optional-properties$ is present.
        assert!(same(
            &c,
            r#"{"$optional-properties$":[],"$count-arrays$":["a"],"a":[1,2]}"#,
            r#"{"a":[3,4]}"#
        ));
        assert!(!same(
            &c,
            r#"{"$count-arrays$":["a"],"a":[1,2]}"#,
            r#"{"a":[3]}"#
        ));
        let d = c
            .compare(&j(r#"{"a":{"b":"x"}}"#), &j(r#"{"a":{}}"#))
            .unwrap()
            .difference
            .unwrap();
        assert_eq!(d.message, "properties differ at .a: missing property b");
        let d = c
            .compare(&j(r#"{"a":{}}"#), &j(r#"{"a":{"b":1}}"#))
            .unwrap()
            .difference
            .unwrap();
        assert_eq!(d.message, "properties differ at .a: unexpected property b");
    }

    #[test]
    fn optional_array_items() {
        let c = general();
        let e = r#"{"a":[{"v":"1"},{"$optional$":true,"v":"2"},{"v":"3"}]}"#;
        assert!(same(&c, e, r#"{"a":[{"v":"1"},{"v":"2"},{"v":"3"}]}"#));
        assert!(same(&c, e, r#"{"a":[{"v":"1"},{"v":"3"}]}"#));
        // Optional items keep their position.
        assert!(!same(&c, e, r#"{"a":[{"v":"2"},{"v":"1"},{"v":"3"}]}"#));
        assert!(!same(&c, e, r#"{"a":[{"v":"1"}]}"#));
        assert!(!same(
            &c,
            e,
            r#"{"a":[{"v":"1"},{"v":"2"},{"v":"3"},{"v":"4"}]}"#
        ));
        let d = c
            .compare(&j(e), &j(r#"{"a":[{"v":"1"},{"v":"3"},{"v":"9"}]}"#))
            .unwrap()
            .difference
            .unwrap();
        assert_eq!(
            d.message,
            "Unexpected Node found in array at '.a' at index 2"
        );
        // Mode- and version-dependent optionality.
        let modal = r#"{"a":[{"v":"1"},{"$optional$":"!tx.fhir.org","v":"2"}]}"#;
        assert!(same(&c, modal, r#"{"a":[{"v":"1"}]}"#));
        let tx = Comparator::new(["general", "tx.fhir.org"], Some("5.0.0"));
        assert!(!same(&tx, modal, r#"{"a":[{"v":"1"}]}"#));
        let on = r#"{"a":[{"v":"1"},{"$optional$":"snomed","v":"2"}]}"#;
        assert!(!same(&c, on, r#"{"a":[{"v":"1"}]}"#));
        assert!(same(
            &Comparator::new(["snomed"], None),
            on,
            r#"{"a":[{"v":"1"}]}"#
        ));
        let ver = r#"{"a":[{"v":"1"},{"$optional$":"version:4","v":"2"}]}"#;
        assert!(!same(&c, ver, r#"{"a":[{"v":"1"}]}"#));
        assert!(same(
            &Comparator::new(["general"], Some("4.0.1")),
            ver,
            r#"{"a":[{"v":"1"}]}"#
        ));
        // Warnings are recorded for absent warning items.
        let w = r#"{"a":[{"v":"1"},{"$optional$":"warning:version","v":"2"}]}"#;
        let r = c.compare(&j(w), &j(r#"{"a":[{"v":"1"}]}"#)).unwrap();
        assert!(r.is_same());
        assert_eq!(r.warnings, ["version"]);
    }

    #[test]
    fn ordered_greedy_matching() {
        let c = general();
        assert!(!same(&c, r#"{"a":["x","y"]}"#, r#"{"a":["y","x"]}"#));
        assert!(!same(&c, r#"{"a":["x","y"]}"#, r#"{"a":["x"]}"#));
        assert!(!same(&c, r#"{"a":["x"]}"#, r#"{"a":["x","x"]}"#));
        // Greedy: the optional item is consumed by the first actual item
        // that matches it, leaving the mandatory one unmatched.
        let e = r#"{"a":[{"$optional$":true,"v":"$$"},{"v":"b"}]}"#;
        assert!(!same(&c, e, r#"{"a":[{"v":"b"}]}"#));
    }

    #[test]
    fn pattern_mode() {
        let mut c = general();
        c.pattern = true;
        assert!(same(
            &c,
            r#"{"a":["x","z"]}"#,
            r#"{"a":["w","x","y","z"],"b":1}"#
        ));
        assert!(!same(&c, r#"{"a":["z","x"]}"#, r#"{"a":["x","y","z"]}"#));
        assert!(!same(&c, r#"{"a":"x","c":1}"#, r#"{"a":"x"}"#));
    }

    #[test]
    fn java_split_drops_trailing_empties() {
        assert_eq!(java_split("a|b||", '|'), ["a", "b"]);
        assert_eq!(java_split("external:2:", ':'), ["external", "2"]);
        assert_eq!(java_split("a", '|'), ["a"]);
    }
}
