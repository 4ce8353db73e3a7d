//! The resources that describe the server: the CapabilityStatement
//! (`GET [base]/metadata`), the TerminologyCapabilities
//! (`GET [base]/metadata?mode=terminology`) and the `$versions` answer.
//!
//! They claim what the HL7 terminology suite's `metadata` tests require
//! (`tests/capstmt.json`, `tests/capterms.json`) and the operations txmap
//! implements or is about to; nothing else. Lists are written in the order
//! the HL7 runner sorts them into before comparing. Nothing here reads the
//! clock: `date` is the release date, so the same build always describes
//! itself the same way.
//!
//! R4 and R5 differ here in two places only: `fhirVersion`, and
//! `TerminologyCapabilities.codeSystem.content`, which R5 added (1..1)
//! and R4 does not have.

use serde_json::{Value, json};

use crate::version::FhirVersion;

/// `software.name`.
pub const SOFTWARE_NAME: &str = "txmap";

/// `software.version` and the resources' `version`: the package version.
pub const SOFTWARE_VERSION: &str = env!("CARGO_PKG_VERSION");

/// `date` and `software.releaseDate`. Set with the version at each
/// release; a constant so that responses do not change with the clock.
pub const RELEASE_DATE: &str = "2026-11-30";

/// The version of the HL7 terminology tests this server is built against
/// (the suite's `tests/history.json` names its latest release "1.90"),
/// declared through the `test-version` feature.
pub const TX_TESTS_VERSION: &str = "1.9.0";

/// The CapabilityStatement every terminology server instantiates.
pub const TERMINOLOGY_SERVER: &str = "http://hl7.org/fhir/CapabilityStatement/terminology-server";

/// The SNOMED CT code system URI; every edition is a version of it.
pub const SNOMED_CT: &str = "http://snomed.info/sct";

const FEATURE: &str = "http://hl7.org/fhir/uv/application-feature/StructureDefinition/feature";
const FEATURE_TEST_VERSION: &str = "http://hl7.org/fhir/uv/tx-tests/FeatureDefinition/test-version";
const FEATURE_CODE_SYSTEM_AS_PARAMETER: &str =
    "http://hl7.org/fhir/uv/tx-ecosystem/FeatureDefinition/CodeSystemAsParameter";

/// Operation definitions: (resource type or `None` for the system level,
/// operation name, canonical URL from the FHIR specification). Sorted by
/// type, then name.
pub const OPERATIONS: [(Option<&str>, &str, &str); 7] = [
    (
        Some("CodeSystem"),
        "lookup",
        "http://hl7.org/fhir/OperationDefinition/CodeSystem-lookup",
    ),
    (
        Some("CodeSystem"),
        "subsumes",
        "http://hl7.org/fhir/OperationDefinition/CodeSystem-subsumes",
    ),
    (
        Some("CodeSystem"),
        "validate-code",
        "http://hl7.org/fhir/OperationDefinition/CodeSystem-validate-code",
    ),
    (
        Some("ConceptMap"),
        "translate",
        "http://hl7.org/fhir/OperationDefinition/ConceptMap-translate",
    ),
    (
        Some("ValueSet"),
        "expand",
        "http://hl7.org/fhir/OperationDefinition/ValueSet-expand",
    ),
    (
        Some("ValueSet"),
        "validate-code",
        "http://hl7.org/fhir/OperationDefinition/ValueSet-validate-code",
    ),
    (
        None,
        "versions",
        "http://hl7.org/fhir/OperationDefinition/CapabilityStatement-versions",
    ),
];

/// Resource types with their RESTful interactions (besides operations).
const RESOURCES: [(&str, &[&str]); 3] = [
    ("CodeSystem", &["read", "search-type"]),
    ("ConceptMap", &["read", "search-type"]),
    ("ValueSet", &["read", "search-type"]),
];

/// The search parameters of each resource type (`fhir::resources`), with
/// their FHIR types.
const SEARCH_PARAMETERS: [(&str, &str); 6] = [
    ("_id", "token"),
    ("name", "string"),
    ("status", "token"),
    ("title", "string"),
    ("url", "uri"),
    ("version", "token"),
];

