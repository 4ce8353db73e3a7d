//! Issues and errors, with the texts and message ids of the HL7
//! terminology tooling (`messages-tx.fhir.org.json` in the ecosystem
//! suite shows them), rendered as OperationOutcome JSON.
//!
//! An [`Issue`] is a finding inside a successful answer (`$validate-code`
//! reports them in its `issues` parameter); an [`Error`] ends the
//! operation and becomes the response's OperationOutcome with its HTTP
//! status.

use std::fmt;

use serde_json::{Value, json};

/// The `tx-issue-type` code system of the HL7 terminology tooling.
pub const TX_ISSUE_TYPE: &str = "http://hl7.org/fhir/tools/CodeSystem/tx-issue-type";

/// The extension naming an issue's message in the tooling's catalogue.
pub const MESSAGE_ID: &str = "http://hl7.org/fhir/StructureDefinition/operationoutcome-message-id";

/// One OperationOutcome issue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Issue {
    /// `error`, `warning` or `information`.
    pub severity: &'static str,
    /// The FHIR issue type (`code-invalid`, `not-found`...).
    pub code: &'static str,
    /// The `tx-issue-type` code; empty for none.
    pub tx_type: &'static str,
    pub message_id: Option<&'static str>,
    pub text: String,
    /// The FHIRPath of the element concerned (`Coding.code`...).
    pub expression: Option<String>,
}

/// The most bytes of one issue's text an answer carries: a request's
/// input (a megabyte code) is shown once, in its own parameter, not again
/// in every issue and message that names it.
pub const MAX_ISSUE_TEXT: usize = 1024;

/// `text` as an answer shows it: cut at [`MAX_ISSUE_TEXT`] bytes (on a
/// character boundary), saying how long it was.
pub fn shown(text: &str) -> std::borrow::Cow<'_, str> {
    if text.len() <= MAX_ISSUE_TEXT {
        return text.into();
    }
    let mut end = MAX_ISSUE_TEXT;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes in all)", &text[..end], text.len()).into()
}

impl Issue {
    pub fn to_json(&self) -> Value {
        let mut issue = serde_json::Map::new();
        if let Some(id) = self.message_id {
            issue.insert(
                "extension".into(),
                json!([{ "url": MESSAGE_ID, "valueString": id }]),
            );
        }
        issue.insert("severity".into(), json!(self.severity));
        issue.insert("code".into(), json!(self.code));
        let mut details = json!({ "text": shown(&self.text) });
        if !self.tx_type.is_empty() {
            details["coding"] = json!([{ "system": TX_ISSUE_TYPE, "code": self.tx_type }]);
        }
        issue.insert("details".into(), details);
        // `location` is deprecated, and the tooling's answers omit it.
        if let Some(e) = &self.expression {
            issue.insert("expression".into(), json!([e]));
        }
        Value::Object(issue)
    }
}

/// An OperationOutcome of `issues`.
pub fn outcome(issues: &[Issue]) -> Value {
    json!({
        "resourceType": "OperationOutcome",
        "issue": issues.iter().map(Issue::to_json).collect::<Vec<_>>(),
    })
}

/// Why an operation cannot answer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// A value set named by the request or imported is unknown.
    ValueSetNotFound { url: String },
    /// An expansion's import of a value set in a version (its canonical's
    /// `|version`, or `default-valueset-version`) that is not known.
    ImportVersionNotFound { url: String, version: String },
    /// The code system to look a code up in is unknown.
    CodeSystemNotFound { url: String },
    /// The code system is known, not in that version.
    CodeSystemVersionNotFound {
        url: String,
        version: String,
        known: Vec<String>,
        expanding: bool,
    },
    /// The code system is a supplement, not a code system.
    Supplement { canonical: String },
    /// A supplement a value set requires is not given.
    SupplementMissing { url: String },
    /// A code that is not in the code system (`$lookup`).
    UnknownCode { system: String, code: String },
    /// A filter with no value.
    FilterWithoutValue {
        system: String,
        property: String,
        op: String,
    },
    /// A filter operator the engine does not know for that property.
    UnsupportedFilter {
        system: String,
        property: String,
        op: String,
    },
    /// A value set that imports itself, directly or not.
    Circular { url: String, path: Vec<String> },
    /// Imports nested deeper than the engine follows.
    ImportsTooDeep { url: String, depth: usize },
    /// An expansion larger than allowed.
    TooCostly { value_set: String, limit: usize },
    /// The request's time budget ran out.
    OutOfTime,
    /// A code system's own constraint language refused a filter (SNOMED
    /// CT: invalid ECL); the text says why.
    InvalidConstraint(String),
    /// A filter or construct the code system does not support.
    NotSupported(String),
    /// A code system's evaluation ran out of its work budget.
    Budget(String),
    /// A code system's store could not be read.
    Store(String),
    /// Something the request names that the server does not hold (a
    /// code, an edition, a resource); the text says what.
    NotFound(String),
    /// A request body in a format the server does not read.
    UnsupportedMediaType(String),
    /// The server failed (a task that did not finish); the text says how.
    Internal(String),
    /// What the request needs is not in service now (an edition still
    /// being verified, or one whose file failed verification); the text
    /// says which and why. 503: another server, or later, may answer.
    Unavailable(String),
    /// The code system's content cannot be expanded.
    NotEnumerable { system: String },
    /// The version used is not the one `check-system-version` requires.
    VersionCheck {
        url: String,
        version: String,
        required: String,
    },
    /// A `displayLanguage` that is not a language tag (list).
    InvalidDisplayLanguage(String),
    /// A parameter missing.
    Required(&'static str),
    /// Anything else the request got wrong.
    Invalid(String),
}

