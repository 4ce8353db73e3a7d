//! The fixed-size records rows are reduced to on their way through the
//! importer's sorters. Native byte order: they live only in this process and
//! its temporary files. Each orders by an explicit key.

use std::cmp::Ordering;

use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};

macro_rules! ordered_by {
    ($t:ty, |$r:ident| $key:expr) => {
        impl Ord for $t {
            fn cmp(&self, other: &Self) -> Ordering {
                let key = |$r: &$t| $key;
                key(self).cmp(&key(other))
            }
        }
        impl PartialOrd for $t {
            fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
                Some(self.cmp(other))
            }
        }
        impl PartialEq for $t {
            fn eq(&self, other: &Self) -> bool {
                self.cmp(other) == Ordering::Equal
            }
        }
        impl Eq for $t {}
    };
}

/// A component version: rows of one id from several packages (or one
/// package's history) order by (id, effectiveTime, package), so the last of
/// a run of equal ids is the one that counts.
pub trait Versioned {
    type Id: PartialEq;
    fn component(&self) -> Self::Id;
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ConceptIn {
    pub id: u64,
    pub effective_time: u32,
    pub source: u32,
    pub module: u64,
    pub definition_status: u64,
    pub active: u8,
    pub pad: [u8; 7],
}
ordered_by!(ConceptIn, |r| (r.id, r.effective_time, r.source));
impl Versioned for ConceptIn {
    type Id = u64;
    fn component(&self) -> u64 {
        self.id
    }
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct RelationshipIn {
    pub id: u64,
    pub effective_time: u32,
    pub source: u32,
    pub from: u64,
    pub to: u64,
    pub type_id: u64,
    pub characteristic: u64,
    pub group: u32,
    pub active: u8,
    pub pad: [u8; 3],
}
ordered_by!(RelationshipIn, |r| (r.id, r.effective_time, r.source));
impl RelationshipIn {
    /// The record of a relationship row of package `source`.
    pub fn of(r: &txmap_rf2::parse::RelationshipRow, source: u32) -> RelationshipIn {
        RelationshipIn {
            id: r.id,
            effective_time: r.effective_time,
            source,
            from: r.source,
            to: r.destination,
            type_id: r.type_id,
            characteristic: r.characteristic_type,
            group: r.group,
            active: r.active as u8,
            pad: [0; 3],
        }
    }
}

impl Versioned for RelationshipIn {
    type Id = u64;
    fn component(&self) -> u64 {
        self.id
    }
}

/// A concept having an attribute (or concrete value) of a type, for the
/// type indexes.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct TypeSource {
    pub type_ord: u32,
    pub source: u32,
}
ordered_by!(TypeSource, |r| (r.type_ord, r.source));

/// A relationship by ordinals, for the CSR sections.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Edge {
    pub key: u32,
    pub group: u32,
    pub type_ord: u32,
    pub other: u32,
    pub characteristic: u8,
    pub pad: [u8; 3],
}
ordered_by!(Edge, |r| (
    r.key,
    r.group,
    r.type_ord,
    r.other,
    r.characteristic
));

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ConcreteIn {
    pub id: u64,
    pub effective_time: u32,
    pub source: u32,
    pub from: u64,
    pub type_id: u64,
    pub characteristic: u64,
    pub value_offset: u64,
    pub value_len: u32,
    pub group: u32,
    pub active: u8,
    pub pad: [u8; 7],
}
ordered_by!(ConcreteIn, |r| (r.id, r.effective_time, r.source));
impl Versioned for ConcreteIn {
    type Id = u64;
    fn component(&self) -> u64 {
        self.id
    }
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ConcreteOut {
    pub from: u32,
    pub group: u32,
    pub type_ord: u32,
    pub value_len: u32,
    pub value_offset: u64,
    pub characteristic: u8,
    pub pad: [u8; 7],
}
ordered_by!(ConcreteOut, |r| (
    r.from,
    r.group,
    r.type_ord,
    r.value_offset
));

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DescriptionIn {
    pub id: u64,
    pub effective_time: u32,
    pub source: u32,
    pub concept: u64,
    pub module: u64,
    pub type_id: u64,
    pub case_significance: u64,
    pub term_offset: u64,
    pub term_len: u32,
    pub language: u8,
    pub active: u8,
    pub pad: [u8; 2],
}
ordered_by!(DescriptionIn, |r| (r.id, r.effective_time, r.source));
impl Versioned for DescriptionIn {
    type Id = u64;
    fn component(&self) -> u64 {
        self.id
    }
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct DescriptionOut {
    pub concept: u32,
    pub module: u32,
    pub id: u64,
    pub term_offset: u64,
    pub term_len: u32,
    pub effective_time: u32,
    pub type_code: u8,
    pub case_code: u8,
    pub language: u8,
    pub active: u8,
    pub pad: [u8; 4],
}
ordered_by!(DescriptionOut, |r| (r.concept, r.id));

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct MemberIn {
    pub uuid: [u8; 16],
    pub effective_time: u32,
    pub source: u32,
    pub refset: u64,
    pub component: u64,
    pub fields_offset: u64,
    pub module: u64,
    pub fields_len: u32,
    pub active: u8,
    pub pad: [u8; 3],
}
ordered_by!(MemberIn, |r| (r.uuid, r.effective_time, r.source));
impl Versioned for MemberIn {
    type Id = [u8; 16];
    fn component(&self) -> [u8; 16] {
        self.uuid
    }
}

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct MemberOut {
    pub refset: u64,
    pub component: u64,
    pub fields_offset: u64,
    pub module: u64,
    pub fields_len: u32,
    pub effective_time: u32,
    pub active: u8,
    pub pad: [u8; 7],
}
// Active members first, then inactive ones: two runs of (refset, component).
ordered_by!(MemberOut, |r| (
    r.active == 0,
    r.refset,
    r.component,
    r.fields_offset
));

/// A language refset row reduced to what the edition keeps.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct LanguageIn {
    pub uuid: [u8; 16],
    pub effective_time: u32,
    pub source: u32,
    pub refset: u64,
    pub description: u64,
    pub acceptability: u64,
    pub active: u8,
    pub pad: [u8; 7],
}
ordered_by!(LanguageIn, |r| (r.uuid, r.effective_time, r.source));
impl Versioned for LanguageIn {
    type Id = [u8; 16];
    fn component(&self) -> [u8; 16] {
        self.uuid
    }
}

/// An active language refset row by description SCTID, to be joined with
/// the description ids in one ordered pass (row order is by member UUID,
/// which would make each lookup a cache miss).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct LanguageRef {
    pub description: u64,
    /// The language refset's code.
    pub refset: u32,
    pub acceptability: u8,
    pub pad: [u8; 3],
}
ordered_by!(LanguageRef, |r| (r.description, r.refset, r.acceptability));

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct AcceptabilityOut {
    pub description: u32,
    /// The language refset's code.
    pub refset: u32,
    pub acceptability: u8,
    pub pad: [u8; 3],
}
ordered_by!(AcceptabilityOut, |r| (
    r.description,
    r.refset,
    r.acceptability
));

