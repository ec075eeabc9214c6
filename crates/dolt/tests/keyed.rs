//! Keyed reads against what the real Dolt printed for the vector databases: every table's rows
//! through the row iterator, every row fetched by its primary key (parsed from Dolt's CSV text),
//! key ranges and reverse scans as slices of Dolt's key-ordered output, and secondary-index
//! lookups returning the rows Dolt's CSV holds for those values.

use std::ops::Bound;
use std::path::Path;

use prollystore_dolt::codec::encode::parse_value;
use prollystore_dolt::csv_field::{csv_fields, csv_records, write_csv_row};
use prollystore_dolt::{Database, KeyRange, Row, SqlValue, State, Table};

const DATABASES: [&str; 4] = ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"];

/// Records without their newlines.
fn records(text: &[u8]) -> Vec<Vec<u8>> {
    csv_records(text)
        .into_iter()
        .map(|r| r.strip_suffix(b"\n").unwrap_or(r).to_vec())
        .collect()
}

/// The fields of one record, unquoted, as text.
fn fields(record: &[u8]) -> Vec<String> {
    csv_fields(record)
        .into_iter()
        .map(|f| String::from_utf8_lossy(&f).into_owned())
        .collect()
}

fn line(row: &Row) -> Vec<u8> {
    let mut out = Vec::new();
    write_csv_row(row, &mut out);
    out.pop();
    out
}

fn lines(rows: impl Iterator<Item = prollystore_dolt::Result<Row>>) -> Vec<Vec<u8>> {
    rows.map(|r| line(&r.unwrap())).collect()
}

/// A database name, the database, a branch, a table, and Dolt's CSV records of it.
type Case = (String, Database, String, String, Vec<Vec<u8>>);

/// Each (database, branch, table) with Dolt's CSV of it (header removed).
fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for name in DATABASES {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let expected = dir.with_file_name(format!("{name}.expected"));
        for branch in ["main", "feature"] {
            let db = Database::open(&dir).unwrap();
            let root = db.root_at(branch, State::Committed).unwrap();
            for (table, _) in &root.tables {
                let csv = expected.join(branch).join(format!("{table}.csv"));
                let Ok(text) = std::fs::read(&csv) else {
                    continue;
                };
                let mut recs = records(&text);
                recs.remove(0);
                let db = Database::open(&dir).unwrap();
                out.push((
                    name.to_string(),
                    db,
                    branch.to_string(),
                    table.clone(),
                    recs,
                ));
            }
        }
    }
    out
}

fn table(db: &Database, branch: &str, name: &str) -> Table {
    db.table_at(branch, State::Committed, name).unwrap()
}

#[test]
fn rows_and_gets_match_dolt() {
    let mut gets = 0;
    for (db_name, db, branch, name, expected) in cases() {
        let t = table(&db, &branch, &name);
        let what = format!("{db_name} {branch} {name}");
        let mut got = lines(t.rows(&db).unwrap());
        if t.schema.keyless {
            // Dolt sorts keyless output; the stored order is by row hash.
            let mut want = expected.clone();
            want.sort();
            got.sort();
            assert_eq!(got, want, "{what}: rows");
            assert!(t.reader(&db).unwrap().get(&[SqlValue::Int(1)]).is_err());
            continue;
        }
        assert_eq!(got, expected, "{what}: rows");
        let reader = t.reader(&db).unwrap();
        let key = reader.primary_key().unwrap();
        let visible = t.schema.visible_columns();
        for record in &expected {
            let f = fields(record);
            let texts: Vec<&str> = t
                .schema
                .key_columns
                .iter()
                .map(|c| f[visible.iter().position(|v| v == c).unwrap()].as_str())
                .collect();
            let values = key.parse(&texts).unwrap();
            let row = reader.get(&values).unwrap();
            let row = row.unwrap_or_else(|| panic!("{what}: no row for {texts:?}"));
            assert_eq!(line(&row), *record, "{what}: get {texts:?}");
            gets += 1;
        }
    }
    assert!(gets > 10_000, "{gets} gets");
}

