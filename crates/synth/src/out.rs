//! RF2 file layout and row writing.
//!
//! The layout, file names, headers and line endings copy real releases
//! exactly, because the point of a synthetic release is to exercise the
//! same importer code paths (file classification by name, header checks,
//! CRLF handling). Rows are formatted into one reusable line buffer and
//! streamed through a `BufWriter` per file, so memory does not grow with
//! the release. Each file is written under a temporary name in its final
//! directory and renamed when complete, so a reader never sees a truncated
//! file under an RF2 name; an abandoned sink removes its temporaries.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use txmap_rf2::kind::columns;

use crate::SynthError;

/// The files of a Snapshot release, in writing order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Rf2 {
    Concept,
    Description,
    TextDefinition,
    Relationship,
    Concrete,
    Language,
    Association,
    Simple,
    AttributeValue,
    SimpleMap,
    ExtendedMap,
    ModuleDependency,
}

const COUNT: usize = 12;

struct Spec {
    dir: &'static str,
    prefix: &'static str,
    /// The columns RF2 defines for the file kind, then its own extra
    /// columns (a reference set's additional fields).
    columns: &'static [&'static str],
    extra: &'static [&'static str],
}

const SPECS: [Spec; COUNT] = [
    Spec {
        dir: "Terminology",
        prefix: "sct2_Concept_Snapshot_",
        columns: &columns::CONCEPT,
        extra: &[],
    },
    Spec {
        dir: "Terminology",
        prefix: "sct2_Description_Snapshot-en_",
        columns: &columns::DESCRIPTION,
        extra: &[],
    },
    Spec {
        dir: "Terminology",
        prefix: "sct2_TextDefinition_Snapshot-en_",
        columns: &columns::DESCRIPTION,
        extra: &[],
    },
    Spec {
        dir: "Terminology",
        prefix: "sct2_Relationship_Snapshot_",
        columns: &columns::RELATIONSHIP,
        extra: &[],
    },
    Spec {
        dir: "Terminology",
        prefix: "sct2_RelationshipConcreteValues_Snapshot_",
        columns: &columns::CONCRETE_VALUE,
        extra: &[],
    },
    Spec {
        dir: "Refset/Language",
        prefix: "der2_cRefset_LanguageSnapshot-en_",
        columns: &columns::STANDARD_REFSET,
        extra: &["acceptabilityId"],
    },
    Spec {
        dir: "Refset/Content",
        prefix: "der2_cRefset_AssociationSnapshot_",
        columns: &columns::STANDARD_REFSET,
        extra: &["targetComponentId"],
    },
    Spec {
        dir: "Refset/Content",
        prefix: "der2_Refset_SimpleSnapshot_",
        columns: &columns::STANDARD_REFSET,
        extra: &[],
    },
    Spec {
        dir: "Refset/Content",
        prefix: "der2_cRefset_AttributeValueSnapshot_",
        columns: &columns::STANDARD_REFSET,
        extra: &["valueId"],
    },
    Spec {
        dir: "Refset/Map",
        prefix: "der2_sRefset_SimpleMapSnapshot_",
        columns: &columns::STANDARD_REFSET,
        extra: &["mapTarget"],
    },
    Spec {
        dir: "Refset/Map",
        prefix: "der2_iisssccRefset_ExtendedMapSnapshot_",
        columns: &columns::STANDARD_REFSET,
        extra: &[
            "mapGroup",
            "mapPriority",
            "mapRule",
            "mapAdvice",
            "mapTarget",
            "correlationId",
            "mapCategoryId",
        ],
    },
    Spec {
        dir: "Refset/Metadata",
        prefix: "der2_ssRefset_ModuleDependencySnapshot_",
        columns: &columns::STANDARD_REFSET,
        extra: &["sourceEffectiveTime", "targetEffectiveTime"],
    },
];

struct FileOut {
    writer: Option<BufWriter<File>>,
    tmp: PathBuf,
    path: PathBuf,
    rel: String,
    rows: u64,
    columns: usize,
}

/// Writers for all files of one release package.
pub(crate) struct Sink {
    files: Vec<FileOut>,
    line: Vec<u8>,
    fields: usize,
    current: usize,
    finished: bool,
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sink")
            .field("files", &self.files.len())
            .finish()
    }
}

