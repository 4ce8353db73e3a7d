//! Code system supplements: which ones a request applies, and what they
//! (and a code system's own concept extensions) add to an expansion.
//!
//! A supplement is applied when the request names it (`useSupplement`)
//! or the value set does (the `valueset-supplement` extension); either
//! way an unknown supplement is an error ([`Error::SupplementMissing`]).
//! A language pack the request sends (a supplement whose
//! `codesystem-supplement-type` is `lang-pack`, as `tx-resource`) applies
//! without being named, as the HL7 tooling expects: it only adds
//! displays in other languages, and the client sent it to be used.
//! Applied, it adds designations (marked with their `source`),
//! properties and concept extensions to the concepts of the code system
//! it supplements ([`CodeSystem::apply_supplement`]).
//!
//! Expansions show some concept extensions as properties
//! ([`extension_properties`]: `codesystem-label` as `label`,
//! `codesystem-conceptOrder` as `order`, `itemWeight` as `weight`,
//! `structuredefinition-standards-status` as `status`) and repeat the
//! rendering ones ([`echoed_extensions`]).

use serde_json::Value;

use crate::codesystem::CodeSystem;
use crate::error::Error;
use crate::provider::CodeSystemProvider;
use crate::request::Request;
use crate::resolver::Resolver;
use crate::valueset::{ValueSet, split_canonical};

/// The extension that says what kind of supplement a code system is.
pub const SUPPLEMENT_TYPE: &str =
    "http://hl7.org/fhir/StructureDefinition/codesystem-supplement-type";

/// Whether `cs` is a language pack: a supplement of type `lang-pack`.
pub fn is_language_pack(cs: &CodeSystem) -> bool {
    cs.supplements.is_some()
        && cs
            .resource
            .get("extension")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|e| {
                e.get("url").and_then(Value::as_str) == Some(SUPPLEMENT_TYPE)
                    && e.get("valueCode").and_then(Value::as_str) == Some("lang-pack")
            })
}

/// The extension by which a value set requires a supplement.
pub const VALUESET_SUPPLEMENT: &str = "http://hl7.org/fhir/StructureDefinition/valueset-supplement";

/// The supplements a request applies: its `useSupplement`s, then those
/// the value set requires, then the language packs it sent, each once. An
/// unknown one is an error.
pub fn requested<'r>(
    req: &'r Request,
    vs: Option<&ValueSet>,
) -> Result<Vec<&'r CodeSystem>, Error> {
    let mut out: Vec<&CodeSystem> = Vec::new();
    for n in named(req, vs) {
        let sup = req
            .resolver
            .supplement(&n)
            .ok_or_else(|| Error::SupplementMissing { url: n.clone() })?;
        if !out.iter().any(|s| std::ptr::eq(*s, sup)) {
            out.push(sup);
        }
    }
    for pack in req.resolver.language_packs() {
        if !out.iter().any(|s| std::ptr::eq(*s, pack)) {
            out.push(pack);
        }
    }
    Ok(out)
}

/// The supplements the request and the value set name, as canonicals.
fn named(req: &Request, vs: Option<&ValueSet>) -> Vec<String> {
    let mut names = req.texts("useSupplement");
    if let Some(exts) = vs
        .and_then(|vs| vs.resource.get("extension"))
        .and_then(Value::as_array)
    {
        names.extend(
            exts.iter()
                .filter(|e| e.get("url").and_then(Value::as_str) == Some(VALUESET_SUPPLEMENT))
                .filter_map(|e| e.get("valueCanonical").and_then(Value::as_str))
                .map(str::to_owned),
        );
    }
    names
}

/// Whether an applied supplement is reported (`used-supplement`): a
/// language pack applied without being named is not, as tx.fhir.org does
/// not report it.
pub fn reported(req: &Request, vs: Option<&ValueSet>, sup: &CodeSystem) -> bool {
    !is_language_pack(sup)
        || named(req, vs).iter().any(|n| {
            req.resolver
                .supplement(n)
                .is_some_and(|s| std::ptr::eq(s, sup))
        })
}

/// Whether `sup` supplements the code system `url`.
pub fn supplements(sup: &CodeSystem, url: &str) -> bool {
    sup.supplements
        .as_deref()
        .is_some_and(|base| split_canonical(base).0 == url)
}

