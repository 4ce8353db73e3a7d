//! The ECL benchmark end to end on a tiny synthetic edition: a corpus
//! written here from concepts found in that edition is parsed, evaluated
//! and reported as JSON with one entry per expression. Never how fast.

mod common;

use txmap_bench::ecl::{self, EclOptions};
use txmap_store::Edition;

#[test]
fn corpus_runs_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let ed = Edition::open(std::fs::read(common::tiny_edition(dir.path())).unwrap()).unwrap();
    ecl::warm(&ed).unwrap();

    // A concept with an attribute, its type and target, and a refset.
    let (source, rel) = (0..ed.concept_count())
        .find_map(|o| {
            let a = ed.attributes(o).unwrap();
            a.first().map(|r| (ed.sctid(o).unwrap(), *r))
        })
        .expect("a concept with attributes");
    let refset = ed.refsets().next().expect("a refset").id;
    let corpus_text = format!(
        "# A tiny corpus.\n\
         # category: hierarchy\n\
         << 404684003\n\
         > {source}\n\
         \n\
         # category: refinement\n\
         << 138875005 : {ty} = {target}\n\
         * : R {ty} = {source}\n\
         {source} . {ty}\n\
         # category: memberOf\n\
         ^ {refset}\n\
         # category: not-supported\n\
         LOINC#54486-6\n",
        ty = rel.type_id,
        target = rel.target,
    );
    let corpus = ecl::read_corpus(&corpus_text);
    assert_eq!(corpus.len(), 7);
    assert_eq!(corpus[0].category, "hierarchy");
    assert_eq!(corpus[0].line, 3);
    assert_eq!(corpus[6].category, "not-supported");
    let (exprs, parse_total) = ecl::parse_corpus(&corpus).unwrap();

    let options = EclOptions {
        runs: 2,
        warmup: 1,
        with_parse: true,
        ..Default::default()
    };
    let mut seen = 0;
    let report = ecl::run(&ed, &corpus, &exprs, parse_total, &options, |_| seen += 1).unwrap();
    assert_eq!(seen, 7);

    // Through text and back, as the CLI writes it.
    let json: serde_json::Value = serde_json::from_str(&report.to_json().to_string()).unwrap();
    let rows = json["expressions"].as_array().unwrap();
    assert_eq!(rows.len(), 7, "{json}");
    for (row, entry) in rows.iter().zip(&corpus) {
        assert_eq!(row["text"], entry.text.as_str());
        assert_eq!(row["category"], entry.category.as_str());
        assert!(row["median_us"].as_f64().is_some(), "{row}");
    }
    // The refined and reverse expressions find the relationship chosen.
    assert_eq!(rows[0]["outcome"], "answered", "{json}");
    assert!(rows[2]["size"].as_u64().unwrap() >= 1, "{json}");
    assert!(rows[3]["size"].as_u64().unwrap() >= 1, "{json}");
    assert!(rows[4]["size"].as_u64().unwrap() >= 1, "{json}");
    assert_eq!(rows[6]["outcome"], "not-supported", "{json}");
    assert_eq!(rows[6]["runs_us"].as_array().unwrap().len(), 1);
    // The warm-up evaluation is not among the timed runs.
    assert_eq!(rows[0]["runs_us"].as_array().unwrap().len(), 2);
    assert_eq!(json["warmup"], 1, "{json}");
    assert_eq!(json["with_parse"], true, "{json}");
    assert_eq!(json["overall"]["n"], 7);
    assert_eq!(json["overall"]["not_supported"], 1);
    assert!(json["categories"]["refinement"].is_object(), "{json}");
    assert!(report.markdown().contains("| hierarchy | 2 |"));

    // A corpus line that does not parse is refused, naming its line.
    let bad = ecl::read_corpus("# category: x\n<< 404684003\n<< abc\n");
    let err = ecl::parse_corpus(&bad).unwrap_err();
    assert!(err.to_string().contains("line 3"), "{err}");
}
