//! # prollystore-cli
//!
//! The `prolly` command-line tool over a prollystore [`FileStore`](prollystore::store::FileStore),
//! as a library (the binary is a thin `main`):
//!
//! * [`map_schema`]: the compact schema syntax of a map (`id:int64,name:string?`) and its stored
//!   form (not [`prollystore_dolt::schema`], which reads Dolt's table schemas).
//! * [`field_text`]: text forms of every encoding, parsing (import) and printing (export).
//! * [`catalog`]: how maps and their schemas are kept as named roots.
//! * [`import`]: CSV → sorted tuples → tree, or edits of an existing tree.
//! * [`records`]: CSV records, read fast and exactly as the `csv` crate reads them.
//! * [`csv_lines`]: a map's rows written as CSV lines (not [`prollystore_dolt::table_rows`], which
//!   reads the rows of Dolt tables).
//! * [`source`]: where read commands read: a store directory or a remote read in place.
//! * [`walk`]: chunk walks for `stats` and `verify`.
//! * [`dolt`]: `prolly dolt DBDIR ...`, read-only views of a real Dolt database.
//! * [`dolt_diff`]: `prolly dolt DBDIR diff`, row and table changes between two states.
//! * [`dolt_write`]: `prolly dolt DBDIR import` and `commit`, table changes written as Dolt
//!   writes them.
//! * [`commands`]: the command line and one function per command.
//! * `progress`: the progress bar drawn on stderr, shared by [`commands`] and [`dolt`].

pub mod catalog;
pub mod commands;
pub mod csv_lines;
pub mod dolt;
pub mod dolt_diff;
pub mod dolt_vc;
pub mod dolt_write;
pub mod error;
pub mod field_text;
pub mod import;
pub mod infer;
pub mod map_schema;
mod progress;
pub mod records;
pub mod row_filter;
pub mod source;
pub mod walk;

pub use error::{Error, Result};
