//! Every table of every Dolt vector database as Arrow record batches, read back cell for cell
//! and compared with the row decoder's values (themselves equal to Dolt's CSV, which is
//! checked here too for tables the mapping loses nothing of): batch sizes 1, 7 and the
//! default; key ranges equal slices of the whole scan; index ranges equal the row iterator's.

mod common;

use common::columns;

use std::ops::Bound;
use std::sync::Arc;

use arrow_array::RecordBatchReader;
use prollystore_arrow::{table_schema, TableBatches, DEFAULT_BATCH_ROWS};
use prollystore_dolt::csv_field::{csv_records, write_csv_row};
use prollystore_dolt::leaf_reader::first_leaf_kept;
use prollystore_dolt::{KeyRange, Row, State, Table};

const DATABASES: [&str; 4] = ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"];

fn arrow_rows(reader: TableBatches, t: &Table, batch: usize) -> Vec<Row> {
    let cols = columns(t);
    let schema = reader.schema();
    let mut out = Vec::new();
    for b in reader {
        let b = b.unwrap();
        assert_eq!(b.schema(), schema);
        assert!(b.num_rows() >= 1 && b.num_rows() <= batch);
        out.extend(common::batch_rows(&b, &cols));
    }
    out
}

fn line(row: &Row) -> Vec<u8> {
    let mut out = Vec::new();
    write_csv_row(row, &mut out);
    out
}

#[test]
fn readers_are_send_and_static() {
    fn check<T: Send + 'static>() {}
    check::<TableBatches>();
    check::<prollystore_arrow::DiffBatches>();
}

#[test]
fn every_vector_table_matches_the_row_decoder_and_dolt_csv() {
    let mut tables = 0;
    let mut csv_checked = 0;
    let mut direct = 0;
    for name in DATABASES {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let expected_dir = dir.with_file_name(format!("{name}.expected"));
        let db = Arc::new(prollystore_sql::open(&dir).unwrap());
        for branch in ["main", "feature"] {
            let Ok(root) = db.root_at(branch, State::Committed) else {
                continue;
            };
            for (tname, _) in &root.tables {
                let t = db.table(&root, tname).unwrap();
                let what = format!("{name} {branch} {tname}");
                let Ok(rows) = t.rows(&db) else {
                    // Tables the row decoder refuses, the Arrow reader refuses too.
                    assert!(
                        TableBatches::new(db.clone(), t.clone(), 7).is_err(),
                        "{what}"
                    );
                    continue;
                };
                let cols = columns(&t);
                let want: Vec<Row> = rows
                    .map(|r| common::as_arrow_sees(&r.unwrap(), &cols))
                    .collect();
                assert_eq!(table_schema(&t.schema).fields().len(), cols.len());
                for batch in [1, 7, DEFAULT_BATCH_ROWS] {
                    let r = TableBatches::new(db.clone(), t.clone(), batch).unwrap();
                    direct += usize::from(r.is_direct() && batch == 1);
                    let got = arrow_rows(r, &t, batch);
                    assert_eq!(got.len(), want.len(), "{what} batch {batch}: row count");
                    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                        assert_eq!(line(g), line(w), "{what} batch {batch} row {i}");
                    }
                }
                // Against Dolt's own CSV where the mapping loses nothing.
                let csv = expected_dir.join(branch).join(format!("{tname}.csv"));
                if let (Ok(text), false) = (std::fs::read(&csv), t.schema.keyless) {
                    let direct: Vec<Row> = t.rows(&db).unwrap().map(|r| r.unwrap()).collect();
                    if direct == want {
                        let recs = csv_records(&text);
                        let got = arrow_rows(
                            TableBatches::new(db.clone(), t.clone(), 100).unwrap(),
                            &t,
                            100,
                        );
                        assert_eq!(recs.len() - 1, got.len(), "{what}: rows vs CSV");
                        for (r, g) in recs.iter().skip(1).zip(&got) {
                            assert_eq!(*r, &line(g)[..], "{what}: CSV line");
                        }
                        csv_checked += 1;
                    }
                }
                tables += 1;
            }
        }
    }
    assert!(tables >= 20, "{tables} tables");
    assert!(
        csv_checked >= 10,
        "{csv_checked} tables checked against CSV"
    );
    assert!(
        direct * 2 >= tables,
        "{direct} of {tables} tables read directly"
    );
    eprintln!("{tables} tables, {direct} read directly, {csv_checked} checked against Dolt's CSV");
}

