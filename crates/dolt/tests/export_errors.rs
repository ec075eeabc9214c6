//! A damaged leaf in the middle of a table makes the streaming export fail with an error that
//! names the file (after the rows before it), on every thread layout, without hanging; in a
//! journal, the damage is found when the database opens.

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::Database;
use prollystore_format::message::Node;

/// Copies a directory tree.
fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn damaged_leaf_fails_the_export() {
    let dir = prollystore_test_vectors::require("dolt-db");
    let mut tested = Vec::new();
    for db_name in ["vecdb_journal", "vecdb_tablefiles"] {
        let src = dir.join(db_name);
        let db = Database::open(&src).unwrap();
        let head = db.branch_head("main").unwrap();
        let root = db.root_value(db.commit(head).unwrap().root).unwrap();
        for (name, _) in &root.tables {
            let table = db.table(&root, name).unwrap();
            let node = Node::verify(&table.primary_index).unwrap();
            if node.is_leaf() || node.level() != 1 || node.count() < 3 || table.schema.keyless {
                continue;
            }
            let mut clean = Vec::new();
            if export_csv(&db, &table, &mut clean).is_err() {
                continue;
            }
            // Flip a byte in the middle of the second leaf's record, in a copy of the database.
            let leaf = node.child(1);
            let span = db
                .source()
                .record_span(&leaf)
                .expect("a journal or table file record");
            let copy = std::env::temp_dir().join(format!(
                "prolly-export-errors-{}-{db_name}-{name}",
                std::process::id()
            ));
            let _ = std::fs::remove_dir_all(&copy);
            copy_dir(&src, &copy);
            let file_name = db
                .source()
                .newgen()
                .files
                .iter()
                .chain(&db.source().oldgen().files)
                .find(|f| f.has(&leaf))
                .map(|f| f.name().to_string())
                .unwrap();
            let rel = std::path::Path::new(&file_name)
                .strip_prefix(&src)
                .unwrap()
                .to_path_buf();
            let path = copy.join(rel);
            let mut bytes = std::fs::read(&path).unwrap();
            bytes[span.offset as usize + span.len / 2] ^= 0x10;
            std::fs::write(&path, bytes).unwrap();

            // A journal with valid records after the damaged one refuses to open (an older
            // state would be data loss); a table file keeps its index and the chunk's CRC-32C
            // fails on read.
            let damaged = match Database::open(&copy) {
                Ok(damaged) => damaged,
                Err(err) => {
                    let text = err.to_string();
                    assert_eq!(db_name, "vecdb_journal", "{text}");
                    assert!(
                        text.contains(&path.display().to_string())
                            && text.contains(&format!("offset {}", span.offset - 28)),
                        "{name}: {text}"
                    );
                    std::fs::remove_dir_all(&copy).unwrap();
                    tested.push(db_name);
                    continue;
                }
            };
            let mut out = Vec::new();
            let result = damaged
                .commit(head)
                .and_then(|c| damaged.root_value(c.root))
                .and_then(|r| damaged.table(&r, name))
                .and_then(|t| export_csv(&damaged, &t, &mut out));
            let err = result.expect_err("damaged leaf");
            if db_name == "vecdb_tablefiles" {
                assert!(
                    err.to_string().contains(&path.display().to_string()),
                    "{db_name} {name}: {err}"
                );
            }
            assert!(out.len() < clean.len());
            assert_eq!(&clean[..out.len()], &out[..]);
            std::fs::remove_dir_all(&copy).unwrap();
            tested.push(db_name);
        }
    }
    // Both file forms had a table of several leaves.
    assert!(tested.contains(&"vecdb_journal"), "{tested:?}");
    assert!(tested.contains(&"vecdb_tablefiles"), "{tested:?}");
}
