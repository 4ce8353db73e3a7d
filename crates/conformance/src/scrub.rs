//! What the runner removes from an actual response before comparing, as
//! `TxTesterScrubbers` does with `tight = false` (the CLI's setting).
//!
//! Servers differ in narrative, meta, diagnostics and extensions of their
//! own; the suite does not judge those, so the runner deletes them:
//!
//! * ValueSet and OperationOutcome: `text` and `meta` go, and on every
//!   element (primitive `_x` holders and contained resources included) each
//!   extension with an absolute URL outside [`MANAGED_EXTENSIONS`] goes,
//!   except below `ValueSet.compose`, whose children are not visited;
//!   `modifierExtension` is never touched;
//! * Parameters: `meta` and top-level `diagnostics` parameters go, and
//!   resource-valued parameters are scrubbed by their type (parts are not);
//! * OperationOutcome, after the above: issues with `diagnostics` but no
//!   `details` go, and remaining `diagnostics` go unless they mention
//!   `x-request-id`.

use crate::json::Json;

/// Extension URLs the runner keeps (`isManagedExtension`).
pub const MANAGED_EXTENSIONS: &[&str] = &[
    "http://hl7.org/fhir/StructureDefinition/codesystem-alternate",
    "http://hl7.org/fhir/StructureDefinition/codesystem-conceptOrder",
    "http://hl7.org/fhir/StructureDefinition/codesystem-label",
    "http://hl7.org/fhir/StructureDefinition/coding-sctdescid",
    "http://hl7.org/fhir/StructureDefinition/itemWeight",
    "http://hl7.org/fhir/StructureDefinition/rendering-style",
    "http://hl7.org/fhir/StructureDefinition/rendering-xhtml",
    "http://hl7.org/fhir/StructureDefinition/translation",
    "http://hl7.org/fhir/StructureDefinition/valueset-concept-definition",
    "http://hl7.org/fhir/StructureDefinition/valueset-conceptOrder",
    "http://hl7.org/fhir/StructureDefinition/valueset-deprecated",
    "http://hl7.org/fhir/StructureDefinition/valueset-label",
    "http://hl7.org/fhir/StructureDefinition/valueset-supplement",
    "http://hl7.org/fhir/StructureDefinition/valueset-unclosed",
    "http://hl7.org/fhir/StructureDefinition/valueset-unclosed-reason",
    "http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id",
    "http://hl7.org/fhir/StructureDefinition/alternate-code-use",
    "http://hl7.org/fhir/StructureDefinition/alternate-code-status",
    "http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status",
    "http://hl7.org/fhir/test/CodeSystem/de-multi",
    "http://hl7.org/fhir/test/CodeSystem/en-multi",
    "http://hl7.org/fhir/test/StructureDefinition/unknown-extension-1",
    "http://hl7.org/fhir/test/StructureDefinition/unknown-extension-3",
    "http://hl7.org/fhir/test/StructureDefinition/unknown-extension-4",
    "http://hl7.org/fhir/test/StructureDefinition/unknown-extension-5",
    "http://hl7.org/fhir/test/ValueSet/extensions-bad-supplement",
    "http://hl7.org/fhir/test/ValueSet/simple-all",
    "http://hl7.org/fhir/test/ValueSet/simple-enumerated",
    "http://hl7.org/fhir/test/ValueSet/simple-filter-isa",
];

/// Java's `Utilities.isAbsoluteUrl`, roughly: a scheme we know, or
/// anything with `://`.
fn is_absolute_url(url: &str) -> bool {
    ["http:", "https:", "urn:", "file:", "ftp:", "mailto:"]
        .iter()
        .any(|p| url.starts_with(p))
        || url.contains("://")
}

fn is_managed(ext: &Json) -> bool {
    match ext.get("url").and_then(Json::as_str) {
        Some(url) => !is_absolute_url(url) || MANAGED_EXTENSIONS.contains(&url),
        // No url: `isAbsoluteUrl(null)` is false, so it is kept.
        None => true,
    }
}

/// Removes unmanaged extensions from this element and everything below it,
/// not descending below `ValueSet.compose`.
fn scrub_extensions(v: &mut Json) {
    match v {
        Json::Array(a) => a.iter_mut().for_each(scrub_extensions),
        Json::Object(o) => {
            let is_vs = o.get("resourceType").and_then(Json::as_str) == Some("ValueSet");
            if let Some(Json::Array(exts)) = o.get_mut("extension") {
                exts.retain(is_managed);
            }
            for (k, child) in o.iter_mut() {
                if is_vs && k == "compose" {
                    // The compose element's own extensions are scrubbed,
                    // its children are not visited.
                    if let Some(Json::Array(exts)) = child.get_mut("extension") {
                        exts.retain(is_managed);
                    }
                } else {
                    scrub_extensions(child);
                }
            }
        }
        _ => {}
    }
}

