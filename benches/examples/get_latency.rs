//! Point-get latency against `std::collections::BTreeMap`, robust to a shared, busy machine:
//! gets run in batches of 256, the two structures alternate batch by batch, and each reports
//! its fastest batches (a batch that lost the processor to another job is slow, never fast).
//!
//! ```text
//! cargo run --release -p prollystore-benches --example get_latency [rows] [batches] [huge]
//! ```
//!
//! Rows are `(2i, i % 7) -> (31i, -i)` of int64 pairs in a blake3 memory store, as in
//! `benches/tree.rs`. Two probe sets: `random` (any row: the leaf is usually not cached) and
//! `4k` (4096 rows over and over, as the criterion benchmark does).
//!
//! The BTreeMap makes each probe key from the row number, while `get` reads it from the row
//! in the 40 MB row array (as `benches/tree.rs` does), a cache miss the BTreeMap never pays. The `flat keys` column is `get` with the probe keys copied, in probe order, into
//! one contiguous buffer: the fairer comparison. (It runs another batch than the one just
//! timed, whose paths would still be in cache.)

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use prollystore::format::HashProfile;
use prollystore::{Map, MemoryStore};

use prollystore_benches::int_pairs::{flat_keys, rows, schema};

const BATCH: usize = 256;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let batches: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(4000);
    let data = rows(n);
    // A third argument `huge` puts the chunks on transparent huge pages.
    let store = if std::env::args().nth(3).as_deref() == Some("huge") {
        MemoryStore::with_huge_pages(HashProfile::Blake3)
    } else {
        MemoryStore::new(HashProfile::Blake3)
    };
    let map = Map::from_sorted(&store, schema(), data.iter().map(|(k, v)| (&k[..], &v[..])))
        .expect("build");
    let model: BTreeMap<(i64, i64), (i64, i64)> = (0..n as i64)
        .map(|i| ((2 * i, i % 7), (i * 31, -i)))
        .collect();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    let random: Vec<usize> = (0..BATCH * batches).map(|_| next()).collect();
    let pool: Vec<usize> = (0..4096).map(|_| next()).collect();
    let four_k: Vec<usize> = (0..BATCH * batches).map(|i| pool[i % 4096]).collect();
    // Warm up: every node read (verified, child lists made) once.
    for &p in &random {
        black_box(map.get(&data[p].0).expect("get"));
    }
    for (label, probes) in [("random", &random), ("4k", &four_k)] {
        let flat = flat_keys(&data, probes);
        let (mut ours, mut theirs, mut flats) = (Vec::new(), Vec::new(), Vec::new());
        let batches = probes.len() / BATCH;
        for (b, batch) in probes.chunks_exact(BATCH).enumerate() {
            let t = Instant::now();
            for &p in batch {
                black_box(map.get(&data[p].0).expect("get"));
            }
            ours.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
            // Another batch's probes: this one's paths are now in cache.
            let other = (b + batches / 2) % batches;
            let t = Instant::now();
            let mut found = 0;
            for key in &flat[other * BATCH..][..BATCH] {
                found += usize::from(black_box(map.get(key).expect("get")).is_some());
            }
            flats.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
            assert_eq!(found, BATCH);
            let t = Instant::now();
            for &p in batch {
                let i = p as i64;
                black_box(model.get(&(2 * i, i % 7)));
            }
            theirs.push(t.elapsed().as_nanos() as f64 / BATCH as f64);
        }
        ours.sort_by(f64::total_cmp);
        theirs.sort_by(f64::total_cmp);
        flats.sort_by(f64::total_cmp);
        // The 10th percentile: fast batches, but not the luckiest one.
        let q = |v: &[f64]| v[v.len() / 10];
        println!(
            "{n} rows, {label}: get {:.0} ns, BTreeMap {:.0} ns, ratio {:.2}; \
             flat keys: get {:.0} ns, ratio {:.2}",
            q(&ours),
            q(&theirs),
            q(&ours) / q(&theirs),
            q(&flats),
            q(&flats) / q(&theirs)
        );
    }
}
