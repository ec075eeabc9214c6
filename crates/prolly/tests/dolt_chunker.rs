//! The chunker vector from Dolt's own tests: the same rows must cut into the same chunks, so the
//! root address is Dolt's.

use prollystore::format::{Address, HashProfile};
use prollystore::tree::build::TreeBuilder;
use prollystore::{BytesSchema, ChunkStore, MemoryStore};

/// Dolt's `TestContentAddress`: u32 keys `i`, values `i + 12345`, 12345 rows.
#[test]
fn dolt_content_address_vector() {
    let store = MemoryStore::new(HashProfile::Dolt);
    let mut b = TreeBuilder::new(&store, &BytesSchema);
    for i in 0u32..12345 {
        let mut k = i.to_le_bytes().to_vec();
        k.extend_from_slice(&[1, 0]);
        let mut v = (i + 12345).to_le_bytes().to_vec();
        v.extend_from_slice(&[1, 0]);
        b.add(&k, &v).unwrap();
    }
    let root = b.finish().unwrap();
    assert_eq!(
        root,
        Address::from_base32("6et6k66bpejk2imr3ourufout9ukeqbc").unwrap()
    );
    assert_eq!(store.get(&root).unwrap().unwrap().len(), 1316);
    assert_eq!(store.get_node(&root).unwrap().tree_count(), 12345);
}
