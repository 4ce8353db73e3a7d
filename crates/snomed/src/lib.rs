//! `txmap-snomed`: a SNOMED CT edition as a code system of the one
//! terminology engine (`txmap-terminology`).
//!
//! Real value sets mix systems: an IG's value set includes SNOMED CT
//! concepts beside LOINC codes, imports other value sets, and names
//! SNOMED CT implicit value sets (`http://snomed.info/sct?fhir_vs=isa/X`)
//! in `compose.include.valueSet`. The engine answers all of them the same
//! way once every code system is a [`CodeSystemProvider`]; this crate
//! makes an [`Edition`] one, without copying it:
//!
//! * codes are SCTIDs, concept ids the edition's ordinals; displays are
//!   the preferred terms of the edition's default language refset, and
//!   designations are built per concept from its active descriptions;
//! * hierarchy questions read the closure ([`Edition::subsumes`],
//!   [`Edition::descendants`]), never a walk;
//! * value set filters compile to ECL ([`constraint`]) and are evaluated
//!   by `txmap-ecl-eval` under the request's deadline and a work limit;
//! * implicit value set URLs become those filters ([`implicit_filters`]),
//!   after an edition or version URI too;
//! * [`operations`] answers the operations SNOMED CT has semantics of its
//!   own for (post-coordinated expressions, editions named by URI, ECL):
//!   [`lookup`], [`validate`], [`expand`], `$subsumes` and [`translate`],
//!   in the edition [`editions`] resolves; the engine asks it first
//!   (`txmap_terminology::operation`) and answers the rest — value sets
//!   mixing systems, imports — through the provider;
//! * post-coordinated expressions are read by [`expression`] and checked
//!   against the edition's concept model by [`mrcm`]; [`valueset`] holds
//!   SNOMED CT value set rules (implicit value sets, composes, expressions
//!   as members) and [`language`] the display languages as language
//!   refsets.
//!
//! The store's answers are `Result`s; most of the provider's trait
//! answers are not. A store error on a trait method that cannot say so
//! reads as absent data (no display, no parents); filters, which can,
//! report it as an error. `txmap verify` reads every checksum of a file;
//! a server that serves only verified files is what keeps such an answer
//! from being wrong.

pub mod constraint;
pub mod editions;
pub mod expand;
pub mod expression;
pub mod language;
pub mod lookup;
pub mod mrcm;
pub mod operations;
pub mod scopes;
pub mod translate;
pub mod validate;
pub mod valueset;

use std::borrow::Cow;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde_json::json;
use txmap_ecl_eval::{Budget, Subject};
use txmap_store::Edition;
use txmap_store::sctid;
use txmap_terminology::Error;
use txmap_terminology::provider::{
    CodeSystemProvider, ConceptId, Content, Designation, Located, NativeFilters, PropertyValue,
    Status,
};
use txmap_terminology::serving::Serving;
use txmap_terminology::valueset::FilterDef;

pub use constraint::{Constraint, ConstraintError};

/// `?` for the store's results where the engine's [`Error`] is answered:
/// a store error is a 500 that names the cause.
pub trait Stored<T> {
    fn stored(self) -> Result<T, Error>;
}

impl<T> Stored<T> for Result<T, txmap_store::StoreError> {
    fn stored(self) -> Result<T, Error> {
        self.map_err(store_error)
    }
}

/// A store error as the engine's 500.
pub fn store_error(e: txmap_store::StoreError) -> Error {
    Error::Store(format!("the edition could not be read: {e}"))
}

/// The preferred term of the concept `id` in the edition's default
/// language refset; `None` for a concept the edition lacks.
pub fn term_of<B: AsRef<[u8]>>(ed: &Edition<B>, id: u64) -> Result<Option<&str>, Error> {
    match ed.ordinal(id) {
        Some(o) => ed.preferred_term(o).stored(),
        None => Ok(None),
    }
}

/// The `system` a SNOMED CT operation names: missing is required,
/// another system is not served by these operations.
pub fn check_system(system: Option<&str>) -> Result<(), Error> {
    match system {
        None => Err(Error::required("system")),
        Some(SNOMED_CT) => Ok(()),
        Some(other) => Err(Error::not_found(format!(
            "A definition for CodeSystem '{other}' could not be found: this server serves {SNOMED_CT} only"
        ))),
    }
}

