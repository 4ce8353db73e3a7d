//! Synthetic LOINC releases: the folder layout and CSV files of a real
//! release (the columns txmap reads, quoted as LOINC quotes them), with
//! made-up content of any size, deterministic for a given size. The tests
//! compile them and check the answers against the CSV read back on its
//! own; the benchmarks compile a LOINC-sized one (`terms = 105_000`: the
//! 2.8x releases' term count, with parts, lists, hierarchy and two
//! linguistic variants in proportion).

use std::fs;
use std::io::{BufWriter, Write};
use std::path::Path;

/// The shape of a synthetic release.
#[derive(Clone, Copy, Debug)]
pub struct Shape {
    pub terms: u32,
}

impl Shape {
    /// A release about the size of LOINC 2.8x.
    pub const LOINC_SCALE: Shape = Shape { terms: 105_000 };
}

const SCALES: [&str; 5] = ["Qn", "Ord", "Nom", "Doc", "Nar"];
const PROPERTIES: [&str; 8] = [
    "MCnc", "SCnc", "PrThr", "Find", "ACnc", "NCnc", "Type", "Prid",
];
const TIMES: [&str; 3] = ["Pt", "24H", "XXX"];
const CLASSES: [&str; 8] = [
    "CHEM",
    "HEM/BC",
    "MICRO",
    "SURVEY.PNDS",
    "PANEL.HL7.CYTOGEN",
    "DRUG/TOX",
    "UA",
    "CLIN",
];
const STEMS: [&str; 12] = [
    "Glucose",
    "Sodium",
    "Potassium",
    "Bacteria",
    "Hemoglobin",
    "Cortisol",
    "Urea nitrogen",
    "Creatinine",
    "Albumin",
    "Ferritin",
    "Lactate",
    "Troponin",
];
const SYSTEMS: [&str; 6] = ["Bld", "Ser/Plas", "Urine", "CSF", "^Patient", "Synv fld"];

/// A term's code: `n-d`, with LOINC's mod-10 check digit.
pub fn term_code(n: u32) -> String {
    format!("{}-{}", 10_000 + n, check_digit(10_000 + n))
}

/// LOINC's check digit of a number (the Luhn scheme LOINC uses).
pub fn check_digit(n: u32) -> u32 {
    let digits: Vec<u32> = n.to_string().bytes().map(|b| u32::from(b - b'0')).collect();
    let mut sum = 0;
    for (i, &d) in digits.iter().rev().enumerate() {
        if i % 2 == 0 {
            let x = d * 2;
            sum += x / 10 + x % 10;
        } else {
            sum += d;
        }
    }
    (10 - sum % 10) % 10
}

fn part_code(kind: u32, n: u32) -> String {
    let x = 100_000 + kind * 100_000 + n;
    format!("LP{x}-{}", check_digit(x))
}

fn list_code(n: u32) -> String {
    format!("LL{}-{}", 1000 + n, check_digit(1000 + n))
}

fn answer_code(n: u32) -> String {
    format!("LA{}-{}", 1000 + n, check_digit(1000 + n))
}

fn status(n: u32) -> &'static str {
    match n % 100 {
        7 | 57 => "DEPRECATED",
        13 => "DISCOURAGED",
        29 => "TRIAL",
        _ => "ACTIVE",
    }
}