fn io_err(path: &Path, source: io::Error) -> SynthError {
    SynthError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Sink {
    /// Creates `<root>/<package>/Snapshot/...` and opens every file under a
    /// temporary name. `code` is `INT` or the extension's namespace.
    pub(crate) fn create(
        root: &Path,
        package: &str,
        code: &str,
        date: u32,
    ) -> Result<Sink, SynthError> {
        let mut sink = Sink {
            files: Vec::with_capacity(COUNT),
            line: Vec::with_capacity(512),
            fields: 0,
            current: 0,
            finished: false,
        };
        for spec in &SPECS {
            let rel = format!(
                "{package}/Snapshot/{}/{}{code}_{date}.txt",
                spec.dir, spec.prefix
            );
            let path = root.join(&rel);
            let dir = path.parent().unwrap_or(root).to_path_buf();
            fs::create_dir_all(&dir).map_err(|e| io_err(&dir, e))?;
            let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
            tmp_name.push(".tmp");
            let tmp = dir.join(tmp_name);
            let file = File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
            let mut writer = BufWriter::with_capacity(256 * 1024, file);
            let header: Vec<&str> = spec.columns.iter().chain(spec.extra).copied().collect();
            let header = header.join("\t");
            writer
                .write_all(header.as_bytes())
                .and_then(|()| writer.write_all(b"\r\n"))
                .map_err(|e| io_err(&tmp, e))?;
            sink.files.push(FileOut {
                writer: Some(writer),
                tmp,
                path,
                rel,
                rows: 0,
                columns: spec.columns.len() + spec.extra.len(),
            });
        }
        Ok(sink)
    }

    /// Starts a row of `file`.
    pub(crate) fn row(&mut self, file: Rf2) -> Row<'_> {
        self.line.clear();
        self.fields = 0;
        self.current = file as usize;
        Row { sink: self }
    }

    /// Rows written so far to `file`.
    pub(crate) fn rows(&self, file: Rf2) -> u64 {
        self.files[file as usize].rows
    }

    /// Flushes every file and renames it to its final name; returns the
    /// relative paths with their row counts.
    pub(crate) fn finish(mut self) -> Result<Vec<(String, u64)>, SynthError> {
        for f in &mut self.files {
            if let Some(w) = f.writer.take() {
                let file = w.into_inner().map_err(|e| io_err(&f.tmp, e.into_error()))?;
                drop(file);
            }
        }
        for f in &self.files {
            fs::rename(&f.tmp, &f.path).map_err(|e| io_err(&f.path, e))?;
        }
        self.finished = true;
        Ok(self.files.iter().map(|f| (f.rel.clone(), f.rows)).collect())
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        if !self.finished {
            for f in &mut self.files {
                f.writer = None;
                // Best effort: a failed release should not leave temporaries.
                let _ = fs::remove_file(&f.tmp);
            }
        }
    }
}

/// One row under construction; fields are appended in header order.
pub(crate) struct Row<'a> {
    sink: &'a mut Sink,
}

impl Row<'_> {
    fn sep(&mut self) {
        if self.sink.fields > 0 {
            self.sink.line.push(b'\t');
        }
        self.sink.fields += 1;
    }

    /// An unsigned integer field (ids, dates, groups, flags).
    pub(crate) fn num(mut self, v: u64) -> Self {
        self.sep();
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        let mut v = v;
        loop {
            i -= 1;
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.sink.line.extend_from_slice(&buf[i..]);
        self
    }

    pub(crate) fn flag(self, active: bool) -> Self {
        self.num(u64::from(active))
    }

    /// A text field; must not contain tabs or line breaks.
    pub(crate) fn text(mut self, s: &str) -> Self {
        debug_assert!(!s.contains(['\t', '\r', '\n']), "{s:?}");
        self.sep();
        self.sink.line.extend_from_slice(s.as_bytes());
        self
    }

    /// A UUID field, 8-4-4-4-12 lower-case hex.
    pub(crate) fn uuid(mut self, v: u128) -> Self {
        self.sep();
        const HEX: &[u8; 16] = b"0123456789abcdef";
        for i in 0..32 {
            if matches!(i, 8 | 12 | 16 | 20) {
                self.sink.line.push(b'-');
            }
            let nibble = (v >> (124 - 4 * i)) & 0xF;
            self.sink.line.push(HEX[nibble as usize]);
        }
        self
    }

    /// Writes the row.
    pub(crate) fn end(self) -> Result<(), SynthError> {
        let sink = self.sink;
        let f = &mut sink.files[sink.current];
        debug_assert_eq!(sink.fields, f.columns, "{}", f.rel);
        sink.line.extend_from_slice(b"\r\n");
        if let Some(w) = f.writer.as_mut() {
            w.write_all(&sink.line).map_err(|e| io_err(&f.tmp, e))?;
        }
        f.rows += 1;
        Ok(())
    }
}

/// Packs the finished files (relative to `root`) into a zip at `zip_path`,
/// written under a temporary name and renamed. Entry times are the release
/// date at midnight and permissions fixed, so the archive is reproducible.
pub(crate) fn write_zip(
    root: &Path,
    files: &[(String, u64)],
    zip_path: &Path,
    date: u32,
) -> Result<(), SynthError> {
    use zip::write::SimpleFileOptions;
    let zip_err = |source: zip::result::ZipError| SynthError::Zip {
        path: zip_path.to_path_buf(),
        source,
    };
    let mut tmp_name = zip_path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = zip_path.with_file_name(tmp_name);
    let file = File::create(&tmp).map_err(|e| io_err(&tmp, e))?;
    let year = (date / 10_000) as u16;
    let month = ((date / 100) % 100) as u8;
    let day = (date % 100) as u8;
    let time = zip::DateTime::from_date_and_time(year, month, day, 0, 0, 0).unwrap_or_default();
    let options = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .last_modified_time(time)
        .unix_permissions(0o644);
    let result = (|| {
        let mut zip = zip::ZipWriter::new(BufWriter::with_capacity(1 << 20, file));
        for (rel, _) in files {
            let path = root.join(rel);
            let mut src = File::open(&path).map_err(|e| io_err(&path, e))?;
            let len = src.metadata().map_err(|e| io_err(&path, e))?.len();
            let large = len >= u64::from(u32::MAX);
            zip.start_file(rel.as_str(), options.large_file(large))
                .map_err(zip_err)?;
            io::copy(&mut src, &mut zip).map_err(|e| io_err(&path, e))?;
        }
        let mut inner = zip.finish().map_err(zip_err)?;
        inner.flush().map_err(|e| io_err(&tmp, e))?;
        Ok(())
    })();
    match result {
        Ok(()) => fs::rename(&tmp, zip_path).map_err(|e| io_err(zip_path, e)),
        Err(e) => {
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}
