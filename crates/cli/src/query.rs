//! Questions a data engineer asks of one edition file, or two: `ecl`,
//! `search`, `hierarchy`, `history` and `diff`.
//!
//! Output is for pipes first: one line per concept, tab-separated (`code`,
//! then the preferred term, and whatever the command adds), or with
//! `--json` one JSON object per line, so that `jq`, `cut` and `sort` work
//! on either. A closed pipe (`| head`) ends the command quietly. The exit
//! status follows grep and diff: 0 when something was found (`diff`: the
//! sets are equal), 1 when nothing was (`diff`: they differ), 2 on an error,
//! which is one line naming the file or the position in the expression.

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use clap::{Args, ValueEnum};
use serde_json::json;
use txmap_ecl_eval::{Budget, EvalError};
use txmap_load::EditionBytes;
use txmap_store::{Edition, SearchOptions};

type Ed = Edition<EditionBytes>;

/// What a query command found: the process's exit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Found {
    /// Something (`diff`: no difference): exit 0.
    Yes,
    /// Nothing (`diff`: a difference): exit 1.
    No,
}

impl Found {
    fn of(any: bool) -> Found {
        if any { Found::Yes } else { Found::No }
    }
}

#[derive(Debug, Args)]
pub struct Output {
    /// One JSON object per line instead of tab-separated text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
pub struct EclArgs {
    /// The edition file.
    file: PathBuf,
    /// The expression constraint (brief or long syntax).
    expression: String,
    /// Print only the number of concepts.
    #[arg(long)]
    count: bool,
    /// Print at most this many concepts (the count is of all of them).
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Give up after this many seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
    #[command(flatten)]
    out: Output,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    file: PathBuf,
    /// Words, each a prefix of a word of the term (case and accents do
    /// not matter): `diab mel`.
    text: String,
    /// At most this many concepts.
    #[arg(long, value_name = "N", default_value_t = 20)]
    limit: usize,
    /// Also inactive descriptions and concepts.
    #[arg(long)]
    inactive: bool,
    #[command(flatten)]
    out: Output,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Direction {
    Parents,
    Children,
    Ancestors,
    Descendants,
}

#[derive(Debug, Args)]
pub struct HierarchyArgs {
    file: PathBuf,
    #[arg(value_enum)]
    direction: Direction,
    code: u64,
    #[command(flatten)]
    out: Output,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    file: PathBuf,
    code: u64,
    #[command(flatten)]
    out: Output,
}

#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The older edition file.
    old: PathBuf,
    /// The newer edition file.
    new: PathBuf,
    /// The expression constraint evaluated in both.
    expression: String,
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    timeout: u64,
    #[command(flatten)]
    out: Output,
}

/// Lines to stdout, buffered; a closed pipe is not an error.
struct Lines {
    out: BufWriter<io::StdoutLock<'static>>,
    json: bool,
    closed: bool,
}

impl Lines {
    fn new(json: bool) -> Lines {
        Lines {
            out: BufWriter::new(io::stdout().lock()),
            json,
            closed: false,
        }
    }

    /// Writes `fields` tab-separated, or `object` as one JSON line.
    fn row(&mut self, fields: &[&str], object: impl FnOnce() -> serde_json::Value) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        let written = if self.json {
            writeln!(self.out, "{}", object())
        } else {
            writeln!(self.out, "{}", fields.join("\t"))
        };
        self.check(written)
    }

    fn check(&mut self, r: io::Result<()>) -> Result<()> {
        match r {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            r => Ok(r.context("writing to stdout")?),
        }
    }

    fn finish(mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        let r = self.out.flush();
        self.check(r)
    }
}

fn open(file: &Path) -> Result<Ed> {
    crate::commands::open(file)
}

/// The concept `code` of `e`, or an error naming the file.
fn concept(e: &Ed, file: &Path, code: u64) -> Result<u32> {
    e.ordinal(code).ok_or_else(|| {
        anyhow!(
            "{}: no concept {code} in {}",
            file.display(),
            e.identity().version_uri
        )
    })
}

fn term(e: &Ed, o: u32) -> Result<&str> {
    Ok(e.preferred_term(o)?.unwrap_or(""))
}

/// A line per concept: code and preferred term; stops at a closed pipe.
fn concept_rows(out: &mut Lines, e: &Ed, concepts: impl Iterator<Item = u32>) -> Result<()> {
    for o in concepts {
        let code = e.sctid(o)?.to_string();
        let display = term(e, o)?;
        out.row(
            &[&code, display],
            || json!({ "code": code, "display": display }),
        )?;
        if out.closed {
            break;
        }
    }
    Ok(())
}

/// Parses and evaluates `text` over `e`; errors are one line with the
/// position in the expression.
fn evaluate(e: &Ed, file: &Path, text: &str, timeout: u64) -> Result<Vec<u32>> {
    let expr = txmap_ecl::parse(text).map_err(|err| anyhow!("ECL: {err}"))?;
    let budget = Budget {
        deadline: Some(Instant::now() + Duration::from_secs(timeout)),
        ..Budget::default()
    };
    txmap_ecl_eval::evaluate(e, &expr, &budget).map_err(|err| {
        let at = |span: txmap_ecl::Span| {
            let column = text
                .get(..span.start as usize)
                .map_or(0, |s| s.chars().count())
                + 1;
            format!("column {column}")
        };
        match err {
            EvalError::UnknownConcept { id, span } => anyhow!(
                "ECL at {}: no concept {id} in {} ({})",
                at(span),
                e.identity().version_uri,
                file.display()
            ),
            EvalError::NotSupported { what, span } => {
                anyhow!("ECL at {}: {what} is not supported", at(span))
            }
            EvalError::TooCostly { why } => anyhow!("ECL: {why} (see --timeout)"),
            EvalError::Store(s) => anyhow!("{}: {s}", file.display()),
        }
    })
}

