//! The suite as `tests/test-cases.json` describes it, and which of its
//! tests a run selects.
//!
//! Selection follows the official CLI: a suite or test with a `mode` runs
//! only when that mode is on (`general` is on unless removed); `disabled`
//! skips; the filter is a plain substring of the test name; the suite
//! filter is an exact suite name. A test's `version` field is not used to
//! select, as the official runner without `-test-version` does not.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::json::{Json, Object};

/// An extra HTTP header a test sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub name: String,
    pub value: String,
    /// Sent only when this mode is on.
    pub mode: Option<String>,
}

/// One test of a suite.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Test {
    pub name: String,
    pub description: Option<String>,
    /// `expand`, `validate-code`, `cs-validate-code`, `lookup`,
    /// `translate`, `batch-validate`, `compare`, `metadata`, `term-caps`,
    /// `batch`.
    pub operation: String,
    pub request: Option<String>,
    pub response: String,
    /// `request:<mode>` replacements, by mode.
    pub request_by_mode: BTreeMap<String, String>,
    /// `response:<mode>` replacements, by mode.
    pub response_by_mode: BTreeMap<String, String>,
    /// `2xx` (the default), `3xx`, `4xx` or `5xx`.
    pub http_code: String,
    pub accept_language: Option<String>,
    pub header: Option<Header>,
    /// A Parameters file appended to the request instead of
    /// `parameters-default.json`.
    pub profile: Option<String>,
    /// `mode` / `modes`: the test runs when one of them is on.
    pub modes: Vec<String>,
    /// `4.0` or `5.0`: informative only (see the module docs).
    pub version: Option<String>,
    pub disabled: bool,
    /// `response2`: an alternative answer the CLI runner does not read.
    pub response2: Option<String>,
}

/// A suite: setup resources and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suite {
    pub name: String,
    pub description: Option<String>,
    pub mode: Option<String>,
    pub setup: Vec<String>,
    pub disabled: bool,
    pub tests: Vec<Test>,
}

/// The whole suite, loaded from its `tests` folder.
#[derive(Clone, Debug)]
pub struct TestCases {
    /// The folder holding `test-cases.json`; every file name is relative to
    /// it.
    pub dir: PathBuf,
    pub suites: Vec<Suite>,
}

fn string(o: &Object, k: &str) -> Option<String> {
    o.get(k).and_then(Json::as_str).map(str::to_string)
}

fn flag(o: &Object, k: &str) -> bool {
    matches!(o.get(k), Some(Json::Bool(true))) || o.get(k).and_then(Json::as_str) == Some("true")
}

fn strings(v: Option<&Json>) -> Vec<String> {
    match v {
        Some(Json::Array(a)) => a
            .iter()
            .filter_map(|x| x.as_str().map(str::to_string))
            .collect(),
        Some(Json::String(s)) => s
            .split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect(),
        _ => Vec::new(),
    }
}

fn parse_test(o: &Object) -> Result<Test, String> {
    let name = string(o, "name").ok_or("a test without a name")?;
    let operation = string(o, "operation").ok_or_else(|| format!("test {name}: no operation"))?;
    let response = string(o, "response").ok_or_else(|| format!("test {name}: no response"))?;
    let mut request_by_mode = BTreeMap::new();
    let mut response_by_mode = BTreeMap::new();
    for (k, v) in o.iter() {
        let Some(v) = v.as_str() else { continue };
        if let Some(m) = k.strip_prefix("request:") {
            request_by_mode.insert(m.to_string(), v.to_string());
        } else if let Some(m) = k.strip_prefix("response:") {
            response_by_mode.insert(m.to_string(), v.to_string());
        }
    }
    let header = o.get("header").and_then(Json::as_object).and_then(|h| {
        Some(Header {
            name: string(h, "name")?,
            value: string(h, "value").unwrap_or_default(),
            mode: string(h, "mode"),
        })
    });
    let mut modes = strings(o.get("mode"));
    modes.extend(strings(o.get("modes")));
    Ok(Test {
        description: string(o, "description"),
        request: string(o, "request"),
        request_by_mode,
        response_by_mode,
        http_code: string(o, "http-code").unwrap_or_else(|| "2xx".to_string()),
        accept_language: string(o, "Accept-Language"),
        header,
        profile: string(o, "profile"),
        modes,
        version: string(o, "version"),
        disabled: flag(o, "disabled"),
        response2: string(o, "response2"),
        name,
        operation,
        response,
    })
}