/// `cs` with those of `sups` that supplement it applied: a copy of the
/// resource, or `cs` itself when none does (or it is no resource).
pub fn apply<'a>(cs: &'a dyn CodeSystemProvider, sups: &[&CodeSystem]) -> Supplemented<'a> {
    let mine: Vec<&&CodeSystem> = sups.iter().filter(|s| supplements(s, cs.url())).collect();
    let Some(resource) = cs.resource().filter(|_| !mine.is_empty()) else {
        return Supplemented::Borrowed(cs);
    };
    let mut owned = resource.clone();
    for s in mine {
        owned.apply_supplement(s);
    }
    Supplemented::Owned(Box::new(owned))
}

/// A code system with its supplements applied ([`apply`]).
#[derive(Debug)]
pub enum Supplemented<'a> {
    Borrowed(&'a dyn CodeSystemProvider),
    Owned(Box<CodeSystem>),
}

impl<'a> std::ops::Deref for Supplemented<'a> {
    type Target = dyn CodeSystemProvider + 'a;

    fn deref(&self) -> &Self::Target {
        match self {
            Supplemented::Borrowed(cs) => *cs,
            Supplemented::Owned(cs) => &**cs,
        }
    }
}

/// The resolver with `sups` applied to the code systems they supplement;
/// `None` when there are none to apply.
pub fn resolver_with(resolver: &Resolver, sups: &[&CodeSystem]) -> Option<Resolver> {
    if sups.is_empty() {
        return None;
    }
    Some(resolver.with_supplements(sups))
}

/// An expansion property derived from a concept extension.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtProperty {
    pub code: &'static str,
    pub uri: &'static str,
    /// The `value[x]` key in the expansion (`valueString`...).
    pub key: &'static str,
    pub value: Value,
}

/// Concept extensions shown as expansion properties: extension URL,
/// property code, property URI, value key.
const AS_PROPERTY: [(&str, &str, &str, &str); 4] = [
    (
        "http://hl7.org/fhir/StructureDefinition/codesystem-label",
        "label",
        "http://hl7.org/fhir/concept-properties#label",
        "valueString",
    ),
    (
        "http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder",
        "order",
        "http://hl7.org/fhir/concept-properties#order",
        "valueDecimal",
    ),
    (
        "http://hl7.org/fhir/StructureDefinition/itemWeight",
        "weight",
        "http://hl7.org/fhir/concept-properties#itemWeight",
        "valueDecimal",
    ),
    (
        crate::codesystem::STANDARDS_STATUS,
        "status",
        "http://hl7.org/fhir/concept-properties#status",
        "valueCode",
    ),
];

/// Concept extensions an expansion repeats on the code.
const ECHOED: [&str; 2] = [
    "http://hl7.org/fhir/StructureDefinition/rendering-style",
    "http://hl7.org/fhir/StructureDefinition/rendering-xhtml",
];

/// The properties a concept's extensions stand for, in extension order.
pub fn extension_properties(extensions: &[Value]) -> Vec<ExtProperty> {
    let mut out = Vec::new();
    for e in extensions {
        let Some(url) = e.get("url").and_then(Value::as_str) else {
            continue;
        };
        let Some(&(_, code, uri, key)) = AS_PROPERTY.iter().find(|(u, ..)| *u == url) else {
            continue;
        };
        let Some((_, value)) = crate::codesystem::value_x(e) else {
            continue;
        };
        if !out.iter().any(|p: &ExtProperty| p.code == code) {
            out.push(ExtProperty {
                code,
                uri,
                key,
                value: value.clone(),
            });
        }
    }
    out
}

/// Value set concept extensions shown as expansion properties: extension
/// URL, property code, property URI, value key.
const VS_AS_PROPERTY: [(&str, &str, &str, &str); 3] = [
    (
        "http://hl7.org/fhir/StructureDefinition/itemWeight",
        "weight",
        "http://hl7.org/fhir/concept-properties#itemWeight",
        "valueDecimal",
    ),
    (
        "http://hl7.org/fhir/StructureDefinition/valueset-label",
        "label",
        "http://hl7.org/fhir/concept-properties#label",
        "valueString",
    ),
    (
        "http://hl7.org/fhir/StructureDefinition/valueset-conceptOrder",
        "order",
        "http://hl7.org/fhir/concept-properties#order",
        "valueDecimal",
    ),
];