/// Which of the served editions unversioned requests mean: an index the
/// operator moves (and moves back) while requests run, without reloading
/// a file. Every edition's [`SnomedCt`] holds the same pointer.
#[derive(Debug)]
pub struct DefaultEdition(std::sync::atomic::AtomicUsize);

impl Default for DefaultEdition {
    /// Pointing at none.
    fn default() -> DefaultEdition {
        DefaultEdition::new(None)
    }
}

impl DefaultEdition {
    const NONE: usize = usize::MAX;

    pub fn new(index: Option<usize>) -> DefaultEdition {
        DefaultEdition(std::sync::atomic::AtomicUsize::new(
            index.unwrap_or(Self::NONE),
        ))
    }

    /// The default edition's index among the served editions.
    pub fn get(&self) -> Option<usize> {
        match self.0.load(std::sync::atomic::Ordering::Acquire) {
            Self::NONE => None,
            i => Some(i),
        }
    }

    /// Points at edition `index` (its place among the served editions);
    /// the requests that start after this mean it.
    pub fn set(&self, index: usize) {
        self.0.store(index, std::sync::atomic::Ordering::Release);
    }
}

/// How an edition knows it is the default.
#[derive(Debug)]
enum DefaultIs {
    Fixed(bool),
    Pointer(Arc<DefaultEdition>, usize),
}

/// The canonical URL of SNOMED CT.
pub const SNOMED_CT: &str = "http://snomed.info/sct";

/// One edition version as a code system.
#[derive(Debug)]
pub struct SnomedCt<B: AsRef<[u8]>> {
    edition: Arc<Edition<B>>,
    /// `http://snomed.info/sct/{module}/version/{date}` (or `xsct`).
    version_uri: String,
    /// `http://snomed.info/sct/{module}` (or `xsct`).
    edition_uri: String,
    /// The most elements one ECL evaluation may touch.
    max_work: u64,
    /// Whether this is the edition unversioned requests mean: fixed, or
    /// this edition's place in a pointer the operator moves
    /// ([`DefaultEdition`]).
    default: DefaultIs,
    /// The edition's name in messages ([`SnomedCt::edition_name`]).
    name: OnceLock<String>,
    /// The concept model rules ([`SnomedCt::mrcm`]).
    mrcm: OnceLock<mrcm::Rules>,
    /// Calls answered from this edition.
    uses: AtomicU64,
    /// Whether it may answer ([`txmap_terminology::serving`]).
    serving: Arc<Serving>,
    /// The scopes of the last text searches ([`scopes`]).
    scopes: scopes::Scopes,
    /// The language refsets the descriptions have rows in
    /// ([`SnomedCt::language_refsets`]).
    language_refsets: OnceLock<Vec<u64>>,
    /// The most candidates a scoped text search tests one by one
    /// ([`expand::TEST_EACH_UP_TO`]).
    test_each_up_to: usize,
}

impl<B: AsRef<[u8]>> SnomedCt<B> {
    pub fn new(
        edition: Arc<Edition<B>>,
        version_uri: String,
        edition_uri: String,
        max_work: u64,
        default: bool,
    ) -> SnomedCt<B> {
        SnomedCt {
            edition,
            version_uri,
            edition_uri,
            max_work,
            default: DefaultIs::Fixed(default),
            name: OnceLock::new(),
            mrcm: OnceLock::new(),
            uses: AtomicU64::new(0),
            serving: Arc::new(Serving::new("", true)),
            scopes: scopes::Scopes::default(),
            language_refsets: OnceLock::new(),
            test_each_up_to: expand::TEST_EACH_UP_TO,
        }
    }

    /// The same code system, with scoped text searches testing their hits
    /// one by one up to `n` candidates (0: always building the scope's
    /// set). Both ways give the same answers; tests compare them.
    pub fn with_test_each_up_to(mut self, n: usize) -> SnomedCt<B> {
        self.test_each_up_to = n;
        self
    }

    /// See [`with_test_each_up_to`](Self::with_test_each_up_to).
    pub fn test_each_up_to(&self) -> usize {
        self.test_each_up_to
    }

    pub fn edition(&self) -> &Edition<B> {
        &self.edition
    }

    /// The language refsets the edition's descriptions have rows in,
    /// ascending: read once (a pass over the acceptability rows), then
    /// kept. Empty if the file cannot say.
    pub fn language_refsets(&self) -> &[u64] {
        self.language_refsets
            .get_or_init(|| self.edition.language_refsets().unwrap_or_default())
    }

