//! A new commit's parent closure (`store/datas/commit_closure.go`
//! `writeFbCommitParentClosure`): the first parent's closure, plus what the other parents'
//! closures hold that it lacks, plus the parents themselves — added in one edit, as Dolt adds
//! them (which decides where the closure's nodes end, see [`super::tree_kind`]).

use std::collections::HashSet;

use prollystore_format::message::objects::CommitFields;
use prollystore_format::Address;

use super::tree_kind::{apply_edits, entries, Edit, TreeKind};
use crate::error::{bad_chunk, Result};
use crate::write::storage::chunk_io::ChunkIo;

/// The value Dolt puts for each closure key it adds (`emptyCommitClosureValue`).
const ADDED_VALUE: [u8; 1] = [0];

/// A closure key: height (little-endian) then the commit address.
fn closure_key(height: u64, commit: Address) -> Vec<u8> {
    let mut k = height.to_le_bytes().to_vec();
    k.extend_from_slice(commit.as_bytes());
    k
}

/// The root node of the closure stored at `address` (zero: the empty closure).
fn closure_root(io: &dyn ChunkIo, address: Option<[u8; 20]>) -> Result<Vec<u8>> {
    match address.map(Address).filter(|a| !a.is_zero()) {
        Some(a) => Ok(io.chunk(&a)?.to_vec()),
        None => TreeKind::CommitClosure.empty_root(),
    }
}

/// Puts the parent closure of a commit with `parents` (first parent first) and returns its
/// address and the new commit's height; a commit without parents has the zero address and
/// height 1, as Dolt writes it.
pub(crate) fn put_parent_closure(
    io: &mut dyn ChunkIo,
    parents: &[Address],
) -> Result<(Address, u64)> {
    if parents.is_empty() {
        return Ok((Address::ZERO, 1));
    }
    let mut roots = Vec::with_capacity(parents.len());
    let mut keys = Vec::with_capacity(parents.len());
    let mut max_height = 0;
    for &p in parents {
        let chunk = io.chunk(&p)?;
        let c = CommitFields::decode(&chunk).map_err(|e| bad_chunk(p, e.to_string()))?;
        max_height = max_height.max(c.height);
        keys.push(closure_key(c.height, p));
        roots.push(closure_root(io, c.parent_closure)?);
    }
    let kind = TreeKind::CommitClosure;
    // Only a merge needs the first parent's whole closure (to add what the others hold
    // beyond it); reading it for every commit would cost the length of the history.
    let base: HashSet<Vec<u8>> = match roots.len() {
        1 => HashSet::new(),
        _ => entries(io, kind, &roots[0])?
            .into_iter()
            .map(|(k, _)| k)
            .collect(),
    };
    let mut edits: Vec<Edit> = Vec::new();
    for other in &roots[1..] {
        for (k, _) in entries(io, kind, other)? {
            if !base.contains(&k) {
                edits.push((k, Some(ADDED_VALUE.to_vec())));
            }
        }
    }
    for k in keys {
        edits.push((k, Some(ADDED_VALUE.to_vec())));
    }
    edits.sort_by(|a, b| kind.compare(&a.0, &b.0));
    edits.dedup_by(|a, b| a.0 == b.0);
    let root = apply_edits(io, kind, &roots[0], &edits)?;
    Ok((root.address, max_height + 1))
}
