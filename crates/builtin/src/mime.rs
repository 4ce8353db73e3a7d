//! Media types (BCP 13, RFC 6838): `type/subtype`, optionally with
//! parameters (`text/plain; charset=UTF-8`), as FHIR's `Attachment`
//! carries them. Any well-formed media type of a registered top-level
//! type is a code — the grammar, not a list: vendor (`vnd.`), personal
//! (`prs.`) and unregistered (`x.`) trees are media types too. Names
//! compare ignoring case, so a code is spelled with its type and subtype
//! in lower case; parameter values keep their case.

use txmap_terminology::grammar::{Grammar, GrammarConcept};

use crate::{MAX_CODE_LEN, MIME};

/// RFC 6838's registered top-level types.
const TOP_LEVEL: [&str; 11] = [
    "application",
    "audio",
    "example",
    "font",
    "haptics",
    "image",
    "message",
    "model",
    "multipart",
    "text",
    "video",
];

/// The media type grammar.
#[derive(Clone, Copy, Debug, Default)]
pub struct MediaTypes;

/// RFC 6838 `restricted-name`: a letter or digit, then up to 126 of
/// letters, digits and `!#$&-^_.+`.
fn restricted_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 127
        && b[0].is_ascii_alphanumeric()
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(c))
}

/// RFC 2045 `token`: printable ASCII but spaces and tspecials.
fn token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_graphic() && !b"()<>@,;:\\\"/[]?=".contains(&c))
}

/// A parameter value: a token, or a quoted string of printable ASCII.
fn value(s: &str) -> bool {
    if let Some(inner) = s.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return inner.bytes().all(|c| c == b' ' || c.is_ascii_graphic()) && !inner.contains('"');
    }
    token(s)
}

impl Grammar for MediaTypes {
    fn url(&self) -> &str {
        MIME
    }
    fn version(&self) -> Option<&str> {
        None
    }
    fn name(&self) -> &str {
        "Mime Types (BCP 13)"
    }
    fn case_sensitive(&self) -> bool {
        false
    }
    fn concept(&self, code: &str) -> Option<GrammarConcept> {
        if code.is_empty() || code.len() > MAX_CODE_LEN || code.trim() != code {
            return None;
        }
        let (media, params) = match code.find(';') {
            Some(i) => code.split_at(i),
            None => (code, ""),
        };
        let (top, sub) = media.split_once('/')?;
        let (top, sub) = (top.to_ascii_lowercase(), sub.to_ascii_lowercase());
        if !TOP_LEVEL.contains(&top.as_str()) || !restricted_name(&sub) {
            return None;
        }
        for p in params.split(';').skip(1) {
            let (name, v) = p.trim().split_once('=')?;
            if !token(name) || !value(v) {
                return None;
            }
        }
        // The type and subtype in lower case; the parameters as written.
        let canonical = format!("{top}/{sub}{params}");
        Some(GrammarConcept {
            display: canonical.clone(),
            code: canonical,
            designations: Vec::new(),
            properties: Vec::new(),
            deprecated: false,
        })
    }
}
