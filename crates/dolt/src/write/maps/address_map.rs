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
    let changes: Vec<(&[u8], Option<Address>)> = entries
        .iter()
        .map(|(k, a)| (k.as_slice(), Some(*a)))
        .collect();
    edit_address_map(io, &empty_address_map()?, &changes)
}

/// An empty address map's root node.
pub(crate) fn empty_address_map() -> Result<Vec<u8>> {
    TreeKind::AddressMap.empty_root()
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::Path;

    use prollystore_format::message::objects::{RootValueFields, StoreRootFields, TableFields};

    use super::*;
    use crate::db::Database;
    use crate::write::tests_chunked::MemIo;

    /// `root` re-made from its entries by [`new_address_map`]; true if it equals Dolt's.
    fn remade(io: &mut MemIo<'_>, root: &[u8]) -> bool {
        let entries = address_map_entries(io, root).unwrap();
        new_address_map(io, &entries).unwrap()[..] == root[..]
    }

    /// Every address map Dolt wrote in two small databases of the test data (the dataset map,
    /// each commit's table map and each table's map of secondary indexes) is what
    /// [`new_address_map`] makes of its entries. (Until this function replaced it, a test also
    /// checked it against the chunkerless one-leaf writer on 2000 random maps under 512 item
    /// bytes; maps of several nodes are checked against Dolt in `tests_chunked`.)
    #[test]
    fn dolts_maps_are_remade_byte_for_byte() {
        let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        let mut index_maps = 0;
        for dir in [
            "index_forms/db",
            "dolt-db/output_forms",
            "dolt-db/binary_keys",
        ] {
            let db = Database::open(data.join(dir)).unwrap();
            let mut io = MemIo {
                db: Some(&db),
                put: HashMap::new(),
            };
            let store_root = db.source().chunk(&db.source().root()).unwrap();
            let sr = StoreRootFields::decode(&store_root).unwrap();
            assert!(remade(&mut io, sr.address_map), "{dir}: dataset map");
            for (branch, commit) in db.branches().unwrap() {
                let root = db.commit(commit).unwrap().root;
                let chunk = db.source().chunk(&root).unwrap();
                let rv = RootValueFields::decode(&chunk).unwrap();
                assert!(remade(&mut io, rv.tables), "{dir} {branch}: table map");
                for (name, table) in address_map_entries(&io, rv.tables).unwrap() {
                    let chunk = db.source().chunk(&table).unwrap();
                    let t = TableFields::decode(&chunk).unwrap();
                    let what = String::from_utf8_lossy(&name);
                    assert!(
                        remade(&mut io, t.secondary_indexes),
                        "{dir} {branch}: index map of {what}"
                    );
                    index_maps += usize::from(
                        !address_map_entries(&io, t.secondary_indexes)
                            .unwrap()
                            .is_empty(),
                    );
                }
            }
        }
        assert!(index_maps > 0);
    }

    /// A name twice is refused, as the one-leaf writer refused it.
    #[test]
    fn a_name_twice_is_refused() {
        let mut io = MemIo {
            db: None,
            put: HashMap::new(),
        };
        let e = vec![
            (b"a".to_vec(), Address([1; 20])),
            (b"b".to_vec(), Address([2; 20])),
            (b"a".to_vec(), Address([3; 20])),
        ];
        let err = new_address_map(&mut io, &e).unwrap_err().to_string();
        assert!(err.contains("a name twice"), "{err}");
    }
}
