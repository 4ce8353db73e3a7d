//! R5 ↔ R4 for an R4 endpoint, as far as the suite needs it.
//!
//! The tests are written in R5. Against an R4 server the official runner
//! converts each request with the R5→R4 convertor and each response back
//! with R4→R5 (`conv40_50`). It is a full object-model conversion; this
//! module does the parts that the suite's resources exercise:
//!
//! R5 → R4 (requests):
//! * filter `op` values R4 lacks (`child-of`, `descendent-leaf`) become
//!   the cross-version extension on `_op`;
//! * `versionAlgorithm[x]` becomes the CanonicalResource extension;
//! * `expansion.property` / `contains.property` become their extensions;
//! * ConceptMap takes its R4 shape (scopes, `relationship` →
//!   `equivalence`, `noMap` → an `unmatched` target, unmapped modes,
//!   `dependsOn`/`product` attributes);
//! * a list of R5-only elements is dropped ([`R5_ONLY`]).
//!
//! Parameter names are never renamed, so an R4 server sees R5 names.
//!
//! R4 → R5 (responses): the R4 model drops what it does not know (raw
//! `property` in an expansion or a contains), then the extensions above
//! become R5 elements again.

use crate::json::{Json, Object};

pub const EXT_FILTER_OP: &str =
    "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.filter.op";
pub const EXT_VERSION_ALGORITHM: &str =
    "http://hl7.org/fhir/5.0/StructureDefinition/extension-CanonicalResource.versionAlgorithm";
pub const EXT_EXPANSION_PROPERTY: &str =
    "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.property";
pub const EXT_CONTAINS_PROPERTY: &str =
    "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.expansion.contains.property";

/// R5-only elements of the canonical resources, dropped for R4.
pub const R5_ONLY: &[&str] = &[
    "copyrightLabel",
    "approvalDate",
    "lastReviewDate",
    "effectivePeriod",
    "topic",
    "author",
    "editor",
    "reviewer",
    "endorser",
    "relatedArtifact",
];

const R4_FILTER_OPS: &[&str] = &[
    "=",
    "is-a",
    "descendent-of",
    "is-not-a",
    "regex",
    "in",
    "not-in",
    "generalizes",
    "exists",
];

fn ext(url: &str, value_key: &str, value: Json) -> Json {
    Json::Object(Object::new().with("url", url).with(value_key, value))
}

fn push_extension(o: &mut Object, e: Json) {
    match o.get_mut("extension") {
        Some(Json::Array(a)) => a.push(e),
        _ => o.insert("extension", Json::Array(vec![e])),
    }
}

/// Removes and returns the extensions with this url.
fn take_extensions(o: &mut Object, url: &str) -> Vec<Json> {
    let Some(Json::Array(a)) = o.get_mut("extension") else {
        return Vec::new();
    };
    let (taken, kept): (Vec<Json>, Vec<Json>) = std::mem::take(a)
        .into_iter()
        .partition(|e| e.get("url").and_then(Json::as_str) == Some(url));
    if kept.is_empty() {
        o.remove("extension");
    } else {
        o.insert("extension", Json::Array(kept));
    }
    taken
}

/// The `value[x]` of an element, key and value, removed.
fn take_value_x(o: &mut Object) -> Option<(String, Json)> {
    let key = crate::sort::value_x(o)?.0.to_string();
    let v = o.remove(&key)?;
    Some((key, v))
}

fn sub_extensions(e: &Json) -> Vec<&Json> {
    e.get("extension")
        .and_then(Json::as_array)
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn objects_mut<'a>(o: &'a mut Object, key: &str) -> impl Iterator<Item = &'a mut Object> {
    o.get_mut(key)
        .and_then(Json::as_array_mut)
        .into_iter()
        .flatten()
        .filter_map(Json::as_object_mut)
}

/// Applies `f` to every resource inside `v` (contained, Parameters
/// `resource`, Bundle entries), innermost first, then to `v` if it is one.
fn each_resource(v: &mut Json, f: &mut impl FnMut(&mut Object)) {
    match v {
        Json::Array(a) => a.iter_mut().for_each(|x| each_resource(x, f)),
        Json::Object(o) => {
            for (_, child) in o.iter_mut() {
                each_resource(child, f);
            }
            if o.contains_key("resourceType") {
                f(o);
            }
        }
        _ => {}
    }
}

/// Converts an R5 request resource (usually Parameters) for an R4 server.
pub fn r5_to_r4(v: &mut Json) {
    each_resource(v, &mut |r| {
        let rt = r
            .get("resourceType")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        match rt.as_str() {
            "ValueSet" => {
                canonical_r5_to_r4(r);
                value_set_r5_to_r4(r);
            }
            "CodeSystem" => {
                canonical_r5_to_r4(r);
                for c in objects_mut(r, "concept") {
                    concept_r5_to_r4(c);
                }
            }
            "ConceptMap" => {
                canonical_r5_to_r4(r);
                concept_map_r5_to_r4(r);
            }
            _ => {}
        }
    });
}