impl TestCases {
    /// Loads `dir/test-cases.json`. `dir` may also be the repository root
    /// holding `tests/`.
    pub fn load(dir: &Path) -> Result<TestCases, String> {
        let dir = if dir.join("test-cases.json").is_file() {
            dir.to_path_buf()
        } else if dir.join("tests/test-cases.json").is_file() {
            dir.join("tests")
        } else {
            return Err(format!("{}: no test-cases.json", dir.display()));
        };
        let path = dir.join("test-cases.json");
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let doc = Json::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut suites = Vec::new();
        for s in doc
            .get("suites")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let Some(s) = s.as_object() else { continue };
            let name = string(s, "name").ok_or("a suite without a name")?;
            let tests = s
                .get("tests")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
                .filter_map(Json::as_object)
                .map(parse_test)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| format!("{}: suite {name}: {e}", path.display()))?;
            suites.push(Suite {
                description: string(s, "description"),
                mode: string(s, "mode"),
                setup: strings(s.get("setup")),
                disabled: flag(s, "disabled"),
                tests,
                name,
            });
        }
        Ok(TestCases { dir, suites })
    }

    /// Reads and parses one of the suite's JSON files.
    pub fn load_json(&self, file: &str) -> Result<Json, String> {
        let path = self.dir.join(file);
        let text = fs::read_to_string(&path).map_err(|e| format!("{file}: {e}"))?;
        Json::parse(&text).map_err(|e| format!("{file}: {e}"))
    }

    /// The externals file given by name, relative to the suite folder or
    /// not: `messages-tx.fhir.org.json`.
    pub fn load_externals(&self, file: &Path) -> Result<Json, String> {
        let path = if file.is_file() {
            file.to_path_buf()
        } else {
            self.dir.join(file)
        };
        let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        Json::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// The number of tests, disabled or not.
    pub fn test_count(&self) -> usize {
        self.suites.iter().map(|s| s.tests.len()).sum()
    }
}

/// Which tests a run selects.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Selection {
    /// The modes that are on, in order (the order decides which
    /// `request:<mode>` / `response:<mode>` wins).
    pub modes: Vec<String>,
    /// A substring of the test name.
    pub filter: Option<String>,
    /// Exact suite names; empty means all.
    pub suites: Vec<String>,
}

impl Default for Selection {
    fn default() -> Selection {
        Selection {
            modes: vec!["general".to_string()],
            filter: None,
            suites: Vec::new(),
        }
    }
}

impl Selection {
    /// Modes as the CLI takes them: `general` is always on unless given as
    /// `!general`.
    pub fn with_modes<S: AsRef<str>>(modes: &[S]) -> Selection {
        let mut out = vec!["general".to_string()];
        for m in modes {
            let m = m.as_ref().trim();
            if let Some(off) = m.strip_prefix('!') {
                out.retain(|x| x != off);
            } else if !m.is_empty() && !out.iter().any(|x| x == m) {
                out.push(m.to_string());
            }
        }
        Selection {
            modes: out,
            ..Selection::default()
        }
    }

    pub fn mode_on(&self, m: &str) -> bool {
        self.modes.iter().any(|x| x == m)
    }

    pub fn selects_suite(&self, s: &Suite) -> bool {
        !s.disabled
            && s.mode.as_deref().is_none_or(|m| self.mode_on(m))
            && (self.suites.is_empty() || self.suites.contains(&s.name))
    }

