//! Pages of FHIR resources — CodeSystem, ValueSet, ConceptMap, a search's
//! results, and a concept of any code system by `$lookup` — rendered from
//! their JSON: what the FHIR read, search or operation returns is what
//! the page shows, so the two cannot disagree. A value set's page shows
//! its definition and a page of its expansion (the engine's `$expand`).

use askama::Template;
use serde_json::Value;

use crate::chrome::{Chrome, Link};
use crate::url::query;

/// Concepts of a CodeSystem resource listed on its page.
pub const CONCEPTS_SHOWN: usize = 1000;
/// Expansion entries per page.
pub const EXPANSION_PAGE: usize = 100;

const SNOMED: &str = "http://snomed.info/sct";

/// Where a coding's own page is: SNOMED CT concepts on the browser,
/// anything else by `$lookup`.
pub fn coding_href(system: &str, version: &str, code: &str) -> String {
    if system == SNOMED && code.bytes().all(|b| b.is_ascii_digit()) && !code.is_empty() {
        let version = if version.starts_with("http://snomed.info/sct/") {
            version
        } else {
            ""
        };
        return query(&format!("/concept/{code}"), &[("version", version)]);
    }
    query(
        "/lookup",
        &[("system", system), ("version", version), ("code", code)],
    )
}

/// The page of a value set named by URL (and version), as a search for
/// it: the search's one hit links on to the resource.
pub fn value_set_href(canonical: &str) -> String {
    let (url, version) = canonical.split_once('|').unwrap_or((canonical, ""));
    query(
        "/r4/ValueSet",
        &[("url", url), ("version", version), ("_format", "html")],
    )
}

