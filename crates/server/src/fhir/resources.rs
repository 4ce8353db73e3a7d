//! FHIR read and search of the terminology resources the server holds:
//! every loaded SNOMED CT edition as a CodeSystem (`content:
//! not-present`, with its concept count), and every CodeSystem, ValueSet
//! and ConceptMap stored through the API or of the endpoint's FHIR
//! packages.
//!
//! Clients decide what a server supports by searching: HAPI's remote
//! terminology client asks `CodeSystem?url=…` before it validates a code,
//! the IG Publisher and the validator fetch value sets by URL, and the
//! ecosystem's requirements say a server SHALL support `url` and `version`
//! search and `_summary`. So:
//!
//! - `GET [base]/{type}/{id}` reads one (404 with an OperationOutcome
//!   otherwise). An edition's id is `sct-<module>-<YYYYMMDD>`, stable
//!   across restarts; a package resource keeps its own id, unless an
//!   earlier package's resource of its type has it: then it is qualified
//!   by its package (`hl7.fhir.r5.core-action-type`), so every resource
//!   has one id and every search entry's `fullUrl` reads it.
//! - `GET [base]/{type}?…` searches: `url` (exact), `version` (exact),
//!   `status` (exact), `name` and `title` (FHIR string search: case- and
//!   accent-blind prefix; `:exact` and `:contains` modifiers), `_id`; a
//!   comma means any of the values. Results come in a `searchset` Bundle
//!   in a stable order (editions first, then the stored resources
//!   (`fhir::writes`), then packages in config order),
//!   paged by `_count` (default [`DEFAULT_COUNT`], at most [`MAX_COUNT`])
//!   and `_offset`, with `self`, `first`, `previous`, `next` and `last`
//!   links; `_total=none` leaves the total out; `_summary` (`true`,
//!   `text`, `data`, `count`, `false`) and `_elements` trim the resources
//!   and tag them `SUBSETTED`. Other parameters are ignored, as FHIR
//!   allows a server to do with parameters it does not support.
//!
//! `url` searches use the packages' URL index; other searches read each
//! resource's index entry (id, url, version, name, title, status), and
//! parse the JSON of the page's resources only.

use std::sync::Arc;

use axum::Extension;
use axum::Router;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use txmap_packages::{Kind, Listed};
use txmap_text::fold;

use super::format;
use super::metadata::SNOMED_CT;
use super::params::{Error, Respond};
use super::work::{answered, budget_spent};
use crate::outcome::{fhir_json, method_not_allowed, to_fhir_json};
use crate::state::AppState;
use crate::version::FhirVersion;
use txmap_load::EditionBytes;
use txmap_snomed::SnomedCt;
use txmap_terminology::operation::Cost;

/// Resources per page when `_count` is not given.
pub const DEFAULT_COUNT: usize = 100;
/// The largest page `_count` may ask for.
pub const MAX_COUNT: usize = 1000;

