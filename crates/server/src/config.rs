//! The server's configuration file (TOML), and how its `[snomed]` block
//! decides each edition's load mode.
//!
//! The rules, from the deployment that taught them (see the issue and
//! ../shared/guides/lessons.md §1): `load` sets the mode for every edition;
//! `prewarm` and `read` list exceptions; an entry names an edition by file
//! name (with or without extension), version URI, or edition URI (every
//! loaded version of it); `read` wins over `prewarm`; no block means every
//! edition is read. Mistakes that leave the server usable are warnings;
//! ones that do not (unreadable file, unknown key, wrong type, missing
//! edition file) stop startup with the file and the key.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use txmap_load::LoadMode;

/// The whole file.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Address to listen on; default `127.0.0.1:8080`.
    pub listen: Option<String>,
    /// Edition files, or directories whose `*.txmap` files are all served.
    /// Relative paths are relative to the config file.
    #[serde(default)]
    pub editions: Vec<String>,
    /// The SNOMED CT edition for calls that name none: an entry as in
    /// `[snomed]`. Default: the first edition loaded.
    pub default_edition: Option<String>,
    /// FHIR packages (npm-format `.tgz`, e.g. `hl7.terminology.r4`)
    /// whose CodeSystems and ValueSets the general terminology engine
    /// serves after the request's own `tx-resource`s. Relative paths are
    /// relative to the config file.
    #[serde(default)]
    pub packages: Vec<String>,
    pub snomed: Option<SnomedConfig>,
    #[serde(default)]
    pub memory: MemoryConfig,
    #[serde(default)]
    pub limits: LimitsConfig,
    #[serde(default)]
    pub http: HttpConfig,
    #[serde(default)]
    pub admin: AdminConfig,
    #[serde(default)]
    pub store: StoreConfig,
    #[serde(default)]
    pub auth: AuthConfig,
}

/// `[store]`: the resources written through the FHIR API.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoreConfig {
    /// The SQLite file that holds them (made if absent; relative to the
    /// config file). Unset: the server stores nothing, and `POST`, `PUT`
    /// and `DELETE` are not offered. A writable volume of its own; one
    /// server process per file.
    pub path: Option<String>,
}

/// `[auth]`: who may read, write and administer, by bearer token.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthConfig {
    /// `"open"` (the default: anyone may read and run operations) or
    /// `"token"` (reads need a token too, any configured one).
    pub read: Option<String>,
    /// The tokens, each by the SHA-256 of its text (`txmap token` makes
    /// one), never the text itself.
    #[serde(default)]
    pub tokens: Vec<TokenConfig>,
}

/// One `[[auth.tokens]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// Who holds it, for the log.
    pub name: String,
    /// The SHA-256 of the token's text, 64 hex digits.
    pub sha256: String,
    /// What it may do: `"write"` (create, update and delete stored
    /// resources) and `"admin"` (the admin listener's calls, `/status`
    /// whole). Any token may read.
    pub scopes: Vec<String>,
}

/// `[admin]`: the operator's listener, off unless `listen` is set.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdminConfig {
    /// Its own address (`127.0.0.1:9091`), apart from the public one, so
    /// a firewall can keep it in. Its calls need `[http] admin_token`.
    pub listen: Option<String>,
}

/// `[http]`: what the server tells strangers, and whom it believes.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpConfig {
    /// The URL clients reach the server at (`https://tx.example.org`, a
    /// path prefix allowed), for the links and `fullUrl`s of answers. Set
    /// it behind a proxy. Unset, links name the address the connection
    /// reached (or what a trusted proxy forwards).
    pub public_base_url: Option<String>,
    /// Addresses of proxies whose `X-Forwarded-Proto`, `X-Forwarded-Host`
    /// and `Host` headers are believed; from anyone else they are ignored.
    #[serde(default)]
    pub trusted_proxies: Vec<String>,
    /// Origins (`https://app.example.org`, or `"*"`) whose browser apps may
    /// call the FHIR API (CORS). None by default: no CORS headers.
    #[serde(default)]
    pub cors_origins: Vec<String>,
    /// A token that, sent as `Authorization: Bearer …`, shows `/status`
    /// whole (files' paths); without it `/status` names files by their
    /// file name.
    pub admin_token: Option<String>,
}

