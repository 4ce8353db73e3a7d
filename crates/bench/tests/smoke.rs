//! Both benchmarks end to end on a tiny synthetic edition: in process, and
//! over HTTP against a server bound on a free loopback port. They check
//! that calls are made, answered 200 and reported; never how fast.

mod common;

use std::time::Duration;

use txmap_bench::handlers::{self, HandlerOptions};
use txmap_bench::http::{self, HttpOptions};
use txmap_bench::{Op, report};

fn check_json(json: &serde_json::Value, ops: &[Op], mode: &str) {
    let rows = json.as_array().unwrap();
    assert_eq!(rows.len(), ops.len(), "{json}");
    for (row, op) in rows.iter().zip(ops) {
        assert_eq!(row["op"], op.name());
        assert_eq!(row["mode"], mode);
        assert!(row["calls"].as_u64().unwrap() > 0, "{row}");
        assert_eq!(row["errors"], 0, "{row}");
        for key in [
            "calls_per_s",
            "p50_us",
            "p90_us",
            "p99_us",
            "p999_us",
            "max_us",
        ] {
            assert!(row[key].as_f64().unwrap() > 0.0, "{key}: {row}");
        }
    }
}

#[test]
fn in_process_and_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let file = common::tiny_edition(dir.path());
    let state = handlers::serve_state(&file).unwrap();
    let pools = handlers::sample(&state, 1).unwrap();

    let options = HandlerOptions {
        calls: 50,
        ..Default::default()
    };
    let summaries = handlers::run(&state, &pools, &options).unwrap();
    // Through a file and back, as the CLI writes it.
    let out = dir.path().join("handlers.json");
    std::fs::write(&out, report::to_json(&summaries).to_string()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    check_json(&json, &Op::ALL, "in-process");
    assert!(report::markdown(&summaries).contains("| expand-filter | in-process | 50 |"));

    let (_runtime, target) = common::serve(state);
    let options = HttpOptions {
        connections: 2,
        warmup: Duration::from_millis(100),
        duration: Duration::from_millis(500),
    };
    let ops = [Op::Lookup, Op::Subsumes];
    let summaries: Vec<_> = ops
        .iter()
        .map(|&op| http::run(&target, op, pools.requests(op), &options).unwrap())
        .collect();
    check_json(&report::to_json(&summaries), &ops, "http-2");
}
