//! The values the store hands out: small copies of records with ordinals
//! and codes resolved to SCTIDs, borrowing strings from the edition bytes.

use txmap_format::SectionKind;
use txmap_format::chunked::{Chunked, Unchunk};
use txmap_format::packed::{Packed, Unpack};
use txmap_format::schema::RefsetKind;
use zerocopy::little_endian::U32;

use crate::StoreError;

/// Whether an edition is a published release or a pre-release build.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Status {
    Published,
    Unpublished,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Published => "published",
            Status::Unpublished => "unpublished",
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What an edition file is: parsed from its metadata on open.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    /// `http://snomed.info/sct/{module}`.
    pub edition_uri: String,
    /// `http://snomed.info/sct/{module}/version/{YYYYMMDD}`.
    pub version_uri: String,
    /// SCTID of the edition's module.
    pub edition_module: u64,
    /// The release's effective time as the integer YYYYMMDD.
    pub effective_time: u32,
    pub status: Status,
    /// The language refset whose preferred terms `preferred_term` returns.
    pub default_language_refset: u64,
    /// Version of the txmap that wrote the file.
    pub txmap_version: String,
}

/// One row of the section table, for `txmap inspect`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionInfo {
    /// The section's kind name, or `#code` for a kind this reader does not
    /// know (readers skip those).
    pub name: String,
    pub code: u32,
    pub offset: u64,
    pub len: u64,
    /// Records (or bytes, for heaps) as the writer counted them.
    pub count: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Concept {
    pub id: u64,
    pub ordinal: u32,
    pub active: bool,
    /// Sufficiently defined (otherwise primitive).
    pub defined: bool,
    /// SCTID of the module.
    pub module: u64,
    /// YYYYMMDD.
    pub effective_time: u32,
}

/// A concept's own facts by ordinal, read from its record alone:
/// [`Concept`] without the two SCTID lookups, for callers that test many
/// concepts (ECL concept filters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConceptFacts {
    pub active: bool,
    pub defined: bool,
    /// Ordinal of the module concept.
    pub module_ord: u32,
    /// YYYYMMDD.
    pub effective_time: u32,
    /// The concept is the root or one of its descendants: in ECL's `*`
    /// hierarchy (the record's `IN_HIERARCHY` flag).
    pub in_hierarchy: bool,
}

/// A description or text definition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Description<'a> {
    pub id: u64,
    /// Index in the edition's description table.
    pub ordinal: u32,
    /// SCTID of the described concept.
    pub concept: u64,
    pub active: bool,
    pub module: u64,
    pub effective_time: u32,
    /// FSN, synonym or definition SCTID (see [`crate::sctid`]); 0 if none.
    pub type_id: u64,
    /// Case significance SCTID; 0 if none.
    pub case_significance: u64,
    /// Language code, e.g. `en`.
    pub language: &'a str,
    pub term: &'a str,
}

/// A description's record viewed in place, read field by field: what
/// description filters test for every description of many concepts, where
/// building each [`Description`] (SCTIDs resolved) cost more than the
/// tests. Codes come checked against the edition's tables, so a caller
/// may index tables of its own by them.
#[derive(Clone, Copy, Debug)]
pub struct DescriptionRow<'e> {
    pub ordinal: u32,
    pub(crate) record: &'e txmap_format::schema::DescriptionRecord,
    pub(crate) kinds: &'e DescriptionKindTable,
}

impl DescriptionRow<'_> {
    pub fn id(&self) -> u64 {
        self.record.id.get()
    }

    /// Whether the description is active (false when its kind is past
    /// the table, a damaged file, which the other accessors report).
    pub fn active(&self) -> bool {
        (self.kinds.of(self.record))
            .is_ok_and(|k| k.flags & txmap_format::schema::description_flags::ACTIVE != 0)
    }

    /// The ordinal of the module concept (a damaged file may give one out
    /// of range, which accessors report).
    pub fn module_ordinal(&self) -> u32 {
        (self.kinds.of(self.record)).map_or(txmap_format::schema::NO_ORDINAL, |k| k.module.get())
    }

    pub fn effective_time(&self) -> Result<u32, StoreError> {
        Ok(self.kinds.of(self.record)?.effective_time.get())
    }

    /// The type's code: an index into
    /// [`Edition::code_ids`](crate::Edition::code_ids), or
    /// [`NO_CODE`](crate::NO_CODE).
    pub fn type_code(&self) -> Result<u8, StoreError> {
        Ok(self.kinds.of(self.record)?.type_code)
    }

    /// The language's index into
    /// [`Edition::languages`](crate::Edition::languages).
    pub fn language(&self) -> Result<u8, StoreError> {
        Ok(self.kinds.of(self.record)?.language)
    }
}

