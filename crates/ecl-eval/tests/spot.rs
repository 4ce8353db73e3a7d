//! Spot checks on a small synthetic edition, with expected answers read
//! from the edition through the store (never from the evaluator), and on
//! the HL7 test edition with the counts its test suite states.

mod common;

use std::collections::BTreeSet;

use common::*;
use txmap_ecl::{ConceptFilter, Expr, Filter, Span, parse};
use txmap_ecl_eval::{
    Budget, EvalError, ExpressionSubject, Subject, SubjectAttribute, SubjectValue, evaluate,
    matches,
};

const ROOT: u64 = 138875005;

fn eval(ed: &Ed, x: &Expr) -> Vec<u32> {
    evaluate(ed, x, &Budget::default()).unwrap()
}

fn sorted(mut v: Vec<u32>) -> Vec<u32> {
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn synthetic_spot_checks() {
    let dir = tempfile::tempdir().unwrap();
    let ed = synth(dir.path(), 3500, 7);
    term_filters_agree(&ed);
    let n = ed.concept_count();
    // A concept with at least two children and a parent.
    let x = (0..n)
        .find(|&o| ed.children(o).unwrap().len() >= 2 && !ed.parents(o).unwrap().is_empty())
        .unwrap();
    let id = ed.sctid(x).unwrap();
    let desc = ed.descendants(x).unwrap().to_vec();
    let children = ed.children(x).unwrap().to_vec();
    let parents = ed.parents(x).unwrap().to_vec();
    let ancestors = ed.ancestors(x).unwrap().to_vec();

    assert_eq!(eval(&ed, &e(c(id))), vec![x]);
    assert_eq!(eval(&ed, &e(op(DescendantOf, c(id)))), desc);
    assert_eq!(
        eval(&ed, &e(op(DescendantOrSelfOf, c(id)))),
        sorted([desc.clone(), vec![x]].concat())
    );
    assert_eq!(eval(&ed, &e(op(ChildOf, c(id)))), children);
    assert_eq!(eval(&ed, &e(op(ParentOf, c(id)))), parents);
    assert_eq!(eval(&ed, &e(op(AncestorOf, c(id)))), ancestors);
    assert_eq!(
        eval(
            &ed,
            &minus(e(op(DescendantOrSelfOf, c(id))), e(op(DescendantOf, c(id))))
        ),
        vec![x]
    );

    // `*`: the root and its descendants.
    let root = ed.ordinal(ROOT).unwrap();
    let star = eval(&ed, &e(any()));
    assert_eq!(
        star,
        sorted([ed.descendants(root).unwrap().to_vec(), vec![root]].concat())
    );
    assert!(star.iter().all(|&o| ed.concept_at(o).unwrap().active));
    // With `active = false`, `*` is every concept.
    let mut inactive = any();
    inactive.filters = vec![Filter::Concept(
        vec![ConceptFilter::Active(
            txmap_ecl::Activity::Inactive,
            Span::default(),
        )],
        Span::default(),
    )];
    let expected: Vec<u32> = (0..n)
        .filter(|&o| !ed.concept_at(o).unwrap().active)
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(eval(&ed, &e(inactive)), expected);

    // Top and bottom of x's descendants-or-self: x, and the leaves.
    let below = nested(e(op(DescendantOrSelfOf, c(id))));
    assert_eq!(eval(&ed, &e(op(Top, below.clone()))), vec![x]);
    let leaves: Vec<u32> = sorted([desc.clone(), vec![x]].concat())
        .into_iter()
        .filter(|&o| ed.children(o).unwrap().is_empty())
        .collect();
    assert_eq!(eval(&ed, &e(op(Bottom, below))), leaves);

    // A refinement: the concepts with a relationship of the type and
    // target of one of some concept's attributes.
    let (subject, rel) = (0..n)
        .find_map(|o| ed.attributes(o).unwrap().first().map(|r| (o, *r)))
        .unwrap();
    let expected: Vec<u32> = (0..n)
        .filter(|&o| {
            ed.attributes(o)
                .unwrap()
                .iter()
                .any(|r| r.type_id == rel.type_id && r.target == rel.target)
        })
        .collect();
    let x = refined(any(), eq(rel.type_id, c(rel.target)));
    let got = eval(&ed, &x);
    assert!(got.contains(&subject));
    assert_eq!(got, expected);
    assert!(matches(&ed, &x, &Subject::Concept(subject), &Budget::default()).unwrap());
    // Dotted: the targets of that type from the subject.
    let targets = sorted(
        ed.attributes(subject)
            .unwrap()
            .iter()
            .filter(|r| r.type_id == rel.type_id)
            .map(|r| ed.ordinal(r.target).unwrap())
            .collect(),
    );
    let subject_id = ed.sctid(subject).unwrap();
    assert_eq!(
        eval(&ed, &dotted(c(subject_id), vec![c(rel.type_id)])),
        targets
    );

    // Members of a simple refset.
    let refset = ed
        .refsets()
        .find(|r| r.kind == txmap_store::RefsetKind::Simple && r.member_count > 0)
        .unwrap();
    let members = sorted(
        ed.members(refset.id)
            .unwrap()
            .iter()
            .filter_map(|m| ed.ordinal(m.component))
            .collect(),
    );
    assert_eq!(eval(&ed, &e(member_of(c(refset.id)))), members);
    assert!(eval(&ed, &e(member_of(c(ROOT)))).is_empty());

    // A field that holds text, not SCTIDs, cannot be a set of concepts.
    let (refset, field) = ed
        .refsets()
        .find_map(|r| {
            let names = r.field_names();
            let members = ed.members(r.id).unwrap();
            let text = members
                .first()?
                .field_values()
                .position(|v| !v.is_empty() && v.parse::<u64>().is_err())?;
            Some((r.id, names.get(text)?.clone()))
        })
        .unwrap();
    let x = parse(&format!("^ [{field}] {refset}")).unwrap();
    assert!(matches!(
        evaluate(&ed, &x, &Budget::default()),
        Err(EvalError::NotSupported { .. })
    ));
}

#[test]
fn errors_and_budget() {
    let dir = tempfile::tempdir().unwrap();
    let ed = synth(dir.path(), 400, 3);
    let mut missing = cref(999999999);
    missing.span = Span::new(3, 11);
    let x = or(vec![e(c(ROOT)), e(sub(txmap_ecl::Focus::Concept(missing)))]);
    let err = evaluate(&ed, &x, &Budget::default()).unwrap_err();
    assert!(matches!(
        err,
        EvalError::UnknownConcept { id: 999999999, .. }
    ));
    assert_eq!(err.to_string(), "unknown concept 999999999 at 3..11");
    let alt = e(sub(txmap_ecl::Focus::AlternateId {
        scheme: "LOINC".into(),
        id: "1-8".into(),
        span: Span::default(),
    }));
    assert!(matches!(
        evaluate(&ed, &alt, &Budget::default()),
        Err(EvalError::NotSupported { .. })
    ));
    let tight = Budget {
        deadline: None,
        max_work: 10,
    };
    let err = evaluate(&ed, &e(op(DescendantOrSelfOf, c(ROOT))), &tight).unwrap_err();
    assert!(matches!(err, EvalError::TooCostly { .. }), "{err}");
    let past = Budget {
        deadline: Some(std::time::Instant::now()),
        max_work: u64::MAX,
    };
    assert!(matches!(
        evaluate(&ed, &e(any()), &past),
        Err(EvalError::TooCostly { .. })
    ));
}

/// The active rows of the HL7 test edition's concept file, read as text.
fn active_in_rf2() -> usize {
    let dir = match std::env::var_os("TX_ECOSYSTEM_DIR") {
        Some(d) => std::path::PathBuf::from(d).join("tx-source/snomed/Terminology"),
        None => std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/tx-ecosystem/tx-source/snomed/Terminology"),
    };
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("sct2_Concept_Snapshot"))
        })
        .unwrap();
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| l.split('\t').nth(2) == Some("1"))
        .count()
}

