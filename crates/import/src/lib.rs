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
//! [`ImportOptions::sort_buffer`], and for the dictionaries of a refset's
//! columns (the distinct values of each, coded for member filters)
//! [`ImportOptions::member_dictionary_max`] values and
//! [`MEMBER_DICTIONARY_BYTES`] bytes a column.
//!
//! Sections are staged in temporary files and assembled at the end in the
//! order reads want ([`LAYOUT`]), into a temporary file renamed into place.
//! Then a second pass maps that file and runs, over it, the searches a
//! person types first — each word prefix with 10,000 postings or more —
//! with the store's own ranking, and writes the file again with their
//! answers (`SearchHeads`, [`txmap_store::heads`]): they cannot be known
//! before the descriptions, the language refsets and the word index are
//! all in one file, and the store, not the importer, knows how a search
//! ranks. Its memory is a page of concepts per head and the pages of the
//! mapped file it reads.
//!
//! # Two threads
//!
//! Once the concepts are read, relationships and refsets need nothing from
//! descriptions and language refsets, nor they from them, and the two
//! halves are most of an import's time: they run at once
//! ([`ImportOptions::threads`]), so an import uses two cores.
//! `Importer::after_concepts` says how the halves stay apart and why the
//! file is the same whichever finishes first, and the same as with one
//! thread.

#![forbid(unsafe_code)]

mod descriptions;
mod graph;
mod identifiers;
pub mod identity;
pub mod memory;
mod numbered;
mod order;
mod records;
mod refsets;
pub use refsets::{MEMBER_DICTIONARY_BYTES, MEMBER_DICTIONARY_MAX};
mod relationships;
pub mod sort;
mod stage;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use txmap_format::schema::{
    AcceptabilityRecord, AssociationTargetEntry, ComponentMemberEntry, ConceptIdEntry,
    ConceptRecord, ConcreteRecord, DescriptionKindRecord, DescriptionProfileRecord,
    DescriptionRecord, IdentifierRecord, MemberColumnsEntry, MemberMetaRecord, MemberRecord,
    MemberValueRecord, NO_CODE, NO_ORDINAL, NO_PROFILE, PreferredTermEntry, RefsetKind,
    RefsetRecord, RelationshipKindRecord, RelationshipRecord, TARGET_BLOCK, TypeSourcesEntry,
    UNCODED, concept_flags, description_flags, identifier_hash,
};
use txmap_format::{FileWriter, FormatError, Metadata, SectionKind, U24};
use txmap_rf2::kind::FileKind;
use txmap_rf2::parse::{
    ConceptRow, ConcreteValueRow, DescriptionRow, IdentifierRow, RefsetRow, RelationshipRow,
};
use txmap_rf2::{Release, Rf2Error, Rf2File, RowReader};
use zerocopy::little_endian::{U16, U32, U64};
use zerocopy::{FromBytes, IntoBytes};

use graph::Csr;
pub use identity::{Identity, ReleaseStatus};
use records::*;
use sort::{Record, Sorted, Sorter};
use stage::{CsrBuilder, Spill, Staged, Stages};

use txmap_format::ids;