/// `$expand` parameters declared in `TerminologyCapabilities.expansion`,
/// sorted by name.
pub const EXPANSION_PARAMETERS: [(&str, &str); 12] = [
    ("activeOnly", "Only include active concepts."),
    (
        "check-system-version",
        "Fail if a code system version other than this one is used.",
    ),
    ("count", "The number of codes to return (paging)."),
    ("displayLanguage", "The language of the displays returned."),
    ("excludeNested", "Return a flat list, not a hierarchy."),
    (
        "force-system-version",
        "Use this code system version, whatever the value set says.",
    ),
    (
        "includeDefinition",
        "Include the value set definition in the expansion.",
    ),
    ("includeDesignations", "Include the concepts' designations."),
    ("offset", "The index of the first code to return (paging)."),
    ("property", "A concept property to return."),
    (
        "system-version",
        "The code system version to use where the value set names none.",
    ),
    (
        "tx-resource",
        "A CodeSystem, ValueSet or ConceptMap given with the request and used in preference to stored content.",
    ),
];

/// One code system of `TerminologyCapabilities`: its URI and versions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSystemEntry {
    pub uri: String,
    pub versions: Vec<CodeSystemVersion>,
    /// Whether `$subsumes` answers for it.
    pub subsumption: bool,
}

/// One version of a code system, for `TerminologyCapabilities`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeSystemVersion {
    /// For SNOMED CT, the version URI.
    pub code: String,
    /// The version used when a request names none.
    pub is_default: bool,
}

fn feature(definition: &str, value: Value) -> Value {
    let mut value_ext = json!({ "url": "value" });
    if let (Value::Object(ext), Value::Object(v)) = (&mut value_ext, value) {
        ext.extend(v);
    }
    json!({
        "url": FEATURE,
        "extension": [
            { "url": "definition", "valueCanonical": definition },
            value_ext,
        ],
    })
}

/// The interactions a server that stores resources adds
/// (`fhir::writes`).
const WRITES: [&str; 5] = ["create", "update", "delete", "vread", "history-instance"];

/// What the server honours beyond read and search: whether it stores
/// resources (`[store] path`), and whether reads need a token.
#[derive(Clone, Copy, Debug, Default)]
pub struct Offers {
    pub writes: bool,
    pub reads_closed: bool,
}

/// `GET [base]/metadata`. `base` is where the request arrived, e.g.
/// `http://localhost:8080/r4`. The writes and history are declared only
/// where `offers` says they are honoured.
pub fn capability_statement(v: FhirVersion, base: &str, offers: Offers) -> Value {
    let resources: Vec<Value> = RESOURCES
        .iter()
        .map(|(ty, interactions)| {
            let mut r = json!({ "type": ty });
            if !interactions.is_empty() {
                let writes: &[&str] = if offers.writes { &WRITES } else { &[] };
                r["interaction"] = interactions
                    .iter()
                    .chain(writes)
                    .map(|code| json!({ "code": code }))
                    .collect();
                if offers.writes {
                    r["versioning"] = json!("versioned-update");
                    r["readHistory"] = json!(true);
                    r["updateCreate"] = json!(true);
                    r["conditionalCreate"] = json!(true);
                    r["conditionalUpdate"] = json!(false);
                    r["conditionalDelete"] = json!("not-supported");
                }
                r["searchParam"] = SEARCH_PARAMETERS
                    .iter()
                    .map(|(name, ty)| json!({ "name": name, "type": ty }))
                    .collect();
            }
            r["operation"] = operations(Some(ty));
            r
        })
        .collect();
    let mut rest = json!({
        "mode": "server",
        "resource": resources,
        "operation": operations(None),
    });
    if offers.writes || offers.reads_closed {
        let reads = if offers.reads_closed {
            "Every request needs a bearer token (Authorization: Bearer …)."
        } else {
            "Reads and operations are open."
        };
        let writes = if offers.writes {
            " Create, update and delete need a bearer token with the write scope."
        } else {
            ""
        };
        rest["security"] = json!({ "description": format!("{reads}{writes}") });
    }
    json!({
        "resourceType": "CapabilityStatement",
        "extension": [
            feature(FEATURE_TEST_VERSION, json!({ "valueCode": TX_TESTS_VERSION })),
            feature(FEATURE_CODE_SYSTEM_AS_PARAMETER, json!({ "valueBoolean": true })),
        ],
        "url": format!("{base}/metadata"),
        "version": SOFTWARE_VERSION,
        "name": "TxmapTerminologyServer",
        "title": format!("txmap FHIR {} terminology server", v.label()),
        "status": "active",
        "date": RELEASE_DATE,
        "description": "txmap: a FHIR terminology server for SNOMED CT.",
        "kind": "instance",
        "instantiates": [TERMINOLOGY_SERVER],
        "software": {
            "name": SOFTWARE_NAME,
            "version": SOFTWARE_VERSION,
            "releaseDate": RELEASE_DATE,
        },
        "implementation": {
            "description": format!("txmap, FHIR {} at {base}", v.label()),
            "url": base,
        },
        "fhirVersion": v.full(),
        "format": ["application/fhir+json"],
        "rest": [rest],
    })
}

