//! Typed, validated rows for the RF2 file kinds the importer reads.
//!
//! A terminology server that accepts a damaged release serves wrong answers
//! for years, so every field is checked on the way in, cheaply and without
//! allocating: SCTIDs by length, Verhoeff check digit and partition (a
//! description id in a concept file is an error, not a silently wrong
//! concept), `active` is exactly `0` or `1`, `effectiveTime` is a real
//! calendar date, text is valid UTF-8 and refset member ids are well-formed
//! UUIDs. The typed rows borrow their text from the [`Row`], and through it
//! from the reader's buffer.
//!
//! A [`RowError`] names the 1-based column, its RF2 name and the problem,
//! e.g. `column 1 (id): bad Verhoeff check digit in "123456789"`; turn it
//! into a located [`Rf2Error`](crate::Rf2Error) with [`Row::error`].

use std::fmt;

use crate::error::truncate_chars;
use crate::rows::Row;
use crate::sctid::{self, ComponentKind, SctidError};

/// Why a row failed validation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RowError {
    /// The row has the wrong number of columns for its kind (`at_least`:
    /// refsets need at least `expected`).
    ColumnCount {
        expected: usize,
        found: usize,
        at_least: bool,
    },
    /// A field is invalid.
    Field {
        /// 1-based column number.
        column: usize,
        /// The RF2 column name.
        name: &'static str,
        problem: FieldProblem,
        /// The field, lossily decoded and truncated.
        value: String,
    },
}

/// What is wrong with a field.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FieldProblem {
    /// Not a valid SCTID, or one of the wrong component kind.
    Sctid(SctidError),
    /// `active` is not exactly `0` or `1`.
    Active,
    /// Not eight digits forming a calendar date `YYYYMMDD`.
    EffectiveTime,
    /// Not a non-negative integer that fits in 32 bits.
    Integer,
    /// Not valid UTF-8.
    Utf8,
    /// Not a UUID in 8-4-4-4-12 hexadecimal form.
    Uuid,
    /// Not a language code (letters, digits and `-`).
    LanguageCode,
    /// Not a concrete value: `#` and a number, or a `"`-quoted string.
    ConcreteValue,
    /// Empty where a value is required.
    Empty,
}

impl fmt::Display for FieldProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FieldProblem::Sctid(e) => e.fmt(f),
            FieldProblem::Active => f.write_str("not 0 or 1"),
            FieldProblem::EffectiveTime => f.write_str("not a YYYYMMDD date"),
            FieldProblem::Integer => f.write_str("not a non-negative integer"),
            FieldProblem::Utf8 => f.write_str("invalid UTF-8"),
            FieldProblem::Uuid => f.write_str("not a UUID (8-4-4-4-12 hex digits)"),
            FieldProblem::LanguageCode => f.write_str("not a language code"),
            FieldProblem::Empty => f.write_str("empty"),
            FieldProblem::ConcreteValue => {
                f.write_str("not a concrete value (#number or \"string\")")
            }
        }
    }
}

impl fmt::Display for RowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RowError::ColumnCount {
                expected,
                found,
                at_least,
            } => {
                let least = if *at_least { "at least " } else { "" };
                write!(f, "expected {least}{expected} columns, found {found}")
            }
            RowError::Field {
                column,
                name,
                problem,
                value,
            } => write!(f, "column {column} ({name}): {problem} in {value:?}"),
        }
    }
}

impl std::error::Error for RowError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RowError::Field {
                problem: FieldProblem::Sctid(e),
                ..
            } => Some(e),
            _ => None,
        }
    }
}

/// How much of a bad field is kept in a [`RowError`].
const VALUE_CHARS: usize = 60;

fn field_error(index: usize, name: &'static str, problem: FieldProblem, value: &[u8]) -> RowError {
    RowError::Field {
        column: index + 1,
        name,
        problem,
        value: truncate_chars(value, VALUE_CHARS),
    }
}

