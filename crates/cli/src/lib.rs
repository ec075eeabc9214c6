//! # prollystore-cli
//!
//! The `prolly` command-line tool as a library (the binary is a thin `main`): prollystore
//! stores ([`FileStore`](prollystore::store::FileStore) directories, or remotes read in place)
//! and, under `prolly dolt DBDIR …`, real Dolt databases, read and written.
//!
//! The command line:
//! * [`commands`]: the command line and one function per command.
//! * [`error`]: the tool's one error type (a sentence for the user, or a closed output pipe).
//! * `progress`: the progress bar drawn on stderr, shared by [`commands`] and [`dolt`].
//!
//! Native stores (`prolly --store DIR …`):
//! * [`map_schema`]: the compact schema syntax of a map (`id:int64,name:string?`) and its stored
//!   form (not [`prollystore_dolt::schema`], which reads Dolt's table schemas).
//! * [`catalog`]: how maps and their schemas are kept as named roots.
//! * [`field_text`]: text forms of every encoding, parsing (import) and printing (export).
//! * [`records`]: CSV records, read fast and exactly as the `csv` crate reads them.
//! * [`import`]: CSV → sorted tuples → tree, or edits of an existing tree; [`infer`]: a schema
//!   guessed from a CSV file (`import --infer`).
//! * [`csv_lines`]: a map's rows written as CSV lines (not [`prollystore_dolt::table_rows`], which
//!   reads the rows of Dolt tables); [`row_filter`]: `--where` conditions for `scan` and
//!   `export`.
//! * [`source`]: where read commands read: a store directory or a remote read in place.
//! * [`walk`]: chunk walks for `stats` and `verify`.
//!
//! Dolt databases (`prolly dolt DBDIR …`):
//! * [`dolt`]: reads — branches, tags, log, tables, schemas, CSV export, keyed gets and range
//!   scans — printed as the `dolt` CLI prints them.
//! * [`dolt_diff`]: `diff`, row and table changes between two states.
//! * [`dolt_write`]: `import` and `commit`, table changes written as Dolt writes them.
//! * [`dolt_vc`]: `branch`, `checkout`, `tag`, `merge` and `status`, as the `dolt` commands of
//!   the same names do them.
//! * [`dolt_remote`]: `clone URL DIR`, and remote URLs read in place by the read commands.

pub mod catalog;
pub mod commands;
pub mod csv_lines;
pub mod dolt;
pub mod dolt_diff;
pub mod dolt_remote;
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
