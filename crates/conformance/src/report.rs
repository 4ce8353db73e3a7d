//! What a run prints and writes: one line per test, summaries per suite
//! and mode, the final `N passed, N failed` line that CI's log reader
//! looks for, a JSON report, expected/actual files for failures, and the
//! ratchet (a list of test ids that must keep passing).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::json::{Json, Object};
use crate::runner::{Outcome, RunReport, TestResult};

/// Shortens a value for a one-line message.
fn clip(s: &str) -> String {
    const MAX: usize = 200;
    if s.chars().count() <= MAX {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(MAX).collect::<String>())
    }
}

/// The line printed for a test: `PASS r4/suite/test`, or `FAIL …` with the
/// first difference.
pub fn test_line(r: &TestResult) -> String {
    match &r.outcome {
        Outcome::Pass if r.lenient.is_empty() => format!("PASS {}", r.id),
        Outcome::Pass => {
            let l = &r.lenient[0];
            format!(
                "PASS {} (lenient string match only: {} expected {:?}, actual {:?}{})",
                r.id,
                l.path,
                l.expected,
                l.actual,
                if r.lenient.len() > 1 {
                    format!(", and {} more", r.lenient.len() - 1)
                } else {
                    String::new()
                }
            )
        }
        Outcome::Fail(d) => {
            let path = if d.path.is_empty() { "(root)" } else { &d.path };
            // An error status says more than the first difference does
            // (the scrubber may have removed the server's diagnostics).
            let status = match r.http_status {
                Some(s) if s != 200 && d.path != "(http status)" => format!(" (HTTP {s})"),
                _ => String::new(),
            };
            match (&d.expected, &d.actual) {
                (Some(e), Some(a)) => format!(
                    "FAIL {}{status}: at {path}: {}; expected {}, actual {}",
                    r.id,
                    first_line(&d.message),
                    clip(e),
                    clip(a)
                ),
                _ => format!(
                    "FAIL {}{status}: at {path}: {}",
                    r.id,
                    first_line(&d.message)
                ),
            }
        }
        Outcome::Error(e) => format!("FAIL {}: error: {}", r.id, clip(e)),
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

#[derive(Default)]
struct Tally {
    passed: usize,
    failed: usize,
    lenient: usize,
}

impl Tally {
    fn add(&mut self, r: &TestResult) {
        if r.passed() {
            self.passed += 1;
        } else {
            self.failed += 1;
        }
        if r.lenient_only() {
            self.lenient += 1;
        }
    }

    fn show(&self) -> String {
        let mut s = format!("{:>4}/{}", self.passed, self.passed + self.failed);
        if self.lenient > 0 {
            s.push_str(&format!(" ({} lenient only)", self.lenient));
        }
        s
    }
}

/// Per run: a line per suite and a line per mode.
pub fn summary(reports: &[RunReport]) -> String {
    let mut out = String::new();
    for rep in reports {
        out.push_str(&format!(
            "summary {} ({}, FHIR {}, modes {}):\n",
            rep.label,
            rep.endpoint,
            rep.fhir_version.as_deref().unwrap_or("unknown"),
            rep.modes.join(",")
        ));
        if let Some(e) = &rep.startup_error {
            out.push_str(&format!("  start-up failed: {e}\n"));
        }
        for n in &rep.notes {
            out.push_str(&format!("  note: {n}\n"));
        }
        let mut suites: Vec<(&str, Tally)> = Vec::new();
        let mut modes: BTreeMap<&str, Tally> = BTreeMap::new();
        for r in &rep.results {
            match suites.iter_mut().find(|(s, _)| *s == r.suite) {
                Some((_, t)) => t.add(r),
                None => {
                    let mut t = Tally::default();
                    t.add(r);
                    suites.push((&r.suite, t));
                }
            }
            modes.entry(&r.mode).or_default().add(r);
        }
        let width = suites
            .iter()
            .map(|(s, _)| s.len())
            .chain(modes.keys().map(|m| m.len()))
            .max()
            .unwrap_or(0);
        for (s, t) in &suites {
            out.push_str(&format!("  suite {s:<width$}  {}\n", t.show()));
        }
        for (m, t) in &modes {
            out.push_str(&format!("  mode  {m:<width$}  {}\n", t.show()));
        }
    }
    out
}

/// The last line: `N passed, N failed` (errors count as failed).
pub fn final_line(reports: &[RunReport]) -> String {
    let passed: usize = reports.iter().map(RunReport::passed).sum();
    let failed: usize = reports.iter().map(RunReport::failed).sum();
    format!("{passed} passed, {failed} failed")
}

fn difference_json(r: &TestResult) -> Json {
    match &r.outcome {
        Outcome::Fail(d) => Json::Object(
            Object::new()
                .with("path", d.path.as_str())
                .with("message", d.message.as_str())
                .with("expected", d.expected.clone())
                .with("actual", d.actual.clone()),
        ),
        _ => Json::Null,
    }
}

/// The JSON report of all runs.
pub fn report_json(reports: &[RunReport]) -> Json {
    let runs: Vec<Json> = reports
        .iter()
        .map(|rep| {
            let tests: Vec<Json> = rep
                .results
                .iter()
                .map(|r| {
                    let status = match r.outcome {
                        Outcome::Pass => "pass",
                        Outcome::Fail(_) => "fail",
                        Outcome::Error(_) => "error",
                    };
                    let lenient: Vec<Json> = r
                        .lenient
                        .iter()
                        .map(|l| {
                            Json::Object(
                                Object::new()
                                    .with("path", l.path.as_str())
                                    .with("expected", l.expected.as_str())
                                    .with("actual", l.actual.as_str()),
                            )
                        })
                        .collect();
                    let mut o = Object::new()
                        .with("id", r.id.as_str())
                        .with("suite", r.suite.as_str())
                        .with("test", r.test.as_str())
                        .with("mode", r.mode.as_str())
                        .with("operation", r.operation.as_str())
                        .with("status", status)
                        .with("lenientOnly", r.lenient_only())
                        .with("expectedHttp", r.expected_http.as_str())
                        .with("httpStatus", r.http_status.map(u64::from))
                        .with("responseFile", r.response_file.as_str())
                        .with("millis", r.millis);
                    if !r.lenient.is_empty() {
                        o.insert("lenientMatches", Json::Array(lenient));
                    }
                    if !r.warnings.is_empty() {
                        o.insert(
                            "warnings",
                            Json::Array(
                                r.warnings.iter().map(|w| Json::from(w.as_str())).collect(),
                            ),
                        );
                    }
                    if let Outcome::Error(e) = &r.outcome {
                        o.insert("error", Json::from(e.as_str()));
                    }
                    if matches!(r.outcome, Outcome::Fail(_)) {
                        o.insert("difference", difference_json(r));
                    }
                    Json::Object(o)
                })
                .collect();
            Json::Object(
                Object::new()
                    .with("label", rep.label.as_str())
                    .with("endpoint", rep.endpoint.as_str())
                    .with("fhirVersion", rep.fhir_version.clone())
                    .with(
                        "modes",
                        Json::Array(rep.modes.iter().map(|m| Json::from(m.as_str())).collect()),
                    )
                    .with("startupError", rep.startup_error.clone())
                    .with(
                        "notes",
                        Json::Array(rep.notes.iter().map(|m| Json::from(m.as_str())).collect()),
                    )
                    .with("passed", rep.passed())
                    .with("failed", rep.failed())
                    .with("tests", Json::Array(tests)),
            )
        })
        .collect();
    Json::Object(
        Object::new()
            .with(
                "passed",
                reports.iter().map(RunReport::passed).sum::<usize>(),
            )
            .with(
                "failed",
                reports.iter().map(RunReport::failed).sum::<usize>(),
            )
            .with("runs", Json::Array(runs)),
    )
}

/// Writes `dir/<label>/expected/<file>` and `dir/<label>/actual/<file>`
/// for every test that did not pass, mirroring the suite's layout so the
/// two trees can be diffed. Returns how many tests were written.
pub fn write_failures(dir: &Path, reports: &[RunReport]) -> io::Result<usize> {
    let mut n = 0;
    for rep in reports {
        for r in rep.results.iter().filter(|r| !r.passed()) {
            let rel = safe_relative(&r.response_file);
            for (side, v) in [("expected", &r.expected), ("actual", &r.actual)] {
                let Some(v) = v else { continue };
                let path = dir.join(&rep.label).join(side).join(&rel);
                if let Some(p) = path.parent() {
                    fs::create_dir_all(p)?;
                }
                fs::write(&path, v.to_pretty())?;
            }
            n += 1;
        }
    }
    Ok(n)
}

/// A suite-relative file name with no way out of the output folder.
fn safe_relative(file: &str) -> PathBuf {
    file.split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != "." && *c != "..")
        .collect()
}

/// Reads a ratchet: one `fhirVersion/suite/test` per line; `#` starts a
/// comment; blank lines are ignored.
pub fn read_ratchet(path: &Path) -> io::Result<Vec<String>> {
    let text = match fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect())
}

