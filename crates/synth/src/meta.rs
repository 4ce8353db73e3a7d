//! The real SNOMED CT concepts a synthetic release is built around.
//!
//! Importers and servers hard-code metadata ids (the FSN type, the US
//! language refset, "Is a", the core module, ...), so a synthetic release
//! is only useful if it uses the real ones, with their real FSNs and a
//! plausible place in the model component hierarchy. Everything else in the
//! release is invented, under ids that can never collide with these (see
//! `model`).
//!
//! Entries with `id == 0` are metadata the synthetic release needs but the
//! International release does not have (its own simple refsets and a string
//! data attribute); they get synthetic ids when the model is built.

// Root and modules.
pub(crate) const ROOT: u64 = 138875005;
pub(crate) const MODEL_COMPONENT: u64 = 900000000000441003;
pub(crate) const CORE_MODULE: u64 = 900000000000207008;
pub(crate) const MODEL_MODULE: u64 = 900000000000012004;
pub(crate) const MODULE: u64 = 900000000000443000;

// Description types, case significance, acceptability.
pub(crate) const FSN: u64 = 900000000000003001;
pub(crate) const SYNONYM: u64 = 900000000000013009;
pub(crate) const DEFINITION: u64 = 900000000000550004;
pub(crate) const CASE_INSENSITIVE: u64 = 900000000000448009;
pub(crate) const CASE_SENSITIVE: u64 = 900000000000017005;
pub(crate) const INITIAL_INSENSITIVE: u64 = 900000000000020002;
pub(crate) const PREFERRED: u64 = 900000000000548007;
pub(crate) const ACCEPTABLE: u64 = 900000000000549004;

// Relationships.
pub(crate) const IS_A: u64 = 116680003;
pub(crate) const INFERRED: u64 = 900000000000011006;
pub(crate) const ADDITIONAL: u64 = 900000000000227009;
pub(crate) const EXISTENTIAL: u64 = 900000000000451002;
pub(crate) const PRIMITIVE: u64 = 900000000000074008;
pub(crate) const DEFINED: u64 = 900000000000073002;

// Refsets.
pub(crate) const US_ENGLISH: u64 = 900000000000509007;
pub(crate) const GB_ENGLISH: u64 = 900000000000508004;
pub(crate) const LANGUAGE_TYPE_REFSET: u64 = 900000000000506000;
pub(crate) const REPLACED_BY: u64 = 900000000000526001;
pub(crate) const SAME_AS: u64 = 900000000000527005;
pub(crate) const POSSIBLY_EQUIVALENT_TO: u64 = 900000000000523009;
pub(crate) const WAS_A: u64 = 900000000000528000;
pub(crate) const MOVED_TO: u64 = 900000000000524003;
pub(crate) const CONCEPT_INACTIVATION: u64 = 900000000000489007;
pub(crate) const DUPLICATE: u64 = 900000000000482003;
pub(crate) const OUTDATED: u64 = 900000000000483008;
pub(crate) const AMBIGUOUS: u64 = 900000000000484002;
pub(crate) const MOVED_ELSEWHERE: u64 = 900000000000487009;
pub(crate) const LIMITED: u64 = 900000000000486000;
pub(crate) const CTV3_SIMPLE_MAP: u64 = 900000000000497000;
pub(crate) const ICD10_MAP: u64 = 447562003;
pub(crate) const MODULE_DEPENDENCY: u64 = 900000000000534007;
pub(crate) const MAP_CORRELATION_NOT_SPECIFIED: u64 = 447561005;
pub(crate) const MAP_PROPERLY_CLASSIFIED: u64 = 447637006;
pub(crate) const MAP_CANNOT_CLASSIFY: u64 = 447638001;
pub(crate) const MAP_CONTEXT_DEPENDENT: u64 = 447639009;

