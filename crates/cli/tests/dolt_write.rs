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
            "id,name\n3,a\n4,\"x\"y\n",
            "line 3: text after a closing quote",
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

/// Runs the `dolt` that `PROLLY_DOLT` names in `dir` (throwaway HOME, UTC), if set; whether
/// it succeeded.
fn dolt(dir: &Path, args: &[&str]) -> Option<bool> {
    let bin = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty())?;
    let home = dir.parent().unwrap().join("dolt-home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"Vector Bot","user.email":"bot@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    let o = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", &home)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    if !o.status.success() {
        eprintln!("dolt {args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
    Some(o.status.success())
}

/// The working set's table addresses of the Dolt database at `dir`.
fn working_tables(dir: &Path) -> BTreeMap<String, String> {
    let db = prollystore_sql::open(dir).unwrap();
    let root = db
        .root_at("main", prollystore_dolt::db::State::Working)
        .unwrap();
    root.tables
        .iter()
        .map(|(t, a)| (t.clone(), a.to_string()))
        .collect()
}

/// Crafted CSV: whitespace before fields (space, tab, VT, FF, CR, NBSP, EM SPACE, IDEOGRAPHIC
/// SPACE), fields of only spaces, spaces before a quote, inside quotes and after values,
/// header names padded, empty lines, CRLF lines and CRLF inside quotes, a lone CR, a quote
/// inside an unquoted field, a byte-order mark (not whitespace).
fn whitespace_csv() -> Vec<u8> {
    let mut t: Vec<u8> = b" id ,\ta,b , n,d\r\n".to_vec();
    let rows: [&[u8]; 14] = [
        b"1,  lead,trail  ,3,1.5\n",
        b"2,\tx, \"q\",4,2\n",
        b"3,\" in\",  ,5,  \n",
        b"4,\xc2\xa0nb,x, 6,\xe2\x80\x831.25\n",
        b" 5,x,y,7 ,1.5 \n",
        b"\n",
        b"6,a\"b,c,8,0\r\n",
        b"\r\n",
        b"7,\x0b\x0cv,\xe3\x80\x80w,9,0\n",
        b"8,\xef\xbb\xbfz,\r y,1,0\n",
        b"9,\"x\r\ny\", \"\"\"q\"\" \",2,0\n",
        b"10,a\rb,\"\",3,0\n",
        b"11, \t ,\" \",4,0\n",
        b"12,end,  z  ,5,9.99",
    ];
    for r in rows {
        t.extend_from_slice(r);
    }
    t
}

/// Many rows without quotes (more than 1 MiB, so read in two halves), with leading and
/// trailing whitespace drawn from a fixed sequence.
fn whitespace_csv_large() -> Vec<u8> {
    let pads = ["", " ", "  ", "\t", " \t ", "\u{a0}", "\u{3000}"];
    let mut t = String::from("id,a,b,n,d\n");
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    for i in 0..40_000u32 {
        let mut pad = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pads[(x % pads.len() as u64) as usize]
        };
        let (p1, p2, p3, p4, p5) = (pad(), pad(), pad(), pad(), pad());
        t.push_str(&format!(
            "{p1}{i},{p2}name {i}{p3},{p4}{}{p5},{p1}{},{p2}{}.{:02}\n",
            i % 97,
            i % 1000,
            i % 9999,
            i % 100
        ));
        if i % 5000 == 0 {
            t.push('\n');
        }
    }
    t.into_bytes()
}

/// Table hashes Dolt 2.3.1 made with `dolt table import -u` of [`whitespace_csv`] (table
/// `sp`) and [`whitespace_csv_large`] (table `sl`) into the `basic` scenario's `before`
/// database, each table created first by `dolt sql -q` with its CREATE TABLE (printed by
/// `csv_whitespace_is_read_as_dolt_reads_it` with `PROLLY_DOLT` set).
const DOLT_WHITESPACE_TABLES: [(&str, &str); 2] = [
    ("sl", "5lou5kfe9shj8meue3eqjo83n2jvorq9"),
    ("sp", "bir6n6m94v69nkq8vo28l1iua48hc7vt"),
];

/// `prolly dolt DB import` reads whitespace around and inside CSV fields as `dolt table
/// import` does: the same tables as Dolt's import of the same files (live with `PROLLY_DOLT`,
/// else the hashes Dolt made); one file is read in two halves. A closing quote followed by
/// other text is refused, as Dolt refuses it.
#[test]
fn csv_whitespace_is_read_as_dolt_reads_it() {
    let base = prollystore_test_vectors::require("dolt-write/basic");
    let tmp = tempfile::tempdir().unwrap();
    let create = |t: &str| {
        format!(
            "CREATE TABLE {t} (id INT PRIMARY KEY, a VARCHAR(40), b VARCHAR(40), n INT, \
             d DECIMAL(6,2))"
        )
    };
    let files = [
        ("sp", tmp.path().join("sp.csv"), whitespace_csv()),
        ("sl", tmp.path().join("sl.csv"), whitespace_csv_large()),
    ];
    let ours = tmp.path().join("ours");
    copy_tree(&base.join("before"), &ours);
    for (t, path, text) in &files {
        std::fs::write(path, text).unwrap();
        let o = run(
            &ours,
            &["import", t, path.to_str().unwrap(), "--create", &create(t)],
        );
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }
    let got = working_tables(&ours);
    let theirs = tmp.path().join("theirs");
    copy_tree(&base.join("before"), &theirs);
    let live = files.iter().all(|(t, path, _)| {
        dolt(&theirs, &["sql", "-q", &create(t)]).is_some_and(|ok| ok)
            && dolt(
                &theirs,
                &["table", "import", "-u", t, path.to_str().unwrap()],
            ) == Some(true)
    });
    let want: BTreeMap<String, String> = if live {
        let w = working_tables(&theirs);
        eprintln!("Dolt's tables: {w:?}");
        w.into_iter()
            .filter(|(t, _)| t == "sp" || t == "sl")
            .collect()
    } else {
        DOLT_WHITESPACE_TABLES
            .iter()
            .map(|(t, h)| (t.to_string(), h.to_string()))
            .collect()
    };
    for (t, h) in &want {
        assert_eq!(got.get(t), Some(h), "table {t}");
    }
    // Text after a closing quote: refused (Dolt: "bare \" in non-quoted field" class of
    // error), nothing written.
    let before = snapshot(&ours);
    let bad = tmp.path().join("after_quote.csv");
    std::fs::write(&bad, "id,a\n1,\"q\" \n").unwrap();
    let o = run(&ours, &["import", "sp", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("line 2: text after a closing quote"), "{err}");
    assert!(
        snapshot(&ours) == before,
        "a rejected import wrote something"
    );
}
