//! `CodeSystem/$lookup`: a concept's display, definition, designations
//! and properties (with `parent`, `child` and `inactive` derived from the
//! hierarchy and status) as a Parameters resource.

use crate::error::Error;
use crate::parameters::{Param, Parameters, Scalar};
use crate::provider::CodeSystemProvider;
use crate::request::Request;

const PREFERRED_FOR_LANGUAGE: &str = "http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra";

/// A text `value[x]` part, owned.
fn text(name: &'static str, kind: &'static str, value: impl Into<String>) -> Param<'static> {
    Param::text(name, kind, value.into())
}

/// `$lookup` in any code system the request can see.
pub fn lookup(req: &Request) -> Result<Parameters<'static>, Error> {
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
    let engine = crate::engine::Engine::new(&req.resolver, usize::MAX, false).with_stop(req.stop());
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
    let mut out: Vec<Param<'static>> = Vec::new();
    if let Some(n) = cs.name() {
        out.push(text("name", "valueString", n));
    }
    if let Some(v) = cs.version() {
        out.push(text("version", "valueString", v));
    }
    out.push(text("system", "valueUri", cs.url()));
    out.push(text("code", "valueCode", cs.code(id)));
    if let Some(d) = cs.display(id) {
        out.push(text("display", "valueString", d));
    }
    if let Some(d) = cs.definition(id) {
        out.push(text("definition", "valueString", d));
    }
    let status = cs.status(id);
    out.push(Param::value(
        "abstract",
        "valueBoolean",
        Scalar::Bool(status.not_selectable),
    ));
    if let Some(d) = cs.display(id) {
        let mut parts = Vec::new();
        if let Some(l) = cs.language() {
            parts.push(text("language", "valueCode", l));
        }
        parts.push(Param::value(
            "use",
            "valueCoding",
            Scalar::Coding(
                PREFERRED_FOR_LANGUAGE,
                "preferredForLanguage".into(),
                Some("Preferred For Language".into()),
            ),
        ));
        parts.push(text("value", "valueString", d));
        out.push(Param::parts("designation", parts));
    }
    for d in cs.designations(id).iter() {
        let mut parts = Vec::new();
        if let Some(l) = &d.language {
            parts.push(text("language", "valueCode", l.as_str()));
        }
        if let Some(u) = &d.use_ {
            // A use coded in the code system itself, without a display,
            // is shown by its code (LOINC's `LONG_COMMON_NAME`).
            let mut u = u.clone();
            if u.get("display").is_none()
                && u.get("system").and_then(|s| s.as_str()) == Some(cs.url())
                && let Some(c) = u.get("code").cloned()
            {
                u["display"] = c;
            }
            parts.push(Param::json("use", "valueCoding", u));
        }
        if let Some(s) = &d.source {
            parts.push(text("source", "valueCanonical", s.as_str()));
        }
        parts.push(text("value", "valueString", d.value.as_str()));
        out.push(Param::parts("designation", parts));
    }
    for s in sups.iter().filter(|s| {
        crate::supplement::supplements(s, base.url()) && crate::supplement::reported(req, None, s)
    }) {
        out.push(text("used-supplement", "valueCanonical", s.versioned_url()));
    }
    let property = |code: &str, key: &str, value: Scalar<'static>, description: Option<&str>| {
        let mut parts = vec![text("code", "valueCode", code)];
        if let Some(d) = description {
            parts.push(text("description", "valueString", d));
        }
        parts.push(Param::value("value", key.to_owned(), value));
        Param::parts("property", parts)
    };
    for (name, related) in [("parent", cs.parents(id)), ("child", cs.children(id))] {
        if want(name) {
            for &r in related.iter() {
                out.push(property(
                    name,
                    "valueCode",
                    Scalar::Str(cs.code(r).into_owned().into()),
                    cs.display(r),
                ));
            }
        }
    }
    if want("inactive") {
        out.push(property(
            "inactive",
            "valueBoolean",
            Scalar::Bool(status.inactive),
            None,
        ));
    }
    // A grammar's properties are computed (UCUM's canonical unit): shown
    // when asked for, not by default.
    let computed = wanted.is_empty() && cs.grammar().is_some();
    for p in cs.properties(id).iter() {
        if matches!(p.code.as_str(), "parent" | "child" | "inactive") || !want(&p.code) || computed
        {
            continue;
        }
        out.push(property(
            &p.code,
            &p.key,
            Scalar::Json(p.value.clone()),
            None,
        ));
    }
    Ok(Parameters(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
        let out = lookup(&Request::new(body.clone())).unwrap().to_value();
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
        assert_eq!(
            lookup(&Request::new(missing.clone())).unwrap_err().status(),
            404
        );
    }
}
