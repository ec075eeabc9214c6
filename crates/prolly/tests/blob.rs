//! Blob trees: round trips at the size boundaries and the shapes Dolt's writer makes.

use prollystore::blob::{read_blob, BlobBuilder, BLOB_FANOUT, BLOB_LEAF_LEN};
use prollystore::format::message::BlobNode;
use prollystore::format::{Address, HashProfile};
use prollystore::{ChunkStore, MemoryStore};

fn data(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 4000) as u8).collect()
}

fn root_of(store: &MemoryStore, a: &Address) -> BlobNode<'static> {
    let chunk = store.get(a).unwrap().unwrap().to_vec().leak();
    BlobNode::verify(chunk).unwrap()
}

#[test]
fn round_trips_and_shapes() {
    let store = MemoryStore::new(HashProfile::Dolt);
    let mut b = BlobBuilder::new();
    assert_eq!(b.write(&store, &[]).unwrap(), Address::ZERO);
    assert!(store.is_empty(), "an empty value writes nothing");
    let mut out = Vec::new();
    read_blob(&store, &Address::ZERO, &mut out).unwrap();
    assert!(out.is_empty());
    let leaf = BLOB_LEAF_LEN;
    for n in [
        1,
        leaf - 1,
        leaf,
        leaf + 1,
        3 * leaf,
        199 * leaf + 1,
        200 * leaf,
        200 * leaf + 5,
    ] {
        let d = data(n);
        let a = b.write(&store, &d).unwrap();
        out.clear();
        read_blob(&store, &a, &mut out).unwrap();
        assert_eq!(out, d, "size {n}");
        let root = root_of(&store, &a);
        let leaves = n.div_ceil(leaf) as u64;
        assert_eq!(root.tree_size(), leaves, "size {n}");
        let expected_level = if n <= leaf {
            0
        } else {
            let (mut q, mut top) = (n / leaf, 0);
            while q > 0 {
                q /= BLOB_FANOUT;
                top += 1;
            }
            top
        };
        assert_eq!(usize::from(root.level()), expected_level, "size {n}");
    }
    // Exactly 200 leaves: a level-2 root with a single child (not made canonical).
    let a = b.write(&store, &data(200 * leaf)).unwrap();
    let root = root_of(&store, &a);
    assert_eq!((root.level(), root.child_count()), (2, 1));
}
