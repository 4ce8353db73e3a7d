//! `txmap-packages`: FHIR packages (the npm-format `.tgz` files the FHIR
//! package registries and the npm registry serve, such as
//! `hl7.terminology.r4` or `hl7.fhir.r5.core`) as a source of CodeSystems
//! and ValueSets for `txmap-terminology`.
//!
//! A package is read once, at startup: the tarball is decompressed as a
//! stream, and of its top-level `package/*.json` files only the
//! terminology resources (CodeSystem, ValueSet, ConceptMap) are kept, as
//! their JSON text without the narrative (`text`, nearly half of it)
//! back to back in one buffer, with an index entry (resource type, url,
//! version, byte range) each. Everything else (StructureDefinitions,
//! examples, ...) is dropped as it streams past.
//! Nothing is parsed beyond the few fields the index needs until a
//! request asks for a URL: then that resource is parsed once, into the
//! engine's indexed form, and kept for the life of the process
//! ([`Packages`], one per FHIR endpoint).
//!
//! The FHIR core packages (`hl7.fhir.rN.core`) carry the FHIR version as
//! the version of their code systems and value sets; an endpoint serves
//! the core package of its own FHIR version when one is loaded, and
//! otherwise another core package's resources reported at the endpoint's
//! FHIR version (the core code systems do not change between R4 and R5
//! in what the suite asks of them).
//!
//! No async, no HTTP; blocking reads on the caller's thread.
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;
use txmap_terminology::{CodeSystem, ResourceSource, ValueSet};

/// Why a package could not be read.
#[derive(Debug)]
pub enum Error {
    /// Reading or decompressing the file failed.
    Io {
        package: String,
        source: std::io::Error,
    },
    /// The file is not a FHIR package.
    Format { package: String, message: String },
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Io { package, source } => write!(f, "FHIR package {package}: {source}"),
            Error::Format { package, message } => write!(f, "FHIR package {package}: {message}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Format { .. } => None,
        }
    }
}

/// The resource types a package contributes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    CodeSystem,
    ValueSet,
    ConceptMap,
}

impl Kind {
    /// Every kind, in the order the server lists them.
    pub const ALL: [Kind; 3] = [Kind::CodeSystem, Kind::ValueSet, Kind::ConceptMap];

    /// The FHIR resource type (`"ValueSet"`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::CodeSystem => "CodeSystem",
            Kind::ValueSet => "ValueSet",
            Kind::ConceptMap => "ConceptMap",
        }
    }

    /// The kind of FHIR resource type `name`, if it is one.
    pub fn from_name(name: &str) -> Option<Kind> {
        match name {
            "CodeSystem" => Some(Kind::CodeSystem),
            "ValueSet" => Some(Kind::ValueSet),
            "ConceptMap" => Some(Kind::ConceptMap),
            _ => None,
        }
    }
}

/// One indexed resource of a package.
#[derive(Clone, Debug)]
pub struct Entry {
    pub kind: Kind,
    pub url: String,
    pub version: Option<String>,
    /// The search parameters of the resource (FHIR read and search).
    pub id: Option<String>,
    pub name: Option<String>,
    pub title: Option<String>,
    pub status: Option<String>,
    /// `CodeSystem.content` (`supplement`...).
    pub content: Option<String>,
    start: usize,
    len: usize,
}

/// The fields read from every resource at load time.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "resourceType")]
    resource_type: Option<String>,
    url: Option<String>,
    version: Option<String>,
    id: Option<String>,
    name: Option<String>,
    title: Option<String>,
    status: Option<String>,
    content: Option<String>,
    /// The narrative, located to be cut out.
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
}

