//! Canonical order for actual responses, as `TxTesterSorters` sorts them.
//!
//! Array comparison is ordered and the expected files are never sorted, so
//! the runner sorts what the server returned into the order the files are
//! written in. The details matter and are reproduced:
//!
//! * strings compare as Java's `String.compareTo` does (UTF-16 code units);
//! * Java's `Collections.sort` is TimSort; for fewer than 32 items (every
//!   list in the suite) that is a binary insertion sort, reproduced here
//!   item for item, because some comparators are not consistent (a
//!   designation pair is ordered by language only when both have one);
//! * the parameter and extension comparators sort the compared items'
//!   parts and nested extensions as a side effect, so a list's items get
//!   their children sorted only when the list has at least two items;
//! * a missing sort key is a `NullPointerException` in Java, so the test
//!   errors: [`SortError`].

use std::cmp::Ordering;
use std::fmt;

use crate::json::{Json, Object};

/// A sort key the runner would have dereferenced was missing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SortError(pub String);

impl fmt::Display for SortError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sorting the response: {}", self.0)
    }
}

impl std::error::Error for SortError {}

type R<T = ()> = Result<T, SortError>;

/// Java's `String.compareTo`: UTF-16 code units, case-sensitive.
pub fn java_compare(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// Java's `Collections.sort` (TimSort) for small lists: a binary insertion
/// sort after the initial run. Larger lists use a stable sort, which gives
/// the same order whenever the comparator is consistent.
pub fn java_sort<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    let n = v.len();
    if n < 2 {
        return;
    }
    if n >= 32 {
        v.sort_by(cmp);
        return;
    }
    // countRunAndMakeAscending
    let mut run = 2;
    if cmp(&v[1], &v[0]) == Ordering::Less {
        while run < n && cmp(&v[run], &v[run - 1]) == Ordering::Less {
            run += 1;
        }
        v[..run].reverse();
    } else {
        while run < n && cmp(&v[run], &v[run - 1]) != Ordering::Less {
            run += 1;
        }
    }
    // binarySort
    for start in run..n {
        let (mut left, mut right) = (0, start);
        while left < right {
            let mid = (left + right) / 2;
            if cmp(&v[start], &v[mid]) == Ordering::Less {
                right = mid;
            } else {
                left = mid + 1;
            }
        }
        v[left..=start].rotate_right(1);
    }
}

/// Sorts with a fallible comparator: the first failure is returned, as the
/// first exception would be in Java.
fn try_sort(v: &mut [Json], mut cmp: impl FnMut(&Json, &Json) -> R<Ordering>) -> R {
    let mut err = None;
    java_sort(v, |a, b| match cmp(a, b) {
        Ok(o) => o,
        Err(e) => {
            err.get_or_insert(e);
            Ordering::Equal
        }
    });
    err.map_or(Ok(()), Err)
}

fn str_of<'a>(v: &'a Json, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Json::as_str)
}

fn need<'a>(v: &'a Json, key: &str, what: &str) -> R<&'a str> {
    str_of(v, key).ok_or_else(|| SortError(format!("{what} without `{key}`")))
}

fn array_mut<'a>(v: &'a mut Json, key: &str) -> Option<&'a mut Vec<Json>> {
    v.get_mut(key).and_then(Json::as_array_mut)
}

/// The `value[x]` property of an element: its name and value.
pub fn value_x(o: &Object) -> Option<(&str, &Json)> {
    o.iter().find(|(k, _)| {
        k.strip_prefix("value")
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_uppercase()))
    })
}

/// The primitive value of an element's `value[x]`, as `primitiveValue()`.
fn primitive_value(v: &Json) -> Option<String> {
    let (_, x) = value_x(v.as_object()?)?;
    if x.is_primitive() {
        x.primitive_text()
    } else {
        None
    }
}

