//! The concept browser's search: the engine's `$expand` with `filter`
//! answers it — the function a FHIR client calls, so the page, the
//! suggestions and `$expand` rank alike — and the page says why each hit
//! is there: the description that matched, the words that matched in it
//! and how it ranks ([`Why`], from the same ranking the store sorts by).
//!
//! The page asks the engine once, for its own page or for the first
//! [`FACET_HITS`] when that is more, and counts those hits by semantic tag
//! and module ([`Facets`], "at least" when there are more): counting them
//! needs no second search. A facet, like the "within" box, narrows the
//! search by ECL; the language choice is `displayLanguage` naming a
//! language refset, which the engine also keeps the search to.

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
    /// A language refset the search keeps to and displays come from
    /// (`None`: every language, the edition's displays).
    pub language: Option<u64>,
    pub offset: usize,
    pub count: usize,
}

impl SearchQuery {
    /// The `$expand` parameters that answer this search in edition
    /// `version` (empty: the default edition).
    pub fn expand_pairs(&self, version: &str) -> Vec<(String, String)> {
        let url = implicit(version, self.within.trim());
        let mut pairs = vec![
            ("url".to_owned(), url),
            ("filter".to_owned(), self.text.clone()),
            ("count".to_owned(), self.count.to_string()),
            ("offset".to_owned(), self.offset.to_string()),
            (
                "activeOnly".to_owned(),
                (!self.include_inactive).to_string(),
            ),
        ];
        if let Some(refset) = self.language {
            pairs.push((
                "displayLanguage".to_owned(),
                txmap_snomed::language::sctlang_tag(refset),
            ));
        }
        pairs
    }

    /// What the page asks the engine: its own page, or the first
    /// [`FACET_HITS`] when that is more — one search, whose first hits
    /// the facets count and whose page is a slice of them.
    pub fn engine_pairs(&self, version: &str) -> Vec<(String, String)> {
        let end = self.offset.saturating_add(self.count);
        if end > FACET_HITS {
            return self.expand_pairs(version);
        }
        let window = SearchQuery {
            offset: 0,
            count: FACET_HITS,
            ..self.clone()
        };
        window.expand_pairs(version)
    }

    /// The same search narrowed by an ECL constraint (a facet's).
    fn narrowed(&self, constraint: &str) -> SearchQuery {
        let within = match self.within.trim() {
            "" => constraint.to_owned(),
            w => format!("({w}) AND ({constraint})"),
        };
        SearchQuery {
            within,
            offset: 0,
            ..self.clone()
        }
    }

