//! Every refset but the language refsets, the module dependency rows that
//! name the edition, and the small code tables.

use super::*;
use crate::numbered::Numbered;

impl Importer<'_> {
    /// Every refset but the language refsets: `Refsets`, `Members`,
    /// `MemberFieldHeap`, `ComponentMembers`, `RefsetSchemaHeap`,
    /// `AssociationTargets`; and the module dependency rows that name the
    /// edition.
    pub(super) fn refsets(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let kinds: Vec<FileKind> = [
            FileKind::OwlExpression,
            FileKind::Association,
            FileKind::AttributeValue,
            FileKind::SimpleRefset,
            FileKind::SimpleMap,
            FileKind::ComplexMap,
            FileKind::ExtendedMap,
            FileKind::MrcmDomain,
            FileKind::MrcmAttributeDomain,
            FileKind::MrcmAttributeRange,
            FileKind::MrcmModuleScope,
            FileKind::ModuleDependency,
            FileKind::DescriptionType,
            FileKind::RefsetDescriptor,
            FileKind::OtherRefset,
        ]
        .into();
        let mut sorter = self.sorter::<MemberIn>();
        let mut spill = Spill::new(self.temp).ctx("creating a spill file")?;
        let rows = self.read("refsets", &kinds, |imp, ctx, row| {
            let Some(r) = imp.parse(row, RefsetRow::parse(row))? else {
                return Ok(());
            };
            imp.refset_info
                .entry(r.refset)
                .or_insert_with(|| RefsetInfo {
                    kind: refset_kind(ctx.file.kind),
                    schema: format!("{}\t{}", ctx.file.pattern, ctx.header.join("\t")),
                });
            let fields_offset = spill.push(r.extra).ctx("spilling refset fields")?;
            sorter
                .push(MemberIn {
                    uuid: r.id,
                    effective_time: r.effective_time,
                    source: ctx.source,
                    refset: r.refset,
                    component: r.referenced_component,
                    fields_offset,
                    module: r.module,
                    fields_len: r.extra.len() as u32,
                    active: r.active as u8,
                    pad: [0; 3],
                })
                .ctx("spilling refset members")
        })?;
        let sorted = self.finish(sorter)?;
        let fields = spill.into_reader().ctx("reading refset fields back")?;
        let mut out = self.sorter::<MemberOut>();
        let mut buf = Vec::new();
        // The members' modules and effective times, coded in `MemberMeta`.
        let (mut modules, mut times) = (BTreeSet::new(), BTreeSet::new());
        for m in Latest::new(sorted) {
            let m = m?;
            modules.insert(m.module);
            times.insert(m.effective_time);
            if m.active == 1 && m.refset == ids::MODULE_DEPENDENCY {
                fields
                    .read_into(m.fields_offset, m.fields_len as usize, &mut buf)
                    .ctx("reading refset fields back")?;
                let source_effective_time = std::str::from_utf8(&buf)
                    .ok()
                    .and_then(|f| f.split('\t').next())
                    .and_then(|t| t.parse().ok())
                    .unwrap_or(0);
                self.dependencies.push(identity::Dependency {
                    module: m.module,
                    target: m.component,
                    source_effective_time,
                });
            }
            out.push(MemberOut {
                refset: m.refset,
                component: m.component,
                fields_offset: m.fields_offset,
                module: m.module,
                fields_len: m.fields_len,
                effective_time: m.effective_time,
                active: m.active,
                pad: [0; 7],
            })
            .ctx("spilling refset members")?;
        }
        let modules: Vec<u64> = modules.into_iter().collect();
        let times: Vec<u32> = times.into_iter().collect();
        if modules.len() > usize::from(u16::MAX) || times.len() > usize::from(u16::MAX) {
            return Err(ImportError::Inconsistent(format!(
                "refset members of {} modules at {} effective times: at most 65,535 of each",
                modules.len(),
                times.len()
            )));
        }
        // Each member's (module, time) codes, numbered as a pair (format 6).
        let mut stamps = Numbered::new("(module, effective time) pairs of refset members");
        let mut meta = |m: &MemberOut| -> Result<U16, ImportError> {
            let module = modules.binary_search(&m.module).unwrap_or(0) as u16;
            let time = times.binary_search(&m.effective_time).unwrap_or(0) as u16;
            stamps.number((module, time)).map(U16::new)
        };
        let out = self.finish(out)?;
        let mut heap = self.stages.detached().ctx("staging refset members")?;
        let mut links = self.sorter::<ComponentLink>();
        // (target ordinal, member index) of association rows whose target
        // is a concept here.
        let mut targets = self.sorter::<AssociationLink>();
        let mut current: Option<(u64, bool)> = None;
        let mut refsets: Vec<RefsetRecord> = Vec::new();
        let mut schema_heap: Vec<u8> = Vec::new();
        let staging = |imp: &Self| imp.stages.detached().ctx("staging refset members");
        let (mut members, mut meta_out) = (staging(self)?, staging(self)?);
        let (mut inactive_members, mut inactive_meta) = (staging(self)?, staging(self)?);
        // The concept ordinals of each refset's active members, chunked,
        // with one byte offset per refset. Members come by component
        // SCTID, which is not ordinal order: a refset's are gathered, then
        // sorted (at most one per concept).
        let mut refset_concepts = staging(self)?;
        let mut concepts_index: Vec<U32> = Vec::new();
        let mut ordinals: Vec<u32> = Vec::new();
        let mut chunked: Vec<u8> = Vec::new();
        // Each active member's concept ordinal, in member order.
        let mut member_concepts = staging(self)?;
        // Each refset's fields as columns (`MemberColumns` and friends).
        let mut coder = ColumnCoder {
            max: self
                .options
                .member_dictionary_max
                .min(MEMBER_DICTIONARY_MAX),
            columns: Vec::new(),
        };
        let (mut member_codes, mut dictionary) = (staging(self)?, staging(self)?);
        let mut columns: Vec<MemberColumnsEntry> = Vec::new();
        let mut dictionary_index: Vec<U32> = Vec::new();
        let mut inactive: Vec<RefsetRecord> = Vec::new();
        let mut inactive_index = 0u32;
        let mut index = 0u32;
        for m in out {
            let m = m.ctx("reading sorted refset members")?;
            fields
                .read_into(m.fields_offset, m.fields_len as usize, &mut buf)
                .ctx("reading refset fields back")?;
            let offset = u32::try_from(heap.len)
                .map_err(|_| ImportError::Inconsistent("refset fields over 4 GiB".into()))?;
            heap.write_bytes(&buf).ctx("staging refset members")?;
            let record = MemberRecord {
                component: U64::new(m.component),
                fields_offset: U32::new(offset),
                fields_len: U32::new(m.fields_len),
            };
            if m.active == 0 {
                // After every active member: kept for `{{ M active = 0 }}`,
                // in no index.
                let stamp = meta(&m)?;
                inactive_members
                    .record(&record)
                    .and_then(|()| inactive_meta.record(&stamp))
                    .ctx("staging inactive refset members")?;
                push_member(&mut inactive, m.refset, inactive_index);
                inactive_index = inactive_index.checked_add(1).ok_or_else(|| {
                    ImportError::Inconsistent("more than 2^32 inactive refset members".into())
                })?;
                continue;
            }
            let stamp = meta(&m)?;
            members
                .record(&record)
                .and_then(|()| meta_out.record(&stamp))
                .ctx("staging refset members")?;
            if refsets.last().is_none_or(|r| r.refset.get() != m.refset) {
                flush_ordinals(&mut ordinals, &mut chunked, &mut refset_concepts)?;
                concepts_index.push(U32::new(u32_count(refset_concepts.len, "refset concepts")?));
                coder.flush(&mut dictionary_index, &mut dictionary)?;
                columns.push(MemberColumnsEntry {
                    codes: U32::new(u32_count(member_codes.count, "member codes")?),
                    columns: U32::new(u32_count(dictionary_index.len() as u64, "member columns")?),
                });
                let names = self
                    .refset_info
                    .get(&m.refset)
                    .map(|i| field_count(&i.schema));
                coder.start(names.unwrap_or(0));
            }
            for code in coder.codes(&buf, offset) {
                member_codes
                    .record(&U16::new(code))
                    .ctx("staging refset member codes")?;
            }
            // The component's ordinal, if it is a concept here (ordinals
            // fit in u32: checked when concepts are read).
            let ordinal = self.ordinal(m.component);
            ordinals.extend(ordinal);
            member_concepts
                .record(&U24::saturating(ordinal.unwrap_or(u32::MAX)))
                .ctx("staging refset members")?;
            links
                .push(ComponentLink {
                    component: m.component,
                    member: index,
                    pad: 0,
                })
                .ctx("spilling refset members")?;
            let is_association = match current {
                Some((refset, is)) if refset == m.refset => is,
                _ => {
                    let is = self
                        .refset_info
                        .get(&m.refset)
                        .is_some_and(|i| i.kind == RefsetKind::Association);
                    current = Some((m.refset, is));
                    is
                }
            };
            if is_association
                && let Some(target) = association_target(&buf).and_then(|t| self.ordinal(t))
            {
                let source = ordinal.unwrap_or(NO_ORDINAL);
                targets
                    .push(AssociationLink {
                        target,
                        member: index,
                        source,
                        pad: 0,
                    })
                    .ctx("spilling association targets")?;
            }
            push_member(&mut refsets, m.refset, index);
            index = index
                .checked_add(1)
                .ok_or_else(|| ImportError::Inconsistent("more than 2^32 refset members".into()))?;
        }
        let mut schemas: BTreeMap<u64, (u32, u32)> = BTreeMap::new();
        for r in refsets.iter_mut().chain(inactive.iter_mut()) {
            if let Some(info) = self.refset_info.get(&r.refset.get()) {
                let (offset, len) = *schemas.entry(r.refset.get()).or_insert_with(|| {
                    let at = (schema_heap.len() as u32, info.schema.len() as u32);
                    schema_heap.extend_from_slice(info.schema.as_bytes());
                    at
                });
                r.kind = info.kind as u8;
                r.schema_offset = U32::new(offset);
                r.schema_len = U32::new(len);
            }
        }
        coder.flush(&mut dictionary_index, &mut dictionary)?;
        columns.push(MemberColumnsEntry {
            codes: U32::new(u32_count(member_codes.count, "member codes")?),
            columns: U32::new(u32_count(dictionary_index.len() as u64, "member columns")?),
        });
        dictionary_index.push(U32::new(u32_count(dictionary.count, "member values")?));
        let n = columns.len() as u64;
        self.stages
            .put(SectionKind::MemberColumns, columns.as_bytes(), n)
            .ctx("staging refsets")?;
        let n = dictionary_index.len() as u64;
        self.stages
            .put(
                SectionKind::MemberDictionaryIndex,
                dictionary_index.as_bytes(),
                n,
            )
            .ctx("staging refsets")?;
        self.stages.attach(SectionKind::MemberCodes, member_codes);
        self.stages
            .attach(SectionKind::MemberDictionary, dictionary);
        let n_inactive = inactive.len() as u64;
        self.stages
            .put(
                SectionKind::InactiveRefsets,
                inactive.as_bytes(),
                n_inactive,
            )
            .ctx("staging refsets")?;
        let modules: Vec<U64> = modules.iter().map(|&m| U64::new(m)).collect();
        self.stages
            .put_records(SectionKind::MemberModules, &modules)
            .ctx("staging refsets")?;
        let times: Vec<U32> = times.iter().map(|&t| U32::new(t)).collect();
        self.stages
            .put_records(SectionKind::MemberTimes, &times)
            .ctx("staging refsets")?;
        heap.count = heap.len;
        self.stages.attach(SectionKind::MemberFieldHeap, heap);
        self.stages.attach(SectionKind::Members, members);
        flush_ordinals(&mut ordinals, &mut chunked, &mut refset_concepts)?;
        concepts_index.push(U32::new(u32_count(refset_concepts.len, "refset concepts")?));
        refset_concepts.count = refset_concepts.len;
        let n_index = concepts_index.len() as u64;
        self.stages
            .put(
                SectionKind::RefsetConceptsIndex,
                concepts_index.as_bytes(),
                n_index,
            )
            .ctx("staging refsets")?;
        self.stages
            .attach(SectionKind::RefsetConcepts, refset_concepts);
        self.stages
            .attach(SectionKind::MemberConcepts, member_concepts);
        self.stages.attach(SectionKind::MemberMeta, meta_out);
        let table: Vec<MemberMetaRecord> = (stamps.values().iter())
            .map(|&(module, time)| MemberMetaRecord {
                module: U16::new(module),
                time: U16::new(time),
            })
            .collect();
        self.stages
            .put_records(SectionKind::MemberMetaTable, &table)
            .ctx("staging refsets")?;
        self.stages
            .attach(SectionKind::InactiveMembers, inactive_members);
        self.stages
            .attach(SectionKind::InactiveMemberMeta, inactive_meta);
        let n_refsets = refsets.len() as u64;
        self.stages
            .put(SectionKind::Refsets, refsets.as_bytes(), n_refsets)
            .ctx("staging refsets")?;
        let schema_len = schema_heap.len() as u64;
        self.stages
            .put(SectionKind::RefsetSchemaHeap, &schema_heap, schema_len)
            .ctx("staging refsets")?;
        let links = self.finish(links)?;
        let staged = self
            .stages
            .get(SectionKind::ComponentMembers)
            .ctx("staging refset members")?;
        for l in links {
            let l = l.ctx("reading sorted refset members")?;
            staged
                .record(&ComponentMemberEntry {
                    component: U64::new(l.component),
                    member: narrow(l.member, "active refset member")?,
                })
                .ctx("staging refset members")?;
        }
        let targets = self.finish(targets)?;
        let staged = self
            .stages
            .get(SectionKind::AssociationTargets)
            .ctx("staging association targets")?;
        // Where each block of targets starts: entry `b` is the count of
        // entries whose target is below block `b`.
        let blocks = self.concepts.len().div_ceil(TARGET_BLOCK as usize);
        let mut block_starts = Vec::with_capacity(blocks + 1);
        for t in targets {
            let t = t.ctx("reading sorted association targets")?;
            let block = (t.target / TARGET_BLOCK) as usize;
            while block_starts.len() <= block.min(blocks) {
                block_starts.push(staged.count as u32);
            }
            staged
                .record(&AssociationTargetEntry {
                    target: narrow(t.target, "association target ordinal")?,
                    member: narrow(t.member, "active refset member")?,
                    // `U24::MAX` says "no concept", so no ordinal may be it.
                    source: match t.source {
                        NO_ORDINAL => U24::saturating(NO_ORDINAL),
                        o if o < U24::MAX => narrow(o, "association source ordinal")?,
                        o => {
                            return Err(ImportError::Inconsistent(format!(
                                "association source ordinal {o} is the no-concept mark or past it"
                            )));
                        }
                    },
                })
                .ctx("staging association targets")?;
        }
        let association_targets = staged.count;
        block_starts.resize(blocks + 1, association_targets as u32);
        self.stages
            .put_index(SectionKind::AssociationTargetBlocks, &block_starts)
            .ctx("staging association targets")?;
        self.count("refsets", n_refsets);
        self.count("association_targets", association_targets);
        self.count("refset_members", u64::from(index));
        self.count("inactive_refset_members", u64::from(inactive_index));
        self.done("refsets", t, rows);
        Ok(())
    }

    pub(super) fn small_sections(&mut self) -> Result<(), ImportError> {
        let codes: Vec<U64> = self.codes.ids.iter().map(|&i| U64::new(i)).collect();
        self.stages
            .put_records(SectionKind::Codes, &codes)
            .ctx("staging codes")?;
        let mut languages = String::new();
        for l in &self.languages {
            languages.push_str(l);
            languages.push('\n');
        }
        self.stages
            .put(
                SectionKind::Languages,
                languages.as_bytes(),
                self.languages.len() as u64,
            )
            .ctx("staging languages")
    }
}

