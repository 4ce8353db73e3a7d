pub mod sctid;
