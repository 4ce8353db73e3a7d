//! The compiled code system file: the edition file's container
//! (`txmap-format`) with the `Cs*` sections, for a code system that is a
//! list of concepts with properties, designations and a hierarchy — LOINC
//! first. Nothing here knows LOINC: [`CodeSystemFile`] reads any such file
//! over any byte slice (a `Vec<u8>` or a mapping, bounds-checked at every
//! access, never panicking), and [`FileBuilder`] writes one.
//!
//! The builder holds fixed-size records and each concept's code; the text
//! (displays, property values, designations) streams to a temporary heap
//! file as it is added, short strings interned, so an import's memory grows
//! with the number of records, not with the release's text.

use std::collections::HashMap;
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::ops::Range;
use std::path::Path;

use txmap_format::schema::{
    CS_NO_NAME, CsConceptRecord, CsDesignationRecord, CsPropertyRecord, CsStr,
};
use txmap_format::{Container, FileWriter, Metadata, SectionKind, records};
use zerocopy::little_endian::{U16, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::CodeSystemError;
use SectionKind::*;

/// The metadata `content` value of a compiled code system file (editions
/// have none).
pub const CONTENT: &str = "codesystem";

/// A concept's ordinal: its index in the code-sorted concept table.
pub type Ordinal = u32;

/// A checked view of a compiled code system file over any bytes.
#[derive(Debug)]
pub struct CodeSystemFile<B> {
    bytes: B,
    sections: Sections,
    names: Vec<String>,
    metadata: Metadata,
    count: u32,
}

#[derive(Debug, Clone)]
struct Sections {
    concepts: Range<usize>,
    strings: Range<usize>,
    properties_index: Range<usize>,
    properties: Range<usize>,
    designations_index: Range<usize>,
    designations: Range<usize>,
    parents_index: Range<usize>,
    parents: Range<usize>,
    children_index: Range<usize>,
    children: Range<usize>,
}

/// The sections every file has (every kind whose
/// [`SectionKind::is_code_system`]), in the order the builder writes them: the
/// small and per-concept tables first (what a lookup reads of every
/// concept it touches), then the records, then the text.
pub const LAYOUT: [SectionKind; 11] = [
    CsNames,
    CsConcepts,
    CsPropertiesIndex,
    CsDesignationsIndex,
    CsParentsIndex,
    CsParents,
    CsChildrenIndex,
    CsChildren,
    CsProperties,
    CsDesignations,
    CsStrings,
];

impl<B: AsRef<[u8]>> CodeSystemFile<B> {
    /// Checks the container, that the file is a compiled code system, the
    /// record sizes and the index lengths, and parses (after checking its
    /// checksum) the name table. Nothing else is read.
    pub fn open(bytes: B) -> Result<Self, CodeSystemError> {
        let container = Container::open(bytes.as_ref())?;
        let metadata = container.metadata().clone();
        let content = metadata.get("content").cloned().unwrap_or_default();
        if content != CONTENT {
            return Err(CodeSystemError::NotACodeSystem { content });
        }
        let range = |kind: SectionKind| -> Result<Range<usize>, CodeSystemError> {
            let e = container
                .entry(kind)
                .ok_or(txmap_format::FormatError::MissingSection(kind))?;
            let start = e.offset.get() as usize;
            Ok(start..start + e.len.get() as usize)
        };
        let sections = Sections {
            concepts: range(CsConcepts)?,
            strings: range(CsStrings)?,
            properties_index: range(CsPropertiesIndex)?,
            properties: range(CsProperties)?,
            designations_index: range(CsDesignationsIndex)?,
            designations: range(CsDesignations)?,
            parents_index: range(CsParentsIndex)?,
            parents: range(CsParents)?,
            children_index: range(CsChildrenIndex)?,
            children: range(CsChildren)?,
        };
        container.verify_section(CsNames)?;
        let names_bytes = container.require(CsNames)?;
        let names = std::str::from_utf8(names_bytes)
            .map_err(|_| CodeSystemError::corrupt(CsNames, "not UTF-8"))?;
        let names: Vec<String> = if names.is_empty() {
            Vec::new()
        } else {
            names.split('\n').map(str::to_owned).collect()
        };
        let all = bytes.as_ref();
        let concepts: &[CsConceptRecord] = records(CsConcepts, &all[sections.concepts.clone()])?;
        let count = u32::try_from(concepts.len())
            .map_err(|_| CodeSystemError::corrupt(CsConcepts, "more than 2^32 concepts"))?;
        let file = CodeSystemFile {
            bytes,
            sections,
            names,
            metadata,
            count,
        };
        let _: &[CsPropertyRecord] = file.recs(CsProperties, &file.sections.properties)?;
        let _: &[CsDesignationRecord] = file.recs(CsDesignations, &file.sections.designations)?;
        let _: &[U32] = file.recs(CsParents, &file.sections.parents)?;
        let _: &[U32] = file.recs(CsChildren, &file.sections.children)?;
        for (kind, index) in [
            (CsPropertiesIndex, &file.sections.properties_index),
            (CsDesignationsIndex, &file.sections.designations_index),
            (CsParentsIndex, &file.sections.parents_index),
            (CsChildrenIndex, &file.sections.children_index),
        ] {
            let index: &[U32] = file.recs(kind, index)?;
            if index.len() != count as usize + 1 {
                return Err(CodeSystemError::corrupt(
                    kind,
                    format!("{} entries for {count} concepts", index.len()),
                ));
            }
        }
        Ok(file)
    }

    /// The underlying bytes.
    pub fn bytes(&self) -> &B {
        &self.bytes
    }

    /// The metadata block: `url`, `version`, `name`, `source`...
    pub fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// A metadata value, or "" when absent.
    pub fn meta(&self, key: &str) -> &str {
        self.metadata.get(key).map_or("", String::as_str)
    }

    /// Reads every section against its checksum (see
    /// [`Container::verify`]).
    pub fn verify(&self, progress: impl FnMut(u64)) -> Result<(), CodeSystemError> {
        Container::open(self.bytes.as_ref())?.verify(progress)?;
        Ok(())
    }

    /// The number of concepts; ordinals are `0..len`.
    pub fn len(&self) -> u32 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// A name of the name table (a property code, a language, a use, a
    /// status, a kind), or `None` for [`CS_NO_NAME`] and out-of-range
    /// indexes.
    pub fn name(&self, index: u16) -> Option<&str> {
        if index == CS_NO_NAME {
            return None;
        }
        self.names.get(index as usize).map(String::as_str)
    }

    /// The index of a name in the name table.
    pub fn name_index(&self, name: &str) -> Option<u16> {
        self.names.iter().position(|n| n == name).map(|i| i as u16)
    }

    /// The concept record of `ord`.
    pub fn concept(&self, ord: Ordinal) -> Result<&CsConceptRecord, CodeSystemError> {
        let all: &[CsConceptRecord] = self.recs(CsConcepts, &self.sections.concepts)?;
        all.get(ord as usize)
            .ok_or_else(|| CodeSystemError::corrupt(CsConcepts, format!("no concept {ord}")))
    }

    /// A string of the heap.
    pub fn text(&self, s: CsStr) -> Result<&str, CodeSystemError> {
        let heap = &self.bytes.as_ref()[self.sections.strings.clone()];
        let start = s.offset.get() as usize;
        let bytes = start
            .checked_add(s.len.get() as usize)
            .and_then(|end| heap.get(start..end))
            .ok_or_else(|| CodeSystemError::corrupt(CsStrings, "a string past the end"))?;
        std::str::from_utf8(bytes).map_err(|_| CodeSystemError::corrupt(CsStrings, "not UTF-8"))
    }

    /// The code of `ord`.
    pub fn code(&self, ord: Ordinal) -> Result<&str, CodeSystemError> {
        self.text(self.concept(ord)?.code)
    }

    /// The display of `ord`, if it has one.
    pub fn display(&self, ord: Ordinal) -> Result<Option<&str>, CodeSystemError> {
        let s = self.concept(ord)?.display;
        if s.len.get() == 0 {
            return Ok(None);
        }
        self.text(s).map(Some)
    }

    /// Finds a code exactly: a binary search over the code-sorted table
    /// that reads the codes it probes.
    pub fn locate(&self, code: &str) -> Result<Option<Ordinal>, CodeSystemError> {
        let (mut lo, mut hi) = (0u32, self.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.code(mid)?.as_bytes().cmp(code.as_bytes()) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Ok(Some(mid)),
            }
        }
        Ok(None)
    }

    /// The property values of `ord`, in the release's order.
    pub fn properties(&self, ord: Ordinal) -> Result<&[CsPropertyRecord], CodeSystemError> {
        self.csr(
            (CsPropertiesIndex, &self.sections.properties_index),
            (CsProperties, &self.sections.properties),
            ord,
        )
    }

    /// The designations of `ord`.
    pub fn designations(&self, ord: Ordinal) -> Result<&[CsDesignationRecord], CodeSystemError> {
        self.csr(
            (CsDesignationsIndex, &self.sections.designations_index),
            (CsDesignations, &self.sections.designations),
            ord,
        )
    }

    /// The parents of `ord`, ascending.
    pub fn parents(&self, ord: Ordinal) -> Result<Vec<Ordinal>, CodeSystemError> {
        let items: &[U32] = self.csr(
            (CsParentsIndex, &self.sections.parents_index),
            (CsParents, &self.sections.parents),
            ord,
        )?;
        self.ordinals(CsParents, items)
    }

    /// The children of `ord`, in the release's sequence.
    pub fn children(&self, ord: Ordinal) -> Result<Vec<Ordinal>, CodeSystemError> {
        let items: &[U32] = self.csr(
            (CsChildrenIndex, &self.sections.children_index),
            (CsChildren, &self.sections.children),
            ord,
        )?;
        self.ordinals(CsChildren, items)
    }

    /// Whether `ord` has any parent (reads two index entries).
    pub fn has_parents(&self, ord: Ordinal) -> Result<bool, CodeSystemError> {
        Ok(!self
            .csr_range((CsParentsIndex, &self.sections.parents_index), ord)?
            .is_empty())
    }

    fn ordinals(&self, kind: SectionKind, items: &[U32]) -> Result<Vec<Ordinal>, CodeSystemError> {
        items
            .iter()
            .map(|o| {
                let o = o.get();
                if o < self.count {
                    Ok(o)
                } else {
                    Err(CodeSystemError::corrupt(
                        kind,
                        format!("ordinal {o} out of range"),
                    ))
                }
            })
            .collect()
    }

    fn recs<T>(&self, kind: SectionKind, range: &Range<usize>) -> Result<&[T], CodeSystemError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        Ok(records::<T>(kind, &self.bytes.as_ref()[range.clone()])?)
    }

    fn csr_range(
        &self,
        (kind, index): (SectionKind, &Range<usize>),
        ord: Ordinal,
    ) -> Result<Range<usize>, CodeSystemError> {
        let index: &[U32] = self.recs(kind, index)?;
        let i = ord as usize;
        match (index.get(i), index.get(i + 1)) {
            (Some(a), Some(b)) if a.get() <= b.get() => Ok(a.get() as usize..b.get() as usize),
            (Some(_), Some(_)) => Err(CodeSystemError::corrupt(kind, "offsets out of order")),
            _ => Err(CodeSystemError::corrupt(kind, format!("no entry {ord}"))),
        }
    }

    fn csr<T>(
        &self,
        index: (SectionKind, &Range<usize>),
        (kind, items): (SectionKind, &Range<usize>),
        ord: Ordinal,
    ) -> Result<&[T], CodeSystemError>
    where
        T: FromBytes + KnownLayout + Immutable + Unaligned,
    {
        let range = self.csr_range(index, ord)?;
        let items: &[T] = self.recs(kind, items)?;
        items.get(range).ok_or_else(|| {
            CodeSystemError::corrupt(kind, format!("the list of {ord} past the end"))
        })
    }
}

