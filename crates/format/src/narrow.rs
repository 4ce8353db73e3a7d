//! Three-byte unsigned integers, for the lists of description ordinals.
//!
//! Why: an edition counts its descriptions in millions (1.6 million in the
//! International Edition), and the lists that name them — the word
//! postings, above all, one entry per word of every term — spent a whole
//! `u32` on numbers below 2^24. Three bytes hold them and keep what a `u32`
//! list gives: item `i` is at byte `3i`, so a reader still indexes,
//! gallops and binary-searches by position. Packed or chunked lists would
//! be smaller still, but they are read from the start (packed) or by chunk
//! (chunked), which the searches' intersections do not do.
//!
//! An edition file therefore holds at most [`U24::MAX`] + 1 descriptions;
//! the importer refuses a release with more, naming the limit.

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// A little-endian unsigned 24-bit integer, unaligned: a `u32` below 2^24
/// in three bytes.
#[derive(
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Hash,
    FromBytes,
    IntoBytes,
    KnownLayout,
    Immutable,
    Unaligned,
)]
#[repr(transparent)]
pub struct U24([u8; 3]);

impl U24 {
    /// The largest value: 16,777,215.
    pub const MAX: u32 = (1 << 24) - 1;

    /// `v` in three bytes, or `None` when it is larger than [`U24::MAX`].
    pub fn new(v: u32) -> Option<U24> {
        if v > Self::MAX {
            return None;
        }
        let [a, b, c, _] = v.to_le_bytes();
        Some(U24([a, b, c]))
    }

    /// `v`, or [`U24::MAX`] when it is larger: for ordinals that may be
    /// none (`u32::MAX`), which then stay out of range.
    pub fn saturating(v: u32) -> U24 {
        let [a, b, c, _] = v.min(Self::MAX).to_le_bytes();
        U24([a, b, c])
    }

    /// The value.
    #[inline]
    pub fn get(self) -> u32 {
        let [a, b, c] = self.0;
        u32::from_le_bytes([a, b, c, 0])
    }
}

impl std::fmt::Debug for U24 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.get().fmt(f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_little_endian_and_larger_ones_are_refused() {
        for v in [0, 1, 255, 256, 65_535, 65_536, 1_629_851, U24::MAX] {
            let x = U24::new(v).unwrap();
            assert_eq!(x.get(), v);
            assert_eq!(x.as_bytes(), &v.to_le_bytes()[..3]);
        }
        assert_eq!(U24::new(U24::MAX + 1), None);
        assert_eq!(U24::saturating(7).get(), 7);
        assert_eq!(U24::saturating(u32::MAX).get(), U24::MAX);
        assert_eq!(U24::new(u32::MAX), None);
        // Any three bytes are a value: a reader needs no check.
        let view = <[U24]>::ref_from_bytes(&[0xFF, 0xFF, 0xFF, 1, 0, 0][..]).unwrap();
        assert_eq!(
            view.iter().map(|x| x.get()).collect::<Vec<_>>(),
            [U24::MAX, 1]
        );
    }
}