/// `json` without its top-level `"text"` member (the XHTML narrative,
/// nearly half the bytes of a terminology package and never read by the
/// engine), when `text` is that member's value borrowed from `json`.
/// Anything unexpected leaves `json` whole.
fn without_text<'a>(json: &'a [u8], text: &RawValue) -> Vec<std::borrow::Cow<'a, [u8]>> {
    use std::borrow::Cow;
    let whole = vec![Cow::Borrowed(json)];
    let value_start = (text.get().as_ptr() as usize).wrapping_sub(json.as_ptr() as usize);
    let value_end = value_start + text.get().len();
    if value_end > json.len() {
        return whole;
    }
    let ws = |b: &u8| b.is_ascii_whitespace();
    // Back over `"text"` and `:`.
    let before = &json[..value_start];
    let Some(colon) = before.iter().rposition(|b| !ws(b)) else {
        return whole;
    };
    if before[colon] != b':' {
        return whole;
    }
    let Some(quote) = before[..colon].iter().rposition(|b| !ws(b)) else {
        return whole;
    };
    if quote < 5 || &before[quote - 5..=quote] != b"\"text\"" {
        return whole;
    }
    let key_start = quote - 5;
    // Take the comma after the member, else the one before it.
    let after = value_end + json[value_end..].iter().take_while(|b| ws(b)).count();
    let (cut_start, cut_end) = if json.get(after) == Some(&b',') {
        (key_start, after + 1)
    } else {
        let Some(comma) = json[..key_start].iter().rposition(|b| !ws(b)) else {
            return whole;
        };
        if json[comma] != b',' {
            return whole;
        }
        (comma, value_end)
    };
    vec![
        Cow::Borrowed(&json[..cut_start]),
        Cow::Borrowed(&json[cut_end..]),
    ]
}

/// The index entry of the resource `json`, whose text (without its
/// narrative if `cut_narrative`) is appended to `bytes`; `None`, and
/// nothing appended, if it is not a terminology resource with a `url`.
fn index(json: &[u8], bytes: &mut Vec<u8>, cut_narrative: bool) -> Option<Entry> {
    let head = serde_json::from_slice::<Head>(json).ok()?;
    let kind = head.resource_type.as_deref().and_then(Kind::from_name)?;
    let url = head.url?;
    let start = bytes.len();
    match head.text {
        Some(text) if cut_narrative => {
            for piece in without_text(json, text) {
                bytes.extend_from_slice(&piece);
            }
        }
        _ => bytes.extend_from_slice(json),
    }
    debug_assert!(
        serde_json::from_slice::<serde::de::IgnoredAny>(&bytes[start..]).is_ok(),
        "a resource without its narrative is not JSON"
    );
    Some(Entry {
        kind,
        url,
        version: head.version,
        id: head.id,
        name: head.name,
        title: head.title,
        status: head.status,
        content: head.content,
        start,
        len: bytes.len() - start,
    })
}

/// `package/package.json`.
#[derive(Deserialize)]
struct Manifest {
    name: Option<String>,
    version: Option<String>,
    #[serde(rename = "fhirVersions", default)]
    fhir_versions: Vec<String>,
}

/// One FHIR package, indexed: the JSON of its terminology resources in
/// one buffer, and where each one is.
#[derive(Debug)]
pub struct Package {
    pub name: String,
    pub version: String,
    /// `fhirVersions` of `package.json`.
    pub fhir_versions: Vec<String>,
    /// Files in the tarball.
    pub files: usize,
    bytes: Vec<u8>,
    entries: Vec<Entry>,
}

impl Package {
    /// Reads a `.tgz` package file.
    pub fn open(path: &Path) -> Result<Package, Error> {
        let label = path.display().to_string();
        let file = std::fs::File::open(path).map_err(|source| Error::Io {
            package: label.clone(),
            source,
        })?;
        Package::from_tgz(std::io::BufReader::new(file), &label)
    }

