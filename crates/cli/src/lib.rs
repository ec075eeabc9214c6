//! # prollystore-cli
//!
//! The `prolly` command-line tool over a prollystore [`FileStore`](prollystore::store::FileStore),
//! as a library (the binary is a thin `main`):
//!
//! * [`schema`]: the compact schema syntax (`id:int64,name:string?`) and its stored form.
//! * [`text`]: text forms of every encoding, parsing (import) and printing (export).
//! * [`catalog`]: how maps and their schemas are kept as named roots.
//! * [`import`]: CSV → sorted tuples → tree, or edits of an existing tree.
//! * [`records`]: CSV records, read fast and exactly as the `csv` crate reads them.
//! * [`rows`]: rows as CSV lines.
//! * [`walk`]: chunk walks for `stats` and `verify`.
//! * [`dolt`]: `prolly dolt DBDIR ...`, read-only views of a real Dolt database.
//! * [`commands`]: the command line and one function per command.

pub mod catalog;
pub mod commands;
pub mod dolt;
pub mod error;
pub mod import;
pub mod records;
pub mod rows;
pub mod schema;
pub mod text;
pub mod walk;

pub use error::{Error, Result};
