//! The pages' transport: routes, query strings and the heavy lane for
//! [`txmap_pages`], which renders them. A page asks the engine what a
//! FHIR client would ask — through [`fhir::answer`], the operations' own
//! path, with the same time budget, lanes and memory guard — and reads the
//! edition for what only the edition has (a concept's page). The status
//! page is diagnostics: like `/status`, the memory guard never refuses it.
//!
//! Routes: `/` (status), `/browse` (search; a concept or description id
//! typed into the box goes to its concept), `/concept/{id}` (a SNOMED CT
//! concept), `/lookup` (a concept of any code system, by `$lookup`),
//! `/ecl` (the workbench), `/suggest` (JSON for the search box's script)
//! and `/assets/…`; and `text/html` (or `_format=html`) on FHIR read and
//! search of CodeSystem, ValueSet and ConceptMap ([`resource`],
//! [`bundle`]). Every page names its edition by `version=` (the version
//! URI; none: the default edition), so every state has a URL.

use std::sync::Arc;
use std::time::Instant;

use axum::Extension;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde_json::Value;
use txmap_pages::search::SearchQuery;
use txmap_pages::{Chrome, EditionChoice, Page, PageError};
use txmap_terminology::operation::{Cost, Operation};

use crate::fhir::params::{Error, Request, Respond};
use crate::fhir::{format, work};
use crate::public::Connection;
use crate::state::AppState;
use crate::version::FhirVersion;

/// The longest search text or expression a page takes (a person types
/// it; a longer one is a 400 page, not work).
pub const MAX_INPUT: usize = 2048;

/// Routes the memory guard never refuses: the status page and assets.
pub fn open_routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/", get(status_page))
        .route(
            "/assets/txmap.js",
            get(|| async {
                asset(
                    "text/javascript; charset=utf-8",
                    txmap_pages::assets::SCRIPT,
                )
            }),
        )
        .route(
            "/assets/txmap.css",
            get(|| async { asset("text/css; charset=utf-8", txmap_pages::assets::STYLE) }),
        )
}

/// The pages that do work, behind the memory guard.
pub fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/browse", get(browse))
        .route("/suggest", get(suggest))
        .route("/concept/{id}", get(concept))
        .route("/lookup", get(lookup))
        .route("/ecl", get(ecl))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=3600"),
            ),
        ],
        body,
    )
        .into_response()
}

/// An HTML page. Scripts only from this server; the bars' widths are
/// inline styles.
pub fn html(status: StatusCode, body: String) -> Response {
    (
        status,
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/html; charset=utf-8"),
            ),
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'self'; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'",
                ),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
            (header::VARY, HeaderValue::from_static("Accept")),
        ],
        body,
    )
        .into_response()
}

/// The query's pairs, one value per name (the last wins).
struct Query(Vec<(String, String)>);

impl Query {
    fn of(uri: &Uri) -> Result<Query, PageError> {
        let pairs = format::query_pairs(uri).map_err(PageError::Invalid)?;
        if let Some((k, _)) = pairs.iter().find(|(k, v)| k.len() + v.len() > MAX_INPUT) {
            let name = if k.len() <= 64 {
                k.as_str()
            } else {
                "a parameter"
            };
            return Err(PageError::Invalid(format!(
                "{name} is longer than {MAX_INPUT} bytes"
            )));
        }
        Ok(Query(pairs))
    }

    fn get(&self, name: &str) -> &str {
        self.0
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map_or("", |(_, v)| v.as_str())
    }

    fn number(&self, name: &str, default: usize) -> Result<usize, PageError> {
        match self.get(name) {
            "" => Ok(default),
            n => n
                .parse()
                .map_err(|_| PageError::Invalid(format!("{name}={n:?} is not a number"))),
        }
    }
}

/// The frame of every page: the editions to choose from, `selected`
/// marked.
pub fn chrome(state: &AppState, selected: Option<usize>) -> Chrome {
    let selected = selected.or(state.editions.default_index());
    Chrome {
        editions: state
            .editions
            .list
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let id = e.edition.identity();
                let module = e
                    .edition
                    .ordinal(id.edition_module)
                    .and_then(|o| e.edition.preferred_term(o).ok().flatten())
                    .map_or_else(|| id.edition_module.to_string(), str::to_owned);
                let d = id.effective_time;
                EditionChoice {
                    version: e.file.names.version_uri.clone(),
                    label: format!(
                        "{module} {:04}-{:02}-{:02}",
                        d / 10000,
                        d / 100 % 100,
                        d % 100
                    ),
                    selected: Some(i) == selected,
                    default: Some(i) == state.editions.default_index(),
                }
            })
            .collect(),
        server_version: env!("CARGO_PKG_VERSION").to_owned(),
        ..Chrome::default()
    }
}

