//! `ValueSet/$compare` on code systems and value sets made here. The
//! expected relations and code lists are worked out by hand from the
//! sets each value set selects (written next to each case), not read
//! from the engine.

use serde_json::{Value, json};
use txmap_terminology::Request;
use txmap_terminology::compare::compare;

const TREE: &str = "http://example.org/tree";
const POLY: &str = "http://example.org/poly";

/// `root` with `a` (`a1`, `a2`) and `b` (`b1`): every concept one parent.
fn tree() -> Value {
    json!({"name": "tx-resource", "resource": {
        "resourceType": "CodeSystem", "url": TREE, "version": "1", "content": "complete",
        "concept": [{"code": "root", "concept": [
            {"code": "a", "concept": [{"code": "a1"}, {"code": "a2"}]},
            {"code": "b", "concept": [{"code": "b1"}]}
        ]}]
    }})
}

/// `x` and `y` both parents of `xy`: is-a x and is-a y share `xy`.
fn poly() -> Value {
    let parent = |p: &str| json!({"code": "parent", "valueCode": p});
    json!({"name": "tx-resource", "resource": {
        "resourceType": "CodeSystem", "url": POLY, "version": "1", "content": "complete",
        "property": [{"code": "parent", "type": "code"}],
        "concept": [
            {"code": "x"},
            {"code": "y"},
            {"code": "xy", "property": [parent("x"), parent("y")]}
        ]
    }})
}

fn vs(url: &str, compose: Value) -> Value {
    json!({"resourceType": "ValueSet", "url": url, "version": "1", "compose": compose})
}

fn enumerate(system: &str, codes: &[&str]) -> Value {
    let concept: Vec<Value> = codes.iter().map(|c| json!({"code": c})).collect();
    json!({"system": system, "concept": concept})
}

fn is_a(system: &str, code: &str) -> Value {
    json!({"system": system, "filter": [{"property": "concept", "op": "is-a", "value": code}]})
}

/// Compares `this` with `other` (compose objects).
fn run(this: Value, other: Value) -> Value {
    let req = json!({"resourceType": "Parameters", "parameter": [
        tree(),
        poly(),
        {"name": "thisValueSet", "resource": vs("http://vs/this", this)},
        {"name": "otherValueSet", "resource": vs("http://vs/other", other)},
    ]});
    compare(&Request::new(req)).unwrap().to_value()
}

fn get<'v>(out: &'v Value, name: &str) -> Option<&'v Value> {
    out["parameter"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .map(|p| {
            p.get("valueCode")
                .or_else(|| p.get("valueString"))
                .or_else(|| p.get("valueBoolean"))
                .unwrap()
        })
}

/// (result, performed-expansion, common, missing, extra).
fn summary(out: &Value) -> (String, bool, String, String, String) {
    let s = |n| get(out, n).and_then(Value::as_str).unwrap_or("").to_owned();
    (
        s("result"),
        get(out, "performed-expansion").unwrap().as_bool().unwrap(),
        s("common-codes"),
        s("missing-codes"),
        s("extra-codes"),
    )
}

fn expect(out: &Value, result: &str, expanded: bool, common: &str, missing: &str, extra: &str) {
    assert_eq!(
        summary(out),
        (
            result.to_owned(),
            expanded,
            common.to_owned(),
            missing.to_owned(),
            extra.to_owned()
        ),
        "{out}"
    );
}

#[test]
fn enumerations_compare_their_codes_without_expanding() {
    // {a1, b1, a} against {a, a2}: a shared, a1 and b1 only here, a2
    // only there; the lists sorted.
    let out = run(
        json!({"include": [enumerate(TREE, &["b1", "a1", "a"])]}),
        json!({"include": [enumerate(TREE, &["a2", "a"])]}),
    );
    expect(&out, "overlapping", false, "a", "a1,b1", "a2");
    assert_eq!(
        get(&out, "message").unwrap(),
        "Both value sets http://vs/this|1 and http://vs/other|1 contain the codes the other doesn't, but there is some overlap"
    );
    // The same code in two systems is two codes.
    let out = run(
        json!({"include": [enumerate(TREE, &["a"])]}),
        json!({"include": [enumerate(POLY, &["a"])]}),
    );
    expect(&out, "disjoint", false, "", "a", "a");
    let out = run(
        json!({"include": [enumerate(TREE, &["a"])]}),
        json!({"include": [enumerate(TREE, &["a", "b"])]}),
    );
    expect(&out, "subset", false, "a", "", "b");
    assert_eq!(
        get(&out, "message").unwrap(),
        "The valueSet http://vs/this|1 is a sub-set of the valueSet http://vs/other|1"
    );
}

