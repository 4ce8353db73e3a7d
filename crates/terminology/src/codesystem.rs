//! A FHIR CodeSystem resource (R4 or R5 JSON) read into an indexed form:
//! concepts in a vector, a hash index by code (and by lower-cased code
//! when the system is case-insensitive), and the hierarchy from nesting
//! and from `parent`/`child` properties as id lists both ways.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::provider::{
    CodeSystemProvider, ConceptId, Content, Designation, Located, PropertyValue, Status,
};

/// The `itemWeight`-style property URIs the FHIR core defines for concept
/// status; properties are recognised by code or by these URIs.
const STATUS_URI: &str = "http://hl7.org/fhir/concept-properties#status";
const INACTIVE_URI: &str = "http://hl7.org/fhir/concept-properties#inactive";
const NOT_SELECTABLE_URI: &str = "http://hl7.org/fhir/concept-properties#notSelectable";

/// One concept of a CodeSystem resource.
#[derive(Clone, Debug, Default)]
pub struct Concept {
    pub code: String,
    pub display: Option<String>,
    pub definition: Option<String>,
    pub designations: Vec<Designation>,
    pub properties: Vec<PropertyValue>,
    pub parents: Vec<ConceptId>,
    pub children: Vec<ConceptId>,
    pub status: Status,
    /// The concept's extensions (`codesystem-label`, `rendering-style`...),
    /// as JSON.
    pub extensions: Vec<Value>,
}

/// An element's `extension` list.
fn extensions(v: &Value) -> Vec<Value> {
    v.get("extension")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// The FHIR standards-status extension, on a concept or a designation.
pub const STANDARDS_STATUS: &str =
    "http://hl7.org/fhir/StructureDefinition/structuredefinition-standards-status";

/// A standards-status extension's code, when the element has one.
pub fn standards_status(extensions: &[Value]) -> Option<&str> {
    extensions
        .iter()
        .find(|e| e.get("url").and_then(Value::as_str) == Some(STANDARDS_STATUS))
        .and_then(|e| e.get("valueCode"))
        .and_then(Value::as_str)
}

/// A declared property (`CodeSystem.property`).
#[derive(Clone, Debug, Default)]
pub struct PropertyDef {
    pub code: String,
    pub uri: Option<String>,
    pub type_: Option<String>,
}

/// A CodeSystem resource, indexed.
#[derive(Clone, Debug)]
pub struct CodeSystem {
    pub url: String,
    pub version: Option<String>,
    pub name: Option<String>,
    pub title: Option<String>,
    pub status: Option<String>,
    pub experimental: bool,
    pub content: Content,
    pub case_sensitive: bool,
    pub language: Option<String>,
    /// The code system this one supplements (`supplements`), when it is a
    /// supplement.
    pub supplements: Option<String>,
    pub properties: Vec<PropertyDef>,
    pub concepts: Vec<Concept>,
    /// The JSON of the resource, for whoever needs an element not
    /// modelled — without its `concept` tree, which `concepts` holds (a
    /// second copy of a 100,000-concept tree is tens of megabytes).
    pub resource: Value,
    index: HashMap<String, ConceptId>,
    /// Lower-cased codes, for case-insensitive systems only.
    folded: HashMap<String, ConceptId>,
    roots: Vec<ConceptId>,
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

/// The `value[x]` of an element: its key and value.
pub(crate) fn value_x(v: &Value) -> Option<(&str, &Value)> {
    v.as_object()?
        .iter()
        .find(|(k, _)| k.starts_with("value") && k.len() > 5)
        .map(|(k, v)| (k.as_str(), v))
}

/// A resource's JSON without its `concept` element.
fn without_concepts(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| *k != "concept")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        other => other.clone(),
    }
}

