//! LOINC: a release, as LOINC distributes it (the `Loinc_<version>` folder
//! of its zip), compiled into a code system file.
//!
//! What is read, all CSV with a header row, columns found by name (so a
//! release that adds or moves columns still reads):
//!
//! | file | gives |
//! |---|---|
//! | `LoincTable/Loinc.csv` (required) | the terms: display (`LONG_COMMON_NAME`), status, class, the `SHORTNAME` and long name designations, properties |
//! | `AccessoryFiles/PartFile/Part.csv` | the parts (`LP…`): name as display, display name as a designation, status |
//! | `AccessoryFiles/PartFile/LoincPartLink_Primary.csv` | each term's parts as coded properties (`COMPONENT`, `METHOD_TYP`, `document-kind`...), named by the link's property URI |
//! | `AccessoryFiles/AnswerFile/AnswerList.csv` | answer lists (`LL…`) and answers (`LA…`): `Answer` and `AnswerList` properties |
//! | `AccessoryFiles/AnswerFile/LoincAnswerListLink.csv` | `answer-list` of a term, `answers-for` of a list |
//! | `AccessoryFiles/ComponentHierarchyBySystem/ComponentHierarchyBySystem.csv` | the multiaxial hierarchy: parents and children |
//! | `AccessoryFiles/ConsumerName/ConsumerName.csv` | `ConsumerName` designations |
//! | `AccessoryFiles/LinguisticVariants/*` | designations in other languages, tagged `xx-YY` from `LinguisticVariants.csv` |
//!
//! Only `Loinc.csv` is required: a release without the accessory files
//! gives terms without parts, lists or hierarchy, and the report says which
//! files were absent. A malformed row stops the import with the file and
//! line; nothing is written then (the file builder renames into place only
//! when complete).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use txmap_format::Metadata;
use txmap_format::schema::{cs_flags, cs_value};

use txmap_terminology::provider::CodeSystemProvider;
use txmap_terminology::valueset::FilterDef;

use crate::Compiled;
use crate::file::BuildSummary;
use crate::header::Header;
use crate::{CodeSystemError, ImportOptions};

/// LOINC's canonical URL.
pub const URL: &str = "http://loinc.org";

/// What an import read and wrote.
#[derive(Clone, Debug, Default)]
pub struct ImportReport {
    pub version: String,
    pub terms: u64,
    pub parts: u64,
    pub answer_lists: u64,
    pub answers: u64,
    pub part_links: u64,
    pub hierarchy_rows: u64,
    pub variant_designations: u64,
    /// Rows naming a code the release does not otherwise have (a
    /// linguistic variant of a term not in `Loinc.csv`...): skipped.
    pub skipped_rows: u64,
    /// Accessory files the release lacks.
    pub absent: Vec<String>,
    pub seconds: f64,
    pub file: BuildSummary,
}

