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

/// The hash of table `name` that Dolt makes in a copy (at `dir`) of the `before` database of
/// `base` by `dolt sql -q CREATE` and `dolt table import -u` of `csv`; `None` without
/// `PROLLY_DOLT` (the callers then compare with the hash Dolt made when the test was written).
fn dolt_made_table(
    base: &Path,
    dir: &Path,
    name: &str,
    create: &str,
    csv: &Path,
) -> Option<String> {
    copy_tree(&base.join("before"), dir);
    let made = dolt(dir, &["sql", "-q", create])?
        && dolt(dir, &["table", "import", "-u", name, csv.to_str().unwrap()])?;
    assert!(made, "Dolt refused {create}");
    let hash = working_tables(dir).remove(name).unwrap();
    eprintln!("Dolt's table {name}: {hash}");
    Some(hash)
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

/// The spellings of numbers, decimals, dates, times and datetimes that `dolt table import`
/// takes (tried by hand on Dolt 2.3.1): exponents in a DECIMAL, one-digit months and days, a
/// time without seconds, a DATE given a datetime, MySQL's zero dates, signs and leading zeros,
/// and fractions of a second beyond what a DATETIME or TIMESTAMP keeps (Dolt rounds them).
/// Each one is repeated down the rows, so that both the direct import fields and the general
/// path read them.
fn spellings_csv() -> Vec<u8> {
    const ROWS: [&str; 12] = [
        "+0007,18446744073709551615,1e3,2024-1-5,2024-1-5 1:2:3,838:59:59,2024-01-05 12:00:00.6,2024-01-05 12:00:00.125",
        "-0,0,1.5E-1,0000-00-00,0000-00-00 00:00:00,12:30,2024-12-31 23:59:59.5,1999-12-31 23:59:59.995",
        "9223372036854775807,+42,+12.345,2024-01-05 12:30,2024-01-05T10:00:00,-1:00:00.5,1969-12-31 23:59:59.5,2024-01-05 12:00:00.994",
        "-9223372036854775808,007,-0.004,0000-01-01,0000-00-00,0:0:0,2024-01-05 12:00:00.4,2024-01-05 12:00:00.005",
        "11,1,.5,2024-02-29,2024-02-29 23:59:59.999999,-838:59:59,2024-01-05 12:00:00.499999,2038-01-19 03:14:07.004999",
        "12,2,5.,2000-2-29,1970-01-01 00:00,00:00:00.,2024-01-05,1970-01-01 00:00:01.5",
        "13,3,99999999.99,9999-12-31,9999-12-31 23:59:59,1:2,2024-1-5 1:2:3.5,2024-01-05 12:00:00.12",
        "14,4,-99999999.99,1000-01-01,1969-12-31 23:59:59.5,100:00:00.000001,0000-00-00 00:00:00,2024-01-05 12:00:00",
        "15,5,1.005,2024-01-05,2024-01-05 00:00:00,10:11:12,2000-02-28 23:59:59.9,2000-02-28 23:59:59.999",
        "16,6,12,2024-12-31,2024-12-31 12:00:00.5,23:59:59,2024-01-05 12:00:00.000001,2024-01-05 12:00:00.01",
        "17,7,0.125e1,2024-06-30,2024-06-30 6:30,-0:30:00,1000-01-01 00:00:00.5,1999-01-01 00:00:00.555",
        "18,8,2.5e-2,1999-1-01,1999-01-1 01:01:01,1:01:01,9999-12-31 23:59:59.4,2001-09-09 01:46:40.0049",
    ];
    let mut t = String::from("i,u,d,dd,dt,tm,r0,r2\n");
    for k in 0..300 {
        for (r, row) in ROWS.iter().enumerate() {
            let (i, rest) = row.split_once(',').unwrap();
            // Distinct keys: the row's own spelling first, then offsets far from it.
            let key = if k == 0 {
                i.to_string()
            } else {
                (1_000 + k * 16 + r).to_string()
            };
            t.push_str(&key);
            t.push(',');
            t.push_str(rest);
            t.push('\n');
        }
    }
    t.into_bytes()
}

/// The table Dolt 2.3.1 made with `dolt table import -u` of [`spellings_csv`] (table `vs`)
/// into the `basic` scenario's `before` database, the table created first by `dolt sql -q`
/// (printed by `value_spellings_are_read_as_dolt_reads_them` with `PROLLY_DOLT` set).
const DOLT_SPELLINGS_TABLE: &str = "af1rpkii7756l4rv6spn52lo0qf8q5ul";

/// `prolly dolt DB import` takes every spelling of [`spellings_csv`] to the same stored values
/// as `dolt table import` (the same table hash; live with `PROLLY_DOLT`, else the hash Dolt
/// made), and refuses, with nothing written, the spellings Dolt refuses: a day the month does
/// not have, a zero month or day in an otherwise real date, hour 24, a five-digit year.
#[test]
fn value_spellings_are_read_as_dolt_reads_them() {
    let base = prollystore_test_vectors::require("dolt-write/basic");
    let tmp = tempfile::tempdir().unwrap();
    let create = "CREATE TABLE vs (i BIGINT PRIMARY KEY, u BIGINT UNSIGNED, d DECIMAL(10,2), \
                  dd DATE, dt DATETIME(6), tm TIME(6), r0 DATETIME, r2 TIMESTAMP(2))";
    let csv = tmp.path().join("vs.csv");
    std::fs::write(&csv, spellings_csv()).unwrap();
    let ours = tmp.path().join("ours");
    copy_tree(&base.join("before"), &ours);
    let o = run(
        &ours,
        &["import", "vs", csv.to_str().unwrap(), "--create", create],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = working_tables(&ours).remove("vs");
    let theirs = tmp.path().join("theirs");
    let want = dolt_made_table(&base, &theirs, "vs", create, &csv)
        .unwrap_or_else(|| DOLT_SPELLINGS_TABLE.to_string());
    assert_eq!(got.as_deref(), Some(want.as_str()));

    let before = snapshot(&ours);
    for (k, (column, text)) in [
        ("dd", "2024-02-30"),
        ("dd", "2023-02-29"),
        ("dd", "2024-00-10"),
        ("dd", "2024-01-00"),
        ("dd", "10000-01-01"),
        ("dt", "2024-01-05 24:00:00"),
        ("dt", "0000-00-00 00:00:01"),
        ("tm", "12:60:00"),
        ("d", "1e"),
    ]
    .into_iter()
    .enumerate()
    {
        let bad = tmp.path().join(format!("bad{k}.csv"));
        std::fs::write(&bad, format!("i,{column}\n{},{text}\n", 90_000 + k)).unwrap();
        let o = run(&ours, &["import", "vs", bad.to_str().unwrap()]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{column} {text:?}: {err}");
        assert!(err.contains(text), "{column} {text:?}: {err}");
        if let Some(ok) = dolt(
            &theirs,
            &["table", "import", "-u", "vs", bad.to_str().unwrap()],
        ) {
            assert!(!ok, "Dolt took {column} {text:?}");
        }
    }
    assert!(
        snapshot(&ours) == before,
        "a rejected import wrote something"
    );
}

/// Tables declared with character sets (a column's set named alone or with its collation,
/// `utf8` for `utf8mb3`, a table's `DEFAULT CHARSET`), each with one row imported, and the
/// table hashes Dolt 2.3.1 made of the same statements and rows (`dolt sql -q` then `dolt
/// table import -u`, read with `dolt_hashof_table`; live with `PROLLY_DOLT`).
const DOLT_CHARSET_TABLES: [(&str, &str, &str); 4] = [
    (
        "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(10) CHARACTER SET latin1, \
         y VARCHAR(10) CHARACTER SET utf8mb4, z CHAR(3) CHARACTER SET utf8, \
         w TEXT CHARACTER SET ascii, e ENUM('a','b') CHARACTER SET latin1) \
         COLLATE utf8mb4_0900_ai_ci",
        "id,x,y,z,w,e\n1,Äb,y,zz,w,b\n",
        "37va1jnmh433aiopc15r5fhbrjel7d40",
    ),
    (
        "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(10), y varchar(4) character set utf8mb4) \
         DEFAULT CHARSET=latin1",
        "id,x,y\n1,xé,y\n",
        "0k16fokn659j7mrneq0ooj0745rv6fav",
    ),
    (
        "CREATE TABLE t (k VARCHAR(10) CHARACTER SET latin1 PRIMARY KEY, \
         v VARCHAR(10) CHARACTER SET latin1 COLLATE latin1_bin, KEY iv (v))",
        "k,v\nAb,cD\n",
        "i84qhfbpb7117iuq2h95tcpddqfnbe9p",
    ),
    (
        "CREATE TABLE t (id INT PRIMARY KEY, s SET('p','q') CHARACTER SET utf16, \
         c CHAR(2) CHARACTER SET utf32, l LONGTEXT CHARACTER SET latin7) \
         DEFAULT CHARACTER SET = ascii",
        "id,s,c,l\n1,\"p,q\",ab,ll\n",
        "ngcd65vjn2pesgjij5k7hh7grer7qeq6",
    ),
];

/// `import --create` with character sets stores what Dolt stores (a set named alone takes its
/// default collation, as `SHOW CHARACTER SET` lists it), and refuses, with nothing written,
/// what Dolt refuses: an unknown set, a set the collation is not of, TIME with a fraction
/// length other than 6.
#[test]
fn character_sets_are_stored_as_dolt_stores_them() {
    let base = prollystore_test_vectors::require("dolt-write/basic");
    let tmp = tempfile::tempdir().unwrap();
    for (n, (create, rows, want)) in DOLT_CHARSET_TABLES.into_iter().enumerate() {
        let csv = tmp.path().join(format!("t{n}.csv"));
        std::fs::write(&csv, rows).unwrap();
        let ours = tmp.path().join(format!("ours{n}"));
        copy_tree(&base.join("before"), &ours);
        let o = run(
            &ours,
            &["import", "t", csv.to_str().unwrap(), "--create", create],
        );
        assert!(
            o.status.success(),
            "{create}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let got = working_tables(&ours).remove("t");
        let theirs = tmp.path().join(format!("theirs{n}"));
        let want =
            dolt_made_table(&base, &theirs, "t", create, &csv).unwrap_or_else(|| want.to_string());
        assert_eq!(got.as_deref(), Some(want.as_str()), "{create}");
    }
    let csv = tmp.path().join("one.csv");
    std::fs::write(&csv, "id,x\n1,x\n").unwrap();
    let ours = tmp.path().join("refused");
    copy_tree(&base.join("before"), &ours);
    let theirs = tmp.path().join("refused-by-dolt");
    copy_tree(&base.join("before"), &theirs);
    let before = snapshot(&ours);
    for (create, says) in [
        (
            "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(10) CHARACTER SET nope)",
            "Unknown character set: nope",
        ),
        (
            "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(10) CHARACTER SET latin1 COLLATE utf8mb4_bin)",
            "latin1 is not a valid character set for utf8mb4_bin",
        ),
        (
            "CREATE TABLE t (id INT PRIMARY KEY, x VARCHAR(10)) CHARSET=latin1 COLLATE utf8mb4_bin",
            "latin1 is not a valid character set for utf8mb4_bin",
        ),
        (
            "CREATE TABLE t (id INT PRIMARY KEY, x TIME(2))",
            "TIME length not yet supported",
        ),
        (
            "CREATE TABLE t (id INT PRIMARY KEY, x INT CHARACTER SET latin1)",
            "Only character columns, enums, and sets can have a CHARACTER SET option",
        ),
    ] {
        let o = run(&ours, &["import", "t", csv.to_str().unwrap(), "--create", create]);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{create}: {err}");
        assert!(err.contains(says), "{create}: {err}");
        if let Some(ok) = dolt(&theirs, &["sql", "-q", create]) {
            assert!(!ok, "Dolt took {create}");
        }
    }
    assert!(
        snapshot(&ours) == before,
        "a refused import wrote something"
    );
}
