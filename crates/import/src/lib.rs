//! Compiles SNOMED CT RF2 releases into a txmap edition file, in bounded
//! memory.
//!
//! # The pipeline
//!
//! Each kind of component goes through the same steps:
//!
//! 1. **Read**: every row of every package's files of that kind is parsed and
//!    validated ([`txmap_rf2`]) and reduced to a fixed-size record; its text
//!    (term, concrete value, refset fields) goes to a spill file and the
//!    record keeps the offset.
//! 2. **Layer**: records are sorted by (component id, effectiveTime,
//!    package) in a [`sort::Sorter`], which spills sorted runs to disk when
//!    its memory share is full. Of each run of equal ids the last record
//!    wins: the latest effectiveTime, and of equal times the package given
//!    last. That is how SNOMED layers an extension over its base.
//! 3. **Index**: the winning, active rows are re-keyed by concept ordinal and
//!    sorted again, which gives the CSR sections directly.
//!
//! What is kept in memory is what is proportional to concepts (their ids,
//! the is-a graph and its closure) and a few bytes per description (its id
//! and ordinal, for language refset rows); everything proportional to rows
//! streams through sorters. The caps are [`ImportOptions::max_memory`] and
//! [`ImportOptions::sort_buffer`].
//!
//! Sections are staged in temporary files and assembled at the end in the
//! order reads want ([`LAYOUT`]), into a temporary file renamed into place.

#![forbid(unsafe_code)]

mod graph;
pub mod identity;
pub mod memory;
mod records;
pub mod sort;
mod stage;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use txmap_format::schema::{
    AcceptabilityRecord, ComponentMemberEntry, ConceptRecord, ConcreteRecord, DescriptionIdEntry,
    DescriptionRecord, MemberRecord, NO_CODE, RefsetKind, RefsetRecord, RelationshipRecord,
    concept_flags, description_flags,
};
use txmap_format::{FileWriter, FormatError, Metadata, SectionKind};
use txmap_rf2::kind::FileKind;
use txmap_rf2::parse::{ConceptRow, ConcreteValueRow, DescriptionRow, RefsetRow, RelationshipRow};
use txmap_rf2::{Release, Rf2Error, Rf2File, RowReader};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, IntoBytes};

use graph::Csr;
pub use identity::{Identity, ReleaseStatus};
use records::*;
use sort::{Record, Sorted, Sorter};
use stage::{CsrBuilder, Spill, Staged, Stages};

use txmap_format::ids;

/// The order of sections in the file: what a cold `$lookup` or subsumption
/// test touches first, so that those pages sit together.
pub const LAYOUT: &[SectionKind] = &[
    SectionKind::ConceptIds,
    SectionKind::Concepts,
    SectionKind::ParentsIndex,
    SectionKind::Parents,
    SectionKind::AncestorsIndex,
    SectionKind::Ancestors,
    SectionKind::PreferredTermIndex,
    // Starts with the preferred terms, in concept order.
    SectionKind::TermHeap,
    SectionKind::ChildrenIndex,
    SectionKind::Children,
    SectionKind::Codes,
    SectionKind::Languages,
    SectionKind::ConceptDescriptionsIndex,
    SectionKind::Descriptions,
    SectionKind::AcceptabilityIndex,
    SectionKind::Acceptability,
    SectionKind::AttributesIndex,
    SectionKind::Attributes,
    SectionKind::ConcreteIndex,
    SectionKind::Concrete,
    SectionKind::ConcreteHeap,
    SectionKind::DescriptionIds,
    SectionKind::DescendantsIndex,
    SectionKind::Descendants,
    SectionKind::InboundIndex,
    SectionKind::Inbound,
    SectionKind::Refsets,
    SectionKind::RefsetSchemaHeap,
    SectionKind::Members,
    SectionKind::MemberFieldHeap,
    SectionKind::ComponentMembers,
    SectionKind::StatedIndex,
    SectionKind::Stated,
    SectionKind::WordFst,
    SectionKind::WordPostingsIndex,
    SectionKind::WordPostings,
];

/// Default for [`ImportOptions::max_memory`]: 1 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// What to import and how.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// RF2 packages (zip files or folders), base first: for equal
    /// effectiveTimes a later package wins.
    pub sources: Vec<PathBuf>,
    /// The edition file to write.
    pub output: PathBuf,
    /// The memory the importer plans for, in bytes. Sorters get a quarter
    /// each (at most two are filling at once) unless `sort_buffer` is set;
    /// the rest is for what is kept per concept and per description.
    pub max_memory: u64,
    /// Memory per sorter before it spills a run to disk.
    pub sort_buffer: Option<u64>,
    /// Where spill files go; default: the output's directory, which has
    /// room for the output anyway.
    pub temp_dir: Option<PathBuf>,
    /// Count, skip and report malformed rows instead of stopping at the
    /// first.
    pub lenient: bool,
    pub status: ReleaseStatus,
    pub edition_uri: Option<String>,
    pub version_uri: Option<String>,
    /// The language refset whose preferred terms are the edition's default
    /// display; default: US English if present, else the largest.
    pub default_language_refset: Option<u64>,
}

impl ImportOptions {
    pub fn new(sources: Vec<PathBuf>, output: PathBuf) -> Self {
        ImportOptions {
            sources,
            output,
            max_memory: DEFAULT_MAX_MEMORY,
            sort_buffer: None,
            temp_dir: None,
            lenient: false,
            status: ReleaseStatus::Auto,
            edition_uri: None,
            version_uri: None,
            default_language_refset: None,
        }
    }

    fn sort_cap(&self) -> usize {
        self.sort_buffer.unwrap_or(self.max_memory / 4) as usize
    }
}

