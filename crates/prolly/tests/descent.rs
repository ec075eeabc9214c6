//! Point gets through the memory store's descent caches (the last address looked up, the lists
//! of children with their views, `ChunkStore::descend`) give exactly what a lookup by address
//! gives: across several roots in one store, with wrong hints, with children stored after the
//! list was made, and on the file store (the trait's defaults).

use prollystore::format::message::Node;
use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::Encoding;
use prollystore::format::{Address, HashProfile};
use prollystore::store::file::FileStore;
use prollystore::store::{NodeHint, StoreError};
use prollystore::tuples::TupleSchema;
use prollystore::{ChunkStore, Map, MemoryStore, StoreFastPaths};

fn schema() -> TupleSchema {
    let pair = || TupleDesc::new(vec![Type::not_null(Encoding::Int64); 2]);
    TupleSchema::new(pair(), pair())
}

fn tuple(a: i64, b: i64) -> Vec<u8> {
    let mut t = TupleBuilder::new(TupleDesc::new(vec![Type::not_null(Encoding::Int64); 2]));
    t.put_int64(0, a).unwrap();
    t.put_int64(1, b).unwrap();
    t.build().unwrap().as_bytes().to_vec()
}

type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// Rows per map: under Miri (`scripts/miri.sh`, for the memory store's `unsafe`), maps of a few
/// leaves under one root, which still take every path through the lists of children.
const ROWS: i64 = if cfg!(miri) { 300 } else { 20_000 };
/// The same for the test that makes a map per round.
const FEW_ROWS: i64 = if cfg!(miri) { 200 } else { 5_000 };
/// Internal levels the tests need: two natively (lists of lists), one under Miri.
const MIN_HEIGHT: u8 = if cfg!(miri) { 1 } else { 2 };

/// `n` rows `(2i, i % 7) -> (i * salt, -i)`: even keys only, so odd ones are absent.
fn rows(n: i64, salt: i64) -> Rows {
    (0..n)
        .map(|i| (tuple(2 * i, i % 7), tuple(i * salt, -i)))
        .collect()
}

fn build<'s, S: StoreFastPaths>(store: &'s S, rows: &Rows) -> Map<'s, S, TupleSchema> {
    Map::from_sorted(store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..]))).unwrap()
}

