//! Typed rows and errors on the `output_forms` database made with the real Dolt CLI (see
//! `tests/data/README.md`; the conformance runner checks its CSV, schema, log and tag text).

use std::path::{Path, PathBuf};

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::table_rows::for_each_row;
use prollystore_dolt::{Database, DoltError, RootValue};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/dolt-db")
}

fn open() -> (Database, RootValue) {
    let db = prollystore_sql::open(data().join("output_forms")).unwrap();
    let head = db.branch_head("main").unwrap();
    let root = db.root_value(db.commit(head).unwrap().root).unwrap();
    (db, root)
}

/// The CSV lines Dolt printed for `table`, header first.
fn expected_csv(table: &str) -> String {
    std::fs::read_to_string(data().join(format!("output_forms.expected/main/{table}.csv"))).unwrap()
}

/// `SqlValue`'s `Display` gives Dolt's text for early dates and for computed virtual columns:
/// rows read as typed values and printed field by field equal Dolt's CSV (for fields that need
/// no CSV quoting).
#[test]
fn typed_rows_print_as_dolt_does() {
    let (db, root) = open();
    for name in ["early_dates", "gen"] {
        let table = db.table(&root, name).unwrap();
        let want = expected_csv(name);
        let mut lines = want.lines().skip(1);
        let mut rows = 0;
        for_each_row(&db, &table, &mut |row| {
            let line = lines.next().expect("more rows than Dolt printed");
            let text: Vec<String> = row
                .iter()
                .map(|v| v.as_ref().map(|v| v.to_string()).unwrap_or_default())
                .collect();
            if text
                .iter()
                .all(|t| !t.contains([',', '"', '\n']) && t.trim() == t)
            {
                assert_eq!(text.join(","), line, "table {name}");
            }
            rows += 1;
            Ok(())
        })
        .unwrap();
        assert!(rows >= 6, "table {name}: {rows} rows");
        assert_eq!(
            lines.next(),
            None,
            "table {name}: fewer rows than Dolt printed"
        );
    }
}

/// An expression form that is not evaluated is an error naming the column and the
/// expression, from the export and from typed rows alike.
#[test]
fn unsupported_expression_is_a_clear_error() {
    let (db, root) = open();
    let table = db.table(&root, "gen_unsupported").unwrap();
    let mut out = Vec::new();
    let e = export_csv(&db, &table, &mut out).unwrap_err();
    let text = e.to_string();
    assert!(matches!(e, DoltError::Unsupported(_)), "{text}");
    assert!(
        text.contains("\"h\"") && text.contains("md5(`s`)"),
        "{text}"
    );
    let e = for_each_row(&db, &table, &mut |_| Ok(())).unwrap_err();
    assert!(e.to_string().contains("md5"), "{e}");
}
