//! The tree diff (which skips shared subtrees, compares leaves as blocks of bytes and steps
//! over shared leaves from their parents) against a plain entry-by-entry merge of the two
//! trees' full contents: same entries, same order, same kinds, same bytes. Covers fixed-width
//! nodes (int64 tuples, whose comparator is not byte order, and fixed-width byte keys),
//! variable-width nodes, inserts, deletes, value changes, runs of them that shift leaf
//! boundaries, and trees of different heights.

use std::cmp::Ordering;
use std::ops::Bound;

use prollystore::format::tuple::{TupleDesc, Type};
use prollystore::format::{Address, Encoding};
use prollystore::tuples::TupleSchema;
use prollystore::{
    BytesSchema, ChangedLeaf, ChunkStore, Diff, DiffEntry, Map, MemoryStore, TreeSchema,
};
use proptest::prelude::*;

/// The shape of the rows.
#[derive(Clone, Copy, Debug)]
enum Shape {
    /// `(int64, int64) -> (int64, int64)` tuples: fixed width, compared as numbers.
    IntPairs,
    /// One-field byte tuples of a fixed width, compared as bytes.
    FixedBytes,
    /// One-field byte tuples of varying widths.
    VarBytes,
}

fn int_pair(a: i64, b: i64) -> Vec<u8> {
    let mut t = Vec::with_capacity(20);
    t.extend_from_slice(&a.to_le_bytes());
    t.extend_from_slice(&b.to_le_bytes());
    t.extend_from_slice(&8u16.to_le_bytes());
    t.extend_from_slice(&2u16.to_le_bytes());
    t
}

/// A one-field tuple holding `data` (not empty).
fn bytes_tuple(mut data: Vec<u8>) -> Vec<u8> {
    data.extend_from_slice(&[1, 0]);
    data
}

fn key(shape: Shape, k: u32) -> Vec<u8> {
    match shape {
        Shape::IntPairs => int_pair(i64::from(k) - 5000, i64::from(k % 7)),
        Shape::FixedBytes => bytes_tuple(k.to_be_bytes().to_vec()),
        Shape::VarBytes => {
            let mut d = k.to_be_bytes().to_vec();
            d.extend(std::iter::repeat_n(b'k', (k % 5) as usize));
            bytes_tuple(d)
        }
    }
}

fn value(shape: Shape, k: u32, salt: u32) -> Vec<u8> {
    let x = k.wrapping_mul(2_654_435_761) ^ salt;
    match shape {
        Shape::IntPairs => int_pair(i64::from(x), -i64::from(salt)),
        Shape::FixedBytes => bytes_tuple(x.to_le_bytes().repeat(3)),
        Shape::VarBytes => bytes_tuple((0..=(x % 40)).map(|j| (j ^ x) as u8).collect()),
    }
}

/// An edit of the base map, over key positions `k` (base keys are the even ones).
#[derive(Clone, Debug)]
enum Op {
    /// New value for base key `2k`.
    Update(u32, u32),
    /// Insert the odd key `2k + 1`.
    Insert(u32, u32),
    /// Delete base key `2k`.
    Delete(u32),
    /// Delete `len` base keys from `2k` (shifts leaf boundaries).
    DeleteRun(u32, u32),
    /// Insert `len` odd keys from `2k + 1` (shifts leaf boundaries, can add a level).
    InsertRun(u32, u32, u32),
    /// New values for `len` base keys from `2k`.
    UpdateRun(u32, u32, u32),
}

fn op(n: u32) -> impl Strategy<Value = Op> {
    let n = n.max(1);
    prop_oneof![
        4 => (0..n, any::<u32>()).prop_map(|(k, s)| Op::Update(k, s)),
        4 => (0..n, any::<u32>()).prop_map(|(k, s)| Op::Insert(k, s)),
        4 => (0..n).prop_map(Op::Delete),
        1 => (0..n, 1..400u32).prop_map(|(k, l)| Op::DeleteRun(k, l)),
        1 => (0..n, 1..3000u32, any::<u32>()).prop_map(|(k, l, s)| Op::InsertRun(k, l, s)),
        1 => (0..n, 1..400u32, any::<u32>()).prop_map(|(k, l, s)| Op::UpdateRun(k, l, s)),
    ]
}

