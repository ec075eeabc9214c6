//! Prolly-tree benchmarks over 1M rows of `(int64, int64) -> (int64, int64)` in a memory store,
//! with a `std::collections::BTreeMap` doing the same work in the same run as the baseline.
//!
//! ```text
//! cargo bench -p prollystore-benches --bench tree
//! ```

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::{Encoding, HashProfile};
use prollystore::process::set_background_hashing;
use prollystore::tuples::TupleSchema;
use prollystore::{Map, MemoryStore};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use prollystore_benches::int_pairs::{
    as_edits, batches_per_scratch, flat_keys, rows, schema, tuple, N,
};

fn model(n: usize) -> BTreeMap<(i64, i64), (i64, i64)> {
    (0..n as i64)
        .map(|i| ((2 * i, i % 7), (i * 31, -i)))
        .collect()
}

fn build<'s>(
    store: &'s MemoryStore,
    rows: &[([u8; 20], [u8; 20])],
) -> Map<'s, MemoryStore, TupleSchema> {
    Map::from_sorted(store, schema(), rows.iter().map(|(k, v)| (&k[..], &v[..]))).expect("build")
}

/// `count` edits (updates, inserts, deletes) at random keys, sorted and de-duplicated.
fn random_edits(rng: &mut SmallRng, n: usize, count: usize) -> Vec<([u8; 20], Option<[u8; 20]>)> {
    let mut e: BTreeMap<i64, Option<[u8; 20]>> = BTreeMap::new();
    while e.len() < count {
        let i = rng.gen_range(0..n as i64);
        let kind = rng.gen_range(0..3);
        let v = tuple(rng.gen(), rng.gen());
        match kind {
            0 => e.insert(2 * i, Some(v)),     // update
            1 => e.insert(2 * i + 1, Some(v)), // insert
            _ => e.insert(2 * i, None),        // delete
        };
    }
    e.into_iter()
        .map(|(k, v)| {
            let i = k / 2;
            let key = if k % 2 == 0 {
                tuple(k, i % 7)
            } else {
                tuple(k, 0)
            };
            (key, v)
        })
        .collect()
}

fn config(c: &mut Criterion) -> criterion::BenchmarkGroup<'_, criterion::measurement::WallTime> {
    let mut g = c.benchmark_group("tree");
    g.sample_size(10)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    g
}

