//! Memory that dropped memory stores leave for the next ones, and giving it back.
//!
//! A test binary of its own: the kept memory is process-wide, and other tests' stores would
//! take and leave it concurrently.

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

#[test]
fn dropped_stores_leave_memory_that_release_gives_back() {
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
