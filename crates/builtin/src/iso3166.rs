//! ISO 3166-1 country codes (`urn:iso:std:iso:3166`) as a CodeSystem
//! resource the engine serves like any other: every country's alpha-2,
//! alpha-3 and numeric code, each with the English short name, and the
//! user-assigned code elements of ISO 3166-1 § 8.1.3 — alpha-2 `AA`,
//! `QM`–`QZ`, `XA`–`XZ`, `ZZ`; alpha-3 `AAA`–`AAZ`, `QMA`–`QZZ`,
//! `XAA`–`XZZ`, `ZZA`–`ZZZ`; numeric `900`–`999` — as `User-assigned`,
//! whose displays a supplement may give, and whose users may name them as
//! they like: another display is reported for information, not as an
//! error (Kosovo's `XK` is one that addresses carry). The countries come
//! from the PyPI package `iso3166` (MIT) through `data/iso3166.tsv`
//! (`data/README.md`).
//!
//! The resource has no version: the data is the package's, which follows
//! ISO's changes without naming the state of the standard it reflects,
//! and a version txmap made up would be read as one.

use serde_json::{Value, json};
use txmap_terminology::CodeSystem;

use crate::ISO3166;

const COUNTRIES: &str = include_str!("../data/iso3166.tsv");

/// The display of every user-assigned code element.
pub const USER_ASSIGNED: &str = "User-assigned";

/// The concept property that marks a user-assigned code element, whose
/// display is the user's: the engine takes another display for
/// information only ([`txmap_terminology::validate::USER_ASSIGNED`]).
pub const USER_ASSIGNED_PROPERTY: &str = txmap_terminology::validate::USER_ASSIGNED;

/// Whether an alpha-2 code element is in a user-assigned range.
pub fn user_assigned(alpha2: &str) -> bool {
    let b = alpha2.as_bytes();
    b.len() == 2
        && b.iter().all(u8::is_ascii_uppercase)
        && (alpha2 == "AA" || alpha2 == "ZZ" || (b[0] == b'Q' && b[1] >= b'M') || b[0] == b'X')
}

fn user_assigned_codes() -> Vec<String> {
    let letters = b'A'..=b'Z';
    let mut alpha2: Vec<String> = Vec::new();
    for a in letters.clone() {
        for b in letters.clone() {
            let code = String::from_utf8(vec![a, b]).unwrap_or_default();
            if user_assigned(&code) {
                alpha2.push(code);
            }
        }
    }
    let alpha3 = alpha2
        .iter()
        .flat_map(|two| letters.clone().map(move |c| format!("{two}{}", c as char)));
    let mut codes: Vec<String> = alpha2.clone();
    codes.extend(alpha3);
    codes.extend((900..=999).map(|n| n.to_string()));
    codes
}

/// The code system, as FHIR JSON.
pub fn resource() -> Value {
    let mut concepts: Vec<Value> = Vec::new();
    for line in COUNTRIES.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let [alpha2, alpha3, numeric, name] = f[..] else {
            continue;
        };
        for code in [alpha2, alpha3, numeric] {
            concepts.push(json!({"code": code, "display": name}));
        }
    }
    concepts.extend(user_assigned_codes().into_iter().map(|code| {
        json!({"code": code, "display": USER_ASSIGNED,
                    "property": [{"code": USER_ASSIGNED_PROPERTY, "valueBoolean": true}]})
    }));
    json!({
        "resourceType": "CodeSystem",
        "url": ISO3166,
        "name": "ISO3166Part1",
        "title": "ISO 3166-1 Codes for the representation of names of countries and their subdivisions, Part 1: Country codes",
        "status": "active",
        "experimental": false,
        "caseSensitive": true,
        "content": "complete",
        "language": "en",
        "count": concepts.len(),
        "property": [{"code": USER_ASSIGNED_PROPERTY, "type": "boolean",
            "description": "A code element ISO leaves to its users to assign (ISO 3166-1 § 8.1.3): what it names, and so its display, is theirs"}],
        "concept": concepts,
    })
}

/// The code system, parsed.
pub fn code_system() -> Option<CodeSystem> {
    CodeSystem::from_json(&resource())
}
