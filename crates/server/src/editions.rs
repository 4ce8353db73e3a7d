//! The editions a server holds: found from the config, named from their
//! metadata, loaded in the mode the config gives each, and opened with the
//! same store code whatever that mode. The compiled code system files
//! (LOINC, RxNorm, NDC: `txmap import --loinc`, `--rxnorm`, `--ndc`)
//! listed beside them are told apart by their metadata and loaded the same
//! way, by the same rules: what loading gave either is one [`ServedFile`].

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use txmap_codesystems::CodeSystemFile;
use txmap_load::{Advice, EditionBytes, LoadMode, Loader, Prewarm};
use txmap_store::Edition;
use txmap_store::access::{self, Access};
use txmap_terminology::serving::Serving;

use crate::config::{self, Config, EditionNames};
use crate::error::ServeError;

/// What loading gave one file of `editions`, edition or code system: how
/// it was asked to be and was loaded, and whether it may answer.
#[derive(Debug)]
pub struct ServedFile {
    /// `version_uri` is the edition's (a code system's `url|version`),
    /// `edition_uri` its module's (a code system's url): what config
    /// entries match besides the file name.
    pub names: EditionNames,
    pub path: PathBuf,
    pub asked: LoadMode,
    pub obtained: LoadMode,
    /// True only when the bytes really are a memory mapping.
    pub mapped: bool,
    pub size: u64,
    pub open_time: Duration,
    /// Why mapping failed and the file was read instead.
    pub fallback: Option<String>,
    pub prewarm: Option<Prewarm>,
    /// Whether it may answer: verified, trusted, being verified, failed
    /// ([`txmap_terminology::serving`]); shared with its code system
    /// provider.
    pub serving: Arc<Serving>,
    /// The file as it was when loaded: a file whose identity changes under
    /// the server is taken out of service ([`scrub`]).
    pub identity: Option<FileIdentity>,
}

/// What says a file is still the one loaded: its device, inode, size and
/// modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    modified: Option<std::time::SystemTime>,
}

impl FileIdentity {
    /// The identity of the file at `path` now.
    pub fn of(path: &Path) -> std::io::Result<FileIdentity> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(path)?;
        Ok(FileIdentity {
            dev: m.dev(),
            ino: m.ino(),
            size: m.len(),
            modified: m.modified().ok(),
        })
    }
}

impl ServedFile {
    /// Loads `path` in `mode` (saying so when it could not be mapped):
    /// the file's facts, and its bytes to open.
    fn load(
        config: &Config,
        loader: &Loader,
        path: &Path,
        names: EditionNames,
        mode: LoadMode,
    ) -> Result<(ServedFile, EditionBytes), ServeError> {
        let loaded = loader
            .load(path, mode)
            .map_err(|e| ServeError::Edition(e.to_string()))?;
        if let Some(why) = &loaded.fallback {
            tracing::warn!(
                "{}: could not map ({why}); read into memory instead",
                path.display()
            );
        }
        let trusted = config
            .snomed
            .as_ref()
            .is_some_and(|s| s.trust_unverified.iter().any(|t| names.matches(t)));
        if trusted {
            tracing::warn!(
                "{}: served unverified, as [snomed] trust_unverified asks",
                path.display()
            );
        }
        let identity = FileIdentity::of(path).ok();
        let file = ServedFile {
            identity,
            // Messages to clients name the file, not where it lives.
            serving: Arc::new(Serving::new(names.file_name.clone(), trusted)),
            names,
            path: path.to_owned(),
            asked: loaded.asked,
            obtained: loaded.obtained,
            mapped: loaded.mapped,
            size: loaded.size,
            open_time: loaded.open_time,
            fallback: loaded.fallback,
            prewarm: loaded.prewarm,
        };
        Ok((file, loaded.bytes))
    }

    fn open_error(&self, e: impl std::fmt::Display) -> ServeError {
        ServeError::Edition(format!("{}: {e}", self.path.display()))
    }