    /// Reads a gzipped tarball; `label` names it in errors.
    pub fn from_tgz(reader: impl Read, label: &str) -> Result<Package, Error> {
        let io = |source| Error::Io {
            package: label.to_owned(),
            source,
        };
        let format = |message: String| Error::Format {
            package: label.to_owned(),
            message,
        };
        let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(reader));
        let mut bytes = Vec::new();
        let mut entries = Vec::new();
        let mut manifest: Option<Manifest> = None;
        let mut files = 0;
        let mut scratch = Vec::new();
        for file in archive.entries().map_err(io)? {
            let mut file = file.map_err(io)?;
            if !file.header().entry_type().is_file() {
                continue;
            }
            files += 1;
            let path = file.path().map_err(io)?.to_string_lossy().into_owned();
            // Only the package's own resources: `package/X.json`, not
            // `package/example/...` nor `package/other/...`.
            let Some(name) = path.strip_prefix("package/") else {
                continue;
            };
            if name.contains('/') || !name.ends_with(".json") || name == ".index.json" {
                continue;
            }
            scratch.clear();
            file.read_to_end(&mut scratch).map_err(io)?;
            if name == "package.json" {
                manifest = Some(
                    serde_json::from_slice(&scratch)
                        .map_err(|e| format(format!("package.json: {e}")))?,
                );
                continue;
            }
            // A file that is not JSON is a damaged package, not a file to
            // skip: the resource it held would be missing without a word.
            if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&scratch) {
                return Err(format(format!("{path}: not JSON: {e}")));
            }
            if let Some(entry) = index(&scratch, &mut bytes, true) {
                entries.push(entry);
            }
        }
        // The tar ends before the gzip stream does: read the rest, so that
        // the gzip trailer's CRC-32 and length are checked. A damaged byte
        // can inflate to other bytes that still parse; only the checksum
        // says so.
        let mut rest = archive.into_inner();
        std::io::copy(&mut rest, &mut std::io::sink()).map_err(io)?;
        let manifest = manifest.ok_or_else(|| format("no package/package.json".into()))?;
        bytes.shrink_to_fit();
        entries.shrink_to_fit();
        Ok(Package {
            name: manifest.name.unwrap_or_else(|| label.to_owned()),
            version: manifest.version.unwrap_or_default(),
            fhir_versions: manifest.fhir_versions,
            files,
            bytes,
            entries,
        })
    }

    /// A package of resources held as JSON text (`resources`, each whole:
    /// the narrative is kept), named `name` and `version`: what the server
    /// stores itself is served through the same index as what packages
    /// bring. Texts that are not a CodeSystem, ValueSet or ConceptMap
    /// with a `url` are left out.
    pub fn from_resources<'a>(
        name: &str,
        version: &str,
        resources: impl IntoIterator<Item = &'a [u8]>,
    ) -> Package {
        let mut bytes = Vec::new();
        let mut entries = Vec::new();
        let mut files = 0;
        for json in resources {
            files += 1;
            if let Some(entry) = index(json, &mut bytes, false) {
                entries.push(entry);
            }
        }
        Package {
            name: name.to_owned(),
            version: version.to_owned(),
            fhir_versions: Vec::new(),
            files,
            bytes,
            entries,
        }
    }

    /// The indexed resources, in tarball order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The JSON text of one entry.
    pub fn json(&self, entry: &Entry) -> &[u8] {
        &self.bytes[entry.start..entry.start + entry.len]
    }

    /// The bytes held for the resources' JSON.
    pub fn held_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Whether this is a FHIR core package (`hl7.fhir.r4.core`,
    /// `hl7.fhir.r5.core`, ...).
    pub fn is_core(&self) -> bool {
        self.name
            .strip_prefix("hl7.fhir.r")
            .and_then(|r| r.strip_suffix(".core"))
            .is_some_and(|n| {
                !n.is_empty() && n.trim_end_matches('b').bytes().all(|b| b.is_ascii_digit())
            })
    }

    /// Whether the package is for FHIR `fhir_version` (compared on
    /// major.minor).
    pub fn is_for(&self, fhir_version: &str) -> bool {
        let mm = |v: &str| v.split('.').take(2).collect::<Vec<_>>().join(".");
        self.fhir_versions.iter().any(|v| mm(v) == mm(fhir_version))
    }
}

/// One resource as an endpoint lists it: its index entry, the version it
/// is reported in, and its JSON on demand.
#[derive(Clone, Copy, Debug)]
pub struct Listed<'a> {
    pub entry: &'a Entry,
    /// The version reported (a core package's at the endpoint's FHIR
    /// version).
    pub version: Option<&'a str>,
    packages: &'a Packages,
    slot: &'a Slot,
}

/// The id a resource of `kind` with its own id `id`, from package
/// `package`, is served by, given the ids served so far (`taken`, which it
/// joins): its own when free, else qualified by the package
/// (`hl7.fhir.r5.core-action-type`: THO and R5 core share 221 ids), cut
/// to FHIR's 64 characters and numbered if that too is taken. So every
/// resource of a kind has one id, and a read by it finds that resource.
fn served_id(
    taken: &mut std::collections::HashSet<(Kind, String)>,
    kind: Kind,
    package: &str,
    id: &str,
) -> String {
    if taken.insert((kind, id.to_owned())) {
        return id.to_owned();
    }
    let package: String = package
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let qualified = format!("{package}-{id}");
    let cut = |s: &str, room: usize| s.chars().take(room).collect::<String>();
    let mut candidate = cut(&qualified, 64);
    let mut n = 2u32;
    while !taken.insert((kind, candidate.clone())) {
        let suffix = format!("-{n}");
        candidate = format!("{}{suffix}", cut(&qualified, 64 - suffix.len()));
        n += 1;
    }
    candidate
}