/// The order of sections in the file, by how the calls of a mixed corpus
/// read them (`txmap_store::access`, measured by the page map in
/// BENCHMARKS.md): the hot sections first and together, then the term heap
/// (its preferred terms, hot, first), then the dense sections, then the
/// sparse ones. A `prewarm-hot` read is then one run of the file, and the
/// kernel's readahead around a fault in a hot section reads more of what
/// calls want rather than the neighbouring sparse sections.
pub const LAYOUT: &[SectionKind] = &[
    // Hot.
    SectionKind::Codes,
    SectionKind::Languages,
    SectionKind::Refsets,
    SectionKind::RefsetSchemaHeap,
    SectionKind::RefsetConceptsIndex,
    SectionKind::MemberModules,
    SectionKind::MemberTimes,
    SectionKind::MemberColumns,
    SectionKind::MemberDictionaryIndex,
    SectionKind::InactiveRefsets,
    SectionKind::AttributeTypesIndex,
    SectionKind::ConcreteTypesIndex,
    SectionKind::RelationshipKinds,
    SectionKind::DescriptionKinds,
    SectionKind::MemberMetaTable,
    SectionKind::AcceptabilitySetsIndex,
    SectionKind::AcceptabilitySets,
    SectionKind::DescriptionProfilesIndex,
    SectionKind::DescriptionProfiles,
    SectionKind::WordFst,
    SectionKind::WordPostingsIndex,
    SectionKind::ConceptIdIndex,
    SectionKind::ConceptIds,
    SectionKind::Concepts,
    SectionKind::ConceptDescriptionsIndex,
    SectionKind::DescriptionSearch,
    // Written by the second pass ([`search_heads`]).
    SectionKind::SearchHeads,
    SectionKind::SearchHeadText,
    SectionKind::SearchHeadLists,
    SectionKind::AttributesIndex,
    SectionKind::InboundIndex,
    SectionKind::PreferredTermIndex,
    // Hot for their faults, not their share (`txmap_store::access`).
    SectionKind::DescendantsIndex,
    SectionKind::ComponentMembers,
    // Starts with the carriers of the preferred terms (hot), in concept
    // order; the other terms are sparse.
    SectionKind::TermHeap,
    // Dense.
    SectionKind::AncestorsIndex,
    SectionKind::ParentsIndex,
    SectionKind::Parents,
    SectionKind::ChildrenIndex,
    SectionKind::ConcreteIndex,
    SectionKind::Attributes,
    SectionKind::Inbound,
    SectionKind::WordFirstWords,
    // Sparse.
    SectionKind::Children,
    SectionKind::Descriptions,
    SectionKind::DescriptionAcceptability,
    // Read by description filters only.
    SectionKind::ConceptDescriptionProfiles,
    SectionKind::Concrete,
    SectionKind::ConcreteHeap,
    SectionKind::DescriptionsById,
    SectionKind::Ancestors,
    SectionKind::Descendants,
    SectionKind::RefsetConcepts,
    SectionKind::Members,
    SectionKind::MemberConcepts,
    SectionKind::MemberFieldHeap,
    SectionKind::AssociationTargetBlocks,
    SectionKind::AssociationTargets,
    SectionKind::MemberMeta,
    SectionKind::MemberCodes,
    SectionKind::MemberDictionary,
    SectionKind::InactiveMembers,
    SectionKind::InactiveMemberMeta,
    SectionKind::Identifiers,
    SectionKind::IdentifierHeap,
    SectionKind::AttributeTypeSources,
    SectionKind::ConcreteTypeSources,
    SectionKind::StatedIndex,
    SectionKind::Stated,
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
    /// The memory the importer plans for, in bytes. Each sorter holds at
    /// most a quarter of it, an eighth while two stages run at once on two
    /// threads (a type index's sorter an eighth of that), unless
    /// `sort_buffer` is set; the rest is for what is kept per concept and
    /// per description. The report gives the peak (`peak_rss`): about 0.6
    /// of the default at International scale.
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
    /// Distinct values of one refset column coded in `MemberDictionary`
    /// (at most [`MEMBER_DICTIONARY_MAX`], the default); later new values
    /// are left to the member's text. Answers are the same either way.
    pub member_dictionary_max: usize,
    /// 2 (the default where the machine has two cores) runs the import's
    /// two independent halves at once, for a little over half the time
    /// and a higher peak; 1 runs them one after the other. The file is the
    /// same. The halves are two, so more threads gain nothing.
    pub threads: usize,
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
            member_dictionary_max: MEMBER_DICTIONARY_MAX,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(2)),
        }
    }

    fn sort_cap(&self) -> usize {
        self.sort_buffer.unwrap_or(self.max_memory / 4) as usize
    }
}

