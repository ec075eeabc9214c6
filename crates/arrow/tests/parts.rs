//! Tables cut into parts ([`prollystore_dolt::parts`]) and read back as Arrow
//! ([`TableBatches::part`]): the parts hold every row once, in key order, with sizes that differ
//! by at most one row, only the columns asked for, only the key range asked for; a part keeps
//! reading the table chunk it was cut from after its branch moved; a part of another database,
//! a changed description or malformed JSON is an error that says what, never a panic or other
//! rows. With `PROLLY_DOLT` naming a `dolt` binary, the same on a database Dolt made with a
//! VARBINARY key, a collated VARCHAR key, several types, branches and a working set, and after
//! `dolt gc` removed what a part was cut from.

use std::ops::Bound;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use arrow_array::{RecordBatch, RecordBatchReader};
use prollystore_arrow::TableBatches;
use prollystore_dolt::parts::{split, Part, SplitOptions};
use prollystore_dolt::write::{CommitMeta, DoltWriter, TableDef};
use prollystore_dolt::{Database, DoltError, KeyRange, SqlValue, State};
use prollystore_sql::FromSql;

/// Every batch cut into one-row batches, so reads batched differently compare.
fn rows_of(batches: impl IntoIterator<Item = RecordBatch>) -> Vec<RecordBatch> {
    batches
        .into_iter()
        .flat_map(|b| (0..b.num_rows()).map(move |i| b.slice(i, 1)))
        .collect()
}

fn read(reader: TableBatches) -> Vec<RecordBatch> {
    rows_of(reader.map(|b| b.unwrap()))
}

/// The whole table as one-row batches (the ordinary reader).
fn whole(db: &Arc<Database>, at: &str, table: &str) -> Vec<RecordBatch> {
    let (spec, state) = prollystore_dolt::db::parse_at(at);
    let t = db
        .root_at(spec, state)
        .and_then(|r| db.table(&r, table))
        .unwrap();
    read(TableBatches::with_threads(db.clone(), t, 1000, 1).unwrap())
}

/// Reads every part through its JSON on a database opened afresh (as a worker would), checking
/// the part sizes; returns the rows in part order.
fn read_parts(parts: &[Part], batch_rows: usize) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    for p in parts {
        let p = Part::from_json(&p.to_json()).unwrap();
        let db = Arc::new(prollystore_sql::open(p.database_path().unwrap()).unwrap());
        let reader = TableBatches::part(db, &p, batch_rows).unwrap();
        let schema = reader.schema();
        let rows = read(reader);
        assert!(rows.iter().all(|b| b.schema() == schema));
        out.extend(rows);
    }
    out
}

/// Part sizes differ by at most one, they cover `lo..hi` in order, and boundary keys chain.
fn check_cut(parts: &[Part], lo: u64, hi: u64) {
    assert!(!parts.is_empty());
    assert_eq!(parts[0].start, lo);
    assert_eq!(parts.last().unwrap().end, hi);
    for w in parts.windows(2) {
        assert_eq!(w[0].end, w[1].start);
        assert_eq!(w[0].end_key, w[1].start_key);
    }
    let sizes: Vec<u64> = parts.iter().map(Part::rows).collect();
    let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    assert!(max - min <= 1, "{sizes:?}");
    for (i, p) in parts.iter().enumerate() {
        assert_eq!((p.index, p.of), (i as u64, parts.len() as u64));
    }
}

const VECTOR_DATABASES: [&str; 4] = ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"];

#[test]
fn parts_hold_every_row_once_in_order() {
    let mut checked = 0;
    for name in VECTOR_DATABASES {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let db = Arc::new(prollystore_sql::open(&dir).unwrap());
        for at in ["main", "feature", "main~1"] {
            let (spec, state) = prollystore_dolt::db::parse_at(at);
            let Ok(root) = db.root_at(spec, state) else {
                continue;
            };
            for table in root.table_names() {
                let all = whole(&db, at, &table);
                let t = db.table(&root, &table).unwrap();
                let entries = t.primary_scan_map(&db).count().unwrap();
                for n in [1, 2, 3, 7, 64, entries as usize + 5] {
                    let parts = split(&db, at, &table, n, &SplitOptions::default()).unwrap();
                    check_cut(&parts, 0, entries);
                    let want = (n as u64).min(entries).max(1);
                    assert_eq!(parts.len() as u64, want, "{name} {at} {table} {n}");
                    assert_eq!(read_parts(&parts, 97), all, "{name} {at} {table} {n}");
                    checked += 1;
                }
            }
        }
    }
    assert!(checked >= 4 * 6 * 4, "{checked}");
}

