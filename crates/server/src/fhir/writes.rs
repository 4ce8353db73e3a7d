//! FHIR create, update and delete of CodeSystem, ValueSet and ConceptMap,
//! and their history (`vread`, `_history`), over the stored resources
//! (`txmap-stored`, `[store] path`).
//!
//! - `POST [base]/{type}` creates under an id the server chooses: 201 with
//!   `Location` (`…/{type}/{id}/_history/1`), `ETag: W/"1"` and the
//!   resource as stored. `If-None-Exist: url=…&version=…` (any search the
//!   type's search takes) makes it conditional: one match is answered 200
//!   with it and nothing stored, several are 412.
//! - `PUT [base]/{type}/{id}` makes or replaces `id` (201 or 200);
//!   `If-Match: W/"n"` must name the current version (412 otherwise).
//! - `DELETE [base]/{type}/{id}` deletes (204; again: 204, nothing
//!   changes); a read of it is then 410.
//! - `GET [base]/{type}/{id}/_history` and `…/_history/{n}` read its
//!   versions.
//!
//! A write needs a token with the write scope ([`crate::auth`]). Its
//! `url|version` may not be what a package, an edition or a compiled
//! code system serves, nor an id a package's resource is served by (409
//! naming the source): stored content adds to what is served, it never
//! shadows it. A write and a reload take the same lock, and the write,
//! committed, publishes the next served set ([`Live::swap`]) before it is
//! answered, so a client that reads after its 201 finds what it wrote, in
//! every operation.

use std::sync::Arc;

