//! The Dolt part of the C ABI, checked from C: `tests/c/test_dolt.c` is compiled against this
//! crate's static library and run over the golden Dolt database (`dolt-db/vecdb` of the
//! vectors), comparing branches, log, tables, schemas, typed rows and CSV exports with what the
//! `dolt` CLI printed; and range scans with NULL bounds over `crates/dolt/tests/data/null_keys`.

#![cfg(feature = "dolt")]

use std::process::Command;

mod common;

#[test]
fn c_reads_a_real_dolt_database() {
    let vectors = prollystore_test_vectors::dir();
    prollystore_test_vectors::require("dolt-db/vecdb/.dolt");
    let out_dir = tempfile::tempdir().expect("temp dir");
    let bin = common::compile_c_test("test_dolt", out_dir.path());
    let null_keys =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dolt/tests/data/null_keys");
    let out = Command::new(&bin)
        .arg(vectors)
        .arg(&null_keys)
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
