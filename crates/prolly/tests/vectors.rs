//! Golden-vector tests: maps, edits and diffs made by Dolt (see `shared/vectors/README.md`),
//! plus the chunker vector from Dolt's own tests.

#[path = "../examples/conformance/common.rs"]
#[allow(dead_code)]
mod common;
#[path = "../examples/conformance/maps.rs"]
#[allow(dead_code)]
mod maps;

use std::path::PathBuf;

use prollystore::format::{Address, HashProfile};
use prollystore::tree::build::TreeBuilder;
use prollystore::{BytesSchema, ChunkStore, MemoryStore};

/// The vectors directory, or `None` (after printing SKIPPED) when they are absent and
/// `PROLLY_ALLOW_MISSING_VECTORS=1`; panics with a clear message otherwise.
fn vectors() -> Option<PathBuf> {
    let dir = match std::env::var_os("PROLLY_VECTORS") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors"),
    };
    if dir.join("maps").is_dir() {
        return Some(dir);
    }
    if std::env::var("PROLLY_ALLOW_MISSING_VECTORS").as_deref() == Ok("1") {
        println!("SKIPPED: vectors not found at {}", dir.display());
        return None;
    }
    panic!(
        "golden vectors not found at {} (set PROLLY_VECTORS, or PROLLY_ALLOW_MISSING_VECTORS=1 to skip)",
        dir.display()
    );
}

fn assert_category(c: common::Category, at_least: usize) {
    if let Some(m) = &c.missing {
        panic!("category {} has no input: {m}", c.name);
    }
    assert!(
        c.failed == 0,
        "{}: {} passed, {} failed:\n{}",
        c.name,
        c.passed,
        c.failed,
        c.failures.join("\n")
    );
    assert!(c.passed >= at_least, "{}: only {} cases", c.name, c.passed);
}

#[test]
fn maps_read_back_and_rebuild_identically() {
    let Some(dir) = vectors() else { return };
    assert_category(maps::check_maps(&dir), 26);
}

#[test]
fn edits_reproduce_dolts_roots() {
    let Some(dir) = vectors() else { return };
    assert_category(maps::check_edits(&dir), 6);
}

#[test]
fn diffs_equal_dolts() {
    let Some(dir) = vectors() else { return };
    assert_category(maps::check_diffs(&dir), 6);
}

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

/// Out-of-band fields resolve to their full bytes, and copying a map moves exactly its chunks.
#[test]
fn adaptive_fields_resolve_and_trees_copy() {
    use prollystore::tree::copy::copy_tree;
    use prollystore::tuples::field_bytes;
    use prollystore::Map;
    let Some(dir) = vectors() else { return };
    let meta = maps::read_meta(&dir.join("maps/adaptive-100.json")).unwrap();
    let store = MemoryStore::new(HashProfile::Dolt);
    maps::load_chunks(&store, &meta.chunk_file).unwrap();
    let map = Map::new(&store, meta.root, meta.schema.clone());
    let mut out_of_band = 0;
    for row in map.iter().unwrap() {
        let (_, v) = row.unwrap();
        for i in 0..2 {
            let raw = meta
                .schema
                .value
                .field(prollystore::format::tuple::Tuple::new_unverified(v), i);
            let resolved = field_bytes(&store, &meta.schema.value, v, i).unwrap();
            match prollystore::format::tuple::Adaptive::from_bytes(raw.unwrap_or(&[])) {
                Some(prollystore::format::tuple::Adaptive::OutOfBand { len, .. }) => {
                    out_of_band += 1;
                    assert_eq!(resolved.unwrap().len() as u64, len);
                }
                Some(prollystore::format::tuple::Adaptive::Inline(p)) => {
                    assert_eq!(resolved.as_deref(), Some(p));
                }
                None => assert!(resolved.is_none()),
            }
        }
    }
    assert!(out_of_band > 50, "only {out_of_band} out-of-band values");
    let dest = MemoryStore::new(HashProfile::Dolt);
    let copied = copy_tree(&store, &dest, &meta.root).unwrap();
    assert_eq!(copied as u64, meta.chunk_count);
    assert_eq!(copy_tree(&store, &dest, &meta.root).unwrap(), 0);
}

/// Prefix scans, ordinals, seeks and reverse ranges on a Dolt map agree with a plain walk.
#[test]
fn prefix_ordinal_and_range_reads_on_a_dolt_map() {
    use prollystore::Map;
    use std::ops::Bound;
    let Some(dir) = vectors() else { return };
    let meta = maps::read_meta(&dir.join("maps/int64x2_kv-50000.json")).unwrap();
    let store = MemoryStore::new(HashProfile::Dolt);
    maps::load_chunks(&store, &meta.chunk_file).unwrap();
    let map = Map::new(&store, meta.root, meta.schema.clone());
    let rows: Vec<_> = map.iter().unwrap().map(|r| r.unwrap()).collect();
    let desc = &meta.schema.key;
    for (i, (k, _)) in rows.iter().enumerate().step_by(4999) {
        let want: Vec<_> = rows
            .iter()
            .filter(|(x, _)| desc.compare_prefix(x, k, 1).is_eq())
            .map(|r| r.0)
            .collect();
        let got: Vec<_> = map
            .prefix_rows(k, 1)
            .unwrap()
            .map(|r| r.unwrap().0)
            .collect();
        assert!(!got.is_empty());
        assert_eq!(got, want);
        assert_eq!(map.get_ordinal(i as u64).unwrap().unwrap().0, *k);
        assert_eq!(map.seek(k).unwrap().ordinal(), i as u64);
        let back: Vec<_> = map
            .range_rev(Bound::Unbounded, Bound::Included(k))
            .unwrap()
            .take(3)
            .map(|r| r.unwrap().0)
            .collect();
        let expect: Vec<_> = rows[..=i].iter().rev().take(3).map(|r| r.0).collect();
        assert_eq!(back, expect);
    }
}
