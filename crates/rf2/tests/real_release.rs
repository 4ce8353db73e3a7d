//! Reads a real RF2 release end to end, if one is available.
//!
//! Unit tests build their own small files; this test checks the reader
//! against what release tooling actually produces. It uses the SNOMED CT
//! subset from the tx-ecosystem test data (`$TX_ECOSYSTEM_DIR/tx-source/snomed`
//! or `../shared/tx-ecosystem/tx-source/snomed` beside the checkout) and is
//! skipped (failed under CI), with a
//! notice, where that is absent. It reads the folder, and the same files
//! zipped into a temporary archive, and requires every row of every file
//! to parse, with one row per line after the header.

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use txmap_rf2::{
    ConceptRow, ConcreteValueRow, DescriptionRow, FileKind, RefsetRow, RelationshipRow, Release,
    Row, RowError,
};

fn release_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("TX_ECOSYSTEM_DIR") {
        Some(d) => PathBuf::from(d).join("tx-source/snomed"),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/tx-ecosystem/tx-source/snomed"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} is missing under CI",
            dir.display()
        );
        eprintln!(
            "skipping: no RF2 release at {} (set TX_ECOSYSTEM_DIR)",
            dir.display()
        );
        None
    }
}

fn parse_any(kind: FileKind, row: &Row<'_>) -> Result<(), RowError> {
    match kind {
        FileKind::Concept => ConceptRow::parse(row).map(drop),
        FileKind::Description | FileKind::TextDefinition => DescriptionRow::parse(row).map(drop),
        FileKind::Relationship | FileKind::StatedRelationship => {
            RelationshipRow::parse(row).map(drop)
        }
        FileKind::RelationshipConcreteValues => ConcreteValueRow::parse(row).map(drop),
        _ => RefsetRow::parse(row).map(drop),
    }
}

/// Lines in `data`, counting a last line without a newline.
fn line_count(data: &[u8]) -> u64 {
    let newlines = data.iter().filter(|&&b| b == b'\n').count() as u64;
    newlines + u64::from(data.last().is_some_and(|&b| b != b'\n'))
}

/// Parses every row of every file; returns `(path, kind, rows)` per file.
fn read_all(release: &mut Release) -> Vec<(String, FileKind, u64)> {
    let mut out = Vec::new();
    for file in release.files().to_vec() {
        let mut raw = Vec::new();
        release
            .open_raw(&file)
            .unwrap()
            .read_to_end(&mut raw)
            .unwrap();
        assert_eq!(raw.len() as u64, file.size, "{}", file.path);

        let mut reader = release.open_file(&file).unwrap_or_else(|e| panic!("{e}"));
        let mut rows = 0u64;
        while let Some(row) = reader.next_row().unwrap_or_else(|e| panic!("{e}")) {
            if let Err(e) = parse_any(file.kind, &row) {
                panic!("{}", row.error(e));
            }
            rows += 1;
        }
        assert_eq!(rows, line_count(&raw) - 1, "{}", file.path);
        assert_eq!(reader.bytes_read(), file.size, "{}", file.path);
        out.push((file.path.clone(), file.kind, rows));
    }
    out
}

fn zip_folder(dir: &Path, zip_path: &Path) {
    fn add(w: &mut zip::ZipWriter<File>, root: &Path, dir: &Path) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                add(w, root, &path);
            } else {
                let rel = path.strip_prefix(root).unwrap().to_str().unwrap();
                let opts = zip::write::SimpleFileOptions::default()
                    .compression_method(zip::CompressionMethod::Deflated);
                w.start_file(format!("SnomedCT_Subset/{rel}"), opts)
                    .unwrap();
                w.write_all(&fs::read(&path).unwrap()).unwrap();
            }
        }
    }
    let mut w = zip::ZipWriter::new(File::create(zip_path).unwrap());
    add(&mut w, dir, dir);
    w.finish().unwrap();
}

#[test]
fn real_release_parses_without_errors() {
    let Some(dir) = release_dir() else {
        return;
    };
    let mut release = Release::open(&dir).unwrap();
    for s in release.skipped() {
        eprintln!("skipped {}: {}", s.path, s.reason);
    }
    let kinds: Vec<FileKind> = release.files().iter().map(|f| f.kind).collect();
    for needed in [
        FileKind::Concept,
        FileKind::Description,
        FileKind::Relationship,
        FileKind::Language,
    ] {
        assert!(kinds.contains(&needed), "no {needed} file in {kinds:?}");
    }
    let from_folder = read_all(&mut release);
    for (path, kind, rows) in &from_folder {
        eprintln!("{kind:>28} {rows:>8} {path}");
    }

    let tmp = tempfile::tempdir().unwrap();
    let zip_path = tmp.path().join("SnomedCT_Subset.zip");
    zip_folder(&dir, &zip_path);
    let mut zipped = Release::open(&zip_path).unwrap();
    let from_zip = read_all(&mut zipped);
    let strip = |v: Vec<(String, FileKind, u64)>| {
        v.into_iter()
            .map(|(p, k, n)| (p.trim_start_matches("SnomedCT_Subset/").to_owned(), k, n))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(from_zip), strip(from_folder));
}
