//! The FHIR versions the server speaks, each at its own base: what an
//! endpoint's packages (`packages`), its FHIR API (`fhir`) and its
//! links share.

/// The FHIR versions served, each at its own base.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FhirVersion {
    R4,
    R5,
}

impl FhirVersion {
    pub const ALL: [FhirVersion; 2] = [FhirVersion::R4, FhirVersion::R5];

    /// `CapabilityStatement.fhirVersion`: `4.0.1` or `5.0.0`.
    pub fn full(self) -> &'static str {
        match self {
            FhirVersion::R4 => "4.0.1",
            FhirVersion::R5 => "5.0.0",
        }
    }

    /// The major.minor form `$versions` uses: `4.0` or `5.0`.
    pub fn short(self) -> &'static str {
        match self {
            FhirVersion::R4 => "4.0",
            FhirVersion::R5 => "5.0",
        }
    }

    /// Where this version is served: `/r4` or `/r5`.
    pub fn path(self) -> &'static str {
        match self {
            FhirVersion::R4 => "/r4",
            FhirVersion::R5 => "/r5",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            FhirVersion::R4 => "R4",
            FhirVersion::R5 => "R5",
        }
    }
}