/// Hears about the import as it goes; the CLI draws progress bars with it.
/// Every method has a default that does nothing.
pub trait Observer {
    /// A stage starts; `total_bytes` is the input it will read (0 if none).
    fn stage(&self, _name: &str, _total_bytes: u64) {}
    /// Bytes read so far in the current stage.
    fn progress(&self, _bytes: u64) {}
    fn stage_done(&self, _report: &StageReport) {}
    /// A malformed row or dangling reference skipped in lenient mode.
    fn skipped(&self, _problem: &str) {}
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Quiet;
impl Observer for Quiet {}

#[derive(Clone, Debug)]
pub struct StageReport {
    pub name: &'static str,
    pub seconds: f64,
    /// Rows read (or records written, for stages that read no input).
    pub rows: u64,
    /// Resident memory at the end of the stage, where known.
    pub rss: Option<u64>,
}

/// What an import did.
#[derive(Clone, Debug)]
pub struct ImportReport {
    pub output: PathBuf,
    pub identity: Identity,
    pub file_size: u64,
    pub stages: Vec<StageReport>,
    pub counts: BTreeMap<String, u64>,
    /// Files in the packages that were not read, with the reason.
    pub skipped_files: Vec<(String, String)>,
    /// Rows skipped in lenient mode, and the first few problems.
    pub skipped_rows: u64,
    pub first_problems: Vec<String>,
    /// Sorted runs spilled to disk over the whole import.
    pub spilled_runs: usize,
    pub wall_seconds: f64,
    /// Peak resident memory (VmHWM), where the platform reports it.
    pub peak_rss: Option<u64>,
}

/// Why an import failed.
#[derive(Debug)]
pub enum ImportError {
    /// A package or row could not be read; names file and line.
    Rf2(Rf2Error),
    /// The edition file could not be written.
    Format(FormatError),
    /// A temporary file failed.
    Io {
        context: &'static str,
        error: io::Error,
    },
    /// The release contradicts itself (a relationship to a concept that does
    /// not exist, an is-a cycle, ...).
    Inconsistent(String),
    /// The options cannot be used.
    Options(String),
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Rf2(e) => e.fmt(f),
            ImportError::Format(e) => write!(f, "writing the edition file: {e}"),
            ImportError::Io { context, error } => write!(f, "{context}: {error}"),
            ImportError::Inconsistent(why) => write!(f, "inconsistent release: {why}"),
            ImportError::Options(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for ImportError {}

impl From<Rf2Error> for ImportError {
    fn from(e: Rf2Error) -> Self {
        ImportError::Rf2(e)
    }
}

impl From<FormatError> for ImportError {
    fn from(e: FormatError) -> Self {
        ImportError::Format(e)
    }
}

trait IoContext<T> {
    fn ctx(self, context: &'static str) -> Result<T, ImportError>;
}

impl<T> IoContext<T> for io::Result<T> {
    fn ctx(self, context: &'static str) -> Result<T, ImportError> {
        self.map_err(|error| ImportError::Io { context, error })
    }
}

/// Imports `options.sources` into `options.output`.
pub fn import(
    options: &ImportOptions,
    observer: &dyn Observer,
) -> Result<ImportReport, ImportError> {
    if options.sources.is_empty() {
        return Err(ImportError::Options("no RF2 package given".into()));
    }
    let started = Instant::now();
    let temp_root = match &options.temp_dir {
        Some(d) => d.clone(),
        None => match options.output.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
            _ => PathBuf::from("."),
        },
    };
    let temp = tempfile::Builder::new()
        .prefix(".txmap-import-")
        .tempdir_in(&temp_root)
        .ctx("creating the temporary directory")?;
    let mut releases = Vec::new();
    for path in &options.sources {
        releases.push(Release::open(path)?);
    }
    let mut imp = Importer {
        options,
        observer,
        releases,
        temp: temp.path(),
        stages: Stages::new(temp.path()),
        codes: Codes::new(),
        languages: Vec::new(),
        stage_reports: Vec::new(),
        counts: BTreeMap::new(),
        skipped_rows: 0,
        first_problems: Vec::new(),
        spilled_runs: 0,
        concept_ids: Vec::new(),
        concepts_per_module: BTreeMap::new(),
        latest_time: 0,
        refset_info: BTreeMap::new(),
        dependencies: Vec::new(),
        vocabulary: Vec::new(),
    };
    imp.run()?;
    let identity = imp.identity();
    let mut meta = Metadata::new();
    meta.insert("edition_uri".into(), identity.edition_uri.clone());
    meta.insert("version_uri".into(), identity.version_uri.clone());
    meta.insert("edition_module".into(), identity.edition_module.to_string());
    meta.insert("effective_time".into(), identity.effective_time.to_string());
    meta.insert(
        "status".into(),
        if identity.published {
            "published"
        } else {
            "unpublished"
        }
        .into(),
    );
    meta.insert("txmap_version".into(), env!("CARGO_PKG_VERSION").into());
    let sources: Vec<String> = options.sources.iter().map(|p| file_name(p)).collect();
    meta.insert("sources".into(), sources.join(" "));
    let default_refset = imp
        .counts
        .get("default_language_refset")
        .copied()
        .unwrap_or(0);
    meta.insert("default_language_refset".into(), default_refset.to_string());
    for (k, v) in &imp.counts {
        if k != "default_language_refset" {
            meta.insert(format!("count.{k}"), v.to_string());
        }
    }

    let t = Instant::now();
    observer.stage("write", 0);
    let mut writer = FileWriter::create(&options.output)?;
    let stages = std::mem::replace(&mut imp.stages, Stages::new(temp.path()));
    stages.assemble(&mut writer, LAYOUT)?;
    let output = writer.finish(&meta)?;
    let file_size = std::fs::metadata(&output)
        .ctx("reading the output's size")?
        .len();
    imp.done("write", t, 1);

    let skipped_files = imp
        .releases
        .iter()
        .flat_map(|r| {
            r.skipped()
                .iter()
                .map(|s| (s.path.clone(), s.reason.to_string()))
                .collect::<Vec<_>>()
        })
        .collect();
    Ok(ImportReport {
        output,
        identity,
        file_size,
        stages: imp.stage_reports,
        counts: imp.counts,
        skipped_files,
        skipped_rows: imp.skipped_rows,
        first_problems: imp.first_problems,
        spilled_runs: imp.spilled_runs,
        wall_seconds: started.elapsed().as_secs_f64(),
        peak_rss: memory::peak_rss(),
    })
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().replace([' ', '\t', '\n'], "_"))
        .unwrap_or_default()
}

/// The one-byte codes that records use for a few concept-valued columns.
#[derive(Debug)]
struct Codes {
    ids: Vec<u64>,
    index: HashMap<u64, u8>,
}

impl Codes {
    fn new() -> Self {
        let mut c = Codes {
            ids: Vec::new(),
            index: HashMap::new(),
        };
        // Fixed first codes, so the common ones are the same in every file.
        for id in ids::FIXED_CODES {
            let _ = c.code(id);
        }
        c
    }

    fn code(&mut self, id: u64) -> Result<u8, ImportError> {
        if let Some(&c) = self.index.get(&id) {
            return Ok(c);
        }
        if self.ids.len() >= NO_CODE as usize {
            return Err(ImportError::Inconsistent(format!(
                "more than {} distinct description types, case significances, acceptabilities and characteristic types (at {id})",
                NO_CODE
            )));
        }
        let c = self.ids.len() as u8;
        self.ids.push(id);
        self.index.insert(id, c);
        Ok(c)
    }
}

#[derive(Debug)]
struct RefsetInfo {
    kind: RefsetKind,
    schema: String,
}

struct Importer<'a> {
    options: &'a ImportOptions,
    observer: &'a dyn Observer,
    releases: Vec<Release>,
    temp: &'a Path,
    stages: Stages<'a>,
    codes: Codes,
    languages: Vec<String>,
    stage_reports: Vec<StageReport>,
    counts: BTreeMap<String, u64>,
    skipped_rows: u64,
    first_problems: Vec<String>,
    spilled_runs: usize,
    /// Every concept's SCTID, ascending: ordinal = index.
    concept_ids: Vec<u64>,
    concepts_per_module: BTreeMap<u64, u64>,
    latest_time: u32,
    refset_info: BTreeMap<u64, RefsetInfo>,
    dependencies: Vec<identity::Dependency>,
    /// The folded words of all terms, in byte order (the word index's keys).
    vocabulary: Vec<Box<str>>,
}

/// The file a row comes from.
struct FileContext<'f> {
    /// Index of the package in `ImportOptions::sources`.
    source: u32,
    file: &'f Rf2File,
    header: &'f [String],
}

/// Per description, what later stages need: 8 bytes each.
struct DescriptionFacts {
    concept: Vec<u32>,
    term_len: Vec<u16>,
    /// Bit 0: active; bit 1: synonym.
    flags: Vec<u8>,
}

impl<'a> Importer<'a> {
    fn run(&mut self) -> Result<(), ImportError> {
        self.concepts()?;
        self.relationships()?;
        self.stated()?;
        self.concrete_values()?;
        let (facts, terms, word_pairs) = self.descriptions()?;
        self.languages_and_preferred_terms(&facts, terms)?;
        self.word_index(word_pairs)?;
        self.refsets()?;
        self.small_sections()?;
        Ok(())
    }

