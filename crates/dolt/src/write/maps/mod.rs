//! Dolt's address maps (dataset and table maps) and commit closures: `tree_kind` (both kinds
//! edited and read by the tree crate's editor, as Dolt's `ApplyMutations` edits them),
//! `address_map` (names to addresses), `closure` (a new commit's parent closure),
//! `single_leaf` (table maps small enough to be one node).

pub(crate) mod address_map;
pub(crate) mod closure;
pub(crate) mod single_leaf;
pub(crate) mod tree_kind;
