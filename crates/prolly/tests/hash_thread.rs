//! A build or an edit that hashes leaves on a background thread gives exactly the tree of a
//! one-thread build: same root, same chunks, at sizes around the batch and leaf boundaries, in
//! memory and file stores, with both hash profiles.
//!
//! `set_background_hashing` is process-wide and the tests of this file run in parallel, so a
//! test that switches it off may make another's "on" run on one thread: each comparison is
//! still between two correct trees, and the edit test also checks against the tree built from
//! the final rows.

use std::collections::BTreeMap;

use prollystore::format::{Address, HashProfile};
use prollystore::process::set_background_hashing;
use prollystore::store::FileStore;
use prollystore::tree::build::TreeBuilder;
use prollystore::{BytesSchema, ChunkStore, Map, MemoryStore, StoreFastPaths};

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

fn build<S: prollystore::StoreFastPaths>(
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

/// Edits large enough to fill many leaf batches (a few thousand leaves rewritten), small ones,
/// and a run that deletes whole leaves: with background hashing on and off the roots are equal,
/// and equal to the root of the final rows built from scratch.
#[test]
fn large_edits_with_and_without_the_hash_thread() {
    let data = rows(150_000);
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        let store = MemoryStore::new(profile);
        let base = build(&store, &data, false);
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = data.iter().cloned().collect();
        let mut edits: BTreeMap<Vec<u8>, Option<Vec<u8>>> = BTreeMap::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for step in 0..12_000u32 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % 160_000) as u32;
            let key = tup(i.to_be_bytes().to_vec());
            let edit = match step % 3 {
                0 => None,
                _ => Some(tup(vec![(x >> 40) as u8; (x >> 50) as usize % 60])),
            };
            edits.insert(key, edit);
        }
        // Delete every row of a stretch several leaves long.
        for i in 40_000u32..46_000 {
            edits.insert(tup(i.to_be_bytes().to_vec()), None);
        }
        for (k, v) in &edits {
            match v {
                Some(v) => model.insert(k.clone(), v.clone()),
                None => model.remove(k),
            };
        }
        let list: Vec<(&[u8], Option<&[u8]>)> =
            edits.iter().map(|(k, v)| (&k[..], v.as_deref())).collect();
        let reference_store = MemoryStore::new(profile);
        let final_rows: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
        let expected = build(&reference_store, &final_rows, false);
        for background in [true, false, true] {
            set_background_hashing(background);
            let root = Map::new(&store, base, BytesSchema)
                .apply_sorted(&list)
                .map(|m| m.root())
                .expect("edit");
            assert_eq!(
                root, expected,
                "{profile:?}, background hashing {background}"
            );
            // The new leaves, kept where the hash thread wrote them (the first run) or found
            // present (the later ones), read back as the final rows, and every chunk of the
            // store still hashes to its address (nothing stored later overwrote one).
            let map = Map::new(&store, root, BytesSchema);
            let read: Vec<(Vec<u8>, Vec<u8>)> = map
                .iter()
                .expect("iter")
                .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())).expect("row"))
                .collect();
            assert!(read == final_rows, "{profile:?}: rows read back differ");
            for a in store.addresses() {
                let chunk = store.get(&a).expect("get").expect("present");
                assert_eq!(profile.address_of(chunk), a, "{profile:?}: chunk {a}");
            }
            // A small edit after a large one (the hash thread is kept between edits).
            let small = [(&final_rows[7].0[..], None)];
            let smaller = Map::new(&store, root, BytesSchema)
                .apply_sorted(&small)
                .map(|m| m.root())
                .expect("small edit");
            let map = Map::new(&store, smaller, BytesSchema);
            assert_eq!(map.count().expect("count"), final_rows.len() as u64 - 1);
        }
        set_background_hashing(true);
    }
}

/// A memory store that lends like `MemoryStore` but fails every node read after a budget of
/// them, to stop an edit half-way through its leaf pass.
struct FailingStore {
    inner: MemoryStore,
    reads_left: std::cell::Cell<usize>,
}