/// Parses field `index` (0-based) of `row` as an SCTID, of the given
/// component kind if `kind` is `Some`. `name` is used in the error.
pub fn sctid_field(
    row: &Row<'_>,
    index: usize,
    name: &'static str,
    kind: Option<ComponentKind>,
) -> Result<u64, RowError> {
    let raw = row.field(index);
    let parsed = match kind {
        Some(kind) => sctid::parse_kind(raw, kind),
        None => sctid::parse(raw).map(|(id, _)| id),
    };
    parsed.map_err(|e| field_error(index, name, FieldProblem::Sctid(e), raw))
}

fn concept_field(row: &Row<'_>, index: usize, name: &'static str) -> Result<u64, RowError> {
    sctid_field(row, index, name, Some(ComponentKind::Concept))
}

/// Field `index` (0-based) of `row` as UTF-8 text.
pub fn utf8_field<'a>(
    row: &Row<'a>,
    index: usize,
    name: &'static str,
) -> Result<&'a str, RowError> {
    let raw = row.field(index);
    std::str::from_utf8(raw).map_err(|_| field_error(index, name, FieldProblem::Utf8, raw))
}

/// Field `index` (0-based) of `row` as a `YYYYMMDD` date, e.g. an
/// `effectiveTime` or a module dependency's `sourceEffectiveTime`.
pub fn date_field(row: &Row<'_>, index: usize, name: &'static str) -> Result<u32, RowError> {
    let raw = row.field(index);
    parse_date(raw).ok_or_else(|| field_error(index, name, FieldProblem::EffectiveTime, raw))
}

/// Field `index` (0-based) of `row` as a non-negative integer (digits only,
/// no sign), e.g. a relationship group or a map priority.
pub fn integer_field(row: &Row<'_>, index: usize, name: &'static str) -> Result<u32, RowError> {
    let raw = row.field(index);
    parse_u32(raw).ok_or_else(|| field_error(index, name, FieldProblem::Integer, raw))
}

fn active_field(row: &Row<'_>, index: usize) -> Result<bool, RowError> {
    match row.field(index) {
        b"1" => Ok(true),
        b"0" => Ok(false),
        raw => Err(field_error(index, "active", FieldProblem::Active, raw)),
    }
}

fn check_columns(row: &Row<'_>, expected: usize) -> Result<(), RowError> {
    if row.len() == expected {
        Ok(())
    } else {
        Err(RowError::ColumnCount {
            expected,
            found: row.len(),
            at_least: false,
        })
    }
}

fn parse_u32(raw: &[u8]) -> Option<u32> {
    if raw.is_empty() || raw.len() > 10 {
        return None;
    }
    let mut n = 0u64;
    for &b in raw {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n * 10 + u64::from(b - b'0');
    }
    u32::try_from(n).ok()
}

/// A `YYYYMMDD` date that exists in the Gregorian calendar.
pub fn parse_date(raw: &[u8]) -> Option<u32> {
    if raw.len() != 8 {
        return None;
    }
    let v = parse_u32(raw)?;
    let (year, month, day) = (v / 10_000, v / 100 % 100, v % 100);
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    (year > 0 && (1..=days).contains(&day)).then_some(v)
}

/// A UUID in the 8-4-4-4-12 hexadecimal form (either case) as 16 bytes.
pub fn parse_uuid(raw: &[u8]) -> Option<[u8; 16]> {
    if raw.len() != 36 {
        return None;
    }
    let mut out = [0u8; 16];
    let mut nibbles = 0usize;
    for (i, &b) in raw.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if b != b'-' {
                return None;
            }
            continue;
        }
        let v = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        let byte = out.get_mut(nibbles / 2)?;
        *byte = (*byte << 4) | v;
        nibbles += 1;
    }
    Some(out)
}

fn is_language_code(raw: &[u8]) -> bool {
    !raw.is_empty() && raw.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'-')
}

/// `#` and a decimal number (optional sign, fraction and exponent), or a
/// string in double quotes.
fn is_concrete_value(v: &str) -> bool {
    if let Some(num) = v.strip_prefix('#') {
        let b = num.as_bytes();
        let mut i = 0;
        if matches!(b.first(), Some(b'-' | b'+')) {
            i += 1;
        }
        let int_start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let mut digits = i - int_start;
        if b.get(i) == Some(&b'.') {
            i += 1;
            let frac_start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            digits += i - frac_start;
        }
        if digits == 0 {
            return false;
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            i += 1;
            if matches!(b.get(i), Some(b'-' | b'+')) {
                i += 1;
            }
            let exp_start = i;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i == exp_start {
                return false;
            }
        }
        i == b.len()
    } else {
        v.len() >= 2 && v.starts_with('"') && v.ends_with('"')
    }
}