/// The FHIR core extensions' namespace: a value set concept's other
/// core extensions are repeated in the expansion, unknown ones dropped.
const CORE: &str = "http://hl7.org/fhir/StructureDefinition/";

/// What a value set's concept extensions give its expansion entry: the
/// properties they stand for (`valueset-label`, `valueset-conceptOrder`,
/// which win over the code system's), and the other core extensions,
/// repeated as they are.
pub fn value_set_extensions(extensions: &[Value]) -> (Vec<ExtProperty>, Vec<Value>) {
    let mut props: Vec<ExtProperty> = Vec::new();
    let mut echoed = Vec::new();
    for e in extensions {
        let Some(url) = e.get("url").and_then(Value::as_str) else {
            continue;
        };
        if let Some(&(_, code, uri, key)) = VS_AS_PROPERTY.iter().find(|(u, ..)| *u == url) {
            if let Some((_, value)) = crate::codesystem::value_x(e)
                && !props.iter().any(|p| p.code == code)
            {
                props.push(ExtProperty {
                    code,
                    uri,
                    key,
                    value: value.clone(),
                });
            }
        } else if url.starts_with(CORE) {
            echoed.push(e.clone());
        }
    }
    (props, echoed)
}

/// The core extensions of a list (unknown ones are dropped).
pub fn core_extensions(extensions: &[Value]) -> Vec<Value> {
    extensions
        .iter()
        .filter(|e| {
            e.get("url")
                .and_then(Value::as_str)
                .is_some_and(|u| u.starts_with(CORE))
        })
        .cloned()
        .collect()
}

/// A value set concept's designation as an expansion shows it: with
/// its core extensions only.
pub fn value_set_designation(d: &Value) -> Value {
    let mut d = d.clone();
    if let Some(m) = d.as_object_mut()
        && let Some(exts) = m.get("extension").and_then(Value::as_array)
    {
        let kept = core_extensions(exts);
        if kept.is_empty() {
            m.remove("extension");
        } else {
            m.insert("extension".into(), Value::Array(kept));
        }
    }
    d
}

/// The status of a designation that is no longer a correct display (its
/// `standards-status` is `withdrawn`, `deprecated`, `retired` or
/// `inactive`), as the tooling names it: `inactive` or `deprecated`.
pub fn inactive_designation(d: &crate::provider::Designation) -> Option<&'static str> {
    match crate::codesystem::standards_status(&d.extensions)? {
        "retired" | "inactive" => Some("inactive"),
        "withdrawn" | "deprecated" => Some("deprecated"),
        _ => None,
    }
}

