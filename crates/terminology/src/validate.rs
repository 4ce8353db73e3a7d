//! `$validate-code` against a CodeSystem or a ValueSet: the code, Coding
//! or CodeableConcept is located in its code system, checked for
//! membership, status, case and display, and every finding is an issue
//! with the tooling's message. The answer is a Parameters resource
//! (`result`, `message`, `issues`, the code's `system`, `version`,
//! `display`...); only a request that cannot be evaluated at all (an
//! unknown value set) is an [`Error`].

use std::borrow::Cow;

use crate::engine::Engine;
use crate::error::{Error, Issue};
use crate::language::{self, Prefs};
use crate::parameters::{Param, Parameters, Scalar};
use crate::provider::{CodeSystemProvider, Content};
use crate::request::{Coding, Request};
use crate::valueset::ValueSet;

/// The code system with the supplements the request (`useSupplement`)
/// and the value set (`valueset-supplement`) ask for applied; borrowed
/// when there are none.
pub fn with_supplements<'a>(
    req: &Request,
    vs: Option<&ValueSet>,
    cs: &'a dyn CodeSystemProvider,
) -> crate::supplement::Supplemented<'a> {
    let sups = crate::supplement::requested(req, vs).unwrap_or_default();
    crate::supplement::apply(cs, &sups)
}

/// The first supplement the request or the value set requires that the
/// request does not hold.
pub fn missing_supplement(req: &Request, vs: &ValueSet) -> Option<Error> {
    crate::supplement::requested(req, Some(vs)).err()
}

/// The version of the value set's include of `system` that speaks for
/// `code`: with several includes of the system, the one the coding's
/// version matches, else the latest that holds the code with the
/// coding's display, else the latest that holds the code, else the first.
fn include_version<'v>(
    resolver: &crate::Resolver,
    vs: &'v ValueSet,
    system: &str,
    code: &str,
    coding: Option<&str>,
    display: Option<&str>,
) -> Option<&'v str> {
    let rules: Vec<_> = vs
        .compose
        .include
        .iter()
        .filter(|r| r.system.as_deref() == Some(system))
        .collect();
    if rules.len() > 1 {
        if let Some(cv) = coding
            && let Some(r) = rules.iter().find(|r| {
                r.version
                    .as_deref()
                    .is_some_and(|v| crate::resolver::version_matches(v, cv))
            })
        {
            return r.version.as_deref();
        }
        // The version of the rule's code system, when it holds the code
        // (`Some(display matches)`).
        let holding = |r: &crate::valueset::Rule| {
            let cs = resolver.code_system(system, r.version.as_deref()).ok()?;
            let id = cs.locate(code).map(|l| l.id);
            if r.concepts.is_empty() {
                id?;
            } else {
                r.concepts.iter().find(|c| c.code == code)?;
            }
            let shown = id.zip(display).is_some_and(|(id, d)| {
                cs.display(id) == Some(d) || cs.designations(id).iter().any(|x| x.value == d)
            });
            Some((cs.version()?.to_owned(), shown))
        };
        let latest = |pick: &dyn Fn(&crate::valueset::Rule) -> Option<String>| {
            rules
                .iter()
                .filter_map(|r| pick(r).map(|v| (r, v)))
                .max_by(|a, b| crate::resolver::version_cmp(Some(&a.1), Some(&b.1)))
                .map(|(r, _)| r.version.as_deref())
        };
        let shown = |r: &crate::valueset::Rule| holding(r).filter(|h| h.1).map(|h| h.0);
        let held = |r: &crate::valueset::Rule| holding(r).map(|h| h.0);
        let any = |r: &crate::valueset::Rule| {
            resolver
                .code_system(system, r.version.as_deref())
                .ok()
                .and_then(|cs| cs.version().map(str::to_owned))
        };
        if let Some(v) = latest(&shown)
            .or_else(|| latest(&held))
            .or_else(|| latest(&any))
        {
            return v;
        }
    }
    rules.first().and_then(|r| r.version.as_deref())
}

/// Where in the request a coding came from, for issue expressions.
#[derive(Clone, Debug)]
struct Origin {
    /// The code's path: `code`, `Coding.code`, `CodeableConcept.coding[0].code`.
    code: String,
    system: String,
    display: String,
    /// The coding itself: `Coding`, `CodeableConcept.coding[0]`; the
    /// code's path for separate parameters.
    whole: String,
    /// Inside a CodeableConcept: value set misses are informational.
    in_cc: bool,
}

impl Origin {
    fn params() -> Origin {
        Origin {
            code: "code".into(),
            system: "system".into(),
            display: "display".into(),
            whole: "code".into(),
            in_cc: false,
        }
    }
    fn coding(prefix: &str, in_cc: bool) -> Origin {
        Origin {
            code: format!("{prefix}.code"),
            system: format!("{prefix}.system"),
            display: format!("{prefix}.display"),
            whole: prefix.to_owned(),
            in_cc,
        }
    }
}

/// What checking one coding found.
#[derive(Debug, Default)]
struct Checked {
    issues: Vec<Issue>,
    valid: bool,
    code: Option<String>,
    system: Option<String>,
    version: Option<String>,
    display: Option<String>,
    inactive: bool,
    /// The status code of an inactive or deprecated concept.
    status: Option<String>,
    normalized: Option<String>,
    unknown_system: Option<String>,
    /// The unknown system is one the value set includes.
    caused_by_unknown: Option<String>,
    /// The code is known and a member of the value set (if any).
    member: bool,
    /// Why the value set's filters left the code out, in its grammar's
    /// words: for the message, not issues of their own.
    explained: Vec<String>,
}