/// The kinds of description — (module, effective time, type, case
/// significance, language, status) — that description records number
/// (format 6), copied from `DescriptionKinds` on open, where their codes
/// and languages are checked.
#[derive(Debug, Default)]
pub(crate) struct DescriptionKindTable(pub(crate) Vec<txmap_format::schema::DescriptionKindRecord>);

impl DescriptionKindTable {
    /// The kind of `r`; for a number past the table (a damaged file) an
    /// error naming `Descriptions`.
    #[inline]
    pub(crate) fn of(
        &self,
        r: &txmap_format::schema::DescriptionRecord,
    ) -> Result<&txmap_format::schema::DescriptionKindRecord, StoreError> {
        let k = r.kind.get();
        self.0.get(usize::from(k)).ok_or_else(|| {
            StoreError::corrupt(
                SectionKind::Descriptions,
                format!("kind {k} out of range ({} kinds)", self.0.len()),
            )
        })
    }
}

/// A small table of rows (the acceptability sets, the description
/// profiles), copied from its CSR sections on open, where every offset is
/// checked to lie within the rows and none to run backwards: row `i` is
/// `rows[index[i]..index[i + 1]]`.
#[derive(Debug)]
pub(crate) struct CopiedTable<T> {
    pub(crate) index: Vec<u32>,
    pub(crate) rows: Vec<T>,
}

impl<T> Default for CopiedTable<T> {
    fn default() -> Self {
        CopiedTable {
            index: Vec::new(),
            rows: Vec::new(),
        }
    }
}

impl<T> CopiedTable<T> {
    /// How many rows the table has.
    pub(crate) fn len(&self) -> usize {
        self.index.len().saturating_sub(1)
    }

    /// Row `i`; `None` past the table.
    pub(crate) fn row(&self, i: usize) -> Option<&[T]> {
        let (&start, &end) = self.index.get(i).zip(self.index.get(i + 1))?;
        self.rows.get(start as usize..end as usize)
    }
}

/// `code` if it indexes a table of `codes` entries or is `NO_CODE`.
pub(crate) fn checked_code(code: u8, codes: usize, origin: SectionKind) -> Result<u8, StoreError> {
    if code == txmap_format::schema::NO_CODE || usize::from(code) < codes {
        Ok(code)
    } else {
        Err(StoreError::corrupt(
            origin,
            format!("code {code} out of range ({codes} codes)"),
        ))
    }
}

/// An attribute relationship. In [`inbound`](crate::Edition::inbound)
/// lists, `target` is the *source* concept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Relationship {
    pub type_id: u64,
    pub target: u64,
    /// The ordinals of `type_id` and `target`, as stored: callers that
    /// work in ordinals (ECL) need no SCTID lookups.
    pub type_ord: u32,
    pub target_ord: u32,
    pub group: u16,
    /// Characteristic type SCTID (inferred, additional, stated); 0 if none.
    pub characteristic_type: u64,
}

/// An attribute relationship by ordinals, as the file stores it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Link {
    pub type_ord: u32,
    /// The destination, or in an inbound list the source.
    pub target_ord: u32,
    pub group: u16,
}

/// A concrete value by ordinals, as the file stores it; the text is read
/// (and checked) only by [`value`](Self::value).
#[derive(Clone, Copy, Debug)]
pub struct ConcreteLink<'e> {
    pub type_ord: u32,
    pub group: u16,
    pub(crate) heap: &'e [u8],
    pub(crate) offset: u32,
    pub(crate) len: u32,
}

