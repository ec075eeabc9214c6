//! Record batches written into Dolt tables ([`prollystore_arrow::dolt_write`]): the batches
//! read from every table of the Dolt-made golden database (every column type Dolt stores
//! there: out-of-line text and blobs, unsigned, decimal, float, datetime, date, time, year,
//! JSON, ENUM, SET, BIT, a keyless table) write back, into the emptied tables, the very table
//! chunks Dolt wrote; and what a table cannot hold is refused with nothing written.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, Int64Array, ListArray, RecordBatch, StringArray, TimestampNanosecondArray,
};
use prollystore_arrow::dolt_write::write_batches;
use prollystore_arrow::TableBatches;
use prollystore_dolt::write::{RowMode, TableDef};
use prollystore_dolt::{Database, State};
use prollystore_sql::FromSql;

const WHO: (&str, &str) = ("Ada", "ada@example.com");
const WHEN: u64 = 1_704_067_200;

#[test]
fn batches_read_from_dolt_tables_write_back_the_tables_dolt_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    for name in ["docs", "items", "keyless_log", "pairs"] {
        let db = Arc::new(Database::open(&dir).unwrap());
        let before = db.table_at("main", State::Working, name).unwrap();
        // Small batches: a write of many.
        let batches: Vec<RecordBatch> = TableBatches::new(db.clone(), before.clone(), 100)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let count: usize = batches.iter().map(RecordBatch::num_rows).sum();
        drop(db);
        let mut w = prollystore_sql::writer(&dir).unwrap();
        w.truncate(name).unwrap();
        let written = write_batches(&mut w, RowMode::Insert, name, batches).unwrap();
        assert_eq!(written, count, "{name}");
        w.save(WHO, WHEN).unwrap();
        drop(w);
        let after = Database::open(&dir)
            .unwrap()
            .table_at("main", State::Working, name)
            .unwrap();
        assert_eq!(after.address, before.address, "table {name} ({count} rows)");
    }
}

/// A fresh table `t` of `create`, in a new database copied from the golden one.
fn with_table(create: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path()).unwrap();
    let mut w = prollystore_sql::writer(&dir).unwrap();
    w.create_table(&TableDef::from_sql(create).unwrap())
        .unwrap();
    w.save(WHO, WHEN).unwrap();
    (tmp, dir)
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    RecordBatch::try_from_iter(columns).unwrap()
}

/// Inserts `b` into `t` and saves the working set.
fn inserted(dir: &std::path::Path, b: RecordBatch) {
    let mut w = prollystore_sql::writer(dir).unwrap();
    write_batches(&mut w, RowMode::Insert, "t", [b]).unwrap();
    w.save(WHO, WHEN).unwrap();
}

/// The table's rows as `dolt sql -r csv` would print them (through our CSV export).
fn csv(dir: &std::path::Path) -> String {
    let db = Database::open(dir).unwrap();
    let t = db.table_at("main", State::Working, "t").unwrap();
    let mut out = Vec::new();
    prollystore_dolt::csv_export::export_csv(&db, &t, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn nanoseconds_round_as_the_column_keeps_them() {
    let (_tmp, dir) =
        with_table("CREATE TABLE t (id BIGINT PRIMARY KEY, at DATETIME(6), d DATETIME)");
    let ns = TimestampNanosecondArray::from(vec![
        1_704_067_200_123_456_789i64, // .123456789
        -1_200,                       // 1969-12-31 23:59:59.9999988
    ]);
    let b = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
        ("at", Arc::new(ns.clone()) as ArrayRef),
        ("d", Arc::new(ns) as ArrayRef),
    ]);
    inserted(&dir, b);
    assert_eq!(
        csv(&dir),
        "id,at,d\n1,2024-01-01 00:00:00.123457,2024-01-01 00:00:00\n2,1969-12-31 23:59:59.999999,1970-01-01 00:00:00\n"
    );
}

