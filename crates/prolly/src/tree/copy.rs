//! Copying a tree between stores, sending only the chunks the destination lacks.

use prollystore_format::message::{file_id, BlobNode, FILE_ID_BLOB};
use prollystore_format::Address;

use crate::error::TreeError;
use crate::store::{StoreError, StoreFastPaths};

/// Copies every chunk reachable from the prolly tree at `root` (nodes, and blob trees referenced
/// by leaf values) from `from` into `to`. A chunk already in `to` is assumed to come with
/// everything below it, so shared subtrees are not visited. Returns the number of chunks copied.
pub fn copy_tree<A, B>(from: &A, to: &B, root: &Address) -> Result<usize, TreeError>
where
    A: StoreFastPaths + ?Sized,
    B: StoreFastPaths + ?Sized,
{
    let mut copied = 0usize;
    let mut stack = vec![*root];
    let mut offsets = Vec::new();
    while let Some(address) = stack.pop() {
        if address.is_zero() || to.has(&address)? {
            continue;
        }
        let chunk = from.get(&address)?.ok_or(StoreError::Missing(address))?;
        if file_id(chunk).ok().as_ref() == Some(FILE_ID_BLOB) {
            let blob = BlobNode::verify(chunk)
                .map_err(|source| StoreError::BadMessage { address, source })?;
            if !blob.is_leaf() {
                for i in (0..blob.child_count()).rev() {
                    stack.push(blob.child(i));
                }
            }
        } else {
            let node = from.get_node(&address)?;
            if node.is_leaf() {
                offsets.clear();
                offsets.extend(node.value_address_offsets());
                let values = node.value_items();
                for &o in offsets.iter().rev() {
                    let o = usize::from(o);
                    if let Some(a) = values.get(o..o + 20).and_then(Address::from_slice) {
                        stack.push(a);
                    }
                }
            } else {
                for i in (0..node.count()).rev() {
                    stack.push(node.child(i));
                }
            }
        }
        let put = to.put(chunk)?;
        if put != address {
            return Err(TreeError::Store(StoreError::HashMismatch {
                address,
                actual: put,
                location: None,
            }));
        }
        copied += 1;
    }
    Ok(copied)
}
