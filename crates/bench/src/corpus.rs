//! A traffic corpus: requests drawn from one or more editions with a
//! realistic mix and skew, saved one per line so a run can be replayed
//! exactly ([`crate::load`]) (issue 8).
//!
//! What is drawn, deterministically from the seed:
//!
//! - **the edition**: with one edition, all of it; with two, 64% and 36%;
//!   with more, the first two ("hot") take 97% of the calls (62% and 35%)
//!   and the others share the remaining 3% ([`edition_weights`]). The first edition given is the default one (as
//!   `txmap serve` makes the first loaded edition the default): most of its
//!   calls ([`UNVERSIONED`]) name no version, the others' always do
//!   (`version=` for CodeSystem and ConceptMap operations, an edition
//!   version URI before `?fhir_vs` for value sets);
//! - **the shape** of the call, by [`MIX`]: `$validate-code` 60%, `$lookup`
//!   15%, `$expand` 15%, `$subsumes` 5%, `$translate` 5%. Shapes are named
//!   after tx-benchmark's where they match ([`Shape`]);
//! - **the concepts**: [`HOT_SET`] active concepts per edition, picked
//!   uniformly, then drawn by rank with a Zipf law of exponent 1 ([`Zipf`]),
//!   so a few concepts take much of the traffic, as in real use.
//!
//! A line is a JSON object: `op` (the shape), `edition` (the version URI
//! the call is meant for; `null` when it is unversioned), `method`, `path`
//! (with its query) and `body` (`null`, or the JSON a POST sends).

use serde_json::{Value, json};
use txmap_store::Edition;
use txmap_store::sctid::association::REPLACED_BY;

use crate::BenchError;
use crate::pools::{ISA_MAX, ISA_MIN, Rng, SNOMED, encode};

/// Active concepts per edition that calls are drawn from, by Zipf rank.
pub const HOT_SET: usize = 4096;

/// Share of the default edition's calls that name no version.
pub const UNVERSIONED: f64 = 0.8;

/// A kind of call. The codes are tx-benchmark's where the call is the same
/// (`VCCS`, `CodeSystem/$validate-code`, has no tx-benchmark twin).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    /// `CodeSystem/$lookup` of a concept.
    Lk01,
    /// `CodeSystem/$lookup` of a code the edition does not have (404).
    Lk05,
    /// `ValueSet/$validate-code` against all of SNOMED CT (`?fhir_vs`).
    Vc01,
    /// `ValueSet/$validate-code` against an is-a value set, half members.
    Vc03,
    /// `CodeSystem/$validate-code`.
    Vccs,
    /// `CodeSystem/$subsumes`: half related pairs, half random pairs.
    Ss01,
    /// `ValueSet/$expand` of an is-a value set, 20 at a random offset.
    Ex01,
    /// `ValueSet/$expand` of all of SNOMED CT with a text filter, count
    /// 20–100.
    Ex03,
    /// `ValueSet/$expand` of an ECL value set (`fhir_vs=ecl/`), count 20.
    Ex05,
    /// `ValueSet/$expand` (POST) of a composed value set: is-a, an
    /// attribute filter and a text filter, count 20.
    Ex08,
    /// `ConceptMap/$translate` of an inactive concept by REPLACED BY.
    Cm01,
}

impl Shape {
    pub const ALL: [Shape; 11] = [
        Shape::Lk01,
        Shape::Lk05,
        Shape::Vc01,
        Shape::Vc03,
        Shape::Vccs,
        Shape::Ss01,
        Shape::Ex01,
        Shape::Ex03,
        Shape::Ex05,
        Shape::Ex08,
        Shape::Cm01,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Shape::Lk01 => "LK01",
            Shape::Lk05 => "LK05",
            Shape::Vc01 => "VC01",
            Shape::Vc03 => "VC03",
            Shape::Vccs => "VCCS",
            Shape::Ss01 => "SS01",
            Shape::Ex01 => "EX01",
            Shape::Ex03 => "EX03",
            Shape::Ex05 => "EX05",
            Shape::Ex08 => "EX08",
            Shape::Cm01 => "CM01",
        }
    }

    /// What the call is, for tables.
    pub fn describe(self) -> &'static str {
        match self {
            Shape::Lk01 => "$lookup",
            Shape::Lk05 => "$lookup, unknown code",
            Shape::Vc01 => "VS $validate-code, all SNOMED CT",
            Shape::Vc03 => "VS $validate-code, is-a",
            Shape::Vccs => "CS $validate-code",
            Shape::Ss01 => "$subsumes",
            Shape::Ex01 => "$expand is-a, paged",
            Shape::Ex03 => "$expand text filter",
            Shape::Ex05 => "$expand ECL",
            Shape::Ex08 => "$expand is-a + property + text (POST)",
            Shape::Cm01 => "$translate REPLACED BY",
        }
    }

    pub fn from_name(name: &str) -> Option<Shape> {
        Shape::ALL
            .into_iter()
            .find(|s| s.name().eq_ignore_ascii_case(name))
    }
}

