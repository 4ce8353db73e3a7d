//! A FHIR ValueSet resource's definition: its identity and its compose
//! (include and exclude rules by system and version, with concept lists,
//! filters and imported value sets), read from R4 or R5 JSON. R4 carries
//! the R5-only filter operators (`child-of`, `descendent-leaf`) as an
//! extension on `_op`; both shapes give the same [`FilterDef`].

use serde_json::Value;

/// The extension that carries an R5 filter operator in R4.
const R5_FILTER_OP: &str =
    "http://hl7.org/fhir/5.0/StructureDefinition/extension-ValueSet.compose.include.filter.op";

const DEPRECATED_EXT: &str = "http://hl7.org/fhir/StructureDefinition/valueset-deprecated";

/// The extension giving a resource's or element's standards status.
pub const STANDARDS_STATUS: &str =
    "http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status";

/// Why a value set deserves a caution when used: its standards status
/// (`deprecated`, `withdrawn`).
pub fn value_set_caution(resource: &Value) -> Option<&str> {
    resource
        .get("extension")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .find(|e| e.get("url").and_then(Value::as_str) == Some(STANDARDS_STATUS))
        .and_then(|e| e.get("valueCode").and_then(Value::as_str))
        .filter(|s| matches!(*s, "deprecated" | "withdrawn"))
}

/// Why a resource deserves a caution when used: its standards status
/// (`deprecated`, `withdrawn`), else `experimental`, else `draft` (an
/// experimental draft is reported experimental, as tx.fhir.org does for
/// FHIR's own `ucum-common`).
pub fn status_caution(resource: &Value) -> Option<&str> {
    value_set_caution(resource)
        .or_else(|| {
            (resource.get("experimental").and_then(Value::as_bool) == Some(true))
                .then_some("experimental")
        })
        .or_else(|| {
            (resource.get("status").and_then(Value::as_str) == Some("draft")).then_some("draft")
        })
}

/// A ValueSet resource.
#[derive(Clone, Debug)]
pub struct ValueSet {
    pub id: Option<String>,
    pub url: Option<String>,
    pub version: Option<String>,
    pub status: Option<String>,
    pub experimental: bool,
    pub compose: Compose,
    /// The resource as given, echoed in expansions.
    pub resource: Value,
    /// Contained value sets, imported as `#id`.
    pub contained: Vec<ValueSet>,
}

/// `ValueSet.compose`.
#[derive(Clone, Debug, Default)]
pub struct Compose {
    pub include: Vec<Rule>,
    pub exclude: Vec<Rule>,
    /// `compose.inactive`: whether inactive codes are members (default
    /// yes).
    pub inactive: Option<bool>,
}

/// One include or exclude.
#[derive(Clone, Debug, Default)]
pub struct Rule {
    pub system: Option<String>,
    pub version: Option<String>,
    pub concepts: Vec<RuleConcept>,
    pub filters: Vec<FilterDef>,
    /// Canonical URLs of imported value sets (`url` or `url|version`).
    pub value_sets: Vec<String>,
}

/// An enumerated concept of a rule.
#[derive(Clone, Debug, Default)]
pub struct RuleConcept {
    pub code: String,
    pub display: Option<String>,
    /// The concept's designations, as JSON.
    pub designations: Vec<Value>,
    /// The concept's extensions (`valueset-deprecated`...), as JSON.
    pub extensions: Vec<Value>,
}

/// A filter as written: `property`, `op`, `value`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FilterDef {
    pub property: String,
    pub op: String,
    pub value: Option<String>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

