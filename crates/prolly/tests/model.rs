//! Property tests against `BTreeMap`: building, reading, batch edits (root must equal the
//! from-scratch root) and diffs, with byte-ordered keys in a blake3 memory store.

use std::collections::BTreeMap;
use std::ops::Bound;

use prollystore::format::HashProfile;
use prollystore::{BytesSchema, ChunkStore, DiffEntry, Map, MemoryStore};
use proptest::prelude::*;

/// A one-field tuple holding `data` (the all-NULL tuple for empty data), so nodes verify.
fn tup(mut data: Vec<u8>) -> Vec<u8> {
    if data.is_empty() {
        return vec![0, 0];
    }
    data.extend_from_slice(&[1, 0]);
    data
}

fn key(i: u32) -> Vec<u8> {
    // Big-endian, with a varying tail so that key lengths differ.
    let mut k = i.to_be_bytes().to_vec();
    k.extend(std::iter::repeat_n(b'k', (i % 7) as usize));
    tup(k)
}

fn value(i: u32, salt: u32, big: bool) -> Vec<u8> {
    let n = if big {
        3000 + i.wrapping_mul(7919).wrapping_add(salt) % 9000
    } else {
        i.wrapping_mul(31).wrapping_add(salt) % 60
    };
    tup((0..n).map(|j| (j ^ i ^ salt) as u8).collect())
}

fn build(store: &MemoryStore, model: &BTreeMap<Vec<u8>, Vec<u8>>) -> prollystore::format::Address {
    Map::from_sorted(
        store,
        BytesSchema,
        model.iter().map(|(k, v)| (&k[..], &v[..])),
    )
    .unwrap()
    .root()
}

fn check_reads(
    store: &MemoryStore,
    map: &Map<'_, MemoryStore, BytesSchema>,
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
) {
    assert_eq!(map.count().unwrap(), model.len() as u64);
    let rows: Vec<_> = map.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), model.len());
    for ((k, v), (mk, mv)) in rows.iter().zip(model.iter()) {
        assert_eq!(*k, &mk[..]);
        assert_eq!(*v, &mv[..]);
    }
    let back: Vec<_> = map
        .range_rev(Bound::Unbounded, Bound::Unbounded)
        .unwrap()
        .map(|r| r.unwrap().0.to_vec())
        .collect();
    let mut expect: Vec<_> = model.keys().cloned().collect();
    expect.reverse();
    assert_eq!(back, expect);
    for (i, (mk, mv)) in model.iter().enumerate().step_by(17) {
        assert_eq!(map.get(mk).unwrap(), Some(&mv[..]));
        assert_eq!(
            map.get_ordinal(i as u64).unwrap().map(|(k, _)| k.to_vec()),
            Some(mk.clone())
        );
        let c = map.seek(mk).unwrap();
        assert_eq!(c.ordinal(), i as u64);
    }
    assert_eq!(map.get_ordinal(model.len() as u64).unwrap(), None);
    assert_eq!(
        map.first().unwrap().map(|x| x.0.to_vec()),
        model.keys().next().cloned()
    );
    assert_eq!(
        map.last().unwrap().map(|x| x.0.to_vec()),
        model.keys().next_back().cloned()
    );
    let _ = store;
}

fn check_ranges(
    map: &Map<'_, MemoryStore, BytesSchema>,
    model: &BTreeMap<Vec<u8>, Vec<u8>>,
    a: u32,
    b: u32,
) {
    let (lo, hi) = (key(a.min(b)), key(a.max(b)));
    let bounds = [
        (Bound::Included(&lo[..]), Bound::Excluded(&hi[..])),
        (Bound::Excluded(&lo[..]), Bound::Included(&hi[..])),
        (Bound::Unbounded, Bound::Included(&hi[..])),
        (Bound::Excluded(&lo[..]), Bound::Unbounded),
    ];
    for (l, h) in bounds {
        let got: Vec<_> = map
            .range(l, h)
            .unwrap()
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        let want: Vec<_> = model
            .range::<[u8], _>((l, h))
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(got, want, "range {l:?}..{h:?}");
        let got: Vec<_> = map
            .range_rev(l, h)
            .unwrap()
            .map(|r| r.unwrap().0.to_vec())
            .collect();
        let want: Vec<_> = model
            .range::<[u8], _>((l, h))
            .rev()
            .map(|(k, _)| k.clone())
            .collect();
        assert_eq!(got, want, "range_rev {l:?}..{h:?}");
    }
}

