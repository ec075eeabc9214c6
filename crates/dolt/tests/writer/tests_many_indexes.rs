//! Tables whose map of secondary indexes (index name → index tree) is past the 512 item bytes
//! (name plus 20-byte address each) below which Dolt's chunker never ends a node, which the
//! writer once refused: 20 indexes with 20-character names (800 bytes, still one node: no
//! boundary falls), and 64 (MySQL's most) with 40-character names (3840 bytes, several
//! nodes). Each is created, filled, committed and read back through every index; Dolt makes
//! the same tables from the same statements, and its table hashes must be ours.

use prollystore_sql::FromSql;
use std::path::Path;

use super::helpers::{copy_tree, dolt, meta, scenario, DOLT_ENV};
use prollystore_dolt::db::{Database, State};
use prollystore_dolt::sql_value::SqlValue;
use prollystore_dolt::table_reader::KeyRange;
use prollystore_dolt::write::{DoltWriter, RowMode, TableDef};
use prollystore_format::message::objects::TableFields;
use prollystore_format::message::AddressMapNode;

const ROWS: i64 = 30;

/// One table of the test: its name, its number of indexes (one per column besides the key)
/// and the length of their names, whether its index map is one node, and the table hash
/// Dolt 2.3.1 (`/work/dolt-bin/dolt`, the vectors' build) gave it: `select
/// dolt_hashof_table(..)` after [`create_sql`] and [`insert_sql`] run by `dolt sql -q` in a
/// copy of `basic/before`, as this test does under `PROLLY_DOLT`.
struct Case {
    table: &'static str,
    indexes: usize,
    name_len: usize,
    one_node: bool,
    dolt_hash: &'static str,
}

const CASES: [Case; 2] = [
    Case {
        table: "t",
        indexes: 20,
        name_len: 20,
        one_node: true,
        dolt_hash: "j5n1abg7pa270koh88qmnpsbg2g4blc7",
    },
    Case {
        table: "u",
        indexes: 64,
        name_len: 40,
        one_node: false,
        dolt_hash: "0rab72vvt7t924dod13ac2tkmqiob4lm",
    },
];

/// Index `i`'s name: `len` characters (at most 43).
fn index_name(i: usize, len: usize) -> String {
    format!(
        "{}{i:03}",
        &"idx_many_columns_of_a_wide_table_number_"[..len - 3]
    )
}

fn create_sql(c: &Case) -> String {
    let cols: String = (1..=c.indexes).map(|i| format!(", c{i:02} INT")).collect();
    let keys: String = (1..=c.indexes)
        .map(|i| format!(", KEY {} (c{i:02})", index_name(i, c.name_len)))
        .collect();
    format!("CREATE TABLE {} (id INT PRIMARY KEY{cols}{keys})", c.table)
}

/// Row `id`'s value of column `i` (NULL now and then, so index keys repeat and hold NULLs).
fn cell(id: i64, i: usize) -> Option<String> {
    let v = (id * 7 + i as i64 * 13) % 11;
    (v != 0).then(|| (v - 5).to_string())
}

fn insert_sql(c: &Case) -> String {
    let rows: Vec<String> = (1..=ROWS)
        .map(|id| {
            let cells: String = (1..=c.indexes)
                .map(|i| format!(", {}", cell(id, i).unwrap_or_else(|| "NULL".into())))
                .collect();
            format!("({id}{cells})")
        })
        .collect();
    format!("INSERT INTO {} VALUES {}", c.table, rows.join(", "))
}

/// Dolt's hashes of the tables made by the same statements; `None` without `PROLLY_DOLT`.
fn dolt_tables(tmp: &Path) -> Option<Vec<String>> {
    std::env::var_os(DOLT_ENV).filter(|v| !v.is_empty())?;
    let dir = tmp.join("theirs");
    copy_tree(&scenario("basic/before"), &dir);
    let mut hashes = Vec::new();
    for c in &CASES {
        dolt(&dir, &["sql", "-q", &create_sql(c)]).unwrap();
        dolt(&dir, &["sql", "-q", &insert_sql(c)]).unwrap();
        let q = format!("select dolt_hashof_table('{}')", c.table);
        let out = dolt(&dir, &["sql", "-r", "csv", "-q", &q]).unwrap();
        hashes.push(out.lines().nth(1).unwrap().trim().to_string());
    }
    Some(hashes)
}

