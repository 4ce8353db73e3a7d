//! Dispatch to the general terminology engine (`txmap-terminology`), which
//! knows every code system the server holds — the SNOMED CT editions as
//! providers (`txmap-snomed`), the packages' and the request's
//! CodeSystems: a code system other than `http://snomed.info/sct`; a
//! value set that includes another system or imports value sets (inline,
//! a `tx-resource` matching `url`), or that only the packages hold; a
//! CodeableConcept of several codings or a bare code against a value set;
//! `$batch-validate-code`. Pure SNOMED CT requests (implicit value sets,
//! SNOMED CT composes sent with the request, post-coordinated
//! expressions, the CodeSystem operations) stay on the SNOMED CT handlers
//! until the engine answers them the same way.
//!
//! The engine reads the request as a FHIR Parameters resource: a POSTed
//! body as sent (so value types are echoed as given), a query string as
//! text parameters. It runs on the blocking pool: the request's
//! resources are parsed and indexed per request.

use std::sync::Arc;

use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use txmap_terminology::ResourceSource;

use super::metadata::SNOMED_CT;
use super::params::{ParamValue, Params, Request, Respond};
use super::{FhirVersion, fhir_json_text};
use crate::app::AppState;

/// The operations the general engine answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Lookup,
    CsValidate,
    VsValidate,
    Expand,
    /// `ConceptMap/$translate` with ConceptMaps sent as `tx-resource`s.
    Translate,
    /// `ValueSet/$batch-validate-code`, whatever the systems.
    BatchValidate,
}

fn not_snomed(system: Option<&str>) -> bool {
    system.is_some_and(|s| !s.starts_with(SNOMED_CT))
}

/// Whether a ValueSet resource needs the general engine.
fn general_value_set(vs: &Value) -> bool {
    let Some(compose) = vs.get("compose") else {
        return false;
    };
    ["include", "exclude"].into_iter().any(|k| {
        compose
            .get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|r| {
                r.get("valueSet").is_some() || not_snomed(r.get("system").and_then(Value::as_str))
            })
    })
}

/// The system a request's code names, from `system`, `coding` or the
/// first coding of `codeableConcept` (its SNOMED CT coding if it has one).
fn code_system(params: &Params) -> Option<&str> {
    params
        .0
        .iter()
        .find_map(|(name, v)| match (name.as_str(), v) {
            ("system", ParamValue::Text(s)) => Some(s.as_str()),
            ("coding", ParamValue::Coding(c)) => c.system.as_deref(),
            // A concept with a SNOMED CT coding stays on the SNOMED CT path.
            ("codeableConcept", ParamValue::CodeableConcept(cs)) => cs
                .iter()
                .find(|c| c.system.as_deref() == Some(SNOMED_CT))
                .or(cs.first())
                .and_then(|c| c.system.as_deref()),
            _ => None,
        })
}

/// Whether a CodeableConcept has more than one coding: against a value
/// set each is checked in its own system, and one good coding can make it
/// valid, which only the general engine weighs. (`CodeSystem/$validate-code`
/// of SNOMED CT checks the concept's SNOMED CT coding.)
fn several_codings(params: &Params) -> bool {
    params
        .codeable_concept("codeableConcept")
        .ok()
        .flatten()
        .is_some_and(|cs| cs.len() > 1)
}

