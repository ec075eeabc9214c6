//! A one-row diff between two commits of a 1M-row Dolt table (`prollystore_dolt::table_diff`),
//! read from the chunk journal with the database already open.
//!
//! Needs the database made by `scripts/make_dolt_bench_db.sh` (in `target/dolt-bench/diff1m`,
//! or `PROLLY_DOLT_DIFF_BENCH=DBDIR`): table `t`, commits `HEAD~1` and `HEAD` one updated row
//! apart. Without it the benchmark prints how to make it and skips.
//!
//! * `from_revisions`: everything from the revision names on — resolving `HEAD~1` and `HEAD`,
//!   reading both commits, root values and table chunks, decoding both schemas — then the map
//!   diff and decoding the changed row on both sides.
//! * `from_branches`: the same from names that need no `repo_state.json` read (`HEAD` does):
//!   a branch `base` at the first commit and `main`.
//! * `from_tables`: from the two tables already opened (`DiffSide`s, cloned outside the
//!   timing): pinning both embedded roots (hashing them for their addresses), the key order
//!   and decode plans, the map diff, decoding the changed row.
//! * `rows`: the map diff and the decoding alone, on a `TableDiff` already made.
//! * `map_diff`: the raw diff of the two clustered indexes (entries, nothing decoded).

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use prollystore_dolt::table_diff::{DiffSide, TableDiff};
use prollystore_dolt::Database;

fn database_dir() -> Option<PathBuf> {
    let dir = match std::env::var("PROLLY_DOLT_DIFF_BENCH") {
        Ok(d) => PathBuf::from(d),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/dolt-bench/diff1m"),
    };
    dir.join(".dolt").is_dir().then_some(dir)
}

fn bench(c: &mut Criterion) {
    let Some(dir) = database_dir() else {
        eprintln!(
            "dolt_diff: skipped, no database; make it with scripts/make_dolt_bench_db.sh \
             (or set PROLLY_DOLT_DIFF_BENCH=DBDIR)"
        );
        return;
    };
    let db = Database::open(&dir).unwrap();
    let mut group = c.benchmark_group("dolt_diff_1m");
    let diff = TableDiff::new(&db, "HEAD~1", "HEAD", "t").unwrap();
    assert_eq!(
        diff.rows().unwrap().count(),
        1,
        "the two commits differ in one row"
    );
    group.bench_function("from_revisions", |b| {
        b.iter(|| {
            let d = TableDiff::new(&db, black_box("HEAD~1"), black_box("HEAD"), "t").unwrap();
            let n = d.rows().unwrap().map(Result::unwrap).count();
            black_box(n)
        })
    });
    if db.branch_head("base").is_ok() {
        group.bench_function("from_branches", |b| {
            b.iter(|| {
                let d = TableDiff::new(&db, black_box("base"), black_box("main"), "t").unwrap();
                black_box(d.rows().unwrap().map(Result::unwrap).count())
            })
        });
    }
    let sides = (
        DiffSide::resolve(&db, "HEAD~1", "t").unwrap(),
        DiffSide::resolve(&db, "HEAD", "t").unwrap(),
    );
    group.bench_function("from_tables", |b| {
        b.iter_batched(
            || sides.clone(),
            |(from, to)| {
                let d = TableDiff::from_sides(&db, from, to).unwrap();
                black_box(d.rows().unwrap().map(Result::unwrap).count())
            },
            BatchSize::SmallInput,
        )
    });
    group.bench_function("rows", |b| {
        b.iter(|| black_box(diff.rows().unwrap().map(Result::unwrap).count()))
    });
    let (from, to) = (
        db.table_at("HEAD~1", Default::default(), "t").unwrap(),
        db.table_at("HEAD", Default::default(), "t").unwrap(),
    );
    let (from, to) = (from.primary_map(&db).unwrap(), to.primary_map(&db).unwrap());
    group.bench_function("map_diff", |b| {
        b.iter(|| black_box(from.diff(&to).unwrap().count()))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
