//! Prolly-tree machinery shared by maps and other trees: building ([`build`]), two-way diff
//! ([`diff`]), three-way merge ([`merge`]) and copying between stores ([`copy`]).
//!
//! Inside, behind [`Map`](crate::Map): cursors (`cursor`; a [`Map`](crate::Map) hands out
//! [`Cursor`](crate::map::Cursor)s from its `seek` methods), batch edits that rewrite only the
//! touched regions (`mutate`, behind [`Map::apply`](crate::Map::apply) and
//! [`Map::apply_sorted`](crate::Map::apply_sorted)), Dolt's chunk boundaries (`split`, with its own `expm1` so that boundaries are the
//! same on every platform), the node a level is filling (`pending`) and the write pipeline
//! between a completed node and its parent (`pipeline`).

pub mod build;
pub mod copy;
pub(crate) mod cursor;
pub mod diff;
pub(crate) mod expm1;
pub mod merge;
pub(crate) mod mutate;
pub(crate) mod pending;
pub(crate) mod pipeline;
pub(crate) mod prefetch;
pub mod schema;
pub(crate) mod split;

/// Dolt's node-boundary test, for trees other crates chunk themselves (Dolt's address maps
/// and commit closures).
pub use split::Splitter;
