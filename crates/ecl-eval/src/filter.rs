//! Concept and description filters. A block of concept filters is made
//! once into tests of a concept's 8-byte record (`ConceptTest`: the flag
//! tests a table, modules and times compared without dispatch), so that
//! `*` under it is one pass over the records; description filters are
//! tested concept by concept, narrowed through the word index first when
//! they match terms. A block on type, language and dialect alone is
//! answered from the concept's description profile (format 6.1), tested
//! once per profile: a byte a concept instead of its description records
//! spread over the file.

use std::ops::RangeInclusive;
use std::rc::Rc;

use txmap_ecl::{
    Acceptability, ConceptFilter, ConceptSet, DescriptionFilter, DescriptionType, Filter,
    ModuleFilter, NumericOp, SearchTerm, Span, TimeFilter,
};
use txmap_store::NO_CODE;
use txmap_store::{
    ConceptFacts, Description, MatchMode, SEARCH_MAX_CANDIDATES, SearchOptions, StoreError, sctid,
};
use txmap_text::{fold, fold_into, words};

use crate::EvalError;
use crate::eval::{Ctx, R};
use crate::set::{contains, intersect, normalize};

const PRIMITIVE: u64 = 900000000000074008;

/// Sets at least this big are narrowed through the word index before a
/// `match` term filter reads descriptions.
const SEARCH_ABOVE: usize = 2_000;

/// The dialect aliases of the specification ("Appendix C – Dialect
/// Aliases"), each with the language refset it names, sorted by alias.
/// A language refset not listed here is named by its SCTID
/// (`dialectId = …`).
pub(crate) const DIALECTS: &[(&str, u64)] = &[
    ("da-dk", 554461000005103),
    ("de", 722130004),
    ("en-au", 32570271000036106),
    ("en-ca", 19491000087109),
    ("en-gb", 900000000000508004),
    ("en-ie", 21000220103),
    ("en-int-gmdn", 608771002),
    ("en-nhs-clinical", 999001261000000100),
    ("en-nhs-dmd", 999000671000001103),
    ("en-nhs-pharmacy", 999000691000001104),
    ("en-nz", 271000210107),
    ("en-uk-drug", 999000681000001101),
    ("en-uk-ext", 999001251000000103),
    ("en-us", sctid::US_ENGLISH),
    ("es", 448879004),
    ("es-ar", 450828004),
    ("es-uy", 5641000179103),
    ("et-ee", 71000181105),
    ("fr", 722131000),
    ("fr-be", 21000172104),
    ("fr-ca", 20581000087109),
    ("ja", 722129009),
    ("nb-no", 61000202103),
    ("nl-be", 31000172101),
    ("nl-nl", 31000146106),
    ("nn-no", 91000202106),
    ("sv-se", 46011000052107),
    ("zh", 722128001),
];

/// The language refset a dialect alias names (any case; no allocation:
/// it is asked once per description tested).
pub(crate) fn dialect_id(alias: &str) -> Option<u64> {
    let folded = || alias.bytes().map(|b| b.to_ascii_lowercase());
    DIALECTS
        .binary_search_by(|(a, _)| a.bytes().cmp(folded()))
        .ok()
        .map(|i| DIALECTS[i].1)
}

fn acceptability_id(a: &Acceptability) -> u64 {
    match a {
        Acceptability::Preferred => sctid::PREFERRED,
        Acceptability::Acceptable => sctid::ACCEPTABLE,
        Acceptability::Id(id) => *id,
    }
}

fn type_id(t: DescriptionType) -> u64 {
    match t {
        DescriptionType::Fsn => sctid::FSN,
        DescriptionType::Synonym => sctid::SYNONYM,
        DescriptionType::Definition => sctid::DEFINITION,
    }
}

/// `op` against a set of times: `!=` holds when every time differs, the
/// other operators when one time satisfies them.
pub(crate) fn time_holds(t: &TimeFilter, value: u32) -> bool {
    if t.op == NumericOp::Ne {
        t.times.iter().all(|&x| value != x)
    } else {
        t.times.iter().any(|&x| t.op.holds(value, x))
    }
}