/// Hears about the import as it goes; the CLI draws progress bars with it.
/// Every method has a default that does nothing. `Sync`, because the
/// relationship and refset stages run on a second thread and report their
/// ends and their problems from there (stage starts and progress come from
/// one thread only).
pub trait Observer: Sync {
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
    /// The edition written could not be read back (for its search heads).
    Reread(txmap_store::StoreError),
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ImportError::Rf2(e) => e.fmt(f),
            ImportError::Format(e) => write!(f, "writing the edition file: {e}"),
            ImportError::Io { context, error } => write!(f, "{context}: {error}"),
            ImportError::Inconsistent(why) => write!(f, "inconsistent release: {why}"),
            ImportError::Options(why) => f.write_str(why),
            ImportError::Reread(e) => write!(f, "reading the written edition back: {e}"),
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
    let mut imp = Importer::new(options, observer, releases, temp.path());
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
    imp.done("write", t, 1);

    let t = Instant::now();
    observer.stage("search heads", 0);
    let heads = search_heads(&output, &meta)?;
    imp.count("search_heads", heads);
    let file_size = std::fs::metadata(&output)
        .ctx("reading the output's size")?
        .len();
    imp.done("search heads", t, heads);

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

/// The second pass: the edition just written at `output`, read back
/// (mapped), answers each search head's search
/// ([`txmap_store::heads`]); the file is written again, its sections in
/// [`LAYOUT`] order with the heads among them, and renamed over the first.
/// Returns how many heads there are.
fn search_heads(output: &Path, meta: &Metadata) -> Result<u64, ImportError> {
    let loaded =
        txmap_load::load(output, txmap_load::LoadMode::Mmap).map_err(|e| ImportError::Io {
            context: "reading the written edition back",
            error: e.io_error().map_or_else(
                || io::Error::other(e.to_string()),
                |io| io::Error::new(io.kind(), e.to_string()),
            ),
        })?;
    let edition = txmap_store::Edition::open(loaded.bytes).map_err(ImportError::Reread)?;
    let heads = edition.build_search_heads().map_err(ImportError::Reread)?;
    let bytes = edition.bytes().as_ref();
    let container = txmap_format::Container::open(bytes)?;
    // The sections are copied from the file, not through the mapping, so
    // that the copy does not make the whole file resident in this process.
    let mut first = std::fs::File::open(output).ctx("reading the written edition back")?;
    let mut writer = FileWriter::create(output)?;
    for &kind in LAYOUT {
        match kind {
            SectionKind::SearchHeads => writer.add_section(kind, &heads.records, heads.count)?,
            SectionKind::SearchHeadText => {
                writer.add_section(kind, &heads.text, heads.text.len() as u64)?
            }
            SectionKind::SearchHeadLists => {
                writer.add_section(kind, &heads.lists, heads.lists.len() as u64 / 3)?
            }
            _ => {
                if let Some(entry) = container.entry(kind) {
                    use std::io::{Read, Seek};
                    first
                        .seek(io::SeekFrom::Start(entry.offset.get()))
                        .ctx("reading the written edition back")?;
                    let mut section = writer.section(kind)?;
                    io::copy(&mut (&mut first).take(entry.len.get()), &mut section)
                        .ctx("copying a section of the written edition")?;
                    section.finish(entry.count.get())?;
                }
            }
        }
    }
    writer.finish(meta)?;
    Ok(heads.count)
}

/// `v` in three bytes, as format 6 holds ordinals and member indexes,
/// or an error naming `what`. The counts are checked where the
/// components are read, so this is the last word, not the first.
pub(crate) fn narrow(v: u32, what: &str) -> Result<U24, ImportError> {
    U24::new(v).ok_or_else(|| {
        ImportError::Inconsistent(format!(
            "{what} {v} does not fit in three bytes (at most {})",
            U24::MAX
        ))
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
    /// Set while a pass reads rows that a later pass reads again and
    /// reports on (the hierarchy order's pass over relationships): its
    /// problems are skipped silently, not counted twice.
    quiet: bool,
    spilled_runs: usize,
    /// Memory per sorter: the options' share, halved while two stages run
    /// at once.
    sort_cap: usize,
    /// Every concept's SCTID and ordinal ([`order`]: depth-first).
    concepts: order::ConceptNumbers,
    /// Whether each concept (by ordinal) is active, for `DescriptionSearch`.
    concept_active: Vec<bool>,
    /// Every concept's record, staged once the hierarchy has added
    /// [`concept_flags::IN_HIERARCHY`] (12 bytes a concept, beside the 8
    /// of its SCTID above).
    concept_records: Vec<ConceptRecord>,
    /// Whether each concept is the root or below it: set by the
    /// relationship stage, which computes the closure.
    in_hierarchy: Vec<bool>,
    concepts_per_module: BTreeMap<u64, u64>,
    latest_time: u32,
    refset_info: BTreeMap<u64, RefsetInfo>,
    dependencies: Vec<identity::Dependency>,
    /// The folded words of all terms, in byte order (the word index's keys).
    vocabulary: Vec<Box<str>>,
    /// The (type, characteristic type) pairs of the staged relationships.
    relationship_kinds: numbered::Numbered<(u32, u8, u16)>,
}

/// Problems a lenient import keeps the text of.
const FIRST_PROBLEMS: usize = 20;

/// What the second thread tells the observer: its stages' ends and
/// its problems. Stage starts and progress belong to the main thread's
/// stage, which is the one a progress bar shows.
struct Background<'o>(&'o dyn Observer);

impl Observer for Background<'_> {
    fn stage_done(&self, report: &StageReport) {
        self.0.stage_done(report);
    }
    fn skipped(&self, problem: &str) {
        self.0.skipped(problem);
    }
}

/// The file a row comes from.
struct FileContext<'f> {
    /// Index of the package in `ImportOptions::sources`.
    source: u32,
    file: &'f Rf2File,
    header: &'f [String],
}