#[derive(Debug, Clone)]
enum Op {
    Put(u32, u32, bool),
    Del(u32),
    DelRun(u32, u32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0u32..14000, any::<u32>(), prop::bool::weighted(0.02)).prop_map(|(k, s, b)| Op::Put(k, s, b)),
        3 => (0u32..14000).prop_map(Op::Del),
        1 => (0u32..14000, 1u32..400).prop_map(|(k, n)| Op::DelRun(k, n)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, .. ProptestConfig::default() })]

    #[test]
    fn edits_match_from_scratch(
        n in 0u32..12000,
        stride in 1u32..3,
        bigs in prop::collection::vec(0u32..5000, 0..4),
        batches in prop::collection::vec(prop::collection::vec(op(), 0..120), 1..4),
        ra in 0u32..14000, rb in 0u32..14000,
        dolt in any::<bool>(),
    ) {
        // The Dolt profile hashes new nodes in batches; blake3 one by one.
        let profile = if dolt { HashProfile::Dolt } else { HashProfile::Blake3 };
        let store = MemoryStore::new(profile);
        let mut model = BTreeMap::new();
        for i in (0..n).map(|i| i * stride) {
            model.insert(key(i), value(i, 0, bigs.contains(&i)));
        }
        let mut root = build(&store, &model);
        let map = Map::new(&store, root, BytesSchema);
        check_reads(&store, &map, &model);
        check_ranges(&map, &model, ra, rb);
        for batch in batches {
            let before = model.clone();
            let owned: Vec<(Vec<u8>, Option<Vec<u8>>)> = batch.iter().flat_map(|op| match *op {
                Op::Put(k, s, b) => vec![(key(k), Some(value(k, s, b)))],
                Op::Del(k) => vec![(key(k), None)],
                Op::DelRun(k, len) => (k..k + len).map(|k| (key(k), None)).collect(),
            }).collect();
            for (k, v) in &owned {
                match v { Some(v) => { model.insert(k.clone(), v.clone()); } None => { model.remove(k); } }
            }
            let edits = owned.iter().map(|(k, v)| (&k[..], v.as_deref()));
            let new_root = Map::new(&store, root, BytesSchema).apply(edits).unwrap().root();
            let scratch = MemoryStore::new(profile);
            let expect = build(&scratch, &model);
            prop_assert_eq!(new_root, expect);
            let map = Map::new(&store, new_root, BytesSchema);
            check_reads(&store, &map, &model);
            // Diff old -> new equals the model difference.
            let got: Vec<(Vec<u8>, u8)> = prollystore::Diff::new(&store, &BytesSchema, root, new_root).unwrap().map(|e| {
                let e = e.unwrap();
                let t = match e { DiffEntry::Added{..} => 0, DiffEntry::Removed{..} => 1, DiffEntry::Modified{..} => 2 };
                (e.key().to_vec(), t)
            }).collect();
            let mut want = Vec::new();
            let keys: std::collections::BTreeSet<_> = before.keys().chain(model.keys()).cloned().collect();
            for k in keys {
                match (before.get(&k), model.get(&k)) {
                    (None, Some(_)) => want.push((k, 0)),
                    (Some(_), None) => want.push((k, 1)),
                    (Some(a), Some(b)) if a != b => want.push((k, 2)),
                    _ => {}
                }
            }
            prop_assert_eq!(got, want);
            root = new_root;
        }
    }
}