/// `ExtensionSorter`, with its side effect on nested extensions.
fn sort_extensions(list: Option<&mut Vec<Json>>) -> R {
    let Some(list) = list else { return Ok(()) };
    if list.len() < 2 {
        return Ok(());
    }
    for e in list.iter_mut() {
        sort_extensions(array_mut(e, "extension"))?;
    }
    try_sort(list, |a, b| {
        Ok(java_compare(
            need(a, "url", "extension")?,
            need(b, "url", "extension")?,
        ))
    })
}

/// `TxTesterSorters.sortValueSet`.
pub fn sort_value_set(vs: &mut Json) -> R {
    sort_extensions(array_mut(vs, "extension"))?;
    let Some(exp) = vs.get_mut("expansion") else {
        return Ok(());
    };
    if let Some(list) = array_mut(exp, "parameter") {
        if list.len() >= 2 {
            for p in list.iter_mut() {
                sort_extensions(array_mut(p, "extension"))?;
            }
        }
        try_sort(list, |a, b| {
            let (na, nb) = (
                need(a, "name", "expansion.parameter")?,
                need(b, "name", "expansion.parameter")?,
            );
            match java_compare(na, nb) {
                Ordering::Equal => {
                    let va = primitive_value(a);
                    let vb = primitive_value(b);
                    match (va, vb) {
                        (Some(x), Some(y)) => Ok(java_compare(&x, &y)),
                        _ => Err(SortError(format!(
                            "expansion.parameter `{na}` without a primitive value"
                        ))),
                    }
                }
                o => Ok(o),
            }
        })?;
    }
    if let Some(list) = array_mut(exp, "property") {
        try_sort(list, |a, b| {
            let o = match (str_of(a, "uri"), str_of(b, "uri")) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(x), Some(y)) => java_compare(x, y),
            };
            if o != Ordering::Equal {
                return Ok(o);
            }
            Ok(java_compare(
                need(a, "code", "expansion.property")?,
                need(b, "code", "expansion.property")?,
            ))
        })?;
    }
    sort_extensions(array_mut(exp, "extension"))?;
    if let Some(list) = array_mut(exp, "contains") {
        sort_contains(list)?;
        for c in list.iter_mut() {
            sort_contains_features(c)?;
        }
    }
    Ok(())
}

fn sort_contains(list: &mut [Json]) -> R {
    try_sort(list, |a, b| {
        Ok(java_compare(
            need(a, "code", "contains")?,
            need(b, "code", "contains")?,
        ))
    })
}

fn sort_contains_features(cc: &mut Json) -> R {
    if let Some(list) = array_mut(cc, "contains") {
        sort_contains(list)?;
    }
    sort_extensions(array_mut(cc, "extension"))?;
    if let Some(list) = array_mut(cc, "designation") {
        try_sort(list, |a, b| {
            match (str_of(a, "language"), str_of(b, "language")) {
                (Some(x), Some(y)) => Ok(java_compare(x, y)),
                _ => Ok(java_compare(
                    need(a, "value", "designation")?,
                    need(b, "value", "designation")?,
                )),
            }
        })?;
    }
    if let Some(list) = array_mut(cc, "property") {
        try_sort(list, |a, b| {
            Ok(java_compare(
                need(a, "code", "contains.property")?,
                need(b, "code", "contains.property")?,
            ))
        })?;
    }
    if let Some(list) = array_mut(cc, "contains") {
        for c in list.iter_mut() {
            sort_contains_features(c)?;
        }
    }
    Ok(())
}

/// The first part with this name.
fn part<'a>(p: &'a Json, name: &str) -> Option<&'a Json> {
    p.get("part")?
        .as_array()?
        .iter()
        .find(|x| str_of(x, "name") == Some(name))
}

