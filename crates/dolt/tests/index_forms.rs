//! Lookups and ranges through indexes that do not hold whole values: prefix lengths on text,
//! binary and blob columns (Dolt cuts values at the prefix length in bytes, even inside a
//! character) and UNIQUE indexes on TEXT/BLOB (Dolt keeps those content-hashed, as addresses).
//! The database is `data/index_forms/db`, made by the real Dolt with
//! `data/make_index_forms.sh`, which also saved Dolt's answers to a few range queries asked
//! through filters no index serves (`index_forms/expected/*.csv`).
//!
//! Every index scan is also checked against a simple model: all rows, kept when their whole
//! values fall in the range under the column's collation.

use std::cmp::Ordering;
use std::ops::Bound;
use std::path::PathBuf;

use prollystore_dolt::{Database, KeyRange, Row, SqlValue, State, Table};
use prollystore_format::collation::Collation;

fn db() -> Database {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/index_forms/db");
    Database::open(&dir).unwrap()
}

fn table(db: &Database) -> Table {
    db.table_at("main", State::Committed, "p").unwrap()
}

/// Dolt's answer (ids) for a saved query.
fn expected(name: &str) -> Vec<i64> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/index_forms/expected")
        .join(format!("{name}.csv"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.parse().unwrap())
        .collect()
}

fn id(row: &Row) -> i64 {
    match &row[0] {
        Some(SqlValue::Int(i)) => *i,
        other => panic!("id {other:?}"),
    }
}

/// Ids of the rows an index scan returns, sorted.
fn scan_ids(db: &Database, t: &Table, index: &str, range: &KeyRange) -> Vec<i64> {
    let reader = t.reader(db).unwrap();
    let mut ids: Vec<i64> = reader
        .index_scan(index, range)
        .unwrap()
        .map(|r| id(&r.unwrap()))
        .collect();
    ids.sort_unstable();
    ids
}

/// A bound's first value (these ranges never bound by NULL).
fn bound_value(b: &[Option<SqlValue>]) -> &SqlValue {
    b[0].as_ref().expect("a non-NULL bound")
}

fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.into())
}

fn range(from: Bound<Vec<SqlValue>>, to: Bound<Vec<SqlValue>>) -> KeyRange {
    KeyRange::between(from, to)
}

/// The value of row `r` in column `c` (a position in the row).
fn cell(r: &Row, c: usize) -> Option<SqlValue> {
    r[c].clone()
}

#[test]
fn prefix_and_hashed_indexes_answer_as_sql_does() {
    let db = db();
    let t = table(&db);
    let rows: Vec<Row> = t.rows(&db).unwrap().map(|r| r.unwrap()).collect();
    let row = |i: i64| rows.iter().find(|r| id(r) == i).unwrap();
    use Bound::{Excluded as Ex, Included as In, Unbounded};

    let name_ge_ap = range(In(vec![text("ap")]), Unbounded);
    assert_eq!(
        scan_ids(&db, &t, "ix_name", &name_ge_ap),
        expected("name_ge_ap")
    );
    let name_range = range(In(vec![text("a")]), Ex(vec![text("bá")]));
    assert_eq!(
        scan_ids(&db, &t, "ix_name", &name_range),
        expected("name_range")
    );
    let ci7 = cell(row(7), 2).unwrap();
    assert_eq!(
        scan_ids(&db, &t, "ix_ci", &KeyRange::prefix(vec![ci7])),
        expected("ci_eq")
    );
    let ci_range = range(Ex(vec![text("Ab")]), In(vec![text("S")]));
    assert_eq!(scan_ids(&db, &t, "ix_ci", &ci_range), expected("ci_range"));
    let b_range = range(
        In(vec![SqlValue::Bytes(vec![1, 2])]),
        Ex(vec![SqlValue::Bytes(vec![3])]),
    );
    assert_eq!(scan_ids(&db, &t, "ix_b", &b_range), expected("b_range"));
    let big = KeyRange::prefix(vec![text(&"long ".repeat(4000))]);
    assert_eq!(scan_ids(&db, &t, "ux_ut", &big), expected("ut_big"));
    let ut50 = cell(row(50), 6).unwrap();
    assert_eq!(
        scan_ids(&db, &t, "ux_ut", &KeyRange::prefix(vec![ut50])),
        expected("ut_eq")
    );
    let name9 = cell(row(9), 1).unwrap();
    let multi = range(In(vec![name9.clone(), text("a")]), In(vec![name9]));
    assert_eq!(scan_ids(&db, &t, "ix_multi", &multi), expected("multi"));
}