fn canonical_r5_to_r4(r: &mut Object) {
    for k in R5_ONLY {
        r.remove(k);
    }
    if let Some((key, v)) = ["versionAlgorithmString", "versionAlgorithmCoding"]
        .iter()
        .find_map(|k| {
            r.remove(k)
                .map(|v| (k.trim_start_matches("versionAlgorithm"), v))
        })
    {
        push_extension(r, ext(EXT_VERSION_ALGORITHM, &format!("value{key}"), v));
    }
}

fn concept_r5_to_r4(c: &mut Object) {
    for d in objects_mut(c, "designation") {
        d.remove("additionalUse");
    }
    for sub in objects_mut(c, "concept") {
        concept_r5_to_r4(sub);
    }
}

fn value_set_r5_to_r4(r: &mut Object) {
    if let Some(compose) = r.get_mut("compose").and_then(Json::as_object_mut) {
        for part in ["include", "exclude"] {
            for inc in objects_mut(compose, part) {
                inc.remove("copyright");
                for f in objects_mut(inc, "filter") {
                    let op = f.get("op").and_then(Json::as_str).map(str::to_string);
                    if let Some(op) = op.filter(|o| !R4_FILTER_OPS.contains(&o.as_str())) {
                        f.remove("op");
                        let mut holder = match f.remove("_op") {
                            Some(Json::Object(h)) => h,
                            _ => Object::new(),
                        };
                        push_extension(
                            &mut holder,
                            ext(EXT_FILTER_OP, "valueCode", Json::String(op)),
                        );
                        f.insert("_op", Json::Object(holder));
                    }
                }
                for c in objects_mut(inc, "concept") {
                    concept_r5_to_r4(c);
                }
            }
        }
    }
    let Some(exp) = r.get_mut("expansion").and_then(Json::as_object_mut) else {
        return;
    };
    exp.remove("next");
    if let Some(Json::Array(props)) = exp.remove("property") {
        for p in props {
            let mut e = Object::new().with("url", EXT_EXPANSION_PROPERTY);
            let mut subs = Vec::new();
            for k in ["code", "uri"] {
                if let Some(v) = p.get(k) {
                    subs.push(ext(
                        k,
                        if k == "code" { "valueCode" } else { "valueUri" },
                        v.clone(),
                    ));
                }
            }
            e.insert("extension", Json::Array(subs));
            push_extension(exp, Json::Object(e));
        }
    }
    for c in objects_mut(exp, "contains") {
        contains_r5_to_r4(c);
    }
}

fn property_to_extension(url: &str, p: &Json) -> Json {
    let mut subs = Vec::new();
    if let Some(code) = p.get("code") {
        subs.push(ext("code", "valueCode", code.clone()));
    }
    if let Some((k, v)) = p.as_object().and_then(crate::sort::value_x) {
        subs.push(ext("value", k, v.clone()));
    }
    for sp in p
        .get("subProperty")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        subs.push(property_to_extension("subProperty", sp));
    }
    Json::Object(
        Object::new()
            .with("url", url)
            .with("extension", Json::Array(subs)),
    )
}

fn contains_r5_to_r4(c: &mut Object) {
    for d in objects_mut(c, "designation") {
        d.remove("additionalUse");
    }
    if let Some(Json::Array(props)) = c.remove("property") {
        for p in &props {
            push_extension(c, property_to_extension(EXT_CONTAINS_PROPERTY, p));
        }
    }
    for sub in objects_mut(c, "contains") {
        contains_r5_to_r4(sub);
    }
}

/// R5 `relationship` → R4 `equivalence`.
pub fn relationship_to_equivalence(r: &str) -> &str {
    match r {
        "related-to" => "relatedto",
        "equivalent" => "equivalent",
        "source-is-narrower-than-target" => "wider",
        "source-is-broader-than-target" => "narrower",
        "not-related-to" => "disjoint",
        other => other,
    }
}