    fn done(&mut self, name: &'static str, started: Instant, rows: u64) {
        let report = StageReport {
            name,
            seconds: started.elapsed().as_secs_f64(),
            rows,
            rss: memory::current_rss(),
        };
        self.observer.stage_done(&report);
        self.stage_reports.push(report);
    }

    fn count(&mut self, key: &str, n: u64) {
        *self.counts.entry(key.to_owned()).or_default() += n;
    }

    /// A problem that stops a strict import and is counted by a lenient one.
    fn problem(&mut self, error: ImportError) -> Result<(), ImportError> {
        if !self.options.lenient {
            return Err(error);
        }
        self.skipped_rows += 1;
        let text = error.to_string();
        self.observer.skipped(&text);
        if self.first_problems.len() < 20 {
            self.first_problems.push(text);
        }
        Ok(())
    }

    fn ordinal(&self, id: u64) -> Option<u32> {
        self.concept_ids.binary_search(&id).ok().map(|i| i as u32)
    }

    /// The ordinal of a concept a row refers to, or a problem.
    fn refer(&mut self, id: u64, what: &str, by: u64) -> Result<Option<u32>, ImportError> {
        match self.ordinal(id) {
            Some(o) => Ok(Some(o)),
            None => {
                self.problem(ImportError::Inconsistent(format!(
                    "{what} {by} refers to concept {id}, which the release does not have"
                )))?;
                Ok(None)
            }
        }
    }