fn text(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

/// The fields every canonical resource's page heads with.
#[derive(Debug, Default)]
pub struct Summary {
    pub kind: String,
    pub title: String,
    pub url: String,
    pub version: String,
    pub name: String,
    pub status: String,
    pub publisher: String,
    pub description: String,
}

impl Summary {
    pub fn of(r: &Value) -> Summary {
        let name = text(r, "name");
        let title = match text(r, "title") {
            t if t.is_empty() => name.clone(),
            t => t,
        };
        Summary {
            kind: text(r, "resourceType"),
            title,
            url: text(r, "url"),
            version: text(r, "version"),
            name,
            status: text(r, "status"),
            publisher: text(r, "publisher"),
            description: text(r, "description"),
        }
    }
}

#[derive(Debug)]
pub struct ConceptRow {
    pub depth: usize,
    pub code: String,
    pub href: String,
    pub display: String,
    pub definition: String,
}

#[derive(Template, Debug)]
#[template(path = "codesystem.html")]
pub struct CodeSystemPage {
    pub chrome: Chrome,
    pub summary: Summary,
    pub content: String,
    pub count: String,
    pub concepts: Vec<ConceptRow>,
    /// Concepts the resource has beyond those listed.
    pub more: usize,
    /// For a SNOMED CT edition: its browser.
    pub browse: Option<String>,
}

/// A CodeSystem resource's page.
pub fn code_system(mut chrome: Chrome, r: &Value, fhir_path: &str) -> CodeSystemPage {
    let summary = Summary::of(r);
    chrome.title = format!("CodeSystem {}", summary.title);
    chrome.fhir_request = Some(fhir_path.to_owned());
    let mut concepts = Vec::new();
    let mut seen = 0usize;
    // Depth-first, iteratively: nesting is input and has no bound.
    let mut stack: Vec<(usize, &Value)> = r["concept"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .map(|c| (0, c))
        .collect();
    while let Some((depth, c)) = stack.pop() {
        seen += 1;
        if concepts.len() < CONCEPTS_SHOWN {
            let code = text(c, "code");
            concepts.push(ConceptRow {
                depth,
                href: coding_href(&summary.url, &summary.version, &code),
                code,
                display: text(c, "display"),
                definition: text(c, "definition"),
            });
        }
        stack.extend(
            c["concept"]
                .as_array()
                .into_iter()
                .flatten()
                .rev()
                .map(|k| (depth + 1, k)),
        );
    }
    let browse =
        (summary.url == SNOMED).then(|| query("/browse", &[("version", &summary.version)]));
    CodeSystemPage {
        chrome,
        content: text(r, "content"),
        count: text(r, "count"),
        more: seen - concepts.len(),
        concepts,
        browse,
        summary,
    }
}

#[derive(Debug)]
pub struct Rule {
    pub include: bool,
    pub system: String,
    pub version: String,
    pub concepts: Vec<(Link, String)>,
    /// `property op value`.
    pub filters: Vec<String>,
    pub value_sets: Vec<Link>,
}

#[derive(Debug)]
pub struct Entry {
    pub system: String,
    pub code: Link,
    pub display: String,
}

#[derive(Debug)]
pub struct Expansion {
    pub total: Option<u64>,
    pub offset: usize,
    pub entries: Vec<Entry>,
    pub previous: Option<String>,
    pub next: Option<String>,
    /// The engine's refusal, shown in place of the expansion.
    pub problem: Option<String>,
}

#[derive(Template, Debug)]
#[template(path = "valueset.html")]
pub struct ValueSetPage {
    pub chrome: Chrome,
    pub summary: Summary,
    pub rules: Vec<Rule>,
    pub expansion: Expansion,
}

/// The `$expand` parameters for a page of value set `url|version`.
pub fn expansion_pairs(url: &str, version: &str, offset: usize) -> Vec<(String, String)> {
    let mut pairs = vec![
        ("url".to_owned(), url.to_owned()),
        ("count".to_owned(), EXPANSION_PAGE.to_string()),
        ("offset".to_owned(), offset.to_string()),
    ];
    if !version.is_empty() {
        pairs.push(("valueSetVersion".to_owned(), version.to_owned()));
    }
    pairs
}

/// A ValueSet resource's page, with the engine's answer to
/// [`expansion_pairs`] (`page_path` is the page's own path, for the
/// pager's links).
pub fn value_set(
    mut chrome: Chrome,
    r: &Value,
    page_path: &str,
    offset: usize,
    answer: Result<&Value, String>,
) -> ValueSetPage {
    let summary = Summary::of(r);
    chrome.title = format!("ValueSet {}", summary.title);
    let pairs = expansion_pairs(&summary.url, &summary.version, offset);
    let pairs: Vec<(&str, &str)> = pairs
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    chrome.fhir_request = Some(query("/r4/ValueSet/$expand", &pairs));
    let mut rules = Vec::new();
    for (key, include) in [("include", true), ("exclude", false)] {
        for inc in r["compose"][key].as_array().into_iter().flatten() {
            let system = text(inc, "system");
            let version = text(inc, "version");
            rules.push(Rule {
                include,
                concepts: inc["concept"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|c| {
                        let code = text(c, "code");
                        (
                            Link {
                                href: coding_href(&system, &version, &code),
                                text: code,
                            },
                            text(c, "display"),
                        )
                    })
                    .collect(),
                filters: inc["filter"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|f| {
                        format!(
                            "{} {} {}",
                            text(f, "property"),
                            text(f, "op"),
                            text(f, "value")
                        )
                    })
                    .collect(),
                value_sets: inc["valueSet"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|u| Link {
                        href: value_set_href(u),
                        text: u.to_owned(),
                    })
                    .collect(),
                system,
                version,
            });
        }
    }
    let expansion = match answer {
        Ok(v) => {
            let e = &v["expansion"];
            let total = e["total"].as_u64();
            let entries: Vec<Entry> = e["contains"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| {
                    let system = text(c, "system");
                    let code = text(c, "code");
                    Entry {
                        code: Link {
                            href: coding_href(&system, &text(c, "version"), &code),
                            text: code,
                        },
                        display: text(c, "display"),
                        system,
                    }
                })
                .collect();
            let link = |o: usize| {
                let o = o.to_string();
                query(page_path, &[("_format", "html"), ("offset", &o)]) + "#expansion"
            };
            Expansion {
                previous: (offset > 0).then(|| link(offset.saturating_sub(EXPANSION_PAGE))),
                next: total
                    .filter(|&t| offset + entries.len() < t as usize && !entries.is_empty())
                    .map(|_| link(offset + EXPANSION_PAGE)),
                total,
                offset,
                entries,
                problem: None,
            }
        }
        Err(problem) => Expansion {
            total: None,
            offset,
            entries: Vec::new(),
            previous: None,
            next: None,
            problem: Some(problem),
        },
    };
    ValueSetPage {
        chrome,
        summary,
        rules,
        expansion,
    }
}

#[derive(Debug)]
pub struct MapRow {
    pub source: Link,
    pub display: String,
    /// (relationship, target code link, target display).
    pub targets: Vec<(String, Link, String)>,
}

#[derive(Debug)]
pub struct MapGroup {
    pub source: String,
    pub target: String,
    pub rows: Vec<MapRow>,
}

#[derive(Template, Debug)]
#[template(path = "conceptmap.html")]
pub struct ConceptMapPage {
    pub chrome: Chrome,
    pub summary: Summary,
    pub groups: Vec<MapGroup>,
}

/// A ConceptMap resource's page.
pub fn concept_map(mut chrome: Chrome, r: &Value, fhir_path: &str) -> ConceptMapPage {
    let summary = Summary::of(r);
    chrome.title = format!("ConceptMap {}", summary.title);
    chrome.fhir_request = Some(fhir_path.to_owned());
    let groups = r["group"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|g| {
            let (source, target) = (text(g, "source"), text(g, "target"));
            MapGroup {
                rows: g["element"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|e| {
                        let code = text(e, "code");
                        MapRow {
                            source: Link {
                                href: coding_href(&source, "", &code),
                                text: code,
                            },
                            display: text(e, "display"),
                            targets: e["target"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .map(|t| {
                                    let rel = match text(t, "relationship") {
                                        r if r.is_empty() => text(t, "equivalence"),
                                        r => r,
                                    };
                                    let code = text(t, "code");
                                    (
                                        rel,
                                        Link {
                                            href: coding_href(&target, "", &code),
                                            text: code,
                                        },
                                        text(t, "display"),
                                    )
                                })
                                .collect(),
                        }
                    })
                    .collect(),
                source,
                target,
            }
        })
        .collect();
    ConceptMapPage {
        chrome,
        summary,
        groups,
    }
}

#[derive(Debug)]
pub struct Listed {
    pub link: Link,
    pub url: String,
    pub version: String,
    pub status: String,
}

#[derive(Template, Debug)]
#[template(path = "bundle.html")]
pub struct BundlePage {
    pub chrome: Chrome,
    pub kind: String,
    pub total: Option<u64>,
    pub entries: Vec<Listed>,
    pub previous: Option<String>,
    pub next: Option<String>,
}

/// A searchset Bundle's page: each entry links to its resource's page.
/// `server_base` is what the Bundle's links start with, cut off to make
/// them relative (a page links within the server it came from).
pub fn bundle(
    mut chrome: Chrome,
    kind: &str,
    b: &Value,
    server_base: &str,
    fhir_path: &str,
) -> BundlePage {
    chrome.title = format!("{kind} resources");
    chrome.fhir_request = Some(fhir_path.to_owned());
    let local = |u: &str| -> String {
        let path = u.strip_prefix(server_base).unwrap_or(u);
        let sep = if path.contains('?') { '&' } else { '?' };
        format!("{path}{sep}_format=html")
    };
    let entries = b["entry"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            let r = &e["resource"];
            let s = Summary::of(r);
            Listed {
                link: Link {
                    href: local(e["fullUrl"].as_str().unwrap_or_default()),
                    text: if s.title.is_empty() {
                        text(r, "id")
                    } else {
                        s.title
                    },
                },
                url: s.url,
                version: s.version,
                status: s.status,
            }
        })
        .collect();
    let relation = |rel: &str| {
        b["link"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|l| l["relation"] == rel)
            .and_then(|l| l["url"].as_str())
            .map(|u| local(&u.replace("_format=html", "").replace("&&", "&")))
    };
    BundlePage {
        chrome,
        kind: kind.to_owned(),
        total: b["total"].as_u64(),
        entries,
        previous: relation("previous"),
        next: relation("next"),
    }
}

#[derive(Template, Debug)]
#[template(path = "lookup.html")]
pub struct LookupPage {
    pub chrome: Chrome,
    pub system: String,
    pub code: String,
    pub name: String,
    pub version: String,
    pub display: String,
    /// (language, use, value).
    pub designations: Vec<(String, String, String)>,
    /// (property, value, link when the value is a code of the system).
    pub properties: Vec<(String, String, Option<String>)>,
    pub problem: Option<String>,
}

/// A concept of any code system, from the engine's `$lookup` answer.
pub fn lookup(
    mut chrome: Chrome,
    system: &str,
    version: &str,
    code: &str,
    answer: Result<&Value, String>,
) -> LookupPage {
    chrome.title = format!("{code} in {system}");
    chrome.fhir_request = Some(query(
        "/r4/CodeSystem/$lookup",
        &[("system", system), ("version", version), ("code", code)],
    ));
    let mut page = LookupPage {
        chrome,
        system: system.to_owned(),
        code: code.to_owned(),
        name: String::new(),
        version: version.to_owned(),
        display: String::new(),
        designations: Vec::new(),
        properties: Vec::new(),
        problem: None,
    };
    let params = match answer {
        Ok(p) => p,
        Err(problem) => {
            page.problem = Some(problem);
            return page;
        }
    };
    let value = |p: &Value| -> String {
        p.as_object()
            .into_iter()
            .flatten()
            .find(|(k, _)| k.starts_with("value"))
            .map(|(k, v)| match v {
                Value::String(s) => s.clone(),
                Value::Object(o) if k == "valueCoding" => {
                    let code = o.get("code").and_then(Value::as_str).unwrap_or_default();
                    let display = o.get("display").and_then(Value::as_str).unwrap_or_default();
                    format!("{code} {display}").trim().to_owned()
                }
                other => other.to_string(),
            })
            .unwrap_or_default()
    };
    for p in params["parameter"].as_array().into_iter().flatten() {
        let parts = p["part"].as_array();
        let part = |name: &str| {
            parts
                .into_iter()
                .flatten()
                .find(|q| q["name"] == name)
                .map(&value)
                .unwrap_or_default()
        };
        match p["name"].as_str().unwrap_or_default() {
            "name" => page.name = value(p),
            "version" => page.version = value(p),
            "display" => page.display = value(p),
            "designation" => page
                .designations
                .push((part("language"), part("use"), part("value"))),
            "property" => {
                let code = part("code");
                let v = part("value");
                let is_code = parts
                    .into_iter()
                    .flatten()
                    .any(|q| q["name"] == "value" && q.get("valueCode").is_some());
                let href = is_code.then(|| coding_href(system, &page.version, &v));
                page.properties.push((code, v, href));
            }
            _ => {}
        }
    }
    page
}
