//! Schemas whose stored form a reader must not take at its word, in a database made by the
//! real Dolt with `data/make_schema_forms.sh` (`data/schema_forms/db`), which also saved
//! Dolt's answers (`schema_forms/expected/*.csv`):
//! - secondary indexes of a table whose primary key is not in column order, after Dolt changed
//!   a column in place: Dolt 2.3.1 then writes the schema with each index's trailing
//!   primary-key columns in column order (`k, j`), while the index rows stay keyed by the
//!   primary key's order (`j, k`), and Dolt reads them so;
//! - `utf8mb4_0900_bin` columns of a `utf8mb4_0900_ai_ci` table: their stored type names no
//!   collation, and they order (and match) by bytes, not by the table's collation.

use std::path::PathBuf;

use prollystore_dolt::{Database, KeyRange, Row, SqlValue, State};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/schema_forms")
        .join(rel)
}

/// The `(k, j)` of each row, as Dolt printed them (the first two CSV fields).
fn expected(name: &str) -> Vec<(String, i64)> {
    std::fs::read_to_string(data(&format!("expected/{name}.csv")))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| {
            let mut f = l.split(',');
            (
                f.next().unwrap().to_string(),
                f.next().unwrap().parse().unwrap(),
            )
        })
        .collect()
}

fn key_of(row: &Row) -> (String, i64) {
    match (&row[0], &row[1]) {
        (Some(SqlValue::Text(k)), Some(SqlValue::Int(j))) => (k.to_string(), *j),
        other => panic!("row key {other:?}"),
    }
}

#[test]
fn indexes_read_in_dolts_order_after_an_in_place_modify() {
    let db = Database::open(data("db")).unwrap();
    let t = db.table_at("main", State::Committed, "t").unwrap();
    let reader = t.reader(&db).unwrap();
    let all: Vec<(String, i64)> = reader
        .scan(&KeyRange::all())
        .unwrap()
        .map(|r| key_of(&r.unwrap()))
        .collect();
    assert_eq!(all, expected("primary"));
    for index in ["iv", "iu", "uvk"] {
        let got: Vec<(String, i64)> = reader
            .index_scan(index, &KeyRange::all())
            .unwrap_or_else(|e| panic!("index {index}: {e}"))
            .map(|r| key_of(&r.unwrap_or_else(|e| panic!("index {index}: {e}"))))
            .collect();
        assert_eq!(
            got,
            expected(index),
            "index {index} in Dolt's ORDER BY order"
        );
    }
}

/// The schema's indexes are keyed as Dolt reads them: the index's columns, then the primary
/// key's other columns in key order (not the column order the message lists).
#[test]
fn index_key_columns_follow_the_primary_key_order() {
    let db = Database::open(data("db")).unwrap();
    let t = db.table_at("main", State::Committed, "t").unwrap();
    let s = &t.schema;
    let name = |i: usize| s.columns[i].name.as_str();
    let keys = |ix: &str| -> Vec<&str> {
        let ix = s.indexes.iter().find(|x| x.name == ix).unwrap();
        ix.key_columns.iter().map(|&c| name(c)).collect()
    };
    assert_eq!(keys("iv"), ["v", "j", "k"]);
    assert_eq!(keys("iu"), ["u", "j", "k"]);
    assert_eq!(keys("uvk"), ["v", "k", "j"]);
}

/// Dolt's answer to a saved query, as CSV lines after the header.
fn lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(data(&format!("expected/{name}.csv")))
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

fn text_row(row: &Row) -> String {
    row.iter()
        .map(|v| match v {
            Some(SqlValue::Text(s)) => s.to_string(),
            other => panic!("a text value, not {other:?}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn texts(v: &str) -> Vec<SqlValue> {
    vec![SqlValue::Text(v.into())]
}

#[test]
fn binary_columns_of_a_ci_table_order_and_match_by_bytes() {
    let db = Database::open(data("db")).unwrap();
    let t = db.table_at("main", State::Committed, "bc").unwrap();
    let reader = t.reader(&db).unwrap();
    let rows = |r: prollystore_dolt::Result<prollystore_dolt::Rows<'_>>| -> Vec<String> {
        r.unwrap().map(|r| text_row(&r.unwrap())).collect()
    };
    assert_eq!(rows(reader.scan(&KeyRange::all())), lines("bc_primary"));
    assert_eq!(
        rows(reader.index_scan("ic", &KeyRange::all())),
        lines("bc_ic")
    );
    assert_eq!(
        rows(reader.index_scan("it", &KeyRange::all())),
        lines("bc_it")
    );
    let exact = |v: &str| {
        KeyRange::between(
            std::ops::Bound::Included(texts(v)),
            std::ops::Bound::Included(texts(v)),
        )
    };
    assert_eq!(rows(reader.scan(&exact("B"))), lines("bc_k_B"));
    assert_eq!(rows(reader.index_scan("ic", &exact("X"))), lines("bc_c_X"));
    // The table's own collation still serves its other columns: 'b2' finds 'B2'.
    assert_eq!(
        rows(reader.index_scan("it", &exact("b2"))),
        lines("bc_t_b2")
    );
}
