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
//! Modules: [`result`] (codes, error detail, panic boundary), [`store`] (stores, roots,
//! verification, blobs, tree copy), [`schema`], [`tuple`](mod@tuple) and [`fields`] (building and reading
//! tuples), [`map`] (maps, gets, edits, map builders), [`iter`] (cursors, diffs), [`merge`], [`dolt`] (reading
//! real Dolt databases: branches, log, tables, schemas, typed rows, CSV export).

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
