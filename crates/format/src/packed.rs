//! Ascending ordinal lists packed as varint gaps.
//!
//! A concept's ancestors are a handful of ordinals spread over the whole
//! ordinal range: stored as `U32`s they were the second-largest section of
//! an edition, four bytes an item when the gaps between items need two or
//! three. A packed list is its length, then the first item, then each gap
//! less one, every number a LEB128 varint (seven bits a byte, low bits
//! first, the high bit set on every byte but a number's last). The empty
//! list is no bytes.
//!
//! (Descendants, mostly near neighbours, would pack to a byte an item too;
//! but `<< X` copies them whole, and decoding 30,000 items took ten times
//! the `memcpy`. They are [chunked](crate::chunked): two bytes an item,
//! copied in a vectorised loop.)
//!
//! The length is stored, not counted, because callers ask for it before
//! they read the items — to size a buffer, to charge a budget, to order
//! a set's lists by size — and counting the bytes of each list was a
//! second pass over it. [`Packed::new`] checks only what is
//! cheap: that the last byte ends a number and that the length is
//! possible for the bytes (one to five bytes a number). Any byte slice is
//! safe to read: a damaged list (a wrong length, a number longer than five
//! bytes, a gap that runs past `u32::MAX`) yields *some* items — fewer
//! than its length if its numbers run out, wrapped, perhaps out of order
//! or out of range — never a panic or a read out of bounds. Readers check
//! ordinals against the concept count as they use them, as they do for
//! plain lists, and the file's checksums find the rest.

use std::iter::FusedIterator;

/// The high bit of a varint byte: more bytes of this number follow.
const MORE: u8 = 0x80;

/// Appends `items` (strictly ascending) to `out`, packed. Returns the
/// first item that is not above the one before it, if any, having written
/// nothing.
pub fn pack(items: &[u32], out: &mut Vec<u8>) -> Result<(), NotAscending> {
    NotAscending::check(items)?;
    if items.is_empty() {
        return Ok(());
    }
    // A list of more than `u32::MAX` items cannot be of ordinals.
    put_varint(items.len() as u32, out);
    let mut previous = None;
    for &item in items {
        let n = match previous {
            None => item,
            Some(p) => item - p - 1,
        };
        put_varint(n, out);
        previous = Some(item);
    }
    Ok(())
}

fn put_varint(mut n: u32, out: &mut Vec<u8>) {
    while n >= u32::from(MORE) {
        out.push((n as u8) | MORE);
        n >>= 7;
    }
    out.push(n as u8);
}

/// [`pack`] was given a list out of order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotAscending {
    pub previous: u32,
    pub item: u32,
}

impl NotAscending {
    /// The first item of `items` that is not above the one before it.
    pub(crate) fn check(items: &[u32]) -> Result<(), NotAscending> {
        match items.windows(2).find(|w| w[1] <= w[0]) {
            Some(w) => Err(NotAscending {
                previous: w[0],
                item: w[1],
            }),
            None => Ok(()),
        }
    }
}

impl std::fmt::Display for NotAscending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "ordinal {} follows {}: an ordinal list must be strictly ascending",
            self.item, self.previous
        )
    }
}

impl std::error::Error for NotAscending {}

/// A packed list viewed in place: the items after its length.
#[derive(Clone, Copy, Debug)]
pub struct Packed<'a> {
    bytes: &'a [u8],
    len: usize,
}

impl<'a> Packed<'a> {
    /// The list in `bytes`, or `None` if its last number is cut off or its
    /// length does not fit its bytes.
    pub fn new(bytes: &'a [u8]) -> Option<Packed<'a>> {
        if bytes.is_empty() {
            return Some(Packed { bytes, len: 0 });
        }
        if bytes.last().is_some_and(|&b| b & MORE != 0) {
            return None;
        }
        let mut header = Unpack {
            bytes,
            left: 1,
            previous: None,
        };
        let len = header.varint()? as usize;
        let items = header.bytes;
        // One to five bytes a number; the empty list is written as nothing.
        if len == 0 || len > items.len() || items.len() > len.saturating_mul(5) {
            return None;
        }
        Some(Packed { bytes: items, len })
    }

    /// The number of items.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The packed items (without the length).
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn iter(&self) -> Unpack<'a> {
        Unpack {
            bytes: self.bytes,
            left: self.len,
            previous: None,
        }
    }
}

