//! ECL evaluation benchmark (issue 6): a corpus of expression constraints
//! evaluated against an edition, one at a time, each under the server's
//! budget.
//!
//! The corpus is a text file, one expression per line; `#` starts a
//! comment line and `# category: NAME …` starts a category, which the
//! following lines belong to (see `bench/ecl-corpus.txt`). Every line must
//! parse: a corpus line that does not is a broken benchmark, not a
//! measurement, so [`parse_corpus`] fails on it.
//!
//! Each expression is evaluated `runs` times with [`txmap_ecl_eval::evaluate`],
//! each run with a fresh [`Budget`] (deadline `now + budget`, the server's
//! work cap), and the median time is kept. An expression whose first run
//! does not answer (too costly, not supported, an error) is not run again:
//! its outcome does not depend on the run, and a too-costly one would only
//! spend the budget again. Times cover `evaluate` alone (the reference
//! check and the evaluation), or with `with_parse` the parse of the text
//! and `evaluate`; parsing is also timed once over the whole corpus. The
//! edition should be warm: [`warm`] reads it through once (`verify`,
//! which checksums every section) before timing, and `warmup` untimed
//! evaluations of each expression may come before its timed ones (a first
//! run after other expressions finds its lists out of the CPU caches, and
//! is the slowest by some times).
//!
//! The summary is over the answered expressions' medians: median, p95
//! (nearest rank) and max, overall and per category, with the median
//! result size. No `unsafe` here (forbidden for this module): it is a
//! timing loop around the safe APIs of the store and the evaluator, and the
//! edition is mapped by `txmap-load`.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use txmap_ecl::Expr;
use txmap_ecl_eval::{Budget, EvalError};
use txmap_store::Edition;

use crate::BenchError;
use crate::report::percentile;

/// One expression of the corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct CorpusEntry {
    /// 1-based line in the corpus file.
    pub line: usize,
    pub category: String,
    pub text: String,
}

/// Reads a corpus: blank lines and `#` comments skipped, `# category:
/// NAME` (the first word after the colon) naming the category of the lines
/// after it (`uncategorised` before the first).
pub fn read_corpus(text: &str) -> Vec<CorpusEntry> {
    let mut category = "uncategorised".to_owned();
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(comment) = line.strip_prefix('#') {
            if let Some(rest) = comment.trim_start().strip_prefix("category:")
                && let Some(name) = rest.split_whitespace().next()
            {
                category = name.to_owned();
            }
            continue;
        }
        out.push(CorpusEntry {
            line: i + 1,
            category: category.clone(),
            text: line.to_owned(),
        });
    }
    out
}

/// Parses every entry, timing the whole pass. Fails listing every line
/// that does not parse.
pub fn parse_corpus(corpus: &[CorpusEntry]) -> Result<(Vec<Expr>, Duration), BenchError> {
    let start = Instant::now();
    let parsed: Vec<_> = corpus.iter().map(|e| txmap_ecl::parse(&e.text)).collect();
    let elapsed = start.elapsed();
    let mut exprs = Vec::with_capacity(parsed.len());
    let mut errors = Vec::new();
    for (entry, p) in corpus.iter().zip(parsed) {
        match p {
            Ok(e) => exprs.push(e),
            Err(e) => errors.push(format!("line {}: {}: {e}", entry.line, entry.text)),
        }
    }
    if errors.is_empty() {
        Ok((exprs, elapsed))
    } else {
        Err(BenchError::new(format!(
            "{} corpus line(s) do not parse:\n{}",
            errors.len(),
            errors.join("\n")
        )))
    }
}

/// Reads the whole edition once (checking every section's checksum), so
/// that a mapped file is in the page cache before anything is timed.
pub fn warm<B: AsRef<[u8]>>(ed: &Edition<B>) -> Result<(), BenchError> {
    ed.verify(|_| {})
        .map_err(|e| BenchError::new(format!("reading the edition through: {e}")))
}

/// Runs and limits.
#[derive(Clone, Debug)]
pub struct EclOptions {
    /// Timed evaluations per answered expression (the median is kept).
    pub runs: usize,
    /// Whether each timed run parses the expression's text too, as a
    /// request does (and as a peer that reports `parse + eval` is timed).
    pub with_parse: bool,
    /// Untimed evaluations of each expression before its timed ones: a
    /// comparison whose other side answers each expression once untimed
    /// first (bench/ecl_peer.py's peer) gives txmap the same.
    pub warmup: usize,
    /// Wall-clock budget of one evaluation.
    pub budget: Duration,
    /// Work cap of one evaluation (the server's `ecl_max_work`).
    pub max_work: u64,
}

impl Default for EclOptions {
    fn default() -> Self {
        EclOptions {
            runs: 5,
            with_parse: false,
            warmup: 0,
            budget: Duration::from_secs(1),
            max_work: 50_000_000,
        }
    }
}