/// At most this many distinct values of one refset column are coded
/// (`MemberDictionary`); later new values are [`UNCODED`], read from the
/// member's text. One less than the codes a `u16` holds.
pub const MEMBER_DICTIONARY_MAX: usize = UNCODED as usize;

/// At most this many bytes of one refset column's distinct values are held
/// while its refset is written (the dictionary's keys); past it, new values
/// are [`UNCODED`]. With [`MEMBER_DICTIONARY_MAX`], this bounds the
/// memory that coding the columns takes, whatever the release.
pub const MEMBER_DICTIONARY_BYTES: usize = 4 << 20;

/// The columns of the refset being written, coded as they come: each
/// column's distinct values in order of first appearance, each value as
/// the range of its first occurrence in `MemberFieldHeap`.
struct ColumnCoder {
    /// Values coded per column.
    max: usize,
    columns: Vec<ColumnDictionary>,
}

#[derive(Default)]
struct ColumnDictionary {
    codes: HashMap<Box<[u8]>, u16>,
    bytes: usize,
    values: Vec<MemberValueRecord>,
}

impl ColumnCoder {
    /// Begins a refset of `columns` columns.
    fn start(&mut self, columns: usize) {
        self.columns.clear();
        self.columns.resize_with(columns, ColumnDictionary::default);
    }