/// The `INACTIVE_DISPLAY_FOUND` list of correct displays: each quoted
/// unless it is a single word, comma-separated.
pub fn quoted_displays(displays: &[&str]) -> String {
    displays
        .iter()
        .map(|d| {
            if !d.is_empty() && d.chars().all(char::is_alphanumeric) {
                (*d).to_owned()
            } else {
                format!("\"{d}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The concept extensions an expansion repeats.
pub fn echoed_extensions(extensions: &[Value]) -> Vec<Value> {
    extensions
        .iter()
        .filter(|e| {
            e.get("url")
                .and_then(Value::as_str)
                .is_some_and(|u| ECHOED.contains(&u))
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn body(extra: Vec<Value>) -> Value {
        let mut params = vec![
            json!({"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://cs", "content": "complete",
                "concept": [{"code": "a", "display": "A", "extension": [
                    {"url": "http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder", "valueInteger": 3}
                ]}]
            }}),
            json!({"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://sup", "version": "2",
                "content": "supplement", "supplements": "http://cs",
                "concept": [{"code": "a",
                    "designation": [{"language": "nl", "value": "A-nl"}],
                    "extension": [{"url": "http://hl7.org/fhir/StructureDefinition/codesystem-label", "valueString": "a."}]}]
            }}),
        ];
        params.extend(extra);
        json!({"resourceType": "Parameters", "parameter": params})
    }

    #[test]
    fn use_supplement_applies_and_an_unknown_one_is_an_error() {
        let b = body(vec![
            json!({"name": "useSupplement", "valueCanonical": "http://sup"}),
        ]);
        let req = Request::new(b.clone());
        let sups = requested(&req, None).unwrap();
        assert_eq!(sups.len(), 1);
        let base = req.resolver.code_system("http://cs", None).unwrap();
        let cs = apply(base, &sups);
        let designations = cs.designations(0);
        let d = &designations[0];
        assert_eq!(d.value, "A-nl");
        assert_eq!(d.source.as_deref(), Some("http://sup|2"));
        let props = extension_properties(crate::provider::concept_extensions(&*cs, 0));
        let codes: Vec<&str> = props.iter().map(|p| p.code).collect();
        assert_eq!(codes, ["order", "label"]);
        assert_eq!(props[0].value, json!(3));

        let b = body(vec![
            json!({"name": "useSupplement", "valueCanonical": "http://nope"}),
        ]);
        let req = Request::new(b.clone());
        assert_eq!(
            requested(&req, None).unwrap_err(),
            Error::SupplementMissing {
                url: "http://nope".into()
            }
        );
    }

    #[test]
    fn a_language_pack_sent_applies_unnamed_and_unreported() {
        let pack = json!({"name": "tx-resource", "resource": {
            "resourceType": "CodeSystem", "url": "http://pack", "version": "1",
            "content": "supplement", "supplements": "http://cs",
            "extension": [{"url": SUPPLEMENT_TYPE, "valueCode": "lang-pack"}],
            "concept": [{"code": "a", "display": "A-pack"}]
        }});
        // Sent, not named: applied (its display, with no language of its
        // own, is a designation all the same), not reported.
        let req = Request::new(body(vec![pack.clone()]));
        let sups = requested(&req, None).unwrap();
        let urls: Vec<&str> = sups.iter().map(|s| s.url.as_str()).collect();
        assert_eq!(urls, ["http://pack"], "the plain supplement is not a pack");
        let base = req.resolver.code_system("http://cs", None).unwrap();
        let cs = apply(base, &sups);
        assert!(cs.designations(0).iter().any(|d| d.value == "A-pack"));
        assert!(!reported(&req, None, sups[0]));
        // Named, it is reported like any supplement.
        let req = Request::new(body(vec![
            pack,
            json!({"name": "useSupplement", "valueCanonical": "http://pack"}),
        ]));
        let sups = requested(&req, None).unwrap();
        assert_eq!(sups.len(), 1, "once, named or not");
        assert!(reported(&req, None, sups[0]));
    }

    #[test]
    fn a_value_set_extension_applies_its_supplement_through_the_resolver() {
        let b = body(vec![]);
        let req = Request::new(b.clone());
        let vs = ValueSet::from_json(&json!({
            "resourceType": "ValueSet", "url": "http://vs",
            "extension": [{"url": VALUESET_SUPPLEMENT, "valueCanonical": "http://sup|2"}],
            "compose": {"include": [{"system": "http://cs"}]}
        }))
        .unwrap();
        let sups = requested(&req, Some(&vs)).unwrap();
        let r = resolver_with(&req.resolver, &sups).unwrap();
        let cs = r.code_system("http://cs", None).unwrap();
        assert_eq!(cs.designations(0).len(), 1);
        assert!(resolver_with(&req.resolver, &[]).is_none());
        let (props, echoed) = value_set_extensions(&[
            json!({"url": "http://hl7.org/fhir/StructureDefinition/valueset-label", "valueString": "x."}),
            json!({"url": "http://hl7.org/fhir/StructureDefinition/valueset-deprecated", "valueBoolean": true}),
            json!({"url": "http://example.org/unknown", "valueString": "dropped"}),
        ]);
        assert_eq!(props[0].code, "label");
        assert_eq!(echoed.len(), 1);
        let d = value_set_designation(&json!({"value": "v", "extension": [
            {"url": "http://example.org/unknown", "valueString": "dropped"}]}));
        assert_eq!(d, json!({"value": "v"}));
        assert_eq!(quoted_displays(&["A b", "C"]), "\"A b\",C");
        assert_eq!(
            echoed_extensions(&[
                json!({"url": ECHOED[0], "valueString": "x"}),
                json!({"url": "http://other", "valueString": "y"})
            ])
            .len(),
            1
        );
    }
}
