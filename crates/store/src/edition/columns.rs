//! A refset's active members as columns, for scans that test every member
//! (ECL member filters). A filter on a column is tested once per distinct
//! value of the column, then each member costs a code and a table look-up
//! instead of splitting its text: most columns of a release hold a few
//! distinct values (map categories, correlations, value ids) against tens
//! of thousands of members. Format 1.4 keeps the codes (`MemberColumns`,
//! `MemberCodes`, `MemberDictionaryIndex`, `MemberDictionary`); the
//! members' module and effective time were coded since 1.3.

use txmap_format::U24;
use txmap_format::schema::{MemberColumnsEntry, MemberRecord, MemberValueRecord, UNCODED};
use zerocopy::little_endian::{U16, U32};

use super::{
    Edition, MemberList, MemberView, SectionKind::*, concept_in_range, refset_index, str_in,
};
use crate::{Member, StoreError};

/// The active members of one refset by column; see the module doc. Member
/// `i` is the `i`th of [`Edition::members_iter`].
#[derive(Clone, Copy, Debug)]
pub struct MemberTable<'e> {
    refset: u64,
    /// Index of the first member in `Members`.
    start: usize,
    records: &'e [MemberRecord],
    /// The members' concept ordinals (`MemberConcepts`), one a record.
    concepts: &'e [U24],
    concept_count: u32,
    view: MemberView<'e>,
    /// The refset's codes, `records.len() × stride`, row-major; empty with
    /// `stride` 0 in files before format 1.4.
    codes: &'e [U16],
    stride: usize,
    /// `stride + 1` offsets into `values`.
    dictionaries: &'e [U32],
    values: &'e [MemberValueRecord],
    heap: &'e [u8],
}

impl<B: AsRef<[u8]>> Edition<B> {
    /// Refset `refset`'s active members by column (empty for a refset the
    /// edition lacks). Its shape is checked here: a damaged file is an
    /// error now, not a wrong code later.
    pub fn member_table(&self, refset: u64) -> Result<MemberTable<'_>, StoreError> {
        let i = refset_index(&self.refsets, refset);
        let (start, records) = match i.and_then(|i| self.refsets.get(i)) {
            Some(e) => self.member_records(e, MemberList::Active)?,
            None => (0, &[][..]),
        };
        let all: &[U24] = self.recs(MemberConcepts)?;
        let concepts = all.get(start..start + records.len()).ok_or_else(|| {
            StoreError::corrupt(
                MemberConcepts,
                format!(
                    "{} entries, members to {}",
                    all.len(),
                    start + records.len()
                ),
            )
        })?;
        let mut table = MemberTable {
            refset,
            start,
            records,
            concepts,
            concept_count: self.concept_count(),
            view: self.member_view(MemberList::Active)?,
            codes: &[],
            stride: 0,
            dictionaries: &[],
            values: &[],
            heap: self.raw(MemberFieldHeap)?,
        };
        let (Some(i), true) = (i, self.present(MemberColumns)) else {
            return Ok(table);
        };
        let entries: &[MemberColumnsEntry] = self.recs(MemberColumns)?;
        let (Some(e), Some(next)) = (entries.get(i), entries.get(i + 1)) else {
            return Err(StoreError::corrupt(
                MemberColumns,
                format!(
                    "{} entries for {} refsets",
                    entries.len(),
                    self.refsets.len()
                ),
            ));
        };
        let codes = e.codes.get() as usize..next.codes.get() as usize;
        let slots = e.columns.get() as usize..next.columns.get() as usize + 1;
        let stride = slots.len().saturating_sub(1);
        let all_codes: &[U16] = self.recs(MemberCodes)?;
        let index: &[U32] = self.recs(MemberDictionaryIndex)?;
        match (all_codes.get(codes.clone()), index.get(slots)) {
            (Some(c), Some(d)) if c.len() == records.len().saturating_mul(stride) => {
                table.codes = c;
                table.dictionaries = d;
                table.stride = stride;
                table.values = self.recs(MemberDictionary)?;
            }
            _ => {
                return Err(StoreError::corrupt(
                    MemberColumns,
                    format!(
                        "refset {refset}: codes {codes:?} for {} members of {stride} columns",
                        records.len()
                    ),
                ));
            }
        }
        Ok(table)
    }
}

