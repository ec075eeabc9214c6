//! # prollystore
//!
//! Prolly trees over Dolt-compatible chunks (placeholder; being written).

pub use prollystore_format as format;

/// TEMPORARY wiring on branch `store`: only the durable file store, with stand-ins for
/// `ChunkStore` and `StoreError` (see `store/file/wiring_shim.rs`). Replaced by `pub mod store;`
/// when the lead wires `store/mod.rs`.
pub mod store {
    pub mod file;
    pub use file::wiring_shim::{ChunkStore, StoreError};
}
