//! # prollystore
//!
//! Prolly trees over Dolt-compatible chunks: build, read, edit, diff, merge.
//!
//! * [`store`]: where chunks live ([`store::ChunkStore`], [`store::MemoryStore`],
//!   [`store::FileStore`]).
//! * [`tree`]: Dolt's chunk boundaries ([`tree::split`]), building ([`tree::build`]), cursors,
//!   batch edits that rewrite only touched regions ([`tree::mutate`]), two-way diff
//!   ([`tree::diff`]), three-way merge ([`tree::merge`]) and copying between stores
//!   ([`tree::copy`]).
//! * [`map`]: [`Map`], the read/edit view of a tree: point and ordinal lookups, ranges in both
//!   directions, prefix scans, batch edits ([`map::MapEditor`]), diffs.
//! * [`tuples`]: [`tuples::TupleSchema`] (Dolt tuple order and value addresses) and field access
//!   that follows out-of-band values.
//! * [`blob`]: blob trees for large values.

pub use prollystore_format as format;

pub mod blob;
pub mod error;
pub mod map;
pub mod store;
pub mod tree;
pub mod tuples;

pub use error::TreeError;
pub use map::Map;
pub use store::{ChunkStore, MemoryStore, StoreError};
pub use tree::diff::{Diff, DiffEntry};
pub use tree::schema::{BytesSchema, TreeSchema};