use axum::Extension;
use axum::extract::rejection::PathRejection;
use axum::extract::{Path, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use axum::routing::{MethodRouter, delete, get, post, put};
use serde_json::{Value, json};
use txmap_packages::Kind;
use txmap_stored::{Error as StoreError, Store, Written};

use crate::auth::Scope;
use crate::outcome::{self, etag, etag_of, fhir_json, fhir_json_text};
use crate::state::{AppState, Live};
use crate::version::FhirVersion;

/// The write and history routes of the three resource types, beside
/// their read and search ([`super::resources`]).
pub fn routes(v: FhirVersion) -> axum::Router<Arc<AppState>> {
    Kind::ALL.into_iter().fold(axum::Router::new(), |r, kind| {
        let name = kind.name();
        r.route(&format!("/{name}"), on_type(v, kind))
            .route(&format!("/{name}/{{id}}"), on_instance(v, kind))
            .merge(history_routes(v, kind))
    })
}

/// `POST [base]/{type}`.
fn on_type(v: FhirVersion, kind: Kind) -> MethodRouter<Arc<AppState>> {
    post(
        move |State(state): State<Arc<AppState>>,
              live: Option<Extension<Arc<Live>>>,
              request: Request| async move {
            let (parts, body) = request.into_parts();
            let base = state.public.fhir_base(v, &parts.headers, &parts.extensions);
            let write = match Write::begin(&state, live, &parts.headers, body).await {
                Ok(w) => w,
                Err(r) => return r,
            };
            write.create(v, kind, &base, &parts.headers).await
        },
    )
}

/// `PUT` and `DELETE [base]/{type}/{id}`.
fn on_instance(v: FhirVersion, kind: Kind) -> MethodRouter<Arc<AppState>> {
    put(
        move |State(state): State<Arc<AppState>>,
              live: Option<Extension<Arc<Live>>>,
              id: Result<Path<String>, PathRejection>,
              request: Request| async move {
            let Ok(Path(id)) = id else {
                return not_text();
            };
            let (parts, body) = request.into_parts();
            let base = state.public.fhir_base(v, &parts.headers, &parts.extensions);
            let write = match Write::begin(&state, live, &parts.headers, body).await {
                Ok(w) => w,
                Err(r) => return r,
            };
            write.update(kind, &id, &base, &parts.headers).await
        },
    )
    .merge(delete(
        move |State(state): State<Arc<AppState>>,
              live: Option<Extension<Arc<Live>>>,
              id: Result<Path<String>, PathRejection>,
              headers: HeaderMap| async move {
            let Ok(Path(id)) = id else {
                return not_text();
            };
            let write = match Write::begin(&state, live, &headers, axum::body::Body::empty()).await
            {
                Ok(w) => w,
                Err(r) => return r,
            };
            write.delete(kind, &id, &headers).await
        },
    ))
}

/// `GET [base]/{type}/{id}/_history` and `…/_history/{n}`.
fn history_routes(v: FhirVersion, kind: Kind) -> axum::Router<Arc<AppState>> {
    let name = kind.name();
    axum::Router::new()
        .route(
            &format!("/{name}/{{id}}/_history"),
            get(
                move |State(state): State<Arc<AppState>>,
                      id: Result<Path<String>, PathRejection>,
                      request: Request| async move {
                    let Ok(Path(id)) = id else {
                        return not_text();
                    };
                    let base = state
                        .public
                        .fhir_base(v, request.headers(), request.extensions());
                    history(&state, kind, &id, &base).await
                },
            )
            .fallback(outcome::method_not_allowed),
        )
        .route(
            &format!("/{name}/{{id}}/_history/{{version}}"),
            get(
                move |State(state): State<Arc<AppState>>,
                      path: Result<Path<(String, String)>, PathRejection>| async move {
                    let Ok(Path((id, version))) = path else {
                        return not_text();
                    };
                    vread(&state, kind, &id, &version).await
                },
            )
            .fallback(outcome::method_not_allowed),
        )
}

/// A path whose id is not UTF-8 text: 400.
fn not_text() -> Response {
    outcome::response(
        StatusCode::BAD_REQUEST,
        "invalid",
        "the id in the path is not UTF-8 text",
    )
}

/// A write let through: the store, the served set's handle, and the body.
struct Write {
    store: Arc<Store>,
    live: Arc<Live>,
    body: Option<Value>,
    /// Memory set aside for a large body until the write is answered.
    _reserved: Option<txmap_memory::Reservation>,
}

impl Write {
    /// Checks what every write needs — a store, a token with the write
    /// scope, the served set's handle — and reads the body as JSON (an
    /// empty body is none).
    async fn begin(
        state: &AppState,
        live: Option<Extension<Arc<Live>>>,
        headers: &HeaderMap,
        body: axum::body::Body,
    ) -> Result<Write, Response> {
        let Some(store) = state.stored.clone() else {
            return Err(outcome::response(
                StatusCode::METHOD_NOT_ALLOWED,
                "not-supported",
                "this server stores no resources ([store] path is not set): it serves its packages and code system files only",
            ));
        };
        state
            .auth
            .check(headers, Scope::Write)
            .map_err(|d| d.response())?;
        let Some(Extension(live)) = live else {
            return Err(outcome::response(
                StatusCode::SERVICE_UNAVAILABLE,
                "transient",
                "writes are taken on the server's listener only",
            ));
        };
        let bytes = crate::http::read_body(headers, body, &state.limits)
            .await
            .map_err(|e| super::body_refused(&e))?;
        // What parsing a large body takes, judged by the memory guard
        // before it starts (as an operation's body is).
        let reserved =
            crate::state::reserve_for_body(state, bytes.len()).map_err(|no| no.response())?;
        if bytes.is_empty() {
            return Ok(Write {
                store,
                live,
                body: None,
                _reserved: reserved,
            });
        }
        if let Some(ct) = headers
            .get(header::CONTENT_TYPE)
            .and_then(|h| h.to_str().ok())
            && !ct.to_ascii_lowercase().contains("json")
        {
            return Err(outcome::response(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "not-supported",
                &format!("a resource is written as application/fhir+json, not {ct}"),
            ));
        }
        let body = serde_json::from_slice(&bytes).map_err(|e| {
            outcome::response(
                StatusCode::BAD_REQUEST,
                "structure",
                &format!("the body is not JSON: {e}"),
            )
        })?;
        Ok(Write {
            store,
            live,
            body: Some(body),
            _reserved: reserved,
        })
    }

    fn body(&self) -> Result<Value, Refused> {
        self.body.clone().ok_or_else(|| Refused {
            status: StatusCode::BAD_REQUEST,
            code: "required",
            text: "the body is empty: send the resource as application/fhir+json".into(),
        })
    }

    async fn create(self, v: FhirVersion, kind: Kind, base: &str, headers: &HeaderMap) -> Response {
        let body = match self.body() {
            Ok(b) => b,
            Err(r) => return r.response(),
        };
        let _one = self.live.reloading.lock().await;
        let current = self.live.current();
        if let Some(condition) = headers
            .get("if-none-exist")
            .map(|h| h.to_str().unwrap_or_default().to_owned())
        {
            let uri: axum::http::Uri =
                match format!("/?{}", condition.trim_start_matches('?')).parse() {
                    Ok(u) => u,
                    Err(_) => {
                        return outcome::response(
                            StatusCode::BAD_REQUEST,
                            "invalid",
                            &format!("If-None-Exist {condition:?} is not a search"),
                        );
                    }
                };
            match super::resources::matching(&current, v, kind, &uri) {
                Err(e) => return super::params::Respond::response(&e),
                Ok(found) if found.len() > 1 => {
                    return outcome::response(
                        StatusCode::PRECONDITION_FAILED,
                        "duplicate",
                        &format!(
                            "If-None-Exist {condition:?} matches {} resources",
                            found.len()
                        ),
                    );
                }
                Ok(mut found) if found.len() == 1 => {
                    let existing = found.remove(0);
                    let mut r = fhir_json(StatusCode::OK, &existing);
                    if let Some(tag) = etag_of(&existing) {
                        r.headers_mut().insert(header::ETAG, tag);
                    }
                    return r;
                }
                Ok(_) => {}
            }
        }
        if let Err(r) = not_elsewhere(&current, kind, &body, None) {
            return r.response();
        }
        let store = Arc::clone(&self.store);
        let written = blocking(move || store.create(kind, body)).await;
        self.finish(written, base).await
    }

    async fn update(self, kind: Kind, id: &str, base: &str, headers: &HeaderMap) -> Response {
        if let Err(e) = txmap_stored::check_id(id) {
            return stored_error(&e);
        }
        let body = match self.body() {
            Ok(b) => b,
            Err(r) => return r.response(),
        };
        let if_match = match if_match(headers) {
            Ok(m) => m,
            Err(r) => return r.response(),
        };
        let _one = self.live.reloading.lock().await;
        let current = self.live.current();
        if let Err(r) = not_elsewhere(&current, kind, &body, Some(id)) {
            return r.response();
        }
        let (store, id) = (Arc::clone(&self.store), id.to_owned());
        let written = blocking(move || store.update(kind, &id, body, if_match)).await;
        self.finish(written, base).await
    }

    async fn delete(self, kind: Kind, id: &str, headers: &HeaderMap) -> Response {
        let if_match = match if_match(headers) {
            Ok(m) => m,
            Err(r) => return r.response(),
        };
        let _one = self.live.reloading.lock().await;
        let current = self.live.current();
        if let Some(owner) = current.packages.id_owner(kind, id) {
            return outcome::response(
                StatusCode::CONFLICT,
                "conflict",
                &format!(
                    "{}/{id} is served from {owner}; only stored resources can be deleted",
                    kind.name()
                ),
            );
        }
        let (store, owned) = (Arc::clone(&self.store), id.to_owned());
        match blocking(move || store.delete(kind, &owned, if_match)).await {
            Err(e) => stored_error(&e),
            Ok(None) => no_content(None),
            Ok(Some(version)) => {
                if let Err(why) = publish(&self.live, &self.store).await {
                    tracing::error!(
                        "{}/{id} deleted, the served set not renewed: {why}",
                        kind.name()
                    );
                }
                tracing::info!("{}/{id} deleted (version {version})", kind.name());
                no_content(Some(version))
            }
        }
    }

    /// Publishes what a write stored and answers it.
    async fn finish(&self, written: Result<Written, StoreError>, base: &str) -> Response {
        let written = match written {
            Ok(w) => w,
            Err(e) => return stored_error(&e),
        };
        if let Err(why) = publish(&self.live, &self.store).await {
            // Stored and answered: the next write or reload serves it.
            tracing::error!(
                "{}/{} stored, the served set not renewed: {why}",
                written.kind.name(),
                written.id
            );
        }
        tracing::info!(
            "{}/{} {} (version {})",
            written.kind.name(),
            written.id,
            if written.created {
                "created"
            } else {
                "updated"
            },
            written.version_id
        );
        let status = if written.created {
            StatusCode::CREATED
        } else {
            StatusCode::OK
        };
        let location = format!(
            "{base}/{}/{}/_history/{}",
            written.kind.name(),
            written.id,
            written.version_id
        );
        let mut r = fhir_json_text(status, written.json);
        let h = r.headers_mut();
        h.insert(header::ETAG, etag(written.version_id));
        if let Ok(l) = HeaderValue::from_str(&location) {
            h.insert(header::LOCATION, l.clone());
            h.insert(header::CONTENT_LOCATION, l);
        }
        r
    }
}

/// Serves what `store` holds now, with the served set's files: the next
/// set, swapped in. The caller holds the reload lock.
async fn publish(live: &Live, store: &Arc<Store>) -> Result<(), String> {
    let current = live.current();
    let store = Arc::clone(store);
    let next = tokio::task::spawn_blocking(move || {
        store.package().map(|p| Arc::new(current.with_stored(p)))
    })
    .await
    .map_err(|e| e.to_string())?
    .map_err(|e| e.to_string())?;
    let router = live.router_for(Arc::clone(&next));
    live.swap(next, router);
    Ok(())
}

/// Runs a store call on the blocking pool.
async fn blocking<T: Send + 'static>(
    call: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(call).await.unwrap_or_else(|e| {
        Err(StoreError::Unprocessable(format!(
            "the store call did not finish: {e}"
        )))
    })
}