impl<'e> ConcreteLink<'e> {
    /// The value exactly as in RF2: `#12.5`, `"text"`, `true`.
    pub fn value(&self) -> Result<&'e str, StoreError> {
        crate::edition::str_in(
            self.heap,
            SectionKind::ConcreteHeap,
            self.offset,
            self.len as usize,
        )
    }

    /// The value as a number if it is one (`#12.5`), as
    /// `value()?.strip_prefix('#')?.parse::<f64>()` reads it. Plain
    /// decimals of up to 15 digits — every number of a release — are
    /// read from the bytes (exactly: both the digits and the power of ten
    /// are exact doubles, so one division rounds correctly); the rest go
    /// through the standard parser.
    pub fn number(&self) -> Option<f64> {
        let start = self.offset as usize;
        let bytes = self
            .heap
            .get(start..start.checked_add(self.len as usize)?)?;
        let digits = bytes.strip_prefix(b"#")?;
        decimal(digits).or_else(|| std::str::from_utf8(digits).ok()?.parse().ok())
    }
}

/// `-?[0-9]+(\.[0-9]+)?` with at most 15 digits, or `None`.
fn decimal(text: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (negative, text) = match text.strip_prefix(b"-") {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
        // `5.` is for the standard parser.
        Some(dot) if dot + 1 == text.len() => return None,
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &[][..]),
    };
    if whole.is_empty() || whole.len() + fraction.len() > 15 {
        return None;
    }
    let mut m: u64 = 0;
    for &b in whole.iter().chain(fraction) {
        if !b.is_ascii_digit() {
            return None;
        }
        m = m * 10 + u64::from(b - b'0');
    }
    let x = m as f64 / POW10[fraction.len()];
    Some(if negative { -x } else { x })
}

/// A relationship to a concrete value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConcreteValue<'a> {
    pub type_id: u64,
    /// The ordinal of `type_id`.
    pub type_ord: u32,
    pub group: u16,
    pub characteristic_type: u64,
    /// The value exactly as in RF2: `#12.5`, `"text"`.
    pub value: &'a str,
}

/// A reference set in the edition (language refsets excluded: their rows
/// are in [`acceptability`](crate::Edition::acceptability)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefsetInfo<'a> {
    pub id: u64,
    pub kind: RefsetKind,
    /// Active members.
    pub member_count: u32,
    /// RF2 field pattern of the additional columns, e.g. `c` or `sscs`.
    pub pattern: &'a str,
    /// All RF2 column names, `id` to the last additional column.
    pub columns: &'a [String],
}

impl<'a> RefsetInfo<'a> {
    /// The names of the columns after `referencedComponentId`: what
    /// [`Member::field`] indexes.
    pub fn field_names(&self) -> &'a [String] {
        match self
            .columns
            .iter()
            .position(|c| c == "referencedComponentId")
        {
            Some(i) => self.columns.get(i + 1..).unwrap_or_default(),
            None => self.columns.get(6..).unwrap_or_default(),
        }
    }
}

/// A refset member: the latest row of its UUID.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Member<'a> {
    pub refset: u64,
    /// SCTID of the referenced component.
    pub component: u64,
    /// The columns after `referencedComponentId`, tab-joined as in RF2;
    /// empty for simple refsets.
    pub fields: &'a str,
    /// Active members come from [`Edition::members`](crate::Edition::members)
    /// and friends, inactive ones only from
    /// [`Edition::inactive_members_iter`](crate::Edition::inactive_members_iter).
    pub active: bool,
    /// The row's module and effective time; `None` in files before format
    /// 1.3, which did not keep them.
    pub module: Option<u64>,
    pub effective_time: Option<u32>,
}

impl<'a> Member<'a> {
    /// The `i`th column after `referencedComponentId`.
    pub fn field(&self, i: usize) -> Option<&'a str> {
        if self.fields.is_empty() {
            return None;
        }
        // Fields are short: a byte loop beats the general splitter here
        // (member filters read one field of every member of a refset),
        // and memchr too (its call costs more than the few bytes it skips).
        let tab = |s: &str| s.bytes().position(|b| b == b'\t');
        let mut rest = self.fields;
        for _ in 0..i {
            rest = rest.get(tab(rest)? + 1..)?;
        }
        Some(tab(rest).and_then(|t| rest.get(..t)).unwrap_or(rest))
    }

    /// All columns after `referencedComponentId`.
    pub fn field_values(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        let fields = self.fields;
        fields.split('\t').filter(move |_| !fields.is_empty())
    }
}

