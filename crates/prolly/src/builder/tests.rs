use std::collections::BTreeMap;

use prollystore_format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore_format::{Encoding, HashProfile};
use proptest::prelude::*;

use super::SortingBuilder;
use crate::tree::schema::{BytesSchema, TreeSchema};
use crate::tuples::TupleSchema;
use crate::{Map, MemoryStore, TreeError};

/// Keys of one int64 (exact sort words), two int64s (inexact words) or a string (no words).
#[derive(Clone, Copy, Debug)]
enum Shape {
    Int,
    IntPair,
    Text,
}

fn schema(shape: Shape) -> TupleSchema {
    let key = match shape {
        Shape::Int => vec![Type::not_null(Encoding::Int64)],
        Shape::IntPair => vec![Type::not_null(Encoding::Int64); 2],
        Shape::Text => vec![Type::not_null(Encoding::String)],
    };
    TupleSchema::new(
        TupleDesc::new(key),
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    )
}

fn key(s: &TupleSchema, shape: Shape, k: i64) -> Vec<u8> {
    let mut b = TupleBuilder::new(s.key.clone());
    match shape {
        Shape::Int => b.put_int64(0, k).unwrap(),
        Shape::IntPair => {
            b.put_int64(0, k.div_euclid(3)).unwrap();
            b.put_int64(1, -k).unwrap();
        }
        Shape::Text => b.put_string(0, &format!("k{k}")).unwrap(),
    }
    b.build().unwrap().as_bytes().to_vec()
}

fn value(s: &TupleSchema, v: i64) -> Vec<u8> {
    let mut b = TupleBuilder::new(s.value.clone());
    b.put_int64(0, v).unwrap();
    b.build().unwrap().as_bytes().to_vec()
}

/// Builds `keys` (in the given order) with the sorting builder and compares with a build of
/// the same rows sorted by a model; returns the runs written.
fn check_against_model<T: TreeSchema + Clone + Sync>(
    schema: &T,
    rows: &[(Vec<u8>, Vec<u8>)],
    bound: usize,
) -> usize {
    let store = MemoryStore::new(HashProfile::Dolt);
    let mut b = SortingBuilder::new(schema.clone(), bound);
    for (k, v) in rows {
        b.add(k, v).unwrap();
    }
    let runs = b.runs();
    let got = b.finish(&store).unwrap();
    let mut sorted = rows.to_vec();
    sorted.sort_by(|a, b| schema.compare_keys(&a.0, &b.0));
    let want = Map::from_sorted(
        &store,
        schema.clone(),
        sorted.iter().map(|(k, v)| (&k[..], &v[..])),
    )
    .unwrap();
    assert_eq!(got.root(), want.root());
    runs
}

#[test]
fn spilled_builds_equal_sorted_builds_for_every_key_shape() {
    for shape in [Shape::Int, Shape::IntPair, Shape::Text] {
        let s = schema(shape);
        // A scrambled permutation of 0..n.
        let n = 20_000i64;
        let rows: Vec<_> = (0..n)
            .map(|i| (i * 7919) % n - n / 2)
            .map(|k| (key(&s, shape, k), value(&s, k)))
            .collect();
        let runs = check_against_model(&s, &rows, 64 << 10);
        assert!(runs > 3, "{shape:?}: {runs} runs");
        assert_eq!(check_against_model(&s, &rows, 64 << 20), 0, "{shape:?}");
    }
}

#[test]
fn large_buffers_are_sorted_and_written_on_two_threads() {
    // ~50k rows per 3 MiB buffer: past the size sorted and written as two runs at once
    // (when a second thread may be used).
    let s = schema(Shape::Int);
    let n = 110_000i64;
    let rows: Vec<_> = (0..n)
        .map(|i| (i * 7919) % n)
        .map(|k| (key(&s, Shape::Int, k), value(&s, k)))
        .collect();
    let runs = check_against_model(&s, &rows, 3 << 20);
    if crate::process::background_hashing() {
        // Each buffer written became two runs.
        assert!(runs >= 2 && runs % 2 == 0, "{runs} runs");
    } else {
        assert!(runs >= 1, "{runs} runs");
    }
}

