//! The traffic corpus and its replay end to end on a tiny synthetic
//! edition: a 200-call corpus, through a file and back, replayed for 0.5 s
//! and for one pass against a server on a free loopback port. Checks that
//! calls are made and reported and none is a 5xx; never how fast.

mod common;

use std::time::Duration;

use txmap_bench::corpus::{self, Shape};
use txmap_bench::load::{self, LoadOptions};
use txmap_load::LoadMode;
use txmap_store::Edition;

#[test]
fn corpus_replayed_against_a_server() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::tiny_edition(dir.path());

    let edition = Edition::open(txmap_load::load(&file, LoadMode::Mmap).unwrap().bytes).unwrap();
    let requests = corpus::generate(&[&edition], 200, 1, None).unwrap();
    assert_eq!(requests.len(), 200);
    // Repeatable, and through a file and back as the CLI writes it.
    assert_eq!(
        corpus::generate(&[&edition], 200, 1, None).unwrap(),
        requests
    );
    let path = dir.path().join("corpus.jsonl");
    std::fs::write(&path, corpus::to_jsonl(&requests)).unwrap();
    let requests = corpus::from_jsonl(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(requests.len(), 200);
    assert!(requests.iter().any(|r| r.op == "VCCS"));
    assert!(
        requests
            .iter()
            .any(|r| r.method == "POST" && r.body.is_some())
            || {
                // EX08 is 1% of the mix: ask for it alone.
                let ex08 = corpus::generate(&[&edition], 5, 1, Some(Shape::Ex08)).unwrap();
                ex08.iter().all(|r| r.method == "POST")
            }
    );

    let state = txmap_bench::handlers::serve_state(&file).unwrap();
    let (_runtime, target) = common::serve(state);

    let timed = load::run(
        &target,
        &requests,
        &LoadOptions {
            connections: 2,
            warmup: Duration::from_millis(100),
            duration: Some(Duration::from_millis(500)),
        },
    )
    .unwrap();
    let once = load::run(
        &target,
        &requests,
        &LoadOptions {
            connections: 3,
            duration: None,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(once.overall.latencies.calls, 200);
    assert_eq!(once.calls.len(), 200);

    // Four clients, each a quarter, side by side: together one pass, and
    // their raw calls merge (bench/matrix.py merges them for exact
    // percentiles over the pass).
    let quarters: Vec<_> = (0..4)
        .map(|k| load::part(&requests, k, 4).unwrap())
        .collect();
    let reports: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = quarters
            .iter()
            .map(|q| {
                let target = &target;
                s.spawn(move || {
                    load::run(
                        target,
                        q,
                        &LoadOptions {
                            connections: 1,
                            duration: None,
                            ..Default::default()
                        },
                    )
                    .unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut lines = 0;
    for (q, r) in quarters.iter().zip(&reports) {
        assert_eq!(r.overall.latencies.calls as usize, q.len());
        let tsv = load::raw_tsv(q, std::slice::from_ref(r));
        let mut rows = tsv.lines();
        assert_eq!(rows.next(), Some("connections\top\tstatus\tns"));
        for row in rows {
            let fields: Vec<&str> = row.split('\t').collect();
            assert_eq!(fields.len(), 4, "{row}");
            assert!(fields[3].parse::<u64>().unwrap() > 0, "{row}");
            lines += 1;
        }
    }
    assert_eq!(lines, 200);
    for report in [&timed, &once] {
        let json: serde_json::Value = serde_json::from_str(&report.to_json().to_string()).unwrap();
        assert!(json["overall"]["calls"].as_u64().unwrap() > 0, "{json}");
        assert!(!json["ops"].as_array().unwrap().is_empty());
        assert_eq!(report.overall.server_errors(), 0, "{json}");
        assert!(
            !report.overall.latencies.errors_by_status.contains_key("io"),
            "{json}"
        );
        // Only the unknown-code lookups may be refused.
        for row in &report.ops {
            if row.op != "LK05" {
                assert_eq!(row.latencies.errors, 0, "{json}");
            }
        }
    }
    assert!(load::markdown(&[timed, once]).contains("**all**"));

    // Every shape on its own answers without a server error.
    for shape in Shape::ALL {
        let requests = corpus::generate(&[&edition], 20, 2, Some(shape)).unwrap();
        assert!(requests.iter().all(|r| r.op == shape.name()));
        if shape == Shape::Lk05 {
            // Unknown, but well formed.
            for r in &requests {
                let code = r.path.rsplit("code=").next().unwrap();
                assert!(
                    txmap_sctid::validate(code.parse().unwrap()).is_ok(),
                    "{code}"
                );
            }
        }
        let r = load::run(
            &target,
            &requests,
            &LoadOptions {
                connections: 1,
                duration: None,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(r.overall.latencies.calls, 20);
        let expected = if shape == Shape::Lk05 { 20 } else { 0 };
        assert_eq!(
            r.overall.latencies.errors,
            expected,
            "{}: {:?}",
            shape.name(),
            r.overall
        );
    }
}