/// A historical association: `refset` says the concept is replaced by,
/// the same as, possibly equivalent to... `target`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Association {
    pub refset: u64,
    pub target: u64,
}

/// A historical association read backwards, from its target: `source` (a
/// component SCTID, usually an inactive concept) is replaced by, the same
/// as, ... the target, according to `refset`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AssociationSource {
    pub refset: u64,
    pub source: u64,
    /// The source's ordinal, if it is a concept of the edition (as stored:
    /// a damaged file may give one out of range, which accessors report).
    pub source_ordinal: Option<u32>,
}

/// A sorted list of concept ordinals viewed in place (parents, children,
/// ancestors, descendants): `U32`s, a [packed](txmap_format::packed)
/// list (ancestors, since format 4) or a [chunked](txmap_format::chunked)
/// one (descendants, since format 5), as the section stores it. Ordinals
/// come from the file: a damaged file may hold values `>= concept_count`,
/// which [`sctid`](crate::Edition::sctid) and friends then report as errors.
#[derive(Clone, Copy, Debug)]
pub struct Ordinals<'a> {
    repr: Repr<'a>,
}

#[derive(Clone, Copy, Debug)]
enum Repr<'a> {
    Plain(&'a [U32]),
    Packed(Packed<'a>),
    Chunked(Chunked<'a>),
}

impl<'a> Ordinals<'a> {
    pub(crate) fn new(items: &'a [U32]) -> Self {
        Ordinals {
            repr: Repr::Plain(items),
        }
    }

    /// The [packed](txmap_format::packed) list in `bytes`, if they are one.
    pub(crate) fn packed(bytes: &'a [u8]) -> Option<Self> {
        Packed::new(bytes).map(|list| Ordinals {
            repr: Repr::Packed(list),
        })
    }

    /// The [chunked](txmap_format::chunked) list in `bytes`, if they are
    /// one.
    pub(crate) fn chunked(bytes: &'a [u8]) -> Option<Self> {
        Chunked::new(bytes).map(|list| Ordinals {
            repr: Repr::Chunked(list),
        })
    }

    /// The ordinals' bytes in the file.
    pub(crate) fn as_bytes(&self) -> &'a [u8] {
        match self.repr {
            Repr::Plain(items) => zerocopy::IntoBytes::as_bytes(items),
            Repr::Packed(p) => p.as_bytes(),
            Repr::Chunked(c) => c.as_bytes(),
        }
    }

    pub fn len(&self) -> usize {
        match self.repr {
            Repr::Plain(items) => items.len(),
            Repr::Packed(p) => p.len(),
            Repr::Chunked(c) => c.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn first(&self) -> Option<u32> {
        self.iter().next()
    }

    pub fn iter(&self) -> OrdinalsIter<'a> {
        match self.repr {
            Repr::Plain(items) => OrdinalsIter::Plain(items.iter()),
            Repr::Packed(p) => OrdinalsIter::Packed(p.iter()),
            Repr::Chunked(c) => OrdinalsIter::Chunked(c.iter()),
        }
    }

    /// Whether `ordinal` is in the list: a binary search of a plain list
    /// or of the right chunk of a chunked one, a scan of a packed one up
    /// to the first item not below it (packed lists are short).
    pub fn contains(&self, ordinal: u32) -> bool {
        match self.repr {
            Repr::Plain(items) => items.binary_search_by(|o| o.get().cmp(&ordinal)).is_ok(),
            Repr::Packed(p) => p.iter().find(|&o| o >= ordinal) == Some(ordinal),
            Repr::Chunked(c) => c.contains(ordinal),
        }
    }

    /// The index of the first item for which `f` holds. The list's kind
    /// is matched once, then its own loop runs: a search through
    /// [`iter`](Self::iter) matches it at every item, and with a third
    /// kind of list that made `^R *` a fifth slower.
    pub fn position(&self, mut f: impl FnMut(u32) -> bool) -> Option<usize> {
        match self.repr {
            Repr::Plain(items) => items.iter().position(|o| f(o.get())),
            Repr::Packed(p) => p.iter().position(f),
            Repr::Chunked(c) => c.position(f),
        }
    }

    /// Whether `f` holds for some item: [`position`](Self::position).
    pub fn any(&self, f: impl FnMut(u32) -> bool) -> bool {
        self.position(f).is_some()
    }

    pub fn to_vec(&self) -> Vec<u32> {
        let mut out = Vec::new();
        self.append_to(&mut out);
        out
    }

    /// Appends the items to `out`, decoded in one loop of the list's own
    /// kind: a push per item through the iterator enum made `^ R` two and
    /// a half times slower, and was half the merge of a few ancestor lists.
    pub fn append_to(&self, out: &mut Vec<u32>) {
        match self.repr {
            Repr::Plain(items) => out.extend(items.iter().map(|o| o.get())),
            Repr::Packed(p) => p.iter().append_to(out),
            Repr::Chunked(c) => c.append_to(out),
        }
    }

    /// The list with `ordinal` in its place (once). A plain list is copied
    /// around it in one pass (a copy and then an insertion moved a big
    /// list twice); so is a chunked one, chunk by chunk; a packed one is
    /// decoded first, then the tail moved (stepping item by item to the
    /// place cost more).
    pub fn to_vec_with(&self, ordinal: u32) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len() + 1);
        match self.repr {
            Repr::Plain(items) => {
                let (below, rest) = items.split_at(items.partition_point(|o| o.get() < ordinal));
                out.extend(below.iter().map(|o| o.get()));
                if rest.first().map(|o| o.get()) != Some(ordinal) {
                    out.push(ordinal);
                }
                out.extend(rest.iter().map(|o| o.get()));
            }
            Repr::Packed(p) => {
                p.iter().append_to(&mut out);
                let at = out.partition_point(|&o| o < ordinal);
                if out.get(at) != Some(&ordinal) {
                    out.insert(at, ordinal);
                }
            }
            Repr::Chunked(c) => c.append_with(ordinal, &mut out),
        }
        out
    }
}