/// Whether the request goes to the general engine.
pub fn wants(kind: Kind, params: &Params) -> bool {
    let text = |name: &str| params.text(name).ok().flatten();
    if kind == Kind::VsValidate && several_codings(params) {
        return true;
    }
    // A bare code: its system is inferred from the value set's includes.
    if kind == Kind::VsValidate
        && text("code").is_some()
        && text("system").is_none()
        && code_system(params).is_none()
    {
        return true;
    }
    match kind {
        Kind::Lookup => not_snomed(code_system(params)),
        Kind::CsValidate => not_snomed(text("url").or_else(|| code_system(params))),
        Kind::BatchValidate => true,
        Kind::Translate => {
            let has_map = params
                .resources("tx-resource")
                .into_iter()
                .any(|r| r.get("resourceType").and_then(Value::as_str) == Some("ConceptMap"));
            let system = text("sourceSystem")
                .or_else(|| text("system"))
                .or_else(|| code_system(params));
            has_map && !system.is_some_and(|s| s.starts_with(SNOMED_CT))
        }
        Kind::VsValidate | Kind::Expand => {
            if let Some(vs) = params.resources("valueSet").first() {
                return general_value_set(vs);
            }
            let Some(url) = text("url") else {
                return not_snomed(code_system(params));
            };
            if url.starts_with(SNOMED_CT)
                || txmap_snomed::valueset::implicit_value_set(url).is_some()
            {
                return false;
            }
            let found = txmap_snomed::valueset::tx_resource_value_set(params, url);
            match found {
                Some(vs) => general_value_set(vs),
                // Not sent with the request: only the general engine can
                // find it (in the loaded packages), or say it is unknown.
                None => true,
            }
        }
    }
}

use super::expand::{EXT_CONTAINS_PROPERTY, EXT_EXPANSION_PROPERTY};

/// R4 has no `expansion.property` nor `contains.property`: they become
/// the R5 cross-version extensions.
fn r4_expansion(vs: &mut Value) {
    let Some(expansion) = vs.get_mut("expansion").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(Value::Array(props)) = expansion.remove("property") {
        let ext = expansion.entry("extension").or_insert_with(|| json!([]));
        if let Value::Array(list) = ext {
            for p in props {
                let mut parts = vec![json!({"url": "code", "valueCode": p["code"]})];
                if let Some(u) = p.get("uri") {
                    parts.push(json!({"url": "uri", "valueUri": u}));
                }
                list.push(json!({"url": EXT_EXPANSION_PROPERTY, "extension": parts}));
            }
        }
    }
    fn contains(list: &mut Value) {
        let Some(items) = list.as_array_mut() else {
            return;
        };
        for c in items.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(Value::Array(props)) = c.remove("property") {
                let ext = c.entry("extension").or_insert_with(|| json!([]));
                if let Value::Array(exts) = ext {
                    for p in props {
                        let mut parts = vec![json!({"url": "code", "valueCode": p["code"]})];
                        if let Some((k, v)) = p
                            .as_object()
                            .and_then(|o| o.iter().find(|(k, _)| k.starts_with("value")))
                        {
                            parts.push(json!({"url": "value", k.clone(): v.clone()}));
                        }
                        exts.push(json!({"url": EXT_CONTAINS_PROPERTY, "extension": parts}));
                    }
                }
            }
            if let Some(nested) = c.get_mut("contains") {
                contains(nested);
            }
        }
    }
    if let Some(list) = expansion.get_mut("contains") {
        contains(list);
    }
}