/// Compiles the release in `dir` into `out`.
pub fn import(
    dir: &Path,
    out: &Path,
    options: &ImportOptions,
) -> Result<ImportReport, CodeSystemError> {
    let started = Instant::now();
    let version = options.version(dir, || Ok(version_from_path(dir)))?;
    let mut b = options.builder(out)?;
    let mut report = ImportReport {
        version: version.clone(),
        ..ImportReport::default()
    };
    let loinc_csv = dir.join("LoincTable").join("Loinc.csv");
    if !loinc_csv.is_file() {
        return Err(CodeSystemError::MissingFile(loinc_csv));
    }
    let acc = dir.join("AccessoryFiles");
    let optional = |rel: &str, report: &mut ImportReport| -> Option<PathBuf> {
        let p = acc.join(rel);
        if p.is_file() {
            Some(p)
        } else {
            report.absent.push(format!("AccessoryFiles/{rel}"));
            None
        }
    };

    // Parts first, so that a term's class can name its part.
    let mut class_parts: HashMap<String, String> = HashMap::new();
    if let Some(path) = optional("PartFile/Part.csv", &mut report) {
        let mut t = Table::open(&path)?;
        let [code, kind, name, display, status] = t.header.columns([
            "PartNumber",
            "PartTypeName",
            "PartName",
            "PartDisplayName",
            "Status",
        ])?;
        while t.next()? {
            let id = b.concept(t.get(code))?;
            let st = t.get(status);
            b.describe(id, t.get(name), "part", Some(st), status_flags(st))?;
            b.property(id, "STATUS", cs_value::STRING, st)?;
            b.designation(id, Some("en-US"), Some("DisplayName"), t.get(display))?;
            if t.get(kind) == "CLASS" {
                class_parts.insert(t.get(name).to_owned(), t.get(code).to_owned());
            }
            report.parts += 1;
        }
    }
    let links = optional("PartFile/LoincPartLink_Primary.csv", &mut report);

    {
        let mut t = Table::open(&loinc_csv)?;
        let [code, status, class, classtype, long_name, short_name] = t.header.columns([
            "LOINC_NUM",
            "STATUS",
            "CLASS",
            "CLASSTYPE",
            "LONG_COMMON_NAME",
            "SHORTNAME",
        ])?;
        let axes = t.header.columns([
            "COMPONENT",
            "PROPERTY",
            "TIME_ASPCT",
            "SYSTEM",
            "SCALE_TYP",
            "METHOD_TYP",
        ])?;
        let optional_cols: Vec<(&str, Option<usize>)> = [
            "ORDER_OBS",
            "EXAMPLE_UNITS",
            "EXAMPLE_UCUM_UNITS",
            "RELATEDNAMES2",
            "CONSUMER_NAME",
        ]
        .into_iter()
        .map(|c| (c, t.header.optional(c)))
        .collect();
        let copyright = t.header.optional("EXTERNAL_COPYRIGHT_NOTICE");
        let definition = t.header.optional("DefinitionDescription");
        let axis_names = [
            "COMPONENT",
            "PROPERTY",
            "TIME_ASPCT",
            "SYSTEM",
            "SCALE_TYP",
            "METHOD_TYP",
        ];
        while t.next()? {
            let c = t.get(code);
            if c.is_empty() {
                return Err(t.error("LOINC_NUM is empty"));
            }
            let id = b.concept(c)?;
            let st = t.get(status);
            let display = match t.get(long_name) {
                "" => fully_specified(&t, &axes),
                d => d.to_owned(),
            };
            b.describe(id, &display, "term", Some(st), status_flags(st))?;
            b.designation(
                id,
                Some("en-US"),
                Some("LONG_COMMON_NAME"),
                t.get(long_name),
            )?;
            b.designation(id, Some("en-US"), Some("SHORTNAME"), t.get(short_name))?;
            b.property(id, "STATUS", cs_value::STRING, st)?;
            let cls = t.get(class);
            match class_parts.get(cls) {
                Some(part) => b.property(id, "CLASS", cs_value::CODE, part)?,
                None => b.property(id, "CLASS", cs_value::CODE, cls)?,
            }
            b.property(id, "CLASSTYPE", cs_value::STRING, t.get(classtype))?;
            for &(name, col) in &optional_cols {
                if let Some(col) = col {
                    b.property(id, name, cs_value::STRING, t.get(col))?;
                }
            }
            if let Some(col) = definition {
                b.property(id, "DefinitionDescription", cs_value::STRING, t.get(col))?;
            }
            let third = copyright.is_some_and(|col| !t.get(col).trim().is_empty());
            b.property(
                id,
                "copyright",
                cs_value::CODE,
                if third { "3rdParty" } else { "LOINC" },
            )?;
            if links.is_none() {
                // Without the part links, the axes are the table's text.
                for (name, col) in axis_names.iter().zip(axes) {
                    b.property(id, name, cs_value::STRING, t.get(col))?;
                }
            }
            report.terms += 1;
        }
    }

    if let Some(path) = links {
        let mut t = Table::open(&path)?;
        let [term, part, part_name, property] =
            t.header
                .columns(["LoincNumber", "PartNumber", "PartName", "Property"])?;
        let kind = t.header.optional("PartTypeName");
        while t.next()? {
            if !b.has(t.get(term)) {
                report.skipped_rows += 1;
                continue;
            }
            let id = b.concept(t.get(term))?;
            let prop = t.get(property);
            let name = prop.rsplit('/').next().unwrap_or(prop);
            if name.is_empty() {
                return Err(t.error("the Property column is empty"));
            }
            b.property(id, name, cs_value::CODE, t.get(part))?;
            // A part the part file lacks still has a name here.
            let p = b.concept(t.get(part))?;
            if !b.has_display(p) {
                let k = kind.map_or("", |k| t.get(k));
                b.describe(p, t.get(part_name), "part", None, 0)?;
                if !k.is_empty() {
                    b.property(p, "PartTypeName", cs_value::STRING, k)?;
                }
            }
            report.part_links += 1;
        }
    }

    if let Some(path) = optional("AnswerFile/AnswerList.csv", &mut report) {
        let mut t = Table::open(&path)?;
        let [list, list_name, answer, display] = t.header.columns([
            "AnswerListId",
            "AnswerListName",
            "AnswerStringId",
            "DisplayText",
        ])?;
        while t.next()? {
            let l = b.concept(t.get(list))?;
            if !b.has_display(l) {
                b.describe(l, t.get(list_name), "answer-list", None, 0)?;
                report.answer_lists += 1;
            }
            let a = t.get(answer);
            if a.is_empty() {
                // An externally defined list has no answers of its own.
                continue;
            }
            let fresh = !b.has(a);
            let aid = b.concept(a)?;
            if fresh {
                b.describe(aid, t.get(display), "answer", None, 0)?;
                report.answers += 1;
            }
            b.property(l, "Answer", cs_value::CODE, a)?;
            b.property(aid, "AnswerList", cs_value::CODE, t.get(list))?;
        }
    }
    if let Some(path) = optional("AnswerFile/LoincAnswerListLink.csv", &mut report) {
        let mut t = Table::open(&path)?;
        let [term, list] = t.header.columns(["LoincNumber", "AnswerListId"])?;
        while t.next()? {
            let (tc, lc) = (t.get(term), t.get(list));
            if !b.has(tc) || !b.has(lc) {
                report.skipped_rows += 1;
                continue;
            }
            let (tid, lid) = (b.concept(tc)?, b.concept(lc)?);
            b.property(tid, "answer-list", cs_value::CODE, lc)?;
            b.property(lid, "answers-for", cs_value::CODE, tc)?;
        }
    }

    if let Some(path) = optional(
        "ComponentHierarchyBySystem/ComponentHierarchyBySystem.csv",
        &mut report,
    ) {
        let mut t = Table::open(&path)?;
        let [parent, code, text] = t
            .header
            .columns(["IMMEDIATE_PARENT", "CODE", "CODE_TEXT"])?;
        while t.next()? {
            let c = t.get(code);
            if c.is_empty() {
                return Err(t.error("CODE is empty"));
            }
            let id = b.concept(c)?;
            if !b.has_display(id) {
                b.describe(id, t.get(text), "part", None, 0)?;
            }
            let p = t.get(parent);
            if !p.is_empty() {
                let pid = b.concept(p)?;
                b.link(id, pid);
            }
            report.hierarchy_rows += 1;
        }
    }

    if let Some(path) = optional("ConsumerName/ConsumerName.csv", &mut report) {
        let mut t = Table::open(&path)?;
        let [code, name] = t.header.columns(["LoincNumber", "ConsumerName"])?;
        while t.next()? {
            if !b.has(t.get(code)) {
                report.skipped_rows += 1;
                continue;
            }
            let id = b.concept(t.get(code))?;
            b.designation(id, Some("en-US"), Some("ConsumerName"), t.get(name))?;
        }
    }

    if let Some(path) = optional("LinguisticVariants/LinguisticVariants.csv", &mut report) {
        let mut variants = Vec::new();
        let mut t = Table::open(&path)?;
        let [vid, lang, country] = t.header.columns(["ID", "ISO_LANGUAGE", "ISO_COUNTRY"])?;
        while t.next()? {
            let (l, c) = (t.get(lang), t.get(country));
            let file = path.with_file_name(format!("{l}{c}{}LinguisticVariant.csv", t.get(vid)));
            let tag = if c.is_empty() {
                l.to_owned()
            } else {
                format!("{l}-{c}")
            };
            variants.push((tag, file));
        }
        for (tag, file) in variants {
            if !file.is_file() {
                report.absent.push(file.display().to_string());
                continue;
            }
            let mut t = Table::open(&file)?;
            let [code] = t.header.columns(["LOINC_NUM"])?;
            let uses: Vec<(&str, Option<usize>)> = [
                "LONG_COMMON_NAME",
                "SHORTNAME",
                "LinguisticVariantDisplayName",
            ]
            .into_iter()
            .map(|c| (c, t.header.optional(c)))
            .collect();
            while t.next()? {
                if !b.has(t.get(code)) {
                    report.skipped_rows += 1;
                    continue;
                }
                let id = b.concept(t.get(code))?;
                for &(use_, col) in &uses {
                    if let Some(col) = col
                        && !t.get(col).is_empty()
                    {
                        b.designation(id, Some(&tag), Some(use_), t.get(col))?;
                        report.variant_designations += 1;
                    }
                }
            }
        }
    }

    let mut meta = Metadata::new();
    meta.insert("source".into(), "loinc".into());
    meta.insert("url".into(), URL.into());
    meta.insert("case_sensitive".into(), "false".into());
    meta.insert("version".into(), version);
    meta.insert("name".into(), "LOINC".into());
    meta.insert(
        "title".into(),
        "Logical Observation Identifiers, Names and Codes (LOINC)".into(),
    );
    meta.insert("language".into(), "en-US".into());
    meta.insert(
        "copyright".into(),
        "This material contains content from LOINC (http://loinc.org). LOINC is copyright © 1995-2025, Regenstrief Institute, Inc. and the Logical Observation Identifiers Names and Codes (LOINC) Committee and is available at no cost under the license at http://loinc.org/license. LOINC® is a registered United States trademark of Regenstrief Institute, Inc.".into(),
    );
    report.file = b.finish(out, meta)?;
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}