#[test]
fn hundreds_of_runs_are_merged_in_steps() {
    // 4 KiB holds ~90 rows: ~220 runs, more than stay open, so runs are merged on the way.
    let s = schema(Shape::Int);
    let n = 20_000i64;
    let rows: Vec<_> = (0..n)
        .map(|i| (i * 7919) % n)
        .map(|k| (key(&s, Shape::Int, k), value(&s, k)))
        .collect();
    let runs = check_against_model(&s, &rows, 1);
    assert!((1..64).contains(&runs), "{runs} runs");
}

#[test]
fn duplicates_name_both_items_within_a_buffer_and_across_runs() {
    let s = schema(Shape::Int);
    let store = MemoryStore::new(HashProfile::Dolt);
    for bound in [64 << 10, 64 << 20] {
        let mut b = SortingBuilder::new(s.clone(), bound);
        let mut result = Ok(());
        for i in 0..10_000i64 {
            // Item 9000 repeats the key of item 17.
            let k = if i == 9000 { 17 } else { i };
            result = result.and_then(|_| b.add(&key(&s, Shape::Int, k), &value(&s, i)));
        }
        let err = result
            .and_then(|_| b.finish(&store).map(|_| ()))
            .unwrap_err();
        assert!(
            matches!(
                err,
                TreeError::DuplicateKey {
                    first: 17,
                    second: 9000
                }
            ),
            "bound {bound}: {err}"
        );
    }
}

#[test]
fn sorted_builder_checks_order_and_matches_from_sorted() {
    let s = schema(Shape::Text);
    let store = MemoryStore::new(HashProfile::Dolt);
    let mut rows: Vec<_> = (0..3000)
        .map(|k| (key(&s, Shape::Text, k), value(&s, k)))
        .collect();
    rows.sort_by(|a, b| s.compare_keys(&a.0, &b.0));
    let mut b = Map::builder(&store, &s);
    for (k, v) in &rows {
        b.add(k, v).unwrap();
    }
    assert_eq!(b.len(), 3000);
    let built = b.finish().unwrap();
    let want = Map::from_sorted(
        &store,
        s.clone(),
        rows.iter().map(|(k, v)| (&k[..], &v[..])),
    );
    assert_eq!(built.root(), want.unwrap().root());

    let mut b = Map::builder(&store, &s);
    b.add(&rows[0].0, &rows[0].1).unwrap();
    b.add(&rows[2].0, &rows[2].1).unwrap();
    let err = b.add(&rows[1].0, &rows[1].1).unwrap_err();
    assert!(matches!(err, TreeError::Unsorted { index: 2 }), "{err}");
}

#[test]
fn empty_and_oversized_rows() {
    let store = MemoryStore::new(HashProfile::Dolt);
    let b = SortingBuilder::new(BytesSchema, 1);
    assert_eq!(b.finish(&store).unwrap().count().unwrap(), 0);
    // Rows bigger than the (raised) bound are taken alone.
    let big: Vec<(Vec<u8>, Vec<u8>)> = (0..5u8)
        .rev()
        .map(|i| (vec![i; 3], vec![i; 10_000]))
        .collect();
    let runs = check_against_model(&BytesSchema, &big, 1);
    assert!(runs >= 4, "{runs}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn byte_keys_in_any_order_build_the_model_tree(
        keys in proptest::collection::btree_set(proptest::collection::vec(any::<u8>(), 0..12), 0..600),
        seed in any::<u64>(),
        bound in 1usize..40_000,
    ) {
        let model: BTreeMap<Vec<u8>, Vec<u8>> =
            keys.into_iter().map(|k| { let v = k.repeat(2); (k, v) }).collect();
        let mut rows: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
        // Shuffle deterministically from the seed.
        let mut x = seed | 1;
        for i in (1..rows.len()).rev() {
            x ^= x << 13; x ^= x >> 7; x ^= x << 17;
            rows.swap(i, (x % (i as u64 + 1)) as usize);
        }
        check_against_model(&BytesSchema, &rows, bound);
    }
}