/// Answers a request the general engine takes, as a heavy operation (a
/// permit, the blocking pool, a lower priority) within the call's time
/// budget and expansion limit.
pub async fn answer(state: Arc<AppState>, v: FhirVersion, kind: Kind, call: Request) -> Response {
    let external = state.packages.source(v);
    let work = move |_: &AppState| {
        let external = Some(external as Arc<dyn ResourceSource>);
        let (language, max, deadline) = (
            call.accept_language.clone(),
            call.max_expansion,
            call.deadline,
        );
        // A batch's validations are requests of their own, made like this
        // one.
        let setup = |req: &mut Request| {
            req.resolver.set_external(external.clone());
            req.accept_language.clone_from(&language);
            req.max_expansion = max;
            req.deadline = deadline;
        };
        let mut call = call;
        call.resolver.set_external(external.clone());
        // Parameters answers come from the one fast writer; the others
        // are resources as JSON trees.
        let text = |p: txmap_terminology::parameters::Parameters| p.to_json();
        Ok(match kind {
            Kind::Lookup => txmap_terminology::lookup::lookup(&call).map(text),
            Kind::CsValidate => txmap_terminology::validate::validate_code(&call, false).map(text),
            Kind::VsValidate => txmap_terminology::validate::validate_code(&call, true).map(text),
            Kind::BatchValidate => txmap_terminology::batch::batch_validate(call, setup).map(text),
            Kind::Translate => {
                txmap_terminology::translate::translate(&call, v == FhirVersion::R5).map(text)
            }
            Kind::Expand => txmap_terminology::expand::expand(
                &call,
                &super::expand::uuid(),
                &super::expand::timestamp(),
            )
            .map(|mut vs| {
                if v == FhirVersion::R4 {
                    r4_expansion(&mut vs);
                }
                super::to_fhir_json(&vs)
            }),
        })
    };
    match super::codesystem::run(state, super::codesystem::Cost::Heavy, work).await {
        Ok(Ok(json)) => fhir_json_text(StatusCode::OK, json),
        Ok(Err(e)) | Err(e) => e.response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: Value) -> Params {
        Params::from_parameters(&v).unwrap()
    }

    #[test]
    fn snomed_requests_stay_on_the_snomed_path() {
        let lookup = |system: &str| {
            params(json!({"resourceType": "Parameters", "parameter": [
                {"name": "system", "valueUri": system}, {"name": "code", "valueCode": "1"}]}))
        };
        assert!(!wants(Kind::Lookup, &lookup(SNOMED_CT)));
        assert!(wants(Kind::Lookup, &lookup("http://example.org/cs")));
        let vs = |system: &str| {
            params(json!({"resourceType": "Parameters", "parameter": [
                {"name": "url", "valueUri": "http://example.org/vs"},
                {"name": "tx-resource", "resource": {"resourceType": "ValueSet", "url": "http://example.org/vs",
                    "compose": {"include": [{"system": system}]}}}]}))
        };
        assert!(!wants(Kind::Expand, &vs(SNOMED_CT)));
        assert!(wants(Kind::Expand, &vs("http://example.org/cs")));
        let implicit = params(json!({"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": "http://snomed.info/sct?fhir_vs"},
            {"name": "system", "valueUri": SNOMED_CT}, {"name": "code", "valueCode": "1"}]}));
        assert!(!wants(Kind::VsValidate, &implicit));
        let bare = params(json!({"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": "http://snomed.info/sct?fhir_vs"},
            {"name": "code", "valueCode": "1"}]}));
        assert!(wants(Kind::VsValidate, &bare));
        let cc = |n: usize| {
            let codings: Vec<Value> = (0..n)
                .map(|i| json!({"system": SNOMED_CT, "code": i.to_string()}))
                .collect();
            params(json!({"resourceType": "Parameters", "parameter": [
                {"name": "url", "valueUri": "http://snomed.info/sct?fhir_vs"},
                {"name": "codeableConcept", "valueCodeableConcept": {"coding": codings}}]}))
        };
        assert!(!wants(Kind::VsValidate, &cc(1)));
        assert!(wants(Kind::VsValidate, &cc(2)));
        assert!(!wants(Kind::CsValidate, &cc(2)));
    }

    #[test]
    fn r4_expansions_carry_properties_as_extensions() {
        let mut vs = json!({"expansion": {
            "property": [{"code": "status", "uri": "u"}],
            "contains": [{"code": "a", "property": [{"code": "status", "valueCode": "retired"}]}],
        }});
        r4_expansion(&mut vs);
        assert_eq!(
            vs["expansion"]["extension"][0]["url"],
            EXT_EXPANSION_PROPERTY
        );
        assert_eq!(
            vs["expansion"]["contains"][0]["extension"][0]["extension"][1]["valueCode"],
            "retired"
        );
        assert!(vs["expansion"]["contains"][0].get("property").is_none());
    }
}
