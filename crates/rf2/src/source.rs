//! A release as distributed: a `.zip`, or the folder it unpacks to.
//!
//! SNOMED International and national release centres ship zips whose
//! internal layout varies (`SnomedCT_…/Snapshot/Terminology/…`, extra
//! `Full/` and `Delta/` trees, documentation, `__MACOSX/` debris), and people
//! also point tools at an unpacked folder or at a hand-made subset. So a
//! [`Release`] looks at every file in the tree, keeps the ones whose names
//! classify as RF2 Snapshot files ([`crate::kind`]), and records every other
//! file in [`Release::skipped`] with the reason, so that a missing file can be
//! explained rather than guessed at.
//!
//! Zip entries are decompressed as they are read: unpacking an International
//! release would need gigabytes of scratch space for no gain, since every
//! file is read exactly once, front to back.
//!
//! Folder files are read with `read(2)` into [`RowReader`]'s buffer, not
//! mapped, and that is a measured choice (BENCHMARKS.md, "Scan crossover").
//! On the benchmark machine (Linux 6.18) a bare newline scan of a warm
//! 256 MiB or 1 GiB file is 2–3 times faster mapped (12.9 and 11.5 GB/s
//! against 4.5 and 5.4 GB/s); cold, both are bound by the disk
//! (1.4–2.1 GB/s, ranges overlapping). But the importer takes in under
//! 0.1 GB/s of RF2, so the copy `read` makes is 1–2% of an import: the same
//! import with rows split in place from a mapping took 12.34 s warm against
//! 12.40 s, and 13.52 s cold against 13.77 s (medians of 3, ranges
//! overlapping), at the same peak RSS once consumed pages were handed back.
//! That is within noise, and not worth `unsafe` on the input path and a
//! SIGBUS if a release file is truncated mid-import. Revisit if parsing
//! gets an order of magnitude faster (the mapped reader is kept as
//! `bench/rf2-mmap.patch`).

use std::collections::HashMap;
use std::fs::{self, File};
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};

use zip::ZipArchive;

use crate::error::{Rf2Error, Rf2ErrorKind};
use crate::kind;
pub use crate::kind::{FileKind, SkipReason};
use crate::rows::RowReader;

/// A recognised RF2 Snapshot file of a release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rf2File {
    /// The path inside the release, `/`-separated: the zip entry name, or
    /// the path relative to the release folder.
    pub path: String,
    pub kind: FileKind,
    /// The refset field pattern, one letter per extra column (`"c"`,
    /// `"cisscc"`, `""` for a simple refset); `""` for terminology files.
    pub pattern: String,
    /// The language code in the name (`…Snapshot-en_…` gives `en`).
    pub language: Option<String>,
    /// The `YYYYMMDD` date at the end of the name.
    pub effective_date: Option<u32>,
    /// Uncompressed size in bytes, for progress against
    /// [`RowReader::bytes_read`].
    pub size: u64,
}

/// A file of the release that is not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// The path inside the release, as in [`Rf2File::path`] (lossily
    /// decoded if the name is not UTF-8).
    pub path: String,
    pub reason: SkipReason,
}

#[derive(Debug)]
enum Archive {
    Folder,
    Zip {
        zip: Box<ZipArchive<BufReader<File>>>,
        /// Entry index by [`Rf2File::path`]; indexes avoid depending on how
        /// the zip crate decodes non-UTF-8 names.
        index: HashMap<String, usize>,
    },
}

/// An RF2 release opened from a zip or a folder.
#[derive(Debug)]
pub struct Release {
    path: PathBuf,
    files: Vec<Rf2File>,
    skipped: Vec<Skipped>,
    archive: Archive,
}

