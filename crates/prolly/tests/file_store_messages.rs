//! The file store over real Dolt messages: `get_node` verifies once and caches the layout,
//! `gc` follows prolly-tree children and out-of-band values into blob trees, and `verify`
//! verifies every known message.

use prollystore::format::message::{BlobWriter, InternalInput, LeafInput, NodeWriter};
use prollystore::format::{Address, HashProfile};
use prollystore::store::file::{FileStore, RootUpdate};
use prollystore::store::{ChunkStore, StoreError};

/// A one-field int64 key tuple.
fn key(i: u64) -> Vec<u8> {
    let mut k = i.to_le_bytes().to_vec();
    k.extend_from_slice(&1u16.to_le_bytes());
    k
}

/// A leaf whose single row's value is an out-of-band address (a blob root).
fn leaf_with_blob(w: &mut NodeWriter, i: u64, blob: Address) -> Vec<u8> {
    let k = key(i);
    let mut v = blob.as_bytes().to_vec();
    v.extend_from_slice(&1u16.to_le_bytes());
    w.write_leaf(&LeafInput {
        key_items: &k,
        key_offsets: &[0, k.len() as u16],
        value_items: &v,
        value_offsets: &[0, v.len() as u16],
        value_address_offsets: &[0],
    })
    .unwrap()
    .to_vec()
}

fn internal(w: &mut NodeWriter, first_key: u64, children: &[Address]) -> Vec<u8> {
    let mut keys = Vec::new();
    let mut offs = vec![0u16];
    let mut addrs = Vec::new();
    for (j, c) in children.iter().enumerate() {
        keys.extend_from_slice(&key(first_key + j as u64));
        offs.push(keys.len() as u16);
        addrs.extend_from_slice(c.as_bytes());
    }
    let counts = vec![1u64; children.len()];
    w.write_internal(&InternalInput {
        key_items: &keys,
        key_offsets: &offs,
        child_addresses: &addrs,
        subtree_counts: &counts,
        level: 1,
    })
    .unwrap()
    .to_vec()
}

#[test]
fn nodes_gc_and_verify_over_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = FileStore::create(dir.path(), HashProfile::Dolt).unwrap();
    let mut nw = NodeWriter::new();
    let mut bw = BlobWriter::new();
    let blob_leaf = s.put(bw.write_leaf(b"a large value").unwrap()).unwrap();
    let blob_root = s
        .put(bw.write_internal(blob_leaf.as_bytes(), &[1], 1).unwrap())
        .unwrap();
    let leaf = s.put(&leaf_with_blob(&mut nw, 1, blob_root)).unwrap();
    let other_blob = s.put(bw.write_leaf(b"garbage").unwrap()).unwrap();
    let garbage_leaf = s.put(&leaf_with_blob(&mut nw, 2, other_blob)).unwrap();
    let root = s.put(&internal(&mut nw, 1, &[leaf])).unwrap();

    // Pending nodes are verified on first read, through the trait.
    let store: &dyn ChunkStore = &s;
    let n = store.get_node(&root).unwrap();
    assert_eq!((n.count(), n.level()), (1, 1));
    assert_eq!(n.child(0), leaf);
    assert!(matches!(
        store.get_node(&blob_leaf),
        Err(StoreError::BadMessage { .. })
    ));
    assert!(matches!(
        store.get_node(&Address([5; 20])),
        Err(StoreError::Missing(_))
    ));

    s.commit(&[RootUpdate::new("main", None, Some(root))])
        .unwrap();
    let rep = s.verify().unwrap();
    assert_eq!((rep.chunks, rep.messages), (6, 6));
    // Committed nodes: verified once, then rebuilt from the cached layout.
    for _ in 0..3 {
        let n = s.get_node(&leaf).unwrap();
        assert!(n.is_leaf());
        assert_eq!(n.key(0), &key(1)[..]);
        assert_eq!(n.value_address_offsets().collect::<Vec<_>>(), [0]);
    }

    let stats = s.gc().unwrap();
    assert_eq!((stats.chunks_before, stats.chunks_after), (6, 4));
    for a in [root, leaf, blob_root, blob_leaf] {
        assert!(s.has(&a).unwrap());
    }
    for a in [garbage_leaf, other_blob] {
        assert!(!s.has(&a).unwrap());
    }
    drop(s);
    let r = FileStore::open(dir.path()).unwrap();
    assert_eq!(r.verify().unwrap().messages, 4);
    assert_eq!(r.get_node(&root).unwrap().child(0), leaf);
}

#[test]
fn invalid_messages_are_reported_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let mut nw = NodeWriter::new();
    let mut bad = internal(&mut nw, 1, &[Address([1; 20])]);
    // Keep the file id but break the message (a byte past the declared length): the chunk
    // hashes fine, so only message verification can catch it.
    bad.push(0);
    let a = s.put(&bad).unwrap();
    assert!(matches!(s.get_node(&a), Err(StoreError::BadMessage { .. })));
    s.commit(&[RootUpdate::new("main", None, Some(a))]).unwrap();
    let err = s.verify().unwrap_err();
    assert!(
        matches!(err, StoreError::BadMessage { address, .. } if address == a),
        "{err}"
    );
    assert!(matches!(s.get_node(&a), Err(StoreError::BadMessage { .. })));
    // gc refuses to guess what an unreadable reachable chunk refers to.
    assert!(matches!(s.gc(), Err(StoreError::BadMessage { .. })));
    assert!(s.has(&a).unwrap());
}