/// `[limits]`: how much work one request may ask for.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsConfig {
    /// Seconds one operation may run before it is answered 422
    /// `too-costly`; 10.
    pub request_seconds: Option<f64>,
    /// The most codes one `$expand` returns; 10000. An
    /// `X-TOO-COSTLY-THRESHOLD` request header may lower it, never raise it.
    pub max_expansion: Option<usize>,
    /// The most elements one ECL evaluation may touch (concepts,
    /// relationships, members); 50000000.
    pub ecl_max_work: Option<u64>,
    /// How many heavy operations (expansions, ECL, text search, FHIR
    /// search) run at once, in all; others wait their turn. Default: twice
    /// the CPUs. They run at a lower priority, so cheap operations always
    /// have a CPU.
    pub heavy_concurrency: Option<usize>,
    /// How many heavy operations one client (by its address) runs at
    /// once; its others wait behind them, not in front of other clients'.
    /// Default: one less than the CPUs (at least 1).
    pub heavy_per_client: Option<usize>,
    /// How many connections are open at once; past it the one idle
    /// longest is closed to make room, and when none is idle new ones
    /// wait in the kernel's backlog. 512.
    pub max_connections: Option<usize>,
    /// How many of them one client (by address) holds; past it its own
    /// idle connection that waited longest is closed. 128.
    pub max_connections_per_client: Option<usize>,
    /// Seconds a request's headers may take to arrive (also how long a
    /// keep-alive connection may sit idle); 10.
    pub header_seconds: Option<f64>,
    /// Seconds a request's body may take to arrive; 30.
    pub body_seconds: Option<f64>,
    /// The largest request body, e.g. `"8MiB"` or a number of bytes;
    /// 8 MiB. Larger ones are answered 413.
    pub max_body: Option<toml::Value>,
    /// Seconds shutdown waits for open requests before it stops them; 10.
    pub shutdown_grace_seconds: Option<f64>,
    /// The largest answer an operation sends, e.g. `"32MiB"` or a number
    /// of bytes; 32 MiB. A larger one is a 422 `too-costly`.
    pub max_answer_bytes: Option<toml::Value>,
}

/// `[snomed]`: how editions are loaded.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SnomedConfig {
    /// `"read"` or `"mmap"`: the mode of every edition not listed below.
    pub load: Option<String>,
    /// Editions mapped and read through once in the background.
    #[serde(default)]
    pub prewarm: Vec<String>,
    /// Editions mapped and only their hot sections read in the background
    /// (`txmap_store::access`): most of a whole prewarm's effect for a
    /// fraction of its page cache.
    #[serde(default)]
    pub prewarm_hot: Vec<String>,
    /// How mapped editions ask the kernel for help on a page fault:
    /// `"sections"` (each section as measured, the default), `"random"`
    /// (one page a fault everywhere), `"normal"` (the kernel's readahead
    /// everywhere).
    pub advice: Option<String>,
    /// Editions read into memory whatever `load` says.
    #[serde(default)]
    pub read: Vec<String>,
    /// Seconds between re-readings of every served file's checksums, at
    /// the lowest priority (a file changed under the server is taken out
    /// of service); 0 turns the re-reading off (a file's identity is still
    /// watched). 21600 (six hours).
    pub scrub_seconds: Option<u64>,
    /// Editions served at once, without reading their checksums through
    /// first. Every other edition answers only once its file has been
    /// verified (503 until then; out of service if it fails).
    #[serde(default)]
    pub trust_unverified: Vec<String>,
}

/// `[memory]`: the guard.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    /// A limit below the cgroup's and the machine's, e.g. `"6GiB"`.
    pub limit: Option<String>,
    /// Refuse new requests (503) above this fraction of the limit; 0.85.
    pub refuse_at: Option<f64>,
    /// Abort costly operations (422) above this fraction; 0.95.
    pub abort_at: Option<f64>,
}

/// A configuration that cannot be used.
#[derive(Debug)]
pub struct ConfigError {
    pub file: PathBuf,
    pub message: String,
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.file.display(), self.message)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Reads and parses a config file.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_owned(),
            message: format!("cannot read: {e}"),
        })?;
        Config::parse(&text).map_err(|message| ConfigError {
            file: path.to_owned(),
            message,
        })
    }

    /// Parses TOML text; the error names the line, column and key.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| {
            let at = e.span().map(|s| line_col(text, s.start));
            let message = e.message().trim().to_owned();
            match at {
                Some((line, col)) => format!("line {line}, column {col}: {message}"),
                None => message,
            }
        })
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

/// What an entry can be matched against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditionNames {
    /// The file name, e.g. `intl-20250201.txmap`.
    pub file_name: String,
    pub version_uri: String,
    pub edition_uri: String,
}

impl EditionNames {
    /// Whether `entry` names this edition.
    pub fn matches(&self, entry: &str) -> bool {
        let stem = Path::new(&self.file_name)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or(&self.file_name);
        entry == self.file_name
            || entry == stem
            || entry == self.version_uri
            || entry == self.edition_uri
    }
}

