//! # prollystore-dolt
//!
//! Read-only access to real Dolt databases (`.dolt` directories), giving what Dolt itself shows:
//!
//! * [`chunks`]: the chunk files (manifest, journal, table files, archives) as one read-only
//!   store, [`DoltChunkSource`].
//! * [`db`]: navigation — branches, tags, working sets, commits and the log, root values, tables;
//!   [`log_text`]: the log as `dolt log` prints it.
//! * [`schema`]: table schemas (columns, SQL types, keys, indexes) and tuple descriptors;
//!   [`show_create`]: their `SHOW CREATE TABLE` text.
//! * [`index_map`]: a table's primary and secondary indexes as [`prollystore::Map`]s, keyed as
//!   Dolt orders them (collations included).
//! * [`table_rows`]: a table's rows as typed values ([`sql_value`]); [`generated`]: VIRTUAL
//!   generated columns computed from the stored ones.
//! * [`table_diff`]: the rows and tables that differ between two states (`dolt_diff`).
//! * [`table_reader`]: keyed reads (get by primary key, key ranges, secondary-index lookups)
//!   as row iterators, with keys built from typed values by [`key_encode`].
//! * [`csv_export`]: streaming CSV export of a whole table, identical to `dolt sql -r csv` and
//!   allocation-free per row; [`csv_field`]: one field as Dolt's CSV writer quotes it.
//! * [`value_text`]: allocation-free text of numbers, decimals and temporal values;
//!   [`geometry`]: geometry values as WKT text, and values to store from WKT or WKB.
//!
//! * [`write`](mod@write) (in progress): writing databases as Dolt does (issue #21): table changes and
//!   commits, and [`write::ops`], the runner of Dolt-made write scenarios.
//!
//! Apart from `write`, nothing here writes to the database directory.

mod chunk_memo;
pub mod chunks;
pub mod csv_export;
pub mod csv_field;
pub mod db;
pub mod error;
pub mod generated;
pub mod geometry;
mod geometry_srids;
pub mod index_map;
pub mod key_encode;
pub mod leaf_reader;
pub mod log_text;
mod message;
pub mod schema;
pub mod show_create;
pub mod sql_value;
pub mod table_diff;
pub mod table_reader;
pub mod table_rows;
pub mod value_text;
// Parts of the writer's crate-internal foundation are used only by its tests so far, hence the
// allowance.
#[allow(dead_code)]
pub mod write;

pub use chunks::DoltChunkSource;
pub use db::{Commit, Database, RootValue, State, Table, Tag, WorkingSet};
pub use error::{DoltError, Result};
pub use index_map::IndexMap;
pub use schema::{Column, Schema, SqlType};
pub use sql_value::SqlValue;
pub use table_reader::{KeyRange, Row, Rows, TableReader};