#[test]
fn ranges_are_slices_of_dolt_output() {
    for (db_name, db, branch, name, expected) in cases() {
        let t = table(&db, &branch, &name);
        if t.schema.keyless {
            continue;
        }
        let what = format!("{db_name} {branch} {name}");
        let reader = t.reader(&db).unwrap();
        let key = reader.primary_key().unwrap();
        let visible = t.schema.visible_columns();
        let key_of = |record: &[u8], n: usize| -> Vec<SqlValue> {
            let f = fields(record);
            let texts: Vec<&str> = t.schema.key_columns[..n]
                .iter()
                .map(|c| f[visible.iter().position(|v| v == c).unwrap()].as_str())
                .collect();
            key.parse(&texts).unwrap()
        };
        let n = expected.len();
        let full = t.schema.key_columns.len();
        for (i, j) in [(0, n - 1), (n / 4, n / 2), (n / 3, n / 3), (1, n - 2)] {
            let (lo, hi) = (key_of(&expected[i], full), key_of(&expected[j], full));
            let scan = |from, to, reverse, limit| {
                lines(
                    reader
                        .scan(&KeyRange {
                            from,
                            to,
                            reverse,
                            limit,
                        })
                        .unwrap(),
                )
            };
            let some = |v: &Vec<SqlValue>| v.iter().cloned().map(Some).collect::<Vec<_>>();
            let inc = |v: &Vec<SqlValue>| Bound::Included(some(v));
            let exc = |v: &Vec<SqlValue>| Bound::Excluded(some(v));
            assert_eq!(
                scan(inc(&lo), inc(&hi), false, None),
                expected[i..=j],
                "{what}"
            );
            let mut rev: Vec<_> = expected[i..=j].to_vec();
            rev.reverse();
            assert_eq!(scan(inc(&lo), inc(&hi), true, None), rev, "{what} reverse");
            let open = if j > i { &expected[i + 1..j] } else { &[][..] };
            assert_eq!(
                scan(exc(&lo), exc(&hi), false, None),
                open,
                "{what} exclusive"
            );
            let mut open_rev = open.to_vec();
            open_rev.reverse();
            assert_eq!(
                scan(exc(&lo), exc(&hi), true, None),
                open_rev,
                "{what} rev exc"
            );
            assert_eq!(
                scan(inc(&lo), Bound::Unbounded, false, Some(3)),
                expected[i..(i + 3).min(n)],
                "{what} limit"
            );
            assert_eq!(
                scan(Bound::Unbounded, exc(&hi), true, Some(2)),
                expected[j.saturating_sub(2)..j]
                    .iter()
                    .rev()
                    .cloned()
                    .collect::<Vec<_>>(),
                "{what} reverse limit"
            );
            // A prefix of a composite key: every row with the same leading column.
            if full > 1 {
                let p = key_of(&expected[i], 1);
                let lead = fields(&expected[i])[visible
                    .iter()
                    .position(|v| *v == t.schema.key_columns[0])
                    .unwrap()]
                .clone();
                let pos = visible
                    .iter()
                    .position(|v| *v == t.schema.key_columns[0])
                    .unwrap();
                let want: Vec<_> = expected
                    .iter()
                    .filter(|r| fields(r)[pos] == lead)
                    .cloned()
                    .collect();
                assert_eq!(scan(inc(&p), inc(&p), false, None), want, "{what} prefix");
                let after: Vec<_> = expected
                    .iter()
                    .skip_while(|r| key_of(r, 1) != p)
                    .skip(want.len())
                    .cloned()
                    .collect();
                assert_eq!(
                    scan(exc(&p), Bound::Unbounded, false, None),
                    after,
                    "{what} >p"
                );
            }
        }
    }
}

