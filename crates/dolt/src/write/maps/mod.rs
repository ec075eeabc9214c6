//! Dolt's address maps (dataset and table maps) and commit closures: `tree_kind` (both kinds
//! edited and read by the tree crate's editor, as Dolt's `ApplyMutations` edits them),
//! `address_map` (names to addresses, any size), `closure` (a new commit's parent closure).

pub(crate) mod address_map;
pub(crate) mod closure;
pub(crate) mod tree_kind;
