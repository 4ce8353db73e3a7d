//! UCUM unit expressions: any expression UCUM's grammar and tables derive
//! is a code (`mg/dL`, `kg.m/s2`, `mg/dL{milligram per deciliter}`), its
//! display the code itself (as UCUM's users write it), with UCUM's
//! analysis — `(milligram) / (deciliter)` — as an English designation, and
//! its canonical unit (`g.m-3`) as the `canonical` property, which
//! `canonical = g` filters test.

use octofhir_ucum::{UCUM_VERSION, analyse, display_name, get_canonical_units};
use serde_json::Value;
use txmap_terminology::grammar::{Grammar, GrammarConcept};
use txmap_terminology::provider::{Designation, PropertyValue};

use crate::{MAX_CODE_LEN, UCUM};

/// The UCUM grammar.
#[derive(Clone, Copy, Debug, Default)]
pub struct Ucum;

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
    fn concept(&self, code: &str) -> Option<GrammarConcept> {
        if code.is_empty() || code.len() > MAX_CODE_LEN || code.trim() != code {
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
}
