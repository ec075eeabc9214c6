//! Golden-vector tests of the trees: maps, edits and diffs made by Dolt (see
//! `vectors/README.md`) read back, rebuild and compare as Dolt's do.

use std::path::Path;

use prollystore::format::HashProfile;
use prollystore::MemoryStore;
use prollystore_conformance::category::Category;
use prollystore_conformance::maps;
use prollystore_conformance::records::load_chunks;

/// The vectors folder, with its `maps` (the tests here need nothing else).
fn vectors() -> &'static Path {
    prollystore_test_vectors::require("maps");
    prollystore_test_vectors::dir()
}

fn assert_category(c: Category, at_least: usize) {
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
    let dir = vectors();
    assert_category(maps::check_maps(dir), 26);
}

#[test]
fn edits_reproduce_dolts_roots() {
    let dir = vectors();
    assert_category(maps::check_edits(dir), 6);
}

#[test]
fn diffs_equal_dolts() {
    let dir = vectors();
    assert_category(maps::check_diffs(dir), 6);
}

/// Out-of-band fields resolve to their full bytes, and copying a map moves exactly its chunks.
#[test]
fn adaptive_fields_resolve_and_trees_copy() {
    use prollystore::tree::copy::copy_tree;
    use prollystore::tuples::field_bytes;
    use prollystore::Map;
    let dir = vectors();
    let meta = maps::read_meta(&dir.join("maps/adaptive-100.json")).unwrap();
    let store = MemoryStore::new(HashProfile::Dolt);
    load_chunks(&store, &meta.chunk_file).unwrap();
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
    let dir = vectors();
    let meta = maps::read_meta(&dir.join("maps/int64x2_kv-50000.json")).unwrap();
    let store = MemoryStore::new(HashProfile::Dolt);
    load_chunks(&store, &meta.chunk_file).unwrap();
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
