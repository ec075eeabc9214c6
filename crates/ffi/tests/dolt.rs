//! The Dolt part of the C ABI, checked from C: `tests/c/test_dolt.c` is compiled against this
//! crate's static library and run over the golden Dolt database (`dolt-db/vecdb` of the
//! vectors), comparing branches, log, tables, schemas, typed rows and CSV exports with what the
//! `dolt` CLI printed.

use std::path::PathBuf;
use std::process::Command;

mod common;
use common::workspace;

/// The vectors directory: `$PROLLY_VECTORS`, else `<workspace>/../shared/vectors`.
fn vectors() -> Option<PathBuf> {
    let dir = std::env::var_os("PROLLY_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/vectors"));
    dir.join("dolt-db/vecdb/.dolt").is_dir().then_some(dir)
}

#[test]
fn c_reads_a_real_dolt_database() {
    let Some(vectors) = vectors() else {
        if std::env::var("PROLLY_ALLOW_MISSING_VECTORS").as_deref() == Ok("1") {
            println!("SKIPPED: vectors not found");
            return;
        }
        panic!(
            "vectors not found: set PROLLY_VECTORS or put them at ../shared/vectors \
             (PROLLY_ALLOW_MISSING_VECTORS=1 skips)"
        );
    };
    let out_dir = tempfile::tempdir().expect("temp dir");
    let bin = common::compile_c_test("test_dolt", out_dir.path());
    let out = Command::new(&bin)
        .arg(&vectors)
        .env("TMPDIR", out_dir.path())
        .output()
        .expect("run test_dolt");
    assert!(
        out.status.success(),
        "test_dolt failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
}