impl CodeSystem {
    /// Reads a CodeSystem resource. `None` when it is not one or has no
    /// `url`.
    pub fn from_json(v: &Value) -> Option<CodeSystem> {
        if v.get("resourceType").and_then(Value::as_str) != Some("CodeSystem") {
            return None;
        }
        let url = text(v, "url")?;
        let properties: Vec<PropertyDef> = v
            .get("property")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|p| {
                        Some(PropertyDef {
                            code: text(p, "code")?,
                            uri: text(p, "uri"),
                            type_: text(p, "type"),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut cs = CodeSystem {
            url,
            version: text(v, "version"),
            name: text(v, "name"),
            title: text(v, "title"),
            status: text(v, "status"),
            experimental: v.get("experimental").and_then(Value::as_bool) == Some(true),
            content: Content::parse(v.get("content").and_then(Value::as_str)),
            case_sensitive: v.get("caseSensitive").and_then(Value::as_bool) != Some(false),
            language: text(v, "language"),
            supplements: text(v, "supplements"),
            properties,
            concepts: Vec::new(),
            resource: without_concepts(v),
            index: HashMap::new(),
            folded: HashMap::new(),
            roots: Vec::new(),
        };
        // Property links by code, resolved once every code is indexed.
        let mut links: Vec<(ConceptId, String, bool)> = Vec::new();
        if let Some(list) = v.get("concept").and_then(Value::as_array) {
            cs.read_concepts(list, None, &mut links);
        }
        for (id, other, is_parent) in links {
            let Some(&o) = cs.index.get(&other) else {
                continue;
            };
            let (child, parent) = if is_parent { (id, o) } else { (o, id) };
            if !cs.concepts[child as usize].parents.contains(&parent) {
                cs.concepts[child as usize].parents.push(parent);
                cs.concepts[parent as usize].children.push(child);
            }
        }
        cs.roots = (0..cs.concepts.len() as ConceptId)
            .filter(|&i| cs.concepts[i as usize].parents.is_empty())
            .collect();
        if !cs.case_sensitive {
            for (i, c) in cs.concepts.iter().enumerate() {
                cs.folded
                    .entry(c.code.to_lowercase())
                    .or_insert(i as ConceptId);
            }
        }
        Some(cs)
    }

    fn read_concepts(
        &mut self,
        list: &[Value],
        parent: Option<ConceptId>,
        links: &mut Vec<(ConceptId, String, bool)>,
    ) {
        for c in list {
            let Some(code) = text(c, "code") else {
                continue;
            };
            let id = match self.index.get(&code) {
                Some(&id) => id,
                None => {
                    let id = self.concepts.len() as ConceptId;
                    self.index.insert(code.clone(), id);
                    self.concepts.push(Concept {
                        code,
                        ..Concept::default()
                    });
                    id
                }
            };
            let concept = self.read_concept(c, id, links);
            let slot = &mut self.concepts[id as usize];
            let (parents, children) = (
                std::mem::take(&mut slot.parents),
                std::mem::take(&mut slot.children),
            );
            *slot = Concept {
                parents,
                children,
                ..concept
            };
            if let Some(p) = parent
                && !self.concepts[id as usize].parents.contains(&p)
            {
                self.concepts[id as usize].parents.push(p);
                self.concepts[p as usize].children.push(id);
            }
            if let Some(sub) = c.get("concept").and_then(Value::as_array) {
                self.read_concepts(sub, Some(id), links);
            }
        }
    }

    fn read_concept(
        &self,
        c: &Value,
        id: ConceptId,
        links: &mut Vec<(ConceptId, String, bool)>,
    ) -> Concept {
        let designations = c
            .get("designation")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|d| {
                        Some(Designation {
                            language: text(d, "language"),
                            use_: d.get("use").cloned(),
                            value: text(d, "value")?,
                            source: None,
                            extensions: extensions(d),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut status = Status::default();
        let mut properties = Vec::new();
        for p in c
            .get("property")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let (Some(code), Some((key, value))) = (text(p, "code"), value_x(p)) else {
                continue;
            };
            let uri = self.property_uri(&code);
            match (code.as_str(), value) {
                ("parent", Value::String(s)) => links.push((id, s.clone(), true)),
                ("child", Value::String(s)) => links.push((id, s.clone(), false)),
                _ => {}
            }
            let is = |name: &str, full: &str| code == name || uri == Some(full);
            if is("status", STATUS_URI)
                && let Some(s) = value.as_str()
            {
                status.status = Some(s.to_owned());
                match s {
                    "retired" | "inactive" => status.inactive = true,
                    "deprecated" => status.deprecated = true,
                    _ => {}
                }
            }
            if is("inactive", INACTIVE_URI) && value.as_bool() == Some(true) {
                status.inactive = true;
            }
            if is("notSelectable", NOT_SELECTABLE_URI) && value.as_bool() == Some(true) {
                status.not_selectable = true;
            }
            if is(
                "deprecated",
                "http://hl7.org/fhir/concept-properties#deprecated",
            ) && value.as_bool() == Some(true)
            {
                status.deprecated = true;
            }
            properties.push(PropertyValue {
                code,
                key: key.to_owned(),
                value: value.clone(),
            });
        }
        let extensions = extensions(c);
        if standards_status(&extensions) == Some("deprecated") && !status.inactive {
            status.deprecated = true;
            status.status.get_or_insert_with(|| "deprecated".to_owned());
        }
        Concept {
            extensions,
            code: text(c, "code").unwrap_or_default(),
            display: text(c, "display"),
            definition: text(c, "definition"),
            designations,
            properties,
            parents: Vec::new(),
            children: Vec::new(),
            status,
        }
    }

    fn property_uri(&self, code: &str) -> Option<&str> {
        self.properties
            .iter()
            .find(|p| p.code == code)
            .and_then(|p| p.uri.as_deref())
    }

    /// Adds a supplement's designations and properties to the concepts
    /// they name.
    pub fn apply_supplement(&mut self, supplement: &CodeSystem) {
        for sc in &supplement.concepts {
            let Some(&id) = self.index.get(&sc.code) else {
                continue;
            };
            let c = &mut self.concepts[id as usize];
            c.designations.extend(sc.designations.iter().cloned());
            // The supplement's display is a designation in its language
            // (in none said, when it says none: a display all the same).
            if let Some(d) = &sc.display {
                c.designations.push(Designation {
                    language: supplement.language.clone(),
                    use_: None,
                    value: d.clone(),
                    source: None,
                    extensions: Vec::new(),
                });
            }
            let source = supplement.versioned_url();
            let start =
                c.designations.len() - sc.designations.len() - usize::from(sc.display.is_some());
            for d in &mut c.designations[start..] {
                d.source = Some(source.clone());
            }
            c.properties.extend(sc.properties.iter().cloned());
            c.extensions.extend(sc.extensions.iter().cloned());
        }
        for p in &supplement.properties {
            if !self.properties.iter().any(|q| q.code == p.code) {
                self.properties.push(p.clone());
            }
        }
    }
}

impl CodeSystemProvider for CodeSystem {
    fn url(&self) -> &str {
        &self.url
    }
    fn version(&self) -> Option<&str> {
        self.version.as_deref()
    }
    fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
    fn content(&self) -> Content {
        self.content
    }
    fn case_sensitive(&self) -> bool {
        self.case_sensitive
    }
    fn language(&self) -> Option<&str> {
        self.language.as_deref()
    }
    fn resource_status(&self) -> Option<&str> {
        self.status.as_deref()
    }
    fn experimental(&self) -> bool {
        self.experimental
    }
    fn len(&self) -> usize {
        self.concepts.len()
    }
    fn locate(&self, code: &str) -> Option<Located> {
        if let Some(&id) = self.index.get(code) {
            return Some(Located {
                id,
                case_differs: false,
            });
        }
        if self.case_sensitive {
            return None;
        }
        self.folded.get(&code.to_lowercase()).map(|&id| Located {
            id,
            case_differs: true,
        })
    }
    fn code(&self, id: ConceptId) -> Cow<'_, str> {
        Cow::Borrowed(&self.concepts[id as usize].code)
    }
    fn display(&self, id: ConceptId) -> Option<&str> {
        self.concepts[id as usize].display.as_deref()
    }
    fn definition(&self, id: ConceptId) -> Option<&str> {
        self.concepts[id as usize].definition.as_deref()
    }
    fn designations(&self, id: ConceptId) -> Cow<'_, [Designation]> {
        Cow::Borrowed(&self.concepts[id as usize].designations)
    }
    fn properties(&self, id: ConceptId) -> Cow<'_, [PropertyValue]> {
        Cow::Borrowed(&self.concepts[id as usize].properties)
    }
    fn status(&self, id: ConceptId) -> Status {
        self.concepts[id as usize].status.clone()
    }
    fn parents(&self, id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Borrowed(&self.concepts[id as usize].parents)
    }
    fn children(&self, id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Borrowed(&self.concepts[id as usize].children)
    }
    fn roots(&self) -> Cow<'_, [ConceptId]> {
        Cow::Borrowed(&self.roots)
    }
    fn resource(&self) -> Option<&CodeSystem> {
        Some(self)
    }
    fn property_def(&self, code: &str) -> Option<(Option<&str>, Option<&str>)> {
        self.properties
            .iter()
            .find(|p| p.code == code)
            .map(|p| (p.uri.as_deref(), p.type_.as_deref()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hierarchy_comes_from_nesting_and_parent_properties() {
        let cs = CodeSystem::from_json(&json!({
            "resourceType": "CodeSystem", "url": "http://x", "caseSensitive": false,
            "concept": [
                {"code": "a", "concept": [{"code": "b"}]},
                {"code": "c", "property": [{"code": "parent", "valueCode": "b"}]},
                {"code": "d", "property": [{"code": "status", "valueCode": "retired"}]},
            ]
        }))
        .unwrap();
        let id = |c: &str| cs.locate(c).unwrap().id;
        assert_eq!(*cs.roots(), [id("a"), id("d")]);
        assert!(cs.subsumed_by(id("c"), id("a")));
        assert!(!cs.subsumed_by(id("a"), id("c")));
        assert_eq!(cs.descendants(id("a")), [id("b"), id("c")]);
        assert!(cs.status(id("d")).inactive);
        assert!(cs.locate("A").unwrap().case_differs);
        assert_eq!(cs.all().len(), 4);
    }

    #[test]
    fn descendants_come_in_hierarchy_order() {
        // a > (b > (b1, b2), c > c1): depth first, children in order.
        let cs = CodeSystem::from_json(&json!({
            "resourceType": "CodeSystem", "url": "http://x",
            "concept": [{"code": "a", "concept": [
                {"code": "b", "concept": [{"code": "b1"}, {"code": "b2"}]},
                {"code": "c", "concept": [{"code": "c1"}]}
            ]}]
        }))
        .unwrap();
        let codes: Vec<String> = cs
            .descendants(cs.locate("a").unwrap().id)
            .into_iter()
            .map(|i| cs.code(i).into_owned())
            .collect();
        assert_eq!(codes, ["b", "b1", "b2", "c", "c1"]);
    }
}
