//! Prolly-tree machinery shared by maps and other trees: chunk boundaries, node building,
//! cursors, batch edits and diffs.

pub mod build;
pub mod copy;
pub mod cursor;
pub mod diff;
pub mod expm1;
pub mod hash_thread;
pub mod merge;
pub mod mutate;
pub(crate) mod prefetch;
pub mod schema;
pub mod split;
