//! The gets of `benches/dolt_get.rs` (warm `Map::get` of 4,096 random existing keys of the 1M-row
//! Dolt table, from its chunk journal or from the same rows in a prollystore `FileStore`) in a
//! plain loop, one store per run, for instruction counts and cache simulation, where criterion's
//! timing loop would only add noise:
//!
//! ```text
//! cargo build --release -p prollystore-benches --example dolt_get_profile
//! valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*gets_dolt*' \
//!     target/release/examples/dolt_get_profile dolt 20
//! valgrind --tool=callgrind --cache-sim=yes --toggle-collect='*gets_file*' \
//!     target/release/examples/dolt_get_profile file 20
//! ```
//!
//! Arguments: the store (`dolt` or `file`), rounds of 4,096 gets (default 20), and the database
//! (default `PROLLY_DOLT_GET_DB`, else `target/dolt-bench-1m`, made by
//! `scripts/dolt_bench_db.sh`). Both stores are built and warmed in either run (the same
//! memory in use), and only the named one's gets are measured; `--toggle-collect` keeps the
//! setup out of the counts. Prints the CPU time per get as well.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use prollystore::{FileStore, Map, StoreFastPaths, TreeSchema};
use prollystore_dolt::State;

#[path = "../benches/fixtures/dolt_get.rs"]
mod fixture;
use fixture::{db_dir, file_store_copy, open_db, rows_and_probes, GETS};

#[inline(never)]
fn gets<S: StoreFastPaths + ?Sized, T: TreeSchema>(map: &Map<'_, S, T>, keys: &[&[u8]]) -> usize {
    keys.iter()
        .map(|k| map.get(k).unwrap().map_or(0, <[u8]>::len))
        .sum()
}

#[inline(never)]
fn gets_dolt<S: StoreFastPaths + ?Sized, T: TreeSchema>(
    map: &Map<'_, S, T>,
    keys: &[&[u8]],
    rounds: usize,
) -> usize {
    (0..rounds).map(|_| gets(map, black_box(keys))).sum()
}

#[inline(never)]
fn gets_file<S: StoreFastPaths + ?Sized, T: TreeSchema>(
    map: &Map<'_, S, T>,
    keys: &[&[u8]],
    rounds: usize,
) -> usize {
    (0..rounds).map(|_| gets(map, black_box(keys))).sum()
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "dolt".into());
    let rounds: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(20);
    let dir = args.next().map(PathBuf::from).unwrap_or_else(db_dir);
    let db = open_db(&dir);
    let table = db.table_at("main", State::Committed, "t").expect("table t");
    let dolt = table.primary_map(&db).expect("primary map");
    let (rows, order) = rows_and_probes(&dolt);
    let keys: Vec<&[u8]> = order.iter().map(|&i| &rows[i].0[..]).collect();

    let tmp = tempfile::tempdir().expect("tempdir");
    let root = file_store_copy(tmp.path(), &dolt, &rows);
    let store = FileStore::open(tmp.path()).expect("open");
    let file = Map::new(&store, root, dolt.schema().clone());
    // Warm both, as the benchmark does.
    assert_eq!(gets(&dolt, &keys), gets(&file, &keys));

    let cpu = cpu_seconds();
    let t = Instant::now();
    let n = match which.as_str() {
        "dolt" => gets_dolt(&dolt, &keys, rounds),
        "file" => gets_file(&file, &keys, rounds),
        other => panic!("unknown store {other:?} (dolt or file)"),
    };
    let per_get = |s: f64| s * 1e9 / (rounds * GETS) as f64;
    println!(
        "{which}: {} gets, {:.0} ns/get CPU, {:.0} ns/get wall (checksum {n})",
        rounds * GETS,
        per_get(cpu_seconds() - cpu),
        per_get(t.elapsed().as_secs_f64()),
    );
    black_box(&rows);
}

/// User + system CPU time of this process, in seconds.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (in parentheses): utime and stime are the 12th and 13th.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