/// The read and search routes of the three resource types.
pub fn routes(v: FhirVersion) -> Router<Arc<AppState>> {
    Kind::ALL.into_iter().fold(Router::new(), |r, kind| {
        let name = kind.name();
        r.route(
            &format!("/{name}"),
            axum::routing::get(
                move |State(state): State<Arc<AppState>>, request: axum::extract::Request| async move {
                    let base = state
                        .public
                        .fhir_base(v, request.headers(), request.extensions());
                    let client = request
                        .extensions()
                        .get::<crate::public::Connection>()
                        .map(|c| c.remote.ip());
                    // A search can list a thousand resources (8 MB): it is
                    // heavy work, run where heavy work runs, within the
                    // time budget and the memory guard.
                    let uri = request.uri().clone();
                    let page = request.extensions().get::<format::Html>().is_some();
                    let searched = Arc::clone(&state);
                    let search_base = base.clone();
                    let search_uri = uri.clone();
                    let work = super::work::run(Arc::clone(&state), Cost::Heavy, client, move || {
                        search(&searched, v, kind, &search_base, &search_uri)
                    });
                    let budget = state.limits.request;
                    match tokio::time::timeout(budget, work).await {
                        Ok(Ok(json)) if page => {
                            let path = format!("{}{}", v.path(), uri);
                            crate::pages::bundle(&state, name, &json, &base, &path)
                        }
                        Ok(Ok(json)) => answered(&state, json),
                        Ok(Err(e)) => e.response(),
                        Err(_) => budget_spent("search", budget),
                    }
                },
            )
            .fallback(method_not_allowed),
        )
        .route(
            &format!("/{name}/{{id}}"),
            axum::routing::get(
                move |State(state): State<Arc<AppState>>,
                      id: Result<Path<String>, PathRejection>,
                      page: Option<Extension<format::Html>>,
                      conn: Option<Extension<crate::public::Connection>>,
                      headers: HeaderMap,
                      uri: Uri| async move {
                    let Ok(Path(id)) = id else {
                        return Error::invalid(format!("the {name} id is not UTF-8 text"))
                            .response();
                    };
                    match read(&state, v, kind, &id) {
                        Some(resource) if page.is_some() => {
                            let path = format!("{}/{name}/{}", v.path(), txmap_pages::encode(&id));
                            let client = conn.map(|c| c.remote.ip());
                            crate::pages::resource(&state, resource, &path, &uri, &headers, client)
                                .await
                        }
                        Some(resource) => {
                            let mut r = fhir_json(StatusCode::OK, &resource);
                            if let Some(tag) = crate::outcome::etag_of(&resource) {
                                r.headers_mut().insert(axum::http::header::ETAG, tag);
                            }
                            r
                        }
                        None if page.is_some() => crate::pages::not_found(
                            &state,
                            &format!("{name}/{id} is not known"),
                        ),
                        None => match deleted(&state, kind, &id).await {
                            Some(version) => crate::outcome::response(
                                StatusCode::GONE,
                                "deleted",
                                &format!("{name}/{id} was deleted (version {version})"),
                            ),
                            None => Error::not_found(format!("{name}/{id} is not known"))
                                .response(),
                        },
                    }
                },
            )
            .fallback(method_not_allowed),
        )
    })
}

/// The version a stored resource's deletion made, if `id` is one.
async fn deleted(state: &AppState, kind: Kind, id: &str) -> Option<u64> {
    let store = state.stored.clone()?;
    let id = id.to_owned();
    tokio::task::spawn_blocking(move || store.deleted(kind, &id))
        .await
        .ok()?
        .ok()
        .flatten()
}

// ----- the editions as CodeSystems -------------------------------------------

// ----- what a search matches ------------------------------------------------

/// One resource a search can find: an edition or a package resource.
#[derive(Clone, Copy)]
enum Hit<'a> {
    Edition(&'a SnomedCt<EditionBytes>),
    Package(Listed<'a>),
}

impl Hit<'_> {
    fn field(&self, name: &str) -> Option<String> {
        match self {
            Hit::Edition(e) => match name {
                "_id" => Some(e.resource_id()),
                "url" => Some(SNOMED_CT.into()),
                "version" => Some(e.version_uri().to_owned()),
                "name" => Some("SNOMED_CT".into()),
                "title" => Some(format!("SNOMED CT {}", e.edition_name())),
                "status" => Some("active".into()),
                _ => None,
            },
            Hit::Package(l) => match name {
                "_id" => l.id().map(str::to_owned),
                "url" => Some(l.entry.url.clone()),
                "version" => l.version.map(str::to_owned),
                "name" => l.entry.name.clone(),
                "title" => l.entry.title.clone(),
                "status" => l.entry.status.clone(),
                _ => None,
            },
        }
    }

    /// The resource as the query shapes it. A package resource shown in
    /// part is read from its JSON text member by member, parsing only the
    /// members kept (a big CodeSystem's concepts are never parsed for a
    /// summary).
    fn shaped(&self, kind: Kind, q: &Query) -> Option<Value> {
        match self {
            Hit::Edition(e) => Some(shaped(kind, e.resource_json(), q)),
            Hit::Package(l) if trimmed(q) => {
                let raw: std::collections::BTreeMap<String, &RawValue> =
                    serde_json::from_slice(l.json()).ok()?;
                let mut o = Map::new();
                for (k, v) in raw {
                    if kept(kind, q, &k) {
                        o.insert(k, serde_json::from_str(v.get()).ok()?);
                    }
                }
                if let (Some(v), true) = (l.version, o.contains_key("version")) {
                    o.insert("version".into(), json!(v));
                }
                if let Some(id) = l.id() {
                    o.insert("id".into(), json!(id));
                }
                subsetted(&mut o);
                Some(Value::Object(o))
            }
            Hit::Package(l) => Some(shaped(kind, l.resource()?, q)),
        }
    }
}

