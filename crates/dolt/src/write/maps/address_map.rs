//! Address maps (`AddressMap` trees: a store root's datasets, a root value's tables) of any
//! size, read and edited as Dolt edits them (see [`super::tree_kind`]).

use std::sync::Arc;

use prollystore_format::{Address, ADDRESS_LEN};

use super::tree_kind::{apply_edits, entries, Edit, TreeKind};
use crate::error::{encode, malformed, Result};
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

/// The address map of `entries` (in any order; a name twice is refused), made as Dolt makes
/// one (every entry put into the empty map), of one node or several. Returns the root node's
/// bytes (to embed in a table, root value or store root); nodes below it are put into `io`.
pub(crate) fn new_address_map(
    io: &mut dyn ChunkIo,
    entries: &[(Vec<u8>, Address)],
) -> Result<Arc<[u8]>> {
    let mut names: Vec<&[u8]> = entries.iter().map(|(k, _)| k.as_slice()).collect();
    names.sort_unstable();
    if names.windows(2).any(|w| w[0] == w[1]) {
        return Err(encode("address map", "a name twice"));
    }
    let changes: Vec<(&[u8], Option<Address>)> =
        entries.iter().map(|(k, a)| (k.as_slice(), Some(*a))).collect();
    edit_address_map(io, &empty_address_map()?, &changes)
}

/// An empty address map's root node.
pub(crate) fn empty_address_map() -> Result<Vec<u8>> {
    TreeKind::AddressMap.empty_root()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use prollystore_format::message::AddressMapNode;
    use prollystore_format::HashProfile;

    use super::*;
    use crate::error::DoltError;
    use crate::write::maps::single_leaf::address_map_leaf;

    /// Chunks in memory.
    #[derive(Default)]
    struct Mem(HashMap<Address, Arc<[u8]>>);

    impl ChunkIo for Mem {
        fn chunk(&self, address: &Address) -> Result<Arc<[u8]>> {
            self.0
                .get(address)
                .cloned()
                .ok_or(DoltError::MissingChunk(*address))
        }
        fn put(&mut self, chunk: &[u8]) -> Result<Address> {
            let a = HashProfile::Dolt.address_of(chunk);
            self.0.entry(a).or_insert_with(|| Arc::from(chunk));
            Ok(a)
        }
    }

    /// A small deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    /// Random distinct entries of fewer than `limit` item bytes (names 1 to 40 bytes).
    fn entries(r: &mut Rng, limit: usize) -> Vec<(Vec<u8>, Address)> {
        let mut out: Vec<(Vec<u8>, Address)> = Vec::new();
        let mut size = 0;
        let want = r.below(30) as usize;
        while out.len() < want {
            let len = 1 + r.below(40) as usize;
            if size + len + ADDRESS_LEN >= limit {
                break;
            }
            // Few distinct bytes, so names share prefixes.
            let name: Vec<u8> = (0..len).map(|_| b'a' + r.below(4) as u8).collect();
            if out.iter().any(|(n, _)| *n == name) {
                continue;
            }
            let mut a = [0u8; ADDRESS_LEN];
            for b in &mut a {
                *b = r.next() as u8;
            }
            size += len + ADDRESS_LEN;
            out.push((name, Address(a)));
        }
        out
    }

    /// Under 512 item bytes, the editor's map is the one leaf the chunkerless writer made.
    #[test]
    fn small_maps_equal_the_single_leaf_writer() {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..2000 {
            let e = entries(&mut r, 512);
            let mut io = Mem::default();
            let ours = new_address_map(&mut io, &e).unwrap();
            let leaf = address_map_leaf(&e).unwrap();
            assert_eq!(&ours[..], &leaf[..], "round {round}: {e:?}");
            assert!(AddressMapNode::verify(&ours).unwrap().is_leaf());
        }
        assert_eq!(
            &new_address_map(&mut Mem::default(), &[]).unwrap()[..],
            &address_map_leaf(&[]).unwrap()[..]
        );
    }
}