impl Release {
    /// Opens a release: a folder (walked recursively; symbolic links to
    /// files are followed, to folders not) or anything else as a zip file.
    /// Fails with [`Rf2ErrorKind::NotARelease`] if no RF2 Snapshot file is
    /// found.
    pub fn open(path: &Path) -> Result<Release, Rf2Error> {
        let display = path.display().to_string();
        let io_err = |e: io::Error| Rf2Error::new(display.clone(), Rf2ErrorKind::Io(e));
        let meta = fs::metadata(path).map_err(io_err)?;
        let mut found = Vec::new();
        let archive = if meta.is_dir() {
            walk(path, &mut found)?;
            Archive::Folder
        } else {
            let file = File::open(path).map_err(io_err)?;
            let zip = ZipArchive::new(BufReader::new(file))
                .map_err(|e| Rf2Error::new(display.clone(), Rf2ErrorKind::Zip(e)))?;
            let mut index = HashMap::new();
            for i in 0..zip.len() {
                let entry = zip
                    .by_index_data(i)
                    .map_err(|e| Rf2Error::new(display.clone(), Rf2ErrorKind::Zip(e)))?;
                if entry.is_dir() {
                    continue;
                }
                let name = match entry.name() {
                    Ok(name) => Some(name.into_owned()),
                    Err(_) => None,
                };
                match name {
                    Some(name) => {
                        found.push((name.clone(), entry.size(), true));
                        index.insert(name, i);
                    }
                    None => found.push((
                        String::from_utf8_lossy(entry.name_raw()).into_owned(),
                        entry.size(),
                        false,
                    )),
                }
            }
            Archive::Zip {
                zip: Box::new(zip),
                index,
            }
        };

        let mut files = Vec::new();
        let mut skipped = Vec::new();
        for (path, size, readable) in found {
            let class = if readable {
                kind::classify(&path)
            } else {
                Err(SkipReason::NotRf2Name)
            };
            match class {
                Ok(name) => files.push(Rf2File {
                    path,
                    kind: name.kind,
                    pattern: name.pattern,
                    language: name.language,
                    effective_date: name.effective_date,
                    size,
                }),
                Err(reason) => skipped.push(Skipped { path, reason }),
            }
        }
        if files.is_empty() {
            return Err(Rf2Error::new(display, Rf2ErrorKind::NotARelease));
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        skipped.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Release {
            path: path.to_owned(),
            files,
            skipped,
            archive,
        })
    }

    /// The path the release was opened from.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True if the release is a zip file rather than a folder.
    pub fn is_zip(&self) -> bool {
        matches!(self.archive, Archive::Zip { .. })
    }

    /// The recognised Snapshot files, sorted by path.
    pub fn files(&self) -> &[Rf2File] {
        &self.files
    }

    /// Copies of the files of one kind, sorted by path. Owned, so that the
    /// release can be borrowed mutably by [`Release::open_file`] while
    /// iterating.
    pub fn files_of(&self, kind: FileKind) -> Vec<Rf2File> {
        self.files
            .iter()
            .filter(|f| f.kind == kind)
            .cloned()
            .collect()
    }

    /// The files that are not read, with the reason, sorted by path.
    pub fn skipped(&self) -> &[Skipped] {
        &self.skipped
    }

    /// The path used in error messages for a file of the release: the
    /// release path, `/`, and the path inside the release.
    pub fn display_path(&self, file: &Rf2File) -> String {
        format!("{}/{}", self.path.display(), file.path)
    }

    /// Opens one of the release's files for reading rows, having checked its
    /// header against its kind ([`kind::check_header`]).
    ///
    /// The reader borrows the release mutably because a zip entry is
    /// decompressed straight from the archive's file handle, so one file is
    /// read at a time; take the file from a clone (e.g.
    /// [`Release::files_of`] or `release.files().to_vec()`), not from
    /// [`Release::files`] directly.
    pub fn open_file(&mut self, file: &Rf2File) -> Result<RowReader<Box<dyn Read + '_>>, Rf2Error> {
        let display = self.display_path(file);
        let reader = self.open_raw(file)?;
        let rows = RowReader::new(reader, display)?;
        if let Err(e) = kind::check_header(file.kind, &file.pattern, rows.header()) {
            let header = rows.header().join("\t");
            return Err(
                Rf2Error::new(rows.path(), Rf2ErrorKind::Header(Box::new(e)))
                    .at_line(1)
                    .with_row(header.as_bytes()),
            );
        }
        Ok(rows)
    }

    /// The file's bytes, unparsed (decompressed for a zip).
    pub fn open_raw(&mut self, file: &Rf2File) -> Result<Box<dyn Read + '_>, Rf2Error> {
        let display = self.display_path(file);
        // Only files of this release: a path from elsewhere could name any
        // file on disk (`../…`).
        if self
            .files
            .binary_search_by(|f| f.path.as_str().cmp(&file.path))
            .is_err()
        {
            let e = io::Error::new(io::ErrorKind::NotFound, "not a file of this release");
            return Err(Rf2Error::new(display, Rf2ErrorKind::Io(e)));
        }
        match &mut self.archive {
            Archive::Folder => {
                let f = File::open(self.path.join(&file.path))
                    .map_err(|e| Rf2Error::new(display, Rf2ErrorKind::Io(e)))?;
                Ok(Box::new(f))
            }
            Archive::Zip { zip, index } => {
                let Some(&i) = index.get(&file.path) else {
                    let e = zip::result::ZipError::FileNotFound;
                    return Err(Rf2Error::new(display, Rf2ErrorKind::Zip(e)));
                };
                let entry = zip
                    .by_index(i)
                    .map_err(|e| Rf2Error::new(display, Rf2ErrorKind::Zip(e)))?;
                Ok(Box::new(entry))
            }
        }
    }
}

