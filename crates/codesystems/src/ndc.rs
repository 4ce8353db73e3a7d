//! NDC, the FDA's National Drug Code Directory: a release's `product.txt`
//! and `package.txt` (tab-separated, a header row, as the FDA publishes
//! them) compiled into a code system file.
//!
//! The concepts are the product codes (`PRODUCTNDC`, labeler-product,
//! `0002-0152`) and the package codes (`NDCPACKAGECODE`,
//! labeler-product-package, `0002-0152-01`), each package a child of its
//! product. A product's display is its proprietary name (with its
//! suffix); a package's is that name and the package's description.
//! Properties: `type` (`HUMAN PRESCRIPTION DRUG`...), `dose-form`,
//! `route`, `labeler`, `substance`, `marketing-category`, `start` and
//! `end` of marketing (`YYYYMMDD`), and a package's `product`. A code whose
//! marketing ended before the release's date, or which the FDA flags
//! excluded (`NDC_EXCLUDE_FLAG` `Y`), is inactive. The version is the
//! release's date (the folder's name, `2025-07-11`, or
//! `--ndc-version`). A line that is not UTF-8 is read as Latin-1, the
//! FDA's files' other encoding; a row with fewer fields than its header
//! stops the import with its file and line.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::Instant;

use txmap_format::Metadata;
use txmap_format::schema::{cs_flags, cs_value};

use crate::file::BuildSummary;
use crate::header::Header;
use crate::{CodeSystemError, ImportOptions};

/// NDC's canonical URL.
pub const URL: &str = "http://hl7.org/fhir/sid/ndc";

/// What an import read and wrote.
#[derive(Clone, Debug, Default)]
pub struct ImportReport {
    pub version: String,
    pub products: u64,
    pub packages: u64,
    pub inactive: u64,
    /// Packages of a product `product.txt` lacks: skipped.
    pub skipped_rows: u64,
    pub seconds: f64,
    pub file: BuildSummary,
}