    fn sorter<R: Record>(&self) -> Sorter<'a, R> {
        Sorter::new(self.options.sort_cap(), self.temp)
    }

    fn finish<R: Record>(&mut self, s: Sorter<'a, R>) -> Result<Sorted<R>, ImportError> {
        self.spilled_runs += s.runs();
        s.finish().ctx("reading sorted runs back")
    }

    /// Reads every row of every file of `kinds` in every package, calling
    /// `f` with the package index and the row. Malformed rows stop the
    /// import, or are skipped in lenient mode.
    fn read<F>(
        &mut self,
        stage: &'static str,
        kinds: &[FileKind],
        mut f: F,
    ) -> Result<u64, ImportError>
    where
        F: FnMut(&mut Self, &FileContext<'_>, &txmap_rf2::Row<'_>) -> Result<(), ImportError>,
    {
        let mut releases = std::mem::take(&mut self.releases);
        let result = (|| {
            let files: Vec<(usize, Rf2File)> = releases
                .iter()
                .enumerate()
                .flat_map(|(i, r)| {
                    r.files()
                        .iter()
                        .filter(|f| kinds.contains(&f.kind))
                        .map(move |f| (i, f.clone()))
                })
                .collect();
            let total: u64 = files.iter().map(|(_, f)| f.size).sum();
            self.observer.stage(stage, total);
            let mut done = 0u64;
            let mut rows = 0u64;
            for (i, file) in &files {
                let mut reader: RowReader<Box<dyn Read + '_>> = releases[*i].open_file(file)?;
                let header = reader.header().to_vec();
                let ctx = FileContext {
                    source: *i as u32,
                    file,
                    header: &header,
                };
                let mut last_progress = 0;
                loop {
                    let row = match reader.next_row() {
                        Ok(Some(row)) => row,
                        Ok(None) => break,
                        Err(e) if e.is_recoverable() => {
                            self.problem(ImportError::Rf2(e))?;
                            continue;
                        }
                        Err(e) => return Err(ImportError::Rf2(e)),
                    };
                    rows += 1;
                    f(self, &ctx, &row)?;
                    let read = reader.bytes_read();
                    if read - last_progress > (4 << 20) {
                        last_progress = read;
                        self.observer.progress(done + read);
                    }
                }
                done += file.size;
                self.observer.progress(done);
            }
            Ok(rows)
        })();
        self.releases = releases;
        result
    }

    /// Parses a row, turning a validation failure into a located error.
    fn parse<T>(
        &mut self,
        row: &txmap_rf2::Row<'_>,
        parsed: Result<T, txmap_rf2::parse::RowError>,
    ) -> Result<Option<T>, ImportError> {
        match parsed {
            Ok(t) => Ok(Some(t)),
            Err(e) => {
                self.problem(ImportError::Rf2(row.error(e)))?;
                Ok(None)
            }
        }
    }

    fn concepts(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let mut sorter = self.sorter::<ConceptIn>();
        let rows = self.read("concepts", &[FileKind::Concept], |imp, ctx, row| {
            let Some(c) = imp.parse(row, ConceptRow::parse(row))? else {
                return Ok(());
            };
            sorter
                .push(ConceptIn {
                    id: c.id,
                    effective_time: c.effective_time,
                    source: ctx.source,
                    module: c.module,
                    definition_status: c.definition_status,
                    active: c.active as u8,
                    pad: [0; 7],
                })
                .ctx("spilling concepts")
        })?;
        let mut latest: Vec<ConceptIn> = Vec::new();
        for c in Latest::new(self.finish(sorter)?) {
            latest.push(c?);
        }
        if latest.is_empty() {
            return Err(ImportError::Inconsistent(
                "the packages hold no concepts".into(),
            ));
        }
        self.concept_ids = latest.iter().map(|c| c.id).collect();
        let mut ids = Vec::with_capacity(latest.len() * 8);
        let mut records = Vec::with_capacity(latest.len() * size_of::<ConceptRecord>());
        let mut active = 0;
        for c in &latest {
            ids.extend_from_slice(U64::new(c.id).as_bytes());
            let module = match self.ordinal(c.module) {
                Some(m) => m,
                None => {
                    self.problem(ImportError::Inconsistent(format!(
                        "concept {} is in module {}, which the release does not have",
                        c.id, c.module
                    )))?;
                    u32::MAX
                }
            };
            let mut flags = 0;
            if c.active != 0 {
                flags |= concept_flags::ACTIVE;
                active += 1;
            }
            if c.definition_status == ids::DEFINED {
                flags |= concept_flags::DEFINED;
            }
            *self.concepts_per_module.entry(c.module).or_default() += 1;
            self.latest_time = self.latest_time.max(c.effective_time);
            let r = ConceptRecord {
                effective_time: U32::new(c.effective_time),
                module: U32::new(module),
                flags,
                reserved: [0; 3],
            };
            records.extend_from_slice(r.as_bytes());
        }
        let n = latest.len() as u64;
        self.stages
            .put(SectionKind::ConceptIds, &ids, n)
            .ctx("staging concepts")?;
        self.stages
            .put(SectionKind::Concepts, &records, n)
            .ctx("staging concepts")?;
        self.count("concepts", n);
        self.count("active_concepts", active);
        self.done("concepts", t, rows);
        Ok(())
    }

    /// Layers relationship rows and returns the active ones by ordinal.
    fn relationship_rows(
        &mut self,
        stage: &'static str,
        kind: FileKind,
    ) -> Result<(u64, Sorted<RelationshipIn>), ImportError> {
        let mut sorter = self.sorter::<RelationshipIn>();
        let rows = self.read(stage, &[kind], |imp, ctx, row| {
            let Some(r) = imp.parse(row, RelationshipRow::parse(row))? else {
                return Ok(());
            };
            sorter
                .push(RelationshipIn {
                    id: r.id,
                    effective_time: r.effective_time,
                    source: ctx.source,
                    from: r.source,
                    to: r.destination,
                    type_id: r.type_id,
                    characteristic: r.characteristic_type,
                    group: r.group,
                    active: r.active as u8,
                    pad: [0; 3],
                })
                .ctx("spilling relationships")
        })?;
        let sorted = self.finish(sorter)?;
        Ok((rows, sorted))
    }

    fn relationships(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let n = self.concept_ids.len();
        let (rows, sorted) = self.relationship_rows("relationships", FileKind::Relationship)?;
        let mut isa: Vec<(u32, u32)> = Vec::new();
        let mut out = self.sorter::<Edge>();
        let mut inbound = self.sorter::<Edge>();
        let mut active = 0u64;
        for r in Latest::new(sorted) {
            let r = r?;
            let Some(e) = self.edge(&r, "relationship")? else {
                continue;
            };
            active += 1;
            if r.type_id == ids::IS_A {
                isa.push((e.key, e.other));
                continue;
            }
            out.push(e).ctx("spilling relationships")?;
            inbound
                .push(Edge {
                    key: e.other,
                    other: e.key,
                    ..e
                })
                .ctx("spilling relationships")?;
        }
        self.count("relationships", active);
        self.count("is_a", isa.len() as u64);

        isa.sort_unstable();
        isa.dedup();
        let parents = Csr::from_sorted_pairs(n, &isa);
        drop(isa);
        let children = parents.transpose();
        let ancestors = graph::ancestors(&parents).map_err(|c| {
            ImportError::Inconsistent(format!(
                "is-a cycle through concept {}",
                self.concept_ids[c as usize]
            ))
        })?;
        self.count("closure", ancestors.items.len() as u64);
        let descendants = ancestors.transpose();
        for (kind_index, kind_items, csr) in [
            (SectionKind::ParentsIndex, SectionKind::Parents, &parents),
            (SectionKind::ChildrenIndex, SectionKind::Children, &children),
            (
                SectionKind::AncestorsIndex,
                SectionKind::Ancestors,
                &ancestors,
            ),
            (
                SectionKind::DescendantsIndex,
                SectionKind::Descendants,
                &descendants,
            ),
        ] {
            self.stage_csr(kind_index, kind_items, csr)?;
        }
        drop((parents, children, ancestors, descendants));

        let out = self.finish(out)?;
        self.stage_edges(out, SectionKind::AttributesIndex, SectionKind::Attributes)?;
        let inbound = self.finish(inbound)?;
        self.stage_edges(inbound, SectionKind::InboundIndex, SectionKind::Inbound)?;
        self.done("relationships", t, rows);
        Ok(())
    }

    /// An active relationship by ordinals, keyed by its source; `None` for
    /// an inactive one or (in lenient mode) one that refers to a concept the
    /// release lacks.
    fn edge(&mut self, r: &RelationshipIn, what: &str) -> Result<Option<Edge>, ImportError> {
        if r.active == 0 {
            return Ok(None);
        }
        let (Some(from), Some(to), Some(ty)) = (
            self.refer(r.from, what, r.id)?,
            self.refer(r.to, what, r.id)?,
            self.refer(r.type_id, what, r.id)?,
        ) else {
            return Ok(None);
        };
        Ok(Some(Edge {
            key: from,
            group: self.group(r.group, r.id)?,
            type_ord: ty,
            other: to,
            characteristic: self.codes.code(r.characteristic)?,
            pad: [0; 3],
        }))
    }

    fn group(&mut self, group: u32, id: u64) -> Result<u32, ImportError> {
        if group > u32::from(u16::MAX) {
            self.problem(ImportError::Inconsistent(format!(
                "relationship {id} has group {group}, above {}",
                u16::MAX
            )))?;
            return Ok(u32::from(u16::MAX));
        }
        Ok(group)
    }

    fn stage_csr(
        &mut self,
        index: SectionKind,
        items: SectionKind,
        csr: &Csr,
    ) -> Result<(), ImportError> {
        self.stages
            .put_index(index, &csr.offsets)
            .ctx("staging the hierarchy")?;
        let le: Vec<U32> = csr.items.iter().map(|&v| U32::new(v)).collect();
        self.stages
            .put(items, le.as_bytes(), csr.items.len() as u64)
            .ctx("staging the hierarchy")
    }

    fn stage_edges(
        &mut self,
        sorted: Sorted<Edge>,
        index: SectionKind,
        items: SectionKind,
    ) -> Result<(), ImportError> {
        let n = self.concept_ids.len();
        let mut csr = CsrBuilder::new(n);
        let staged = self.stages.get(items).ctx("staging relationships")?;
        for e in sorted {
            let e = e.ctx("reading sorted relationships")?;
            csr.add(e.key).map_err(ImportError::Inconsistent)?;
            staged
                .record(&RelationshipRecord {
                    type_ord: U32::new(e.type_ord),
                    target: U32::new(e.other),
                    group: U16::new(e.group as u16),
                    characteristic_code: e.characteristic,
                    reserved: 0,
                })
                .ctx("staging relationships")?;
        }
        self.stages
            .put_index(index, &csr.finish(n))
            .ctx("staging relationships")
    }

    fn stated(&mut self) -> Result<(), ImportError> {
        if !self.releases.iter().any(|r| {
            r.files()
                .iter()
                .any(|f| f.kind == FileKind::StatedRelationship)
        }) {
            return Ok(());
        }
        let t = Instant::now();
        let (rows, sorted) =
            self.relationship_rows("stated relationships", FileKind::StatedRelationship)?;
        let mut out = self.sorter::<Edge>();
        let mut active = 0;
        for r in Latest::new(sorted) {
            if let Some(e) = self.edge(&r?, "stated relationship")? {
                active += 1;
                out.push(e).ctx("spilling stated relationships")?;
            }
        }
        let out = self.finish(out)?;
        self.stage_edges(out, SectionKind::StatedIndex, SectionKind::Stated)?;
        self.count("stated_relationships", active);
        self.done("stated relationships", t, rows);
        Ok(())
    }

    fn concrete_values(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let n = self.concept_ids.len();
        let mut sorter = self.sorter::<ConcreteIn>();
        let mut spill = Spill::new(self.temp).ctx("creating a spill file")?;
        let rows = self.read(
            "concrete values",
            &[FileKind::RelationshipConcreteValues],
            |imp, ctx, row| {
                let Some(r) = imp.parse(row, ConcreteValueRow::parse(row))? else {
                    return Ok(());
                };
                let value_offset = spill
                    .push(r.value.as_bytes())
                    .ctx("spilling concrete values")?;
                sorter
                    .push(ConcreteIn {
                        id: r.id,
                        effective_time: r.effective_time,
                        source: ctx.source,
                        from: r.source,
                        type_id: r.type_id,
                        characteristic: r.characteristic_type,
                        value_offset,
                        value_len: r.value.len() as u32,
                        group: r.group,
                        active: r.active as u8,
                        pad: [0; 7],
                    })
                    .ctx("spilling concrete values")
            },
        )?;
        let sorted = self.finish(sorter)?;
        let mut out = self.sorter::<ConcreteOut>();
        for r in Latest::new(sorted) {
            let r = r?;
            if r.active == 0 {
                continue;
            }
            let (Some(from), Some(ty)) = (
                self.refer(r.from, "concrete value", r.id)?,
                self.refer(r.type_id, "concrete value", r.id)?,
            ) else {
                continue;
            };
            let group = self.group(r.group, r.id)?;
            let characteristic = self.codes.code(r.characteristic)?;
            out.push(ConcreteOut {
                from,
                group,
                type_ord: ty,
                value_len: r.value_len,
                value_offset: r.value_offset,
                characteristic,
                pad: [0; 7],
            })
            .ctx("spilling concrete values")?;
        }
        let values = spill.into_reader().ctx("reading concrete values back")?;
        let out = self.finish(out)?;
        let mut csr = CsrBuilder::new(n);
        let mut heap = self.stages.detached().ctx("staging concrete values")?;
        let mut buf = Vec::new();
        let mut count = 0;
        let staged = self
            .stages
            .get(SectionKind::Concrete)
            .ctx("staging concrete values")?;
        for r in out {
            let r = r.ctx("reading sorted concrete values")?;
            csr.add(r.from).map_err(ImportError::Inconsistent)?;
            values
                .read_into(r.value_offset, r.value_len as usize, &mut buf)
                .ctx("reading concrete values back")?;
            let offset = u32::try_from(heap.len)
                .map_err(|_| ImportError::Inconsistent("concrete values over 4 GiB".into()))?;
            heap.write_bytes(&buf).ctx("staging concrete values")?;
            staged
                .record(&ConcreteRecord {
                    type_ord: U32::new(r.type_ord),
                    group: U16::new(r.group as u16),
                    characteristic_code: r.characteristic,
                    reserved: 0,
                    value_offset: U32::new(offset),
                    value_len: U32::new(r.value_len),
                })
                .ctx("staging concrete values")?;
            count += 1;
        }
        heap.count = heap.len;
        self.stages.attach(SectionKind::ConcreteHeap, heap);
        self.stages
            .put_index(SectionKind::ConcreteIndex, &csr.finish(n))
            .ctx("staging concrete values")?;
        self.count("concrete_values", count);
        self.done("concrete values", t, rows);
        Ok(())
    }

    fn language_code(&mut self, code: &str) -> Result<u8, ImportError> {
        if let Some(i) = self.languages.iter().position(|l| l == code) {
            return Ok(i as u8);
        }
        if self.languages.len() >= NO_CODE as usize {
            return Err(ImportError::Inconsistent(
                "more than 255 language codes".into(),
            ));
        }
        self.languages.push(code.to_owned());
        Ok((self.languages.len() - 1) as u8)
    }

    /// Descriptions and text definitions: the `Descriptions`,
    /// `ConceptDescriptionsIndex`, `TermHeap` and `DescriptionIds` sections,
    /// plus what the language and word stages need.
    fn descriptions(&mut self) -> Result<(DescriptionFacts, Staged, Sorted<Pair32>), ImportError> {
        let t = Instant::now();
        let n = self.concept_ids.len();
        let mut sorter = self.sorter::<DescriptionIn>();
        let mut spill = Spill::new(self.temp).ctx("creating a spill file")?;
        let kinds = [FileKind::Description, FileKind::TextDefinition];
        let rows = self.read("descriptions", &kinds, |imp, ctx, row| {
            let Some(d) = imp.parse(row, DescriptionRow::parse(row))? else {
                return Ok(());
            };
            if d.term.len() > usize::from(u16::MAX) {
                return imp.problem(ImportError::Inconsistent(format!(
                    "{}:{}: term of {} bytes is longer than 65535",
                    ctx.file.path,
                    row.line,
                    d.term.len()
                )));
            }
            let language = imp.language_code(d.language)?;
            let term_offset = spill.push(d.term.as_bytes()).ctx("spilling terms")?;
            sorter
                .push(DescriptionIn {
                    id: d.id,
                    effective_time: d.effective_time,
                    source: ctx.source,
                    concept: d.concept,
                    module: d.module,
                    type_id: d.type_id,
                    case_significance: d.case_significance,
                    term_offset,
                    term_len: d.term.len() as u32,
                    language,
                    active: d.active as u8,
                    pad: [0; 2],
                })
                .ctx("spilling descriptions")
        })?;
        let sorted = self.finish(sorter)?;
        let mut out = self.sorter::<DescriptionOut>();
        for d in Latest::new(sorted) {
            let d = d?;
            let (Some(concept), Some(module)) = (
                self.refer(d.concept, "description", d.id)?,
                self.refer(d.module, "description", d.id)?,
            ) else {
                continue;
            };
            out.push(DescriptionOut {
                concept,
                module,
                id: d.id,
                term_offset: d.term_offset,
                term_len: d.term_len,
                effective_time: d.effective_time,
                type_code: self.codes.code(d.type_id)?,
                case_code: self.codes.code(d.case_significance)?,
                language: d.language,
                active: d.active,
                pad: [0; 4],
            })
            .ctx("spilling descriptions")?;
        }
        let terms = spill.into_reader().ctx("reading terms back")?;
        let out = self.finish(out)?;

        let synonym = self.codes.code(ids::SYNONYM)?;
        let mut facts = DescriptionFacts {
            concept: Vec::new(),
            term_len: Vec::new(),
            flags: Vec::new(),
        };
        let mut csr = CsrBuilder::new(n);
        let mut heap = self.stages.detached().ctx("staging terms")?;
        let mut id_index = self.sorter::<IdOrdinal>();
        let mut words = self.sorter::<Pair32>();
        let mut vocabulary: HashMap<Box<str>, u32> = HashMap::new();
        let mut term = Vec::new();
        let mut folded = String::new();
        let mut active = 0;
        let staged = self
            .stages
            .get(SectionKind::Descriptions)
            .ctx("staging descriptions")?;
        for (ordinal, d) in out.enumerate() {
            let d = d.ctx("reading sorted descriptions")?;
            let ordinal = u32::try_from(ordinal)
                .map_err(|_| ImportError::Inconsistent("more than 2^32 descriptions".into()))?;
            csr.add(d.concept).map_err(ImportError::Inconsistent)?;
            terms
                .read_into(d.term_offset, d.term_len as usize, &mut term)
                .ctx("reading terms back")?;
            let term_offset = u32::try_from(heap.len)
                .map_err(|_| ImportError::Inconsistent("terms over 4 GiB".into()))?;
            heap.write_bytes(&term).ctx("staging terms")?;
            staged
                .record(&DescriptionRecord {
                    id: U64::new(d.id),
                    concept: U32::new(d.concept),
                    module: U32::new(d.module),
                    effective_time: U32::new(d.effective_time),
                    term_offset: U32::new(term_offset),
                    term_len: U16::new(d.term_len as u16),
                    type_code: d.type_code,
                    case_code: d.case_code,
                    language: d.language,
                    flags: if d.active != 0 {
                        description_flags::ACTIVE
                    } else {
                        0
                    },
                    reserved: [0; 2],
                })
                .ctx("staging descriptions")?;
            id_index
                .push(IdOrdinal {
                    id: d.id,
                    ordinal,
                    pad: 0,
                })
                .ctx("spilling description ids")?;
            facts.concept.push(d.concept);
            facts.term_len.push(d.term_len as u16);
            facts
                .flags
                .push((d.active != 0) as u8 | (((d.type_code == synonym) as u8) << 1));
            active += u64::from(d.active != 0);

            // Words of every description, active or not: a search may ask
            // for inactive ones, and filtering is the reader's job.
            folded.clear();
            let text = std::str::from_utf8(&term)
                .map_err(|_| ImportError::Inconsistent(format!("term of {} is not UTF-8", d.id)))?;
            txmap_text::fold_into(text, &mut folded);
            for w in txmap_text::words(&folded) {
                let next = vocabulary.len() as u32;
                let id = *vocabulary.entry(w.into()).or_insert(next);
                words
                    .push(Pair32 {
                        key: id,
                        value: ordinal,
                    })
                    .ctx("spilling words")?;
            }
        }
        let d_count = facts.concept.len() as u64;
        heap.count = heap.len;
        // The heap is rewritten once preferred terms are known, which need
        // the language refsets: see `preferred_terms_first`.
        drop(terms);
        self.stages
            .put_index(SectionKind::ConceptDescriptionsIndex, &csr.finish(n))
            .ctx("staging descriptions")?;
        let ids = self.finish(id_index)?;
        let staged = self
            .stages
            .get(SectionKind::DescriptionIds)
            .ctx("staging description ids")?;
        for e in ids {
            let e = e.ctx("reading sorted description ids")?;
            staged
                .record(&DescriptionIdEntry {
                    id: U64::new(e.id),
                    ordinal: U32::new(e.ordinal),
                })
                .ctx("staging description ids")?;
        }

        // Word ids were given in order of first appearance; the index wants
        // words in byte order. Re-key the pairs by each word's rank.
        let mut by_rank: Vec<(Box<str>, u32)> = vocabulary.into_iter().collect();
        by_rank.sort_unstable();
        let mut rank = vec![0u32; by_rank.len()];
        for (r, (_, id)) in by_rank.iter().enumerate() {
            rank[*id as usize] = r as u32;
        }
        let sorted_words = self.finish(words)?;
        let mut ranked = self.sorter::<Pair32>();
        for p in sorted_words {
            let p = p.ctx("reading sorted words")?;
            ranked
                .push(Pair32 {
                    key: rank[p.key as usize],
                    value: p.value,
                })
                .ctx("spilling words")?;
        }
        let ranked = self.finish(ranked)?;
        self.vocabulary = by_rank.into_iter().map(|(w, _)| w).collect();

        self.count("descriptions", d_count);
        self.count("active_descriptions", active);
        self.done("descriptions", t, rows);
        Ok((facts, heap, ranked))
    }
}