/// The edition `version` names (a version URI, or empty for the default).
fn edition(state: &AppState, version: &str) -> Result<usize, PageError> {
    if version.is_empty() {
        return state
            .editions
            .default_index()
            .ok_or_else(|| PageError::NotFound("no SNOMED CT edition is served".to_owned()));
    }
    state
        .editions
        .list
        .iter()
        .position(|e| e.file.names.version_uri == version)
        .ok_or_else(|| PageError::NotFound(format!("no edition {version} is served")))
}

/// The 404 page of what a page was asked for and the server lacks.
pub(crate) fn not_found(state: &AppState, message: &str) -> Response {
    failed(state, &PageError::NotFound(message.to_owned()))
}

/// A page that could not be made, as a page.
fn failed(state: &AppState, e: &PageError) -> Response {
    let status = match e {
        PageError::NotFound(_) => StatusCode::NOT_FOUND,
        PageError::Invalid(_) => StatusCode::BAD_REQUEST,
        PageError::Store(_) => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let mut chrome = chrome(state, None);
    chrome.title = status.canonical_reason().unwrap_or("Error").to_owned();
    html(
        status,
        txmap_pages::error_page(chrome, status.as_u16(), &e.to_string()),
    )
}

/// The engine's answer to `op` with `pairs`, as a FHIR client gets it
/// from `/r4`, parsed; its refusal as the message it carries.
async fn engine(
    state: &Arc<AppState>,
    op: Operation,
    pairs: Vec<(String, String)>,
    headers: &HeaderMap,
    client: Option<std::net::IpAddr>,
) -> Result<Value, String> {
    let json = work::answer(
        state,
        FhirVersion::R4,
        op,
        Request::from_pairs(pairs),
        headers,
        client,
        Instant::now(),
    )
    .await
    .map_err(|e| e.issue().text)?;
    serde_json::from_str(&json).map_err(|e| format!("the engine's answer is not JSON: {e}"))
}

/// Builds a page on the heavy lane (it reads the edition: a concept with
/// a hundred thousand inbound relationships is work), within the time
/// budget.
async fn build(
    state: &Arc<AppState>,
    client: Option<std::net::IpAddr>,
    f: impl FnOnce() -> Result<String, PageError> + Send + 'static,
) -> Response {
    let budget = state.limits.request;
    let work = work::run(Arc::clone(state), Cost::Heavy, client, move || Ok(f()));
    match tokio::time::timeout(budget, work).await {
        Ok(Ok(Ok(page))) => html(StatusCode::OK, page),
        Ok(Ok(Err(e))) => failed(state, &e),
        Ok(Err(e)) => failed(state, &PageError::Store(e.to_string())),
        Err(_) => failed(
            state,
            &PageError::Invalid(work::out_of_budget("page", budget).to_string()),
        ),
    }
}

fn client_of(conn: Option<Extension<Connection>>) -> Option<std::net::IpAddr> {
    conn.map(|c| c.remote.ip())
}

async fn status_page(State(state): State<Arc<AppState>>) -> Response {
    let mut chrome = chrome(&state, None);
    chrome.title = "Status".to_owned();
    chrome.fhir_request = Some("/status".to_owned());
    html(
        StatusCode::OK,
        crate::status::status_page(&state, chrome).html(),
    )
}

/// The search a page's query asks.
fn search_query(q: &Query) -> Result<SearchQuery, PageError> {
    Ok(SearchQuery {
        text: q.get("q").trim().to_owned(),
        within: q.get("within").trim().to_owned(),
        include_inactive: q.get("inactive") == "true",
        language: match q.get("lang").trim() {
            "" => None,
            l => Some(l.parse().map_err(|_| {
                PageError::Invalid(format!("lang={l:?} is not a language refset's SCTID"))
            })?),
        },
        offset: q.number("offset", 0)?,
        count: q
            .number("count", txmap_pages::search::DEFAULT_COUNT)?
            .clamp(1, txmap_pages::search::MAX_COUNT),
    })
}

async fn browse(
    State(state): State<Arc<AppState>>,
    conn: Option<Extension<Connection>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let client = client_of(conn);
    let q = match Query::of(&uri) {
        Ok(q) => q,
        Err(e) => return failed(&state, &e),
    };
    let (search, index) =
        match search_query(&q).and_then(|s| Ok((s, edition(&state, q.get("version"))?))) {
            Ok(x) => x,
            Err(e) => return failed(&state, &e),
        };
    let chrome = chrome(&state, Some(index));
    let version = chrome.version_param().to_owned();
    let ed = Arc::clone(&state.editions.list[index].edition);
    let languages: Vec<u64> = state
        .packages
        .edition(index)
        .map(|e| e.language_refsets().to_vec())
        .unwrap_or_default();
    if let Some(id) = txmap_pages::search::direct(&ed, &search.text) {
        return Redirect::to(&txmap_pages::concept::Linker { version: &version }.concept(id))
            .into_response();
    }
    let answer = if search.text.is_empty() {
        None
    } else {
        Some(
            engine(
                &state,
                Operation::Expand,
                search.engine_pairs(&version),
                &headers,
                client,
            )
            .await,
        )
    };
    build(&state, client, move || {
        let page = match &answer {
            None => txmap_pages::search::page(&ed, chrome, search, &languages, Ok(&Value::Null))?,
            Some(a) => txmap_pages::search::page(
                &ed,
                chrome,
                search,
                &languages,
                a.as_ref().map_err(Clone::clone),
            )?,
        };
        Ok(page.html())
    })
    .await
}

async fn suggest(
    State(state): State<Arc<AppState>>,
    conn: Option<Extension<Connection>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let client = client_of(conn);
    let q = match Query::of(&uri) {
        Ok(q) => q,
        Err(e) => return Error::invalid(e.to_string()).response(),
    };
    let index = match edition(&state, q.get("version")) {
        Ok(i) => i,
        Err(e) => return Error::not_found(e.to_string()).response(),
    };
    let version = chrome(&state, Some(index)).version_param().to_owned();
    let search = SearchQuery {
        text: q.get("q").trim().to_owned(),
        count: q
            .number("count", 10)
            .unwrap_or(10)
            .clamp(1, txmap_pages::search::MAX_COUNT),
        language: q.get("lang").trim().parse().ok(),
        ..SearchQuery::default()
    };
    let ed = Arc::clone(&state.editions.list[index].edition);
    let answer = engine(
        &state,
        Operation::Expand,
        search.expand_pairs(&version),
        &headers,
        client,
    )
    .await;
    let json = match answer {
        Ok(expansion) => {
            let text = search.text.clone();
            let made = work::run(Arc::clone(&state), Cost::Heavy, client, move || {
                let (total, hits) = txmap_pages::search::hits(&ed, &version, &text, &expansion)
                    .map_err(|e| Error::Internal(e.to_string()))?;
                let meant = if total == Some(0) {
                    ed.did_you_mean(&text)
                        .map_err(|e| Error::Internal(e.to_string()))?
                } else {
                    None
                };
                Ok(txmap_pages::search::suggestions(
                    total,
                    &hits,
                    meant.as_deref(),
                ))
            })
            .await;
            match made {
                Ok(v) => v,
                Err(e) => return e.response(),
            }
        }
        // Nothing to suggest for what the engine refuses (no words yet).
        Err(_) => txmap_pages::search::suggestions(Some(0), &[], None),
    };
    (
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        json.to_string(),
    )
        .into_response()
}

async fn concept(
    State(state): State<Arc<AppState>>,
    conn: Option<Extension<Connection>>,
    id: Result<Path<String>, axum::extract::rejection::PathRejection>,
    uri: Uri,
) -> Response {
    let client = client_of(conn);
    let made = (|| {
        let q = Query::of(&uri)?;
        let Ok(Path(id)) = id else {
            return Err(PageError::Invalid(
                "the concept id is not UTF-8 text".to_owned(),
            ));
        };
        let id: u64 = id
            .parse()
            .map_err(|_| PageError::NotFound(format!("“{id}” is not a SNOMED CT concept id")))?;
        let index = edition(&state, q.get("version"))?;
        Ok((id, index, q.number("offset", 0)?))
    })();
    let (id, index, offset) = match made {
        Ok(x) => x,
        Err(e) => return failed(&state, &e),
    };
    let chrome = chrome(&state, Some(index));
    let ed = Arc::clone(&state.editions.list[index].edition);
    build(&state, client, move || {
        Ok(txmap_pages::concept::build(&ed, chrome, id, offset)?.html())
    })
    .await
}

async fn lookup(
    State(state): State<Arc<AppState>>,
    conn: Option<Extension<Connection>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let client = client_of(conn);
    let q = match Query::of(&uri) {
        Ok(q) => q,
        Err(e) => return failed(&state, &e),
    };
    let (system, version, code) = (q.get("system"), q.get("version"), q.get("code"));
    let mut pairs = vec![
        ("system".to_owned(), system.to_owned()),
        ("code".to_owned(), code.to_owned()),
    ];
    if !version.is_empty() {
        pairs.push(("version".to_owned(), version.to_owned()));
    }
    pairs.push(("property".to_owned(), "*".to_owned()));
    let answer = engine(&state, Operation::Lookup, pairs, &headers, client).await;
    let page = txmap_pages::resource::lookup(
        chrome(&state, None),
        system,
        version,
        code,
        answer.as_ref().map_err(Clone::clone),
    );
    let status = if answer.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::NOT_FOUND
    };
    html(status, page.html())
}

