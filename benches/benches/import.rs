//! CSV import through the `prolly` tool's importer: 1M rows of (int64,int64)->(int64,int64),
//! against the baseline of only parsing the same CSV bytes with the `csv` crate (ByteRecord
//! reuse), measured in the same run.
//!
//! * `csv_parse_only`: the baseline (every field touched, nothing built).
//! * `build_only_memory`: the other baseline, the tree built from the same rows' tuples made
//!   beforehand (blake3 memory store): the import parses on a second thread while it builds, so
//!   this is the best it can do.
//! * `parse_build_memory`: text → tuples → sorted-input check → tree, into the in-memory store
//!   (blake3 addresses).
//! * `parse_build_commit_file`: the same into a durable file store, including the commit (one
//!   chunk file written and fsynced, the manifest swapped). Compare with `parse_build_memory`.
//! * `commit_only_file`: the commit alone (the import before it is not timed).
//! * `raw_write_fsync`: the disk's floor for that commit: as many bytes as its chunk file, written
//!   in 1 MiB pieces to a new file and fsynced, nothing else. Compare with `commit_only_file`.

use std::hint::black_box;
use std::io::Write;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prollystore::format::HashProfile;
use prollystore::store::file::{FileStore, RootUpdate};
use prollystore::{Map, MemoryStore};
use prollystore_cli::field_text::NullText;
use prollystore_cli::import;
use prollystore_cli::map_schema::MapSchema;

const ROWS: u64 = 1_000_000;

fn csv_bytes() -> Vec<u8> {
    let mut s = String::with_capacity(32 * ROWS as usize);
    s.push_str("a,b,c,d\n");
    for i in 0..ROWS {
        let i = i as i64;
        s.push_str(&format!("{i},{},{},{}\n", (i * 7) % 1_000_003, i * 13, -i));
    }
    s.into_bytes()
}

/// Imports `data` into a new file store in a temporary directory and commits it; returns the
/// time of all of it, or of the commit only.
fn import_into_file(data: &[u8], schema: &MapSchema, commit_only: bool) -> Duration {
    let dir = tempfile::tempdir().unwrap();
    let start = Instant::now();
    let mut store = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let (root, _) = import::import_new(data, schema, &NullText::default(), &store).unwrap();
    let commit = Instant::now();
    store
        .commit(&[RootUpdate::new("t", None, Some(root))])
        .unwrap();
    let end = Instant::now();
    drop(store);
    end - if commit_only { commit } else { start }
}

fn bench_import(c: &mut Criterion) {
    let data = csv_bytes();
    let schema = MapSchema::parse("a:int64,b:int64", "c:int64,d:int64").unwrap();
    let null = NullText::default();
    let mut g = c.benchmark_group("import_1m_rows");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(ROWS));

    g.bench_function("csv_parse_only", |b| {
        b.iter(|| {
            let mut r = csv::ReaderBuilder::new()
                .has_headers(true)
                .from_reader(&data[..]);
            let mut rec = csv::ByteRecord::new();
            let mut n = 0usize;
            while r.read_byte_record(&mut rec).unwrap() {
                n += rec.iter().map(<[u8]>::len).sum::<usize>();
            }
            black_box(n)
        })
    });

    // The other part of the import: the same rows' tuples, already made, into a tree.
    let tuples: Vec<([u8; 20], [u8; 20])> = (0..ROWS as i64)
        .map(|i| {
            let t = |a: i64, b: i64| {
                let mut t = [0u8; 20];
                t[..8].copy_from_slice(&a.to_le_bytes());
                t[8..16].copy_from_slice(&b.to_le_bytes());
                t[16..18].copy_from_slice(&8u16.to_le_bytes());
                t[18..20].copy_from_slice(&2u16.to_le_bytes());
                t
            };
            (t(i, (i * 7) % 1_000_003), t(i * 13, -i))
        })
        .collect();
    g.bench_function("build_only_memory", |b| {
        b.iter(|| {
            let store = MemoryStore::new(HashProfile::Blake3);
            let map = Map::from_sorted(
                &store,
                schema.tuple_schema(),
                tuples.iter().map(|(k, v)| (&k[..], &v[..])),
            )
            .unwrap();
            black_box(map.root())
        })
    });

    g.bench_function("parse_build_memory", |b| {
        b.iter(|| {
            let store = MemoryStore::new(HashProfile::Blake3);
            let (root, n) = import::import_new(&data[..], &schema, &null, &store).unwrap();
            assert_eq!(n as u64, ROWS);
            black_box(root)
        })
    });

    g.bench_function("parse_build_commit_file", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| import_into_file(&data, &schema, false))
                .sum()
        })
    });
    g.bench_function("commit_only_file", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| import_into_file(&data, &schema, true))
                .sum()
        })
    });

    // The floor: the chunk file's size in plain sequential writes plus one fsync.
    let file_len = chunk_file_len(&data, &schema, &null);
    let bytes: Vec<u8> = (0..file_len).map(|i| (i as u8) ^ (i >> 12) as u8).collect();
    g.bench_function("raw_write_fsync", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let dir = tempfile::tempdir().unwrap();
                let t = Instant::now();
                let mut f = std::fs::File::create_new(dir.path().join("raw")).unwrap();
                for piece in bytes.chunks(1 << 20) {
                    f.write_all(piece).unwrap();
                }
                f.sync_all().unwrap();
                total += t.elapsed();
            }
            total
        })
    });
    g.finish();
}

/// The size of the chunk file the import commits.
fn chunk_file_len(data: &[u8], schema: &MapSchema, null: &NullText) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let mut store = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let (root, _) = import::import_new(data, schema, null, &store).unwrap();
    store
        .commit(&[RootUpdate::new("t", None, Some(root))])
        .unwrap();
    let mut len = 0;
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let e = e.unwrap();
        if e.file_name().to_string_lossy().ends_with(".chunks") {
            len += e.metadata().unwrap().len() as usize;
        }
    }
    len
}

criterion_group!(benches, bench_import);
criterion_main!(benches);