#[test]
fn a_float32_keeps_its_exact_value_in_float_and_double_columns() {
    let (_tmp, dir) = with_table("CREATE TABLE t (id BIGINT PRIMARY KEY, f FLOAT, d DOUBLE)");
    let x = arrow_array::Float32Array::from(vec![0.1f32, 16_777_217.0, -3.5e-20]);
    let b = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1, 2, 3])) as ArrayRef),
        ("f", Arc::new(x.clone()) as ArrayRef),
        ("d", Arc::new(x) as ArrayRef),
    ]);
    inserted(&dir, b);
    // As Dolt prints a FLOAT (32-bit shortest text) and a DOUBLE (the widened value).
    assert_eq!(
        csv(&dir),
        "id,f,d\n1,0.1,0.10000000149011612\n2,1.6777216e+07,1.6777216e+07\n3,-3.5e-20,-3.499999888929329e-20\n"
    );
}

#[test]
fn what_a_table_cannot_hold_is_refused_with_nothing_written() {
    let (_tmp, dir) = with_table("CREATE TABLE t (id BIGINT PRIMARY KEY, n TINYINT, s VARCHAR(3))");
    let before = csv(&dir);
    let ids = Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef;
    let cases: Vec<(RecordBatch, &str)> = vec![
        (
            batch(vec![
                ("id", ids.clone()),
                ("n", Arc::new(Int64Array::from(vec![1, 300])) as ArrayRef),
            ]),
            "300",
        ),
        (
            batch(vec![
                ("id", ids.clone()),
                (
                    "s",
                    Arc::new(StringArray::from(vec!["ok", "long"])) as ArrayRef,
                ),
            ]),
            "long",
        ),
        (
            batch(vec![
                ("id", ids.clone()),
                (
                    "n",
                    Arc::new(ListArray::from_iter_primitive::<
                        arrow_array::types::Int32Type,
                        _,
                        _,
                    >(vec![Some(vec![Some(1)]), None])) as ArrayRef,
                ),
            ]),
            "no SQL type",
        ),
        (
            batch(vec![
                ("id", ids.clone()),
                ("nope", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
            ]),
            "nope",
        ),
    ];
    for (b, says) in cases {
        let mut w = prollystore_sql::writer(&dir).unwrap();
        let e = write_batches(&mut w, RowMode::Insert, "t", [b]).unwrap_err();
        assert!(e.to_string().contains(says), "{e}");
        w.save(WHO, WHEN).unwrap();
        drop(w);
        assert_eq!(csv(&dir), before);
    }
    // A TIMESTAMP column takes instants only.
    let (_tmp2, dir2) = with_table("CREATE TABLE t (id BIGINT PRIMARY KEY, at TIMESTAMP)");
    let naive = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        (
            "at",
            Arc::new(TimestampNanosecondArray::from(vec![0i64])) as ArrayRef,
        ),
    ]);
    let mut w = prollystore_sql::writer(&dir2).unwrap();
    let e = write_batches(&mut w, RowMode::Insert, "t", [naive]).unwrap_err();
    assert!(e.to_string().contains("time zone"), "{e}");
    let at =
        TimestampNanosecondArray::from(vec![1_704_067_200_000_000_000i64]).with_timezone("+01:00");
    let aware = batch(vec![
        ("id", Arc::new(Int64Array::from(vec![1])) as ArrayRef),
        ("at", Arc::new(at) as ArrayRef),
    ]);
    write_batches(&mut w, RowMode::Insert, "t", [aware]).unwrap();
    w.save(WHO, WHEN).unwrap();
    drop(w);
    assert_eq!(csv(&dir2), "id,at\n1,2024-01-01 00:00:00\n");
    // Batches of two schemas.
    let one = batch(vec![("id", ids.clone())]);
    let two = batch(vec![
        ("id", ids),
        ("n", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef),
    ]);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    let e = write_batches(&mut w, RowMode::Insert, "t", [one, two]).unwrap_err();
    assert!(e.to_string().contains("record batch 1"), "{e}");
}