impl Error {
    /// [`Error::Invalid`]: the request got something wrong.
    pub fn invalid(text: impl Into<String>) -> Error {
        Error::Invalid(text.into())
    }

    /// [`Error::NotFound`].
    pub fn not_found(text: impl Into<String>) -> Error {
        Error::NotFound(text.into())
    }

    /// [`Error::Required`].
    pub fn required(name: &'static str) -> Error {
        Error::Required(name)
    }

    /// [`Error::Budget`]: 422 `too-costly`.
    pub fn too_costly(text: impl Into<String>) -> Error {
        Error::Budget(text.into())
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        match self {
            Error::ValueSetNotFound { .. }
            | Error::ImportVersionNotFound { .. }
            | Error::CodeSystemNotFound { .. }
            | Error::CodeSystemVersionNotFound { .. }
            | Error::UnknownCode { .. } => 404,
            Error::TooCostly { .. }
            | Error::OutOfTime
            | Error::Budget(_)
            | Error::ImportsTooDeep { .. } => 422,
            Error::Store(_) | Error::Internal(_) => 500,
            Error::Unavailable(_) => 503,
            Error::NotFound(_) => 404,
            Error::UnsupportedMediaType(_) => 415,
            _ => 400,
        }
    }

    /// The issue that describes it.
    pub fn issue(&self) -> Issue {
        let (code, tx_type, message_id): (_, _, Option<&'static str>) = match self {
            Error::ValueSetNotFound { .. } => (
                "not-found",
                "not-found",
                Some("Unable_to_resolve_value_Set_"),
            ),
            Error::ImportVersionNotFound { .. } => {
                ("not-found", "not-found", Some("VS_EXP_IMPORT_UNK_PINNED"))
            }
            Error::CodeSystemNotFound { .. } => {
                ("not-found", "not-found", Some("UNKNOWN_CODESYSTEM"))
            }
            Error::CodeSystemVersionNotFound { expanding, .. } => (
                "not-found",
                "not-found",
                Some(if *expanding {
                    "UNKNOWN_CODESYSTEM_VERSION_EXP"
                } else {
                    "UNKNOWN_CODESYSTEM_VERSION"
                }),
            ),
            Error::Supplement { .. } => (
                "invalid",
                "invalid-data",
                Some("CODESYSTEM_CS_NO_SUPPLEMENT"),
            ),
            Error::SupplementMissing { .. } => (
                "not-found",
                "not-found",
                Some("VALUESET_SUPPLEMENT_MISSING"),
            ),
            Error::UnknownCode { .. } => ("not-found", "not-found", Some("Unknown_Code_in")),
            Error::FilterWithoutValue { .. } => (
                "invalid",
                "vs-invalid",
                Some("UNABLE_TO_HANDLE_SYSTEM_FILTER_WITH_NO_VALUE"),
            ),
            Error::UnsupportedFilter { .. } => ("not-supported", "vs-invalid", None),
            Error::ImportsTooDeep { .. } => ("too-costly", "vs-invalid", None),
            Error::Circular { .. } => (
                "processing",
                "vs-invalid",
                Some("VALUESET_CIRCULAR_REFERENCE"),
            ),
            Error::TooCostly { .. } => ("too-costly", "", Some("VALUESET_TOO_COSTLY")),
            Error::OutOfTime | Error::Budget(_) => ("too-costly", "", None),
            Error::InvalidConstraint(_) => ("invalid", "vs-invalid", Some("INVALID_ECL")),
            Error::NotSupported(_) => ("not-supported", "", None),
            Error::Store(_) | Error::Internal(_) => ("exception", "", None),
            Error::Unavailable(_) => ("transient", "", None),
            Error::NotFound(_) => ("not-found", "not-found", None),
            Error::UnsupportedMediaType(_) => ("not-supported", "", None),
            // The suite (hgvs-expand-all) and FHIR: not a cost, a thing
            // the code system cannot do.
            Error::NotEnumerable { .. } => ("not-supported", "", Some("CODESYSTEM_NOT_ENUMERABLE")),
            Error::VersionCheck { .. } => {
                ("exception", "version-error", Some("VALUESET_VERSION_CHECK"))
            }
            Error::InvalidDisplayLanguage(_) => (
                "processing",
                "invalid-display",
                Some("INVALID_DISPLAY_NAME"),
            ),
            // FHIR's issue type for a missing element.
            Error::Required(_) => ("required", "invalid-data", None),
            Error::Invalid(_) => ("invalid", "invalid-data", None),
        };
        Issue {
            severity: "error",
            code,
            tx_type,
            message_id,
            text: self.to_string(),
            expression: None,
        }
    }

