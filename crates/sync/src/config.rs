//! The sync config (TOML): which feeds, what to take from them, where it
//! goes, and the credentials of each host — as the names of environment
//! variables or files that hold the secrets, never the secrets.
//!
//! ```toml
//! editions = "/srv/txmap/editions"   # compiled files are renamed in here
//! packages = "/srv/txmap/packages"   # FHIR packages (default: editions/packages)
//! reload = "127.0.0.1:9091"          # the server's admin listener, asked to reload
//!
//! [[feeds]]
//! url = "https://api.healthterminologies.gov.au/syndication/v1/syndication.xml"
//! categories = ["SCT_RF2_SNAPSHOT", "FHIR_Package"]
//! identifiers = ["http://snomed.info/sct/32506021000036107"]
//!
//! [[credentials]]
//! host = "api.healthterminologies.gov.au"
//! kind = "oauth2"
//! token_url = "https://api.healthterminologies.gov.au/oauth2/token"
//! client_id = "my-client"
//! client_secret_file = "/run/credentials/txmap-sync/ncts"
//! ```

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The categories taken when a feed names none.
pub const DEFAULT_CATEGORIES: [&str; 3] = ["SCT_RF2_SNAPSHOT", "FHIR_Package", "LOINC"];

/// The whole file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncConfig {
    /// Where compiled edition and code system files are renamed in (the
    /// folder the server's `editions` lists). Relative to the config file.
    pub editions: PathBuf,
    /// Where FHIR packages go (a folder the server's `packages` lists);
    /// default `editions/packages`.
    pub packages: Option<PathBuf>,
    /// The state file; default `editions/.txmap-sync/state.json`.
    pub state: Option<PathBuf>,
    /// The server's admin listener (`host:port`), asked to reload when
    /// anything changed (with the token in `TXMAP_ADMIN_TOKEN`).
    pub reload: Option<String>,
    #[serde(default)]
    pub feeds: Vec<FeedConfig>,
    #[serde(default)]
    pub credentials: Vec<Credentials>,
}

/// One `[[feeds]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedConfig {
    pub url: String,
    /// The category terms taken; default [`DEFAULT_CATEGORIES`].
    /// Retractions are always honoured for what was taken.
    #[serde(default)]
    pub categories: Vec<String>,
    /// The content item identifiers taken (`http://snomed.info/sct/<module>`,
    /// a FHIR package's or resource's url); default every one.
    #[serde(default)]
    pub identifiers: Vec<String>,
}

/// How requests to one host authenticate.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Credentials {
    /// The host (`api.healthterminologies.gov.au`, or `host:port`).
    pub host: String,
    /// `none`, `basic`, `bearer` or `oauth2` (client credentials).
    pub kind: String,
    pub username: Option<String>,
    pub password_env: Option<String>,
    pub password_file: Option<PathBuf>,
    pub token_env: Option<String>,
    pub token_file: Option<PathBuf>,
    pub token_url: Option<String>,
    pub client_id: Option<String>,
    pub client_secret_env: Option<String>,
    pub client_secret_file: Option<PathBuf>,
}

impl std::fmt::Debug for Credentials {
    /// Names where secrets come from, never a secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("host", &self.host)
            .field("kind", &self.kind)
            .field("username", &self.username)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// A secret named by an environment variable or a file.
pub(crate) fn secret(what: &str, env: Option<&str>, file: Option<&Path>) -> Result<String, String> {
    if let Some(var) = env {
        return std::env::var(var)
            .map(|s| s.trim().to_owned())
            .map_err(|_| format!("{what}: the environment variable {var} is not set"));
    }
    if let Some(path) = file {
        return std::fs::read_to_string(path)
            .map(|s| s.trim().to_owned())
            .map_err(|e| format!("{what}: {}: {e}", path.display()));
    }
    Err(format!(
        "{what}: name an environment variable (…_env) or a file (…_file)"
    ))
}

impl SyncConfig {
    /// Reads and checks the file; relative paths become relative to its
    /// folder. An error names the file and the key.
    pub fn load(path: &Path) -> Result<SyncConfig, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut c: SyncConfig = toml::from_str(&text).map_err(|e| {
            // One line: the file, where, and what (toml's own text draws
            // the line over several).
            let at = e.span().map(|s| {
                let before = &text[..s.start.min(text.len())];
                let line = before.matches('\n').count() + 1;
                let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
                format!("line {line}, column {column}: ")
            });
            format!(
                "{}: {}{}",
                path.display(),
                at.unwrap_or_default(),
                e.message().trim()
            )
        })?;
        let base = path.parent().unwrap_or(Path::new(""));
        c.editions = base.join(&c.editions);
        c.packages = c.packages.map(|p| base.join(p));
        c.state = c.state.map(|p| base.join(p));
        for cred in &mut c.credentials {
            cred.password_file = cred.password_file.take().map(|p| base.join(p));
            cred.token_file = cred.token_file.take().map(|p| base.join(p));
            cred.client_secret_file = cred.client_secret_file.take().map(|p| base.join(p));
        }
        c.check().map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(c)
    }

    /// The checks a loaded config passes.
    pub fn check(&self) -> Result<(), String> {
        for c in &self.credentials {
            let need = |ok: bool, key: &str| {
                if ok {
                    Ok(())
                } else {
                    Err(format!(
                        "[[credentials]] {}: kind = {:?} needs {key}",
                        c.host, c.kind
                    ))
                }
            };
            match c.kind.as_str() {
                "none" => {}
                "basic" => {
                    need(c.username.is_some(), "username")?;
                    need(
                        c.password_env.is_some() || c.password_file.is_some(),
                        "password_env or password_file",
                    )?;
                }
                "bearer" => need(
                    c.token_env.is_some() || c.token_file.is_some(),
                    "token_env or token_file",
                )?,
                "oauth2" => {
                    need(c.token_url.is_some(), "token_url")?;
                    need(c.client_id.is_some(), "client_id")?;
                    need(
                        c.client_secret_env.is_some() || c.client_secret_file.is_some(),
                        "client_secret_env or client_secret_file",
                    )?;
                }
                other => {
                    return Err(format!(
                        "[[credentials]] {}: kind {other:?} is not one of none, basic, bearer, oauth2",
                        c.host
                    ));
                }
            }
        }
        Ok(())
    }

    /// Where packages go.
    pub fn packages_dir(&self) -> PathBuf {
        self.packages
            .clone()
            .unwrap_or_else(|| self.editions.join("packages"))
    }

    /// The folder of the state file, downloads and staging.
    pub fn work_dir(&self) -> PathBuf {
        self.editions.join(".txmap-sync")
    }

    /// The state file.
    pub fn state_file(&self) -> PathBuf {
        self.state
            .clone()
            .unwrap_or_else(|| self.work_dir().join("state.json"))
    }
}