// Top-level hierarchies and the real sub-hierarchy roots used as branches.
pub(crate) const BODY_STRUCTURE: u64 = 123037004;
pub(crate) const CLINICAL_FINDING: u64 = 404684003;
pub(crate) const ENVIRONMENT: u64 = 308916002;
pub(crate) const EVENT: u64 = 272379006;
pub(crate) const OBSERVABLE: u64 = 363787002;
pub(crate) const ORGANISM: u64 = 410607006;
pub(crate) const PRODUCT: u64 = 373873005;
pub(crate) const PHYSICAL_FORCE: u64 = 78621006;
pub(crate) const PHYSICAL_OBJECT: u64 = 260787004;
pub(crate) const PROCEDURE: u64 = 71388002;
pub(crate) const QUALIFIER: u64 = 362981000;
pub(crate) const RECORD_ARTIFACT: u64 = 419891008;
pub(crate) const SITUATION: u64 = 243796009;
pub(crate) const SOCIAL: u64 = 48176007;
pub(crate) const SPECIAL: u64 = 370115009;
pub(crate) const SPECIMEN: u64 = 123038009;
pub(crate) const STAGING: u64 = 254291000;
pub(crate) const SUBSTANCE: u64 = 105590001;
pub(crate) const DISEASE: u64 = 64572001;
pub(crate) const MORPHOLOGIC_ABNORMALITY: u64 = 49755003;
pub(crate) const ACTION: u64 = 129264002;
pub(crate) const MEDICINAL_PRODUCT: u64 = 763158003;

// Attributes.
pub(crate) const FINDING_SITE: u64 = 363698007;
pub(crate) const ASSOCIATED_MORPHOLOGY: u64 = 116676008;
pub(crate) const CAUSATIVE_AGENT: u64 = 246075003;
pub(crate) const METHOD: u64 = 260686004;
pub(crate) const PROCEDURE_SITE_DIRECT: u64 = 405813007;
pub(crate) const HAS_ACTIVE_INGREDIENT: u64 = 127489000;
pub(crate) const HAS_DOSE_FORM: u64 = 411116001;
pub(crate) const PART_OF: u64 = 123005000;
pub(crate) const PATHOLOGICAL_PROCESS: u64 = 370135005;
pub(crate) const OCCURRENCE: u64 = 246454002;
pub(crate) const CLINICAL_COURSE: u64 = 263502005;
pub(crate) const LATERALITY: u64 = 272741003;
pub(crate) const HAS_INTENT: u64 = 363703001;
pub(crate) const INTERPRETS: u64 = 363714003;
pub(crate) const HAS_INTERPRETATION: u64 = 363713009;
pub(crate) const USING_DEVICE: u64 = 424226004;
pub(crate) const DIRECT_MORPHOLOGY: u64 = 363700003;
pub(crate) const PROCEDURE_APPROACH: u64 = 116688005;
pub(crate) const ASSOCIATED_FINDING: u64 = 246090004;
pub(crate) const FINDING_CONTEXT: u64 = 408729009;
pub(crate) const TEMPORAL_CONTEXT: u64 = 408731000;
pub(crate) const SUBJECT_RELATIONSHIP_CONTEXT: u64 = 408732007;
pub(crate) const COMPONENT: u64 = 246093002;
pub(crate) const PROPERTY: u64 = 370130000;
pub(crate) const SPECIMEN_SOURCE_TOPOGRAPHY: u64 = 118169006;
pub(crate) const SPECIMEN_SUBSTANCE: u64 = 370133003;
pub(crate) const STRENGTH_NUMERATOR_VALUE: u64 = 1142135004;
pub(crate) const STRENGTH_DENOMINATOR_VALUE: u64 = 1142136003;
pub(crate) const COUNT_OF_BASE: u64 = 1142139005;

/// Case significance written as a letter in the table: `i` = entire term
/// case insensitive, `S` = entire term case sensitive, `I` = only the
/// initial character case insensitive.
#[derive(Debug)]
pub(crate) struct MetaConcept {
    /// The real SCTID, or 0 for synthetic metadata.
    pub(crate) id: u64,
    /// Is-a parents, all earlier in [`META`].
    pub(crate) parents: &'static [u64],
    pub(crate) fsn: &'static str,
    /// Synonyms; the first is the preferred term in both dialects.
    pub(crate) synonyms: &'static [&'static str],
    pub(crate) case: char,
}

/// What a synthetic metadata entry (id 0) is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SyntheticMeta {
    FindingRefset,
    ProcedureRefset,
    MedicationRefset,
    TextAttribute,
}

