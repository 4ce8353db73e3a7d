//! Each case is `=== name`, the ECL (any number of lines), `---`, and the
//! expected result: the tree's dump for `valid.txt`, the error's message
//! for `invalid.txt`. `UPDATE_GOLDEN=1 cargo test` rewrites the expected
//! results; read the diff before committing it, since an expected result is
//! a claim about ECL, not a copy of the output.

use std::fmt::Write;
use std::path::PathBuf;

use crate::dump::dump;

struct Case {
    name: String,
    input: String,
    expected: String,
}

fn path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(file)
}

/// The text before the first case, and the cases.
fn read(file: &str) -> (String, Vec<Case>) {
    let text = std::fs::read_to_string(path(file)).unwrap();
    let mut chunks = text.split("\n=== ");
    let header = chunks.next().unwrap().to_string();
    let cases = chunks
        .map(|chunk| {
            let (name, rest) = chunk.split_once('\n').unwrap();
            let (input, expected) = rest
                .split_once("\n---\n")
                .unwrap_or_else(|| panic!("{file}: case {name} has no `---`"));
            Case {
                name: name.to_string(),
                input: input.to_string(),
                expected: expected.trim().to_string(),
            }
        })
        .collect();
    (header, cases)
}

fn check(file: &str, actual: impl Fn(&Case) -> String) -> usize {
    let (header, cases) = read(file);
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut out = header;
    let mut failures = String::new();
    for case in &cases {
        let got = actual(case);
        if got != case.expected {
            writeln!(
                failures,
                "{file}: {}\n  input:    {}\n  expected: {}\n  actual:   {got}",
                case.name, case.input, case.expected
            )
            .unwrap();
        }
        let expected = if update { &got } else { &case.expected };
        write!(
            out,
            "\n=== {}\n{}\n---\n{expected}\n",
            case.name, case.input
        )
        .unwrap();
    }
    if update {
        std::fs::write(path(file), out.trim_end().to_string() + "\n").unwrap();
    } else {
        assert!(failures.is_empty(), "{failures}");
    }
    cases.len()
}

#[test]
fn valid() {
    let n = check("valid.txt", |case| match txmap_ecl::parse(&case.input) {
        Ok(ast) => {
            // The printed form parses back to the same tree, and printing
            // is a fixed point.
            let printed = txmap_ecl::print(&ast);
            let again = txmap_ecl::parse(&printed).unwrap_or_else(|e| {
                panic!("{}: printed `{printed}` does not parse: {e}", case.name)
            });
            assert_eq!(again, ast, "{}: printed as `{printed}`", case.name);
            assert_eq!(txmap_ecl::print(&again), printed, "{}", case.name);
            dump(&ast)
        }
        Err(e) => format!("ERROR {e}"),
    });
    assert!(n >= 80, "{n} valid cases");
}

#[test]
fn invalid() {
    let n = check("invalid.txt", |case| match txmap_ecl::parse(&case.input) {
        Ok(ast) => format!("PARSED {}", dump(&ast)),
        Err(e) => e.to_string(),
    });
    assert!(n >= 25, "{n} invalid cases");
}

/// The printed forms of a few inputs, checked by eye once.
#[test]
fn canonical_printing() {
    for (input, printed) in [
        (
            "<<404684003|Clinical finding|",
            "<< 404684003 |Clinical finding|",
        ),
        (
            "<  19829001 :116676008 =  79654002,363698007=<<39057004",
            "< 19829001 : 116676008 = 79654002, 363698007 = << 39057004",
        ),
        (
            "(<< 19829001 or << 301867009) minus < 19829001",
            "(<< 19829001 OR << 301867009) MINUS < 19829001",
        ),
        (
            "< 404684003 : [1..*] { 363698007 = << 39057004 }",
            "< 404684003 : [1..*] { 363698007 = << 39057004 }",
        ),
        (
            "< 404684003 : (363698007 = * or 116676008 = *), 246075003 = *",
            "< 404684003 : (363698007 = * OR 116676008 = *), 246075003 = *",
        ),
        (
            "< 56265001 {{ term = \"heart\", language = EN }}",
            "< 56265001 {{ D term = \"heart\", language = EN }}",
        ),
        (
            "^ 734138000 {{ m active = 0 }} {{+history-min}}",
            "^ 734138000 {{ M active = false }} {{ + HISTORY-MIN }}",
        ),
        (
            "< 27658006 : 411116001 >= #10.5",
            "< 27658006 : 411116001 >= #10.5",
        ),
    ] {
        assert_eq!(txmap_ecl::print(&txmap_ecl::parse(input).unwrap()), printed);
    }
}