/// One search condition: a parameter, its modifier, and the values any
/// of which may match.
#[derive(Debug)]
struct Condition {
    name: String,
    modifier: Option<String>,
    values: Vec<String>,
}

impl Condition {
    fn matches(&self, hit: &Hit) -> bool {
        let Some(have) = hit.field(&self.name) else {
            return false;
        };
        let string = matches!(self.name.as_str(), "name" | "title");
        self.values.iter().any(|want| {
            if !string {
                return have == *want;
            }
            match self.modifier.as_deref() {
                Some("exact") => have == *want,
                Some("contains") => fold(&have).contains(&fold(want)),
                _ => fold(&have).starts_with(&fold(want)),
            }
        })
    }
}

/// `_summary`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Summary {
    False,
    True,
    Text,
    Data,
    Count,
}

/// What a search asks for.
#[derive(Debug)]
struct Query {
    conditions: Vec<Condition>,
    summary: Summary,
    elements: Option<Vec<String>>,
    count: usize,
    offset: usize,
    total: bool,
    /// The parameters as given, for the paging links.
    pairs: Vec<(String, String)>,
}

const SEARCHED: [&str; 6] = ["_id", "url", "version", "name", "title", "status"];

fn parse_query(pairs: Vec<(String, String)>) -> Result<Query, Error> {
    let mut q = Query {
        conditions: Vec::new(),
        summary: Summary::False,
        elements: None,
        count: DEFAULT_COUNT,
        offset: 0,
        total: true,
        pairs: Vec::new(),
    };
    let number = |k: &str, v: &str| {
        v.trim()
            .parse::<usize>()
            .map_err(|_| Error::invalid(format!("{k}={v:?} is not a non-negative integer")))
    };
    for (k, v) in &pairs {
        let (name, modifier) = match k.split_once(':') {
            Some((n, m)) => (n, Some(m.to_owned())),
            None => (k.as_str(), None),
        };
        match name {
            "_count" => q.count = number(k, v)?.min(MAX_COUNT),
            "_offset" => q.offset = number(k, v)?,
            "_total" => q.total = v != "none",
            "_summary" => {
                q.summary = match v.as_str() {
                    "true" => Summary::True,
                    "text" => Summary::Text,
                    "data" => Summary::Data,
                    "count" => Summary::Count,
                    "false" => Summary::False,
                    other => {
                        return Err(Error::invalid(format!(
                            "_summary={other:?} is not one of true, text, data, count, false"
                        )));
                    }
                }
            }
            "_elements" => {
                q.elements = Some(
                    v.split(',')
                        .map(|e| e.trim().to_owned())
                        .filter(|e| !e.is_empty())
                        .collect(),
                )
            }
            n if SEARCHED.contains(&n) => {
                if let Some(m) = &modifier
                    && !(matches!(n, "name" | "title")
                        && matches!(m.as_str(), "exact" | "contains"))
                {
                    return Err(Error::invalid(format!(
                        "the modifier :{m} is not supported on {n}"
                    )));
                }
                q.conditions.push(Condition {
                    name: n.to_owned(),
                    modifier,
                    values: v.split(',').map(str::to_owned).collect(),
                });
            }
            // `_format` was negotiated already; others are ignored.
            _ => continue,
        }
        if name != "_offset" {
            q.pairs.push((k.clone(), v.clone()));
        }
    }
    Ok(q)
}

/// The resources of `kind` the endpoint holds, narrowed by a `url`
/// condition through the packages' URL index when there is one.
fn candidates<'a>(state: &'a AppState, v: FhirVersion, kind: Kind, q: &Query) -> Vec<Hit<'a>> {
    let mut out: Vec<Hit<'a>> = Vec::new();
    if kind == Kind::CodeSystem {
        out.extend(state.packages.editions().iter().map(Hit::Edition));
    }
    for packages in state.packages.views(v) {
        match q.conditions.iter().find(|c| c.name == "url") {
            Some(c) => {
                for url in &c.values {
                    out.extend(packages.listed_by_url(kind, url).map(Hit::Package));
                }
            }
            None => out.extend(packages.listed(kind).map(Hit::Package)),
        }
    }
    out.retain(|h| q.conditions.iter().all(|c| c.matches(h)));
    out
}