/// A write refused before the store is asked.
struct Refused {
    status: StatusCode,
    code: &'static str,
    text: String,
}

impl Refused {
    fn response(&self) -> Response {
        outcome::response(self.status, self.code, &self.text)
    }
}

/// 409 when what `body` is — its `url` and `version`, or (for `id`) its
/// id — is served from a package, an edition or a code system file.
fn not_elsewhere(
    state: &AppState,
    kind: Kind,
    body: &Value,
    id: Option<&str>,
) -> Result<(), Refused> {
    let name = kind.name();
    if let Some(id) = id
        && let Some(owner) = state.packages.id_owner(kind, id)
    {
        return Err(Refused {
            status: StatusCode::CONFLICT,
            code: "conflict",
            text: format!(
                "{name}/{id} is served from {owner}; a stored resource cannot replace it"
            ),
        });
    }
    let Some(url) = body.get("url").and_then(Value::as_str) else {
        return Ok(());
    };
    let version = body.get("version").and_then(Value::as_str);
    if let Some(source) = state.packages.other_source(kind, url, version) {
        let shown = match version {
            Some(v) => format!("{url}|{v}"),
            None => url.to_owned(),
        };
        return Err(Refused {
            status: StatusCode::CONFLICT,
            code: "duplicate",
            text: format!(
                "{name} {shown} is served from {source}; a stored resource cannot replace it"
            ),
        });
    }
    Ok(())
}