    /// `path uri: asked …, loaded …[ (mapped)], N bytes`, for the log.
    fn describe(&self) -> String {
        format!(
            "{} {}: asked {}, loaded {}{}, {} bytes",
            self.path.display(),
            self.names.version_uri,
            self.asked,
            self.obtained,
            if self.mapped { " (mapped)" } else { "" },
            self.size,
        )
    }
}

/// One loaded edition.
#[derive(Debug)]
pub struct ServedEdition {
    pub file: ServedFile,
    /// Shared with the edition's code system provider
    /// ([`txmap_snomed::SnomedCt`]) in the terminology engine.
    pub edition: Arc<Edition<EditionBytes>>,
}

impl ServedEdition {
    /// Start address and length of the bytes, for residency accounting.
    pub fn address_range(&self) -> (usize, usize) {
        self.edition.bytes().address_range()
    }
}

/// One loaded compiled code system file (LOINC, RxNorm, NDC).
#[derive(Debug)]
pub struct ServedCodeSystem {
    pub file: ServedFile,
    pub code_system: Arc<CodeSystemFile<EditionBytes>>,
}

/// Every edition the server holds, and which one answers unversioned
/// calls; and the compiled code systems.
#[derive(Debug)]
pub struct Editions {
    pub list: Vec<ServedEdition>,
    /// Which of `list` unversioned calls mean: a pointer the operator
    /// moves (`/admin/default`), shared with the editions' code system
    /// providers.
    pub default: Arc<txmap_snomed::DefaultEdition>,
    pub code_systems: Vec<ServedCodeSystem>,
}

impl Editions {
    pub fn any_mapped(&self) -> bool {
        self.files().any(|f| f.mapped)
    }

    /// Every served file, editions first.
    pub fn files(&self) -> impl Iterator<Item = &ServedFile> {
        self.list
            .iter()
            .map(|e| &e.file)
            .chain(self.code_systems.iter().map(|c| &c.file))
    }

    pub fn default_edition(&self) -> Option<&ServedEdition> {
        self.default_index().and_then(|i| self.list.get(i))
    }

    /// The default edition's place in `list`, now.
    pub fn default_index(&self) -> Option<usize> {
        self.default.get()
    }
}

/// The edition files a config names: files as given, directories scanned
/// for `*.txmap` (sorted by name). A missing file or directory, or a
/// directory that holds no `*.txmap` file, is fatal; a file named twice
/// (listed twice, or listed and in a listed directory, by whatever path)
/// is loaded once, with a warning.
pub fn edition_files(config: &Config, base: &Path) -> Result<Vec<PathBuf>, ServeError> {
    let mut files = Vec::new();
    for entry in &config.editions {
        let path = base.join(entry);
        let meta = std::fs::metadata(&path)
            .map_err(|e| ServeError::Config(format!("editions: {}: {e}", path.display())))?;
        if meta.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(&path)
                .map_err(|e| ServeError::Config(format!("editions: {}: {e}", path.display())))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "txmap") && p.is_file())
                .collect();
            if found.is_empty() {
                return Err(ServeError::Config(format!(
                    "editions: {} holds no *.txmap file",
                    path.display()
                )));
            }
            found.sort();
            files.extend(found);
        } else {
            files.push(path);
        }
    }
    let mut seen = std::collections::HashSet::new();
    files.retain(|f| {
        let same = std::fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        let first = seen.insert(same);
        if !first {
            tracing::warn!(
                "editions: {} is named more than once; loaded once",
                f.display()
            );
        }
        first
    });
    Ok(files)
}

/// How mapped editions ask the kernel for help on a fault (`[snomed]
/// advice`). Read editions take no faults, so it does not apply to them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdvicePolicy {
    /// Each section as `txmap_store::access` classes it: hot and dense
    /// sections with the kernel's readahead (a fault reads its neighbours,
    /// which the next calls want), sparse ones one page a fault. The
    /// default.
    Sections,
    /// One page a fault everywhere: the least read, the most faults.
    Random,
    /// The kernel's readahead everywhere: the fewest faults, the most read.
    Normal,
}