fn apply_model(
    store: &MemoryStore,
    root: prollystore::format::Address,
    model: &mut BTreeMap<Vec<u8>, Vec<u8>>,
    owned: Vec<(Vec<u8>, Option<Vec<u8>>)>,
) -> prollystore::format::Address {
    for (k, v) in &owned {
        match v {
            Some(v) => {
                model.insert(k.clone(), v.clone());
            }
            None => {
                model.remove(k);
            }
        }
    }
    let edits = owned.iter().map(|(k, v)| (&k[..], v.as_deref()));
    let root = Map::new(store, root, BytesSchema)
        .apply(edits)
        .unwrap()
        .root();
    let scratch = MemoryStore::new(store.profile());
    assert_eq!(
        root,
        build(&scratch, model),
        "edited root differs from the from-scratch root"
    );
    check_reads(store, &Map::new(store, root, BytesSchema), model);
    root
}

#[test]
fn grow_from_empty_and_shrink_to_empty() {
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        grow_and_shrink(profile);
    }
}

fn grow_and_shrink(profile: HashProfile) {
    let store = MemoryStore::new(profile);
    let mut model = BTreeMap::new();
    let mut root = build(&store, &model);
    let empty = root;
    // Grow in a few batches to three levels.
    for b in 0..4u32 {
        let owned = (0..6000)
            .map(|i| (key(i * 4 + b), Some(value(i, b, i % 997 == 0))))
            .collect();
        root = apply_model(&store, root, &mut model, owned);
    }
    assert!(Map::new(&store, root, BytesSchema).height().unwrap() >= 2);
    // Shrink: delete most, then all but one, then everything.
    let owned = model.keys().skip(50).map(|k| (k.clone(), None)).collect();
    root = apply_model(&store, root, &mut model, owned);
    let owned = model.keys().skip(1).map(|k| (k.clone(), None)).collect();
    root = apply_model(&store, root, &mut model, owned);
    assert_eq!(Map::new(&store, root, BytesSchema).count().unwrap(), 1);
    let owned = model.keys().map(|k| (k.clone(), None)).collect();
    root = apply_model(&store, root, &mut model, owned);
    assert_eq!(root, empty);
}

#[test]
fn huge_items_force_overflow_boundaries() {
    let store = MemoryStore::default();
    let mut model = BTreeMap::new();
    for i in 0..40u32 {
        let n = if i % 3 == 0 { 50_000 } else { 20 + i as usize };
        model.insert(key(i * 2), tup(vec![i as u8; n]));
    }
    let root = build(&store, &model);
    check_reads(&store, &Map::new(&store, root, BytesSchema), &model);
    let owned = vec![
        (key(7), Some(tup(vec![7u8; 40_000]))),
        (key(8), None),
        (key(31), Some(tup(vec![1u8; 10]))),
        (key(200), Some(tup(vec![2u8; 60_000]))),
    ];
    apply_model(&store, root, &mut model, owned);
}

/// Edits that keep every item's size (value updates; an insert and a delete of equal sizes in
/// one node) let the rewrite copy the rest of a node without asking the splitter: the result
/// must still be the from-scratch tree, at both hash profiles.
#[test]
fn size_preserving_edits_match_from_scratch() {
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        let store = MemoryStore::new(profile);
        // Even keys only, values of a size fixed per key.
        let mut model = even_rows(20_000);
        let mut root = build(&store, &model);
        let same_size = |i: u32, salt: u32| {
            let n = model_value_len(i);
            tup((0..n).map(|j| (j ^ i ^ salt) as u8).collect())
        };
        for round in 1..6u32 {
            let mut owned: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
            // Single updates, spread out, then a few dense runs.
            for i in (0..20000u32)
                .step_by(2)
                .filter(|i| i % (1000 + 2 * round) == 0)
            {
                owned.push((key(i), Some(same_size(i, round))));
            }
            for i in (4000 * round..4000 * round + 40).step_by(2) {
                owned.push((key(i), Some(same_size(i, round + 7))));
            }
            // Insert an absent (odd) key and delete a present one 7 further on: the same key
            // length, and a value of the deleted one's size.
            let a = 1000 * round + 1;
            owned.push((key(a), Some(tup(vec![9; model_value_len(a + 7) as usize]))));
            owned.push((key(a + 7), None));
            root = apply_model(&store, root, &mut model, owned);
        }
    }
}