/// Strings up to this length are interned: codes and tokens that many
/// concepts share (part codes, statuses) are stored once.
const INTERN_MAX: usize = 48;

/// Writes a compiled code system file. Concepts are named by code and may
/// be referred to before they are described; ordinals are assigned at
/// [`FileBuilder::finish`], by code.
#[derive(Debug)]
pub struct FileBuilder {
    heap: BufWriter<File>,
    heap_file: tempfile::NamedTempFile,
    heap_len: u64,
    interned: HashMap<Box<str>, CsStr>,
    names: Vec<String>,
    name_ids: HashMap<String, u16>,
    codes: Vec<Box<str>>,
    by_code: HashMap<Box<str>, u32>,
    concepts: Vec<CsConceptRecord>,
    properties: Vec<(u32, CsPropertyRecord)>,
    designations: Vec<(u32, CsDesignationRecord)>,
    /// (child, parent) in the order added: the children's sequence.
    edges: Vec<(u32, u32)>,
}

/// What [`FileBuilder::finish`] wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BuildSummary {
    pub concepts: u64,
    pub properties: u64,
    pub designations: u64,
    pub hierarchy_links: u64,
    pub text_bytes: u64,
    pub file_bytes: u64,
}

impl FileBuilder {
    /// Starts a builder whose text heap is a temporary file in `temp_dir`.
    pub fn new(temp_dir: &Path) -> Result<FileBuilder, CodeSystemError> {
        let io = |source| CodeSystemError::Io {
            path: temp_dir.to_owned(),
            source,
        };
        let heap_file = tempfile::Builder::new()
            .prefix(".txmap-heap.")
            .tempfile_in(temp_dir)
            .map_err(io)?;
        let heap = BufWriter::with_capacity(1 << 20, heap_file.reopen().map_err(io)?);
        Ok(FileBuilder {
            heap,
            heap_file,
            heap_len: 0,
            interned: HashMap::new(),
            names: Vec::new(),
            name_ids: HashMap::new(),
            codes: Vec::new(),
            by_code: HashMap::new(),
            concepts: Vec::new(),
            properties: Vec::new(),
            designations: Vec::new(),
            edges: Vec::new(),
        })
    }

