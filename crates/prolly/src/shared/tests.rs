use std::thread;

use prollystore_format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore_format::{Encoding, HashProfile};

use super::{SharedMap, SharedStore};
use crate::store::{FileStore, RootUpdate};
use crate::tuples::TupleSchema;
use crate::{Map, MemoryStore};

fn schema() -> TupleSchema {
    TupleSchema::new(
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    )
}

fn tuple(desc: &TupleDesc, v: i64) -> Vec<u8> {
    let mut b = TupleBuilder::new(desc.clone());
    b.put_int64(0, v).unwrap();
    b.build().unwrap().as_bytes().to_vec()
}

fn rows(n: i64) -> Vec<(Vec<u8>, Vec<u8>)> {
    let s = schema();
    (0..n)
        .map(|i| (tuple(&s.key, i), tuple(&s.value, i * 3)))
        .collect()
}

#[test]
fn commits_between_calls_and_reopens_with_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let store = SharedStore::new(FileStore::create(dir.path(), HashProfile::Dolt).unwrap());
    let rows = rows(5000);
    let map = SharedMap::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))
        .unwrap();
    store
        .commit(&[RootUpdate::new("m", None, Some(map.root()))])
        .unwrap();
    let (k, _) = &rows[10];
    let edited = map.apply([(&k[..], None)]).unwrap();
    store
        .commit(&[RootUpdate::new("m", Some(map.root()), Some(edited.root()))])
        .unwrap();
    assert_eq!(store.root("m"), Some(edited.root()));
    assert_eq!(map.get(k).unwrap(), Some(rows[10].1.clone()));
    assert_eq!(edited.get(k).unwrap(), None);

    // The same root as a borrowed build of the final rows gives.
    let expected = {
        let mem = MemoryStore::new(HashProfile::Dolt);
        let kept = rows.iter().enumerate().filter(|(i, _)| *i != 10);
        Map::from_sorted(&mem, schema(), kept.map(|(_, (k, v))| (&k[..], &v[..])))
            .unwrap()
            .root()
    };
    assert_eq!(edited.root(), expected);

    drop((map, edited));
    let store = store.try_into_inner().ok().expect("last handle");
    drop(store);
    let reopened = FileStore::open(dir.path()).unwrap();
    let root = reopened.root("m").unwrap();
    let m = Map::new(&reopened, root, schema());
    assert_eq!(m.count().unwrap(), 4999);
    assert_eq!(m.iter().unwrap().count(), 4999);
}

#[test]
fn maps_read_on_other_threads_while_this_one_commits() {
    let dir = tempfile::tempdir().unwrap();
    let store = SharedStore::new(FileStore::create(dir.path(), HashProfile::Dolt).unwrap());
    let rows = rows(2000);
    let map = SharedMap::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))
        .unwrap();
    let readers: Vec<_> = (0..2)
        .map(|t| {
            let map = map.clone();
            let rows = rows.clone();
            thread::spawn(move || {
                for (i, (k, v)) in rows.iter().enumerate().skip(t).step_by(7) {
                    assert_eq!(map.get(k).unwrap().as_deref(), Some(&v[..]), "row {i}");
                }
            })
        })
        .collect();
    let mut current = map.clone();
    for i in 0..20i64 {
        let s = schema();
        let (k, v) = (tuple(&s.key, 10_000 + i), tuple(&s.value, i));
        let next = current.apply([(&k[..], Some(&v[..]))]).unwrap();
        let old = (i > 0).then(|| current.root());
        store
            .commit(&[RootUpdate::new("m", old, Some(next.root()))])
            .unwrap();
        current = next;
    }
    for r in readers {
        r.join().unwrap();
    }
    assert_eq!(current.count().unwrap(), 2020);
    assert_eq!(map.count().unwrap(), 2000);
}

#[test]
fn memory_store_maps_share_too() {
    let store = SharedStore::new(MemoryStore::new(HashProfile::Dolt));
    let rows = rows(300);
    let map = SharedMap::from_sorted(&store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..])))
        .unwrap();
    let reader = map.read();
    let got: Vec<Vec<u8>> = reader
        .map()
        .iter()
        .unwrap()
        .map(|r| r.unwrap().0.to_vec())
        .collect();
    assert_eq!(got.len(), 300);
    drop(reader);
    let empty = SharedMap::empty(&store, schema()).unwrap();
    assert_eq!(empty.count().unwrap(), 0);
    assert!(store.same_store(empty.store()));
    let back = store.try_into_inner();
    assert!(back.is_err(), "maps still hold the store");
}
