//! # prollystore-dolt
//!
//! Read-only access to real Dolt databases (`.dolt` directories), giving what Dolt itself shows:
//!
//! * [`chunks`]: the chunk files (manifest, journal, table files, archives) as one read-only
//!   store, [`DoltChunkSource`].
//! * [`db`]: navigation — branches, tags, working sets, commits and the log, root values, tables.
//! * [`schema`]: table schemas (columns, SQL types, keys, indexes) and tuple descriptors.
//! * [`rows`]: rows as typed values, and CSV text identical to `dolt sql -r csv`.
//! * [`export`]: streaming CSV export of a whole table, allocation-free per row.
//! * [`text`]: allocation-free text of numbers, decimals and temporal values.
//!
//! Nothing here writes to the database directory.

pub mod chunks;
pub mod create;
pub mod db;
pub mod error;
pub mod export;
pub mod geometry;
pub mod rows;
pub mod schema;
pub mod text;

pub use chunks::DoltChunkSource;
pub use db::{Commit, Database, RootValue, Table, Tag, WorkingSet};
pub use error::{DoltError, Result};
pub use schema::{Column, Schema, SqlType};
