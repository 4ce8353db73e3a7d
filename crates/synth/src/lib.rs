//! Deterministic synthetic SNOMED CT RF2 Snapshot releases.
//!
//! Real SNOMED CT releases are licensed and large, so they cannot live in
//! the repository or in CI. Tests need small releases whose structure they
//! can reason about; benchmarks need International-scale ones (≈535,000
//! concepts, millions of description, language and relationship rows); a
//! demo server needs *something* to serve on first run. This crate makes
//! all three from a size and a seed:
//!
//! * the real metadata concepts (root, the 19 top-level hierarchies, the
//!   model component: modules, description types, case significance,
//!   acceptability, characteristic types, language, association,
//!   inactivation, map and module-dependency refsets, concept model
//!   attributes) with their real SCTIDs and FSNs, because importers
//!   hard-code them;
//! * a heavy-tailed, acyclic is-a graph of synthetic concepts under them
//!   (≈1.45 parents per active concept, depth up to 17, hubs with
//!   thousands of children), ~70% active, with plausible terms, US/GB
//!   dialect pairs, role-grouped attributes, concrete values, historical
//!   associations, simple refsets and maps ([`generate`]);
//! * extension packages in a namespace that add concepts *and* override
//!   base components with later effective times, to test layering.
//!
//! Same configuration, same bytes: all randomness comes from a fixed
//! in-crate PRNG, nothing depends on hash-map order, time or the
//! environment, and zip entries carry fixed timestamps.
//!
//! ```no_run
//! use txmap_synth::{SynthConfig, generate};
//! let summary = generate(&SynthConfig::new(5_000, 42), "target/synth".as_ref())?;
//! println!("{} concepts in {}", summary.concepts, summary.package);
//! # Ok::<(), txmap_synth::SynthError>(())
//! ```

mod emit;
mod ext;
mod meta;
mod model;
mod out;
mod rng;
mod vocab;

use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};

use crate::emit::{Ctx, Scratch, Stats};
use crate::model::Model;
use crate::out::{Rf2, Sink};
use crate::rng::{Rng, Stream};
use crate::vocab::Vocab;

/// Effective time used when none is given: the January 2025 release date.
pub const DEFAULT_EFFECTIVE_TIME: u32 = 20250131;
/// Concept rows of an International-scale release (for benchmarks).
pub const INTERNATIONAL_CONCEPTS: usize = 535_000;
/// Largest base release accepted (memory and id ranges are sized for it).
pub const MAX_CONCEPTS: usize = 20_000_000;
/// Largest number of new concepts in an extension (ids must fit the
/// namespace's 8-digit item identifiers).
pub const MAX_EXTENSION_CONCEPTS: usize = 1_500_000;

/// What to generate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SynthConfig {
    /// Base release: all concept rows, metadata and inactive ones included
    /// (at least [`min_concepts`]). Extension: the number of new concepts
    /// in the extension's module (its module and language refset concepts
    /// and the overridden base concepts come on top).
    pub concepts: usize,
    pub seed: u64,
    /// The release date, `YYYYMMDD`.
    pub effective_time: u32,
    /// Generate an extension package over a regenerated base instead of a
    /// base release.
    pub extension: Option<ExtensionConfig>,
}

impl SynthConfig {
    /// A base release of `concepts` rows dated [`DEFAULT_EFFECTIVE_TIME`].
    pub fn new(concepts: usize, seed: u64) -> SynthConfig {
        SynthConfig {
            concepts,
            seed,
            effective_time: DEFAULT_EFFECTIVE_TIME,
            extension: None,
        }
    }
}

impl Default for SynthConfig {
    fn default() -> SynthConfig {
        SynthConfig::new(5_000, 1)
    }
}

/// The base an extension is layered on: it is rebuilt in memory from
/// these values, which must be those the base release was generated with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtensionConfig {
    /// `concepts` of the base release.
    pub base_concepts: usize,
    /// `seed` of the base release.
    pub base_seed: u64,
    /// `effective_time` of the base release; the extension's own must be
    /// later. Written as the target effective time of module dependencies.
    pub base_effective_time: u32,
    /// Seven-digit namespace identifier, e.g. 1000124.
    pub namespace: u32,
}

impl ExtensionConfig {
    /// An extension over a base dated [`DEFAULT_EFFECTIVE_TIME`].
    pub fn new(base_concepts: usize, base_seed: u64, namespace: u32) -> ExtensionConfig {
        ExtensionConfig {
            base_concepts,
            base_seed,
            base_effective_time: DEFAULT_EFFECTIVE_TIME,
            namespace,
        }
    }
}

/// What an extension overrode in its base.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExtensionSummary {
    /// Base concepts re-emitted as inactive (with indicator and association).
    pub inactivated_concepts: u64,
    /// Active base relationships of those concepts re-emitted as inactive.
    pub overridden_relationships: u64,
    /// Base descriptions re-emitted with a new term and the same id.
    pub changed_descriptions: u64,
    /// New is-a relationships from base concepts to base concepts.
    pub added_parents: u64,
}