/// The filters of one of LOINC's implicit value sets: `http://loinc.org/vs`
/// (every code), `http://loinc.org/vs/LL…` (an answer list's answers, in
/// the list's order) and `http://loinc.org/vs/LP…` (the codes below a part
/// in the multiaxial hierarchy); `None` for any other URL.
pub fn implicit_filters(url: &str) -> Option<Vec<FilterDef>> {
    let rest = url.strip_prefix("http://loinc.org/vs")?;
    if rest.is_empty() {
        return Some(Vec::new());
    }
    let code = rest.strip_prefix('/')?;
    let filter = |property: &str, op: &str| FilterDef {
        property: property.to_owned(),
        op: op.to_owned(),
        value: Some(code.to_owned()),
    };
    match code.get(..2) {
        Some("LL") => Some(vec![filter("LIST", "=")]),
        Some("LP") => Some(vec![filter("concept", "descendent-of")]),
        _ => None,
    }
}

/// The LOINC file and filters of an implicit value set URL among
/// `files` (the latest, in service or not): `Some(None)` when the URL is
/// LOINC's but names nothing (a list or part the latest release lacks, or
/// no LOINC file is served), `None` when it is not LOINC's.
#[allow(clippy::type_complexity)]
pub fn implicit_value_set<'a, B: AsRef<[u8]> + std::fmt::Debug + Send + Sync + 'a>(
    url: &str,
    files: impl Iterator<Item = &'a Compiled<B>>,
) -> Option<Option<(&'a dyn CodeSystemProvider, Vec<FilterDef>)>> {
    let filters = implicit_filters(url)?;
    let latest = files
        .filter(|c| c.url() == URL)
        .max_by(|a, b| txmap_terminology::resolver::version_cmp(a.version(), b.version()));
    let Some(latest) = latest else {
        return Some(None);
    };
    // `/vs/LL…` and `/vs/LP…` name a value set only when the list or part
    // is a code of the release. A file out of service is not read: the
    // caller's `in_service` refuses it.
    let named = url.rsplit('/').next().unwrap_or_default();
    if !filters.is_empty() && latest.in_service().is_ok() && latest.locate(named).is_none() {
        return Some(None);
    }
    Some(Some((latest as &dyn CodeSystemProvider, filters)))
}

