//! Address maps (`AddressMap` trees: a store root's datasets, a root value's tables) of any
//! size, read and edited as Dolt edits them (see [`super::tree_kind`]).

use std::sync::Arc;

use prollystore_format::{Address, ADDRESS_LEN};

use super::tree_kind::{apply_edits, entries, Edit, TreeKind};
use crate::error::{malformed, Result};
use crate::write::storage::chunk_io::ChunkIo;

/// Every `(name, address)` of the address map whose root node is `root`, in name order.
pub(crate) fn address_map_entries(
    io: &dyn ChunkIo,
    root: &[u8],
) -> Result<Vec<(Vec<u8>, Address)>> {
    entries(io, TreeKind::AddressMap, root)?
        .into_iter()
        .map(
            |(k, v)| match Address::from_slice(&v).filter(|_| v.len() == ADDRESS_LEN) {
                Some(a) => Ok((k, a)),
                None => Err(malformed(
                    format!("address map entry {:?}", String::from_utf8_lossy(&k)),
                    format!(
                        "its value is {} bytes, not a {ADDRESS_LEN}-byte address",
                        v.len()
                    ),
                )),
            },
        )
        .collect()
}

/// The address map `root` with `changes` applied (`Some` sets a name, `None` removes it; a
/// later change to the same name wins). Returns the new root node's bytes (to embed in a store
/// root or root value); new nodes below it are put into `io`.
pub(crate) fn edit_address_map(
    io: &mut dyn ChunkIo,
    root: &[u8],
    changes: &[(&[u8], Option<Address>)],
) -> Result<Arc<[u8]>> {
    let mut edits: Vec<Edit> = Vec::with_capacity(changes.len());
    for (name, value) in changes {
        edits.retain(|(k, _)| k.as_slice() != *name);
        edits.push((name.to_vec(), value.map(|a| a.as_bytes().to_vec())));
    }
    edits.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(apply_edits(io, TreeKind::AddressMap, root, &edits)?.chunk)
}

/// An empty address map's root node.
pub(crate) fn empty_address_map() -> Result<Vec<u8>> {
    TreeKind::AddressMap.empty_root()
}
