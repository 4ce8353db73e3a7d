//! Container tests on files the tests write themselves.

use super::*;
use zerocopy::IntoBytes;

fn sample(dir: &std::path::Path) -> Vec<u8> {
    let path = dir.join("sample.txmap");
    let mut w = FileWriter::create(&path).unwrap();
    w.add_section(SectionKind::ConceptIds, &[1u8; 100], 12)
        .unwrap();
    w.add_section(SectionKind::TermHeap, b"hello world", 11)
        .unwrap();
    {
        let mut s = w.section(SectionKind::Concepts).unwrap();
        std::io::Write::write_all(&mut s, &[7u8; 5000]).unwrap();
        s.finish(5000).unwrap();
    }
    let mut meta = Metadata::new();
    meta.insert(
        "version_uri".into(),
        "http://snomed.info/sct/1/version/2".into(),
    );
    w.finish(&meta).unwrap();
    std::fs::read(&path).unwrap()
}

#[test]
fn round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample(dir.path());
    let c = Container::open(&bytes).unwrap();
    assert_eq!(c.section(SectionKind::ConceptIds).unwrap(), &[1u8; 100][..]);
    assert_eq!(c.section(SectionKind::TermHeap).unwrap(), b"hello world");
    assert_eq!(c.section(SectionKind::Concepts).unwrap().len(), 5000);
    assert_eq!(c.entry(SectionKind::Concepts).unwrap().count.get(), 5000);
    assert!(c.section(SectionKind::Parents).is_none());
    assert!(matches!(
        c.require(SectionKind::Parents),
        Err(FormatError::MissingSection(SectionKind::Parents))
    ));
    assert_eq!(
        c.metadata()["version_uri"],
        "http://snomed.info/sct/1/version/2"
    );
    for e in c.entries() {
        assert_eq!(e.offset.get() % ALIGN, 0);
    }
    c.verify(|_| {}).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("sample.txmap"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o644, "edition files are world-readable");
    }
    // Only the final file is left in the directory.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("sample.txmap")]);
}

#[test]
fn a_dropped_writer_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.txmap");
    let mut w = FileWriter::create(&path).unwrap();
    w.add_section(SectionKind::ConceptIds, &[1u8; 100], 12)
        .unwrap();
    drop(w);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn duplicate_sections_are_refused_by_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileWriter::create(&dir.path().join("x")).unwrap();
    w.add_section(SectionKind::ConceptIds, b"a", 1).unwrap();
    assert!(matches!(
        w.add_section(SectionKind::ConceptIds, b"b", 1),
        Err(FormatError::DuplicateSection { .. })
    ));
}

#[test]
fn truncation_is_caught_on_open() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample(dir.path());
    for len in [0, 10, HEADER_LEN, 4096, bytes.len() / 2, bytes.len() - 1] {
        let err = Container::open(&bytes[..len]).unwrap_err();
        assert!(
            matches!(
                err,
                FormatError::TooShort { .. } | FormatError::LengthMismatch { .. }
            ),
            "{len}: {err}"
        );
    }
}

#[test]
fn wrong_magic_and_future_version() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = sample(dir.path());
    let mut foreign = bytes.clone();
    foreign[..8].copy_from_slice(b"PK\x03\x04zip!");
    assert!(matches!(
        Container::open(&foreign),
        Err(FormatError::BadMagic)
    ));
    bytes[8..10].copy_from_slice(&(FORMAT_MAJOR + 1).to_le_bytes());
    let err = Container::open(&bytes).unwrap_err();
    assert!(
        matches!(err, FormatError::UnsupportedVersion { major, .. } if major == FORMAT_MAJOR + 1)
    );
    assert!(err.to_string().contains("not supported"), "{err}");
}

#[test]
fn a_newer_minor_version_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = sample(dir.path());
    bytes[10..12].copy_from_slice(&(FORMAT_MINOR + 1).to_le_bytes());
    // The header checksum covers the version, so recompute it as a newer
    // writer would have.
    let (mut h, _) = zerocopy::FromBytes::read_from_prefix(&bytes[..])
        .map(|(h, r): (Header, &[u8])| (h, r.len()))
        .unwrap();
    let start = h.table_offset.get() as usize;
    let table =
        bytes[start..start + h.section_count.get() as usize * size_of::<SectionEntry>()].to_vec();
    let meta = bytes[start + table.len()..].to_vec();
    h.checksum = zerocopy::little_endian::U64::new(container::header_checksum(&h, &table, &meta));
    bytes[..HEADER_LEN].copy_from_slice(h.as_bytes());
    Container::open(&bytes).unwrap().verify(|_| {}).unwrap();
}

#[test]
fn every_flipped_byte_is_caught_by_open_or_verify() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample(dir.path());
    // Every byte of the file: header, padding, sections and trailer.
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x40;
        let caught = match Container::open(&b) {
            Err(_) => true,
            Ok(c) => c.verify(|_| {}).is_err(),
        };
        assert!(caught, "flipped byte at {i} not detected");
    }
}

