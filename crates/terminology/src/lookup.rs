//! `CodeSystem/$lookup`: a concept's display, definition, designations
//! and properties (with `parent`, `child` and `inactive` derived from the
//! hierarchy and status) as a Parameters resource.

use serde_json::{Value, json};

use crate::error::Error;
use crate::provider::CodeSystemProvider;
use crate::request::Request;

const PREFERRED_FOR_LANGUAGE: &str = "http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra";

fn part(name: &str, key: &str, value: Value) -> Value {
    let mut p = serde_json::Map::new();
    p.insert("name".into(), json!(name));
    p.insert(key.into(), value);
    Value::Object(p)
}

/// `$lookup` for a code system that is not SNOMED CT.
pub fn lookup(req: &Request) -> Result<Value, Error> {
    let coding = req.coding("coding").unwrap_or_default();
    let system = req
        .text("system")
        .or(coding.system)
        .ok_or(Error::Required("system"))?;
    let code = req
        .text("code")
        .or(coding.code)
        .ok_or(Error::Required("code"))?;
    let version = req.text("version").or(coding.version);
    let engine =
        crate::engine::Engine::new(&req.resolver, usize::MAX, false).with_deadline(req.deadline);
    let base = engine.code_system(&system, version.as_deref())?;
    crate::language::check_request(req)?;
    let sups = crate::supplement::requested(req, None)?;
    let cs = crate::supplement::apply(base, &sups);
    let cs: &dyn CodeSystemProvider = &*cs;
    let Some(located) = cs.locate(&code) else {
        return Err(Error::UnknownCode {
            system: cs.versioned_url(),
            code,
        });
    };
    let id = located.id;
    let wanted = req.texts("property");
    let want = |p: &str| wanted.is_empty() || wanted.iter().any(|w| w == "*" || w == p);
    let mut out: Vec<Value> = Vec::new();
    if let Some(n) = cs.name() {
        out.push(part("name", "valueString", json!(n)));
    }
    if let Some(v) = cs.version() {
        out.push(part("version", "valueString", json!(v)));
    }
    out.push(part("system", "valueUri", json!(cs.url())));
    out.push(part("code", "valueCode", json!(cs.code(id))));
    if let Some(d) = cs.display(id) {
        out.push(part("display", "valueString", json!(d)));
    }
    if let Some(d) = cs.definition(id) {
        out.push(part("definition", "valueString", json!(d)));
    }
    let status = cs.status(id);
    out.push(part(
        "abstract",
        "valueBoolean",
        json!(status.not_selectable),
    ));
    if let Some(d) = cs.display(id) {
        let mut parts = Vec::new();
        if let Some(l) = cs.language() {
            parts.push(part("language", "valueCode", json!(l)));
        }
        parts.push(part(
            "use",
            "valueCoding",
            json!({"system": PREFERRED_FOR_LANGUAGE, "code": "preferredForLanguage", "display": "Preferred For Language"}),
        ));
        parts.push(part("value", "valueString", json!(d)));
        out.push(json!({"name": "designation", "part": parts}));
    }
    for d in cs.designations(id).iter() {
        let mut parts = Vec::new();
        if let Some(l) = &d.language {
            parts.push(part("language", "valueCode", json!(l)));
        }
        if let Some(u) = &d.use_ {
            let mut u = u.clone();
            if u.get("display").is_none()
                && let Some(c) = u.get("code").cloned()
            {
                u["display"] = c;
            }
            parts.push(part("use", "valueCoding", u));
        }
        if let Some(s) = &d.source {
            parts.push(part("source", "valueCanonical", json!(s)));
        }
        parts.push(part("value", "valueString", json!(d.value)));
        out.push(json!({"name": "designation", "part": parts}));
    }
    for s in sups
        .iter()
        .filter(|s| crate::supplement::supplements(s, base.url()))
    {
        out.push(part(
            "used-supplement",
            "valueCanonical",
            json!(s.versioned_url()),
        ));
    }
    let property = |code: &str, key: &str, value: Value, description: Option<&str>| {
        let mut parts = vec![part("code", "valueCode", json!(code))];
        if let Some(d) = description {
            parts.push(part("description", "valueString", json!(d)));
        }
        parts.push(part("value", key, value));
        json!({"name": "property", "part": parts})
    };
    for (name, related) in [("parent", cs.parents(id)), ("child", cs.children(id))] {
        if want(name) {
            for &r in related.iter() {
                out.push(property(
                    name,
                    "valueCode",
                    json!(cs.code(r)),
                    cs.display(r),
                ));
            }
        }
    }
    if want("inactive") {
        out.push(property(
            "inactive",
            "valueBoolean",
            json!(status.inactive),
            None,
        ));
    }
    for p in cs.properties(id).iter() {
        if matches!(p.code.as_str(), "parent" | "child" | "inactive") || !want(&p.code) {
            continue;
        }
        out.push(property(&p.code, &p.key, p.value.clone(), None));
    }
    Ok(json!({"resourceType": "Parameters", "parameter": out}))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_gives_hierarchy_and_properties() {
        let body = json!({"resourceType": "Parameters", "parameter": [
            {"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://cs", "name": "CS",
                "concept": [{"code": "a", "display": "A", "concept": [
                    {"code": "b", "display": "B", "property": [{"code": "kind", "valueCode": "k"}]}]}]
            }},
            {"name": "system", "valueUri": "http://cs"},
            {"name": "code", "valueCode": "b"},
        ]});
        let out = lookup(&Request::new(&body)).unwrap();
        let props: Vec<(String, String)> = out["parameter"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["name"] == "property")
            .map(|p| {
                (
                    p["part"][0]["valueCode"].to_string(),
                    p["part"].as_array().unwrap().last().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            props,
            [
                (
                    "\"parent\"".into(),
                    "{\"name\":\"value\",\"valueCode\":\"a\"}".into()
                ),
                (
                    "\"inactive\"".into(),
                    "{\"name\":\"value\",\"valueBoolean\":false}".into()
                ),
                (
                    "\"kind\"".into(),
                    "{\"name\":\"value\",\"valueCode\":\"k\"}".into()
                ),
            ]
        );
        let missing = json!({"resourceType": "Parameters", "parameter": [
            {"name": "system", "valueUri": "http://other"}, {"name": "code", "valueCode": "x"}]});
        assert_eq!(lookup(&Request::new(&missing)).unwrap_err().status(), 404);
    }
}