/// Index in [`META`] of each synthetic metadata entry, in declaration order.
pub(crate) const SYNTHETIC_META: [SyntheticMeta; 4] = [
    SyntheticMeta::FindingRefset,
    SyntheticMeta::ProcedureRefset,
    SyntheticMeta::MedicationRefset,
    SyntheticMeta::TextAttribute,
];

const fn m(
    id: u64,
    parents: &'static [u64],
    fsn: &'static str,
    synonyms: &'static [&'static str],
    case: char,
) -> MetaConcept {
    MetaConcept {
        id,
        parents,
        fsn,
        synonyms,
        case,
    }
}

const CORE_METADATA: u64 = 900000000000442005;
const FOUNDATION_METADATA: u64 = 900000000000454005;
const REFSET: u64 = 900000000000455006;
const REFSET_ATTRIBUTE: u64 = 900000000000457003;
const OBJECT_ATTRIBUTE: u64 = 762705008;
const DATA_ATTRIBUTE: u64 = 762706009;
const SIMPLE_TYPE_REFSET: u64 = 900000000000456007;

/// The metadata and top-level concepts, parents before children.
#[rustfmt::skip]
pub(crate) static META: &[MetaConcept] = &[
    m(ROOT, &[], "SNOMED CT Concept (SNOMED RT+CTV3)", &["SNOMED CT Concept"], 'S'),
    // The 19 top-level hierarchies.
    m(BODY_STRUCTURE, &[ROOT], "Body structure (body structure)", &["Body structure", "Body structures"], 'i'),
    m(CLINICAL_FINDING, &[ROOT], "Clinical finding (finding)", &["Clinical finding"], 'i'),
    m(ENVIRONMENT, &[ROOT], "Environment or geographical location (environment / location)", &["Environment or geographical location"], 'i'),
    m(EVENT, &[ROOT], "Event (event)", &["Event", "Events"], 'i'),
    m(OBSERVABLE, &[ROOT], "Observable entity (observable entity)", &["Observable entity"], 'i'),
    m(ORGANISM, &[ROOT], "Organism (organism)", &["Organism"], 'i'),
    m(PRODUCT, &[ROOT], "Pharmaceutical / biologic product (product)", &["Pharmaceutical / biologic product"], 'i'),
    m(PHYSICAL_FORCE, &[ROOT], "Physical force (physical force)", &["Physical force"], 'i'),
    m(PHYSICAL_OBJECT, &[ROOT], "Physical object (physical object)", &["Physical object", "Physical objects"], 'i'),
    m(PROCEDURE, &[ROOT], "Procedure (procedure)", &["Procedure"], 'i'),
    m(QUALIFIER, &[ROOT], "Qualifier value (qualifier value)", &["Qualifier value"], 'i'),
    m(RECORD_ARTIFACT, &[ROOT], "Record artifact (record artifact)", &["Record artifact"], 'i'),
    m(SITUATION, &[ROOT], "Situation with explicit context (situation)", &["Situation with explicit context", "Context-dependent category"], 'i'),
    m(MODEL_COMPONENT, &[ROOT], "SNOMED CT Model Component (metadata)", &["SNOMED CT Model Component"], 'S'),
    m(SOCIAL, &[ROOT], "Social context (social concept)", &["Social context"], 'i'),
    m(SPECIAL, &[ROOT], "Special concept (special concept)", &["Special concept"], 'i'),
    m(SPECIMEN, &[ROOT], "Specimen (specimen)", &["Specimen"], 'i'),
    m(STAGING, &[ROOT], "Staging and scales (staging scale)", &["Staging and scales"], 'i'),
    m(SUBSTANCE, &[ROOT], "Substance (substance)", &["Substance", "Substances"], 'i'),
    // Real sub-hierarchy roots that synthetic branches hang from.
    m(DISEASE, &[CLINICAL_FINDING], "Disease (disorder)", &["Disease", "Disorder"], 'i'),
    m(MORPHOLOGIC_ABNORMALITY, &[BODY_STRUCTURE], "Morphologically abnormal structure (morphologic abnormality)", &["Morphologically abnormal structure"], 'i'),
    m(ACTION, &[QUALIFIER], "Action (qualifier value)", &["Action"], 'i'),
    m(MEDICINAL_PRODUCT, &[PRODUCT], "Medicinal product (product)", &["Medicinal product"], 'i'),
    // Model component: core metadata.
    m(CORE_METADATA, &[MODEL_COMPONENT], "Core metadata concept (core metadata concept)", &["Core metadata concept"], 'i'),
    m(MODULE, &[CORE_METADATA], "Module (core metadata concept)", &["Module"], 'i'),
    m(CORE_MODULE, &[MODULE], "SNOMED CT core module (core metadata concept)", &["SNOMED CT core module", "SNOMED CT core"], 'S'),
    m(MODEL_MODULE, &[MODULE], "SNOMED CT model component module (core metadata concept)", &["SNOMED CT model component module", "SNOMED CT model component"], 'S'),
    m(900000000000446008, &[CORE_METADATA], "Description type (core metadata concept)", &["Description type"], 'i'),
    m(FSN, &[900000000000446008], "Fully specified name (core metadata concept)", &["Fully specified name"], 'i'),
    m(SYNONYM, &[900000000000446008], "Synonym (core metadata concept)", &["Synonym"], 'i'),
    m(DEFINITION, &[900000000000446008], "Definition (core metadata concept)", &["Definition"], 'i'),
    m(900000000000447004, &[CORE_METADATA], "Case significance (core metadata concept)", &["Case significance"], 'i'),
    m(CASE_INSENSITIVE, &[900000000000447004], "Entire term case insensitive (core metadata concept)", &["Entire term case insensitive", "Case insensitive"], 'i'),
    m(CASE_SENSITIVE, &[900000000000447004], "Entire term case sensitive (core metadata concept)", &["Entire term case sensitive", "Case sensitive"], 'i'),
    m(INITIAL_INSENSITIVE, &[900000000000447004], "Only initial character case insensitive (core metadata concept)", &["Only initial character case insensitive", "Initial character case insensitive"], 'i'),
    m(900000000000449001, &[CORE_METADATA], "Characteristic type (core metadata concept)", &["Characteristic type"], 'i'),
    m(900000000000006009, &[900000000000449001], "Defining relationship (core metadata concept)", &["Defining relationship"], 'i'),
    m(INFERRED, &[900000000000006009], "Inferred relationship (core metadata concept)", &["Inferred relationship"], 'i'),
    m(ADDITIONAL, &[900000000000449001], "Additional relationship (core metadata concept)", &["Additional relationship"], 'i'),
    m(900000000000450001, &[CORE_METADATA], "Modifier (core metadata concept)", &["Modifier"], 'i'),
    m(EXISTENTIAL, &[900000000000450001], "Existential restriction modifier (core metadata concept)", &["Existential restriction modifier", "Some"], 'i'),
    m(900000000000444006, &[CORE_METADATA], "Definition status (core metadata concept)", &["Definition status"], 'i'),
    m(PRIMITIVE, &[900000000000444006], "Not sufficiently defined by necessary conditions definition status (core metadata concept)", &["Not sufficiently defined by necessary conditions definition status", "Primitive"], 'i'),
    m(DEFINED, &[900000000000444006], "Sufficiently defined by necessary conditions definition status (core metadata concept)", &["Sufficiently defined by necessary conditions definition status", "Defined"], 'i'),
    // Model component: foundation metadata.
    m(FOUNDATION_METADATA, &[MODEL_COMPONENT], "Foundation metadata concept (foundation metadata concept)", &["Foundation metadata concept"], 'i'),
    m(REFSET, &[FOUNDATION_METADATA], "Reference set (foundation metadata concept)", &["Reference set"], 'i'),
    m(REFSET_ATTRIBUTE, &[FOUNDATION_METADATA], "Reference set attribute (foundation metadata concept)", &["Reference set attribute"], 'i'),
    m(900000000000511003, &[REFSET_ATTRIBUTE], "Acceptability (foundation metadata concept)", &["Acceptability"], 'i'),
    m(PREFERRED, &[900000000000511003], "Preferred (foundation metadata concept)", &["Preferred"], 'i'),
    m(ACCEPTABLE, &[900000000000511003], "Acceptable (foundation metadata concept)", &["Acceptable"], 'i'),
    m(900000000000481005, &[REFSET_ATTRIBUTE], "Concept inactivation value (foundation metadata concept)", &["Concept inactivation value"], 'i'),
    m(DUPLICATE, &[900000000000481005], "Duplicate component (foundation metadata concept)", &["Duplicate component", "Duplicate"], 'i'),
    m(OUTDATED, &[900000000000481005], "Outdated component (foundation metadata concept)", &["Outdated component", "Outdated"], 'i'),
    m(AMBIGUOUS, &[900000000000481005], "Ambiguous component (foundation metadata concept)", &["Ambiguous component", "Ambiguous"], 'i'),
    m(MOVED_ELSEWHERE, &[900000000000481005], "Component moved elsewhere (foundation metadata concept)", &["Component moved elsewhere", "Moved elsewhere"], 'i'),
    m(LIMITED, &[900000000000481005], "Limited component (foundation metadata concept)", &["Limited component", "Limited"], 'i'),
    m(447247004, &[REFSET_ATTRIBUTE], "SNOMED CT source code to target map code correlation value (foundation metadata concept)", &["SNOMED CT source code to target map code correlation value"], 'S'),
    m(MAP_CORRELATION_NOT_SPECIFIED, &[447247004], "SNOMED CT source code to target map code correlation not specified (foundation metadata concept)", &["SNOMED CT source code to target map code correlation not specified"], 'S'),
    m(MAP_PROPERLY_CLASSIFIED, &[REFSET_ATTRIBUTE], "Map source concept is properly classified (foundation metadata concept)", &["Map source concept is properly classified"], 'i'),
    m(MAP_CANNOT_CLASSIFY, &[REFSET_ATTRIBUTE], "Map source concept cannot be classified with available data (foundation metadata concept)", &["Map source concept cannot be classified with available data"], 'i'),
    m(MAP_CONTEXT_DEPENDENT, &[REFSET_ATTRIBUTE], "Map of source concept is context dependent (foundation metadata concept)", &["Map of source concept is context dependent"], 'i'),
    m(SIMPLE_TYPE_REFSET, &[REFSET], "Simple type reference set (foundation metadata concept)", &["Simple type reference set"], 'i'),
    m(LANGUAGE_TYPE_REFSET, &[REFSET], "Language type reference set (foundation metadata concept)", &["Language type reference set"], 'i'),
    m(900000000000507009, &[LANGUAGE_TYPE_REFSET], "English [International Organization for Standardization 639-1 code en] language reference set (foundation metadata concept)", &["English [International Organization for Standardization 639-1 code en] language reference set"], 'S'),
    m(US_ENGLISH, &[900000000000507009], "United States of America English language reference set (foundation metadata concept)", &["United States of America English language reference set", "US English"], 'S'),
    m(GB_ENGLISH, &[900000000000507009], "Great Britain English language reference set (foundation metadata concept)", &["Great Britain English language reference set", "GB English"], 'S'),
    m(900000000000521006, &[REFSET], "Association type reference set (foundation metadata concept)", &["Association type reference set"], 'i'),
    m(900000000000522004, &[900000000000521006], "Historical association reference set (foundation metadata concept)", &["Historical association reference set"], 'i'),
    m(REPLACED_BY, &[900000000000522004], "REPLACED BY association reference set (foundation metadata concept)", &["REPLACED BY association reference set"], 'S'),
    m(SAME_AS, &[900000000000522004], "SAME AS association reference set (foundation metadata concept)", &["SAME AS association reference set"], 'S'),
    m(POSSIBLY_EQUIVALENT_TO, &[900000000000522004], "POSSIBLY EQUIVALENT TO association reference set (foundation metadata concept)", &["POSSIBLY EQUIVALENT TO association reference set"], 'S'),
    m(WAS_A, &[900000000000522004], "WAS A association reference set (foundation metadata concept)", &["WAS A association reference set"], 'S'),
    m(MOVED_TO, &[900000000000522004], "MOVED TO association reference set (foundation metadata concept)", &["MOVED TO association reference set"], 'S'),
    m(900000000000480006, &[REFSET], "Attribute value type reference set (foundation metadata concept)", &["Attribute value type reference set"], 'i'),
    m(CONCEPT_INACTIVATION, &[900000000000480006], "Concept inactivation indicator attribute value reference set (foundation metadata concept)", &["Concept inactivation indicator attribute value reference set", "Concept inactivation indicator reference set"], 'S'),
    m(900000000000496009, &[REFSET], "Simple map type reference set (foundation metadata concept)", &["Simple map type reference set"], 'i'),
    m(CTV3_SIMPLE_MAP, &[900000000000496009], "CTV3 simple map reference set (foundation metadata concept)", &["CTV3 simple map reference set", "CTV3 simple map"], 'S'),
    m(609331003, &[REFSET], "Extended map type reference set (foundation metadata concept)", &["Extended map type reference set"], 'i'),
    m(ICD10_MAP, &[609331003], "ICD-10 complex map reference set (foundation metadata concept)", &["ICD-10 complex map reference set", "ICD-10 extended map"], 'S'),
    m(MODULE_DEPENDENCY, &[REFSET], "Module dependency reference set (foundation metadata concept)", &["Module dependency reference set"], 'i'),
    // Synthetic simple refsets (ids assigned by the model).
    m(0, &[SIMPLE_TYPE_REFSET], "Synthetic clinical finding simple reference set (foundation metadata concept)", &["Synthetic clinical finding simple reference set"], 'i'),
    m(0, &[SIMPLE_TYPE_REFSET], "Synthetic procedure simple reference set (foundation metadata concept)", &["Synthetic procedure simple reference set"], 'i'),
    m(0, &[SIMPLE_TYPE_REFSET], "Synthetic medication simple reference set (foundation metadata concept)", &["Synthetic medication simple reference set"], 'i'),
    // Model component: attributes.
    m(106237007, &[MODEL_COMPONENT], "Linkage concept (linkage concept)", &["Linkage concept"], 'i'),
    m(246061005, &[106237007], "Attribute (attribute)", &["Attribute"], 'i'),
    m(IS_A, &[246061005], "Is a (attribute)", &["Is a"], 'i'),
    m(410662002, &[246061005], "Concept model attribute (attribute)", &["Concept model attribute"], 'i'),
    m(OBJECT_ATTRIBUTE, &[410662002], "Concept model object attribute (attribute)", &["Concept model object attribute"], 'i'),
    m(DATA_ATTRIBUTE, &[410662002], "Concept model data attribute (attribute)", &["Concept model data attribute"], 'i'),
    m(FINDING_SITE, &[OBJECT_ATTRIBUTE], "Finding site (attribute)", &["Finding site"], 'i'),
    m(ASSOCIATED_MORPHOLOGY, &[OBJECT_ATTRIBUTE], "Associated morphology (attribute)", &["Associated morphology", "Morphology"], 'i'),
    m(CAUSATIVE_AGENT, &[OBJECT_ATTRIBUTE], "Causative agent (attribute)", &["Causative agent"], 'i'),
    m(METHOD, &[OBJECT_ATTRIBUTE], "Method (attribute)", &["Method"], 'i'),
    m(363704007, &[OBJECT_ATTRIBUTE], "Procedure site (attribute)", &["Procedure site"], 'i'),
    m(PROCEDURE_SITE_DIRECT, &[363704007], "Procedure site - Direct (attribute)", &["Procedure site - Direct"], 'I'),
    m(HAS_ACTIVE_INGREDIENT, &[OBJECT_ATTRIBUTE], "Has active ingredient (attribute)", &["Has active ingredient"], 'i'),
    m(HAS_DOSE_FORM, &[OBJECT_ATTRIBUTE], "Has manufactured dose form (attribute)", &["Has manufactured dose form"], 'i'),
    m(PART_OF, &[OBJECT_ATTRIBUTE], "Part of (attribute)", &["Part of"], 'i'),
    m(PATHOLOGICAL_PROCESS, &[OBJECT_ATTRIBUTE], "Pathological process (attribute)", &["Pathological process"], 'i'),
    m(OCCURRENCE, &[OBJECT_ATTRIBUTE], "Occurrence (attribute)", &["Occurrence"], 'i'),
    m(CLINICAL_COURSE, &[OBJECT_ATTRIBUTE], "Clinical course (attribute)", &["Clinical course"], 'i'),
    m(LATERALITY, &[OBJECT_ATTRIBUTE], "Laterality (attribute)", &["Laterality"], 'i'),
    m(HAS_INTENT, &[OBJECT_ATTRIBUTE], "Has intent (attribute)", &["Has intent"], 'i'),
    m(INTERPRETS, &[OBJECT_ATTRIBUTE], "Interprets (attribute)", &["Interprets"], 'i'),
    m(HAS_INTERPRETATION, &[OBJECT_ATTRIBUTE], "Has interpretation (attribute)", &["Has interpretation"], 'i'),
    m(USING_DEVICE, &[OBJECT_ATTRIBUTE], "Using device (attribute)", &["Using device"], 'i'),
    m(DIRECT_MORPHOLOGY, &[OBJECT_ATTRIBUTE], "Direct morphology (attribute)", &["Direct morphology"], 'i'),
    m(PROCEDURE_APPROACH, &[OBJECT_ATTRIBUTE], "Procedure approach (attribute)", &["Procedure approach"], 'i'),
    m(ASSOCIATED_FINDING, &[OBJECT_ATTRIBUTE], "Associated finding (attribute)", &["Associated finding"], 'i'),
    m(FINDING_CONTEXT, &[OBJECT_ATTRIBUTE], "Finding context (attribute)", &["Finding context"], 'i'),
    m(TEMPORAL_CONTEXT, &[OBJECT_ATTRIBUTE], "Temporal context (attribute)", &["Temporal context"], 'i'),
    m(SUBJECT_RELATIONSHIP_CONTEXT, &[OBJECT_ATTRIBUTE], "Subject relationship context (attribute)", &["Subject relationship context"], 'i'),
    m(COMPONENT, &[OBJECT_ATTRIBUTE], "Component (attribute)", &["Component"], 'i'),
    m(PROPERTY, &[OBJECT_ATTRIBUTE], "Property (attribute)", &["Property"], 'i'),
    m(SPECIMEN_SOURCE_TOPOGRAPHY, &[OBJECT_ATTRIBUTE], "Specimen source topography (attribute)", &["Specimen source topography"], 'i'),
    m(SPECIMEN_SUBSTANCE, &[OBJECT_ATTRIBUTE], "Specimen substance (attribute)", &["Specimen substance"], 'i'),
    m(STRENGTH_NUMERATOR_VALUE, &[DATA_ATTRIBUTE], "Has presentation strength numerator value (attribute)", &["Has presentation strength numerator value"], 'i'),
    m(STRENGTH_DENOMINATOR_VALUE, &[DATA_ATTRIBUTE], "Has presentation strength denominator value (attribute)", &["Has presentation strength denominator value"], 'i'),
    m(COUNT_OF_BASE, &[DATA_ATTRIBUTE], "Count of base of active ingredient (attribute)", &["Count of base of active ingredient"], 'i'),
    // Synthetic string-valued data attribute (id assigned by the model).
    m(0, &[DATA_ATTRIBUTE], "Has synthetic product characteristic text (attribute)", &["Has synthetic product characteristic text"], 'i'),
];

/// Case significance concept for a table letter.
pub(crate) fn case_id(case: char) -> u64 {
    match case {
        'S' => CASE_SENSITIVE,
        'I' => INITIAL_INSENSITIVE,
        _ => CASE_INSENSITIVE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use txmap_rf2::sctid::{ComponentKind, validate};

    #[test]
    fn table_is_consistent() {
        let mut seen: Vec<u64> = Vec::new();
        let mut synthetic = 0;
        for c in META {
            for p in c.parents {
                assert!(
                    seen.contains(p),
                    "{} has parent {p} not declared before it",
                    c.fsn
                );
            }
            if c.id == 0 {
                synthetic += 1;
            } else {
                assert_eq!(validate(c.id), Ok(ComponentKind::Concept), "{}", c.fsn);
                assert!(!seen.contains(&c.id), "duplicate {}", c.id);
                seen.push(c.id);
            }
            assert!(c.fsn.ends_with(')'), "{}", c.fsn);
            assert!(!c.synonyms.is_empty());
        }
        assert_eq!(synthetic, SYNTHETIC_META.len());
        // The 19 top-level hierarchies hang from the root.
        let top = META.iter().filter(|c| c.parents == [ROOT]).count();
        assert_eq!(top, 19);
    }
}