/// How one expression ended.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The number of concepts selected.
    Answered(usize),
    TooCostly(String),
    NotSupported(String),
    Error(String),
}

impl Outcome {
    /// `answered`, `too-costly`, `not-supported`, `error`.
    pub fn kind(&self) -> &'static str {
        match self {
            Outcome::Answered(_) => "answered",
            Outcome::TooCostly(_) => "too-costly",
            Outcome::NotSupported(_) => "not-supported",
            Outcome::Error(_) => "error",
        }
    }
}

/// One expression's result.
#[derive(Clone, Debug, PartialEq)]
pub struct ExprResult {
    pub entry: CorpusEntry,
    pub outcome: Outcome,
    /// Every timed run, in nanoseconds (one if the first did not answer).
    pub runs_ns: Vec<u64>,
    pub median_ns: u64,
}

/// The whole run.
#[derive(Clone, Debug)]
pub struct EclReport {
    pub options: EclOptions,
    /// Parsing the whole corpus once.
    pub parse_total: Duration,
    pub results: Vec<ExprResult>,
}

/// Evaluates every expression of `corpus` (parsed as `exprs`, in the same
/// order). `progress` is called after each expression.
pub fn run<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    corpus: &[CorpusEntry],
    exprs: &[Expr],
    parse_total: Duration,
    options: &EclOptions,
    mut progress: impl FnMut(&ExprResult),
) -> Result<EclReport, BenchError> {
    if corpus.len() != exprs.len() {
        return Err(BenchError::new("corpus and parsed expressions differ"));
    }
    let runs = options.runs.max(1);
    let mut results = Vec::with_capacity(corpus.len());
    for (entry, expr) in corpus.iter().zip(exprs) {
        let mut runs_ns = Vec::with_capacity(runs);
        let mut outcome = None;
        for _ in 0..options.warmup {
            let budget = Budget {
                deadline: Some(Instant::now() + options.budget),
                max_work: options.max_work,
            };
            if txmap_ecl_eval::evaluate(ed, expr, &budget).is_err() {
                break;
            }
        }
        for _ in 0..runs {
            let start = Instant::now();
            let budget = Budget {
                deadline: Some(start + options.budget),
                max_work: options.max_work,
            };
            let answer = if options.with_parse {
                // The corpus parsed once already: a text that fails now
                // is not the text that was checked.
                let parsed = txmap_ecl::parse(&entry.text)
                    .map_err(|e| BenchError::new(format!("line {}: {e}", entry.line)))?;
                txmap_ecl_eval::evaluate(ed, &parsed, &budget)
            } else {
                txmap_ecl_eval::evaluate(ed, expr, &budget)
            };
            let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            runs_ns.push(ns);
            let this = match answer {
                Ok(set) => Outcome::Answered(set.len()),
                Err(EvalError::TooCostly { why }) => Outcome::TooCostly(why),
                Err(e @ EvalError::NotSupported { .. }) => Outcome::NotSupported(e.to_string()),
                Err(e) => Outcome::Error(e.to_string()),
            };
            let answered = matches!(this, Outcome::Answered(_));
            // An answer that turns too costly on a later run (a deadline
            // hit on a busy machine) is reported as too costly.
            if outcome.is_none() || !answered {
                outcome = Some(this);
            }
            if !answered {
                break;
            }
        }
        let mut sorted = runs_ns.clone();
        sorted.sort_unstable();
        let result = ExprResult {
            entry: entry.clone(),
            outcome: outcome.unwrap_or(Outcome::Error("not run".to_owned())),
            median_ns: percentile(&sorted, 0.5),
            runs_ns,
        };
        progress(&result);
        results.push(result);
    }
    Ok(EclReport {
        options: options.clone(),
        parse_total,
        results,
    })
}

/// Median, p95 and max (µs) of answered expressions' medians, and the
/// median result size.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub answered: usize,
    pub too_costly: usize,
    pub not_supported: usize,
    pub errors: usize,
    pub median_us: f64,
    pub p95_us: f64,
    pub max_us: f64,
    pub median_size: usize,
}

impl Stats {
    fn of<'a>(results: impl Iterator<Item = &'a ExprResult>) -> Stats {
        let mut s = Stats::default();
        let mut times = Vec::new();
        let mut sizes = Vec::new();
        for r in results {
            s.n += 1;
            match r.outcome {
                Outcome::Answered(size) => {
                    s.answered += 1;
                    times.push(r.median_ns);
                    sizes.push(size as u64);
                }
                Outcome::TooCostly(_) => s.too_costly += 1,
                Outcome::NotSupported(_) => s.not_supported += 1,
                Outcome::Error(_) => s.errors += 1,
            }
        }
        times.sort_unstable();
        sizes.sort_unstable();
        let us = |ns: u64| ns as f64 / 1e3;
        s.median_us = us(percentile(&times, 0.5));
        s.p95_us = us(percentile(&times, 0.95));
        s.max_us = us(times.last().copied().unwrap_or(0));
        s.median_size = usize::try_from(percentile(&sizes, 0.5)).unwrap_or(usize::MAX);
        s
    }

    fn to_json(self) -> Value {
        json!({
            "n": self.n,
            "answered": self.answered,
            "too_costly": self.too_costly,
            "not_supported": self.not_supported,
            "errors": self.errors,
            "median_us": round(self.median_us),
            "p95_us": round(self.p95_us),
            "max_us": round(self.max_us),
            "median_result_size": self.median_size,
        })
    }
}

