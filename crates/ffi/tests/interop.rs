//! A map written with the Rust API is read by a C program, and a map written by the C program
//! is read with the Rust API: both through file stores on disk. The C program is
//! `tests/c/interop.c`, compiled here with the system C compiler against this crate's static
//! library.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use prollystore::format::tuple::{Tuple, TupleBuilder, TupleDesc, Type};
use prollystore::format::{Encoding, HashProfile};
use prollystore::store::{FileStore, RootUpdate};
use prollystore::tuples::TupleSchema;
use prollystore::Map;

const ROWS: i64 = 4000;

fn schema() -> TupleSchema {
    TupleSchema::new(
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
        TupleDesc::new(vec![
            Type::not_null(Encoding::String),
            Type::not_null(Encoding::Float64),
        ]),
    )
}

/// Compiles tests/c/interop.c against the static library.
fn compile_c(out_dir: &Path) -> PathBuf {
    common::compile_c_test("interop", out_dir)
}

fn run_c(bin: &Path, args: &[&str]) {
    let out = Command::new(bin).args(args).output().expect("run interop");
    assert!(
        out.status.success(),
        "interop {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn write_rust(dir: &Path, root: &str, prefix: &str) {
    let schema = schema();
    let mut store = FileStore::create(dir, HashProfile::Dolt).expect("create store");
    let mut kb = TupleBuilder::new(schema.key.clone());
    let mut vb = TupleBuilder::new(schema.value.clone());
    let mut rows = Vec::new();
    for i in 0..ROWS {
        kb.put_int64(0, i).unwrap();
        let k = kb.build().unwrap().as_bytes().to_vec();
        vb.put_string(0, &format!("{prefix}-{i}")).unwrap();
        vb.put_float64(1, i as f64 * 0.5).unwrap();
        let v = vb.build().unwrap().as_bytes().to_vec();
        rows.push((k, v));
    }
    let map = Map::from_sorted(&store, schema, rows.iter().map(|(k, v)| (&k[..], &v[..])))
        .expect("build map");
    let root_addr = map.root();
    let old = store.root(root);
    store
        .commit(&[RootUpdate::new(root, old, Some(root_addr))])
        .expect("commit");
}

fn check_rust(dir: &Path, root: &str, prefix: &str) {
    let schema = schema();
    let store = FileStore::open(dir).expect("open store");
    let addr = store.root(root).expect("root written by C");
    let map = Map::new(&store, addr, schema.clone());
    assert_eq!(map.count().unwrap(), ROWS as u64);
    let mut i = 0i64;
    for row in map.iter().unwrap() {
        let (k, v) = row.unwrap();
        let (k, v) = (Tuple::new(k).unwrap(), Tuple::new(v).unwrap());
        assert_eq!(schema.key.get_int64(k, 0).unwrap(), Some(i));
        let want = format!("{prefix}-{i}");
        assert_eq!(schema.value.get_string(v, 0).unwrap(), Some(want.as_str()));
        assert_eq!(
            schema.value.get_float64(v, 1).unwrap(),
            Some(i as f64 * 0.5)
        );
        i += 1;
    }
    assert_eq!(i, ROWS);
    store.verify().expect("verify");
}

#[test]
fn c_reads_rust_and_rust_reads_c() {
    let tmp = tempfile::tempdir().unwrap();
    let bin = compile_c(tmp.path());
    let dir = tmp.path().join("store");
    let d = dir.to_str().unwrap();
    let n = ROWS.to_string();

    // Rust writes, C reads.
    write_rust(&dir, "from-rust", "rust-row");
    run_c(&bin, &["check", d, "from-rust", "rust-row", &n]);

    // C writes (into the same store), Rust reads; the Rust map is still intact.
    run_c(&bin, &["write", d, "from-c", "c-row", &n]);
    check_rust(&dir, "from-c", "c-row");
    check_rust(&dir, "from-rust", "rust-row");

    // The same rows from both sides give the same tree (same bytes, same root).
    run_c(&bin, &["write", d, "c-same", "rust-row", &n]);
    let store = FileStore::open(&dir).unwrap();
    assert_eq!(store.root("c-same"), store.root("from-rust"));
}