/// Per description, what later stages need: 9 bytes each.
struct DescriptionFacts {
    concept: Vec<u32>,
    term_len: Vec<u16>,
    /// Bit 0: active; bit 1: synonym; bit 2: fully specified name.
    flags: Vec<u8>,
    /// The type code and language index, for the description profiles.
    type_language: Vec<(u8, u8)>,
    /// The `DescriptionSearch` entry but for `PREFERRED`, which the
    /// language refsets decide.
    search: Vec<u16>,
}

impl<'a> Importer<'a> {
    fn new(
        options: &'a ImportOptions,
        observer: &'a dyn Observer,
        releases: Vec<Release>,
        temp: &'a Path,
    ) -> Self {
        Importer {
            options,
            observer,
            releases,
            temp,
            stages: Stages::new(temp),
            codes: Codes::new(),
            languages: Vec::new(),
            stage_reports: Vec::new(),
            counts: BTreeMap::new(),
            skipped_rows: 0,
            first_problems: Vec::new(),
            quiet: false,
            spilled_runs: 0,
            sort_cap: options.sort_cap(),
            concepts: order::ConceptNumbers::default(),
            concept_active: Vec::new(),
            concept_records: Vec::new(),
            in_hierarchy: Vec::new(),
            concepts_per_module: BTreeMap::new(),
            latest_time: 0,
            refset_info: BTreeMap::new(),
            dependencies: Vec::new(),
            vocabulary: Vec::new(),
            relationship_kinds: numbered::Numbered::new(
                "(type, characteristic type, group) of relationships",
            ),
        }
    }

    fn run(&mut self) -> Result<(), ImportError> {
        self.concepts()?;
        self.after_concepts()?;
        self.stage_concepts()?;
        self.identifiers()?;
        self.small_sections()?;
        Ok(())
    }

