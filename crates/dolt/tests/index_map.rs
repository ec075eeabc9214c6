//! Every index of every table in the vector databases reads as a prolly map: the clustered
//! index under its collated key order holds the same entries as a plain byte-order scan, every
//! key gets back its own value, and each secondary index has one entry per row.

use prollystore_dolt::Database;

const DATABASES: [&str; 4] = ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"];

#[test]
fn every_index_reads_as_a_map() {
    for name in DATABASES {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let db = Database::open(&dir).unwrap();
        for branch in ["main", "feature"] {
            let Ok(head) = db.resolve(branch) else {
                continue;
            };
            let root = db.root_value(db.commit(head).unwrap().root).unwrap();
            for (table_name, _) in &root.tables {
                let table = db.table(&root, table_name).unwrap();
                let walked: Vec<(Vec<u8>, Vec<u8>)> = table
                    .primary_scan_map(&db)
                    .iter()
                    .unwrap()
                    .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
                    .collect::<Result<_, _>>()
                    .unwrap();
                let map = match table.primary_map(&db) {
                    Ok(m) => m,
                    Err(e) => panic!("{name} {branch} {table_name}: {e}"),
                };
                let read: Vec<(Vec<u8>, Vec<u8>)> = map
                    .iter()
                    .unwrap()
                    .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
                    .collect::<Result<_, _>>()
                    .unwrap();
                assert_eq!(read, walked, "{name} {branch} {table_name}");
                assert_eq!(map.count().unwrap(), walked.len() as u64);
                for (k, v) in &walked {
                    let got = map.get(k).unwrap();
                    assert_eq!(got, Some(&v[..]), "{name} {branch} {table_name}: get");
                }
                for ix in &table.schema.indexes {
                    let imap = match table.index_map(&db, &ix.name) {
                        Ok(m) => m,
                        Err(e) => panic!("{name} {table_name} {}: {e}", ix.name),
                    };
                    let n = imap.count().unwrap();
                    if !table.schema.keyless {
                        assert_eq!(n, walked.len() as u64, "{name} {table_name} {}", ix.name);
                    }
                    for r in imap.iter().unwrap() {
                        let (k, _) = r.unwrap();
                        assert!(imap.get(k).unwrap().is_some(), "{} get", ix.name);
                    }
                }
            }
        }
    }
}
