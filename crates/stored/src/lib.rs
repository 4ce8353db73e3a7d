//! `txmap-stored`: the CodeSystems, ValueSets and ConceptMaps written
//! through the FHIR API (`POST`, `PUT`, `DELETE`), kept in SQLite with
//! every version they had.
//!
//! Why SQLite: a write answered 201 or 200 must survive a crash, and a
//! write cut short must leave nothing. One SQLite transaction per write,
//! in WAL mode with `synchronous = FULL`, gives both — the commit is on
//! disk before the answer goes, and an interrupted transaction is rolled
//! back when the file is next opened — and the file can be backed up
//! while the server runs (`VACUUM INTO`, docs/deploy.md).
//!
//! The file holds two tables: `resource`, each resource's current
//! version (or the mark that it was deleted), and `history`, every version
//! ever written, which `vread` and `_history` read. Each written resource
//! is kept as the JSON the server serves: its `id`, `meta.versionId` and
//! `meta.lastUpdated` are the server's.
//!
//! The engine does not read this file: [`Store::package`] gives what is
//! current as a [`Package`], which the server serves beside the FHIR
//! packages, through the same index, so a stored value set takes part in
//! every operation as a package's does. What is checked here is what a
//! store can know: the resource is JSON of the route's type, has a `url`
//! and a `status`, parses as the engine's CodeSystem or ValueSet, its id
//! is a FHIR id, `If-Match` names the current version, and no other
//! stored resource of its type has its `url` and `version`. Whether it
//! collides with a package's content is the server's to say (it knows
//! the packages).
//!
//! No async: every call blocks on the database (the server calls from its
//! blocking pool); calls are serialised on one connection.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use serde_json::{Map, Value, json};
use txmap_packages::{Kind, Package};

/// The database schema's version (`PRAGMA user_version`); a file of
/// another is refused.
pub const SCHEMA_VERSION: i64 = 1;

/// The name of the [`Package`] of stored resources.
pub const PACKAGE_NAME: &str = "txmap.stored";

const SCHEMA: &str = "
CREATE TABLE resource (
    type TEXT NOT NULL,
    id TEXT NOT NULL,
    version_id INTEGER NOT NULL,
    url TEXT NOT NULL,
    version TEXT,
    deleted INTEGER NOT NULL,
    json TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (type, id)
) WITHOUT ROWID;
CREATE INDEX resource_by_url ON resource (type, url, version);
CREATE TABLE history (
    type TEXT NOT NULL,
    id TEXT NOT NULL,
    version_id INTEGER NOT NULL,
    method TEXT NOT NULL,
    json TEXT,
    updated TEXT NOT NULL,
    PRIMARY KEY (type, id, version_id)
) WITHOUT ROWID;
";

