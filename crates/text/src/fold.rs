//! Case and accent folding, and splitting folded text into words.
//!
//! The same two functions run over every description term at import time and
//! over every query at search time, so the only property that really matters
//! is that they are deterministic and identical on both sides; the choices
//! below decide how lenient matching is.
//!
//! **Folding** ([`fold_into`]):
//!
//! 1. NFKD-decompose. Compatibility (K) rather than canonical decomposition so
//!    that ligatures (`ﬁ` → `fi`), full-width forms (`Ａ` → `A`), super- and
//!    subscripts (`m²` → `m2`), the micro sign (`µ` → Greek `μ`) and Roman
//!    numeral code points match what people type. It includes everything
//!    NFD does.
//! 2. Drop the combining marks that are *accents*: the combining-diacritics
//!    blocks (U+0300–036F, U+1AB0–1AFF, U+1DC0–1DFF, U+20D0–20FF,
//!    U+FE20–FE2F), which is where every Latin, Greek and Cyrillic accent
//!    decomposes to, plus Hebrew points and Arabic harakat, which are
//!    optional in normal writing. Other nonspacing marks (Indic vowel signs
//!    and viramas, Thai vowels, the kana voicing marks of `が`) are *letters*
//!    of their scripts, so they are kept: dropping them would conflate
//!    unrelated words.
//! 3. Lowercase with full Unicode mappings ([`char::to_lowercase`]), so
//!    Greek, Cyrillic, Armenian etc. fold too; the result is decomposed again
//!    (`İ` lowercases to `i` + U+0307, which step 2 then drops).
//! 4. Map the letters that have no decomposition but are "accented" for
//!    search purposes: `ß`→`ss`, `æ`→`ae`, `œ`→`oe`, `ø`→`o`, `ı`→`i`,
//!    `đ`/`ð`→`d`, `þ`→`th`, `ł`→`l`, `ħ`→`h`, `ŧ`→`t`, final `ς`→`σ`.
//!
//! Folding is idempotent: `fold(fold(s)) == fold(s)`. Pure-ASCII input takes
//! a fast path (ASCII lowercase), which matters because almost all English
//! terms are ASCII.
//!
//! **Words** ([`words`]): maximal runs of alphanumeric characters (letters
//! and digits of any script; combining marks continue a run so Indic words
//! stay whole). Everything else separates words: spaces, punctuation,
//! hyphens, slashes, parentheses, apostrophes (`meniere's` → `meniere`,
//! `s`). Han ideographs are the exception: Chinese and Japanese do not put
//! spaces between words, so each ideograph is a word on its own (an
//! unsegmented run like `糖尿病` would otherwise only be findable by its
//! first characters). Kana and Hangul form ordinary runs.

use std::iter::FusedIterator;

use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::{decompose_compatible, is_combining_mark};

/// Case- and accent-folds `text` (see the [module docs](self) for the exact
/// rules) and appends the result to `out`.
pub fn fold_into(text: &str, out: &mut String) {
    out.reserve(text.len());
    if text.is_ascii() {
        let start = out.len();
        out.push_str(text);
        if let Some(new) = out.get_mut(start..) {
            new.make_ascii_lowercase();
        }
        return;
    }
    for c in text.nfkd() {
        if c.is_ascii() {
            out.push(c.to_ascii_lowercase());
        } else if !is_accent_mark(c) {
            for lower in c.to_lowercase() {
                if lower.is_ascii() {
                    out.push(lower);
                } else {
                    decompose_compatible(lower, |d| push_special(d, out));
                }
            }
        }
    }
}

/// Case- and accent-folds `text` into a new string. See [`fold_into`].
pub fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    fold_into(text, &mut out);
    out
}

fn push_special(c: char, out: &mut String) {
    match c {
        c if is_accent_mark(c) => {}
        'ß' => out.push_str("ss"),
        'æ' => out.push_str("ae"),
        'œ' => out.push_str("oe"),
        'ø' => out.push('o'),
        'ı' => out.push('i'),
        'đ' | 'ð' => out.push('d'),
        'þ' => out.push_str("th"),
        'ł' => out.push('l'),
        'ħ' => out.push('h'),
        'ŧ' => out.push('t'),
        'ς' => out.push('σ'),
        c => out.push(c),
    }
}