/// Owned edits for `ops` (later ones win).
fn edits(shape: Shape, ops: &[Op]) -> Vec<(Vec<u8>, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    for o in ops {
        match *o {
            Op::Update(k, s) => out.push((key(shape, 2 * k), Some(value(shape, 2 * k, s)))),
            Op::Insert(k, s) => out.push((key(shape, 2 * k + 1), Some(value(shape, 2 * k + 1, s)))),
            Op::Delete(k) => out.push((key(shape, 2 * k), None)),
            Op::DeleteRun(k, l) => out.extend((k..k + l).map(|k| (key(shape, 2 * k), None))),
            Op::InsertRun(k, l, s) => out.extend(
                (k..k + l).map(|k| (key(shape, 2 * k + 1), Some(value(shape, 2 * k + 1, s)))),
            ),
            Op::UpdateRun(k, l, s) => {
                out.extend((k..k + l).map(|k| (key(shape, 2 * k), Some(value(shape, 2 * k, s)))))
            }
        }
    }
    out
}

/// Owned copy of a diff entry: (kind, key, from, to).
type Owned = (u8, Vec<u8>, Vec<u8>, Vec<u8>);

fn own(e: DiffEntry<'_>) -> Owned {
    match e {
        DiffEntry::Added { key, to } => (0, key.to_vec(), Vec::new(), to.to_vec()),
        DiffEntry::Removed { key, from } => (1, key.to_vec(), from.to_vec(), Vec::new()),
        DiffEntry::Modified { key, from, to } => (2, key.to_vec(), from.to_vec(), to.to_vec()),
    }
}

