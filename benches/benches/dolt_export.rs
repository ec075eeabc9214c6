//! CSV export of a Dolt table (`prollystore_dolt::csv_export::export_csv`) into a reused in-memory
//! buffer, in rows per second.
//!
//! By default it exports every table of the golden database `dolt-db/vecdb` (branch `main`) of
//! the vectors (`PROLLY_VECTORS`, else the repository's copy). Set
//! `PROLLY_DOLT_BENCH=DBDIR:BRANCH:TABLE` to bench a large database of your own instead (e.g. a
//! 1M-row table made with `dolt table import`); compare against `dolt sql -r csv` outside criterion (`prolly dolt DBDIR export -q TABLE`
//! against `dolt sql -r csv -q "select * from TABLE"`, alternating runs). Each table is
//! exported with the per-chunk address checks on (the default) and off.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::Database;

/// (database dir, branch, tables to export).
fn targets() -> Vec<(PathBuf, String, String)> {
    if let Ok(spec) = std::env::var("PROLLY_DOLT_BENCH") {
        let mut parts = spec.rsplitn(3, ':');
        let table = parts.next().unwrap_or_default().to_string();
        let branch = parts.next().unwrap_or("main").to_string();
        let dir = PathBuf::from(parts.next().unwrap_or("."));
        return vec![(dir, branch, table)];
    }
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let db = Database::open(&dir).unwrap_or_else(|e| {
        panic!(
            "cannot open {} ({e}); set PROLLY_VECTORS or PROLLY_DOLT_BENCH",
            dir.display()
        )
    });
    let head = db.branch_head("main").unwrap();
    let root = db.root_value(db.commit(head).unwrap().root).unwrap();
    root.tables
        .iter()
        .map(|(name, _)| (dir.clone(), "main".to_string(), name.clone()))
        .filter(|(_, _, name)| !name.starts_with('\0'))
        .collect()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("dolt_export");
    group.sample_size(10);
    for (dir, branch, table) in targets() {
        let db = Database::open(&dir).unwrap();
        let root = match db.working_set(&branch).unwrap() {
            Some(ws) => ws.working_root,
            None => db.commit(db.resolve(&branch).unwrap()).unwrap().root,
        };
        let root = db.root_value(root).unwrap();
        let t = db.table(&root, &table).unwrap();
        let mut out = Vec::new();
        let Ok(rows) = export_csv(&db, &t, &mut out) else {
            continue; // tables the exporter does not support (e.g. virtual columns)
        };
        group.throughput(Throughput::Elements(rows.max(1)));
        group.bench_function(format!("csv/{table}"), |b| {
            b.iter(|| {
                out.clear();
                black_box(export_csv(&db, &t, &mut out).unwrap());
            })
        });
        // The same with the per-chunk SHA-512 address checks off (CRC-32C still checked):
        // what the checks cost.
        let unchecked = Database::open(&dir).unwrap().with_verify_hashes(false);
        group.bench_function(format!("csv_no_hash_check/{table}"), |b| {
            b.iter(|| {
                out.clear();
                black_box(export_csv(&unchecked, &t, &mut out).unwrap());
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
