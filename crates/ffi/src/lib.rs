//! # prollystore-ffi
//!
//! The C ABI of prollystore; `include/prollystore.h` is generated from this crate by cbindgen
//! (`scripts/cheader.sh`). See `crates/ffi/README.md` for building, linking and the rules below
//! in full.
//!
//! Conventions (after rustls-ffi): every symbol starts with `prolly_`; handles are opaque and
//! each has a `_free`; inputs come first and outputs last, and outputs are written only on
//! success; a buffer is followed by its length; every function returns a `prolly_result` whose
//! numbers never change, described by `prolly_result_message(int)`; every pointer argument is
//! checked for NULL; every body runs inside a panic boundary.
//!
//! Plumbing:
//! * [`result`]: result codes, the per-thread error detail, the panic boundary.
//! * `args`: C arguments to Rust values (every raw pointer dereferenced goes through it).
//! * `backend`: the store behind a `prolly_store` handle (built-in, or a remote read in place).
//! * `lookup`: `prolly_map_get`'s point lookup, one function per concrete store type.
//!
//! Stores and maps:
//! * [`store`]: stores (directory or memory), named roots, verification, blobs, tree copy.
//! * [`schema`]: a map's key and value tuple descriptors.
//! * [`tuple`](mod@tuple) and [`fields`]: building tuples and reading their fields, one getter
//!   and putter per encoding.
//! * [`map`]: maps: open at a root, point and ordinal reads, batch edits, map builders.
//! * [`iter`]: range cursors (both directions) and diffs between two maps.
//! * [`merge`]: three-way merge with conflict reporting.
//!
//! Features:
//! * [`dolt`] (feature `dolt`, on by default): real Dolt databases — branches, tags, log,
//!   tables, schemas, typed rows, gets and ranges, CSV export, diffs — and writes: row changes
//!   and commits (`prolly_dolt_writer_*`), branches, checkout, tags, merges and status.
//! * [`arrow`] (feature `arrow`, on by default): Dolt tables, ranges, diffs and maps as Arrow C
//!   streams.
//! * `remote` (feature `remote`, off by default): push, pull and clone through object storage,
//!   and remotes opened read-only as store handles.
//! * `dolt_remote` (feature `dolt-remote`, off by default): Dolt databases cloned, fetched,
//!   pulled and pushed over Dolt remotes, and read in place on one.

// C names for C types; the pointer contracts are documented on each function (C callers
// cannot see Rust's `unsafe`, as in rustls-ffi).
// Handles share their store through `Arc`s whose contents are not `Sync` (a memory store, the
// cell a commit mutates): only C code shares them across threads, under the thread-safety rules
// documented on each handle.
#![allow(
    non_camel_case_types,
    clippy::not_unsafe_ptr_arg_deref,
    clippy::arc_with_non_send_sync
)]

use std::ffi::c_char;

mod args;
#[cfg(feature = "arrow")]
pub mod arrow;
mod backend;
#[cfg(feature = "dolt")]
pub mod dolt;
#[cfg(feature = "dolt-remote")]
pub mod dolt_remote;
pub mod fields;
pub mod iter;
mod lookup;
pub mod map;
pub mod merge;
#[cfg(feature = "remote")]
pub mod remote;
pub mod result;
pub mod schema;
pub mod store;
pub mod tuple;

/// The library version as a NUL-terminated string with static lifetime. Never NULL.
#[no_mangle]
pub extern "C" fn prolly_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
