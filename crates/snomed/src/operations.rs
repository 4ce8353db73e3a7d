//! The operations SNOMED CT answers whole ([`NativeOperations`]): what
//! the engine's generic path cannot say about SNOMED CT — post-coordinated
//! expressions as codes and members, editions named by URI, ECL and
//! implicit value sets expanded with SNOMED CT's own shape, `$lookup`'s
//! SNOMED CT properties, the implicit concept maps of `$translate`.
//!
//! [`Editions::claims`] takes a request about SNOMED CT alone: a code in
//! `http://snomed.info/sct`, a SNOMED CT implicit value set, or a value
//! set (inline, or a `tx-resource` matching `url`) whose every include
//! and exclude is SNOMED CT and imports nothing. The rest goes to the
//! generic engine, which reaches the editions as code system providers:
//! a value set that mixes systems or imports value sets, one only the
//! packages hold, a CodeableConcept of several codings or a bare code
//! against a value set (each coding weighed, systems inferred), and
//! `$batch-validate-code`.

use std::sync::Arc;

use serde_json::Value;
use txmap_terminology::operation::{Answer, Cost, Fhir, NativeOperations, Operation};
use txmap_terminology::parameters::Parameters;
use txmap_terminology::params::Params;
use txmap_terminology::{Error, Request};

use crate::lookup::{PropertyFilter, find, lookup_code};
use crate::{SNOMED_CT, SnomedCt, Stored, check_system, editions};

/// Every loaded edition, as the answerer of SNOMED CT's own operations.
#[derive(Debug)]
pub struct Editions<B: AsRef<[u8]>> {
    list: Arc<[SnomedCt<B>]>,
}

impl<B: AsRef<[u8]>> Default for Editions<B> {
    fn default() -> Self {
        Editions {
            list: Arc::from(Vec::new()),
        }
    }
}

impl<B: AsRef<[u8]>> Editions<B> {
    pub fn new(list: Arc<[SnomedCt<B>]>) -> Editions<B> {
        Editions { list }
    }

    pub fn list(&self) -> &Arc<[SnomedCt<B>]> {
        &self.list
    }

    /// The edition `version` names, or the default one, counted as used.
    pub(crate) fn edition(&self, version: Option<&str>) -> Result<&SnomedCt<B>, Error> {
        let e = editions::resolve(&self.list, version)?;
        e.count_use();
        Ok(e)
    }
}

/// Whether a system URL is SNOMED CT's (an edition's URI included).
fn is_snomed(system: &str) -> bool {
    system.starts_with(SNOMED_CT)
}

/// Whether a system is named and is not SNOMED CT.
fn not_snomed(system: Option<&str>) -> bool {
    system.is_some_and(|s| !is_snomed(s))
}

/// Whether a ValueSet resource is SNOMED CT alone and imports nothing.
fn snomed_value_set(vs: &Value) -> bool {
    let Some(compose) = vs.get("compose") else {
        return true;
    };
    ["include", "exclude"].into_iter().all(|k| {
        compose
            .get(k)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .all(|r| {
                r.get("valueSet").is_none() && !not_snomed(r.get("system").and_then(Value::as_str))
            })
    })
}

/// The system a request's code names, from `system`, `coding` or the
/// first coding of `codeableConcept` (its SNOMED CT coding if it has one).
fn code_system(params: &Params) -> Option<&str> {
    use txmap_terminology::params::ParamValue;
    params
        .0
        .iter()
        .find_map(|(name, v)| match (name.as_str(), v) {
            ("system", ParamValue::Text(s)) => Some(s.as_str()),
            ("coding", ParamValue::Coding(c)) => c.system.as_deref(),
            // A concept with a SNOMED CT coding is about SNOMED CT.
            ("codeableConcept", ParamValue::CodeableConcept(cs)) => cs
                .iter()
                .find(|c| c.system.as_deref() == Some(SNOMED_CT))
                .or(cs.first())
                .and_then(|c| c.system.as_deref()),
            _ => None,
        })
}

/// Whether a CodeableConcept has more than one coding: against a value
/// set each is checked in its own system, and one good coding can make it
/// valid, which the generic engine weighs. (`CodeSystem/$validate-code`
/// of SNOMED CT checks the concept's SNOMED CT coding.)
fn several_codings(params: &Params) -> bool {
    params
        .codeable_concept("codeableConcept")
        .ok()
        .flatten()
        .is_some_and(|cs| cs.len() > 1)
}

