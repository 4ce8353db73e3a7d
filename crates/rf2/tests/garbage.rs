//! Arbitrary bytes must produce rows or errors, never a panic.
//!
//! The reader and the parsers index into buffers by offsets they compute;
//! this throws pseudo-random RF2-ish input at them through several buffer
//! sizes so that an off-by-one shows up as a test failure, not as a crash in
//! the middle of an import.

use txmap_rf2::{
    ConceptRow, ConcreteValueRow, DescriptionRow, RefsetRow, RelationshipRow, RowReader,
};

/// xorshift64*: deterministic and dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

const PIECES: &[&[u8]] = &[
    b"\t",
    b"\n",
    b"\r\n",
    b"\r",
    b"\"",
    b"138875005",
    b"2884458015",
    b"1011000003024",
    b"123456789",
    b"20250909",
    b"20250230",
    b"0",
    b"1",
    b"en",
    b"#1.5",
    b"\"x\"",
    b"e12ff74f-2a71-4969-b00c-1eb981bea5d6",
    b"\xEF\xBB\xBF",
    b"\xFF",
    b"\xC3\xA9",
    b"",
    b"id",
];

#[test]
fn random_input_never_panics() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut rows = 0u64;
    let mut errors = 0u64;
    for _ in 0..2000 {
        let mut data = Vec::new();
        let len = rng.next() % 200;
        for _ in 0..len {
            let piece = PIECES[(rng.next() % PIECES.len() as u64) as usize];
            data.extend_from_slice(piece);
        }
        let capacity = 4 + (rng.next() % 64) as usize;
        let max_line = capacity + (rng.next() % 128) as usize;
        let Ok(mut reader) = RowReader::with_limits(&data[..], "garbage.txt", capacity, max_line)
        else {
            errors += 1;
            continue;
        };
        // Bounded: every call consumes at least one line or ends the file.
        for _ in 0..10_000 {
            match reader.next_row() {
                Ok(None) => break,
                Ok(Some(row)) => {
                    rows += 1;
                    let _ = ConceptRow::parse(&row);
                    let _ = DescriptionRow::parse(&row);
                    let _ = RelationshipRow::parse(&row);
                    let _ = ConcreteValueRow::parse(&row);
                    let _ = RefsetRow::parse(&row);
                    let _ = row.rest(3);
                    let _ = row.field(usize::MAX);
                    let _ = row.error(txmap_rf2::RowError::ColumnCount {
                        expected: 1,
                        found: 2,
                        at_least: false,
                    });
                }
                Err(e) => {
                    errors += 1;
                    assert!(!e.to_string().contains('\n'), "{e}");
                }
            }
        }
    }
    assert!(rows > 0 && errors > 0, "rows {rows}, errors {errors}");
}