/// The realistic mix, in percent (sums to 100): `$validate-code` 60
/// (VCCS, VC01, VC03), `$lookup` 15 (LK01, LK05), `$expand` 15 (EX01,
/// EX03, EX05, EX08), `$subsumes` 5, `$translate` 5.
pub const MIX: [(Shape, u32); 11] = [
    (Shape::Vccs, 30),
    (Shape::Vc01, 15),
    (Shape::Vc03, 15),
    (Shape::Lk01, 14),
    (Shape::Lk05, 1),
    (Shape::Ex01, 5),
    (Shape::Ex03, 4),
    (Shape::Ex05, 5),
    (Shape::Ex08, 1),
    (Shape::Ss01, 5),
    (Shape::Cm01, 5),
];

/// One request of a corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The shape's name (`LK01`…): what the load report groups by.
    pub op: String,
    /// The version URI the call is meant for; `None` when unversioned.
    pub edition: Option<String>,
    pub method: String,
    /// Path and query: `/r4/CodeSystem/$lookup?...`.
    pub path: String,
    /// The JSON body of a POST.
    pub body: Option<String>,
}

impl Request {
    pub fn to_json(&self) -> Value {
        json!({
            "op": self.op,
            "edition": self.edition,
            "method": self.method,
            "path": self.path,
            "body": self.body,
        })
    }

    pub fn from_json(v: &Value) -> Result<Request, BenchError> {
        let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let path = s("path").ok_or_else(|| BenchError::new("a request has no path"))?;
        if !path.starts_with('/') {
            return Err(BenchError::new(format!("{path}: a path starts with /")));
        }
        Ok(Request {
            op: s("op").unwrap_or_else(|| "?".to_owned()),
            edition: s("edition"),
            method: s("method").unwrap_or_else(|| "GET".to_owned()),
            path,
            body: s("body"),
        })
    }
}

/// The corpus as JSON Lines.
pub fn to_jsonl(requests: &[Request]) -> String {
    let mut out = String::new();
    for r in requests {
        out.push_str(&r.to_json().to_string());
        out.push('\n');
    }
    out
}

/// Reads JSON Lines (blank lines skipped).
pub fn from_jsonl(text: &str) -> Result<Vec<Request>, BenchError> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value = serde_json::from_str(l)
                .map_err(|e| BenchError::new(format!("line {}: {e}", i + 1)))?;
            Request::from_json(&v).map_err(|e| BenchError::new(format!("line {}: {e}", i + 1)))
        })
        .collect()
}

/// Ranks `0..n` drawn with probability ∝ 1 / (rank + 1)^s, by inverting
/// the cumulative distribution (a binary search).
#[derive(Clone, Debug)]
pub struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    /// `n > 0` ranks, exponent `s` (1 is the classic law).
    pub fn new(n: usize, s: f64) -> Zipf {
        let mut cdf = Vec::with_capacity(n.max(1));
        let mut total = 0.0;
        for k in 0..n.max(1) {
            total += 1.0 / ((k + 1) as f64).powf(s);
            cdf.push(total);
        }
        for c in &mut cdf {
            *c /= total;
        }
        Zipf { cdf }
    }

    pub fn sample(&self, rng: &mut Rng) -> usize {
        let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        self.cdf
            .partition_point(|&c| c <= u)
            .min(self.cdf.len() - 1)
    }
}

/// What a corpus is drawn from, per edition.
struct Pool {
    version_uri: String,
    /// Active concepts (ordinals), in Zipf rank order.
    hot: Vec<u32>,
    zipf: Zipf,
    /// Is-a roots (ordinals) and their descendant counts.
    roots: Vec<(u32, usize)>,
    words: Vec<String>,
    /// Inactive concepts (SCTIDs) with a REPLACED BY target.
    replaced: Vec<u64>,
    /// For EX08: (root, attribute type, attribute target, word), all from
    /// a descendant of the root.
    composed: Vec<(u64, u64, u64, String)>,
}

fn store_err(e: txmap_store::StoreError) -> BenchError {
    BenchError::new(format!("sampling the edition: {e}"))
}