/// The most codings of one CodeableConcept a validation checks: a
/// concept is coded in a few systems, not thousands, and each coding's
/// issues are part of the answer (60,000 unknown codings made a 69 MB
/// answer and twice the memory limit).
pub const MAX_CODINGS: usize = 1000;

/// The concept property of a code its users assign and name (ISO 3166's
/// user-assigned code elements): its display is theirs, so another one is
/// reported for information, not as an error.
pub const USER_ASSIGNED: &str = "user-assigned";

/// Whether the concept's displays are the only right ones: not for a
/// concept of a CodeSystem resource marked [`USER_ASSIGNED`].
fn display_fixed(cs: &dyn CodeSystemProvider, id: u32) -> bool {
    cs.resource().is_none()
        || !cs
            .properties(id)
            .iter()
            .any(|p| p.code == USER_ASSIGNED && p.value == serde_json::Value::Bool(true))
}

fn issue(
    severity: &'static str,
    code: &'static str,
    tx_type: &'static str,
    message_id: &'static str,
    text: String,
    expression: &str,
) -> Issue {
    Issue {
        severity,
        code,
        tx_type,
        message_id: Some(message_id),
        text,
        expression: Some(expression.to_owned()),
    }
}

struct Validator<'a> {
    req: &'a Request,
    engine: Engine<'a>,
    vs: Option<&'a ValueSet>,
    /// The request's `abstract` flag: false forbids notSelectable codes.
    abstract_ok: bool,
    lenient_display: bool,
    active_only: bool,
    /// `valueset-membership-only`: a CodeableConcept reports membership
    /// only, not what its codings' code systems say of them.
    membership_only: bool,
    /// The display language asked for, as written.
    language: Option<String>,
}

/// The display language of a validation: the request's
/// `displayLanguage`, else the value set's `displayLanguage` expansion
/// parameter, else `Accept-Language`, else the value set's own language.
fn display_language(req: &Request, vs: Option<&ValueSet>) -> Option<String> {
    req.text("displayLanguage")
        .or_else(|| vs.and_then(|vs| vs.expansion_parameter("displayLanguage")))
        .or_else(|| req.accept_language.clone())
        .or_else(|| {
            vs.and_then(|vs| vs.resource.get("language")?.as_str())
                .map(str::to_owned)
        })
}

/// Whether an issue is about value set membership (or a value set that
/// cannot be found) rather than about the coding in its code system.
fn about_membership(i: &Issue) -> bool {
    matches!(i.tx_type, "not-in-vs" | "this-code-not-in-vs" | "not-found")
}

/// `CodeSystem/$validate-code` (`vs` is `None`) or
/// `ValueSet/$validate-code`.
pub fn validate_code(req: &Request, value_set: bool) -> Result<Parameters<'static>, Error> {
    let engine = Engine::new(&req.resolver, usize::MAX, false)
        .with_stop(req.stop())
        .with_versions(crate::version::VersionRules::from_request(req));
    let mut inline = None;
    let vs = if value_set {
        Some(req.value_set(&mut inline)?)
    } else {
        None
    };
    crate::language::check_request(req)?;
    crate::supplement::requested(req, vs)?;
    let v = Validator {
        req,
        engine,
        vs,
        abstract_ok: req.flag("abstract")?.unwrap_or(true),
        lenient_display: req.flag("lenient-display-validation")?.unwrap_or(false),
        active_only: req.flag("activeOnly")?.unwrap_or(false),
        membership_only: req.flag("valueset-membership-only")?.unwrap_or(false),
        language: display_language(req, vs),
    };
    let mut out: Vec<Param<'static>> = Vec::new();
    let checked = if let Some(codings) = req.codeable_concept("codeableConcept") {
        out.push(Param::json(
            "codeableConcept",
            "valueCodeableConcept",
            req.value("codeableConcept").cloned().unwrap_or_default(),
        ));
        v.check_cc(&codings)?
    } else if let Some(c) = req.coding("coding") {
        v.check(&c, &Origin::coding("Coding", false), false)?
    } else {
        let system = if value_set {
            req.text("system")
        } else {
            req.text("url").or_else(|| req.text("system"))
        };
        let c = Coding {
            system,
            version: req.text("systemVersion").or_else(|| req.text("version")),
            code: Some(req.text("code").ok_or(Error::Required("code"))?),
            display: req.text("display"),
        };
        v.check(&c, &Origin::params(), true)?
    };
    let text = |name: &'static str, key: &'static str, value: &Option<String>| {
        value.as_ref().map(|v| Param::text(name, key, v.clone()))
    };
    out.extend(text("code", "valueCode", &checked.code));
    out.extend(text("system", "valueUri", &checked.system));
    out.extend(text("version", "valueString", &checked.version));
    out.extend(text("display", "valueString", &checked.display));
    if checked.inactive {
        out.push(Param::value("inactive", "valueBoolean", Scalar::Bool(true)));
    }
    out.extend(text("status", "valueCode", &checked.status));
    out.extend(text("normalized-code", "valueCode", &checked.normalized));
    out.extend(text(
        "x-unknown-system",
        "valueCanonical",
        &checked.unknown_system,
    ));
    out.extend(text(
        "x-caused-by-unknown-system",
        "valueCanonical",
        &checked.caused_by_unknown,
    ));
    let mut issues = checked.issues;
    issues.extend(v.cautions());
    out.push(Param::value(
        "result",
        "valueBoolean",
        Scalar::Bool(checked.valid),
    ));
    let texts: Vec<&str> = checked
        .explained
        .iter()
        .map(String::as_str)
        .chain(
            issues
                .iter()
                .filter(|i| {
                    (i.severity != "information" || i.tx_type == "invalid-display")
                        && !matches!(
                            i.message_id,
                            Some(
                                "CONCEPT_DEPRECATED_IN_VALUESET"
                                    | "UNKNOWN_CODE_IN_FRAGMENT"
                                    | "VALUESET_VALUE_MISMATCH_DEFAULT"
                                    | "INACTIVE_DISPLAY_FOUND"
                            )
                        )
                })
                .map(|i| i.text.as_str()),
        )
        .collect();
    if !texts.is_empty() {
        let texts: Vec<_> = texts.into_iter().map(crate::error::shown).collect();
        out.push(Param::text("message", "valueString", texts.join("; ")));
    }
    if !issues.is_empty() {
        out.push(Param::resource("issues", crate::error::outcome(&issues)));
    }
    Ok(Parameters(out))
}