impl AdvicePolicy {
    pub fn from_name(name: &str) -> Option<AdvicePolicy> {
        match name {
            "sections" => Some(AdvicePolicy::Sections),
            "random" => Some(AdvicePolicy::Random),
            "normal" => Some(AdvicePolicy::Normal),
            _ => None,
        }
    }

    /// Advises a mapping's ranges (on top of random, the loader's advice
    /// for the whole). Done after the edition is opened, so that opening
    /// reads a page where it looks and not a readahead window around it.
    pub fn apply(self, bytes: &EditionBytes) {
        let plan: Vec<(std::ops::Range<usize>, Advice)> = match self {
            AdvicePolicy::Random => Vec::new(),
            AdvicePolicy::Normal => vec![(0..bytes.len(), Advice::Normal)],
            AdvicePolicy::Sections => access::ranges(bytes)
                .into_iter()
                .filter(|(_, a)| *a != Access::Sparse)
                .map(|(r, _)| (r, Advice::Normal))
                .collect(),
        };
        for (range, advice) in plan {
            let _ = bytes.advise(range, advice);
        }
    }
}

/// The loader the server loads editions with: `base`'s options, with
/// `prewarm-hot` editions reading their hot sections.
pub fn with_hot_ranges(base: &Loader) -> Loader {
    base.clone()
        .hot_ranges(Arc::new(|b: &[u8]| access::hot_ranges(b)))
}

/// Reads each file's identity (header and trailer only), decides its mode,
/// loads and opens it. Warnings go to the log, one line each.
pub fn load_editions(
    config: &Config,
    files: &[PathBuf],
    loader: &Loader,
) -> Result<Editions, ServeError> {
    let mut names = Vec::with_capacity(files.len());
    let mut is_code_system = Vec::with_capacity(files.len());
    for path in files {
        let file = std::fs::File::open(path)
            .map_err(|e| ServeError::Edition(format!("{}: {e}", path.display())))?;
        let meta = txmap_format::peek_metadata(&file)
            .map_err(|e| ServeError::Edition(format!("{}: {e}", path.display())))?;
        let get = |k: &str| meta.get(k).cloned().unwrap_or_default();
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let code_system = get("content") == txmap_codesystems::file::CONTENT;
        is_code_system.push(code_system);
        names.push(if code_system {
            EditionNames {
                file_name,
                version_uri: format!("{}|{}", get("url"), get("version")),
                edition_uri: get("url"),
            }
        } else {
            EditionNames {
                file_name,
                version_uri: get("version_uri"),
                edition_uri: get("edition_uri"),
            }
        });
    }
    // Two files of one version would answer the same requests two ways.
    for (i, a) in names.iter().enumerate() {
        if let Some(j) = names[..i]
            .iter()
            .position(|b| b.version_uri == a.version_uri)
        {
            return Err(ServeError::Config(format!(
                "editions: {} and {} are the same version, {}: serve one of them",
                files[j].display(),
                files[i].display(),
                a.version_uri
            )));
        }
    }
    let (modes, warnings) = config::load_modes(config.snomed.as_ref(), &names);
    for w in warnings {
        tracing::warn!("{w}");
    }
    let advice = config.snomed.as_ref().and_then(|s| s.advice.as_deref());
    let policy = match advice.map(|a| (a, AdvicePolicy::from_name(a))) {
        None => AdvicePolicy::Sections,
        Some((_, Some(p))) => p,
        Some((other, None)) => {
            tracing::warn!(
                "[snomed] advice = {other:?} is not \"sections\", \"random\" or \"normal\"; using \"sections\""
            );
            AdvicePolicy::Sections
        }
    };
    let loader = with_hot_ranges(loader);
    let mut list = Vec::with_capacity(files.len());
    let mut code_systems = Vec::new();
    for (((path, names), mode), code_system) in
        files.iter().zip(names).zip(modes).zip(is_code_system)
    {
        if code_system {
            code_systems.push(load_code_system(config, path, names, mode, &loader)?);
            continue;
        }
        let (file, bytes) = ServedFile::load(config, &loader, path, names, mode)?;
        let mut edition = Edition::open(bytes).map_err(|e| file.open_error(e))?;
        policy.apply(edition.bytes());
        if file.mapped && policy != AdvicePolicy::Random {
            edition.set_prefetch(txmap_load::will_need);
        }
        tracing::info!(
            "edition {}, opened in {:.2} ms",
            file.describe(),
            file.open_time.as_secs_f64() * 1e3,
        );
        list.push(ServedEdition {
            file,
            edition: Arc::new(edition),
        });
    }
    let default = match &config.default_edition {
        Some(entry) => {
            let found = list.iter().position(|e| e.file.names.matches(entry));
            if found.is_none() {
                tracing::warn!(
                    "default_edition {entry:?} matches no loaded edition; using the first"
                );
            }
            found.or(if list.is_empty() { None } else { Some(0) })
        }
        None if list.is_empty() => None,
        None => Some(0),
    };
    Ok(Editions {
        list,
        default: Arc::new(txmap_snomed::DefaultEdition::new(default)),
        code_systems,
    })
}

