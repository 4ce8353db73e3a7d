//! HGVS sequence variant descriptions (`http://varnomen.hgvs.org`), as
//! genomics reports carry them: `NM_004006.2:c.4375C>T`,
//! `NC_000023.11:g.33344590_33344592del`, `NP_003997.1:p.(Trp24Cys)`.
//!
//! What is checked is the nomenclature's syntax: a reference sequence
//! (RefSeq, LRG, Ensembl or GenBank accession, optionally with a
//! transcript or gene in brackets), the coordinate type (`g c m n o r p`),
//! and a description of the variant in that type's terms — positions
//! (with `-`, `*` and intronic offsets where the type has them), ranges
//! and uncertain positions, and the edits (substitution, `del`, `dup`,
//! `ins`, `delins`, `inv`, `con`, repeats, `=`, `?`), alone or as alleles
//! (`c.[76A>C;83G>C]`). What is not checked is the variant against its
//! reference sequence (that `C` is the base at `c.4375`): that takes the
//! sequence, which a terminology server does not hold (tx.fhir.org asks a
//! variant service). So a valid code here is a well-formed description.
//!
//! HGVS has no list of codes and names none in common use, so expanding
//! it is refused as not enumerable.

use txmap_terminology::grammar::{Grammar, GrammarConcept};

use crate::{HGVS, MAX_CODE_LEN};

/// The HGVS nomenclature's grammar.
#[derive(Clone, Copy, Debug, Default)]
pub struct Hgvs;

impl Grammar for Hgvs {
    fn url(&self) -> &str {
        HGVS
    }
    fn version(&self) -> Option<&str> {
        None
    }
    fn name(&self) -> &str {
        "HGVS"
    }
    fn concept(&self, code: &str) -> Option<GrammarConcept> {
        if code.len() > MAX_CODE_LEN || !Cursor::new(code).variant() {
            return None;
        }
        Some(GrammarConcept {
            code: code.to_owned(),
            display: code.to_owned(),
            designations: Vec::new(),
            properties: Vec::new(),
            deprecated: false,
        })
    }
}

/// The amino acids' three-letter codes, with `Ter` (stop) and `Xaa`
/// (unknown).
const AMINO_ACIDS: [&str; 24] = [
    "Ala", "Arg", "Asn", "Asp", "Cys", "Gln", "Glu", "Gly", "His", "Ile", "Leu", "Lys", "Met",
    "Phe", "Pro", "Ser", "Thr", "Trp", "Tyr", "Val", "Sec", "Pyl", "Ter", "Xaa",
];

/// The one-letter codes, with `*` (stop) and `X` (unknown).
const ONE_LETTER: &[u8] = b"ACDEFGHIKLMNPQRSTVWYUOX*";

/// The coordinate types and what their sequences are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// `g`, `m`, `o`: positions count from 1, no offsets.
    Genomic,
    /// `c`: `-` before the start, `*` after the stop, intronic offsets.
    Coding,
    /// `n`: intronic offsets.
    NonCoding,
    /// `r`: as `c`, in lower-case bases.
    Rna,
    /// `p`: amino acids.
    Protein,
}