impl<'a> Listed<'a> {
    /// The id the endpoint serves the resource by (unique among the
    /// endpoint's resources of its kind); the resource's JSON carries it.
    pub fn id(&self) -> Option<&'a str> {
        self.slot.id.as_deref()
    }

    /// The resource as JSON (without its narrative), in the version
    /// reported.
    pub fn resource(&self) -> Option<Value> {
        self.packages.value(self.slot)
    }

    /// The package the resource comes from.
    pub fn package(&self) -> &'a Package {
        &self.packages.packages[self.slot.package]
    }

    /// The resource's JSON text as held (without its narrative, in its
    /// own version: [`Listed::version`] is the one to report).
    pub fn json(&self) -> &'a [u8] {
        let p = &self.packages.packages[self.slot.package];
        p.json(&p.entries[self.slot.entry])
    }
}

/// A parsed resource, kept once asked for.
#[derive(Debug)]
enum Parsed {
    CodeSystem(Box<CodeSystem>),
    ValueSet(Box<ValueSet>),
    Other,
}

#[derive(Debug)]
struct Slot {
    package: usize,
    entry: usize,
    /// The id the endpoint serves it by: the resource's own, or, when an
    /// earlier package's resource of the same kind has that id already,
    /// the id qualified by the package ([`served_id`]).
    id: Option<String>,
    /// The version to report instead of the resource's own (a core
    /// package served at another FHIR version).
    version: Option<String>,
    parsed: OnceLock<Parsed>,
}

/// The packages one FHIR endpoint serves: an index by URL over their
/// entries, and each resource parsed on first use.
#[derive(Debug)]
pub struct Packages {
    packages: Vec<Arc<Package>>,
    slots: Vec<Slot>,
    by_url: HashMap<(Kind, String), Vec<usize>>,
}

impl Packages {
    /// The view of `packages` for an endpoint of FHIR `fhir_version`
    /// ("4.0.1", "5.0.0"). Earlier packages win when two define the same
    /// `url|version`.
    pub fn new(packages: &[Arc<Package>], fhir_version: &str) -> Packages {
        let own_core = packages
            .iter()
            .any(|p| p.is_core() && p.is_for(fhir_version));
        let mut out = Packages {
            packages: Vec::new(),
            slots: Vec::new(),
            by_url: HashMap::new(),
        };
        let mut seen = std::collections::HashSet::new();
        let mut ids = std::collections::HashSet::new();
        for p in packages {
            let rewrite = p.is_core() && !p.is_for(fhir_version);
            if rewrite && own_core {
                continue;
            }
            let index = out.packages.len();
            out.packages.push(Arc::clone(p));
            for (i, e) in p.entries.iter().enumerate() {
                // A core resource versioned as its FHIR release is
                // reported at the endpoint's.
                let version = (rewrite
                    && e.version
                        .as_deref()
                        .is_some_and(|v| p.fhir_versions.iter().any(|f| f == v) || v == p.version))
                .then(|| fhir_version.to_owned());
                let shown = version.clone().or_else(|| e.version.clone());
                if !seen.insert((e.kind, e.url.as_str(), shown)) {
                    continue;
                }
                out.by_url
                    .entry((e.kind, e.url.clone()))
                    .or_default()
                    .push(out.slots.len());
                let id =
                    e.id.as_deref()
                        .map(|id| served_id(&mut ids, e.kind, &p.name, id));
                out.slots.push(Slot {
                    package: index,
                    entry: i,
                    id,
                    version,
                    parsed: OnceLock::new(),
                });
            }
        }
        out
    }

    /// Resources indexed, of every kind.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether no resource is indexed.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Resources parsed so far.
    pub fn parsed(&self) -> usize {
        self.slots
            .iter()
            .filter(|s| s.parsed.get().is_some())
            .count()
    }

    /// The JSON of every version of `url` of `kind`, with the version
    /// reported (for ConceptMaps, which the engine does not index).
    pub fn resources(&self, kind: Kind, url: &str) -> Vec<Value> {
        self.slots_of(kind, url)
            .filter_map(|s| self.value(s))
            .collect()
    }