/// A row of a Concept file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConceptRow {
    pub id: u64,
    /// `YYYYMMDD`.
    pub effective_time: u32,
    pub active: bool,
    pub module: u64,
    pub definition_status: u64,
}

impl ConceptRow {
    pub const COLUMNS: usize = 5;

    pub fn parse(row: &Row<'_>) -> Result<ConceptRow, RowError> {
        check_columns(row, Self::COLUMNS)?;
        Ok(ConceptRow {
            id: sctid_field(row, 0, "id", Some(ComponentKind::Concept))?,
            effective_time: date_field(row, 1, "effectiveTime")?,
            active: active_field(row, 2)?,
            module: concept_field(row, 3, "moduleId")?,
            definition_status: concept_field(row, 4, "definitionStatusId")?,
        })
    }
}

/// A row of a Description or TextDefinition file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescriptionRow<'a> {
    pub id: u64,
    pub effective_time: u32,
    pub active: bool,
    pub module: u64,
    pub concept: u64,
    pub language: &'a str,
    pub type_id: u64,
    pub term: &'a str,
    pub case_significance: u64,
}

impl<'a> DescriptionRow<'a> {
    pub const COLUMNS: usize = 9;

    pub fn parse(row: &Row<'a>) -> Result<DescriptionRow<'a>, RowError> {
        check_columns(row, Self::COLUMNS)?;
        let language = row.field(5);
        if !is_language_code(language) {
            return Err(field_error(
                5,
                "languageCode",
                FieldProblem::LanguageCode,
                language,
            ));
        }
        Ok(DescriptionRow {
            id: sctid_field(row, 0, "id", Some(ComponentKind::Description))?,
            effective_time: date_field(row, 1, "effectiveTime")?,
            active: active_field(row, 2)?,
            module: concept_field(row, 3, "moduleId")?,
            concept: concept_field(row, 4, "conceptId")?,
            language: utf8_field(row, 5, "languageCode")?,
            type_id: concept_field(row, 6, "typeId")?,
            term: utf8_field(row, 7, "term")?,
            case_significance: concept_field(row, 8, "caseSignificanceId")?,
        })
    }
}

/// A row of an inferred or stated Relationship file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RelationshipRow {
    pub id: u64,
    pub effective_time: u32,
    pub active: bool,
    pub module: u64,
    pub source: u64,
    pub destination: u64,
    pub group: u32,
    pub type_id: u64,
    pub characteristic_type: u64,
    pub modifier: u64,
}

impl RelationshipRow {
    pub const COLUMNS: usize = 10;

    pub fn parse(row: &Row<'_>) -> Result<RelationshipRow, RowError> {
        check_columns(row, Self::COLUMNS)?;
        Ok(RelationshipRow {
            id: sctid_field(row, 0, "id", Some(ComponentKind::Relationship))?,
            effective_time: date_field(row, 1, "effectiveTime")?,
            active: active_field(row, 2)?,
            module: concept_field(row, 3, "moduleId")?,
            source: concept_field(row, 4, "sourceId")?,
            destination: concept_field(row, 5, "destinationId")?,
            group: integer_field(row, 6, "relationshipGroup")?,
            type_id: concept_field(row, 7, "typeId")?,
            characteristic_type: concept_field(row, 8, "characteristicTypeId")?,
            modifier: concept_field(row, 9, "modifierId")?,
        })
    }
}

/// A row of a RelationshipConcreteValues file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConcreteValueRow<'a> {
    pub id: u64,
    pub effective_time: u32,
    pub active: bool,
    pub module: u64,
    pub source: u64,
    /// The raw RF2 value: `#` and a number (`#1`, `#12.5`) or a quoted
    /// string (`"text"`).
    pub value: &'a str,
    pub group: u32,
    pub type_id: u64,
    pub characteristic_type: u64,
    pub modifier: u64,
}

