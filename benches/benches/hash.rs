//! Chunk hashing: 64 node-sized chunks (3-5 KiB, as a build or an edit hands them to the hash
//! profile) hashed one by one (`HashProfile::address_of`, the `blake3` / `sha2` crates) against
//! all together (`HashProfile::addresses_of`: eight BLAKE3 lanes or four SHA-512 lanes with
//! AVX2), in the same run.
//!
//! ```text
//! cargo bench -p prollystore-benches --bench hash
//! ```
//!
//! After criterion's figures, an interleaved measurement prints the batch's time as a ratio of
//! the one-by-one time for each profile.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prollystore::format::{Address, HashProfile};

/// Chunks per batch (what a build's leaf batches and `NodeBatch::hash` groups hold).
const CHUNKS: usize = 64;

/// 64 chunks of 3-5 KiB, about 4 KiB on average like tree nodes, deterministic bytes.
fn chunks() -> Vec<Vec<u8>> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..CHUNKS)
        .map(|i| {
            let len = 3072 + (i * 937) % 2048;
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect()
}

fn one_by_one(profile: HashProfile, chunks: &[&[u8]], out: &mut [Address]) {
    for (c, a) in chunks.iter().zip(out.iter_mut()) {
        *a = profile.address_of(black_box(c));
    }
}

fn batched(profile: HashProfile, chunks: &[&[u8]], out: &mut [Address]) {
    profile.addresses_of(black_box(chunks), out);
}

fn bench_hash(c: &mut Criterion) {
    let owned = chunks();
    let chunks: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
    let bytes: usize = chunks.iter().map(|c| c.len()).sum();
    let mut out = vec![Address::ZERO; CHUNKS];
    let mut g = c.benchmark_group("hash");
    g.sample_size(30)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .throughput(Throughput::Bytes(bytes as u64));
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        let name = profile.name();
        g.bench_function(format!("{name}/one_by_one/64x4k"), |b| {
            b.iter(|| one_by_one(profile, &chunks, &mut out))
        });
        g.bench_function(format!("{name}/batch/64x4k"), |b| {
            b.iter(|| batched(profile, &chunks, &mut out))
        });
    }
    g.finish();
    interleaved(&chunks);
}

/// The fastest of `reps` runs of `f`, in nanoseconds.
fn best_ns(reps: usize, mut f: impl FnMut()) -> f64 {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_nanos() as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// Both ways in alternating rounds, so both see the same machine; prints batch / one-by-one.
fn interleaved(chunks: &[&[u8]]) {
    let mut out = vec![Address::ZERO; chunks.len()];
    let bytes: usize = chunks.iter().map(|c| c.len()).sum();
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        let mut batch = Vec::with_capacity(3);
        let mut single = Vec::with_capacity(3);
        for _ in 0..200 {
            single.push(best_ns(5, || one_by_one(profile, chunks, &mut out)));
            batch.push(best_ns(5, || batched(profile, chunks, &mut out)));
        }
        let best = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
        let (s, b) = (best(&single), best(&batch));
        let mut check = vec![Address::ZERO; chunks.len()];
        one_by_one(profile, chunks, &mut check);
        batched(profile, chunks, &mut out);
        assert_eq!(out, check, "{} batch addresses differ", profile.name());
        println!(
            "hash/{}: 64 chunks of ~4 KiB one by one {:.1} µs ({:.2} GB/s), batch {:.1} µs \
             ({:.2} GB/s): batch / one-by-one = {:.3}",
            profile.name(),
            s / 1e3,
            bytes as f64 / s,
            b / 1e3,
            bytes as f64 / b,
            b / s
        );
    }
}

criterion_group!(benches, bench_hash);
criterion_main!(benches);
