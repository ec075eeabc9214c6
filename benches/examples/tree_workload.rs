//! One tree workload at a time, for instruction-level profiling where wall-clock benchmarks are
//! too noisy (this is a shared 2-core machine):
//!
//! ```text
//! cargo build --release -p prollystore-benches --example tree_workload
//! valgrind --tool=callgrind --toggle-collect='tree_workload::run*' \
//!     target/release/examples/tree_workload edit1 200
//! ```
//!
//! Workloads (1M rows of `(int64, int64) -> (int64, int64)` in a memory store, as in
//! `benches/tree.rs`): `get`, `get4k`, `scan`, `scan_fold`, `build`, `build1t` (with background
//! hashing against without, alternated), `edit1`, `edit1000`, `edit1000t` (like `build1t`),
//! `edit1s`, `edit1000s` (as criterion runs them: scratch copies of the store whose memory is
//! recycled), `diff1`, `diff1000`. The second argument is
//! the repetition count, the optional third the store's hash profile (`blake3`, the default, or
//! `dolt`). Setup (building the map, making the edits) happens outside the `run_*` functions so
//! that `--toggle-collect` counts only the measured work. The edit workloads mix updates,
//! inserts and deletes evenly; `EDIT_KIND=update` (or `insert`, `delete`) makes only that kind.
//! `HUGE_PAGES=1` puts every store the workload makes on transparent huge pages.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Instant;

use prollystore::format::{Address, HashProfile};
use prollystore::map::Edit;
use prollystore::process::set_background_hashing;
use prollystore::tree::copy::copy_tree;
use prollystore::tuples::TupleSchema;
use prollystore::{Map, MemoryStore};

use prollystore_benches::int_pairs::{as_edits, batches_per_scratch, rows, schema, tuple, Row, N};

/// A tiny deterministic generator (xorshift), so runs are repeatable.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The kind of edit `EDIT_KIND` asks for (`update`, `insert` or `delete`: 0, 1, 2), or
/// `None` for the usual even mix.
fn edit_kind() -> Option<usize> {
    let kind = std::env::var("EDIT_KIND").ok()?;
    match kind.as_str() {
        "update" => Some(0),
        "insert" => Some(1),
        "delete" => Some(2),
        other => {
            eprintln!("unknown EDIT_KIND {other:?}: update insert delete");
            std::process::exit(2);
        }
    }
}

/// `count` random updates, inserts and deletes (or only the kind `EDIT_KIND` names), sorted
/// by key.
fn random_edits(rng: &mut Rng, count: usize) -> Vec<([u8; 20], Option<[u8; 20]>)> {
    let kind = edit_kind();
    let mut e: BTreeMap<i64, Option<[u8; 20]>> = BTreeMap::new();
    while e.len() < count {
        let i = rng.below(N) as i64;
        let v = tuple(rng.next() as i64, rng.next() as i64);
        match kind.unwrap_or_else(|| rng.below(3)) {
            0 => e.insert(2 * i, Some(v)),
            1 => e.insert(2 * i + 1, Some(v)),
            _ => e.insert(2 * i, None),
        };
    }
    e.into_iter()
        .map(|(k, v)| (tuple(k, if k % 2 == 0 { (k / 2) % 7 } else { 0 }), v))
        .collect()
}

/// A memory store for the workload: on transparent huge pages if `HUGE_PAGES=1`
/// ([`MemoryStore::with_huge_pages`]), to compare the two with `scripts/ab.sh`.
fn new_store(profile: HashProfile) -> MemoryStore {
    if std::env::var("HUGE_PAGES").is_ok_and(|v| v == "1") {
        MemoryStore::with_huge_pages(profile)
    } else {
        MemoryStore::new(profile)
    }
}

#[inline(never)]
fn run_get(map: &Map<'_, MemoryStore, TupleSchema>, data: &[Row], probes: &[usize]) -> usize {
    let mut found = 0;
    for &p in probes {
        found += usize::from(map.get(&data[p].0).expect("get").is_some());
    }
    found
}

#[inline(never)]
fn run_scan(map: &Map<'_, MemoryStore, TupleSchema>) -> usize {
    let mut n = 0;
    for r in map.iter().expect("iter") {
        let (k, v) = r.expect("row");
        n += k.len() + v.len();
    }
    n
}