/// `Loinc_2.82` (or `LOINC_2.82`, `Loinc_2.82_Text`) anywhere in the path.
pub fn version_from_path(dir: &Path) -> Option<String> {
    let abs = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    abs.components().rev().find_map(|c| {
        let name = c.as_os_str().to_str()?;
        let rest = name
            .strip_prefix("Loinc_")
            .or_else(|| name.strip_prefix("LOINC_"))?;
        let v: String = rest
            .chars()
            .take_while(|ch| ch.is_ascii_digit() || *ch == '.')
            .collect();
        (v.contains('.') && v.chars().next().is_some_and(|c| c.is_ascii_digit()))
            .then(|| v.trim_end_matches('.').to_owned())
    })
}

/// LOINC's status as concept flags: `DEPRECATED` is inactive,
/// `DISCOURAGED` is active but deprecated.
fn status_flags(status: &str) -> u8 {
    match status {
        "DEPRECATED" => cs_flags::INACTIVE,
        "DISCOURAGED" => cs_flags::DEPRECATED,
        _ => 0,
    }
}

/// The fully specified name, `COMPONENT:PROPERTY:TIME:SYSTEM:SCALE:METHOD`,
/// for a term without a long common name.
fn fully_specified(t: &Table, axes: &[usize; 6]) -> String {
    let mut s = axes.map(|c| t.get(c)).join(":");
    if s.ends_with(':') {
        s.pop();
    }
    s
}

