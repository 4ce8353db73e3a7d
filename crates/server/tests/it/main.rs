//! The server's integration tests, one binary: each module was a test
//! file of its own, and 23 binaries each linking the whole server took
//! most of the test command's time (issue 34). `tests/reload.rs` stays a
//! binary of its own: it measures the process's memory and mappings, which
//! other tests running beside it in one process would move.

#[macro_use]
mod common;

mod admin;
mod answers;
mod builtin;
mod changed;
mod compiled;
mod connections;
mod damaged;
mod deploy;
mod expand;
mod ips;
mod lookup;
mod metadata;
mod out_of_service;
mod packages;
mod padded;
mod pages;
mod parameters;
mod resources;
mod server;
mod strangers;
mod translate;
mod validate;
mod writes;
