//! Which RF2 file is which, from its file name alone.
//!
//! RF2 releases are not self-describing: there is no manifest we can rely on
//! across International, national and test editions, and the folder layout
//! differs between packages. What is stable is the file naming convention
//! `[x]<FileType>_<ContentType>_<ContentSubType>_<Country|Namespace>_<Date>.txt`,
//! for example `der2_cRefset_LanguageSnapshot-en_INT_20250909.txt`:
//!
//! * `FileType` is `sct2` (core components) or `der2` (derivatives, i.e.
//!   reference sets); an `x` prefix marks a file not yet in production.
//! * `ContentType` is the component (`Concept`, `Description`, …) or, for a
//!   reference set, `<pattern>Refset` where the pattern has one letter per
//!   extra column: `c` component, `i` integer, `s` string.
//! * `ContentSubType` is `<Summary><ReleaseType>[-<language>]`, e.g.
//!   `LanguageSnapshot-en`; the summary names the reference set type.
//!
//! So we classify by name wherever the file sits in the tree, read only
//! Snapshot files (Full and Delta hold history we do not serve), and derive
//! the extra refset columns from the pattern, cross-checked against the
//! header by [`check_header`].

use std::fmt;

use crate::error::HeaderError;

/// The kind of content an RF2 file holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FileKind {
    Concept,
    Description,
    TextDefinition,
    /// Inferred relationships (`sct2_Relationship_…`).
    Relationship,
    StatedRelationship,
    RelationshipConcreteValues,
    /// `sct2_Identifier`: alternate identifiers of components in other
    /// schemes (ECL's `scheme#code`).
    Identifier,
    OwlExpression,
    Language,
    Association,
    AttributeValue,
    SimpleRefset,
    SimpleMap,
    ComplexMap,
    ExtendedMap,
    MrcmDomain,
    MrcmAttributeDomain,
    MrcmAttributeRange,
    MrcmModuleScope,
    ModuleDependency,
    DescriptionType,
    RefsetDescriptor,
    /// A reference set of a type not listed above; its columns follow from
    /// the pattern and the header.
    OtherRefset,
}

/// The RF2 release type from the file name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReleaseType {
    Snapshot,
    Full,
    Delta,
}

/// Why a file in a release is not read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// The name does not follow the RF2 naming convention (readme, json,
    /// documentation, …).
    NotRf2Name,
    /// A Full release file; only Snapshot files are read.
    Full,
    /// A Delta release file; only Snapshot files are read.
    Delta,
    /// An RF2 name whose content type we do not know (e.g. `sct2_Identifier`)
    /// or a refset pattern with letters other than `c`, `i`, `s`.
    UnknownContent,
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SkipReason::NotRf2Name => "not an RF2 file name",
            SkipReason::Full => "Full release file (only Snapshot is read)",
            SkipReason::Delta => "Delta release file (only Snapshot is read)",
            SkipReason::UnknownContent => "unknown RF2 content",
        })
    }
}

/// What a Snapshot file name says about the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileName {
    pub kind: FileKind,
    /// The refset field pattern (`"c"`, `"cisscc"`, `""` for a simple
    /// refset); `""` for terminology files.
    pub pattern: String,
    /// The language code after `Snapshot-`, e.g. `en` or `en-GB`.
    pub language: Option<String>,
    /// The `YYYYMMDD` version date at the end of the name.
    pub effective_date: Option<u32>,
}

/// The RF2 column names of each file kind: one definition, for the reader
/// that checks headers and for writers (the synthetic generator) alike.
pub mod columns {
    /// The first six columns of every reference set file.
    pub const STANDARD_REFSET: [&str; 6] = [
        "id",
        "effectiveTime",
        "active",
        "moduleId",
        "refsetId",
        "referencedComponentId",
    ];
    pub const CONCEPT: [&str; 5] = [
        "id",
        "effectiveTime",
        "active",
        "moduleId",
        "definitionStatusId",
    ];
    pub const DESCRIPTION: [&str; 9] = [
        "id",
        "effectiveTime",
        "active",
        "moduleId",
        "conceptId",
        "languageCode",
        "typeId",
        "term",
        "caseSignificanceId",
    ];
    pub const RELATIONSHIP: [&str; 10] = [
        "id",
        "effectiveTime",
        "active",
        "moduleId",
        "sourceId",
        "destinationId",
        "relationshipGroup",
        "typeId",
        "characteristicTypeId",
        "modifierId",
    ];
    pub const IDENTIFIER: [&str; 6] = [
        "alternateIdentifier",
        "effectiveTime",
        "active",
        "moduleId",
        "identifierSchemeId",
        "referencedComponentId",
    ];
    pub const CONCRETE_VALUE: [&str; 10] = [
        "id",
        "effectiveTime",
        "active",
        "moduleId",
        "sourceId",
        "value",
        "relationshipGroup",
        "typeId",
        "characteristicTypeId",
        "modifierId",
    ];
}

