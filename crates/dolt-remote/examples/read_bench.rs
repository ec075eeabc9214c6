//! Reading a table in place from a remote into Arrow vs reading a cloned copy of it.
//!
//!     cargo run --release -p prollystore-dolt-remote --example read_bench -- \
//!         http://127.0.0.1:PORT/DB CLONE_DIR TABLE [RUNS]
//!
//! Each run opens the database afresh (cold caches in the reader; the OS page cache is warm
//! for both) and turns every row of TABLE on its default branch into Arrow record batches;
//! remote and local runs alternate. Prints each time, the medians and their ratio.

use std::sync::Arc;
use std::time::Instant;

use prollystore_arrow::dolt::TableBatches;
use prollystore_dolt::{Database, State};
use prollystore_dolt_remote::{default_branch, open_remote, FetchStats, OpenOptions};

type Error = Box<dyn std::error::Error>;

fn read_all(db: Database, table: &str) -> Result<u64, Error> {
    let branch = default_branch(&db)?.ok_or("no branches")?;
    let t = db.table_at(&branch, State::Committed, table)?;
    let mut batches = TableBatches::new(Arc::new(db), t, 65_536)?;
    let mut rows = 0;
    while let Some(b) = batches.next_batch()? {
        rows += b.num_rows() as u64;
    }
    Ok(rows)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [url, dir, table, rest @ ..] = args.as_slice() else {
        return Err("usage: read_bench URL CLONE_DIR TABLE [RUNS]".into());
    };
    let runs: usize = rest.first().map_or(Ok(5), |r| r.parse())?;
    let (mut remote, mut local) = (Vec::new(), Vec::new());
    for run in 0..runs {
        let stats = Arc::new(FetchStats::default());
        let options = OpenOptions {
            stats: Some(stats.clone()),
            ..OpenOptions::default()
        };
        let t = Instant::now();
        let rows = read_all(open_remote(url, &options)?, table)?;
        let r = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let local_rows = read_all(Database::open(dir)?, table)?;
        let l = t.elapsed().as_secs_f64();
        assert_eq!(rows, local_rows);
        println!(
            "run {run}: {rows} rows; in place {r:.3} s ({:?}), clone {l:.3} s",
            stats.counts()
        );
        remote.push(r);
        local.push(l);
    }
    let (r, l) = (median(remote), median(local));
    println!(
        "median: in place {r:.3} s, clone {l:.3} s: in place is {:.2}x the clone's time",
        r / l
    );
    Ok(())
}