/// (key, value) pairs of u32: word postings, component-member links.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct Pair32 {
    pub key: u32,
    pub value: u32,
}
ordered_by!(Pair32, |r| (r.key, r.value));

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct ComponentLink {
    pub component: u64,
    pub member: u32,
    pub pad: u32,
}
ordered_by!(ComponentLink, |r| (r.component, r.member));

/// An association row read backwards: target and source ordinals.
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct AssociationLink {
    pub target: u32,
    pub member: u32,
    /// `NO_ORDINAL` if the source is not a concept here.
    pub source: u32,
    pub pad: u32,
}
ordered_by!(AssociationLink, |r| (r.target, r.member));

#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct IdOrdinal {
    pub id: u64,
    pub ordinal: u32,
    pub pad: u32,
}
ordered_by!(IdOrdinal, |r| (r.id, r.ordinal));

/// An Identifier file row: an alternate identifier (its text spilled).
#[derive(Clone, Copy, Debug, FromBytes, IntoBytes, Immutable, KnownLayout)]
#[repr(C)]
pub struct IdentifierIn {
    pub scheme: u64,
    /// `txmap_format::schema::identifier_hash` of the text.
    pub hash: u64,
    pub component: u64,
    pub text_offset: u64,
    pub effective_time: u32,
    pub source: u32,
    pub text_len: u32,
    pub active: u8,
    pub pad: [u8; 3],
}
ordered_by!(IdentifierIn, |r| (
    r.scheme,
    r.hash,
    r.effective_time,
    r.source
));