#[test]
fn key_and_index_ranges_equal_the_row_iterators() {
    let mut checked = 0;
    for name in ["vecdb"] {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let db = Arc::new(prollystore_sql::open(&dir).unwrap());
        let root = db.root_at("main", State::Committed).unwrap();
        for (tname, _) in &root.tables {
            let t = db.table(&root, tname).unwrap();
            let Ok(reader) = t.reader(&db) else { continue };
            let cols = columns(&t);
            let all: Vec<Row> = match t.rows(&db) {
                Ok(r) => r.map(|r| r.unwrap()).collect(),
                Err(_) => continue,
            };
            if !t.schema.keyless && all.len() >= 4 {
                let key = |row: &Row| -> Vec<_> {
                    let vis = t.schema.visible_columns();
                    t.schema
                        .key_columns
                        .iter()
                        .map(|k| row[vis.iter().position(|v| v == k).unwrap()].clone())
                        .collect()
                };
                let n = all.len();
                let (i, j) = (n / 4, 3 * n / 4);
                let range = KeyRange {
                    from: Bound::Included(key(&all[i])),
                    to: Bound::Excluded(key(&all[j])),
                    reverse: false,
                    limit: None,
                };
                if reader.scan(&range).is_ok() {
                    let got = arrow_rows(
                        TableBatches::range(db.clone(), t.clone(), &range, 7).unwrap(),
                        &t,
                        7,
                    );
                    let want: Vec<Row> = all[i..j]
                        .iter()
                        .map(|r| common::as_arrow_sees(r, &cols))
                        .collect();
                    assert_eq!(got, want, "{name} {tname}: range {i}..{j}");
                    checked += 1;
                }
            }
            for ix in &t.schema.indexes {
                let Ok(rows) = reader.index_scan(&ix.name, &KeyRange::all()) else {
                    continue;
                };
                let want: Vec<Row> = rows
                    .map(|r| common::as_arrow_sees(&r.unwrap(), &cols))
                    .collect();
                let got = arrow_rows(
                    TableBatches::index_range(db.clone(), t.clone(), &ix.name, &KeyRange::all(), 5)
                        .unwrap(),
                    &t,
                    5,
                );
                assert_eq!(got, want, "{name} {tname}: index {}", ix.name);
                checked += 1;
            }
        }
    }
    assert!(checked >= 5, "{checked} ranges");
}

#[test]
fn worker_threads_give_the_same_batches() {
    let mut compared = 0;
    for name in DATABASES {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let db = Arc::new(prollystore_sql::open(&dir).unwrap());
        let root = db.root_at("main", State::Committed).unwrap();
        for (tname, _) in &root.tables {
            let t = db.table(&root, tname).unwrap();
            let Ok(one) = TableBatches::with_threads(db.clone(), t.clone(), 7, 1) else {
                continue;
            };
            let one: Vec<_> = one.map(Result::unwrap).collect();
            for threads in [2, 3, 8] {
                let many: Vec<_> = TableBatches::with_threads(db.clone(), t.clone(), 7, threads)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                assert_eq!(many, one, "{name} {tname}: {threads} threads");
                compared += 1;
            }
            // Dropped half way: the workers stop.
            let mut r = TableBatches::with_threads(db.clone(), t.clone(), 3, 4).unwrap();
            r.next();
            drop(r);
        }
    }
    assert!(compared >= 20, "{compared}");
}

#[test]
fn cold_tables_read_by_the_bulk_leaf_reader_give_the_same_batches() {
    let mut cold = 0;
    for name in DATABASES {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let warm = Arc::new(prollystore_sql::open(&dir).unwrap());
        let root = warm.root_at("main", State::Committed).unwrap();
        for (tname, _) in &root.tables {
            let t = warm.table(&root, tname).unwrap();
            let Ok(one) = TableBatches::with_threads(warm.clone(), t.clone(), 7, 1) else {
                continue;
            };
            let one: Vec<_> = one.map(Result::unwrap).collect();
            // A fresh handle: nothing in its chunk arena yet.
            let db = Arc::new(prollystore_sql::open(&dir).unwrap());
            let t = db.table(&root, tname).unwrap();
            if first_leaf_kept(&db, &t).unwrap() {
                continue; // one node, or not direct
            }
            let many: Vec<_> = TableBatches::with_threads(db.clone(), t.clone(), 7, 2)
                .unwrap()
                .map(Result::unwrap)
                .collect();
            assert_eq!(many, one, "{name} {tname}: bulk leaf reader");
            // The leaves stay in the arena: the next pass takes the cursors.
            assert!(first_leaf_kept(&db, &t).unwrap(), "{name} {tname}");
            cold += 1;
            // Other batch sizes and worker counts: batches cut at the same rows.
            for (batch, threads) in [(1, 2), (2, 3), (5, 2), (64, 3), (100, 4)] {
                let one: Vec<_> = TableBatches::with_threads(warm.clone(), t.clone(), batch, 1)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                let db = Arc::new(prollystore_sql::open(&dir).unwrap());
                let t = db.table(&root, tname).unwrap();
                let many: Vec<_> = TableBatches::with_threads(db, t, batch, threads)
                    .unwrap()
                    .map(Result::unwrap)
                    .collect();
                assert_eq!(many, one, "{name} {tname}: {batch} rows, {threads} threads");
            }
            // Dropped half way on a fresh handle: the builder and readers stop.
            let db = Arc::new(prollystore_sql::open(&dir).unwrap());
            let mut r = TableBatches::with_threads(db, t.clone(), 3, 4).unwrap();
            r.next();
            drop(r);
        }
    }
    assert!(cold >= 1, "{cold} tables of more than one leaf");
}