/// Collects `(relative path, size, name is UTF-8)` for every file under
/// `root`.
fn walk(root: &Path, out: &mut Vec<(String, u64, bool)>) -> Result<(), Rf2Error> {
    let mut stack = vec![(root.to_owned(), String::new(), true)];
    while let Some((dir, rel, utf8)) = stack.pop() {
        let io_err = |e: io::Error| Rf2Error::new(dir.display().to_string(), Rf2ErrorKind::Io(e));
        for entry in fs::read_dir(&dir).map_err(io_err)? {
            let entry = entry.map_err(io_err)?;
            let name = entry.file_name();
            let (name, name_utf8) = match name.to_str() {
                Some(s) => (s.to_owned(), true),
                None => (name.to_string_lossy().into_owned(), false),
            };
            let rel = if rel.is_empty() {
                name
            } else {
                format!("{rel}/{name}")
            };
            let utf8 = utf8 && name_utf8;
            let file_type = entry.file_type().map_err(io_err)?;
            if file_type.is_dir() {
                stack.push((entry.path(), rel, utf8));
            } else {
                // Follows a symbolic link; links to folders are not walked,
                // which rules out cycles.
                let meta = fs::metadata(entry.path()).map_err(io_err)?;
                if meta.is_file() {
                    out.push((rel, meta.len(), utf8));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use zip::write::SimpleFileOptions;

    const CONCEPTS: &str = "id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId\r\n\
        138875005\t20020131\t1\t900000000000207008\t900000000000074008\r\n\
        404684003\t20020131\t1\t900000000000207008\t900000000000074008\r\n";
    const LANGUAGE: &str = "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId\n\
        e12ff74f-2a71-4969-b00c-1eb981bea5d6\t20250909\t1\t31000003106\t900000000000509007\t91000003111\t900000000000548007\n";

    /// `(path, contents)` of a small release with files to skip.
    fn release_files() -> Vec<(&'static str, &'static str)> {
        vec![
            ("Readme_en_20250909.txt", "hello"),
            ("release_package_information.json", "{}"),
            (
                "Snapshot/Terminology/sct2_Concept_Snapshot_INT_20250909.txt",
                CONCEPTS,
            ),
            (
                "Snapshot/Refset/Language/der2_cRefset_LanguageSnapshot-en_INT_20250909.txt",
                LANGUAGE,
            ),
            (
                "Full/Terminology/sct2_Concept_Full_INT_20250909.txt",
                CONCEPTS,
            ),
            (
                "Delta/Terminology/sct2_Concept_Delta_INT_20250909.txt",
                CONCEPTS,
            ),
            (
                "Snapshot/Terminology/sct2_Unheardof_Snapshot_INT_20250909.txt",
                "x",
            ),
        ]
    }

    fn write_folder(root: &Path, files: &[(&str, &str)]) {
        for (path, contents) in files {
            let p = root.join(path);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, contents).unwrap();
        }
    }

    fn write_zip(path: &Path, files: &[(&str, &str)], method: zip::CompressionMethod) {
        let mut w = zip::ZipWriter::new(File::create(path).unwrap());
        let opts = SimpleFileOptions::default().compression_method(method);
        w.add_directory("SnomedCT_Test/", opts).unwrap();
        for (name, contents) in files {
            w.start_file(format!("SnomedCT_Test/{name}"), opts).unwrap();
            w.write_all(contents.as_bytes()).unwrap();
        }
        w.finish().unwrap();
    }

    fn check_release(release: &mut Release, prefix: &str) {
        let paths: Vec<_> = release.files().iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                format!(
                    "{prefix}Snapshot/Refset/Language/der2_cRefset_LanguageSnapshot-en_INT_20250909.txt"
                ),
                format!("{prefix}Snapshot/Terminology/sct2_Concept_Snapshot_INT_20250909.txt"),
            ]
        );
        let lang = &release.files()[0];
        assert_eq!(lang.kind, FileKind::Language);
        assert_eq!(lang.pattern, "c");
        assert_eq!(lang.language.as_deref(), Some("en"));
        assert_eq!(lang.effective_date, Some(20250909));
        assert_eq!(lang.size, LANGUAGE.len() as u64);
        let skipped: Vec<_> = release
            .skipped()
            .iter()
            .map(|s| (s.path.strip_prefix(prefix).unwrap(), s.reason))
            .collect();
        assert_eq!(
            skipped,
            [
                (
                    "Delta/Terminology/sct2_Concept_Delta_INT_20250909.txt",
                    SkipReason::Delta
                ),
                (
                    "Full/Terminology/sct2_Concept_Full_INT_20250909.txt",
                    SkipReason::Full
                ),
                ("Readme_en_20250909.txt", SkipReason::NotRf2Name),
                (
                    "Snapshot/Terminology/sct2_Unheardof_Snapshot_INT_20250909.txt",
                    SkipReason::UnknownContent
                ),
                ("release_package_information.json", SkipReason::NotRf2Name),
            ]
        );

        for file in release.files_of(FileKind::Concept) {
            let display = release.display_path(&file);
            let mut rows = release.open_file(&file).unwrap();
            assert_eq!(rows.path(), display);
            let mut ids = Vec::new();
            while let Some(row) = rows.next_row().unwrap() {
                ids.push(crate::ConceptRow::parse(&row).unwrap().id);
            }
            assert_eq!(ids, [138875005, 404684003]);
            assert_eq!(rows.bytes_read(), file.size);
        }
        let lang = release.files()[0].clone();
        let mut rows = release.open_file(&lang).unwrap();
        let row = rows.next_row().unwrap().unwrap();
        let member = crate::RefsetRow::parse(&row).unwrap();
        assert_eq!(member.extra, b"900000000000548007");
        assert!(rows.next_row().unwrap().is_none());
        drop(rows);

        // A file that is not part of the release is refused.
        let mut foreign = lang.clone();
        foreign.path = "../../etc/passwd".into();
        let e = release.open_file(&foreign).unwrap_err();
        assert!(matches!(e.kind, Rf2ErrorKind::Io(_)), "{e}");
    }

    #[test]
    fn folder_release() {
        let dir = tempfile::tempdir().unwrap();
        write_folder(dir.path(), &release_files());
        let mut release = Release::open(dir.path()).unwrap();
        assert!(!release.is_zip());
        assert_eq!(release.path(), dir.path());
        check_release(&mut release, "");
    }

    #[test]
    fn zip_release() {
        for method in [
            zip::CompressionMethod::Deflated,
            zip::CompressionMethod::Stored,
        ] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("SnomedCT_Test.zip");
            write_zip(&path, &release_files(), method);
            let mut release = Release::open(&path).unwrap();
            assert!(release.is_zip());
            check_release(&mut release, "SnomedCT_Test/");
            let file = release.files()[1].clone();
            assert_eq!(
                release.display_path(&file),
                format!(
                    "{}/SnomedCT_Test/Snapshot/Terminology/sct2_Concept_Snapshot_INT_20250909.txt",
                    path.display()
                )
            );
        }
    }

    #[test]
    fn not_a_release() {
        let dir = tempfile::tempdir().unwrap();
        write_folder(dir.path(), &[("Readme.txt", "hi"), ("a/b.json", "{}")]);
        let e = Release::open(dir.path()).unwrap_err();
        assert!(matches!(e.kind, Rf2ErrorKind::NotARelease), "{e}");

        let zip_path = dir.path().join("empty.zip");
        write_zip(
            &zip_path,
            &[("Readme.txt", "hi")],
            zip::CompressionMethod::Stored,
        );
        let e = Release::open(&zip_path).unwrap_err();
        assert!(matches!(e.kind, Rf2ErrorKind::NotARelease), "{e}");

        let e = Release::open(&dir.path().join("Readme.txt")).unwrap_err();
        assert!(matches!(e.kind, Rf2ErrorKind::Zip(_)), "{e}");
        assert!(e.to_string().contains("Readme.txt: zip error"), "{e}");

        let e = Release::open(&dir.path().join("missing")).unwrap_err();
        assert!(matches!(e.kind, Rf2ErrorKind::Io(_)), "{e}");
    }

    #[test]
    fn header_is_checked_against_kind() {
        let dir = tempfile::tempdir().unwrap();
        write_folder(
            dir.path(),
            &[
                (
                    "sct2_Concept_Snapshot_INT_20250909.txt",
                    "id\teffectiveTime\tactive\tmoduleId\tdefinitionStatus\n",
                ),
                (
                    "der2_ccRefset_AttributeValueSnapshot_INT_20250909.txt",
                    "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tvalueId\n",
                ),
                ("der2_cRefset_AssociationSnapshot_INT_20250909.txt", ""),
            ],
        );
        let mut release = Release::open(dir.path()).unwrap();
        let files = release.files().to_vec();
        assert_eq!(
            files.iter().map(|f| f.kind).collect::<Vec<_>>(),
            [
                FileKind::Association,
                FileKind::OtherRefset,
                FileKind::Concept
            ]
        );
        let e = release.open_file(&files[2]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}/sct2_Concept_Snapshot_INT_20250909.txt:1: header column 5 is \"definitionStatus\", expected \"definitionStatusId\": \"id\\teffectiveTime\\tactive\\tmoduleId\\tdefinitionStatus\"",
                dir.path().display()
            )
        );
        // The pattern says two extra columns, the header has one.
        let e = release.open_file(&files[1]).unwrap_err();
        assert!(
            e.to_string().contains("header has 7 columns, expected 8"),
            "{e}"
        );
        let e = release.open_file(&files[0]).unwrap_err();
        assert!(e.to_string().ends_with("missing header line"), "{e}");
    }
}