/// Edits of one row at a time on a three-level tree, of every kind a single edit can be: the
/// shapes where only the leaf's parents change (their one child rewritten in place), and
/// those that move a boundary or change a node's last key.
#[test]
fn single_edits_match_from_scratch() {
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        let store = MemoryStore::new(profile);
        let mut model = even_rows(60_000);
        let mut root = build(&store, &model);
        let h = Map::new(&store, root, BytesSchema).height().unwrap();
        assert!(h >= 2, "root level {h}: three levels wanted");
        let mut x = 12345u32;
        for round in 0..120u32 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let i = (x >> 8) % 60_000;
            let present: Vec<Vec<u8>> = model.keys().cloned().collect();
            let k = key(i & !1);
            let edit = match round % 6 {
                // Same-size and resized updates of a present key.
                0 => (
                    k,
                    Some(tup(vec![round as u8; model_value_len(i & !1) as usize])),
                ),
                1 => (k, Some(value(i, round, false))),
                // Insert an absent key; delete a present one.
                2 => (key(i | 1), Some(value(i, round, false))),
                3 => (k, None),
                // Update or delete one of the first keys of the map, or its last key.
                4 => (present[(x as usize >> 4) % 8].clone(), None),
                _ => (
                    present[present.len() - 1].clone(),
                    Some(value(i, round, round % 12 == 5)),
                ),
            };
            root = apply_model(&store, root, &mut model, vec![edit]);
        }
    }
}

/// Batches of tens to hundreds of edits on a three-level tree: most internal nodes then have
/// several children rewritten without a boundary moving (those nodes are rewritten in place),
/// and some have a child split, merged or re-keyed (those go through the splitter), next to
/// each other in one pass. Mostly same-size updates, as in a table of fixed-width rows.
#[test]
fn batches_rewriting_several_children_match_from_scratch() {
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        let store = MemoryStore::new(profile);
        let mut model = even_rows(60_000);
        let mut root = build(&store, &model);
        let mut x = 777u32;
        for round in 0..12u32 {
            let mut owned = Vec::new();
            for _ in 0..(20 + 40 * round) {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                let i = (x >> 8) % 60_000;
                let k = key(i & !1);
                owned.push(match x % 10 {
                    0 => (key(i | 1), Some(value(i, round, false))),
                    1 => (k, None),
                    2 => (k, Some(value(i, round + 1, false))),
                    _ => (
                        k,
                        Some(tup(vec![round as u8; model_value_len(i & !1) as usize])),
                    ),
                });
            }
            root = apply_model(&store, root, &mut model, owned);
        }
    }
}

/// Rows of the even keys below `n`, each with `value(i, 0, false)`.
fn even_rows(n: u32) -> BTreeMap<Vec<u8>, Vec<u8>> {
    (0..n)
        .step_by(2)
        .map(|i| (key(i), value(i, 0, false)))
        .collect()
}

/// The length of `value(i, 0, false)` before `tup`.
fn model_value_len(i: u32) -> u32 {
    i.wrapping_mul(31) % 60
}