    /// The builder's handle of the concept `code`, made (with no display,
    /// kind or status) on first mention.
    pub fn concept(&mut self, code: &str) -> Result<u32, CodeSystemError> {
        if let Some(&id) = self.by_code.get(code) {
            return Ok(id);
        }
        let id = u32::try_from(self.codes.len())
            .map_err(|_| CodeSystemError::TooLarge("more than 2^32 concepts"))?;
        let code_ref = self.string(code)?;
        self.codes.push(code.into());
        self.by_code.insert(code.into(), id);
        self.concepts.push(CsConceptRecord {
            code: code_ref,
            display: empty(),
            kind: U16::new(CS_NO_NAME),
            status: U16::new(CS_NO_NAME),
            flags: 0,
            reserved: [0; 3],
        });
        Ok(id)
    }

    /// Whether `code` has been mentioned.
    pub fn has(&self, code: &str) -> bool {
        self.by_code.contains_key(code)
    }

    /// Describes concept `id`: its display (empty for none), kind, status
    /// and [`cs_flags`](txmap_format::schema::cs_flags).
    pub fn describe(
        &mut self,
        id: u32,
        display: &str,
        kind: &str,
        status: Option<&str>,
        flags: u8,
    ) -> Result<(), CodeSystemError> {
        let display = if display.is_empty() {
            empty()
        } else {
            self.string(display)?
        };
        let kind = self.name(kind)?;
        let status = match status {
            Some(s) if !s.is_empty() => self.name(s)?,
            _ => CS_NO_NAME,
        };
        let c = &mut self.concepts[id as usize];
        c.display = display;
        c.kind = U16::new(kind);
        c.status = U16::new(status);
        c.flags = flags;
        Ok(())
    }

