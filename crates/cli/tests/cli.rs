//! The `txmap` command end to end: a synthetic release is generated,
//! imported, verified, inspected and looked up; broken input and broken
//! files give one clear line and a non-zero exit.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use txmap_format::{Container, SectionKind};

fn txmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txmap"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> String {
    let out = txmap(args);
    assert!(
        out.status.success(),
        "txmap {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a command that must fail and returns its stderr, which must be one
/// line.
fn fails(args: &[&str]) -> String {
    let out = txmap(args);
    assert!(!out.status.success(), "txmap {args:?} succeeded");
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "not one line: {err}");
    err
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A small synthetic edition, imported.
fn edition(dir: &Path) -> PathBuf {
    let rf2 = dir.join("rf2");
    let file = dir.join("e.txmap");
    ok(&[
        "synth",
        "--concepts",
        "2000",
        "--seed",
        "5",
        "--out",
        s(&rf2),
    ]);
    ok(&["import", "--rf2", s(&rf2), "--out", s(&file), "--quiet"]);
    file
}

#[test]
fn import_verify_inspect_lookup() {
    let dir = tempfile::tempdir().unwrap();
    let rf2 = dir.path().join("rf2");
    ok(&[
        "synth",
        "--concepts",
        "2000",
        "--seed",
        "5",
        "--out",
        s(&rf2),
    ]);
    let file = dir.path().join("e.txmap");
    let report: serde_json::Value = serde_json::from_str(&ok(&[
        "import",
        "--rf2",
        s(&rf2),
        "--out",
        s(&file),
        "--json",
    ]))
    .unwrap();
    assert_eq!(report["counts"]["concepts"], 2000);
    assert!(report["peak_rss"].as_u64().unwrap() > 0);
    assert!(report["stages"].as_array().unwrap().len() >= 6);
    assert!(ok(&["verify", s(&file)]).contains(": ok"));
    let inspect: serde_json::Value =
        serde_json::from_str(&ok(&["inspect", s(&file), "--json"])).unwrap();
    assert_eq!(inspect["concepts"], 2000);
    assert_eq!(inspect["status"], "unpublished");
    assert!(
        inspect["version_uri"]
            .as_str()
            .unwrap()
            .starts_with("http://snomed.info/xsct/900000000000207008/version/")
    );
    let lookup = ok(&["lookup", s(&file), "404684003"]);
    assert!(lookup.contains("Clinical finding"), "{lookup}");
    assert!(lookup.contains("is a 138875005"), "{lookup}");
    let err = fails(&["lookup", s(&file), "22298006"]);
    assert!(err.contains("no concept 22298006"), "{err}");
}

#[test]
fn malformed_rows_stop_the_import_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let rf2 = dir.path().join("rf2");
    ok(&[
        "synth",
        "--concepts",
        "500",
        "--seed",
        "1",
        "--out",
        s(&rf2),
    ]);
    // Break the check digit of the third concept row (line 4).
    let concepts = walk(&rf2)
        .into_iter()
        .find(|p| s(p).contains("sct2_Concept_"))
        .unwrap();
    let text = std::fs::read_to_string(&concepts).unwrap();
    let mut lines: Vec<String> = text.split("\r\n").map(str::to_owned).collect();
    let id = lines[3].split('\t').next().unwrap().to_owned();
    let last = id.chars().last().unwrap().to_digit(10).unwrap();
    let bad = format!("{}{}", &id[..id.len() - 1], (last + 1) % 10);
    lines[3] = lines[3].replacen(&id, &bad, 1);
    std::fs::write(&concepts, lines.join("\r\n")).unwrap();

    let out = dir.path().join("x.txmap");
    let err = fails(&["import", "--rf2", s(&rf2), "--out", s(&out), "--quiet"]);
    assert!(
        err.contains("sct2_Concept_") && err.contains(":4:") && err.contains("check digit"),
        "{err}"
    );
    assert!(!out.exists(), "a failed import left {out:?}");
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        1,
        "temporary files left behind: {leftovers:?}"
    );

    let lenient = |more: &[&str]| -> serde_json::Value {
        let mut args = vec![
            "import",
            "--rf2",
            s(&rf2),
            "--out",
            s(&out),
            "--lenient",
            "--json",
        ];
        args.extend_from_slice(more);
        serde_json::from_str(&ok(&args)).unwrap()
    };
    let report = lenient(&[]);
    // The bad row, then every row that referred to the concept it named.
    assert!(report["skipped_rows"].as_u64().unwrap() > 1);
    let first = report["first_problems"][0].as_str().unwrap();
    assert!(
        first.contains(":4:") && first.contains("check digit"),
        "{first}"
    );
    assert_eq!(report["counts"]["concepts"], 499);
    // One thread reports the same problems in the same order.
    let one = lenient(&["--threads", "1"]);
    assert_eq!(one["first_problems"], report["first_problems"]);
    assert_eq!(one["skipped_rows"], report["skipped_rows"]);
    let stages = |r: &serde_json::Value| {
        r["stages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(stages(&one), stages(&report));
}

#[test]
fn not_a_release_and_bad_options() {
    let dir = tempfile::tempdir().unwrap();
    let err = fails(&[
        "import",
        "--rf2",
        s(dir.path()),
        "--out",
        s(&dir.path().join("x")),
    ]);
    assert!(err.contains("no RF2 Snapshot files"), "{err}");
    let err = fails(&[
        "import",
        "--rf2",
        "/nonexistent/rf2",
        "--out",
        s(&dir.path().join("x")),
    ]);
    assert!(err.contains("/nonexistent/rf2"), "{err}");
    let out = txmap(&["import", "--rf2", "x", "--out", "y", "--max-memory", "lots"]);
    assert!(!out.status.success());
}

#[test]
fn corrupt_files_give_their_own_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = edition(dir.path());
    let bytes = std::fs::read(&file).unwrap();
    let broken = dir.path().join("broken.txmap");
    let check = |bytes: &[u8], expect: &str, cmd: &str| {
        std::fs::write(&broken, bytes).unwrap();
        let err = fails(&[cmd, s(&broken)]);
        assert!(
            err.contains("broken.txmap") && err.contains(expect),
            "{expect}: {err}"
        );
    };

    check(&bytes[..bytes.len() / 2], "truncated", "inspect");
    check(&bytes[..100], "truncated", "verify");
    check(&bytes[..10], "too short", "verify");
    let mut foreign = bytes.clone();
    foreign[..4].copy_from_slice(b"PK\x03\x04");
    check(&foreign, "not a txmap edition file", "inspect");
    let mut future = bytes.clone();
    // The next major version (the u16 after the 8-byte magic), minor 0.
    let next = txmap_format::FORMAT_MAJOR + 1;
    future[8..10].copy_from_slice(&next.to_le_bytes());
    future[10..12].copy_from_slice(&[0, 0]);
    check(
        &future,
        &format!("format {next}.0 is not supported"),
        "inspect",
    );

    // One flipped byte in each section: `verify` names the section.
    let c = Container::open(&bytes).unwrap();
    for e in c.entries() {
        if e.len.get() == 0 {
            continue;
        }
        let name = SectionKind::describe(e.kind.get());
        for at in [0, e.len.get() / 2, e.len.get() - 1] {
            let mut b = bytes.clone();
            b[(e.offset.get() + at) as usize] ^= 0x10;
            std::fs::write(&broken, &b).unwrap();
            let out = txmap(&["verify", s(&broken)]);
            assert!(!out.status.success(), "flip in {name} at {at} not caught");
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(err.contains(&name), "flip in {name}: {err}");
        }
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// `txmap inspect FILE | head -1`: the reader goes after the first line;
/// the command ends quietly with 0, without a panic.
#[test]
fn a_closed_stdout_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let file = edition(dir.path());
    for args in [
        vec!["inspect", s(&file)],
        vec!["inspect", "--json", s(&file)],
        vec!["verify", s(&file)],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_txmap"))
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // Closed before the command writes: its first write fails.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert!(out.status.success(), "{args:?}: {:?} {err}", out.status);
    }
}
