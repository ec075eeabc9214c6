//! Trees in the durable file store: build, commit a root, reopen, read, edit, diff.

use prollystore::format::HashProfile;
use prollystore::store::{FileStore, RootUpdate};
use prollystore::{BytesSchema, Map, MemoryStore};

fn tup(i: u32, tag: u8) -> Vec<u8> {
    let mut t = i.to_be_bytes().to_vec();
    t.push(tag);
    t.extend_from_slice(&[1, 0]);
    t
}

#[test]
fn build_commit_reopen_edit() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..20_000).map(|i| (tup(i, 0), tup(i * 3, 1))).collect();
    let root = {
        let mut store = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
        let root = Map::from_sorted(
            &store,
            BytesSchema,
            rows.iter().map(|(k, v)| (&k[..], &v[..])),
        )
        .unwrap()
        .root();
        store
            .commit(&[RootUpdate::new("main", None, Some(root))])
            .unwrap();
        root
    };
    let store = FileStore::open_writer(dir.path()).unwrap();
    assert_eq!(store.root("main"), Some(root));
    let map = Map::new(&store, root, BytesSchema);
    assert_eq!(map.count().unwrap(), 20_000);
    assert_eq!(map.get(&rows[777].0).unwrap(), Some(&rows[777].1[..]));
    let got: Vec<_> = map.iter().unwrap().map(|r| r.unwrap().0.to_vec()).collect();
    assert_eq!(got.len(), rows.len());
    let (k, v) = (tup(5, 0), tup(1, 9));
    let edited = map.apply([(&k[..], Some(&v[..]))]).unwrap();
    assert_eq!(map.diff(&edited).unwrap().count(), 1);
    // Same result as in a memory store.
    let mem = MemoryStore::new(HashProfile::Blake3);
    let m2 = Map::from_sorted(
        &mem,
        BytesSchema,
        rows.iter().map(|(k, v)| (&k[..], &v[..])),
    )
    .unwrap();
    assert_eq!(m2.root(), root);
    assert!(store.has(&root).unwrap());
}
