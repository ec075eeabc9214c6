//! # prollystore-arrow
//!
//! Columnar data out of prollystore as Apache Arrow: Dolt tables, key and index ranges and
//! diffs, and prollystore maps with a typed row schema, as
//! [`RecordBatchReader`](arrow_array::RecordBatchReader)s of a size the caller chooses; and
//! maps built from record batches. Hand a reader to the Arrow C Data Interface with
//! [`arrow_array::ffi_stream::FFI_ArrowArrayStream::new`].
//!
//! What callers use:
//! * [`dolt`]: Dolt tables as record batches — a whole table at a state, a primary-key range,
//!   a secondary-index range, the diff of a table between two states ([`TableBatches`],
//!   [`DiffBatches`]), and one part of a table cut for a distributed engine
//!   ([`TableBatches::part`], parts cut by [`prollystore_dolt::parts::split`]).
//! * [`map`]: prollystore maps with a typed row schema as record batches ([`MapBatches`]), and
//!   maps built from record batches ([`build_map`]).
//! * [`dolt_write`]: record batches written into a Dolt table through a writer
//!   ([`dolt_write::write_batches`]).
//! * [`cell_text`]: one Arrow value's text as `dolt sql` shows it ([`cell_text::write_cell`]),
//!   the text writes into Dolt read.
//! * [`dolt_types`]: the Arrow type of each Dolt SQL type (the table in `docs/ARROW.md`) and
//!   the Arrow schema of a Dolt table.
//! * [`error`]: what can go wrong turning rows into arrays or arrays into rows.
//!
//! How batches are made (private):
//! * `columns`: one Arrow builder per output column, filled from typed values, raw tuple
//!   fields or resolved bytes.
//! * `dolt_scan`: the fast whole-table path, each stored field appended straight to its
//!   column's builder (no `SqlValue` per cell).
//! * `read_ahead`: whole-table batches made ahead on worker threads, handed over in order.
//! * `leaf_feed`: the cold whole-table pass, batches built on worker threads from leaves read
//!   in batches by `prollystore_dolt::leaf_reader`, as the CSV export reads them.
//!
//! A Dolt table as Arrow record batches:
//!
//! ```
//! use std::sync::Arc;
//! use prollystore_arrow::{TableBatches, DEFAULT_BATCH_ROWS};
//! use prollystore_dolt::{Database, State};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = prollystore_test_vectors::require("dolt-db/vecdb");
//! let db = Arc::new(Database::open(&dir)?);
//! let items = db.table_at("main", State::Committed, "items")?;
//! let batches = TableBatches::new(db.clone(), items, DEFAULT_BATCH_ROWS)?;
//! let mut rows = 0;
//! for batch in batches {
//!     let batch = batch?;
//!     if rows == 0 {
//!         println!("{}", batch.schema()); // Arrow types as docs/ARROW.md lists them
//!     }
//!     rows += batch.num_rows();
//! }
//! println!("{rows} rows");
//! # Ok(())
//! # }
//! ```

pub mod cell_text;
mod columns;
pub mod dolt;
mod dolt_scan;
pub mod dolt_types;
pub mod dolt_write;
pub mod error;
mod leaf_feed;
pub mod map;
mod primitive;
mod read_ahead;

pub use columns::{date_days, date_from_days};
pub use dolt::{DiffBatches, GeometryBytes, TableBatches, DEFAULT_BATCH_ROWS};
pub use dolt_types::{arrow_field, arrow_type, table_schema};
pub use error::{Error, Result};
pub use map::{build_map, infer_row_schema, map_schema, MapBatches};