    /// The OperationOutcome.
    pub fn outcome(&self) -> Value {
        outcome(&[self.issue()])
    }
}

/// "a, b or c"
pub(crate) fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::ValueSetNotFound { url } => {
                write!(
                    f,
                    "A definition for the value Set '{url}' could not be found"
                )
            }
            Error::ImportVersionNotFound { url, version } => write!(
                f,
                "Unable to find included value set '{url}' version '{version}'"
            ),
            Error::CodeSystemNotFound { url } => write!(
                f,
                "A definition for CodeSystem '{url}' could not be found, so the code cannot be validated"
            ),
            Error::CodeSystemVersionNotFound {
                url,
                version,
                known,
                expanding,
            } => {
                let what = if *expanding {
                    "the value set cannot be expanded"
                } else {
                    "the code cannot be validated"
                };
                write!(
                    f,
                    "A definition for CodeSystem '{url}' version '{version}' could not be found, so {what}. "
                )?;
                if known.is_empty() {
                    write!(f, "No versions of this code system are known")
                } else {
                    write!(f, "Valid versions: {}", or_list(known))
                }
            }
            Error::Supplement { canonical } => write!(
                f,
                "CodeSystem {canonical} is a supplement, so can't be used as a value in Coding.system"
            ),
            Error::SupplementMissing { url } => {
                write!(f, "Required supplement not found: {url}")
            }
            Error::UnknownCode { system, code } => {
                write!(f, "Unknown code '{code}' in the CodeSystem '{system}'")
            }
            Error::FilterWithoutValue {
                system,
                property,
                op,
            } => write!(
                f,
                "The system {system} filter with property = {property}, op = {op} has no value"
            ),
            Error::UnsupportedFilter {
                system,
                property,
                op,
            } => write!(
                f,
                "The filter with property = {property}, op = {op} is not supported for the system {system}"
            ),
            Error::ImportsTooDeep { url, depth } => write!(
                f,
                "The value set '{url}' is imported more than {depth} levels deep, deeper than this server follows"
            ),
            Error::Circular { url, path } => write!(
                f,
                "Found a circularity pointing to {url} processing ValueSet with pathway [{}]",
                path.join(", ")
            ),
            Error::TooCostly { value_set, limit } => write!(
                f,
                "The value set '{value_set}' expansion has too many codes to produce (>{limit})"
            ),
            Error::OutOfTime => write!(f, "the operation ran out of its time budget"),
            Error::InvalidConstraint(text)
            | Error::NotSupported(text)
            | Error::Budget(text)
            | Error::Store(text)
            | Error::NotFound(text)
            | Error::UnsupportedMediaType(text)
            | Error::Internal(text)
            | Error::Unavailable(text) => f.write_str(text),
            Error::NotEnumerable { system } => write!(
                f,
                "The code system '{system}' cannot be expanded because its codes cannot be iterated or enumerated in any meaningful sense"
            ),
            Error::VersionCheck {
                url,
                version,
                required,
            } => write!(
                f,
                "The version '{version}' is not allowed for system '{url}': required to be '{required}' by a version-check parameter"
            ),
            Error::InvalidDisplayLanguage(text) => write!(f, "Invalid displayLanguage: '{text}'"),
            Error::Required(name) => write!(f, "The parameter '{name}' is required"),
            Error::Invalid(text) => f.write_str(text),
        }
    }
}

impl std::error::Error for Error {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_match_the_tooling() {
        let e = Error::CodeSystemVersionNotFound {
            url: "http://cs".into(),
            version: "2".into(),
            known: vec!["1.0".into(), "1.2".into()],
            expanding: false,
        };
        assert_eq!(
            e.to_string(),
            "A definition for CodeSystem 'http://cs' version '2' could not be found, so the code cannot be validated. Valid versions: 1.0 or 1.2"
        );
        assert_eq!(e.status(), 404);
        let o = e.outcome();
        assert_eq!(o["issue"][0]["details"]["coding"][0]["code"], "not-found");
        assert_eq!(or_list(&["a".into(), "b".into(), "c".into()]), "a, b or c");
        let e = Error::ImportVersionNotFound {
            url: "http://vs".into(),
            version: "3".into(),
        };
        assert_eq!(
            e.to_string(),
            "Unable to find included value set 'http://vs' version '3'"
        );
        assert_eq!(e.issue().message_id, Some("VS_EXP_IMPORT_UNK_PINNED"));
    }
}