#[test]
fn projection_reads_the_columns_asked_for_in_their_order() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let db = Arc::new(Database::open(&dir).unwrap());
    for table in ["items", "keyless_log", "pairs"] {
        let all = whole(&db, "main", table);
        let names: Vec<String> = all[0]
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        // The last column, then the first, spelled in upper case (SQL names ignore case).
        let pick = vec![names[names.len() - 1].to_uppercase(), names[0].clone()];
        let options = SplitOptions {
            columns: Some(pick),
            ..Default::default()
        };
        let parts = split(&db, "main", table, 5, &options).unwrap();
        let got = read_parts(&parts, 1000);
        let want: Vec<RecordBatch> = all
            .iter()
            .map(|b| b.project(&[names.len() - 1, 0]).unwrap())
            .collect();
        assert_eq!(got, want, "{table}");
        assert_eq!(got[0].num_columns(), 2);
    }
    let options = SplitOptions {
        columns: Some(vec!["id".into(), "nope".into()]),
        ..Default::default()
    };
    let e = split(&db, "main", "items", 5, &options).unwrap_err();
    assert!(
        matches!(&e, DoltError::NotFound(m) if m.contains("\"nope\"") && m.contains("items")),
        "{e}"
    );
}

#[test]
fn key_ranges_are_cut_by_their_positions() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let db = Arc::new(Database::open(&dir).unwrap());
    let t = db.table_at("main", State::Committed, "items").unwrap();
    let ranges = [
        KeyRange::between(
            Bound::Included(vec![SqlValue::Int(100)]),
            Bound::Excluded(vec![SqlValue::Int(1900)]),
        ),
        KeyRange::between(Bound::Excluded(vec![SqlValue::Int(2000)]), Bound::Unbounded),
        KeyRange {
            limit: Some(333),
            ..KeyRange::between(Bound::Unbounded, Bound::Included(vec![SqlValue::Int(999)]))
        },
        // Nothing: one empty part, which still gives the schema.
        KeyRange::between(
            Bound::Included(vec![SqlValue::Int(10)]),
            Bound::Excluded(vec![SqlValue::Int(10)]),
        ),
        KeyRange::between(
            Bound::Excluded(vec![SqlValue::Int(1_000_000)]),
            Bound::Unbounded,
        ),
    ];
    for range in ranges {
        let want = read(TableBatches::range(db.clone(), t.clone(), &range, 50).unwrap());
        let at = t.reader(&db).unwrap().ordinals(&range).unwrap();
        let options = SplitOptions {
            range: range.clone(),
            ..Default::default()
        };
        let parts = split(&db, "main", "items", 6, &options).unwrap();
        check_cut(&parts, at.start, at.end);
        assert_eq!(read_parts(&parts, 64), want, "{range:?}");
        if want.is_empty() {
            assert_eq!(parts.len(), 1);
            let reader = TableBatches::part(db.clone(), &parts[0], 10).unwrap();
            assert_eq!(reader.schema().fields().len(), 11);
            assert_eq!(read(reader).len(), 0);
        }
    }
    let reversed = SplitOptions {
        range: KeyRange {
            reverse: true,
            ..KeyRange::all()
        },
        ..Default::default()
    };
    let e = split(&db, "main", "items", 2, &reversed).unwrap_err();
    assert!(e.to_string().contains("reversed"), "{e}");
    // Keyless tables have no key to range over.
    let keyless = SplitOptions {
        range: KeyRange::prefix(vec![SqlValue::Int(1)]),
        ..Default::default()
    };
    assert!(split(&db, "main", "keyless_log", 2, &keyless).is_err());
}

#[test]
fn bad_requests_are_errors() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let db = Database::open(&dir).unwrap();
    let o = SplitOptions::default();
    let e = split(&db, "main", "items", 0, &o).unwrap_err();
    assert!(e.to_string().contains("0 parts"), "{e}");
    let e = split(&db, "main", "nope", 2, &o).unwrap_err();
    assert!(
        matches!(&e, DoltError::NotFound(m) if m.contains("\"nope\"")),
        "{e}"
    );
    let e = split(&db, "no_branch", "items", 2, &o).unwrap_err();
    assert!(
        matches!(&e, DoltError::NotFound(m) if m.contains("no_branch")),
        "{e}"
    );
    let e = split(&db, "no_branch@WORKING", "items", 2, &o).unwrap_err();
    assert!(e.to_string().contains("no_branch"), "{e}");
}