/// `scrubDR`: text and meta at the root, unmanaged extensions everywhere.
pub fn scrub_domain_resource(r: &mut Json) {
    if let Some(o) = r.as_object_mut() {
        o.remove("text");
        o.remove("meta");
    }
    scrub_extensions(r);
}

/// `scrubVS`.
pub fn scrub_value_set(vs: &mut Json) {
    scrub_domain_resource(vs);
}

/// `scrubOO`: the DomainResource scrub, then the diagnostics rules.
pub fn scrub_operation_outcome(oo: &mut Json) {
    scrub_domain_resource(oo);
    if let Some(Json::Array(issues)) = oo.get_mut("issue") {
        issues.retain(|i| !(i.get("diagnostics").is_some() && i.get("details").is_none()));
        for i in issues.iter_mut() {
            let keep = i
                .get("diagnostics")
                .and_then(Json::as_str)
                .is_some_and(|d| d.contains("x-request-id"));
            if !keep && let Some(o) = i.as_object_mut() {
                o.remove("diagnostics");
            }
        }
    }
}

/// `scrubParams`.
pub fn scrub_parameters(p: &mut Json) {
    let Some(o) = p.as_object_mut() else { return };
    o.remove("meta");
    if let Some(Json::Array(params)) = o.get_mut("parameter") {
        params.retain(|x| x.get("name").and_then(Json::as_str) != Some("diagnostics"));
        for x in params.iter_mut() {
            if let Some(r) = x.get_mut("resource") {
                scrub_resource(r);
            }
        }
    }
}

/// Scrubs a resource by its type; other types are left alone.
pub fn scrub_resource(r: &mut Json) {
    match r.resource_type() {
        Some("ValueSet") => scrub_value_set(r),
        Some("OperationOutcome") => scrub_operation_outcome(r),
        Some("Parameters") => scrub_parameters(r),
        _ => {}
    }
}

/// Removes only the narrative (the cs-validate-code error path).
pub fn remove_text(r: &mut Json) {
    if let Some(o) = r.as_object_mut() {
        o.remove("text");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn j(s: &str) -> Json {
        Json::parse(s).unwrap()
    }

    #[test]
    fn value_set_extensions() {
        let mut vs = j(r#"{"resourceType":"ValueSet","text":{"div":"x"},"meta":{},
            "extension":[{"url":"http://x.org/ours"},{"url":"http://hl7.org/fhir/StructureDefinition/valueset-supplement"},{"url":"local"}],
            "compose":{"extension":[{"url":"http://x.org/a"}],"include":[{"extension":[{"url":"http://x.org/kept"}]}]},
            "expansion":{"contains":[{"code":"a","_display":{"extension":[{"url":"http://x.org/gone"}]},"modifierExtension":[{"url":"http://x.org/m"}]}]}}"#);
        scrub_value_set(&mut vs);
        assert_eq!(
            vs.to_compact(),
            r#"{"resourceType":"ValueSet","extension":[{"url":"http://hl7.org/fhir/StructureDefinition/valueset-supplement"},{"url":"local"}],"compose":{"extension":[],"include":[{"extension":[{"url":"http://x.org/kept"}]}]},"expansion":{"contains":[{"code":"a","_display":{"extension":[]},"modifierExtension":[{"url":"http://x.org/m"}]}]}}"#
        );
    }

    #[test]
    fn outcomes_and_parameters() {
        let mut p = j(r#"{"resourceType":"Parameters","meta":{},"parameter":[
            {"name":"diagnostics","valueString":"x"},
            {"name":"issues","resource":{"resourceType":"OperationOutcome","issue":[
                {"severity":"error","diagnostics":"only diagnostics"},
                {"severity":"error","details":{"text":"t"},"diagnostics":"dropped"},
                {"severity":"error","details":{"text":"t"},"diagnostics":"see x-request-id"}]}},
            {"name":"nested","part":[{"name":"r","resource":{"resourceType":"ValueSet","meta":{}}}]}]}"#);
        scrub_parameters(&mut p);
        assert_eq!(
            p.to_compact(),
            r#"{"resourceType":"Parameters","parameter":[{"name":"issues","resource":{"resourceType":"OperationOutcome","issue":[{"severity":"error","details":{"text":"t"}},{"severity":"error","details":{"text":"t"},"diagnostics":"see x-request-id"}]}},{"name":"nested","part":[{"name":"r","resource":{"resourceType":"ValueSet","meta":{}}}]}]}"#
        );
    }
}
