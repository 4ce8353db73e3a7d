//! Which version of a code system a request means: the request's
//! `system-version` (a default for includes and codings without one),
//! `check-system-version` (the version used must match; also a default)
//! and `force-system-version` (overrides every other version), each a
//! canonical `system|version` whose version may hold wildcards (`1.0.x`);
//! then, for `$validate-code`, how the coding's version and the value set
//! include's version are reconciled, with the tooling's mismatch issues.

use std::cell::RefCell;

use crate::error::{Error, Issue};
use crate::resolver::{Resolver, version_matches};

/// The version parameters of one request.
#[derive(Clone, Debug, Default)]
pub struct VersionRules {
    default: Vec<(String, String)>,
    check: Vec<(String, String)>,
    force: Vec<(String, String)>,
    /// `default-valueset-version`: the version of an imported value set
    /// whose canonical names none.
    value_set: Vec<(String, String)>,
    /// The parameters that decided a version, to echo in an expansion.
    applied: RefCell<Vec<(&'static str, String)>>,
}

fn split(canonical: &str) -> Option<(String, String)> {
    let (url, version) = canonical.split_once('|')?;
    Some((url.to_owned(), version.to_owned()))
}

fn find<'a>(list: &'a [(String, String)], system: &str) -> Option<&'a str> {
    list.iter()
        .find(|(u, _)| u == system)
        .map(|(_, v)| v.as_str())
}

impl VersionRules {
    /// Reads the three parameters (each repeatable) as canonicals.
    pub fn new(default: &[String], check: &[String], force: &[String]) -> VersionRules {
        let read = |l: &[String]| l.iter().filter_map(|c| split(c)).collect();
        VersionRules {
            default: read(default),
            check: read(check),
            force: read(force),
            value_set: Vec::new(),
            applied: RefCell::default(),
        }
    }

    /// The same rules with `default-valueset-version` canonicals.
    pub fn with_value_set_defaults(mut self, canonicals: &[String]) -> VersionRules {
        self.value_set = canonicals.iter().filter_map(|c| split(c)).collect();
        self
    }

    /// The rules of a request.
    pub fn from_request(req: &crate::Request) -> VersionRules {
        VersionRules::new(
            &req.texts("system-version"),
            &req.texts("check-system-version"),
            &req.texts("force-system-version"),
        )
        .with_value_set_defaults(&req.texts("default-valueset-version"))
    }

    fn note(&self, name: &'static str, system: &str, version: &str) {
        let v = format!("{system}|{version}");
        let mut a = self.applied.borrow_mut();
        if !a.iter().any(|(n, x)| *n == name && *x == v) {
            a.push((name, v));
        }
    }

    /// The parameters that decided a version, in first-use order.
    pub fn applied(&self) -> Vec<(&'static str, String)> {
        self.applied.borrow().clone()
    }

    /// The version an import of the value set `canonical` asks for: the
    /// canonical's own (`url|version`), else `default-valueset-version`
    /// (noted, to echo); `None` is the latest.
    pub fn import_version<'c>(&self, canonical: &'c str) -> (&'c str, Option<String>) {
        let (url, pinned) = crate::valueset::split_canonical(canonical);
        if let Some(v) = pinned {
            return (url, Some(v.to_owned()));
        }
        let v = find(&self.value_set, url).map(str::to_owned);
        if let Some(v) = &v {
            self.note("default-valueset-version", url, v);
        }
        (url, v)
    }

    /// The forced version of `system`.
    pub fn force(&self, system: &str) -> Option<&str> {
        find(&self.force, system)
    }

    /// The version `check-system-version` requires of `system`.
    pub fn check(&self, system: &str) -> Option<&str> {
        find(&self.check, system)
    }

    /// The default version of `system`: `system-version`, else the
    /// `check-system-version` pattern.
    pub fn default_for(&self, system: &str) -> Option<(&'static str, &str)> {
        find(&self.default, system)
            .map(|v| ("system-version", v))
            .or_else(|| find(&self.check, system).map(|v| ("check-system-version", v)))
    }

    /// The version an include of `system` (with its own version, if any)
    /// asks for: forced, else the include's, else the default; `None` is
    /// the latest.
    pub fn include_version(&self, system: &str, include: Option<&str>) -> Option<String> {
        if let Some(f) = self.force(system) {
            self.note("force-system-version", system, f);
            return Some(f.to_owned());
        }
        if let Some(v) = include {
            return Some(v.to_owned());
        }
        let (name, v) = self.default_for(system)?;
        self.note(name, system, v);
        Some(v.to_owned())
    }

    /// The error when `resolved` is not the version `check-system-version`
    /// requires.
    pub fn check_error(&self, system: &str, resolved: Option<&str>) -> Option<Error> {
        let required = self.check(system)?;
        let have = resolved.unwrap_or_default();
        (!version_matches(required, have) && required != have).then(|| Error::VersionCheck {
            url: system.to_owned(),
            version: have.to_owned(),
            required: required.to_owned(),
        })
    }
}