/// Loads and opens one compiled code system file. Its hot sections are
/// not classed (they are an edition's), so `prewarm_hot` reads it whole.
fn load_code_system(
    config: &Config,
    path: &Path,
    names: EditionNames,
    mode: LoadMode,
    loader: &Loader,
) -> Result<ServedCodeSystem, ServeError> {
    let mode = if mode == LoadMode::PrewarmHot {
        tracing::warn!(
            "{}: a code system file has no hot sections; prewarmed whole",
            path.display()
        );
        LoadMode::Prewarm
    } else {
        mode
    };
    let (file, bytes) = ServedFile::load(config, loader, path, names, mode)?;
    let code_system = CodeSystemFile::open(bytes).map_err(|e| file.open_error(e))?;
    tracing::info!(
        "code system {}, {} concepts",
        file.describe(),
        code_system.len()
    );
    Ok(ServedCodeSystem {
        file,
        code_system: Arc::new(code_system),
    })
}

/// Files up to this size are verified before the server listens (a few
/// milliseconds: checksums run at memory speed); larger ones in the
/// background, and answer 503 until they pass.
pub const VERIFY_BEFORE_SERVING: u64 = 64 << 20;

/// Reads every edition's checksums through, as [`txmap_snomed::serving`]
/// explains: small files now, the others on one background thread, each
/// mapped and prewarmed one after its prewarm read (so the verification
/// reads the page cache rather than faulting page by page).
pub fn verify(editions: &Editions) {
    let files = checked(editions);
    let mut later = Vec::new();
    for c in files {
        if c.serving.state() != txmap_terminology::serving::State::Verifying {
            continue;
        }
        if c.size <= VERIFY_BEFORE_SERVING {
            verify_one(&c);
        } else {
            later.push(c);
        }
    }
    if later.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("txmap-verify".into())
        .spawn(move || {
            for c in later {
                verify_one(&c);
            }
        });
    if let Err(e) = spawned {
        tracing::error!("could not start verifying the editions: {e}; they stay out of service");
    }
}

/// Every served file, to verify.
fn checked(editions: &Editions) -> Vec<Checked> {
    let of = |f: &ServedFile, target| Checked {
        file: f.path.display().to_string(),
        size: f.size,
        target,
        prewarm: f.prewarm.clone(),
        serving: Arc::clone(&f.serving),
    };
    editions
        .list
        .iter()
        .map(|e| of(&e.file, Target::Edition(Arc::clone(&e.edition))))
        .chain(
            editions
                .code_systems
                .iter()
                .map(|c| of(&c.file, Target::CodeSystem(Arc::clone(&c.code_system)))),
        )
        .collect()
}

