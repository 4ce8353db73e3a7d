//! Round trips: synthetic RF2 releases of several sizes and seeds, and a
//! base with an extension, are imported, and every component in the RF2
//! input is looked up through the store and compared with what a naive
//! reader of the same files finds (`common::compare`).

mod common;

use std::path::{Path, PathBuf};

use common::compare;
use txmap_import::{ImportOptions, Quiet};
use txmap_store::Edition;

fn import(sources: &[PathBuf], out: &Path, sort_buffer: Option<u64>) -> Vec<u8> {
    import_with(sources, out, sort_buffer, 2)
}

fn import_with(
    sources: &[PathBuf],
    out: &Path,
    sort_buffer: Option<u64>,
    threads: usize,
) -> Vec<u8> {
    let mut o = ImportOptions::new(sources.to_vec(), out.to_owned());
    o.sort_buffer = sort_buffer;
    o.threads = threads;
    let report = txmap_import::import(&o, &Quiet).unwrap();
    if sort_buffer.is_some() {
        assert!(
            report.spilled_runs > 10,
            "a small sort buffer must spill ({} runs)",
            report.spilled_runs
        );
    }
    std::fs::read(out).unwrap()
}

/// A base release and an extension over it (effective 2025-03-01, namespace
/// 1000124), each of (concepts, seed).
fn base_and_extension(dir: &Path, base: (usize, u64), ext: (usize, u64)) -> Vec<PathBuf> {
    let base_dir = synth(dir, "base", base.0, base.1);
    let ext_dir = dir.join("ext");
    let mut config = txmap_synth::SynthConfig::new(ext.0, ext.1);
    config.effective_time = 20250301;
    config.extension = Some(txmap_synth::ExtensionConfig::new(base.0, base.1, 1_000_124));
    txmap_synth::generate(&config, &ext_dir).unwrap();
    vec![base_dir, ext_dir]
}

fn synth(dir: &Path, name: &str, concepts: usize, seed: u64) -> PathBuf {
    let out = dir.join(name);
    txmap_synth::generate(&txmap_synth::SynthConfig::new(concepts, seed), &out).unwrap();
    out
}

#[test]
fn synthetic_releases_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    for (concepts, seed) in [(1500, 1), (4000, 2)] {
        let rf2 = synth(dir.path(), &format!("rf2-{seed}"), concepts, seed);
        let bytes = import(
            std::slice::from_ref(&rf2),
            &dir.path().join(format!("{seed}.txmap")),
            None,
        );
        compare(&[rf2], &bytes);
    }
}

#[test]
fn spilling_gives_the_same_file() {
    // The sorters' spill-and-merge path must give byte-identical output to
    // the in-memory path.
    let dir = tempfile::tempdir().unwrap();
    let rf2 = synth(dir.path(), "rf2", 3000, 7);
    let in_memory = import(
        std::slice::from_ref(&rf2),
        &dir.path().join("a.txmap"),
        None,
    );
    let spilled = import(
        std::slice::from_ref(&rf2),
        &dir.path().join("b.txmap"),
        Some(64 << 10),
    );
    assert!(
        in_memory == spilled,
        "spilled import differs from in-memory import"
    );
    compare(&[rf2], &spilled);
}

#[test]
fn one_thread_and_two_give_the_same_file() {
    // A base with an extension, so that the second thread's half (module
    // dependencies, refsets) and the first's both have layering to do.
    let dir = tempfile::tempdir().unwrap();
    let sources = base_and_extension(dir.path(), (2500, 21), (500, 22));
    let two = import_with(&sources, &dir.path().join("2.txmap"), None, 2);
    let one = import_with(&sources, &dir.path().join("1.txmap"), None, 1);
    assert!(one == two, "one thread and two give different files");
    // And when the sorters spill.
    let spilled = import_with(&sources, &dir.path().join("s.txmap"), Some(64 << 10), 2);
    assert!(spilled == two, "a spilling two-thread import differs");
}

#[test]
fn zip_and_folder_give_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let folder = synth(dir.path(), "rf2", 1200, 3);
    let zip = synth(dir.path(), "rf2.zip", 1200, 3);
    let a = import(&[folder], &dir.path().join("a.txmap"), None);
    let b = import(&[zip], &dir.path().join("b.txmap"), None);
    // The metadata names the sources, so compare everything but the trailer.
    let ea = Edition::open(&a[..]).unwrap();
    let eb = Edition::open(&b[..]).unwrap();
    let sa: Vec<_> = ea.sections().into_iter().map(|s| (s.name, s.len)).collect();
    let sb: Vec<_> = eb.sections().into_iter().map(|s| (s.name, s.len)).collect();
    assert_eq!(sa, sb);
    let table = ea
        .sections()
        .last()
        .map(|s| (s.offset + s.len) as usize)
        .unwrap();
    assert!(a[4096..table] == b[4096..table]);
}