/// A recursive-descent reader over the code's bytes; each method consumes
/// what it recognises and says whether it did (restoring the position
/// when it did not). Nothing recurses but an allele's or an insertion's
/// brackets, one level each.
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    fn new(code: &'a str) -> Cursor<'a> {
        Cursor {
            s: code.as_bytes(),
            i: 0,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let hit = self.peek() == Some(b);
        self.i += usize::from(hit);
        hit
    }

    fn eat_str(&mut self, t: &str) -> bool {
        let hit = self.s[self.i..].starts_with(t.as_bytes());
        if hit {
            self.i += t.len();
        }
        hit
    }

    /// One or more bytes that pass `f`; how many.
    fn run(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let start = self.i;
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
        self.i - start
    }

    fn digits(&mut self) -> bool {
        self.run(|b| b.is_ascii_digit()) > 0
    }

    /// Runs `f`, and puts the cursor back when it fails.
    fn attempt(&mut self, f: impl FnOnce(&mut Self) -> bool) -> bool {
        let start = self.i;
        let ok = f(self);
        if !ok {
            self.i = start;
        }
        ok
    }

    /// The whole code: `reference:type.description`.
    fn variant(&mut self) -> bool {
        self.reference() && self.eat(b':') && self.described() && self.i == self.s.len()
    }

    /// `type.`: the coordinate type.
    fn kind(&mut self) -> Option<Kind> {
        let kind = match self.peek()? {
            b'g' | b'm' | b'o' => Kind::Genomic,
            b'c' => Kind::Coding,
            b'n' => Kind::NonCoding,
            b'r' => Kind::Rna,
            b'p' => Kind::Protein,
            _ => return None,
        };
        self.i += 1;
        self.eat(b'.').then_some(kind)
    }

    /// `type.description`.
    fn described(&mut self) -> bool {
        self.kind().is_some_and(|kind| self.description(kind))
    }

    /// An accession, with a transcript or gene in brackets after it.
    fn reference(&mut self) -> bool {
        if !self.accession() {
            return false;
        }
        if self.eat(b'(') {
            let inner = self.attempt(Self::accession)
                || self.run(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_') > 0;
            return inner && self.eat(b')');
        }
        true
    }

    fn version(&mut self) -> bool {
        !self.eat(b'.') || self.digits()
    }

    fn accession(&mut self) -> bool {
        let upper = |b: u8| b.is_ascii_uppercase();
        // LRG_199, LRG_199t1, LRG_199p1.
        if self.attempt(|c| {
            c.eat_str("LRG_") && c.digits() && (!(c.eat(b't') || c.eat(b'p')) || c.digits())
        }) {
            return true;
        }
        // RefSeq: NC_000023.11, NM_004006.2, NP_003997.1 ...
        if self.attempt(|c| c.run(upper) == 2 && c.eat(b'_') && c.digits() && c.version()) {
            return true;
        }
        // Ensembl: ENST00000357033.8, ENSP00000354923.3 ...
        if self.attempt(|c| c.eat_str("ENS") && c.run(upper) >= 1 && c.digits() && c.version()) {
            return true;
        }
        // GenBank: J01749.1, AC012345.6.
        self.attempt(|c| {
            (1..=2).contains(&c.run(upper))
                && (5..=8).contains(&c.run(|b| b.is_ascii_digit()))
                && c.version()
        })
    }

    /// What follows `type.`: no change, unknown, a variant, or alleles.
    fn description(&mut self, kind: Kind) -> bool {
        if self.eat(b'=') || self.eat(b'?') {
            return true;
        }
        if matches!(kind, Kind::Protein | Kind::Rna) && self.attempt(|c| c.eat(b'0') && c.done()) {
            // p.0 / r.0: no protein, no RNA; p.0? predicted.
            return true;
        }
        if self.attempt(|c| c.eat_str("0?") && c.done()) {
            return true;
        }
        if self.peek() == Some(b'[') {
            return self.alleles(kind);
        }
        // A predicted consequence, in brackets: p.(Trp24Cys), r.(76a>c).
        if matches!(kind, Kind::Protein | Kind::Rna)
            && self.attempt(|c| c.eat(b'(') && c.change(kind) && c.eat(b')') && c.done())
        {
            return true;
        }
        self.change(kind)
    }

    fn done(&self) -> bool {
        self.i == self.s.len()
    }

    /// `[change;change]`, several alleles `[..];[..]`, or `(;)` when the
    /// phase is unknown.
    fn alleles(&mut self, kind: Kind) -> bool {
        loop {
            if !self.eat(b'[') {
                return false;
            }
            loop {
                let one = self.attempt(|c| c.eat(b'=') || c.eat(b'?') || c.change(kind));
                if !one {
                    return false;
                }
                if !(self.eat(b';') || self.eat_str("(;)")) {
                    break;
                }
            }
            if !self.eat(b']') {
                return false;
            }
            if !(self.eat(b';') || self.eat_str("(;)")) {
                return true;
            }
        }
    }

    /// A location and its edit.
    fn change(&mut self, kind: Kind) -> bool {
        if kind == Kind::Protein {
            return self.protein_change();
        }
        self.location(kind) && self.edit(kind)
    }

    /// `position` or `position_position`.
    fn location(&mut self, kind: Kind) -> bool {
        self.position(kind) && (!self.eat(b'_') || self.position(kind))
    }

    /// A point, or an uncertain one: `(123_125)`, `(?_-1)`.
    fn position(&mut self, kind: Kind) -> bool {
        if self.eat(b'(') {
            return self.point(kind) && self.eat(b'_') && self.point(kind) && self.eat(b')');
        }
        self.point(kind)
    }

    fn point(&mut self, kind: Kind) -> bool {
        if self.eat(b'?') {
            return true;
        }
        if matches!(kind, Kind::Coding | Kind::Rna) {
            let _ = self.eat(b'-') || self.eat(b'*');
        }
        if !self.digits() {
            return false;
        }
        let offsets = matches!(kind, Kind::Coding | Kind::NonCoding | Kind::Rna);
        if offsets && (self.eat(b'+') || self.eat(b'-')) {
            return self.eat(b'?') || self.digits();
        }
        true
    }

    fn bases(&mut self, kind: Kind) -> usize {
        if kind == Kind::Rna {
            self.run(|b| b"acgubdhkmnrsvwy".contains(&b))
        } else {
            self.run(|b| b"ACGTBDHKMNRSVWY".contains(&b))
        }
    }

    /// A nucleotide edit.
    fn edit(&mut self, kind: Kind) -> bool {
        for op in ["delins", "del", "dup", "inv"] {
            if self.eat_str(op) {
                if op == "delins" {
                    return self.inserted(kind);
                }
                self.bases(kind);
                return true;
            }
        }
        if self.eat_str("ins") || self.eat_str("con") {
            return self.inserted(kind);
        }
        if self.eat(b'=') || self.eat(b'?') {
            return true;
        }
        if kind == Kind::Rna && (self.eat_str("spl?") || self.eat_str("spl")) {
            return true;
        }
        // Substitution (`76A>C`), or a repeat: `123CAG[23]`, `123_191CAG[19]CAA[4]`.
        if self.attempt(|c| c.bases(kind) == 1 && c.eat(b'>') && c.bases(kind) == 1) {
            return true;
        }
        // No change, the base said: `4375C=`.
        if self.attempt(|c| c.bases(kind) >= 1 && c.eat(b'=')) {
            return true;
        }
        let mut units = 0;
        while self.attempt(|c| c.bases(kind) >= 1 && c.count()) {
            units += 1;
        }
        units > 0 || self.count()
    }

    /// `[23]`, `[(23_26)]` or `[?]`: how many copies.
    fn count(&mut self) -> bool {
        self.attempt(|c| {
            c.eat(b'[')
                && (c.eat(b'?')
                    || c.digits()
                    || (c.eat(b'(') && c.digits() && c.eat(b'_') && c.digits() && c.eat(b')')))
                && c.eat(b']')
        })
    }

    /// What an insertion, a deletion-insertion or a conversion puts in:
    /// bases, `N[100]`, a length `(100)`, a stretch of the same sequence,
    /// one of another (`NC_000022.10:g.35788169_35788352`), or several in
    /// brackets (one level).
    fn inserted(&mut self, kind: Kind) -> bool {
        if self.eat(b'[') {
            loop {
                if !self.inserted_one(kind) {
                    return false;
                }
                if !self.eat(b';') {
                    return self.eat(b']');
                }
            }
        }
        self.inserted_one(kind)
    }

    fn inserted_one(&mut self, kind: Kind) -> bool {
        if self.attempt(|c| c.eat(b'(') && c.digits() && c.eat(b')')) {
            return true;
        }
        if self.attempt(|c| c.reference() && c.eat(b':') && c.described_location()) {
            return true;
        }
        // A copy of a stretch of the same sequence, maybe inverted:
        // `ins123_456inv`.
        if self.attempt(|c| {
            c.location(kind) && {
                c.eat_str("inv");
                !c.peek().is_some_and(|b| b.is_ascii_alphanumeric())
            }
        }) {
            return true;
        }
        if self.bases(kind) > 0 {
            self.count();
            return true;
        }
        false
    }

    /// `type.location`, another nucleotide sequence's stretch in an
    /// insertion.
    fn described_location(&mut self) -> bool {
        self.kind()
            .is_some_and(|kind| kind != Kind::Protein && self.location(kind))
    }

    /// An amino acid, by its three-letter or one-letter code.
    fn amino_acid(&mut self) -> bool {
        AMINO_ACIDS.iter().any(|aa| self.eat_str(aa))
            || self
                .peek()
                .is_some_and(|b| ONE_LETTER.contains(&b) && self.eat(b))
    }

    /// `Trp24`: an amino acid and where.
    fn residue(&mut self) -> bool {
        self.attempt(|c| c.amino_acid() && c.digits())
    }

    /// A protein change: `Trp24Cys`, `Lys23_Val25del`, `Arg97ProfsTer23`,
    /// `Met1ext-5`, `Gln18[23]`...
    fn protein_change(&mut self) -> bool {
        if !self.residue() {
            return false;
        }
        if self.eat(b'_') && !self.residue() {
            return false;
        }
        if self.eat_str("delins") || self.eat_str("ins") {
            return self.amino_acids();
        }
        if self.eat_str("del") || self.eat_str("dup") || self.eat(b'=') || self.eat(b'?') {
            return true;
        }
        if self.count() {
            return true;
        }
        // Substitution, then maybe a frame shift or an extension.
        let substituted = self.amino_acid();
        if self.eat_str("fs") {
            return self.stop_at();
        }
        if self.eat_str("ext") {
            return (self.eat(b'-') && (self.digits() || self.eat(b'?'))) || self.stop_at();
        }
        substituted
    }

    /// `Ter23`, `*23`, `Ter?` after `fs`/`ext`, or nothing.
    fn stop_at(&mut self) -> bool {
        if self.eat_str("Ter") || self.eat(b'*') {
            return self.digits() || self.eat(b'?');
        }
        true
    }

    /// Inserted amino acids: `GlnSerLys`, `X[10]`, a length `(10)`.
    fn amino_acids(&mut self) -> bool {
        if self.attempt(|c| c.eat(b'(') && c.digits() && c.eat(b')')) {
            return true;
        }
        let mut n = 0;
        while self.amino_acid() {
            n += 1;
            self.count();
        }
        n > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Examples of the HGVS recommendations (hgvs-nomenclature.org).
    #[test]
    fn the_recommendations_examples_are_codes() {
        for code in [
            "NC_000023.10:g.33038255C>A",
            "NG_012232.1(NM_004006.2):c.93+1G>T",
            "NM_004006.2:c.4375C>T",
            "NM_004006.2(DMD):c.4375C>T",
            "NM_004006.2:c.-14G>C",
            "NM_004006.2:c.*46T>A",
            "NM_004006.2:c.89-2A>C",
            "NC_000023.11:g.33344591del",
            "NC_000023.11:g.33344590_33344592del",
            "NM_004006.2:c.5697delA",
            "NC_000023.11:g.32343183dup",
            "NC_000023.10:g.32867861_32867862insT",
            "NC_000023.10:g.32867861_32867862insN[100]",
            "NC_000023.10:g.32867861_32867862ins(100)",
            "NC_000002.11:g.47643464_47643465ins[NC_000022.10:g.35788169_35788352]",
            "NM_004006.2:c.6775_6777delinsC",
            "NC_000023.10:g.32361330_32361333inv",
            "NC_000023.11:g.(31060227_31100351)_(33274278_33417151)dup",
            "NC_000023.11:g.(?_31120496)_(33339477_?)del",
            "NM_004006.2:c.[2376G>C;3103del]",
            "NM_004006.2:c.[2376G>C];[3103del]",
            "NM_004006.2:c.[2376G>C](;)[3103del]",
            "NM_004006.2:c.=",
            "NM_004006.2:c.4375C=",
            "NC_000014.8:g.123CAG[23]",
            "NC_000014.8:g.123_191CAG[19]CAA[4]",
            "LRG_199t1:c.11T>G",
            "NC_012920.1:m.8993T>C",
            "ENST00000357033.8:c.4375C>T",
            "NM_004006.2:r.76a>c",
            "NM_004006.2:r.(76a>c)",
            "NM_004006.2:r.0",
            "NP_003997.1:p.Trp24Cys",
            "NP_003997.1:p.(Trp24Cys)",
            "NP_003997.1:p.Trp24Ter",
            "NP_003997.1:p.Trp24*",
            "NP_003997.1:p.W24C",
            "NP_003997.1:p.Lys23_Val25del",
            "NP_003997.1:p.Arg97ProfsTer23",
            "NP_003997.1:p.Arg97fs",
            "NP_003997.1:p.Met1?",
            "NP_003997.1:p.0",
            "NP_003997.1:p.?",
            "NP_003997.1:p.=",
            "NP_003997.1:p.Lys2_Gly3insGlnSerLys",
            "NP_003997.1:p.Cys28delinsTrpVal",
            "NP_003997.1:p.Ala3dup",
            "NP_003997.1:p.Met1ext-5",
            "NP_003997.1:p.Ter110GlnextTer17",
            "NP_003997.1:p.Gln18[23]",
        ] {
            assert!(Hgvs.concept(code).is_some(), "{code} refused");
        }
    }

    #[test]
    fn malformed_descriptions_are_not() {
        for code in [
            "",
            "NM_004006.2",
            "NM_004006.2:",
            "NM_004006.2:c.",
            "NM_004006.2:x.76A>C",
            "NM_004006.2:c.76A>",
            "NM_004006.2:c.A>C",
            "NM_004006.2:c.76A>C extra",
            "c.76A>C",
            "nm_004006.2:c.76A>C",
            "NM_004006.2:g.-14G>C",
            "NM_004006.2:c.76a>c",
            "NM_004006.2:r.76A>C",
            "NP_003997.1:p.Xyz24Cys",
            "NP_003997.1:p.Trp24Cys)",
            "NM_004006.2:c.[76A>C",
            "NM_004006.2:c.[76A>C;[83G>C]]",
            "NM_004006.2:c.76_",
            "NM_004006.2(DMD:c.76A>C",
        ] {
            assert!(Hgvs.concept(code).is_none(), "{code:?} accepted");
        }
    }

    #[test]
    fn hostile_codes_are_refused() {
        let long = format!("NM_004006.2:c.{}", "[76A>C;".repeat(200));
        assert!(Hgvs.concept(&long).is_none());
        let brackets = format!("NM_004006.2:c.{}", "(".repeat(100));
        assert!(Hgvs.concept(&brackets).is_none());
    }
}
