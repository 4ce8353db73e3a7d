//! What a code is before any code system is asked: FHIR's `code` type
//! has no leading or trailing white space (its pattern is
//! `[^\s]+( [^\s]+)*`), so `" 404684003"` or `"8867-4\n"` is not a code
//! padded by mistake that a server may trim — it is not a code. Each
//! operation checks the codes a request gives as sent, the same way for
//! every code system: `$validate-code` answers `result: false` with an
//! issue saying why ([`issue`]), and `$lookup`, `$subsumes` and
//! `$translate` refuse with 400 ([`check_request`]). What a code system
//! adds to this (SNOMED CT: an SCTID has no leading zeros) it says in its
//! own `locate`, with the same issue.

use crate::error::{Error, Issue};
use crate::operation::Operation;
use crate::request::Request;

/// Why `code` is not a FHIR code, or `None` when it is one (as far as
/// its form goes). White space is Unicode's (U+00A0 as well as a tab or
/// a line feed).
pub fn malformed(code: &str) -> Option<&'static str> {
    if code.starts_with(char::is_whitespace) {
        Some("a code does not start with white space")
    } else if code.ends_with(char::is_whitespace) {
        Some("a code does not end with white space")
    } else {
        None
    }
}

/// The text that says `code` is invalid and `why`; the code is shown
/// escaped, so that the white space is seen.
pub fn invalid_text(code: &str, why: &str) -> String {
    format!("The code {code:?} is not valid: {why}")
}

/// The `$validate-code` issue for a code that is not a code.
pub fn issue(code: &str, why: &str, expression: &str) -> Issue {
    Issue {
        severity: "error",
        code: "code-invalid",
        tx_type: "invalid-code",
        message_id: None,
        text: invalid_text(code, why),
        expression: Some(expression.to_owned()),
    }
}

/// The parameters of `$lookup`, `$subsumes` and `$translate` that carry
/// a code, as text or in a Coding or CodeableConcept.
const CODE_PARAMETERS: [&str; 10] = [
    "code",
    "codeA",
    "codeB",
    "coding",
    "codingA",
    "codingB",
    "codeableConcept",
    "sourceCode",
    "sourceCoding",
    "sourceCodeableConcept",
];

/// A 400 naming the first code a `$lookup`, `$subsumes` or `$translate`
/// request gives that is not a code; every other operation passes
/// (`$validate-code` says so in its answer instead).
pub fn check_request(op: Operation, request: &Request) -> Result<(), Error> {
    if !matches!(
        op,
        Operation::Lookup | Operation::Subsumes | Operation::Translate
    ) {
        return Ok(());
    }
    let params = &request.params;
    for name in CODE_PARAMETERS {
        let mut codes: Vec<&str> = params.all_text(name);
        if let Ok(Some(c)) = params.coding(name) {
            codes.extend(c.code.as_deref());
        }
        if let Ok(Some(list)) = params.codeable_concept(name) {
            codes.extend(list.iter().filter_map(|c| c.code.as_deref()));
        }
        if let Some((code, why)) = codes
            .into_iter()
            .find_map(|c| malformed(c).map(|why| (c, why)))
        {
            return Err(Error::Invalid(format!(
                "{} (parameter {name})",
                invalid_text(code, why)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_of_any_white_space_is_not_a_code() {
        for bad in [" 404684003", "404684003\n", "\t8867-4", "\u{a0}en", "mg "] {
            assert!(malformed(bad).is_some(), "{bad:?}");
        }
        for good in ["404684003", "8867-4", "mg/dL", "73211009 : 363698007 = 1"] {
            assert_eq!(malformed(good), None, "{good:?}");
        }
        assert!(invalid_text("a\n", "x").contains(r#""a\n""#));
    }
}