/// Every `step`-th row and its absent neighbour, on both maps, alternating, through `Map::get`
/// and through `map::get` with the bare root address.
fn check_alternating<S: StoreFastPaths>(maps: &[(&Map<'_, S, TupleSchema>, &Rows)], step: usize) {
    let n = maps[0].1.len();
    for i in (0..n).step_by(step) {
        for (map, rows) in maps {
            let (k, v) = &rows[i];
            assert_eq!(map.get(k).unwrap(), Some(&v[..]), "row {i}");
            let bare = prollystore::map::get(map.store(), map.root(), map.schema(), k).unwrap();
            assert_eq!(bare, Some(&v[..]), "row {i} by root address");
            let absent = tuple(2 * i as i64 + 1, 0);
            assert_eq!(map.get(&absent).unwrap(), None, "absent key after row {i}");
        }
    }
}

#[test]
fn two_roots_alternate_in_one_memory_store() {
    let store = MemoryStore::new(HashProfile::Blake3);
    let (a, b) = (rows(ROWS, 3), rows(ROWS, 5));
    let (ma, mb) = (build(&store, &a), build(&store, &b));
    assert_ne!(ma.root(), mb.root());
    assert!(
        ma.height().unwrap() >= MIN_HEIGHT,
        "the test needs internal levels"
    );
    // Twice: the first pass makes the lists of children, the second reads through them.
    for _ in 0..2 {
        check_alternating(&[(&ma, &a), (&mb, &b)], 7);
    }
    // A third map sharing most chunks with the first (one row changed).
    let mut c = a.clone();
    let changed = a.len() * 5 / 8;
    c[changed].1 = tuple(-1, -1);
    let mc = build(&store, &c);
    check_alternating(&[(&ma, &a), (&mc, &c), (&mb, &b)], 101);
    assert_eq!(mc.get(&c[changed].0).unwrap(), Some(&tuple(-1, -1)[..]));
    assert_eq!(ma.get(&a[changed].0).unwrap(), Some(&a[changed].1[..]));
}

/// The node a lookup by address gives is the chunk that hashes to that address, whatever was
/// looked up before (the store remembers the last address found).
#[test]
fn node_lookups_never_mix_addresses() {
    let store = MemoryStore::new(HashProfile::Blake3);
    let (a, b) = (rows(FEW_ROWS, 3), rows(FEW_ROWS, 5));
    let (ma, mb) = (build(&store, &a), build(&store, &b));
    let mut addresses = vec![ma.root(), mb.root()];
    let root = store.get_node(&ma.root()).unwrap();
    addresses.extend((0..root.count()).map(|i| root.child(i)));
    let absent = Address([7; 20]);
    for round in 0..3 {
        for (j, x) in addresses.iter().enumerate() {
            for y in [x, &addresses[(j + round + 1) % addresses.len()], x] {
                let node = store.get_node(y).unwrap();
                assert_eq!(store.profile().address_of(node.chunk()), *y);
                assert_eq!(store.get(y).unwrap(), Some(node.chunk()));
                let (hinted, _) = store.get_node_hinted(y).unwrap();
                assert_eq!(hinted.chunk(), node.chunk());
            }
            assert!(matches!(
                store.get_node(&absent),
                Err(StoreError::Missing(m)) if m == absent
            ));
            assert_eq!(store.get(&absent).unwrap(), None);
        }
    }
}

/// The child `descend` and `get_child` give, with the right hint, a wrong one or none, is the
/// node at the child's address.
#[test]
fn descend_matches_lookup_by_address() {
    let store = MemoryStore::new(HashProfile::Blake3);
    let (a, b) = (rows(ROWS, 3), rows(ROWS, 5));
    let (ma, mb) = (build(&store, &a), build(&store, &b));
    let (other, other_hint) = store.get_node_hinted(&mb.root()).unwrap();
    let leaf_hint = {
        // A leaf's own hint, handed to its parent's descent: ignored.
        let mut n = other;
        let mut h = other_hint;
        while !n.is_leaf() {
            store.descend(&mut n, &mut h, 0).unwrap();
        }
        h
    };
    let mut stack = vec![ma.root()];
    let mut internal = 0;
    while let Some(address) = stack.pop() {
        let (node, hint) = store.get_node_hinted(&address).unwrap();
        if node.is_leaf() {
            continue;
        }
        internal += 1;
        for i in 0..node.count() {
            let want = store.get_node(&node.child(i)).unwrap();
            for h in [hint, NodeHint::NONE, other_hint, leaf_hint, hint] {
                let (got, _) = store.get_child(&node, h, i).unwrap();
                assert_same(&got, &want);
                let (mut n, mut nh) = (node, h);
                store.descend(&mut n, &mut nh, i).unwrap();
                assert_same(&n, &want);
                // The hint given back finds the child's own children.
                if !n.is_leaf() {
                    let (mut g, mut gh) = (n, nh);
                    store.descend(&mut g, &mut gh, 0).unwrap();
                    assert_same(&g, &store.get_node(&n.child(0)).unwrap());
                }
            }
            if i % 3 == 0 {
                stack.push(node.child(i));
            }
        }
    }
    assert!(internal >= usize::from(MIN_HEIGHT));
}

fn assert_same(got: &Node<'_>, want: &Node<'_>) {
    assert_eq!(got.chunk(), want.chunk());
    assert_eq!(got.layout(), want.layout());
}

/// A child missing when its parent's list of children was made, then stored, then read.
#[test]
fn child_stored_after_the_list_was_made() {
    let source = MemoryStore::new(HashProfile::Blake3);
    let a = rows(ROWS, 3);
    let map = build(&source, &a);
    let root = source.get_node(&map.root()).unwrap();
    assert!(!root.is_leaf());

    let store = MemoryStore::new(HashProfile::Blake3);
    store.put(root.chunk()).unwrap();
    let (node, hint) = store.get_node_hinted(&map.root()).unwrap();
    let first = node.child(0);
    let (mut n, mut h) = (node, hint);
    assert!(matches!(
        store.descend(&mut n, &mut h, 0),
        Err(StoreError::Missing(m)) if m == first
    ));
    assert_eq!(n.chunk(), node.chunk(), "unchanged on error");
    assert!(store.get_child(&node, hint, 0).is_err());
    // Stored now, not yet read (no layout): found by address, and then through the list.
    store.put(source.get(&first).unwrap().unwrap()).unwrap();
    for _ in 0..2 {
        let (mut n, mut h) = (node, hint);
        store.descend(&mut n, &mut h, 0).unwrap();
        assert_eq!(store.profile().address_of(n.chunk()), first);
        let (c, _) = store.get_child(&node, hint, 0).unwrap();
        assert_eq!(c.chunk(), n.chunk());
    }
    // Copy the rest (`copy_tree` would stop at the chunks present): every get then answers
    // as in the source store.
    let mut stack = vec![map.root()];
    while let Some(address) = stack.pop() {
        let node = source.get_node(&address).unwrap();
        store.put(node.chunk()).unwrap();
        if !node.is_leaf() {
            stack.extend((0..node.count()).map(|i| node.child(i)));
        }
    }
    let copied = Map::new(&store, map.root(), schema());
    for (k, v) in a.iter().step_by(13) {
        assert_eq!(copied.get(k).unwrap(), Some(&v[..]));
    }
}

/// The file store goes through the trait's default `descend`.
#[test]
#[cfg_attr(miri, ignore = "Miri cannot map files or fsync")]
fn file_store_gets() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let (a, b) = (rows(ROWS, 3), rows(ROWS, 5));
    let (ma, mb) = (build(&store, &a), build(&store, &b));
    for _ in 0..2 {
        check_alternating(&[(&ma, &a), (&mb, &b)], 11);
    }
}