impl FailingStore {
    fn read(&self) -> Result<(), prollystore::StoreError> {
        match self.reads_left.get() {
            0 => Err(prollystore::StoreError::InvalidArgument(
                "read budget spent".into(),
            )),
            n => {
                self.reads_left.set(n - 1);
                Ok(())
            }
        }
    }
}

impl ChunkStore for FailingStore {
    fn profile(&self) -> HashProfile {
        self.inner.profile()
    }
    fn get(&self, address: &Address) -> Result<Option<&[u8]>, prollystore::StoreError> {
        self.inner.get(address)
    }
    fn get_node(
        &self,
        address: &Address,
    ) -> Result<prollystore::format::message::Node<'_>, prollystore::StoreError> {
        self.read()?;
        self.inner.get_node(address)
    }
    fn has(&self, address: &Address) -> Result<bool, prollystore::StoreError> {
        self.inner.has(address)
    }
    fn put(&self, chunk: &[u8]) -> Result<Address, prollystore::StoreError> {
        self.inner.put(chunk)
    }
}

impl StoreFastPaths for FailingStore {
    unsafe fn put_node_hashed(
        &self,
        address: Address,
        chunk: &[u8],
    ) -> Result<(), prollystore::StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        unsafe { self.inner.put_node_hashed(address, chunk) }
    }
    fn lend(&self, want: usize) -> Option<prollystore::store::LentSpace<'_>> {
        self.inner.lend(want)
    }
    unsafe fn adopt(
        &self,
        space: prollystore::store::LentSpace<'_>,
        chunks: &[(Address, std::ops::Range<usize>)],
    ) -> Result<(), prollystore::StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        unsafe { self.inner.adopt(space, chunks) }
    }
}

/// An edit that fails half-way through its leaf pass, with a batch of leaves in flight being
/// written into space its store lent, returns the error only once that batch is back: the
/// store can then be dropped and its memory reused by the next store, whose edit comes out
/// whole (a late write into the recycled memory would corrupt its chunks).
#[test]
fn a_failed_large_edit_leaves_nothing_writing_into_its_store() {
    let data = rows(60_000);
    let edits: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0..60_000u32)
        .step_by(7)
        .map(|i| (tup(i.to_be_bytes().to_vec()), Some(tup(vec![i as u8; 9]))))
        .collect();
    let list: Vec<(&[u8], Option<&[u8]>)> =
        edits.iter().map(|(k, v)| (&k[..], v.as_deref())).collect();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = data.iter().cloned().collect();
    for (k, v) in &edits {
        model.insert(k.clone(), v.clone().expect("put"));
    }
    let final_rows: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    let expected = build(&MemoryStore::new(HashProfile::Blake3), &final_rows, false);
    // Node reads of the whole edit, to fail it about half-way.
    let counting = FailingStore {
        inner: MemoryStore::new(HashProfile::Blake3),
        reads_left: std::cell::Cell::new(usize::MAX),
    };
    let base = build(&counting.inner, &data, false);
    Map::new(&counting, base, BytesSchema)
        .apply_sorted(&list)
        .map(|m| m.root())
        .expect("edit");
    let reads = usize::MAX - counting.reads_left.get();
    drop(counting);
    for round in 0..3 {
        let failing = FailingStore {
            inner: MemoryStore::new(HashProfile::Blake3),
            reads_left: std::cell::Cell::new(reads / 2 + round * 7),
        };
        let base = build(&failing.inner, &data, false);
        assert!(Map::new(&failing, base, BytesSchema)
            .apply_sorted(&list)
            .map(|m| m.root())
            .is_err());
        drop(failing);
        let store = MemoryStore::new(HashProfile::Blake3);
        let base = build(&store, &data, false);
        let root = Map::new(&store, base, BytesSchema)
            .apply_sorted(&list)
            .map(|m| m.root())
            .expect("edit");
        assert_eq!(root, expected, "round {round}");
        let map = Map::new(&store, root, BytesSchema);
        assert_eq!(map.iter().expect("iter").count(), final_rows.len());
        for a in store.addresses() {
            let chunk = store.get(&a).expect("get").expect("present");
            assert_eq!(
                HashProfile::Blake3.address_of(chunk),
                a,
                "round {round}: chunk {a}"
            );
        }
    }
}
