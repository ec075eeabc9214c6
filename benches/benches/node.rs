//! Node benchmarks: scanning, ordinal access, absent-key lookup and verification of ~4 KiB
//! (int64, int64) -> (int64, int64) leaves written with `NodeWriter`, next to a `Vec<(i64, i64)>`
//! baseline measured in the same run so results can be read as ratios.
//!
//! ```text
//! cargo bench -p prollystore-benches --bench node
//! ```

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use prollystore_format::message::{LeafInput, Node, NodeWriter};
use prollystore_format::tuple::{Tuple, TupleDesc, Type};
use prollystore_format::{Encoding, HashProfile};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

/// Rows per leaf: 40 bytes of tuples per row, ~4 KiB of items like Dolt's target node size.
const ROWS: usize = 100;

/// A two-int64 tuple: 16 bytes of fields, one u16 offset (8), u16 count (2).
fn tuple2(out: &mut Vec<u8>, a: i64, b: i64) {
    out.extend_from_slice(&a.to_le_bytes());
    out.extend_from_slice(&b.to_le_bytes());
    out.extend_from_slice(&8u16.to_le_bytes());
    out.extend_from_slice(&2u16.to_le_bytes());
}

/// A leaf with keys (2i, i) and values (3i, -i) for i in 0..ROWS.
fn leaf_chunk() -> Vec<u8> {
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    let (mut ko, mut vo) = (vec![0u16], vec![0u16]);
    for i in 0..ROWS as i64 {
        tuple2(&mut keys, 2 * i, i);
        tuple2(&mut values, 3 * i, -i);
        ko.push(keys.len() as u16);
        vo.push(values.len() as u16);
    }
    let mut w = NodeWriter::new();
    w.write_leaf(&LeafInput {
        key_items: &keys,
        key_offsets: &ko,
        value_items: &values,
        value_offsets: &vo,
        value_address_offsets: &[],
    })
    .expect("valid leaf")
    .to_vec()
}

/// The descriptor of both keys and values: (int64 NOT NULL, int64 NOT NULL).
fn int64_pair_desc() -> TupleDesc {
    TupleDesc::new(vec![
        Type::not_null(Encoding::Int64),
        Type::not_null(Encoding::Int64),
    ])
}

/// Field 0 of a tuple read as a tree scan would: through the descriptor's typed getter on the
/// node's (verified) item bytes. 0 if NULL or malformed.
#[inline(always)]
fn first_i64(desc: &TupleDesc, tuple: &[u8]) -> i64 {
    desc.get_int64(Tuple::new_unverified(tuple), 0)
        .ok()
        .flatten()
        .unwrap_or(0)
}

