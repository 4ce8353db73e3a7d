//! What the integration tests share: editions (synthetic, and the HL7 test
//! edition when present) and small constructors for syntax trees.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use txmap_ecl::{
    Attribute, Cardinality, Comparison, ConceptRef, Expr, Focus, Group, MemberOf, Operator,
    Refinement, Span, SubExpr,
};
use txmap_store::Edition;

pub type Ed = Edition<Vec<u8>>;

/// Imports a synthetic edition of `concepts` rows into `dir`.
pub fn synth(dir: &Path, concepts: usize, seed: u64) -> Ed {
    let rf2 = dir.join(format!("rf2-{concepts}-{seed}"));
    txmap_synth::generate(&txmap_synth::SynthConfig::new(concepts, seed), &rf2).unwrap();
    import(
        vec![rf2],
        &dir.join(format!("synth-{concepts}-{seed}.txmap")),
    )
}

pub fn import(sources: Vec<PathBuf>, file: &Path) -> Ed {
    import_with(sources, file, |_| {})
}

/// [`import`] with options changed by `edit`.
pub fn import_with(
    sources: Vec<PathBuf>,
    file: &Path,
    edit: impl FnOnce(&mut txmap_import::ImportOptions),
) -> Ed {
    let mut options = txmap_import::ImportOptions::new(sources, file.to_owned());
    edit(&mut options);
    txmap_import::import(&options, &txmap_import::Quiet).unwrap();
    Edition::open(std::fs::read(file).unwrap()).unwrap()
}

/// A copy of `ed` without the `kind` section, as an edition file written
/// before that section existed would be.
pub fn without_sections(ed: &Ed, kinds: &[txmap_store::SectionKind], file: &Path) -> Ed {
    let c = txmap_format::Container::open(ed.bytes()).unwrap();
    let mut w = txmap_format::FileWriter::create(file).unwrap();
    for e in c.entries() {
        let k = txmap_store::SectionKind::from_code(e.kind.get()).unwrap();
        if !kinds.contains(&k) {
            w.add_section(k, c.section(k).unwrap(), e.count.get())
                .unwrap();
        }
    }
    w.finish(c.metadata()).unwrap();
    Edition::open(std::fs::read(file).unwrap()).unwrap()
}

/// The HL7 SNOMED CT test edition, imported into `dir`, if its RF2 is on
/// this machine.
pub fn hl7(dir: &Path) -> Option<Ed> {
    let rf2 = match std::env::var_os("TX_ECOSYSTEM_DIR") {
        Some(d) => PathBuf::from(d).join("tx-source/snomed"),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/tx-ecosystem/tx-source/snomed"),
    };
    if !rf2.is_dir() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "{} is missing under CI",
            rf2.display()
        );
        eprintln!(
            "{}: absent, skipping the HL7 test edition checks",
            rf2.display()
        );
        return None;
    }
    Some(import(vec![rf2], &dir.join("hl7.txmap")))
}

// ----- syntax tree constructors ---------------------------------------------

pub fn sub(focus: Focus) -> SubExpr {
    SubExpr {
        operator: None,
        member_of: None,
        focus,
        member_filters: Vec::new(),
        filters: Vec::new(),
        history: None,
        span: Span::default(),
    }
}

pub fn cref(id: u64) -> ConceptRef {
    ConceptRef {
        id,
        term: None,
        span: Span::default(),
    }
}

/// `id`
pub fn c(id: u64) -> SubExpr {
    sub(Focus::Concept(cref(id)))
}

/// `*`
pub fn any() -> SubExpr {
    sub(Focus::Any(Span::default()))
}

/// `( e )`
pub fn nested(e: Expr) -> SubExpr {
    sub(Focus::Nested(Box::new(e)))
}

/// `op s`
pub fn op(op: Operator, mut s: SubExpr) -> SubExpr {
    s.operator = Some(op);
    s
}

/// `^ s`
pub fn member_of(mut s: SubExpr) -> SubExpr {
    s.member_of = Some(MemberOf::Components);
    s
}

pub fn e(s: SubExpr) -> Expr {
    Expr::Sub(s)
}

pub fn and(xs: Vec<Expr>) -> Expr {
    Expr::And(xs, Span::default())
}

pub fn or(xs: Vec<Expr>) -> Expr {
    Expr::Or(xs, Span::default())
}

pub fn minus(a: Expr, b: Expr) -> Expr {
    Expr::Minus(Box::new(a), Box::new(b), Span::default())
}

pub fn refined(s: SubExpr, r: Refinement) -> Expr {
    Expr::Refined(Box::new(s), Box::new(r), Span::default())
}

pub fn dotted(s: SubExpr, attrs: Vec<SubExpr>) -> Expr {
    Expr::Dotted(Box::new(s), attrs, Span::default())
}

pub fn card(min: u32, max: Option<u32>) -> Option<Cardinality> {
    Some(Cardinality { min, max })
}

/// `[card] name = value` (or `!=`, or reversed).
pub fn attr(
    cardinality: Option<Cardinality>,
    reverse: bool,
    name: SubExpr,
    equal: bool,
    value: SubExpr,
) -> Refinement {
    Refinement::Attribute(Box::new(Attribute {
        cardinality,
        reverse,
        name,
        comparison: Comparison::Concept { equal, value },
        span: Span::default(),
    }))
}

/// `name = value`
pub fn eq(name: u64, value: SubExpr) -> Refinement {
    attr(None, false, c(name), true, value)
}

/// `[card] { inner }`
pub fn group(cardinality: Option<Cardinality>, inner: Refinement) -> Refinement {
    Refinement::Group(Group {
        cardinality,
        attributes: Box::new(inner),
        span: Span::default(),
    })
}

pub use Operator::*;

/// A synthetic release in `dir`, with `edit` given the rows (RF2 columns,
/// header dropped) of its file whose name starts with `prefix`, to change
/// before import.
pub fn synth_edited(
    dir: &Path,
    concepts: usize,
    seed: u64,
    prefix: &str,
    edit: impl FnOnce(&mut Vec<Vec<String>>),
) -> Ed {
    let rf2 = dir.join(format!("rf2-edited-{concepts}-{seed}"));
    txmap_synth::generate(&txmap_synth::SynthConfig::new(concepts, seed), &rf2).unwrap();
    let file = find(&rf2, prefix).expect("the file to edit");
    let text = std::fs::read_to_string(&file).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    let mut rows: Vec<Vec<String>> = lines
        .map(|l| l.split('\t').map(str::to_owned).collect())
        .collect();
    edit(&mut rows);
    let mut out = header + "\r\n";
    for r in &rows {
        out.push_str(&r.join("\t"));
        out.push_str("\r\n");
    }
    std::fs::write(&file, out).unwrap();
    import(
        vec![rf2],
        &dir.join(format!("edited-{concepts}-{seed}.txmap")),
    )
}

/// The first file under `dir` whose name starts with `prefix`.
pub fn find(dir: &Path, prefix: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()? {
        let p = e.ok()?.path();
        if p.is_dir() {
            if let Some(f) = find(&p, prefix) {
                return Some(f);
            }
        } else if p.file_name()?.to_str()?.starts_with(prefix) {
            return Some(p);
        }
    }
    None
}