/// The `meta.tag` of a resource shown in part.
fn subsetted(o: &mut Map<String, Value>) {
    let tag = json!({
        "system": "http://terminology.hl7.org/CodeSystem/v3-ObservationValue",
        "code": "SUBSETTED",
        "display": "Resource encoded in summary mode",
    });
    let meta = o.entry("meta").or_insert_with(|| json!({}));
    if let Some(m) = meta.as_object_mut() {
        let tags = m.entry("tag").or_insert_with(|| json!([]));
        if let Some(t) = tags.as_array_mut() {
            t.push(tag);
        }
    }
}

/// Whether `_summary=true` keeps an element of a resource of `kind`:
/// the ones FHIR marks as in the summary, besides `resourceType`, `id`
/// and `meta`.
fn in_summary(kind: Kind, element: &str) -> bool {
    const COMMON: [&str; 12] = [
        "url",
        "identifier",
        "version",
        "name",
        "title",
        "status",
        "experimental",
        "date",
        "publisher",
        "contact",
        "useContext",
        "jurisdiction",
    ];
    let own: &[&str] = match kind {
        Kind::CodeSystem => &[
            "caseSensitive",
            "valueSet",
            "hierarchyMeaning",
            "compositional",
            "versionNeeded",
            "content",
            "supplements",
            "count",
        ],
        Kind::ValueSet => &["immutable"],
        Kind::ConceptMap => &[
            "sourceUri",
            "sourceCanonical",
            "targetUri",
            "targetCanonical",
            "sourceScopeUri",
            "sourceScopeCanonical",
            "targetScopeUri",
            "targetScopeCanonical",
        ],
    };
    COMMON.contains(&element) || own.contains(&element)
}

/// Whether the query shows resources in part.
fn trimmed(q: &Query) -> bool {
    q.elements.is_some() || matches!(q.summary, Summary::True | Summary::Text)
}

/// Whether a resource shown in part keeps member `k`.
fn kept(kind: Kind, q: &Query, k: &str) -> bool {
    matches!(k, "resourceType" | "id" | "meta")
        || match (&q.elements, q.summary) {
            (Some(list), _) => list.iter().any(|e| e == k),
            (None, Summary::True) => in_summary(kind, k),
            // The narrative is not kept; what is left is the mandatory
            // part.
            _ => matches!(k, "status" | "content"),
        }
}

/// The resource as `_summary` and `_elements` ask.
fn shaped(kind: Kind, resource: Value, q: &Query) -> Value {
    let Value::Object(mut o) = resource else {
        return resource;
    };
    if trimmed(q) {
        o.retain(|k, _| kept(kind, q, k));
        subsetted(&mut o);
    }
    Value::Object(o)
}

