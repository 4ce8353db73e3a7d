//! The query commands (`ecl`, `search`, `hierarchy`, `history`, `diff`) on
//! synthetic editions, with expected answers read from the RF2 files the
//! editions were imported from.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const IS_A: &str = "116680003";
const CLINICAL_FINDING: u64 = 404684003;

fn txmap(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_txmap"))
        .args(args)
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn status(o: &Output) -> i32 {
    o.status.code().unwrap()
}

/// The first column of every line.
fn codes(text: &str) -> BTreeSet<u64> {
    text.lines()
        .map(|l| l.split('\t').next().unwrap().parse().unwrap())
        .collect()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

struct Release {
    file: PathBuf,
    rf2: PathBuf,
}

fn release(dir: &Path, concepts: usize, seed: u64) -> Release {
    let rf2 = dir.join(format!("rf2-{concepts}-{seed}"));
    let file = dir.join(format!("e-{concepts}-{seed}.txmap"));
    let (c, sd) = (concepts.to_string(), seed.to_string());
    for args in [
        vec!["synth", "--concepts", &c, "--seed", &sd, "--out", s(&rf2)],
        vec!["import", "--rf2", s(&rf2), "--out", s(&file), "--quiet"],
    ] {
        let out = txmap(&args);
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    Release { file, rf2 }
}

impl Release {
    /// The rows of the first RF2 file whose name starts with `prefix`.
    fn rows(&self, prefix: &str) -> Vec<Vec<String>> {
        fn find(dir: &Path, prefix: &str) -> Option<PathBuf> {
            for e in std::fs::read_dir(dir).ok()? {
                let p = e.ok()?.path();
                if p.is_dir() {
                    if let Some(f) = find(&p, prefix) {
                        return Some(f);
                    }
                } else if p.file_name()?.to_str()?.starts_with(prefix) {
                    return Some(p);
                }
            }
            None
        }
        let file = find(&self.rf2, prefix).unwrap();
        std::fs::read_to_string(file)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split('\t').map(str::to_owned).collect())
            .collect()
    }

    /// Active is-a parents by concept.
    fn parents(&self) -> BTreeMap<u64, BTreeSet<u64>> {
        let mut out: BTreeMap<u64, BTreeSet<u64>> = BTreeMap::new();
        for r in self.rows("sct2_Relationship_Snapshot") {
            if r[2] == "1" && r[7] == IS_A {
                out.entry(r[4].parse().unwrap())
                    .or_default()
                    .insert(r[5].parse().unwrap());
            }
        }
        out
    }

    /// `concept` and everything below it.
    fn descendants_or_self(&self, concept: u64) -> BTreeSet<u64> {
        let mut children: BTreeMap<u64, Vec<u64>> = BTreeMap::new();
        for (c, ps) in self.parents() {
            for p in ps {
                children.entry(p).or_default().push(c);
            }
        }
        let (mut seen, mut stack) = (BTreeSet::from([concept]), vec![concept]);
        while let Some(c) = stack.pop() {
            for &k in children.get(&c).into_iter().flatten() {
                if seen.insert(k) {
                    stack.push(k);
                }
            }
        }
        seen
    }
}

#[test]
fn ecl_lists_counts_and_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let r = release(dir.path(), 2000, 5);
    let f = s(&r.file);
    let expected = r.descendants_or_self(CLINICAL_FINDING);

    let out = txmap(&["ecl", f, "<< 404684003 |Clinical finding|"]);
    assert_eq!(status(&out), 0);
    assert_eq!(codes(&stdout(&out)), expected);
    // Every line is code TAB the concept's preferred term.
    assert!(stdout(&out).lines().all(|l| l.split('\t').count() == 2));

    // The long syntax is the same query.
    let long = txmap(&["ecl", f, "descendantOrSelfOf 404684003"]);
    assert_eq!(stdout(&long), stdout(&out));

    let count = txmap(&["ecl", f, "<< 404684003", "--count"]);
    assert_eq!(stdout(&count).trim(), expected.len().to_string());
    let json = txmap(&["ecl", f, "<< 404684003", "--json", "--limit", "3"]);
    let lines: Vec<serde_json::Value> = stdout(&json)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert!(lines.iter().all(|v| {
        let code: u64 = v["code"].as_str().unwrap().parse().unwrap();
        expected.contains(&code) && v["display"].is_string()
    }));

    // Nothing found: exit 1, no output.
    let none = txmap(&["ecl", f, "<< 404684003 MINUS << 404684003"]);
    assert_eq!((status(&none), stdout(&none).as_str()), (1, ""));

    // A bad expression: exit 2, one line with the position.
    let bad = txmap(&["ecl", f, "<< 404684003 AND"]);
    assert_eq!(status(&bad), 2);
    let err = String::from_utf8(bad.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("line 1, column 17"), "{err}");
    // An unknown concept, by its column.
    let unknown = txmap(&["ecl", f, "<< 404684003 OR 123456001"]);
    assert_eq!(status(&unknown), 2);
    let err = String::from_utf8(unknown.stderr).unwrap();
    assert!(
        err.contains("column 17") && err.contains("123456001"),
        "{err}"
    );
    // A file that is not there.
    let missing = txmap(&["ecl", s(&dir.path().join("nope.txmap")), "*"]);
    assert_eq!(status(&missing), 2);
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let dir = tempfile::tempdir().unwrap();
    // Big enough that its output (about 300 KB) overflows a pipe's buffer.
    let r = release(dir.path(), 8000, 5);
    let mut child = Command::new(env!("CARGO_BIN_EXE_txmap"))
        .args(["ecl", s(&r.file), "*"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.contains('\t'));
    // The reader is dropped: the rest of the output meets a closed pipe.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{:?}: {err}", out.status);
    assert!(err.is_empty(), "{err}");
}

#[test]
fn hierarchy_search_and_history() {
    let dir = tempfile::tempdir().unwrap();
    let r = release(dir.path(), 2000, 5);
    let f = s(&r.file);
    let parents = r.parents();
    let (&child, ps) = parents.iter().find(|(_, ps)| ps.len() > 1).unwrap();
    let out = txmap(&["hierarchy", f, "parents", &child.to_string()]);
    assert_eq!(codes(&stdout(&out)), *ps);
    let below = txmap(&["hierarchy", f, "descendants", "404684003"]);
    let mut expected = r.descendants_or_self(CLINICAL_FINDING);
    expected.remove(&CLINICAL_FINDING);
    assert_eq!(codes(&stdout(&below)), expected);
    let bad = txmap(&["hierarchy", f, "cousins", "404684003"]);
    assert_eq!(status(&bad), 2);

    // Search: every hit's matched term has a word starting with the query.
    let term = r
        .rows("sct2_Description_Snapshot")
        .into_iter()
        .find(|d| d[2] == "1" && d[7].len() > 12)
        .unwrap()[7]
        .clone();
    let word = term.split(' ').next().unwrap().to_lowercase();
    let prefix: String = word.chars().take(4).collect();
    let hits = txmap(&["search", f, &prefix, "--limit", "50"]);
    assert_eq!(status(&hits), 0);
    let text = stdout(&hits);
    assert!(!text.is_empty());
    for l in text.lines() {
        let matched = l.split('\t').nth(2).unwrap().to_lowercase();
        assert!(
            matched
                .split(|c: char| !c.is_alphanumeric())
                .any(|w| w.starts_with(&prefix)),
            "{l}"
        );
    }
    let nothing = txmap(&["search", f, "zzzzqqq"]);
    assert_eq!(status(&nothing), 1);

    // History, both ways, as the association refset's rows say.
    let row = r
        .rows("der2_cRefset_AssociationSnapshot")
        .into_iter()
        .find(|a| a[2] == "1")
        .unwrap();
    let (refset, source, target) = (&row[4], &row[5], &row[6]);
    let from_source = stdout(&txmap(&["history", f, source]));
    assert!(
        from_source
            .lines()
            .any(|l| l.starts_with(&format!("to\t{refset}\t"))
                && l.contains(&format!("\t{target}\t"))),
        "{from_source}"
    );
    let to_target = stdout(&txmap(&["history", f, target, "--json"]));
    assert!(
        to_target.lines().any(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["direction"] == "from"
                && v["code"] == source.as_str()
                && v["refset"] == refset.as_str()
        }),
        "{to_target}"
    );
}

#[test]
fn diff_between_two_editions() {
    let dir = tempfile::tempdir().unwrap();
    let (old, new) = (release(dir.path(), 2000, 5), release(dir.path(), 2400, 6));
    let expr = "<< 404684003";
    let (before, after) = (
        old.descendants_or_self(CLINICAL_FINDING),
        new.descendants_or_self(CLINICAL_FINDING),
    );
    let out = txmap(&["diff", s(&old.file), s(&new.file), expr]);
    assert_eq!(status(&out), 1, "the editions differ");
    let (mut gained, mut lost) = (BTreeSet::new(), BTreeSet::new());
    for l in stdout(&out).lines() {
        let mut f = l.split('\t');
        let (sign, code) = (f.next().unwrap(), f.next().unwrap().parse::<u64>().unwrap());
        match sign {
            "+" => gained.insert(code),
            "-" => lost.insert(code),
            other => panic!("{other}"),
        };
    }
    assert_eq!(gained, &after - &before);
    assert_eq!(lost, &before - &after);
    // An edition against itself: nothing, exit 0.
    let same = txmap(&["diff", s(&old.file), s(&old.file), expr]);
    assert_eq!((status(&same), stdout(&same).as_str()), (0, ""));
    let bad = txmap(&["diff", s(&old.file), s(&new.file), "<<"]);
    assert_eq!(status(&bad), 2);
}
