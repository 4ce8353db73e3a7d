//! Value set filters over any [`CodeSystemProvider`]: a [`FilterDef`] is
//! compiled once per request (its concept found, its regex built, its
//! value list split) and then tests concepts one at a time, so membership
//! never enumerates the code system and an expansion is one pass over it.
//!
//! Hierarchy operators take `concept` or `code` as the property; the
//! others compare a concept property's value as text, where `code`,
//! `display`, `inactive` and `notSelectable` are answered from the concept
//! itself when it has no such property.

use regex::Regex;

use crate::error::Error;
use crate::provider::{CodeSystemProvider, ConceptId};
use crate::valueset::FilterDef;

/// A compiled filter.
#[derive(Clone, Debug)]
pub enum Filter {
    /// `is-a`: the concept or a descendant.
    IsA(ConceptId),
    /// `descendent-of`: a descendant, not the concept.
    DescendentOf(ConceptId),
    /// `is-not-a`: neither the concept nor a descendant.
    IsNotA(ConceptId),
    /// `child-of`: a direct child.
    ChildOf(ConceptId),
    /// `descendent-leaf`: a descendant without children.
    DescendentLeaf(ConceptId),
    /// `generalizes`: the concept or an ancestor.
    Generalizes(ConceptId),
    /// A hierarchy filter on a code the system does not have.
    Nothing,
    /// `is-not-a` on an unknown code: everything.
    Everything,
    /// `=`, `in` (several values), `not-in` (negated).
    Values {
        property: String,
        values: Vec<String>,
        negate: bool,
    },
    Regex {
        property: String,
        re: Regex,
    },
    Exists {
        property: String,
        exists: bool,
    },
}

impl Filter {
    /// Compiles `def` for `cs`.
    pub fn compile(cs: &dyn CodeSystemProvider, def: &FilterDef) -> Result<Filter, Error> {
        let Some(value) = def.value.as_deref() else {
            return Err(Error::FilterWithoutValue {
                system: cs.url().to_owned(),
                property: def.property.clone(),
                op: def.op.clone(),
            });
        };
        let hierarchy = matches!(def.property.as_str(), "concept" | "code");
        let concept = || cs.locate(value).map(|l| l.id);
        let h = |make: fn(ConceptId) -> Filter| Ok(concept().map_or(Filter::Nothing, make));
        match def.op.as_str() {
            "is-a" if hierarchy => h(Filter::IsA),
            "descendent-of" if hierarchy => h(Filter::DescendentOf),
            "is-not-a" if hierarchy => Ok(concept().map_or(Filter::Everything, Filter::IsNotA)),
            "child-of" if hierarchy => h(Filter::ChildOf),
            "descendent-leaf" if hierarchy => h(Filter::DescendentLeaf),
            "generalizes" if hierarchy => h(Filter::Generalizes),
            "=" => Ok(Filter::Values {
                property: def.property.clone(),
                values: vec![value.to_owned()],
                negate: false,
            }),
            "in" | "not-in" => Ok(Filter::Values {
                property: def.property.clone(),
                values: value.split(',').map(|s| s.trim().to_owned()).collect(),
                negate: def.op == "not-in",
            }),
            "regex" => {
                let re = Regex::new(&format!("^(?:{value})$")).map_err(|e| {
                    Error::Invalid(format!("The regex '{value}' is not valid: {e}"))
                })?;
                Ok(Filter::Regex {
                    property: def.property.clone(),
                    re,
                })
            }
            "exists" => Ok(Filter::Exists {
                property: def.property.clone(),
                exists: value == "true",
            }),
            op => Err(Error::UnsupportedFilter {
                system: cs.url().to_owned(),
                property: def.property.clone(),
                op: op.to_owned(),
            }),
        }
    }

    /// Whether concept `id` passes.
    pub fn matches(&self, cs: &dyn CodeSystemProvider, id: ConceptId) -> bool {
        match self {
            Filter::IsA(c) => cs.subsumed_by(id, *c),
            Filter::DescendentOf(c) => id != *c && cs.subsumed_by(id, *c),
            Filter::IsNotA(c) => !cs.subsumed_by(id, *c),
            Filter::ChildOf(c) => cs.parents(id).contains(c),
            Filter::DescendentLeaf(c) => {
                id != *c && cs.children(id).is_empty() && cs.subsumed_by(id, *c)
            }
            Filter::Generalizes(c) => cs.subsumed_by(*c, id),
            Filter::Nothing => false,
            Filter::Everything => true,
            Filter::Values {
                property,
                values,
                negate,
            } => {
                let found = property_texts(cs, id, property)
                    .iter()
                    .any(|t| values.iter().any(|v| v == t));
                found != *negate
            }
            Filter::Regex { property, re } => property_texts(cs, id, property)
                .iter()
                .any(|t| re.is_match(t)),
            Filter::Exists { property, exists } => {
                property_texts(cs, id, property).is_empty() != *exists
            }
        }
    }