/// How to validate a coding's version against a value set include.
#[derive(Debug, Default)]
pub struct Plan {
    /// The version to look the code up in (`None`: the latest).
    pub version: Option<String>,
    pub issues: Vec<Issue>,
    /// The include names a version that does not exist: membership
    /// cannot be decided.
    pub unresolvable: bool,
    /// `system|version` of the unknown version, for
    /// `x-caused-by-unknown-system`.
    pub unknown: Option<String>,
}

fn issue(
    severity: &'static str,
    code: &'static str,
    tx: &'static str,
    id: &'static str,
    text: String,
    path: &str,
) -> Issue {
    Issue {
        severity,
        code,
        tx_type: tx,
        message_id: Some(id),
        text,
        expression: Some(path.to_owned()),
    }
}

/// Reconciles the coding's version (`coding`) with the include's
/// (`include`: the value set's include of `system`, if it names a
/// version) under `rules`. `system_path` and `version_path` are the
/// issue expressions.
pub fn plan(
    resolver: &Resolver,
    rules: &VersionRules,
    system: &str,
    coding: Option<&str>,
    include: Option<&str>,
    system_path: &str,
    version_path: &str,
) -> Plan {
    let mut p = Plan::default();
    let known = |v: &str| {
        resolver
            .pick(system, Some(v))
            .ok()
            .and_then(|cs| cs.version().map(str::to_owned))
    };
    let unknown_issue = |v: &str| {
        let mut i = Error::CodeSystemVersionNotFound {
            url: system.to_owned(),
            version: v.to_owned(),
            known: resolver.versions(system),
            expanding: false,
        }
        .issue();
        i.expression = Some(system_path.to_owned());
        i
    };
    let coding_known = coding.and_then(known);
    if let Some(cv) = coding
        && coding_known.is_none()
    {
        p.issues.push(unknown_issue(cv));
        p.unknown = Some(format!("{system}|{cv}"));
    }
    let changed = |rule: &str, inc: &str, cv: &str| {
        issue(
            "error",
            "invalid",
            "vs-invalid",
            "VALUESET_VALUE_MISMATCH_CHANGED",
            format!(
                "The code system '{system}' version '{rule}' resulting from the version '{inc}' in the ValueSet include is different to the one in the value ('{cv}')"
            ),
            version_path,
        )
    };
    if let Some(f) = rules.force(system) {
        rules.note("force-system-version", system, f);
        p.version = known(f).or_else(|| Some(f.to_owned()));
        if let Some(cv) = coding
            && !version_matches(f, cv)
        {
            p.issues.push(changed(f, include.unwrap_or_default(), cv));
        }
    } else if let Some(iv) = include {
        let resolved = known(iv);
        if let Some(cv) = coding
            && !version_matches(iv, cv)
        {
            p.issues.push(issue(
                "error",
                "invalid",
                "vs-invalid",
                "VALUESET_VALUE_MISMATCH",
                format!(
                    "The code system '{system}' version '{iv}' in the ValueSet include is different to the one in the value ('{cv}')"
                ),
                version_path,
            ));
        }
        match resolved {
            None => {
                p.issues.push(unknown_issue(iv));
                p.unknown = Some(format!("{system}|{iv}"));
                p.unresolvable = true;
                p.version = coding_known
                    .clone()
                    .or_else(|| rules.default_for(system).and_then(|(_, d)| known(d)));
            }
            // A wildcard the coding's version matches: the coding's.
            Some(r) => {
                p.version = match (&coding_known, coding) {
                    (Some(k), Some(cv)) if version_matches(iv, cv) => Some(k.clone()),
                    _ => Some(r),
                }
            }
        }
    } else {
        let default = rules.default_for(system);
        match (coding, &coding_known) {
            (Some(_), Some(k)) => p.version = Some(k.clone()),
            (Some(cv), None) => {
                if let Some((name, d)) = default {
                    rules.note(name, system, d);
                    p.version = known(d);
                    p.issues.push(changed(d, "", cv));
                } else {
                    p.version = resolver
                        .pick(system, None)
                        .ok()
                        .and_then(|cs| cs.version().map(str::to_owned));
                    p.issues.push(issue(
                        "warning",
                        "invalid",
                        "vs-invalid",
                        "VALUESET_VALUE_MISMATCH_DEFAULT",
                        format!(
                            "The code system '{system}' version '{}' for the versionless include in the ValueSet include is different to the one in the value ('{cv}')",
                            p.version.as_deref().unwrap_or_default()
                        ),
                        version_path,
                    ));
                }
            }
            (None, _) => {
                if let Some((name, d)) = default {
                    rules.note(name, system, d);
                    p.version = known(d);
                }
            }
        }
    }
    let resolved = p.version.clone().or_else(|| {
        resolver
            .pick(system, None)
            .ok()
            .and_then(|cs| cs.version().map(str::to_owned))
    });
    if let Some(e) = rules.check_error(system, resolved.as_deref()) {
        let mut i = e.issue();
        i.expression = Some(version_path.to_owned());
        p.issues.push(i);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    const CS: &str = "http://cs";

    fn resolver() -> Resolver {
        let cs = |v: &str| -> Value {
            json!({"resourceType": "CodeSystem", "url": CS, "version": v, "content": "complete", "concept": [{"code": "a"}]})
        };
        let (a, b) = (cs("1.0.0"), cs("1.2.0"));
        Resolver::new([&a, &b])
    }

    fn rules(default: &[&str], check: &[&str], force: &[&str]) -> VersionRules {
        let s = |l: &[&str]| l.iter().map(|x| format!("{CS}|{x}")).collect::<Vec<_>>();
        VersionRules::new(&s(default), &s(check), &s(force))
    }

    fn run(
        r: &VersionRules,
        coding: Option<&str>,
        include: Option<&str>,
    ) -> (Option<String>, Vec<&'static str>) {
        let p = plan(
            &resolver(),
            r,
            CS,
            coding,
            include,
            "Coding.system",
            "Coding.version",
        );
        (
            p.version,
            p.issues.iter().filter_map(|i| i.message_id).collect(),
        )
    }

    #[test]
    fn the_include_version_wins_over_the_coding_and_mismatches_are_errors() {
        let none = rules(&[], &[], &[]);
        assert_eq!(run(&none, None, None), (None, vec![]));
        assert_eq!(
            run(&none, Some("1.0.0"), Some("1.x.x")),
            (Some("1.0.0".into()), vec![])
        );
        assert_eq!(
            run(&none, None, Some("1.x.x")),
            (Some("1.2.0".into()), vec![])
        );
        assert_eq!(
            run(&none, Some("1.0.0"), Some("1.2.0")),
            (Some("1.2.0".into()), vec!["VALUESET_VALUE_MISMATCH"])
        );
        assert_eq!(
            run(&none, Some("1.0.0"), Some("1")),
            (
                Some("1.0.0".into()),
                vec!["VALUESET_VALUE_MISMATCH", "UNKNOWN_CODESYSTEM_VERSION"]
            )
        );
        assert_eq!(
            run(&none, Some("2.4.0"), None),
            (
                Some("1.2.0".into()),
                vec![
                    "UNKNOWN_CODESYSTEM_VERSION",
                    "VALUESET_VALUE_MISMATCH_DEFAULT"
                ]
            )
        );
    }

    #[test]
    fn defaults_checks_and_forced_versions() {
        let default = rules(&["1.0.0"], &[], &[]);
        assert_eq!(run(&default, None, None), (Some("1.0.0".into()), vec![]));
        assert_eq!(
            run(&default, None, Some("1.x.x")),
            (Some("1.2.0".into()), vec![])
        );
        assert_eq!(
            run(&default, Some("1.2.0"), None),
            (Some("1.2.0".into()), vec![])
        );
        assert_eq!(
            run(&default, Some("2.4.0"), None),
            (
                Some("1.0.0".into()),
                vec![
                    "UNKNOWN_CODESYSTEM_VERSION",
                    "VALUESET_VALUE_MISMATCH_CHANGED"
                ]
            )
        );
        assert_eq!(
            default.applied(),
            vec![("system-version", format!("{CS}|1.0.0"))]
        );

        let check = rules(&[], &["1.0.x"], &[]);
        assert_eq!(run(&check, None, None), (Some("1.0.0".into()), vec![]));
        assert_eq!(
            run(&check, None, Some("1.x.x")),
            (Some("1.2.0".into()), vec!["VALUESET_VERSION_CHECK"])
        );
        assert!(check.check_error(CS, Some("1.0.3")).is_none());
        assert!(check.check_error(CS, Some("1.2.0")).is_some());

        let force = rules(&[], &[], &["1.0.x"]);
        assert_eq!(
            run(&force, Some("1.0.0"), Some("1.2.0")),
            (Some("1.0.0".into()), vec![])
        );
        assert_eq!(
            run(&force, Some("2.4.0"), Some("1.0.0")),
            (
                Some("1.0.0".into()),
                vec![
                    "UNKNOWN_CODESYSTEM_VERSION",
                    "VALUESET_VALUE_MISMATCH_CHANGED"
                ]
            )
        );
        assert_eq!(
            force.include_version(CS, Some("1.2.0")).as_deref(),
            Some("1.0.x")
        );
    }

    #[test]
    fn imports_take_their_own_version_else_the_value_set_default() {
        let r = VersionRules::default().with_value_set_defaults(&["http://vs|1.0.0".into()]);
        assert_eq!(
            r.import_version("http://vs|2.0.0"),
            ("http://vs", Some("2.0.0".into()))
        );
        assert!(r.applied().is_empty());
        assert_eq!(r.import_version("http://other"), ("http://other", None));
        assert_eq!(
            r.import_version("http://vs"),
            ("http://vs", Some("1.0.0".into()))
        );
        assert_eq!(
            r.applied(),
            vec![("default-valueset-version", "http://vs|1.0.0".to_owned())]
        );
    }
}
