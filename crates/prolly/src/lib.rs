//! # prollystore
//!
//! Prolly trees over Dolt-compatible chunks: build, read, edit, diff, merge.
//!
//! * [`store`]: where chunks live ([`store::ChunkStore`], [`store::MemoryStore`]).
//! * [`tree`]: chunk boundaries, building, cursors, batch edits, diff.
//! * [`map`]: [`Map`], the read/edit view of a tree of tuples.

pub use prollystore_format as format;

pub mod error;
pub mod map;
pub mod store;
pub mod tree;

pub use error::TreeError;
pub use map::Map;
pub use store::{ChunkStore, MemoryStore, StoreError};
pub use tree::diff::{Diff, DiffEntry};
pub use tree::schema::{BytesSchema, TreeSchema};