#[test]
fn runs_read_back_rows_larger_than_a_read_block() {
    use super::run::{Run, RunReader, RunWriter};
    // Rows of 600 KiB and 2.5 MiB outgrow the 256 KiB block a run is read with (and a memory
    // run's block); small rows around them straddle block ends.
    let sizes = [10usize, 600 << 10, 3, 0, 2_500 << 10, 7];
    let rows: Vec<(Vec<u8>, Vec<u8>, u64)> = (0..3000)
        .map(|i| {
            let n = sizes[i % sizes.len()] / (1 + i / sizes.len()).min(2);
            (
                vec![i as u8; 1 + i % 3],
                vec![(i * 7) as u8; n],
                (i as u64) << 20,
            )
        })
        .collect();
    for memory in [false, true] {
        let mut w = if memory {
            RunWriter::memory()
        } else {
            RunWriter::new(None).unwrap()
        };
        for (k, v, row) in &rows {
            w.push(k, v, *row).unwrap();
        }
        let run = w.finish().unwrap();
        assert_eq!(matches!(run, Run::Memory(_)), memory);
        let held = run.memory();
        let mut r = RunReader::new(run);
        for (k, v, row) in &rows {
            assert!(r.advance().unwrap());
            let (key, value) = r.row_bytes().split_at(r.key().len());
            assert_eq!((key, value, r.row), (&k[..], &v[..], *row));
        }
        assert!(!r.advance().unwrap());
        assert_eq!(held > 0, memory);
    }
}

/// `n` int rows with scrambled distinct keys, the key of row `a` repeated at row `b` if given.
fn scrambled_int_rows(
    s: &TupleSchema,
    n: i64,
    repeat: Option<(i64, i64)>,
) -> Vec<(Vec<u8>, Vec<u8>)> {
    // Multiplying by an odd constant permutes the 64-bit integers.
    let scramble = |i: i64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as i64);
    (0..n)
        .map(|i| {
            let k = match repeat {
                Some((a, b)) if i == b => scramble(a),
                _ => scramble(i),
            };
            (key(s, Shape::Int, k), value(s, i))
        })
        .collect()
}

/// Rows of [`scrambled_int_rows`] one full buffer of a sorting builder with `bound` holds.
fn rows_per_buffer(s: &TupleSchema, bound: usize) -> i64 {
    let mut b = SortingBuilder::new(s.clone(), bound);
    let mut i = 0;
    while b.runs() == 0 {
        b.add(&key(s, Shape::Int, i), &value(s, i)).unwrap();
        i += 1;
    }
    // The row just added started the second buffer.
    i - 1
}

#[test]
fn last_buffer_is_merged_from_memory_with_the_runs_on_disk() {
    let s = schema(Shape::Int);
    let bound = 16 << 20;
    let per = rows_per_buffer(&s, bound);
    // Two full buffers on disk, then a last one kept in memory: large enough to be written
    // by two threads (when a second thread may be used), or small.
    for last in [60_000, 6_000] {
        let rows = scrambled_int_rows(&s, 2 * per + last, None);
        super::LAST_IN_MEMORY.with(|m| m.set(None));
        let runs = check_against_model(&s, &rows, bound);
        assert!(runs >= 2, "{runs} runs");
        assert_eq!(
            super::LAST_IN_MEMORY.with(|m| m.get()),
            Some(true),
            "{last}"
        );
    }
    // A bound too small to copy the last buffer beside itself (and the memory run's blocks)
    // sends it to disk.
    let rows = scrambled_int_rows(&s, 20_000, None);
    check_against_model(&s, &rows, 256 << 10);
    assert_eq!(super::LAST_IN_MEMORY.with(|m| m.get()), Some(false));
}

