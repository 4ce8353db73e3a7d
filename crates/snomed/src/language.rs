//! Display languages.
//!
//! A request names the languages it wants displays in with the
//! `displayLanguage` parameter or, failing that, the `Accept-Language`
//! header: BCP-47 tags, optionally with quality values. SNOMED CT keeps
//! displays in language reference sets, so each tag is mapped to what can
//! answer it: a dialect whose refset is known (`en-US`, `en-GB`) by its
//! preferred synonym there; any other language by an active synonym in that
//! language, preferably one preferred in some refset; `en` and `*` by the
//! edition's default refset. The first tag that yields a term wins, and the
//! edition's default preferred term (or FSN) is the fallback, so a request
//! for a language the edition lacks still gets a display.

use txmap_store::sctid;
use txmap_terminology::language::Prefs;

use txmap_store::Edition;
use txmap_terminology::Error;

use crate::Stored;

/// |Great Britain English language reference set|.
pub const GB_ENGLISH: u64 = 900000000000508004;

/// What one tag asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Want {
    /// The preferred synonym in this language refset.
    Refset(u64),
    /// The same, named by the tag itself (`x-sctlang-…`, below): the
    /// refset, not a language, says which descriptions answer.
    Named(u64),
    /// A synonym whose language code is this (lower case).
    Language(String),
    /// The edition's default preferred term.
    Default,
}

/// The languages a request asks displays in, most wanted first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DisplayLanguage {
    wants: Vec<Want>,
}

impl DisplayLanguage {
    /// From `displayLanguage` or `Accept-Language` text; `None` is the
    /// edition's default.
    pub fn parse(tags: Option<&str>) -> DisplayLanguage {
        let Some(tags) = tags else {
            return DisplayLanguage::default();
        };
        // The engine's parser orders the tags (highest quality first,
        // equal ones in order, none of weight 0); `*` means the default,
        // which is where the list falls back to anyway.
        let mut wants: Vec<Want> = Vec::new();
        for w in Prefs::parse(tags).tags.iter().map(|t| want(t)) {
            if !wants.contains(&w) {
                wants.push(w);
            }
        }
        DisplayLanguage { wants }
    }

    /// Whether a description in language `code` (`en`) answers the
    /// request: its language is one asked for, a dialect of it (`en-GB`)
    /// or the default's (`en`).
    pub fn accepts(&self, code: &str) -> bool {
        self.wants.iter().any(|w| match w {
            Want::Refset(_) | Want::Default => code.eq_ignore_ascii_case("en"),
            Want::Language(l) => code.eq_ignore_ascii_case(l),
            Want::Named(_) => true,
        })
    }

    /// The language refset a tag names by its SCTID, the first if
    /// several: a text search keeps to its descriptions.
    pub fn named_refset(&self) -> Option<u64> {
        self.wants.iter().find_map(|w| match w {
            Want::Named(r) => Some(*r),
            _ => None,
        })
    }

    /// Whether the edition's default display is all that is asked for.
    pub fn is_default(&self) -> bool {
        self.wants.iter().all(|w| *w == Want::Default)
    }

    /// The display of the concept at `ord`: the first wanted language's
    /// term, else the default preferred term, else an FSN.
    pub fn display<'e, B: AsRef<[u8]>>(
        &self,
        ed: &'e Edition<B>,
        ord: u32,
    ) -> Result<Option<&'e str>, Error> {
        for w in &self.wants {
            let term = match w {
                Want::Default => break,
                Want::Refset(r) | Want::Named(r) => {
                    ed.preferred_term_in(ord, &[*r]).stored()?.map(|d| d.term)
                }
                Want::Language(code) => in_language(ed, ord, code)?,
            };
            if term.is_some() {
                return Ok(term);
            }
        }
        Ok(match ed.preferred_term(ord).stored()? {
            Some(t) => Some(t),
            None => ed.fsn(ord, &[]).stored()?.map(|d| d.term),
        })
    }
}