/// `ParameterSorter`: name order, with `property` parameters ordered by
/// their code and value parts and `designation` ones by language.
fn sort_parameter_list(list: Option<&mut Vec<Json>>) -> R {
    let Some(list) = list else { return Ok(()) };
    if list.len() < 2 {
        return Ok(());
    }
    for p in list.iter_mut() {
        sort_extensions(array_mut(p, "extension"))?;
        sort_parameter_list(array_mut(p, "part"))?;
    }
    try_sort(list, |a, b| {
        let (na, nb) = (need(a, "name", "parameter")?, need(b, "name", "parameter")?);
        if na == nb && na == "property" {
            let code = |p: &Json| {
                part(p, "code")
                    .and_then(primitive_value)
                    .map(|s| s.to_lowercase())
                    .ok_or_else(|| SortError("`property` parameter without a `code` part".into()))
            };
            let (ca, cb) = (code(a)?, code(b)?);
            if ca != cb {
                return Ok(java_compare(&ca, &cb));
            }
            let value = |p: &Json| -> R<Option<String>> {
                let Some(v) = part(p, "value") else {
                    return Ok(None);
                };
                let o = v.as_object().and_then(value_x);
                match o {
                    None => Err(SortError(
                        "`property` parameter whose `value` part has no value".into(),
                    )),
                    Some((_, x)) if x.is_primitive() => {
                        Ok(x.primitive_text().map(|s| s.to_lowercase()))
                    }
                    Some(_) => Ok(None),
                }
            };
            if let (Some(x), Some(y)) = (value(a)?, value(b)?)
                && x != y
            {
                return Ok(java_compare(&x, &y));
            }
        }
        if na == nb && na == "designation" {
            let lang = |p: &Json| {
                part(p, "language")
                    .and_then(primitive_value)
                    .unwrap_or_default()
                    .to_lowercase()
            };
            let (la, lb) = (lang(a), lang(b));
            if la != lb {
                return Ok(java_compare(&la, &lb));
            }
        }
        Ok(java_compare(na, nb))
    })
}

/// `OperationIssueSorter`: severity, code, first expression, details.text.
pub fn sort_operation_outcome(oo: &mut Json) {
    let Some(list) = array_mut(oo, "issue") else {
        return;
    };
    let key = |i: &Json| {
        let s = |k: &str| str_of(i, k).unwrap_or("").to_string();
        let expr = i
            .get("expression")
            .and_then(Json::as_array)
            .and_then(|a| a.first())
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        let text = i
            .get("details")
            .and_then(|d| str_of(d, "text"))
            .unwrap_or("")
            .to_string();
        [s("severity"), s("code"), expr, text]
    };
    java_sort(list, |a, b| {
        let (x, y) = (key(a), key(b));
        x.iter()
            .zip(y.iter())
            .map(|(p, q)| java_compare(p, q))
            .find(|o| o.is_ne())
            .unwrap_or(Ordering::Equal)
    });
}

/// `TxTesterSorters.sortParameters`.
pub fn sort_parameters(p: &mut Json) -> R {
    sort_parameter_list(array_mut(p, "parameter"))?;
    let Some(list) = array_mut(p, "parameter") else {
        return Ok(());
    };
    for param in list.iter_mut() {
        if let Some(r) = param.get_mut("resource") {
            match r.resource_type() {
                Some("OperationOutcome") => sort_operation_outcome(r),
                Some("Parameters") => sort_parameters(r)?,
                _ => {}
            }
        }
        if str_of(param, "name") == Some("message") {
            split_message(param);
        }
    }
    Ok(())
}

/// A `message` made of "; "-joined pieces is rejoined in sorted order.
fn split_message(param: &mut Json) {
    let Some(o) = param.as_object_mut() else {
        return;
    };
    let Some((key, text)) =
        value_x(o).and_then(|(k, v)| Some((k.to_string(), v.as_str()?.to_string())))
    else {
        return;
    };
    if !text.contains("; ") {
        return;
    }
    let mut bits: Vec<&str> = text.split("; ").collect();
    while bits.len() > 1 && bits.last() == Some(&"") {
        bits.pop();
    }
    bits.sort_by(|a, b| java_compare(a, b));
    o.remove(&key);
    o.insert("valueString", Json::String(bits.join("; ")));
}

