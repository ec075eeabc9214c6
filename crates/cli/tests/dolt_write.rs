//! `prolly dolt DBDIR import` and `commit` end to end on a copy of a Dolt-made database: the
//! `basic` write scenario's final table imported from Dolt's own CSV export reads back
//! identically, and a rejected import changes no byte of the database.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_prolly");

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::write(&target, std::fs::read(entry.path()).unwrap()).unwrap();
        }
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn run(db: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("dolt")
        .arg(db)
        .args(args)
        .env("HOME", db.parent().unwrap())
        .output()
        .expect("run prolly")
}

#[test]
fn import_and_commit_read_back_and_bad_rows_write_nothing() {
    let base = prollystore_test_vectors::require("dolt-write/basic");
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    copy_tree(&base.join("before"), &db);
    let csv = base.join("expected/branch/main/items.csv");
    let create = "CREATE TABLE items ( id INT NOT NULL PRIMARY KEY, name VARCHAR(30) NOT NULL, \
                  qty INT, price DECIMAL(10,2), added DATETIME)";
    let o = run(
        &db,
        &["import", "items", csv.to_str().unwrap(), "--create", create],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(
        &db,
        &[
            "commit",
            "-m",
            "Import",
            "--author",
            "Vector Bot <bot@example.com>",
            "--date",
            "2024-01-05",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&db, &["export", "items"]);
    assert!(o.status.success());
    assert!(
        o.stdout == std::fs::read(&csv).unwrap(),
        "rows read back differ"
    );
    let o = run(&db, &["log", "--oneline"]);
    let log = String::from_utf8(o.stdout).unwrap();
    assert!(log.lines().next().unwrap().ends_with(" Import"), "{log}");
    // Nothing left to commit.
    let o = run(&db, &["commit", "-m", "again"]);
    assert_eq!(o.status.code(), Some(1));
    // A NULL in a NOT NULL column: an error naming it, and not one byte changed.
    let before = snapshot(&db);
    let bad = tmp.path().join("bad.csv");
    std::fs::write(&bad, "id,name\n5,x\n6,\n").unwrap();
    let o = run(&db, &["import", "items", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("\"name\"") && err.contains("NOT NULL"),
        "{err}"
    );
    assert!(snapshot(&db) == before, "a rejected import wrote something");
}
