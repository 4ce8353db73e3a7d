//! Descriptions and text definitions, their acceptability in each
//! language refset, the preferred terms, and the word index.

use std::io::Seek;

use super::*;
use crate::numbered::Numbered;
use txmap_format::U24;
use txmap_format::schema::description_search as search_bits;

impl Importer<'_> {
    pub(super) fn language_code(&mut self, code: &str) -> Result<u8, ImportError> {
        if let Some(i) = self.languages.iter().position(|l| l == code) {
            return Ok(i as u8);
        }
        if self.languages.len() >= NO_CODE as usize {
            return Err(ImportError::Inconsistent(
                "more than 255 language codes".into(),
            ));
        }
        self.languages.push(code.to_owned());
        Ok((self.languages.len() - 1) as u8)
    }

    /// Descriptions and text definitions: the `Descriptions`,
    /// `ConceptDescriptionsIndex`, `TermHeap` and `DescriptionsById`
    /// sections, plus what the language and word stages need: among it the
    /// `(SCTID, ordinal)` pairs in SCTID order, a spill that the language
    /// refsets join with (the section holds only the ordinals).
    pub(super) fn descriptions(
        &mut self,
    ) -> Result<(DescriptionFacts, Staged, Staged, Sorted<Pair32>), ImportError> {
        let t = Instant::now();
        let n = self.concepts.len();
        let mut sorter = self.sorter::<DescriptionIn>();
        let mut spill = Spill::new(self.temp).ctx("creating a spill file")?;
        let kinds = [FileKind::Description, FileKind::TextDefinition];
        let rows = self.read("descriptions", &kinds, |imp, ctx, row| {
            let Some(d) = imp.parse(row, DescriptionRow::parse(row))? else {
                return Ok(());
            };
            if d.term.len() > usize::from(u16::MAX) {
                return imp.problem(ImportError::Inconsistent(format!(
                    "{}:{}: term of {} bytes is longer than 65535",
                    ctx.file.path,
                    row.line,
                    d.term.len()
                )));
            }
            let language = imp.language_code(d.language)?;
            let term_offset = spill.push(d.term.as_bytes()).ctx("spilling terms")?;
            sorter
                .push(DescriptionIn {
                    id: d.id,
                    effective_time: d.effective_time,
                    source: ctx.source,
                    concept: d.concept,
                    module: d.module,
                    type_id: d.type_id,
                    case_significance: d.case_significance,
                    term_offset,
                    term_len: d.term.len() as u32,
                    language,
                    active: d.active as u8,
                    pad: [0; 2],
                })
                .ctx("spilling descriptions")
        })?;
        let sorted = self.finish(sorter)?;
        let mut out = self.sorter::<DescriptionOut>();
        for d in Latest::new(sorted) {
            let d = d?;
            let (Some(concept), Some(module)) = (
                self.refer(d.concept, "description", d.id)?,
                self.refer(d.module, "description", d.id)?,
            ) else {
                continue;
            };
            out.push(DescriptionOut {
                concept,
                module,
                id: d.id,
                term_offset: d.term_offset,
                term_len: d.term_len,
                effective_time: d.effective_time,
                type_code: self.codes.code(d.type_id)?,
                case_code: self.codes.code(d.case_significance)?,
                language: d.language,
                active: d.active,
                pad: [0; 4],
            })
            .ctx("spilling descriptions")?;
        }
        let terms = spill.into_reader().ctx("reading terms back")?;
        let out = self.finish(out)?;

        let synonym = self.codes.code(ids::SYNONYM)?;
        let mut facts = DescriptionFacts {
            concept: Vec::new(),
            term_len: Vec::new(),
            flags: Vec::new(),
            type_language: Vec::new(),
            search: Vec::new(),
        };
        let definition = self.codes.code(ids::DEFINITION)?;
        let mut csr = CsrBuilder::new(n);
        let mut heap = self.stages.detached().ctx("staging terms")?;
        let mut id_index = self.sorter::<IdOrdinal>();
        let mut words = self.sorter::<Pair32>();
        let mut vocabulary: HashMap<Box<str>, u32> = HashMap::new();
        let mut term = Vec::new();
        let mut folded = String::new();
        let mut active = 0;
        let staged = self
            .stages
            .get(SectionKind::Descriptions)
            .ctx("staging descriptions")?;
        let fsn = self.codes.code(ids::FSN)?;
        // (module, effective time, type, case, language, flags), numbered.
        let mut kinds = Numbered::new("kinds of descriptions (module, time, type, case, language)");
        for (ordinal, d) in out.enumerate() {
            let d = d.ctx("reading sorted descriptions")?;
            // `DescriptionsById` and the indexes hold description ordinals
            // in three bytes.
            let ordinal = u32::try_from(ordinal)
                .ok()
                .filter(|&o| o <= U24::MAX)
                .ok_or_else(|| {
                    ImportError::Inconsistent(format!(
                        "more than {} descriptions: an edition file holds at most that many",
                        U24::MAX + 1
                    ))
                })?;
            csr.add(d.concept).map_err(ImportError::Inconsistent)?;
            terms
                .read_into(d.term_offset, d.term_len as usize, &mut term)
                .ctx("reading terms back")?;
            let term_offset = u32::try_from(heap.len)
                .map_err(|_| ImportError::Inconsistent("terms over 4 GiB".into()))?;
            heap.write_bytes(&term).ctx("staging terms")?;
            // Words of every description, active or not: a search may ask
            // for inactive ones, and filtering is the reader's job. A word
            // pair's value is the ordinal and, in its low bit, whether the
            // word is the term's first (the `WordFirstWords` bitmap).
            folded.clear();
            let text = std::str::from_utf8(&term)
                .map_err(|_| ImportError::Inconsistent(format!("term of {} is not UTF-8", d.id)))?;
            txmap_text::fold_into(text, &mut folded);
            let mut word_count = 0usize;
            for w in txmap_text::words(&folded) {
                let next = vocabulary.len() as u32;
                let id = *vocabulary.entry(w.into()).or_insert(next);
                words
                    .push(Pair32 {
                        key: id,
                        value: ordinal << 1 | u32::from(word_count == 0),
                    })
                    .ctx("spilling words")?;
                word_count += 1;
            }
            let mut search = text.chars().count().min(usize::from(search_bits::CHARS)) as u16;
            for (set, bit) in [
                (d.active != 0, search_bits::ACTIVE),
                (
                    self.concept_active.get(d.concept as usize) == Some(&true),
                    search_bits::CONCEPT_ACTIVE,
                ),
                (d.type_code == definition, search_bits::DEFINITION),
                (word_count == 1, search_bits::ONE_WORD),
            ] {
                if set {
                    search |= bit;
                }
            }
            facts.search.push(search);
            let flags = if d.active != 0 {
                description_flags::ACTIVE
            } else {
                0
            };
            let kind = (
                d.module,
                d.effective_time,
                d.type_code,
                d.case_code,
                d.language,
                flags,
            );
            staged
                .record(&DescriptionRecord {
                    id: U64::new(d.id),
                    term_offset: U32::new(term_offset),
                    term_len: U16::new(d.term_len as u16),
                    kind: U16::new(kinds.number(kind)?),
                })
                .ctx("staging descriptions")?;
            id_index
                .push(IdOrdinal {
                    id: d.id,
                    ordinal,
                    pad: 0,
                })
                .ctx("spilling description ids")?;
            facts.concept.push(d.concept);
            facts.term_len.push(d.term_len as u16);
            facts.type_language.push((d.type_code, d.language));
            facts.flags.push(
                (d.active != 0) as u8
                    | (((d.type_code == synonym) as u8) << 1)
                    | (((d.type_code == fsn) as u8) << 2),
            );
            active += u64::from(d.active != 0);
        }
        let d_count = facts.concept.len() as u64;
        let kinds: Vec<DescriptionKindRecord> = (kinds.values().iter())
            .map(
                |&(module, time, type_code, case_code, language, flags)| DescriptionKindRecord {
                    module: U32::new(module),
                    effective_time: U32::new(time),
                    type_code,
                    case_code,
                    language,
                    flags,
                },
            )
            .collect();
        self.stages
            .put_records(SectionKind::DescriptionKinds, &kinds)
            .ctx("staging descriptions")?;
        heap.count = heap.len;
        // The heap is rewritten once preferred terms are known, which need
        // the language refsets: see `preferred_terms_first`.
        drop(terms);
        self.stages
            .put_index(SectionKind::ConceptDescriptionsIndex, &csr.finish(n))
            .ctx("staging descriptions")?;
        let sorted_ids = self.finish(id_index)?;
        let mut ids = self.stages.detached().ctx("spilling description ids")?;
        let by_id = self
            .stages
            .get(SectionKind::DescriptionsById)
            .ctx("staging description ids")?;
        for e in sorted_ids {
            let e = e.ctx("reading sorted description ids")?;
            let ordinal = narrow(e.ordinal, "description ordinal")?;
            by_id.record(&ordinal).ctx("staging description ids")?;
            ids.record(&e).ctx("spilling description ids")?;
        }

        // Word ids were given in order of first appearance; the index wants
        // words in byte order. Re-key the pairs by each word's rank.
        let mut by_rank: Vec<(Box<str>, u32)> = vocabulary.into_iter().collect();
        by_rank.sort_unstable();
        let mut rank = vec![0u32; by_rank.len()];
        for (r, (_, id)) in by_rank.iter().enumerate() {
            rank[*id as usize] = r as u32;
        }
        let sorted_words = self.finish(words)?;
        let mut ranked = self.sorter::<Pair32>();
        for p in sorted_words {
            let p = p.ctx("reading sorted words")?;
            ranked
                .push(Pair32 {
                    key: rank[p.key as usize],
                    value: p.value,
                })
                .ctx("spilling words")?;
        }
        let ranked = self.finish(ranked)?;
        self.vocabulary = by_rank.into_iter().map(|(w, _)| w).collect();

        self.count("descriptions", d_count);
        self.count("active_descriptions", active);
        self.done("descriptions", t, rows);
        Ok((facts, heap, ids, ranked))
    }

    /// The description profiles (format 6.1): each concept's distinct
    /// (type, language, acceptability set) of its active descriptions,
    /// sorted, numbered by how many concepts share it, the commonest
    /// first; the 255 commonest go in the file and the other concepts get
    /// `NO_PROFILE`. Descriptions are in concept order, so a concept's are
    /// one run.
    fn description_profiles(
        &mut self,
        facts: &DescriptionFacts,
        set_of: &[u16],
    ) -> Result<(), ImportError> {
        let n = self.concepts.len();
        // Profile keys in order of first appearance, each with its count;
        // concepts without descriptions have the empty profile.
        let mut numbers: HashMap<Vec<DescriptionProfileRecord>, u32> = HashMap::new();
        let mut counts: Vec<u32> = Vec::new();
        let mut keys: Vec<Vec<DescriptionProfileRecord>> = Vec::new();
        // The number of `profile`, given on first sight, counted `by` more
        // concepts.
        let mut number_of = |profile: &[DescriptionProfileRecord], by: u32| {
            let k = match numbers.get(profile) {
                Some(&k) => k,
                None => {
                    let k = keys.len() as u32;
                    numbers.insert(profile.to_vec(), k);
                    keys.push(profile.to_vec());
                    counts.push(0);
                    k
                }
            };
            counts[k as usize] += by;
            k
        };
        let mut of_concept = vec![u32::MAX; n];
        let mut profile = Vec::new();
        let mut first = 0;
        while let Some(&concept) = facts.concept.get(first) {
            // The run of descriptions of one concept (the concepts with
            // none are numbered below).
            let end = first
                + facts.concept[first..]
                    .iter()
                    .take_while(|&&c| c == concept)
                    .count();
            profile.clear();
            profile.extend((first..end).filter(|&d| facts.flags[d] & 1 != 0).map(|d| {
                let (type_code, language) = facts.type_language[d];
                DescriptionProfileRecord {
                    type_code,
                    language,
                    acceptability_set: U16::new(set_of[d]),
                }
            }));
            profile.sort_unstable();
            profile.dedup();
            let number = number_of(&profile, 1);
            let slot = of_concept.get_mut(concept as usize).ok_or_else(|| {
                ImportError::Inconsistent(format!(
                    "description of concept ordinal {concept} out of range"
                ))
            })?;
            *slot = number;
            first = end;
        }
        let bare = of_concept.iter().filter(|&&k| k == u32::MAX).count() as u32;
        if bare > 0 {
            let k = number_of(&[], bare);
            of_concept
                .iter_mut()
                .filter(|k| **k == u32::MAX)
                .for_each(|x| *x = k);
        }
        // Commonest first; ties in first-seen order, so the numbering is
        // the same on every import.
        let mut rank: Vec<u32> = (0..keys.len() as u32).collect();
        rank.sort_by_key(|&k| (std::cmp::Reverse(counts[k as usize]), k));
        rank.truncate(usize::from(NO_PROFILE));
        let mut byte_of = vec![NO_PROFILE; keys.len()];
        for (b, &k) in rank.iter().enumerate() {
            byte_of[k as usize] = b as u8;
        }
        let bytes: Vec<u8> = of_concept.iter().map(|&k| byte_of[k as usize]).collect();
        let unnumbered = bytes.iter().filter(|&&b| b == NO_PROFILE).count();
        self.stages
            .put_table(
                SectionKind::DescriptionProfilesIndex,
                SectionKind::DescriptionProfiles,
                rank.iter().map(|&k| keys[k as usize].iter().copied()),
            )
            .ctx("staging description profiles")?;
        self.stages
            .put_records(SectionKind::ConceptDescriptionProfiles, &bytes)
            .ctx("staging description profiles")?;
        self.count("description_profiles", keys.len() as u64);
        self.count("concepts_without_profile", unnumbered as u64);
        Ok(())
    }

    /// Language refset rows: the `Acceptability` sections, the choice of the
    /// default language refset, and each concept's preferred term in it.
    pub(super) fn languages_and_preferred_terms(
        &mut self,
        facts: &DescriptionFacts,
        terms: Staged,
        ids: Staged,
    ) -> Result<(), ImportError> {
        let t = Instant::now();
        let n = self.concepts.len();
        let mut sorter = self.sorter::<LanguageIn>();
        let rows = self.read(
            "language refsets",
            &[FileKind::Language],
            |imp, ctx, row| {
                let Some(r) = imp.parse(row, RefsetRow::parse(row))? else {
                    return Ok(());
                };
                let Some(acceptability) = first_sctid(r.extra) else {
                    return imp.problem(ImportError::Inconsistent(format!(
                        "{}:{}: language refset row without an acceptabilityId",
                        ctx.file.path, row.line
                    )));
                };
                sorter
                    .push(LanguageIn {
                        uuid: r.id,
                        effective_time: r.effective_time,
                        source: ctx.source,
                        refset: r.refset,
                        description: r.referenced_component,
                        acceptability,
                        active: r.active as u8,
                        pad: [0; 7],
                    })
                    .ctx("spilling language refset rows")
            },
        )?;
        let sorted = self.finish(sorter)?;
        let mut by_description = self.sorter::<LanguageRef>();
        for r in Latest::new(sorted) {
            let r = r?;
            if r.active == 0 {
                continue;
            }
            by_description
                .push(LanguageRef {
                    description: r.description,
                    refset: u32::from(self.codes.code(r.refset)?),
                    acceptability: self.codes.code(r.acceptability)?,
                    pad: [0; 3],
                })
                .ctx("spilling language refset rows")?;
        }
        // Joined with the description ids (sorted by SCTID) in one pass,
        // which gives each row its description ordinal.
        let by_description = self.finish(by_description)?;
        let mut out = self.sorter::<AcceptabilityOut>();
        let mut per_refset: BTreeMap<u64, u64> = BTreeMap::new();
        {
            let mut ids = ids.into_reader().ctx("reading description ids")?;
            let mut left = facts.concept.len();
            let mut current: Option<(u64, u32)> = None;
            let mut rec = [0u8; size_of::<IdOrdinal>()];
            for r in by_description {
                let r = r.ctx("reading sorted language rows")?;
                while left > 0 && current.is_none_or(|(id, _)| id < r.description) {
                    ids.read_exact(&mut rec).ctx("reading description ids")?;
                    left -= 1;
                    let entry: IdOrdinal = zerocopy::transmute!(rec);
                    current = Some((entry.id, entry.ordinal));
                }
                let refset = self.codes.ids[r.refset as usize];
                let Some((_, ordinal)) = current.filter(|&(id, _)| id == r.description) else {
                    self.problem(ImportError::Inconsistent(format!(
                        "language refset {refset} refers to description {}, which the release does not have",
                        r.description
                    )))?;
                    continue;
                };
                *per_refset.entry(refset).or_default() += 1;
                out.push(AcceptabilityOut {
                    description: ordinal,
                    refset: r.refset,
                    acceptability: r.acceptability,
                    pad: [0; 3],
                })
                .ctx("spilling language refset rows")?;
            }
        }
        let default = match self.options.default_language_refset {
            Some(id) => {
                if !per_refset.contains_key(&id) {
                    return Err(ImportError::Options(format!(
                        "--default-language-refset {id}: the release has no members of that refset"
                    )));
                }
                id
            }
            None if per_refset.contains_key(&ids::US_ENGLISH) => ids::US_ENGLISH,
            None => per_refset
                .iter()
                .max_by_key(|(id, n)| (**n, **id))
                .map_or(0, |(id, _)| *id),
        };
        self.counts
            .insert("default_language_refset".into(), default);
        let default_code = u32::from(self.codes.code(default)?);
        let preferred = self.codes.code(ids::PREFERRED)?;

        // Preferred term per concept, best first: preferred in the default
        // refset (0), preferred in another refset (1), any active synonym (2).
        let mut pt: Vec<(u8, u32)> = vec![(u8::MAX, u32::MAX); n];
        for (d, &c) in facts.concept.iter().enumerate() {
            if facts.flags[d] == 0b11 && pt[c as usize].0 > 2 {
                pt[c as usize] = (2, d as u32);
            }
        }
        let out = self.finish(out)?;
        let mut search = facts.search.clone();
        let mut count = 0;
        // Each description's rows, (refset, acceptability) codes, numbered
        // as a set (format 6): a release's million descriptions share a
        // few dozen.
        let mut sets = Numbered::new("sets of language refset rows");
        let mut set_of = vec![sets.number(Vec::new())?; facts.concept.len()];
        let mut set = Vec::new();
        let mut current = None;
        for a in out {
            let a = a.ctx("reading sorted language rows")?;
            if current != Some(a.description) {
                if let Some(d) = current {
                    set_of[d as usize] = sets.number(std::mem::take(&mut set))?;
                }
                if a.description as usize >= set_of.len() || current > Some(a.description) {
                    return Err(ImportError::Inconsistent(format!(
                        "language row of description ordinal {} out of order or range",
                        a.description
                    )));
                }
                set.clear();
                current = Some(a.description);
            }
            set.push((a.refset as u8, a.acceptability));
            count += 1;
            let d = a.description as usize;
            // What `Edition::is_preferred_synonym` asks: an active synonym
            // preferred in the default refset.
            if a.acceptability == preferred && a.refset == default_code && facts.flags[d] == 0b11 {
                search[d] |= search_bits::PREFERRED;
            }
            if a.acceptability == preferred && facts.flags[d] == 0b11 {
                let rank = if a.refset == default_code { 0 } else { 1 };
                let c = facts.concept[d] as usize;
                if rank < pt[c].0 {
                    pt[c] = (rank, a.description);
                }
            }
        }
        if let Some(d) = current {
            set_of[d as usize] = sets.number(set)?;
        }
        self.description_profiles(facts, &set_of)?;
        let set_of: Vec<U16> = set_of.into_iter().map(U16::new).collect();
        self.stages
            .put_records(SectionKind::DescriptionAcceptability, &set_of)
            .ctx("staging acceptability")?;
        // The sets as a CSR index (`sets + 1` offsets) and their rows.
        let set_rows = sets.values().iter().map(|set| {
            set.iter()
                .map(|&(refset_code, acceptability_code)| AcceptabilityRecord {
                    refset_code,
                    acceptability_code,
                })
        });
        self.stages
            .put_table(
                SectionKind::AcceptabilitySetsIndex,
                SectionKind::AcceptabilitySets,
                set_rows,
            )
            .ctx("staging acceptability")?;
        self.count("language_members", count);
        let entries: Vec<U16> = search.into_iter().map(U16::new).collect();
        self.stages
            .put_records(SectionKind::DescriptionSearch, &entries)
            .ctx("staging the search entries")?;

        self.preferred_terms_first(facts, &pt, terms)?;
        self.done("language refsets", t, rows);
        Ok(())
    }

    /// Rewrites the term heap: first every concept's *carrier* — the term
    /// that holds its preferred term as a prefix (the fully specified
    /// name when it reads `preferred term (tag)`, else the preferred term
    /// itself) — in concept order; then the other terms, in description
    /// order. The carrier region is a compact, contiguous table (each
    /// entry of `PreferredTermIndex` names a preferred term in it) that the
    /// common "code → display" call reads without touching the rest of the
    /// heap. A term that is part of its concept's carrier, or of one of its
    /// concept's terms stored before it, points there instead of being
    /// stored again: on the International-scale synthetic release that is
    /// 22 MB of 75 MB, most of it the preferred terms inside the fully
    /// specified names.
    pub(super) fn preferred_terms_first(
        &mut self,
        facts: &DescriptionFacts,
        pt: &[(u8, u32)],
        all_terms: Staged,
    ) -> Result<(), ImportError> {
        let n = self.concepts.len();
        let mut terms = all_terms.into_reader().ctx("reading terms back")?;

        // First pass: each concept's carrier (a description ordinal).
        let mut carrier = vec![u32::MAX; n];
        let mut index = Vec::with_capacity(n + 1);
        let mut at = 0u64;
        let mut records = self
            .stages
            .reopen(SectionKind::Descriptions)
            .ctx("reading descriptions back")?;
        let mut group = ConceptTerms::default();
        let mut next = 0u32;
        for (c, &(_, p)) in pt.iter().enumerate() {
            group.read(facts, c as u32, &mut next, &mut records, &mut terms)?;
            index.push(at);
            if p == u32::MAX {
                continue;
            }
            let chosen = group.carrier(p, facts);
            carrier[c] = chosen;
            at += u64::from(facts.term_len[chosen as usize]);
        }
        index.push(at);
        let carriers_len = at;
        let index: Vec<u32> = index
            .into_iter()
            .map(u32::try_from)
            .collect::<Result<_, _>>()
            .map_err(|_| ImportError::Inconsistent("preferred terms over 4 GiB".into()))?;

        // Second pass: the heap and the records pointing into it.
        terms.rewind().ctx("reading terms back")?;
        let mut records = self
            .stages
            .reopen(SectionKind::Descriptions)
            .ctx("reading descriptions back")?;
        let mut out = self.stages.detached().ctx("staging descriptions")?;
        let mut carriers = self.stages.detached().ctx("staging terms")?;
        let mut rest = self.stages.detached().ctx("staging terms")?;
        let mut entries = Vec::with_capacity(n + 1);
        let mut next = 0u32;
        let mut stored: Vec<(usize, u64)> = Vec::new();
        for c in 0..n {
            group.read(facts, c as u32, &mut next, &mut records, &mut terms)?;
            let (first, heap_at) = (group.first, u64::from(index[c]));
            let chosen = carrier[c];
            let carrier_term: &[u8] = match chosen {
                u32::MAX => &[],
                d => &group.terms[(d - first) as usize],
            };
            carriers.write_bytes(carrier_term).ctx("staging terms")?;
            entries.push(PreferredTermEntry {
                offset: U32::new(index[c]),
                len: U16::new(match pt[c].1 {
                    u32::MAX => 0,
                    p => facts.term_len[p as usize],
                }),
            });
            // Longest first, so that a shorter term finds a longer one of
            // its concept stored already.
            let mut order: Vec<usize> = (0..group.terms.len()).collect();
            order.sort_by_key(|&i| std::cmp::Reverse(group.terms[i].len()));
            let mut offsets = vec![0u64; group.terms.len()];
            stored.clear();
            for i in order {
                let term = &group.terms[i];
                offsets[i] = if let Some(pos) = find(carrier_term, term) {
                    heap_at + pos as u64
                } else if let Some(o) = stored
                    .iter()
                    .find_map(|&(j, o)| find(&group.terms[j], term).map(|pos| o + pos as u64))
                {
                    o
                } else {
                    let o = carriers_len + rest.len;
                    rest.write_bytes(term).ctx("staging terms")?;
                    stored.push((i, o));
                    o
                };
            }
            for (r, offset) in group.records.iter_mut().zip(offsets) {
                r.term_offset = U32::new(
                    u32::try_from(offset)
                        .map_err(|_| ImportError::Inconsistent("terms over 4 GiB".into()))?,
                );
                out.record(r).ctx("staging descriptions")?;
            }
        }
        let mut rest = rest.into_reader().ctx("reading terms back")?;
        io::copy(&mut rest, &mut carriers).ctx("staging terms")?;
        carriers.count = carriers.len;
        self.stages.attach(SectionKind::TermHeap, carriers);
        self.stages.attach(SectionKind::Descriptions, out);
        entries.push(PreferredTermEntry {
            offset: U32::new(index[n]),
            len: U16::new(0),
        });
        self.stages
            .put_records(SectionKind::PreferredTermIndex, &entries)
            .ctx("staging preferred terms")
    }

    /// The word index: an fst of folded words and their postings.
    pub(super) fn word_index(&mut self, ranked: Sorted<Pair32>) -> Result<(), ImportError> {
        let t = Instant::now();
        self.observer.stage("word index", 0);
        let fst = self.stages.detached().ctx("staging the word index")?;
        let offsets = self.stages.detached().ctx("staging the word index")?;
        let postings = self.stages.detached().ctx("staging the word index")?;
        let text_err =
            |e: txmap_text::TextError| ImportError::Inconsistent(format!("word index: {e}"));
        let mut writer = txmap_text::IndexWriter::new(fst, offsets, postings).map_err(text_err)?;
        let mut first = txmap_text::FirstWordsWriter::new(
            self.stages.detached().ctx("staging the word index")?,
        );
        let mut current: Option<u32> = None;
        let mut list: Vec<u32> = Vec::new();
        let mut firsts: Vec<bool> = Vec::new();
        let mut total = 0u64;
        for p in ranked {
            let p = p.ctx("reading sorted words")?;
            if current != Some(p.key) {
                if let Some(w) = current {
                    let header = writer
                        .push(self.vocabulary[w as usize].as_bytes(), &list)
                        .map_err(text_err)?;
                    (first.push_list(header, firsts.iter().copied()))
                        .ctx("staging the word index")?;
                }
                current = Some(p.key);
                list.clear();
                firsts.clear();
            }
            // Pairs sort by ordinal, then first-word bit: a word twice in
            // a term is one posting, first if either is.
            let (ordinal, is_first) = (p.value >> 1, p.value & 1 == 1);
            if list.last() == Some(&ordinal) {
                if let Some(f) = firsts.last_mut() {
                    *f |= is_first;
                }
            } else {
                list.push(ordinal);
                firsts.push(is_first);
                total += 1;
            }
        }
        if let Some(w) = current {
            let header = writer
                .push(self.vocabulary[w as usize].as_bytes(), &list)
                .map_err(text_err)?;
            (first.push_list(header, firsts.iter().copied())).ctx("staging the word index")?;
        }
        let (mut first, bits) = first.finish().ctx("staging the word index")?;
        first.count = bits.div_ceil(8);
        let done = writer.into_inner().map_err(text_err)?;
        let (mut fst, mut offsets, mut postings) = (done.fst, done.offsets, done.postings);
        let words = self.vocabulary.len() as u64;
        fst.count = fst.len;
        offsets.count = words + 1;
        // Chunked lists: counted in bytes, as the closures are.
        postings.count = postings.len;
        self.stages.attach(SectionKind::WordFst, fst);
        self.stages.attach(SectionKind::WordPostingsIndex, offsets);
        self.stages.attach(SectionKind::WordPostings, postings);
        self.stages.attach(SectionKind::WordFirstWords, first);
        self.vocabulary = Vec::new();
        self.count("words", words);
        self.count("postings", total);
        self.done("word index", t, total);
        Ok(())
    }
}

