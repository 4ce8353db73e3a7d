//! The requests each operation is benchmarked with, sampled from the
//! edition so that they ask about real concepts, real hierarchy and real
//! words.
//!
//! Sampling is deterministic: a seed and an edition always give the same
//! pools, so runs, modes and machines can be compared call for call. What
//! is drawn:
//!
//! - concepts: active concepts picked uniformly by ordinal;
//! - `$subsumes` pairs: half a concept and one of its ancestors (in either
//!   order, so both `subsumes` and `subsumed-by` come back), half two
//!   unrelated random concepts;
//! - is-a value sets: active concepts with between [`ISA_MIN`] and
//!   [`ISA_MAX`] descendants — big enough that paging matters, small
//!   enough to be a realistic picklist;
//! - text filters: words of four letters or more from the preferred terms
//!   of the sampled concepts.

use txmap_store::Edition;

use crate::BenchError;

/// The SNOMED CT system URI.
pub const SNOMED: &str = "http://snomed.info/sct";

/// Fewest descendants of an is-a value set's root.
pub const ISA_MIN: usize = 300;
/// Most descendants of an is-a value set's root.
pub const ISA_MAX: usize = 3000;

/// Requests per pool.
pub const POOL_SIZE: usize = 1000;

/// Page size of the `$expand` requests.
pub const PAGE: usize = 20;

/// The operations benchmarked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    /// `CodeSystem/$lookup`.
    Lookup,
    /// `CodeSystem/$validate-code`.
    ValidateCode,
    /// `ValueSet/$validate-code` against an implicit is-a value set.
    ValidateCodeIsa,
    /// `CodeSystem/$subsumes`.
    Subsumes,
    /// `ValueSet/$expand` of an is-a value set, one page at an offset.
    ExpandIsa,
    /// `ValueSet/$expand` of all of SNOMED CT with a text filter, one page.
    ExpandFilter,
}

impl Op {
    pub const ALL: [Op; 6] = [
        Op::Lookup,
        Op::ValidateCode,
        Op::ValidateCodeIsa,
        Op::Subsumes,
        Op::ExpandIsa,
        Op::ExpandFilter,
    ];

    /// The name used on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Op::Lookup => "lookup",
            Op::ValidateCode => "validate-code",
            Op::ValidateCodeIsa => "validate-code-isa",
            Op::Subsumes => "subsumes",
            Op::ExpandIsa => "expand-isa",
            Op::ExpandFilter => "expand-filter",
        }
    }

    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }
}

/// Request targets (path and query, `/r4/...`) for every operation.
#[derive(Clone, Debug, Default)]
pub struct Pools {
    lookup: Vec<String>,
    validate_code: Vec<String>,
    validate_code_isa: Vec<String>,
    subsumes: Vec<String>,
    expand_isa: Vec<String>,
    expand_filter: Vec<String>,
    /// The is-a value sets' roots and their descendant counts.
    pub isa_roots: Vec<(u64, usize)>,
    /// The filter words.
    pub words: Vec<String>,
}

