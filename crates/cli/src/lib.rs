//! # prollystore-cli
//!
//! The `prolly` command-line tool over a prollystore [`FileStore`](prollystore::store::FileStore),
//! as a library (the binary is a thin `main`):
//!
//! * [`schema`]: the compact schema syntax (`id:int64,name:string?`) and its stored form.
//! * [`text`]: text forms of every encoding, parsing (import) and printing (export).
//! * [`catalog`]: how maps and their schemas are kept as named roots.
//! * [`import`]: CSV → sorted tuples → tree, or edits of an existing tree.
//! * [`rows`]: rows as CSV lines.
//! * [`walk`]: chunk walks for `stats` and `verify`.
//! * [`commands`]: the command line and one function per command.

pub mod catalog;
pub mod commands;
pub mod error;
pub mod import;
pub mod rows;
pub mod schema;
pub mod text;
pub mod walk;

pub use error::{Error, Result};