    /// The same code system, the default edition when `pointer` points
    /// at `index` (its place among the served editions): the operator
    /// moves the default without reloading anything.
    pub fn with_default_pointer(mut self, pointer: Arc<DefaultEdition>, index: usize) -> Self {
        self.default = DefaultIs::Pointer(pointer, index);
        self
    }

    /// Whether unversioned requests mean this edition now.
    pub fn is_default(&self) -> bool {
        match &self.default {
            DefaultIs::Fixed(d) => *d,
            DefaultIs::Pointer(p, i) => p.get() == Some(*i),
        }
    }

    /// The scope sets kept for text searches in this edition.
    pub fn scopes(&self) -> &scopes::Scopes {
        &self.scopes
    }

    pub fn version_uri(&self) -> &str {
        &self.version_uri
    }

    pub fn edition_uri(&self) -> &str {
        &self.edition_uri
    }

    /// The same code system, served as `serving` says (verified first,
    /// unless trusted).
    pub fn with_serving(mut self, serving: Arc<Serving>) -> SnomedCt<B> {
        self.serving = serving;
        self
    }

    /// Whether it may answer, and why not.
    pub fn serving(&self) -> &Serving {
        &self.serving
    }

    /// `Ok` when it may answer now, else the 503 naming the edition.
    pub fn check_serving(&self) -> Result<(), txmap_terminology::Error> {
        self.serving
            .check(&format!("the SNOMED CT edition {}", self.version_uri))
    }

    /// The ECL budget of a request: its deadline and this code system's
    /// work limit.
    pub fn budget(&self, deadline: Option<Instant>) -> Budget {
        Budget {
            deadline,
            max_work: self.max_work,
        }
    }
}

impl From<ConstraintError> for Error {
    fn from(e: ConstraintError) -> Error {
        match e {
            ConstraintError::InvalidEcl { .. } => Error::InvalidConstraint(e.to_string()),
            ConstraintError::NotSupported { text } => Error::NotSupported(text),
            ConstraintError::Invalid { text } => Error::Invalid(text),
            ConstraintError::TooCostly { text } => Error::Budget(text),
            ConstraintError::Store(e) => Error::Store(e.to_string()),
        }
    }
}

/// The description type as a designation's `use`.
fn designation_use(type_id: u64) -> Option<serde_json::Value> {
    let display = match type_id {
        sctid::FSN => "Fully specified name",
        sctid::SYNONYM => "Synonym",
        sctid::DEFINITION => "Definition",
        _ => return None,
    };
    Some(json!({"system": SNOMED_CT, "code": type_id.to_string(), "display": display}))
}

/// Whether `asked` names the edition version `version_uri` of edition
/// `edition_uri`: the version URI itself, the edition URI (its latest
/// version: the resolver picks the latest that matches), either in its
/// `xsct` form, or the bare date of the version.
fn names_version(asked: &str, version_uri: &str, edition_uri: &str) -> bool {
    let published = |u: &str| u.replacen("http://snomed.info/xsct/", "http://snomed.info/sct/", 1);
    let asked = published(asked.trim());
    asked == published(version_uri)
        || asked == published(edition_uri)
        || version_uri.rsplit('/').next() == Some(asked.as_str())
}