impl Pool {
    fn sample<B: AsRef<[u8]>>(edition: &Edition<B>, rng: &mut Rng) -> Result<Pool, BenchError> {
        let e = store_err;
        let n = edition.concept_count();
        if n == 0 {
            return Err(BenchError::new("the edition has no concepts"));
        }
        let mut hot = Vec::with_capacity(HOT_SET);
        let mut replaced = Vec::new();
        let mut tries = 0;
        while hot.len() < HOT_SET && tries < HOT_SET * 50 {
            tries += 1;
            let o = rng.below(u64::from(n)) as u32;
            let c = edition.concept_at(o).map_err(e)?;
            if c.active {
                if !hot.contains(&o) {
                    hot.push(o);
                }
            } else if replaced.len() < 1000 {
                let id = edition.sctid(o).map_err(e)?;
                if edition
                    .associations(id)
                    .map_err(e)?
                    .iter()
                    .any(|a| a.refset == REPLACED_BY)
                {
                    replaced.push(id);
                }
            }
        }
        if hot.is_empty() {
            return Err(BenchError::new("the edition has no active concepts"));
        }
        let mut roots = Vec::new();
        let mut best = (0, 0);
        for o in 0..n {
            let d = edition.descendants(o).map_err(e)?.len();
            if d > best.1 {
                best = (o, d);
            }
            if (ISA_MIN..=ISA_MAX).contains(&d) && edition.concept_at(o).map_err(e)?.active {
                roots.push((o, d));
            }
        }
        let mut picked = Vec::new();
        while picked.len() < 16 && !roots.is_empty() {
            picked.push(roots.swap_remove(rng.below(roots.len() as u64) as usize));
        }
        if picked.is_empty() {
            picked.push(best);
        }
        let mut words = Vec::new();
        for &o in hot.iter().take(1000) {
            let Some(term) = edition.preferred_term(o).map_err(e)? else {
                continue;
            };
            for w in term.split(|c: char| !c.is_alphabetic()) {
                let w = w.to_lowercase();
                if w.chars().count() >= 4 && !words.contains(&w) {
                    words.push(w);
                }
            }
        }
        if words.is_empty() {
            return Err(BenchError::new("no words of 4 letters in preferred terms"));
        }
        let mut composed = Vec::new();
        for &(root, _) in &picked {
            let descendants = edition.descendants(root).map_err(e)?;
            for _ in 0..8 {
                let Some(d) = descendants
                    .iter()
                    .nth(rng.below(descendants.len().max(1) as u64) as usize)
                else {
                    break;
                };
                let attrs = edition.attributes(d).map_err(e)?;
                let Some(a) = attrs.first() else { continue };
                let Some(term) = edition.preferred_term(d).map_err(e)? else {
                    continue;
                };
                let Some(w) = term
                    .split(|c: char| !c.is_alphabetic())
                    .find(|w| w.chars().count() >= 4)
                else {
                    continue;
                };
                composed.push((
                    edition.sctid(root).map_err(e)?,
                    a.type_id,
                    a.target,
                    w.to_lowercase(),
                ));
            }
        }
        Ok(Pool {
            version_uri: edition.identity().version_uri.clone(),
            zipf: Zipf::new(hot.len(), 1.0),
            hot,
            roots: picked,
            words,
            replaced,
            composed,
        })
    }

    fn concept(&self, rng: &mut Rng) -> u32 {
        self.hot[self.zipf.sample(rng)]
    }
}

/// Picks a shape by weight.
fn pick<T: Copy>(weighted: &[(T, u32)], rng: &mut Rng) -> T {
    let total: u32 = weighted.iter().map(|w| w.1).sum();
    let mut x = rng.below(u64::from(total.max(1))) as u32;
    for &(t, w) in weighted {
        if x < w {
            return t;
        }
        x -= w;
    }
    weighted[weighted.len() - 1].0
}

/// Edition weights, in per-mille: one edition all; two 640 and 360; more,
/// the first two 620 and 350, the rest sharing 30.
pub fn edition_weights(n: usize) -> Vec<u32> {
    match n {
        0 => vec![],
        1 => vec![1000],
        2 => vec![640, 360],
        _ => {
            let rest = 30 / (n as u32 - 2);
            let mut w = vec![620, 350];
            w.extend(std::iter::repeat_n(rest.max(1), n - 2));
            w
        }
    }
}

