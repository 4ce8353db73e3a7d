//! BCP-47 language tags (RFC 5646) against the IANA Language Subtag
//! Registry: `language[-extlang][-script][-region][-variant...][-extension...][-x-private]`,
//! each registered subtag found in the registry in its registered case
//! (`en-US`, `zh-Hans-CN`, `sr-Latn`), a whole grandfathered tag, or a tag
//! of private use alone (`x-whatever`). The
//! display names the language and, in brackets, the script, region and
//! variants: `English (United States)`; a designation says which is
//! which: `English (Region=United States)`.
//!
//! Case: RFC 5646 makes tags case-insensitive, but FHIR validators (and
//! tx.fhir.org, whose suite txmap is judged by) accept only the
//! registry's case, so `en-us` is not a code here. A tag in another case
//! is reported unknown rather than silently corrected.

use std::collections::HashMap;

use txmap_terminology::grammar::{Grammar, GrammarConcept};
use txmap_terminology::provider::Designation;
use txmap_terminology::valueset::ValueSet;

use crate::{BCP47, MAX_CODE_LEN};

/// The registry, as `type TAB subtag TAB description TAB deprecated`
/// lines after a `#File-Date` line.
const REGISTRY: &str = include_str!("../data/language-subtags.tsv");

/// THO's `Languages` value set (ISO 639-2's languages, by their ISO 639-1
/// code where there is one): the common codes of BCP-47.
const LANGUAGES: &str = include_str!("../data/languages.json");

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Language,
    Extlang,
    Script,
    Region,
    Variant,
    Grandfathered,
}

#[derive(Debug)]
struct Entry {
    description: &'static str,
    deprecated: bool,
}

/// The BCP-47 grammar over a subtag registry.
#[derive(Debug)]
pub struct Bcp47 {
    entries: HashMap<Kind, HashMap<String, Entry>>,
    file_date: &'static str,
    common: Option<ValueSet>,
}

impl Bcp47 {
    /// The registry compiled into the binary.
    pub fn embedded() -> Bcp47 {
        Bcp47 {
            common: crate::embedded_value_set(LANGUAGES),
            ..Bcp47::parse(REGISTRY)
        }
    }