/// The combining marks that folding drops: accents, not letters.
fn is_accent_mark(c: char) -> bool {
    matches!(c,
        // Combining Diacritical Marks and its extensions/supplement, marks
        // for symbols, half marks: all Latin/Greek/Cyrillic accents.
        '\u{0300}'..='\u{036F}'
        | '\u{1AB0}'..='\u{1AFF}'
        | '\u{1DC0}'..='\u{1DFF}'
        | '\u{20D0}'..='\u{20FF}'
        | '\u{FE20}'..='\u{FE2F}'
        // Hebrew cantillation marks and points.
        | '\u{0591}'..='\u{05BD}'
        | '\u{05BF}'
        | '\u{05C1}'..='\u{05C2}'
        | '\u{05C4}'..='\u{05C5}'
        | '\u{05C7}'
        // Arabic harakat and Quranic annotation marks.
        | '\u{0610}'..='\u{061A}'
        | '\u{064B}'..='\u{065F}'
        | '\u{0670}'
        | '\u{06D6}'..='\u{06DC}'
        | '\u{06DF}'..='\u{06E4}'
        | '\u{06E7}'..='\u{06E8}'
        | '\u{06EA}'..='\u{06ED}'
    )
}

/// Han ideographs: each is a word of its own (see the module docs).
fn is_ideograph(c: char) -> bool {
    matches!(c,
        '\u{3005}'              // 々 iteration mark
        | '\u{3007}'            // 〇
        | '\u{3021}'..='\u{3029}'
        | '\u{3038}'..='\u{303B}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{4E00}'..='\u{9FFF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{20000}'..='\u{3FFFF}'
    )
}

/// Splits folded text into words; see the [module docs](self). Returns
/// borrowed slices of `folded`. Works on any text, but only folded text
/// gives words that can be looked up in the index.
pub fn words(folded: &str) -> Words<'_> {
    Words {
        rest: folded,
        ascii: folded.is_ascii(),
    }
}

/// Iterator over the words of a string; created by [`words`].
#[derive(Debug, Clone)]
pub struct Words<'a> {
    rest: &'a str,
    /// All ASCII (most English terms): words are runs of ASCII letters and
    /// digits, found byte by byte.
    ascii: bool,
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let rest = self.rest;
        if self.ascii {
            let bytes = rest.as_bytes();
            let Some(start) = bytes.iter().position(u8::is_ascii_alphanumeric) else {
                self.rest = "";
                return None;
            };
            let end = bytes
                .get(start..)
                .and_then(|b| b.iter().position(|c| !c.is_ascii_alphanumeric()))
                .map_or(bytes.len(), |n| start + n);
            self.rest = rest.get(end..).unwrap_or_default();
            return rest.get(start..end);
        }
        let mut chars = rest.char_indices();
        // Find the start of the next word.
        let (start, first) = loop {
            match chars.next() {
                None => {
                    self.rest = "";
                    return None;
                }
                Some((i, c)) if c.is_alphanumeric() => break (i, c),
                Some(_) => {}
            }
        };
        let first_is_ideograph = is_ideograph(first);
        let mut end = rest.len();
        for (i, c) in chars {
            let continues = if is_combining_mark(c) {
                true
            } else {
                !first_is_ideograph && c.is_alphanumeric() && !is_ideograph(c)
            };
            if !continues {
                end = i;
                break;
            }
        }
        self.rest = &rest[end..];
        Some(&rest[start..end])
    }
}