/// A search's searchset Bundle, written as JSON text entry by entry: a
/// page of a thousand resources (8 MB) is never held as one JSON tree
/// (seven such searches at once drove the memory guard to refuse cheap
/// lookups).
fn search(
    state: &AppState,
    v: FhirVersion,
    kind: Kind,
    base: &str,
    uri: &Uri,
) -> Result<String, Error> {
    let q = parse_query(format::query_pairs(uri).map_err(Error::invalid)?)?;
    let hits = candidates(state, v, kind, &q);
    let total = hits.len();
    let name = kind.name();
    let mut out = String::from(r#"{"resourceType":"Bundle","type":"searchset""#);
    if q.total || q.summary == Summary::Count {
        out.push_str(&format!(r#","total":{total}"#));
    }
    if q.summary != Summary::Count {
        let link = |offset: usize| {
            let mut query: Vec<String> = q
                .pairs
                .iter()
                .map(|(k, v)| format!("{}={}", txmap_pages::encode(k), txmap_pages::encode(v)))
                .collect();
            if offset > 0 {
                query.push(format!("_offset={offset}"));
            }
            if !q.pairs.iter().any(|(k, _)| k == "_count") {
                query.push(format!("_count={}", q.count));
            }
            format!("{base}/{name}?{}", query.join("&"))
        };
        let page = q.count.max(1);
        let last = if total == 0 {
            0
        } else {
            (total - 1) / page * page
        };
        let mut links = vec![
            json!({"relation": "self", "url": link(q.offset)}),
            json!({"relation": "first", "url": link(0)}),
        ];
        // Offsets past the end are answered (an empty page) and never
        // wrap: `previous` goes back to the last page, `next` never
        // points past the end.
        if q.offset > 0 {
            links.push(
                json!({"relation": "previous", "url": link(q.offset.min(last + page).saturating_sub(page))}),
            );
        }
        if q.count > 0 && q.offset.saturating_add(q.count) < total {
            links.push(json!({"relation": "next", "url": link(q.offset + q.count)}));
        }
        links.push(json!({"relation": "last", "url": link(last)}));
        out.push_str(r#","link":"#);
        out.push_str(&Value::Array(links).to_string());
        out.push_str(r#","entry":["#);
        let mut first = true;
        for h in hits.iter().skip(q.offset).take(q.count) {
            let Some(resource) = h.shaped(kind, &q) else {
                continue;
            };
            let id = resource
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(r#"{"fullUrl":"#);
            out.push_str(&Value::String(format!("{base}/{name}/{id}")).to_string());
            out.push_str(r#","resource":"#);
            out.push_str(&to_fhir_json(&resource));
            out.push_str(r#","search":{"mode":"match"}}"#);
        }
        out.push(']');
    }
    out.push('}');
    Ok(out)
}

/// The resources of `kind` a search (`uri`'s query) finds, whole: what
/// a conditional create (`If-None-Exist`) asks.
pub fn matching(
    state: &AppState,
    v: FhirVersion,
    kind: Kind,
    uri: &Uri,
) -> Result<Vec<Value>, Error> {
    let q = parse_query(format::query_pairs(uri).map_err(Error::invalid)?)?;
    Ok(candidates(state, v, kind, &q)
        .iter()
        .filter_map(|h| h.shaped(kind, &q))
        .collect())
}

fn read(state: &AppState, v: FhirVersion, kind: Kind, id: &str) -> Option<Value> {
    if kind == Kind::CodeSystem
        && let Some(e) = state
            .packages
            .editions()
            .iter()
            .find(|e| e.resource_id() == id)
    {
        return Some(e.resource_json());
    }
    state
        .packages
        .views(v)
        .find_map(|p| p.listed(kind).find(|l| l.id() == Some(id)))?
        .resource()
}

/// Every code system the endpoint knows, for TerminologyCapabilities:
/// each SNOMED CT edition version and each package CodeSystem that is not
/// a supplement, by URL, versions sorted, the default (or latest) marked.
pub fn code_systems(state: &AppState, v: FhirVersion) -> Vec<super::metadata::CodeSystemEntry> {
    let mut out = vec![super::metadata::CodeSystemEntry {
        uri: SNOMED_CT.to_owned(),
        versions: txmap_snomed::editions::versions(state.packages.editions())
            .into_iter()
            .map(|(code, is_default)| super::metadata::CodeSystemVersion { code, is_default })
            .collect(),
        subsumption: true,
    }];
    out.retain(|e| !e.versions.is_empty());
    let mut by_url: std::collections::BTreeMap<&str, Vec<Option<&str>>> = Default::default();
    for l in state
        .packages
        .views(v)
        .flat_map(|p| p.listed(Kind::CodeSystem))
    {
        if l.entry.content.as_deref() != Some("supplement") {
            by_url.entry(&l.entry.url).or_default().push(l.version);
        }
    }
    for (url, mut versions) in by_url {
        versions.sort_by(|a, b| txmap_terminology::resolver::version_cmp(*a, *b));
        versions.dedup();
        let latest = versions.last().copied().flatten();
        out.push(super::metadata::CodeSystemEntry {
            uri: url.to_owned(),
            versions: versions
                .into_iter()
                .flatten()
                .map(|code| super::metadata::CodeSystemVersion {
                    code: code.to_owned(),
                    is_default: Some(code) == latest,
                })
                .collect(),
            subsumption: false,
        });
    }
    out
}
