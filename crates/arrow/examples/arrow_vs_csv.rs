//! Times a Dolt table to Arrow record batches against our CSV export of the same table, in one
//! run, alternated (figures in docs/PERF.md):
//!
//! ```text
//! scripts/make_dolt_arrow_bench_db.sh /tmp/arrow1m
//! cargo run --release -p prollystore-arrow --example arrow_vs_csv -- /tmp/arrow1m t 5
//! # PROLLY_ARROW_THREADS=1: batches on the calling thread; PROLLY_DOLT_VERIFY=0: no hash checks
//! # PROLLY_ARROW_COLD=1: every run opens the database afresh (empty chunk arena: each Arrow
//! # pass is a first pass; the page cache stays warm)
//! # PROLLY_ARROW_TYPED=0: skip the pass through typed values (for profiles of the other two)
//! ```
//!
//! Each line also gives the CPU time of the whole process (all threads) for each pass, from
//! `/proc/self/stat` (Linux; 0 elsewhere).

use std::sync::Arc;
use std::time::{Duration, Instant};

use prollystore_arrow::{TableBatches, DEFAULT_BATCH_ROWS};
use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::{Database, State};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// CPU time of this process so far (user + system, all threads), in clock ticks of 10 ms.
fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
    f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let dir = args
        .get(1)
        .ok_or("usage: arrow_vs_csv DB_DIR TABLE [RUNS]")?;
    let name = args.get(2).map(String::as_str).unwrap_or("t");
    let runs: usize = args.get(3).map(|r| r.parse()).transpose()?.unwrap_or(5);
    // PROLLY_DOLT_VERIFY=0 skips the per-chunk hash checks (as the export example does).
    let verify = std::env::var("PROLLY_DOLT_VERIFY").map_or(true, |v| v != "0");
    let open = || -> Result<Arc<Database>, Box<dyn std::error::Error>> {
        Ok(Arc::new(
            prollystore_sql::open(std::path::Path::new(dir))?.with_verify_hashes(verify),
        ))
    };
    let cold = std::env::var("PROLLY_ARROW_COLD").is_ok_and(|v| v == "1");
    let with_typed = std::env::var("PROLLY_ARROW_TYPED").map_or(true, |v| v != "0");
    let mut db = open()?;
    let table = db.table_at("main", State::Committed, name)?;
    // PROLLY_ARROW_THREADS=N makes the batches on N threads (default: one per core, up to 4).
    let threads: Option<usize> = std::env::var("PROLLY_ARROW_THREADS")
        .ok()
        .map(|t| t.parse())
        .transpose()?;
    let (mut arrow, mut csv, mut typed) = (Vec::new(), Vec::new(), Vec::new());
    for run in 0..=runs {
        if cold {
            db = open()?;
        }
        let (t, c0) = (Instant::now(), cpu_ticks());
        let mut out = std::io::sink();
        let rows_csv = export_csv(&db, &table, &mut out)?;
        let csv_time = t.elapsed();
        let csv_cpu = (cpu_ticks() - c0) * 10;

        let (t, c0) = (Instant::now(), cpu_ticks());
        let mut rows = 0;
        let mut bytes = 0;
        let reader = match threads {
            Some(n) => {
                TableBatches::with_threads(db.clone(), table.clone(), DEFAULT_BATCH_ROWS, n)?
            }
            None => TableBatches::new(db.clone(), table.clone(), DEFAULT_BATCH_ROWS)?,
        };
        let direct = reader.is_direct();
        for b in reader {
            let b = b?;
            rows += b.num_rows() as u64;
            bytes += b.get_array_memory_size();
        }
        let arrow_time = t.elapsed();
        let arrow_cpu = (cpu_ticks() - c0) * 10;
        assert_eq!(rows, rows_csv);

        // The same batches through the row decoder's typed values (what ranges use).
        let t = Instant::now();
        if with_typed {
            let via_rows = TableBatches::range(
                db.clone(),
                table.clone(),
                &prollystore_dolt::KeyRange::all(),
                DEFAULT_BATCH_ROWS,
            )?;
            let mut typed_rows = 0;
            for b in via_rows {
                typed_rows += b?.num_rows() as u64;
            }
            assert_eq!(typed_rows, rows_csv);
        }
        let typed_time = t.elapsed();
        // The first run warms the chunk cache and page cache for both.
        if run > 0 {
            csv.push(csv_time);
            arrow.push(arrow_time);
            typed.push(typed_time);
        }
        println!(
            "run {run}: csv {csv_time:?} (cpu {csv_cpu} ms), arrow {arrow_time:?} (cpu {arrow_cpu} ms; through typed values {typed_time:?}; {rows} rows, {} MB of arrays, direct {direct})",
            bytes >> 20
        );
    }
    let (a, c, v) = (median(arrow), median(csv), median(typed));
    println!(
        "median of {runs}: arrow {a:?}, csv {c:?}, arrow/csv = {:.2}; through typed values {v:?} ({:.2}x the direct path)",
        a.as_secs_f64() / c.as_secs_f64(),
        v.as_secs_f64() / a.as_secs_f64()
    );
    Ok(())
}