/// What the ratchet says about a set of runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RatchetCheck {
    /// Listed tests that ran and did not pass.
    pub regressed: Vec<String>,
    /// Listed tests that did not run (filtered out, or unknown).
    pub not_run: Vec<String>,
    /// Tests that passed but are not listed: the change that made them
    /// pass must add them, so that they cannot quietly regress later.
    pub unlisted: Vec<String>,
}

pub fn check_ratchet(listed: &[String], reports: &[RunReport]) -> RatchetCheck {
    let results: BTreeMap<&str, &TestResult> = reports
        .iter()
        .flat_map(|r| &r.results)
        .map(|r| (r.id.as_str(), r))
        .collect();
    let mut check = RatchetCheck::default();
    let listed_set: std::collections::BTreeSet<&str> = listed.iter().map(String::as_str).collect();
    for (id, r) in &results {
        if r.passed() && !listed_set.contains(id) {
            check.unlisted.push((*id).to_owned());
        }
    }
    for id in listed {
        match results.get(id.as_str()) {
            Some(r) if r.passed() => {}
            Some(_) => check.regressed.push(id.clone()),
            None => check.not_run.push(id.clone()),
        }
    }
    check
}

/// Rewrites the ratchet with exactly the tests that passed, in run order.
pub fn write_ratchet(path: &Path, reports: &[RunReport]) -> io::Result<usize> {
    let mut text = String::from(
        "# Tests that must keep passing: fhirVersion/suite/test.\n\
         # Written by `txmap conformance --update-ratchet`.\n",
    );
    let mut n = 0;
    for r in reports
        .iter()
        .flat_map(|r| &r.results)
        .filter(|r| r.passed())
    {
        text.push_str(&r.id);
        text.push('\n');
        n += 1;
    }
    if let Some(p) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(p)?;
    }
    fs::write(path, text)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Difference;

    fn result(id: &str, outcome: Outcome) -> TestResult {
        let mut parts = id.split('/');
        let (_, suite, test) = (parts.next(), parts.next().unwrap(), parts.next().unwrap());
        TestResult {
            id: id.into(),
            suite: suite.into(),
            test: test.into(),
            mode: "general".into(),
            operation: "expand".into(),
            outcome,
            expected_http: "2xx".into(),
            http_status: Some(200),
            warnings: vec![],
            lenient: vec![],
            response_file: format!("{suite}/{test}.json"),
            expected: Some(Json::parse("{}").unwrap()),
            actual: Some(Json::parse("{\"a\":1}").unwrap()),
            millis: 1,
        }
    }

    fn report() -> RunReport {
        let d = Difference {
            path: ".a".into(),
            message: "properties differ at : unexpected property a".into(),
            expected: Some("(absent)".into()),
            actual: Some("1".into()),
        };
        RunReport {
            label: "r4".into(),
            endpoint: "http://x/r4".into(),
            fhir_version: Some("4.0.1".into()),
            modes: vec!["general".into()],
            startup_error: None,
            notes: vec![],
            results: vec![
                result("r4/s/ok", Outcome::Pass),
                result("r4/s/bad", Outcome::Fail(d)),
                result("r4/t/err", Outcome::Error("boom".into())),
            ],
        }
    }

    #[test]
    fn lines_and_totals() {
        let rep = report();
        assert_eq!(test_line(&rep.results[0]), "PASS r4/s/ok");
        assert_eq!(
            test_line(&rep.results[1]),
            "FAIL r4/s/bad: at .a: properties differ at : unexpected property a; expected (absent), actual 1"
        );
        assert_eq!(test_line(&rep.results[2]), "FAIL r4/t/err: error: boom");
        let reports = [rep];
        assert_eq!(final_line(&reports), "1 passed, 2 failed");
        let s = summary(&reports);
        assert!(s.contains("  suite s           1/2\n"), "{s}");
        assert!(s.contains("  mode  general     1/3\n"), "{s}");
        let j = report_json(&reports);
        assert_eq!(
            j["runs"][0]["tests"][1]["difference"]["path"].as_str(),
            Some(".a")
        );
        assert_eq!(j["failed"], Json::from(2u64));
    }

    #[test]
    fn ratchet_and_outputs() {
        let dir = std::env::temp_dir().join(format!("txmap-conformance-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let reports = [report()];
        let ratchet = dir.join("ratchet.txt");
        assert!(read_ratchet(&ratchet).unwrap().is_empty());
        fs::create_dir_all(&dir).unwrap();
        fs::write(
            &ratchet,
            "# comment\nr4/s/ok\n\nr4/s/bad  # regressed\nr5/s/ok\n",
        )
        .unwrap();
        let listed = read_ratchet(&ratchet).unwrap();
        let check = check_ratchet(&listed, &reports);
        assert_eq!(check.regressed, ["r4/s/bad"]);
        assert_eq!(check.not_run, ["r5/s/ok"]);
        assert!(check.unlisted.is_empty());
        // A test that passes without being listed is reported.
        let check = check_ratchet(&["r4/s/bad".to_owned()], &reports);
        assert_eq!(check.unlisted, ["r4/s/ok"]);
        assert_eq!(write_ratchet(&ratchet, &reports).unwrap(), 1);
        assert_eq!(read_ratchet(&ratchet).unwrap(), ["r4/s/ok"]);
        assert_eq!(write_failures(&dir.join("out"), &reports).unwrap(), 2);
        assert!(dir.join("out/r4/actual/s/bad.json").is_file());
        assert!(dir.join("out/r4/expected/t/err.json").is_file());
        assert_eq!(safe_relative("../../x/./y.json"), PathBuf::from("x/y.json"));
        fs::remove_dir_all(&dir).unwrap();
    }
}