impl FusedIterator for Words<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_words_match_the_general_rule() {
        let general = |t: &'static str| {
            Words {
                rest: t,
                ascii: false,
            }
            .collect::<Vec<_>>()
        };
        for t in [
            "",
            "   ",
            "heart attack",
            "  meniere's disease (disorder)  ",
            "a-b/c_d.e,f;g",
            "x",
            "O2 sat 98% - 1.5mg/kg",
            "!!!",
            "trailing punctuation.",
        ] {
            assert_eq!(words(t).collect::<Vec<_>>(), general(t), "{t:?}");
        }
        let mut out = String::from("Prefix ");
        fold_into("MiXeD Case 123", &mut out);
        assert_eq!(out, "Prefix mixed case 123");
    }

    fn w(s: &str) -> Vec<String> {
        let f = fold(s);
        words(&f).map(str::to_owned).collect()
    }

    #[test]
    fn ascii() {
        assert_eq!(fold("Type 2 Diabetes MELLITUS"), "type 2 diabetes mellitus");
        assert_eq!(w("Type 2 diabetes"), ["type", "2", "diabetes"]);
    }

    #[test]
    fn accents() {
        assert_eq!(fold("Ménière's disease"), "meniere's disease");
        assert_eq!(w("Ménière's disease"), ["meniere", "s", "disease"]);
        assert_eq!(fold("Sjögren"), "sjogren");
        assert_eq!(fold("SJÖGREN syndrome"), "sjogren syndrome");
        assert_eq!(fold("crème brûlée"), "creme brulee");
        assert_eq!(fold("Ærø Øresund"), "aero oresund");
        assert_eq!(fold("Œdème"), "oedeme");
        assert_eq!(fold("Straße STRASSE ẞ"), "strasse strasse ss");
        assert_eq!(fold("İstanbul ısı"), "istanbul isi");
        assert_eq!(fold("Łódź"), "lodz");
        assert_eq!(fold("Þórr"), "thorr");
        assert_eq!(fold("Đakovo"), "dakovo");
        assert_eq!(fold("Nguyễn"), "nguyen");
    }

    #[test]
    fn decomposed_input_folds_like_precomposed() {
        assert_eq!(fold("Me\u{301}nie\u{300}re"), fold("Ménière"));
    }

    #[test]
    fn compatibility_forms() {
        assert_eq!(fold("ﬁbrosis"), "fibrosis");
        assert_eq!(fold("ＡＢＣ"), "abc");
        assert_eq!(fold("mm²"), "mm2");
        // Micro sign and Greek mu fold together.
        assert_eq!(fold("µg"), fold("μg"));
    }

    #[test]
    fn greek_and_cyrillic() {
        assert_eq!(fold("ΔΙΑΒΉΤΗΣ"), "διαβητησ");
        assert_eq!(fold("διαβήτης"), "διαβητησ");
        assert_eq!(fold("САХАРНЫЙ Диабет"), "сахарныи диабет");
        assert_eq!(fold("Ёлка"), "елка");
    }

    #[test]
    fn cjk_kept() {
        assert_eq!(fold("2型糖尿病"), "2型糖尿病");
        assert_eq!(w("2型糖尿病"), ["2", "型", "糖", "尿", "病"]);
        assert_eq!(w("インスリン依存性"), ["インスリン", "依", "存", "性"]);
        // Kana voicing marks are letters, not accents.
        assert_ne!(fold("が"), fold("か"));
        assert_eq!(w("が"), [fold("が")]);
        assert_eq!(w("당뇨병 환자").len(), 2);
    }

    #[test]
    fn indic_words_stay_whole() {
        let f = fold("मधुमेह रोग");
        assert_eq!(words(&f).count(), 2);
        assert_eq!(fold("क्ष"), "क्ष");
    }

    #[test]
    fn splitting() {
        assert_eq!(
            w("Fracture of left/right (tibia)-fibula, closed [x-ray]"),
            [
                "fracture", "of", "left", "right", "tibia", "fibula", "closed", "x", "ray"
            ]
        );
        assert_eq!(w("COVID-19 vaccine B12"), ["covid", "19", "vaccine", "b12"]);
        assert_eq!(w(""), Vec::<String>::new());
        assert_eq!(w("  --  "), Vec::<String>::new());
        assert_eq!(w("a"), ["a"]);
        assert_eq!(w("3.5 mg"), ["3", "5", "mg"]);
        assert_eq!(w("don't"), ["don", "t"]);
        assert_eq!(w("don’t"), ["don", "t"]);
    }

    #[test]
    fn idempotent_on_samples() {
        for s in [
            "Ménière's disease",
            "Straße",
            "ΣΊΣΥΦΟΣ",
            "İı",
            "ǅemal",
            "ﬃ",
            "Å Ä Ö å ä ö",
            "Ωμέγα",
            "2型糖尿病",
            "مَرَض",
            "שָׁלוֹם",
        ] {
            let once = fold(s);
            assert_eq!(fold(&once), once, "{s:?}");
        }
    }

    #[test]
    fn idempotent_on_every_char() {
        let mut bad = Vec::new();
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let once = fold(c.encode_utf8(&mut [0; 4]));
            if fold(&once) != once {
                bad.push(c);
            }
        }
        assert!(bad.is_empty(), "not idempotent: {bad:?}");
    }
}
