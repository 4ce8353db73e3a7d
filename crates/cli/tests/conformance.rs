//! `txmap conformance` end to end, without a server: the runner's own
//! behaviour is tested in txmap-conformance against canned transports;
//! here, the command's arguments, output order, report, ratchet and exit
//! status. Tests that need the HL7 suite skip with a notice when it is
//! absent.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Command, Output};

fn txmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txmap"))
        .args(args)
        .output()
        .unwrap()
}

fn suite_dir() -> Option<PathBuf> {
    let base = std::env::var_os("TX_ECOSYSTEM_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/tx-ecosystem")
        });
    let dir = base.join("tests");
    if dir.join("test-cases.json").is_file() {
        Some(dir)
    } else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} is missing under CI",
            dir.display()
        );
        eprintln!(
            "skipped: {} not found (set TX_ECOSYSTEM_DIR)",
            dir.display()
        );
        None
    }
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn a_missing_suite_is_one_error_line() {
    let out = txmap(&[
        "conformance",
        "--server",
        "http://127.0.0.1:9",
        "--suite-dir",
        "/nonexistent/suite",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("test-cases.json"), "{err}");
}

#[test]
fn an_unreachable_server_fails_every_selected_test_and_ends_with_the_count() {
    let Some(dir) = suite_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let report = tmp.path().join("report.json");
    let ratchet = tmp.path().join("ratchet.txt");
    std::fs::write(&ratchet, "# must pass\nr5/simple-cases/simple-expand-all\n").unwrap();
    let server = format!("http://127.0.0.1:{}", closed_port());
    let bad = txmap(&[
        "conformance",
        "--server",
        &server,
        "--suite-dir",
        dir.to_str().unwrap(),
        "--fhir",
        "r3",
    ]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected r4 or r5"));
    let out = txmap(&[
        "conformance",
        "--server",
        &server,
        "--suite-dir",
        dir.to_str().unwrap(),
        "--fhir",
        "r5",
        "--suite",
        "simple-cases",
        "--report",
        report.to_str().unwrap(),
        "--ratchet",
        ratchet.to_str().unwrap(),
        "--update-ratchet",
    ]);
    assert!(!out.status.success(), "a run that cannot start fails");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    // simple-cases has 18 tests, 3 of them for tx.fhir.org only.
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("FAIL r5/simple-cases/"))
            .count(),
        15,
        "{stdout}"
    );
    assert!(lines[0].contains("error: start-up failed"), "{stdout}");
    assert!(
        stdout.contains("ratchet: r5/simple-cases/simple-expand-all is listed"),
        "{stdout}"
    );
    assert!(stdout.contains("ratchet: not rewritten"), "{stdout}");
    assert_eq!(lines.last(), Some(&"0 passed, 15 failed"), "{stdout}");
    assert!(
        std::fs::read_to_string(&ratchet)
            .unwrap()
            .contains("simple-expand-all")
    );
    let json = std::fs::read_to_string(&report).unwrap();
    assert!(
        json.contains("\"startupError\"") && json.contains("\"failed\": 15"),
        "{json}"
    );
}