#[test]
fn the_same_includes_in_another_order_are_the_same() {
    let out = run(
        json!({"include": [is_a(TREE, "a"), enumerate(TREE, &["b1", "b"])]}),
        json!({"include": [enumerate(TREE, &["b", "b1"]), is_a(TREE, "a")]}),
    );
    expect(&out, "same", false, "", "", "");
    assert_eq!(
        get(&out, "message").unwrap(),
        "The value sets http://vs/this|1 and http://vs/other|1 contain the same codes"
    );
}

#[test]
fn is_a_in_a_tree_compares_by_subsumption() {
    // is-a a = {a, a1, a2} inside is-a root = everything.
    let out = run(
        json!({"include": [is_a(TREE, "a")]}),
        json!({"include": [is_a(TREE, "root")]}),
    );
    expect(&out, "subset", false, "", "", "");
    // Sibling subtrees of a tree share nothing.
    let out = run(
        json!({"include": [is_a(TREE, "a")]}),
        json!({"include": [is_a(TREE, "b")]}),
    );
    expect(&out, "disjoint", false, "", "", "");
    // A system only this side has: more codes here.
    let out = run(
        json!({"include": [is_a(TREE, "a"), enumerate(POLY, &["x"])]}),
        json!({"include": [is_a(TREE, "a")]}),
    );
    expect(&out, "superset", false, "", "", "");
}

#[test]
fn is_a_in_a_polyhierarchy_is_expanded() {
    // is-a x = {x, xy}, is-a y = {y, xy}: they share xy, which a
    // reasoning that took subtrees to be disjoint would miss.
    let out = run(
        json!({"include": [is_a(POLY, "x")]}),
        json!({"include": [is_a(POLY, "y")]}),
    );
    expect(&out, "overlapping", true, "xy", "x", "y");
}

#[test]
fn excludes_and_filters_against_lists_are_expanded() {
    // Everything but a's subtree = {root, b, b1}, against {root, b, b1}.
    let out = run(
        json!({"include": [{"system": TREE}], "exclude": [is_a(TREE, "a")]}),
        json!({"include": [enumerate(TREE, &["root", "b", "b1"])]}),
    );
    expect(&out, "same", true, "", "", "");
    // is-a a = {a, a1, a2} against {a1, b}: a1 shared, in expansion order.
    let out = run(
        json!({"include": [is_a(TREE, "a")]}),
        json!({"include": [enumerate(TREE, &["b", "a1"])]}),
    );
    expect(&out, "overlapping", true, "a1", "a,a2", "b");
}

#[test]
fn two_empty_value_sets_are_empty_and_a_failed_expansion_is_indeterminate() {
    // is-a a1 excluded from is-a a1: nothing, on both sides.
    let nothing = json!({"include": [is_a(TREE, "a1")], "exclude": [is_a(TREE, "a1")]});
    let out = run(nothing.clone(), nothing);
    expect(&out, "empty", true, "", "", "");
    assert_eq!(
        get(&out, "message").unwrap(),
        "Both the value sets http://vs/this|1 and http://vs/other|1 are empty"
    );
    // Filters on a code system nobody has cannot be expanded. (Against
    // another system's codes they would be disjoint all the same: two
    // systems never share a code.)
    let unknown = "http://example.org/unknown";
    let out = run(
        json!({"include": [is_a(unknown, "q")]}),
        json!({"include": [is_a(unknown, "r")]}),
    );
    assert_eq!(get(&out, "result").unwrap(), "indeterminate");
    assert_eq!(get(&out, "performed-expansion").unwrap(), true);
    let message = get(&out, "message").unwrap().as_str().unwrap();
    assert!(
        message.starts_with("Unable to compare http://vs/this|1 and http://vs/other|1: "),
        "{message}"
    );
}

#[test]
fn a_missing_value_set_is_an_error() {
    let req = json!({"resourceType": "Parameters", "parameter": [
        {"name": "thisUrl", "valueUri": "http://vs/none"},
        {"name": "otherValueSet", "resource": vs("http://vs/other", json!({"include": []}))},
    ]});
    let err = compare(&Request::new(req)).unwrap_err();
    assert_eq!(err.status(), 404, "{err}");
    let req = json!({"resourceType": "Parameters", "parameter": [
        {"name": "otherValueSet", "resource": vs("http://vs/other", json!({"include": []}))},
    ]});
    let err = compare(&Request::new(req)).unwrap_err();
    assert_eq!(err.status(), 400, "{err}");
}
