//! UCUM unit expressions: any expression UCUM's grammar and tables derive
//! is a code (`mg/dL`, `kg.m/s2`, `mg/dL{milligram}`), its display the
//! code itself (as UCUM's users write it), with UCUM's analysis —
//! `(milligram) / (deciliter)` — as an English designation, and its
//! canonical unit (`g.m-3`) as the `canonical` property, which
//! `canonical = g` filters test.
//!
//! FHIR's `ucum-common` value set names about 800 units in common use,
//! each with an English name (`milligram per deciliter`): those are the
//! codes an expansion of all of UCUM lists ([`Grammar::common_codes`]),
//! and a code's name there is a designation of it (a synonym, as
//! tx.fhir.org marks it). A code that is not one is explained the way
//! tx.fhir.org's UCUM library words it: `Error processing unit 'kgXX': The
//! unit 'kgXX' is unknown at character 1`.

use std::collections::HashMap;

use octofhir_ucum::{ErrorKind, UCUM_VERSION, analyse, display_name, get_canonical_units};
use serde_json::{Value, json};
use txmap_terminology::grammar::{Grammar, GrammarConcept};
use txmap_terminology::provider::{Designation, PropertyValue};
use txmap_terminology::valueset::{FilterDef, ValueSet};

use crate::{MAX_CODE_LEN, UCUM};

/// FHIR R5's `ucum-common` value set (`data/README.md`).
const COMMON: &str = include_str!("../data/ucum-common.json");

/// The UCUM grammar, with FHIR's common units.
#[derive(Debug)]
pub struct Ucum {
    common: Option<ValueSet>,
    /// The common units' English names, by code (the first name of a code
    /// listed twice).
    names: HashMap<String, String>,
}

impl Ucum {
    /// UCUM with the common units compiled into the binary.
    pub fn embedded() -> Ucum {
        let common = crate::embedded_value_set(COMMON);
        let mut names = HashMap::new();
        for rule in common.iter().flat_map(|vs| &vs.compose.include) {
            for c in &rule.concepts {
                if let Some(d) = &c.display {
                    names.entry(c.code.clone()).or_insert_with(|| d.clone());
                }
            }
        }
        Ucum { common, names }
    }
}

impl Grammar for Ucum {
    fn url(&self) -> &str {
        UCUM
    }
    fn version(&self) -> Option<&str> {
        Some(UCUM_VERSION)
    }
    fn name(&self) -> &str {
        "UCUM"
    }
    fn common_codes(&self) -> Option<&ValueSet> {
        self.common.as_ref()
    }
    fn concept(&self, code: &str) -> Option<GrammarConcept> {
        if !plausible(code) {
            return None;
        }
        // `analyse` parses (with a nesting limit) and evaluates against the
        // tables, without the spelling suggestions `validate` computes.
        analyse(code).ok()?;
        let mut designations = Vec::new();
        if let Ok(analysis) = display_name(code) {
            designations.push(Designation {
                language: Some("en".to_owned()),
                use_: Some(crate::preferred_use()),
                value: analysis,
                source: None,
                extensions: Vec::new(),
            });
        }
        if let Some(name) = self.names.get(code) {
            designations.push(Designation {
                language: Some("en".to_owned()),
                use_: Some(
                    json!({"system": "http://snomed.info/sct", "code": "900000000000013009"}),
                ),
                value: name.clone(),
                source: None,
                extensions: Vec::new(),
            });
        }
        let mut properties = Vec::new();
        if let Ok(canonical) = get_canonical_units(code) {
            properties.push(PropertyValue {
                code: "canonical".to_owned(),
                key: "valueString".to_owned(),
                value: Value::String(canonical.unit),
            });
        }
        Some(GrammarConcept {
            code: code.to_owned(),
            display: code.to_owned(),
            designations,
            properties,
            deprecated: false,
        })
    }
    fn why_filtered_out(&self, code: &str, filter: &FilterDef) -> Option<String> {
        let wanted = filter.value.as_deref()?;
        if filter.property != "canonical" || filter.op != "=" || !plausible(code) {
            return None;
        }
        let canonical = get_canonical_units(code).ok()?.unit;
        (canonical != wanted).then(|| {
            format!("Code {code} has canonical form {canonical}, not {wanted} as required")
        })
    }
    fn why_not(&self, code: &str) -> Option<String> {
        if !plausible(code) {
            return None;
        }
        let e = analyse(code).err()?;
        let reason = match &e.kind {
            ErrorKind::UnitNotFound {
                unit,
                position: Some(at),
                ..
            } => format!("The unit '{unit}' is unknown at character {}", at + 1),
            _ => e.message,
        };
        Some(format!("Error processing unit '{code}': {reason}"))
    }
}

/// Whether `code` is worth parsing: not empty, not padded, and within
/// [`MAX_CODE_LEN`].
fn plausible(code: &str) -> bool {
    !code.is_empty() && code.len() <= MAX_CODE_LEN && code.trim() == code
}
