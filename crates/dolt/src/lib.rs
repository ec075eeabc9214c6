//! # prollystore-dolt
//!
//! Real Dolt databases (`.dolt` directories) read and written from Rust, without Go. The
//! reader gives what Dolt itself shows: branches, tags, the log, schemas, rows, CSV text and
//! diffs identical to the `dolt` CLI's. The writer ([`write`](mod@write)) makes tables, row
//! changes, commits, branches, tags and merges as Dolt makes them: the same chunks, and the
//! commit, root value and table hashes Dolt gives (checked on scenarios made by running Dolt,
//! conformance category `dolt-write`).
//!
//! Chunks and messages:
//! * [`chunks`]: the chunk files (manifest, chunk journal, table files, archives) as one
//!   read-only store, [`DoltChunkSource`].
//! * `message`: the verified FlatBuffers table of each chunk message kind (commit, tag,
//!   working set, root value, table, schema, foreign keys).
//! * `chunk_memo`: what is derived from a chunk (decoded tables, key orders, decode plans),
//!   kept by address for the life of an open database.
//! * [`leaf_reader`]: every leaf of a clustered index in key order, read in batches and
//!   hash-checked on reader threads (the bulk path of the CSV export and the cold Arrow pass).
//!
//! Databases and schemas:
//! * [`db`]: navigation — branches, tags, working sets, commits and the log, root values,
//!   tables ([`Database`], [`Table`]); [`log_text`]: the log as `dolt log` prints it.
//! * [`schema`]: table schemas (columns, SQL types, keys, indexes) and the tuple descriptors
//!   that decode rows (their `SHOW CREATE TABLE` text is the `prollystore-sql` crate's).
//! * [`error`]: [`DoltError`], for reads and writes alike.
//!
//! Rows and values:
//! * [`codec`]: the one codec of Dolt values: each column's [`codec::Kind`] (SQL type with its
//!   stored encoding) and a table's [`codec::RowPlan`], compiled once, that the row decoder,
//!   the CSV export, the writer's import, the Arrow crate and the Python module all read by;
//!   [`codec::encode`], the one encoder of values into stored fields and key tuples (also
//!   at its older path, `key_encode`).
//! * [`index_map`]: a table's primary and secondary indexes as [`prollystore::Map`]s, keyed as
//!   Dolt orders them (collations included).
//! * [`table_rows`]: a table's rows as typed values; [`table_reader`]: keyed reads (gets by
//!   primary key, key ranges, secondary-index lookups) as row iterators, with keys built from
//!   typed values by [`codec::encode`].
//! * [`table_diff`]: the rows and tables that differ between two states (`dolt_diff`).
//! * [`parts`]: a table cut into parts of nearly equal row counts from the tree's counts, each
//!   a JSON description ([`parts::Part`]) another process opens on its own (distributed reads).
//! * [`diff_parts`]: a table's diff between two states cut the same way, into key ranges of
//!   nearly equal work found from the trees' internal nodes ([`diff_parts::DiffPart`]).
//! * [`sql_value`]: a SQL value as Dolt shows it ([`SqlValue`]; NULL is `None` in rows, keys
//!   and bounds alike, see the module); [`value_text`]:
//!   allocation-free text of numbers, decimals and temporal values.
//! * [`csv_export`]: a whole table as `dolt sql -r csv` prints it, streamed, allocation-free
//!   per row; [`csv_field`]: one field as Dolt's CSV writer quotes it.
//! * [`expressions`]: the seam to a SQL expression engine, given explicitly, that computes
//!   VIRTUAL generated columns on read and the writer's STORED columns, expression defaults
//!   and CHECK constraints (`prollystore-sql` implements it; this crate parses no SQL).
//! * [`geometry`]: geometry values as WKT text, and values to store from WKT or WKB (the
//!   format crate's, with the other value text).
//!
//! Writing:
//! * [`write::DoltWriter`]: a database open for writing under Dolt's writer lock: tables
//!   created from a [`write::TableDef`] (`prollystore-sql` makes one from `CREATE TABLE` text),
//!   rows inserted, updated, upserted and deleted on the current branch's working set (every
//!   index kept, keys, checks and foreign keys enforced), the working set saved, commits made.
//! * [`write::vc`]: branches, checkout, tags, fast-forward and three-way merges, status.
//!
//! What the writer refuses so far is listed in the [`write`](mod@write) module's docs. Only
//! `write` changes the database directory; everything else reads.
//!
//! A first program: read a table of a Dolt-made database, then create, fill and commit one.
//!
//! ```
//! use prollystore_dolt::write::{CommitMeta, DoltWriter, TableDef};
//! use prollystore_sql::FromSql; // CREATE TABLE text, from the prollystore-sql crate
//! use prollystore_dolt::{Database, KeyRange, SqlValue, State};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let tmp = tempfile::tempdir()?;
//! # let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path())?;
//! let db = Database::open(&dir)?; // the directory holding `.dolt`
//! println!("tables on {:?}: {:?}", db.current_branch(), db.tables()?);
//! let items = db.table_at("main", State::Committed, "items")?;
//! let reader = items.reader(&db)?;
//! println!("{}", reader.column_names().join(", "));
//! for row in reader.scan(&KeyRange { limit: Some(5), ..KeyRange::all() })? {
//!     let text: Vec<String> = row?.iter().map(|v| v.as_ref().map_or("NULL".into(), SqlValue::to_text)).collect();
//!     println!("{}", text.join(", "));
//! }
//!
//! let mut w = DoltWriter::open(&dir)?;
//! w.create_table(&TableDef::from_sql("CREATE TABLE t (id INT PRIMARY KEY, note TEXT)")?)?;
//! w.insert("t", &["id", "note"], &[vec![Some(SqlValue::Int(1)), None]])?;
//! let commit = w.commit(&CommitMeta::now("Ada", "ada@example.com", "Add t"))?;
//! println!("committed {commit}"); // `dolt log` shows it
//! # Ok(())
//! # }
//! ```

// The test helpers shared with the integration tests name this crate as they do.
#[cfg(test)]
extern crate self as prollystore_dolt;

mod chunk_memo;
pub mod chunks;
pub mod codec;
pub mod csv_export;
pub mod csv_field;
pub mod db;
pub mod diff_parts;
pub mod error;
pub mod expressions;
pub mod index_map;
pub mod leaf_reader;
pub mod log_text;
mod message;
pub mod parts;
pub mod schema;
pub mod sql_value;
pub mod table_diff;
pub mod table_reader;
pub mod table_rows;
/// The encoder's old path, kept for callers: [`codec::encode`].
pub use codec::encode as key_encode;
pub use prollystore_format::geometry;
pub use prollystore_format::value_parse;
pub use prollystore_format::value_text;
pub mod write;

pub use chunks::DoltChunkSource;
pub use db::{Commit, Database, History, RootValue, State, Table, Tag, WorkingSet};
pub use error::{DoltError, Result};
pub use expressions::{Expression, ExpressionKind, Expressions};
pub use index_map::IndexMap;
pub use schema::{Column, Schema, SqlType};
pub use sql_value::{compare_rows, Nullable, SqlValue};
pub use table_reader::{KeyRange, Row, Rows, TableReader};
