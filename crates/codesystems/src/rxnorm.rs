//! RxNorm: a release's RRF files (the `rrf` folder of NLM's full release)
//! compiled into a code system file.
//!
//! As FHIR's RxNorm page defines the code system: the codes are the RXCUIs
//! that have an atom from source `RXNORM`; the display is the string of
//! such an atom — the first of a primary term type (`IN`, `SCD`, `BN`...),
//! else a prescribable name (`PSN`), else a synonym (`SY`, `TMSY`); every
//! RxNorm atom is a designation whose use is its term type. Properties:
//! `TTY` (each term type of the concept's RxNorm atoms), `SAB` (each
//! source with an atom of the concept), `STY` (semantic types, from
//! `RXNSTY.RRF`), and each RxNorm relationship by its `RELA` (or `REL`):
//! a row `RXCUI1|…|RELA|RXCUI2` gives concept `RXCUI2` the property `RELA`
//! with value `RXCUI1`, as UMLS reads it (the relationship of the second
//! concept to the first: `Anacin tradename_of aspirin`). A concept whose
//! RxNorm atoms are all suppressed is inactive. The version is the
//! release's date as NLM's file names write it (`08042025`), from
//! `RXNSAB.RRF`.
//!
//! | file | needed |
//! |---|---|
//! | `RXNCONSO.RRF` | required: concepts, displays, designations, `TTY`, `SAB` |
//! | `RXNREL.RRF` | relationships as properties |
//! | `RXNSTY.RRF` | `STY` |
//! | `RXNSAB.RRF` | the version (else `--rxnorm-version`) |
//!
//! RRF has no quoting: fields end with `|`, rows with a line feed. A row
//! with too few fields stops the import with its file and line.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use txmap_format::Metadata;
use txmap_format::schema::{cs_flags, cs_value};

use crate::CodeSystemError;
use crate::ImportOptions;
use crate::file::BuildSummary;

/// RxNorm's canonical URL.
pub const URL: &str = "http://www.nlm.nih.gov/research/umls/rxnorm";

/// What an import read and wrote.
#[derive(Clone, Debug, Default)]
pub struct ImportReport {
    pub version: String,
    pub concepts: u64,
    pub atoms: u64,
    pub relationships: u64,
    pub semantic_types: u64,
    pub inactive: u64,
    /// Files the release lacks (of the optional ones).
    pub absent: Vec<String>,
    pub seconds: f64,
    pub file: BuildSummary,
}

/// Where display strings come from, best first.
fn display_rank(tty: &str) -> u8 {
    match tty {
        "SY" | "TMSY" => 2,
        "PSN" => 1,
        _ => 0,
    }
}