/// Counts of a generated release. Row counts exclude header lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SynthSummary {
    /// Top-level folder (or zip entry prefix) of the package.
    pub package: String,
    /// Every file, relative to the output directory (or zip entry name),
    /// with its row count.
    pub files: Vec<(String, u64)>,
    /// The module of the package's own content (core module for a base).
    pub module_id: u64,
    pub effective_time: u32,
    /// Rows in the concept file.
    pub concepts: u64,
    pub active_concepts: u64,
    /// Rows in the description file (text definitions excluded).
    pub descriptions: u64,
    pub active_descriptions: u64,
    pub text_definitions: u64,
    pub language_rows: u64,
    /// Rows in the relationship file.
    pub relationships: u64,
    pub active_relationships: u64,
    pub active_is_a: u64,
    pub concrete_values: u64,
    pub associations: u64,
    pub attribute_values: u64,
    pub simple_refset_rows: u64,
    pub simple_map_rows: u64,
    pub extended_map_rows: u64,
    pub module_dependencies: u64,
    /// Longest is-a path from the root in the generated graph.
    pub max_depth: u32,
    /// Most active is-a children of one synthetic concept.
    pub max_children: u32,
    /// Present for extension packages.
    pub extension: Option<ExtensionSummary>,
}

/// Why a release could not be generated.
#[derive(Debug)]
#[non_exhaustive]
pub enum SynthError {
    /// A configuration value is out of range.
    InvalidConfig { field: &'static str, reason: String },
    /// Creating, writing or renaming a file failed.
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Writing the zip archive failed.
    Zip {
        path: PathBuf,
        source: zip::result::ZipError,
    },
}

impl fmt::Display for SynthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SynthError::InvalidConfig { field, reason } => {
                write!(
                    f,
                    "invalid synthetic release configuration: {field}: {reason}"
                )
            }
            SynthError::Io { path, source } => write!(f, "{}: {source}", path.display()),
            SynthError::Zip { path, source } => write!(f, "{}: {source}", path.display()),
        }
    }
}

impl std::error::Error for SynthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SynthError::InvalidConfig { .. } => None,
            SynthError::Io { source, .. } => Some(source),
            SynthError::Zip { source, .. } => Some(source),
        }
    }
}

/// The smallest base release: its metadata concepts alone.
pub fn min_concepts() -> usize {
    Model::meta_count()
}

fn invalid(field: &'static str, reason: impl Into<String>) -> SynthError {
    SynthError::InvalidConfig {
        field,
        reason: reason.into(),
    }
}

fn check_date(field: &'static str, d: u32) -> Result<(), SynthError> {
    let (y, m, day) = (d / 10_000, (d / 100) % 100, d % 100);
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => 0,
    };
    if !(2000..=2107).contains(&y) || day == 0 || day > days {
        return Err(invalid(
            field,
            format!("{d} is not a date YYYYMMDD between 2000 and 2107"),
        ));
    }
    Ok(())
}

fn validate(config: &SynthConfig) -> Result<(), SynthError> {
    check_date("effective_time", config.effective_time)?;
    let (base, field) = match &config.extension {
        Some(ext) => (ext.base_concepts, "extension.base_concepts"),
        None => (config.concepts, "concepts"),
    };
    if base < min_concepts() {
        return Err(invalid(
            field,
            format!(
                "{base} is fewer than the {} metadata concepts",
                min_concepts()
            ),
        ));
    }
    if base > MAX_CONCEPTS {
        return Err(invalid(
            field,
            format!("{base} is more than {MAX_CONCEPTS}"),
        ));
    }
    if let Some(ext) = &config.extension {
        check_date("extension.base_effective_time", ext.base_effective_time)?;
        if config.effective_time <= ext.base_effective_time {
            return Err(invalid(
                "effective_time",
                format!(
                    "an extension's effective time ({}) must be later than its base's ({})",
                    config.effective_time, ext.base_effective_time
                ),
            ));
        }
        if !(1_000_000..=9_999_999).contains(&ext.namespace) {
            return Err(invalid(
                "extension.namespace",
                format!("{} is not a seven-digit namespace", ext.namespace),
            ));
        }
        if config.concepts > MAX_EXTENSION_CONCEPTS {
            return Err(invalid(
                "concepts",
                format!(
                    "{} is more than {MAX_EXTENSION_CONCEPTS} extension concepts",
                    config.concepts
                ),
            ));
        }
    }
    Ok(())
}

/// The package folder name of a release.
fn package_name(config: &SynthConfig) -> String {
    match &config.extension {
        None => format!("SnomedCT_SyntheticRF2_SYNTH_{}", config.effective_time),
        Some(ext) => format!(
            "SnomedCT_SyntheticExtensionRF2_SYNTH_{}_{}",
            ext.namespace, config.effective_time
        ),
    }
}