#[inline(never)]
fn run_scan_fold(map: &Map<'_, MemoryStore, TupleSchema>) -> usize {
    map.iter().expect("iter").fold(0, |n, r| {
        let (k, v) = r.expect("row");
        n + k.len() + v.len()
    })
}

#[inline(never)]
fn run_build(store: &MemoryStore, data: &[Row]) -> Address {
    Map::from_sorted(store, schema(), data.iter().map(|(k, v)| (&k[..], &v[..])))
        .expect("build")
        .root()
}

#[inline(never)]
fn run_edits(store: &MemoryStore, root: Address, batches: &[Vec<Edit<'_>>]) -> usize {
    let s = schema();
    let mut n = 0;
    for b in batches {
        let edited = Map::new(store, root, &s).apply_sorted(b).expect("edit");
        n += edited.root().as_bytes()[0] as usize;
    }
    n
}

#[inline(never)]
fn run_diff(
    from: &Map<'_, MemoryStore, TupleSchema>,
    to: &Map<'_, MemoryStore, TupleSchema>,
    reps: usize,
) -> usize {
    let mut n = 0;
    for _ in 0..reps {
        n += from.diff(to).expect("diff").count();
    }
    n
}

fn main() {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "get".into());
    let reps: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100);
    let profile = match args.next().as_deref() {
        None | Some("blake3") => HashProfile::Blake3,
        Some("dolt") => HashProfile::Dolt,
        Some(other) => {
            eprintln!("unknown hash profile {other:?}: blake3 dolt");
            std::process::exit(2);
        }
    };
    let data = rows(N);
    let store = new_store(profile);
    let t = Instant::now();
    let map = Map::from_sorted(&store, schema(), data.iter().map(|(k, v)| (&k[..], &v[..])))
        .expect("build");
    eprintln!("setup build: {:?}", t.elapsed());
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let t = Instant::now();
    let result = match workload.as_str() {
        "get" | "get4k" => {
            // Touch every node once first, so the run measures warm lookups, not verification,
            // then descend to every leaf once (the memory store lists a node's children on the
            // first descent through it): the steady state that criterion's loops measure.
            black_box(run_scan(&map));
            for (k, _) in data.iter().step_by(8) {
                black_box(map.get(k).expect("get"));
            }
            // `get4k` cycles through 4096 random keys, as the criterion benchmark does (the
            // paths then stay in cache); `get` probes anywhere.
            let distinct = if workload == "get" { reps } else { 4096 };
            let pool: Vec<usize> = (0..distinct).map(|_| rng.below(N)).collect();
            let probes: Vec<usize> = (0..reps).map(|i| pool[i % distinct]).collect();
            let t = Instant::now();
            let r = run_get(&map, &data, &probes);
            let ours = t.elapsed().as_nanos() as f64 / reps as f64;
            // The baseline, same probes, same run.
            let model: BTreeMap<(i64, i64), (i64, i64)> = (0..N as i64)
                .map(|i| ((2 * i, i % 7), (i * 31, -i)))
                .collect();
            let t = Instant::now();
            let mut found = 0usize;
            for &p in &probes {
                let i = p as i64;
                found += usize::from(black_box(model.get(&(2 * i, i % 7))).is_some());
            }
            let base = t.elapsed().as_nanos() as f64 / reps as f64;
            eprintln!(
                "{ours:.0} ns/get; BTreeMap {base:.0} ns/get; ratio {:.2}",
                ours / base
            );
            r + found
        }
        "scan" => {
            black_box(run_scan(&map));
            (0..reps).map(|_| run_scan(&map)).sum()
        }
        "scan_fold" => {
            black_box(run_scan(&map));
            (0..reps).map(|_| run_scan_fold(&map)).sum()
        }
        "build" | "build1t" => {
            // `build1t` alternates builds without and with background hashing: a ratio from
            // one run. `build` uses the default (on where there are two cores).
            let (mut single, mut piped) = (0f64, 0f64);
            let mut n = 0usize;
            for _ in 0..reps {
                if workload == "build1t" {
                    set_background_hashing(false);
                }
                let t = Instant::now();
                n += run_build(&new_store(profile), &data).as_bytes()[0] as usize;
                single += t.elapsed().as_secs_f64();
                if workload == "build1t" {
                    set_background_hashing(true);
                    let t = Instant::now();
                    n += run_build(&new_store(profile), &data).as_bytes()[0] as usize;
                    piped += t.elapsed().as_secs_f64();
                }
            }
            let rate = |secs: f64| (N * reps) as f64 / secs / 1e6;
            if workload == "build1t" {
                eprintln!(
                    "one thread {:.1} M rows/s, with background hashing {:.1} M rows/s, speedup {:.2}",
                    rate(single),
                    rate(piped),
                    single / piped
                );
            }
            n
        }
        "edit1" | "edit1000" => {
            let count = if workload == "edit1" { 1 } else { 1000 };
            black_box(run_scan(&map));
            let owned: Vec<_> = (0..reps).map(|_| random_edits(&mut rng, count)).collect();
            let batches: Vec<Vec<Edit<'_>>> = owned.iter().map(|e| as_edits(e)).collect();
            let t = Instant::now();
            let r = run_edits(&store, map.root(), &batches);
            eprintln!(
                "{:.1} µs/batch",
                t.elapsed().as_secs_f64() * 1e6 / reps as f64
            );
            r
        }
        "edit1s" | "edit1000s" => {
            // As criterion's `edit+flush` runs them: each batch on the base map in a scratch
            // copy of the store whose memory is recycled (a fresh copy after
            // `SCRATCH_GROWTH` bytes of new nodes), every row read once first; only the edits
            // are timed.
            let count = if workload == "edit1s" { 1 } else { 1000 };
            let per_scratch = batches_per_scratch(count);
            let owned: Vec<_> = (0..reps).map(|_| random_edits(&mut rng, count)).collect();
            let batches: Vec<Vec<Edit<'_>>> = owned.iter().map(|e| as_edits(e)).collect();
            let (mut secs, mut r) = (0f64, 0usize);
            for group in batches.chunks(per_scratch) {
                let scratch = new_store(profile);
                copy_tree(&store, &scratch, &map.root()).expect("copy");
                black_box(run_scan(&Map::new(&scratch, map.root(), schema())));
                let t = Instant::now();
                r += run_edits(&scratch, map.root(), group);
                secs += t.elapsed().as_secs_f64();
            }
            eprintln!("{:.1} µs/batch (timed part)", secs * 1e6 / reps as f64);
            r
        }
        "edit1000t" => {
            // Each batch of 1,000 edits without and with background hashing.
            black_box(run_scan(&map));
            let owned: Vec<_> = (0..reps).map(|_| random_edits(&mut rng, 1000)).collect();
            let batches: Vec<Vec<Edit<'_>>> = owned.iter().map(|e| as_edits(e)).collect();
            let (mut single, mut piped) = (0f64, 0f64);
            let mut r = 0;
            for (i, b) in batches.iter().enumerate() {
                // Alternating which goes first: the second stores chunks the first already did.
                let order = if i % 2 == 0 {
                    [false, true]
                } else {
                    [true, false]
                };
                for background in order {
                    set_background_hashing(background);
                    let t = Instant::now();
                    r += run_edits(&store, map.root(), std::slice::from_ref(b));
                    let secs = t.elapsed().as_secs_f64();
                    if background {
                        piped += secs;
                    } else {
                        single += secs;
                    }
                }
            }
            let per = |secs: f64| secs * 1e3 / reps as f64;
            eprintln!(
                "one thread {:.2} ms/batch, with background hashing {:.2} ms/batch, speedup {:.2}",
                per(single),
                per(piped),
                single / piped
            );
            r
        }
        "diff1" | "diff1000" => {
            let count = if workload == "diff1" { 1 } else { 1000 };
            black_box(run_scan(&map));
            let e = random_edits(&mut rng, count);
            let to = map.apply_sorted(&as_edits(&e)).expect("edit");
            black_box(run_diff(&map, &to, 1));
            let t = Instant::now();
            let r = run_diff(&map, &to, reps);
            eprintln!(
                "{:.2} µs/diff",
                t.elapsed().as_secs_f64() * 1e6 / reps as f64
            );
            r
        }
        other => {
            eprintln!("unknown workload {other:?}: get get4k scan scan_fold build build1t edit1 edit1000 edit1000t edit1s edit1000s diff1 diff1000");
            std::process::exit(2);
        }
    };
    eprintln!("{workload} x{reps}: {:?} (result {result})", t.elapsed());
}