fn want(tag: &str) -> Want {
    if tag == "*" {
        return Want::Default;
    }
    let lower = tag.to_ascii_lowercase();
    if let Some(id) = sctlang(&lower) {
        return Want::Named(id);
    }
    match lower.as_str() {
        "en-us" => Want::Refset(sctid::US_ENGLISH),
        "en-gb" => Want::Refset(GB_ENGLISH),
        "en" => Want::Default,
        _ => Want::Language(lower.split('-').next().unwrap_or_default().to_owned()),
    }
}

/// The language refset a tag names in SNOMED CT's private use
/// convention: `x-sctlang-` and the refset's SCTID, its digits split into
/// subtags of at most eight (BCP 47's limit) — `en-x-sctlang-90000000-
/// 00005090-07`, or with no language before it, `x-sctlang-…`.
pub fn sctlang(tag: &str) -> Option<u64> {
    let rest = tag
        .strip_prefix("x-sctlang-")
        .or_else(|| tag.split_once("-x-sctlang-").map(|(_, r)| r))?;
    let digits: String = rest.split('-').collect();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The tag [`sctlang`] reads for language refset `id`.
pub fn sctlang_tag(id: u64) -> String {
    let digits = id.to_string();
    let groups: Vec<&str> = digits
        .as_bytes()
        .chunks(8)
        .map(|c| std::str::from_utf8(c).unwrap_or_default())
        .collect();
    format!("x-sctlang-{}", groups.join("-"))
}

/// An active synonym of the concept in language `code`, one preferred in
/// some refset if there is one.
fn in_language<'e, B: AsRef<[u8]>>(
    ed: &'e Edition<B>,
    ord: u32,
    code: &str,
) -> Result<Option<&'e str>, Error> {
    let mut fallback = None;
    for d in ed.descriptions(ord).stored()? {
        if !d.active || d.type_id != sctid::SYNONYM || !d.language.eq_ignore_ascii_case(code) {
            continue;
        }
        if ed
            .acceptability(d.ordinal)
            .stored()?
            .iter()
            .any(|&(_, a)| a == sctid::PREFERRED)
        {
            return Ok(Some(d.term));
        }
        fallback.get_or_insert(d.term);
    }
    Ok(fallback)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_language_refset_is_named_by_its_sctid_in_private_use_subtags() {
        // The digits in subtags of at most eight, as BCP 47 allows.
        assert_eq!(
            sctlang("en-x-sctlang-90000000-00005090-07"),
            Some(900000000000509007)
        );
        assert_eq!(
            sctlang("x-sctlang-900000000000508004"),
            Some(900000000000508004)
        );
        assert_eq!(sctlang("en-x-sctlang-"), None);
        assert_eq!(sctlang("en-x-sctlang-9000a"), None);
        assert_eq!(sctlang("en-gb"), None);
        let tag = sctlang_tag(900000000000509007);
        assert_eq!(tag, "x-sctlang-90000000-00005090-07");
        assert!(txmap_terminology::language::is_valid_list(&tag));
        assert_eq!(sctlang(&tag), Some(900000000000509007));
        let l = DisplayLanguage::parse(Some(&format!("{tag}, en-GB;q=0.5")));
        assert_eq!(l.named_refset(), Some(900000000000509007));
        assert!(l.accepts("sv"), "the refset decides, not a language");
        assert_eq!(DisplayLanguage::parse(Some("en-GB")).named_refset(), None);
    }

    #[test]
    fn tags_are_ordered_by_quality_and_mapped() {
        let l = DisplayLanguage::parse(Some("fr;q=0.5, en-GB;q=0.9, de-CH, x;q=0"));
        assert_eq!(
            l.wants,
            [
                Want::Language("de".into()),
                Want::Refset(GB_ENGLISH),
                Want::Language("fr".into()),
            ]
        );
        assert!(DisplayLanguage::parse(Some("en, *")).is_default());
        assert!(DisplayLanguage::parse(None).is_default());
        assert!(!DisplayLanguage::parse(Some("en-US")).is_default());
        assert_eq!(
            DisplayLanguage::parse(Some("en-US, en-us;q=0.2")).wants,
            [Want::Refset(sctid::US_ENGLISH)]
        );
    }
}