/// Generates a release into `out`: a directory (created if missing; the
/// package folder is written inside it) or, when `out` ends in `.zip`, a
/// zip archive holding the package folder.
///
/// Files appear under their final names only once complete. Generating
/// the same configuration again gives byte-identical files.
pub fn generate(config: &SynthConfig, out: &Path) -> Result<SynthSummary, SynthError> {
    validate(config)?;
    let is_zip = out
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("zip"));
    if !is_zip {
        fs::create_dir_all(out).map_err(|source| SynthError::Io {
            path: out.to_path_buf(),
            source,
        })?;
        return write_release(config, out);
    }
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).map_err(|source| SynthError::Io {
        path: parent.clone(),
        source,
    })?;
    let name = out
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let staging = parent.join(format!(".{name}.staging-{}", std::process::id()));
    if staging.exists() {
        let _ = fs::remove_dir_all(&staging);
    }
    let result = write_release(config, &staging).and_then(|summary| {
        out::write_zip(&staging, &summary.files, out, config.effective_time)?;
        Ok(summary)
    });
    // Best effort: the staging copy is never part of the result.
    let _ = fs::remove_dir_all(&staging);
    result
}

fn write_release(config: &SynthConfig, root: &Path) -> Result<SynthSummary, SynthError> {
    let vocab = Vocab::new();
    let package = package_name(config);
    let mut stats = Stats::default();
    let (model, plan, code) = match &config.extension {
        None => (
            Model::build_base(config.concepts, config.seed),
            None,
            "INT".to_string(),
        ),
        Some(ext) => {
            let (model, plan) = ext::build(config, ext);
            (model, Some(plan), ext.namespace.to_string())
        }
    };
    let mut sink = Sink::create(root, &package, &code, config.effective_time)?;
    let mut ext_summary = None;
    match (&config.extension, &plan) {
        (Some(ext), Some(plan)) => {
            let base_hist = emit::history(ext.base_effective_time);
            let ext_hist = vec![config.effective_time];
            let base_ctx = Ctx {
                model: &model,
                vocab: &vocab,
                pools: &model.base_pools,
                hist: &base_hist,
                langs: [meta::US_ENGLISH, meta::GB_ENGLISH],
                content_refsets: true,
            };
            let refset = model.ext.map_or(meta::GB_ENGLISH, |e| e.refset);
            let ext_ctx = Ctx {
                model: &model,
                vocab: &vocab,
                pools: &model.ext_pools,
                hist: &ext_hist,
                langs: [meta::US_ENGLISH, refset],
                content_refsets: false,
            };
            let times = (config.effective_time, ext.base_effective_time);
            let s = ext::write(
                &model,
                plan,
                (&base_ctx, &ext_ctx),
                &mut sink,
                &mut stats,
                times,
            )?;
            ext_summary = Some(s);
        }
        _ => {
            let hist = emit::history(config.effective_time);
            let ctx = Ctx {
                model: &model,
                vocab: &vocab,
                pools: &model.base_pools,
                hist: &hist,
                langs: [meta::US_ENGLISH, meta::GB_ENGLISH],
                content_refsets: true,
            };
            let mut order: Vec<u32> = (0..model.concepts.len() as u32).collect();
            order.sort_by_key(|&i| model.concepts[i as usize].id);
            let mut scratch = Scratch::default();
            for i in order {
                emit::write_concept(&ctx, &mut sink, &mut stats, i, &mut scratch)?;
            }
            let mut rng = Rng::derive(config.seed, Stream::Release, 0);
            let et = u64::from(config.effective_time);
            sink.row(Rf2::ModuleDependency)
                .uuid(rng.uuid())
                .num(et)
                .flag(true)
                .num(meta::CORE_MODULE)
                .num(meta::MODULE_DEPENDENCY)
                .num(meta::MODEL_MODULE)
                .num(et)
                .num(et)
                .end()?;
        }
    }
    let rows = |f: Rf2| sink.rows(f);
    let mut summary = SynthSummary {
        package,
        files: Vec::new(),
        module_id: model.ext.map_or(meta::CORE_MODULE, |e| e.module),
        effective_time: config.effective_time,
        concepts: rows(Rf2::Concept),
        active_concepts: stats.active_concepts,
        descriptions: rows(Rf2::Description),
        active_descriptions: stats.active_descriptions,
        text_definitions: rows(Rf2::TextDefinition),
        language_rows: rows(Rf2::Language),
        relationships: rows(Rf2::Relationship),
        active_relationships: stats.active_relationships,
        active_is_a: stats.active_is_a,
        concrete_values: rows(Rf2::Concrete),
        associations: rows(Rf2::Association),
        attribute_values: rows(Rf2::AttributeValue),
        simple_refset_rows: rows(Rf2::Simple),
        simple_map_rows: rows(Rf2::SimpleMap),
        extended_map_rows: rows(Rf2::ExtendedMap),
        module_dependencies: rows(Rf2::ModuleDependency),
        max_depth: u32::from(model.max_depth()),
        max_children: model.max_children(),
        extension: ext_summary,
    };
    summary.files = sink.finish()?;
    Ok(summary)
}