    /// The codes of one member, `fields` its tab-joined columns, staged at
    /// `offset` of `MemberFieldHeap`: one per column, a missing column
    /// [`UNCODED`].
    fn codes<'s>(&'s mut self, fields: &'s [u8], offset: u32) -> impl Iterator<Item = u16> + 's {
        let mut values = (!fields.is_empty()).then(|| fields.split(|&b| b == b'\t'));
        let mut at = offset;
        let max = self.max;
        self.columns.iter_mut().map(move |column| {
            let Some(value) = values.as_mut().and_then(Iterator::next) else {
                return UNCODED;
            };
            let here = at;
            at = at.saturating_add(value.len() as u32 + 1);
            if let Some(&code) = column.codes.get(value) {
                return code;
            }
            if column.values.len() >= max || column.bytes + value.len() > MEMBER_DICTIONARY_BYTES {
                return UNCODED;
            }
            let code = column.values.len() as u16;
            column.bytes += value.len();
            column.codes.insert(value.into(), code);
            column.values.push(MemberValueRecord {
                offset: U32::new(here),
                len: U32::new(value.len() as u32),
            });
            code
        })
    }

    /// Writes the refset's dictionaries, one slot each in `index`.
    fn flush(
        &mut self,
        index: &mut Vec<U32>,
        dictionary: &mut stage::Staged,
    ) -> Result<(), ImportError> {
        for column in self.columns.drain(..) {
            index.push(U32::new(u32_count(dictionary.count, "member values")?));
            for v in &column.values {
                dictionary.record(v).ctx("staging refset member values")?;
            }
        }
        Ok(())
    }
}

