//! `ConceptMap/$translate` over the ConceptMaps a request sends as
//! `tx-resource`s (R4 or R5 JSON).
//!
//! Forward (`sourceCode`/`code`, `sourceCoding`/`coding` or
//! `sourceCodeableConcept`): every group whose `source` is the code's
//! system (and whose `target` is `targetSystem`, when given) maps the
//! element with that code to each of its targets; a group's `unmapped`
//! (`fixed` or `provided`) answers for a code it does not list. Reverse
//! (`targetCode`/`targetCoding`): every element with a target of that code
//! is a match, with the element as its `source`. `url` (and
//! `conceptMapVersion`) restrict the maps used.
//!
//! Each match carries `concept`, `originMap` (`url|version`) and the
//! relationship in the endpoint's terms: R5 `relationship`, R4
//! `equivalence` (converted from the other form when the map has only it).

use serde_json::{Value, json};

use crate::error::Error;
use crate::parameters::{Param, Parameters, Scalar};
use crate::request::{Coding, Request};

/// R5 `relationship` of an R4 `equivalence`.
fn relationship_of(equivalence: &str) -> &'static str {
    match equivalence {
        "equal" | "equivalent" => "equivalent",
        "wider" | "subsumes" => "source-is-narrower-than-target",
        "narrower" | "specializes" => "source-is-broader-than-target",
        "disjoint" | "unmatched" => "not-related-to",
        _ => "related-to",
    }
}

/// R4 `equivalence` of an R5 `relationship`.
fn equivalence_of(relationship: &str) -> &'static str {
    match relationship {
        "equivalent" => "equivalent",
        "source-is-narrower-than-target" => "wider",
        "source-is-broader-than-target" => "narrower",
        "not-related-to" => "disjoint",
        _ => "relatedto",
    }
}

/// The relationship part of a target (or `unmapped`), for the endpoint.
fn relation(target: &Value, r5: bool) -> Option<(&'static str, String)> {
    let s = |k: &str| target.get(k).and_then(Value::as_str);
    if r5 {
        let r = s("relationship")
            .map(str::to_owned)
            .or_else(|| s("equivalence").map(|e| relationship_of(e).to_owned()))?;
        Some(("relationship", r))
    } else {
        let e = s("equivalence")
            .map(str::to_owned)
            .or_else(|| s("relationship").map(|r| equivalence_of(r).to_owned()))?;
        Some(("equivalence", e))
    }
}

fn coding(system: Option<&str>, code: &str, display: Option<&str>) -> Value {
    let mut c = serde_json::Map::new();
    if let Some(s) = system {
        c.insert("system".into(), json!(s));
    }
    c.insert("code".into(), json!(code));
    if let Some(d) = display {
        c.insert("display".into(), json!(d));
    }
    Value::Object(c)
}

/// The system part of a group's `source`/`target` (`url|version` allowed).
fn group_system<'a>(group: &'a Value, key: &str) -> Option<&'a str> {
    group
        .get(key)
        .and_then(Value::as_str)
        .map(|s| crate::valueset::split_canonical(s).0)
}

fn origin(map: &Value) -> Option<String> {
    let url = map.get("url").and_then(Value::as_str)?;
    Some(match map.get("version").and_then(Value::as_str) {
        Some(v) => format!("{url}|{v}"),
        None => url.to_owned(),
    })
}

