//! Diff batches equal the table diff's row changes: for every diff of `dolt_diff`'s test
//! database (made by the real Dolt CLI, see crates/dolt/tests/data/dolt_diff), each batch row
//! reads back as the change's `to` values, `to` side, `from` values, `from` side and kind, with
//! batch sizes 1, 3 and the default.

mod common;

use common::columns;

use std::path::Path;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{Array, RecordBatchReader};
use prollystore_arrow::{DiffBatches, DEFAULT_BATCH_ROWS};
use prollystore_dolt::schema::Column;
use prollystore_dolt::table_diff::TableDiff;

#[test]
fn diff_batches_equal_the_row_changes() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../dolt/tests/data/dolt_diff");
    let db = Arc::new(prollystore_sql::open(dir.join("db")).unwrap());
    let queries = std::fs::read_to_string(dir.join("queries.txt")).unwrap();
    let mut rows_checked = 0;
    for line in queries.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let [from, to, table] = parts[..] else {
            continue;
        };
        if table == "-" {
            continue;
        }
        let diff = TableDiff::new(&db, from, to, table).unwrap();
        let Ok(changes) = diff.rows() else {
            assert!(DiffBatches::new(db.clone(), from, to, table, 4).is_err());
            continue;
        };
        let want: Vec<_> = changes.map(|c| c.unwrap()).collect();
        let to_t = diff
            .to()
            .table
            .as_ref()
            .or(diff.from().table.as_ref())
            .unwrap();
        let from_t = diff
            .from()
            .table
            .as_ref()
            .or(diff.to().table.as_ref())
            .unwrap();
        let (to_cols, from_cols) = (columns(to_t), columns(from_t));
        for batch in [1, 3, DEFAULT_BATCH_ROWS] {
            let reader = DiffBatches::new(db.clone(), from, to, table, batch).unwrap();
            let schema = reader.schema();
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            assert_eq!(names.last(), Some(&"diff_type"));
            assert_eq!(names.len(), to_cols.len() + from_cols.len() + 5);
            let mut i = 0;
            for b in reader {
                let b = b.unwrap();
                assert!(b.num_rows() <= batch);
                let nt = to_cols.len();
                let nf = from_cols.len();
                for r in 0..b.num_rows() {
                    let change = &want[i];
                    let side = |first: usize, cols: &[&Column]| {
                        let v: Vec<_> = cols
                            .iter()
                            .enumerate()
                            .map(|(k, c)| common::cell(b.column(first + k).as_ref(), r, c))
                            .collect();
                        v
                    };
                    let expect = |row: &Option<Vec<_>>, cols: &[&Column]| match row {
                        Some(v) => common::as_arrow_sees(v, cols),
                        None => vec![None; cols.len()],
                    };
                    let what = format!("{from} {to} {table} batch {batch} change {i}");
                    assert_eq!(side(0, &to_cols), expect(&change.to, &to_cols), "{what}");
                    assert_eq!(
                        side(nt + 2, &from_cols),
                        expect(&change.from, &from_cols),
                        "{what}"
                    );
                    let text = |c: usize| b.column(c).as_string::<i32>().value(r).to_string();
                    let date = |c: usize| {
                        b.column(c)
                            .as_primitive::<TimestampMicrosecondType>()
                            .value(r)
                    };
                    assert_eq!(text(nt), diff.to().spec, "{what}");
                    // WORKING and STAGED are dated when the diff is made.
                    let clock = |spec: &str| matches!(spec, "WORKING" | "STAGED");
                    if !clock(to) {
                        assert_eq!(date(nt + 1), diff.to().date_micros, "{what}");
                    }
                    assert_eq!(text(nt + 2 + nf), diff.from().spec, "{what}");
                    if !clock(from) {
                        assert_eq!(date(nt + 3 + nf), diff.from().date_micros, "{what}");
                    }
                    assert_eq!(text(nt + nf + 4), change.kind.as_str(), "{what}");
                    assert!(!b.column(nt + nf + 4).is_null(r));
                    i += 1;
                    rows_checked += 1;
                }
            }
            assert_eq!(i, want.len(), "{from} {to} {table} batch {batch}: rows");
        }
    }
    assert!(rows_checked > 30, "{rows_checked} rows");
}
