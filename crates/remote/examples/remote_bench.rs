//! Remote benchmarks against a local MinIO (started here, like the tests' one): push and clone
//! of a 1M-row store against plain object uploads and downloads of the same bytes, an
//! incremental push after 1,000 edits, cold-get round trips, warm gets against the local store.
//!
//! `cargo run --release -p prollystore-remote --example remote_bench [ROWS]`; `BENCH_RUNS=N`
//! sets the alternated clone runs (default 5), `BENCH_CLONE_ONLY=1` stops after them.

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;
use prollystore::store::file::layout::file_name;
use prollystore::{FileStore, Map};
use prollystore_remote::{clone, pull, push, put_bytes, Remote, RemoteStore};
use support::*;

fn main() {
    let rows: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let minio = Minio::start().expect("a MinIO binary (PROLLY_MINIO)");
    let work = tempfile::tempdir().expect("tmp");
    let t = Instant::now();
    let mut a = make_store(&work.path().join("a"), &[("m", rows, 1)]);
    let files: Vec<_> = a.manifest().files.clone();
    let store_bytes: u64 = files.iter().map(|f| f.file_len).sum();
    println!(
        "store: {rows} rows, {} chunk files, {:.1} MB, built in {:.1} s",
        files.len(),
        store_bytes as f64 / 1e6,
        t.elapsed().as_secs_f64()
    );
    let opts = minio.options(minio.port);
    let open = |prefix: &str| {
        Remote::open_with(&format!("s3://{BUCKET}/{prefix}"), &opts).expect("remote")
    };

    // Push versus plain uploads of the same files, alternated, best of three each (a fresh
    // prefix per run, so each push sends everything).
    let (mut push_s, mut plain_up_s) = (f64::MAX, f64::MAX);
    let mut uploaded = 0;
    let plain = open("plain");
    for run in 0..3 {
        let t = Instant::now();
        plain.run(async {
            let (os, prefix) = plain.object_store();
            stream::iter(files.iter().map(|f| {
                let bytes = std::fs::read(a.dir().join(file_name(f.seq))).expect("read");
                let path = prefix.clone().join(format!("{run}/{}", file_name(f.seq)));
                async move { put_bytes(&**os, &path, bytes.into()).await }
            }))
            .buffered(2)
            .try_collect::<Vec<()>>()
            .await
            .expect("plain upload")
        });
        plain_up_s = plain_up_s.min(t.elapsed().as_secs_f64());
        let r = open(&format!("push{run}"));
        let t = Instant::now();
        let report = push(&r, &mut a, &format!("r{run}"), &[]).expect("push");
        push_s = push_s.min(t.elapsed().as_secs_f64());
        uploaded = report.bytes_uploaded;
    }
    println!(
        "push: {:.1} MB uploaded in {push_s:.2} s ({:.0} MB/s); plain upload of the store's files {plain_up_s:.2} s ({:.0} MB/s); push/plain throughput {:.0}% (best of 3 each, alternated)",
        uploaded as f64 / 1e6,
        uploaded as f64 / 1e6 / push_s,
        store_bytes as f64 / 1e6 / plain_up_s,
        100.0 * (uploaded as f64 / push_s) / (store_bytes as f64 / plain_up_s)
    );
    let remote = open("push0");

    // Clone versus plain downloads of the same objects, alternated within each run (the
    // machine is shared and noisy: ratios of neighbours, median over the runs): into memory
    // with one GET per object, into memory with parallel range GETs (what a clone does), and
    // into fsynced files (the durability a clone must give before its manifest).
    let runs: usize = std::env::var("BENCH_RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let mut got = 0u64;
    let mut rows_t: Vec<[f64; 5]> = Vec::new();
    for run in 0..runs {
        let dir = work.path().join(format!("c{run}"));
        let src = open("push0");
        let t = Instant::now();
        drop(clone(&src, &dir).expect("clone"));
        let clone_s = t.elapsed().as_secs_f64();
        std::fs::remove_dir_all(&dir).expect("remove clone");
        // A pull into an empty store moves the same chunks through the local store's writer.
        let pdir = work.path().join(format!("p{run}"));
        let mut fresh = FileStore::create(&pdir, a.profile()).expect("create");
        let t = Instant::now();
        pull(&src, &mut fresh, "origin").expect("pull");
        let pull_s = t.elapsed().as_secs_f64();
        drop(fresh);
        std::fs::remove_dir_all(&pdir).expect("remove pulled store");
        let mut row = [clone_s, 0.0, 0.0, 0.0, pull_s];
        for (mode, slot) in [(0, 1), (1, 2), (2, 3)] {
            let t = Instant::now();
            got = plain.run(async {
                let (os, prefix) = plain.object_store();
                stream::iter(files.iter().map(|f| {
                    let path = prefix.clone().join(format!("0/{}", file_name(f.seq)));
                    let file = work.path().join(format!("plain{run}-{}", f.seq));
                    let size = f.file_len;
                    async move {
                        let bytes: Vec<bytes::Bytes> = if mode == 1 {
                            let ranges: Vec<std::ops::Range<u64>> = (0..size)
                                .step_by(4 << 20)
                                .map(|s| s..(s + (4 << 20)).min(size))
                                .collect();
                            stream::iter(ranges.into_iter().map(|r| {
                                let path = path.clone();
                                async move { os.get_range(&path, r).await }
                            }))
                            .buffered(8)
                            .try_collect()
                            .await?
                        } else {
                            vec![os.get(&path).await?.bytes().await?]
                        };
                        if mode == 2 {
                            let mut out = std::fs::File::create(&file).expect("create");
                            for b in &bytes {
                                std::io::Write::write_all(&mut out, b).expect("write");
                            }
                            out.sync_all().expect("fsync");
                            drop(out);
                            std::fs::remove_file(&file).expect("remove");
                        }
                        Ok::<u64, object_store::Error>(bytes.iter().map(|b| b.len() as u64).sum())
                    }
                }))
                .buffered(4)
                .try_collect::<Vec<u64>>()
                .await
                .expect("plain download")
                .iter()
                .sum()
            });
            row[slot] = t.elapsed().as_secs_f64();
        }
        println!(
            "  clone run {run}: clone {:.3} s; pull into an empty store {:.3} s; plain into memory {:.3} s (one GET), {:.3} s (range GETs); into fsynced files {:.3} s",
            row[0], row[4], row[1], row[2], row[3]
        );
        rows_t.push(row);
    }
    let mb = got as f64 / 1e6;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ratio = |slot: usize| median(rows_t.iter().map(|r| r[slot] / r[0]).collect());
    let pull_ratio = |slot: usize| median(rows_t.iter().map(|r| r[slot] / r[4]).collect());
    let best = |slot: usize| rows_t.iter().map(|r| r[slot]).fold(f64::MAX, f64::min);
    println!(
        "clone: {mb:.1} MB, best {:.3} s ({:.0} MB/s, every chunk hashed, fsynced); clone/plain throughput, median of {runs} alternated runs: {:.0}% of one-GET download into memory (best {:.3} s), {:.0}% of range-GET download into memory (best {:.3} s), {:.0}% of download into fsynced files (best {:.3} s)",
        best(0),
        mb / best(0),
        100.0 * ratio(1),
        best(1),
        100.0 * ratio(2),
        best(2),
        100.0 * ratio(3),
        best(3),
    );
    println!(
        "pull into an empty store: best {:.3} s ({:.0} MB/s); pull/plain throughput, median: {:.0}% of range-GET download into memory, {:.0}% of download into fsynced files",
        best(4),
        mb / best(4),
        100.0 * pull_ratio(2),
        100.0 * pull_ratio(3),
    );

    if std::env::var_os("BENCH_CLONE_ONLY").is_some() {
        return;
    }
    // Incremental push after 1,000 edits.
    edit_map(&mut a, "m", 1_000, rows, 2);
    let reader = RemoteStore::from_remote(open("push0"), 1 << 20).expect("open");
    let changed = bytes_missing_from(&a, &reader);
    drop(reader);
    let before = remote.stats().bytes_out;
    let inc = push(&remote, &mut a, "r0", &[]).expect("incremental push");
    let moved = remote.stats().bytes_out - before;
    println!(
        "incremental push after 1,000 edits: {moved} bytes moved, changed chunks {changed} bytes ({} chunks): {:.2}x",
        inc.chunks,
        moved as f64 / changed as f64
    );

    // Cold gets: a fresh open per get.
    let root = a.root("m").expect("root");
    let mut rng = Rng::new(7);
    let mut trips = Vec::new();
    for _ in 0..5 {
        let s = RemoteStore::from_remote(open("push0"), 64 << 20).expect("open");
        let opened = s.stats().round_trips;
        let k = key(rng.below(rows));
        Map::new(&s, root, schema())
            .get(&k)
            .expect("get")
            .expect("present");
        trips.push((opened, s.stats().round_trips - opened));
    }
    let height = Map::new(&a, root, schema()).height().expect("height");
    println!("cold get (open round trips, get round trips), tree height {height}: {trips:?}");

    // Warm gets: the same keys again, remote store against the local file store.
    let s = RemoteStore::from_remote(open("push0"), 64 << 20).expect("open");
    let keys: Vec<Vec<u8>> = (0..20_000).map(|_| key(rng.below(rows))).collect();
    let rmap = Map::new(&s, root, schema());
    for k in &keys {
        rmap.get(k).expect("warm-up");
    }
    let local = FileStore::open(a.dir()).expect("local");
    let lmap = Map::new(&local, root, schema());
    for k in &keys {
        lmap.get(k).expect("warm-up");
    }
    let time = |f: &dyn Fn()| {
        let mut best = f64::MAX;
        for _ in 0..5 {
            let t = Instant::now();
            f();
            best = best.min(t.elapsed().as_secs_f64());
        }
        best
    };
    let remote_t = time(&|| {
        for k in &keys {
            std::hint::black_box(rmap.get(k).expect("get"));
        }
    });
    let local_t = time(&|| {
        for k in &keys {
            std::hint::black_box(lmap.get(k).expect("get"));
        }
    });
    println!(
        "warm gets: remote store {:.0} ns/get, local file store {:.0} ns/get: {:.2}x",
        remote_t * 1e9 / keys.len() as f64,
        local_t * 1e9 / keys.len() as f64,
        remote_t / local_t
    );

    drop(rmap);
    drop(s);

    // A bounded scan of the whole map with a 16 MB budget: the bytes held at most, the
    // round trips, and the time, against a scan of the local store.
    let budget = 16 << 20;
    let mut s = RemoteStore::from_remote(open("push0"), budget).expect("open");
    let before = s.stats();
    let t = Instant::now();
    let mut n = 0u64;
    s.scan(
        root,
        schema(),
        std::ops::Bound::Unbounded,
        std::ops::Bound::Unbounded,
        |_, k, v| {
            n += (k.len() + v.len()) as u64 & 1;
            true
        },
    )
    .expect("bounded scan");
    let scan_s = t.elapsed().as_secs_f64();
    let after = s.stats();
    let t = Instant::now();
    let local_rows = lmap.iter().expect("scan").count();
    let local_s = t.elapsed().as_secs_f64();
    println!(
        "bounded scan (budget {budget} bytes) of {local_rows} rows: {scan_s:.2} s ({} round trips, {:.1} MB fetched), peak {} bytes held; local scan {local_s:.2} s ({n})",
        after.round_trips - before.round_trips,
        (after.bytes_in - before.bytes_in) as f64 / 1e6,
        s.peak_bytes(),
    );
}
