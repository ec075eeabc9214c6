//! Prolly-tree machinery shared by maps and other trees: building ([`build`]), cursors,
//! batch edits that rewrite only touched regions ([`mutate`]), two-way diff ([`diff`]),
//! three-way merge ([`merge`]) and copying between stores ([`copy`]).
//!
//! Inside: Dolt's chunk boundaries (`split`, with its own `expm1` so that boundaries are the
//! same on every platform), the node a level is filling (`pending`) and the write pipeline
//! between a completed node and its parent (`pipeline`).

pub mod build;
pub mod copy;
pub mod cursor;
pub mod diff;
pub(crate) mod expm1;
pub mod merge;
pub mod mutate;
pub(crate) mod pending;
pub(crate) mod pipeline;
pub(crate) mod prefetch;
pub mod schema;
pub(crate) mod split;

/// Dolt's node-boundary test, for trees other crates chunk themselves (Dolt's address maps
/// and commit closures).
pub use split::Splitter;