/// Whether SNOMED CT answers `op` for `params` itself.
pub fn claims(op: Operation, params: &Params) -> bool {
    let text = |name: &str| params.text(name).ok().flatten();
    if op == Operation::VsValidate && several_codings(params) {
        return false;
    }
    // A bare code: its system is inferred from the value set's includes.
    if op == Operation::VsValidate
        && text("code").is_some()
        && text("system").is_none()
        && code_system(params).is_none()
    {
        return false;
    }
    match op {
        Operation::Lookup => !not_snomed(code_system(params)),
        Operation::Subsumes => {
            let a = params.coding("codingA").ok().flatten();
            let b = params.coding("codingB").ok().flatten();
            let system = text("system")
                .or_else(|| a.and_then(|c| c.system.as_deref()))
                .or_else(|| b.and_then(|c| c.system.as_deref()));
            !not_snomed(system)
        }
        // A code with no system at all is the generic engine's: it says
        // the code cannot be validated, whatever the code system.
        Operation::CsValidate => text("url")
            .or_else(|| code_system(params))
            .is_some_and(is_snomed),
        Operation::BatchValidate | Operation::Compare => false,
        Operation::Translate => {
            let has_map = params
                .resources("tx-resource")
                .into_iter()
                .any(|r| r.get("resourceType").and_then(Value::as_str) == Some("ConceptMap"));
            let system = text("sourceSystem")
                .or_else(|| text("system"))
                .or_else(|| code_system(params));
            !has_map || system.is_some_and(|s| s.starts_with(SNOMED_CT))
        }
        Operation::VsValidate | Operation::Expand => {
            if let Some(vs) = params.resources("valueSet").first() {
                return snomed_value_set(vs);
            }
            let Some(url) = text("url") else {
                return !not_snomed(code_system(params));
            };
            if url.starts_with(SNOMED_CT) || crate::valueset::implicit_value_set(url).is_some() {
                return true;
            }
            match crate::valueset::tx_resource_value_set(params, url) {
                Some(vs) => snomed_value_set(vs),
                // Not sent with the request: only the generic engine can
                // find it (in the loaded packages), or say it is unknown.
                None => false,
            }
        }
    }
}

impl<B: AsRef<[u8]> + std::fmt::Debug + Send + Sync> NativeOperations for Editions<B> {
    fn claims(&self, op: Operation, request: &Request) -> Option<Cost> {
        if !claims(op, &request.params) {
            return None;
        }
        Some(match op {
            Operation::Expand => Cost::Heavy,
            // A membership test is a few lookups, unless ECL text is
            // involved.
            Operation::VsValidate => match crate::valueset::resolve_value_set(&request.params) {
                Ok(r) if r.def.has_ecl() => Cost::Heavy,
                _ => Cost::Cheap,
            },
            _ => Cost::Cheap,
        })
    }

    fn answer(&self, op: Operation, request: &Request, fhir: Fhir) -> Result<Answer, Error> {
        self.answer_op(op, request, fhir)
            .map_err(|e| self.name_store_error(e))
    }
}

impl<B: AsRef<[u8]> + std::fmt::Debug + Send + Sync> Editions<B> {
    /// A store error says which file it came from: the edition's, or with
    /// several loaded, those in service.
    fn name_store_error(&self, e: Error) -> Error {
        let Error::Store(text) = e else {
            return e;
        };
        let files: Vec<&str> = self
            .list
            .iter()
            .filter(|e| e.serving().is_serving())
            .map(|e| e.serving().file())
            .collect();
        Error::Store(match files.as_slice() {
            [one] => format!("{text} (SNOMED CT edition file {one})"),
            many => format!(
                "{text} (one of the SNOMED CT edition files {})",
                many.join(", ")
            ),
        })
    }

    fn answer_op(&self, op: Operation, request: &Request, fhir: Fhir) -> Result<Answer, Error> {
        let r5 = fhir == Fhir::R5;
        Ok(match op {
            Operation::Lookup => Answer::Text(self.lookup(request)?),
            Operation::Subsumes => Answer::Parameters(self.subsumes(&request.params)?),
            Operation::CsValidate => {
                Answer::Text(crate::validate::cs_validate_code(self, request)?)
            }
            Operation::VsValidate => {
                Answer::Text(crate::validate::vs_validate_code(self, request)?)
            }
            Operation::Expand => Answer::Resource(crate::expand::expand(self, request, r5)?),
            Operation::Translate => {
                let asked = crate::translate::asked(&request.params)?;
                let e = self.edition(asked.version.as_deref())?;
                Answer::Text(crate::translate::translate(e, r5, &asked)?)
            }
            Operation::BatchValidate | Operation::Compare => {
                return Err(Error::Internal(format!("{op:?} is the generic engine's")));
            }
        })
    }
}