impl Pools {
    /// Samples [`POOL_SIZE`] requests per operation from `edition`.
    pub fn sample<B: AsRef<[u8]>>(edition: &Edition<B>, seed: u64) -> Result<Pools, BenchError> {
        let e = |e: txmap_store::StoreError| BenchError::new(format!("sampling the edition: {e}"));
        let mut rng = Rng::new(seed);
        let n = edition.concept_count();
        if n == 0 {
            return Err(BenchError::new("the edition has no concepts"));
        }
        let mut concepts = Vec::with_capacity(POOL_SIZE);
        let mut tries = 0;
        while concepts.len() < POOL_SIZE && tries < POOL_SIZE * 100 {
            tries += 1;
            let o = rng.below(n as u64) as u32;
            if edition.concept_at(o).map_err(e)?.active {
                concepts.push(o);
            }
        }
        if concepts.is_empty() {
            return Err(BenchError::new("the edition has no active concepts"));
        }
        let id = |o: u32| edition.sctid(o).map_err(e);

        let mut p = Pools::default();
        for &o in &concepts {
            let c = id(o)?;
            p.lookup
                .push(format!("/r4/CodeSystem/$lookup?system={SNOMED}&code={c}"));
            p.validate_code.push(format!(
                "/r4/CodeSystem/$validate-code?url={SNOMED}&code={c}"
            ));
        }

        for i in 0..POOL_SIZE {
            let b = concepts[i % concepts.len()];
            let ancestors = edition.ancestors(b).map_err(e)?;
            let (x, y) = if i % 2 == 0 && !ancestors.is_empty() {
                let a = ancestors
                    .iter()
                    .nth(rng.below(ancestors.len() as u64) as usize)
                    .unwrap_or(b);
                if rng.below(2) == 0 { (a, b) } else { (b, a) }
            } else {
                (b, concepts[rng.below(concepts.len() as u64) as usize])
            };
            p.subsumes.push(format!(
                "/r4/CodeSystem/$subsumes?system={SNOMED}&codeA={}&codeB={}",
                id(x)?,
                id(y)?
            ));
        }

        // Every active concept with a descendant count in range, then a
        // few of them.
        let mut roots = Vec::new();
        for o in 0..n {
            let d = edition.descendants(o).map_err(e)?.len();
            if (ISA_MIN..=ISA_MAX).contains(&d) && edition.concept_at(o).map_err(e)?.active {
                roots.push((o, d));
            }
        }
        if roots.is_empty() {
            // A small edition: take the concept with the most descendants.
            let mut best = (0, 0);
            for o in 0..n {
                let d = edition.descendants(o).map_err(e)?.len();
                if d > best.1 {
                    best = (o, d);
                }
            }
            roots.push(best);
        }
        let mut isa = Vec::new();
        for _ in 0..8.min(roots.len()) {
            let (o, d) = roots.swap_remove(rng.below(roots.len() as u64) as usize);
            isa.push((o, d));
            p.isa_roots.push((id(o)?, d));
        }
        for i in 0..POOL_SIZE {
            let (root, d) = isa[i % isa.len()];
            let vs = encode(&format!("{SNOMED}?fhir_vs=isa/{}", id(root)?));
            // Half members (the root's descendants), half random concepts.
            let descendants = edition.descendants(root).map_err(e)?;
            let code = if i % 2 == 0 && !descendants.is_empty() {
                descendants
                    .iter()
                    .nth(rng.below(descendants.len() as u64) as usize)
                    .unwrap_or(root)
            } else {
                concepts[rng.below(concepts.len() as u64) as usize]
            };
            p.validate_code_isa.push(format!(
                "/r4/ValueSet/$validate-code?url={vs}&system={SNOMED}&code={}",
                id(code)?
            ));
            // The root and its descendants are members.
            let offset = rng.below((d + 1).saturating_sub(PAGE) as u64 + 1);
            p.expand_isa.push(format!(
                "/r4/ValueSet/$expand?url={vs}&count={PAGE}&offset={offset}"
            ));
        }

        let mut words = Vec::new();
        for &o in &concepts {
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
        let all = encode(&format!("{SNOMED}?fhir_vs"));
        for _ in 0..POOL_SIZE {
            let w = &words[rng.below(words.len() as u64) as usize];
            p.expand_filter.push(format!(
                "/r4/ValueSet/$expand?url={all}&filter={}&count={PAGE}",
                encode(w)
            ));
        }
        p.words = words;
        Ok(p)
    }

    /// The request targets of `op`.
    pub fn requests(&self, op: Op) -> &[String] {
        match op {
            Op::Lookup => &self.lookup,
            Op::ValidateCode => &self.validate_code,
            Op::ValidateCodeIsa => &self.validate_code_isa,
            Op::Subsumes => &self.subsumes,
            Op::ExpandIsa => &self.expand_isa,
            Op::ExpandFilter => &self.expand_filter,
        }
    }
}

/// Percent-encodes a query parameter value: unreserved characters kept,
/// every other byte as `%XX`.
pub fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// splitmix64: small, fast, and the same everywhere. Benchmarks need
/// repeatable draws, not cryptographic ones.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoding_keeps_only_unreserved() {
        assert_eq!(
            encode("http://snomed.info/sct?fhir_vs=isa/123"),
            "http%3A%2F%2Fsnomed.info%2Fsct%3Ffhir_vs%3Disa%2F123"
        );
        assert_eq!(encode("é b"), "%C3%A9%20b");
    }

    #[test]
    fn draws_are_repeatable_and_in_range() {
        let a: Vec<u64> = (0..100)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(10)
            })
            .collect();
        let b: Vec<u64> = (0..100)
            .map({
                let mut r = Rng::new(7);
                move |_| r.below(10)
            })
            .collect();
        assert_eq!(a, b);
        assert!(a.iter().all(|&x| x < 10));
        assert!((0..10).all(|x| a.contains(&x)));
    }

    #[test]
    fn op_names_round_trip() {
        for op in Op::ALL {
            assert_eq!(Op::from_name(op.name()), Some(op));
        }
    }
}
