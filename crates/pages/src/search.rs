//! The concept browser's search: the engine's `$expand` with `filter`
//! answers it — the function a FHIR client calls, so the page, the
//! suggestions and `$expand` rank alike — and the page says why each hit
//! is there: the description that matched, the words that matched in it
//! and how it ranks ([`Why`], from the same ranking the store sorts by).

use askama::Template;
use serde_json::Value;
use txmap_store::{Edition, MatchTier, sctid};
use txmap_text::{RankQuery, fold, words};

use crate::chrome::{Chrome, Link};
use crate::url::query;

/// Results per page unless `count` says otherwise.
pub const DEFAULT_COUNT: usize = 20;
/// The largest page.
pub const MAX_COUNT: usize = 200;

/// What a search asks.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub text: String,
    /// An ECL expression the hits must satisfy (empty: the whole edition).
    pub within: String,
    pub include_inactive: bool,
    pub offset: usize,
    pub count: usize,
}

impl SearchQuery {
    /// The `$expand` parameters that answer this search in edition
    /// `version` (empty: the default edition).
    pub fn expand_pairs(&self, version: &str) -> Vec<(String, String)> {
        let url = implicit(version, self.within.trim());
        vec![
            ("url".to_owned(), url),
            ("filter".to_owned(), self.text.clone()),
            ("count".to_owned(), self.count.to_string()),
            ("offset".to_owned(), self.offset.to_string()),
            (
                "activeOnly".to_owned(),
                (!self.include_inactive).to_string(),
            ),
        ]
    }

    fn page_link(&self, version: &str, offset: usize) -> String {
        let offset = offset.to_string();
        let count = self.count.to_string();
        query(
            "/browse",
            &[
                ("q", &self.text),
                ("within", &self.within),
                ("version", version),
                ("inactive", if self.include_inactive { "true" } else { "" }),
                ("offset", if offset == "0" { "" } else { &offset }),
                (
                    "count",
                    if self.count == DEFAULT_COUNT {
                        ""
                    } else {
                        &count
                    },
                ),
            ],
        )
    }
}

/// Why a concept is a hit: its best-ranked matching description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Why {
    pub term: String,
    /// The words of the term that a query word is a prefix of.
    pub matched: Vec<String>,
    pub tier: &'static str,
    pub length: u32,
    pub preferred: bool,
}

#[derive(Debug, Clone)]
pub struct Hit {
    pub code: String,
    pub display: String,
    pub href: String,
    pub why: Option<Why>,
}

/// The search page.
#[derive(Template, Debug)]
#[template(path = "search.html")]
pub struct SearchPage {
    pub chrome: Chrome,
    pub search: SearchQuery,
    pub total: Option<u64>,
    pub hits: Vec<Hit>,
    pub previous: Option<String>,
    pub next: Option<String>,
    /// The engine's refusal (a filter with no words, too costly, a bad
    /// ECL scope), shown instead of results.
    pub problem: Option<String>,
    /// When nothing matched: the search with each unknown word replaced
    /// by the nearest indexed one, as a link — never mixed into results.
    pub did_you_mean: Option<Link>,
}

/// The hits of an `$expand` answer, each explained from `edition`.
pub fn hits<B: AsRef<[u8]>>(
    edition: &Edition<B>,
    version: &str,
    text: &str,
    expansion: &Value,
) -> Result<(Option<u64>, Vec<Hit>), crate::PageError> {
    let expansion = &expansion["expansion"];
    let total = expansion["total"].as_u64();
    let linker = crate::concept::Linker { version };
    let mut out = Vec::new();
    for c in expansion["contains"].as_array().into_iter().flatten() {
        let code = c["code"].as_str().unwrap_or_default().to_owned();
        let why = match code.parse::<u64>().ok().and_then(|id| edition.ordinal(id)) {
            Some(ord) => why(edition, ord, text)?,
            None => None,
        };
        out.push(Hit {
            href: code
                .parse::<u64>()
                .map(|id| linker.concept(id))
                .unwrap_or_default(),
            display: c["display"].as_str().unwrap_or_default().to_owned(),
            code,
            why,
        });
    }
    Ok((total, out))
}