pub fn ecl(a: EclArgs) -> Result<Found> {
    let e = open(&a.file)?;
    let concepts = evaluate(&e, &a.file, &a.expression, a.timeout)?;
    let mut out = Lines::new(a.out.json);
    if a.count {
        let n = concepts.len().to_string();
        out.row(&[&n], || json!({ "count": concepts.len() }))?;
    } else {
        let limit = a.limit.unwrap_or(usize::MAX);
        concept_rows(&mut out, &e, concepts.iter().copied().take(limit))?;
    }
    out.finish()?;
    Ok(Found::of(!concepts.is_empty()))
}

pub fn search(a: SearchArgs) -> Result<Found> {
    let e = open(&a.file)?;
    let options = SearchOptions {
        include_inactive: a.inactive,
        best_per_concept: true,
        ..SearchOptions::default()
    };
    let hits = e
        .search_with(&a.text, a.limit, &options)
        .with_context(|| format!("searching {}", a.file.display()))?;
    let mut out = Lines::new(a.out.json);
    for h in &hits {
        let code = e.sctid(h.concept_ordinal)?.to_string();
        let display = term(&e, h.concept_ordinal)?;
        let matched = h.description.term;
        out.row(&[&code, display, matched], || {
            json!({ "code": code, "display": display, "matched": matched,
                    "active": h.description.active })
        })?;
    }
    out.finish()?;
    Ok(Found::of(!hits.is_empty()))
}

pub fn hierarchy(a: HierarchyArgs) -> Result<Found> {
    let e = open(&a.file)?;
    let o = concept(&e, &a.file, a.code)?;
    let related: Vec<u32> = match a.direction {
        Direction::Parents => e.parents(o)?.iter().collect(),
        Direction::Children => e.children(o)?.iter().collect(),
        Direction::Ancestors => e.ancestors(o)?.iter().collect(),
        Direction::Descendants => e.descendants(o)?.iter().collect(),
    };
    let mut out = Lines::new(a.out.json);
    concept_rows(&mut out, &e, related.iter().copied())?;
    out.finish()?;
    Ok(Found::of(!related.is_empty()))
}

/// Both directions of the historical associations: what `code` was
/// replaced by (or is the same as, …), and what was replaced by it.
pub fn history(a: HistoryArgs) -> Result<Found> {
    let e = open(&a.file)?;
    let o = concept(&e, &a.file, a.code)?;
    let label = |id: u64| -> Result<&str> {
        Ok(match e.ordinal(id) {
            Some(o) => term(&e, o)?,
            None => "",
        })
    };
    let mut rows: Vec<(&str, u64, u64)> = Vec::new();
    for x in e.associations(a.code)? {
        rows.push(("to", x.refset, x.target));
    }
    for x in e.associations_to(o)? {
        rows.push(("from", x.refset, x.source));
    }
    let mut out = Lines::new(a.out.json);
    for &(direction, refset, other) in &rows {
        let (refset_code, other_code) = (refset.to_string(), other.to_string());
        let (association, display) = (label(refset)?, label(other)?);
        out.row(
            &[direction, &refset_code, association, &other_code, display],
            || {
                json!({ "direction": direction, "refset": refset_code,
                        "association": association, "code": other_code, "display": display })
            },
        )?;
    }
    out.finish()?;
    Ok(Found::of(!rows.is_empty()))
}

/// What `expression` gains (`+`) and loses (`-`) from `old` to `new`, by
/// SCTID (ordinals differ between editions).
pub fn diff(a: DiffArgs) -> Result<Found> {
    let (old, new) = (open(&a.old)?, open(&a.new)?);
    let codes = |e: &Ed, file: &Path| -> Result<Vec<(u64, u32)>> {
        let mut v = evaluate(e, file, &a.expression, a.timeout)?
            .into_iter()
            .map(|o| Ok((e.sctid(o)?, o)))
            .collect::<Result<Vec<_>>>()?;
        v.sort_unstable();
        Ok(v)
    };
    let (before, after) = (codes(&old, &a.old)?, codes(&new, &a.new)?);
    let (mut i, mut j) = (0, 0);
    let mut changes: Vec<(&str, &Ed, u64, u32)> = Vec::new();
    while i < before.len() || j < after.len() {
        match (before.get(i), after.get(j)) {
            (Some(b), Some(n)) if b.0 == n.0 => (i, j) = (i + 1, j + 1),
            (Some(b), Some(n)) if b.0 > n.0 => {
                changes.push(("+", &new, n.0, n.1));
                j += 1;
            }
            (Some(b), _) => {
                changes.push(("-", &old, b.0, b.1));
                i += 1;
            }
            (None, Some(n)) => {
                changes.push(("+", &new, n.0, n.1));
                j += 1;
            }
            (None, None) => break,
        }
    }
    let mut out = Lines::new(a.out.json);
    for &(sign, e, code, o) in &changes {
        let code = code.to_string();
        let display = term(e, o)?;
        out.row(&[sign, &code, display], || {
            json!({ "change": if sign == "+" { "added" } else { "removed" },
                    "code": code, "display": display })
        })?;
    }
    out.finish()?;
    Ok(Found::of(changes.is_empty()))
}