fn concept_map_r5_to_r4(r: &mut Object) {
    for (from, to) in [
        ("sourceScopeUri", "sourceUri"),
        ("sourceScopeCanonical", "sourceCanonical"),
        ("targetScopeUri", "targetUri"),
        ("targetScopeCanonical", "targetCanonical"),
    ] {
        if let Some(v) = r.remove(from) {
            r.insert(to, v);
        }
    }
    r.remove("property");
    r.remove("additionalAttribute");
    for g in objects_mut(r, "group") {
        for el in objects_mut(g, "element") {
            el.remove("valueSet");
            let no_map = matches!(el.remove("noMap"), Some(Json::Bool(true)));
            for t in objects_mut(el, "target") {
                target_r5_to_r4(t);
            }
            if no_map {
                let t = Json::Object(Object::new().with("equivalence", "unmatched"));
                match el.get_mut("target") {
                    Some(Json::Array(a)) => a.push(t),
                    _ => el.insert("target", Json::Array(vec![t])),
                }
            }
        }
        if let Some(u) = g.get_mut("unmapped").and_then(Json::as_object_mut) {
            if let Some(Json::String(m)) = u.get_mut("mode")
                && m == "use-source-code"
            {
                *m = "provided".to_string();
            }
            u.remove("relationship");
            u.remove("valueSet");
            if let Some(v) = u.remove("otherMap") {
                u.insert("url", v);
            }
        }
    }
}

fn target_r5_to_r4(t: &mut Object) {
    t.remove("valueSet");
    if let Some(Json::String(rel)) = t.remove("relationship") {
        t.insert(
            "equivalence",
            Json::String(relationship_to_equivalence(&rel).to_string()),
        );
    }
    t.remove("property");
    for key in ["dependsOn", "product"] {
        for d in objects_mut(t, key) {
            if let Some(a) = d.remove("attribute") {
                d.insert("property", a);
            }
            d.remove("valueSet");
            match take_value_x(d) {
                Some((_, Json::Object(coding))) => {
                    for (from, to) in [
                        ("system", "system"),
                        ("code", "value"),
                        ("display", "display"),
                    ] {
                        if let Some(v) = coding.get(from) {
                            d.insert(to, v.clone());
                        }
                    }
                }
                Some((_, v)) => d.insert(
                    "value",
                    Json::String(v.primitive_text().unwrap_or_default()),
                ),
                None => {}
            }
        }
    }
}

/// Converts an R4 response (as parsed by the R4 model) back to R5.
pub fn r4_to_r5(v: &mut Json) {
    each_resource(v, &mut |r| {
        let rt = r
            .get("resourceType")
            .and_then(Json::as_str)
            .unwrap_or("")
            .to_string();
        match rt.as_str() {
            "ValueSet" => {
                canonical_r4_to_r5(r);
                value_set_r4_to_r5(r);
            }
            "CodeSystem" | "ConceptMap" => canonical_r4_to_r5(r),
            _ => {}
        }
    });
}

fn canonical_r4_to_r5(r: &mut Object) {
    if let Some(e) = take_extensions(r, EXT_VERSION_ALGORITHM).into_iter().next()
        && let Some((k, v)) = e.as_object().and_then(crate::sort::value_x)
    {
        let ty = k.trim_start_matches("value");
        r.insert(format!("versionAlgorithm{ty}"), v.clone());
    }
}

fn value_set_r4_to_r5(r: &mut Object) {
    if let Some(compose) = r.get_mut("compose").and_then(Json::as_object_mut) {
        for part in ["include", "exclude"] {
            for inc in objects_mut(compose, part) {
                for f in objects_mut(inc, "filter") {
                    let Some(Json::Object(holder)) = f.get_mut("_op") else {
                        continue;
                    };
                    let Some(e) = take_extensions(holder, EXT_FILTER_OP).into_iter().next() else {
                        continue;
                    };
                    let empty = holder.is_empty();
                    if let Some(op) = e.get("valueCode").cloned() {
                        if empty {
                            f.remove("_op");
                        }
                        f.insert("op", op);
                    }
                }
            }
        }
    }
    let Some(exp) = r.get_mut("expansion").and_then(Json::as_object_mut) else {
        return;
    };
    // Unknown to the R4 model, so never seen by the runner.
    exp.remove("property");
    exp.remove("next");
    let props: Vec<Json> = take_extensions(exp, EXT_EXPANSION_PROPERTY)
        .iter()
        .map(|e| {
            let mut p = Object::new();
            for s in sub_extensions(e) {
                let url = s.get("url").and_then(Json::as_str).unwrap_or("");
                if let ("code" | "uri", Some((_, v))) =
                    (url, s.as_object().and_then(crate::sort::value_x))
                {
                    p.insert(url, v.clone());
                }
            }
            Json::Object(p)
        })
        .collect();
    if !props.is_empty() {
        exp.insert("property", Json::Array(props));
    }
    for c in objects_mut(exp, "contains") {
        contains_r4_to_r5(c);
    }
}