fn one_coding(req: &Request, names: [&'static str; 2]) -> Option<Coding> {
    names.into_iter().find_map(|n| req.coding(n))
}

/// Answers `$translate`; `r5` picks the relationship's form.
pub fn translate(req: &Request, r5: bool) -> Result<Parameters<'static>, Error> {
    let text = |names: &[&'static str]| names.iter().find_map(|n| req.text(n));
    let source_coding = one_coding(req, ["sourceCoding", "coding"]).or_else(|| {
        req.codeable_concept("sourceCodeableConcept")
            .or_else(|| req.codeable_concept("codeableConcept"))
            .and_then(|cs| cs.into_iter().next())
    });
    let source_system = text(&["sourceSystem", "system"])
        .or_else(|| source_coding.as_ref().and_then(|c| c.system.clone()));
    let source_code = text(&["sourceCode", "code"])
        .or_else(|| source_coding.as_ref().and_then(|c| c.code.clone()));
    let target_coding = req.coding("targetCoding");
    let target_code =
        text(&["targetCode"]).or_else(|| target_coding.as_ref().and_then(|c| c.code.clone()));
    let target_system =
        text(&["targetSystem"]).or_else(|| target_coding.as_ref().and_then(|c| c.system.clone()));
    let url = text(&["url", "conceptMap"]);
    let (url, pinned) = match url.as_deref() {
        Some(u) => {
            let (u, v) = crate::valueset::split_canonical(u);
            (Some(u.to_owned()), v.map(str::to_owned))
        }
        None => (None, None),
    };
    let map_version = text(&["conceptMapVersion"]).or(pinned);
    if source_code.is_none() && target_code.is_none() {
        return Err(Error::Invalid(
            "A code to translate is required: sourceCode, sourceCoding, sourceCodeableConcept or targetCode".into(),
        ));
    }
    let maps: Vec<&Value> = req
        .params
        .resources("tx-resource")
        .into_iter()
        .filter(|r| r.get("resourceType").and_then(Value::as_str) == Some("ConceptMap"))
        .filter(|m| {
            url.as_deref()
                .is_none_or(|u| m.get("url").and_then(Value::as_str) == Some(u))
        })
        .filter(|m| {
            map_version
                .as_deref()
                .is_none_or(|v| m.get("version").and_then(Value::as_str) == Some(v))
        })
        .collect();
    if let (Some(u), true) = (&url, maps.is_empty()) {
        return Err(Error::Invalid(format!("Unable to find ConceptMap '{u}'")));
    }
    let sys_ok = |want: &Option<String>, have: Option<&str>| {
        want.as_deref().is_none_or(|w| have.is_none_or(|h| h == w))
    };
    let mut matches = Vec::new();
    for map in &maps {
        let origin = origin(map);
        for group in map
            .get("group")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let gs = group_system(group, "source");
            let gt = group_system(group, "target");
            if !sys_ok(&source_system, gs) || !sys_ok(&target_system, gt) {
                continue;
            }
            let elements = group.get("element").and_then(Value::as_array);
            let mut push = |concept: Value, target: &Value, source: Option<Value>| {
                let mut parts = vec![Param::json("concept", "valueCoding", concept)];
                let rel = relation(target, r5);
                if let Some((name @ "equivalence", value)) = &rel {
                    parts.push(Param::text(*name, "valueCode", value.clone()));
                }
                if let Some(o) = &origin {
                    parts.push(Param::text("originMap", "valueCanonical", o.clone()));
                }
                if let Some((name @ "relationship", value)) = &rel {
                    parts.push(Param::text(*name, "valueCode", value.clone()));
                }
                if let Some(s) = source {
                    parts.push(Param::json("source", "valueCoding", s));
                }
                matches.push((rel.map(|r| r.1), Param::parts("match", parts)));
            };
            if let Some(code) = &source_code {
                let mut found = false;
                for el in elements.into_iter().flatten() {
                    if el.get("code").and_then(Value::as_str) != Some(code) {
                        continue;
                    }
                    found = true;
                    for t in el
                        .get("target")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let Some(tc) = t.get("code").and_then(Value::as_str) else {
                            continue;
                        };
                        let display = t.get("display").and_then(Value::as_str);
                        push(coding(gt, tc, display), t, None);
                    }
                }
                if !found && let Some(unmapped) = group.get("unmapped") {
                    let mode = unmapped.get("mode").and_then(Value::as_str);
                    let tc = match mode {
                        Some("fixed") => unmapped.get("code").and_then(Value::as_str),
                        Some("provided") => Some(code.as_str()),
                        _ => None,
                    };
                    if let Some(tc) = tc {
                        let display = unmapped.get("display").and_then(Value::as_str);
                        push(coding(gt, tc, display), unmapped, None);
                    }
                }
            } else if let Some(code) = &target_code {
                for el in elements.into_iter().flatten() {
                    let Some(sc) = el.get("code").and_then(Value::as_str) else {
                        continue;
                    };
                    for t in el
                        .get("target")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if t.get("code").and_then(Value::as_str) != Some(code) {
                            continue;
                        }
                        let display = t.get("display").and_then(Value::as_str);
                        let source = coding(gs, sc, el.get("display").and_then(Value::as_str));
                        push(coding(gt, code, display), t, Some(source));
                    }
                }
            }
        }
    }
    let positive = matches.iter().any(|(rel, _)| {
        !matches!(
            rel.as_deref(),
            Some("not-related-to" | "disjoint" | "unmatched")
        )
    });
    let mut out = vec![Param::value(
        "result",
        "valueBoolean",
        Scalar::Bool(positive),
    )];
    if !positive {
        let what = source_code
            .as_deref()
            .or(target_code.as_deref())
            .unwrap_or_default();
        out.push(Param::text(
            "message",
            "valueString",
            format!("No translations found for '{what}'"),
        ));
    }
    out.extend(matches.into_iter().map(|(_, m)| m));
    Ok(Parameters(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map() -> Value {
        json!({"resourceType": "ConceptMap", "url": "http://m", "version": "1",
            "group": [{"source": "http://s", "target": "http://t",
                "element": [{"code": "a", "target": [{"code": "A", "relationship": "equivalent"}]},
                            {"code": "b", "target": [{"code": "B", "equivalence": "wider"}]}],
                "unmapped": {"mode": "fixed", "code": "X", "relationship": "related-to"}}]})
    }

    fn run(params: Value, r5: bool) -> Value {
        let mut list = params.as_array().unwrap().clone();
        list.push(json!({"name": "tx-resource", "resource": map()}));
        let p = json!({"resourceType": "Parameters", "parameter": list});
        translate(&Request::new(p.clone()), r5).unwrap().to_value()
    }

    #[test]
    fn forward_reverse_and_unmapped() {
        let fwd = run(
            json!([{"name": "sourceSystem", "valueUri": "http://s"}, {"name": "sourceCode", "valueCode": "a"}]),
            true,
        );
        assert_eq!(fwd["parameter"][0]["valueBoolean"], true);
        let parts = &fwd["parameter"][1]["part"];
        assert_eq!(
            parts[0]["valueCoding"],
            json!({"system": "http://t", "code": "A"})
        );
        assert_eq!(parts[1]["valueCanonical"], "http://m|1");
        assert_eq!(parts[2]["valueCode"], "equivalent");

        let r4 = run(json!([{"name": "sourceCode", "valueCode": "b"}]), false);
        assert_eq!(
            r4["parameter"][1]["part"][1],
            json!({"name": "equivalence", "valueCode": "wider"})
        );

        let unmapped = run(json!([{"name": "sourceCode", "valueCode": "zz"}]), true);
        assert_eq!(
            unmapped["parameter"][1]["part"][0]["valueCoding"]["code"],
            "X"
        );

        let rev = run(
            json!([{"name": "targetCode", "valueCode": "A"}, {"name": "targetSystem", "valueUri": "http://t"}]),
            true,
        );
        let parts = &rev["parameter"][1]["part"];
        assert_eq!(
            parts[3]["valueCoding"],
            json!({"system": "http://s", "code": "a"})
        );

        let none = run(
            json!([{"name": "sourceCode", "valueCode": "a"}, {"name": "targetSystem", "valueUri": "http://other"}]),
            true,
        );
        assert_eq!(none["parameter"][0]["valueBoolean"], false);
    }
}
