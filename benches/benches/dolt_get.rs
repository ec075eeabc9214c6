//! Warm point gets on a 1M-row Dolt table read from its chunk journal (the table's primary
//! index as a `prollystore::Map` over `DoltChunkSource`), against `Map::get` of the same rows
//! in a prollystore `FileStore`: the target is a ratio of at most 1.2. Also a typed get
//! (`TableReader::get`: key encoded from values, row decoded).
//!
//! The database is made once by the real Dolt with `scripts/dolt_bench_db.sh` (default
//! `target/dolt-bench-1m`; `PROLLY_DOLT_GET_DB=DIR` for another). Without it the bench prints
//! how to make it and measures nothing.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prollystore::{FileStore, Map};
use prollystore_dolt::{SqlValue, State};

#[path = "fixtures/dolt_get.rs"]
mod fixture;
use fixture::{db_dir, file_store_copy, open_db, rows_and_probes, GETS};

fn bench(c: &mut Criterion) {
    let dir = db_dir();
    if !dir.join(".dolt").is_dir() {
        eprintln!(
            "dolt_get: skipped, no Dolt database at {} (make it with \
             `DOLT=/path/to/dolt scripts/dolt_bench_db.sh`, or set PROLLY_DOLT_GET_DB)",
            dir.display()
        );
        return;
    }
    let db = open_db(&dir);
    let table = db.table_at("main", State::Committed, "t").expect("table t");
    let dolt = table.primary_map(&db).expect("primary map");
    let (rows, order) = rows_and_probes(&dolt);
    let keys: Vec<&[u8]> = order.iter().map(|&i| &rows[i].0[..]).collect();

    // The same rows in a prollystore file store, read back through a reader.
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = file_store_copy(tmp.path(), &dolt, &rows);
    let store = FileStore::open(tmp.path()).expect("open");
    let file = Map::new(&store, root, dolt.schema().clone());
    // Warm both: every node on the probed paths read (and checked) once.
    for k in &keys {
        assert!(dolt.get(k).expect("get").is_some());
        assert!(file.get(k).expect("get").is_some());
    }

    let mut g = c.benchmark_group("dolt_get");
    g.throughput(Throughput::Elements(GETS as u64));
    g.bench_function("dolt_journal_map_get", |b| {
        b.iter(|| {
            keys.iter()
                .map(|k| dolt.get(k).unwrap().map_or(0, <[u8]>::len))
                .sum::<usize>()
        })
    });
    g.bench_function("file_store_map_get", |b| {
        b.iter(|| {
            keys.iter()
                .map(|k| file.get(k).unwrap().map_or(0, <[u8]>::len))
                .sum::<usize>()
        })
    });
    // Typed: the key from a value, the whole row decoded.
    let reader = table.reader(&db).expect("reader");
    let ids: Vec<SqlValue> = order
        .iter()
        .map(|&i| SqlValue::Int(i as i64 * 7 + 3))
        .collect();
    g.bench_function("dolt_typed_get", |b| {
        b.iter(|| {
            ids.iter()
                .map(|id| {
                    reader
                        .get(std::slice::from_ref(id))
                        .unwrap()
                        .map_or(0, |r| r.len())
                })
                .sum::<usize>()
        })
    });
    g.finish();
    black_box(&rows);
}

criterion_group!(benches, bench);
criterion_main!(benches);
