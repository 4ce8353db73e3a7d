//! SNOMED CT identifiers: the Verhoeff check digit and the partition.
//!
//! A crate of its own, std only, because both the RF2 reader and the ECL
//! parser check identifiers, and the parser depends on nothing else.
//!
//! An SCTID is 6 to 18 decimal digits: an item identifier, for extensions a
//! seven-digit namespace, a two-digit partition identifier, and a Verhoeff
//! check digit. The partition says what kind of component the id names and
//! whether it belongs to the core (International) release or to an extension,
//! so a concept id used where a description id is expected is an error we can
//! catch on import without any lookup.

use std::fmt;

/// What kind of component an SCTID identifies, from its partition digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ComponentKind {
    Concept,
    Description,
    Relationship,
}

impl fmt::Display for ComponentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ComponentKind::Concept => "concept",
            ComponentKind::Description => "description",
            ComponentKind::Relationship => "relationship",
        })
    }
}

/// Why a string or number is not a valid SCTID.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SctidError {
    /// Empty, longer than 18 digits, shorter than 6, a leading zero, or a
    /// character that is not an ASCII digit.
    Syntax,
    /// The Verhoeff check digit does not match the other digits.
    CheckDigit,
    /// The partition identifier is not one SNOMED CT defines for components.
    Partition(u8),
    /// A valid SCTID, but of another kind than the one required.
    WrongKind {
        expected: ComponentKind,
        found: ComponentKind,
    },
}

impl fmt::Display for SctidError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SctidError::Syntax => f.write_str("not an SCTID (6 to 18 digits, no leading zero)"),
            SctidError::CheckDigit => f.write_str("bad Verhoeff check digit"),
            SctidError::Partition(p) => write!(f, "unknown partition identifier {p:02}"),
            SctidError::WrongKind { expected, found } => {
                write!(f, "a {found} id where a {expected} id is required")
            }
        }
    }
}

impl std::error::Error for SctidError {}

// Verhoeff's dihedral-group tables: multiplication in D5, the position
// permutations (row i is row 1 applied i times), and the inverse.
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
const INV: [u8; 10] = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9];

/// Verhoeff's running checksum over the digits of `n`, right to left, the
/// rightmost at position `first` (at least one digit: 0 is the digit 0).
fn checksum(n: u64, first: usize) -> u8 {
    let mut c = 0u8;
    let mut n = n;
    let mut i = first;
    loop {
        let digit = (n % 10) as usize;
        c = D[c as usize][P[i % 8][digit] as usize];
        n /= 10;
        i += 1;
        if n == 0 {
            return c;
        }
    }
}

/// `D[c][P[p][d]]`: the checksum after digit `d` at a position `p` mod 8.
const STEP: [[[u8; 10]; 10]; 8] = {
    let mut t = [[[0u8; 10]; 10]; 8];
    let mut p = 0;
    while p < 8 {
        let mut c = 0;
        while c < 10 {
            let mut d = 0;
            while d < 10 {
                t[p][c][d] = D[c][P[p][d] as usize];
                d += 1;
            }
            c += 1;
        }
        p += 1;
    }
    t
};

/// Two steps at once: `PAIR[q][c][10 * hi + lo]` is the checksum after
/// `lo` at position `2q` and `hi` at `2q + 1` (mod 8). Parsing an id is a
/// chain of dependent table reads; halving the chain halves its time, and
/// the table (4,000 bytes) stays in the first-level cache.
const PAIR: [[[u8; 100]; 10]; 4] = {
    let mut t = [[[0u8; 100]; 10]; 4];
    let mut q = 0;
    while q < 4 {
        let mut c = 0;
        while c < 10 {
            let mut two = 0;
            while two < 100 {
                let after_lo = STEP[2 * q][c][two % 10];
                t[q][c][two] = STEP[2 * q + 1][after_lo as usize][two / 10];
                two += 1;
            }
            c += 1;
        }
        q += 1;
    }
    t
};