/// Compiles `product.txt` and `package.txt` in `dir` into `out`.
pub fn import(
    dir: &Path,
    out: &Path,
    options: &ImportOptions,
) -> Result<ImportReport, CodeSystemError> {
    let started = Instant::now();
    let version = options.version(dir, || Ok(version_from_path(dir)))?;
    // Marketing that ended before this date (YYYYMMDD) makes a code
    // inactive; a version that is not a date makes none so.
    let today: String = version.chars().filter(char::is_ascii_digit).collect();
    let ended = |end: &str| today.len() == 8 && !end.is_empty() && end < today.as_str();
    // A row's status and flags: inactive when its marketing ended or the
    // FDA excludes it.
    let status = |t: &Table, end: usize, excluded: Option<usize>| {
        if ended(t.get(end)) || excluded.is_some_and(|x| t.get(x) == "Y") {
            ("inactive", cs_flags::INACTIVE)
        } else {
            ("active", 0)
        }
    };
    let mut report = ImportReport {
        version: version.clone(),
        ..ImportReport::default()
    };
    let mut b = options.builder(out)?;

    let mut names: HashMap<String, String> = HashMap::new();
    let mut t = Table::open(&dir.join("product.txt"))?;
    let [
        code,
        kind,
        name,
        suffix,
        form,
        route,
        start,
        end,
        category,
        labeler,
        substance,
    ] = t.header.columns([
        "PRODUCTNDC",
        "PRODUCTTYPENAME",
        "PROPRIETARYNAME",
        "PROPRIETARYNAMESUFFIX",
        "DOSAGEFORMNAME",
        "ROUTENAME",
        "STARTMARKETINGDATE",
        "ENDMARKETINGDATE",
        "MARKETINGCATEGORYNAME",
        "LABELERNAME",
        "SUBSTANCENAME",
    ])?;
    let excluded = t.header.optional("NDC_EXCLUDE_FLAG");
    while t.next()? {
        let c = t.get(code);
        if c.is_empty() {
            return Err(t.error("PRODUCTNDC is empty"));
        }
        let display = match t.get(suffix) {
            "" => t.get(name).to_owned(),
            s => format!("{} {s}", t.get(name)),
        };
        let (st, flags) = status(&t, end, excluded);
        let id = b.concept(c)?;
        b.describe(id, &display, "product", Some(st), flags)?;
        for (property, col) in [
            ("type", kind),
            ("dose-form", form),
            ("route", route),
            ("labeler", labeler),
            ("substance", substance),
            ("marketing-category", category),
            ("start", start),
            ("end", end),
        ] {
            b.property(id, property, cs_value::STRING, t.get(col))?;
        }
        report.products += 1;
        report.inactive += u64::from(flags != 0);
        names.insert(c.to_owned(), display);
    }

    let mut t = Table::open(&dir.join("package.txt"))?;
    let [product, code, description, start, end] = t.header.columns([
        "PRODUCTNDC",
        "NDCPACKAGECODE",
        "PACKAGEDESCRIPTION",
        "STARTMARKETINGDATE",
        "ENDMARKETINGDATE",
    ])?;
    let excluded = t.header.optional("NDC_EXCLUDE_FLAG");
    while t.next()? {
        let Some(name) = names.get(t.get(product)) else {
            report.skipped_rows += 1;
            continue;
        };
        let c = t.get(code);
        if c.is_empty() {
            return Err(t.error("NDCPACKAGECODE is empty"));
        }
        let (st, flags) = status(&t, end, excluded);
        let id = b.concept(c)?;
        let display = format!("{name}, {}", t.get(description).trim());
        b.describe(id, &display, "package", Some(st), flags)?;
        b.property(id, "product", cs_value::CODE, t.get(product))?;
        b.property(id, "start", cs_value::STRING, t.get(start))?;
        b.property(id, "end", cs_value::STRING, t.get(end))?;
        let parent = b.concept(t.get(product))?;
        b.link(id, parent);
        report.packages += 1;
        report.inactive += u64::from(flags != 0);
    }

    let mut meta = Metadata::new();
    meta.insert("source".into(), "ndc".into());
    meta.insert("url".into(), URL.into());
    meta.insert("version".into(), version);
    meta.insert("name".into(), "NDC".into());
    meta.insert("title".into(), "National Drug Code Directory".into());
    meta.insert("language".into(), "en".into());
    meta.insert("case_sensitive".into(), "true".into());
    report.file = b.finish(out, meta)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The release date as the folder's name: `2025-07-11` (or `20250711`).
pub fn version_from_path(dir: &Path) -> Option<String> {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    let name = abs.file_name()?.to_str()?;
    let digits: String = name.chars().filter(char::is_ascii_digit).collect();
    let shaped = name.chars().all(|c| c.is_ascii_digit() || c == '-');
    (shaped && digits.len() == 8).then(|| name.to_owned())
}

/// One tab-separated file with a header row, read a line at a time.
struct Table {
    path: PathBuf,
    reader: BufReader<std::fs::File>,
    header: Header,
    line: u64,
    fields: Vec<String>,
}

impl Table {
    fn open(path: &Path) -> Result<Table, CodeSystemError> {
        if !path.is_file() {
            return Err(CodeSystemError::MissingFile(path.to_owned()));
        }
        let file = std::fs::File::open(path).map_err(|source| CodeSystemError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut t = Table {
            path: path.to_owned(),
            reader: BufReader::with_capacity(1 << 16, file),
            header: Header::default(),
            line: 0,
            fields: Vec::new(),
        };
        if !t.read()? {
            return Err(t.error("no header row"));
        }
        t.header = Header::new(path, std::mem::take(&mut t.fields));
        Ok(t)
    }

    /// Reads the next data row; false at the end.
    fn next(&mut self) -> Result<bool, CodeSystemError> {
        if !self.read()? {
            return Ok(false);
        }
        if self.fields.len() < self.header.len() {
            return Err(self.error(&format!(
                "{} fields where the header has {}",
                self.fields.len(),
                self.header.len()
            )));
        }
        Ok(true)
    }

    fn read(&mut self) -> Result<bool, CodeSystemError> {
        let mut raw = Vec::new();
        self.line += 1;
        let n = self
            .reader
            .read_until(b'\n', &mut raw)
            .map_err(|source| CodeSystemError::Io {
                path: self.path.clone(),
                source,
            })?;
        if n == 0 {
            return Ok(false);
        }
        while raw.last().is_some_and(|&c| c == b'\n' || c == b'\r') {
            raw.pop();
        }
        let text = match String::from_utf8(raw) {
            Ok(s) => s,
            Err(e) => e.into_bytes().iter().map(|&c| char::from(c)).collect(),
        };
        self.fields = text.split('\t').map(str::to_owned).collect();
        Ok(true)
    }

    fn get(&self, col: usize) -> &str {
        self.fields.get(col).map_or("", String::as_str)
    }

    fn error(&self, message: &str) -> CodeSystemError {
        CodeSystemError::Row {
            path: self.path.clone(),
            line: self.line,
            message: message.to_owned(),
        }
    }
}
