//! Times queries through `prollystore-query` on a Dolt database, for docs/PERF.md:
//!
//!   cargo run --release --example query_bench -- DB groupby [RUNS]   # GROUP BY over table t
//!   cargo run --release --example query_bench -- DB point [QUERIES]  # SELECT … WHERE id = ?
//!   cargo run --release --example query_bench -- DB range [ROWS]     # a key range: leaves read
//!
//! `groupby` runs `SELECT day, sum(qty), sum(price), count(*) FROM t GROUP BY day` RUNS times
//! (default 5): the first on a database opened for it (cold: leaves read from disk), then warm.
//! `point` plans and runs QUERIES (default 2000) point queries, each with its own text, on one
//! session (`DoltSession::query`, as `prolly-sql` runs a query), and prints the mean and the median time per query (planning included); with
//! `WARM=1` it runs them twice and times the second pass (their leaves read by the first);
//! `QUERY_OPTIONS="datafusion.x = y;…"` sets DataFusion options first (`point`, `groupwarm`).
//! `range` reads ROWS rows of a key range (default 1000) on a fresh handle and counts the
//! table's leaves the read brought in. The table is `t` with a BIGINT key `id` (as
//! scripts/make_dolt_arrow_bench_db.sh makes it).

use std::sync::Arc;
use std::time::Instant;

use prollystore_dolt::{Database, State};
use prollystore_query::DoltSession;

const GROUP_BY: &str = "SELECT day, sum(qty), sum(price), count(*) FROM t GROUP BY day";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (db_dir, mode) = (&args[1], args.get(2).map_or("groupby", String::as_str));
    let n: usize = args.get(3).map_or(0, |s| s.parse().unwrap_or(0));
    match mode {
        "groupby" => {
            let runs = if n == 0 { 5 } else { n };
            for run in 0..runs {
                let start = Instant::now();
                let session = DoltSession::open(db_dir, Some("main"))?;
                let batches = session.sql(GROUP_BY).await?.collect().await?;
                let groups: usize = batches.iter().map(|b| b.num_rows()).sum();
                let warm = {
                    let s = Instant::now();
                    session.sql(GROUP_BY).await?.collect().await?;
                    s.elapsed()
                };
                println!(
                    "run {run}: cold {:.3} s, warm {:.3} s, {groups} groups",
                    start.elapsed().as_secs_f64() - warm.as_secs_f64(),
                    warm.as_secs_f64()
                );
            }
        }
        "groupwarm" => {
            // One handle, RUNS runs (for profiles of the warm pass).
            let session = DoltSession::open(db_dir, Some("main"))?;
            set_options(&session).await?;
            for run in 0..n.max(2) {
                let start = Instant::now();
                session.sql(GROUP_BY).await?.collect().await?;
                println!("run {run}: {:.3} s", start.elapsed().as_secs_f64());
            }
        }
        "point" => {
            let queries = if n == 0 { 2000 } else { n };
            let session = DoltSession::open(db_dir, Some("main"))?;
            let db = Database::open(db_dir)?;
            let rows = db
                .table_at("main", State::Committed, "t")?
                .primary_scan_map(&db)
                .count()?;
            set_options(&session).await?;
            let passes = if std::env::var_os("WARM").is_some() {
                2
            } else {
                1
            };
            let mut times = Vec::with_capacity(queries);
            for pass in 0..passes {
                times.clear();
                let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
                if pass > 0 {
                    eprintln!("second pass over the same keys (their leaves read)");
                }
                for _ in 0..queries {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let id = 1 + x % rows;
                    let start = Instant::now();
                    let batches = session
                        .query(&format!("SELECT * FROM t WHERE id = {id}"))
                        .await?
                        .batches;
                    times.push(start.elapsed().as_secs_f64() * 1e6);
                    assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1);
                }
            }
            let mean = times.iter().sum::<f64>() / times.len() as f64;
            times.sort_by(f64::total_cmp);
            println!(
                "{queries} point queries: mean {mean:.1} µs/query, median {:.1} µs/query, p99 {:.1} µs",
                times[times.len() / 2],
                times[times.len() * 99 / 100]
            );
        }
        "range" => {
            let rows = if n == 0 { 1000 } else { n } as u64;
            let db = Arc::new(Database::open(db_dir)?);
            let session = DoltSession::new(db.clone(), Some("main"))?;
            let start = Instant::now();
            let q = format!(
                "SELECT count(*), sum(qty) FROM t WHERE id >= 5000000 AND id < {}",
                5_000_000 + rows
            );
            session.sql(&q).await?.collect().await?;
            let took = start.elapsed();
            let table = db.table_at("main", State::Committed, "t")?;
            let leaves: Vec<_> = table
                .primary_scan_map(&db)
                .leaves()?
                .collect::<Result<Vec<_>, _>>()?;
            let read = leaves
                .iter()
                .filter(|(a, _)| db.source().is_kept(a))
                .count();
            println!(
                "{rows}-row key range: {read} of {} leaves read, {:.3} ms",
                leaves.len(),
                took.as_secs_f64() * 1e3
            );
        }
        other => return Err(format!("unknown mode {other:?} (groupby, point, range)").into()),
    }
    Ok(())
}

/// Runs `SET` for each option of `QUERY_OPTIONS` (`datafusion.x = y;…`) on `session`.
async fn set_options(session: &DoltSession) -> Result<(), Box<dyn std::error::Error>> {
    if let Ok(options) = std::env::var("QUERY_OPTIONS") {
        for o in options.split(';').filter(|o| !o.is_empty()) {
            session.sql(&format!("SET {o}")).await?.collect().await?;
        }
    }
    Ok(())
}
