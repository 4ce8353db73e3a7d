//! What the operations ask of a code system, whoever holds it: the
//! [`CodeSystemProvider`] trait. [`crate::CodeSystem`] (a FHIR CodeSystem
//! resource) implements it, and so does a SNOMED CT edition
//! (`txmap-snomed`), over its own store: it answers hierarchy questions
//! from its closure and compiles value set filters to ECL
//! ([`CodeSystemProvider::native_filters`]) instead of the generic walks
//! the default methods do. The operations never ask which one they have.

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

/// A rule's filters as a provider compiled them itself
/// ([`CodeSystemProvider::native_filters`]): SNOMED CT turns them into one
/// ECL expression, a CodeSystem resource uses the engine's generic
/// filters.
pub trait NativeFilters {
    /// Whether concept `id` passes every filter.
    fn matches(&self, id: ConceptId) -> Result<bool, crate::Error>;
    /// Every concept that passes, in the provider's order.
    fn members(&self) -> Result<Vec<ConceptId>, crate::Error>;
}

/// A code system as the operations see it: a FHIR CodeSystem resource
/// ([`crate::CodeSystem`]) or a compiled store (a SNOMED CT edition in
/// `txmap-snomed`). What a provider holds in its own form it returns
/// borrowed where it can ([`Cow`]): a resource borrows its vectors, a
/// store builds a concept's designations when asked, never the whole
/// system's. Hierarchy questions have generic answers over
/// [`CodeSystemProvider::parents`]; providers with a closure index
/// override them.
pub trait CodeSystemProvider: std::fmt::Debug + Send + Sync {
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
    fn code(&self, id: ConceptId) -> Cow<'_, str>;
    fn display(&self, id: ConceptId) -> Option<&str>;
    fn definition(&self, id: ConceptId) -> Option<&str>;
    fn designations(&self, id: ConceptId) -> Cow<'_, [Designation]>;
    fn properties(&self, id: ConceptId) -> Cow<'_, [PropertyValue]>;
    fn status(&self, id: ConceptId) -> Status;
    fn parents(&self, id: ConceptId) -> Cow<'_, [ConceptId]>;
    fn children(&self, id: ConceptId) -> Cow<'_, [ConceptId]>;
    /// Concepts without parents, in the resource's order.
    fn roots(&self) -> Cow<'_, [ConceptId]>;
    /// The declared property whose code is `code`: its URI and type.
    fn property_def(&self, code: &str) -> Option<(Option<&str>, Option<&str>)>;

    /// Whether the concepts can be listed: false for a code system defined
    /// by a grammar ([`crate::grammar`]), whose `len` and `all` are only
    /// the codes located so far.
    fn enumerable(&self) -> bool {
        true
    }

    /// The grammar that defines the codes, for a code system defined by
    /// one: what it says of a code that is not one, and its common codes.
    fn grammar(&self) -> Option<&dyn crate::grammar::Grammar> {
        None
    }

    /// The FHIR CodeSystem resource behind the provider, when there is
    /// one: supplements, concept extensions and the resource's own
    /// elements apply to resources only.
    fn resource(&self) -> Option<&crate::CodeSystem> {
        None
    }

    /// Whether `asked` (a value set's or a coding's version) names this
    /// provider's version; wildcards as [`crate::resolver::version_matches`].
    fn version_matches(&self, asked: &str) -> bool {
        self.version()
            .is_some_and(|have| crate::resolver::version_matches(asked, have))
    }

    /// Why `code` cannot be one of this system's codes by its form alone
    /// (SNOMED CT: an SCTID has no leading zeros), for the issue that
    /// explains an unknown code; `None` when its form says nothing.
    fn malformed(&self, _code: &str) -> Option<&'static str> {
        None
    }

    /// `Ok` when the code system may answer now; else the error (a 503,
    /// [`crate::Error::Unavailable`]) that says why: a file being verified
    /// or out of service ([`crate::serving`]). The resolver asks it of the
    /// version it picks, so a code system out of service is refused, not
    /// taken for unknown.
    fn in_service(&self) -> Result<(), crate::Error> {
        Ok(())
    }

    /// Whether this version is the one a request that names no version
    /// means, before the latest (a server's default SNOMED CT edition).
    fn is_default_version(&self) -> bool {
        false
    }

    /// `url|version`, as messages name the code system.
    fn versioned_url(&self) -> String {
        match self.version() {
            Some(v) => format!("{}|{v}", self.url()),
            None => self.url().to_owned(),
        }
    }

    /// A rule's filters compiled by the provider itself, or `None` for
    /// the engine's generic filters ([`crate::filter::Filter`]). The
    /// deadline is the request's.
    fn native_filters(
        &self,
        _filters: &[crate::valueset::FilterDef],
        _deadline: Option<std::time::Instant>,
    ) -> Option<Result<Box<dyn NativeFilters + '_>, crate::Error>> {
        None
    }

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
            for &p in self.parents(x).iter() {
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

    /// The descendants of `id` (not itself), each once, in hierarchy
    /// order: depth first, children in their order, as a flattened
    /// expansion lists them (below `code2`: `code2a, code2aI, code2aII,
    /// code2b`, not `code2a, code2b, code2aI, code2aII`).
    fn descendants(&self, id: ConceptId) -> Vec<ConceptId> {
        let mut out = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack: Vec<ConceptId> = self.children(id).iter().rev().copied().collect();
        while let Some(x) = stack.pop() {
            if x == id || !seen.insert(x) {
                continue;
            }
            out.push(x);
            stack.extend(self.children(x).iter().rev().copied());
        }
        out
    }
}

/// A concept's extensions (`codesystem-label`...): a resource's, as
/// JSON; none for a store.
pub fn concept_extensions(cs: &dyn CodeSystemProvider, id: ConceptId) -> &[Value] {
    cs.resource()
        .and_then(|r| r.concepts.get(id as usize))
        .map_or(&[], |c| &c.extensions)
}

/// Why a code system deserves a caution when used (a resource's status,
/// see [`crate::valueset::status_caution`]).
pub fn caution(cs: &dyn CodeSystemProvider) -> Option<&str> {
    cs.resource()
        .and_then(|r| crate::valueset::status_caution(&r.resource))
}

/// Whether two providers are the same object (not only equal).
pub fn same(a: &dyn CodeSystemProvider, b: &dyn CodeSystemProvider) -> bool {
    std::ptr::addr_eq(
        a as *const dyn CodeSystemProvider,
        b as *const dyn CodeSystemProvider,
    )
}