use columns::{CONCEPT, CONCRETE_VALUE, DESCRIPTION, IDENTIFIER, RELATIONSHIP, STANDARD_REFSET};

impl FileKind {
    /// True for reference set files (including OWL expressions, which are
    /// distributed as a refset).
    pub fn is_refset(self) -> bool {
        !matches!(
            self,
            FileKind::Concept
                | FileKind::Description
                | FileKind::TextDefinition
                | FileKind::Relationship
                | FileKind::StatedRelationship
                | FileKind::RelationshipConcreteValues
                | FileKind::Identifier
        )
    }

    /// The exact header of a terminology file; `None` for refsets, whose
    /// header is checked by [`check_header`] against the pattern instead.
    pub fn terminology_header(self) -> Option<&'static [&'static str]> {
        Some(match self {
            FileKind::Concept => &CONCEPT,
            FileKind::Description | FileKind::TextDefinition => &DESCRIPTION,
            FileKind::Relationship | FileKind::StatedRelationship => &RELATIONSHIP,
            FileKind::RelationshipConcreteValues => &CONCRETE_VALUE,
            FileKind::Identifier => &IDENTIFIER,
            _ => return None,
        })
    }

    /// The field pattern a refset kind has in the RF2 specification;
    /// `None` for terminology files and [`FileKind::OtherRefset`].
    pub fn refset_pattern(self) -> Option<&'static str> {
        Some(match self {
            FileKind::OwlExpression => "s",
            FileKind::Language => "c",
            FileKind::Association => "c",
            FileKind::AttributeValue => "c",
            FileKind::SimpleRefset => "",
            FileKind::SimpleMap => "s",
            FileKind::ComplexMap => "iisssc",
            FileKind::ExtendedMap => "iissscc",
            FileKind::MrcmDomain => "sssssss",
            FileKind::MrcmAttributeDomain => "cisscc",
            FileKind::MrcmAttributeRange => "sscc",
            FileKind::MrcmModuleScope => "c",
            FileKind::ModuleDependency => "ss",
            FileKind::DescriptionType => "ci",
            FileKind::RefsetDescriptor => "cci",
            _ => return None,
        })
    }

    /// Whether a file of this refset kind may have `pattern`: exactly the
    /// specified pattern, except that map refsets may add columns after the
    /// specified ones (some national maps add a block number).
    fn accepts_pattern(self, pattern: &str) -> bool {
        match (self, self.refset_pattern()) {
            (FileKind::ComplexMap | FileKind::ExtendedMap, Some(p)) => pattern.starts_with(p),
            (_, Some(p)) => pattern == p,
            (_, None) => true,
        }
    }

    /// A short name for messages and progress output.
    pub fn name(self) -> &'static str {
        match self {
            FileKind::Concept => "Concept",
            FileKind::Description => "Description",
            FileKind::TextDefinition => "TextDefinition",
            FileKind::Relationship => "Relationship",
            FileKind::StatedRelationship => "StatedRelationship",
            FileKind::RelationshipConcreteValues => "RelationshipConcreteValues",
            FileKind::Identifier => "Identifier",
            FileKind::OwlExpression => "OWLExpression",
            FileKind::Language => "Language",
            FileKind::Association => "Association",
            FileKind::AttributeValue => "AttributeValue",
            FileKind::SimpleRefset => "Simple",
            FileKind::SimpleMap => "SimpleMap",
            FileKind::ComplexMap => "ComplexMap",
            FileKind::ExtendedMap => "ExtendedMap",
            FileKind::MrcmDomain => "MRCMDomain",
            FileKind::MrcmAttributeDomain => "MRCMAttributeDomain",
            FileKind::MrcmAttributeRange => "MRCMAttributeRange",
            FileKind::MrcmModuleScope => "MRCMModuleScope",
            FileKind::ModuleDependency => "ModuleDependency",
            FileKind::DescriptionType => "DescriptionType",
            FileKind::RefsetDescriptor => "RefsetDescriptor",
            FileKind::OtherRefset => "OtherRefset",
        }
    }
}