/// Writes a release of `shape` into `dir` (made if absent), as
/// `dir/LoincTable/Loinc.csv` and `dir/AccessoryFiles/...`.
pub fn write_release(dir: &Path, shape: Shape) -> std::io::Result<()> {
    let table = dir.join("LoincTable");
    let acc = dir.join("AccessoryFiles");
    for d in [
        table.clone(),
        acc.join("PartFile"),
        acc.join("AnswerFile"),
        acc.join("ComponentHierarchyBySystem"),
        acc.join("ConsumerName"),
        acc.join("LinguisticVariants"),
    ] {
        fs::create_dir_all(d)?;
    }
    let n = shape.terms.max(1);
    let components = (n / 8).max(1);
    let methods = 30u32;
    let lists = (n / 40).max(1);
    let answers = (n / 10).max(2);
    let component = |t: u32| t % components;
    let component_name = |c: u32| format!("{} {}", STEMS[(c % 12) as usize], c / 12);
    let method = |t: u32| t.is_multiple_of(3).then_some(t % methods);
    let class = |t: u32| CLASSES[(component(t) % 8) as usize];

    // Parts: kinds 0 component, 1 property, 2 time, 3 system, 4 scale,
    // 5 method, 6 class.
    let mut parts = Csv::create(&acc.join("PartFile/Part.csv"))?;
    parts.row(&[
        "PartNumber",
        "PartTypeName",
        "PartName",
        "PartDisplayName",
        "Status",
    ])?;
    for c in 0..components {
        let name = component_name(c);
        parts.row(&[&part_code(0, c), "COMPONENT", &name, &name, "ACTIVE"])?;
    }
    let fixed: [(u32, &str, &[&str]); 5] = [
        (1, "PROPERTY", &PROPERTIES),
        (2, "TIME", &TIMES),
        (3, "SYSTEM", &SYSTEMS),
        (4, "SCALE", &SCALES),
        (6, "CLASS", &CLASSES),
    ];
    for (kind, type_name, names) in fixed {
        for (i, name) in names.iter().enumerate() {
            parts.row(&[&part_code(kind, i as u32), type_name, name, name, "ACTIVE"])?;
        }
    }
    for m in 0..methods {
        let name = format!("Method {m}");
        parts.row(&[&part_code(5, m), "METHOD", &name, &name, "ACTIVE"])?;
    }
    parts.finish()?;

    let mut loinc = Csv::create(&table.join("Loinc.csv"))?;
    loinc.row(&[
        "LOINC_NUM",
        "COMPONENT",
        "PROPERTY",
        "TIME_ASPCT",
        "SYSTEM",
        "SCALE_TYP",
        "METHOD_TYP",
        "CLASS",
        "VersionLastChanged",
        "DefinitionDescription",
        "STATUS",
        "CLASSTYPE",
        "RELATEDNAMES2",
        "SHORTNAME",
        "ORDER_OBS",
        "EXTERNAL_COPYRIGHT_NOTICE",
        "EXAMPLE_UNITS",
        "LONG_COMMON_NAME",
        "EXAMPLE_UCUM_UNITS",
    ])?;
    let mut links = Csv::create(&acc.join("PartFile/LoincPartLink_Primary.csv"))?;
    links.row(&[
        "LoincNumber",
        "LongCommonName",
        "PartNumber",
        "PartName",
        "PartCodeSystem",
        "PartTypeName",
        "LinkTypeName",
        "Property",
    ])?;
    for t in 0..n {
        let code = term_code(t);
        let comp = component_name(component(t));
        let prop = PROPERTIES[(t % 8) as usize];
        let time = TIMES[(t % 3) as usize];
        let sys = SYSTEMS[(t % 6) as usize];
        let scale = SCALES[(t % 5) as usize];
        let meth = method(t).map(|m| format!("Method {m}")).unwrap_or_default();
        let long = format!("{comp} [{prop}] in {sys} by \"{scale}\" #{t}");
        let short = format!("{comp} {sys}-{prop}");
        let copyright = if t.is_multiple_of(50) {
            "Copyright by a third party"
        } else {
            ""
        };
        let order = ["Observation", "Order", "Both", ""][(t % 4) as usize];
        loinc.row(&[
            &code,
            &comp,
            prop,
            time,
            sys,
            scale,
            &meth,
            class(t),
            "2.80",
            "",
            status(t),
            &(1 + t % 4).to_string(),
            &format!("{comp}; {sys}; Level"),
            &short,
            order,
            copyright,
            "mg/dL",
            &long,
            "mg/dL",
        ])?;
        let mut link = |part: String, name: &str, kind: &str, property: &str| {
            links.row(&[
                &code,
                &long,
                &part,
                name,
                "http://loinc.org",
                kind,
                "Primary",
                &format!("http://loinc.org/property/{property}"),
            ])
        };
        link(part_code(0, component(t)), &comp, "COMPONENT", "COMPONENT")?;
        link(part_code(1, t % 8), prop, "PROPERTY", "PROPERTY")?;
        link(part_code(2, t % 3), time, "TIME", "TIME_ASPCT")?;
        link(part_code(3, t % 6), sys, "SYSTEM", "SYSTEM")?;
        link(part_code(4, t % 5), scale, "SCALE", "SCALE_TYP")?;
        if let Some(m) = method(t) {
            link(part_code(5, m), &meth, "METHOD", "METHOD_TYP")?;
        }
    }
    loinc.finish()?;
    links.finish()?;

    // Answer lists: list l holds 2–7 answers from a pool; every fifth
    // term has a list.
    let mut al = Csv::create(&acc.join("AnswerFile/AnswerList.csv"))?;
    al.row(&[
        "AnswerListId",
        "AnswerListName",
        "AnswerListOID",
        "ExtDefinedYN",
        "AnswerStringId",
        "SequenceNumber",
        "DisplayText",
    ])?;
    for l in 0..lists {
        let size = 2 + l % 6;
        for s in 0..size {
            let a = (l * 7 + s * 3) % answers;
            al.row(&[
                &list_code(l),
                &format!("List {l}"),
                "",
                "N",
                &answer_code(a),
                &(s + 1).to_string(),
                &format!("Answer {a}"),
            ])?;
        }
    }
    al.finish()?;
    let mut all = Csv::create(&acc.join("AnswerFile/LoincAnswerListLink.csv"))?;
    all.row(&[
        "LoincNumber",
        "LongCommonName",
        "AnswerListId",
        "AnswerListName",
        "AnswerListLinkType",
    ])?;
    for t in (0..n).step_by(5) {
        let l = t / 5 % lists;
        all.row(&[
            &term_code(t),
            "",
            &list_code(l),
            &format!("List {l}"),
            "NORMATIVE",
        ])?;
    }
    all.finish()?;

    // The hierarchy: a root, the classes, the components, the terms.
    let mut h =
        Csv::create(&acc.join("ComponentHierarchyBySystem/ComponentHierarchyBySystem.csv"))?;
    h.row(&[
        "PATH_TO_ROOT",
        "SEQUENCE",
        "IMMEDIATE_PARENT",
        "CODE",
        "CODE_TEXT",
    ])?;
    let root = part_code(7, 0);
    h.row(&["", "1", "", &root, "{component}"])?;
    for (i, c) in CLASSES.iter().enumerate() {
        h.row(&[
            &root,
            &(i + 1).to_string(),
            &root,
            &part_code(6, i as u32),
            c,
        ])?;
    }
    for c in 0..components {
        let cls = part_code(6, c % 8);
        h.row(&["", "1", &cls, &part_code(0, c), &component_name(c)])?;
    }
    for t in 0..n {
        let comp = part_code(0, component(t));
        h.row(&["", "1", &comp, &term_code(t), ""])?;
    }
    h.finish()?;

    let mut cn = Csv::create(&acc.join("ConsumerName/ConsumerName.csv"))?;
    cn.row(&["LoincNumber", "ConsumerName"])?;
    for t in (0..n).step_by(3) {
        cn.row(&[
            &term_code(t),
            &format!("{}, consumer {t}", STEMS[(t % 12) as usize]),
        ])?;
    }
    cn.finish()?;

    let lv = acc.join("LinguisticVariants");
    let mut index = Csv::create(&lv.join("LinguisticVariants.csv"))?;
    index.row(&[
        "ID",
        "ISO_LANGUAGE",
        "ISO_COUNTRY",
        "LANGUAGE_NAME",
        "PRODUCER",
    ])?;
    for (id, lang, country, word) in [(15, "de", "DE", "Wert"), (18, "fr", "FR", "Valeur")] {
        index.row(&[&id.to_string(), lang, country, lang, "synthetic"])?;
        let mut v = Csv::create(&lv.join(format!("{lang}{country}{id}LinguisticVariant.csv")))?;
        v.row(&[
            "LOINC_NUM",
            "COMPONENT",
            "PROPERTY",
            "TIME_ASPCT",
            "SYSTEM",
            "SCALE_TYP",
            "METHOD_TYP",
            "CLASS",
            "SHORTNAME",
            "LONG_COMMON_NAME",
            "RELATEDNAMES2",
            "LinguisticVariantDisplayName",
        ])?;
        for t in (0..n).step_by(2) {
            v.row(&[
                &term_code(t),
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                &format!("{word} {t} ({lang})"),
                "",
                "",
            ])?;
        }
        v.finish()?;
    }
    index.finish()
}