impl<'a> IntoIterator for Ordinals<'a> {
    type Item = u32;
    type IntoIter = OrdinalsIter<'a>;

    fn into_iter(self) -> OrdinalsIter<'a> {
        self.iter()
    }
}

/// The items of [`Ordinals`], ascending.
#[derive(Clone, Debug)]
pub enum OrdinalsIter<'a> {
    Plain(std::slice::Iter<'a, U32>),
    Packed(Unpack<'a>),
    Chunked(Unchunk<'a>),
}

impl Iterator for OrdinalsIter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self {
            OrdinalsIter::Plain(it) => it.next().map(|o| o.get()),
            OrdinalsIter::Packed(it) => it.next(),
            OrdinalsIter::Chunked(it) => it.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            OrdinalsIter::Plain(it) => it.size_hint(),
            OrdinalsIter::Packed(it) => it.size_hint(),
            OrdinalsIter::Chunked(it) => it.size_hint(),
        }
    }

    fn fold<B, F: FnMut(B, u32) -> B>(self, init: B, mut f: F) -> B {
        // One dispatch per list, not per item: `extend` and `for_each`
        // fold.
        match self {
            OrdinalsIter::Plain(it) => it.fold(init, |acc, o| f(acc, o.get())),
            OrdinalsIter::Packed(it) => it.fold(init, f),
            OrdinalsIter::Chunked(it) => it.fold(init, f),
        }
    }
}

impl ExactSizeIterator for OrdinalsIter<'_> {}
impl std::iter::FusedIterator for OrdinalsIter<'_> {}

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchHit<'a> {
    pub description: Description<'a>,
    /// The ordinal of the description's concept.
    pub concept_ordinal: u32,
    /// How well the term matches the query: smaller is better.
    pub rank: txmap_text::RankKey,
    /// The description is the concept's preferred term in the edition's
    /// default language refset.
    pub preferred: bool,
}

/// The concept records of an edition, viewed in place
/// ([`Edition::concept_table`](crate::Edition::concept_table)).
#[derive(Clone, Copy, Debug)]
pub struct ConceptTable<'a> {
    pub(crate) records: &'a [txmap_format::schema::ConceptRecord],
}

