//! Times cutting a Dolt table into parts ([`prollystore_dolt::parts::split`]) and reports how
//! even the parts are; then reads every part as Arrow, one after another, against the whole
//! table, cold and warm (figures in docs/PERF.md):
//!
//! ```text
//! scripts/make_dolt_arrow_bench_db.sh /tmp/arrow1m
//! cargo run --release -p prollystore-arrow --example split_parts -- /tmp/arrow1m t 64 9
//! ```
//!
//! "cold" opens the database afresh before each cut (empty chunk arena: the internal nodes and
//! one leaf per boundary are read, decompressed and hash-checked; the page cache stays warm);
//! "warm" cuts again on the same handle.

use std::sync::Arc;
use std::time::{Duration, Instant};

use prollystore_arrow::{TableBatches, DEFAULT_BATCH_ROWS};
use prollystore_dolt::parts::{split, SplitOptions};
use prollystore_dolt::Database;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [dir, table, ..] = &args[..] else {
        eprintln!("usage: split_parts DB TABLE [PARTS] [RUNS]");
        std::process::exit(2);
    };
    let n: usize = args.get(2).map_or(Ok(64), |s| s.parse())?;
    let runs: usize = args.get(3).map_or(Ok(9), |s| s.parse())?;
    let options = SplitOptions::default();
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    let mut parts = Vec::new();
    for _ in 0..runs {
        let db = Database::open(dir)?;
        let t = Instant::now();
        let first = split(&db, "HEAD", table, n, &options)?;
        cold.push(t.elapsed());
        drop(first);
        let t = Instant::now();
        parts = split(&db, "HEAD", table, n, &options)?;
        warm.push(t.elapsed());
    }
    let sizes: Vec<u64> = parts.iter().map(|p| p.rows()).collect();
    let total: u64 = sizes.iter().sum();
    let mean = total as f64 / sizes.len() as f64;
    let (min, max) = (
        sizes.iter().min().unwrap_or(&0),
        sizes.iter().max().unwrap_or(&0),
    );
    let json: usize = parts.iter().map(|p| p.to_json().len()).sum();
    println!(
        "{} parts of {total} rows: cut in {:.3} ms cold, {:.3} ms warm (median of {runs}); \
         sizes {min}..{max} (spread {:+.3}% / {:+.3}% of the mean); {} bytes of JSON a part",
        parts.len(),
        median(cold).as_secs_f64() * 1e3,
        median(warm).as_secs_f64() * 1e3,
        (*min as f64 - mean) / mean * 100.0,
        (*max as f64 - mean) / mean * 100.0,
        json / parts.len().max(1),
    );

    // Every part read, one after another, against the whole table: cold (a fresh handle, as
    // a worker opens one), then warm. Both use the cores as a reader does (a cold part takes
    // the bulk leaf reader, as the cold whole-table pass does).
    let (parts_db, whole_db) = (
        Arc::new(Database::open(dir)?),
        Arc::new(Database::open(dir)?),
    );
    let whole = whole_db.table_at("HEAD", Default::default(), table)?;
    for pass in ["cold", "warm"] {
        let t = Instant::now();
        let mut rows = 0;
        for p in &parts {
            for b in TableBatches::part(parts_db.clone(), p, DEFAULT_BATCH_ROWS)? {
                rows += b?.num_rows();
            }
        }
        let by_parts = t.elapsed();
        let t = Instant::now();
        let mut whole_rows = 0;
        for b in TableBatches::new(whole_db.clone(), whole.clone(), DEFAULT_BATCH_ROWS)? {
            whole_rows += b?.num_rows();
        }
        let line = format!(
            "read {pass}: the parts' {rows} rows one part after another in {:.1} ms, the \
             whole table's {whole_rows} in {:.1} ms",
            by_parts.as_secs_f64() * 1e3,
            t.elapsed().as_secs_f64() * 1e3
        );
        println!("{line}");
    }
    Ok(())
}
