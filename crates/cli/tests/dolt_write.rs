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

/// A large file without quotes is read in two halves (the second on another thread): the
/// same table and commit as the same rows read in one stream (one quoted field keeps a file
/// in one stream), and the same first error wherever the bad rows are.
#[test]
fn a_file_read_in_two_halves_imports_and_fails_as_in_one() {
    let base = prollystore_test_vectors::require("dolt-write/basic");
    let tmp = tempfile::tempdir().unwrap();
    let create = "CREATE TABLE big (id INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL, \
                  qty SMALLINT, price DECIMAL(8,2), KEY (qty))";
    let n = 60_000;
    let lines = |bad: &dyn Fn(usize) -> Option<String>| -> Vec<String> {
        (0..n)
            .map(|i| {
                bad(i).unwrap_or_else(|| {
                    format!("{},name-{},{},{}.{:02}", i * 2, i, i % 300, i % 999, i % 7)
                })
            })
            .collect()
    };
    // `quoted`: the first row's name in quotes (the same value).
    let write = |name: &str, rows: &[String], quoted: bool| -> PathBuf {
        let mut text = String::from("id,name,qty,price\n");
        for (i, r) in rows.iter().enumerate() {
            if i == 0 && quoted {
                text.push_str(&r.replacen(",name-0,", ",\"name-0\",", 1));
            } else {
                text.push_str(r);
            }
            text.push('\n');
        }
        assert!(text.len() > 1 << 20);
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let dbs = std::cell::Cell::new(0);
    let import = |file: &Path| -> (Output, PathBuf) {
        dbs.set(dbs.get() + 1);
        let db = tmp.path().join(format!("db{}", dbs.get()));
        copy_tree(&base.join("before"), &db);
        let o = run(
            &db,
            &["import", "big", file.to_str().unwrap(), "--create", create],
        );
        (o, db)
    };
    let good = lines(&|_| None);
    let mut commits = Vec::new();
    for quoted in [false, true] {
        let (o, db) = import(&write("good.csv", &good, quoted));
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let o = run(
            &db,
            &[
                "commit",
                "-m",
                "big",
                "--author",
                "A <a@b.c>",
                "--date",
                "2024-01-05",
            ],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        commits.push(run(&db, &["log", "--oneline"]).stdout);
    }
    assert_eq!(commits[0], commits[1]);
    // Bad rows: a value out of range late in the file; a short record late and a bad value
    // early; a short record early and a bad value late; a price to round (taken by the
    // general path) before a bad value in the second half.
    let cases: [&dyn Fn(usize) -> Option<String>; 4] = [
        &|i| (i == 45_000).then(|| "90000,x,99999,1.00".to_string()),
        &|i| match i {
            50_000 => Some("1,2".into()),
            10_000 => Some("20000,x,abc,1.00".into()),
            _ => None,
        },
        &|i| match i {
            5_000 => Some("1,2".into()),
            40_000 => Some("80000,x,abc,1.00".into()),
            _ => None,
        },
        &|i| match i {
            31_000 => Some("62000,x,1,1.005".into()),
            52_000 => Some("104000,,1,1.00".into()),
            _ => None,
        },
    ];
    for (k, bad) in cases.iter().enumerate() {
        let rows = lines(bad);
        let mut errors = Vec::new();
        for quoted in [false, true] {
            let file = write(&format!("bad{k}.csv"), &rows, quoted);
            let (o, _) = import(&file);
            assert_eq!(o.status.code(), Some(1), "case {k}");
            errors.push(String::from_utf8_lossy(&o.stderr).into_owned());
        }
        assert_eq!(errors[0], errors[1], "case {k}");
    }
}

/// A header naming a column twice takes the first field and says so, as `dolt table import`
/// does ("Extra columns in import file:" then the name, on stdout); errors name the line of
/// the file their record starts on (header = line 1), for bad values as for bad CSV. Dolt
/// says "on line N" for the same rows (it counts records, so the two agree while no quoted
/// field spans lines; ours is the line an editor shows).
#[test]
fn duplicate_header_columns_and_error_lines() {
    let base = prollystore_test_vectors::require("dolt-write/basic");
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    copy_tree(&base.join("before"), &db);
    let create = "CREATE TABLE u (id INT PRIMARY KEY, name VARCHAR(10), js JSON)";
    let file = |name: &str, text: &str| -> String {
        let p = tmp.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_str().unwrap().to_string()
    };
    let dup = file(
        "dup.csv",
        "id,name,NAME,js\n1,first,second,\"{\"\"b\"\": 1, \"\"a\"\": 2}\"\n",
    );
    let o = run(&db, &["import", "u", &dup, "--create", create]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.starts_with("Extra columns in import file:\n\tNAME\n"),
        "{out}"
    );
    let o = run(
        &db,
        &[
            "commit",
            "-m",
            "u",
            "--author",
            "A <a@b.c>",
            "--date",
            "2024-01-05",
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&db, &["export", "u"]);
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "id,name,js\n1,first,\"{\"\"a\"\":2,\"\"b\"\":1}\"\n"
    );
    let before = snapshot(&db);
    for (name, text, want) in [
        (
            "json.csv",
            "id,js\n3,1\n4,{oops\n5,2\n",
            "line 3: table \"u\", column \"js\"",
        ),
        (
            "long.csv",
            "id,name\n3,a\n4,\"x\ny\"\n5,12345678901\n",
            "line 5: table \"u\", column \"name\"",
        ),
        (
            "width.csv",
            "id,name\n3,a\n5,\"1\n2\",\"3\"\n",
            "line 3: 3 fields for 2 columns",
        ),
        (
            "quote.csv",
            "id,name\n3,a\n4,\"x\n",
            "line 3: a quoted field that does not end",
        ),
        (
            "stray.csv",
            "id,name\n3,a\n4,x\"y\n",
            "line 3: a quote inside an unquoted field",
        ),
    ] {
        let o = run(&db, &["import", "u", &file(name, text)]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}: {err}");
        assert!(err.contains(&format!("{name}: {want}")), "{name}: {err}");
    }
    assert!(snapshot(&db) == before, "a rejected import wrote something");
}

/// A malformed statement is reported as bad input with the parser's reason (once), a clause
/// Dolt takes but this library does not as unsupported; neither writes anything.
#[test]
fn bad_sql_and_unsupported_clauses_say_which() {
    let base = prollystore_test_vectors::require("dolt-write/basic");
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    copy_tree(&base.join("before"), &db);
    let before = snapshot(&db);
    let o = run(&db, &["alter", "ALTER TABLE items FROB"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: ALTER TABLE: cannot parse"), "{err}");
    assert!(!err.contains("unsupported"), "{err}");
    // The statement once, the parser's message at most once more: the source is not repeated.
    assert!((1..=2).contains(&err.matches("FROB").count()), "{err}");
    assert!(
        snapshot(&db) == before,
        "a refused statement wrote something"
    );
    let after = tmp.path().join("after");
    copy_tree(&base.join("after"), &after);
    let before = snapshot(&after);
    let o = run(
        &after,
        &["alter", "ALTER TABLE items ADD FULLTEXT INDEX ft (name)"],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.starts_with("error: unsupported: "), "{err}");
    assert!(
        snapshot(&after) == before,
        "a refused statement wrote something"
    );
}
