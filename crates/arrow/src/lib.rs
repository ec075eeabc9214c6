//! # prollystore-arrow
//!
//! Columnar data out of prollystore as Apache Arrow: Dolt tables, key and index ranges and
//! diffs ([`dolt`]), and prollystore maps with a typed row schema ([`map`]), as
//! [`RecordBatchReader`](arrow_array::RecordBatchReader)s of a size the caller chooses; and
//! maps built from record batches. The type of each Dolt SQL type is in [`dolt_types`] and
//! `docs/ARROW.md`. Hand a reader to the Arrow C Data Interface with
//! [`arrow_array::ffi_stream::FFI_ArrowArrayStream::new`].

mod columns;
pub mod dolt;
mod dolt_scan;
pub mod dolt_types;
pub mod error;
mod leaf_feed;
pub mod map;
mod read_ahead;

pub use columns::{date_days, date_from_days};
pub use dolt::{DiffBatches, TableBatches, DEFAULT_BATCH_ROWS};
pub use dolt_types::{arrow_field, arrow_type, table_schema};
pub use error::{Error, Result};
pub use map::{build_map, infer_row_schema, map_schema, MapBatches};