    /// Every resource of `kind`, in package order, as the endpoint
    /// reports it.
    pub fn listed(&self, kind: Kind) -> impl Iterator<Item = Listed<'_>> {
        self.slots
            .iter()
            .filter(move |s| self.entry(s).kind == kind)
            .map(|s| self.listing(s))
    }

    /// The resources of `kind` whose URL is `url`.
    pub fn listed_by_url(&self, kind: Kind, url: &str) -> impl Iterator<Item = Listed<'_>> {
        self.slots_of(kind, url).map(|s| self.listing(s))
    }

    fn entry(&self, slot: &Slot) -> &Entry {
        &self.packages[slot.package].entries[slot.entry]
    }

    fn listing<'a>(&'a self, slot: &'a Slot) -> Listed<'a> {
        let entry = self.entry(slot);
        Listed {
            entry,
            version: slot.version.as_deref().or(entry.version.as_deref()),
            packages: self,
            slot,
        }
    }

    fn slots_of(&self, kind: Kind, url: &str) -> impl Iterator<Item = &Slot> + use<'_> {
        self.by_url
            .get(&(kind, url.to_owned()))
            .into_iter()
            .flatten()
            .map(|&i| &self.slots[i])
    }

    fn value(&self, slot: &Slot) -> Option<Value> {
        let p = &self.packages[slot.package];
        let mut v: Value = serde_json::from_slice(p.json(&p.entries[slot.entry])).ok()?;
        if let (Some(version), Some(o)) = (&slot.version, v.as_object_mut()) {
            o.insert("version".into(), Value::String(version.clone()));
        }
        if let (Some(id), Some(o)) = (&slot.id, v.as_object_mut())
            && o.get("id").and_then(Value::as_str) != Some(id)
        {
            o.insert("id".into(), Value::String(id.clone()));
        }
        Some(v)
    }

    fn parse<'a>(&'a self, slot: &'a Slot) -> &'a Parsed {
        slot.parsed.get_or_init(|| {
            let kind = self.packages[slot.package].entries[slot.entry].kind;
            let Some(v) = self.value(slot) else {
                return Parsed::Other;
            };
            match kind {
                Kind::CodeSystem => CodeSystem::from_json(&v)
                    .map(|mut cs| {
                        // The concepts are indexed; their JSON is not read
                        // again, and is most of a big code system's memory.
                        if let Some(o) = cs.resource.as_object_mut() {
                            o.remove("concept");
                        }
                        Parsed::CodeSystem(Box::new(cs))
                    })
                    .unwrap_or(Parsed::Other),
                Kind::ValueSet => ValueSet::from_json(&v)
                    .map(|vs| Parsed::ValueSet(Box::new(vs)))
                    .unwrap_or(Parsed::Other),
                Kind::ConceptMap => Parsed::Other,
            }
        })
    }
}

impl ResourceSource for Packages {
    fn code_systems(&self, url: &str) -> Vec<&CodeSystem> {
        self.slots_of(Kind::CodeSystem, url)
            .filter_map(|s| match self.parse(s) {
                Parsed::CodeSystem(cs) => Some(&**cs),
                _ => None,
            })
            .collect()
    }

    fn value_sets(&self, url: &str) -> Vec<&ValueSet> {
        self.slots_of(Kind::ValueSet, url)
            .filter_map(|s| match self.parse(s) {
                Parsed::ValueSet(vs) => Some(&**vs),
                _ => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;

/// [`pack`] for files given as JSON values.
pub fn pack_json(files: &[(&str, serde_json::Value)]) -> std::io::Result<Vec<u8>> {
    let data: Vec<(&str, Vec<u8>)> = files
        .iter()
        .map(|(p, v)| Ok((*p, serde_json::to_vec(v)?)))
        .collect::<std::io::Result<_>>()?;
    let refs: Vec<(&str, &[u8])> = data.iter().map(|(p, d)| (*p, &d[..])).collect();
    pack(&refs)
}

/// A package `.tgz` holding `files` (`(path, contents)`, paths as in a
/// package: `package/package.json`, `package/CodeSystem-x.json`), laid out
/// as `npm pack` makes one: for tests and tools that need a package without
/// the registry.
pub fn pack(files: &[(&str, &[u8])]) -> std::io::Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut builder = tar::Builder::new(gz);
    for (path, data) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        builder.append_data(&mut header, path, *data)?;
    }
    builder.into_inner()?.finish()
}