/// `n` requests drawn from `editions` (the first is the default one) with
/// the [`MIX`], or only `shape` when one is given.
pub fn generate<B: AsRef<[u8]>>(
    editions: &[&Edition<B>],
    n: usize,
    seed: u64,
    shape: Option<Shape>,
) -> Result<Vec<Request>, BenchError> {
    if editions.is_empty() {
        return Err(BenchError::new("no edition"));
    }
    let mut rng = Rng::new(seed);
    let pools = editions
        .iter()
        .map(|ed| Pool::sample(ed, &mut rng))
        .collect::<Result<Vec<_>, _>>()?;
    let weights: Vec<(usize, u32)> = edition_weights(pools.len())
        .into_iter()
        .enumerate()
        .collect();
    let mix: Vec<(Shape, u32)> = match shape {
        Some(s) => vec![(s, 1)],
        None => MIX.to_vec(),
    };
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let i = pick(&weights, &mut rng);
        let versioned = i != 0 || (rng.next_u64() as f64 / u64::MAX as f64) >= UNVERSIONED;
        let s = pick(&mix, &mut rng);
        out.push(request(editions[i], &pools[i], versioned, s, &mut rng)?);
    }
    Ok(out)
}

fn request<B: AsRef<[u8]>>(
    ed: &Edition<B>,
    p: &Pool,
    versioned: bool,
    shape: Shape,
    rng: &mut Rng,
) -> Result<Request, BenchError> {
    let e = store_err;
    let id = |o: u32| ed.sctid(o).map_err(e);
    let version = if versioned {
        format!("&version={}", encode(&p.version_uri))
    } else {
        String::new()
    };
    // The base of an implicit value set's URL.
    let base = if versioned { &p.version_uri } else { SNOMED };
    let mut method = "GET";
    let mut body = None;
    let path = match shape {
        Shape::Lk01 => format!(
            "/r4/CodeSystem/$lookup?system={SNOMED}{version}&code={}",
            id(p.concept(rng))?
        ),
        Shape::Lk05 => {
            // A valid concept SCTID (partition 00, check digit right) the
            // edition lacks: its item id is beyond any synthetic or real one.
            let item = 9_000_000_000 + rng.below(1_000_000_000);
            let code = txmap_sctid::make(item, None, txmap_sctid::ComponentKind::Concept);
            format!("/r4/CodeSystem/$lookup?system={SNOMED}{version}&code={code}")
        }
        Shape::Vccs => format!(
            "/r4/CodeSystem/$validate-code?url={SNOMED}{version}&code={}",
            id(p.concept(rng))?
        ),
        Shape::Vc01 => format!(
            "/r4/ValueSet/$validate-code?url={}&system={SNOMED}&code={}",
            encode(&format!("{base}?fhir_vs")),
            id(p.concept(rng))?
        ),
        Shape::Vc03 => {
            let (root, _) = p.roots[rng.below(p.roots.len() as u64) as usize];
            let d = ed.descendants(root).map_err(e)?;
            let code = if rng.below(2) == 0 && !d.is_empty() {
                d.iter()
                    .nth(rng.below(d.len() as u64) as usize)
                    .unwrap_or(root)
            } else {
                p.concept(rng)
            };
            format!(
                "/r4/ValueSet/$validate-code?url={}&system={SNOMED}&code={}",
                encode(&format!("{base}?fhir_vs=isa/{}", id(root)?)),
                id(code)?
            )
        }
        Shape::Ss01 => {
            let b = p.concept(rng);
            let ancestors = ed.ancestors(b).map_err(e)?;
            let (x, y) = if rng.below(2) == 0 && !ancestors.is_empty() {
                let a = ancestors
                    .iter()
                    .nth(rng.below(ancestors.len() as u64) as usize)
                    .unwrap_or(b);
                if rng.below(2) == 0 { (a, b) } else { (b, a) }
            } else {
                (b, p.concept(rng))
            };
            format!(
                "/r4/CodeSystem/$subsumes?system={SNOMED}{version}&codeA={}&codeB={}",
                id(x)?,
                id(y)?
            )
        }
        Shape::Ex01 => {
            let (root, d) = p.roots[rng.below(p.roots.len() as u64) as usize];
            let page = crate::pools::PAGE;
            let offset = rng.below((d + 1).saturating_sub(page) as u64 + 1);
            format!(
                "/r4/ValueSet/$expand?url={}&count={page}&offset={offset}",
                encode(&format!("{base}?fhir_vs=isa/{}", id(root)?))
            )
        }
        Shape::Ex03 => {
            let w = &p.words[rng.below(p.words.len() as u64) as usize];
            let count = 20 + rng.below(81);
            format!(
                "/r4/ValueSet/$expand?url={}&filter={}&count={count}",
                encode(&format!("{base}?fhir_vs")),
                encode(w)
            )
        }
        Shape::Ex05 => {
            let (root, _) = p.roots[rng.below(p.roots.len() as u64) as usize];
            let r = id(root)?;
            let children = ed.children(root).map_err(e)?;
            let ecl = match rng.below(4) {
                0 => format!("<< {r}"),
                1 => format!("<! {r}"),
                2 if !children.is_empty() => {
                    let c = children
                        .iter()
                        .nth(rng.below(children.len() as u64) as usize)
                        .unwrap_or(root);
                    format!("<< {r} MINUS << {}", id(c)?)
                }
                _ => match p.composed.iter().find(|c| c.0 == r) {
                    Some(&(_, t, v, _)) => format!("<< {r} : {t} = << {v}"),
                    None => format!("< {r}"),
                },
            };
            format!(
                "/r4/ValueSet/$expand?url={}&count=20",
                encode(&format!("{base}?fhir_vs=ecl/{}", encode(&ecl)))
            )
        }
        Shape::Ex08 => {
            method = "POST";
            let (root, attr, w) = match p
                .composed
                .get(rng.below(p.composed.len().max(1) as u64) as usize)
            {
                Some((r, t, v, w)) => (*r, Some((*t, *v)), w.clone()),
                None => (id(p.roots[0].0)?, None, p.words[0].clone()),
            };
            let mut filters =
                vec![json!({"property": "concept", "op": "is-a", "value": root.to_string()})];
            if let Some((t, v)) = attr {
                filters
                    .push(json!({"property": t.to_string(), "op": "is-a", "value": v.to_string()}));
            }
            let mut include = json!({"system": SNOMED, "filter": filters});
            if versioned {
                include["version"] = json!(p.version_uri);
            }
            body = Some(
                json!({
                    "resourceType": "Parameters",
                    "parameter": [
                        {"name": "valueSet", "resource": {
                            "resourceType": "ValueSet",
                            "status": "active",
                            "compose": {"include": [include]}
                        }},
                        {"name": "filter", "valueString": w},
                        {"name": "count", "valueInteger": 20}
                    ]
                })
                .to_string(),
            );
            "/r4/ValueSet/$expand".to_owned()
        }
        Shape::Cm01 => {
            let code = match p.replaced.get(p.zipf.sample(rng) % p.replaced.len().max(1)) {
                Some(&c) => c,
                None => id(p.concept(rng))?,
            };
            format!(
                "/r4/ConceptMap/$translate?url={}&system={SNOMED}{version}&code={code}",
                encode(&format!("{SNOMED}?fhir_cm={REPLACED_BY}"))
            )
        }
    };
    Ok(Request {
        op: shape.name().to_owned(),
        edition: versioned.then(|| p.version_uri.clone()),
        method: method.to_owned(),
        path,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_is_skewed_and_repeatable() {
        let z = Zipf::new(1000, 1.0);
        let mut rng = Rng::new(3);
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.sample(&mut rng)] += 1;
        }
        // Rank 0 takes about 1/H(1000) ≈ 13%; rank 9 a tenth of that.
        assert!((11_000..15_500).contains(&counts[0]), "{}", counts[0]);
        assert!(counts[0] > 5 * counts[9], "{} {}", counts[0], counts[9]);
        assert!(counts[999] < 100);
        let mut a = Rng::new(9);
        let mut b = Rng::new(9);
        assert!((0..100).all(|_| z.sample(&mut a) == z.sample(&mut b)));
        assert_eq!(Zipf::new(1, 1.0).sample(&mut a), 0);
    }

    #[test]
    fn mix_sums_to_100_and_names_round_trip() {
        assert_eq!(MIX.iter().map(|m| m.1).sum::<u32>(), 100);
        for s in Shape::ALL {
            assert_eq!(Shape::from_name(s.name()), Some(s));
        }
        assert_eq!(edition_weights(1), vec![1000]);
        assert_eq!(edition_weights(2).iter().sum::<u32>(), 1000);
        let w = edition_weights(4);
        assert_eq!(w[0] + w[1], 970);
    }

    #[test]
    fn requests_round_trip_through_jsonl() {
        let r = vec![
            Request {
                op: "LK01".into(),
                edition: None,
                method: "GET".into(),
                path: "/r4/CodeSystem/$lookup?code=1".into(),
                body: None,
            },
            Request {
                op: "EX08".into(),
                edition: Some("http://snomed.info/sct/1/version/2".into()),
                method: "POST".into(),
                path: "/r4/ValueSet/$expand".into(),
                body: Some("{\"a\":\"b\\nc\"}".into()),
            },
        ];
        let text = to_jsonl(&r);
        assert_eq!(text.lines().count(), 2);
        assert_eq!(from_jsonl(&text).unwrap(), r);
        assert!(from_jsonl("{\"path\":\"x\"}").is_err());
    }
}