#[test]
fn flipped_section_byte_names_the_section() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample(dir.path());
    let c = Container::open(&bytes).unwrap();
    let e = *c.entry(SectionKind::TermHeap).unwrap();
    let mut b = bytes.clone();
    b[e.offset.get() as usize + 3] ^= 1;
    let c = Container::open(&b).unwrap();
    let err = c.verify(|_| {}).unwrap_err();
    assert_eq!(err.to_string(), "section TermHeap checksum mismatch");
    assert!(c.verify_section(SectionKind::ConceptIds).is_ok());
    assert!(c.verify_section(SectionKind::TermHeap).is_err());
}

#[test]
fn sections_out_of_bounds_or_overlapping_are_refused() {
    // Build a container by hand whose table lies about a section.
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample(dir.path());
    let c = Container::open(&bytes).unwrap();
    let h = *c.header();
    let start = h.table_offset.get() as usize;
    let n = h.section_count.get() as usize;
    let rewrite = |f: &dyn Fn(&mut [SectionEntry])| {
        let mut b = bytes.clone();
        let mut entries = c.entries().to_vec();
        f(&mut entries);
        b[start..start + n * size_of::<SectionEntry>()].copy_from_slice(entries.as_bytes());
        let meta = b[start + n * size_of::<SectionEntry>()..].to_vec();
        let mut h2 = h;
        h2.checksum = zerocopy::little_endian::U64::new(container::header_checksum(
            &h2,
            entries.as_bytes(),
            &meta,
        ));
        b[..HEADER_LEN].copy_from_slice(h2.as_bytes());
        Container::open(&b).map(|_| ())
    };
    use zerocopy::little_endian::U64;
    assert!(matches!(
        rewrite(&|e| e[0].len = U64::new(1 << 40)),
        Err(FormatError::SectionBounds { .. })
    ));
    assert!(matches!(
        rewrite(&|e| e[1].offset = e[0].offset),
        Err(FormatError::SectionBounds { .. })
    ));
    assert!(matches!(
        rewrite(&|e| e[0].offset = U64::new(4097)),
        Err(FormatError::SectionBounds { .. })
    ));
    assert!(matches!(
        rewrite(&|e| e[0].offset = U64::new(0)),
        Err(FormatError::SectionBounds { .. })
    ));
    assert!(matches!(
        rewrite(&|e| e[1].kind = e[0].kind),
        Err(FormatError::DuplicateSection { .. })
    ));
    assert!(matches!(
        rewrite(&|e| e[0].len = U64::new(u64::MAX)),
        Err(FormatError::SectionBounds { .. })
    ));
    assert!(rewrite(&|_| {}).is_ok());
}

#[test]
fn metadata_with_newlines_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let w = FileWriter::create(&dir.path().join("x")).unwrap();
    let mut meta = Metadata::new();
    meta.insert("k".into(), "a\nb".into());
    assert!(matches!(w.finish(&meta), Err(FormatError::Invalid(_))));
}

#[test]
fn peek_reads_only_header_and_trailer() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = sample(dir.path());
    let path = dir.path().join("sample.txmap");
    let meta = peek_metadata(&std::fs::File::open(&path).unwrap()).unwrap();
    assert_eq!(meta["version_uri"], "http://snomed.info/sct/1/version/2");
    // Damage inside a section is not seen; damage to the trailer is.
    let mut b = bytes.clone();
    b[4096] ^= 1;
    std::fs::write(&path, &b).unwrap();
    assert!(peek_metadata(&std::fs::File::open(&path).unwrap()).is_ok());
    let mut b = bytes.clone();
    let last = b.len() - 2;
    b[last] ^= 1;
    std::fs::write(&path, &b).unwrap();
    assert!(matches!(
        peek_metadata(&std::fs::File::open(&path).unwrap()),
        Err(FormatError::HeaderChecksum)
    ));
    std::fs::write(&path, &bytes[..bytes.len() - 1]).unwrap();
    assert!(matches!(
        peek_metadata(&std::fs::File::open(&path).unwrap()),
        Err(FormatError::LengthMismatch { .. })
    ));
}

#[test]
fn container_struct_sizes_are_part_of_the_format() {
    // FORMAT.md's header and section table; changing either is a major
    // format change.
    assert_eq!(HEADER_LEN, 64);
    assert_eq!(size_of::<SectionEntry>(), 40);
}

/// Both ordinal-list encoders refuse a list out of order, naming the
/// first item not above the one before it, and write nothing.
#[test]
fn out_of_order_lists_are_refused_and_nothing_written() {
    use crate::packed::NotAscending;
    type Encode = fn(&[u32], &mut Vec<u8>) -> Result<(), NotAscending>;
    let encoders: [(&str, Encode); 2] = [
        ("packed", crate::packed::pack),
        ("chunked", crate::chunked::chunk),
    ];
    for (name, encode) in encoders {
        let mut out = vec![9];
        let err = encode(&[1, 3, 3], &mut out).unwrap_err();
        assert_eq!(
            err,
            NotAscending {
                previous: 3,
                item: 3
            },
            "{name}"
        );
        let err = encode(&[5, 70_000, 2], &mut out).unwrap_err();
        assert_eq!(
            err,
            NotAscending {
                previous: 70_000,
                item: 2
            },
            "{name}"
        );
        assert_eq!(out, [9], "{name}");
    }
}
