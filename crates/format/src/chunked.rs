//! Ascending ordinal lists stored as two-byte low halves, grouped by
//! their high halves.
//!
//! A concept's descendants are the largest closure lists (a hierarchy's
//! top has a third of the edition below it) and `<< X` copies them whole.
//! Packed as varint gaps ([`packed`](crate::packed)) they were a byte an
//! item, but decoding 30,000 items took ten times the `memcpy` of their
//! `u32`s. A chunked list keeps the copy a straight loop the compiler
//! vectorises — each item is its chunk's high half joined to a stored low
//! half — and stores two bytes an item, not four: every ordinal below
//! 65,536 shares one chunk, and an edition of a million concepts has 16.
//!
//! A non-empty list of `n` items in `k` chunks (runs of items with the
//! same high half) is, every number a little-endian `u16`:
//!
//! ```text
//! k − 1
//! k × (high half, item count − 1)   the chunks, ascending by high half
//! n × low half                      each chunk's items, ascending
//! ```
//!
//! The empty list is no bytes. The counts less one let a `u16` say 65,536
//! (a chunk of every value) and `k − 1` say as many chunks as a `u32` has
//! high halves, so any strictly ascending `u32` list can be written.
//!
//! [`Chunked::new`] checks only what is cheap: an even number of bytes,
//! enough of them for the chunk headers. Any such bytes are safe to read:
//! a damaged list (counts that do not add up to the low halves there,
//! high or low halves out of order) yields its items as stored — fewer
//! than its length, out of order or out of range, never a panic or a read
//! out of bounds. Readers check ordinals against the concept count where they use
//! them, as they do for plain lists, and the file's checksums find the
//! rest.

use std::iter::FusedIterator;

use zerocopy::little_endian::U16;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::packed::NotAscending;

/// One chunk's header: its high half and its item count less one.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct ChunkHeader {
    high: U16,
    count_less_one: U16,
}

impl ChunkHeader {
    fn high(&self) -> u32 {
        u32::from(self.high.get()) << 16
    }

    fn count(&self) -> usize {
        usize::from(self.count_less_one.get()) + 1
    }
}

/// Appends `items` (strictly ascending) to `out`, chunked. Returns the
/// first item that is not above the one before it, if any, having written
/// nothing.
pub fn chunk(items: &[u32], out: &mut Vec<u8>) -> Result<(), NotAscending> {
    NotAscending::check(items)?;
    if items.is_empty() {
        return Ok(());
    }
    let chunks: Vec<&[u32]> = items.chunk_by(|a, b| a >> 16 == b >> 16).collect();
    // At most 65,536 chunks of at most 65,536 items each: ascending `u32`s
    // have no more high or low halves than that.
    let put = |n: usize, out: &mut Vec<u8>| out.extend_from_slice(&(n as u16).to_le_bytes());
    out.reserve(2 + 4 * chunks.len() + 2 * items.len());
    put(chunks.len() - 1, out);
    for c in &chunks {
        put((c[0] >> 16) as usize, out);
        put(c.len() - 1, out);
    }
    for &item in items {
        put((item & 0xFFFF) as usize, out);
    }
    Ok(())
}

/// A chunked list viewed in place.
#[derive(Clone, Copy, Debug)]
pub struct Chunked<'a> {
    bytes: &'a [u8],
    chunks: &'a [ChunkHeader],
    lows: &'a [U16],
}

impl Chunked<'static> {
    /// The empty list.
    pub const EMPTY: Chunked<'static> = Chunked {
        bytes: &[],
        chunks: &[],
        lows: &[],
    };
}