impl<B: AsRef<[u8]> + std::fmt::Debug + Send + Sync> CodeSystemProvider for SnomedCt<B> {
    fn url(&self) -> &str {
        SNOMED_CT
    }
    fn in_service(&self) -> Result<(), txmap_terminology::Error> {
        self.check_serving()
    }
    fn malformed(&self, code: &str) -> Option<&'static str> {
        sctid_malformed(code)
    }
    fn version(&self) -> Option<&str> {
        Some(&self.version_uri)
    }
    fn name(&self) -> Option<&str> {
        Some("SNOMED CT")
    }
    fn content(&self) -> Content {
        Content::Complete
    }
    fn case_sensitive(&self) -> bool {
        true
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
    fn len(&self) -> usize {
        self.edition.concept_count() as usize
    }
    fn locate(&self, code: &str) -> Option<Located> {
        if code.is_empty()
            || !code.bytes().all(|b| b.is_ascii_digit())
            || self.malformed(code).is_some()
        {
            return None;
        }
        let id = self.edition.ordinal(code.parse().ok()?)?;
        Some(Located {
            id,
            case_differs: false,
        })
    }
    fn code(&self, id: ConceptId) -> Cow<'_, str> {
        Cow::Owned(
            self.edition
                .sctid(id)
                .map_or_else(|_| String::new(), |s| s.to_string()),
        )
    }
    fn display(&self, id: ConceptId) -> Option<&str> {
        self.edition.preferred_term(id).ok().flatten()
    }
    fn definition(&self, id: ConceptId) -> Option<&str> {
        self.edition
            .descriptions(id)
            .ok()?
            .into_iter()
            .find(|d| d.active && d.type_id == sctid::DEFINITION)
            .map(|d| d.term)
    }
    fn designations(&self, id: ConceptId) -> Cow<'_, [Designation]> {
        let list = self.edition.descriptions(id).unwrap_or_default();
        Cow::Owned(
            list.into_iter()
                .filter(|d| d.active)
                .map(|d| Designation {
                    language: Some(d.language.to_owned()),
                    use_: designation_use(d.type_id),
                    value: d.term.to_owned(),
                    source: None,
                    extensions: Vec::new(),
                })
                .collect(),
        )
    }
    fn properties(&self, id: ConceptId) -> Cow<'_, [PropertyValue]> {
        let mut out = Vec::new();
        if let Ok(c) = self.edition.concept_at(id) {
            out.push(PropertyValue {
                code: "inactive".into(),
                key: "valueBoolean".into(),
                value: json!(!c.active),
            });
            out.push(PropertyValue {
                code: "moduleId".into(),
                key: "valueCode".into(),
                value: json!(c.module.to_string()),
            });
        }
        for (code, list) in [
            ("parent", self.edition.parents(id)),
            ("child", self.edition.children(id)),
        ] {
            for o in list.iter().flat_map(|l| l.iter()) {
                if let Ok(s) = self.edition.sctid(o) {
                    out.push(PropertyValue {
                        code: code.into(),
                        key: "valueCode".into(),
                        value: json!(s.to_string()),
                    });
                }
            }
        }
        Cow::Owned(out)
    }
    fn status(&self, id: ConceptId) -> Status {
        let active = self.edition.is_active(id).unwrap_or(true);
        Status {
            inactive: !active,
            deprecated: false,
            not_selectable: false,
            status: (!active).then(|| "inactive".to_owned()),
        }
    }
    fn parents(&self, id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Owned(
            self.edition
                .parents(id)
                .map(|l| l.to_vec())
                .unwrap_or_default(),
        )
    }
    fn children(&self, id: ConceptId) -> Cow<'_, [ConceptId]> {
        Cow::Owned(
            self.edition
                .children(id)
                .map(|l| l.to_vec())
                .unwrap_or_default(),
        )
    }
    fn roots(&self) -> Cow<'_, [ConceptId]> {
        Cow::Owned(self.edition.root().into_iter().collect())
    }
    fn property_def(&self, code: &str) -> Option<(Option<&str>, Option<&str>)> {
        match code {
            "inactive" => Some((
                Some("http://hl7.org/fhir/concept-properties#inactive"),
                Some("boolean"),
            )),
            "parent" => Some((
                Some("http://hl7.org/fhir/concept-properties#parent"),
                Some("code"),
            )),
            "child" => Some((
                Some("http://hl7.org/fhir/concept-properties#child"),
                Some("code"),
            )),
            "moduleId" => Some((None, Some("code"))),
            _ => None,
        }
    }
    fn version_matches(&self, asked: &str) -> bool {
        names_version(asked, &self.version_uri, &self.edition_uri)
    }
    fn is_default_version(&self) -> bool {
        self.is_default()
    }
    fn native_filters(
        &self,
        filters: &[FilterDef],
        deadline: Option<Instant>,
    ) -> Option<Result<Box<dyn NativeFilters + '_>, Error>> {
        let compiled = filters
            .iter()
            // `expressions` says whether post-coordinated expressions are
            // members; codes here are concepts.
            .filter(|f| f.property != "expressions")
            .map(|f| Constraint::compose(&f.property, &f.op, f.value.as_deref().unwrap_or("")))
            .collect::<Result<Vec<_>, _>>();
        Some(match compiled {
            Ok(constraints) => Ok(Box::new(EclFilters {
                edition: &self.edition,
                constraints,
                budget: Budget {
                    deadline,
                    max_work: self.max_work,
                },
            })),
            Err(e) => Err(e.into()),
        })
    }
    fn all(&self) -> Vec<ConceptId> {
        (0..self.edition.concept_count()).collect()
    }
    fn subsumed_by(&self, a: ConceptId, b: ConceptId) -> bool {
        self.edition.subsumes(b, a).unwrap_or(false)
    }
    fn descendants(&self, id: ConceptId) -> Vec<ConceptId> {
        self.edition
            .descendants(id)
            .map(|l| l.to_vec())
            .unwrap_or_default()
    }
}