    pub fn selects_test(&self, s: &Suite, t: &Test) -> bool {
        self.selects_suite(s)
            && !t.disabled
            && (t.modes.is_empty() || t.modes.iter().any(|m| self.mode_on(m)))
            && self
                .filter
                .as_deref()
                .is_none_or(|f| f.is_empty() || f == "*" || t.name.contains(f))
    }

    /// The request file, after `request:<mode>` overrides.
    pub fn request_file<'a>(&self, t: &'a Test) -> Option<&'a str> {
        self.modes
            .iter()
            .find_map(|m| t.request_by_mode.get(m))
            .map(String::as_str)
            .or(t.request.as_deref())
    }

    /// The expected response file, after `response:<mode>` overrides.
    pub fn response_file<'a>(&self, t: &'a Test) -> &'a str {
        self.modes
            .iter()
            .find_map(|m| t.response_by_mode.get(m))
            .map_or(t.response.as_str(), String::as_str)
    }

    /// The mode a test belongs to, for summaries: its own, else its suite's.
    pub fn effective_mode(s: &Suite, t: &Test) -> String {
        t.modes
            .first()
            .cloned()
            .or_else(|| s.mode.clone())
            .unwrap_or_else(|| "(none)".to_string())
    }
}

/// The suite's `tests` folder: `$TX_ECOSYSTEM_DIR`, else
/// `../shared/tx-ecosystem` beside the checkout holding `manifest_dir`
/// (a crate's `CARGO_MANIFEST_DIR`, two levels below the checkout).
pub fn locate(manifest_dir: &Path) -> Option<PathBuf> {
    let base = std::env::var_os("TX_ECOSYSTEM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join("../../../shared/tx-ecosystem"));
    [base.join("tests"), base]
        .into_iter()
        .find(|d| d.join("test-cases.json").is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test(o: &str) -> Test {
        parse_test(Json::parse(o).unwrap().as_object().unwrap()).unwrap()
    }

    #[test]
    fn parses_fields_and_overrides() {
        let t = test(
            r#"{"name":"t","operation":"expand","request":"a.json","response":"b.json",
                "response:flat":"c.json","request:x":"d.json","http-code":"4xx","Accept-Language":"de",
                "header":{"name":"X-A","value":"1"},"profile":"p.json","mode":"snomed","disabled":false}"#,
        );
        assert_eq!(t.http_code, "4xx");
        assert_eq!(t.modes, ["snomed"]);
        assert_eq!(t.header.as_ref().unwrap().name, "X-A");
        let mut sel = Selection::with_modes(&["flat"]);
        assert_eq!(sel.modes, ["general", "flat"]);
        assert_eq!(sel.response_file(&t), "c.json");
        assert_eq!(sel.request_file(&t), Some("a.json"));
        sel.modes.push("x".into());
        assert_eq!(sel.request_file(&t), Some("d.json"));
        assert_eq!(
            Selection::with_modes(&["!general", "snomed"]).modes,
            ["snomed"]
        );
    }

    #[test]
    fn selection() {
        let suite = |mode: Option<&str>, tests: Vec<Test>| Suite {
            name: "s".into(),
            description: None,
            mode: mode.map(Into::into),
            setup: vec![],
            disabled: false,
            tests,
        };
        let plain = test(r#"{"name":"abc","operation":"expand","response":"r"}"#);
        let tx = test(r#"{"name":"abd","operation":"expand","response":"r","mode":"tx.fhir.org"}"#);
        let general = Selection::default();
        let s = suite(Some("general"), vec![]);
        assert!(general.selects_test(&s, &plain));
        assert!(!general.selects_test(&s, &tx));
        assert!(!general.selects_test(&suite(Some("snomed"), vec![]), &plain));
        assert!(general.selects_test(&suite(None, vec![]), &plain));
        let filtered = Selection {
            filter: Some("bc".into()),
            ..Selection::default()
        };
        assert!(filtered.selects_test(&s, &plain));
        assert!(!filtered.selects_test(&s, &tx));
        let named = Selection {
            suites: vec!["other".into()],
            ..Selection::default()
        };
        assert!(!named.selects_test(&s, &plain));
    }
}
