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
    common::run_c(
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

/// A throwaway HOME under `root` with Dolt's global config.
fn dolt_home(root: &Path) -> PathBuf {
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"C Bot","user.email":"c@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    home
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
    let home = dolt_home(tmp.path());
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
    common::run_c(
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

/// `tests/c/dolt_remote/test_dolt_push.c`: push, clone, fetch (with prune) and pull from C on a
/// copy of the vectors' Dolt-made `vecdb` and a new `file://` remote. With `PROLLY_DOLT`: `dolt
/// clone` of what C pushed shows the same head and passes `dolt fsck`; a commit Dolt pushes
/// there is what C's pull brings into our clone.
#[test]
fn c_pushes_fetches_and_pulls() {
    use prollystore_dolt::write::clone_target::{set_tracking_refs, tracking_refs};
    let tmp = tempfile::tempdir().expect("tmp");
    let lib = common::static_lib_with(Some("dolt-remote"));
    let bin = common::compile_c_test_with("dolt_remote/test_dolt_push", tmp.path(), &lib);
    let src = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    let remote = tmp.path().join("remote");
    let url = format!("file://{}", remote.display());
    prollystore_dolt_remote::remote_add(&src, "origin", &url).unwrap();
    let clone = tmp.path().join("clone");
    let clone_s = clone.to_str().unwrap();
    common::run_c(&bin, &[src.to_str().unwrap(), &url, clone_s, "items"]);
    let head = |dir: &Path| {
        let db = prollystore_dolt::Database::open(dir).unwrap();
        db.resolve("main").unwrap().to_string()
    };
    assert_eq!(head(&clone), head(&src));

    // A tracking ref of a branch the remote lacks: the pruning fetch removes it.
    let main = prollystore_dolt::Database::open(&clone)
        .unwrap()
        .resolve("main")
        .unwrap();
    set_tracking_refs(&clone, "origin", &[("gone".to_string(), main)], 1).unwrap();
    common::run_c(&bin, &["pull", clone_s]);
    let left: Vec<String> = tracking_refs(&clone, "origin")
        .unwrap()
        .into_iter()
        .map(|(b, _)| b)
        .collect();
    assert_eq!(left, ["main"]);

    let Some(dolt_bin) = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty()) else {
        eprintln!("SKIPPED: set PROLLY_DOLT to check C's push and pull against dolt");
        return;
    };
    let dolt_bin = PathBuf::from(dolt_bin);
    let home = dolt_home(tmp.path());
    let d = |dir: &Path, args: &[&str]| dolt(&dolt_bin, &home, dir, args);
    let theirs = tmp.path().join("theirs");
    d(tmp.path(), &["clone", &url, theirs.to_str().unwrap()]);
    assert_eq!(
        d(&theirs, &["log", "-n", "1", "--oneline"])
            .split_whitespace()
            .next(),
        Some(head(&src).as_str())
    );
    d(&theirs, &["fsck"]);
    d(&theirs, &["sql", "-q", "delete from items limit 1"]);
    d(&theirs, &["commit", "-am", "from dolt"]);
    d(&theirs, &["push", "origin", "main"]);
    common::run_c(&bin, &["pull", clone_s]);
    assert_eq!(head(&clone), head(&theirs));
    // (`payload` is binary: the text columns and a digest of the rest.)
    let q =
        "select id, u, name, descr, price, color, md5(payload), md5(meta) from items order by id";
    assert_eq!(
        d(&clone, &["sql", "-r", "csv", "-q", q]),
        d(&theirs, &["sql", "-r", "csv", "-q", q])
    );
    d(&clone, &["fsck"]);
}
