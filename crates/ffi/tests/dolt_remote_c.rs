//! `tests/c/dolt_remote/test_dolt_clone.c`, compiled against the static library built with the
//! `dolt-remote` feature and run: `prolly_dolt_clone` from C.
//!
//! Always: a `file://` remote that is a Dolt-made database's store (the golden vectors'
//! `vecdb`: a manifest and table files, which is what a `file://` remote holds), cloned and a
//! table exported, compared with `dolt sql -r csv`'s output recorded in the vectors. With
//! `PROLLY_DOLT` set: a `file://` remote written by `dolt push` (Dolt 2.3.1 writes archives
//! there), cloned from C, then `dolt log`, `dolt fsck` and `dolt sql -r csv` run in the clone
//! and compared with the source's.
#![cfg(feature = "dolt-remote")]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn run_c(bin: &Path, args: &[&str]) {
    let out = Command::new(bin).args(args).output().expect("run");
    assert!(
        out.status.success(),
        "test_dolt_clone {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn c_clones_a_file_remote_of_dolt_made_data() {
    let tmp = tempfile::tempdir().expect("tmp");
    let lib = common::static_lib_with(Some("dolt-remote"));
    let bin = common::compile_c_test_with("dolt_remote/test_dolt_clone", tmp.path(), &lib);
    let noms = prollystore_test_vectors::require("dolt-db/vecdb/.dolt/noms");
    let vectors = prollystore_test_vectors::dir();
    let url = format!("file://{}", noms.display());
    let dir = tmp.path().join("clone");
    let expected = vectors.join("dolt-db/vecdb.expected/main/items.csv");
    run_c(
        &bin,
        &[
            &url,
            dir.to_str().unwrap(),
            "main",
            "items",
            expected.to_str().unwrap(),
        ],
    );
}

fn dolt(bin: &Path, home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "dolt {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn c_clones_what_dolt_pushed_and_dolt_reads_the_clone() {
    let Some(dolt_bin) = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty()) else {
        eprintln!("SKIPPED: set PROLLY_DOLT to a dolt binary to run the C clone against dolt push");
        return;
    };
    let dolt_bin = PathBuf::from(dolt_bin);
    let tmp = tempfile::tempdir().expect("tmp");
    let home = tmp.path().join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"C Bot","user.email":"c@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    let src = tmp.path().join("src");
    std::fs::create_dir_all(&src).unwrap();
    let d = |dir: &Path, args: &[&str]| dolt(&dolt_bin, &home, dir, args);
    d(&src, &["init"]);
    let mut sql = String::from(
        "create table t (id int primary key, name varchar(40), v double); insert into t values ",
    );
    let rows: Vec<String> = (0..3000)
        .map(|i| format!("({i}, 'name-{i}', {})", i as f64 / 7.0))
        .collect();
    sql.push_str(&rows.join(","));
    d(&src, &["sql", "-q", &sql]);
    d(&src, &["commit", "-Am", "rows"]);
    d(&src, &["sql", "-q", "update t set v = -v where id % 3 = 0"]);
    d(&src, &["commit", "-Am", "negated"]);
    let remote = tmp.path().join("remote");
    let url = format!("file://{}", remote.display());
    d(&src, &["remote", "add", "origin", &url]);
    d(&src, &["push", "origin", "main"]);
    let expected = tmp.path().join("t.csv");
    std::fs::write(
        &expected,
        d(
            &src,
            &["sql", "-r", "csv", "-q", "select * from t order by id"],
        ),
    )
    .unwrap();

    let lib = common::static_lib_with(Some("dolt-remote"));
    let bin = common::compile_c_test_with("dolt_remote/test_dolt_clone", tmp.path(), &lib);
    let dir = tmp.path().join("clone");
    run_c(
        &bin,
        &[
            &url,
            dir.to_str().unwrap(),
            "main",
            "t",
            expected.to_str().unwrap(),
        ],
    );
    assert_eq!(
        d(&dir, &["log", "--oneline"]),
        d(&src, &["log", "--oneline"])
    );
    d(&dir, &["fsck"]);
    assert_eq!(
        d(
            &dir,
            &["sql", "-r", "csv", "-q", "select * from t order by id"]
        ),
        std::fs::read_to_string(&expected).unwrap()
    );
}

#[test]
fn c_pushes_fetches_and_pulls() {
    let tmp = tempfile::tempdir().expect("tmp");
    let lib = common::static_lib_with(Some("dolt-remote"));
    let bin = common::compile_c_test_with("dolt_remote/test_dolt_push", tmp.path(), &lib);
    let src = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    let remote = tmp.path().join("remote");
    let url = format!("file://{}", remote.display());
    prollystore_dolt_remote::remote_add(&src, "origin", &url).unwrap();
    let out = Command::new(&bin)
        .args([
            src.to_str().unwrap(),
            &url,
            tmp.path().join("clone").to_str().unwrap(),
            "items",
        ])
        .output()
        .expect("run");
    assert!(
        out.status.success(),
        "test_dolt_push failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
}