impl ValueSet {
    /// Reads a ValueSet resource; `None` when it is not one.
    pub fn from_json(v: &Value) -> Option<ValueSet> {
        if v.get("resourceType").and_then(Value::as_str) != Some("ValueSet") {
            return None;
        }
        let compose = v.get("compose");
        let rules = |key: &str| -> Vec<Rule> {
            compose
                .and_then(|c| c.get(key))
                .and_then(Value::as_array)
                .map(|a| a.iter().map(rule).collect())
                .unwrap_or_default()
        };
        Some(ValueSet {
            id: text(v, "id"),
            url: text(v, "url"),
            version: text(v, "version"),
            status: text(v, "status"),
            experimental: v.get("experimental").and_then(Value::as_bool) == Some(true),
            compose: Compose {
                include: rules("include"),
                exclude: rules("exclude"),
                inactive: compose
                    .and_then(|c| c.get("inactive"))
                    .and_then(Value::as_bool),
            },
            resource: v.clone(),
            contained: v
                .get("contained")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(ValueSet::from_json).collect())
                .unwrap_or_default(),
        })
    }

    /// A parameter the value set sets for its expansions
    /// (`valueset-expansion-parameter` on the compose).
    pub fn expansion_parameter(&self, name: &str) -> Option<String> {
        self.resource
            .get("compose")?
            .get("extension")?
            .as_array()?
            .iter()
            .filter(|e| {
                e.get("url").and_then(Value::as_str)
                    == Some("http://hl7.org/fhir/StructureDefinition/valueset-expansion-parameter")
            })
            .find_map(|e| {
                let parts = e.get("extension")?.as_array()?;
                let part = |n: &str| {
                    parts
                        .iter()
                        .find(|p| p.get("url").and_then(Value::as_str) == Some(n))
                };
                if part("name")?.get("valueCode").and_then(Value::as_str) != Some(name) {
                    return None;
                }
                crate::codesystem::value_x(part("value")?)
                    .and_then(|(_, v)| v.as_str())
                    .map(str::to_owned)
            })
    }

    /// A contained value set by `#id`.
    pub fn contained(&self, reference: &str) -> Option<&ValueSet> {
        let id = reference.strip_prefix('#')?;
        self.contained
            .iter()
            .find(|vs| vs.id.as_deref() == Some(id))
    }

    /// Whether a concept listed in the compose is marked deprecated
    /// there (`valueset-deprecated` or a standards status).
    pub fn concept_deprecated(&self, system: &str, code: &str) -> bool {
        self.compose
            .include
            .iter()
            .filter(|r| r.system.as_deref() == Some(system))
            .flat_map(|r| &r.concepts)
            .filter(|c| c.code == code)
            .flat_map(|c| &c.extensions)
            .any(|e| {
                let url = e.get("url").and_then(Value::as_str).unwrap_or_default();
                (url == DEPRECATED_EXT
                    && (e.get("valueCode").and_then(Value::as_str) == Some("true")
                        || e.get("valueBoolean").and_then(Value::as_bool) == Some(true)))
                    || (url == STANDARDS_STATUS
                        && e.get("valueCode").and_then(Value::as_str) == Some("deprecated"))
            })
    }

    /// `url|version` (or whichever is known), as messages name it.
    pub fn versioned_url(&self) -> String {
        match (&self.url, &self.version) {
            (Some(u), Some(v)) => format!("{u}|{v}"),
            (Some(u), None) => u.clone(),
            (None, _) => String::from("??"),
        }
    }

    /// The code systems the compose names, each once.
    pub fn systems(&self) -> impl Iterator<Item = &str> {
        self.compose
            .include
            .iter()
            .chain(&self.compose.exclude)
            .filter_map(|r| r.system.as_deref())
    }

    /// Whether the compose imports other value sets.
    pub fn has_imports(&self) -> bool {
        self.compose
            .include
            .iter()
            .chain(&self.compose.exclude)
            .any(|r| !r.value_sets.is_empty())
    }
}

fn rule(v: &Value) -> Rule {
    Rule {
        system: text(v, "system"),
        version: text(v, "version"),
        concepts: v
            .get("concept")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|c| {
                        Some(RuleConcept {
                            code: text(c, "code")?,
                            display: text(c, "display"),
                            designations: c
                                .get("designation")
                                .and_then(Value::as_array)
                                .cloned()
                                .unwrap_or_default(),
                            extensions: c
                                .get("extension")
                                .and_then(Value::as_array)
                                .cloned()
                                .unwrap_or_default(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default(),
        filters: v
            .get("filter")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(filter).collect())
            .unwrap_or_default(),
        value_sets: v
            .get("valueSet")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default(),
    }
}

fn filter(v: &Value) -> FilterDef {
    let op = text(v, "op").or_else(|| {
        v.get("_op")?
            .get("extension")?
            .as_array()?
            .iter()
            .find(|e| e.get("url").and_then(Value::as_str) == Some(R5_FILTER_OP))
            .and_then(|e| text(e, "valueCode"))
    });
    FilterDef {
        property: text(v, "property").unwrap_or_default(),
        op: op.unwrap_or_default(),
        value: text(v, "value"),
    }
}

/// Splits a canonical `url|version`.
pub fn split_canonical(c: &str) -> (&str, Option<&str>) {
    match c.split_once('|') {
        Some((u, v)) => (u, Some(v)),
        None => (c, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn r4_filter_operators_come_from_the_extension() {
        let vs = ValueSet::from_json(&json!({
            "resourceType": "ValueSet", "url": "http://vs", "version": "1",
            "compose": {"include": [{"system": "http://cs", "filter": [
                {"property": "concept", "_op": {"extension": [{"url": R5_FILTER_OP, "valueCode": "child-of"}]}, "value": "a"}
            ]}, {"valueSet": ["http://other|2"]}]}
        }))
        .unwrap();
        assert_eq!(vs.compose.include[0].filters[0].op, "child-of");
        assert!(vs.has_imports());
        assert_eq!(vs.versioned_url(), "http://vs|1");
        assert_eq!(
            split_canonical("http://other|2"),
            ("http://other", Some("2"))
        );
    }
}
