//! Remote benchmarks against a local MinIO (started here, like the tests' one): push and clone
//! of a 1M-row store against plain object uploads and downloads of the same bytes, an
//! incremental push after 1,000 edits, cold-get round trips, warm gets against the local store.
//!
//! `cargo run --release -p prollystore-remote --example remote_bench [ROWS]`

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::Instant;

use futures::stream::{self, StreamExt, TryStreamExt};
use object_store::ObjectStoreExt;
use prollystore::store::file::layout::file_name;
use prollystore::{FileStore, Map};
use prollystore_remote::{clone, push, put_bytes, Remote, RemoteStore};
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

    // Push versus plain uploads of the same files.
    let remote = open("push");
    let t = Instant::now();
    let report = push(&remote, &mut a, "origin", &[]).expect("push");
    let push_s = t.elapsed().as_secs_f64();
    let plain = open("plain");
    let t = Instant::now();
    plain.run(async {
        let (os, prefix) = plain.object_store();
        stream::iter(files.iter().map(|f| {
            let bytes = std::fs::read(a.dir().join(file_name(f.seq))).expect("read");
            let path = prefix.clone().join(file_name(f.seq));
            async move { put_bytes(&**os, &path, bytes.into()).await }
        }))
        .buffered(2)
        .try_collect::<Vec<()>>()
        .await
        .expect("plain upload")
    });
    let plain_up_s = t.elapsed().as_secs_f64();
    println!(
        "push: {:.1} MB uploaded in {push_s:.2} s ({:.0} MB/s); plain upload of the store's files {plain_up_s:.2} s ({:.0} MB/s); push/plain throughput {:.0}%",
        report.bytes_uploaded as f64 / 1e6,
        report.bytes_uploaded as f64 / 1e6 / push_s,
        store_bytes as f64 / 1e6 / plain_up_s,
        100.0 * (report.bytes_uploaded as f64 / push_s) / (store_bytes as f64 / plain_up_s)
    );

    // Clone versus plain downloads of the pushed files.
    let remote_files = prollystore_remote::RemoteStore::from_remote(open("push"), 1 << 20)
        .expect("open")
        .chunk_count();
    let _ = remote_files;
    let t = Instant::now();
    let cloned = clone(&open("push"), &work.path().join("c")).expect("clone");
    let clone_s = t.elapsed().as_secs_f64();
    let clone_bytes: u64 = cloned.manifest().files.iter().map(|f| f.file_len).sum();
    drop(cloned);
    let t = Instant::now();
    let got: u64 = plain.run(async {
        let (os, prefix) = plain.object_store();
        stream::iter(files.iter().map(|f| {
            let path = prefix.clone().join(file_name(f.seq));
            async move {
                Ok::<u64, object_store::Error>(os.get(&path).await?.bytes().await?.len() as u64)
            }
        }))
        .buffered(4)
        .try_collect::<Vec<u64>>()
        .await
        .expect("plain download")
        .iter()
        .sum()
    });
    let plain_down_s = t.elapsed().as_secs_f64();
    println!(
        "clone: {:.1} MB in {clone_s:.2} s ({:.0} MB/s, chunks verified); plain download {:.1} MB in {plain_down_s:.2} s ({:.0} MB/s); clone/plain throughput {:.0}%",
        clone_bytes as f64 / 1e6,
        clone_bytes as f64 / 1e6 / clone_s,
        got as f64 / 1e6,
        got as f64 / 1e6 / plain_down_s,
        100.0 * (clone_bytes as f64 / clone_s) / (got as f64 / plain_down_s)
    );

    // Incremental push after 1,000 edits.
    edit_map(&mut a, "m", 1_000, rows, 2);
    let reader = RemoteStore::from_remote(open("push"), 1 << 20).expect("open");
    let changed = bytes_missing_from(&a, &reader);
    drop(reader);
    let before = remote.stats().bytes_out;
    let inc = push(&remote, &mut a, "origin", &[]).expect("incremental push");
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
        let s = RemoteStore::from_remote(open("push"), 64 << 20).expect("open");
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
    let s = RemoteStore::from_remote(open("push"), 64 << 20).expect("open");
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
}
