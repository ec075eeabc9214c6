//! Dolt's address maps (dataset and table maps) and commit closures: `address_map` (read and
//! edited), `chunker` (Dolt's edit of an address map or commit closure of any size, step for
//! step, checked against Dolt's own maps and closures of hundreds of nodes), `single_leaf`
//! (table maps small enough to be one node), `closure` (a new commit's parent closure).

pub(crate) mod address_map;
#[cfg(test)]
pub(crate) mod chunker;
pub(crate) mod closure;
pub(crate) mod single_leaf;
pub(crate) mod tree_kind;