/// A CSV file written as LOINC writes them: every field quoted, quotes
/// doubled, CRLF line ends.
struct Csv(BufWriter<fs::File>);

impl Csv {
    fn create(path: &Path) -> std::io::Result<Csv> {
        Ok(Csv(BufWriter::with_capacity(
            1 << 16,
            fs::File::create(path)?,
        )))
    }

    fn row(&mut self, fields: &[&str]) -> std::io::Result<()> {
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                self.0.write_all(b",")?;
            }
            write!(self.0, "\"{}\"", f.replace('"', "\"\""))?;
        }
        self.0.write_all(b"\r\n")
    }

    fn finish(mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

/// Writes a synthetic RxNorm release of about `ingredients` × 5 RxNorm
/// concepts into `dir/rrf`: ingredients (`IN`), brand names (`BN`),
/// clinical and branded drugs (`SCD`, `SBD`) with synonyms (`SY`) and
/// prescribable names (`PSN`), atoms of another source (`MMSL`), some
/// concepts only that source has, suppressed atoms, relationships
/// (`has_ingredient`, `tradename_of`), semantic types and the `RXNSAB.RRF`
/// row that dates the release (`20AA_250804F`).
pub fn write_rxnorm(dir: &Path, ingredients: u32) -> std::io::Result<()> {
    let rrf = dir.join("rrf");
    fs::create_dir_all(&rrf)?;
    let mut conso = BufWriter::new(fs::File::create(rrf.join("RXNCONSO.RRF"))?);
    let mut rel = BufWriter::new(fs::File::create(rrf.join("RXNREL.RRF"))?);
    let mut sty = BufWriter::new(fs::File::create(rrf.join("RXNSTY.RRF"))?);
    let mut aui = 1_000_000u32;
    let mut atom = |w: &mut BufWriter<fs::File>,
                    cui: u32,
                    sab: &str,
                    tty: &str,
                    text: &str,
                    suppress: &str| {
        aui += 1;
        writeln!(
            w,
            "{cui}|ENG||||||{aui}|||{cui}|{sab}|{tty}|{cui}|{text}|0|{suppress}|4096|"
        )
    };
    let mut rel_id = 0u32;
    let mut link = |w: &mut BufWriter<fs::File>, cui1: u32, rela: &str, cui2: u32| {
        rel_id += 1;
        writeln!(
            w,
            "{cui1}||CUI|RO|{cui2}||CUI|{rela}|{rel_id}|RXNORM||||N||"
        )
    };
    let n = ingredients.max(1);
    for i in 0..n {
        let (ing, brand, scd, sbd, other) = (
            100_000 + i * 10,
            100_001 + i * 10,
            100_002 + i * 10,
            100_003 + i * 10,
            100_004 + i * 10,
        );
        let name = format!("{} {i}", STEMS[(i % 12) as usize].to_lowercase());
        // Every 17th ingredient's only RxNorm atom is suppressed.
        let suppress = if i % 17 == 5 { "O" } else { "N" };
        atom(&mut conso, ing, "RXNORM", "IN", &name, suppress)?;
        atom(&mut conso, ing, "MMSL", "IN", &name.to_uppercase(), "N")?;
        atom(&mut conso, brand, "RXNORM", "BN", &format!("Brand{i}"), "N")?;
        // A synonym first, so the display must not be the first atom.
        atom(
            &mut conso,
            scd,
            "RXNORM",
            "SY",
            &format!("{name} tablet (synonym)"),
            "N",
        )?;
        atom(
            &mut conso,
            scd,
            "RXNORM",
            "SCD",
            &format!("{name} 10 MG Oral Tablet"),
            "N",
        )?;
        atom(
            &mut conso,
            scd,
            "RXNORM",
            "PSN",
            &format!("{name} 10mg tablet"),
            "N",
        )?;
        atom(
            &mut conso,
            sbd,
            "RXNORM",
            "SBD",
            &format!("{name} 10 MG Oral Tablet [Brand{i}]"),
            "N",
        )?;
        atom(
            &mut conso,
            other,
            "MMSL",
            "CD",
            &format!("{name} other source"),
            "N",
        )?;
        link(&mut rel, ing, "ingredient_of", scd)?;
        link(&mut rel, scd, "has_ingredient", ing)?;
        link(&mut rel, ing, "has_tradename", brand)?;
        link(&mut rel, brand, "tradename_of", ing)?;
        link(&mut rel, other, "has_ingredient", ing)?;
        writeln!(sty, "{ing}|T121|A1.4.1.1.1|Pharmacologic Substance||4096|")?;
        writeln!(sty, "{scd}|T200|A1.3.3|Clinical Drug||4096|")?;
    }
    conso.flush()?;
    rel.flush()?;
    sty.flush()?;
    fs::write(
        rrf.join("RXNSAB.RRF"),
        "C1|C2|RXNORM_20AA_250804F|RXNORM|RxNorm work done by the National Library of Medicine|RXNORM|20AA_250804F|||2025AA||||0||||||ENG|UTF-8|Y|Y|RXNORM||\n",
    )
}
