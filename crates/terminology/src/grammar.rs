//! Code systems defined by a grammar rather than a list: UCUM unit
//! expressions, BCP-47 language tags, media types. Every well-formed code is a concept,
//! so there is no list to hold and none to expand: a [`Grammar`] says what
//! a code is, if anything, and a [`GrammarProvider`] makes that a
//! [`CodeSystemProvider`] for one request, numbering the codes the request
//! locates in the order it locates them (the ids of the trait). Each
//! request has its own provider (the [`crate::Resolver`] makes them), so
//! what it remembers is bounded by what the request sent, and nothing
//! outlives it.
//!
//! An include of a whole grammar code system, or a filter that names no
//! concepts of its own, cannot be expanded: the engine answers
//! [`crate::Error::NotEnumerable`] ([`CodeSystemProvider::enumerable`]) —
//! unless the grammar names a value set of the codes in common use
//! ([`Grammar::common_codes`]: FHIR's `ucum-common` for UCUM, THO's
//! `Languages` for BCP-47). Then, as tx.fhir.org does, the expansion lists
//! those codes that pass the filters, marked unclosed (the
//! `valueset-unclosed` extension): a picker needs a list, and a list that
//! says it is not the whole system misleads nobody. Membership needs no
//! enumeration, so validation works as for any code system.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::provider::{
    CodeSystemProvider, ConceptId, Content, Designation, Located, PropertyValue, Status,
};
use crate::valueset::ValueSet;

/// What a grammar says of one code.
#[derive(Clone, Debug, PartialEq)]
pub struct GrammarConcept {
    /// The code as the grammar spells it.
    pub code: String,
    pub display: String,
    pub designations: Vec<Designation>,
    pub properties: Vec<PropertyValue>,
    /// Well-formed, but deprecated by the grammar's registry.
    pub deprecated: bool,
}

/// A code system whose codes are the sentences of a grammar.
pub trait Grammar: Send + Sync + std::fmt::Debug {
    fn url(&self) -> &str;
    fn version(&self) -> Option<&str>;
    fn name(&self) -> &str;
    /// Whether codes differing only by case are different codes; when
    /// not, [`Grammar::concept`] spells a code in its canonical case.
    fn case_sensitive(&self) -> bool {
        true
    }
    /// The concept `code` is, or `None` when the grammar does not derive
    /// it. Must be bounded in time and depth for any input.
    fn concept(&self, code: &str) -> Option<GrammarConcept>;
    /// Why `code` is not a code, in the grammar's words, when it can say
    /// more than "unknown" (UCUM names the symbol it does not know).
    fn why_not(&self, _code: &str) -> Option<String> {
        None
    }
    /// Why `code` does not pass `filter`, in the grammar's words, when it
    /// can say (UCUM: `Code mL has canonical form m3, not g as
    /// required`); the value set's validation gives it in its message.
    fn why_filtered_out(
        &self,
        _code: &str,
        _filter: &crate::valueset::FilterDef,
    ) -> Option<String> {
        None
    }
    /// The value set of the codes in common use, which an expansion of
    /// the whole system lists instead of the system (see the module docs).
    fn common_codes(&self) -> Option<&ValueSet> {
        None
    }
}

/// The common codes of `cs` ([`Grammar::common_codes`]) that its grammar
/// derives, located in `cs`, once each in the order of their codes; `None`
/// when `cs` is not defined by a grammar or its grammar names none.
pub fn common_codes(cs: &dyn CodeSystemProvider) -> Option<(&ValueSet, Vec<ConceptId>)> {
    let vs = cs.grammar()?.common_codes()?;
    let mut codes: Vec<&str> = vs
        .compose
        .include
        .iter()
        .filter(|r| r.system.as_deref() == Some(cs.url()))
        .flat_map(|r| r.concepts.iter().map(|c| c.code.as_str()))
        .collect();
    codes.sort_unstable();
    codes.dedup();
    let ids = codes
        .into_iter()
        .filter_map(|c| cs.locate(c))
        .map(|l| l.id)
        .collect();
    Some((vs, ids))
}

/// A grammar as a code system of one request: the codes it located, in
/// order, are its concepts.
#[derive(Debug)]
pub struct GrammarProvider {
    grammar: Arc<dyn Grammar>,
    found: boxcar::Vec<GrammarConcept>,
    /// Each code asked, as asked: its concept, and whether it differs
    /// from the concept's code by case.
    ids: Mutex<HashMap<String, Located>>,
}

impl GrammarProvider {
    pub fn new(grammar: Arc<dyn Grammar>) -> GrammarProvider {
        GrammarProvider {
            grammar,
            found: boxcar::Vec::new(),
            ids: Mutex::new(HashMap::new()),
        }
    }

    fn get(&self, id: ConceptId) -> Option<&GrammarConcept> {
        self.found.get(id as usize)
    }
}

/// A copy starts with no codes: ids belong to the provider that gave them.
impl Clone for GrammarProvider {
    fn clone(&self) -> GrammarProvider {
        GrammarProvider::new(Arc::clone(&self.grammar))
    }
}