    fn page_link(&self, version: &str, offset: usize) -> String {
        let offset = offset.to_string();
        let count = self.count.to_string();
        let language = self.language.map(|l| l.to_string()).unwrap_or_default();
        query(
            "/browse",
            &[
                ("q", &self.text),
                ("within", &self.within),
                ("version", version),
                ("inactive", if self.include_inactive { "true" } else { "" }),
                ("lang", &language),
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

/// The hits the facets count: the first of the search, in rank order —
/// what a search head answers from its stored list, so counting them
/// costs no second search. With more hits than this, each count is "at
/// least".
pub const FACET_HITS: usize = 200;

/// A language refset the search box offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LanguageChoice {
    pub id: u64,
    /// Its preferred term, or its SCTID when the edition lacks the concept.
    pub label: String,
    pub selected: bool,
}

/// The choices for `refsets` (the edition's language refsets), `chosen`
/// selected.
fn language_choices<B: AsRef<[u8]>>(
    edition: &Edition<B>,
    refsets: &[u64],
    chosen: Option<u64>,
) -> Result<Vec<LanguageChoice>, crate::PageError> {
    refsets
        .iter()
        .map(|&id| {
            let label = match edition.ordinal(id) {
                Some(o) => edition
                    .preferred_term(o)?
                    .map_or_else(|| id.to_string(), str::to_owned),
                None => id.to_string(),
            };
            Ok(LanguageChoice {
                id,
                label,
                selected: chosen == Some(id),
            })
        })
        .collect()
}

/// One value of a facet among the hits: how many, and the search
/// narrowed to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Facet {
    pub label: String,
    pub count: usize,
    pub href: String,
}

/// The hits counted by semantic tag and by module, most first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facets {
    pub tags: Vec<Facet>,
    pub modules: Vec<Facet>,
    /// The search has more hits than were counted: each count is a lower
    /// bound.
    pub at_least: bool,
}

impl Facets {
    fn is_empty(&self) -> bool {
        self.tags.is_empty() && self.modules.is_empty()
    }
}

/// The semantic tag of an FSN: its last parenthesised words.
pub fn semantic_tag(fsn: &str) -> Option<&str> {
    let inner = fsn.trim_end().strip_suffix(')')?;
    let open = inner.rfind('(')?;
    Some(inner[open + 1..].trim()).filter(|t| !t.is_empty())
}

/// The facets of `codes` (the first hits of `search`, of `total`).
fn facets<B: AsRef<[u8]>>(
    edition: &Edition<B>,
    version: &str,
    search: &SearchQuery,
    codes: &[&str],
    total: Option<u64>,
) -> Result<Facets, crate::PageError> {
    use std::collections::BTreeMap;
    let mut tags: BTreeMap<String, usize> = BTreeMap::new();
    let mut modules: BTreeMap<u64, usize> = BTreeMap::new();
    for code in codes {
        let Some(ord) = code.parse::<u64>().ok().and_then(|id| edition.ordinal(id)) else {
            continue;
        };
        *modules.entry(edition.concept_at(ord)?.module).or_default() += 1;
        if let Some(tag) = edition.fsn(ord, &[])?.and_then(|d| semantic_tag(d.term)) {
            *tags.entry(tag.to_owned()).or_default() += 1;
        }
    }
    // `*` is the active hierarchy; a search that shows inactive concepts
    // narrows among every concept.
    let any = if search.include_inactive {
        "* {{ C active = * }}"
    } else {
        "*"
    };
    let most_first = |mut v: Vec<Facet>| {
        v.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.label.cmp(&b.label)));
        v
    };
    let tags = tags
        .into_iter()
        .map(|(tag, count)| {
            // A tag is words; a quote or backslash would end the ECL
            // string early, so such a tag gets no link.
            let constraint = format!("{any} {{{{ D term = wild:\"*({tag})\", type = fsn }}}}");
            let href = if tag.contains(['"', '\\']) {
                String::new()
            } else {
                search.narrowed(&constraint).page_link(version, 0)
            };
            Facet {
                label: tag,
                count,
                href,
            }
        })
        .collect();
    let modules = modules
        .into_iter()
        .map(|(module, count)| {
            let label = match edition.ordinal(module) {
                Some(o) => edition
                    .preferred_term(o)?
                    .map_or_else(|| module.to_string(), str::to_owned),
                None => module.to_string(),
            };
            let constraint = if search.include_inactive {
                format!("* {{{{ C moduleId = {module}, active = * }}}}")
            } else {
                format!("* {{{{ C moduleId = {module} }}}}")
            };
            Ok(Facet {
                label,
                count,
                href: search.narrowed(&constraint).page_link(version, 0),
            })
        })
        .collect::<Result<Vec<_>, crate::PageError>>()?;
    Ok(Facets {
        tags: most_first(tags),
        modules: most_first(modules),
        at_least: total.is_some_and(|t| t as usize > codes.len()),
    })
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
    /// The hits by semantic tag and module.
    pub facets: Facets,
    /// The language refsets to search in.
    pub languages: Vec<LanguageChoice>,
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
    languages: &[u64],
    answer: Result<&Value, String>,
) -> Result<SearchPage, crate::PageError> {
    let languages = language_choices(edition, languages, search.language)?;
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
    let (total, hits, facets, problem) = match answer {
        Ok(expansion) => {
            // The engine answered the page, or the facets' window of which
            // the page is a slice ([`SearchQuery::engine_pairs`]).
            let window = expansion["expansion"]["offset"].as_u64().unwrap_or(0) as usize;
            let contains = expansion["expansion"]["contains"].as_array();
            let codes: Vec<&str> = contains
                .into_iter()
                .flatten()
                .filter_map(|c| c["code"].as_str())
                .collect();
            let total = expansion["expansion"]["total"].as_u64();
            let facets = if window == 0 && search.offset.saturating_add(search.count) <= FACET_HITS
            {
                facets(edition, &version, &search, &codes, total)?
            } else {
                Facets::default()
            };
            let skip = search.offset.saturating_sub(window);
            let page: Vec<Value> = contains
                .into_iter()
                .flatten()
                .skip(skip)
                .take(search.count)
                .cloned()
                .collect();
            let sliced = serde_json::json!({ "expansion": { "total": total, "contains": page } });
            let (total, hits) = hits(edition, &version, &search.text, &sliced)?;
            (total, hits, facets, None)
        }
        Err(problem) => (None, Vec::new(), Facets::default(), Some(problem)),
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
        facets,
        languages,
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