#[test]
fn hl7_test_edition() {
    let dir = tempfile::tempdir().unwrap();
    let Some(ed) = hl7(dir.path()) else {
        return;
    };
    term_filters_agree(&ed);
    // Under a filter, `*` is every active concept, three of which (module
    // concepts with no is-a row) have no path to the root here: counted in
    // the release's concept file. Bare, it is the hierarchy, as the suite's
    // `*` expansion lists it.
    let rf2_active = active_in_rf2();
    let cases = [
        ("<< 10200004", 310),
        ("< 10200004", 309),
        ("<! 10200004", 4),
        (">! 10200004", 2),
        ("> 10200004", 19),
        ("*", 2251),
        ("* {{ C active = 1 }}", rf2_active),
        ("<< 64572001 MINUS << 128045006", 798),
        ("< 64572001 : 363698007 = << 10200004", 661),
        ("< 64572001 : [1..1] 363698007 = << 10200004", 573),
        ("< 64572001 : { [1..1] 363698007 = << 10200004 }", 661),
        (
            "< 64572001 : [1..1] { [1..1] 363698007 = << 10200004 }",
            573,
        ),
        ("< 64572001 : 363698007 = *", 708),
        ("< 64572001 : 116676008 = 20946005", 2),
        (
            "< 64572001 : { 363698007 = << 10200004, 116676008 = 20946005 }",
            0,
        ),
        ("< 64572001 . 363698007", 105),
        ("^ 900000000000526001", 1),
        ("^ 10200004", 0),
        ("<< 128045006 AND << 64572001", 1),
    ];
    let mut wrong = Vec::new();
    for (text, expected) in cases {
        let x = &parse(text).unwrap();
        let got = eval(&ed, x).len();
        eprintln!("{text}: {got} (expected {expected})");
        if got != expected {
            wrong.push(format!("{text}: {got}, expected {expected}"));
        }
        // matches agrees with evaluate (on a sample of concepts and on
        // every member).
        let set = eval(&ed, x);
        let sample = (0..ed.concept_count())
            .step_by(13)
            .chain(set.iter().copied());
        for o in sample {
            let m = matches(&ed, x, &Subject::Concept(o), &Budget::default()).unwrap();
            assert_eq!(m, set.binary_search(&o).is_ok(), "{text} on {o}");
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");

    // Post-coordinated expressions, as the suite's validate-code tests
    // expect.
    let o = |id: u64| ed.ordinal(id).unwrap();
    let expression = |focus: u64, group: u16, type_id: u64, value: u64| {
        Subject::Expression(ExpressionSubject {
            focus: vec![o(focus)],
            attributes: vec![SubjectAttribute {
                group,
                type_id,
                value: SubjectValue::Concept(o(value)),
            }],
        })
    };
    let holds = |text: &str, s: &Subject| {
        matches(&ed, &parse(text).unwrap(), s, &Budget::default()).unwrap()
    };
    // 64572001 : 363698007 = 10200004, then grouped, then another site.
    let disease_site = expression(64572001, 0, 363698007, 10200004);
    let grouped_site = expression(64572001, 1, 363698007, 10200004);
    let other_site = expression(64572001, 0, 363698007, 85562004);
    assert!(holds("< 64572001 : 363698007 = << 10200004", &disease_site));
    assert!(holds(
        "< 64572001 : [1..1] { [1..1] 363698007 = << 10200004 }",
        &grouped_site
    ));
    assert!(holds(
        "< 64572001 : { [1..1] 363698007 = << 10200004 }",
        &grouped_site
    ));
    assert!(!holds(
        "< 64572001 : { [1..1] 363698007 = << 10200004 }",
        &other_site
    ));
    let structure = expression(10200004, 0, 272741003, 24028007);
    for (text, expected) in [
        ("<! 10200004", false),
        ("<<! 10200004", false),
        ("> 10200004", false),
        ("<< 10200004", true),
        ("* MINUS << 10200004", false),
    ] {
        assert_eq!(holds(text, &structure), expected, "{text}");
    }
    let below = expression(11204002, 0, 272741003, 24028007);
    assert!(holds("< 10200004", &below));
    assert!(!holds("^ 900000000000526001", &disease_site));
    assert!(holds("*", &disease_site));
    assert!(!holds("64572001", &disease_site));

    // `^ [targetComponentId]`: the targets, read from the members.
    let replaced_by = 900000000000526001;
    let targets = sorted(
        ed.members(replaced_by)
            .unwrap()
            .iter()
            .filter_map(|m| m.field(0).and_then(|t| t.parse().ok()))
            .filter_map(|t| ed.ordinal(t))
            .collect(),
    );
    assert!(!targets.is_empty());
    let x = parse("^ [targetComponentId] 900000000000526001").unwrap();
    assert_eq!(eval(&ed, &x), targets);
    // History: the inactive concept replaced by a target comes back.
    let inactive = sorted(
        ed.members(replaced_by)
            .unwrap()
            .iter()
            .filter_map(|m| ed.ordinal(m.component))
            .filter(|&o| !ed.concept_at(o).unwrap().active)
            .collect(),
    );
    let target = ed.sctid(targets[0]).unwrap();
    let with_history = eval(
        &ed,
        &parse(&format!("{target} {{{{ + HISTORY-MOD }}}}")).unwrap(),
    );
    assert!(with_history.contains(&targets[0]));
    assert!(inactive.iter().any(|o| with_history.contains(o)));
    let same_as: Vec<u32> = ed
        .members(900000000000527005)
        .unwrap()
        .iter()
        .filter(|m| m.field(0) == Some(target.to_string().as_str()))
        .filter_map(|m| ed.ordinal(m.component))
        .filter(|&o| !ed.concept_at(o).unwrap().active)
        .collect();
    assert_eq!(
        eval(
            &ed,
            &parse(&format!("{target} {{{{ + HISTORY-MIN }}}}")).unwrap()
        ),
        sorted([same_as, vec![targets[0]]].concat())
    );
}

/// Term filters over big sets (narrowed through the word index) agree with
/// testing every concept of the focus one by one.
fn term_filters_agree(ed: &Ed) {
    let star = eval(ed, &e(any()));
    assert!(star.len() > 2_000, "the word index path needs a big set");
    let mut words: Vec<String> = star
        .iter()
        .step_by(401)
        .filter_map(|&o| ed.preferred_term(o).unwrap())
        .filter_map(|t| t.split_whitespace().next().map(str::to_owned))
        .collect();
    words.extend(["Hea", "bone STRUC", "zzzz", "(", "-"].map(String::from));
    for w in &words {
        let w = w.replace('"', "");
        for text in [
            format!("* {{{{ D term = \"{w}\" }}}}"),
            format!("* {{{{ term = (\"{w}\" \"zz\"), type = syn }}}}"),
            format!("* {{{{ D term = \"{w}\", active = false }}}}"),
        ] {
            let x = parse(&text).unwrap();
            let got = eval(ed, &x);
            let expected: Vec<u32> = (0..ed.concept_count())
                .filter(|&o| matches(ed, &x, &Subject::Concept(o), &Budget::default()).unwrap())
                .collect();
            assert_eq!(got, expected, "{text}");
        }
    }
}

/// Member filters `{{ M … }}` on every refset of a synthetic edition with
/// extra columns, against the members read through the store: strings
/// (`match` and `wild`), numbers, concepts (`=` and `!=`), the id columns,
/// and a field selection under a filter. Three times: with every column
/// coded (format 1.4), with dictionaries of two values (most members read
/// from their text, mixed with coded ones in one refset), and without the
/// columns (a format 1.3 file).
#[test]
fn member_filters_agree_with_the_members() {
    use txmap_store::SectionKind::*;
    let dir = tempfile::tempdir().unwrap();
    let rf2 = dir.path().join("rf2");
    txmap_synth::generate(&txmap_synth::SynthConfig::new(3500, 7), &rf2).unwrap();
    let coded = import(vec![rf2.clone()], &dir.path().join("coded.txmap"));
    assert!(coded.member_table(900000000000527005).unwrap().columns() > 0);
    check_member_filters(&coded);
    let small = import_with(vec![rf2], &dir.path().join("small.txmap"), |o| {
        o.member_dictionary_max = 2;
    });
    check_member_filters(&small);
    let old = without_sections(
        &coded,
        &[
            MemberColumns,
            MemberCodes,
            MemberDictionaryIndex,
            MemberDictionary,
        ],
        &dir.path().join("old.txmap"),
    );
    assert_eq!(old.member_table(900000000000527005).unwrap().columns(), 0);
    check_member_filters(&old);
}

fn check_member_filters(ed: &Ed) {
    use txmap_text::{fold, words};
    let components = |members: &[txmap_store::Member<'_>]| {
        sorted(
            members
                .iter()
                .filter_map(|m| ed.ordinal(m.component))
                .collect(),
        )
    };
    let subsumed = |x: u32, v: &str| {
        v.parse::<u64>()
            .ok()
            .and_then(|id| ed.ordinal(id))
            .is_some_and(|o| ed.subsumes(x, o).unwrap())
    };
    let mut checked = 0;
    for info in ed.refsets() {
        let names = info.field_names();
        let members = ed.members(info.id).unwrap();
        let Some(first) = members.first() else {
            continue;
        };
        let id = info.id;
        let run = |ecl: &str| eval(ed, &parse(ecl).unwrap());
        let keep = |f: &dyn Fn(&txmap_store::Member<'_>) -> bool| {
            let kept: Vec<_> = members.iter().copied().filter(|m| f(m)).collect();
            components(&kept)
        };

        // The referenced component, by hierarchy.
        let x = ed.ordinal(first.component).unwrap();
        let top = ed.ancestors(x).unwrap().iter().next().unwrap_or(x);
        let top_id = ed.sctid(top).unwrap();
        assert_eq!(
            run(&format!(
                "^ {id} {{{{ M referencedComponentId = << {top_id} }}}}"
            )),
            keep(&|m| subsumed(top, &m.component.to_string())),
        );
        assert_eq!(
            run(&format!("^ {id} {{{{ M refsetId = {id}, active = 1 }}}}")),
            components(&members)
        );

        for (i, name) in names.iter().enumerate() {
            let Some(value) = first.field(i).filter(|v| !v.is_empty()) else {
                continue;
            };
            let field = |m: &txmap_store::Member<'_>| m.field(i).unwrap_or("").to_owned();
            if let Some(o) = value.parse::<u64>().ok().and_then(|v| ed.ordinal(v)) {
                // A concept column: by hierarchy, equal and not equal.
                assert_eq!(
                    run(&format!("^ {id} {{{{ M {name} = << {value} }}}}")),
                    keep(&|m| subsumed(o, &field(m))),
                    "{id} {name}"
                );
                assert_eq!(
                    run(&format!("^ {id} {{{{ M {name} != << {value} }}}}")),
                    keep(&|m| !subsumed(o, &field(m))),
                    "{id} {name} !="
                );
                // The values of the column, for members referencing the
                // first member's concept's hierarchy.
                let expected = sorted(
                    members
                        .iter()
                        .filter(|m| subsumed(top, &m.component.to_string()))
                        .filter_map(|m| field(m).parse().ok().and_then(|v| ed.ordinal(v)))
                        .collect(),
                );
                assert_eq!(
                    run(&format!(
                        "^ [{name}] {id} {{{{ M referencedComponentId = << {top_id} }}}}"
                    )),
                    expected,
                    "{id} [{name}]"
                );
            } else if let Ok(n) = value.trim_start_matches('#').parse::<f64>() {
                assert_eq!(
                    run(&format!("^ {id} {{{{ M {name} >= #{n} }}}}")),
                    keep(&|m| field(m)
                        .trim_start_matches('#')
                        .parse::<f64>()
                        .is_ok_and(|x| x >= n)),
                    "{id} {name} >="
                );
            } else {
                // Text: every word of the value a prefix of a word of the
                // field (`match`), or a glob on the folded field (`wild`).
                let q = value.replace('"', "");
                let query: Vec<String> = words(&fold(&q)).map(str::to_owned).collect();
                assert_eq!(
                    run(&format!("^ {id} {{{{ M {name} = \"{q}\" }}}}")),
                    keep(&|m| {
                        let f = fold(&field(m));
                        query
                            .iter()
                            .all(|w| words(&f).any(|t| t.starts_with(w.as_str())))
                    }),
                    "{id} {name} match"
                );
                let Some(c) = fold(&q).chars().next().filter(|c| *c != '*') else {
                    continue;
                };
                assert_eq!(
                    run(&format!("^ {id} {{{{ M {name} = wild:\"{c}*\" }}}}")),
                    keep(&|m| fold(&field(m)).starts_with(c)),
                    "{id} {name} wild"
                );
            }
            checked += 1;
        }
    }
    eprintln!("member filters: {checked} columns checked");
    assert!(checked >= 3, "only {checked} columns checked");
}

/// The two counting rules of refinements, on rows added to a synthetic
/// release: a reverse attribute's cardinality counts the concepts the
/// relationships come from (not the relationships), and a group
/// constraint matches role groups only (group > 0), never ungrouped
/// relationships. Expected sets come from the RF2 rows as edited.
#[test]
fn reverse_cardinality_counts_concepts_and_groups_are_role_groups() {
    const IS_A: &str = "116680003";
    let dir = tempfile::tempdir().unwrap();
    let mut picked = None;
    let ed = synth_edited(dir.path(), 2500, 11, "sct2_Relationship_Snapshot", |rows| {
        let active = |r: &Vec<String>| r[2] == "1" && r[7] != IS_A;
        // A grouped attribute (source, target, group, type) …
        let grouped = rows
            .iter()
            .find(|r| active(r) && r[6] != "0")
            .cloned()
            .expect("a grouped attribute");
        let (source, target, ty) = (grouped[4].clone(), grouped[5].clone(), grouped[7].clone());
        // … repeated by its source in a new group: one more relationship,
        // no new concept.
        let top = rows
            .iter()
            .filter(|r| r[4] == source)
            .map(|r| r[6].parse::<u32>().unwrap())
            .max()
            .unwrap();
        let mut again = grouped.clone();
        again[0] = txmap_sctid::make(990_000_001, None, txmap_sctid::ComponentKind::Relationship)
            .to_string();
        again[6] = (top + 1).to_string();
        rows.push(again);
        // Another concept with the same attribute, ungrouped only.
        let other = rows
            .iter()
            .filter(|r| r[2] == "1" && r[4] != source)
            .map(|r| r[4].clone())
            .find(|c| {
                !rows
                    .iter()
                    .any(|r| &r[4] == c && r[7] == ty && r[5] == target && r[2] == "1")
            })
            .expect("another concept");
        let mut ungrouped = grouped.clone();
        ungrouped[0] =
            txmap_sctid::make(990_000_002, None, txmap_sctid::ComponentKind::Relationship)
                .to_string();
        ungrouped[4] = other.clone();
        ungrouped[6] = "0".to_string();
        rows.push(ungrouped);
        // The target's distinct sources and its relationships of `ty`.
        let inbound: Vec<&Vec<String>> = rows
            .iter()
            .filter(|r| r[2] == "1" && r[5] == target && r[7] == ty)
            .collect();
        let sources: BTreeSet<&String> = inbound.iter().map(|r| &r[4]).collect();
        picked = Some((
            source.clone(),
            target.clone(),
            ty.clone(),
            other,
            sources.len(),
            inbound.len(),
        ));
    });
    let (source, target, ty, other, concepts, relationships) = picked.unwrap();
    assert!(
        relationships > concepts,
        "the edit adds a repeated relationship"
    );
    let ord = |id: &str| ed.ordinal(id.parse().unwrap()).unwrap();
    let run = |text: &str| eval(&ed, &parse(text).unwrap());
    assert_eq!(
        run(&format!("{target} : [{concepts}..{concepts}] R {ty} = *")),
        vec![ord(&target)],
        "{concepts} concepts point at {target}"
    );
    assert_eq!(
        run(&format!("{target} : [{relationships}..*] R {ty} = *")),
        Vec::<u32>::new(),
        "relationships are not counted"
    );
    // The ungrouped attribute satisfies a plain attribute, not a group.
    assert_eq!(
        run(&format!("{other} : {ty} = {target}")),
        vec![ord(&other)]
    );
    assert_eq!(
        run(&format!("{other} : {{ {ty} = {target} }}")),
        Vec::<u32>::new()
    );
    assert_eq!(
        run(&format!("{other} : [0..0] {{ {ty} = {target} }}")),
        vec![ord(&other)]
    );
    // The grouped one does, in either of its groups.
    assert_eq!(
        run(&format!("{source} : [2..2] {{ {ty} = {target} }}")),
        vec![ord(&source)]
    );
    // Through the driven path too (a small value set, a big focus).
    let many = run(&format!("* : {{ {ty} = {target} }}"));
    assert!(many.contains(&ord(&source)) && !many.contains(&ord(&other)));
}

/// Inactive members and each member's module and effective time, against
/// the simple refset's RF2 rows as edited (a few members moved to another
/// module).
#[test]
fn inactive_members_and_member_metadata() {
    const OTHER_MODULE: &str = "900000000000012004";
    let dir = tempfile::tempdir().unwrap();
    let mut kept = Vec::new();
    let ed = synth_edited(dir.path(), 2500, 13, "der2_Refset_SimpleSnapshot", |rows| {
        for (i, r) in rows.iter_mut().enumerate() {
            if i % 4 == 0 {
                r[3] = OTHER_MODULE.to_string();
            }
        }
        kept = rows.clone();
    });
    // (refset, component, active, module, effectiveTime) of every row.
    type Row = (u64, u64, bool, String, u32);
    let rows: Vec<Row> = kept
        .iter()
        .map(|r| {
            (
                r[4].parse().unwrap(),
                r[5].parse().unwrap(),
                r[2] == "1",
                r[3].clone(),
                r[1].parse().unwrap(),
            )
        })
        .collect();
    let refset = rows[0].0;
    assert!(
        rows.iter().any(|r| !r.2),
        "the release has inactive members"
    );
    let expect = |f: &dyn Fn(&Row) -> bool| {
        sorted(
            rows.iter()
                .filter(|r| r.0 == refset && f(r))
                .filter_map(|r| ed.ordinal(r.1))
                .collect(),
        )
    };
    let run = |text: &str| eval(&ed, &parse(text).unwrap());
    assert_eq!(run(&format!("^ {refset}")), expect(&|r| r.2));
    // A simple refset's fields are its referenced components.
    assert_eq!(run(&format!("^ [*] {refset}")), expect(&|r| r.2));
    assert_eq!(
        run(&format!("^ {refset} {{{{ M active = 0 }}}}")),
        expect(&|r| !r.2)
    );
    assert_eq!(
        run(&format!("^ {refset} {{{{ M active = * }}}}")),
        expect(&|_| true)
    );
    assert_eq!(
        run(&format!("^ {refset} {{{{ M active != * }}}}")),
        Vec::<u32>::new()
    );
    assert_eq!(
        run(&format!("^ {refset} {{{{ M moduleId = {OTHER_MODULE} }}}}")),
        expect(&|r| r.2 && r.3 == OTHER_MODULE)
    );
    assert_eq!(
        run(&format!(
            "^ {refset} {{{{ M moduleId != {OTHER_MODULE}, active = 0 }}}}"
        )),
        expect(&|r| !r.2 && r.3 != OTHER_MODULE)
    );
    let mut times: Vec<u32> = rows.iter().filter(|r| r.0 == refset).map(|r| r.4).collect();
    times.sort_unstable();
    let mid = times[times.len() / 2];
    assert_eq!(
        run(&format!(
            "^ {refset} {{{{ M effectiveTime >= \"{mid}\" }}}}"
        )),
        expect(&|r| r.2 && r.4 >= mid)
    );
    assert_eq!(
        run(&format!(
            "^ {refset} {{{{ M effectiveTime < \"{mid}\", active = * }}}}"
        )),
        expect(&|r| r.4 < mid)
    );
    // `^ [moduleId]`: the modules of the members.
    let modules: Vec<u32> = sorted(
        rows.iter()
            .filter(|r| r.0 == refset && r.2)
            .filter_map(|r| ed.ordinal(r.3.parse().unwrap()))
            .collect(),
    );
    assert_eq!(run(&format!("^ [moduleId] {refset}")), modules);
    // `^R` over an inactive member finds the refset only when asked to.
    let gone = rows
        .iter()
        .find(|r| r.0 == refset && !r.2 && !rows.iter().any(|a| a.1 == r.1 && a.2))
        .expect("a concept only inactive in the refset");
    let refset_ord = ed.ordinal(refset).into_iter().collect::<Vec<_>>();
    assert!(!run(&format!("^R {}", gone.1)).contains(&refset_ord[0]));
    assert_eq!(
        run(&format!("^R {} {{{{ M active = 0 }}}}", gone.1)),
        refset_ord
    );
    let member = rows.iter().find(|r| r.0 == refset && r.2).unwrap();
    assert!(run(&format!("^R {}", member.1)).contains(&refset_ord[0]));
    // With member filters, through the index of memberships.
    assert!(run(&format!("^R {} {{{{ M active = 1 }}}}", member.1)).contains(&refset_ord[0]));
    let moved = rows
        .iter()
        .find(|r| r.0 == refset && r.2 && r.3 == OTHER_MODULE)
        .unwrap();
    let stayed = rows
        .iter()
        .find(|r| r.0 == refset && r.2 && r.3 != OTHER_MODULE)
        .unwrap();
    let with_module = |c: u64| {
        run(&format!("^R {c} {{{{ M moduleId = {OTHER_MODULE} }}}}")).contains(&refset_ord[0])
    };
    assert!(with_module(moved.1));
    assert_eq!(
        with_module(stayed.1),
        rows.iter()
            .any(|r| r.0 == refset && r.1 == stayed.1 && r.2 && r.3 == OTHER_MODULE)
    );
}

/// `scheme#code`: alternate identifiers from an Identifier file added to a
/// synthetic release, the scheme named by the first word of its concept's
/// term. Expected concepts are the file's rows as written: the latest row
/// of an identifier wins, inactive ones identify nothing.
#[test]
fn alternate_identifiers() {
    let dir = tempfile::tempdir().unwrap();
    let rf2 = dir.path().join("rf2");
    txmap_synth::generate(&txmap_synth::SynthConfig::new(2500, 17), &rf2).unwrap();
    let terminology = find(&rf2, "sct2_Concept_Snapshot")
        .unwrap()
        .parent()
        .unwrap()
        .to_owned();
    // A concept whose preferred term starts with a word of letters only:
    // the scheme, and that word its alias.
    let descriptions =
        std::fs::read_to_string(find(&rf2, "sct2_Description_Snapshot").unwrap()).unwrap();
    let (scheme, alias) = descriptions
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect::<Vec<_>>())
        .find_map(|d| {
            let word = d[7].split(' ').next()?;
            (d[2] == "1" && word.len() > 3 && word.chars().all(|c| c.is_ascii_alphabetic()))
                .then(|| (d[4].to_string(), word.to_string()))
        })
        .unwrap();
    let concepts: Vec<String> =
        std::fs::read_to_string(find(&rf2, "sct2_Concept_Snapshot").unwrap())
            .unwrap()
            .lines()
            .skip(1)
            .filter(|l| l.split('\t').nth(2) == Some("1"))
            .map(|l| l.split('\t').next().unwrap().to_string())
            .take(6)
            .collect();
    let (a, b, c, d) = (&concepts[2], &concepts[3], &concepts[4], &concepts[5]);
    let row = |text: &str, time: &str, active: &str, target: &str| {
        format!("{text}\t{time}\t{active}\t900000000000207008\t{scheme}\t{target}\r\n")
    };
    let file = "alternateIdentifier\teffectiveTime\tactive\tmoduleId\tidentifierSchemeId\treferencedComponentId\r\n"
        .to_string()
        + &row("54486-6", "20200131", "1", d)
        + &row("54486-6", "20230131", "1", a)
        + &row("1-8", "20230131", "1", b)
        + &row("99-9", "20230131", "0", c);
    std::fs::write(
        terminology.join("sct2_Identifier_Snapshot_INT_20250131.txt"),
        file,
    )
    .unwrap();
    let ed = import(vec![rf2], &dir.path().join("alt.txmap"));
    let ord = |id: &str| ed.ordinal(id.parse().unwrap()).unwrap();
    let run = |text: &str| evaluate(&ed, &parse(text).unwrap(), &Budget::default());
    assert_eq!(run(&format!("{alias}#54486-6")).unwrap(), vec![ord(a)]);
    assert_eq!(
        run(&format!("{}#\"54486-6\"", alias.to_uppercase())).unwrap(),
        vec![ord(a)]
    );
    assert_eq!(
        run(&format!("{alias}#54486-6 OR {alias}#1-8")).unwrap(),
        sorted(vec![ord(a), ord(b)])
    );
    assert_eq!(run(&format!("{alias}#99-9")).unwrap(), Vec::<u32>::new());
    assert_eq!(run(&format!("{alias}#nothing")).unwrap(), Vec::<u32>::new());
    let below = run(&format!("<< {alias}#54486-6")).unwrap();
    assert_eq!(below, run(&format!("<< {a}")).unwrap());
    assert!(matches!(
        run("Nosuchscheme#1"),
        Err(EvalError::NotSupported { .. })
    ));
    // Membership of one concept goes the same way.
    let x = parse(&format!("{alias}#1-8")).unwrap();
    assert!(matches(&ed, &x, &Subject::Concept(ord(b)), &Budget::default()).unwrap());
    assert!(!matches(&ed, &x, &Subject::Concept(ord(a)), &Budget::default()).unwrap());
}

/// `{{ D id = … }}` narrows a big set to the descriptions' concepts: the
/// answer is the concepts (in the set) the RF2 file says those
/// descriptions describe.
#[test]
fn description_id_filters() {
    let dir = tempfile::tempdir().unwrap();
    let ed = synth(dir.path(), 3000, 19);
    let rows: Vec<Vec<String>> = std::fs::read_to_string(
        find(&dir.path().join("rf2-3000-19"), "sct2_Description_Snapshot").unwrap(),
    )
    .unwrap()
    .lines()
    .skip(1)
    .map(|l| l.split('\t').map(str::to_owned).collect())
    .collect();
    let root = ed.ordinal(ROOT).unwrap();
    let in_hierarchy = |c: u32| c == root || ed.ancestors(c).unwrap().contains(root);
    let picked: Vec<&Vec<String>> = rows.iter().step_by(997).take(4).collect();
    let ids: Vec<&str> = picked.iter().map(|r| r[0].as_str()).collect();
    let expected = sorted(
        picked
            .iter()
            .filter_map(|r| ed.ordinal(r[4].parse().unwrap()))
            .filter(|&c| in_hierarchy(c))
            .collect(),
    );
    assert!(!expected.is_empty());
    let text = format!("* {{{{ D id = ({}), active = * }}}}", ids.join(" "));
    assert_eq!(eval(&ed, &parse(&text).unwrap()), expected);
    // `!=` keeps every concept with another description.
    let one = picked[0][0].as_str();
    let all = eval(&ed, &parse("*").unwrap());
    let not = eval(&ed, &parse(&format!("* {{{{ D id != {one} }}}}")).unwrap());
    assert!(not.len() > all.len() / 2 && not.len() <= all.len());
}

/// Under a filter, `*` is every active concept: a subset release can hold
/// a concept whose parents it lacks, and then that concept and what
/// descends from it have no path to the root, yet they are the edition's
/// concepts. A filter over `*` finds such a concept as the same filter on
/// the concept itself does. Expected counts are read from the RF2 files as
/// text.
#[test]
fn the_wildcard_holds_the_concepts_off_the_root() {
    let dir = tempfile::tempdir().unwrap();
    let rf2 = dir.path().join("rf2");
    txmap_synth::generate(&txmap_synth::SynthConfig::new(2000, 4), &rf2).unwrap();
    let file = |prefix: &str| find(&rf2, prefix).unwrap();
    // Cut one concept with children off its parents: drop its is-a rows.
    let relationships = file("sct2_Relationship_Snapshot");
    let text = std::fs::read_to_string(&relationships).unwrap();
    let is_a = |l: &&str| {
        let f: Vec<&str> = l.split('\t').collect();
        f.len() > 7 && f[2] == "1" && f[7] == "116680003"
    };
    // A concept that is a parent of some active concept and has parents.
    let parents: std::collections::HashSet<&str> = text
        .lines()
        .filter(is_a)
        .map(|l| l.split('\t').nth(5).unwrap())
        .collect();
    let cut = text
        .lines()
        .filter(is_a)
        .map(|l| l.split('\t').nth(4).unwrap())
        .find(|s| parents.contains(s) && *s != "138875005")
        .unwrap()
        .to_owned();
    let kept: String = text
        .lines()
        .filter(|l| !(is_a(l) && l.split('\t').nth(4) == Some(&cut[..])))
        .map(|l| format!("{l}\r\n"))
        .collect();
    std::fs::write(&relationships, kept).unwrap();
    let active_rows = std::fs::read_to_string(file("sct2_Concept_Snapshot"))
        .unwrap()
        .lines()
        .skip(1)
        .filter(|l| l.split('\t').nth(2) == Some("1"))
        .count();
    let ed = import(vec![rf2.clone()], &dir.path().join("cut.txmap"));
    let o = ed.ordinal(cut.parse().unwrap()).unwrap();
    assert!(
        !ed.in_hierarchy(o).unwrap(),
        "{cut} has no path to the root"
    );
    assert!(!ed.active_off_hierarchy().unwrap().is_empty());

    // Bare, `*` is the hierarchy; under a filter, every active concept.
    assert!(eval(&ed, &parse("*").unwrap()).binary_search(&o).is_err());
    let all = eval(&ed, &parse("* {{ C active = 1 }}").unwrap());
    assert_eq!(all.len(), active_rows);
    assert!(all.binary_search(&o).is_ok());
    // Asking for inactive concepts makes `*` every concept.
    let inactive = eval(&ed, &parse("* {{ C active = 0 }}").unwrap());
    assert_eq!(inactive.len() + active_rows, ed.concept_count() as usize);
    // A filter over `*` finds the concept as the filter on it does.
    let module = ed.concept_facts(o).unwrap().module_ord;
    let module = ed.sctid(module).unwrap();
    let time = ed.concept_facts(o).unwrap().effective_time;
    for filter in [
        "{{ C active = 1 }}".to_owned(),
        "{{ C definitionStatus = primitive }}".to_owned(),
        format!("{{{{ C moduleId = {module} }}}}"),
        format!("{{{{ C moduleId != {module} }}}}"),
        format!("{{{{ C effectiveTime = \"{time}\" }}}}"),
        format!("{{{{ C effectiveTime < \"{time}\" }}}}"),
    ] {
        let over_all = eval(&ed, &parse(&format!("* {filter}")).unwrap());
        let on_it = eval(&ed, &parse(&format!("{cut} {filter}")).unwrap());
        assert_eq!(
            over_all.binary_search(&o).is_ok(),
            !on_it.is_empty(),
            "{filter}"
        );
        // and matches agrees with evaluate there.
        let m = matches(
            &ed,
            &parse(&format!("* {filter}")).unwrap(),
            &Subject::Concept(o),
            &Budget::default(),
        )
        .unwrap();
        assert_eq!(m, !on_it.is_empty(), "{filter}");
    }
    // `<< X` of a concept off the root is its own subtree, in `*` too.
    let below = eval(&ed, &parse(&format!("<< {cut}")).unwrap());
    assert!(below.len() > 1);
    assert!(below.iter().all(|b| all.binary_search(b).is_ok()));
}