/// An empty table (made by the writer) gives one empty part with the table's schema.
#[test]
fn an_empty_table_is_one_empty_part() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    let mut w = DoltWriter::open(&dir).unwrap();
    w.create_table(&TableDef::from_sql("CREATE TABLE e (id INT PRIMARY KEY, v TEXT)").unwrap())
        .unwrap();
    w.commit(&CommitMeta::now("T", "t@example.com", "empty"))
        .unwrap();
    drop(w);
    let db = Database::open(&dir).unwrap();
    let parts = split(&db, "main", "e", 8, &SplitOptions::default()).unwrap();
    assert_eq!(parts.len(), 1);
    assert_eq!((parts[0].start, parts[0].end), (0, 0));
    assert_eq!((&parts[0].start_key, &parts[0].end_key), (&None, &None));
    let reader = TableBatches::open_part(&parts[0], 10).unwrap();
    assert_eq!(reader.schema().fields().len(), 2);
    assert_eq!(reader.count(), 0);
}

/// A part cut before its branch moved reads the rows it was cut from; one of another
/// database, or a changed description, is refused with a message that says which and why.
#[test]
fn a_part_reads_the_table_it_was_cut_from() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    let before = Arc::new(Database::open(&dir).unwrap());
    let old_rows = whole(&before, "main", "items");
    let parts = split(&before, "main", "items", 4, &SplitOptions::default()).unwrap();
    assert!(parts[0].commit.is_some());
    let json: Vec<String> = parts.iter().map(Part::to_json).collect();
    drop(before);

    // The branch moves: a row deleted and committed.
    let mut w = DoltWriter::open(&dir).unwrap();
    let first = db_first_key(&dir);
    w.delete("items", &[vec![first]]).unwrap();
    w.commit(&CommitMeta::now("T", "t@example.com", "moved"))
        .unwrap();
    drop(w);

    let after = Arc::new(Database::open(&dir).unwrap());
    assert_eq!(whole(&after, "main", "items").len(), old_rows.len() - 1);
    let parts: Vec<Part> = json.iter().map(|j| Part::from_json(j).unwrap()).collect();
    let mut got = Vec::new();
    for p in &parts {
        got.extend(read(TableBatches::part(after.clone(), p, 100).unwrap()));
    }
    assert_eq!(got, old_rows, "the cut table, not the branch's new one");
    // A fresh split sees the change.
    let new_parts = split(&after, "main", "items", 4, &SplitOptions::default()).unwrap();
    assert_eq!(new_parts.last().unwrap().end, old_rows.len() as u64 - 1);

    // A part of the moved table opened on the original database, which never held it.
    let original =
        Arc::new(Database::open(prollystore_test_vectors::require("dolt-db/vecdb")).unwrap());
    let e = TableBatches::part(original.clone(), &new_parts[0], 100).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("does not hold table chunk")
            && text.contains("another database")
            && text.contains("\"items\""),
        "{text}"
    );

    // Descriptions changed after the cut: each refused, saying what does not match.
    type Change = fn(&mut Part, &Part);
    let changes: [(Change, &str); 4] = [
        (|p, _| p.start += 1, "stored key at position"),
        (|p, _| p.end += 10_000, "run past the table's"),
        (|p, o| p.rows_root = o.table_hash, "row data root"),
        (|p, o| p.table_hash = o.root, "expected a DTBL message"),
    ];
    for (change, want) in changes {
        let mut p = parts[1].clone();
        change(&mut p, &parts[1]);
        let e = TableBatches::part(original.clone(), &p, 100).unwrap_err();
        assert!(e.to_string().contains(want), "{want}: {e}");
    }
    let mut p = parts[0].clone();
    p.database = tmp.path().join("nowhere").display().to_string();
    assert!(TableBatches::open_part(&p, 100).is_err());
}

/// The first primary key of `items` at `dir`'s main.
fn db_first_key(dir: &Path) -> SqlValue {
    let db = Database::open(dir).unwrap();
    let t = db.table_at("main", State::Committed, "items").unwrap();
    let row = t.rows(&db).unwrap().next().unwrap().unwrap();
    row[0].clone().unwrap()
}

#[test]
fn malformed_descriptions_are_errors_never_panics() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let db = Database::open(&dir).unwrap();
    let json = split(&db, "main", "pairs", 3, &SplitOptions::default()).unwrap()[1].to_json();
    // Every prefix, and every single-byte change to a few bytes.
    for cut in 0..json.len() {
        assert!(Part::from_json(&json[..cut]).is_err());
    }
    let bytes = json.as_bytes();
    for i in 0..bytes.len() {
        for b in [b'0', b'"', b'}', b'9', b'-'] {
            let mut changed = bytes.to_vec();
            changed[i] = b;
            let Ok(text) = std::str::from_utf8(&changed) else {
                continue;
            };
            // Parsed or refused; a parsed one opens or is refused, never panics.
            if let Ok(p) = Part::from_json(text) {
                if let Ok(r) = TableBatches::open_part(&p, 100) {
                    for b in r {
                        let _ = b;
                    }
                }
            }
        }
    }
}