#[test]
fn extension_over_base_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let sources = base_and_extension(dir.path(), (3000, 11), (600, 12));
    let bytes = import(&sources, &dir.path().join("ext.txmap"), None);
    let e = Edition::open(&bytes[..]).unwrap();
    // The extension module is the top of the dependency graph.
    assert!(
        e.identity()
            .edition_uri
            .ends_with(&format!("/{}", e.identity().edition_module))
    );
    assert_ne!(e.identity().edition_module, 900000000000207008);
    assert_eq!(e.identity().effective_time, 20250301);
    compare(&sources, &bytes);
}

#[test]
fn a_characteristic_type_outside_the_fixed_codes_is_kept_and_the_file_is_stable() {
    // Relationships run on a second thread with the fixed one-byte codes
    // only; one with another characteristic type (here qualifying, retired
    // but legal RF2) has them run again with the shared table. The value
    // must survive and two imports must give the same bytes.
    const QUALIFYING: u64 = 900000000000225001;
    let dir = tempfile::tempdir().unwrap();
    let rf2 = synth(dir.path(), "rf2", 1500, 5);
    let file = walk(&rf2)
        .into_iter()
        .find(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("sct2_Relationship_Snapshot")
        })
        .expect("a relationship snapshot");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut changed = None;
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            // An active attribute (not is-a) row; the first one only.
            if changed.is_none() && f.len() == 10 && f[2] == "1" && f[7] != "116680003" {
                changed = Some((
                    f[4].parse::<u64>().unwrap(),
                    f[7].parse::<u64>().unwrap(),
                    f[5].parse::<u64>().unwrap(),
                ));
                let mut f = f.clone();
                let q = QUALIFYING.to_string();
                f[8] = &q;
                return f.join("\t");
            }
            line.to_owned()
        })
        .collect();
    let (source, type_id, target) = changed.expect("an active attribute row");
    std::fs::write(&file, lines.join("\r\n") + "\r\n").unwrap();

    let a = import(
        std::slice::from_ref(&rf2),
        &dir.path().join("a.txmap"),
        None,
    );
    let b = import(
        std::slice::from_ref(&rf2),
        &dir.path().join("b.txmap"),
        None,
    );
    assert!(a == b, "two imports of one release differ");
    let e = Edition::open(&a[..]).unwrap();
    let attributes = e.attributes(e.ordinal(source).unwrap()).unwrap();
    let r = attributes
        .iter()
        .find(|r| r.type_id == type_id && r.target == target)
        .expect("the changed relationship");
    assert_eq!(r.characteristic_type, QUALIFYING);
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// A search filters and ranks its candidates from `DescriptionSearch` and
/// (one word) the first-words bitmap, which the importer writes; each hit's
/// key must be the key of its term as the text crate ranks it, and its
/// preferred flag what its acceptability rows say, for every word of the
/// release, prefixes of them and pairs of them.
#[test]
fn searches_rank_every_hit_as_its_term() {
    let dir = tempfile::tempdir().unwrap();
    let rf2 = synth(dir.path(), "rf2", 1500, 5);
    let bytes = import(
        std::slice::from_ref(&rf2),
        &dir.path().join("e.txmap"),
        None,
    );
    let e = Edition::open(&bytes[..]).unwrap();
    assert!(
        e.sections()
            .iter()
            .any(|s| s.name == "WordFirstWords" && s.len > 0)
    );
    let mut queries = std::collections::BTreeSet::new();
    for c in 0..e.concept_count() {
        for d in e.descriptions(c).unwrap() {
            for w in txmap_text::words(&txmap_text::fold(d.term)) {
                queries.insert(w.to_owned());
                if let Some((i, _)) = w.char_indices().nth(3) {
                    queries.insert(w[..i].to_owned());
                }
            }
        }
    }
    let options = txmap_store::SearchOptions {
        include_inactive: true,
        include_definitions: true,
        max_candidates: usize::MAX,
        ..Default::default()
    };
    let pairs: Vec<String> = queries
        .iter()
        .zip(queries.iter().skip(7))
        .step_by(5)
        .map(|(a, b)| format!("{a} {b}"))
        .collect();
    let default = e.identity().default_language_refset;
    let mut hits = 0;
    for q in queries.iter().chain(&pairs) {
        for h in e.search_with(q, usize::MAX, &options).unwrap() {
            let d = &h.description;
            assert_eq!(
                h.rank,
                txmap_text::rank(&txmap_text::fold(q), d.term),
                "{q:?}: {:?}",
                d.term
            );
            let preferred = d.active
                && d.type_id == txmap_store::sctid::SYNONYM
                && e.acceptability(d.ordinal)
                    .unwrap()
                    .contains(&(default, txmap_store::sctid::PREFERRED));
            assert_eq!(h.preferred, preferred, "{q:?}: {:?}", d.term);
            hits += 1;
        }
    }
    assert!(hits > 10_000, "{hits} hits over {} queries", queries.len());
}

