//! The scan benchmark end to end on a tiny file: every arm, cold and warm,
//! each in a child process (the `scan-child` helper binary). Checks that
//! every run is reported, that the arms agree on the newline count and
//! that the JSON is well formed; never how fast.
#![cfg(target_os = "linux")]

use std::path::PathBuf;

use txmap_bench::scan::{self, Arm, ScanOptions, Temperature};

#[test]
fn every_arm_cold_and_warm() {
    let dir = tempfile::tempdir().unwrap();
    let sizes: [usize; 2] = [65_536, 300_007];
    let options = ScanOptions {
        dir: dir.path().join("scan"),
        sizes: sizes.iter().map(|&s| s as u64).collect(),
        arms: Arm::ALL.to_vec(),
        temperatures: vec![Temperature::Cold, Temperature::Warm],
        repeats: 1,
        buffer: 4096,
        keep: true,
        child_program: PathBuf::from(env!("CARGO_BIN_EXE_scan-child")),
        child_prefix: Vec::new(),
    };
    let mut seen = 0;
    let report = scan::run(&options, |_| seen += 1).unwrap();
    assert_eq!(report.runs.len(), 2 * 5 * 2);
    assert_eq!(seen, report.runs.len());
    assert_eq!(report.file_size, 300_007);

    // The kept test file: each prefix's newlines, counted here.
    let bytes = std::fs::read(&report.file).unwrap();
    assert_eq!(bytes.len(), 300_007);
    for size in sizes {
        let want = bytes[..size].iter().filter(|&&b| b == b'\n').count() as u64;
        assert!(want > 500, "{want}");
        for r in report.runs.iter().filter(|r| r.size == size as u64) {
            assert_eq!(r.scan.newlines, want, "{} {}", r.scan.arm.name(), size);
            assert_eq!(r.scan.bytes, size as u64);
            assert!(r.scan.seconds > 0.0 && r.scan.peak_rss > 0);
        }
    }

    let json: serde_json::Value =
        serde_json::from_str(&serde_json::to_string(&report.to_json()).unwrap()).unwrap();
    assert_eq!(json["runs"].as_array().unwrap().len(), 20);
    let medians = json["medians"].as_array().unwrap();
    assert_eq!(medians.len(), 20);
    for m in medians {
        assert!(m["gbps"].as_f64().unwrap() > 0.0, "{m}");
        let arm = m["arm"].as_str().unwrap();
        assert!(Arm::from_name(arm).is_some(), "{m}");
    }
    let table = report.markdown();
    assert_eq!(table.lines().count(), 2 + 2 * 5, "{table}");

    // Without --keep the test file is gone afterwards.
    let options = ScanOptions {
        keep: false,
        arms: vec![Arm::Read],
        sizes: vec![10_000],
        ..options
    };
    let report = scan::run(&options, |_| {}).unwrap();
    assert!(!report.file.exists());
}
