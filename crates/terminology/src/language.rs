//! Display languages: a request's preferences (`displayLanguage`, a value
//! set's `displayLanguage` expansion parameter, or `Accept-Language`) and
//! the display they pick for a concept, from the code system's display
//! (in the resource's language) or a designation.
//!
//! A preference list falls back to the code system's display when no
//! language matches, unless it ends in `*; q=0` (a "hard" request), in
//! which case the concept has no display.

use std::borrow::Cow;

use crate::provider::{CodeSystemProvider, ConceptId};

/// Parsed language preferences, best first.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prefs {
    /// Language tags with a positive weight, best first (`*` excluded).
    pub tags: Vec<String>,
    /// `*;q=0`: no fallback to other languages.
    pub hard: bool,
}

impl Prefs {
    /// Parses `de`, `de,*`, `en, en-AU; q=0.4`, `de, *; q=0`.
    pub fn parse(text: &str) -> Prefs {
        let mut tags: Vec<(String, f32)> = Vec::new();
        let mut hard = false;
        for item in text.split(',') {
            let mut parts = item.split(';');
            let tag = parts.next().unwrap_or_default().trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            if tag.is_empty() {
                continue;
            }
            if tag == "*" {
                hard |= q == 0.0;
            } else if q > 0.0 {
                tags.push((tag.to_owned(), q));
            }
        }
        tags.sort_by(|a, b| b.1.total_cmp(&a.1));
        Prefs {
            tags: tags.into_iter().map(|(t, _)| t).collect(),
            hard,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tags.is_empty()
    }

    /// Whether `lang` is one of the preferred languages.
    pub fn accepts(&self, lang: &str) -> bool {
        self.tags.iter().any(|t| matches(t, lang))
    }
}

/// Whether `text` is a language tag (`de`, `en-AU`, `*`) or a list of
/// them with weights (`en, en-AU; q=0.4`), as `displayLanguage` takes.
pub fn is_valid_list(text: &str) -> bool {
    let tag_ok = |tag: &str| {
        tag == "*"
            || tag.split('-').enumerate().all(|(i, part)| {
                (1..=8).contains(&part.len())
                    && if i == 0 {
                        part.chars().all(|c| c.is_ascii_alphabetic())
                    } else {
                        part.chars().all(|c| c.is_ascii_alphanumeric())
                    }
            })
    };
    !text.trim().is_empty()
        && text.split(',').all(|item| {
            let mut parts = item.split(';');
            tag_ok(parts.next().unwrap_or_default().trim())
                && parts.all(|p| {
                    p.trim().strip_prefix("q=").is_some_and(|q| {
                        q.trim()
                            .parse::<f32>()
                            .is_ok_and(|q| (0.0..=1.0).contains(&q))
                    })
                })
        })
}

/// The most languages a `displayLanguage` list may name: a client that
/// means more means any (`*`).
pub const MAX_LANGUAGES: usize = 32;

/// Whether `text` is a `displayLanguage` this server takes: a valid list
/// ([`is_valid_list`]) of at most [`MAX_LANGUAGES`] languages.
pub fn is_valid_param(text: &str) -> bool {
    text.split(',').count() <= MAX_LANGUAGES && is_valid_list(text)
}

/// Rejects a request whose `displayLanguage` is not a language tag (or
/// list); every operation's reader ([`crate::Request::display_language_param`]).
pub fn check_request(req: &crate::request::Request) -> Result<(), crate::error::Error> {
    req.display_language_param().map(|_| ())
}

/// Whether the tag `pref` covers `lang` (`de` covers `de-CH`).
pub fn matches(pref: &str, lang: &str) -> bool {
    lang.eq_ignore_ascii_case(pref)
        || (lang.len() > pref.len()
            && lang.as_bytes()[pref.len()] == b'-'
            && lang[..pref.len()].eq_ignore_ascii_case(pref))
}

/// The display picked for a concept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chosen<'a> {
    pub display: Option<Cow<'a, str>>,
    /// The designation (by index) the display came from; `None` when it
    /// is the code system's own display.
    pub designation: Option<usize>,
}

/// Picks the display of `id` for `prefs`.
pub fn choose<'a>(cs: &'a dyn CodeSystemProvider, id: ConceptId, prefs: &Prefs) -> Chosen<'a> {
    let own = Chosen {
        display: cs.display(id).map(Cow::Borrowed),
        designation: None,
    };
    if prefs.is_empty() {
        return own;
    }
    let designations = cs.designations(id);
    for tag in &prefs.tags {
        if own.display.is_some() && cs.language().is_some_and(|l| matches(tag, l)) {
            return own;
        }
        if let Some(i) = designations
            .iter()
            .position(|d| d.language.as_deref().is_some_and(|l| matches(tag, l)))
        {
            let display = match &designations {
                Cow::Borrowed(list) => Cow::Borrowed(list[i].value.as_str()),
                Cow::Owned(list) => Cow::Owned(list[i].value.clone()),
            };
            return Chosen {
                display: Some(display),
                designation: Some(i),
            };
        }
    }
    if prefs.hard {
        Chosen {
            display: None,
            designation: None,
        }
    } else {
        own
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codesystem::CodeSystem;
    use serde_json::json;

    #[test]
    fn preferences_pick_designations_and_fall_back_unless_hard() {
        let cs = CodeSystem::from_json(&json!({
            "resourceType": "CodeSystem", "url": "http://x", "language": "en",
            "concept": [
                {"code": "a", "display": "A", "designation": [{"language": "de-CH", "value": "A-de"}]},
                {"code": "b", "display": "B"},
            ]
        }))
        .unwrap();
        let de = Prefs::parse("de");
        assert_eq!(choose(&cs, 0, &de).display.as_deref(), Some("A-de"));
        assert_eq!(choose(&cs, 0, &de).designation, Some(0));
        assert_eq!(choose(&cs, 1, &de).display.as_deref(), Some("B"));
        let hard = Prefs::parse("de, *; q=0");
        assert!(hard.hard);
        assert_eq!(choose(&cs, 1, &hard).display, None);
        assert_eq!(
            choose(&cs, 0, &Prefs::parse("en, de")).display.as_deref(),
            Some("A")
        );
        assert_eq!(Prefs::parse("en, en-AU; q=0.4").tags, ["en", "en-AU"]);
        assert!(!matches("de", "des"));
        for ok in [
            "de",
            "en-AU",
            "de, *; q=0",
            "en, en-AU; q=0.4",
            "*",
            "zh-Hant-TW",
        ] {
            assert!(is_valid_list(ok), "{ok}");
        }
        for bad in ["-", "", "de-", "toolongtag", "en;q=x", "d e"] {
            assert!(!is_valid_list(bad), "{bad}");
        }
    }
}