impl<'a> ConcreteValueRow<'a> {
    pub const COLUMNS: usize = 10;

    pub fn parse(row: &Row<'a>) -> Result<ConcreteValueRow<'a>, RowError> {
        check_columns(row, Self::COLUMNS)?;
        let id = sctid_field(row, 0, "id", Some(ComponentKind::Relationship))?;
        let effective_time = date_field(row, 1, "effectiveTime")?;
        let active = active_field(row, 2)?;
        let module = concept_field(row, 3, "moduleId")?;
        let source = concept_field(row, 4, "sourceId")?;
        let value = utf8_field(row, 5, "value")?;
        if !is_concrete_value(value) {
            return Err(field_error(
                5,
                "value",
                FieldProblem::ConcreteValue,
                value.as_bytes(),
            ));
        }
        Ok(ConcreteValueRow {
            id,
            effective_time,
            active,
            module,
            source,
            value,
            group: integer_field(row, 6, "relationshipGroup")?,
            type_id: concept_field(row, 7, "typeId")?,
            characteristic_type: concept_field(row, 8, "characteristicTypeId")?,
            modifier: concept_field(row, 9, "modifierId")?,
        })
    }
}

/// A row of an Identifier file: a component's identifier in another scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdentifierRow<'a> {
    /// The identifier in its scheme (`54486-6`), checked to be UTF-8 and
    /// not empty.
    pub alternate: &'a str,
    pub effective_time: u32,
    pub active: bool,
    pub module: u64,
    /// The scheme: a concept below 900000000000453004 |Identifier scheme|.
    pub scheme: u64,
    /// Any kind of component.
    pub component: u64,
}

impl<'a> IdentifierRow<'a> {
    pub const COLUMNS: usize = 6;

    pub fn parse(row: &Row<'a>) -> Result<IdentifierRow<'a>, RowError> {
        check_columns(row, Self::COLUMNS)?;
        let alternate = utf8_field(row, 0, "alternateIdentifier")?;
        if alternate.is_empty() {
            return Err(field_error(
                0,
                "alternateIdentifier",
                FieldProblem::Empty,
                b"",
            ));
        }
        Ok(IdentifierRow {
            alternate,
            effective_time: date_field(row, 1, "effectiveTime")?,
            active: active_field(row, 2)?,
            module: concept_field(row, 3, "moduleId")?,
            scheme: concept_field(row, 4, "identifierSchemeId")?,
            component: sctid_field(row, 5, "referencedComponentId", None)?,
        })
    }
}

/// A row of any reference set file: the six standard columns, typed, and
/// the pattern-specific rest raw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RefsetRow<'a> {
    /// The member UUID as 16 bytes in textual order.
    pub id: [u8; 16],
    pub effective_time: u32,
    pub active: bool,
    pub module: u64,
    pub refset: u64,
    /// Any kind of component (concept, description or relationship).
    pub referenced_component: u64,
    /// Columns 7 and later exactly as in the file, tabs included; checked to
    /// be UTF-8. Empty for a simple refset. Individual fields are
    /// `row.field(6 + i)`; see [`sctid_field`] and friends to parse them.
    pub extra: &'a [u8],
}

impl<'a> RefsetRow<'a> {
    /// The number of standard columns every refset has.
    pub const COLUMNS: usize = 6;