/// To 10 ns: half the corpus answers in under a microsecond, where a
/// tenth of one was a third of the time.
fn round(us: f64) -> f64 {
    (us * 100.0).round() / 100.0
}

impl EclReport {
    /// Over every expression.
    pub fn overall(&self) -> Stats {
        Stats::of(self.results.iter())
    }

    /// Per category, in corpus order.
    pub fn by_category(&self) -> Vec<(String, Stats)> {
        let mut order: Vec<&str> = Vec::new();
        let mut groups: BTreeMap<&str, Vec<&ExprResult>> = BTreeMap::new();
        for r in &self.results {
            let c = r.entry.category.as_str();
            if !groups.contains_key(c) {
                order.push(c);
            }
            groups.entry(c).or_default().push(r);
        }
        order
            .into_iter()
            .map(|c| (c.to_owned(), Stats::of(groups[c].iter().copied())))
            .collect()
    }

    /// The `n` slowest expressions by median time, whatever their outcome.
    pub fn slowest(&self, n: usize) -> Vec<&ExprResult> {
        let mut all: Vec<&ExprResult> = self.results.iter().collect();
        all.sort_by_key(|r| std::cmp::Reverse(r.median_ns));
        all.truncate(n);
        all
    }

    pub fn to_json(&self) -> Value {
        let expressions: Vec<Value> = self
            .results
            .iter()
            .map(|r| {
                let mut v = json!({
                    "line": r.entry.line,
                    "category": r.entry.category,
                    "text": r.entry.text,
                    "outcome": r.outcome.kind(),
                    "median_us": round(r.median_ns as f64 / 1e3),
                    "runs_us": r.runs_ns.iter().map(|&ns| round(ns as f64 / 1e3)).collect::<Vec<_>>(),
                });
                match &r.outcome {
                    Outcome::Answered(size) => v["size"] = json!(size),
                    Outcome::TooCostly(m) | Outcome::NotSupported(m) | Outcome::Error(m) => {
                        v["message"] = json!(m)
                    }
                }
                v
            })
            .collect();
        let categories: serde_json::Map<String, Value> = self
            .by_category()
            .into_iter()
            .map(|(c, s)| (c, s.to_json()))
            .collect();
        json!({
            "runs": self.options.runs,
            "warmup": self.options.warmup,
            "with_parse": self.options.with_parse,
            "budget_ms": self.options.budget.as_secs_f64() * 1e3,
            "max_work": self.options.max_work,
            "parse_total_us": round(self.parse_total.as_secs_f64() * 1e6),
            "overall": self.overall().to_json(),
            "categories": categories,
            "expressions": expressions,
        })
    }

    /// The summary table, per category then overall, and the 10 slowest.
    pub fn markdown(&self) -> String {
        let mut s = String::new();
        let o = self.overall();
        let _ = writeln!(
            s,
            "{} expressions: {} answered, {} too costly, {} not supported, {} errors; \
             parse of the whole corpus {:.0} µs\n",
            o.n,
            o.answered,
            o.too_costly,
            o.not_supported,
            o.errors,
            self.parse_total.as_secs_f64() * 1e6
        );
        s.push_str(
            "| category | n | answered | too costly | not supported | errors | median µs | p95 µs | max µs | median result size |\n",
        );
        s.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
        let row = |s: &mut String, name: &str, st: &Stats| {
            let _ = writeln!(
                s,
                "| {name} | {} | {} | {} | {} | {} | {:.1} | {:.1} | {:.1} | {} |",
                st.n,
                st.answered,
                st.too_costly,
                st.not_supported,
                st.errors,
                st.median_us,
                st.p95_us,
                st.max_us,
                st.median_size
            );
        };
        for (c, st) in self.by_category() {
            row(&mut s, &c, &st);
        }
        row(&mut s, "**all**", &o);
        s.push_str("\nSlowest 10 (median of runs):\n\n| µs | outcome | result | expression |\n|---|---|---|---|\n");
        for r in self.slowest(10) {
            let result = match &r.outcome {
                Outcome::Answered(n) => n.to_string(),
                _ => String::new(),
            };
            let _ = writeln!(
                s,
                "| {:.0} | {} | {} | `{}` |",
                r.median_ns as f64 / 1e3,
                r.outcome.kind(),
                result,
                r.entry.text.replace('|', "\\|")
            );
        }
        s
    }
}
