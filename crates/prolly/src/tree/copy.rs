//! Copying a tree between stores, sending only the chunks the destination lacks.

use prollystore_format::message::{file_id, BlobNode, FILE_ID_BLOB};
use prollystore_format::Address;

use crate::error::TreeError;
use crate::store::{StoreError, StoreFastPaths};

/// Copies every chunk reachable from the prolly tree at `root` (nodes, and blob trees referenced
/// by leaf values) from `from` into `to`. A chunk already in `to` is assumed to come with
/// everything below it, so shared subtrees are not visited. Returns the number of chunks copied.
///
/// ```
/// use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
/// use prollystore::format::{Encoding, HashProfile};
/// use prollystore::tree::copy::copy_tree;
/// use prollystore::{tuples::TupleSchema, Map, MemoryStore};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let schema = TupleSchema::new(
///     TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
///     TupleDesc::new(Vec::new()),
/// );
/// let mut kb = TupleBuilder::new(schema.key.clone());
/// let mut keys = Vec::new();
/// for i in 0..5000 {
///     kb.put_int64(0, i)?;
///     keys.push(kb.build()?.as_bytes().to_vec());
/// }
/// let empty: &[u8] = &[0, 0];
/// let (here, there) = (MemoryStore::new(HashProfile::Dolt), MemoryStore::new(HashProfile::Dolt));
/// let map = Map::from_sorted(&here, schema.clone(), keys.iter().map(|k| (&k[..], empty)))?;
/// let copied = copy_tree(&here, &there, &map.root())?;
/// assert!(copied > 1);
/// assert_eq!(copy_tree(&here, &there, &map.root())?, 0); // already there
/// assert_eq!(Map::new(&there, map.root(), schema).count()?, 5000);
/// # Ok(())
/// # }
/// ```
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