fn sort_strings(list: Option<&mut Vec<Json>>) {
    if let Some(list) = list {
        java_sort(list, |a, b| {
            java_compare(a.as_str().unwrap_or(""), b.as_str().unwrap_or(""))
        });
    }
}

fn by_key(list: Option<&mut Vec<Json>>, key: &str, what: &str) -> R {
    match list {
        Some(list) => try_sort(list, |a, b| {
            Ok(java_compare(need(a, key, what)?, need(b, key, what)?))
        }),
        None => Ok(()),
    }
}

/// Enum order (Java compares enums by ordinal); unknown codes last.
fn by_ordinal(list: Option<&mut Vec<Json>>, key: &str, order: &[&str], what: &str) -> R {
    let Some(list) = list else { return Ok(()) };
    let rank = |v: &Json| -> R<usize> {
        let c = need(v, key, what)?;
        Ok(order.iter().position(|o| *o == c).unwrap_or(order.len()))
    };
    try_sort(list, |a, b| Ok(rank(a)?.cmp(&rank(b)?)))
}

/// `TxTesterSorters.sortCapStmt`. Extensions are not sorted.
pub fn sort_capability_statement(cs: &mut Json) -> R {
    for k in ["format", "instantiates", "imports", "acceptLanguage"] {
        sort_strings(array_mut(cs, k));
    }
    by_ordinal(array_mut(cs, "rest"), "mode", &["client", "server"], "rest")?;
    let Some(rests) = array_mut(cs, "rest") else {
        return Ok(());
    };
    for r in rests.iter_mut() {
        by_key(array_mut(r, "resource"), "type", "rest.resource")?;
        if let Some(resources) = array_mut(r, "resource") {
            for res in resources.iter_mut() {
                sort_strings(array_mut(res, "supportedProfile"));
                by_key(array_mut(res, "interaction"), "code", "interaction")?;
                sort_strings(array_mut(res, "searchInclude"));
                sort_strings(array_mut(res, "searchRevInclude"));
                by_key(array_mut(res, "searchParam"), "name", "searchParam")?;
                by_key(array_mut(res, "operation"), "name", "operation")?;
            }
        }
        by_ordinal(
            array_mut(r, "interaction"),
            "code",
            &["transaction", "batch", "search-system", "history-system"],
            "rest.interaction",
        )?;
        by_key(array_mut(r, "searchParam"), "name", "searchParam")?;
        by_key(array_mut(r, "operation"), "name", "operation")?;
        sort_strings(array_mut(r, "compartment"));
    }
    Ok(())
}

