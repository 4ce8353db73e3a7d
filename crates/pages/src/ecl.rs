//! The ECL workbench: an expression, its parse error with the place
//! marked, or its result count and a page of results, and the time the
//! engine took. The expression is parsed here only to show where it goes
//! wrong; the results are the engine's `$expand` of the implicit value
//! set `?fhir_vs=ecl/…`, the request the page shows.

use askama::Template;
use serde_json::Value;

use crate::chrome::{Chrome, Link};
use crate::url::query;

/// Results per page.
pub const PAGE: usize = 50;

/// Where a parse failed: the text before, at and after the mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marked {
    pub before: String,
    pub at: String,
    pub after: String,
    /// The parser's message, which names the line and column.
    pub message: String,
}

#[derive(Template, Debug)]
#[template(path = "ecl.html")]
pub struct EclPage {
    pub chrome: Chrome,
    pub expression: String,
    pub error: Option<Marked>,
    /// The engine's refusal (too costly, out of time, unknown edition).
    pub problem: Option<String>,
    pub total: Option<u64>,
    pub results: Vec<Link>,
    pub offset: usize,
    pub millis: Option<f64>,
    pub previous: Option<String>,
    pub next: Option<String>,
}

/// The parse error of `expression`, marked; `None` if it parses.
pub fn check(expression: &str) -> Option<Marked> {
    let e = txmap_ecl::parse(expression).err()?;
    let offset = (0..=e.offset.min(expression.len()))
        .rev()
        .find(|&i| expression.is_char_boundary(i))
        .unwrap_or(0);
    let (before, rest) = expression.split_at(offset);
    let at_len = rest.chars().next().map_or(0, char::len_utf8);
    let (at, after) = rest.split_at(at_len);
    Some(Marked {
        before: before.to_owned(),
        at: if at.is_empty() {
            " ".to_owned()
        } else {
            at.to_owned()
        },
        after: after.to_owned(),
        message: e.to_string(),
    })
}

/// The `$expand` parameters that evaluate `expression` in edition
/// `version` (empty: the default), a page from `offset`.
pub fn expand_pairs(version: &str, expression: &str, offset: usize) -> Vec<(String, String)> {
    vec![
        (
            "url".to_owned(),
            crate::search::implicit(version, expression.trim()),
        ),
        ("count".to_owned(), PAGE.to_string()),
        ("offset".to_owned(), offset.to_string()),
    ]
}

/// The workbench page. `error` is [`check`]'s answer for the expression
/// (`None` for an empty one); `answer` is the engine's expansion or
/// refusal and how long it took, when the expression parsed and was
/// evaluated.
pub fn page(
    mut chrome: Chrome,
    expression: &str,
    offset: usize,
    error: Option<Marked>,
    answer: Option<(Result<&Value, String>, f64)>,
) -> EclPage {
    let version = chrome.version_param().to_owned();
    chrome.title = "ECL workbench".to_owned();
    if !expression.trim().is_empty() && error.is_none() {
        let pairs = expand_pairs(&version, expression, offset);
        let pairs: Vec<(&str, &str)> = pairs
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        chrome.fhir_request = Some(query("/r4/ValueSet/$expand", &pairs));
    }
    let linker = crate::concept::Linker { version: &version };
    let (mut total, mut results, mut problem, mut millis) = (None, Vec::new(), None, None);
    match answer {
        Some((Ok(v), ms)) => {
            millis = Some(ms);
            total = v["expansion"]["total"].as_u64();
            results = v["expansion"]["contains"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let code = c["code"].as_str().unwrap_or_default();
                    Link {
                        href: code
                            .parse::<u64>()
                            .map(|id| linker.concept(id))
                            .unwrap_or_default(),
                        text: format!("{code} |{}|", c["display"].as_str().unwrap_or_default()),
                    }
                })
                .collect();
        }
        Some((Err(p), ms)) => {
            millis = Some(ms);
            problem = Some(p);
        }
        None => {}
    }
    let link = |o: usize| {
        let o = o.to_string();
        query(
            "/ecl",
            &[
                ("expression", expression),
                ("version", &version),
                ("offset", &o),
            ],
        )
    };
    let previous = (offset > 0).then(|| link(offset.saturating_sub(PAGE)));
    let next = total
        .filter(|&t| offset + results.len() < t as usize && !results.is_empty())
        .map(|_| link(offset + PAGE));
    EclPage {
        chrome,
        expression: expression.to_owned(),
        error,
        problem,
        total,
        results,
        offset,
        millis,
        previous,
        next,
    }
}