fn bench_reads(c: &mut Criterion) {
    let data = rows(N);
    let store = MemoryStore::new(HashProfile::Blake3);
    let map = build(&store, &data);
    let btree = model(N);
    let mut rng = SmallRng::seed_from_u64(1);
    let probes: Vec<usize> = (0..4096).map(|_| rng.gen_range(0..N)).collect();
    let mut g = config(c);
    for (label, size) in [("get/10k", 10_000usize), ("get/100k", 100_000)] {
        let s = MemoryStore::new(HashProfile::Blake3);
        let m = build(&s, &data[..size]);
        let p: Vec<usize> = probes.iter().map(|i| i % size).collect();
        let mut j = 0usize;
        g.bench_function(label, |b| {
            b.iter(|| {
                j = (j + 1) & 4095;
                black_box(m.get(&data[p[j]].0).expect("get"))
            })
        });
    }
    {
        // Keys of one int32 field: not 8-byte fields, so the search takes the path that touches
        // the node's key lines first (`touch_keys`) rather than the wide-key search.
        let d = TupleDesc::new(vec![Type::not_null(Encoding::Int32)]);
        let s = MemoryStore::new(HashProfile::Blake3);
        let mut kb = TupleBuilder::new(d.clone());
        let keys: Vec<Vec<u8>> = (0..100_000i32)
            .map(|i| {
                kb.put_int32(0, 2 * i).expect("put");
                kb.build().expect("key").as_bytes().to_vec()
            })
            .collect();
        let m = Map::from_sorted(
            &s,
            TupleSchema::new(d.clone(), d),
            keys.iter().map(|k| (&k[..], &k[..])),
        )
        .expect("build");
        let mut j = 0usize;
        g.bench_function("get_i32/100k", |b| {
            b.iter(|| {
                j = (j + 1) & 4095;
                black_box(m.get(&keys[probes[j] % keys.len()]).expect("get"))
            })
        });
    }
    let mut j = 0usize;
    g.bench_function("get/1M", |b| {
        b.iter(|| {
            j = (j + 1) & 4095;
            black_box(map.get(&data[probes[j]].0).expect("get"))
        })
    });
    // The same probes with their keys side by side: `get/1M` also pays a cache miss for
    // reading each key from its row in the 40 MB `data`, which the BTreeMap, making its keys
    // from the row number, never does.
    let flat = flat_keys(&data, &probes);
    let mut j = 0usize;
    g.bench_function("get_flatkeys/1M", |b| {
        b.iter(|| {
            j = (j + 1) & 4095;
            black_box(map.get(&flat[j]).expect("get"))
        })
    });
    let mut j = 0usize;
    g.bench_function("btreemap/get/1M", |b| {
        b.iter(|| {
            j = (j + 1) & 4095;
            let i = probes[j] as i64;
            black_box(btree.get(&(2 * i, i % 7)))
        })
    });
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("scan/1M", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for r in map.iter().expect("iter") {
                let (k, v) = r.expect("row");
                n += k.len() + v.len();
            }
            black_box(n)
        })
    });
    // Internal iteration (`fold`, `for_each`, `count`, ...): the leaf walk stays in registers.
    g.bench_function("scan_fold/1M", |b| {
        b.iter(|| {
            black_box(map.iter().expect("iter").fold(0usize, |n, r| {
                let (k, v) = r.expect("row");
                n + k.len() + v.len()
            }))
        })
    });
    g.bench_function("btreemap/scan/1M", |b| {
        b.iter(|| {
            black_box(
                btree
                    .iter()
                    .map(|(k, v)| (k.0 ^ v.0) as usize)
                    .fold(0usize, usize::wrapping_add),
            )
        })
    });
    g.finish();
}

fn bench_build(c: &mut Criterion) {
    let data = rows(N);
    let mut g = config(c);
    g.throughput(Throughput::Elements(N as u64));
    // Background hashing is on by default on a machine with two cores or more; the
    // `one-thread` runs are the same build with it off, the baseline for its speedup.
    for (label, profile, background) in [
        ("build/1M/blake3", HashProfile::Blake3, true),
        ("build/1M/blake3/one-thread", HashProfile::Blake3, false),
        ("build/1M/dolt", HashProfile::Dolt, true),
        ("build/1M/dolt/one-thread", HashProfile::Dolt, false),
    ] {
        g.bench_function(label, |b| {
            set_background_hashing(background);
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let store = MemoryStore::new(profile);
                    let t = Instant::now();
                    black_box(build(&store, &data).root());
                    total += t.elapsed();
                }
                total
            })
        });
        set_background_hashing(true);
    }
    g.bench_function("btreemap/build/1M", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let t = Instant::now();
                let m: BTreeMap<(i64, i64), (i64, i64)> = (0..N as i64)
                    .map(|i| ((2 * i, i % 7), (i * 31, -i)))
                    .collect();
                total += t.elapsed();
                drop(black_box(m));
            }
            total
        })
    });
    g.finish();
}

/// Total time of `iters` batches of `count` random edits, each applied to the base map at
/// `root` in a scratch store and timed on its own. Every batch adds its rewritten nodes to the
/// store it runs in (~4.7 MB for 1,000 edits), so the scratch store is replaced by a fresh copy
/// of the base map (untimed) after about
/// [`SCRATCH_GROWTH`](prollystore_benches::int_pairs::SCRATCH_GROWTH) bytes of them
/// ([`batches_per_scratch`]): the figures then measure the edits, not a store that criterion's
/// iteration count grows to gigabytes.
fn edit_batches(
    base: &MemoryStore,
    root: prollystore::format::Address,
    rng: &mut SmallRng,
    count: usize,
    iters: u64,
) -> Duration {
    let s = schema();
    let per_scratch = batches_per_scratch(count) as u64;
    let mut total = Duration::ZERO;
    let mut done = 0u64;
    while done < iters {
        let scratch = MemoryStore::new(HashProfile::Blake3);
        prollystore::tree::copy::copy_tree(base, &scratch, &root).expect("copy");
        // Read every row once, so that every node is verified and its layout kept, as in a
        // store whose map has been read before (the first read of a copied node checks it).
        let rows = Map::new(&scratch, root, s.clone())
            .iter()
            .expect("iter")
            .count();
        assert_eq!(rows, N);
        for _ in 0..per_scratch.min(iters - done) {
            let e = random_edits(rng, N, count);
            let t = Instant::now();
            let edited = Map::new(&scratch, root, &s).apply_sorted(&as_edits(&e));
            black_box(edited.expect("edit").root());
            total += t.elapsed();
            done += 1;
        }
    }
    total
}

