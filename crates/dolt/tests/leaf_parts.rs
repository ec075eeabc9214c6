//! The bulk leaf reader's parts ([`for_each_part`]) against its leaf-by-leaf pass
//! ([`for_each_leaf`]): the same entries in the same order, cut into parts of exactly the size
//! asked for (the last one fewer), numbered in order, whatever the part size and the number of
//! worker threads, on every table of the vector databases (one-node tables included); and the
//! parts of a range of rows ([`for_each_part_of`]) are that range's entries, cut from its start.

use std::sync::Arc;

use prollystore_dolt::leaf_reader::{for_each_leaf, for_each_part, for_each_part_of, PartLeaves};
use prollystore_dolt::{Database, State, Table};

const DATABASES: [&str; 4] = ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"];

/// Every (key, value) of the table, leaf by leaf.
fn entries(db: &Database, t: &Table) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut out = Vec::new();
    for_each_leaf(db, t, false, &mut |node| {
        for e in 0..node.count() {
            out.push((node.key(e).to_vec(), node.value(e).to_vec()));
        }
        Ok(true)
    })
    .unwrap();
    out
}

/// A part as made on a worker: its number, first row, row count and entries.
type Part = (u64, u64, u64, Vec<(Vec<u8>, Vec<u8>)>);

fn part(p: &mut PartLeaves<'_>) -> prollystore_dolt::Result<Part> {
    let mut rows = Vec::new();
    while let Some((node, range)) = p.next_leaf()? {
        for e in range {
            rows.push((node.key(e).to_vec(), node.value(e).to_vec()));
        }
    }
    Ok((p.index(), p.first_row(), p.rows(), rows))
}

/// A keyed table on main of a vector database.
struct KeyedTable {
    /// The database's directory (for fresh handles).
    dir: std::path::PathBuf,
    /// Database and table, for messages.
    name: String,
    /// The handle the table was read through.
    warm: Database,
    table: Table,
    /// Its entries, leaf by leaf.
    all: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Every keyed table on main of the vector databases.
fn keyed_tables() -> Vec<KeyedTable> {
    let mut out = Vec::new();
    for name in DATABASES {
        let dir = prollystore_test_vectors::require(&format!("dolt-db/{name}"));
        let root = Database::open(&dir)
            .unwrap()
            .root_at("main", State::Committed)
            .unwrap();
        for (tname, _) in &root.tables {
            let warm = Database::open(&dir).unwrap();
            let table = warm.table(&root, tname).unwrap();
            if table.schema.keyless {
                continue;
            }
            let all = entries(&warm, &table);
            out.push(KeyedTable {
                dir: dir.clone(),
                name: format!("{name} {tname}"),
                warm,
                table,
                all,
            });
        }
    }
    out
}

#[test]
fn parts_hold_the_leaves_entries_in_order() {
    let (mut tables, mut multi_leaf) = (0, 0);
    for KeyedTable {
        dir,
        name,
        warm,
        table: t,
        all,
    } in keyed_tables()
    {
        let mut leaves = 0;
        for_each_leaf(&warm, &t, false, &mut |_| {
            leaves += 1;
            Ok(true)
        })
        .unwrap();
        multi_leaf += usize::from(leaves > 1);
        tables += 1;
        for part_rows in [1u64, 2, 7, 64, 1000, u64::MAX / 2] {
            for threads in [1, 2, 3] {
                // A fresh handle each time: the leaves are read from the files.
                let db = Arc::new(Database::open(&dir).unwrap());
                let mut parts = Vec::new();
                for_each_part(&db, &t, true, part_rows, threads, &part, &mut |p| {
                    parts.push(p);
                    Ok(true)
                })
                .unwrap();
                let what = format!("{name}: parts of {part_rows}, {threads} threads");
                let mut got = Vec::new();
                for (k, (index, first, rows, part)) in parts.into_iter().enumerate() {
                    assert_eq!(index, k as u64, "{what}");
                    assert_eq!(first, k as u64 * part_rows, "{what}");
                    assert_eq!(rows, part.len() as u64, "{what}");
                    let last = first + rows == all.len() as u64;
                    assert!(rows == part_rows || (last && rows > 0), "{what}: part {k}");
                    got.extend(part);
                }
                assert_eq!(got, all, "{what}");
            }
        }
        // Stopped after the first part: the workers and the walker stop.
        let db = Database::open(&dir).unwrap();
        let mut taken = 0;
        for_each_part(&db, &t, false, 3, 2, &part, &mut |_| {
            taken += 1;
            Ok(false)
        })
        .unwrap();
        assert!(taken <= 1, "{name}");
    }
    assert!(
        tables >= 10 && multi_leaf >= 1,
        "{tables} tables, {multi_leaf} of many leaves"
    );
}

#[test]
fn parts_of_no_rows_are_refused() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let db = Database::open(&dir).unwrap();
    let root = db.root_at("main", State::Committed).unwrap();
    let (tname, _) = root.tables.first().unwrap();
    let t = db.table(&root, tname).unwrap();
    let r = for_each_part(&db, &t, false, 0, 2, &part, &mut |_| Ok(true));
    assert!(r.is_err());
}

/// Parts of a range of positions hold that range's entries, cut from its start (first rows
/// `start + k * part_rows`), for ranges that start and end inside leaves, at the ends, past
/// the end and empty, on a fresh handle each time.
#[test]
fn parts_of_a_range_hold_its_entries() {
    let mut checked = 0;
    for KeyedTable {
        dir,
        name,
        table: t,
        all,
        ..
    } in keyed_tables()
    {
        let n = all.len() as u64;
        let ranges = [
            (0, n),
            (1, n),
            (0, n.saturating_sub(1)),
            (n / 3, 2 * n / 3 + 1),
            (n / 2, n / 2),
            (n.saturating_sub(2), n + 10),
            (n + 1, n + 5),
        ];
        for (start, end) in ranges {
            for part_rows in [1u64, 5, 97, u64::MAX / 2] {
                let db = Arc::new(Database::open(&dir).unwrap());
                let mut parts = Vec::new();
                for_each_part_of(&db, &t, start..end, true, part_rows, 2, &part, &mut |p| {
                    parts.push(p);
                    Ok(true)
                })
                .unwrap();
                let what = format!("{name}: rows {start}..{end}, parts of {part_rows}");
                let mut got = Vec::new();
                for (k, (index, first, rows, part)) in parts.into_iter().enumerate() {
                    assert_eq!(index, k as u64, "{what}");
                    assert_eq!(first, start + k as u64 * part_rows, "{what}");
                    assert_eq!(rows, part.len() as u64, "{what}");
                    got.extend(part);
                }
                let want =
                    &all[(start.min(n) as usize)..(end.min(n) as usize).max(start.min(n) as usize)];
                assert_eq!(got, want, "{what}");
                checked += 1;
            }
        }
    }
    assert!(checked >= 100, "{checked}");
}