impl<'a> Chunked<'a> {
    /// The list in `bytes`, or `None` if they are not one: an odd number
    /// of bytes, or fewer than the chunk headers need. The chunks' counts
    /// are not added up here (a set's members are opened by the thousand
    /// to learn their lengths): a list whose counts do not match its low
    /// halves is read as far as both go.
    pub fn new(bytes: &'a [u8]) -> Option<Chunked<'a>> {
        let (chunks, lows) = match bytes {
            [] => (&[][..], &[][..]),
            [a, b, rest @ ..] if rest.len() % 2 == 0 => {
                let k = usize::from(u16::from_le_bytes([*a, *b])) + 1;
                let (headers, lows) = rest.split_at_checked(4 * k)?;
                (headers, lows)
            }
            _ => return None,
        };
        Some(Chunked {
            bytes,
            chunks: <[ChunkHeader]>::ref_from_bytes(chunks).ok()?,
            lows: <[U16]>::ref_from_bytes(lows).ok()?,
        })
    }

    /// The number of items (in a damaged list, of low halves: it may
    /// yield fewer).
    pub fn len(&self) -> usize {
        self.lows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lows.is_empty()
    }

    /// The list's bytes, headers and all.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Where the low halves start in the list's bytes: after the
    /// headers. Item `i`'s low half is at byte `lows_offset() + 2 * i`.
    pub fn lows_offset(&self) -> usize {
        self.bytes.len() - 2 * self.lows.len()
    }

    /// Each chunk's high half (shifted into place) and its low halves, in
    /// order: a damaged list's runs end where its low halves do.
    pub fn runs(&self) -> impl Iterator<Item = (u32, &'a [U16])> + use<'a> {
        let mut lows = self.lows;
        self.chunks.iter().map(move |c| {
            let (run, rest) = lows.split_at(c.count().min(lows.len()));
            lows = rest;
            (c.high(), run)
        })
    }

    /// Whether `item` is in the list: its chunk found among the headers,
    /// then a binary search of that chunk's low halves.
    pub fn contains(&self, item: u32) -> bool {
        let (high, low) = (item & !0xFFFF, (item & 0xFFFF) as u16);
        self.runs()
            .find(|&(h, _)| h >= high)
            .is_some_and(|(h, run)| {
                h == high && run.binary_search_by(|l| l.get().cmp(&low)).is_ok()
            })
    }

    /// The index of the first item for which `f` holds, run by run: a
    /// loop over each chunk's low halves, not an iterator that asks at
    /// every item whether its chunk has ended.
    pub fn position(&self, mut f: impl FnMut(u32) -> bool) -> Option<usize> {
        let mut at = 0;
        for (high, run) in self.runs() {
            if let Some(i) = run.iter().position(|l| f(high | u32::from(l.get()))) {
                return Some(at + i);
            }
            at += run.len();
        }
        None
    }

    /// Appends the items to `out`: each chunk is one loop of joins, which
    /// the compiler vectorises.
    pub fn append_to(&self, out: &mut Vec<u32>) {
        out.reserve(self.len());
        for (high, run) in self.runs() {
            out.extend(run.iter().map(|l| high | u32::from(l.get())));
        }
    }

    /// Appends the items to `out` with `item` in its place (once), in the
    /// same loops as [`append_to`](Self::append_to): `<< X` is `X`'s
    /// descendants with `X` among them, and an insertion after the copy
    /// moved the list's tail a second time.
    pub fn append_with(&self, item: u32, out: &mut Vec<u32>) {
        out.reserve(self.len() + 1);
        let (high, low) = (item & !0xFFFF, (item & 0xFFFF) as u16);
        let mut pending = true;
        for (h, run) in self.runs() {
            let at = match h.cmp(&high) {
                std::cmp::Ordering::Less => run.len(),
                std::cmp::Ordering::Equal => run.partition_point(|l| l.get() < low),
                std::cmp::Ordering::Greater => 0,
            };
            let (before, after) = run.split_at(if pending { at } else { run.len() });
            out.extend(before.iter().map(|l| h | u32::from(l.get())));
            if pending && (h >= high) {
                pending = false;
                if after.first().map(|l| h | u32::from(l.get())) != Some(item) {
                    out.push(item);
                }
            }
            out.extend(after.iter().map(|l| h | u32::from(l.get())));
        }
        if pending {
            out.push(item);
        }
    }

    pub fn iter(&self) -> Unchunk<'a> {
        Unchunk {
            chunks: self.chunks,
            lows: self.lows,
            high: 0,
            left_in_chunk: 0,
        }
    }
}

impl<'a> IntoIterator for Chunked<'a> {
    type Item = u32;
    type IntoIter = Unchunk<'a>;