    /// Sets a concept's kind, status and flags, leaving its display.
    pub fn set_status(
        &mut self,
        id: u32,
        kind: &str,
        status: &str,
        flags: u8,
    ) -> Result<(), CodeSystemError> {
        let kind = self.name(kind)?;
        let status = self.name(status)?;
        let c = &mut self.concepts[id as usize];
        c.kind = U16::new(kind);
        c.status = U16::new(status);
        c.flags = flags;
        Ok(())
    }

    /// Sets a concept's display alone.
    pub fn set_display(&mut self, id: u32, display: &str) -> Result<(), CodeSystemError> {
        let display = self.string(display)?;
        self.concepts[id as usize].display = display;
        Ok(())
    }

    /// Whether concept `id` has a display yet.
    pub fn has_display(&self, id: u32) -> bool {
        self.concepts[id as usize].display.len.get() != 0
    }

    /// Adds a property value (`value_type` a
    /// [`cs_value`](txmap_format::schema::cs_value) code). Empty values are
    /// skipped.
    pub fn property(
        &mut self,
        id: u32,
        property: &str,
        value_type: u8,
        value: &str,
    ) -> Result<(), CodeSystemError> {
        if value.is_empty() {
            return Ok(());
        }
        let rec = CsPropertyRecord {
            property: U16::new(self.name(property)?),
            value_type,
            reserved: 0,
            value: self.string(value)?,
        };
        self.properties.push((id, rec));
        Ok(())
    }