/// The version `If-Match` names (`W/"3"` or `"3"`), if it is there.
fn if_match(headers: &HeaderMap) -> Result<Option<u64>, Refused> {
    let Some(h) = headers.get(header::IF_MATCH) else {
        return Ok(None);
    };
    let text = h.to_str().unwrap_or_default().trim();
    let inner = text.strip_prefix("W/").unwrap_or(text);
    inner
        .trim_matches('"')
        .parse::<u64>()
        .map(Some)
        .map_err(|_| Refused {
            status: StatusCode::BAD_REQUEST,
            code: "invalid",
            text: format!("If-Match {text:?} is not a version tag like W/\"3\""),
        })
}

fn no_content(version: Option<u64>) -> Response {
    let mut r = Response::new(axum::body::Body::empty());
    *r.status_mut() = StatusCode::NO_CONTENT;
    if let Some(v) = version {
        r.headers_mut().insert(header::ETAG, etag(v));
    }
    r
}

/// A store's refusal as its status and OperationOutcome.
fn stored_error(e: &StoreError) -> Response {
    let (status, code) = match e {
        StoreError::Database { .. } | StoreError::Folder { .. } | StoreError::Schema { .. } => {
            tracing::error!("{e}");
            (StatusCode::INTERNAL_SERVER_ERROR, "exception")
        }
        StoreError::Unparsable(_) => (StatusCode::BAD_REQUEST, "structure"),
        StoreError::Unprocessable(_) => (StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        StoreError::NotFound => (StatusCode::NOT_FOUND, "not-found"),
        StoreError::Gone { .. } => (StatusCode::GONE, "deleted"),
        StoreError::Precondition { .. } => (StatusCode::PRECONDITION_FAILED, "conflict"),
        StoreError::Collision { .. } => (StatusCode::CONFLICT, "duplicate"),
    };
    outcome::response(status, code, &e.to_string())
}

async fn history(state: &AppState, kind: Kind, id: &str, base: &str) -> Response {
    let name = kind.name();
    let Some(store) = state.stored.clone() else {
        return outcome::response(
            StatusCode::NOT_FOUND,
            "not-found",
            &format!("{name}/{id} has no history here: this server stores no resources"),
        );
    };
    let owned = id.to_owned();
    let versions = match blocking(move || store.history(kind, &owned)).await {
        Ok(v) => v,
        Err(StoreError::NotFound) => {
            return outcome::response(
                StatusCode::NOT_FOUND,
                "not-found",
                &format!("{name}/{id} is not a stored resource: it has no history"),
            );
        }
        Err(e) => return stored_error(&e),
    };
    let entries: Vec<Value> = versions
        .iter()
        .map(|ver| {
            let (status, url) = match ver.method.as_str() {
                "POST" => ("201 Created", name.to_owned()),
                "DELETE" => ("204 No Content", format!("{name}/{id}")),
                _ if ver.version_id == 1 => ("201 Created", format!("{name}/{id}")),
                _ => ("200 OK", format!("{name}/{id}")),
            };
            let mut entry = json!({
                "fullUrl": format!("{base}/{name}/{id}"),
                "request": {"method": ver.method, "url": url},
                "response": {
                    "status": status,
                    "etag": format!("W/\"{}\"", ver.version_id),
                    "lastModified": ver.last_updated,
                },
            });
            if let Some(resource) = ver
                .json
                .as_deref()
                .and_then(|j| serde_json::from_str::<Value>(j).ok())
            {
                entry["resource"] = resource;
            }
            entry
        })
        .collect();
    fhir_json(
        StatusCode::OK,
        &json!({
            "resourceType": "Bundle",
            "type": "history",
            "total": entries.len(),
            "link": [{"relation": "self", "url": format!("{base}/{name}/{id}/_history")}],
            "entry": entries,
        }),
    )
}

async fn vread(state: &AppState, kind: Kind, id: &str, version: &str) -> Response {
    let name = kind.name();
    let not_found = || {
        outcome::response(
            StatusCode::NOT_FOUND,
            "not-found",
            &format!("{name}/{id} has no version {version:?}"),
        )
    };
    let (Some(store), Ok(n)) = (state.stored.clone(), version.parse::<u64>()) else {
        return not_found();
    };
    let owned = id.to_owned();
    match blocking(move || store.version(kind, &owned, n)).await {
        Ok(found) => {
            let mut r = fhir_json_text(StatusCode::OK, found.json.unwrap_or_default());
            r.headers_mut().insert(header::ETAG, etag(n));
            r
        }
        Err(StoreError::NotFound) => not_found(),
        Err(e) => stored_error(&e),
    }
}