    fn into_iter(self) -> Unchunk<'a> {
        self.iter()
    }
}

/// The items of a [`Chunked`] list, in order.
#[derive(Clone, Debug)]
pub struct Unchunk<'a> {
    chunks: &'a [ChunkHeader],
    lows: &'a [U16],
    high: u32,
    left_in_chunk: usize,
}

impl Iterator for Unchunk<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left_in_chunk == 0 {
            let (c, rest) = self.chunks.split_first()?;
            self.chunks = rest;
            self.high = c.high();
            self.left_in_chunk = c.count();
        }
        let (low, rest) = self.lows.split_first()?;
        self.lows = rest;
        self.left_in_chunk -= 1;
        Some(self.high | u32::from(low.get()))
    }

    /// Exact for an undamaged list; a damaged one may end early.
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.lows.len(), Some(self.lows.len()))
    }

    /// A chunk at a time (`extend`, `for_each`): a loop over its low
    /// halves, with no test of where the chunk ends.
    fn fold<B, F: FnMut(B, u32) -> B>(self, init: B, mut f: F) -> B {
        let (run, mut lows) = self.lows.split_at(self.left_in_chunk.min(self.lows.len()));
        let high = self.high;
        let mut acc = run
            .iter()
            .fold(init, |acc, l| f(acc, high | u32::from(l.get())));
        for c in self.chunks {
            let (run, rest) = lows.split_at(c.count().min(lows.len()));
            lows = rest;
            let high = c.high();
            acc = run
                .iter()
                .fold(acc, |acc, l| f(acc, high | u32::from(l.get())));
        }
        acc
    }
}

