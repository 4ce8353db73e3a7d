//! Relationships: the is-a hierarchy and its closure, attribute
//! relationships in both directions, stated relationships, concrete values.

use super::*;
use txmap_format::packed::NotAscending;

impl Importer<'_> {
    /// Layers relationship rows and returns the active ones by ordinal.
    pub(super) fn relationship_rows(
        &mut self,
        stage: &'static str,
        kind: FileKind,
    ) -> Result<(u64, Sorted<RelationshipIn>), ImportError> {
        let mut sorter = self.sorter::<RelationshipIn>();
        let rows = self.read(stage, &[kind], |imp, ctx, row| {
            let Some(r) = imp.parse(row, RelationshipRow::parse(row))? else {
                return Ok(());
            };
            sorter
                .push(RelationshipIn::of(&r, ctx.source))
                .ctx("spilling relationships")
        })?;
        let sorted = self.finish(sorter)?;
        Ok((rows, sorted))
    }

    pub(super) fn relationships(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let n = self.concepts.len();
        let (rows, sorted) = self.relationship_rows("relationships", FileKind::Relationship)?;
        let mut isa: Vec<(u32, u32)> = Vec::new();
        let mut out = self.sorter::<Edge>();
        let mut inbound = self.sorter::<Edge>();
        let mut by_type = self.small_sorter::<TypeSource>();
        let mut active = 0u64;
        for r in Latest::new(sorted) {
            let r = r?;
            let Some(e) = self.edge(&r, "relationship")? else {
                continue;
            };
            active += 1;
            if r.type_id == ids::IS_A {
                isa.push((e.key, e.other));
                continue;
            }
            out.push(e).ctx("spilling relationships")?;
            by_type
                .push(TypeSource {
                    type_ord: e.type_ord,
                    source: e.key,
                })
                .ctx("spilling relationships")?;
            inbound
                .push(Edge {
                    key: e.other,
                    other: e.key,
                    ..e
                })
                .ctx("spilling relationships")?;
        }
        self.count("relationships", active);
        self.count("is_a", isa.len() as u64);

        isa.sort_unstable();
        isa.dedup();
        let parents = Csr::from_sorted_pairs(n, &isa);
        drop(isa);
        let children = parents.transpose();
        let ancestors = graph::ancestors(&parents).map_err(|c| {
            ImportError::Inconsistent(format!(
                "is-a cycle through concept {}",
                self.concepts.id(c)
            ))
        })?;
        self.count("closure", ancestors.items.len() as u64);
        let descendants = ancestors.transpose();
        let mut in_hierarchy = vec![false; n];
        if let Some(root) = self.ordinal(ids::ROOT) {
            in_hierarchy[root as usize] = true;
            for &d in descendants.row(root as usize) {
                in_hierarchy[d as usize] = true;
            }
        }
        self.in_hierarchy = in_hierarchy;
        for (kind_index, kind_items, csr) in [
            (SectionKind::ParentsIndex, SectionKind::Parents, &parents),
            (SectionKind::ChildrenIndex, SectionKind::Children, &children),
        ] {
            self.stage_csr(kind_index, kind_items, csr)?;
        }
        // Ancestors are a few ordinals spread over the whole range: packed
        // (varint gaps). Descendants are copied whole by `<< X`: chunked
        // (two-byte low halves), which copy in a vectorised loop where
        // varints decoded ten times slower than a `memcpy`.
        self.stage_encoded(
            SectionKind::AncestorsIndex,
            SectionKind::Ancestors,
            &ancestors,
            txmap_format::packed::pack,
        )?;
        self.stage_encoded(
            SectionKind::DescendantsIndex,
            SectionKind::Descendants,
            &descendants,
            txmap_format::chunked::chunk,
        )?;
        drop((parents, children, ancestors, descendants));

        let out = self.finish(out)?;
        self.stage_edges(out, SectionKind::AttributesIndex, SectionKind::Attributes)?;
        let inbound = self.finish(inbound)?;
        self.stage_edges(inbound, SectionKind::InboundIndex, SectionKind::Inbound)?;
        let by_type = self.finish(by_type)?;
        self.stage_type_index(
            by_type,
            SectionKind::AttributeTypesIndex,
            SectionKind::AttributeTypeSources,
        )?;
        self.done("relationships", t, rows);
        Ok(())
    }

    /// An active relationship by ordinals, keyed by its source; `None` for
    /// an inactive one or (in lenient mode) one that refers to a concept the
    /// release lacks.
    pub(super) fn edge(
        &mut self,
        r: &RelationshipIn,
        what: &str,
    ) -> Result<Option<Edge>, ImportError> {
        if r.active == 0 {
            return Ok(None);
        }
        let (Some(from), Some(to), Some(ty)) = (
            self.refer(r.from, what, r.id)?,
            self.refer(r.to, what, r.id)?,
            self.refer(r.type_id, what, r.id)?,
        ) else {
            return Ok(None);
        };
        Ok(Some(Edge {
            key: from,
            group: self.group(r.group, r.id)?,
            type_ord: ty,
            other: to,
            characteristic: self.codes.code(r.characteristic)?,
            pad: [0; 3],
        }))
    }

    pub(super) fn group(&mut self, group: u32, id: u64) -> Result<u32, ImportError> {
        if group > u32::from(u16::MAX) {
            self.problem(ImportError::Inconsistent(format!(
                "relationship {id} has group {group}, above {}",
                u16::MAX
            )))?;
            return Ok(u32::from(u16::MAX));
        }
        Ok(group)
    }

    pub(super) fn stage_csr(
        &mut self,
        index: SectionKind,
        items: SectionKind,
        csr: &Csr,
    ) -> Result<(), ImportError> {
        self.stages
            .put_index(index, &csr.offsets)
            .ctx("staging the hierarchy")?;
        let le: Vec<U32> = csr.items.iter().map(|&v| U32::new(v)).collect();
        self.stages
            .put(items, le.as_bytes(), csr.items.len() as u64)
            .ctx("staging the hierarchy")
    }

    /// Stages a CSR whose lists are each encoded by `encode`
    /// ([packed](txmap_format::packed::pack) or
    /// [chunked](txmap_format::chunked::chunk)): the index holds byte
    /// offsets.
    pub(super) fn stage_encoded(
        &mut self,
        index: SectionKind,
        items: SectionKind,
        csr: &Csr,
        encode: fn(&[u32], &mut Vec<u8>) -> Result<(), NotAscending>,
    ) -> Result<(), ImportError> {
        let mut bytes = Vec::new();
        let mut offsets = Vec::with_capacity(csr.len() + 1);
        offsets.push(0);
        for i in 0..csr.len() {
            encode(csr.row(i), &mut bytes)
                .map_err(|e| ImportError::Inconsistent(format!("{}: {e}", items.name())))?;
            let end = u32::try_from(bytes.len())
                .map_err(|_| ImportError::Inconsistent(format!("{} passes 4 GiB", items.name())))?;
            offsets.push(end);
        }
        self.stages
            .put_index(index, &offsets)
            .ctx("staging the hierarchy")?;
        self.stages
            .put(items, &bytes, bytes.len() as u64)
            .ctx("staging the hierarchy")
    }

    /// Writes a type index (`AttributeTypesIndex` or `ConcreteTypesIndex`
    /// and its sources) from (type, source) pairs in order: each type's
    /// distinct sources, and one entry per type plus the closing one.
    pub(super) fn stage_type_index(
        &mut self,
        sorted: Sorted<TypeSource>,
        index: SectionKind,
        items: SectionKind,
    ) -> Result<(), ImportError> {
        let mut entries: Vec<TypeSourcesEntry> = Vec::new();
        let mut last: Option<TypeSource> = None;
        let mut count: u32 = 0;
        let staged = self.stages.get(items).ctx("staging the type index")?;
        for r in sorted {
            let r = r.ctx("reading sorted attribute types")?;
            if last.is_some_and(|l| l == r) {
                continue;
            }
            if last.is_none_or(|l| l.type_ord != r.type_ord) {
                entries.push(TypeSourcesEntry {
                    type_ord: U32::new(r.type_ord),
                    start: U32::new(count),
                });
            }
            staged
                .record(&U32::new(r.source))
                .ctx("staging the type index")?;
            count = count
                .checked_add(1)
                .ok_or_else(|| ImportError::Inconsistent("type index over 2^32 entries".into()))?;
            last = Some(r);
        }
        entries.push(TypeSourcesEntry {
            type_ord: U32::new(u32::MAX),
            start: U32::new(count),
        });
        self.stages
            .put(index, entries.as_bytes(), entries.len() as u64)
            .ctx("staging the type index")
    }

    pub(super) fn stage_edges(
        &mut self,
        sorted: Sorted<Edge>,
        index: SectionKind,
        items: SectionKind,
    ) -> Result<(), ImportError> {
        let n = self.concepts.len();
        let mut csr = CsrBuilder::new(n);
        let staged = self.stages.get(items).ctx("staging relationships")?;
        let kinds = &mut self.relationship_kinds;
        for e in sorted {
            let e = e.ctx("reading sorted relationships")?;
            csr.add(e.key).map_err(ImportError::Inconsistent)?;
            staged
                .record(&RelationshipRecord {
                    target: narrow(e.other, "concept ordinal")?,
                    kind: U16::new(kinds.number((e.type_ord, e.characteristic, e.group as u16))?),
                })
                .ctx("staging relationships")?;
        }
        self.stages
            .put_index(index, &csr.finish(n))
            .ctx("staging relationships")
    }

    /// Stages `RelationshipKinds`, the table the staged relationships'
    /// kind codes index.
    pub(super) fn stage_relationship_kinds(&mut self) -> Result<(), ImportError> {
        let records: Vec<RelationshipKindRecord> = (self.relationship_kinds.values().iter())
            .map(|&(type_ord, code, group)| RelationshipKindRecord {
                type_ord: U32::new(type_ord),
                characteristic_code: code,
                group: U16::new(group),
            })
            .collect();
        self.stages
            .put_records(SectionKind::RelationshipKinds, &records)
            .ctx("staging relationship kinds")
    }

    pub(super) fn stated(&mut self) -> Result<(), ImportError> {
        if !self.releases.iter().any(|r| {
            r.files()
                .iter()
                .any(|f| f.kind == FileKind::StatedRelationship)
        }) {
            return Ok(());
        }
        let t = Instant::now();
        let (rows, sorted) =
            self.relationship_rows("stated relationships", FileKind::StatedRelationship)?;
        let mut out = self.sorter::<Edge>();
        let mut active = 0;
        for r in Latest::new(sorted) {
            if let Some(e) = self.edge(&r?, "stated relationship")? {
                active += 1;
                out.push(e).ctx("spilling stated relationships")?;
            }
        }
        let out = self.finish(out)?;
        self.stage_edges(out, SectionKind::StatedIndex, SectionKind::Stated)?;
        self.count("stated_relationships", active);
        self.done("stated relationships", t, rows);
        Ok(())
    }

    pub(super) fn concrete_values(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let n = self.concepts.len();
        let mut sorter = self.sorter::<ConcreteIn>();
        let mut spill = Spill::new(self.temp).ctx("creating a spill file")?;
        let rows = self.read(
            "concrete values",
            &[FileKind::RelationshipConcreteValues],
            |imp, ctx, row| {
                let Some(r) = imp.parse(row, ConcreteValueRow::parse(row))? else {
                    return Ok(());
                };
                let value_offset = spill
                    .push(r.value.as_bytes())
                    .ctx("spilling concrete values")?;
                sorter
                    .push(ConcreteIn {
                        id: r.id,
                        effective_time: r.effective_time,
                        source: ctx.source,
                        from: r.source,
                        type_id: r.type_id,
                        characteristic: r.characteristic_type,
                        value_offset,
                        value_len: r.value.len() as u32,
                        group: r.group,
                        active: r.active as u8,
                        pad: [0; 7],
                    })
                    .ctx("spilling concrete values")
            },
        )?;
        let sorted = self.finish(sorter)?;
        let mut out = self.sorter::<ConcreteOut>();
        let mut by_type = self.small_sorter::<TypeSource>();
        for r in Latest::new(sorted) {
            let r = r?;
            if r.active == 0 {
                continue;
            }
            let (Some(from), Some(ty)) = (
                self.refer(r.from, "concrete value", r.id)?,
                self.refer(r.type_id, "concrete value", r.id)?,
            ) else {
                continue;
            };
            let group = self.group(r.group, r.id)?;
            let characteristic = self.codes.code(r.characteristic)?;
            by_type
                .push(TypeSource {
                    type_ord: ty,
                    source: from,
                })
                .ctx("spilling concrete values")?;
            out.push(ConcreteOut {
                from,
                group,
                type_ord: ty,
                value_len: r.value_len,
                value_offset: r.value_offset,
                characteristic,
                pad: [0; 7],
            })
            .ctx("spilling concrete values")?;
        }
        let values = spill.into_reader().ctx("reading concrete values back")?;
        let out = self.finish(out)?;
        let mut csr = CsrBuilder::new(n);
        let mut heap = self.stages.detached().ctx("staging concrete values")?;
        let mut buf = Vec::new();
        let mut count = 0;
        let staged = self
            .stages
            .get(SectionKind::Concrete)
            .ctx("staging concrete values")?;
        for r in out {
            let r = r.ctx("reading sorted concrete values")?;
            csr.add(r.from).map_err(ImportError::Inconsistent)?;
            values
                .read_into(r.value_offset, r.value_len as usize, &mut buf)
                .ctx("reading concrete values back")?;
            let offset = u32::try_from(heap.len)
                .map_err(|_| ImportError::Inconsistent("concrete values over 4 GiB".into()))?;
            heap.write_bytes(&buf).ctx("staging concrete values")?;
            let kind = (r.type_ord, r.characteristic, r.group as u16);
            let value_len = u16::try_from(r.value_len).map_err(|_| {
                ImportError::Inconsistent(format!(
                    "a concrete value of {} bytes: at most 65,535",
                    r.value_len
                ))
            })?;
            staged
                .record(&ConcreteRecord {
                    kind: U16::new(self.relationship_kinds.number(kind)?),
                    value_offset: U32::new(offset),
                    value_len: U16::new(value_len),
                })
                .ctx("staging concrete values")?;
            count += 1;
        }
        heap.count = heap.len;
        self.stages.attach(SectionKind::ConcreteHeap, heap);
        self.stages
            .put_index(SectionKind::ConcreteIndex, &csr.finish(n))
            .ctx("staging concrete values")?;
        let by_type = self.finish(by_type)?;
        self.stage_type_index(
            by_type,
            SectionKind::ConcreteTypesIndex,
            SectionKind::ConcreteTypeSources,
        )?;
        self.count("concrete_values", count);
        self.done("concrete values", t, rows);
        Ok(())
    }
}