#[test]
fn tables_with_index_maps_past_512_bytes_commit_and_read_back_as_dolts() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("ours");
    copy_tree(&scenario("basic/before"), &dir);
    let mut w = prollystore_sql::writer(&dir).unwrap();
    for c in &CASES {
        create_and_fill(&mut w, c);
    }
    w.commit(&meta("many indexes")).unwrap();
    drop(w);
    let db = prollystore_sql::open(&dir).unwrap();
    let ours: Vec<String> = CASES.iter().map(|c| read_back(&db, c)).collect();
    let pinned: Vec<&str> = CASES.iter().map(|c| c.dolt_hash).collect();
    match dolt_tables(tmp.path()) {
        Some(theirs) => {
            assert_eq!(ours, theirs, "Dolt's table hashes");
            assert_eq!(theirs, pinned, "the recorded table hashes Dolt made");
            // Dolt reads our committed tables through their last index (the map's last node).
            for c in &CASES {
                let n = c.indexes;
                let q = format!(
                    "SELECT id, c{n:02} FROM {} FORCE INDEX ({}) WHERE c{n:02} > 2 ORDER BY id",
                    c.table,
                    index_name(n, c.name_len)
                );
                let got = dolt(&dir, &["sql", "-r", "csv", "-q", &q]).unwrap();
                let want: String = rows(c)
                    .iter()
                    .filter_map(|r| {
                        let v = r[n].as_deref()?;
                        (v.parse::<i64>().unwrap() > 2)
                            .then(|| format!("{},{v}\n", r[0].as_ref().unwrap()))
                    })
                    .collect();
                assert_eq!(got, format!("id,c{n:02}\n{want}"), "{q}");
            }
        }
        None => assert_eq!(ours, pinned, "the table hashes Dolt made"),
    }
}

/// The rows of case `c`: the key, then each column's value.
fn rows(c: &Case) -> Vec<Vec<Option<String>>> {
    (1..=ROWS)
        .map(|id| {
            std::iter::once(Some(id.to_string()))
                .chain((1..=c.indexes).map(|i| cell(id, i)))
                .collect()
        })
        .collect()
}

/// Creates case `c`'s table and inserts its rows through our writer.
fn create_and_fill(w: &mut DoltWriter, c: &Case) {
    w.create_table(&TableDef::from_sql(&create_sql(c)).unwrap())
        .unwrap();
    let columns: Vec<String> = std::iter::once("id".to_string())
        .chain((1..=c.indexes).map(|i| format!("c{i:02}")))
        .collect();
    let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
    let rows = rows(c);
    let text: Vec<Vec<Option<&str>>> = rows
        .iter()
        .map(|r| r.iter().map(Option::as_deref).collect())
        .collect();
    w.apply_text(RowMode::Insert, c.table, &columns, &text)
        .unwrap();
}

/// Reads case `c`'s committed table back (its rows, and the same rows through every index);
/// returns its hash.
fn read_back(db: &Database, c: &Case) -> String {
    let t = db.table_at("main", State::Committed, c.table).unwrap();
    let want: Vec<Vec<Option<SqlValue>>> = rows(c)
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.as_ref().map(|v| SqlValue::Int(v.parse().unwrap())))
                .collect()
        })
        .collect();
    let all: Vec<Vec<Option<SqlValue>>> = t.rows(db).unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(all, want);
    let mut names: Vec<&str> = t
        .secondary_indexes
        .iter()
        .map(|(n, _)| n.as_str())
        .collect();
    names.sort_unstable();
    let mut expected: Vec<String> = (1..=c.indexes).map(|i| index_name(i, c.name_len)).collect();
    expected.sort();
    assert_eq!(names, expected);
    let reader = t.reader(db).unwrap();
    for (ix, _) in &t.secondary_indexes {
        let mut via: Vec<Vec<Option<SqlValue>>> = reader
            .index_scan(ix, &KeyRange::all())
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        via.sort_by_key(|r| match r[0] {
            Some(SqlValue::Int(i)) => i,
            ref other => panic!("{other:?}"),
        });
        assert_eq!(via, want, "index {ix}");
    }

    // The index map's root node, embedded in the table chunk: one leaf, or above leaves.
    let chunk = db.source().chunk(&t.address).unwrap();
    let fields = TableFields::decode(&chunk).unwrap();
    let root = AddressMapNode::verify(fields.secondary_indexes).unwrap();
    assert_eq!(root.is_leaf(), c.one_node, "table {}", c.table);
    t.address.to_string()
}