async fn ecl(
    State(state): State<Arc<AppState>>,
    conn: Option<Extension<Connection>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let client = client_of(conn);
    let made = (|| {
        let q = Query::of(&uri)?;
        let index = edition(&state, q.get("version"))?;
        Ok((
            q.get("expression").to_owned(),
            index,
            q.number("offset", 0)?,
        ))
    })();
    let (expression, index, offset) = match made {
        Ok(x) => x,
        Err(e) => return failed(&state, &e),
    };
    let chrome = chrome(&state, Some(index));
    let version = chrome.version_param().to_owned();
    let error = if expression.trim().is_empty() {
        None
    } else {
        txmap_pages::ecl::check(&expression)
    };
    let answer = if !expression.trim().is_empty() && error.is_none() {
        let started = Instant::now();
        let a = engine(
            &state,
            Operation::Expand,
            txmap_pages::ecl::expand_pairs(&version, &expression, offset),
            &headers,
            client,
        )
        .await;
        Some((a, started.elapsed().as_secs_f64() * 1e3))
    } else {
        None
    };
    let page = txmap_pages::ecl::page(
        chrome,
        &expression,
        offset,
        error,
        answer
            .as_ref()
            .map(|(a, ms)| (a.as_ref().map_err(Clone::clone), *ms)),
    );
    html(StatusCode::OK, page.html())
}