/// Verhoeff's checksum over ASCII digits (already checked to be digits),
/// the rightmost at position zero: what [`checksum`] computes from the
/// number, read from the text it was parsed from.
fn checksum_digits(digits: &[u8]) -> u8 {
    let mut c = 0u8;
    let mut rest = digits;
    let mut q = 0;
    while let [head @ .., hi, lo] = rest {
        let two = usize::from(hi - b'0') * 10 + usize::from(lo - b'0');
        c = PAIR[q & 3][c as usize][two];
        q += 1;
        rest = head;
    }
    if let [d] = rest {
        c = STEP[(2 * q) & 7][c as usize][usize::from(d - b'0')];
    }
    c
}

/// The Verhoeff check digit to append to `payload` (the digits without it).
pub fn check_digit(payload: u64) -> u8 {
    // The check digit will take position zero, so the payload starts at one.
    INV[checksum(payload, 1) as usize]
}

/// True when the last digit of `id` is the Verhoeff check digit of the rest.
pub fn verhoeff_ok(id: u64) -> bool {
    checksum(id, 0) == 0
}

/// The component kind named by a partition identifier, and whether the id is
/// an extension id (with a namespace).
fn partition_kind(partition: u8) -> Option<(ComponentKind, bool)> {
    Some(match partition {
        0 => (ComponentKind::Concept, false),
        1 => (ComponentKind::Description, false),
        2 => (ComponentKind::Relationship, false),
        10 => (ComponentKind::Concept, true),
        11 => (ComponentKind::Description, true),
        12 => (ComponentKind::Relationship, true),
        _ => return None,
    })
}

/// Parses decimal digits as an SCTID, checking length, check digit and
/// partition, and returns the id with its component kind.
pub fn parse(digits: &[u8]) -> Result<(u64, ComponentKind), SctidError> {
    if !(6..=18).contains(&digits.len()) || digits[0] == b'0' {
        return Err(SctidError::Syntax);
    }
    let mut id = 0u64;
    for &b in digits {
        if !b.is_ascii_digit() {
            return Err(SctidError::Syntax);
        }
        id = id * 10 + u64::from(b - b'0');
    }
    if checksum_digits(digits) != 0 {
        return Err(SctidError::CheckDigit);
    }
    let partition = ((id / 10) % 100) as u8;
    partition_kind(partition)
        .map(|(kind, _)| (id, kind))
        .ok_or(SctidError::Partition(partition))
}

/// Checks an SCTID held as a number and returns its component kind.
pub fn validate(id: u64) -> Result<ComponentKind, SctidError> {
    if !(100_000..1_000_000_000_000_000_000).contains(&id) {
        return Err(SctidError::Syntax);
    }
    if !verhoeff_ok(id) {
        return Err(SctidError::CheckDigit);
    }
    let partition = ((id / 10) % 100) as u8;
    partition_kind(partition)
        .map(|(kind, _)| kind)
        .ok_or(SctidError::Partition(partition))
}

/// Parses an SCTID that must be of the given kind.
pub fn parse_kind(digits: &[u8], expected: ComponentKind) -> Result<u64, SctidError> {
    let (id, found) = parse(digits)?;
    if found != expected {
        return Err(SctidError::WrongKind { expected, found });
    }
    Ok(id)
}