/// The plain diff: both trees read in full, merged entry by entry with the schema's order.
fn plain_diff<T: TreeSchema + Clone>(
    store: &MemoryStore,
    schema: &T,
    from: Address,
    to: Address,
) -> Vec<Owned> {
    let a: Vec<(&[u8], &[u8])> = Map::new(store, from, schema.clone())
        .iter()
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let b: Vec<(&[u8], &[u8])> = Map::new(store, to, schema.clone())
        .iter()
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < a.len() || j < b.len() {
        let order = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => schema.compare_keys(x.0, y.0),
            (Some(_), None) => Ordering::Less,
            _ => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                out.push(own(DiffEntry::Removed {
                    key: a[i].0,
                    from: a[i].1,
                }));
                i += 1;
            }
            Ordering::Greater => {
                out.push(own(DiffEntry::Added {
                    key: b[j].0,
                    to: b[j].1,
                }));
                j += 1;
            }
            Ordering::Equal => {
                let (fv, tv) = (a[i].1, b[j].1);
                if fv != tv && !schema.values_equivalent(fv, tv) {
                    out.push(own(DiffEntry::Modified {
                        key: a[i].0,
                        from: fv,
                        to: tv,
                    }));
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

fn check<T: TreeSchema + Clone>(shape: Shape, schema: T, n: u32, ops: &[Op]) {
    let store = MemoryStore::default();
    let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|k| (key(shape, 2 * k), value(shape, 2 * k, 0)))
        .collect();
    let from = Map::from_sorted(
        &store,
        schema.clone(),
        rows.iter().map(|(k, v)| (&k[..], &v[..])),
    )
    .unwrap()
    .root();
    let owned = edits(shape, ops);
    let e = owned.iter().map(|(k, v)| (&k[..], v.as_deref()));
    let to = Map::new(&store, from, &schema).apply(e).unwrap().root();
    check_both_ways(&store, &schema, from, to, &format!("{shape:?}"));
}

/// The tree diff equals the plain merge from `a` to `b` and from `b` to `a`.
fn check_both_ways<T: TreeSchema + Clone>(
    store: &MemoryStore,
    schema: &T,
    a: Address,
    b: Address,
    what: &str,
) {
    for (x, y) in [(a, b), (b, a)] {
        let got: Vec<Owned> = Diff::new(store, schema, x, y)
            .unwrap()
            .map(|r| own(r.unwrap()))
            .collect();
        let want = plain_diff(store, schema, x, y);
        assert_eq!(got.len(), want.len(), "{what}: entry counts differ");
        assert!(got == want, "{what}: entries differ");
        check_parts(store, schema, x, y, &want, what);
    }
}

/// The leaves the trees do not share cover every difference, and the diff cut at their last
/// keys (and at some of the differences' own keys) into key ranges gives, range after range,
/// every difference once, in order.
fn check_parts<T: TreeSchema + Clone>(
    store: &MemoryStore,
    schema: &T,
    from: Address,
    to: Address,
    want: &[Owned],
    what: &str,
) {
    let (f, t) = (
        Map::new(store, from, schema.clone()),
        Map::new(store, to, schema.clone()),
    );
    let changed: Vec<ChangedLeaf<'_>> = f.changed_leaves(&t).unwrap().map(|r| r.unwrap()).collect();
    let work: u64 = changed.iter().map(|c| c.from_rows + c.to_rows).sum();
    assert!(
        work >= want.len() as u64,
        "{what}: {work} rows compared, {} differences",
        want.len()
    );
    for w in changed.windows(2) {
        assert!(
            schema.compare_keys(w[0].last_key, w[1].last_key).is_lt(),
            "{what}: leaves out of order"
        );
    }
    if want.is_empty() {
        assert!(
            changed.is_empty() || from != to,
            "{what}: equal trees list no leaf"
        );
    }
    let cut_sets: [Vec<Vec<u8>>; 2] = [
        changed.iter().map(|c| c.last_key.to_vec()).collect(),
        want.iter()
            .step_by((want.len() / 40).max(3))
            .map(|e| e.1.clone())
            .collect(),
    ];
    for (n, cuts) in cut_sets.iter().enumerate() {
        let mut got = Vec::new();
        let mut after: Option<&[u8]> = None;
        for cut in cuts.iter().map(|c| Some(&c[..])).chain([None]) {
            let start = after.map_or(Bound::Unbounded, Bound::Excluded);
            let end = cut.map_or(Bound::Unbounded, Bound::Included);
            got.extend(
                f.diff_range(&t, start, end)
                    .unwrap()
                    .map(|r| own(r.unwrap())),
            );
            after = cut;
        }
        assert!(
            got == want,
            "{what}: the diff cut at cut set {n} differs from the whole"
        );
        // The same cuts as [start, end) ranges.
        let mut got = Vec::new();
        let mut start: Option<&[u8]> = None;
        for cut in cuts.iter().map(|c| Some(&c[..])).chain([None]) {
            let lo = start.map_or(Bound::Unbounded, Bound::Included);
            let hi = cut.map_or(Bound::Unbounded, Bound::Excluded);
            got.extend(f.diff_range(&t, lo, hi).unwrap().map(|r| own(r.unwrap())));
            start = cut;
        }
        assert!(
            got == want,
            "{what}: the diff cut at cut set {n} (half-open) differs"
        );
    }
}

fn int_schema() -> TupleSchema {
    let d = TupleDesc::new(vec![
        Type::not_null(Encoding::Int64),
        Type::not_null(Encoding::Int64),
    ]);
    TupleSchema::new(d.clone(), d)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn int_pairs_diff_equals_plain_merge(
        (n, ops) in (0..12_000u32).prop_flat_map(|n| (Just(n), prop::collection::vec(op(n), 0..40)))
    ) {
        check(Shape::IntPairs, int_schema(), n, &ops);
    }

    #[test]
    fn fixed_bytes_diff_equals_plain_merge(
        (n, ops) in (0..12_000u32).prop_flat_map(|n| (Just(n), prop::collection::vec(op(n), 0..40)))
    ) {
        check(Shape::FixedBytes, BytesSchema, n, &ops);
    }

    #[test]
    fn var_bytes_diff_equals_plain_merge(
        (n, ops) in (0..12_000u32).prop_flat_map(|n| (Just(n), prop::collection::vec(op(n), 0..40)))
    ) {
        check(Shape::VarBytes, BytesSchema, n, &ops);
    }
}

/// Many scattered single changes over a three-level tree: every changed leaf is followed by
/// shared ones, the case the parents-first skip is for.
#[test]
fn scattered_changes_over_three_levels() {
    for shape in [Shape::IntPairs, Shape::FixedBytes, Shape::VarBytes] {
        let ops: Vec<Op> = (0..60u32)
            .map(|i| {
                let k = i.wrapping_mul(7919) % 20_000;
                match i % 3 {
                    0 => Op::Update(k, i),
                    1 => Op::Insert(k, i),
                    _ => Op::Delete(k),
                }
            })
            .collect();
        match shape {
            Shape::IntPairs => check(shape, int_schema(), 20_000, &ops),
            _ => check(shape, BytesSchema, 20_000, &ops),
        }
    }
}

/// The number of rows in each leaf of the tree at `root`, in key order.
fn leaf_sizes(store: &MemoryStore, root: Address, out: &mut Vec<usize>) {
    let node = store.get_node(&root).unwrap();
    if node.level() == 0 {
        out.push(node.count());
        return;
    }
    for i in 0..node.count() {
        leaf_sizes(store, node.child(i), out);
    }
}

/// One tree holds a prefix of the other's rows that ends exactly at a leaf boundary, so
/// the shorter tree's leaves (and, at some level, a node's whole child list) are a prefix
/// of the longer tree's. The diff must start both walks under the same child: starting
/// them apart once reported the shorter tree's last leaf as removed (a `tree_ops` fuzz
/// find). Also the other way round: a suffix that starts at a leaf boundary.
#[test]
fn prefix_and_suffix_at_leaf_boundaries() {
    for shape in [Shape::IntPairs, Shape::FixedBytes, Shape::VarBytes] {
        match shape {
            Shape::IntPairs => prefix_and_suffix(shape, int_schema()),
            _ => prefix_and_suffix(shape, BytesSchema),
        }
    }
}

fn prefix_and_suffix<T: TreeSchema + Clone>(shape: Shape, schema: T) {
    let store = MemoryStore::default();
    let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..30_000)
        .map(|k| (key(shape, k), value(shape, k, 0)))
        .collect();
    let build = |rows: &[(Vec<u8>, Vec<u8>)]| {
        Map::from_sorted(
            &store,
            schema.clone(),
            rows.iter().map(|(k, v)| (&k[..], &v[..])),
        )
        .unwrap()
        .root()
    };
    let all = build(&rows);
    let mut sizes = Vec::new();
    leaf_sizes(&store, all, &mut sizes);
    assert!(sizes.len() > 100, "{shape:?}: the tree needs many leaves");
    let mut end = 0;
    for (n, size) in sizes.iter().enumerate() {
        end += size;
        if end == rows.len() || n % 7 != 3 {
            continue;
        }
        let what = format!("{shape:?}, boundary after row {end}");
        check_both_ways(&store, &schema, build(&rows[..end]), all, &what);
        check_both_ways(&store, &schema, build(&rows[end..]), all, &what);
    }
}

/// Fixed-width leaves whose values are all equal, so the search for identical items (values
/// first, then keys as far as the values agree) finds the value bytes agreeing past the first
/// key difference: the keys must end the run. Then value-only changes at the first and the
/// last item of leaves, and at both of one leaf.
#[test]
fn equal_values_and_changes_at_leaf_edges() {
    for shape in [Shape::IntPairs, Shape::FixedBytes, Shape::VarBytes] {
        match shape {
            Shape::IntPairs => equal_values_and_edges(shape, int_schema()),
            _ => equal_values_and_edges(shape, BytesSchema),
        }
    }
}

fn equal_values_and_edges<T: TreeSchema + Clone>(shape: Shape, schema: T) {
    let store = MemoryStore::default();
    let same = value(shape, 1, 1);
    let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..20_000)
        .map(|k| (key(shape, 2 * k), same.clone()))
        .collect();
    let build = |rows: &[(Vec<u8>, Vec<u8>)]| {
        Map::from_sorted(
            &store,
            schema.clone(),
            rows.iter().map(|(k, v)| (&k[..], &v[..])),
        )
        .unwrap()
        .root()
    };
    let from = build(&rows);
    // Inserts and deletes that leave every value equal.
    let mut shifted = rows.clone();
    for k in [19_990, 15_000, 9_001, 4_444, 700, 3, 0] {
        if k % 2 == 0 {
            shifted.remove(k);
        } else {
            shifted.insert(k + 1, (key(shape, 2 * k as u32 + 1), same.clone()));
        }
    }
    check_both_ways(
        &store,
        &schema,
        from,
        build(&shifted),
        &format!("{shape:?}, equal values"),
    );
    // Value-only changes at leaf edges: the first row of some leaves, the last of others,
    // both of one.
    let mut sizes = Vec::new();
    leaf_sizes(&store, from, &mut sizes);
    let mut edges = rows.clone();
    let mut start = 0;
    for (n, size) in sizes.iter().enumerate() {
        let end = start + size;
        if n % 5 == 1 || n == 2 {
            edges[start].1 = value(shape, start as u32, 7);
        }
        if n % 5 == 3 || n == 2 {
            edges[end - 1].1 = value(shape, end as u32, 9);
        }
        start = end;
    }
    check_both_ways(
        &store,
        &schema,
        from,
        build(&edges),
        &format!("{shape:?}, leaf edges"),
    );
}

/// A tree diffed with itself lists no changed leaf, whatever its height (a single-leaf tree
/// once listed its leaf: found by `fixed_bytes_diff_equals_plain_merge` with 16 rows, no edits).
#[test]
fn a_tree_and_itself_share_every_leaf() {
    for n in [0, 1, 16, 200, 5_000] {
        check(Shape::IntPairs, int_schema(), n, &[]);
        check(Shape::FixedBytes, BytesSchema, n, &[]);
        check(Shape::VarBytes, BytesSchema, n, &[]);
    }
}
