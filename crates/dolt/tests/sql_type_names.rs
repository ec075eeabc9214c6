//! `prollystore::rows` maps SQL type names to the encodings Dolt uses: checked against every
//! column of every table in the vector databases, whose schemas the real Dolt wrote.

use prollystore::rows::sql_type_encoding;
use prollystore_dolt::Database;

#[test]
fn sql_type_names_map_to_the_encodings_dolt_chose() {
    let mut checked = 0;
    for name in ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"] {
        let db = Database::open(prollystore_test_vectors::require(&format!(
            "dolt-db/{name}"
        )))
        .unwrap();
        for (_, head) in db.branches().unwrap() {
            let root = db.root_value(db.commit(head).unwrap().root).unwrap();
            for (table, _) in &root.tables {
                let t = db.table(&root, table).unwrap();
                for c in t.schema.columns.iter().filter(|c| !c.hidden) {
                    let ty = c.sql_type_text.split(" COLLATE ").next().unwrap_or("");
                    let ty = ty.split(" CHARACTER SET ").next().unwrap_or("");
                    assert_eq!(
                        sql_type_encoding(ty),
                        Some(c.encoding),
                        "{name} {table}.{}: {:?}",
                        c.name,
                        c.sql_type_text
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 100, "{checked} columns");
}
