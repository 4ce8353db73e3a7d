//! SCTID checks: length, partition and the Verhoeff check digit.
//!
//! A copy of the few lines `txmap-rf2` has, because this crate depends on
//! nothing: a typo in a concept id is caught by the parser, with its
//! position, rather than by evaluation as an unknown concept.

const D: [[u8; 10]; 10] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
    [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
    [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
    [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
    [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
    [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
    [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
    [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
    [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const P: [[u8; 10]; 8] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
    [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
    [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
    [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
    [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
    [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
    [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

/// The Verhoeff checksum of `digits` (most significant first) is zero.
fn verhoeff_ok(digits: &[u8]) -> bool {
    let c = digits.iter().rev().enumerate().fold(0u8, |c, (i, &d)| {
        D[usize::from(c)][usize::from(P[i % 8][usize::from(d - b'0')])]
    });
    c == 0
}

/// The id written as `digits` (ASCII digits only), if it is a valid SCTID
/// of any component kind.
pub(crate) fn parse(digits: &[u8]) -> Option<u64> {
    if !(6..=18).contains(&digits.len()) || digits[0] == b'0' || !verhoeff_ok(digits) {
        return None;
    }
    let partition = &digits[digits.len() - 3..digits.len() - 1];
    if !matches!(partition[0], b'0' | b'1') || !matches!(partition[1], b'0'..=b'2') {
        return None;
    }
    Some(digits.iter().fold(0, |n, &d| n * 10 + u64::from(d - b'0')))
}

#[cfg(test)]
mod tests {
    #[test]
    fn real_ids() {
        for id in [
            "404684003",
            "138875005",
            "900000000000509007",
            "10200004",
            "734138000",
        ] {
            assert!(super::parse(id.as_bytes()).is_some(), "{id}");
        }
        // One digit changed, a bad partition, too short, a leading zero.
        for id in ["404684004", "99999999", "123456", "12345", "0404684003"] {
            assert!(super::parse(id.as_bytes()).is_none(), "{id}");
        }
    }
}