/// The first tab-separated field of refset extra columns, as an SCTID.
fn first_sctid(extra: &[u8]) -> Option<u64> {
    let field = extra.split(|&b| b == b'\t').next()?;
    txmap_rf2::sctid::parse(field).ok().map(|(id, _)| id)
}

/// One concept's descriptions as staged, read back in order.
#[derive(Default)]
struct ConceptTerms {
    /// The ordinal of the first.
    first: u32,
    records: Vec<DescriptionRecord>,
    terms: Vec<Vec<u8>>,
}

impl ConceptTerms {
    /// Reads concept `c`'s descriptions (those from `next` whose concept
    /// is `c`; descriptions are sorted by concept).
    fn read(
        &mut self,
        facts: &DescriptionFacts,
        c: u32,
        next: &mut u32,
        records: &mut impl Read,
        terms: &mut impl Read,
    ) -> Result<(), ImportError> {
        self.first = *next;
        self.records.clear();
        self.terms.clear();
        let mut raw = [0u8; size_of::<DescriptionRecord>()];
        while facts.concept.get(*next as usize) == Some(&c) {
            records
                .read_exact(&mut raw)
                .ctx("reading descriptions back")?;
            let r = DescriptionRecord::read_from_bytes(&raw)
                .map_err(|_| ImportError::Inconsistent("description record size".into()))?;
            let mut term = vec![0; usize::from(r.term_len.get())];
            terms.read_exact(&mut term).ctx("reading terms back")?;
            self.records.push(r);
            self.terms.push(term);
            *next += 1;
        }
        Ok(())
    }

    /// The carrier of preferred term `p` (a description ordinal among
    /// these): the first fully specified name that starts with it and
    /// goes on, else `p`.
    fn carrier(&self, p: u32, facts: &DescriptionFacts) -> u32 {
        let term = &self.terms[(p - self.first) as usize];
        let is_fsn = |d: u32| facts.flags.get(d as usize).is_some_and(|f| f & 0b100 != 0);
        (self.first..)
            .zip(&self.terms)
            .find(|&(d, t)| is_fsn(d) && t.len() > term.len() && t.starts_with(term))
            .map_or(p, |(d, _)| d)
    }
}

/// Where `needle` first occurs in `hay`, if it does (and is not empty:
/// an empty term takes no bytes anywhere).
fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() {
        return Some(0);
    }
    if needle.len() > hay.len() {
        return None;
    }
    hay.windows(needle.len()).position(|w| w == needle)
}