    /// The concepts that can pass, when the filter narrows them down
    /// cheaply (a hierarchy below a concept); `None` means test them all.
    pub fn candidates(&self, cs: &dyn CodeSystemProvider) -> Option<Vec<ConceptId>> {
        match self {
            Filter::IsA(c) => {
                let mut v = vec![*c];
                v.extend(cs.descendants(*c));
                Some(v)
            }
            Filter::DescendentOf(c) | Filter::DescendentLeaf(c) => Some(cs.descendants(*c)),
            Filter::ChildOf(c) => Some(cs.children(*c).to_vec()),
            Filter::Nothing => Some(Vec::new()),
            _ => None,
        }
    }
}

/// A concept's values of `property` as text.
fn property_texts(cs: &dyn CodeSystemProvider, id: ConceptId, property: &str) -> Vec<String> {
    let mut out: Vec<String> = cs
        .properties(id)
        .iter()
        .filter(|p| p.code == property)
        .filter_map(|p| p.text().map(|t| t.into_owned()))
        .collect();
    if out.is_empty() {
        match property {
            "code" | "concept" => out.push(cs.code(id).into_owned()),
            "display" => out.extend(cs.display(id).map(str::to_owned)),
            "inactive" => out.push(cs.status(id).inactive.to_string()),
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codesystem::CodeSystem;
    use serde_json::json;

    fn cs() -> CodeSystem {
        CodeSystem::from_json(&json!({
            "resourceType": "CodeSystem", "url": "http://x",
            "concept": [
                {"code": "a", "property": [{"code": "kind", "valueCode": "k1"}], "concept": [
                    {"code": "b", "concept": [{"code": "c"}]},
                    {"code": "d", "property": [{"code": "kind", "valueCode": "k2"}]},
                ]},
                {"code": "e"},
            ]
        }))
        .unwrap()
    }

    fn run(cs: &CodeSystem, property: &str, op: &str, value: &str) -> Vec<String> {
        let f = Filter::compile(
            cs,
            &FilterDef {
                property: property.into(),
                op: op.into(),
                value: Some(value.into()),
            },
        )
        .unwrap();
        cs.all()
            .into_iter()
            .filter(|&id| f.matches(cs, id))
            .map(|id| cs.code(id).into_owned())
            .collect()
    }

    #[test]
    fn hierarchy_filters() {
        let cs = cs();
        assert_eq!(run(&cs, "concept", "is-a", "a"), ["a", "b", "c", "d"]);
        assert_eq!(run(&cs, "concept", "descendent-of", "a"), ["b", "c", "d"]);
        assert_eq!(run(&cs, "concept", "is-not-a", "b"), ["a", "d", "e"]);
        assert_eq!(run(&cs, "concept", "child-of", "a"), ["b", "d"]);
        assert_eq!(run(&cs, "concept", "descendent-leaf", "a"), ["c", "d"]);
        assert_eq!(run(&cs, "concept", "generalizes", "c"), ["a", "b", "c"]);
        assert!(run(&cs, "concept", "is-a", "zz").is_empty());
    }

    #[test]
    fn property_filters() {
        let cs = cs();
        assert_eq!(run(&cs, "kind", "=", "k2"), ["d"]);
        assert_eq!(run(&cs, "kind", "in", "k1,k2"), ["a", "d"]);
        assert_eq!(run(&cs, "kind", "not-in", "k1"), ["b", "c", "d", "e"]);
        assert_eq!(run(&cs, "code", "regex", "[a-c]"), ["a", "b", "c"]);
        assert_eq!(run(&cs, "kind", "exists", "true"), ["a", "d"]);
        let missing = Filter::compile(
            &cs,
            &FilterDef {
                property: "concept".into(),
                op: "is-a".into(),
                value: None,
            },
        );
        assert_eq!(
            missing.unwrap_err().to_string(),
            "The system http://x filter with property = concept, op = is-a has no value"
        );
    }
}