    pub fn parse(row: &Row<'a>) -> Result<RefsetRow<'a>, RowError> {
        if row.len() < Self::COLUMNS {
            return Err(RowError::ColumnCount {
                expected: Self::COLUMNS,
                found: row.len(),
                at_least: true,
            });
        }
        let raw_id = row.field(0);
        let id =
            parse_uuid(raw_id).ok_or_else(|| field_error(0, "id", FieldProblem::Uuid, raw_id))?;
        let effective_time = date_field(row, 1, "effectiveTime")?;
        let active = active_field(row, 2)?;
        let module = concept_field(row, 3, "moduleId")?;
        let refset = concept_field(row, 4, "refsetId")?;
        let referenced_component = sctid_field(row, 5, "referencedComponentId", None)?;
        let extra = row.rest(Self::COLUMNS);
        if std::str::from_utf8(extra).is_err() {
            // Name the first offending column.
            for i in Self::COLUMNS..row.len() {
                utf8_field(row, i, "additional field")?;
            }
        }
        Ok(RefsetRow {
            id,
            effective_time,
            active,
            module,
            refset,
            referenced_component,
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rows::RowReader;

    const CONCEPT_HEADER: &str = "id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId";
    const DESC_HEADER: &str = "id\teffectiveTime\tactive\tmoduleId\tconceptId\tlanguageCode\ttypeId\tterm\tcaseSignificanceId";
    const REL_HEADER: &str = "id\teffectiveTime\tactive\tmoduleId\tsourceId\tdestinationId\trelationshipGroup\ttypeId\tcharacteristicTypeId\tmodifierId";
    const CV_HEADER: &str = "id\teffectiveTime\tactive\tmoduleId\tsourceId\tvalue\trelationshipGroup\ttypeId\tcharacteristicTypeId\tmodifierId";
    const REFSET_HEADER: &str =
        "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tacceptabilityId";

    /// Parses the single data row of `header` + `line` with `f`.
    fn with_row<T>(
        header: &str,
        line: &[u8],
        f: impl for<'a> FnOnce(&Row<'a>) -> Result<T, RowError>,
    ) -> Result<T, RowError> {
        let mut data = header.as_bytes().to_vec();
        data.extend_from_slice(b"\r\n");
        data.extend_from_slice(line);
        let mut r = RowReader::new(&data[..], "t.txt").unwrap();
        let row = r.next_row().unwrap().unwrap();
        f(&row)
    }

    fn concept(line: &str) -> Result<ConceptRow, RowError> {
        with_row(CONCEPT_HEADER, line.as_bytes(), ConceptRow::parse)
    }

    fn err_text(r: Result<impl fmt::Debug, RowError>) -> String {
        r.unwrap_err().to_string()
    }

    #[test]
    fn concept_rows() {
        assert_eq!(
            concept("138875005\t20020131\t1\t900000000000207008\t900000000000074008"),
            Ok(ConceptRow {
                id: 138875005,
                effective_time: 20020131,
                active: true,
                module: 900000000000207008,
                definition_status: 900000000000074008,
            })
        );
        assert_eq!(
            err_text(concept(
                "123456789\t20020131\t1\t900000000000207008\t900000000000074008"
            )),
            r#"column 1 (id): bad Verhoeff check digit in "123456789""#
        );
        assert_eq!(
            err_text(concept(
                "2884458015\t20020131\t1\t900000000000207008\t900000000000074008"
            )),
            r#"column 1 (id): a description id where a concept id is required in "2884458015""#
        );
        assert_eq!(
            err_text(concept(
                "abc\t20020131\t1\t900000000000207008\t900000000000074008"
            )),
            r#"column 1 (id): not an SCTID (6 to 18 digits, no leading zero) in "abc""#
        );
        assert_eq!(
            err_text(concept(
                "138875005\t20020131\t1\t900000000000207008\t2884458015"
            )),
            r#"column 5 (definitionStatusId): a description id where a concept id is required in "2884458015""#
        );
        assert_eq!(
            err_text(concept("138875005\t20020131\t1\t\t900000000000074008")),
            r#"column 4 (moduleId): not an SCTID (6 to 18 digits, no leading zero) in """#
        );
    }

    #[test]
    fn active_values() {
        for bad in ["2", "", "true", "01", " 1", "1 "] {
            let line =
                format!("138875005\t20020131\t{bad}\t900000000000207008\t900000000000074008");
            assert_eq!(
                concept(&line),
                Err(RowError::Field {
                    column: 3,
                    name: "active",
                    problem: FieldProblem::Active,
                    value: bad.into()
                }),
                "{bad:?}"
            );
        }
        let line = "138875005\t20020131\t0\t900000000000207008\t900000000000074008";
        assert!(!concept(line).unwrap().active);
    }

    #[test]
    fn effective_times() {
        for good in ["20020131", "20240229", "20000229", "19991231"] {
            assert!(parse_date(good.as_bytes()).is_some(), "{good}");
        }
        for bad in [
            "2002013",
            "200201311",
            "20020132",
            "20021301",
            "20020100",
            "20020001",
            "20230229",
            "21000229",
            "00000101",
            "2002-01-",
            "20020431",
            "+2002013",
            "",
        ] {
            assert_eq!(parse_date(bad.as_bytes()), None, "{bad}");
        }
        assert_eq!(
            err_text(concept(
                "138875005\t20020230\t1\t900000000000207008\t900000000000074008"
            )),
            r#"column 2 (effectiveTime): not a YYYYMMDD date in "20020230""#
        );
    }

    #[test]
    fn column_counts() {
        assert_eq!(
            with_row("a\tb", b"1\t2", ConceptRow::parse),
            Err(RowError::ColumnCount {
                expected: 5,
                found: 2,
                at_least: false
            })
        );
        let e = with_row("a\tb", b"1\t2", |r| RefsetRow::parse(r).map(|_| ())).unwrap_err();
        assert_eq!(e.to_string(), "expected at least 6 columns, found 2");
        assert!(with_row("a\tb", b"1\t2", |r| DescriptionRow::parse(r).map(|_| ())).is_err());
        assert!(with_row("a\tb", b"1\t2", RelationshipRow::parse).is_err());
        assert!(with_row("a\tb", b"1\t2", |r| ConcreteValueRow::parse(r).map(|_| ())).is_err());
    }

    fn description(line: &str) -> Result<(u64, String, String), RowError> {
        with_row(DESC_HEADER, line.as_bytes(), |row| {
            DescriptionRow::parse(row).map(|d| (d.id, d.language.to_owned(), d.term.to_owned()))
        })
    }

    #[test]
    fn description_rows() {
        let line = "2884458015\t20030731\t1\t900000000000207008\t125671007\ten\t900000000000550004\tA \"quoted\" term, with commas\t900000000000017005";
        assert_eq!(
            description(line),
            Ok((
                2884458015,
                "en".into(),
                "A \"quoted\" term, with commas".into()
            ))
        );
        let mut r = description(&line.replace("2884458015", "125671007")).unwrap_err();
        assert_eq!(
            r.to_string(),
            r#"column 1 (id): a concept id where a description id is required in "125671007""#
        );
        r = description(&line.replace("\ten\t", "\t\t")).unwrap_err();
        assert_eq!(
            r.to_string(),
            r#"column 6 (languageCode): not a language code in """#
        );
        r = description(&line.replace("125671007", "2884458015")).unwrap_err();
        assert!(r.to_string().starts_with("column 5 (conceptId): "), "{r}");
        let bad_utf8 = with_row(
            DESC_HEADER,
            b"2884458015\t20030731\t1\t900000000000207008\t125671007\ten\t900000000000550004\tbad \xC3\x28 utf8\t900000000000017005",
            |row| DescriptionRow::parse(row).map(|_| ()),
        );
        assert_eq!(
            err_text(bad_utf8),
            "column 8 (term): invalid UTF-8 in \"bad \u{fffd}( utf8\""
        );
        let typed = with_row(DESC_HEADER, line.as_bytes(), |row| {
            DescriptionRow::parse(row).map(|d| (d.concept, d.type_id, d.case_significance))
        });
        assert_eq!(
            typed,
            Ok((125671007, 900000000000550004, 900000000000017005))
        );
    }

    #[test]
    fn relationship_rows() {
        let line = "1011000003024\t20250909\t1\t31000003106\t449015009\t253333008\t0\t116680003\t900000000000011006\t900000000000451002";
        let rel = |line: &str| with_row(REL_HEADER, line.as_bytes(), RelationshipRow::parse);
        assert_eq!(
            rel(line),
            Ok(RelationshipRow {
                id: 1011000003024,
                effective_time: 20250909,
                active: true,
                module: 31000003106,
                source: 449015009,
                destination: 253333008,
                group: 0,
                type_id: 116680003,
                characteristic_type: 900000000000011006,
                modifier: 900000000000451002,
            })
        );
        assert_eq!(rel(&line.replace("\t0\t", "\t12\t")).unwrap().group, 12);
        for bad in ["-1", "", "x", "1.0", "99999999999"] {
            assert_eq!(
                err_text(rel(&line.replace("\t0\t", &format!("\t{bad}\t")))),
                format!("column 7 (relationshipGroup): not a non-negative integer in {bad:?}")
            );
        }
        assert!(
            err_text(rel(&line.replace("1011000003024", "138875005")))
                .starts_with("column 1 (id): a concept id where a relationship id")
        );
        assert!(
            err_text(rel(&line.replace("253333008", "1011000003024")))
                .starts_with("column 6 (destinationId): a relationship id where a concept id")
        );
    }

    #[test]
    fn concrete_value_rows() {
        let cv = |value: &str| {
            let line = format!(
                "18871000003025\t20250909\t1\t31000003106\t1204474000\t{value}\t0\t1142139005\t900000000000011006\t900000000000451002"
            );
            with_row(CV_HEADER, line.as_bytes(), |row| {
                ConcreteValueRow::parse(row).map(|c| (c.id, c.value.to_owned(), c.group))
            })
        };
        for good in [
            "#1",
            "#12.5",
            "#-3",
            "#0.25",
            "#.5",
            "#1e3",
            "#2.5E-4",
            "\"text\"",
            "\"\"",
            "\"a \"b\" c\"",
        ] {
            assert_eq!(cv(good), Ok((18871000003025, good.to_owned(), 0)), "{good}");
        }
        for bad in [
            "1", "#", "#x", "#1.2.3", "#1e", "\"open", "\"", "", "#-", "#.",
        ] {
            assert_eq!(
                err_text(cv(bad)),
                format!(
                    "column 6 (value): not a concrete value (#number or \"string\") in {bad:?}"
                ),
                "{bad}"
            );
        }
    }

    /// An owned copy of a [`RefsetRow`], so that it can outlive the reader.
    #[derive(Debug)]
    struct OwnedRefset {
        id: [u8; 16],
        effective_time: u32,
        active: bool,
        module: u64,
        refset: u64,
        referenced_component: u64,
        extra: Vec<u8>,
    }

    fn refset(line: &[u8]) -> Result<OwnedRefset, RowError> {
        with_row(REFSET_HEADER, line, |row| {
            RefsetRow::parse(row).map(|r| OwnedRefset {
                id: r.id,
                effective_time: r.effective_time,
                active: r.active,
                module: r.module,
                refset: r.refset,
                referenced_component: r.referenced_component,
                extra: r.extra.to_vec(),
            })
        })
    }

    #[test]
    fn refset_rows() {
        let line = b"e12ff74f-2a71-4969-b00c-1eb981bea5d6\t20250909\t1\t31000003106\t900000000000509007\t91000003111\t900000000000548007";
        let r = refset(line).unwrap();
        assert_eq!(
            r.id,
            [
                0xe1, 0x2f, 0xf7, 0x4f, 0x2a, 0x71, 0x49, 0x69, 0xb0, 0x0c, 0x1e, 0xb9, 0x81, 0xbe,
                0xa5, 0xd6
            ]
        );
        assert_eq!(
            (r.effective_time, r.active, r.module, r.refset),
            (20250909, true, 31000003106, 900000000000509007)
        );
        assert_eq!(r.referenced_component, 91000003111);
        assert_eq!(r.extra, b"900000000000548007");
        let upper = String::from_utf8(line.to_vec())
            .unwrap()
            .replace("e12ff74f", "E12FF74F");
        assert_eq!(refset(upper.as_bytes()).unwrap().id, r.id);

        for bad_id in [
            "e12ff74f-2a71-4969-b00c-1eb981bea5d",
            "e12ff74f-2a71-4969-b00c-1eb981bea5d66",
            "e12ff74f2a71-4969-b00c-1eb981bea5d6-",
            "g12ff74f-2a71-4969-b00c-1eb981bea5d6",
            "e12ff74f_2a71_4969_b00c_1eb981bea5d6",
            "",
        ] {
            let l = String::from_utf8(line.to_vec())
                .unwrap()
                .replace("e12ff74f-2a71-4969-b00c-1eb981bea5d6", bad_id);
            assert_eq!(
                err_text(refset(l.as_bytes())),
                format!("column 1 (id): not a UUID (8-4-4-4-12 hex digits) in {bad_id:?}")
            );
        }
        // The referenced component may be any kind of component, but the
        // refset must be a concept.
        let l = String::from_utf8(line.to_vec()).unwrap();
        assert!(refset(l.replace("91000003111", "1011000003024").as_bytes()).is_ok());
        assert!(
            err_text(refset(l.replace("91000003111", "91000003112").as_bytes()))
                .starts_with("column 6 (referencedComponentId): bad Verhoeff")
        );
        assert!(
            err_text(refset(
                l.replace("900000000000509007", "91000003111").as_bytes()
            ))
            .starts_with("column 5 (refsetId): a description id")
        );
        let mut bad = line.to_vec();
        bad.extend_from_slice(b"\xFF");
        assert_eq!(
            err_text(refset(&bad)),
            "column 7 (additional field): invalid UTF-8 in \"900000000000548007\u{fffd}\""
        );
    }

    #[test]
    fn refset_extra_columns() {
        let header = "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId\tmapTarget\tmapAdvice";
        let line = b"93c2b74b-d933-4f3e-ac5e-181eecfb5894\t20170731\t1\t900000000000207008\t734139008\t28273000\tA01.1\t\"ALWAYS\" A01.1";
        let extra = with_row(header, line, |row| {
            RefsetRow::parse(row).map(|r| r.extra.to_vec())
        });
        assert_eq!(extra.unwrap(), b"A01.1\t\"ALWAYS\" A01.1");
        let simple = "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId";
        let line = b"93c2b74b-d933-4f3e-ac5e-181eecfb5894\t20170731\t0\t900000000000207008\t734139008\t28273000";
        let r = with_row(simple, line, |row| {
            RefsetRow::parse(row).map(|r| (r.active, r.extra.len()))
        });
        assert_eq!(r, Ok((false, 0)));
    }

    #[test]
    fn field_helpers() {
        let header = "a\tb\tc\td";
        let r = with_row(header, b"20250801\t42\t138875005\t\xE2\x9C\x93", |row| {
            Ok((
                date_field(row, 0, "a")?,
                integer_field(row, 1, "b")?,
                sctid_field(row, 2, "c", None)?,
                utf8_field(row, 3, "d")?.to_owned(),
            ))
        });
        assert_eq!(r, Ok((20250801, 42, 138875005, "✓".to_owned())));
        let e = with_row(header, b"1\t2\t3\t4", |row| {
            row.get(9).map(<[u8]>::to_vec).ok_or(RowError::ColumnCount {
                expected: 10,
                found: row.len(),
                at_least: true,
            })
        })
        .unwrap_err();
        assert_eq!(e.to_string(), "expected at least 10 columns, found 4");
    }

    #[test]
    fn row_error_to_rf2_error() {
        let data = format!(
            "{CONCEPT_HEADER}\n123456789\t20020131\t1\t900000000000207008\t900000000000074008\n"
        );
        let mut r = RowReader::new(
            data.as_bytes(),
            "rel/sct2_Concept_Snapshot_INT_20250909.txt",
        )
        .unwrap();
        let row = r.next_row().unwrap().unwrap();
        let e = ConceptRow::parse(&row)
            .map_err(|e| row.error(e))
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            r#"rel/sct2_Concept_Snapshot_INT_20250909.txt:2: column 1 (id): bad Verhoeff check digit in "123456789": "123456789\t20020131\t1\t900000000000207008\t900000000000074008""#
        );
        assert!(e.is_recoverable());
        assert_eq!(e.line, Some(2));
    }

    #[test]
    fn long_values_are_truncated_in_errors() {
        let term = "x".repeat(500);
        let line = format!("{term}\t20020131\t1\t900000000000207008\t900000000000074008");
        let e = concept(&line).unwrap_err();
        let RowError::Field { value, .. } = e else {
            panic!("{e:?}")
        };
        assert_eq!(value.chars().count(), VALUE_CHARS + 1);
    }
}