/// Why a call was refused or failed.
#[derive(Debug)]
pub enum Error {
    /// The database could not be opened, read or written.
    Database {
        path: PathBuf,
        source: rusqlite::Error,
    },
    /// The database's folder could not be made.
    Folder {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is a database of another schema version.
    Schema { path: PathBuf, found: i64 },
    /// The body is not a resource of the route's type, or its id is not
    /// the route's (HTTP 400).
    Unparsable(String),
    /// The resource breaks a rule of FHIR or of the server: no `url`, no
    /// `status`, not a valid CodeSystem or ValueSet (HTTP 422).
    Unprocessable(String),
    /// No stored resource has that type and id (or that version).
    NotFound,
    /// The version asked for is a deletion (HTTP 410).
    Gone { version_id: u64 },
    /// `If-Match` named another version than the current one (HTTP 412).
    Precondition { expected: u64, current: Option<u64> },
    /// Another stored resource has the same type, `url` and `version`
    /// (HTTP 409).
    Collision { with: String },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Database { path, source } => {
                write!(f, "stored resources ({}): {source}", path.display())
            }
            Error::Folder { path, source } => {
                write!(f, "stored resources: making {}: {source}", path.display())
            }
            Error::Schema { path, found } => write!(
                f,
                "stored resources ({}): schema version {found}, this txmap reads {SCHEMA_VERSION}",
                path.display()
            ),
            Error::Unparsable(why) | Error::Unprocessable(why) => f.write_str(why),
            Error::NotFound => f.write_str("no stored resource has that id"),
            Error::Gone { version_id } => write!(f, "version {version_id} is a deletion"),
            Error::Precondition { expected, current } => match current {
                Some(c) => write!(
                    f,
                    "If-Match names version {expected}, but the current version is {c}"
                ),
                None => write!(
                    f,
                    "If-Match names version {expected}, but there is no current version"
                ),
            },
            Error::Collision { with } => {
                write!(f, "{with} has the same url and version already")
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Database { source, .. } => Some(source),
            Error::Folder { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A write the store took.
#[derive(Clone, Debug)]
pub struct Written {
    pub kind: Kind,
    pub id: String,
    pub version_id: u64,
    /// Whether the write made the resource (201) rather than changing it
    /// (200).
    pub created: bool,
    /// `meta.lastUpdated`, as FHIR's instant.
    pub last_updated: String,
    /// The resource as stored and served.
    pub json: String,
}

/// One version of a resource, as `vread` and `_history` show it.
#[derive(Clone, Debug)]
pub struct Version {
    pub version_id: u64,
    /// The interaction that made it: `POST`, `PUT` or `DELETE`.
    pub method: String,
    pub last_updated: String,
    /// The resource; `None` for a deletion.
    pub json: Option<String>,
}

/// The database of stored resources, open.
#[derive(Debug)]
pub struct Store {
    path: PathBuf,
    conn: Mutex<Connection>,
}

impl Store {
    /// Opens the database at `path`, making it (and its folder) if there
    /// is none. A transaction a crash cut short is rolled back here.
    pub fn open(path: &Path) -> Result<Store, Error> {
        let db = |source| Error::Database {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Folder {
                path: dir.to_owned(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(db)?;
        // WAL: readers do not wait for the writer, and a commit is one
        // append; FULL: the append is synced before the commit returns.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(db)?;
        let found: i64 = conn
            .pragma_query_value(None, "user_version", |r| r.get(0))
            .map_err(db)?;
        match found {
            0 => {
                conn.execute_batch(&format!(
                    "BEGIN; {SCHEMA} PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
                ))
                .map_err(db)?;
            }
            SCHEMA_VERSION => {}
            found => {
                return Err(Error::Schema {
                    path: path.to_owned(),
                    found,
                });
            }
        }
        Ok(Store {
            path: path.to_owned(),
            conn: Mutex::new(conn),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn db(&self) -> impl Fn(rusqlite::Error) -> Error + '_ {
        |source| Error::Database {
            path: self.path.clone(),
            source,
        }
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, Connection> {
        // A panic while the lock was held left no transaction open: an
        // uncommitted one is rolled back when its handle drops.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `POST [base]/{kind}`: stores `resource` under a new id the store
    /// chooses (an id in the body is ignored, as FHIR says).
    pub fn create(&self, kind: Kind, resource: Value) -> Result<Written, Error> {
        let checked = Checked::new(kind, resource)?;
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db())?;
        let id = loop {
            let id = new_id();
            if current(&tx, kind, &id).map_err(self.db())?.is_none() {
                break id;
            }
        };
        let written = put(&tx, checked, &id, None, "POST").map_err(|e| self.lift(e))?;
        tx.commit().map_err(self.db())?;
        Ok(written)
    }

    /// `PUT [base]/{kind}/{id}`: stores `resource` as `id`'s next version
    /// (its first, if `id` is new or was deleted). `if_match` is the
    /// version `If-Match` names.
    pub fn update(
        &self,
        kind: Kind,
        id: &str,
        resource: Value,
        if_match: Option<u64>,
    ) -> Result<Written, Error> {
        check_id(id)?;
        match resource.get("id").and_then(Value::as_str) {
            Some(own) if own == id => {}
            Some(own) => {
                return Err(Error::Unparsable(format!(
                    "the resource's id {own:?} is not the id of the URL ({id:?})"
                )));
            }
            None => {
                return Err(Error::Unparsable(format!(
                    "an update needs the resource's id ({id:?}) in the body"
                )));
            }
        }
        let checked = Checked::new(kind, resource)?;
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db())?;
        let written = put(&tx, checked, id, if_match, "PUT").map_err(|e| self.lift(e))?;
        tx.commit().map_err(self.db())?;
        Ok(written)
    }

    /// `DELETE [base]/{kind}/{id}`: marks it deleted, as a new version
    /// with no content; the version it made, or `None` when it was
    /// deleted already (deleting is idempotent).
    pub fn delete(
        &self,
        kind: Kind,
        id: &str,
        if_match: Option<u64>,
    ) -> Result<Option<u64>, Error> {
        let mut conn = self.conn();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(self.db())?;
        let Some(now) = current(&tx, kind, id).map_err(self.db())? else {
            return Err(Error::NotFound);
        };
        if let Some(expected) = if_match
            && (now.deleted || now.version_id != expected)
        {
            return Err(Error::Precondition {
                expected,
                current: (!now.deleted).then_some(now.version_id),
            });
        }
        if now.deleted {
            return Ok(None);
        }
        let version_id = now.version_id + 1;
        let updated = txmap_terminology::time::instant(SystemTime::now(), true);
        tx.execute(
            "INSERT INTO history (type, id, version_id, method, json, updated) VALUES (?1, ?2, ?3, 'DELETE', NULL, ?4)",
            params![kind.name(), id, version_id, updated],
        )
        .map_err(self.db())?;
        tx.execute(
            "UPDATE resource SET version_id = ?3, deleted = 1, json = '', updated = ?4 WHERE type = ?1 AND id = ?2",
            params![kind.name(), id, version_id, updated],
        )
        .map_err(self.db())?;
        tx.commit().map_err(self.db())?;
        Ok(Some(version_id))
    }

    /// Every version of `id`, the newest first.
    pub fn history(&self, kind: Kind, id: &str) -> Result<Vec<Version>, Error> {
        let conn = self.conn();
        let mut select = conn
            .prepare_cached(
                "SELECT version_id, method, updated, json FROM history WHERE type = ?1 AND id = ?2 ORDER BY version_id DESC",
            )
            .map_err(self.db())?;
        let versions = select
            .query_map(params![kind.name(), id], |r| {
                Ok(Version {
                    version_id: r.get(0)?,
                    method: r.get(1)?,
                    last_updated: r.get(2)?,
                    json: r.get(3)?,
                })
            })
            .map_err(self.db())?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.db())?;
        if versions.is_empty() {
            return Err(Error::NotFound);
        }
        Ok(versions)
    }

    /// Version `version_id` of `id` (`vread`): [`Error::Gone`] if it is a
    /// deletion.
    pub fn version(&self, kind: Kind, id: &str, version_id: u64) -> Result<Version, Error> {
        let conn = self.conn();
        let found = conn
            .query_row(
                "SELECT method, updated, json FROM history WHERE type = ?1 AND id = ?2 AND version_id = ?3",
                params![kind.name(), id, version_id],
                |r| {
                    Ok(Version {
                        version_id,
                        method: r.get(0)?,
                        last_updated: r.get(1)?,
                        json: r.get(2)?,
                    })
                },
            )
            .optional()
            .map_err(self.db())?
            .ok_or(Error::NotFound)?;
        if found.json.is_none() {
            return Err(Error::Gone { version_id });
        }
        Ok(found)
    }

    /// The version a deleted resource's deletion made, if `id` is one.
    pub fn deleted(&self, kind: Kind, id: &str) -> Result<Option<u64>, Error> {
        let conn = self.conn();
        Ok(current(&conn, kind, id)
            .map_err(self.db())?
            .filter(|c| c.deleted)
            .map(|c| c.version_id))
    }

    /// What is stored now, as a package the server serves: every resource
    /// not deleted, in the order of type and id. Its version counts the
    /// versions ever written.
    pub fn package(&self) -> Result<Package, Error> {
        let conn = self.conn();
        let writes: i64 = conn
            .query_row("SELECT count(*) FROM history", [], |r| r.get(0))
            .map_err(self.db())?;
        let mut select = conn
            .prepare_cached("SELECT json FROM resource WHERE deleted = 0 ORDER BY type, id")
            .map_err(self.db())?;
        let texts = select
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(self.db())?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.db())?;
        Ok(Package::from_resources(
            PACKAGE_NAME,
            &writes.to_string(),
            texts.iter().map(|t| t.as_bytes()),
        ))
    }

    /// Turns a database error of a write's steps into [`Error::Database`].
    fn lift(&self, e: WriteError) -> Error {
        match e {
            WriteError::Store(e) => e,
            WriteError::Database(source) => Error::Database {
                path: self.path.clone(),
                source,
            },
        }
    }
}

/// What a write's steps inside the transaction may fail with.
enum WriteError {
    Store(Error),
    Database(rusqlite::Error),
}

impl From<rusqlite::Error> for WriteError {
    fn from(e: rusqlite::Error) -> WriteError {
        WriteError::Database(e)
    }
}

/// A resource that passed the checks that need no database.
struct Checked {
    kind: Kind,
    resource: Map<String, Value>,
    url: String,
    version: Option<String>,
}

impl Checked {
    fn new(kind: Kind, resource: Value) -> Result<Checked, Error> {
        let Value::Object(resource) = resource else {
            return Err(Error::Unparsable("the body is not a JSON object".into()));
        };
        let name = kind.name();
        match resource.get("resourceType").and_then(Value::as_str) {
            Some(t) if t == name => {}
            Some(t) => {
                return Err(Error::Unparsable(format!(
                    "the body is a {t}, and this is the {name} endpoint"
                )));
            }
            None => return Err(Error::Unparsable("the body has no resourceType".into())),
        }
        let url = match resource.get("url") {
            Some(Value::String(u)) if !u.trim().is_empty() => u.clone(),
            _ => {
                return Err(Error::Unprocessable(format!(
                    "a stored {name} needs a url: operations find it by its url"
                )));
            }
        };
        match resource.get("status").and_then(Value::as_str) {
            Some("draft" | "active" | "retired" | "unknown") => {}
            Some(other) => {
                return Err(Error::Unprocessable(format!(
                    "{name}.status {other:?} is not one of draft, active, retired, unknown"
                )));
            }
            None => {
                return Err(Error::Unprocessable(format!("{name}.status is required")));
            }
        }
        let version = match resource.get("version") {
            None | Some(Value::Null) => None,
            Some(Value::String(v)) => Some(v.clone()),
            Some(_) => {
                return Err(Error::Unprocessable(format!(
                    "{name}.version must be a string"
                )));
            }
        };
        // The engine's readers pass over what they cannot use; stored, such
        // an element would silently mean nothing in every operation.
        if let Err(why) = shape(kind, &resource) {
            return Err(Error::Unprocessable(format!("{name}.{why}")));
        }
        let value = Value::Object(resource);
        let readable = match kind {
            Kind::CodeSystem => txmap_terminology::CodeSystem::from_json(&value).is_some(),
            Kind::ValueSet => txmap_terminology::ValueSet::from_json(&value).is_some(),
            Kind::ConceptMap => true,
        };
        if !readable {
            return Err(Error::Unprocessable(format!("the {name} cannot be read")));
        }
        // (an object: made one above; never a panic if that changes)
        let Value::Object(resource) = value else {
            return Err(Error::Unparsable("the body is not a JSON object".into()));
        };
        Ok(Checked {
            kind,
            resource,
            url,
            version,
        })
    }
}

/// The elements the engine reads, checked for FHIR's shape: where one is
/// wrong, the path to it and what it should be.
fn shape(kind: Kind, r: &Map<String, Value>) -> Result<(), String> {
    fn list<'a>(v: Option<&'a Value>, path: &str) -> Result<&'a [Value], String> {
        match v {
            None => Ok(&[]),
            Some(Value::Array(a)) => Ok(a),
            Some(_) => Err(format!("{path} must be a list")),
        }
    }
    fn string(v: &Value, key: &str, path: &str, required: bool) -> Result<(), String> {
        match v.get(key) {
            Some(Value::String(s)) if !s.is_empty() => Ok(()),
            None if !required => Ok(()),
            _ => Err(format!("{path}.{key} must be a non-empty string")),
        }
    }
    fn concepts(v: Option<&Value>, path: &str, depth: usize) -> Result<(), String> {
        let items = list(v, path)?;
        if depth > 64 && !items.is_empty() {
            return Err(format!("{path} nests deeper than 64 levels"));
        }
        for (i, c) in items.iter().enumerate() {
            let at = format!("{path}[{i}]");
            if !c.is_object() {
                return Err(format!("{at} must be an object"));
            }
            string(c, "code", &at, true)?;
            string(c, "display", &at, false)?;
            concepts(c.get("concept"), &format!("{at}.concept"), depth + 1)?;
        }
        Ok(())
    }
    match kind {
        Kind::CodeSystem => {
            match r.get("content").and_then(Value::as_str) {
                Some("not-present" | "example" | "fragment" | "complete" | "supplement") => {}
                _ => {
                    return Err(
                        "content must be one of not-present, example, fragment, complete, supplement"
                            .into(),
                    );
                }
            }
            concepts(r.get("concept"), "concept", 0)
        }
        Kind::ValueSet => {
            let Some(compose) = r.get("compose") else {
                return Ok(());
            };
            if !compose.is_object() {
                return Err("compose must be an object".into());
            }
            for part in ["include", "exclude"] {
                for (i, rule) in list(compose.get(part), &format!("compose.{part}"))?
                    .iter()
                    .enumerate()
                {
                    let at = format!("compose.{part}[{i}]");
                    if !rule.is_object() {
                        return Err(format!("{at} must be an object"));
                    }
                    string(rule, "system", &at, false)?;
                    string(rule, "version", &at, false)?;
                    for (j, vs) in list(rule.get("valueSet"), &format!("{at}.valueSet"))?
                        .iter()
                        .enumerate()
                    {
                        if vs.as_str().is_none_or(str::is_empty) {
                            return Err(format!("{at}.valueSet[{j}] must be a canonical URL"));
                        }
                    }
                    if rule.get("system").is_none() && rule.get("valueSet").is_none() {
                        return Err(format!("{at} needs a system or a valueSet"));
                    }
                    concepts(rule.get("concept"), &format!("{at}.concept"), 64)?;
                    for (j, f) in list(rule.get("filter"), &format!("{at}.filter"))?
                        .iter()
                        .enumerate()
                    {
                        let fat = format!("{at}.filter[{j}]");
                        for key in ["property", "op", "value"] {
                            string(f, key, &fat, true)?;
                        }
                    }
                }
            }
            Ok(())
        }
        Kind::ConceptMap => Ok(()),
    }
}

/// A resource's row in `resource`.
struct Current {
    version_id: u64,
    deleted: bool,
}

fn current(conn: &Connection, kind: Kind, id: &str) -> rusqlite::Result<Option<Current>> {
    conn.query_row(
        "SELECT version_id, deleted FROM resource WHERE type = ?1 AND id = ?2",
        params![kind.name(), id],
        |r| {
            Ok(Current {
                version_id: r.get(0)?,
                deleted: r.get(1)?,
            })
        },
    )
    .optional()
}

/// Stores `checked` as `id`'s next version, inside the caller's
/// transaction.
fn put(
    tx: &rusqlite::Transaction<'_>,
    checked: Checked,
    id: &str,
    if_match: Option<u64>,
    method: &str,
) -> Result<Written, WriteError> {
    let Checked {
        kind,
        mut resource,
        url,
        version,
    } = checked;
    let now = current(tx, kind, id)?;
    if let Some(expected) = if_match {
        let live = now.as_ref().filter(|c| !c.deleted).map(|c| c.version_id);
        if live != Some(expected) {
            return Err(WriteError::Store(Error::Precondition {
                expected,
                current: live,
            }));
        }
    }
    let other: Option<String> = tx
        .query_row(
            "SELECT id FROM resource WHERE type = ?1 AND url = ?2 AND version IS ?3 AND deleted = 0 AND id <> ?4",
            params![kind.name(), url, version, id],
            |r| r.get(0),
        )
        .optional()?;
    if let Some(other) = other {
        return Err(WriteError::Store(Error::Collision {
            with: format!("stored {}/{other}", kind.name()),
        }));
    }
    let version_id = now.as_ref().map_or(1, |c| c.version_id + 1);
    let created = now.as_ref().is_none_or(|c| c.deleted);
    let last_updated = txmap_terminology::time::instant(SystemTime::now(), true);
    resource.insert("id".into(), json!(id));
    let meta = resource.entry("meta").or_insert_with(|| json!({}));
    if !meta.is_object() {
        *meta = json!({});
    }
    if let Some(m) = meta.as_object_mut() {
        m.insert("versionId".into(), json!(version_id.to_string()));
        m.insert("lastUpdated".into(), json!(last_updated));
    }
    let json = Value::Object(resource).to_string();
    tx.execute(
        "INSERT INTO history (type, id, version_id, method, json, updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![kind.name(), id, version_id, method, json, last_updated],
    )?;
    tx.execute(
        "INSERT OR REPLACE INTO resource (type, id, version_id, url, version, deleted, json, updated) VALUES (?1, ?2, ?3, ?4, ?5, 0, ?6, ?7)",
        params![kind.name(), id, version_id, url, version, json, last_updated],
    )?;
    Ok(Written {
        kind,
        id: id.to_owned(),
        version_id,
        created,
        last_updated,
        json,
    })
}

/// A FHIR id: 1 to 64 of `A-Z a-z 0-9 - .`.
pub fn check_id(id: &str) -> Result<(), Error> {
    let ok = (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.');
    if ok {
        Ok(())
    } else {
        Err(Error::Unparsable(format!(
            "{id:?} is not a FHIR id (1 to 64 letters, digits, '-' and '.')"
        )))
    }
}

/// A new resource id: 16 hex digits from the clock, the process and a
/// counter (the caller checks it is free).
fn new_id() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut seed = [0u8; 28];
    seed[..16].copy_from_slice(&nanos.to_le_bytes());
    seed[16..20].copy_from_slice(&std::process::id().to_le_bytes());
    seed[20..].copy_from_slice(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&seed))
}

#[cfg(test)]
mod tests;