impl<'a> IntoIterator for Packed<'a> {
    type Item = u32;
    type IntoIter = Unpack<'a>;

    fn into_iter(self) -> Unpack<'a> {
        self.iter()
    }
}

/// The items of a [`Packed`] list, in order.
#[derive(Clone, Debug)]
pub struct Unpack<'a> {
    bytes: &'a [u8],
    left: usize,
    previous: Option<u32>,
}

impl Unpack<'_> {
    /// The next number: `None` past the end of the bytes (before `left`
    /// reaches zero only in a damaged list).
    #[inline]
    fn varint(&mut self) -> Option<u32> {
        let (&b, rest) = self.bytes.split_first()?;
        self.bytes = rest;
        if b & MORE == 0 {
            return Some(u32::from(b));
        }
        let mut n = u32::from(b & !MORE);
        let mut shift = 7u32;
        loop {
            let (&b, rest) = self.bytes.split_first()?;
            self.bytes = rest;
            if shift < 32 {
                n |= u32::from(b & !MORE) << shift;
            }
            if b & MORE == 0 {
                return Some(n);
            }
            shift += 7;
        }
    }

    /// The next eight items when they are eight one-byte gaps, summed in a
    /// block rather than decoded one by one: a long list of near
    /// neighbours is mostly such runs. `None` (having read nothing) for
    /// the first item, fewer than eight left, or a longer number among
    /// the eight bytes.
    #[inline]
    fn block(&mut self) -> Option<[u32; 8]> {
        let previous = self.previous?;
        if self.left < 8 {
            return None;
        }
        let (chunk, rest) = self.bytes.split_first_chunk::<8>()?;
        if u64::from_le_bytes(*chunk) & 0x8080_8080_8080_8080 != 0 {
            return None;
        }
        let mut item = previous;
        let mut block = [0u32; 8];
        for (slot, &gap) in block.iter_mut().zip(chunk) {
            item = item.wrapping_add(u32::from(gap)).wrapping_add(1);
            *slot = item;
        }
        self.previous = Some(item);
        self.bytes = rest;
        self.left -= 8;
        Some(block)
    }

    /// Appends the items left to `out`: runs of eight one-byte gaps are
    /// copied as one slice each, not pushed one by one.
    pub fn append_to(mut self, out: &mut Vec<u32>) {
        out.reserve(self.left);
        loop {
            if let Some(block) = self.block() {
                out.extend_from_slice(&block);
                continue;
            }
            match self.next() {
                Some(item) => out.push(item),
                None => return,
            }
        }
    }
}

impl Iterator for Unpack<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        if self.left == 0 {
            return None;
        }
        let n = self.varint()?;
        self.left -= 1;
        let item = match self.previous {
            None => n,
            Some(p) => p.wrapping_add(n).wrapping_add(1),
        };
        self.previous = Some(item);
        Some(item)
    }

    /// Exact for an undamaged list; a damaged one may end early.
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }

    /// Eight one-byte gaps at a time where the bytes allow: runs of near
    /// neighbours (`extend`, `for_each`) are a running sum, not a varint
    /// loop.
    fn fold<B, F: FnMut(B, u32) -> B>(mut self, init: B, mut f: F) -> B {
        let mut acc = init;
        loop {
            if let Some(block) = self.block() {
                for item in block {
                    acc = f(acc, item);
                }
                continue;
            }
            match self.next() {
                Some(item) => acc = f(acc, item),
                None => return acc,
            }
        }
    }
}