#[test]
fn duplicates_in_the_last_buffer_kept_in_memory_name_both_items() {
    let s = schema(Shape::Int);
    let store = MemoryStore::new(HashProfile::Dolt);
    let bound = 16 << 20;
    let per = rows_per_buffer(&s, bound);
    let n = 2 * per + 60_000;
    // Across the first run on disk and the last buffer, across the second and the last, and
    // within the last buffer (found while it is written to memory).
    for (a, b) in [(17, n - 10), (per + 5, 2 * per + 1), (2 * per + 100, n - 1)] {
        let rows = scrambled_int_rows(&s, n, Some((a, b)));
        let mut sb = SortingBuilder::new(s.clone(), bound);
        for (k, v) in &rows {
            sb.add(k, v).unwrap();
        }
        super::LAST_IN_MEMORY.with(|m| m.set(None));
        let err = sb.finish(&store).map(|_| ()).unwrap_err();
        assert_eq!(super::LAST_IN_MEMORY.with(|m| m.get()), Some(true));
        assert!(
            matches!(err, TreeError::DuplicateKey { first, second }
                if first == a as u64 && second == b as u64),
            "({a}, {b}): {err}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn loser_tree_merges_like_a_sort(
        lists in proptest::collection::vec(proptest::collection::vec(0u32..1000, 0..40), 1..12),
    ) {
        let mut lists: Vec<Vec<u32>> = lists;
        for l in &mut lists {
            l.sort_unstable();
        }
        let mut at = vec![0usize; lists.len()];
        // Source `a` before `b`: smaller head, then smaller source; exhausted last.
        let before = |at: &[usize], a: usize, b: usize| match (lists[a].get(at[a]), lists[b].get(at[b])) {
            (Some(x), Some(y)) => (x, a) < (y, b),
            (x, _) => x.is_some(),
        };
        let mut tree = super::LoserTree::new(lists.len(), |a, b| before(&at, a, b));
        let mut got = Vec::new();
        loop {
            let w = tree.winner();
            let Some(&x) = lists[w].get(at[w]) else { break };
            got.push(x);
            at[w] += 1;
            tree.replay(w, |a, b| before(&at, a, b));
        }
        let mut want: Vec<u32> = lists.concat();
        want.sort_unstable();
        prop_assert_eq!(got, want);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Int keys (exact sort words, compared as words in the sort, the duplicate check and
    /// the merge), with repeats: the model tree, or two items with the same key named (a
    /// repeat inside one buffer is found when that buffer is written, before the merge).
    #[test]
    fn int_keys_in_any_order_build_the_model_tree_or_name_a_repeat(
        mut keys in proptest::collection::vec(-300i64..300, 0..700),
        unique in any::<bool>(),
        bound in 1usize..40_000,
    ) {
        if unique {
            let mut seen = std::collections::HashSet::new();
            keys.retain(|k| seen.insert(*k));
        }
        let s = schema(Shape::Int);
        let store = MemoryStore::new(HashProfile::Dolt);
        let mut b = SortingBuilder::new(s.clone(), bound);
        let mut added = Ok(());
        for (i, &k) in keys.iter().enumerate() {
            // A repeat can already be found when a full buffer is written.
            added = added.and_then(|_| b.add(&key(&s, Shape::Int, k), &value(&s, i as i64)));
        }
        let got = added.and_then(|_| b.finish(&store));
        let mut model: BTreeMap<i64, u64> = BTreeMap::new();
        let mut repeated = false;
        for (i, &k) in keys.iter().enumerate() {
            repeated |= model.insert(k, i as u64).is_some();
        }
        if repeated {
            let err = got.map(|_| ()).unwrap_err();
            let TreeError::DuplicateKey { first, second } = err else {
                return Err(TestCaseError::fail(format!("{err}")));
            };
            prop_assert!(first < second, "{first} {second}");
            prop_assert_eq!(keys[first as usize], keys[second as usize]);
        } else {
            let rows: Vec<_> = model
                .iter()
                .map(|(&k, &i)| (key(&s, Shape::Int, k), value(&s, i as i64)))
                .collect();
            let want =
                Map::from_sorted(&store, s.clone(), rows.iter().map(|(k, v)| (&k[..], &v[..])))
                    .unwrap();
            prop_assert_eq!(got.unwrap().root(), want.root());
        }
    }
}
