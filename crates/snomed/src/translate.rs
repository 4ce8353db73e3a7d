//! `ConceptMap/$translate` over SNOMED CT's implicit concept maps.
//!
//! ## `$translate`
//!
//! The source is `code` (or `sourceCode`, `coding`, `sourceCoding`) in
//! `http://snomed.info/sct`, looked up in the edition `version` names (the
//! default edition without one). `url` names one implicit concept map,
//! `http://snomed.info/sct?fhir_cm=<refset id>`, an association refset or
//! a simple, complex or extended map refset; without `url` every historical
//! association refset is used. Each target is one `match`:
//!
//! - R4: `equivalence`, `concept`, `source` (the concept map's URL);
//! - R5: `relationship`, `concept`, `originMap` (the concept map's URL).
//!
//! Historical associations map as the FHIR SNOMED CT page's implicit
//! concept maps do: SAME AS is `equal` (R5 `equivalent`), REPLACED BY,
//! MOVED TO and MOVED FROM `equivalent`, WAS A `wider` (R5
//! `source-is-narrower-than-target`), PARTIALLY EQUIVALENT TO `narrower`
//! (R5 `source-is-broader-than-target`), POSSIBLY EQUIVALENT TO and
//! ALTERNATIVE `inexact` (R5 `related-to`), the others `relatedto` (R5
//! `related-to`). A map refset's target is the member's `mapTarget`
//! string, related to the source as `relatedto` (R5 `related-to`); its
//! system is unknown, so the Coding has one only when `targetSystem` is
//! given. A `targetSystem` other than SNOMED CT excludes association
//! targets. An unknown code is `result` false with a `message`.

use serde_json::json;
use txmap_store::RefsetKind;
use txmap_store::sctid::association::{
    ALTERNATIVE, MOVED_FROM, MOVED_TO, PARTIALLY_EQUIVALENT_TO, POSSIBLY_EQUIVALENT_TO,
    REPLACED_BY, SAME_AS, WAS_A,
};
use txmap_terminology::Error;
use txmap_terminology::parameters::{Param, Parameters, Scalar};
use txmap_terminology::params::{Coding, Params, merge};

use crate::{SNOMED_CT, SnomedCt, Stored, check_system, term_of};

/// The prefix of an implicit SNOMED CT concept map's URL.
pub const FHIR_CM: &str = "http://snomed.info/sct?fhir_cm=";

/// The (R4 equivalence, R5 relationship) of an association refset's targets.
fn association_relationship(refset: u64) -> (&'static str, &'static str) {
    match refset {
        SAME_AS => ("equal", "equivalent"),
        REPLACED_BY | MOVED_TO | MOVED_FROM => ("equivalent", "equivalent"),
        WAS_A => ("wider", "source-is-narrower-than-target"),
        PARTIALLY_EQUIVALENT_TO => ("narrower", "source-is-broader-than-target"),
        POSSIBLY_EQUIVALENT_TO | ALTERNATIVE => ("inexact", "related-to"),
        _ => ("relatedto", "related-to"),
    }
}

fn is_map(kind: RefsetKind) -> bool {
    matches!(
        kind,
        RefsetKind::SimpleMap | RefsetKind::ComplexMap | RefsetKind::ExtendedMap
    )
}

/// One target of a translation.
struct Target {
    code: String,
    display: Option<String>,
    system: Option<String>,
    relationship: (&'static str, &'static str),
    map: u64,
}

/// `ConceptMap/$translate`.
/// A `$translate` request as read from its parameters: the edition
/// version it names, the code, the implicit concept map (none: every
/// historical association) and the target system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    pub version: Option<String>,
    pub code: String,
    pub map: Option<u64>,
    pub target_system: Option<String>,
}

/// Reads a `$translate` request (`code`/`sourceCode`, `coding`/
/// `sourceCoding`, `system`, `version`, `url`, `targetSystem`).
pub fn asked(params: &Params) -> Result<Asked, Error> {
    let coding = merge_codings(params.coding("coding")?, params.coding("sourceCoding")?)?;
    let pick = |f: fn(&Coding) -> Option<&str>| coding.and_then(f);
    let system = merge(
        "system",
        merge(
            "system",
            params.text("system")?,
            params.text("sourceSystem")?,
        )?,
        pick(|c| c.system.as_deref()),
    )?;
    let version = merge(
        "version",
        merge(
            "version",
            params.text("version")?,
            params.text("sourceVersion")?,
        )?,
        pick(|c| c.version.as_deref()),
    )?;
    let code = merge(
        "code",
        merge("code", params.text("code")?, params.text("sourceCode")?)?,
        pick(|c| c.code.as_deref()),
    )?
    .ok_or_else(|| Error::required("code"))?
    .to_owned();
    check_system(system)?;
    let url = params.text("url")?.filter(|u| !u.is_empty());
    let map = match url {
        None => None,
        Some(u) => Some(
            u.strip_prefix(FHIR_CM)
                .and_then(|id| id.parse::<u64>().ok())
                .ok_or_else(|| {
                    Error::not_found(format!(
                        "A definition for ConceptMap '{u}' could not be found: this server knows the implicit SNOMED CT concept maps {FHIR_CM}<refset id>"
                    ))
                })?,
        ),
    };
    Ok(Asked {
        version: version.map(str::to_owned),
        code,
        map,
        target_system: params.text("targetSystem")?.map(str::to_owned),
    })
}

