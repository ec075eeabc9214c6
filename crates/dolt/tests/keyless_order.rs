//! Keyless tables come out in Dolt's `ORDER BY` every column order: text under each column's
//! collation (or the table's), JSON in Dolt's JSON order. Checked against Dolt's own output for
//! the database in `tests/data/keyless_collated` (see the README there).

use std::path::Path;

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::Database;

#[test]
fn keyless_rows_order_by_collation_and_json_as_in_dolt() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/keyless_collated");
    let db = Database::open(&dir).unwrap();
    let head = db.branch_head("main").unwrap();
    let root = db.root_value(db.commit(head).unwrap().root).unwrap();
    for name in ["k", "u"] {
        let table = db.table(&root, name).unwrap();
        assert!(table.schema.keyless, "{name}");
        let mut out = Vec::new();
        export_csv(&db, &table, &mut out).unwrap();
        let want = std::fs::read_to_string(dir.join(format!("{name}.csv"))).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), want, "table {name}");
    }
}
