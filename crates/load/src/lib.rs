//! Getting an edition file's bytes into a process: read, mapped, or mapped
//! and pre-read in the background.
//!
//! Answers must not depend on how a file was loaded, so every mode yields
//! one type, [`EditionBytes`] (`AsRef<[u8]>`), and the same store code
//! (`txmap_store::Edition<EditionBytes>`) reads it. The modes differ only in
//! where the bytes live and what the first touch of a page costs:
//!
//! - [`LoadMode::Read`]: the file is read into one heap allocation sized from
//!   its metadata. The bytes are the process's own (anonymous) memory: RSS
//!   grows by the file size once, on load, and never by a page fault later.
//!   Each process pays for its own copy; nothing is held twice within one
//!   (FHIRsmith held each edition twice).
//! - [`LoadMode::Mmap`]: the file is mapped read-only and advised
//!   `MADV_RANDOM` as a whole, so kernel readahead does not pull in pages no
//!   query touched. Only touched pages become resident, and they are page
//!   cache, shared by every process mapping the file and reclaimable by the
//!   kernel. Opening takes microseconds; the price is a page fault on the
//!   first touch of each page, which is slow on a cold disk. A caller that
//!   knows the file's layout re-advises its parts ([`EditionBytes::advise`]:
//!   the server asks for readahead where calls read densely), and asks for
//!   runs it is about to read ([`will_need`]).
//! - [`LoadMode::Prewarm`]: mapped as for `Mmap`, then read through once on a
//!   background thread with `pread(2)` into a small fixed buffer (4 MiB by
//!   default). This does not touch the mapping, so it costs no process
//!   memory; it fills the page cache, which the mapping's faults then hit.
//!   Startup does not wait for it ([`Prewarm`] reports progress).
//!   `madvise(MADV_WILLNEED)` of a whole large file has been seen to read
//!   almost none of it, so it is not relied on for this.
//! - [`LoadMode::PrewarmHot`]: the same, for the ranges
//!   [`Loader::hot_ranges`] names (the edition's hot sections), each asked
//!   for as a whole and nothing around it.
//!
//! A pass over a mapping that must not warm it (verification) snapshots
//! its residency ([`EditionBytes::residency`]) and gives back what it read
//! ([`EditionBytes::release`]).
//!
//! When mapping fails, the file is read instead: [`Loaded::obtained`] is
//! `Read`, [`Loaded::mapped`] is false and [`Loaded::fallback`] says why.
//! This crate does not log; the caller warns with that reason.
//! [`Loader::simulate_map_failure`] makes that path testable.
//!
//! An empty file is not mapped (there is nothing to map, and some platforms
//! refuse zero-length mappings): whatever the mode, it is "read" as an empty
//! buffer with a fallback reason. It is not an edition file, and
//! `Container::open` rejects it with a precise error; loading is only about
//! bytes.
//!
//! # Safety
//!
//! The `unsafe` operations are `memmap2::Mmap::map`, whose contract is
//! that the file is not modified or truncated while mapped; the
//! `mincore(2)` query of a live mapping's residency
//! ([`EditionBytes::residency`]); `MADV_DONTNEED` and
//! `POSIX_FADV_DONTNEED` of a read-only mapping's clean pages
//! ([`EditionBytes::release`]); and the `madvise`/`posix_fadvise` hints,
//! which change no byte. Edition files
//! are immutable: txmap writes them once to a temporary name and renames
//! them into place, and never writes to an existing one. A mapped file that
//! someone else truncates kills the process with SIGBUS, which is why
//! operators install new editions as new files.
//!
//! This is a core crate: no async runtime and no HTTP crate. The prewarm
//! reader is a named std thread.

mod advice;
mod bytes;
mod error;
mod loader;
mod mode;
mod prewarm;

pub use advice::Advice;
pub use bytes::{EditionBytes, Mapping, Residency, will_need};
pub use error::LoadError;
pub use loader::{DEFAULT_PREWARM_BUFFER, HotRanges, Loaded, Loader, ProgressHook, load};
pub use mode::{LoadMode, ParseLoadModeError};
pub use prewarm::Prewarm;
