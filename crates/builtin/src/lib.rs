//! The code systems txmap carries itself. ISO 3166-1 country codes
//! ([`iso3166`]) are a list, served as a CodeSystem resource. The others
//! are defined by a grammar, as [`Grammar`]s of the terminology engine: [`Ucum`] (`http://unitsofmeasure.org`), [`Bcp47`]
//! (`urn:ietf:bcp:47`) and [`MediaTypes`] (`urn:ietf:bcp:13`). None has a
//! list of codes: a code is a concept when the grammar derives it, which
//! is what an IG's Quantities, `language` elements and attachments'
//! `contentType` need validated.
//!
//! UCUM is the `octofhir-ucum` crate (Apache-2.0), which compiles UCUM's
//! own essence file (`ucum-essence.xml`, version 2.2) into tables at build
//! time and parses with an explicit nesting limit: a well-kept parser
//! made for the job, so we write no grammar of our own. BCP-47 tags are
//! checked here against the IANA Language Subtag Registry, taken from the
//! npm package `language-subtag-registry` (CC0-1.0) into
//! `data/language-subtags.tsv` (`data/README.md` has the version and how
//! to regenerate it) and compiled into the binary. Media types are RFC
//! 6838's grammar over its registered top-level types, without a list.

mod bcp47;
pub mod iso3166;
mod mime;
mod ucum;

use std::sync::Arc;

pub use bcp47::Bcp47;
pub use mime::MediaTypes;
use txmap_terminology::grammar::Grammar;
pub use ucum::Ucum;

/// UCUM's canonical URL.
pub const UCUM: &str = "http://unitsofmeasure.org";
/// BCP-47's canonical URL.
pub const BCP47: &str = "urn:ietf:bcp:47";
/// Media types' (BCP 13) canonical URL.
pub const MIME: &str = "urn:ietf:bcp:13";
/// ISO 3166-1's canonical URL.
pub const ISO3166: &str = "urn:iso:std:iso:3166";

/// Codes longer than this are not looked at: no real unit or language tag
/// comes near, and it bounds the work one code can ask for.
pub const MAX_CODE_LEN: usize = 512;

/// Every grammar txmap serves.
pub fn all() -> Vec<Arc<dyn Grammar>> {
    vec![
        Arc::new(Ucum),
        Arc::new(Bcp47::embedded()),
        Arc::new(MediaTypes),
    ]
}

/// Every code system txmap serves as a resource of its own.
pub fn code_systems() -> Vec<txmap_terminology::CodeSystem> {
    iso3166::code_system().into_iter().collect()
}

/// The preferred-for-language designation `use`, as the engine writes it.
fn preferred_use() -> serde_json::Value {
    serde_json::json!({
        "system": "http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra",
        "code": "preferredForLanguage",
        "display": "Preferred For Language"
    })
}
