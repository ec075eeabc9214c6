//! Commit ancestry from parent closures: whether one commit contains another, and the merge
//! base Dolt picks (`store/datas/commit.go` `FindCommonAncestor`: walking both commits and their
//! closures from the highest `(height, address)` down, the first key both hold).

use std::collections::BTreeSet;

use prollystore_format::message::objects::CommitFields;
use prollystore_format::Address;

use crate::error::{bad_chunk, Result};
use crate::write::maps::tree_kind::{entries, TreeKind};
use crate::write::storage::chunk_io::ChunkIo;

/// A commit and every ancestor, as `(height, address)`.
pub(crate) fn ancestry(io: &dyn ChunkIo, commit: Address) -> Result<BTreeSet<(u64, Address)>> {
    let chunk = io.chunk(&commit)?;
    let c = CommitFields::decode(&chunk).map_err(|e| bad_chunk(commit, e.to_string()))?;
    let mut out = BTreeSet::new();
    out.insert((c.height, commit));
    if let Some(closure) = c.parent_closure.map(Address).filter(|a| !a.is_zero()) {
        let root = io.chunk(&closure)?;
        for (k, _) in entries(io, TreeKind::CommitClosure, &root)? {
            let height = u64::from_le_bytes(
                k.get(..8)
                    .and_then(|h| h.try_into().ok())
                    .ok_or_else(|| bad_chunk(closure, "a closure key shorter than 8 bytes"))?,
            );
            let a = Address::from_slice(&k[8..])
                .ok_or_else(|| bad_chunk(closure, "a closure key without an address"))?;
            out.insert((height, a));
        }
    }
    Ok(out)
}

/// True when `ancestor` is `commit` or one of its ancestors.
pub(crate) fn is_ancestor(io: &dyn ChunkIo, ancestor: Address, commit: Address) -> Result<bool> {
    Ok(ancestry(io, commit)?.iter().any(|(_, a)| *a == ancestor))
}

/// The merge base of `a` and `b` as Dolt finds it, if they share history.
pub(crate) fn merge_base(io: &dyn ChunkIo, a: Address, b: Address) -> Result<Option<Address>> {
    let left = ancestry(io, a)?;
    let right = ancestry(io, b)?;
    Ok(left
        .iter()
        .rev()
        .find(|k| right.contains(k))
        .map(|(_, addr)| *addr))
}