/// The description of concept `ord` that ranks best for `text`, as the
/// store ranks search hits: match tier and length, then preferred terms,
/// then description order.
pub fn why<B: AsRef<[u8]>>(
    edition: &Edition<B>,
    ord: u32,
    text: &str,
) -> Result<Option<Why>, crate::PageError> {
    let folded = fold(text);
    let query_words: Vec<&str> = words(&folded).collect();
    let mut ranker = RankQuery::new(&folded);
    let mut best = None;
    for d in edition.descriptions(ord)? {
        if d.type_id == sctid::DEFINITION {
            continue;
        }
        let term_folded = fold(d.term);
        let term_words: Vec<&str> = words(&term_folded).collect();
        if !query_words
            .iter()
            .all(|q| term_words.iter().any(|t| t.starts_with(q)))
        {
            continue;
        }
        let preferred = edition.is_preferred_term(d.ordinal)?;
        let key = (ranker.rank(d.term), !d.active, !preferred, d.ordinal);
        if best.as_ref().is_none_or(|(k, _)| key < *k) {
            let matched = term_words
                .iter()
                .filter(|t| query_words.iter().any(|q| t.starts_with(q)))
                .map(|t| (*t).to_owned())
                .collect();
            best = Some((key, (d.term.to_owned(), matched, preferred)));
        }
    }
    Ok(best.map(|((rank, ..), (term, matched, preferred))| Why {
        term,
        matched,
        tier: match rank.tier() {
            MatchTier::Exact => "the whole term",
            MatchTier::StartsWith => "the term starts with the query",
            MatchTier::AllWordPrefixes => "every word of the query starts a word of the term",
            MatchTier::Other => "other",
        },
        length: rank.term_len(),
        preferred,
    }))
}

/// The search page for `search`, from the engine's answer (`Ok`: the
/// expansion; `Err`: its refusal, shown on the page).
pub fn page<B: AsRef<[u8]>>(
    edition: &Edition<B>,
    mut chrome: Chrome,
    search: SearchQuery,
    answer: Result<&Value, String>,
) -> Result<SearchPage, crate::PageError> {
    let version = chrome.version_param().to_owned();
    chrome.title = if search.text.is_empty() {
        "Browse".to_owned()
    } else {
        format!("Search: {}", search.text)
    };
    chrome.query = search.text.clone();
    if !search.text.is_empty() {
        let pairs = search.expand_pairs(&version);
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        chrome.fhir_request = Some(query("/r4/ValueSet/$expand", &pairs));
    }
    let (total, hits, problem) = match answer {
        Ok(expansion) => {
            let (total, hits) = hits(edition, &version, &search.text, expansion)?;
            (total, hits, None)
        }
        Err(problem) => (None, Vec::new(), Some(problem)),
    };
    let did_you_mean = if total == Some(0) && problem.is_none() {
        edition.did_you_mean(&search.text)?.map(|text| {
            let corrected = SearchQuery {
                text: text.clone(),
                offset: 0,
                ..search.clone()
            };
            Link {
                href: corrected.page_link(&version, 0),
                text,
            }
        })
    } else {
        None
    };
    let previous = (search.offset > 0)
        .then(|| search.page_link(&version, search.offset.saturating_sub(search.count)));
    let next = total
        .filter(|&t| (search.offset + hits.len()) < t as usize && !hits.is_empty())
        .map(|_| search.page_link(&version, search.offset + search.count));
    Ok(SearchPage {
        chrome,
        search,
        total,
        hits,
        previous,
        next,
        problem,
        did_you_mean,
    })
}

/// What `/suggest` answers: the first hits as JSON for a script, and
/// what the text may have meant when nothing matched. The text asked is
/// not echoed (the script knows it): an answer carries only the edition's
/// words.
pub fn suggestions(total: Option<u64>, hits: &[Hit], did_you_mean: Option<&str>) -> Value {
    serde_json::json!({
        "total": total,
        "didYouMean": did_you_mean,
        "suggestions": hits.iter().map(|h| serde_json::json!({
            "code": h.code,
            "display": h.display,
            "href": h.href,
            "matched": h.why.as_ref().map(|w| &w.term),
        })).collect::<Vec<_>>(),
    })
}

/// A concept a search box's text names directly: an SCTID of a concept,
/// or of a description (its concept).
pub fn direct<B: AsRef<[u8]>>(edition: &Edition<B>, text: &str) -> Option<u64> {
    let text = text.trim();
    if text.is_empty() || text.len() > 18 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let id: u64 = text.parse().ok()?;
    if edition.ordinal(id).is_some() {
        return Some(id);
    }
    edition.description(id).ok().flatten().map(|d| d.concept)
}

/// The implicit value set of edition `version` (empty: the default
/// edition): every concept, or those `ecl` selects.
pub fn implicit(version: &str, ecl: &str) -> String {
    let base = if version.is_empty() {
        "http://snomed.info/sct"
    } else {
        version
    };
    if ecl.is_empty() {
        format!("{base}?fhir_vs")
    } else {
        format!("{base}?fhir_vs=ecl/{ecl}")
    }
}