/// Writes one refset's concept ordinals as a chunked list, ascending
/// and once each (a component may be a member in several rows: maps), and
/// empties them; `buf` is scratch.
fn flush_ordinals(
    ordinals: &mut Vec<u32>,
    buf: &mut Vec<u8>,
    out: &mut Staged,
) -> Result<(), ImportError> {
    ordinals.sort_unstable();
    ordinals.dedup();
    buf.clear();
    txmap_format::chunked::chunk(ordinals, buf)
        .map_err(|_| ImportError::Inconsistent("refset concepts not ascending".into()))?;
    out.write_bytes(buf).ctx("staging refset members")?;
    ordinals.clear();
    Ok(())
}

/// The columns after `referencedComponentId` in a refset's schema
/// (`pattern TAB header…`), as the store counts them.
fn field_count(schema: &str) -> usize {
    let columns: Vec<&str> = schema.split('\t').skip(1).collect();
    match columns.iter().position(|&c| c == "referencedComponentId") {
        Some(i) => columns.len() - i - 1,
        None => columns.len().saturating_sub(6),
    }
}

fn u32_count(n: u64, what: &str) -> Result<u32, ImportError> {
    u32::try_from(n).map_err(|_| ImportError::Inconsistent(format!("more than 2^32 {what}")))
}