/// Builds a valid SCTID from an item identifier, an optional seven-digit
/// namespace (extension ids) and a component kind.
///
/// # Panics
///
/// If the namespace has more than seven digits or the result would not fit
/// in 18 digits; both are programming errors in a generator.
pub fn make(item: u64, namespace: Option<u32>, kind: ComponentKind) -> u64 {
    let base = match kind {
        ComponentKind::Concept => 0,
        ComponentKind::Description => 1,
        ComponentKind::Relationship => 2,
    };
    let payload = match namespace {
        None => item * 100 + base,
        Some(ns) => {
            assert!(ns < 10_000_000, "namespace {ns} has more than seven digits");
            (item * 10_000_000 + u64::from(ns)) * 100 + 10 + base
        }
    };
    let id = payload * 10 + u64::from(check_digit(payload));
    assert!(
        id < 1_000_000_000_000_000_000,
        "SCTID {id} longer than 18 digits"
    );
    // Short items are padded by the partition itself; an id below six digits
    // would be rejected by `validate`, so generators start items at 100.
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_ids_validate() {
        // Ids from the International release and the HL7 test edition.
        for (id, kind) in [
            (138875005, ComponentKind::Concept),
            (404684003, ComponentKind::Concept),
            (900000000000207008, ComponentKind::Concept),
            (31000003106, ComponentKind::Concept),
            (91000003111, ComponentKind::Description),
            (2884458015, ComponentKind::Description),
            (1011000003024, ComponentKind::Relationship),
            (18871000003025, ComponentKind::Relationship),
        ] {
            assert_eq!(validate(id), Ok(kind), "{id}");
            assert_eq!(parse(id.to_string().as_bytes()), Ok((id, kind)));
        }
    }

    #[test]
    fn the_text_checksum_is_the_numeric_one() {
        // Every length from 1 to 18 digits, odd and even (the pair table's
        // last digit alone), from a simple generator.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for len in 1..=18u32 {
            for _ in 0..2_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let n = x % 10u64.pow(len);
                let text = n.to_string();
                assert_eq!(checksum_digits(text.as_bytes()), checksum(n, 0), "{n}");
            }
        }
    }

    #[test]
    fn every_single_digit_change_is_caught() {
        let id = 404684003u64;
        let s = id.to_string().into_bytes();
        for pos in 0..s.len() {
            for d in b'0'..=b'9' {
                if d == s[pos] || (pos == 0 && d == b'0') {
                    continue;
                }
                let mut t = s.clone();
                t[pos] = d;
                assert!(parse(&t).is_err(), "{}", String::from_utf8_lossy(&t));
            }
        }
    }

    #[test]
    fn adjacent_transpositions_are_caught() {
        let s = b"404684003".to_vec();
        for pos in 0..s.len() - 1 {
            if s[pos] == s[pos + 1] || (pos == 0 && s[1] == b'0') {
                continue;
            }
            let mut t = s.clone();
            t.swap(pos, pos + 1);
            assert_eq!(parse(&t), Err(SctidError::CheckDigit));
        }
    }

    #[test]
    fn syntax_and_partition_errors() {
        assert_eq!(parse(b""), Err(SctidError::Syntax));
        assert_eq!(parse(b"12345"), Err(SctidError::Syntax));
        assert_eq!(parse(b"0138875005"), Err(SctidError::Syntax));
        assert_eq!(parse(b"13887500x5"), Err(SctidError::Syntax));
        assert_eq!(parse(b"1234567890123456789"), Err(SctidError::Syntax));
        // Partition 05 with a correct check digit.
        let payload = 123_405u64;
        let id = payload * 10 + u64::from(check_digit(payload));
        assert_eq!(validate(id), Err(SctidError::Partition(5)));
        assert_eq!(
            parse_kind(b"138875005", ComponentKind::Description),
            Err(SctidError::WrongKind {
                expected: ComponentKind::Description,
                found: ComponentKind::Concept
            })
        );
    }

    #[test]
    fn made_ids_round_trip() {
        for item in [100u64, 101, 999, 123_456, 98_765_432] {
            for ns in [None, Some(1_000_003), Some(1_000_124)] {
                for kind in [
                    ComponentKind::Concept,
                    ComponentKind::Description,
                    ComponentKind::Relationship,
                ] {
                    let id = make(item, ns, kind);
                    assert_eq!(validate(id), Ok(kind), "{item} {ns:?} {kind}");
                }
            }
        }
        // The test edition's module id is item 3 in namespace 1000003.
        assert_eq!(
            make(3, Some(1_000_003), ComponentKind::Concept),
            31000003106
        );
    }
}