#[test]
fn index_lookups_return_the_rows_with_those_values() {
    let mut checked = 0;
    for (db_name, db, branch, name, expected) in cases() {
        let t = table(&db, &branch, &name);
        let reader = t.reader(&db).unwrap();
        let visible = t.schema.visible_columns();
        for ix in &t.schema.indexes {
            let what = format!("{db_name} {branch} {name} {}", ix.name);
            let scan = match reader.index_scan(&ix.name, &KeyRange::all()) {
                Ok(s) => s,
                // Not every collation's weights exist yet; that is a clear error.
                Err(e) if e.to_string().contains("not implemented") => continue,
                Err(e) => panic!("{what}: {e}"),
            };
            let all = lines(scan);
            let mut sorted = all.clone();
            sorted.sort();
            let mut want = expected.clone();
            want.sort();
            assert_eq!(sorted, want, "{what}: every row once");
            let enc = reader.index_key(&ix.name).unwrap();
            let lead = visible.iter().position(|v| *v == ix.columns[0]).unwrap();
            let collation = t
                .schema
                .column_collation(&t.schema.columns[ix.columns[0]])
                .unwrap();
            let leads: Vec<Vec<u8>> = expected
                .iter()
                .map(|r| csv_fields(r)[lead].clone())
                .collect();
            for (k, record) in expected.iter().enumerate().step_by(7) {
                let f = &leads[k];
                if f.is_empty() {
                    continue; // NULL (or empty): not expressible as a lookup value here
                }
                // Binary values go in as the CLI's 0x hex form.
                let text = match std::str::from_utf8(f) {
                    Ok(s) => s.to_string(),
                    Err(_) => format!(
                        "0x{}",
                        f.iter().map(|b| format!("{b:02x}")).collect::<String>()
                    ),
                };
                let value = enc.parse(&[text.as_str()]).unwrap();
                let mut got = lines(reader.index_lookup(&ix.name, &value).unwrap());
                got.sort();
                let mut want: Vec<_> = expected
                    .iter()
                    .zip(&leads)
                    .filter(|(_, l)| match collation {
                        // Equal under the column's collation, as Dolt's lookup matches.
                        Some(c) => c.compare(l, f).is_eq(),
                        None => *l == f,
                    })
                    .map(|(r, _)| r.clone())
                    .collect();
                want.sort();
                assert!(want.contains(record));
                assert_eq!(got, want, "{what}: lookup {text:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "{checked} lookups");
}

#[test]
fn bad_keys_name_the_table_and_column() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let db = Database::open(Path::new(&dir)).unwrap();
    let t = db.table_at("main", State::Committed, "items").unwrap();
    let reader = t.reader(&db).unwrap();
    let e = reader.primary_key().unwrap().parse(&["x"]).unwrap_err();
    assert!(
        e.to_string().contains("items") && e.to_string().contains("\"id\""),
        "{e}"
    );
    let e = reader.get(&[SqlValue::Int(1 << 40)]).unwrap_err();
    assert!(e.to_string().contains("out of range"), "{e}");
    assert!(reader.get(&[SqlValue::Int(-5)]).unwrap().is_none());
    let e = reader.index_scan("nope", &KeyRange::all()).unwrap_err();
    assert!(e.to_string().contains("nope"), "{e}");
    let col = &t.schema.columns[10];
    assert_eq!(parse_value(col, "GREEN").unwrap().to_string(), "green");
}

/// A tiny database made by Dolt (see `tests/data/collated_keyless/README.md`): a get under a
/// case- and accent-insensitive key collation finds the row another spelling names, and a
/// keyless table's index (keys ending with the row hash) leads to whole rows, repeats included.
#[test]
fn collated_gets_and_keyless_index_lookups_match_dolt() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/collated_keyless");
    let want = |f: &str| records(&std::fs::read(dir.join(f)).unwrap())[1..].to_vec();
    let db = Database::open(&dir).unwrap();
    let users = db.table_at("main", State::Committed, "users").unwrap();
    let reader = users.reader(&db).unwrap();
    for (key, file) in [
        ("ALICE", "get_users_ALICE.csv"),
        ("emile", "get_users_emile.csv"),
    ] {
        let row = reader.get(&[SqlValue::Text(key.into())]).unwrap().unwrap();
        assert_eq!(vec![line(&row)], want(file), "get {key}");
    }
    assert!(reader
        .get(&[SqlValue::Text("carol".into())])
        .unwrap()
        .is_none());
    assert_eq!(lines(users.rows(&db).unwrap()), want("users.csv"));
    let kl = db.table_at("main", State::Committed, "kl").unwrap();
    let reader = kl.reader(&db).unwrap();
    let mut got = lines(reader.index_lookup("ix_n", &[SqlValue::Int(2)]).unwrap());
    got.sort();
    assert_eq!(got, want("kl_n2_by_msg.csv"));
    let all = lines(reader.index_scan("ix_n", &KeyRange::all()).unwrap());
    assert_eq!(all.len(), 5, "{all:?}");
}