/// Counts member `index` into its refset's record, opening one if it is
/// the refset's first (members come grouped by refset).
fn push_member(refsets: &mut Vec<RefsetRecord>, refset: u64, index: u32) {
    match refsets.last_mut() {
        Some(r) if r.refset.get() == refset => r.member_count = U32::new(r.member_count.get() + 1),
        _ => refsets.push(RefsetRecord {
            refset: U64::new(refset),
            first_member: U32::new(index),
            member_count: U32::new(1),
            schema_offset: U32::new(0),
            schema_len: U32::new(0),
            kind: RefsetKind::Other as u8,
            reserved: [0; 7],
        }),
    }
}

/// The SCTID in an association row's first additional field
/// (`targetComponentId`), if it is one.
fn association_target(fields: &[u8]) -> Option<u64> {
    let first = fields.split(|&b| b == b'\t').next()?;
    if first.is_empty() || first.len() > 18 || !first.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(first).ok()?.parse().ok()
}

fn refset_kind(kind: FileKind) -> RefsetKind {
    match kind {
        FileKind::SimpleRefset => RefsetKind::Simple,
        FileKind::Association => RefsetKind::Association,
        FileKind::AttributeValue => RefsetKind::AttributeValue,
        FileKind::SimpleMap => RefsetKind::SimpleMap,
        FileKind::ComplexMap => RefsetKind::ComplexMap,
        FileKind::ExtendedMap => RefsetKind::ExtendedMap,
        FileKind::MrcmDomain => RefsetKind::MrcmDomain,
        FileKind::MrcmAttributeDomain => RefsetKind::MrcmAttributeDomain,
        FileKind::MrcmAttributeRange => RefsetKind::MrcmAttributeRange,
        FileKind::MrcmModuleScope => RefsetKind::MrcmModuleScope,
        FileKind::ModuleDependency => RefsetKind::ModuleDependency,
        FileKind::OwlExpression => RefsetKind::OwlExpression,
        FileKind::DescriptionType => RefsetKind::DescriptionType,
        FileKind::RefsetDescriptor => RefsetKind::RefsetDescriptor,
        _ => RefsetKind::Other,
    }
}
