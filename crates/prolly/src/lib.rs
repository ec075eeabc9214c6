//! # prollystore
//!
//! Prolly trees over Dolt-compatible chunks: build, read, edit, diff, merge.

pub use prollystore_format as format;

pub mod tree;