fn merge_codings<'a>(
    a: Option<&'a Coding>,
    b: Option<&'a Coding>,
) -> Result<Option<&'a Coding>, Error> {
    match (a, b) {
        (Some(x), Some(y)) if x != y => Err(Error::invalid(
            "coding and sourceCoding are both given, differently",
        )),
        (Some(x), _) | (None, Some(x)) => Ok(Some(x)),
        (None, None) => Ok(None),
    }
}

/// The answer to `asked` in edition `e`, as R5 (`relationship`,
/// `originMap`) or R4 (`equivalence`, `source`) words it.
pub fn translate<B: AsRef<[u8]>>(
    e: &SnomedCt<B>,
    r5: bool,
    asked: &Asked,
) -> Result<String, Error> {
    let (code, map, target_system) = (
        asked.code.as_str(),
        asked.map,
        asked.target_system.as_deref(),
    );
    let ed = e.edition();
    let info = match map {
        None => None,
        Some(id) => match ed.refset(id) {
            Some(r) if r.kind == RefsetKind::Association || is_map(r.kind) => Some(r),
            _ => {
                return Err(Error::not_found(format!(
                    "A definition for ConceptMap '{FHIR_CM}{id}' could not be found: {id} is not an association or map reference set in {}",
                    e.version_uri()
                )));
            }
        },
    };
    let malformed = crate::sctid_malformed(code);
    let id = (!code.is_empty() && malformed.is_none() && code.bytes().all(|b| b.is_ascii_digit()))
        .then(|| code.parse::<u64>().ok())
        .flatten()
        .filter(|&id| ed.ordinal(id).is_some());
    let Some(id) = id else {
        let why = malformed
            .map(|why| format!(": {}", txmap_terminology::code::invalid_text(code, why)))
            .unwrap_or_default();
        return Ok(result(
            r5,
            &[],
            Some(format!(
                "Unable to find code '{code}' in {SNOMED_CT} version {}{why}",
                e.version_uri()
            )),
        ));
    };
    let mut targets = Vec::new();
    let snomed_targets = target_system.is_none_or(|s| s == SNOMED_CT);
    match info {
        Some(r) if is_map(r.kind) => {
            let column = r
                .field_names()
                .iter()
                .position(|c| c == "mapTarget")
                .unwrap_or(0);
            for m in ed.component_refsets(id).stored()? {
                if m.refset != r.id {
                    continue;
                }
                let Some(t) = m.field(column).filter(|t| !t.is_empty()) else {
                    continue;
                };
                targets.push(Target {
                    code: t.to_owned(),
                    display: None,
                    system: target_system.map(str::to_owned),
                    relationship: ("relatedto", "related-to"),
                    map: r.id,
                });
            }
        }
        _ if snomed_targets => {
            for a in ed.associations(id).stored()? {
                if map.is_some_and(|m| m != a.refset) {
                    continue;
                }
                targets.push(Target {
                    code: a.target.to_string(),
                    display: term_of(ed, a.target)?.map(str::to_owned),
                    system: Some(SNOMED_CT.to_owned()),
                    relationship: association_relationship(a.refset),
                    map: a.refset,
                });
            }
        }
        _ => {}
    }
    let message = targets.is_empty().then(|| match map {
        Some(m) => format!("No translations found for '{code}' in {FHIR_CM}{m}"),
        None => format!("No translations found for '{code}' in the historical associations"),
    });
    Ok(result(r5, &targets, message))
}

fn result(r5: bool, targets: &[Target], message: Option<String>) -> String {
    let mut out = vec![Param::value(
        "result",
        "valueBoolean",
        Scalar::Bool(!targets.is_empty()),
    )];
    if let Some(m) = message {
        out.push(Param::text("message", "valueString", m));
    }
    for t in targets {
        let mut concept = json!({ "code": t.code });
        if let Some(s) = &t.system {
            concept["system"] = json!(s);
        }
        if let Some(d) = &t.display {
            concept["display"] = json!(d);
        }
        let source = format!("{FHIR_CM}{}", t.map);
        let parts = match r5 {
            false => vec![
                Param::text("equivalence", "valueCode", t.relationship.0),
                Param::json("concept", "valueCoding", concept),
                Param::text("source", "valueUri", source),
            ],
            true => vec![
                Param::text("relationship", "valueCode", t.relationship.1),
                Param::json("concept", "valueCoding", concept),
                Param::text("originMap", "valueCanonical", source),
            ],
        };
        out.push(Param::parts("match", parts));
    }
    Parameters(out).to_json()
}
