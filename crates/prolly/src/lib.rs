//! # prollystore
//!
//! Prolly trees over Dolt-compatible chunks (placeholder; being written).

pub use prollystore_format as format;

pub mod store;