/// `TxTesterSorters.sortTermCaps`.
pub fn sort_terminology_capabilities(tc: &mut Json) -> R {
    by_key(array_mut(tc, "codeSystem"), "uri", "codeSystem")?;
    if let Some(list) = array_mut(tc, "codeSystem") {
        for cs in list.iter_mut() {
            if let Some(versions) = array_mut(cs, "version") {
                java_sort(versions, |a, b| {
                    match (str_of(a, "code"), str_of(b, "code")) {
                        (Some(x), Some(y)) => java_compare(x, y),
                        _ => Ordering::Equal,
                    }
                });
                for v in versions.iter_mut() {
                    sort_strings(array_mut(v, "language"));
                    sort_strings(array_mut(v, "property"));
                    by_key(array_mut(v, "filter"), "code", "filter")?;
                }
            }
        }
    }
    if let Some(exp) = tc.get_mut("expansion") {
        by_key(array_mut(exp, "parameter"), "name", "expansion.parameter")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Json {
        Json::parse(s).unwrap()
    }

    #[test]
    fn java_order_is_utf16() {
        assert_eq!(java_compare("B", "a"), Ordering::Less);
        // U+FF5E sorts after U+1F600 in UTF-8 but before it in UTF-16.
        assert_eq!(java_compare("\u{ff5e}", "\u{1f600}"), Ordering::Greater);
    }

    #[test]
    fn java_sort_is_stable_and_sorts() {
        let mut v: Vec<(u8, usize)> = [3, 1, 2, 1, 3, 0]
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i))
            .collect();
        java_sort(&mut v, |a, b| a.0.cmp(&b.0));
        assert_eq!(v, [(0, 5), (1, 1), (1, 3), (2, 2), (3, 0), (3, 4)]);
        let mut d: Vec<u32> = (0..40).rev().collect();
        java_sort(&mut d, |a, b| a.cmp(b));
        assert_eq!(d, (0..40).collect::<Vec<_>>());
        let mut r = vec![5, 4, 3, 9, 1];
        java_sort(&mut r, |a, b| a.cmp(b));
        assert_eq!(r, [1, 3, 4, 5, 9]);
    }

    #[test]
    fn value_sets() {
        let mut vs = j(r#"{"resourceType":"ValueSet","expansion":{
            "parameter":[{"name":"used-codesystem","valueUri":"b"},{"name":"excludeNested","valueBoolean":true},{"name":"used-codesystem","valueUri":"a"}],
            "contains":[{"code":"b","contains":[{"code":"y"},{"code":"x"}]},{"code":"a","property":[{"code":"z"},{"code":"c"}]}]}}"#);
        sort_value_set(&mut vs).unwrap();
        assert_eq!(
            vs.to_compact(),
            r#"{"resourceType":"ValueSet","expansion":{"parameter":[{"name":"excludeNested","valueBoolean":true},{"name":"used-codesystem","valueUri":"a"},{"name":"used-codesystem","valueUri":"b"}],"contains":[{"code":"a","property":[{"code":"c"},{"code":"z"}]},{"code":"b","contains":[{"code":"x"},{"code":"y"}]}]}}"#
        );
        let mut bad = j(r#"{"expansion":{"contains":[{"code":"b"},{"display":"no code"}]}}"#);
        assert!(sort_value_set(&mut bad).is_err());
        // A lone item needs no key.
        let mut lone = j(r#"{"expansion":{"contains":[{"display":"no code"}]}}"#);
        assert!(sort_value_set(&mut lone).is_ok());
    }

    #[test]
    fn parameters() {
        let mut p = j(r#"{"resourceType":"Parameters","parameter":[
            {"name":"result","valueBoolean":true},
            {"name":"property","part":[{"name":"value","valueString":"B"},{"name":"code","valueCode":"x"}]},
            {"name":"property","part":[{"name":"code","valueCode":"x"},{"name":"value","valueString":"a"}]},
            {"name":"message","valueString":"z; a; m"},
            {"name":"issues","resource":{"resourceType":"OperationOutcome","issue":[{"severity":"warning"},{"severity":"error","code":"x"}]}}]}"#);
        sort_parameters(&mut p).unwrap();
        let names: Vec<_> = p["parameter"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            ["issues", "message", "property", "property", "result"]
        );
        assert_eq!(p["parameter"][1]["valueString"].as_str(), Some("a; m; z"));
        assert_eq!(
            p["parameter"][2]["part"][1]["valueString"].as_str(),
            Some("a")
        );
        assert_eq!(p["parameter"][3]["part"][0]["name"].as_str(), Some("code"));
        assert_eq!(
            p["parameter"][0]["resource"]["issue"][0]["severity"].as_str(),
            Some("error")
        );
        let mut bad =
            j(r#"{"parameter":[{"name":"property","part":[]},{"name":"property","part":[]}]}"#);
        assert!(sort_parameters(&mut bad).is_err());
    }

    #[test]
    fn lone_parameter_keeps_its_parts() {
        let mut p = j(r#"{"parameter":[{"name":"match","part":[{"name":"z"},{"name":"a"}]}]}"#);
        sort_parameters(&mut p).unwrap();
        assert_eq!(p["parameter"][0]["part"][0]["name"].as_str(), Some("z"));
    }
}