impl<B: AsRef<[u8]> + std::fmt::Debug + Send + Sync> Editions<B> {
    /// `CodeSystem/$lookup` of a SNOMED CT code, in the edition `version`
    /// names, as JSON text.
    fn lookup(&self, request: &Request) -> Result<String, Error> {
        let params = &request.params;
        let named = params.coded(params.coding("coding")?)?;
        let code = named.code.ok_or_else(|| Error::required("code"))?;
        check_system(named.system)?;
        let e = self.edition(named.version)?;
        let filter = PropertyFilter::new(&params.all_text("property"));
        let language = crate::language::DisplayLanguage::parse(request.display_language_param()?);
        lookup_code(e, code, &filter, &language).map(|p| p.to_json())
    }

    /// `CodeSystem/$subsumes` of two SNOMED CT codes, from the closure.
    fn subsumes(&self, params: &Params) -> Result<Parameters<'static>, Error> {
        let asked = txmap_terminology::subsumes::pair(params)?;
        // Codings without a system are taken as SNOMED CT's.
        if asked.system.is_some()
            || (params.coding("codingA")?.is_none() && params.coding("codingB")?.is_none())
        {
            check_system(asked.system)?;
        }
        let e = self.edition(asked.version)?;
        let (a, b) = (find(e, asked.code_a)?, find(e, asked.code_b)?);
        txmap_terminology::subsumes::answer(a, b, |x, y| e.edition().subsumes(x, y).stored())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Params {
        Params::from_parameters(&v).unwrap()
    }

    #[test]
    fn snomed_ct_claims_requests_about_snomed_ct_alone() {
        let lookup = |system: &str| {
            params(json!({"resourceType": "Parameters", "parameter": [
                {"name": "system", "valueUri": system}, {"name": "code", "valueCode": "1"}]}))
        };
        assert!(claims(Operation::Lookup, &lookup(SNOMED_CT)));
        assert!(!claims(Operation::Lookup, &lookup("http://example.org/cs")));
        let subsumes = |system: &str| {
            params(json!({"resourceType": "Parameters", "parameter": [
                {"name": "codingA", "valueCoding": {"system": system, "code": "1"}},
                {"name": "codeB", "valueCode": "2"}]}))
        };
        assert!(claims(Operation::Subsumes, &subsumes(SNOMED_CT)));
        assert!(!claims(
            Operation::Subsumes,
            &subsumes("http://example.org/cs")
        ));
        let vs = |include: Value| {
            params(json!({"resourceType": "Parameters", "parameter": [
                {"name": "url", "valueUri": "http://example.org/vs"},
                {"name": "tx-resource", "resource": {"resourceType": "ValueSet", "url": "http://example.org/vs",
                    "compose": {"include": [include]}}}]}))
        };
        assert!(claims(Operation::Expand, &vs(json!({"system": SNOMED_CT}))));
        assert!(!claims(
            Operation::Expand,
            &vs(json!({"system": "http://example.org/cs"}))
        ));
        assert!(!claims(
            Operation::Expand,
            &vs(json!({"valueSet": ["http://example.org/other"]}))
        ));
        // A value set the request does not carry is for the engine to find.
        let by_url = params(json!({"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": "http://example.org/in-a-package"}]}));
        assert!(!claims(Operation::Expand, &by_url));
        let implicit = params(json!({"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": "http://snomed.info/sct?fhir_vs"},
            {"name": "system", "valueUri": SNOMED_CT}, {"name": "code", "valueCode": "1"}]}));
        assert!(claims(Operation::VsValidate, &implicit));
        let bare = params(json!({"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": "http://snomed.info/sct?fhir_vs"},
            {"name": "code", "valueCode": "1"}]}));
        assert!(!claims(Operation::VsValidate, &bare));
        let cc = |n: usize| {
            let codings: Vec<Value> = (0..n)
                .map(|i| json!({"system": SNOMED_CT, "code": i.to_string()}))
                .collect();
            params(json!({"resourceType": "Parameters", "parameter": [
                {"name": "url", "valueUri": "http://snomed.info/sct?fhir_vs"},
                {"name": "codeableConcept", "valueCodeableConcept": {"coding": codings}}]}))
        };
        assert!(claims(Operation::VsValidate, &cc(1)));
        assert!(!claims(Operation::VsValidate, &cc(2)));
        assert!(claims(Operation::CsValidate, &cc(2)));
        assert!(!claims(Operation::BatchValidate, &implicit));
        // A coding with no system is nobody's: the engine says it cannot
        // be validated.
        let no_system = params(json!({"resourceType": "Parameters", "parameter": [
            {"name": "coding", "valueCoding": {"code": "OBG"}}]}));
        assert!(!claims(Operation::CsValidate, &no_system));
        let snomed_coding = params(json!({"resourceType": "Parameters", "parameter": [
            {"name": "coding", "valueCoding": {"system": SNOMED_CT, "code": "1"}}]}));
        assert!(claims(Operation::CsValidate, &snomed_coding));
    }
}