/// Resolves every edition's load mode and collects the warnings, one line
/// each, that startup logs.
pub fn load_modes(
    snomed: Option<&SnomedConfig>,
    editions: &[EditionNames],
) -> (Vec<LoadMode>, Vec<String>) {
    let mut warnings = Vec::new();
    let Some(s) = snomed else {
        return (vec![LoadMode::Read; editions.len()], warnings);
    };
    let base = match s.load.as_deref() {
        None | Some("read") => LoadMode::Read,
        Some("mmap") => LoadMode::Mmap,
        Some(other) => {
            warnings.push(format!(
                "[snomed] load = {other:?} is not \"read\" or \"mmap\"; editions not listed are read"
            ));
            LoadMode::Read
        }
    };
    for (list, entries) in [
        ("prewarm", &s.prewarm),
        ("prewarm_hot", &s.prewarm_hot),
        ("read", &s.read),
    ] {
        for entry in entries {
            if !editions.iter().any(|e| e.matches(entry)) {
                warnings.push(format!(
                    "[snomed] {list} entry {entry:?} matches no loaded edition"
                ));
            }
        }
    }
    // Two lists naming one file conflict however each names it (file
    // name, stem, version or edition URI): judged per edition, not per
    // string.
    for e in editions {
        let named = |list: &[String]| -> String {
            list.iter()
                .filter(|x| e.matches(x))
                .map(|x| format!("{x:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let (prewarm, hot, read) = (named(&s.prewarm), named(&s.prewarm_hot), named(&s.read));
        let file = &e.file_name;
        if !prewarm.is_empty() && !read.is_empty() {
            warnings.push(format!(
                "[snomed] {file} is in both prewarm (as {prewarm}) and read (as {read}); read wins"
            ));
        }
        if !hot.is_empty() && !read.is_empty() {
            warnings.push(format!(
                "[snomed] {file} is in both prewarm_hot (as {hot}) and read (as {read}); read wins"
            ));
        } else if !hot.is_empty() && !prewarm.is_empty() {
            warnings.push(format!(
                "[snomed] {file} is in both prewarm (as {prewarm}) and prewarm_hot (as {hot}); prewarm (the whole file) wins"
            ));
        }
    }
    let modes = editions
        .iter()
        .map(|e| {
            if s.read.iter().any(|r| e.matches(r)) {
                LoadMode::Read
            } else if s.prewarm.iter().any(|p| e.matches(p)) {
                LoadMode::Prewarm
            } else if s.prewarm_hot.iter().any(|p| e.matches(p)) {
                LoadMode::PrewarmHot
            } else {
                base
            }
        })
        .collect();
    (modes, warnings)
}

/// Parses `1GiB`, `512MiB`, `800M` or plain bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size like 1GiB or 512MiB"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (use KiB, MiB, GiB)")),
    };
    n.checked_mul(mult)
        .ok_or_else(|| format!("{s:?} is too large"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(file: &str, module: &str, date: &str) -> EditionNames {
        EditionNames {
            file_name: file.into(),
            edition_uri: format!("http://snomed.info/sct/{module}"),
            version_uri: format!("http://snomed.info/sct/{module}/version/{date}"),
        }
    }

    fn three() -> Vec<EditionNames> {
        vec![
            names("intl-20250201.txmap", "900000000000207008", "20250201"),
            names("us-20250901.txmap", "731000124108", "20250901"),
            names("us-20230301.txmap", "731000124108", "20230301"),
        ]
    }

    fn snomed(text: &str) -> SnomedConfig {
        Config::parse(text).unwrap().snomed.unwrap()
    }

    #[test]
    fn no_block_reads_everything() {
        let (modes, warnings) = load_modes(None, &three());
        assert_eq!(modes, vec![LoadMode::Read; 3]);
        assert!(warnings.is_empty());
    }

    #[test]
    fn entries_by_file_name_stem_version_and_edition_uri() {
        let s = snomed(
            r#"[snomed]
            load = "mmap"
            prewarm = ["intl-20250201", "http://snomed.info/sct/731000124108/version/20250901"]
            "#,
        );
        let (modes, warnings) = load_modes(Some(&s), &three());
        assert_eq!(
            modes,
            vec![LoadMode::Prewarm, LoadMode::Prewarm, LoadMode::Mmap]
        );
        assert!(warnings.is_empty(), "{warnings:?}");

        // An edition URI covers every loaded version; a full file name works.
        let s = snomed(
            r#"[snomed]
            load = "mmap"
            read = ["http://snomed.info/sct/731000124108"]
            prewarm = ["intl-20250201.txmap"]
            "#,
        );
        let (modes, _) = load_modes(Some(&s), &three());
        assert_eq!(
            modes,
            vec![LoadMode::Prewarm, LoadMode::Read, LoadMode::Read]
        );
    }

    #[test]
    fn prewarm_hot_is_a_mode_and_a_whole_prewarm_or_read_wins() {
        let s = snomed(
            r#"[snomed]
            load = "mmap"
            prewarm_hot = ["intl-20250201", "us-20250901", "us-20230301"]
            prewarm = ["us-20250901"]
            read = ["us-20230301"]
            "#,
        );
        let (modes, warnings) = load_modes(Some(&s), &three());
        assert_eq!(
            modes,
            vec![LoadMode::PrewarmHot, LoadMode::Prewarm, LoadMode::Read]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[0].contains(
                "us-20250901.txmap is in both prewarm (as \"us-20250901\") and prewarm_hot (as \"us-20250901\"); prewarm (the whole file) wins"
            ),
            "{warnings:?}"
        );
        assert!(
            warnings[1].contains("us-20230301.txmap is in both prewarm_hot")
                && warnings[1].contains("read wins"),
            "{warnings:?}"
        );
        let s = snomed("[snomed]\nprewarm_hot = [\"nothing\"]\n");
        let (_, warnings) = load_modes(Some(&s), &three());
        assert!(warnings[0].contains("prewarm_hot entry \"nothing\" matches no loaded edition"));
    }

    #[test]
    fn read_wins_over_prewarm_with_a_warning() {
        let s = snomed(
            r#"[snomed]
            load = "mmap"
            prewarm = ["us-20250901"]
            read = ["us-20250901"]
            "#,
        );
        let (modes, warnings) = load_modes(Some(&s), &three());
        assert_eq!(modes[1], LoadMode::Read);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].contains("both prewarm (as \"us-20250901\") and read"),
            "{warnings:?}"
        );
    }

    #[test]
    fn one_file_named_two_ways_in_two_lists_is_a_conflict() {
        // The same file by its stem and by its file name, by its version
        // URI and by its edition URI: one edition, two lists.
        let s = snomed(
            r#"[snomed]
            load = "mmap"
            prewarm = ["intl-20250201", "http://snomed.info/sct/731000124108/version/20250901"]
            read = ["intl-20250201.txmap"]
            prewarm_hot = ["http://snomed.info/sct/731000124108"]
            "#,
        );
        let (modes, warnings) = load_modes(Some(&s), &three());
        assert_eq!(
            modes,
            vec![LoadMode::Read, LoadMode::Prewarm, LoadMode::PrewarmHot]
        );
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert_eq!(
            warnings[0],
            "[snomed] intl-20250201.txmap is in both prewarm (as \"intl-20250201\") and read (as \"intl-20250201.txmap\"); read wins"
        );
        assert!(
            warnings[1].starts_with("[snomed] us-20250901.txmap is in both prewarm (as ")
                && warnings[1].ends_with("prewarm (the whole file) wins"),
            "{warnings:?}"
        );
    }

    #[test]
    fn unmatched_entries_and_bad_values_warn() {
        let s = snomed(
            r#"[snomed]
            load = "fast"
            prewarm = ["uk-20230412"]
            read = ["http://snomed.info/sct/1234"]
            "#,
        );
        let (modes, warnings) = load_modes(Some(&s), &three());
        // A bad `load` falls back to reading; a prewarm of nothing changes nothing.
        assert_eq!(modes, vec![LoadMode::Read; 3]);
        assert_eq!(warnings.len(), 3, "{warnings:?}");
        assert!(warnings[0].contains("\"fast\""));
        assert!(warnings[1].contains("prewarm entry \"uk-20230412\" matches no loaded edition"));
        assert!(warnings[2].contains("read entry"));
    }

    #[test]
    fn fatal_errors_name_the_key() {
        let err = Config::parse("[snomed]\nlod = \"mmap\"\n").unwrap_err();
        assert!(err.contains("line 2") && err.contains("lod"), "{err}");
        let err = Config::parse("[snomed]\nprewarm = \"intl\"\n").unwrap_err();
        assert!(err.contains("line 2") && err.contains("sequence"), "{err}");
        let err = Config::parse("listen = 8080\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        let err = Config::parse("[snomed\n").unwrap_err();
        assert!(err.contains("line 1"), "{err}");
        let err = Config::load(Path::new("/nonexistent/txmap.toml")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/txmap.toml: cannot read"),
            "{err}"
        );
    }

    #[test]
    fn full_example_parses() {
        let c = Config::parse(include_str!("../../../txmap.example.toml")).unwrap();
        assert!(c.snomed.is_some());
        assert!(c.memory.refuse_at.is_some());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("6GiB"), Ok(6 << 30));
        assert_eq!(parse_size("512MiB"), Ok(512 << 20));
        assert!(parse_size("lots").is_err());
    }
}