    /// Adds a designation. Empty values are skipped.
    pub fn designation(
        &mut self,
        id: u32,
        language: Option<&str>,
        use_: Option<&str>,
        value: &str,
    ) -> Result<(), CodeSystemError> {
        if value.is_empty() {
            return Ok(());
        }
        let language = match language {
            Some(l) => self.name(l)?,
            None => CS_NO_NAME,
        };
        let use_ = match use_ {
            Some(u) => self.name(u)?,
            None => CS_NO_NAME,
        };
        let rec = CsDesignationRecord {
            language: U16::new(language),
            use_: U16::new(use_),
            value: self.string(value)?,
        };
        self.designations.push((id, rec));
        Ok(())
    }

    /// Makes `parent` a parent of `child` (and `child` the parent's next
    /// child). A repeated link is kept once.
    pub fn link(&mut self, child: u32, parent: u32) {
        self.edges.push((child, parent));
    }

    fn name(&mut self, name: &str) -> Result<u16, CodeSystemError> {
        if let Some(&i) = self.name_ids.get(name) {
            return Ok(i);
        }
        if name.contains('\n') {
            return Err(CodeSystemError::TooLarge("a name with a line break"));
        }
        let i = u16::try_from(self.names.len())
            .ok()
            .filter(|&i| i != CS_NO_NAME)
            .ok_or(CodeSystemError::TooLarge("more than 65,534 names"))?;
        self.names.push(name.to_owned());
        self.name_ids.insert(name.to_owned(), i);
        Ok(i)
    }

    fn string(&mut self, s: &str) -> Result<CsStr, CodeSystemError> {
        if s.len() <= INTERN_MAX
            && let Some(&r) = self.interned.get(s)
        {
            return Ok(r);
        }
        let offset = u32::try_from(self.heap_len)
            .map_err(|_| CodeSystemError::TooLarge("more than 4 GiB of text"))?;
        let len =
            u32::try_from(s.len()).map_err(|_| CodeSystemError::TooLarge("a 4 GiB string"))?;
        self.heap
            .write_all(s.as_bytes())
            .map_err(|source| CodeSystemError::Io {
                path: self.heap_file.path().to_owned(),
                source,
            })?;
        self.heap_len += s.len() as u64;
        let r = CsStr {
            offset: U32::new(offset),
            len: U32::new(len),
        };
        if s.len() <= INTERN_MAX {
            self.interned.insert(s.into(), r);
        }
        Ok(r)
    }