#[test]
fn unchanged_puts_keep_the_root() {
    let store = MemoryStore::default();
    let mut model = BTreeMap::new();
    for i in 0..3000u32 {
        model.insert(key(i), value(i, 1, false));
    }
    let root = build(&store, &model);
    let owned: Vec<(Vec<u8>, Option<Vec<u8>>)> = (0..3000)
        .step_by(5)
        .map(|i| (key(i), Some(value(i, 1, false))))
        .collect();
    let edits = owned.iter().map(|(k, v)| (&k[..], v.as_deref()));
    assert_eq!(
        Map::new(&store, root, BytesSchema)
            .apply(edits)
            .unwrap()
            .root(),
        root
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Merging with "right wins" gives: right's value where right changed the key, else left's.
    #[test]
    fn three_way_merge_matches_model(
        n in 0u32..4000,
        lops in prop::collection::vec(op(), 0..80),
        rops in prop::collection::vec(op(), 0..80),
    ) {
        use prollystore::tree::merge::{merge, Resolution};
        let store = MemoryStore::default();
        let mut base = BTreeMap::new();
        for i in 0..n {
            base.insert(key(i * 3), value(i, 0, false));
        }
        let base_root = build(&store, &base);
        let side = |ops: &[Op], model: &mut BTreeMap<Vec<u8>, Vec<u8>>| {
            let owned: Vec<(Vec<u8>, Option<Vec<u8>>)> = ops.iter().flat_map(|op| match *op {
                Op::Put(k, s, b) => vec![(key(k % 13000), Some(value(k, s, b)))],
                Op::Del(k) => vec![(key(k % 13000), None)],
                Op::DelRun(k, len) => (k..k + len.min(40)).map(|k| (key(k % 13000), None)).collect(),
            }).collect();
            apply_model(&store, base_root, model, owned)
        };
        let mut left = base.clone();
        let left_root = side(&lops, &mut left);
        let mut right = base.clone();
        let right_root = side(&rops, &mut right);
        let out = merge(&store, &BytesSchema, base_root, left_root, right_root, |_, _, _, r| {
            Resolution::Value(r.map(<[u8]>::to_vec))
        }).unwrap();
        prop_assert!(out.conflicts.is_empty());
        let keys: std::collections::BTreeSet<_> = base.keys().chain(left.keys()).chain(right.keys()).cloned().collect();
        let mut want = BTreeMap::new();
        for k in keys {
            let v = if base.get(&k) != right.get(&k) { right.get(&k) } else { left.get(&k) };
            if let Some(v) = v { want.insert(k, v.clone()); }
        }
        let scratch = MemoryStore::default();
        prop_assert_eq!(out.root, build(&scratch, &want));
    }
}

#[test]
fn editor_buffers_and_last_edit_wins() {
    let store = MemoryStore::default();
    let mut model = BTreeMap::new();
    for i in 0..2000u32 {
        model.insert(key(i), value(i, 3, false));
    }
    let map = Map::new(&store, build(&store, &model), BytesSchema);
    let mut ed = map.editor();
    ed.put(&key(5), &value(5, 9, false));
    ed.delete(&key(5));
    ed.delete(&key(6));
    ed.put(&key(6), &value(6, 1, false));
    ed.put(&key(9999), &value(1, 1, false));
    assert_eq!(ed.len(), 5);
    let edited = ed.flush().unwrap();
    model.remove(&key(5));
    model.insert(key(6), value(6, 1, false));
    model.insert(key(9999), value(1, 1, false));
    let scratch = MemoryStore::default();
    assert_eq!(edited.root(), build(&scratch, &model));
    assert_eq!(map.count().unwrap(), 2000, "the original map is unchanged");
}

/// A tree whose child sits at the wrong level is reported, never panicked on.
#[test]
fn malformed_trees_give_errors() {
    use prollystore::format::message::{InternalInput, LeafInput, NodeWriter};
    use prollystore::TreeError;
    let store = MemoryStore::default();
    let mut w = NodeWriter::new();
    let (k, v) = (key(1), value(1, 0, false));
    let leaf = w
        .write_leaf(&LeafInput {
            key_items: &k,
            key_offsets: &[0, k.len() as u16],
            value_items: &v,
            value_offsets: &[0, v.len() as u16],
            value_address_offsets: &[],
        })
        .unwrap()
        .to_vec();
    let leaf = store.put(&leaf).unwrap();
    let mut keys = k.clone();
    keys.extend_from_slice(&k);
    let mut children = leaf.as_bytes().to_vec();
    children.extend_from_slice(leaf.as_bytes());
    let top = w
        .write_internal(&InternalInput {
            key_items: &keys,
            key_offsets: &[0, k.len() as u16, 2 * k.len() as u16],
            child_addresses: &children,
            subtree_counts: &[1, 1],
            level: 2,
        })
        .unwrap()
        .to_vec();
    let top = store.put(&top).unwrap();
    let map = Map::new(&store, top, BytesSchema);
    // Twice: the second descent goes through the memory store's list of children; both name
    // the child at the wrong level.
    for _ in 0..2 {
        assert!(
            matches!(map.get(&k), Err(TreeError::Malformed { address, .. }) if address == leaf)
        );
    }
    assert!(map.iter().is_err());
    assert!(map.get_ordinal(0).is_err());
    let e = vec![(&k[..], None)];
    assert!(Map::new(&store, top, BytesSchema).apply_sorted(&e).is_err());
    let missing = prollystore::format::Address([7; 20]);
    assert!(Map::new(&store, missing, BytesSchema).get(&k).is_err());
}

/// Walking off the end and back, and off the start and forward, visits every row.
#[test]
fn cursors_turn_around_at_both_ends() {
    let store = MemoryStore::default();
    let mut model = BTreeMap::new();
    for i in 0..5000u32 {
        model.insert(key(i), value(i, 2, false));
    }
    let map = Map::new(&store, build(&store, &model), BytesSchema);
    assert!(map.height().unwrap() >= 1);
    let keys: Vec<_> = model.keys().cloned().collect();
    let mut c = map.seek(&keys[4990]).unwrap();
    while c.advance(&store).unwrap() {}
    assert!(!c.valid());
    let mut back = Vec::new();
    while c.retreat(&store).unwrap() {
        back.push(c.key().to_vec());
    }
    back.reverse();
    assert!(back == keys, "backward walk differs");
    let mut fwd = Vec::new();
    while c.advance(&store).unwrap() {
        fwd.push(c.key().to_vec());
    }
    // From before the start, the first step lands on the first row.
    assert!(fwd == keys, "forward walk differs");
}

/// A cursor moved by `advance_by` in random steps, from a random position, lands where as many
/// single steps land; the rest of its leaf holds the rows that follow it.
#[test]
fn cursors_advance_by_steps_as_single_steps_do() {
    let store = MemoryStore::default();
    let mut model = BTreeMap::new();
    for i in 0..5000u32 {
        model.insert(key(i), value(i, 3, false));
    }
    let map = Map::new(&store, build(&store, &model), BytesSchema);
    assert!(map.height().unwrap() >= 1);
    let keys: Vec<_> = model.keys().cloned().collect();
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    let mut next = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n
    };
    for _ in 0..200 {
        let start = next(keys.len() as u64) as usize;
        let mut c = map.seek_ordinal(start as u64).unwrap();
        let mut at = start;
        while at < keys.len() {
            let (leaf, rest) = c.rest_of_leaf();
            assert!(!rest.is_empty());
            assert_eq!(leaf.key(rest.start), &keys[at][..]);
            let last = at + rest.len() - 1;
            assert_eq!(leaf.key(rest.end - 1), &keys[last][..]);
            let step = 1 + next(700) as usize;
            let valid = c.advance_by(&store, step).unwrap();
            at += step;
            assert_eq!(valid, at < keys.len(), "from {start}, at {at}");
            if valid {
                assert_eq!(c.key(), &keys[at][..]);
                assert_eq!(c.ordinal(), at as u64);
            }
        }
        assert!(!c.valid());
        assert!(c.rest_of_leaf().1.is_empty());
        assert!(!c.advance_by(&store, 1).unwrap());
    }
}