impl Importer<'_> {
    /// Language refset rows: the `Acceptability` sections, the choice of the
    /// default language refset, and each concept's preferred term in it.
    fn languages_and_preferred_terms(
        &mut self,
        facts: &DescriptionFacts,
        terms: Staged,
    ) -> Result<(), ImportError> {
        let t = Instant::now();
        let n = self.concept_ids.len();
        let mut sorter = self.sorter::<LanguageIn>();
        let rows = self.read(
            "language refsets",
            &[FileKind::Language],
            |imp, ctx, row| {
                let Some(r) = imp.parse(row, RefsetRow::parse(row))? else {
                    return Ok(());
                };
                let Some(acceptability) = first_sctid(r.extra) else {
                    return imp.problem(ImportError::Inconsistent(format!(
                        "{}:{}: language refset row without an acceptabilityId",
                        ctx.file.path, row.line
                    )));
                };
                sorter
                    .push(LanguageIn {
                        uuid: r.id,
                        effective_time: r.effective_time,
                        source: ctx.source,
                        refset: r.refset,
                        description: r.referenced_component,
                        acceptability,
                        active: r.active as u8,
                        pad: [0; 7],
                    })
                    .ctx("spilling language refset rows")
            },
        )?;
        // Description SCTID -> ordinal, read back from the staged section
        // (sorted by SCTID) into a compact table.
        let mut by_id: Vec<(u64, u32)> = Vec::with_capacity(facts.concept.len());
        {
            let mut r = self
                .stages
                .reopen(SectionKind::DescriptionIds)
                .ctx("reading description ids")?;
            let mut rec = [0u8; size_of::<DescriptionIdEntry>()];
            for _ in 0..facts.concept.len() {
                r.read_exact(&mut rec).ctx("reading description ids")?;
                let id = u64::from_le_bytes(rec[..8].try_into().unwrap_or_default());
                let ord = u32::from_le_bytes(rec[8..12].try_into().unwrap_or_default());
                by_id.push((id, ord));
            }
        }
        let sorted = self.finish(sorter)?;
        let mut out = self.sorter::<AcceptabilityOut>();
        let mut per_refset: BTreeMap<u64, u64> = BTreeMap::new();
        for r in Latest::new(sorted) {
            let r = r?;
            if r.active == 0 {
                continue;
            }
            let Ok(i) = by_id.binary_search_by_key(&r.description, |&(id, _)| id) else {
                self.problem(ImportError::Inconsistent(format!(
                    "language refset {} refers to description {}, which the release does not have",
                    r.refset, r.description
                )))?;
                continue;
            };
            let refset = u32::from(self.codes.code(r.refset)?);
            *per_refset.entry(r.refset).or_default() += 1;
            out.push(AcceptabilityOut {
                description: by_id[i].1,
                refset,
                acceptability: self.codes.code(r.acceptability)?,
                pad: [0; 3],
            })
            .ctx("spilling language refset rows")?;
        }
        drop(by_id);
        let default = match self.options.default_language_refset {
            Some(id) => {
                if !per_refset.contains_key(&id) {
                    return Err(ImportError::Options(format!(
                        "--default-language-refset {id}: the release has no members of that refset"
                    )));
                }
                id
            }
            None if per_refset.contains_key(&ids::US_ENGLISH) => ids::US_ENGLISH,
            None => per_refset
                .iter()
                .max_by_key(|(id, n)| (**n, **id))
                .map_or(0, |(id, _)| *id),
        };
        self.counts
            .insert("default_language_refset".into(), default);
        let default_code = u32::from(self.codes.code(default)?);
        let preferred = self.codes.code(ids::PREFERRED)?;

        // Preferred term per concept, best first: preferred in the default
        // refset (0), preferred in another refset (1), any active synonym (2).
        let mut pt: Vec<(u8, u32)> = vec![(u8::MAX, u32::MAX); n];
        for (d, &c) in facts.concept.iter().enumerate() {
            if facts.flags[d] == 0b11 && pt[c as usize].0 > 2 {
                pt[c as usize] = (2, d as u32);
            }
        }
        let out = self.finish(out)?;
        let mut csr = CsrBuilder::new(facts.concept.len());
        let mut count = 0;
        let staged = self
            .stages
            .get(SectionKind::Acceptability)
            .ctx("staging acceptability")?;
        for a in out {
            let a = a.ctx("reading sorted language rows")?;
            csr.add(a.description).map_err(ImportError::Inconsistent)?;
            staged
                .record(&AcceptabilityRecord {
                    refset_code: a.refset as u8,
                    acceptability_code: a.acceptability,
                })
                .ctx("staging acceptability")?;
            count += 1;
            let d = a.description as usize;
            if a.acceptability == preferred && facts.flags[d] == 0b11 {
                let rank = if a.refset == default_code { 0 } else { 1 };
                let c = facts.concept[d] as usize;
                if rank < pt[c].0 {
                    pt[c] = (rank, a.description);
                }
            }
        }
        self.stages
            .put_index(
                SectionKind::AcceptabilityIndex,
                &csr.finish(facts.concept.len()),
            )
            .ctx("staging acceptability")?;
        self.count("language_members", count);

        self.preferred_terms_first(facts, &pt, terms)?;
        self.done("language refsets", t, rows);
        Ok(())
    }

    /// Rewrites the term heap with every concept's preferred term first, in
    /// concept order, and the other terms after: the preferred-term region
    /// is then a compact, contiguous table (`PreferredTermIndex` points into
    /// it) that the common "code → display" call reads without touching the
    /// rest of the heap, and no term is stored twice.
    fn preferred_terms_first(
        &mut self,
        facts: &DescriptionFacts,
        pt: &[(u8, u32)],
        all_terms: Staged,
    ) -> Result<(), ImportError> {
        let n = self.concept_ids.len();
        let mut is_pt = vec![false; facts.concept.len()];
        let mut index = Vec::with_capacity(n + 1);
        let mut pt_len = 0u64;
        for &(_, d) in pt {
            index.push(pt_len);
            if d != u32::MAX {
                is_pt[d as usize] = true;
                pt_len += u64::from(facts.term_len[d as usize]);
            }
        }
        index.push(pt_len);
        let index: Vec<u32> = index
            .into_iter()
            .map(u32::try_from)
            .collect::<Result<_, _>>()
            .map_err(|_| ImportError::Inconsistent("preferred terms over 4 GiB".into()))?;

        let mut old_terms = all_terms.into_reader().ctx("reading terms back")?;
        let mut old_records = self
            .stages
            .reopen(SectionKind::Descriptions)
            .ctx("reading descriptions back")?;
        let mut records = self.stages.detached().ctx("staging descriptions")?;
        let mut preferred = self.stages.detached().ctx("staging terms")?;
        let mut rest = self.stages.detached().ctx("staging terms")?;
        let mut raw = [0u8; size_of::<DescriptionRecord>()];
        let mut term = Vec::new();
        for &pt in &is_pt {
            old_records
                .read_exact(&mut raw)
                .ctx("reading descriptions back")?;
            let mut r = DescriptionRecord::read_from_bytes(&raw)
                .map_err(|_| ImportError::Inconsistent("description record size".into()))?;
            term.resize(usize::from(r.term_len.get()), 0);
            old_terms.read_exact(&mut term).ctx("reading terms back")?;
            let offset = if pt {
                let at = preferred.len;
                preferred.write_bytes(&term).ctx("staging terms")?;
                at
            } else {
                let at = pt_len + rest.len;
                rest.write_bytes(&term).ctx("staging terms")?;
                at
            };
            r.term_offset = U32::new(
                u32::try_from(offset)
                    .map_err(|_| ImportError::Inconsistent("terms over 4 GiB".into()))?,
            );
            records.record(&r).ctx("staging descriptions")?;
        }
        let mut rest = rest.into_reader().ctx("reading terms back")?;
        io::copy(&mut rest, &mut preferred).ctx("staging terms")?;
        preferred.count = preferred.len;
        self.stages.attach(SectionKind::TermHeap, preferred);
        self.stages.attach(SectionKind::Descriptions, records);
        self.stages
            .put_index(SectionKind::PreferredTermIndex, &index)
            .ctx("staging preferred terms")
    }

    /// The word index: an fst of folded words and their postings.
    fn word_index(&mut self, ranked: Sorted<Pair32>) -> Result<(), ImportError> {
        let t = Instant::now();
        self.observer.stage("word index", 0);
        let fst = self.stages.detached().ctx("staging the word index")?;
        let offsets = self.stages.detached().ctx("staging the word index")?;
        let postings = self.stages.detached().ctx("staging the word index")?;
        let text_err =
            |e: txmap_text::TextError| ImportError::Inconsistent(format!("word index: {e}"));
        let mut writer = txmap_text::IndexWriter::new(fst, offsets, postings).map_err(text_err)?;
        let mut current: Option<u32> = None;
        let mut list: Vec<u32> = Vec::new();
        let mut total = 0u64;
        for p in ranked {
            let p = p.ctx("reading sorted words")?;
            if current != Some(p.key) {
                if let Some(w) = current {
                    writer
                        .push(self.vocabulary[w as usize].as_bytes(), &list)
                        .map_err(text_err)?;
                }
                current = Some(p.key);
                list.clear();
            }
            if list.last() != Some(&p.value) {
                list.push(p.value);
                total += 1;
            }
        }
        if let Some(w) = current {
            writer
                .push(self.vocabulary[w as usize].as_bytes(), &list)
                .map_err(text_err)?;
        }
        let done = writer.into_inner().map_err(text_err)?;
        let (mut fst, mut offsets, mut postings) = (done.fst, done.offsets, done.postings);
        let words = self.vocabulary.len() as u64;
        fst.count = fst.len;
        offsets.count = words + 1;
        postings.count = total;
        self.stages.attach(SectionKind::WordFst, fst);
        self.stages.attach(SectionKind::WordPostingsIndex, offsets);
        self.stages.attach(SectionKind::WordPostings, postings);
        self.vocabulary = Vec::new();
        self.count("words", words);
        self.count("postings", total);
        self.done("word index", t, total);
        Ok(())
    }

    /// Every refset but the language refsets: `Refsets`, `Members`,
    /// `MemberFieldHeap`, `ComponentMembers`, `RefsetSchemaHeap`; and the
    /// module dependency rows that name the edition.
    fn refsets(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let kinds: Vec<FileKind> = [
            FileKind::OwlExpression,
            FileKind::Association,
            FileKind::AttributeValue,
            FileKind::SimpleRefset,
            FileKind::SimpleMap,
            FileKind::ComplexMap,
            FileKind::ExtendedMap,
            FileKind::MrcmDomain,
            FileKind::MrcmAttributeDomain,
            FileKind::MrcmAttributeRange,
            FileKind::MrcmModuleScope,
            FileKind::ModuleDependency,
            FileKind::DescriptionType,
            FileKind::RefsetDescriptor,
            FileKind::OtherRefset,
        ]
        .into();
        let mut sorter = self.sorter::<MemberIn>();
        let mut spill = Spill::new(self.temp).ctx("creating a spill file")?;
        let rows = self.read("refsets", &kinds, |imp, ctx, row| {
            let Some(r) = imp.parse(row, RefsetRow::parse(row))? else {
                return Ok(());
            };
            imp.refset_info
                .entry(r.refset)
                .or_insert_with(|| RefsetInfo {
                    kind: refset_kind(ctx.file.kind),
                    schema: format!("{}\t{}", ctx.file.pattern, ctx.header.join("\t")),
                });
            let fields_offset = spill.push(r.extra).ctx("spilling refset fields")?;
            sorter
                .push(MemberIn {
                    uuid: r.id,
                    effective_time: r.effective_time,
                    source: ctx.source,
                    refset: r.refset,
                    component: r.referenced_component,
                    fields_offset,
                    module: r.module,
                    fields_len: r.extra.len() as u32,
                    active: r.active as u8,
                    pad: [0; 3],
                })
                .ctx("spilling refset members")
        })?;
        let sorted = self.finish(sorter)?;
        let fields = spill.into_reader().ctx("reading refset fields back")?;
        let mut out = self.sorter::<MemberOut>();
        let mut buf = Vec::new();
        for m in Latest::new(sorted) {
            let m = m?;
            if m.active == 0 {
                continue;
            }
            if m.refset == ids::MODULE_DEPENDENCY {
                fields
                    .read_into(m.fields_offset, m.fields_len as usize, &mut buf)
                    .ctx("reading refset fields back")?;
                let source_effective_time = std::str::from_utf8(&buf)
                    .ok()
                    .and_then(|f| f.split('\t').next())
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(0);
                self.dependencies.push(identity::Dependency {
                    module: m.module,
                    target: m.component,
                    source_effective_time,
                });
            }
            out.push(MemberOut {
                refset: m.refset,
                component: m.component,
                fields_offset: m.fields_offset,
                fields_len: m.fields_len,
                pad: 0,
            })
            .ctx("spilling refset members")?;
        }
        let out = self.finish(out)?;
        let mut heap = self.stages.detached().ctx("staging refset members")?;
        let mut links = self.sorter::<ComponentLink>();
        let mut refsets: Vec<RefsetRecord> = Vec::new();
        let mut schema_heap: Vec<u8> = Vec::new();
        let staged = self
            .stages
            .get(SectionKind::Members)
            .ctx("staging refset members")?;
        let mut index = 0u32;
        for m in out {
            let m = m.ctx("reading sorted refset members")?;
            fields
                .read_into(m.fields_offset, m.fields_len as usize, &mut buf)
                .ctx("reading refset fields back")?;
            let offset = u32::try_from(heap.len)
                .map_err(|_| ImportError::Inconsistent("refset fields over 4 GiB".into()))?;
            heap.write_bytes(&buf).ctx("staging refset members")?;
            staged
                .record(&MemberRecord {
                    component: U64::new(m.component),
                    fields_offset: U32::new(offset),
                    fields_len: U32::new(m.fields_len),
                })
                .ctx("staging refset members")?;
            links
                .push(ComponentLink {
                    component: m.component,
                    member: index,
                    pad: 0,
                })
                .ctx("spilling refset members")?;
            match refsets.last_mut() {
                Some(r) if r.refset.get() == m.refset => {
                    r.member_count = U32::new(r.member_count.get() + 1)
                }
                _ => refsets.push(RefsetRecord {
                    refset: U64::new(m.refset),
                    first_member: U32::new(index),
                    member_count: U32::new(1),
                    schema_offset: U32::new(0),
                    schema_len: U32::new(0),
                    kind: RefsetKind::Other as u8,
                    reserved: [0; 7],
                }),
            }
            index = index
                .checked_add(1)
                .ok_or_else(|| ImportError::Inconsistent("more than 2^32 refset members".into()))?;
        }
        for r in &mut refsets {
            if let Some(info) = self.refset_info.get(&r.refset.get()) {
                r.kind = info.kind as u8;
                r.schema_offset = U32::new(schema_heap.len() as u32);
                r.schema_len = U32::new(info.schema.len() as u32);
                schema_heap.extend_from_slice(info.schema.as_bytes());
            }
        }
        heap.count = heap.len;
        self.stages.attach(SectionKind::MemberFieldHeap, heap);
        let n_refsets = refsets.len() as u64;
        self.stages
            .put(SectionKind::Refsets, refsets.as_bytes(), n_refsets)
            .ctx("staging refsets")?;
        let schema_len = schema_heap.len() as u64;
        self.stages
            .put(SectionKind::RefsetSchemaHeap, &schema_heap, schema_len)
            .ctx("staging refsets")?;
        let links = self.finish(links)?;
        let staged = self
            .stages
            .get(SectionKind::ComponentMembers)
            .ctx("staging refset members")?;
        for l in links {
            let l = l.ctx("reading sorted refset members")?;
            staged
                .record(&ComponentMemberEntry {
                    component: U64::new(l.component),
                    member: U32::new(l.member),
                })
                .ctx("staging refset members")?;
        }
        self.count("refsets", n_refsets);
        self.count("refset_members", u64::from(index));
        self.done("refsets", t, rows);
        Ok(())
    }

    fn small_sections(&mut self) -> Result<(), ImportError> {
        let codes: Vec<U64> = self.codes.ids.iter().map(|&i| U64::new(i)).collect();
        self.stages
            .put(SectionKind::Codes, codes.as_bytes(), codes.len() as u64)
            .ctx("staging codes")?;
        let mut languages = String::new();
        for l in &self.languages {
            languages.push_str(l);
            languages.push('\n');
        }
        self.stages
            .put(
                SectionKind::Languages,
                languages.as_bytes(),
                self.languages.len() as u64,
            )
            .ctx("staging languages")
    }

    fn identity(&self) -> Identity {
        let module =
            identity::edition_module(&self.dependencies, &self.concepts_per_module).unwrap_or(0);
        let time = identity::effective_time(&self.dependencies, module, self.latest_time);
        // Package names: the components of each source path and the
        // package folders inside it (a zip's or folder's top level).
        let mut names: BTreeSet<String> = self
            .options
            .sources
            .iter()
            .flat_map(|p| {
                p.components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
            })
            .collect();
        for r in &self.releases {
            for f in r.files() {
                let packages = f.path.split('/').filter(|c| c.contains("SnomedCT_"));
                names.extend(packages.map(str::to_owned));
            }
        }
        let names: Vec<String> = names.into_iter().collect();
        identity::identity(
            module,
            time,
            self.options.status,
            &names,
            self.options.edition_uri.as_deref(),
            self.options.version_uri.as_deref(),
        )
    }
}

