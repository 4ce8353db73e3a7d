//! Resources that outlive a request: the CodeSystems and ValueSets of
//! loaded FHIR packages (`txmap-packages`), and code systems compiled
//! into stores (SNOMED CT editions, `txmap-snomed`). The [`Resolver`] asks a
//! [`ResourceSource`] only for URLs the request's own `tx-resource`s do
//! not define, so what a client sends always wins.
//!
//! [`Resolver`]: crate::Resolver

use std::sync::Arc;

use crate::codesystem::CodeSystem;
use crate::provider::CodeSystemProvider;
use crate::valueset::ValueSet;

/// A read-only store of parsed resources, shared by every request.
pub trait ResourceSource: Send + Sync + std::fmt::Debug {
    /// Every version of the code system `url` (supplements included).
    fn code_systems(&self, url: &str) -> Vec<&CodeSystem>;
    /// Every version of the value set `url`.
    fn value_sets(&self, url: &str) -> Vec<&ValueSet>;
    /// Every version of the code system `url` held in another form than a
    /// CodeSystem resource (SNOMED CT editions).
    fn providers(&self, _url: &str) -> Vec<&dyn CodeSystemProvider> {
        Vec::new()
    }
    /// The code system version and filters of an implicit value set URL
    /// (`http://snomed.info/sct?fhir_vs=isa/…`), when one of the stores
    /// defines it.
    fn implicit_value_set(
        &self,
        _url: &str,
    ) -> Option<(&dyn CodeSystemProvider, Vec<crate::valueset::FilterDef>)> {
        None
    }
    /// The code systems defined by a grammar (UCUM, BCP-47) that this
    /// source knows; each request wraps them in its own
    /// [`crate::grammar::GrammarProvider`].
    fn grammars(&self) -> Vec<Arc<dyn crate::grammar::Grammar>> {
        Vec::new()
    }
    /// The operations a code system behind this source answers whole
    /// ([`crate::operation`]).
    fn native(&self) -> Option<&dyn crate::operation::NativeOperations> {
        None
    }
}