    /// Assigns ordinals by code, writes the file to `path` (through a
    /// temporary file renamed into place) with `metadata` (to which
    /// `content` is added) and says what it wrote.
    pub fn finish(
        mut self,
        path: &Path,
        mut metadata: Metadata,
    ) -> Result<BuildSummary, CodeSystemError> {
        let n = self.codes.len();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_unstable_by(|&a, &b| self.codes[a as usize].cmp(&self.codes[b as usize]));
        let mut ord_of = vec![0u32; n];
        for (ord, &id) in order.iter().enumerate() {
            ord_of[id as usize] = ord as u32;
        }
        drop(std::mem::take(&mut self.by_code));
        drop(std::mem::take(&mut self.interned));

        let concepts: Vec<CsConceptRecord> =
            order.iter().map(|&id| self.concepts[id as usize]).collect();
        let (properties_index, properties) = grouped(n, &ord_of, &mut self.properties)?;
        let (designations_index, designations) = grouped(n, &ord_of, &mut self.designations)?;
        let mut up: Vec<(u32, u32)> = self
            .edges
            .iter()
            .map(|&(c, p)| (ord_of[c as usize], ord_of[p as usize]))
            .collect();
        // Children keep the order they were linked in; parents ascend.
        let mut down: Vec<(u32, u32)> = Vec::with_capacity(up.len());
        {
            let mut seen = std::collections::HashSet::with_capacity(up.len());
            for &(c, p) in &up {
                if c != p && seen.insert((c, p)) {
                    down.push((p, c));
                }
            }
        }
        up.retain(|&(c, p)| c != p);
        up.sort_unstable();
        up.dedup();
        down.sort_by_key(|&(p, _)| p);
        let (parents_index, parents) = pairs_csr(n, &up)?;
        let (children_index, children) = pairs_csr(n, &down)?;

        self.heap.flush().map_err(|source| CodeSystemError::Io {
            path: self.heap_file.path().to_owned(),
            source,
        })?;
        metadata.insert("content".into(), CONTENT.into());
        let mut w = FileWriter::create(path)?;
        let names = self.names.join("\n");
        for kind in LAYOUT {
            match kind {
                CsNames => w.add_section(kind, names.as_bytes(), self.names.len() as u64)?,
                CsConcepts => w.add_section(kind, concepts.as_bytes(), n as u64)?,
                CsPropertiesIndex => {
                    w.add_section(kind, properties_index.as_bytes(), n as u64 + 1)?
                }
                CsDesignationsIndex => {
                    w.add_section(kind, designations_index.as_bytes(), n as u64 + 1)?
                }
                CsParentsIndex => w.add_section(kind, parents_index.as_bytes(), n as u64 + 1)?,
                CsParents => w.add_section(kind, parents.as_bytes(), parents.len() as u64)?,
                CsChildrenIndex => w.add_section(kind, children_index.as_bytes(), n as u64 + 1)?,
                CsChildren => w.add_section(kind, children.as_bytes(), children.len() as u64)?,
                CsProperties => {
                    w.add_section(kind, properties.as_bytes(), properties.len() as u64)?
                }
                CsDesignations => {
                    w.add_section(kind, designations.as_bytes(), designations.len() as u64)?
                }
                CsStrings => {
                    let io = |source| CodeSystemError::Io {
                        path: self.heap_file.path().to_owned(),
                        source,
                    };
                    let mut heap = self.heap_file.reopen().map_err(io)?;
                    heap.seek(SeekFrom::Start(0)).map_err(io)?;
                    let mut s = w.section(kind)?;
                    let mut buf = vec![0u8; 1 << 20];
                    loop {
                        let got = heap.read(&mut buf).map_err(io)?;
                        if got == 0 {
                            break;
                        }
                        s.write_all(&buf[..got])
                            .map_err(txmap_format::FormatError::from)?;
                    }
                    s.finish(self.heap_len)?;
                }
                _ => unreachable!("LAYOUT holds only code system sections"),
            }
        }
        let written = w.finish(&metadata)?;
        let file_bytes = std::fs::metadata(&written).map(|m| m.len()).unwrap_or(0);
        Ok(BuildSummary {
            concepts: n as u64,
            properties: properties.len() as u64,
            designations: designations.len() as u64,
            hierarchy_links: parents.len() as u64,
            text_bytes: self.heap_len,
            file_bytes,
        })
    }
}

fn empty() -> CsStr {
    CsStr {
        offset: U32::new(0),
        len: U32::new(0),
    }
}

/// Records keyed by builder handle → a CSR by ordinal, each concept's
/// records in the order they were added.
fn grouped<T: Copy>(
    n: usize,
    ord_of: &[u32],
    items: &mut Vec<(u32, T)>,
) -> Result<(Vec<U32>, Vec<T>), CodeSystemError> {
    for item in items.iter_mut() {
        item.0 = ord_of[item.0 as usize];
    }
    items.sort_by_key(|&(ord, _)| ord);
    let out = csr(n, items);
    items.clear();
    out
}

/// Sorted `(from, to)` ordinal pairs → a CSR of `to`s by `from`.
fn pairs_csr(n: usize, pairs: &[(u32, u32)]) -> Result<(Vec<U32>, Vec<U32>), CodeSystemError> {
    let pairs: Vec<(u32, U32)> = pairs.iter().map(|&(f, t)| (f, U32::new(t))).collect();
    csr(n, &pairs)
}

/// Items sorted by ordinal → the `n + 1` offsets of a CSR and its values.
fn csr<T: Copy>(n: usize, sorted: &[(u32, T)]) -> Result<(Vec<U32>, Vec<T>), CodeSystemError> {
    let mut index = Vec::with_capacity(n + 1);
    let mut at = 0usize;
    for ord in 0..n as u32 {
        index.push(offset(at)?);
        while at < sorted.len() && sorted[at].0 == ord {
            at += 1;
        }
    }
    index.push(offset(at)?);
    Ok((index, sorted.iter().map(|&(_, t)| t).collect()))
}

fn offset(at: usize) -> Result<U32, CodeSystemError> {
    u32::try_from(at)
        .map(U32::new)
        .map_err(|_| CodeSystemError::TooLarge("more than 2^32 records in a section"))
}
