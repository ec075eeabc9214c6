//! Writing a Dolt database in process: one row updated and committed (`DoltWriter::update` +
//! `DoltWriter::commit`, the journal fsync'd) on the 1M-row table `t` that
//! `scripts/dolt_bench_db.sh` makes with the real Dolt. The target is at most 2 ms per
//! update + commit.
//!
//! The database (default `target/dolt-bench-1m`; `PROLLY_DOLT_WRITE_DB=DIR` for another) is
//! copied into a temporary folder first (set `TMPDIR` to a folder on disk: the fsync is part
//! of the figure). Without it the bench prints how to make it and measures nothing.

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, Criterion};
use prollystore_dolt::write::{CommitMeta, DoltWriter};
use prollystore_dolt::SqlValue;

fn db_dir() -> PathBuf {
    match std::env::var_os("PROLLY_DOLT_WRITE_DB") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/dolt-bench-1m"),
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.file_type().expect("type").is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}

fn bench(c: &mut Criterion) {
    let dir = db_dir();
    if !dir.join(".dolt").is_dir() {
        eprintln!(
            "dolt_write: skipped, no Dolt database at {} (make it with \
             `DOLT=/path/to/dolt scripts/dolt_bench_db.sh`, or set PROLLY_DOLT_WRITE_DB)",
            dir.display()
        );
        return;
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    copy_dir(&dir.join(".dolt"), &tmp.path().join(".dolt"));
    let mut w = DoltWriter::open(tmp.path()).expect("open for writing");
    let mut n: i64 = 0;
    let mut g = c.benchmark_group("dolt_write");
    g.sample_size(30);
    g.bench_function("update_one_row_and_commit_1m", |b| {
        b.iter(|| {
            n += 1;
            // Ids are i * 7 + 3 (scripts/dolt_bench_db.sh); spread the updates over the table.
            let id = (n * 7919 % 1_000_000) * 7 + 3;
            w.update(
                "t",
                &["id", "qty"],
                &[vec![Some(SqlValue::Int(id)), Some(SqlValue::Int(n))]],
            )
            .expect("update");
            w.commit(&CommitMeta {
                message: format!("update {n}"),
                author_name: "Bench".into(),
                author_email: "bench@example.com".into(),
                author_millis: 1_700_000_000_000 + n,
                committer: None,
                committer_millis: None,
            })
            .expect("commit")
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