/// A rule's filters as ECL over one edition.
struct EclFilters<'e, B: AsRef<[u8]>> {
    edition: &'e Edition<B>,
    constraints: Vec<Constraint>,
    budget: Budget,
}

impl<B: AsRef<[u8]>> NativeFilters for EclFilters<'_, B> {
    fn matches(&self, id: ConceptId) -> Result<bool, Error> {
        for c in &self.constraints {
            if !c.matches(self.edition, &Subject::Concept(id), &self.budget)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn members(&self) -> Result<Vec<ConceptId>, Error> {
        Ok(constraint::evaluate_all(
            &self.constraints,
            self.edition,
            &self.budget,
        )?)
    }
}

/// Decodes `%XX` escapes (an ECL in a URL); invalid escapes stay as they
/// are.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        match (
            b[i],
            b.get(i + 1).copied().and_then(hex),
            b.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (c, _, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// An implicit SNOMED CT value set URL split: the edition or version URI
/// it names (`None`: the default edition) and its filters (none: every
/// concept). `None` when `url` is not an implicit SNOMED CT value set, or
/// names no value set (`isa/` of something that is not an SCTID).
///
/// `?fhir_vs` is every concept, `?fhir_vs=isa/X` `concept is-a X`,
/// `?fhir_vs=refset/R` `concept in R`, `?fhir_vs=ecl/E` the constraint
/// `E` (percent-decoded).
pub fn implicit_filters(url: &str) -> Option<(Option<&str>, Vec<FilterDef>)> {
    let (base, query) = url.split_once('?')?;
    let qualified =
        base.starts_with("http://snomed.info/sct/") || base.starts_with("http://snomed.info/xsct/");
    if base != SNOMED_CT && !qualified {
        return None;
    }
    let version = qualified.then_some(base);
    let one = |property: &str, op: &str, value: String| {
        vec![FilterDef {
            property: property.into(),
            op: op.into(),
            value: Some(value),
        }]
    };
    let sctid = |s: &str| s.parse::<u64>().ok().map(|n| n.to_string());
    let filters = match query.strip_prefix("fhir_vs") {
        Some("") => Vec::new(),
        Some(v) => {
            let v = v.strip_prefix('=')?;
            if let Some(x) = v.strip_prefix("isa/") {
                one("concept", "is-a", sctid(x)?)
            } else if let Some(r) = v.strip_prefix("refset/") {
                one("concept", "in", sctid(r)?)
            } else if let Some(e) = v.strip_prefix("ecl/") {
                one("constraint", "=", percent_decode(e))
            } else {
                return None;
            }
        }
        None => return None,
    };
    Some((version, filters))
}

/// Why a code of digits cannot be an SCTID by its form: an SCTID is
/// written without leading zeros ("0404684003" is not 404684003), in at
/// most 18 digits. `None` for anything else (an expression is judged by
/// its parser).
pub fn sctid_malformed(code: &str) -> Option<&'static str> {
    if code.is_empty() || !code.bytes().all(|b| b.is_ascii_digit()) {
        None
    } else if code.starts_with('0') {
        Some("an SCTID has no leading zeros")
    } else if code.len() > 18 {
        Some("an SCTID has at most 18 digits")
    } else {
        None
    }
}

/// The edition and filters of an implicit value set URL among `editions`:
/// the edition its URI names (the latest version of an edition URI), else
/// the default one — in service or not: the caller asks
/// [`CodeSystemProvider::in_service`], so that one out of service is a 503,
/// not an unknown value set.
pub fn implicit_value_set<'a, B: AsRef<[u8]> + std::fmt::Debug + Send + Sync>(
    url: &str,
    editions: &'a [SnomedCt<B>],
) -> Option<(&'a dyn CodeSystemProvider, Vec<FilterDef>)> {
    let (version, filters) = implicit_filters(url)?;
    let edition = match version {
        Some(v) => editions
            .iter()
            .filter(|e| e.version_matches(v))
            .max_by(|a, b| a.version_uri.cmp(&b.version_uri)),
        None => editions
            .iter()
            .find(|e| e.is_default())
            .or(editions.first()),
    }?;
    Some((edition as &dyn CodeSystemProvider, filters))
}

#[cfg(test)]
mod tests;