impl Validator<'_> {
    fn prefs(&self) -> Prefs {
        self.language
            .as_deref()
            .map(Prefs::parse)
            .unwrap_or_default()
    }

    /// Information about draft, experimental, deprecated or withdrawn
    /// resources the answer used.
    fn cautions(&self) -> Vec<Issue> {
        let mut out = Vec::new();
        let mut add = |caution: &str, kind: &str, url: String| {
            let id = match caution {
                "deprecated" => "MSG_DEPRECATED",
                "withdrawn" => "MSG_WITHDRAWN",
                "draft" => "MSG_DRAFT",
                _ => "MSG_EXPERIMENTAL",
            };
            out.push(Issue {
                severity: "information",
                code: "business-rule",
                tx_type: "status-check",
                message_id: Some(id),
                text: format!("Reference to {caution} {kind} {url}"),
                expression: None,
            });
        };
        for cs in self.engine.used_code_systems() {
            if let Some(c) = crate::provider::caution(cs) {
                add(c, "CodeSystem", cs.versioned_url());
            }
        }
        for vs in self.engine.used_value_sets() {
            if let Some(c) = crate::valueset::value_set_caution(&vs.resource) {
                add(c, "ValueSet", vs.versioned_url());
            }
        }
        out
    }

    fn vs_name(&self) -> String {
        match self.vs {
            Some(vs) if vs.url.is_none() => "(unidentified)".to_owned(),
            Some(vs) => vs.versioned_url(),
            None => String::new(),
        }
    }

    /// The code not in the value set, named `system|version#code` when
    /// the coding gives a version.
    fn not_in_vs(&self, system: &str, code: &str, c: &Coding, origin: &Origin) -> Issue {
        let system = match &c.version {
            Some(v) => format!("{system}|{v}"),
            None => system.to_owned(),
        };
        let shown = match c.display.as_deref() {
            Some(d) => format!("{system}#{code} ('{d}')"),
            None => format!("{system}#{code}"),
        };
        let text = format!(
            "The provided code '{shown}' was not found in the value set '{}'",
            self.vs_name()
        );
        if origin.in_cc {
            issue(
                "information",
                "code-invalid",
                "this-code-not-in-vs",
                "None_of_the_provided_codes_are_in_the_value_set_one",
                text,
                &origin.code,
            )
        } else {
            issue(
                "error",
                "code-invalid",
                "not-in-vs",
                "None_of_the_provided_codes_are_in_the_value_set_one",
                text,
                &origin.code,
            )
        }
    }

    fn check_cc(&self, codings: &[Coding]) -> Result<Checked, Error> {
        if codings.len() > MAX_CODINGS {
            return Err(Error::too_costly(format!(
                "a CodeableConcept of {} codings is more than this server validates at once ({MAX_CODINGS})",
                codings.len()
            )));
        }
        let mut first: Option<Checked> = None;
        let mut good: Option<(Checked, &Coding)> = None;
        let mut all_issues = Vec::new();
        for (i, c) in codings.iter().enumerate() {
            // The request controls how long this loop is.
            self.req.check()?;
            let origin = Origin::coding(&format!("CodeableConcept.coding[{i}]"), true);
            let mut checked = self.check(c, &origin, false)?;
            if self.membership_only {
                checked.issues.retain(about_membership);
            }
            all_issues.extend(checked.issues.iter().cloned());
            if checked.member && good.is_none() {
                good = Some((checked, c));
            } else if first.is_none() {
                first = Some(checked);
            }
        }
        // One good coding makes the concept valid, unless another coding
        // is in error itself (an unknown code, a wrong display).
        if let Some((mut out, coding)) = good {
            out.valid = !all_issues.iter().any(|i| i.severity == "error");
            out.issues = all_issues;
            // A member of an include whose code system version is not
            // known (not the coding's own version) names no code.
            let own = coding
                .system
                .as_ref()
                .map(|s| format!("{s}|{}", coding.version.as_deref().unwrap_or_default()));
            if out.caused_by_unknown.is_some() && out.caused_by_unknown != own {
                out.code = None;
                out.system = None;
            }
            return Ok(out);
        }
        let mut out = first.unwrap_or_default();
        out.code = None;
        out.display = None;
        out.system = None;
        out.version = None;
        // A value set that cannot be resolved is the whole answer.
        let unresolved = all_issues
            .iter()
            .any(|i| i.message_id == Some("Unable_to_resolve_value_Set_"));
        out.issues = all_issues;
        if self.vs.is_some() && !unresolved {
            out.issues.insert(
                0,
                Issue {
                    severity: "error",
                    code: "code-invalid",
                    tx_type: "not-in-vs",
                    message_id: Some("TX_GENERAL_CC_ERROR_MESSAGE"),
                    text: format!(
                        "No valid coding was found for the value set '{}'",
                        self.vs_name()
                    ),
                    expression: None,
                },
            );
        }
        out.valid = false;
        Ok(out)
    }

    /// Infers the system of a bare code from the value set's includes; a
    /// system out of service cannot say, and so stops it.
    fn infer_system(&self, code: &str) -> Result<Vec<String>, Error> {
        let Some(vs) = self.vs else {
            return Ok(vec![]);
        };
        let mut found: Vec<String> = Vec::new();
        for rule in &vs.compose.include {
            let Some(s) = &rule.system else { continue };
            let listed = rule.concepts.iter().any(|c| c.code == code);
            let known = match self.engine.code_system(s, rule.version.as_deref()) {
                Ok(cs) => cs.locate(code).is_some(),
                Err(e @ Error::Unavailable(_)) => return Err(e),
                Err(_) => false,
            };
            if (listed || (rule.concepts.is_empty() && known)) && !found.contains(s) {
                found.push(s.clone());
            }
        }
        Ok(found)
    }

    fn check(&self, c: &Coding, origin: &Origin, implied: bool) -> Result<Checked, Error> {
        let mut out = Checked {
            code: c.code.clone(),
            ..Checked::default()
        };
        let code = c.code.clone().unwrap_or_default();
        if let Some(why) = crate::code::malformed(&code) {
            out.system.clone_from(&c.system);
            out.issues
                .push(crate::code::issue(&code, why, &origin.code));
            return Ok(out);
        }
        let system = match &c.system {
            Some(s) => s.clone(),
            None if implied && self.vs.is_some() => {
                let found = self.infer_system(&code)?;
                if let [one] = found.as_slice() {
                    one.clone()
                } else {
                    out.issues.push(issue(
                        "error",
                        "code-invalid",
                        "not-in-vs",
                        "None_of_the_provided_codes_are_in_the_value_set_one",
                        format!(
                            "The provided code '#{code}' was not found in the value set '{}'",
                            self.vs_name()
                        ),
                        &origin.code,
                    ));
                    let text = if found.is_empty() {
                        format!(
                            "The System URI could not be determined for the code '{code}' in the ValueSet '{}'",
                            self.vs_name()
                        )
                    } else {
                        format!(
                            "The System URI could not be determined for the code '{code}' in the ValueSet '{}': value set expansion has multiple matches: [{}]",
                            self.vs_name(),
                            found.join(", ")
                        )
                    };
                    out.issues.push(issue(
                        "error",
                        "not-found",
                        "cannot-infer",
                        if found.is_empty() {
                            "UNABLE_TO_INFER_CODESYSTEM"
                        } else {
                            "Unable_to_resolve_system__value_set_has_multiple_matches"
                        },
                        text,
                        &origin.code,
                    ));
                    return Ok(out);
                }
            }
            None => {
                if self.vs.is_some() {
                    out.issues.push(issue(
                        "error",
                        "code-invalid",
                        "not-in-vs",
                        "None_of_the_provided_codes_are_in_the_value_set_one",
                        format!(
                            "The provided code '#{code}' was not found in the value set '{}'",
                            self.vs_name()
                        ),
                        &origin.code,
                    ));
                }
                out.issues.push(issue(
                    "warning",
                    "invalid",
                    "invalid-data",
                    "Coding_has_no_system__cannot_validate",
                    "Coding has no system. A code with no system has no defined meaning, and it cannot be validated. A system should be provided".into(),
                    &origin.whole,
                ));
                return Ok(out);
            }
        };
        out.system = Some(system.clone());
        if !system.contains(':') {
            out.issues.push(issue(
                "error",
                "invalid",
                "invalid-data",
                "Terminology_TX_System_Relative",
                "Coding.system must be an absolute reference, not a local reference".into(),
                &origin.system,
            ));
        }
        let plan = self.vs.map(|vs| {
            let version_path = match origin.system.strip_suffix("system") {
                Some(p) => format!("{p}version"),
                None => "version".to_owned(),
            };
            crate::version::plan(
                &self.req.resolver,
                &self.engine.versions,
                &system,
                c.version.as_deref(),
                include_version(
                    &self.req.resolver,
                    vs,
                    &system,
                    &code,
                    c.version.as_deref(),
                    c.display.as_deref(),
                ),
                &origin.system,
                &version_path,
            )
        });
        let version = match &plan {
            Some(p) => p.version.clone(),
            None => c.version.clone(),
        };
        let base = match self.engine.code_system(&system, version.as_deref()) {
            Ok(cs) => cs,
            // Held and out of service: nobody can say, so no answer.
            Err(e @ Error::Unavailable(_)) => return Err(e),
            Err(e) => {
                let included = self.vs.is_some_and(|vs| vs.systems().any(|s| s == system));
                if self.vs.is_some() && !included {
                    out.issues.push(self.not_in_vs(&system, &code, c, origin));
                }
                if self.req.resolver.value_set(&system, None).is_some() {
                    out.issues.push(issue(
                        "error",
                        "invalid",
                        "invalid-data",
                        "Terminology_TX_System_ValueSet2",
                        format!(
                            "The Coding references a value set, not a code system ('{system}')"
                        ),
                        &origin.system,
                    ));
                    return Ok(out);
                }
                let mut i = e.issue();
                i.expression = Some(origin.system.clone());
                // An unknown system asked for with a version: the
                // tooling names the version, and knows none.
                if let (Error::CodeSystemNotFound { url }, Some(v)) = (&e, &c.version) {
                    i.message_id = Some("UNKNOWN_CODESYSTEM_VERSION_NONE");
                    i.text = format!(
                        "A definition for CodeSystem '{url}' version '{v}' could not be found, so the code cannot be validated. No versions of this code system are known"
                    );
                }
                if matches!(e, Error::CodeSystemNotFound { .. }) {
                    // Without a value set, the unknown system is why the
                    // code cannot be validated.
                    if included || self.vs.is_none() {
                        out.caused_by_unknown = Some(system.clone());
                    } else {
                        out.unknown_system = Some(system.clone());
                    }
                }
                out.issues.push(i);
                return Ok(out);
            }
        };
        if self.vs.is_none() {
            // The code system validated against is the one the answer used.
            self.engine.use_cs(base);
        }
        if base.content() == Content::Supplement {
            out.issues.push(issue(
                "error",
                "invalid",
                "invalid-data",
                "CODESYSTEM_CS_NO_SUPPLEMENT",
                format!(
                    "CodeSystem {} is a supplement, so can't be used as a value in Coding.system",
                    base.versioned_url()
                ),
                &origin.system,
            ));
            return Ok(out);
        }
        let cs = with_supplements(self.req, self.vs, base);
        let cs: &dyn CodeSystemProvider = &*cs;
        out.version = cs.version().map(str::to_owned);
        let mut errors = false;
        let mut unresolvable = false;
        if let Some(p) = plan {
            errors = p.issues.iter().any(|i| i.severity == "error");
            unresolvable = p.unresolvable;
            out.issues.extend(p.issues);
            if p.unknown.is_some() {
                out.caused_by_unknown = p.unknown;
            }
        }
        let Some(located) = cs.locate(&code) else {
            // A fragment does not know every code: the code may be valid.
            let fragment = cs.content() == Content::Fragment;
            if self.vs.is_some() && !fragment {
                out.issues.push(self.not_in_vs(&system, &code, c, origin));
            }
            let text = match (cs.version(), fragment) {
                (Some(v), false) => format!(
                    "Unknown code '{code}' in the CodeSystem '{}' version '{v}'",
                    cs.url()
                ),
                (None, false) => format!("Unknown code '{code}' in the CodeSystem '{}'", cs.url()),
                (v, true) => format!(
                    "Unknown Code '{code}' in the CodeSystem '{}' version '{}' - note that the code system is labeled as a fragment, so the code may be valid in some other fragment",
                    cs.url(),
                    v.unwrap_or_default()
                ),
            };
            out.issues.push(issue(
                if fragment { "warning" } else { "error" },
                "code-invalid",
                "invalid-code",
                match (fragment, cs.version()) {
                    (true, _) => "UNKNOWN_CODE_IN_FRAGMENT",
                    (false, Some(_)) => "Unknown_Code_in_Version",
                    (false, None) => "Unknown_Code_in",
                },
                text,
                &origin.code,
            ));
            if let Some(why) = cs.malformed(&code) {
                out.issues.push(Issue {
                    severity: "information",
                    ..crate::code::issue(&code, why, &origin.code)
                });
            }
            // A grammar can say where the code went wrong.
            if let Some(why) = cs.grammar().and_then(|g| g.why_not(&code)) {
                out.issues.push(Issue {
                    message_id: None,
                    ..issue(
                        "information",
                        "code-invalid",
                        "invalid-code",
                        "",
                        why,
                        &origin.code,
                    )
                });
            }
            out.valid = fragment;
            out.member = fragment;
            return Ok(out);
        };
        let id = located.id;
        let status = cs.status(id);
        out.display = language::choose(cs, id, &self.prefs())
            .display
            .map(Cow::into_owned);
        out.inactive = status.inactive;
        if status.inactive || status.deprecated {
            out.status.clone_from(&status.status);
        }
        if located.case_differs {
            out.normalized = Some(cs.code(id).into_owned());
            out.issues.push(issue(
                "information",
                "business-rule",
                "code-rule",
                "CODE_CASE_DIFFERENCE",
                format!(
                    "The code '{code}' differs from the correct code '{}' by case. Although the code system '{}' is case insensitive, implementers are strongly encouraged to use the correct case anyway",
                    cs.code(id),
                    cs.versioned_url()
                ),
                &origin.code,
            ));
        }
        let mut member_failed = false;
        let abstract_rejected = status.not_selectable && !self.abstract_ok;
        if abstract_rejected {
            errors = true;
            out.issues.push(issue(
                "error",
                "business-rule",
                "code-rule",
                "ABSTRACT_CODE_NOT_ALLOWED",
                format!("Code '{system}#{code}' is abstract, and not allowed in this context"),
                &origin.code,
            ));
        }
        if let Some(vs) = self.vs.filter(|_| !unresolvable) {
            let m = match self
                .engine
                .contains(vs, &system, version.as_deref(), &cs.code(id))
            {
                Ok(m) => m,
                Err(e @ Error::ValueSetNotFound { .. }) => {
                    out.issues.push(e.issue());
                    out.valid = false;
                    return Ok(out);
                }
                Err(e) => return Err(e),
            };
            let inactive_rejected = status.inactive && self.active_only;
            if m.inactive_excluded || inactive_rejected {
                errors = true;
                out.issues.push(issue(
                    "error",
                    "business-rule",
                    "code-rule",
                    "STATUS_CODE_WARNING_CODE",
                    format!("The concept '{code}' is valid but is not active"),
                    &origin.code,
                ));
            }
            if !m.found || inactive_rejected || abstract_rejected {
                errors = true;
                member_failed = true;
                out.issues.push(self.not_in_vs(&system, &code, c, origin));
            }
            if !m.found
                && let Some(g) = cs.grammar()
            {
                out.explained.extend(
                    vs.compose
                        .include
                        .iter()
                        .filter(|r| r.system.as_deref() == Some(cs.url()))
                        .flat_map(|r| &r.filters)
                        .filter_map(|f| g.why_filtered_out(&cs.code(id), f)),
                );
            }
        }
        if let Some(vs) = self.vs
            && vs.concept_deprecated(&system, &cs.code(id))
        {
            out.issues.push(issue(
                "warning",
                "business-rule",
                "code-comment",
                "CONCEPT_DEPRECATED_IN_VALUESET",
                format!(
                    "The presence of the concept '{code}' in the system '{system}' in the value set {} is marked with a status of deprecated and its use should be reviewed",
                    self.vs_name()
                ),
                &origin.code,
            ));
        }
        if status.inactive {
            let s = match status.status.as_deref() {
                Some(s) if s != "inactive" => format!("{s} and inactive"),
                _ => "inactive".to_owned(),
            };
            out.issues.push(issue(
                "warning",
                "business-rule",
                "code-comment",
                "INACTIVE_CONCEPT_FOUND",
                format!("The concept '{code}' has a status of {s} and its use should be reviewed"),
                &origin.whole,
            ));
        } else if status.deprecated {
            out.issues.push(issue(
                "warning",
                "business-rule",
                "code-comment",
                "DEPRECATED_CONCEPT_FOUND",
                format!("The concept '{code}' is deprecated and its use should be reviewed"),
                &origin.whole,
            ));
        }
        if let Some(given) = &c.display
            && let Some(i) = self.check_display(cs, id, given, &system, origin)
        {
            errors |= i.severity == "error";
            out.issues.push(i);
        }
        out.member = !member_failed;
        out.valid = !errors;
        Ok(out)
    }

    fn check_display(
        &self,
        cs: &dyn CodeSystemProvider,
        id: u32,
        given: &str,
        system: &str,
        origin: &Origin,
    ) -> Option<Issue> {
        let code = cs.code(id);
        // Every display the concept has, with its language (the code
        // system's display is in the resource's language).
        let designations = cs.designations(id);
        let mut all: Vec<(&str, Option<&str>)> = Vec::new();
        if let Some(d) = cs.display(id) {
            all.push((d, cs.language()));
        }
        for d in designations.iter() {
            all.push((&d.value, d.language.as_deref()));
        }
        // A display of a designation no longer in use is a warning.
        let active_match = cs.display(id) == Some(given)
            || designations
                .iter()
                .any(|d| d.value == given && crate::supplement::inactive_designation(d).is_none());
        if !active_match
            && let Some(status) = designations
                .iter()
                .filter(|d| d.value == given)
                .find_map(crate::supplement::inactive_designation)
        {
            let active: Vec<&str> = cs.display(id).into_iter().collect();
            return Some(issue(
                "warning",
                "invalid",
                "display-comment",
                "INACTIVE_DISPLAY_FOUND",
                format!(
                    "'{given}' is no longer considered a correct display for code '{code}' (status = {status}). The correct display is one of {}.",
                    crate::supplement::quoted_displays(&active)
                ),
                &origin.display,
            ));
        }
        let shown = |list: &[(&str, Option<&str>)]| -> Vec<String> {
            list.iter()
                .map(|(d, l)| match l {
                    Some(l) => format!("'{d}' ({l})"),
                    None => format!("'{d}'"),
                })
                .collect()
        };
        let lang_text = self.language.clone();
        let prefs = lang_text.as_deref().map(Prefs::parse).unwrap_or_default();
        let severity = if self.lenient_display {
            "warning"
        } else {
            "error"
        };
        let langs = lang_text.as_deref().unwrap_or("--");
        // "Valid display is 'A'", "Known display is one of 2 choices: ...".
        let listed = |word: &str, choices: &[String]| match choices {
            [one] => format!("{word} display is {one}"),
            many => format!(
                "{word} display is one of {} choices: {}",
                many.len(),
                crate::error::or_list(many)
            ),
        };
        let wrong = |choices: Vec<String>, ws: bool| {
            let listed = listed("Valid", &choices);
            let (id_text, lead) = if ws {
                (
                    "Display_Name_WS_for__should_be_one_of__instead_of",
                    "Wrong whitespace in Display Name",
                )
            } else {
                (
                    "Display_Name_for__should_be_one_of__instead_of",
                    "Wrong Display Name",
                )
            };
            issue(
                severity,
                "invalid",
                "invalid-display",
                id_text,
                format!(
                    "{lead} '{given}' for {system}#{code}. {listed} (for the language(s) '{langs}')"
                ),
                &origin.display,
            )
        };
        // A code its users name (ISO 3166's user-assigned ones): another
        // display is theirs to give, said for information.
        if !display_fixed(cs, id) && !all.iter().any(|(d, _)| *d == given) {
            let listed = listed("Known", &shown(&all));
            return Some(issue(
                "information",
                "invalid",
                "invalid-display",
                "Display_Name_Not_Fixed_use_Supplement",
                format!(
                    "The display name '{given}' is not a known display name for {system}#{code}. {listed} (for the language(s) '{langs}'). Use a supplement to define displays for user assigned codes"
                ),
                &origin.display,
            ));
        }
        let normal = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        if prefs.is_empty() {
            if all.is_empty() || all.iter().any(|(d, _)| *d == given) {
                return None;
            }
            let ws = all.iter().any(|(d, _)| normal(d) == normal(given));
            // Designations without a language are other uses, not displays.
            let mut listed = all.clone();
            listed.retain(|(d, l)| l.is_some() || Some(*d) == cs.display(id));
            return Some(wrong(shown(&listed), ws));
        }
        let in_lang: Vec<(&str, Option<&str>)> = all
            .iter()
            .filter(|(_, l)| l.is_none_or(|l| prefs.accepts(l)))
            .copied()
            .collect();
        if in_lang.iter().any(|(d, _)| *d == given) {
            return None;
        }
        if in_lang.is_empty() {
            if all.iter().any(|(d, _)| *d == given) {
                return Some(issue(
                    "information",
                    "invalid",
                    "invalid-display",
                    "NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_OK",
                    format!(
                        "There are no valid display names found for the code {system}#{code} for language(s) '{langs}'. The display is '{given}' which is a valid display for the default language"
                    ),
                    &origin.display,
                ));
            }
            return Some(issue(
                severity,
                "invalid",
                "invalid-display",
                "NO_VALID_DISPLAY_FOUND_NONE_FOR_LANG_ERR",
                format!(
                    "Wrong Display Name '{given}' for {system}#{code}. There are no valid display names found for language(s) '{langs}'. Default display is '{}'",
                    cs.display(id).unwrap_or_default()
                ),
                &origin.display,
            ));
        }
        let ws = in_lang.iter().any(|(d, _)| normal(d) == normal(given));
        Some(wrong(shown(&in_lang), ws))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn request(extra: Vec<Value>) -> Value {
        let mut params = vec![
            json!({"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://cs", "version": "1", "language": "en",
                "concept": [
                    {"code": "a", "display": "Alpha", "designation": [{"language": "de", "value": "Alfa"}]},
                    {"code": "b", "display": "Beta", "property": [{"code": "status", "valueCode": "retired"}]},
                ]
            }}),
            json!({"name": "tx-resource", "resource": {
                "resourceType": "ValueSet", "url": "http://vs", "version": "2",
                "compose": {"include": [{"system": "http://cs", "concept": [{"code": "a"}]}]}
            }}),
        ];
        params.extend(extra);
        json!({"resourceType": "Parameters", "parameter": params})
    }

    fn param<'a>(out: &'a Value, name: &str) -> Option<&'a Value> {
        out["parameter"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
    }

    /// `CodeSystem/$validate-code` against a draft code system says so, as
    /// a value set validation does; a code of an unknown system is an
    /// answer that it cannot be validated.
    #[test]
    fn code_system_validation_reports_a_draft_system_and_an_unknown_one() {
        let draft = json!({"name": "tx-resource", "resource": {
            "resourceType": "CodeSystem", "url": "http://draft", "status": "draft",
            "concept": [{"code": "x", "display": "Ex"}]}});
        let body = json!({"resourceType": "Parameters", "parameter": [draft,
            {"name": "url", "valueUri": "http://draft"}, {"name": "code", "valueCode": "x"}]});
        let out = validate_code(&Request::new(body), false)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], true);
        let issue = &param(&out, "issues").unwrap()["resource"]["issue"][0];
        assert_eq!(issue["severity"], "information");
        assert_eq!(issue["details"]["coding"][0]["code"], "status-check");
        assert_eq!(
            issue["details"]["text"],
            "Reference to draft CodeSystem http://draft"
        );

        let body = json!({"resourceType": "Parameters", "parameter": [
            {"name": "url", "valueUri": "http://nowhere"}, {"name": "code", "valueCode": "x"}]});
        let out = validate_code(&Request::new(body), false)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], false);
        assert_eq!(
            param(&out, "x-caused-by-unknown-system").unwrap()["valueCanonical"],
            "http://nowhere"
        );
    }

    #[test]
    fn a_member_with_a_wrong_display_is_an_error_naming_the_valid_ones() {
        let body = request(vec![
            json!({"name": "url", "valueUri": "http://vs"}),
            json!({"name": "coding", "valueCoding": {"system": "http://cs", "code": "a", "display": "Alpah"}}),
        ]);
        let out = validate_code(&Request::new(body.clone()), true)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], false);
        assert_eq!(
            param(&out, "message").unwrap()["valueString"],
            "Wrong Display Name 'Alpah' for http://cs#a. Valid display is one of 2 choices: 'Alpha' (en) or 'Alfa' (de) (for the language(s) '--')"
        );
    }

    fn issue_ids(out: &Value) -> Vec<&str> {
        param(out, "issues").unwrap()["resource"]["issue"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["extension"][0]["valueString"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn the_value_sets_language_is_the_last_display_language() {
        let vs = json!({"name": "tx-resource", "resource": {
            "resourceType": "ValueSet", "url": "http://vs-en", "language": "en",
            "compose": {"include": [{"system": "http://cs"}]}
        }});
        let coding = json!({"name": "coding", "valueCoding": {"system": "http://cs", "code": "a", "display": "Alfa"}});
        let body = request(vec![
            vs.clone(),
            json!({"name": "url", "valueUri": "http://vs-en"}),
            coding.clone(),
        ]);
        let out = validate_code(&Request::new(body.clone()), true)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], false);
        assert!(
            param(&out, "message").unwrap()["valueString"]
                .as_str()
                .unwrap()
                .ends_with("(for the language(s) 'en')")
        );
        let body = request(vec![
            vs,
            json!({"name": "url", "valueUri": "http://vs-en"}),
            coding,
            json!({"name": "displayLanguage", "valueCode": "de"}),
        ]);
        let out = validate_code(&Request::new(body.clone()), true)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], true);
    }

    #[test]
    fn membership_only_leaves_out_what_code_systems_say() {
        let cc = json!({"name": "codeableConcept", "valueCodeableConcept": {"coding": [
            {"system": "http://cs", "code": "b", "display": "Wrong"},
            {"system": "http://cs", "code": "zz"}]}});
        let body = request(vec![
            json!({"name": "url", "valueUri": "http://vs"}),
            cc.clone(),
        ]);
        let out = validate_code(&Request::new(body.clone()), true)
            .unwrap()
            .to_value();
        assert!(issue_ids(&out).contains(&"Unknown_Code_in_Version"));
        let body = request(vec![
            json!({"name": "url", "valueUri": "http://vs"}),
            json!({"name": "valueset-membership-only", "valueBoolean": true}),
            cc,
        ]);
        let out = validate_code(&Request::new(body.clone()), true)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], false);
        assert_eq!(
            issue_ids(&out),
            [
                "TX_GENERAL_CC_ERROR_MESSAGE",
                "None_of_the_provided_codes_are_in_the_value_set_one",
                "None_of_the_provided_codes_are_in_the_value_set_one",
            ]
        );
    }

    #[test]
    fn a_concept_in_a_value_set_with_a_missing_import_reports_only_that() {
        let body = request(vec![
            json!({"name": "tx-resource", "resource": {
                "resourceType": "ValueSet", "url": "http://bad",
                "compose": {"include": [{"valueSet": ["http://missing"]}]}
            }}),
            json!({"name": "url", "valueUri": "http://bad"}),
            json!({"name": "codeableConcept", "valueCodeableConcept": {"coding": [
                {"system": "http://cs", "code": "a"}]}}),
        ]);
        let out = validate_code(&Request::new(body.clone()), true)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], false);
        assert_eq!(issue_ids(&out), ["Unable_to_resolve_value_Set_"]);
    }

    #[test]
    fn a_code_outside_the_value_set_and_an_inactive_one() {
        let body = request(vec![
            json!({"name": "url", "valueUri": "http://vs"}),
            json!({"name": "system", "valueUri": "http://cs"}),
            json!({"name": "code", "valueCode": "b"}),
        ]);
        let out = validate_code(&Request::new(body.clone()), true)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], false);
        assert_eq!(param(&out, "inactive").unwrap()["valueBoolean"], true);
        let texts: Vec<&str> = param(&out, "issues").unwrap()["resource"]["issue"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["details"]["text"].as_str().unwrap())
            .collect();
        assert_eq!(
            texts,
            [
                "The provided code 'http://cs#b' was not found in the value set 'http://vs|2'",
                "The concept 'b' has a status of retired and inactive and its use should be reviewed",
            ]
        );
    }

    #[test]
    fn a_cycle_of_imports_is_an_error_even_for_a_code_of_another_system() {
        let vs = |url: &str, other: &str| {
            json!({"name": "tx-resource", "resource": {
                "resourceType": "ValueSet", "url": url,
                "compose": {"include": [{"system": "http://a-cs"}],
                            "exclude": [{"valueSet": [other]}]}
            }})
        };
        let body = json!({"resourceType": "Parameters", "parameter": [
            vs("http://a", "http://b"), vs("http://b", "http://a"),
            {"name": "tx-resource", "resource": {
                "resourceType": "CodeSystem", "url": "http://other", "concept": [{"code": "x"}]}},
            {"name": "url", "valueUri": "http://a"},
            {"name": "coding", "valueCoding": {"system": "http://other", "code": "x"}},
        ]});
        let err = validate_code(&Request::new(body.clone()), true).unwrap_err();
        assert!(matches!(err, Error::Circular { .. }), "{err}");
    }

    #[test]
    fn an_unknown_value_set_is_an_error_and_a_display_language_picks_the_display() {
        let body = request(vec![json!({"name": "url", "valueUri": "http://nope"})]);
        let err = validate_code(&Request::new(body.clone()), true).unwrap_err();
        assert_eq!(err.status(), 404);
        assert_eq!(
            err.to_string(),
            "A definition for the value Set 'http://nope' could not be found"
        );
        let body = request(vec![
            json!({"name": "url", "valueUri": "http://cs"}),
            json!({"name": "code", "valueCode": "a"}),
            json!({"name": "displayLanguage", "valueCode": "de"}),
        ]);
        let out = validate_code(&Request::new(body.clone()), false)
            .unwrap()
            .to_value();
        assert_eq!(param(&out, "result").unwrap()["valueBoolean"], true);
        assert_eq!(param(&out, "display").unwrap()["valueString"], "Alfa");
    }
}
