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
                Want::Refset(r) => ed.preferred_term_in(ord, &[*r]).stored()?.map(|d| d.term),
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
    match lower.as_str() {
        "en-us" => Want::Refset(sctid::US_ENGLISH),
        "en-gb" => Want::Refset(GB_ENGLISH),
        "en" => Want::Default,
        _ => Want::Language(lower.split('-').next().unwrap_or_default().to_owned()),
    }
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