/// A FHIR resource's page, for `text/html` on its read URL (`path`,
/// from the server's root): a value set with a page of its expansion
/// (`offset=` in the query).
pub(crate) async fn resource(
    state: &Arc<AppState>,
    resource: Value,
    path: &str,
    uri: &Uri,
    headers: &HeaderMap,
    client: Option<std::net::IpAddr>,
) -> Response {
    let chrome = chrome(state, None);
    match resource["resourceType"].as_str() {
        Some("ValueSet") => {
            let offset = Query::of(uri)
                .and_then(|q| q.number("offset", 0))
                .unwrap_or(0);
            let url = resource["url"].as_str().unwrap_or_default();
            let version = resource["version"].as_str().unwrap_or_default();
            let answer = engine(
                state,
                Operation::Expand,
                txmap_pages::resource::expansion_pairs(url, version, offset),
                headers,
                client,
            )
            .await;
            let page = txmap_pages::resource::value_set(
                chrome,
                &resource,
                path,
                offset,
                answer.as_ref().map_err(Clone::clone),
            );
            html(StatusCode::OK, page.html())
        }
        Some("ConceptMap") => html(
            StatusCode::OK,
            txmap_pages::resource::concept_map(chrome, &resource, path).html(),
        ),
        _ => html(
            StatusCode::OK,
            txmap_pages::resource::code_system(chrome, &resource, path).html(),
        ),
    }
}

/// A FHIR search's Bundle as a page of links to its resources' pages.
pub(crate) fn bundle(
    state: &AppState,
    kind: &str,
    json: &str,
    base: &str,
    fhir_path: &str,
) -> Response {
    match serde_json::from_str::<Value>(json) {
        Ok(b) => {
            let server_base = base.rsplit_once('/').map_or(base, |(s, _)| s);
            html(
                StatusCode::OK,
                txmap_pages::resource::bundle(
                    chrome(state, None),
                    kind,
                    &b,
                    server_base,
                    fhir_path,
                )
                .html(),
            )
        }
        Err(e) => failed(state, &PageError::Store(e.to_string())),
    }
}
