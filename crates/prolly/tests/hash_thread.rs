//! A build that hashes leaves on a background thread (`TreeBuilder::with_hash_thread`) gives
//! exactly the tree of a one-thread build: same root, same chunks, at sizes around the batch
//! and leaf boundaries, in memory and file stores, with both hash profiles.

use prollystore::format::{Address, HashProfile};
use prollystore::store::FileStore;
use prollystore::tree::build::TreeBuilder;
use prollystore::{BytesSchema, Map, MemoryStore};

/// A one-field tuple holding `data`, so nodes verify.
fn tup(mut data: Vec<u8>) -> Vec<u8> {
    data.extend_from_slice(&[1, 0]);
    data
}

fn rows(n: u32) -> Vec<(Vec<u8>, Vec<u8>)> {
    (0..n)
        .map(|i| {
            let value = (0..(i % 97)).map(|j| (j ^ i) as u8).collect();
            (tup(i.to_be_bytes().to_vec()), tup(value))
        })
        .collect()
}

fn build<S: prollystore::ChunkStore>(
    store: &S,
    rows: &[(Vec<u8>, Vec<u8>)],
    thread: bool,
) -> Address {
    let mut b = TreeBuilder::new(store, &BytesSchema);
    if thread {
        b = b.with_hash_thread();
    }
    for (k, v) in rows {
        b.add(k, v).expect("add");
    }
    b.finish().expect("finish")
}

#[test]
fn same_tree_with_and_without_the_hash_thread() {
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        for n in [0u32, 1, 2, 40, 200, 5_000, 23_456, 80_000] {
            let data = rows(n);
            let (one, two) = (MemoryStore::new(profile), MemoryStore::new(profile));
            let root = build(&one, &data, false);
            assert_eq!(build(&two, &data, true), root, "{n} rows, {profile:?}");
            let mut a = one.addresses();
            let mut b = two.addresses();
            a.sort();
            b.sort();
            assert_eq!(a, b, "chunk sets of {n} rows, {profile:?}");
            // Nodes stored by the pipeline read back like any other.
            let map = Map::new(&two, root, BytesSchema);
            assert_eq!(map.count().expect("count"), u64::from(n));
            assert_eq!(map.iter().expect("iter").count(), n as usize);
        }
    }
}

#[test]
fn hash_thread_build_into_a_file_store() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = FileStore::create(dir.path(), HashProfile::Blake3).expect("create");
    let data = rows(30_000);
    let root = build(&store, &data, true);
    let reference = MemoryStore::new(HashProfile::Blake3);
    assert_eq!(root, build(&reference, &data, false));
    let map = Map::new(&store, root, BytesSchema);
    for (k, v) in data.iter().step_by(997) {
        assert_eq!(map.get(k).expect("get"), Some(&v[..]));
    }
}