    fn parse(text: &'static str) -> Bcp47 {
        let mut entries: HashMap<Kind, HashMap<String, Entry>> = HashMap::new();
        let mut file_date = "";
        for line in text.lines() {
            if let Some(date) = line.strip_prefix("#File-Date\t") {
                file_date = date;
                continue;
            }
            let mut f = line.split('\t');
            let (Some(kind), Some(code), Some(description)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            let kind = match kind {
                "language" => Kind::Language,
                "extlang" => Kind::Extlang,
                "script" => Kind::Script,
                "region" => Kind::Region,
                "variant" => Kind::Variant,
                "grandfathered" => Kind::Grandfathered,
                _ => continue,
            };
            let deprecated = f.next() == Some("deprecated");
            let table = entries.entry(kind).or_default();
            // A range (`qaa..qtz`: private use) stands for every code in it.
            for code in expand_range(code) {
                table.insert(
                    code,
                    Entry {
                        description,
                        deprecated,
                    },
                );
            }
        }
        Bcp47 {
            entries,
            file_date,
            common: None,
        }
    }

    /// The registry's File-Date.
    pub fn file_date(&self) -> &str {
        self.file_date
    }

    fn get(&self, kind: Kind, subtag: &str) -> Option<&Entry> {
        self.entries.get(&kind)?.get(subtag)
    }
}

impl Grammar for Bcp47 {
    fn url(&self) -> &str {
        BCP47
    }
    /// BCP-47 is versioned by its RFC, not by the registry's date.
    fn version(&self) -> Option<&str> {
        None
    }
    fn name(&self) -> &str {
        "IETF language tags (BCP 47)"
    }
    fn common_codes(&self) -> Option<&ValueSet> {
        self.common.as_ref()
    }
    fn concept(&self, code: &str) -> Option<GrammarConcept> {
        if code.is_empty() || code.len() > MAX_CODE_LEN {
            return None;
        }
        // A grandfathered tag is a code as a whole (`i-klingon`); redundant
        // ones (`zh-Hans`) are read subtag by subtag like any other.
        if let Some(e) = self.get(Kind::Grandfathered, code) {
            return Some(concept(code, e.description.to_owned(), None, e.deprecated));
        }
        // A tag of private use alone (RFC 5646 `privateuse`: `x-whatever`).
        if let Some(rest) = code.strip_prefix("x-") {
            let subtags_ok = rest.split('-').all(|p| {
                (1..=8).contains(&p.len()) && p.bytes().all(|b| b.is_ascii_alphanumeric())
            });
            return subtags_ok.then(|| concept(code, "Private use".to_owned(), None, false));
        }
        let mut parts = code.split('-').peekable();
        let language = parts.next()?;
        let lang = self.get(Kind::Language, language)?;
        let mut deprecated = lang.deprecated;
        let mut labelled: Vec<(&str, &str)> = Vec::new();
        // Up to three extended language subtags.
        let mut extlangs = 0;
        while let Some(&p) = parts.peek() {
            if extlangs < 3
                && p.len() == 3
                && p.bytes().all(|b| b.is_ascii_alphabetic())
                && let Some(e) = self.get(Kind::Extlang, p)
            {
                deprecated |= e.deprecated;
                labelled.push(("Language", e.description));
                extlangs += 1;
                parts.next();
            } else {
                break;
            }
        }
        if let Some(&p) = parts.peek()
            && p.len() == 4
            && p.bytes().all(|b| b.is_ascii_alphabetic())
        {
            let e = self.get(Kind::Script, p)?;
            deprecated |= e.deprecated;
            labelled.push(("Script", e.description));
            parts.next();
        }
        if let Some(&p) = parts.peek()
            && ((p.len() == 2 && p.bytes().all(|b| b.is_ascii_alphabetic()))
                || (p.len() == 3 && p.bytes().all(|b| b.is_ascii_digit())))
        {
            let e = self.get(Kind::Region, p)?;
            deprecated |= e.deprecated;
            labelled.push(("Region", e.description));
            parts.next();
        }
        let mut variants = Vec::new();
        while let Some(&p) = parts.peek() {
            let shaped =
                (5..=8).contains(&p.len()) || (p.len() == 4 && p.as_bytes()[0].is_ascii_digit());
            if !shaped || !p.bytes().all(|b| b.is_ascii_alphanumeric()) {
                break;
            }
            if variants.contains(&p) {
                return None;
            }
            let e = self.get(Kind::Variant, p)?;
            deprecated |= e.deprecated;
            labelled.push(("Variant", e.description));
            variants.push(p);
            parts.next();
        }
        // Extensions (a singleton then subtags of 2–8) and private use
        // (`x` then subtags of 1–8) are well-formed whatever they say.
        let mut singletons = Vec::new();
        while let Some(s) = parts.next() {
            if s.len() != 1 || !s.bytes().all(|b| b.is_ascii_alphanumeric()) {
                return None;
            }
            let private = s.eq_ignore_ascii_case("x");
            if !private && singletons.contains(&s) {
                return None;
            }
            singletons.push(s);
            let min = if private { 1 } else { 2 };
            let mut n = 0;
            while let Some(&p) = parts.peek() {
                if p.len() == 1 && !private {
                    break;
                }
                if !(min..=8).contains(&p.len()) || !p.bytes().all(|b| b.is_ascii_alphanumeric()) {
                    return None;
                }
                n += 1;
                parts.next();
            }
            if n == 0 {
                return None;
            }
            if private {
                break;
            }
        }
        if parts.next().is_some() {
            return None;
        }
        let plain: Vec<&str> = labelled.iter().map(|(_, d)| *d).collect();
        let display = if plain.is_empty() {
            lang.description.to_owned()
        } else {
            format!("{} ({})", lang.description, plain.join(", "))
        };
        let labelled_display = (!labelled.is_empty()).then(|| {
            let parts: Vec<String> = labelled.iter().map(|(k, d)| format!("{k}={d}")).collect();
            format!("{} ({})", lang.description, parts.join(", "))
        });
        Some(concept(code, display, labelled_display, deprecated))
    }
}

/// The codes of a registry range `first..last` (letters of one length,
/// counted like numbers), or the code itself.
fn expand_range(code: &str) -> Vec<String> {
    let Some((first, last)) = code.split_once("..") else {
        return vec![code.to_owned()];
    };
    if first.len() != last.len()
        || !first
            .bytes()
            .chain(last.bytes())
            .all(|b| b.is_ascii_alphabetic())
    {
        return vec![code.to_owned()];
    }
    let mut out = Vec::new();
    let mut cur: Vec<u8> = first.bytes().collect();
    let end: Vec<u8> = last.bytes().collect();
    // Ranges in the registry are a few hundred codes at most.
    while out.len() < 10_000 {
        out.push(String::from_utf8_lossy(&cur).into_owned());
        if cur.eq_ignore_ascii_case(&end) {
            break;
        }
        // The next code: the last letter up, carrying (`qaz` → `qba`).
        let mut i = cur.len();
        while i > 0 {
            i -= 1;
            let z = if cur[i].is_ascii_lowercase() {
                b'z'
            } else {
                b'Z'
            };
            if cur[i] == z {
                cur[i] -= 25;
            } else {
                cur[i] += 1;
                break;
            }
        }
    }
    out
}

fn concept(
    code: &str,
    display: String,
    labelled: Option<String>,
    deprecated: bool,
) -> GrammarConcept {
    let mut designations = vec![Designation {
        language: Some("en".to_owned()),
        use_: Some(crate::preferred_use()),
        value: display.clone(),
        source: None,
        extensions: Vec::new(),
    }];
    designations.extend(labelled.map(|value| Designation {
        language: Some("en".to_owned()),
        use_: None,
        value,
        source: None,
        extensions: Vec::new(),
    }));
    GrammarConcept {
        code: code.to_owned(),
        display,
        designations,
        properties: Vec::new(),
        deprecated,
    }
}