impl fmt::Display for FileKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

/// Classifies a file by the RF2 naming convention. `path` may be a bare file
/// name or a path with `/` (or `\`) separators; only the last component is
/// looked at. Returns the parsed name for Snapshot files and the reason to
/// skip anything else.
pub fn classify(path: &str) -> Result<FileName, SkipReason> {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = name.strip_suffix(".txt").ok_or(SkipReason::NotRf2Name)?;
    let stem = stem.strip_prefix('x').unwrap_or(stem);
    let (file_type, rest) = stem.split_once('_').ok_or(SkipReason::NotRf2Name)?;
    let core = match file_type {
        "sct2" => true,
        "der2" => false,
        _ => return Err(SkipReason::NotRf2Name),
    };
    let mut parts = rest.split('_');
    let content_type = parts.next().unwrap_or("");
    let sub_type = parts.next().unwrap_or("");
    if content_type.is_empty() || sub_type.is_empty() {
        return Err(SkipReason::NotRf2Name);
    }
    let effective_date = parts.next_back().and_then(parse_date);

    let (base, language) = match sub_type.split_once('-') {
        Some((base, lang)) => (base, (!lang.is_empty()).then(|| lang.to_owned())),
        None => (sub_type, None),
    };
    let (summary, release_type) = if let Some(s) = base.strip_suffix("Snapshot") {
        (s, ReleaseType::Snapshot)
    } else if let Some(s) = base.strip_suffix("Full") {
        (s, ReleaseType::Full)
    } else if let Some(s) = base.strip_suffix("Delta") {
        (s, ReleaseType::Delta)
    } else {
        return Err(SkipReason::NotRf2Name);
    };
    match release_type {
        ReleaseType::Snapshot => {}
        ReleaseType::Full => return Err(SkipReason::Full),
        ReleaseType::Delta => return Err(SkipReason::Delta),
    }

    let (kind, pattern) = if let Some(pattern) = content_type.strip_suffix("Refset") {
        if !pattern.bytes().all(|b| matches!(b, b'c' | b'i' | b's')) {
            return Err(SkipReason::UnknownContent);
        }
        let kind = refset_kind(summary);
        // A known refset name with unexpected columns is still a valid
        // refset, but not one whose columns we can interpret by name.
        let kind = if kind.accepts_pattern(pattern) {
            kind
        } else {
            FileKind::OtherRefset
        };
        (kind, pattern.to_owned())
    } else {
        let kind = match (core, content_type) {
            (true, "Concept") => FileKind::Concept,
            (true, "Description") => FileKind::Description,
            (true, "TextDefinition") => FileKind::TextDefinition,
            (true, "Relationship") => FileKind::Relationship,
            (true, "StatedRelationship") => FileKind::StatedRelationship,
            (true, "RelationshipConcreteValues") => FileKind::RelationshipConcreteValues,
            (true, "Identifier") => FileKind::Identifier,
            _ => return Err(SkipReason::UnknownContent),
        };
        (kind, String::new())
    };
    Ok(FileName {
        kind,
        pattern,
        language,
        effective_date,
    })
}

/// Refset summaries in file names, and their kinds.
const REFSET_NAMES: [(&str, FileKind); 18] = [
    ("OWLExpression", FileKind::OwlExpression),
    ("OWLAxiom", FileKind::OwlExpression),
    ("OWLOntology", FileKind::OwlExpression),
    ("Language", FileKind::Language),
    ("Association", FileKind::Association),
    ("AssociationReference", FileKind::Association),
    ("AttributeValue", FileKind::AttributeValue),
    ("Simple", FileKind::SimpleRefset),
    ("SimpleMap", FileKind::SimpleMap),
    ("ComplexMap", FileKind::ComplexMap),
    ("ExtendedMap", FileKind::ExtendedMap),
    ("MRCMDomain", FileKind::MrcmDomain),
    ("MRCMAttributeDomain", FileKind::MrcmAttributeDomain),
    ("MRCMAttributeRange", FileKind::MrcmAttributeRange),
    ("MRCMModuleScope", FileKind::MrcmModuleScope),
    ("ModuleDependency", FileKind::ModuleDependency),
    ("DescriptionType", FileKind::DescriptionType),
    ("RefsetDescriptor", FileKind::RefsetDescriptor),
];