impl<'e> MemberTable<'e> {
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The SCTID of member `i`'s referenced component.
    pub fn component(&self, i: usize) -> Option<u64> {
        self.records.get(i).map(|m| m.component.get())
    }

    /// The ordinal of member `i`'s referenced component, if that is a
    /// concept of the edition (an ordinal out of range, from a damaged
    /// file, is an error).
    pub fn concept(&self, i: usize) -> Result<Option<u32>, StoreError> {
        match self.concepts.get(i).map(|o| o.get()) {
            None | Some(U24::MAX) => Ok(None),
            Some(o) => concept_in_range(o, self.concept_count).map(|()| Some(o)),
        }
    }

    /// Member `i`, whole.
    pub fn member(&self, i: usize) -> Result<Member<'e>, StoreError> {
        let m = self.records.get(i).ok_or_else(|| {
            StoreError::corrupt(Members, format!("no member {i} of refset {}", self.refset))
        })?;
        let fields = str_in(
            self.heap,
            MemberFieldHeap,
            m.fields_offset.get(),
            m.fields_len.get() as usize,
        )?;
        self.view.member(self.refset, self.start + i, m, fields)
    }

    /// The modules that [`module_code`](Self::module_code) indexes (format
    /// 1.3; empty before).
    pub fn modules(&self) -> impl ExactSizeIterator<Item = u64> + 'e {
        self.view.modules.iter().map(|m| m.get())
    }

    /// The effective times that [`time_code`](Self::time_code) indexes.
    pub fn times(&self) -> impl ExactSizeIterator<Item = u32> + 'e {
        self.view.times.iter().map(|t| t.get())
    }

    /// Member `i`'s module, as an index into [`modules`](Self::modules);
    /// `None` in files before format 1.3. (A damaged file may give an index
    /// past the end.)
    pub fn module_code(&self, i: usize) -> Option<usize> {
        let m = self.view.meta(self.start + i)?;
        Some(m.module.get() as usize)
    }

    /// Member `i`'s effective time, as an index into [`times`](Self::times).
    pub fn time_code(&self, i: usize) -> Option<usize> {
        let m = self.view.meta(self.start + i)?;
        Some(m.time.get() as usize)
    }

    /// How many columns after `referencedComponentId` are coded: all of the
    /// refset's in format 1.4, none before.
    pub fn columns(&self) -> usize {
        self.stride
    }

    /// The distinct values of column `column`, in code order.
    pub fn dictionary(&self, column: usize) -> Result<Vec<&'e str>, StoreError> {
        let (Some(start), Some(end)) = (
            self.dictionaries.get(column),
            self.dictionaries.get(column + 1),
        ) else {
            return Ok(Vec::new());
        };
        let values = self
            .values
            .get(start.get() as usize..end.get() as usize)
            .ok_or_else(|| {
                StoreError::corrupt(
                    MemberDictionaryIndex,
                    format!("column {column} of refset {}: past the values", self.refset),
                )
            })?;
        values
            .iter()
            .map(|v| {
                str_in(
                    self.heap,
                    MemberDictionary,
                    v.offset.get(),
                    v.len.get() as usize,
                )
            })
            .collect()
    }

    /// Member `i`'s value in column `column`, as an index into the
    /// column's [`dictionary`](Self::dictionary); `None` when the value is
    /// not coded (the dictionary was full, or the column is not kept):
    /// then [`member`](Self::member)'s text holds it. A damaged file may
    /// give an index past the dictionary, which callers treat as `None`.
    pub fn code(&self, i: usize, column: usize) -> Option<usize> {
        if column >= self.stride {
            return None;
        }
        let code = self.codes.get(i.checked_mul(self.stride)? + column)?.get();
        (code != UNCODED).then_some(code as usize)
    }
}
