//! Process-wide state (`prollystore::process`): memory that dropped memory stores leave for the
//! next ones, its bound and its release, and what a thread keeps between edits.
//!
//! A test binary of its own: the kept memory is process-wide, and other tests' stores would
//! take and leave it concurrently. The tests run one at a time for the same reason (a lock).

use prollystore::format::HashProfile;
use prollystore::{ChunkStore, MemoryStore};

/// Fills a store with `bytes` of distinct 4 KiB chunks; returns it and their addresses.
fn filled(bytes: usize) -> (MemoryStore, Vec<prollystore::format::Address>) {
    let store = MemoryStore::new(HashProfile::Blake3);
    let mut chunk = vec![7u8; 4096];
    let addresses = (0..bytes / chunk.len())
        .map(|i| {
            chunk[..8].copy_from_slice(&(i as u64).to_le_bytes());
            store.put(&chunk).expect("put")
        })
        .collect();
    (store, addresses)
}

/// Serializes the tests of this binary: they all change process-wide state.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn dropped_stores_leave_memory_that_release_gives_back() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    // Memory stores' big blocks are mapped (2 MiB and up), and only mapped blocks are kept:
    // 6 MiB of chunks fill the heap blocks (64 KiB doubling to 1 MiB) and a 2 MiB and a
    // 4 MiB mapped block.
    let (store, _) = filled(6 << 20);
    drop(store);
    let released = prollystore::process::release_spare_memory();
    assert!(
        released >= 2 << 20,
        "a dropped store's mapped blocks should have been kept, released {released} bytes"
    );
    assert_eq!(
        prollystore::process::release_spare_memory(),
        0,
        "nothing is left to release"
    );

    // Stores made afterwards map fresh memory and read back their own chunks.
    let (store, addresses) = filled(3 << 20);
    let mut chunk = vec![7u8; 4096];
    for (i, a) in addresses.iter().enumerate() {
        chunk[..8].copy_from_slice(&(i as u64).to_le_bytes());
        assert_eq!(store.get(a).expect("get"), Some(&chunk[..]), "chunk {i}");
    }
}

#[test]
fn a_zero_limit_keeps_nothing_and_the_default_keeps_again() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    prollystore::process::release_spare_memory();
    prollystore::process::set_spare_memory_limit(0);
    let (store, _) = filled(6 << 20);
    drop(store);
    assert_eq!(
        prollystore::process::release_spare_memory(),
        0,
        "with a limit of 0 nothing is kept"
    );
    prollystore::process::set_spare_memory_limit(128 << 20);
    let (store, _) = filled(6 << 20);
    drop(store);
    assert!(
        prollystore::process::release_spare_memory() >= 2 << 20,
        "with the default limit a dropped store's blocks are kept again"
    );
}

#[test]
fn released_thread_caches_are_made_again_and_edits_agree() {
    use prollystore::{BytesSchema, Map};
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let store = MemoryStore::new(HashProfile::Blake3);
    let rows: Vec<(Vec<u8>, Vec<u8>)> = (0u32..50_000)
        .map(|i| (i.to_be_bytes().to_vec(), vec![(i % 251) as u8; 16]))
        .collect();
    let map = Map::from_sorted(
        &store,
        BytesSchema,
        rows.iter().map(|(k, v)| (&k[..], &v[..])),
    )
    .expect("build");
    let edits: Vec<(Vec<u8>, Vec<u8>)> = (0u32..50_000)
        .step_by(7)
        .map(|i| (i.to_be_bytes().to_vec(), vec![1u8; 24]))
        .collect();
    let edit = |map: &Map<'_, MemoryStore, BytesSchema>| {
        let mut editor = map.editor();
        for (k, v) in &edits {
            editor.put(k, v);
        }
        editor.flush().expect("edit").root()
    };
    // A large edit starts the thread's hash thread and fills its caches; releasing them
    // ends that thread, and the next edit makes them again and gives the same tree.
    let first = edit(&map);
    prollystore::process::release_thread_caches();
    let second = edit(&map);
    prollystore::process::release_thread_caches();
    assert_eq!(first, second);
}
