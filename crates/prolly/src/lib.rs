//! # prollystore
//!
//! Prolly trees over Dolt-compatible chunks (placeholder; being written).

pub use prollystore_format as format;

/// TEMPORARY wiring on branch `store` (until the message types land and `store/mod.rs` can be
/// declared): only the durable file store, with its stand-in `StoreError`.
pub mod store {
    pub mod file;
    pub use file::StoreError;
}