/// How the model compares one column: under a collation, or by bytes.
fn compare(order: Option<Collation>, a: &SqlValue, b: &SqlValue) -> Ordering {
    let bytes = |v: &SqlValue| match v {
        SqlValue::Text(t) => t.as_bytes().to_vec(),
        SqlValue::Bytes(b) => b.clone(),
        other => panic!("{other:?}"),
    };
    match order {
        Some(c) => c.compare(&bytes(a), &bytes(b)),
        None => bytes(a).cmp(&bytes(b)),
    }
}

#[test]
fn index_scans_equal_a_filter_over_all_rows() {
    let db = db();
    let t = table(&db);
    let rows: Vec<Row> = t.rows(&db).unwrap().map(|r| r.unwrap()).collect();
    let bin = Collation::from_name("utf8mb4_0900_bin").unwrap();
    let ai = Collation::from_name("utf8mb4_0900_ai_ci").unwrap();
    // (index, row position of its first column, the column's order)
    let indexes = [
        ("ix_name", 1, Some(bin)),
        ("ix_ci", 2, Some(ai)),
        ("ix_body", 3, Some(bin)),
        ("ix_b", 4, None),
        ("ix_bl", 5, None),
        ("ux_ut", 6, Some(bin)),
        ("ux_ub", 7, None),
    ];
    let mut checked = 0;
    for (index, c, order) in indexes {
        // Bounds: every 7th stored value, and cuts of them (inside characters too, as text).
        let mut probes: Vec<SqlValue> = Vec::new();
        for r in rows.iter().step_by(7) {
            let Some(v) = cell(r, c) else { continue };
            probes.push(v.clone());
            if let SqlValue::Text(s) = &v {
                let cut: String = s.chars().take(2).collect();
                probes.push(text(&cut));
                probes.push(text(&format!("{cut}\u{10FFFF}")));
            } else if let SqlValue::Bytes(b) = &v {
                probes.push(SqlValue::Bytes(b[..b.len().min(1)].to_vec()));
            }
        }
        let hashed = index.starts_with("ux_");
        for (i, lo) in probes.iter().enumerate() {
            let hi = &probes[(i * 5 + 3) % probes.len()];
            let mut ranges = vec![KeyRange::prefix(vec![lo.clone()])];
            if !hashed {
                ranges.push(range(Bound::Included(vec![lo.clone()]), Bound::Unbounded));
                ranges.push(range(
                    Bound::Excluded(vec![lo.clone()]),
                    Bound::Included(vec![hi.clone()]),
                ));
                ranges.push(range(Bound::Unbounded, Bound::Excluded(vec![hi.clone()])));
            }
            for r in ranges {
                let inside = |v: &SqlValue| {
                    let lower = match &r.from {
                        Bound::Included(b) => compare(order, v, bound_value(b)).is_ge(),
                        Bound::Excluded(b) => compare(order, v, bound_value(b)).is_gt(),
                        Bound::Unbounded => true,
                    };
                    let upper = match &r.to {
                        Bound::Included(b) => compare(order, v, bound_value(b)).is_le(),
                        Bound::Excluded(b) => compare(order, v, bound_value(b)).is_lt(),
                        Bound::Unbounded => true,
                    };
                    lower && upper
                };
                let mut want: Vec<i64> = rows
                    .iter()
                    .filter(|row| match cell(row, c) {
                        Some(v) => inside(&v),
                        // NULLs sort first: only an unbounded lower end reaches them.
                        None => matches!(r.from, Bound::Unbounded),
                    })
                    .map(id)
                    .collect();
                want.sort_unstable();
                assert_eq!(scan_ids(&db, &t, index, &r), want, "{index} {r:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked} ranges");
}

#[test]
fn reverse_and_limited_scans_through_a_prefix_index() {
    let db = db();
    let t = table(&db);
    let reader = t.reader(&db).unwrap();
    let r = range(Bound::Included(vec![text("a")]), Bound::Unbounded);
    let forward: Vec<i64> = reader
        .index_scan("ix_body", &r)
        .unwrap()
        .map(|r| id(&r.unwrap()))
        .collect();
    let mut reverse: Vec<i64> = reader
        .index_scan(
            "ix_body",
            &KeyRange {
                reverse: true,
                ..r.clone()
            },
        )
        .unwrap()
        .map(|r| id(&r.unwrap()))
        .collect();
    reverse.reverse();
    assert_eq!(forward, reverse);
    let limited: Vec<i64> = reader
        .index_scan(
            "ix_body",
            &KeyRange {
                limit: Some(5),
                ..r
            },
        )
        .unwrap()
        .map(|r| id(&r.unwrap()))
        .collect();
    assert_eq!(limited, forward[..5]);
}

#[test]
fn an_unknown_index_is_a_clear_error() {
    let db = db();
    let t = table(&db);
    let reader = t.reader(&db).unwrap();
    let e = reader
        .index_scan("no_such_index", &KeyRange::all())
        .unwrap_err();
    assert!(e.to_string().contains("no_such_index"), "{e}");
}