    /// The relationship and refset stages and the description stages need
    /// nothing of each other but the concepts, and together they are most
    /// of an import's time. With [`ImportOptions::threads`] at 2 they run
    /// at once: relationships and refsets on a second thread with an
    /// importer of their own (its own package readers, staged sections and
    /// counts, merged here after), and every sorter of both gets half its
    /// usual share of `max_memory` meanwhile. At 1, descriptions first, then
    /// the rest, in this thread.
    ///
    /// Both give the same file, whichever thread finishes first. The one
    /// thing both halves could add to is the table of one-byte codes, whose
    /// order is the order of first use. Of the second half only
    /// relationships code anything, characteristic types, and the standard
    /// ones are fixed codes; a release whose relationships use another has
    /// the second half run again after the first, with the shared table,
    /// which is the one-thread order (the observer then hears of the
    /// second half's stages twice). Reports, problems and errors come in
    /// that order too.
    fn after_concepts(&mut self) -> Result<(), ImportError> {
        if self.options.threads < 2 {
            self.description_stages()?;
            return self.relationship_and_refset_stages();
        }
        let mut releases = Vec::new();
        for path in &self.options.sources {
            releases.push(Release::open(path)?);
        }
        let background = Background(self.observer);
        let mut side = Importer::new(self.options, &background, releases, self.temp);
        side.concepts = self.concepts.clone();
        if self.options.sort_buffer.is_none() {
            side.sort_cap /= 2;
            self.sort_cap /= 2;
        }
        let (main_result, side_result) = std::thread::scope(|s| {
            let second = s.spawn(|| side.relationship_and_refset_stages());
            (self.description_stages(), second.join())
        });
        self.sort_cap = self.options.sort_cap();
        main_result?;
        match side_result {
            Ok(result) => result?,
            Err(panic) => std::panic::resume_unwind(panic),
        }
        if side.codes.ids.len() > ids::FIXED_CODES.len() {
            return self.relationship_and_refset_stages();
        }
        let Importer {
            stages,
            stage_reports,
            counts,
            skipped_rows,
            first_problems,
            spilled_runs,
            refset_info,
            dependencies,
            in_hierarchy,
            ..
        } = side;
        self.in_hierarchy = in_hierarchy;
        self.stages.absorb(stages);
        self.refset_info = refset_info;
        self.dependencies = dependencies;
        self.stage_reports.extend(stage_reports);
        for (k, v) in counts {
            self.count(&k, v);
        }
        self.skipped_rows += skipped_rows;
        self.first_problems.extend(first_problems);
        self.first_problems.truncate(FIRST_PROBLEMS);
        self.spilled_runs += spilled_runs;
        Ok(())
    }

    fn relationship_and_refset_stages(&mut self) -> Result<(), ImportError> {
        self.relationships()?;
        self.stated()?;
        // Concrete values number their kinds in the same table.
        self.concrete_values()?;
        self.stage_relationship_kinds()?;
        self.refsets()
    }

    fn description_stages(&mut self) -> Result<(), ImportError> {
        let (facts, terms, ids, word_pairs) = self.descriptions()?;
        self.languages_and_preferred_terms(&facts, terms, ids)?;
        self.word_index(word_pairs)
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
        if self.quiet {
            return Ok(());
        }
        if !self.options.lenient {
            return Err(error);
        }
        self.skipped_rows += 1;
        let text = error.to_string();
        self.observer.skipped(&text);
        if self.first_problems.len() < FIRST_PROBLEMS {
            self.first_problems.push(text);
        }
        Ok(())
    }

    fn ordinal(&self, id: u64) -> Option<u32> {
        self.concepts.ordinal(id)
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
        Sorter::new(self.sort_cap, self.temp)
    }