fn bench_edits(c: &mut Criterion) {
    let data = rows(N);
    let store = MemoryStore::new(HashProfile::Blake3);
    let map = build(&store, &data);
    let mut rng = SmallRng::seed_from_u64(2);
    let mut g = config(c);
    for count in [1usize, 1000] {
        let label = format!("edit+flush/{count}");
        g.bench_function(&label, |b| {
            b.iter_custom(|iters| edit_batches(&store, map.root(), &mut rng, count, iters))
        });
        if count >= 1000 {
            // The same without background hashing (it only engages for edits that rewrite
            // dozens of leaves).
            set_background_hashing(false);
            g.bench_function(format!("{label}/one-thread"), |b| {
                b.iter_custom(|iters| edit_batches(&store, map.root(), &mut rng, count, iters))
            });
            set_background_hashing(true);
        }
        let mut btree = model(N);
        g.bench_function(format!("btreemap/{label}"), |b| {
            b.iter_batched(
                || {
                    (0..count)
                        .map(|_| (rng.gen_range(0..2 * N as i64), rng.gen::<i64>()))
                        .collect::<Vec<_>>()
                },
                |e| {
                    for (k, v) in e {
                        btree.insert((k, 0), (v, v));
                    }
                },
                BatchSize::SmallInput,
            )
        });
    }
    g.finish();
}

fn bench_diff(c: &mut Criterion) {
    // A store of its own: the edit benchmarks leave hundreds of thousands of chunks in theirs,
    // and a diff over that bloated store would measure its hash table's cache misses.
    let data = rows(N);
    let store = MemoryStore::new(HashProfile::Blake3);
    let map = build(&store, &data);
    let mut rng = SmallRng::seed_from_u64(3);
    let mut g = config(c);
    for count in [1usize, 1000] {
        let e = random_edits(&mut rng, N, count);
        let to = map.apply_sorted(&as_edits(&e)).expect("edit").root();
        let other = map.with_root(to);
        g.bench_function(format!("diff/{count}"), |b| {
            b.iter(|| black_box(map.diff(&other).expect("diff").count()))
        });
        let a = model(N);
        let mut bm = a.clone();
        for (k, _) in e.iter().take(count) {
            let x = i64::from_le_bytes(k[..8].try_into().unwrap_or([0; 8]));
            bm.insert((x, 0), (1, 1));
        }
        g.bench_function(format!("btreemap/diff/{count}"), |b| {
            b.iter(|| {
                // Naive merge-walk: what a map without shared structure has to do.
                let (mut x, mut y) = (a.iter().peekable(), bm.iter().peekable());
                let mut d = 0usize;
                loop {
                    match (x.peek(), y.peek()) {
                        (None, None) => break,
                        (Some(_), None) => {
                            d += 1;
                            x.next();
                        }
                        (None, Some(_)) => {
                            d += 1;
                            y.next();
                        }
                        (Some(p), Some(q)) => match p.0.cmp(q.0) {
                            std::cmp::Ordering::Less => {
                                d += 1;
                                x.next();
                            }
                            std::cmp::Ordering::Greater => {
                                d += 1;
                                y.next();
                            }
                            std::cmp::Ordering::Equal => {
                                if p.1 != q.1 {
                                    d += 1;
                                }
                                x.next();
                                y.next();
                            }
                        },
                    }
                }
                black_box(d)
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench_reads, bench_build, bench_edits, bench_diff);
criterion_main!(benches);
