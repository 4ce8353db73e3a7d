//! Well-known SNOMED CT concepts that the format gives meaning to: the first
//! one-byte codes stand for them, and importer and store agree on them here.

/// |SNOMED CT Concept|: the root of the hierarchy
/// ([`concept_flags::IN_HIERARCHY`](crate::schema::concept_flags::IN_HIERARCHY)).
pub const ROOT: u64 = 138875005;
/// |Is a|: the relationship type of the hierarchy.
pub const IS_A: u64 = 116680003;
/// |Defined| definition status (sufficiently defined); else primitive.
pub const DEFINED: u64 = 900000000000073002;
/// |Fully specified name| description type.
pub const FSN: u64 = 900000000000003001;
/// |Synonym| description type.
pub const SYNONYM: u64 = 900000000000013009;
/// |Definition| description type (text definitions).
pub const DEFINITION: u64 = 900000000000550004;
/// |Preferred| acceptability.
pub const PREFERRED: u64 = 900000000000548007;
/// |Acceptable| acceptability.
pub const ACCEPTABLE: u64 = 900000000000549004;
/// |Inferred relationship| characteristic type.
pub const INFERRED: u64 = 900000000000011006;
/// |Additional relationship| characteristic type.
pub const ADDITIONAL: u64 = 900000000000227009;
/// |Stated relationship| characteristic type.
pub const STATED: u64 = 900000000000010007;
/// |Module dependency reference set|: names the edition.
pub const MODULE_DEPENDENCY: u64 = 900000000000534007;
/// |United States of America English language reference set|.
pub const US_ENGLISH: u64 = 900000000000509007;

/// Historical association refsets (`targetComponentId` the target): what
/// ECL's history supplements and `$translate` read.
pub mod association {
    /// |SAME AS association reference set|.
    pub const SAME_AS: u64 = 900000000000527005;
    /// |REPLACED BY association reference set|.
    pub const REPLACED_BY: u64 = 900000000000526001;
    /// |WAS A association reference set|.
    pub const WAS_A: u64 = 900000000000528000;
    /// |POSSIBLY EQUIVALENT TO association reference set|.
    pub const POSSIBLY_EQUIVALENT_TO: u64 = 900000000000523009;
    /// |MOVED TO association reference set|.
    pub const MOVED_TO: u64 = 900000000000524003;
    /// |MOVED FROM association reference set|.
    pub const MOVED_FROM: u64 = 900000000000525002;
    /// |ALTERNATIVE association reference set|.
    pub const ALTERNATIVE: u64 = 900000000000530003;
    /// |PARTIALLY EQUIVALENT TO association reference set|.
    pub const PARTIALLY_EQUIVALENT_TO: u64 = 1186924009;
    /// |POSSIBLY REPLACED BY association reference set|.
    pub const POSSIBLY_REPLACED_BY: u64 = 1186921001;
}

/// The concepts codes 0 to 7 always stand for, in this order.
pub const FIXED_CODES: [u64; 8] = [
    FSN, SYNONYM, DEFINITION, PREFERRED, ACCEPTABLE, INFERRED, ADDITIONAL, STATED,
];