impl CodeSystemProvider for GrammarProvider {
    fn url(&self) -> &str {
        self.grammar.url()
    }
    fn version(&self) -> Option<&str> {
        self.grammar.version()
    }
    fn name(&self) -> Option<&str> {
        Some(self.grammar.name())
    }
    fn content(&self) -> Content {
        Content::Complete
    }
    fn case_sensitive(&self) -> bool {
        self.grammar.case_sensitive()
    }
    fn language(&self) -> Option<&str> {
        Some("en")
    }
    fn resource_status(&self) -> Option<&str> {
        Some("active")
    }
    fn experimental(&self) -> bool {
        false
    }
    fn enumerable(&self) -> bool {
        false
    }
    fn grammar(&self) -> Option<&dyn Grammar> {
        Some(&*self.grammar)
    }
    /// The codes located so far.
    fn len(&self) -> usize {
        self.found.count()
    }
    fn locate(&self, code: &str) -> Option<Located> {
        let mut ids = self.ids.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&located) = ids.get(code) {
            return Some(located);
        }
        let concept = self.grammar.concept(code)?;
        let case_differs = concept.code != code;
        let id = ConceptId::try_from(self.found.push(concept)).ok()?;
        let located = Located { id, case_differs };
        ids.insert(code.to_owned(), located);
        Some(located)
    }
    fn code(&self, id: ConceptId) -> Cow<'_, str> {
        Cow::Borrowed(self.get(id).map_or("", |c| c.code.as_str()))
    }
    fn display(&self, id: ConceptId) -> Option<&str> {
        self.get(id).map(|c| c.display.as_str())
    }
    fn definition(&self, _id: ConceptId) -> Option<&str> {
        None
    }
    fn designations(&self, id: ConceptId) -> Cow<'_, [Designation]> {
        Cow::Borrowed(self.get(id).map_or(&[], |c| c.designations.as_slice()))
    }
    fn properties(&self, id: ConceptId) -> Cow<'_, [PropertyValue]> {
        Cow::Borrowed(self.get(id).map_or(&[], |c| c.properties.as_slice()))
    }
    fn status(&self, id: ConceptId) -> Status {
        Status {
            deprecated: self.get(id).is_some_and(|c| c.deprecated),
            ..Status::default()
        }
    }
    fn parents(&self, _id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Borrowed(&[])
    }
    fn children(&self, _id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Borrowed(&[])
    }
    fn roots(&self) -> Cow<'_, [ConceptId]> {
        Cow::Borrowed(&[])
    }
    fn property_def(&self, code: &str) -> Option<(Option<&str>, Option<&str>)> {
        let known = (0..self.found.count() as ConceptId)
            .filter_map(|id| self.get(id))
            .any(|c| c.properties.iter().any(|p| p.code == code));
        known.then_some((None, Some("string")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes are words of lower-case letters, any case accepted.
    #[derive(Debug)]
    struct Words;

    impl Grammar for Words {
        fn url(&self) -> &str {
            "urn:example:words"
        }
        fn version(&self) -> Option<&str> {
            None
        }
        fn name(&self) -> &str {
            "words"
        }
        fn case_sensitive(&self) -> bool {
            false
        }
        fn concept(&self, code: &str) -> Option<GrammarConcept> {
            code.bytes()
                .all(|b| b.is_ascii_alphabetic())
                .then(|| GrammarConcept {
                    code: code.to_ascii_lowercase(),
                    display: code.to_ascii_lowercase(),
                    designations: Vec::new(),
                    properties: Vec::new(),
                    deprecated: false,
                })
        }
    }

    /// Words, with a value set of common words.
    #[derive(Debug)]
    struct Common(ValueSet);

    impl Grammar for Common {
        fn url(&self) -> &str {
            Words.url()
        }
        fn version(&self) -> Option<&str> {
            None
        }
        fn name(&self) -> &str {
            "common words"
        }
        fn concept(&self, code: &str) -> Option<GrammarConcept> {
            Words.concept(code)
        }
        fn common_codes(&self) -> Option<&ValueSet> {
            Some(&self.0)
        }
    }

    #[test]
    fn common_codes_are_the_grammars_own_once_each_by_code() {
        let vs = ValueSet::from_json(&serde_json::json!({
            "resourceType": "ValueSet", "url": "urn:example:common", "status": "active",
            "compose": {"include": [
                {"system": "urn:example:words", "concept": [
                    {"code": "pear"}, {"code": "apple"}, {"code": "not 1 word"}, {"code": "pear"}]},
                {"system": "urn:example:other", "concept": [{"code": "banana"}]},
            ]}
        }))
        .unwrap();
        let p = GrammarProvider::new(Arc::new(Common(vs)));
        let (common, ids) = common_codes(&p).unwrap();
        assert_eq!(common.url.as_deref(), Some("urn:example:common"));
        let codes: Vec<_> = ids.iter().map(|&id| p.code(id).into_owned()).collect();
        assert_eq!(codes, ["apple", "pear"]);
        // A grammar without common codes has none to give.
        assert!(common_codes(&GrammarProvider::new(Arc::new(Words))).is_none());
    }

    #[test]
    fn codes_are_numbered_as_located_and_remembered_as_asked() {
        let p = GrammarProvider::new(Arc::new(Words));
        assert!(!p.enumerable());
        assert_eq!(p.len(), 0);
        let a = p.locate("Word").unwrap();
        assert!(a.case_differs);
        // Asked again, the same answer: the same id, still a case difference.
        assert_eq!(p.locate("Word"), Some(a));
        let b = p.locate("other").unwrap();
        assert!(!b.case_differs);
        assert_ne!(a.id, b.id);
        assert_eq!(p.display(a.id), Some("word"));
        assert_eq!(p.code(b.id), "other");
        assert_eq!(p.len(), 2);
        assert!(p.locate("no digits 1").is_none());
        assert_eq!(p.len(), 2);
        // A copy starts over.
        assert_eq!(p.clone().len(), 0);
    }
}