/// Runs the `dolt` that `PROLLY_DOLT` names in `dir` (a throwaway HOME), if set.
fn dolt(home: &Path, dir: &Path, args: &[&str]) -> Option<()> {
    let bin = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty())?;
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"Parts Bot","user.email":"bot@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    let o = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "dolt {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    Some(())
}

/// A database Dolt made: a VARBINARY key with bytes that are not UTF-8, a collated VARCHAR
/// key, several types, a branch and uncommitted changes; parts of each state read as the
/// whole table does, and a part whose state `dolt gc` removed is refused.
#[test]
fn dolt_made_keys_states_and_gc() {
    let tmp = tempfile::tempdir().unwrap();
    let (home, dir) = (tmp.path().join("home"), tmp.path().join("db"));
    std::fs::create_dir_all(&dir).unwrap();
    if dolt(&home, &dir, &["init"]).is_none() {
        eprintln!("PROLLY_DOLT is not set: skipped");
        return;
    }
    let sql = |q: &str| dolt(&home, &dir, &["sql", "-q", q]).unwrap();
    sql(
        "CREATE TABLE bin (k VARBINARY(16) PRIMARY KEY, n BIGINT, d DECIMAL(10,3), \
         t DATETIME(6), j JSON, e ENUM('a','b','c'))",
    );
    sql(
        "INSERT INTO bin WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s \
         WHERE i < 2999) SELECT UNHEX(CONCAT(LPAD(HEX(i * 7919 % 3001), 4, '0'), 'FF80')), \
         i, i / 7, TIMESTAMPADD(SECOND, i, '2024-01-01'), JSON_OBJECT('i', i), \
         ELT(1 + i % 3, 'a', 'b', 'c') FROM s",
    );
    sql(
        "CREATE TABLE names (name VARCHAR(40) COLLATE utf8mb4_0900_ai_ci PRIMARY KEY, \
         v DOUBLE, note TEXT)",
    );
    sql(
        "INSERT INTO names WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s \
         WHERE i < 2499) SELECT CONCAT(ELT(1 + i % 4, 'Å', 'a', 'B', 'é'), i), i * 0.5, \
         REPEAT('x', i % 50) FROM s",
    );
    dolt(&home, &dir, &["add", "-A"]).unwrap();
    dolt(&home, &dir, &["commit", "-m", "tables"]).unwrap();
    dolt(&home, &dir, &["branch", "side"]).unwrap();
    sql("DELETE FROM names WHERE v < 100");
    dolt(&home, &dir, &["commit", "-am", "fewer names"]).unwrap();
    // Uncommitted: the working set differs from the head.
    sql("UPDATE bin SET n = -n WHERE n % 5 = 0");

    let db = Arc::new(prollystore_sql::open(&dir).unwrap());
    for at in ["main", "side", "main@WORKING", "WORKING", "main~1"] {
        for table in ["bin", "names"] {
            let all = whole(&db, at, table);
            for n in [1, 4, 9] {
                let parts = split(&db, at, table, n, &SplitOptions::default()).unwrap();
                assert_eq!(read_parts(&parts, 128), all, "{at} {table} {n}");
            }
        }
    }
    // A collated key range: 'a' and 'Å' are equal under _ai_ci, so the range holds both.
    let t = db.table_at("side", State::Committed, "names").unwrap();
    let range = KeyRange::between(
        Bound::Included(vec![SqlValue::from("a")]),
        Bound::Excluded(vec![SqlValue::from("b")]),
    );
    let want = read(TableBatches::range(db.clone(), t, &range, 100).unwrap());
    assert!(want.len() > 1000);
    let options = SplitOptions {
        range,
        ..Default::default()
    };
    let parts = split(&db, "side", "names", 3, &options).unwrap();
    assert_eq!(read_parts(&parts, 100), want);

    // Parts of the working set; the working change is then undone and collected.
    let parts = split(&db, "WORKING", "bin", 3, &SplitOptions::default()).unwrap();
    assert!(parts[0].commit.is_none());
    drop(db);
    dolt(&home, &dir, &["reset", "--hard"]).unwrap();
    dolt(&home, &dir, &["gc"]).unwrap();
    let db = Arc::new(prollystore_sql::open(&dir).unwrap());
    let e = TableBatches::part(db, &parts[0], 100)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("does not hold table chunk") && e.contains("dolt gc"),
        "{e}"
    );
}