impl ExactSizeIterator for Unchunk<'_> {}
impl FusedIterator for Unchunk<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(items: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        chunk(items, &mut out).unwrap();
        let c = Chunked::new(&out).unwrap();
        assert_eq!(c.len(), items.len());
        assert_eq!(c.iter().collect::<Vec<_>>(), items);
        let mut appended = vec![7];
        c.append_to(&mut appended);
        assert_eq!(appended[1..], *items);
        // With one more item, wherever it falls: before, between, inside
        // a chunk, after, already there.
        let mut probes = vec![0, 1, 0xFFFF, 0x1_0000, 0x1_0001, u32::MAX];
        probes.extend(
            items
                .iter()
                .step_by(1 + items.len() / 64)
                .flat_map(|&i| [i, i.wrapping_sub(1), i.wrapping_add(1)]),
        );
        for p in probes {
            let mut with = vec![7];
            c.append_with(p, &mut with);
            let mut expected = items.to_vec();
            if let Err(at) = expected.binary_search(&p) {
                expected.insert(at, p);
            }
            assert_eq!(with[1..], expected, "{p} into {items:?}");
        }
        assert_eq!(c.position(|_| false), None);
        for &i in items {
            assert_eq!(c.position(|x| x >= i), items.iter().position(|&x| x >= i));
            assert!(c.contains(i));
            for near in [i.wrapping_sub(1), i.wrapping_add(1), i ^ 0x1_0000] {
                assert_eq!(c.contains(near), items.binary_search(&near).is_ok());
            }
        }
        out
    }

    #[test]
    fn lists_round_trip() {
        assert!(round_trip(&[]).is_empty());
        round_trip(&[0]);
        round_trip(&[u32::MAX]);
        round_trip(&[0, u32::MAX]);
        round_trip(&[5, 6, 7, 200, 70_000, 3_000_000, 4_000_000_000]);
        // A whole chunk: 65,536 items, a count that needs its "less one".
        let whole: Vec<u32> = (0x2_0000..0x3_0000).chain([0x3_0005]).collect();
        round_trip(&whole);
    }

    #[test]
    fn bytes_are_the_documented_halves() {
        // Two chunks: high 0 with 2 items, high 1 with 1 item.
        assert_eq!(
            round_trip(&[3, 0x1234, 0x1_0002]),
            [
                1, 0, // k − 1
                0, 0, 1, 0, // high 0, count − 1 = 1
                1, 0, 0, 0, // high 1, count − 1 = 0
                3, 0, 0x34, 0x12, 2, 0, // the low halves
            ]
        );
    }

    #[test]
    fn folding_reads_what_stepping_reads() {
        let mut items = Vec::new();
        let mut x = 7u32;
        for i in 0..3_000u32 {
            x += if i % 97 == 0 { 40_000 + i } else { 1 + i % 5 };
            items.push(x);
        }
        let mut bytes = Vec::new();
        chunk(&items, &mut bytes).unwrap();
        let c = Chunked::new(&bytes).unwrap();
        for skip in [0, 1, 3, 500, 2_999, 3_000] {
            let mut it = c.iter();
            it.by_ref().take(skip).for_each(drop);
            assert_eq!(it.len(), items.len() - skip);
            let folded: Vec<u32> = it.clone().fold(Vec::new(), |mut v, i| {
                v.push(i);
                v
            });
            let mut stepped = Vec::new();
            for i in it {
                stepped.push(i);
            }
            assert_eq!(folded, items[skip..]);
            assert_eq!(stepped, items[skip..]);
        }
    }

    #[test]
    fn headers_that_do_not_fit_are_refused() {
        // Odd, or too short for its headers.
        assert!(Chunked::new(&[0]).is_none());
        assert!(Chunked::new(&[0, 0, 0, 0, 0]).is_none());
        assert!(Chunked::new(&[1, 0, 0, 0, 0, 0]).is_none());
        assert!(Chunked::new(&[0, 0, 0, 0, 0, 0, 5, 0]).is_some());
    }

    #[test]
    fn counts_that_do_not_add_up_end_the_list_early() {
        // One chunk of two items over one low half, and of one over two.
        for bytes in [
            &[0, 0, 0, 0, 1, 0, 5, 0][..],
            &[0, 0, 0, 0, 0, 0, 5, 0, 6, 0],
        ] {
            let c = Chunked::new(bytes).unwrap();
            assert_eq!(c.iter().collect::<Vec<_>>(), [5]);
            assert_eq!(c.iter().fold(0, |n, _| n + 1), 1);
            let mut out = Vec::new();
            c.append_to(&mut out);
            assert_eq!(out, [5]);
        }
    }

    #[test]
    fn any_bytes_read_without_panic() {
        let mut any = Vec::new();
        let mut accepted = 0;
        for seed in 0..20_000u32 {
            any.clear();
            let mut x = seed.wrapping_mul(2_654_435_761) | 1;
            let len = 2 * (seed % 11) as usize;
            for i in 0..len {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                // Small counts often enough that some lists are accepted.
                any.push(if i % 2 == 1 { (x % 3) as u8 } else { x as u8 });
            }
            if let Some(c) = Chunked::new(&any) {
                accepted += 1;
                let items: Vec<u32> = c.iter().collect();
                assert!(items.len() <= c.len());
                assert_eq!(c.iter().fold(0, |n, _| n + 1), items.len());
                let mut appended = Vec::new();
                c.append_to(&mut appended);
                assert_eq!(appended, items);
                for &i in &items {
                    let _ = c.contains(i);
                }
                let mut with = Vec::new();
                c.append_with(x, &mut with);
                assert!(with.len() <= items.len() + 1);
            }
        }
        assert!(accepted > 100, "only {accepted} random lists were readable");
    }
}
