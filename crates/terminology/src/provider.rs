//! What the operations ask of a code system, whoever holds it: the
//! [`CodeSystemProvider`] trait. [`crate::CodeSystem`] (a FHIR CodeSystem
//! resource) implements it; a SNOMED CT edition can implement it later
//! over its own store, answering hierarchy and filter questions from its
//! indexes instead of the generic walks the default methods do.

use std::borrow::Cow;

use serde_json::Value;

/// A concept's position in its provider, dense from 0.
pub type ConceptId = u32;

/// How much of the code system a resource holds (`CodeSystem.content`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Content {
    NotPresent,
    Example,
    Fragment,
    Complete,
    Supplement,
}

impl Content {
    pub fn parse(s: Option<&str>) -> Content {
        match s {
            Some("not-present") => Content::NotPresent,
            Some("example") => Content::Example,
            Some("fragment") => Content::Fragment,
            Some("supplement") => Content::Supplement,
            _ => Content::Complete,
        }
    }
}

/// A designation of a concept: a display in another language or use.
#[derive(Clone, Debug, PartialEq)]
pub struct Designation {
    pub language: Option<String>,
    /// The `use` Coding, as JSON.
    pub use_: Option<Value>,
    pub value: String,
    /// The supplement it came from (`url|version`), when it is not the
    /// code system's own.
    pub source: Option<String>,
    /// The designation's extensions (`standards-status`...), as JSON.
    pub extensions: Vec<Value>,
}

/// One property value of a concept: its code, the JSON key of its value
/// (`valueCode`, `valueBoolean`...) and the value.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyValue {
    pub code: String,
    pub key: String,
    pub value: Value,
}

impl PropertyValue {
    /// The value as text, for `=`, `in` and `regex` filters: a code, a
    /// string, a Coding's code, a boolean or a number as written.
    pub fn text(&self) -> Option<Cow<'_, str>> {
        match &self.value {
            Value::String(s) => Some(Cow::Borrowed(s)),
            Value::Bool(b) => Some(Cow::Owned(b.to_string())),
            Value::Number(n) => Some(Cow::Owned(n.to_string())),
            Value::Object(o) => o.get("code").and_then(Value::as_str).map(Cow::Borrowed),
            _ => None,
        }
    }
}

/// A concept's status flags.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Status {
    pub inactive: bool,
    pub deprecated: bool,
    /// `notSelectable`: shown as `abstract` in expansions.
    pub not_selectable: bool,
    /// The `status` property's code, when there is one (`retired`...).
    pub status: Option<String>,
}

/// Where a code was found, and whether only by ignoring case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Located {
    pub id: ConceptId,
    /// The code differs from the concept's by case (allowed only in a
    /// case-insensitive system).
    pub case_differs: bool,
}

/// A code system as the operations see it. Hierarchy questions have
/// generic answers over [`CodeSystemProvider::parents`]; providers with
/// a closure index override them.
pub trait CodeSystemProvider {
    fn url(&self) -> &str;
    fn version(&self) -> Option<&str>;
    fn name(&self) -> Option<&str>;
    fn content(&self) -> Content;
    fn case_sensitive(&self) -> bool;
    /// The resource's language, the language of its displays.
    fn language(&self) -> Option<&str>;
    /// The lifecycle status of the code system resource (`draft`...).
    fn resource_status(&self) -> Option<&str>;
    fn experimental(&self) -> bool;
    /// The number of concepts; ids are `0..len`.
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Finds a code, exactly, or ignoring case when the system is
    /// case-insensitive.
    fn locate(&self, code: &str) -> Option<Located>;
    fn code(&self, id: ConceptId) -> &str;
    fn display(&self, id: ConceptId) -> Option<&str>;
    fn definition(&self, id: ConceptId) -> Option<&str>;
    fn designations(&self, id: ConceptId) -> &[Designation];
    fn properties(&self, id: ConceptId) -> &[PropertyValue];
    fn status(&self, id: ConceptId) -> Status;
    fn parents(&self, id: ConceptId) -> &[ConceptId];
    fn children(&self, id: ConceptId) -> &[ConceptId];
    /// Concepts without parents, in the resource's order.
    fn roots(&self) -> &[ConceptId];
    /// The declared property whose code is `code`: its URI and type.
    fn property_def(&self, code: &str) -> Option<(Option<&str>, Option<&str>)>;

    /// Every concept, depth first from the roots, each once.
    fn all(&self) -> Vec<ConceptId> {
        let mut out = Vec::with_capacity(self.len());
        let mut seen = vec![false; self.len()];
        let mut stack: Vec<ConceptId> = self.roots().iter().rev().copied().collect();
        while let Some(id) = stack.pop() {
            if std::mem::replace(&mut seen[id as usize], true) {
                continue;
            }
            out.push(id);
            stack.extend(self.children(id).iter().rev().copied());
        }
        // Concepts on a cycle with no root are still concepts.
        out.extend((0..self.len() as ConceptId).filter(|&i| !seen[i as usize]));
        out
    }

    /// Whether `a` is `b` or one of its descendants.
    fn subsumed_by(&self, a: ConceptId, b: ConceptId) -> bool {
        if a == b {
            return true;
        }
        let mut seen = vec![a];
        let mut stack = vec![a];
        while let Some(x) = stack.pop() {
            for &p in self.parents(x) {
                if p == b {
                    return true;
                }
                if !seen.contains(&p) {
                    seen.push(p);
                    stack.push(p);
                }
            }
        }
        false
    }

    /// The descendants of `id` (not itself), each once.
    fn descendants(&self, id: ConceptId) -> Vec<ConceptId> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![id];
        while let Some(x) = stack.pop() {
            for &c in self.children(x) {
                if c != id && seen.insert(c) {
                    out.push(c);
                    stack.push(c);
                }
            }
        }
        out
    }
}