    /// A sorter for the type indexes, which fill beside two others: an
    /// eighth of the usual cap (their records are 8 bytes; an
    /// International release's fit in it without spilling).
    fn small_sorter<R: Record>(&self) -> Sorter<'a, R> {
        Sorter::new(self.sort_cap / 8, self.temp)
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
        // Relationships name their other end in three bytes, and
        // association targets say "no concept" with the largest.
        if latest.len() > U24::MAX as usize {
            return Err(ImportError::Inconsistent(format!(
                "{} concepts: an edition file holds at most {}",
                latest.len(),
                U24::MAX
            )));
        }
        let sorted: Vec<u64> = latest.iter().map(|c| c.id).collect();
        self.done("concepts", t, rows);
        let order = self.hierarchy_order(&sorted)?;
        self.concepts = order::ConceptNumbers::new(sorted, &order);
        self.concept_active = order
            .iter()
            .map(|&i| latest[i as usize].active != 0)
            .collect();
        let mut ids = Vec::with_capacity(latest.len() * 8);
        let mut records = Vec::with_capacity(latest.len());
        let mut active = 0;
        for c in order.iter().map(|&i| &latest[i as usize]) {
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
                // Out of range when the module is no concept here.
                module: U24::saturating(module),
                flags,
            };
            records.push(r);
        }
        let index: Vec<ConceptIdEntry> = (self.concepts.by_id())
            .map(|(id, o)| ConceptIdEntry {
                id: U64::new(id),
                ordinal: U24::saturating(o),
            })
            .collect();
        self.stages
            .put_records(SectionKind::ConceptIdIndex, &index)
            .ctx("staging concepts")?;
        let n = latest.len() as u64;
        self.stages
            .put(SectionKind::ConceptIds, &ids, n)
            .ctx("staging concepts")?;
        self.concept_records = records;
        self.count("concepts", n);
        self.count("active_concepts", active);
        Ok(())
    }

    /// The order concepts are numbered in ([`order`]), from one pass over
    /// the relationship files that keeps the latest row of each is-a
    /// relationship: `order[o]` is the position in `sorted` (every
    /// concept's SCTID, ascending) of the concept numbered `o`.
    fn hierarchy_order(&mut self, sorted: &[u64]) -> Result<Vec<u32>, ImportError> {
        let t = Instant::now();
        let mut sorter = self.sorter::<RelationshipIn>();
        // Problems are reported by the relationship stage, which reads
        // these rows again.
        self.quiet = true;
        let is_a = ids::IS_A.to_string();
        let rows = self.read(
            "hierarchy order",
            &[FileKind::Relationship],
            |_, ctx, row| {
                // Most rows are attributes: only is-a rows are parsed.
                if row.get(7) != Some(is_a.as_bytes()) {
                    return Ok(());
                }
                let Ok(r) = RelationshipRow::parse(row) else {
                    return Ok(());
                };
                sorter
                    .push(RelationshipIn::of(&r, ctx.source))
                    .ctx("spilling is-a relationships")
            },
        );
        self.quiet = false;
        let rows = rows?;
        let position = |id: u64| sorted.binary_search(&id).ok().map(|i| i as u32);
        let mut edges = Vec::new();
        for r in Latest::new(self.finish(sorter)?) {
            let r = r?;
            if r.active != 0
                && let (Some(child), Some(parent)) = (position(r.from), position(r.to))
            {
                edges.push((child, parent));
            }
        }
        let order = order::depth_first(sorted.len(), edges, position(ids::ROOT));
        self.done("hierarchy order", t, rows);
        Ok(order)
    }
}

impl Importer<'_> {
    /// Stages the concept records, with the flag the relationship stage
    /// found: whether each concept is in the root's hierarchy.
    fn stage_concepts(&mut self) -> Result<(), ImportError> {
        let mut records = std::mem::take(&mut self.concept_records);
        for (r, &below) in records.iter_mut().zip(&self.in_hierarchy) {
            if below {
                r.flags |= concept_flags::IN_HIERARCHY;
            }
        }
        self.stages
            .put_records(SectionKind::Concepts, &records)
            .ctx("staging concepts")
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
