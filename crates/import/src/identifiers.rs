//! The Identifier file: components' identifiers in other schemes, which
//! ECL names as `scheme#code`.
//!
//! An identifier's key is (scheme, text), and of the rows with one key
//! the latest wins, as for any component. Texts are of any length, so the
//! sorter keys on a 64-bit hash of the text instead, and the rows of one
//! (scheme, hash) — one text, unless two texts collide — are told apart by
//! their texts when read back.

use super::*;

impl Importer<'_> {
    /// `Identifiers` and `IdentifierHeap`.
    pub(super) fn identifiers(&mut self) -> Result<(), ImportError> {
        let t = Instant::now();
        let mut sorter = self.sorter::<IdentifierIn>();
        let mut spill = Spill::new(self.temp).ctx("creating a spill file")?;
        let rows = self.read("identifiers", &[FileKind::Identifier], |imp, ctx, row| {
            let Some(r) = imp.parse(row, IdentifierRow::parse(row))? else {
                return Ok(());
            };
            let text_offset = spill
                .push(r.alternate.as_bytes())
                .ctx("spilling identifiers")?;
            sorter
                .push(IdentifierIn {
                    scheme: r.scheme,
                    hash: identifier_hash(r.alternate),
                    component: r.component,
                    text_offset,
                    effective_time: r.effective_time,
                    source: ctx.source,
                    text_len: r.alternate.len() as u32,
                    active: r.active as u8,
                    pad: [0; 3],
                })
                .ctx("spilling identifiers")
        })?;
        let sorted = self.finish(sorter)?;
        let texts = spill.into_reader().ctx("reading identifiers back")?;
        let mut heap = self.stages.detached().ctx("staging identifiers")?;
        let mut records = self.stages.detached().ctx("staging identifiers")?;
        // One (scheme, hash) at a time: its rows in (time, package) order,
        // with their texts.
        let mut group: Vec<(IdentifierIn, Vec<u8>)> = Vec::new();
        let mut flush = |group: &mut Vec<(IdentifierIn, Vec<u8>)>| -> Result<(), ImportError> {
            // The last row of each text wins; texts in byte order.
            let mut latest: BTreeMap<&[u8], &IdentifierIn> = BTreeMap::new();
            for (r, text) in group.iter() {
                latest.insert(text, r);
            }
            for (text, r) in latest {
                if r.active == 0 {
                    continue;
                }
                let offset = u32::try_from(heap.len)
                    .map_err(|_| ImportError::Inconsistent("identifiers over 4 GiB".into()))?;
                heap.write_bytes(text).ctx("staging identifiers")?;
                records
                    .record(&IdentifierRecord {
                        scheme: U64::new(r.scheme),
                        hash: U64::new(r.hash),
                        component: U64::new(r.component),
                        text_offset: U32::new(offset),
                        text_len: U32::new(text.len() as u32),
                    })
                    .ctx("staging identifiers")?;
            }
            group.clear();
            Ok(())
        };
        for r in sorted {
            let r = r.ctx("reading sorted identifiers")?;
            if group
                .first()
                .is_some_and(|(g, _)| (g.scheme, g.hash) != (r.scheme, r.hash))
            {
                flush(&mut group)?;
            }
            let mut text = Vec::new();
            texts
                .read_into(r.text_offset, r.text_len as usize, &mut text)
                .ctx("reading identifiers back")?;
            group.push((r, text));
        }
        flush(&mut group)?;
        let n = records.count;
        heap.count = heap.len;
        self.stages.attach(SectionKind::Identifiers, records);
        self.stages.attach(SectionKind::IdentifierHeap, heap);
        self.count("identifiers", n);
        self.done("identifiers", t, rows);
        Ok(())
    }
}