/// Compiles the RRF files in `dir` (or `dir/rrf`) into `out`.
pub fn import(
    dir: &Path,
    out: &Path,
    options: &ImportOptions,
) -> Result<ImportReport, CodeSystemError> {
    let started = Instant::now();
    let dir = if dir.join("rrf").is_dir() {
        dir.join("rrf")
    } else {
        dir.to_owned()
    };
    let conso = dir.join("RXNCONSO.RRF");
    if !conso.is_file() {
        return Err(CodeSystemError::MissingFile(conso));
    }
    let mut report = ImportReport::default();
    let version = options.version(&dir, || version_from_sab(&dir.join("RXNSAB.RRF")))?;
    let mut b = options.builder(out)?;

    // RxNorm's own atoms: the concepts, their displays and term types.
    let mut rank: HashMap<u32, u8> = HashMap::new();
    let mut listed: HashSet<(u32, String)> = HashSet::new();
    let mut live: HashSet<u32> = HashSet::new();
    let mut rows = Rrf::open(&conso, 18)?;
    while let Some(f) = rows.next()? {
        if &f[11] != "RXNORM" {
            continue;
        }
        let (cui, tty, text, suppress) = (&f[0], &f[12], &f[14], &f[16]);
        if cui.is_empty() {
            return Err(f.error("RXCUI is empty"));
        }
        let id = b.concept(cui)?;
        let r = display_rank(tty);
        if rank.get(&id).is_none_or(|&best| r < best) {
            rank.insert(id, r);
            b.set_display(id, text)?;
        }
        b.designation(id, Some("en"), Some(tty), text)?;
        if listed.insert((id, format!("TTY\t{tty}"))) {
            b.property(id, "TTY", cs_value::CODE, tty)?;
        }
        if suppress == "N" || suppress.is_empty() {
            live.insert(id);
        }
        report.atoms += 1;
    }
    report.concepts = rank.len() as u64;
    // Every source with an atom of an RxNorm concept.
    let mut rows = Rrf::open(&conso, 18)?;
    while let Some(f) = rows.next()? {
        let (cui, sab) = (&f[0], &f[11]);
        if !b.has(cui) {
            continue;
        }
        let id = b.concept(cui)?;
        if listed.insert((id, format!("SAB\t{sab}"))) {
            b.property(id, "SAB", cs_value::CODE, sab)?;
        }
    }
    drop(listed);
    for &id in rank.keys() {
        let active = live.contains(&id);
        if !active {
            report.inactive += 1;
        }
        let (status, flags) = if active {
            ("active", 0)
        } else {
            ("suppressed", cs_flags::INACTIVE)
        };
        b.set_status(id, "concept", status, flags)?;
    }

    let optional = |name: &str, report: &mut ImportReport| {
        let p = dir.join(name);
        if p.is_file() {
            Some(p)
        } else {
            report.absent.push(name.to_owned());
            None
        }
    };
    if let Some(path) = optional("RXNREL.RRF", &mut report) {
        let mut rows = Rrf::open(&path, 15)?;
        while let Some(f) = rows.next()? {
            let (cui1, stype1, rel, cui2, stype2, rela, sab) =
                (&f[0], &f[2], &f[3], &f[4], &f[6], &f[7], &f[9]);
            if sab != "RXNORM" || stype1 != "CUI" || stype2 != "CUI" {
                continue;
            }
            if !b.has(cui1) || !b.has(cui2) {
                continue;
            }
            let name = if rela.is_empty() { rel } else { rela };
            let id = b.concept(cui2)?;
            b.property(id, name, cs_value::CODE, cui1)?;
            report.relationships += 1;
        }
    }
    if let Some(path) = optional("RXNSTY.RRF", &mut report) {
        let mut rows = Rrf::open(&path, 6)?;
        while let Some(f) = rows.next()? {
            if !b.has(&f[0]) {
                continue;
            }
            let id = b.concept(&f[0])?;
            b.property(id, "STY", cs_value::STRING, &f[3])?;
            report.semantic_types += 1;
        }
    }

    let mut meta = Metadata::new();
    meta.insert("source".into(), "rxnorm".into());
    meta.insert("url".into(), URL.into());
    meta.insert("version".into(), version.clone());
    meta.insert("name".into(), "RxNorm".into());
    meta.insert("title".into(), "RxNorm".into());
    meta.insert("language".into(), "en".into());
    meta.insert("case_sensitive".into(), "true".into());
    meta.insert(
        "copyright".into(),
        "This product uses publicly available data from the U.S. National Library of Medicine (NLM), National Institutes of Health, Department of Health and Human Services; NLM is not responsible for the product and does not endorse or recommend this or any other product.".into(),
    );
    report.version = version;
    report.file = b.finish(out, meta)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The RXNORM row of `RXNSAB.RRF` gives the release: `SVER` `20AA_250804F`
/// is the release of 2025-08-04, version `08042025` as NLM names its
/// files. `None` when the file or the row is absent.
pub fn version_from_sab(path: &Path) -> Result<Option<String>, CodeSystemError> {
    if !path.is_file() {
        return Ok(None);
    }
    let mut rows = Rrf::open(path, 7)?;
    while let Some(f) = rows.next()? {
        if &f[3] != "RXNORM" {
            continue;
        }
        let date = f[6].split('_').nth(1).unwrap_or("");
        let digits: String = date.chars().take_while(char::is_ascii_digit).collect();
        if digits.len() != 6 {
            return Err(f.error(&format!("SVER {:?} is not 20AA_YYMMDDF", &f[6])));
        }
        let (yy, mm, dd) = (&digits[..2], &digits[2..4], &digits[4..6]);
        return Ok(Some(format!("{mm}{dd}20{yy}")));
    }
    Ok(None)
}

/// An RRF file read a row at a time: `|`-terminated fields.
struct Rrf {
    path: PathBuf,
    reader: BufReader<std::fs::File>,
    line: u64,
    buf: String,
    fields: usize,
}

impl Rrf {
    fn open(path: &Path, fields: usize) -> Result<Rrf, CodeSystemError> {
        let file = std::fs::File::open(path).map_err(|source| CodeSystemError::Io {
            path: path.to_owned(),
            source,
        })?;
        Ok(Rrf {
            path: path.to_owned(),
            reader: BufReader::with_capacity(1 << 16, file),
            line: 0,
            buf: String::new(),
            fields,
        })
    }

    /// The next row (at least the file's count of fields), or `None` at
    /// the end.
    fn next(&mut self) -> Result<Option<Row<'_>>, CodeSystemError> {
        self.buf.clear();
        self.line += 1;
        let read = self.reader.read_line(&mut self.buf).map_err(|e| {
            let message = if e.kind() == std::io::ErrorKind::InvalidData {
                "not UTF-8".to_owned()
            } else {
                e.to_string()
            };
            CodeSystemError::Row {
                path: self.path.clone(),
                line: self.line,
                message,
            }
        })?;
        if read == 0 {
            return Ok(None);
        }
        let row = self.buf.trim_end_matches(['\n', '\r']);
        let fields: Vec<&str> = row.split('|').collect();
        if fields.len() < self.fields {
            return Err(CodeSystemError::Row {
                path: self.path.clone(),
                line: self.line,
                message: format!(
                    "{} fields where RRF has {}",
                    fields.len().saturating_sub(1),
                    self.fields
                ),
            });
        }
        Ok(Some(Row {
            fields,
            path: &self.path,
            line: self.line,
        }))
    }
}

/// One row of an RRF file: its fields, and where it is for errors.
struct Row<'a> {
    fields: Vec<&'a str>,
    path: &'a Path,
    line: u64,
}

impl<'a> std::ops::Index<usize> for Row<'a> {
    type Output = str;
    fn index(&self, i: usize) -> &str {
        self.fields[i]
    }
}

impl Row<'_> {
    fn error(&self, message: &str) -> CodeSystemError {
        CodeSystemError::Row {
            path: self.path.to_owned(),
            line: self.line,
            message: message.to_owned(),
        }
    }
}