/// The kind named by a refset summary. Some national editions append an
/// upper-case edition tag (`LanguageUKCL`, `SimpleUKED`), so a known name
/// followed by upper-case letters and digits counts as that name.
fn refset_kind(summary: &str) -> FileKind {
    REFSET_NAMES
        .iter()
        .find(|(name, _)| {
            summary.strip_prefix(name).is_some_and(|tag| {
                tag.bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            })
        })
        .map_or(FileKind::OtherRefset, |&(_, kind)| kind)
}

fn parse_date(s: &str) -> Option<u32> {
    // The file date is informative only; a malformed one is not a reason to
    // skip the file, so it just becomes `None`.
    if s.len() == 8 && s.bytes().all(|b| b.is_ascii_digit()) {
        s.parse().ok()
    } else {
        None
    }
}

/// Checks a header line against what a file of `kind` with refset field
/// `pattern` must have: the exact column names for terminology files; for
/// refsets the six standard columns and then one column per pattern letter
/// (the names of those extra columns vary between editions and are not
/// checked).
pub fn check_header(kind: FileKind, pattern: &str, header: &[String]) -> Result<(), HeaderError> {
    let (names, expected): (&[&'static str], usize) = match kind.terminology_header() {
        Some(names) => (names, names.len()),
        None => (&STANDARD_REFSET, STANDARD_REFSET.len() + pattern.len()),
    };
    if header.len() != expected {
        return Err(HeaderError::ColumnCount {
            expected,
            found: header.len(),
        });
    }
    for (i, (want, got)) in names.iter().zip(header).enumerate() {
        if want != got {
            return Err(HeaderError::Column {
                column: i + 1,
                expected: want,
                found: crate::error::truncate_chars(got.as_bytes(), 60),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(name: &str) -> FileKind {
        match classify(name) {
            Ok(f) => f.kind,
            Err(e) => panic!("{name}: {e}"),
        }
    }

    #[test]
    fn terminology_names() {
        for (name, k) in [
            ("sct2_Concept_Snapshot_INT_20250909.txt", FileKind::Concept),
            (
                "sct2_Description_Snapshot-en_INT_20250909.txt",
                FileKind::Description,
            ),
            (
                "sct2_TextDefinition_Snapshot-en_INT_20250909.txt",
                FileKind::TextDefinition,
            ),
            (
                "sct2_Relationship_Snapshot_INT_20250909.txt",
                FileKind::Relationship,
            ),
            (
                "sct2_StatedRelationship_Snapshot_INT_20250909.txt",
                FileKind::StatedRelationship,
            ),
            (
                "sct2_RelationshipConcreteValues_Snapshot_INT_20250909.txt",
                FileKind::RelationshipConcreteValues,
            ),
            (
                "xsct2_Concept_Snapshot_US1000124_20250301.txt",
                FileKind::Concept,
            ),
            (
                "sct2_Identifier_Snapshot_LO1010000_20250321.txt",
                FileKind::Identifier,
            ),
            (
                "SnomedCT_InternationalRF2_PRODUCTION_20250131T120000Z/Snapshot/Terminology/sct2_Concept_Snapshot_INT_20250131.txt",
                FileKind::Concept,
            ),
            (
                "sct2_Concept_UKCLSnapshot_GB1000000_20230412.txt",
                FileKind::Concept,
            ),
        ] {
            assert_eq!(kind(name), k, "{name}");
            assert!(!k.is_refset());
            assert_eq!(classify(name).unwrap().pattern, "");
        }
    }

    #[test]
    fn refset_names() {
        for (name, k, pattern) in [
            (
                "sct2_sRefset_OWLExpressionSnapshot_INT_20250909.txt",
                FileKind::OwlExpression,
                "s",
            ),
            (
                "der2_sRefset_OWLExpressionSnapshot_INT_20200131.txt",
                FileKind::OwlExpression,
                "s",
            ),
            (
                "der2_cRefset_LanguageSnapshot-en_INT_20250909.txt",
                FileKind::Language,
                "c",
            ),
            (
                "der2_cRefset_AssociationSnapshot_INT_20250909.txt",
                FileKind::Association,
                "c",
            ),
            (
                "der2_cRefset_AssociationReferenceSnapshot_INT_20170731.txt",
                FileKind::Association,
                "c",
            ),
            (
                "der2_cRefset_AttributeValueSnapshot_INT_20250909.txt",
                FileKind::AttributeValue,
                "c",
            ),
            (
                "der2_Refset_SimpleSnapshot_INT_20250909.txt",
                FileKind::SimpleRefset,
                "",
            ),
            (
                "der2_sRefset_SimpleMapSnapshot_INT_20250909.txt",
                FileKind::SimpleMap,
                "s",
            ),
            (
                "der2_iisssccRefset_ExtendedMapSnapshot_INT_20250909.txt",
                FileKind::ExtendedMap,
                "iissscc",
            ),
            (
                "der2_iissscRefset_ComplexMapSnapshot_INT_20250909.txt",
                FileKind::ComplexMap,
                "iisssc",
            ),
            (
                "der2_cissccRefset_MRCMAttributeDomainSnapshot_INT_20250909.txt",
                FileKind::MrcmAttributeDomain,
                "cisscc",
            ),
            (
                "der2_ssccRefset_MRCMAttributeRangeSnapshot_INT_20250909.txt",
                FileKind::MrcmAttributeRange,
                "sscc",
            ),
            (
                "der2_sssssssRefset_MRCMDomainSnapshot_INT_20250909.txt",
                FileKind::MrcmDomain,
                "sssssss",
            ),
            (
                "der2_cRefset_MRCMModuleScopeSnapshot_INT_20250909.txt",
                FileKind::MrcmModuleScope,
                "c",
            ),
            (
                "der2_ssRefset_ModuleDependencySnapshot-en_INT_20250909.txt",
                FileKind::ModuleDependency,
                "ss",
            ),
            (
                "der2_ssRefset_ModuleDependencySnapshot_INT_20250909.txt",
                FileKind::ModuleDependency,
                "ss",
            ),
            (
                "der2_ciRefset_DescriptionTypeSnapshot_INT_20250909.txt",
                FileKind::DescriptionType,
                "ci",
            ),
            (
                "der2_cciRefset_RefsetDescriptorSnapshot_INT_20250909.txt",
                FileKind::RefsetDescriptor,
                "cci",
            ),
            (
                "der2_ciRefset_MySpecialSnapshot_INT_20250909.txt",
                FileKind::OtherRefset,
                "ci",
            ),
            (
                "xder2_scsRefset_OrderedTypeSnapshot_NL1000146_20250930.txt",
                FileKind::OtherRefset,
                "scs",
            ),
            (
                "der2_cRefset_LanguageUKCLSnapshot-en_GB1000000_20230412.txt",
                FileKind::Language,
                "c",
            ),
            (
                "der2_Refset_SimpleUKEDSnapshot_GB1000000_20230412.txt",
                FileKind::SimpleRefset,
                "",
            ),
            (
                "der2_cRefset_LanguageGroupSnapshot_INT_20250909.txt",
                FileKind::OtherRefset,
                "c",
            ),
            (
                "der2_ssRefset_SimpleMapWithDescriptionSnapshot_INT_20250909.txt",
                FileKind::OtherRefset,
                "ss",
            ),
            // Known name, unexpected columns: generic refset.
            (
                "der2_Refset_LanguageSnapshot-en_INT_20250909.txt",
                FileKind::OtherRefset,
                "",
            ),
        ] {
            let f = classify(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!((f.kind, f.pattern.as_str()), (k, pattern), "{name}");
            assert!(k.is_refset());
        }
    }

    #[test]
    fn language_and_date() {
        let f = classify("sct2_Description_Snapshot-en-GB_GB1000000_20250101.txt").unwrap();
        assert_eq!(f.language.as_deref(), Some("en-GB"));
        assert_eq!(f.effective_date, Some(20250101));
        let f = classify("sct2_Concept_Snapshot_INT_20250909.txt").unwrap();
        assert_eq!(f.language, None);
        assert_eq!(f.effective_date, Some(20250909));
        let f = classify("sct2_Concept_Snapshot_INT_2025.txt").unwrap();
        assert_eq!(f.effective_date, None);
        let f = classify("sct2_Concept_Snapshot.txt").unwrap();
        assert_eq!(f.effective_date, None);
    }

    #[test]
    fn skipped_names() {
        for (name, reason) in [
            ("Readme_en_20250909.txt", SkipReason::NotRf2Name),
            ("Readme.txt", SkipReason::NotRf2Name),
            ("release_package_information.json", SkipReason::NotRf2Name),
            (
                "sct2_Concept_Snapshot_INT_20250909.json",
                SkipReason::NotRf2Name,
            ),
            (
                "__MACOSX/._sct2_Concept_Snapshot_INT_20250909.txt",
                SkipReason::NotRf2Name,
            ),
            ("sct2_Concept_INT_20250909.txt", SkipReason::NotRf2Name),
            ("sct2_.txt", SkipReason::NotRf2Name),
            ("sct2_Concept.txt", SkipReason::NotRf2Name),
            (
                "SCT2_Concept_Snapshot_INT_20250909.txt",
                SkipReason::NotRf2Name,
            ),
            (
                "doc_Icd10MapTechnicalGuide_Current-en-US_INT_20250909.pdf",
                SkipReason::NotRf2Name,
            ),
            ("sct2_Concept_Full_INT_20250909.txt", SkipReason::Full),
            (
                "sct2_Description_Delta-en_INT_20250909.txt",
                SkipReason::Delta,
            ),
            (
                "der2_cRefset_LanguageFull-en_INT_20250909.txt",
                SkipReason::Full,
            ),
            (
                "der2_iisssccRefset_ExtendedMapDelta_INT_20250909.txt",
                SkipReason::Delta,
            ),
            (
                "der2_Concept_Snapshot_INT_20250909.txt",
                SkipReason::UnknownContent,
            ),
            (
                "der2_cxRefset_LanguageSnapshot-en_INT_20250909.txt",
                SkipReason::UnknownContent,
            ),
            (
                "der2_CRefset_LanguageSnapshot-en_INT_20250909.txt",
                SkipReason::UnknownContent,
            ),
        ] {
            assert_eq!(classify(name), Err(reason), "{name}");
        }
    }

    #[test]
    fn headers() {
        let h = |s: &str| s.split('\t').map(str::to_owned).collect::<Vec<_>>();
        assert_eq!(
            check_header(
                FileKind::Concept,
                "",
                &h("id\teffectiveTime\tactive\tmoduleId\tdefinitionStatusId")
            ),
            Ok(())
        );
        assert_eq!(
            check_header(
                FileKind::Concept,
                "",
                &h("id\teffectiveTime\tactive\tmoduleId")
            ),
            Err(HeaderError::ColumnCount {
                expected: 5,
                found: 4
            })
        );
        assert_eq!(
            check_header(
                FileKind::Concept,
                "",
                &h("id\teffective_time\tactive\tmoduleId\tdefinitionStatusId")
            ),
            Err(HeaderError::Column {
                column: 2,
                expected: "effectiveTime",
                found: "effective_time".into()
            })
        );
        let refset = "id\teffectiveTime\tactive\tmoduleId\trefsetId\treferencedComponentId";
        assert_eq!(
            check_header(
                FileKind::Language,
                "c",
                &h(&format!("{refset}\tacceptabilityId"))
            ),
            Ok(())
        );
        assert_eq!(check_header(FileKind::SimpleRefset, "", &h(refset)), Ok(()));
        assert_eq!(
            check_header(FileKind::Language, "c", &h(refset)),
            Err(HeaderError::ColumnCount {
                expected: 7,
                found: 6
            })
        );
        assert!(matches!(
            check_header(
                FileKind::Language,
                "c",
                &h("id\teffectiveTime\tactive\tmoduleId\trefset\treferencedComponentId\tx")
            ),
            Err(HeaderError::Column { column: 5, .. })
        ));
    }
}