/// The file's order follows how sections are read: every hot section
/// before the term heap (whose preferred terms are hot), then the dense
/// ones, then the sparse ones; and every edition section the format knows
/// has a place.
#[test]
fn the_layout_groups_sections_by_how_they_are_read() {
    use txmap_format::SectionKind;
    use txmap_store::access::{Access, class};
    let layout = txmap_import::LAYOUT;
    let heap = layout
        .iter()
        .position(|&k| k == SectionKind::TermHeap)
        .unwrap();
    let rank = |i: usize, k: SectionKind| match class(k) {
        Access::Hot => 0,
        _ if i == heap => 1,
        Access::Dense => 2,
        Access::Sparse => 3,
    };
    let ranks: Vec<u8> = layout
        .iter()
        .enumerate()
        .map(|(i, &k)| rank(i, k))
        .collect();
    assert!(ranks.windows(2).all(|w| w[0] <= w[1]), "{layout:?}");
    for k in SectionKind::ALL.iter().filter(|k| !k.is_code_system()) {
        assert!(layout.contains(k), "{k:?} has no place in LAYOUT");
    }
}

/// The search heads the importer stores answer as the ranked search
/// does: every prefix of a common word, both variants, total and list;
/// and a search for a head, paged, is the ranked search's prefix.
#[test]
fn search_heads_answer_as_the_ranked_search() {
    let dir = tempfile::tempdir().unwrap();
    let rf2 = synth(dir.path(), "rf2", 20000, 9);
    let bytes = import(
        std::slice::from_ref(&rf2),
        &dir.path().join("e.txmap"),
        None,
    );
    let e = Edition::open(&bytes[..]).unwrap();
    let heads = e.check_search_heads().unwrap();
    assert!(heads > 5, "only {heads} heads: the test proves little");
    // "o" is a head in any English edition of this size ("of").
    let options = txmap_store::SearchOptions::default();
    let all = e.search_concepts("o", &options).unwrap();
    for k in [1, 10, 200] {
        let (total, top) = e
            .search_concepts_top("o", &options, txmap_store::Scope::All, k)
            .unwrap();
        assert_eq!(total, all.len());
        assert_eq!(top, all[..k.min(all.len())]);
    }
    // In a scope built for searching, a head's page is its list kept to
    // the scope, and the rest are counted: the ranked answer, for scopes
    // that keep most of the list and scopes that keep little of it — and
    // for a scope with more concepts than the query has postings, which
    // the scope's bitmap counts rather than its descriptions seed.
    let wide = ('a'..='z')
        .map(|c| c.to_string())
        .find(|q| {
            let cost = e
                .search_cost(q, txmap_store::MatchMode::Prefix, usize::MAX - 1)
                .unwrap();
            (10_000..e.concept_count() as usize * 6 / 7).contains(&cost)
        })
        .expect("a letter that is a head with fewer postings than concepts");
    let wide_all = e.search_concepts(&wide, &options).unwrap();
    for (q, all, every) in [
        ("o", &all, 2),
        ("o", &all, 3),
        ("o", &all, 50),
        (wide.as_str(), &wide_all, 7),
    ] {
        let keep = |c: &u32| {
            if every == 7 {
                c % 7 != 3
            } else {
                c.is_multiple_of(every)
            }
        };
        let scope: Vec<u32> = (0..e.concept_count()).filter(keep).collect();
        let want: Vec<u32> = all.iter().copied().filter(keep).collect();
        let set = e.scope_set(scope.clone()).unwrap();
        for inactive in [false, true] {
            let options = txmap_store::SearchOptions {
                include_inactive: inactive,
                ..options
            };
            let ranked = e
                .search_concepts_top(q, &options, txmap_store::Scope::Concepts(&scope), 200)
                .unwrap();
            if !inactive {
                assert_eq!(ranked.0, want.len());
            }
            for k in [0, 1, 10, 200] {
                let (total, top) = e
                    .search_concepts_top(q, &options, txmap_store::Scope::Set(&set), k)
                    .unwrap();
                assert_eq!(
                    total, ranked.0,
                    "{q} every {every} k {k} inactive {inactive}"
                );
                assert_eq!(
                    top,
                    ranked.1[..k.min(ranked.1.len())],
                    "{q} every {every} k {k}"
                );
            }
        }
    }
}