/// The times a time filter keeps, as ascending disjoint ranges: a test
/// of a concept is then a comparison or two, not a dispatch on the
/// operator per time ([`time_holds`] is the reference).
fn time_ranges(t: &TimeFilter) -> Vec<RangeInclusive<u32>> {
    let (Some(&min), Some(&max)) = (t.times.iter().min(), t.times.iter().max()) else {
        // No times: `any` keeps nothing, `all` (`!=`) everything.
        return match t.op {
            NumericOp::Ne => vec![0..=u32::MAX],
            _ => Vec::new(),
        };
    };
    let mut points = t.times.clone();
    points.sort_unstable();
    points.dedup();
    match t.op {
        NumericOp::Eq => points.into_iter().map(|x| x..=x).collect(),
        NumericOp::Ne => {
            let mut out = Vec::new();
            let mut from = 0u32;
            for x in points {
                if x > from {
                    out.push(from..=x - 1);
                }
                from = x.saturating_add(1);
                if x == u32::MAX {
                    return out;
                }
            }
            out.push(from..=u32::MAX);
            out
        }
        NumericOp::Lt => max.checked_sub(1).map(|hi| 0..=hi).into_iter().collect(),
        NumericOp::Le => vec![0..=max],
        NumericOp::Gt => min
            .checked_add(1)
            .map(|lo| lo..=u32::MAX)
            .into_iter()
            .collect(),
        NumericOp::Ge => vec![min..=u32::MAX],
    }
}

/// A search term folded once, to be matched against many texts.
pub(crate) enum Folded {
    /// The words of the search text.
    Match(Vec<String>),
    /// The folded pattern.
    Wild(String),
}

impl Folded {
    pub(crate) fn new(term: &SearchTerm) -> Folded {
        match term {
            SearchTerm::Match { text, .. } => {
                Folded::Match(words(&fold(text)).map(str::to_owned).collect())
            }
            SearchTerm::Wild(pattern) => Folded::Wild(fold(pattern)),
        }
    }

    /// Whether `text` matches (see the crate docs); `buf` is scratch space.
    pub(crate) fn matches(&self, text: &str, buf: &mut String) -> bool {
        buf.clear();
        fold_into(text, buf);
        match self {
            Folded::Match(query) => query
                .iter()
                .all(|q| words(buf).any(|w| w.starts_with(q.as_str()))),
            Folded::Wild(pattern) => wild(pattern, buf),
        }
    }
}

/// Whether `text` matches a search term (see the crate docs).
#[cfg(test)]
pub(crate) fn term_matches(term: &SearchTerm, text: &str) -> bool {
    Folded::new(term).matches(text, &mut String::new())
}

/// Glob match of the whole text, `*` any run of characters.
fn wild(pattern: &str, text: &str) -> bool {
    if pattern.is_ascii() && text.is_ascii() {
        return glob(pattern.as_bytes(), text.as_bytes(), b'*');
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    glob(&p, &t, '*')
}

/// The words of a folded `wild` pattern that a matching term has as the
/// start of one of its words: those not joined on their left to a `*`
/// (`*ache` could end any word). Words are runs of alphanumerics, so the
/// character before such a word — a separator, or the pattern's start —
/// is before the same letters in the term, where a word then starts.
pub(crate) fn wild_words(folded: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for (i, segment) in folded.split('*').enumerate() {
        for w in words(segment) {
            let at = w.as_ptr() as usize - segment.as_ptr() as usize;
            if i == 0 || at > 0 {
                out.push(w);
            }
        }
    }
    out
}

fn glob<T: Copy + PartialEq>(p: &[T], t: &[T], any: T) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while let Some(&tc) = t.get(ti) {
        match p.get(pi) {
            Some(&c) if c == any => {
                star = Some((pi + 1, ti));
                pi += 1;
            }
            Some(&pc) if pc == tc => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    star = Some((sp, st + 1));
                    pi = sp;
                    ti = st + 1;
                }
                None => return false,
            },
        }
    }
    p.get(pi..).unwrap_or_default().iter().all(|&c| c == any)
}

