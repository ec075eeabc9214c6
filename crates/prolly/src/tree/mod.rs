//! Prolly-tree machinery shared by maps and other trees: chunk boundaries, node building,
//! cursors, edits and diffs.

pub mod expm1;
pub mod split;