impl ConceptTable<'_> {
    /// [`Edition::concept_facts`](crate::Edition::concept_facts) of
    /// `ordinal`; `None` past the last concept.
    #[inline]
    pub fn facts(&self, ordinal: u32) -> Option<ConceptFacts> {
        self.records.get(ordinal as usize).map(ConceptFacts::of)
    }

    /// The number of concepts.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The ordinals of the concepts whose facts pass `keep`, ascending, in
    /// one pass over the records: a concept filter over every concept is a
    /// scan of one 7-byte column, not a lookup per ordinal of a set built
    /// first.
    pub fn select(&self, mut keep: impl FnMut(&ConceptFacts) -> bool) -> Vec<u32> {
        // Written whatever the test says and kept by moving on: a branch
        // on a test that keeps a random third of the concepts mispredicts.
        let mut out = vec![0u32; self.records.len()];
        let mut kept = 0;
        for (o, r) in (0u32..).zip(self.records) {
            out[kept] = o;
            kept += usize::from(keep(&ConceptFacts::of(r)));
        }
        out.truncate(kept);
        if kept < out.capacity() / 4 {
            out.shrink_to_fit();
        }
        out
    }
}

impl ConceptFacts {
    /// The facts of `r` (a module the release lacks, or a damaged record's,
    /// is an ordinal out of range, which accessors report).
    #[inline]
    pub(crate) fn of(r: &txmap_format::schema::ConceptRecord) -> ConceptFacts {
        use txmap_format::schema::concept_flags;
        ConceptFacts {
            active: r.flags & concept_flags::ACTIVE != 0,
            defined: r.flags & concept_flags::DEFINED != 0,
            module_ord: r.module.get(),
            effective_time: r.effective_time.get(),
            in_hierarchy: r.flags & concept_flags::IN_HIERARCHY != 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(heap: &[u8]) -> ConcreteLink<'_> {
        ConcreteLink {
            type_ord: 0,
            group: 0,
            heap,
            offset: 0,
            len: heap.len() as u32,
        }
    }

    #[test]
    fn plain_and_packed_lists_answer_alike() {
        let items = [2u32, 4, 9, 300, 70_000];
        let plain: Vec<U32> = items.into_iter().map(U32::new).collect();
        let mut bytes = Vec::new();
        txmap_format::packed::pack(&items, &mut bytes).unwrap();
        for l in [Ordinals::new(&plain), Ordinals::packed(&bytes).unwrap()] {
            assert_eq!(l.len(), items.len());
            assert_eq!(l.to_vec(), items);
            assert_eq!(l.first(), Some(2));
            assert_eq!(l.iter().len(), items.len());
            for x in [0, 2, 3, 9, 10, 70_000, 80_000] {
                let mut expected: Vec<u32> = items.to_vec();
                if !expected.contains(&x) {
                    expected.push(x);
                    expected.sort_unstable();
                }
                assert_eq!(l.to_vec_with(x), expected, "with {x}");
            }
            for x in 0..=70_001 {
                assert_eq!(l.contains(x), items.contains(&x), "{x}");
            }
        }
        let empty = Ordinals::packed(&[]).unwrap();
        assert!(empty.is_empty() && empty.first().is_none() && !empty.contains(0));
    }

    #[test]
    fn numbers_read_as_the_standard_parser_reads_them() {
        let values = [
            "#0",
            "#1",
            "#-0",
            "#100",
            "#0.25",
            "#0.1",
            "#0.3",
            "#12.5",
            "#-3.75",
            "#250",
            "#123456789012345",
            "#1234567890123456",
            "#0.000000000000001",
            "#9007199254740993",
            "#1e3",
            "#+5",
            "#5.",
            "#.5",
            "#",
            "#-",
            "#1.2.3",
            "#abc",
            "#1,5",
            "12",
            "\"12\"",
            "#0.1000000000000001",
            "#3.141592653589793",
        ];
        for v in values {
            let expected = v.strip_prefix('#').and_then(|n| n.parse::<f64>().ok());
            let got = link(v.as_bytes()).number();
            assert_eq!(
                got.map(f64::to_bits),
                expected.map(f64::to_bits),
                "{v}: {got:?} against {expected:?}"
            );
        }
        // Every two-decimal value up to 100 takes the fast path and rounds
        // as the standard parser does.
        for i in 0..10_000 {
            let v = format!("#{}.{:02}", i / 100, i % 100);
            let expected: f64 = v[1..].parse().unwrap();
            assert_eq!(link(v.as_bytes()).number(), Some(expected), "{v}");
        }
    }
}