/// One CSV file of the release, read a row at a time with one reused
/// record; errors name the file and line.
struct Table {
    path: PathBuf,
    reader: csv::Reader<Lf<std::io::BufReader<std::fs::File>>>,
    header: Header,
    row: csv::StringRecord,
    line: u64,
}

impl Table {
    fn open(path: &Path) -> Result<Table, CodeSystemError> {
        let file = std::fs::File::open(path).map_err(|source| CodeSystemError::Io {
            path: path.to_owned(),
            source,
        })?;
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(false)
            .from_reader(Lf::new(std::io::BufReader::with_capacity(1 << 16, file)));
        let headers = reader
            .headers()
            .map_err(|e| csv_error(path, &e))?
            .iter()
            .map(|h| h.trim_start_matches('\u{feff}').to_owned())
            .collect();
        Ok(Table {
            path: path.to_owned(),
            reader,
            header: Header::new(path, headers),
            row: csv::StringRecord::new(),
            line: 1,
        })
    }

    /// Reads the next row; false at the end.
    fn next(&mut self) -> Result<bool, CodeSystemError> {
        // The line the row starts on (a quoted field may span lines).
        self.line = self.reader.position().line();
        self.reader
            .read_record(&mut self.row)
            .map_err(|e| csv_error(&self.path, &e))
    }

    fn get(&self, col: usize) -> &str {
        self.row.get(col).unwrap_or("")
    }

    fn error(&self, message: &str) -> CodeSystemError {
        CodeSystemError::Row {
            path: self.path.clone(),
            line: self.line,
            message: message.to_owned(),
        }
    }
}

/// CRLF line ends read as LF. LOINC's files end lines with CRLF, and the
/// csv reader counts such a line when it reads the next row's first byte,
/// so its line numbers would lag one behind; a CR before an LF carries no
/// meaning in these files (inside a quoted field it becomes LF).
struct Lf<R> {
    inner: R,
    /// A CR read at the end of the last buffer, not yet given out.
    cr: bool,
}

impl<R: std::io::BufRead> Lf<R> {
    fn new(inner: R) -> Lf<R> {
        Lf { inner, cr: false }
    }
}

impl<R: std::io::BufRead> std::io::Read for Lf<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        // Zero means the end, so read on while only a held CR came.
        loop {
            let buf = self.inner.fill_buf()?;
            if buf.is_empty() {
                if std::mem::take(&mut self.cr) {
                    out[0] = b'\r';
                    return Ok(1);
                }
                return Ok(0);
            }
            let mut n = 0;
            let mut used = 0;
            if std::mem::take(&mut self.cr) && buf[0] != b'\n' {
                // The CR held back was not before an LF: give it out.
                out[0] = b'\r';
                n = 1;
            }
            while used < buf.len() && n < out.len() {
                let b = buf[used];
                used += 1;
                if b == b'\r' {
                    match buf.get(used) {
                        Some(b'\n') => continue,
                        Some(_) => {}
                        None => {
                            self.cr = true;
                            continue;
                        }
                    }
                }
                out[n] = b;
                n += 1;
            }
            self.inner.consume(used);
            if n > 0 {
                return Ok(n);
            }
        }
    }
}

fn csv_error(path: &Path, e: &csv::Error) -> CodeSystemError {
    let line = e.position().map_or(0, csv::Position::line);
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("{len} fields where the header has {expected_len}"),
        csv::ErrorKind::Utf8 { .. } => "not UTF-8".to_owned(),
        csv::ErrorKind::Io(io) => io.to_string(),
        _ => e.to_string(),
    };
    CodeSystemError::Row {
        path: path.to_owned(),
        line,
        message,
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufReader, Read};

    use super::Lf;

    #[test]
    fn crlf_reads_as_lf_across_buffer_ends() {
        let input = b"a\r\nb\rc\r\n\r\r\nd\r";
        // Buffers of every size, down to one byte, so that a CR ends one.
        for cap in 1..input.len() + 2 {
            let mut out = Vec::new();
            Lf::new(BufReader::with_capacity(cap, &input[..]))
                .read_to_end(&mut out)
                .unwrap();
            assert_eq!(out, b"a\nb\rc\n\r\nd\r", "buffer of {cap}");
        }
    }
}