/// The first tab-separated field of refset extra columns, as an SCTID.
fn first_sctid(extra: &[u8]) -> Option<u64> {
    let field = extra.split(|&b| b == b'\t').next()?;
    txmap_rf2::sctid::parse(field).ok().map(|(id, _)| id)
}

fn refset_kind(kind: FileKind) -> RefsetKind {
    match kind {
        FileKind::SimpleRefset => RefsetKind::Simple,
        FileKind::Association => RefsetKind::Association,
        FileKind::AttributeValue => RefsetKind::AttributeValue,
        FileKind::SimpleMap => RefsetKind::SimpleMap,
        FileKind::ComplexMap => RefsetKind::ComplexMap,
        FileKind::ExtendedMap => RefsetKind::ExtendedMap,
        FileKind::MrcmDomain => RefsetKind::MrcmDomain,
        FileKind::MrcmAttributeDomain => RefsetKind::MrcmAttributeDomain,
        FileKind::MrcmAttributeRange => RefsetKind::MrcmAttributeRange,
        FileKind::MrcmModuleScope => RefsetKind::MrcmModuleScope,
        FileKind::ModuleDependency => RefsetKind::ModuleDependency,
        FileKind::OwlExpression => RefsetKind::OwlExpression,
        FileKind::DescriptionType => RefsetKind::DescriptionType,
        FileKind::RefsetDescriptor => RefsetKind::RefsetDescriptor,
        _ => RefsetKind::Other,
    }
}

/// The last record of each run of equal component ids in a sorted stream:
/// the version of each component that the layered release holds.
struct Latest<R: Record + Versioned> {
    inner: Sorted<R>,
    pending: Option<R>,
}

impl<R: Record + Versioned> Latest<R> {
    fn new(inner: Sorted<R>) -> Self {
        Latest {
            inner,
            pending: None,
        }
    }
}

impl<R: Record + Versioned> Iterator for Latest<R> {
    type Item = Result<R, ImportError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let next = match self.inner.next_record() {
                Ok(n) => n,
                Err(error) => {
                    return Some(Err(ImportError::Io {
                        context: "reading sorted rows back",
                        error,
                    }));
                }
            };
            match (self.pending.take(), next) {
                (None, None) => return None,
                (Some(p), None) => return Some(Ok(p)),
                (None, Some(n)) => self.pending = Some(n),
                (Some(p), Some(n)) => {
                    let differs = p.component() != n.component();
                    self.pending = Some(n);
                    if differs {
                        return Some(Ok(p));
                    }
                }
            }
        }
    }
}
