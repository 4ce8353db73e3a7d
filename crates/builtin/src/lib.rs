//! The code systems txmap carries itself. ISO 3166-1 country codes
//! ([`iso3166`]) are a list, served as a CodeSystem resource. The others
//! are defined by a grammar, as [`Grammar`]s of the terminology engine: [`Ucum`] (`http://unitsofmeasure.org`), [`Bcp47`]
//! (`urn:ietf:bcp:47`), [`MediaTypes`] (`urn:ietf:bcp:13`) and [`Hgvs`]
//! (`http://varnomen.hgvs.org`, the syntax of variant descriptions). None
//! has a list of codes: a code is a concept when the grammar derives it,
//! which is what an IG's Quantities, `language` elements, attachments'
//! `contentType` and genomics reports' variants need validated.
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
//!
//! UCUM and BCP-47 name their common codes ([`Grammar::common_codes`]),
//! which an expansion of the whole system lists, marked unclosed, as
//! tx.fhir.org does: FHIR R5's `ucum-common` value set (from the npm
//! package `hl7.fhir.r5.core` 5.0.0) and THO's `Languages` (from
//! `hl7.terminology.r4` 7.0.1), both CC0 and compiled in from `data/`.

mod bcp47;
mod hgvs;
pub mod iso3166;
mod mime;
mod ucum;

use std::sync::Arc;

pub use bcp47::Bcp47;
pub use hgvs::Hgvs;
pub use mime::MediaTypes;
use txmap_terminology::grammar::Grammar;
pub use ucum::Ucum;

/// UCUM's canonical URL.
pub const UCUM: &str = "http://unitsofmeasure.org";
/// BCP-47's canonical URL.
pub const BCP47: &str = "urn:ietf:bcp:47";
/// Media types' (BCP 13) canonical URL.
pub const MIME: &str = "urn:ietf:bcp:13";
/// HGVS's canonical URL.
pub const HGVS: &str = "http://varnomen.hgvs.org";
/// ISO 3166-1's canonical URL.
pub const ISO3166: &str = "urn:iso:std:iso:3166";

/// Codes longer than this are not looked at: no real unit or language tag
/// comes near, and it bounds the work one code can ask for.
pub const MAX_CODE_LEN: usize = 512;

/// Every grammar txmap serves.
pub fn all() -> Vec<Arc<dyn Grammar>> {
    vec![
        Arc::new(Ucum::embedded()),
        Arc::new(Bcp47::embedded()),
        Arc::new(MediaTypes),
        Arc::new(Hgvs),
    ]
}

/// Every code system txmap serves as a resource of its own.
pub fn code_systems() -> Vec<txmap_terminology::CodeSystem> {
    iso3166::code_system().into_iter().collect()
}

/// A value set compiled into the binary (`data/README.md` says where
/// each comes from); `None` only if the file is not a ValueSet, which the
/// tests rule out.
fn embedded_value_set(json: &str) -> Option<txmap_terminology::valueset::ValueSet> {
    let value: serde_json::Value = serde_json::from_str(json).ok()?;
    txmap_terminology::valueset::ValueSet::from_json(&value)
}

/// The preferred-for-language designation `use`, as the engine writes it.
fn preferred_use() -> serde_json::Value {
    serde_json::json!({
        "system": "http://terminology.hl7.org/CodeSystem/hl7TermMaintInfra",
        "code": "preferredForLanguage",
        "display": "Preferred For Language"
    })
}