fn operations(ty: Option<&str>) -> Value {
    OPERATIONS
        .iter()
        .filter(|(t, _, _)| *t == ty)
        .map(|(_, name, definition)| json!({ "name": name, "definition": definition }))
        .collect()
}

/// `GET [base]/metadata?mode=terminology`: every code system the
/// endpoint knows (SNOMED CT with one `version` per loaded edition
/// version, then each package code system, as
/// [`super::resources::code_systems`] lists them), and the expansion
/// parameters.
pub fn terminology_capabilities(v: FhirVersion, base: &str, systems: &[CodeSystemEntry]) -> Value {
    let mut tc = json!({
        "resourceType": "TerminologyCapabilities",
        "url": format!("{base}/metadata?mode=terminology"),
        "version": SOFTWARE_VERSION,
        "name": "TxmapTerminologyCapabilities",
        "title": format!("txmap FHIR {} terminology capabilities", v.label()),
        "status": "active",
        "date": RELEASE_DATE,
        "description": "The code systems and expansion parameters txmap supports.",
        "kind": "instance",
        "software": {
            "name": SOFTWARE_NAME,
            "version": SOFTWARE_VERSION,
        },
        "implementation": {
            "description": format!("txmap, FHIR {} at {base}", v.label()),
            "url": base,
        },
        "expansion": {
            "paging": true,
            "parameter": EXPANSION_PARAMETERS
                .iter()
                .map(|(name, doc)| json!({ "name": name, "documentation": doc }))
                .collect::<Vec<_>>(),
        },
    });
    if !systems.is_empty() {
        let list: Vec<Value> = systems
            .iter()
            .map(|system| {
                let mut cs = json!({ "uri": system.uri });
                if !system.versions.is_empty() {
                    cs["version"] = system
                        .versions
                        .iter()
                        .map(|cv| {
                            let mut e = json!({ "code": cv.code });
                            if cv.is_default {
                                e["isDefault"] = Value::Bool(true);
                            }
                            e
                        })
                        .collect();
                }
                if system.subsumption {
                    cs["subsumption"] = Value::Bool(true);
                }
                if v == FhirVersion::R5 {
                    // R5 only (1..1 there): every concept of each is served.
                    cs["content"] = Value::from("complete");
                }
                cs
            })
            .collect();
        tc["codeSystem"] = Value::Array(list);
    }
    tc
}

/// `[base]/$versions`: the one FHIR version served at this base, as
/// major.minor codes (the operation's `version` and `default` are `code`).
pub fn versions(v: FhirVersion) -> Value {
    json!({
        "resourceType": "Parameters",
        "parameter": [
            { "name": "version", "valueCode": v.short() },
            { "name": "default", "valueCode": v.short() },
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_in_the_order_the_runner_sorts_them() {
        let names: Vec<&str> = EXPANSION_PARAMETERS.iter().map(|p| p.0).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
        let ops: Vec<(Option<&str>, &str)> = OPERATIONS.iter().map(|o| (o.0, o.1)).collect();
        let mut sorted = ops.clone();
        sorted.sort_unstable_by_key(|(t, n)| (t.is_none(), *t, *n));
        assert_eq!(ops, sorted);
    }

    #[test]
    fn terminology_capabilities_differ_by_version_only_in_content() {
        let systems = [
            CodeSystemEntry {
                uri: SNOMED_CT.into(),
                versions: vec![CodeSystemVersion {
                    code: "http://snomed.info/sct/900000000000207008/version/20250201".into(),
                    is_default: true,
                }],
                subsumption: true,
            },
            CodeSystemEntry {
                uri: "http://terminology.hl7.org/CodeSystem/v3-RoleCode".into(),
                versions: vec![CodeSystemVersion {
                    code: "3.0.0".into(),
                    is_default: true,
                }],
                subsumption: false,
            },
        ];
        let r4 = terminology_capabilities(FhirVersion::R4, "http://x/r4", &systems);
        let r5 = terminology_capabilities(FhirVersion::R5, "http://x/r4", &systems);
        assert!(r4["codeSystem"][0].get("content").is_none());
        assert_eq!(r5["codeSystem"][0]["content"], "complete");
        assert_eq!(r4["codeSystem"][0]["version"][0]["isDefault"], true);
        assert_eq!(r4["codeSystem"][1]["uri"], systems[1].uri);
        assert!(r4["codeSystem"][1].get("subsumption").is_none());
        let none = terminology_capabilities(FhirVersion::R4, "http://x/r4", &[]);
        assert!(none.get("codeSystem").is_none());
    }
}