fn benches(c: &mut Criterion) {
    let chunk = leaf_chunk();
    let node = Node::verify(&chunk).expect("verifies");
    let desc = int64_pair_desc();
    let d = &desc;
    // Absent keys (2i+1, 0): each falls between two stored keys.
    let absent: Vec<Vec<u8>> = (0..ROWS as i64)
        .map(|i| {
            let mut t = Vec::new();
            tuple2(&mut t, 2 * i + 1, 0);
            t
        })
        .collect();
    assert_eq!(node.count(), ROWS);
    eprintln!("leaf: {} rows, {} bytes", ROWS, chunk.len());
    let baseline: Vec<(i64, i64)> = (0..ROWS as i64).map(|i| (2 * i, 3 * i)).collect();

    let mut g = c.benchmark_group("scan");
    g.throughput(Throughput::Elements(ROWS as u64));
    g.bench_function("node_first_key_and_value_field", |b| {
        b.iter(|| {
            let n = black_box(node);
            let mut acc = 0i64;
            for i in 0..n.count() {
                acc = acc.wrapping_add(first_i64(d, n.key(i)) ^ first_i64(d, n.value(i)));
            }
            acc
        })
    });
    g.bench_function("node_entries_first_key_and_value_field", |b| {
        b.iter(|| {
            let n = black_box(node);
            let mut acc = 0i64;
            for (k, v) in n.entries() {
                acc = acc.wrapping_add(first_i64(d, k) ^ first_i64(d, v));
            }
            acc
        })
    });
    // The scan a tree cursor would run: fields resolved once, then read from every row.
    let k0 = desc
        .fixed_field::<8>(0, Encoding::Int64)
        .expect("int64 field");
    let v0 = k0;
    g.bench_function("node_entries_fixed_field", |b| {
        b.iter(|| {
            let n = black_box(node);
            let mut acc = 0i64;
            for (k, v) in n.entries() {
                let k = k0.read(Tuple::new_unverified(k)).ok().flatten();
                let v = v0.read(Tuple::new_unverified(v)).ok().flatten();
                acc = acc.wrapping_add(
                    k.map_or(0, i64::from_le_bytes) ^ v.map_or(0, i64::from_le_bytes),
                );
            }
            acc
        })
    });
    g.bench_function("baseline_vec_i64_pairs", |b| {
        b.iter(|| {
            let v = black_box(&baseline);
            let mut acc = 0i64;
            for &(k, val) in v.iter() {
                acc = acc.wrapping_add(k ^ val);
            }
            acc
        })
    });
    g.finish();

    let mut g = c.benchmark_group("ordinal");
    let mut rng = SmallRng::seed_from_u64(7);
    g.bench_function("node_random_item", |b| {
        b.iter_batched(
            || rng.gen_range(0..ROWS),
            |i| {
                let n = black_box(node);
                first_i64(d, n.key(i)) ^ first_i64(d, n.value(i))
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("baseline_vec_random_item", |b| {
        b.iter_batched(
            || rng.gen_range(0..ROWS),
            |i| {
                let v = black_box(&baseline);
                v[i].0 ^ v[i].1
            },
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("lookup_absent");
    g.bench_function("node_binary_search_desc_compare", |b| {
        b.iter_batched(
            || absent[rng.gen_range(0..ROWS)].as_slice(),
            |target| {
                let n = black_box(node);
                n.search_by(|k| d.compare(k, target))
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("node_binary_search_get_int64", |b| {
        b.iter_batched(
            || 2 * rng.gen_range(0..ROWS as i64) + 1,
            |target| {
                let n = black_box(node);
                n.search_by(|k| first_i64(d, k).cmp(&target))
            },
            BatchSize::SmallInput,
        )
    });
    g.bench_function("baseline_vec_binary_search", |b| {
        b.iter_batched(
            || 2 * rng.gen_range(0..ROWS as i64) + 1,
            |target| black_box(&baseline).binary_search_by(|p| p.0.cmp(&target)),
            BatchSize::SmallInput,
        )
    });
    g.finish();

    let mut g = c.benchmark_group("verify");
    g.throughput(Throughput::Bytes(chunk.len() as u64));
    g.bench_function("node_verify_no_hash", |b| {
        b.iter(|| Node::verify(black_box(&chunk)).map(|n| n.count()))
    });
    g.bench_function("node_verify_blake3", |b| {
        b.iter(|| {
            let c = black_box(&chunk[..]);
            (
                HashProfile::Blake3.address_of(c),
                Node::verify(c).map(|n| n.count()),
            )
        })
    });
    g.bench_function("node_verify_sha512", |b| {
        b.iter(|| {
            let c = black_box(&chunk[..]);
            (
                HashProfile::Dolt.address_of(c),
                Node::verify(c).map(|n| n.count()),
            )
        })
    });
    g.bench_function("baseline_memcpy", |b| {
        let mut dst = vec![0u8; chunk.len()];
        b.iter(|| {
            dst.copy_from_slice(black_box(&chunk));
            dst[0]
        })
    });
    g.finish();

    let mut g = c.benchmark_group("write");
    g.throughput(Throughput::Bytes(chunk.len() as u64));
    let n = node;
    let offs = |b: &[u8]| -> Vec<u16> {
        b.chunks_exact(2)
            .map(|p| u16::from_le_bytes([p[0], p[1]]))
            .collect()
    };
    let (ko, vo) = (offs(n.key_offsets_bytes()), offs(n.value_offsets_bytes()));
    let mut w = NodeWriter::new();
    g.bench_function("node_write_leaf", |b| {
        b.iter(|| {
            w.write_leaf(black_box(&LeafInput {
                key_items: n.key_items(),
                key_offsets: &ko,
                value_items: n.value_items(),
                value_offsets: &vo,
                value_address_offsets: &[],
            }))
            .map(|c| c.len())
        })
    });
    g.finish();
}

criterion_group!(node_benches, benches);
criterion_main!(node_benches);