fn extension_to_property(e: &Json) -> Json {
    let mut p = Object::new();
    let mut subs = Vec::new();
    for s in sub_extensions(e) {
        match s.get("url").and_then(Json::as_str) {
            Some("code") => {
                if let Some(v) = s.get("valueCode") {
                    p.insert("code", v.clone());
                }
            }
            Some("value") => {
                if let Some((k, v)) = s.as_object().and_then(crate::sort::value_x) {
                    p.insert(k, v.clone());
                }
            }
            Some("subProperty" | "subproperty") => subs.push(extension_to_property(s)),
            _ => {}
        }
    }
    if !subs.is_empty() {
        p.insert("subProperty", Json::Array(subs));
    }
    Json::Object(p)
}

fn contains_r4_to_r5(c: &mut Object) {
    c.remove("property");
    for d in objects_mut(c, "designation") {
        d.remove("additionalUse");
    }
    let props: Vec<Json> = take_extensions(c, EXT_CONTAINS_PROPERTY)
        .iter()
        .map(extension_to_property)
        .collect();
    if !props.is_empty() {
        c.insert("property", Json::Array(props));
    }
    for sub in objects_mut(c, "contains") {
        contains_r4_to_r5(sub);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Json {
        Json::parse(s).unwrap()
    }

    #[test]
    fn child_of_and_version_algorithm() {
        let mut p = j(
            r#"{"resourceType":"Parameters","parameter":[{"name":"tx-resource","resource":
            {"resourceType":"ValueSet","compose":{"include":[{"filter":[{"property":"concept","op":"child-of","value":"code2"},{"property":"concept","op":"is-a","value":"x"}]}]}}},
            {"name":"tx-resource","resource":{"resourceType":"CodeSystem","versionAlgorithmCoding":{"code":"semver"},"approvalDate":"2020-01-01"}}]}"#,
        );
        let original = p.clone();
        r5_to_r4(&mut p);
        let vs = &p["parameter"][0]["resource"];
        let f = &vs["compose"]["include"][0]["filter"];
        assert!(f[0].get("op").is_none());
        assert_eq!(
            f[0]["_op"]["extension"][0]["url"].as_str(),
            Some(EXT_FILTER_OP)
        );
        assert_eq!(
            f[0]["_op"]["extension"][0]["valueCode"].as_str(),
            Some("child-of")
        );
        assert_eq!(f[1]["op"].as_str(), Some("is-a"));
        let cs = &p["parameter"][1]["resource"];
        assert_eq!(
            cs["extension"][0]["url"].as_str(),
            Some(EXT_VERSION_ALGORITHM)
        );
        assert!(cs.get("approvalDate").is_none());
        // And back.
        r4_to_r5(&mut p);
        assert_eq!(p["parameter"][0], original["parameter"][0]);
        assert_eq!(
            p["parameter"][1]["resource"]["versionAlgorithmCoding"]["code"].as_str(),
            Some("semver")
        );
    }

    #[test]
    fn expansion_properties_round_trip() {
        let r5 = j(
            r#"{"resourceType":"ValueSet","expansion":{"property":[{"code":"status","uri":"http://x"}],
            "contains":[{"code":"a","property":[{"code":"status","valueCode":"retired"}]}]}}"#,
        );
        let mut v = r5.clone();
        r5_to_r4(&mut v);
        assert!(v["expansion"].get("property").is_none());
        assert_eq!(
            v["expansion"]["extension"][0]["url"].as_str(),
            Some(EXT_EXPANSION_PROPERTY)
        );
        assert_eq!(
            v["expansion"]["contains"][0]["extension"][0]["extension"][1]["valueCode"].as_str(),
            Some("retired")
        );
        r4_to_r5(&mut v);
        assert_eq!(v, r5);
        // Raw R5 properties in an R4 response are unknown to R4: dropped.
        let mut raw = r5.clone();
        r4_to_r5(&mut raw);
        assert!(raw["expansion"].get("property").is_none());
        assert!(raw["expansion"]["contains"][0].get("property").is_none());
    }

    #[test]
    fn concept_maps() {
        let mut cm = j(
            r#"{"resourceType":"ConceptMap","sourceScopeUri":"s","targetScopeUri":"t","group":[{
            "element":[{"code":"a","target":[{"code":"b","relationship":"source-is-narrower-than-target"}]},{"code":"c","noMap":true}],
            "unmapped":{"mode":"use-source-code","relationship":"related-to"}}]}"#,
        );
        r5_to_r4(&mut cm);
        assert_eq!(
            cm.to_compact(),
            r#"{"resourceType":"ConceptMap","group":[{"element":[{"code":"a","target":[{"code":"b","equivalence":"wider"}]},{"code":"c","target":[{"equivalence":"unmatched"}]}],"unmapped":{"mode":"provided"}}],"sourceUri":"s","targetUri":"t"}"#
        );
    }
}