impl<B: AsRef<[u8]>> Ctx<'_, B> {
    pub(crate) fn filter(&mut self, f: &Filter, set: Vec<u32>) -> R<Vec<u32>> {
        if let Filter::Concept(cs, _) = f {
            // One record read per concept: counted once for the set.
            self.tick(set.len())?;
            let test = self.concept_test(cs)?;
            let table = self.ed.concept_table()?;
            let count = self.ed.concept_count();
            // Two passes. The first tests every concept, each record read
            // independently of the others, so their cache misses overlap.
            // The second keeps the passing ordinals in place by moving on,
            // with no branch: a branch on a test that keeps a random part
            // of the set (a definition status) mispredicts, and a loop that
            // moved on in the first pass chained every record read to the
            // one before (`<< X {{ C definitionStatus = defined }}` cost
            // three times the loop one way, twice the other).
            let mut passes = Vec::with_capacity(set.len());
            for &o in &set {
                // Lazily: building the error for every concept and
                // dropping it measured a fifth of this loop.
                #[expect(
                    clippy::unnecessary_lazy_evaluations,
                    reason = "measured: the eager error costs 25% here"
                )]
                let c = table.facts(o).ok_or_else(|| StoreError::OutOfRange {
                    what: "concept",
                    ordinal: o,
                    count,
                })?;
                passes.push(test.holds(&c));
            }
            let mut out = set;
            let mut kept = 0;
            for (i, pass) in passes.into_iter().enumerate() {
                out[kept] = out[i];
                kept += usize::from(pass);
            }
            out.truncate(kept);
            return Ok(out);
        }
        let set = match self.term_candidates(f, set.len())? {
            Some(candidates) => intersect(&set, &candidates),
            None => set,
        };
        let mut out = Vec::with_capacity(set.len());
        for o in set {
            if self.passes(f, o)? {
                out.push(o);
            }
        }
        Ok(out)
    }

    /// For a big set and a block with a positive `match` term filter, the
    /// concepts having a description whose words the word index matches: a
    /// superset of the block's answer (the index holds every description,
    /// folded and split as [`term_matches`] does), found without reading
    /// every concept's descriptions. `None` when the index cannot help.
    fn term_candidates(&mut self, f: &Filter, size: usize) -> R<Option<Vec<u32>>> {
        let Filter::Description(ds, _) = f else {
            return Ok(None);
        };
        // `id = …`: the concepts of those descriptions, whatever the size
        // (a lookup each in the description ids).
        if let Some(ids) = ds.iter().find_map(|d| match d {
            DescriptionFilter::Id { equal: true, ids } => Some(ids),
            _ => None,
        }) {
            self.tick(ids.len())?;
            let mut out = Vec::with_capacity(ids.len());
            for &id in ids {
                if let Some(d) = self.ed.description(id)? {
                    out.extend(self.ed.ordinal(d.concept));
                }
            }
            return Ok(Some(normalize(out)));
        }
        if size < SEARCH_ABOVE {
            return Ok(None);
        }
        // Each term as a word search whose hits include its matches: a
        // `match` term as it is, a `wild` pattern by its words that start
        // after a separator (`*(finding)` needs a word "finding…"); a
        // pattern with none cannot narrow.
        let queries = |terms: &[SearchTerm]| -> Option<Vec<String>> {
            terms
                .iter()
                .map(|t| match t {
                    SearchTerm::Match { text, .. } => Some(text.clone()),
                    SearchTerm::Wild(pattern) => {
                        let folded = fold(pattern);
                        let words = wild_words(&folded);
                        (!words.is_empty()).then(|| words.join(" "))
                    }
                })
                .collect()
        };
        let Some(terms) = ds.iter().find_map(|d| match d {
            DescriptionFilter::Term { equal: true, terms } => queries(terms),
            _ => None,
        }) else {
            return Ok(None);
        };
        let options = SearchOptions {
            mode: MatchMode::Prefix,
            include_inactive: true,
            include_definitions: true,
            best_per_concept: false,
            max_candidates: SEARCH_MAX_CANDIDATES,
            acceptable_in: None,
        };
        let mut out = Vec::new();
        for text in &terms {
            match self.ed.search_concepts(text, &options) {
                Ok(concepts) => {
                    self.tick(concepts.len() + 1)?;
                    out.extend(concepts);
                }
                Err(StoreError::TooCostly | StoreError::EmptyQuery) => return Ok(None),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Some(normalize(out)))
    }

    pub(crate) fn passes(&mut self, f: &Filter, o: u32) -> R<bool> {
        self.tick(1)?;
        match f {
            Filter::Concept(cs, _) => self.concept_passes_all(cs, o),
            Filter::Description(ds, span) => {
                let explicit_active = ds
                    .iter()
                    .any(|d| matches!(d, DescriptionFilter::Active(..)));
                let needs_term = ds
                    .iter()
                    .any(|d| matches!(d, DescriptionFilter::Term { .. }));
                if let Some(test) = self.description_test(ds, *span)? {
                    return self.rows_pass(&test, o);
                }
                // One buffer for every candidate (a nested filter, tested
                // from inside this one, finds it taken and allocates its
                // own).
                let mut descriptions = std::mem::take(&mut self.desc_buf);
                let result = self
                    .ed
                    .descriptions_into(o, needs_term, &mut descriptions)
                    .map_err(EvalError::from)
                    .and_then(|()| {
                        self.tick(descriptions.len())?;
                        for d in &descriptions {
                            if (explicit_active || d.active)
                                && self.description_passes(ds, d, *span)?
                            {
                                return Ok(true);
                            }
                        }
                        Ok(false)
                    });
                descriptions.clear();
                self.desc_buf = descriptions;
                result
            }
        }
    }

    /// Whether `text` matches the search term, folding the term once per
    /// evaluation.
    pub(crate) fn term_holds(&mut self, t: &SearchTerm, text: &str) -> bool {
        self.terms
            .entry(std::ptr::from_ref(t) as usize)
            .or_insert_with(|| Folded::new(t))
            .matches(text, &mut self.fold_buf)
    }

    /// Whether the concept `id` is in the set. (Every concept of a
    /// `ConceptSet::Set` exists: they are checked before evaluation.)
    fn in_concept_set(&mut self, set: &ConceptSet, id: u64) -> R<bool> {
        match set {
            ConceptSet::Set(refs) => Ok(refs.iter().any(|r| r.id == id)),
            ConceptSet::Sub(s) => match self.ordinal_of(id) {
                Some(o) => self.in_memo_sub(s, o),
                None => Ok(false),
            },
        }
    }

    /// The ordinals of a module filter's concepts, sorted: the last set
    /// asked for is kept, since a filter asks for it once per concept
    /// tested (a hash look-up each showed).
    fn module_ordinals(&mut self, set: &ConceptSet) -> R<Rc<Vec<u32>>> {
        let key = std::ptr::from_ref(set) as usize;
        if let Some((k, ords)) = &self.last_modules
            && *k == key
        {
            return Ok(Rc::clone(ords));
        }
        let ords = match set {
            ConceptSet::Set(refs) => Rc::new(normalize(
                refs.iter().filter_map(|r| self.ed.ordinal(r.id)).collect(),
            )),
            ConceptSet::Sub(s) => self.memo_sub(s)?,
        };
        self.last_modules = Some((key, Rc::clone(&ords)));
        Ok(ords)
    }

    pub(crate) fn module_holds(&mut self, m: &ModuleFilter, module: u64) -> R<bool> {
        Ok(self.in_concept_set(&m.modules, module)? == m.equal)
    }

    fn concept_passes_all(&mut self, cs: &[ConceptFilter], o: u32) -> R<bool> {
        let c = self.ed.concept_facts(o)?;
        Ok(self.concept_test(cs)?.holds(&c))
    }

    /// A block of concept filters made into tests of a concept's record:
    /// the concepts a module or definition-status filter names are
    /// resolved once, and the tests on the record's flags folded into a
    /// table, so that a concept then costs a few loads and no dispatch.
    pub(crate) fn concept_test(&mut self, cs: &[ConceptFilter]) -> R<ConceptTest> {
        let mut test = ConceptTest {
            flags: [true; 8],
            modules: Vec::new(),
            times: Vec::new(),
        };
        for f in cs {
            let status = match f {
                ConceptFilter::Module(m) => {
                    let ordinals = self.module_ordinals(&m.modules)?;
                    test.modules.push(match ordinals[..] {
                        [one] => ModuleTest::One(one, m.equal),
                        _ => ModuleTest::Many(ordinals, m.equal),
                    });
                    continue;
                }
                ConceptFilter::EffectiveTime(t) => {
                    test.times.push(time_ranges(t));
                    continue;
                }
                // Whether a defined and a primitive concept pass.
                ConceptFilter::DefinitionStatusId { equal, ids } => Some((
                    self.in_concept_set(ids, sctid::DEFINED)? == *equal,
                    self.in_concept_set(ids, PRIMITIVE)? == *equal,
                )),
                ConceptFilter::DefinitionStatus { .. } | ConceptFilter::Active(..) => None,
            };
            for (i, ok) in test.flags.iter_mut().enumerate() {
                let c = flag_facts(i);
                *ok &= match status {
                    Some((defined, primitive)) => {
                        if c.defined {
                            defined
                        } else {
                            primitive
                        }
                    }
                    None => flag_test(f, &c),
                };
            }
        }
        Ok(test)
    }

    /// A block of description filters without a term filter as tests on
    /// the description records' codes, made once per evaluation: each
    /// filter's sets are resolved to tables over the edition's few codes,
    /// languages and modules, so that a description costs a few loads.
    /// `None` for a block with a term filter, which reads the terms.
    fn description_test(&mut self, ds: &[DescriptionFilter], span: Span) -> R<Option<Rc<RowTest>>> {
        if ds
            .iter()
            .any(|d| matches!(d, DescriptionFilter::Term { .. }))
        {
            return Ok(None);
        }
        let key = ds.as_ptr() as usize;
        if let Some(t) = self.row_tests.get(&key) {
            return Ok(Some(Rc::clone(t)));
        }
        let ed = self.ed;
        let codes: Vec<u64> = ed.code_ids().to_vec();
        // A table over every code: `f` of the concept the code stands for
        // (`NO_CODE`, none, stands for 0). Only the edition's codes are
        // asked (a few dozen): the 256 slots each took a call, most of the
        // time of a dialect filter on a few concepts.
        let table = |cx: &mut Self, f: &mut dyn FnMut(&mut Self, u64) -> R<bool>| -> R<CodeTable> {
            let mut t = [false; 256];
            for (slot, &id) in t.iter_mut().zip(&codes).take(usize::from(NO_CODE)) {
                *slot = f(cx, id)?;
            }
            t[usize::from(NO_CODE)] = f(cx, 0)?;
            Ok(t)
        };
        let mut checks = Vec::new();
        for f in ds {
            checks.push(match f {
                DescriptionFilter::Term { .. } => return Ok(None),
                DescriptionFilter::Language { equal, codes } => {
                    let pass = ed
                        .languages()
                        .iter()
                        .map(|l| codes.iter().any(|c| c.eq_ignore_ascii_case(l)) == *equal)
                        .collect();
                    RowCheck::Language(pass)
                }
                DescriptionFilter::TypeId { equal, types } => {
                    RowCheck::Type(Box::new(table(self, &mut |cx, id| {
                        Ok(cx.in_concept_set(types, id)? == *equal)
                    })?))
                }
                DescriptionFilter::TypeToken { equal, tokens } => {
                    RowCheck::Type(Box::new(table(self, &mut |_, id| {
                        Ok(tokens.iter().any(|&t| type_id(t) == id) == *equal)
                    })?))
                }
                DescriptionFilter::DialectId { equal, dialects } => {
                    let mut refsets = Vec::new();
                    for (set, _) in dialects {
                        refsets.push(table(self, &mut |cx, id| cx.in_concept_set(set, id))?);
                    }
                    let accepts = dialects.iter().map(|(_, a)| a.as_deref());
                    RowCheck::dialects(*equal, refsets, accepts, &mut |a| {
                        table(self, &mut |_, id| Ok(accepted(a, id)))
                    })?
                }
                DescriptionFilter::Dialect { equal, dialects } => {
                    let mut refsets = Vec::new();
                    for &dialect in self.dialect_ids(dialects, span)?.iter() {
                        refsets.push(table(self, &mut |_, id| Ok(id == dialect))?);
                    }
                    let accepts = dialects.iter().map(|(_, a)| a.as_deref());
                    RowCheck::dialects(*equal, refsets, accepts, &mut |a| {
                        table(self, &mut |_, id| Ok(accepted(a, id)))
                    })?
                }
                DescriptionFilter::Module(m) => RowCheck::Module {
                    equal: m.equal,
                    modules: self.sorted_set_ids(&m.modules)?,
                    seen: std::cell::RefCell::new(Vec::new()),
                },
                DescriptionFilter::EffectiveTime(t) => RowCheck::Time(t.clone()),
                DescriptionFilter::Active(active, _) => RowCheck::Active(*active),
                DescriptionFilter::Id { equal, ids } => RowCheck::Id {
                    equal: *equal,
                    ids: ids.clone(),
                },
            });
        }
        let explicit_active = ds
            .iter()
            .any(|d| matches!(d, DescriptionFilter::Active(..)));
        let by_profile = !explicit_active
            && checks.iter().all(|c| {
                matches!(
                    c,
                    RowCheck::Language(_) | RowCheck::Type(_) | RowCheck::Dialects { .. }
                )
            });
        let test = Rc::new(RowTest {
            checks,
            explicit_active,
            by_profile,
            profiles: std::cell::RefCell::new([0; 256]),
        });
        self.row_tests.insert(key, Rc::clone(&test));
        Ok(Some(test))
    }

    /// Whether one of concept `o`'s descriptions passes `test`.
    fn rows_pass(&mut self, test: &RowTest, o: u32) -> R<bool> {
        let ed = self.ed;
        if test.by_profile
            && let Some((p, rows)) = ed.description_profile(o)?
        {
            return profile_passes(ed, test, p, rows);
        }
        let rows = ed.description_rows(o)?;
        self.tick(rows.len())?;
        'rows: for row in rows {
            if !test.explicit_active && !row.active() {
                continue;
            }
            for check in &test.checks {
                let pass = match check {
                    RowCheck::Language(pass) => pass[usize::from(row.language()?)],
                    RowCheck::Type(pass) => pass[usize::from(row.type_code()?)],
                    RowCheck::Dialects { equal, entries } => {
                        dialects_pass(*equal, entries, ed.acceptability_codes(row.ordinal)?)?
                    }
                    RowCheck::Module {
                        equal,
                        modules,
                        seen,
                    } => {
                        let m = row.module_ordinal();
                        let known = seen.borrow().iter().find(|(x, _)| *x == m).map(|&(_, p)| p);
                        match known {
                            Some(pass) => pass,
                            None => {
                                let pass = modules.binary_search(&ed.sctid(m)?).is_ok() == *equal;
                                seen.borrow_mut().push((m, pass));
                                pass
                            }
                        }
                    }
                    RowCheck::Time(t) => time_holds(t, row.effective_time()?),
                    RowCheck::Active(active) => active.keeps(row.active()),
                    RowCheck::Id { equal, ids } => ids.contains(&row.id()) == *equal,
                };
                if !pass {
                    continue 'rows;
                }
            }
            return Ok(true);
        }
        Ok(false)
    }

    /// The language refsets of a dialect filter's aliases, found once per
    /// evaluation.
    fn dialect_ids(
        &mut self,
        dialects: &[(String, Option<Vec<Acceptability>>)],
        span: Span,
    ) -> R<Rc<[u64]>> {
        let key = dialects.as_ptr() as usize;
        if let Some(ids) = self.dialects.get(&key) {
            return Ok(Rc::clone(ids));
        }
        let ids = dialects
            .iter()
            .map(|(alias, _)| {
                dialect_id(alias).ok_or_else(|| EvalError::NotSupported {
                    what: format!("dialect alias {alias}"),
                    span,
                })
            })
            .collect::<R<Rc<[u64]>>>()?;
        self.dialects.insert(key, Rc::clone(&ids));
        Ok(ids)
    }

    fn description_passes(
        &mut self,
        filters: &[DescriptionFilter],
        d: &Description<'_>,
        span: Span,
    ) -> R<bool> {
        for f in filters {
            let ok = match f {
                DescriptionFilter::Term { equal, terms } => {
                    terms.iter().any(|t| self.term_holds(t, d.term)) == *equal
                }
                DescriptionFilter::Language { equal, codes } => {
                    codes.iter().any(|c| c.eq_ignore_ascii_case(d.language)) == *equal
                }
                DescriptionFilter::TypeId { equal, types } => {
                    self.in_concept_set(types, d.type_id)? == *equal
                }
                DescriptionFilter::TypeToken { equal, tokens } => {
                    tokens.iter().any(|&t| type_id(t) == d.type_id) == *equal
                }
                DescriptionFilter::DialectId { equal, dialects } => {
                    // The buffer is taken while `in_concept_set` needs
                    // `self`; an error leaves a fresh one, which is fine.
                    let mut rows = std::mem::take(&mut self.accept_buf);
                    self.ed.acceptability_into(d.ordinal, &mut rows)?;
                    let mut found = false;
                    for (set, accept) in dialects {
                        for &(refset, a) in &rows {
                            if accepted(accept.as_deref(), a) && self.in_concept_set(set, refset)? {
                                found = true;
                            }
                        }
                    }
                    self.accept_buf = rows;
                    found == *equal
                }
                DescriptionFilter::Dialect { equal, dialects } => {
                    let ids = self.dialect_ids(dialects, span)?;
                    self.ed
                        .acceptability_into(d.ordinal, &mut self.accept_buf)?;
                    let rows = &self.accept_buf;
                    let mut found = false;
                    for ((_, accept), &id) in dialects.iter().zip(ids.iter()) {
                        found |= rows
                            .iter()
                            .any(|&(refset, a)| refset == id && accepted(accept.as_deref(), a));
                    }
                    found == *equal
                }
                DescriptionFilter::Module(m) => self.module_holds(m, d.module)?,
                DescriptionFilter::EffectiveTime(t) => time_holds(t, d.effective_time),
                DescriptionFilter::Active(active, _) => active.keeps(d.active),
                DescriptionFilter::Id { equal, ids } => ids.contains(&d.id) == *equal,
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

impl RowCheck {
    /// A dialect filter's check: an entry per language refset table, with
    /// the table of the acceptabilities it asks for (made by `accepts`).
    fn dialects<'a>(
        equal: bool,
        refsets: Vec<CodeTable>,
        wanted: impl Iterator<Item = Option<&'a [Acceptability]>>,
        accepts: &mut dyn FnMut(Option<&[Acceptability]>) -> R<CodeTable>,
    ) -> R<RowCheck> {
        let mut entries = Vec::new();
        for (refsets, a) in refsets.into_iter().zip(wanted) {
            entries.push((refsets, accepts(a)?));
        }
        Ok(RowCheck::Dialects { equal, entries })
    }
}

/// Whether each of the 256 one-byte codes passes a test.
type CodeTable = [bool; 256];

/// Whether a description with these language refset rows passes a
/// dialect check: some row matches an entry (`equal`), or none does.
fn dialects_pass(
    equal: bool,
    entries: &[(CodeTable, CodeTable)],
    rows: impl Iterator<Item = Result<(u8, u8), StoreError>>,
) -> R<bool> {
    let mut found = false;
    for r in rows {
        let (refset, acceptability) = r?;
        found |= entries.iter().any(|(refsets, accepts)| {
            refsets[usize::from(refset)] && accepts[usize::from(acceptability)]
        });
    }
    Ok(found == equal)
}

/// Whether a concept of description profile `p` (with `rows`) passes
/// `test`, a test of type, language and dialect on active descriptions
/// only: some row passes every check, as one of the concept's active
/// descriptions with that type, language and acceptability set would.
/// Found once per profile and evaluation: concepts share few profiles
/// (8 on the International-scale synthetic edition, at most 255 numbered),
/// so a filter over a big set reads one byte a concept, not its
/// description records.
fn profile_passes<B: AsRef<[u8]>>(
    ed: &txmap_store::Edition<B>,
    test: &RowTest,
    p: u8,
    rows: &[txmap_store::DescriptionProfileRecord],
) -> R<bool> {
    let known = test.profiles.borrow()[usize::from(p)];
    if known != 0 {
        return Ok(known == 2);
    }
    let mut pass = false;
    'rows: for row in rows {
        for check in &test.checks {
            let ok = match check {
                RowCheck::Language(pass) => pass[usize::from(row.language)],
                RowCheck::Type(pass) => pass[usize::from(row.type_code)],
                RowCheck::Dialects { equal, entries } => dialects_pass(
                    *equal,
                    entries,
                    ed.acceptability_set(row.acceptability_set.get())?,
                )?,
                // `by_profile` holds no other check.
                _ => false,
            };
            if !ok {
                continue 'rows;
            }
        }
        pass = true;
        break;
    }
    test.profiles.borrow_mut()[usize::from(p)] = 1 + u8::from(pass);
    Ok(pass)
}

/// A block of description filters compiled for [`Ctx::rows_pass`].
pub(crate) struct RowTest {
    checks: Vec<RowCheck>,
    /// An `active` filter decides activity; otherwise only active
    /// descriptions count.
    explicit_active: bool,
    /// Whether the checks read only what a description profile holds
    /// (type, language, dialect), with active descriptions only: then a
    /// concept is tested by its profile ([`profile_passes`]).
    by_profile: bool,
    /// Each profile's answer once found: 0 unknown, 1 fails, 2 passes.
    profiles: std::cell::RefCell<[u8; 256]>,
}

enum RowCheck {
    /// By language index.
    Language(Vec<bool>),
    /// By type code.
    Type(Box<CodeTable>),
    /// A row (refset code, acceptability code) matches an entry when both
    /// tables pass its codes.
    Dialects {
        equal: bool,
        entries: Vec<(CodeTable, CodeTable)>,
    },
    /// Modules are few: each one's result is kept once found.
    Module {
        equal: bool,
        /// Sorted.
        modules: Rc<Vec<u64>>,
        seen: std::cell::RefCell<Vec<(u32, bool)>>,
    },
    Time(txmap_ecl::TimeFilter),
    Active(txmap_ecl::Activity),
    Id {
        equal: bool,
        ids: Vec<u64>,
    },
}

/// A block of concept filters, resolved ([`Ctx::concept_test`]).
pub(crate) struct ConceptTest {
    /// Whether a concept passes the tests on its flags, by
    /// [`flag_index`].
    flags: [bool; 8],
    /// `moduleId`.
    modules: Vec<ModuleTest>,
    /// `effectiveTime`: the times each filter keeps, as ranges.
    times: Vec<Vec<RangeInclusive<u32>>>,
}

/// A `moduleId` filter: the modules' ordinals, and whether a concept's
/// module must be among them.
enum ModuleTest {
    One(u32, bool),
    Many(Rc<Vec<u32>>, bool),
}

impl ConceptTest {
    /// Whether a concept with these facts passes every filter of the block.
    #[inline]
    pub(crate) fn holds(&self, c: &ConceptFacts) -> bool {
        // `&`, not `&&`, and folds, not `all` and `any`: a short cut is a
        // branch on the concept, which mispredicts on a test that keeps a
        // random part of the concepts (and cost five times the loads).
        let t = c.effective_time;
        self.flags[flag_index(c)]
            & self.modules.iter().fold(true, |ok, m| {
                ok & match m {
                    ModuleTest::One(o, equal) => (c.module_ord == *o) == *equal,
                    ModuleTest::Many(ordinals, equal) => contains(ordinals, c.module_ord) == *equal,
                }
            })
            & self.times.iter().fold(true, |ok, ranges| {
                ok & ranges
                    .iter()
                    .fold(false, |any, r| any | ((*r.start() <= t) & (t <= *r.end())))
            })
    }

    /// Keeps only the concepts of ECL's `*` under a filter: the hierarchy
    /// and the active concepts off it, or every concept when `all`.
    pub(crate) fn within_any(mut self, all: bool) -> Self {
        for (i, ok) in self.flags.iter_mut().enumerate() {
            let c = flag_facts(i);
            *ok &= all || c.in_hierarchy || c.active;
        }
        self
    }
}

/// A filter on the record's flags alone (`active`, `definitionStatus`);
/// `true` for the others, which are tested apart.
fn flag_test(f: &ConceptFilter, c: &ConceptFacts) -> bool {
    match f {
        ConceptFilter::DefinitionStatus { equal, defined } => {
            defined.contains(&c.defined) == *equal
        }
        ConceptFilter::Active(active, _) => active.keeps(c.active),
        ConceptFilter::DefinitionStatusId { .. }
        | ConceptFilter::Module(_)
        | ConceptFilter::EffectiveTime(_) => true,
    }
}

/// A concept's flags as an index into [`ConceptTest::flags`].
#[inline]
fn flag_index(c: &ConceptFacts) -> usize {
    usize::from(c.active) | usize::from(c.defined) << 1 | usize::from(c.in_hierarchy) << 2
}

/// The facts of a concept whose flags have the index `i` (the rest zero).
fn flag_facts(i: usize) -> ConceptFacts {
    ConceptFacts {
        active: i & 1 != 0,
        defined: i & 2 != 0,
        in_hierarchy: i & 4 != 0,
        module_ord: 0,
        effective_time: 0,
    }
}

fn accepted(wanted: Option<&[Acceptability]>, actual: u64) -> bool {
    wanted.is_none_or(|w| w.iter().any(|a| acceptability_id(a) == actual))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wild_patterns_words_are_those_not_joined_to_a_star_on_their_left() {
        assert_eq!(wild_words("*(finding)"), ["finding"]);
        assert_eq!(wild_words("heart*"), ["heart"]);
        assert_eq!(wild_words("*ache"), Vec::<&str>::new());
        assert_eq!(wild_words("*heart att*"), ["att"]);
        assert_eq!(wild_words("a*b c*"), ["a", "c"]);
        assert_eq!(wild_words("**"), Vec::<&str>::new());
    }

    #[test]
    fn time_ranges_keep_what_the_operator_keeps() {
        let sets: [&[u32]; 6] = [
            &[],
            &[20200131],
            &[20200731, 20200131],
            &[0],
            &[u32::MAX],
            &[0, 5, 5, u32::MAX],
        ];
        let values = [
            0,
            1,
            4,
            5,
            6,
            20200130,
            20200131,
            20200132,
            20200731,
            u32::MAX - 1,
            u32::MAX,
        ];
        for op in NumericOp::ALL {
            for times in sets {
                let t = TimeFilter {
                    op,
                    times: times.to_vec(),
                };
                let ranges = time_ranges(&t);
                for v in values {
                    assert_eq!(
                        ranges.iter().any(|r| r.contains(&v)),
                        time_holds(&t, v),
                        "{op:?} {times:?} at {v}"
                    );
                }
            }
        }
    }

    #[test]
    fn wildcards() {
        assert!(wild("*heart*", "acute heart attack"));
        assert!(wild("heart*", "heart"));
        assert!(!wild("heart", "heart attack"));
        assert!(wild("*a*b*", "xaxxbx"));
        assert!(!wild("*a*b", "xaxxbx"));
        assert!(wild("**", ""));
    }

    #[test]
    fn dialect_aliases_in_any_case() {
        assert!(
            DIALECTS.is_sorted_by(|a, b| a.0 < b.0),
            "binary search needs order"
        );
        assert_eq!(dialect_id("EN-gb"), Some(900000000000508004));
        assert_eq!(dialect_id("en-nhs-clinical"), Some(999001261000000100));
        assert_eq!(dialect_id("sv-SE"), Some(46011000052107));
        assert_eq!(dialect_id("en"), None);
        assert_eq!(dialect_id("en-gbx"), None);
    }

    #[test]
    fn match_terms() {
        let m = |q: &str| SearchTerm::Match {
            text: q.into(),
            explicit: false,
        };
        assert!(term_matches(&m("hea att"), "Heart attack"));
        assert!(term_matches(&m("MÉNI"), "Ménière's disease"));
        assert!(!term_matches(&m("eart"), "Heart attack"));
        assert!(term_matches(
            &SearchTerm::Wild("*ATT*".into()),
            "heart attack"
        ));
    }
}