impl ExactSizeIterator for Unpack<'_> {}
impl FusedIterator for Unpack<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(items: &[u32]) -> Vec<u8> {
        let mut out = Vec::new();
        pack(items, &mut out).unwrap();
        let p = Packed::new(&out).unwrap();
        assert_eq!(p.len(), items.len());
        assert_eq!(p.iter().collect::<Vec<_>>(), items);
        out
    }

    #[test]
    fn lists_round_trip() {
        assert!(round_trip(&[]).is_empty());
        round_trip(&[0]);
        round_trip(&[u32::MAX]);
        round_trip(&[0, u32::MAX]);
        round_trip(&[5, 6, 7, 200, 70_000, 3_000_000, 4_000_000_000]);
    }

    #[test]
    fn bytes_are_the_documented_varints() {
        // Three items; 300 = 0b10_0101100: low seven bits first with the
        // high bit set, then 0b10. The gap 300 → 301 is 0; 301 → 429 is 127.
        assert_eq!(round_trip(&[300, 301, 429]), [0x03, 0xAC, 0x02, 0x00, 0x7F]);
        assert_eq!(round_trip(&[0, 129]), [0x02, 0x00, 0x80, 0x01]);
    }

    #[test]
    fn folding_reads_what_stepping_reads() {
        // Runs of near neighbours (one-byte gaps, read eight at a time by
        // `fold`) broken by far ones, at every alignment.
        let mut items = Vec::new();
        let mut x = 7u32;
        for i in 0..2_000u32 {
            x += if i % 37 == 0 { 1_000 + i } else { 1 + i % 5 };
            items.push(x);
        }
        for start in 0..10 {
            let mut bytes = Vec::new();
            pack(&items[start..], &mut bytes).unwrap();
            let p = Packed::new(&bytes).unwrap();
            let mut folded = Vec::new();
            p.iter().for_each(|i| folded.push(i));
            // A `for` loop steps with `next`.
            let mut stepped = Vec::new();
            for i in p.iter() {
                stepped.push(i);
            }
            assert_eq!(folded, &items[start..]);
            assert_eq!(stepped, &items[start..]);
            // Folding what is left after a few steps.
            let mut it = p.iter();
            it.by_ref().take(3).for_each(drop);
            let rest: Vec<u32> = it.fold(Vec::new(), |mut v, i| {
                v.push(i);
                v
            });
            assert_eq!(rest, &items[start + 3..]);
            let mut appended = vec![1, 2];
            let mut it = p.iter();
            it.by_ref().take(5).for_each(drop);
            it.append_to(&mut appended);
            assert_eq!(appended[2..], items[start + 5..]);
        }
    }

    #[test]
    fn lengths_that_do_not_fit_are_refused() {
        assert!(Packed::new(&[0x80]).is_none());
        assert!(Packed::new(&[2, 1, 0xFF]).is_none());
        // An empty list is no bytes, not a zero length.
        assert!(Packed::new(&[0]).is_none());
        // Two numbers cannot be one byte, nor one number six.
        assert!(Packed::new(&[2, 1]).is_none());
        assert!(Packed::new(&[1, 0x80, 0x80, 0x80, 0x80, 0x80, 1]).is_none());
    }

    #[test]
    fn any_bytes_read_without_panic() {
        // Overlong and overflowing numbers wrap.
        let bytes = [
            3, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 3,
        ];
        let p = Packed::new(&bytes).unwrap();
        assert_eq!(p.len(), 3);
        assert_eq!(p.iter().count(), 3);
        // A length larger than the numbers there: the list ends early,
        // stepped or folded.
        let short = [10, 1, 2, 3, 4, 5, 6, 7, 8, 0x81, 0x01];
        let p = Packed::new(&short).unwrap();
        assert_eq!(p.len(), 10);
        assert_eq!(p.iter().count(), 9);
        assert_eq!(p.iter().fold(0, |n, _| n + 1), 9);
        let mut appended = Vec::new();
        p.iter().append_to(&mut appended);
        assert_eq!(appended.len(), 9);
        let long = [14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x81, 0x01, 0x81, 0x01];
        let p = Packed::new(&long).unwrap();
        assert_eq!(p.iter().count(), 12);
        assert_eq!(p.iter().fold(0, |n, _| n + 1), 12);
        let mut appended = Vec::new();
        p.iter().append_to(&mut appended);
        assert_eq!(appended.len(), 12);
        let mut any = Vec::new();
        for seed in 0..2_000u32 {
            any.clear();
            let mut x = seed.wrapping_mul(2_654_435_761);
            for _ in 0..(seed % 23) {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                any.push(x as u8);
            }
            if let Some(p) = Packed::new(&any) {
                assert!(p.iter().count() <= p.len());
                assert!(p.iter().fold(0, |n, _| n + 1) <= p.len());
            }
        }
    }
}