/// A served file to verify.
struct Checked {
    file: String,
    size: u64,
    target: Target,
    prewarm: Option<Prewarm>,
    serving: Arc<Serving>,
}

enum Target {
    Edition(Arc<Edition<EditionBytes>>),
    CodeSystem(Arc<CodeSystemFile<EditionBytes>>),
}

impl Target {
    fn bytes(&self) -> &EditionBytes {
        match self {
            Target::Edition(e) => e.bytes(),
            Target::CodeSystem(c) => c.bytes(),
        }
    }

    fn verify(&self, progress: impl FnMut(u64)) -> Result<(), String> {
        match self {
            Target::Edition(e) => e.verify(progress).map_err(|e| e.to_string()),
            Target::CodeSystem(c) => c.verify(progress).map_err(|e| e.to_string()),
        }
    }
}

fn verify_one(c: &Checked) {
    let (file, serving) = (&c.file, &c.serving);
    if let Some(p) = &c.prewarm {
        p.wait();
    }
    let started = std::time::Instant::now();
    let result = read_through(c, |n| serving.progress(n));
    match &result {
        Ok(()) => tracing::info!(
            "{file} verified in {:.1} ms: in service",
            started.elapsed().as_secs_f64() * 1e3
        ),
        Err(e) => tracing::error!("{file} failed verification: {e}; out of service"),
    }
    serving.finish(result);
}

/// Reads every checksum of a file through, leaving the page cache as it
/// found it.
fn read_through(c: &Checked, mut progress: impl FnMut(u64)) -> Result<(), String> {
    // Verification reads every byte, but it must not warm a mapped edition
    // the config leaves cold (nor cool one it prewarmed): the pages that
    // were not in the page cache before are given back as each chunk is
    // checked, and the next chunk is asked for ahead, so the read goes at
    // disk speed rather than a fault a page. No request reads the edition
    // meanwhile (it answers 503 until this ends), so no page it wanted is
    // dropped.
    let bytes = c.target.bytes();
    let before = bytes.residency();
    let ahead = txmap_format::VERIFY_CHUNK;
    let mut done = 0usize;
    if before.is_some() {
        let _ = bytes.advise(0..ahead, Advice::WillNeed);
    }
    let result = c.target.verify(|n| {
        progress(n);
        if let Some(keep) = &before {
            let pos = n as usize;
            let _ = bytes.advise(pos..pos + ahead, Advice::WillNeed);
            let _ = bytes.release(done..pos, keep);
            done = done.max(pos);
        }
    });
    if let Some(keep) = &before {
        // The word index is read again after the sections' checksums.
        let _ = bytes.release(0..bytes.len(), keep);
    }
    result
}

/// How often the scrub looks at each file's identity (a `stat`).
pub const IDENTITY_EVERY: Duration = Duration::from_secs(1);

/// Takes out of service every file in service whose identity is not the
/// one loaded (see [`crate::state::scrub`]).
pub fn check_identities(editions: &Editions) {
    for f in editions.files() {
        if !f.serving.is_serving()
            || f.serving.state() == txmap_terminology::serving::State::Trusted
        {
            continue;
        }
        let now = FileIdentity::of(&f.path);
        if now.as_ref().ok() != f.identity.as_ref() {
            let why = match now {
                Err(e) => format!("the file is gone ({e})"),
                Ok(_) => {
                    "the file was changed on disk while served; restart to serve the new one".into()
                }
            };
            tracing::error!("{}: {why}; out of service", f.path.display());
            f.serving.fail(why);
        }
    }
}

/// Reads every file in service through again (see
/// [`crate::state::scrub`]).
pub fn scrub_once(editions: &Editions) {
    check_identities(editions);
    for c in checked(editions) {
        if c.serving.state() != txmap_terminology::serving::State::Verified {
            continue;
        }
        if let Err(e) = read_through(&c, |_| {}) {
            tracing::error!("{} failed its scrub: {e}; out of service", c.file);
            c.serving.fail(e);
        }
    }
}
