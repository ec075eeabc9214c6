//! Keyed reads against a `<db>.expected/` folder made by the `dolt` CLI: for every table CSV of
//! every branch (the working state, as the export check reads it), each row of Dolt's output
//! fetched by its primary key (parsed from the CSV text; binary key values taken as the raw
//! bytes Dolt prints) must be that row, and a few key ranges
//! (inclusive, exclusive, reverse, limited, a composite key's prefix) must be the matching
//! slices of Dolt's key-ordered output. Keyless tables (no primary key) and tables whose export
//! differs anyway (counted by the export check) are left out.

use std::ops::Bound;
use std::path::Path;

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::csv_field::{csv_fields as fields, csv_records as records, write_csv_row};
use prollystore_dolt::{Database, KeyRange, SqlType, SqlValue, State, Table, TableReader};

/// Checks the tables of `expected` against the database in `db_dir`; one result per check.
pub fn check_keyed(db_dir: &Path, expected: &Path) -> Vec<(String, Result<(), String>)> {
    let mut out = Vec::new();
    let db = match prollystore_sql::open(db_dir) {
        Ok(db) => db,
        Err(e) => return vec![("open".into(), Err(e.to_string()))],
    };
    let Ok(branches) = std::fs::read_dir(expected) else {
        return out;
    };
    let mut dirs: Vec<_> = branches
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let branch = dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(root) = db.root_at(&branch, State::Working) else {
            continue;
        };
        let mut names: Vec<String> = root.tables.iter().map(|(n, _)| n.clone()).collect();
        names.sort();
        for name in names {
            let csv = dir.join(format!("{name}.csv"));
            let Ok(want) = std::fs::read(&csv) else {
                continue;
            };
            let Ok(table) = db.table(&root, &name) else {
                continue;
            };
            let label = format!("{branch}/{name}.csv");
            if let Some(r) = check_table(&db, &table, &want) {
                out.push((label, r));
            }
        }
    }
    out
}

/// The keyed checks of one table, or `None` when they do not apply.
fn check_table(db: &Database, table: &Table, want: &[u8]) -> Option<Result<(), String>> {
    if table.schema.keyless {
        return None;
    }
    let mut exported = Vec::new();
    if export_csv(db, table, &mut exported).is_err() || exported != want {
        return None; // the export check reports this table
    }
    let reader = table.reader(db).ok()?;
    // A key whose collation has no weights here yet cannot be looked up: not checked.
    reader.primary_key().ok()?;
    Some(check_rows(&reader, want))
}

fn check_rows(reader: &TableReader<'_>, want: &[u8]) -> Result<(), String> {
    let table = reader.table();
    let recs = records(want);
    let rows = recs.get(1..).unwrap_or(&[]);
    let s = &table.schema;
    let visible = s.visible_columns();
    let key_pos: Vec<usize> = s
        .key_columns
        .iter()
        .map(|c| visible.iter().position(|v| v == c))
        .collect::<Option<_>>()
        .ok_or("a key column is not visible")?;
    let enc = reader.primary_key().map_err(|e| e.to_string())?;
    // Dolt prints a binary value as its raw bytes (not always UTF-8): those keys are taken
    // as the bytes, the others read as text.
    let binary: Vec<bool> = enc
        .columns()
        .iter()
        .map(|c| matches!(c.sql_type, SqlType::Binary { .. }))
        .collect();
    let key_of = |record: &[u8], n: usize| -> Result<Vec<SqlValue>, String> {
        let f = fields(record);
        let raw: Vec<&[u8]> = key_pos[..n]
            .iter()
            .map(|&p| f.get(p).map_or(&[][..], |v| v))
            .collect();
        let texts: Vec<String> = raw
            .iter()
            .zip(&binary)
            .map(|(v, &b)| {
                if b {
                    String::new()
                } else {
                    String::from_utf8_lossy(v).into_owned()
                }
            })
            .collect();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        let mut key = enc.parse(&texts).map_err(|e| e.to_string())?;
        for ((k, v), &b) in key.iter_mut().zip(&raw).zip(&binary) {
            if b {
                *k = SqlValue::Bytes(v.to_vec());
            }
        }
        Ok(key)
    };
    let line = |row: &[Option<SqlValue>]| {
        let mut out = Vec::new();
        write_csv_row(row, &mut out);
        out
    };
    for record in rows {
        let key = key_of(record, key_pos.len())?;
        let got = reader.get(&key).map_err(|e| e.to_string())?;
        match got {
            Some(row) if line(&row) == *record => {}
            Some(row) => {
                return Err(format!(
                    "get {key:?}: {:?}, Dolt shows {:?}",
                    String::from_utf8_lossy(&line(&row)),
                    String::from_utf8_lossy(record)
                ))
            }
            None => return Err(format!("get {key:?}: no row")),
        }
    }
    let n = rows.len();
    if n < 3 {
        return Ok(());
    }
    let scan = |range: KeyRange| -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        for row in reader.scan(&range).map_err(|e| e.to_string())? {
            out.extend(line(&row.map_err(|e| e.to_string())?));
        }
        Ok(out)
    };
    let cat = |part: &[&[u8]]| part.concat();
    let rev = |part: &[&[u8]]| part.iter().rev().copied().collect::<Vec<_>>().concat();
    let full = key_pos.len();
    for (i, j) in [(0, n - 1), (n / 4, n / 2), (1, n - 2)] {
        let bound =
            |k: Vec<SqlValue>| -> Vec<Option<SqlValue>> { k.into_iter().map(Some).collect() };
        let (lo, hi) = (bound(key_of(rows[i], full)?), bound(key_of(rows[j], full)?));
        let range = |from, to, reverse, limit| KeyRange {
            from,
            to,
            reverse,
            limit,
        };
        let checks = [
            (
                "inclusive",
                range(
                    Bound::Included(lo.clone()),
                    Bound::Included(hi.clone()),
                    false,
                    None,
                ),
                cat(&rows[i..=j]),
            ),
            (
                "exclusive",
                range(
                    Bound::Excluded(lo.clone()),
                    Bound::Excluded(hi.clone()),
                    false,
                    None,
                ),
                cat(&rows[(i + 1).min(j)..j]),
            ),
            (
                "reverse",
                range(
                    Bound::Included(lo.clone()),
                    Bound::Included(hi.clone()),
                    true,
                    None,
                ),
                rev(&rows[i..=j]),
            ),
            (
                "reverse limit 2",
                range(Bound::Unbounded, Bound::Excluded(hi.clone()), true, Some(2)),
                rev(&rows[j.saturating_sub(2)..j]),
            ),
        ];
        for (what, r, expect) in checks {
            if scan(r)? != expect {
                return Err(format!("{what} scan of rows {i}..{j} differs"));
            }
        }
        let lead_text = s
            .key_columns
            .first()
            .and_then(|&c| s.columns.get(c))
            .is_some_and(|c| matches!(c.sql_type, prollystore_dolt::SqlType::Text { .. }));
        // A composite key's prefix (not on text: Dolt's collation, not byte equality, would
        // decide which rows share it).
        if full > 1 && !lead_text {
            let p = key_of(rows[i], 1)?;
            let expect: Vec<&[u8]> = rows
                .iter()
                .copied()
                .filter(|r| key_of(r, 1).is_ok_and(|k| k == p))
                .collect();
            if scan(KeyRange::prefix(p))? != cat(&expect) {
                return Err(format!("prefix scan of row {i}'s first key column differs"));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Every key-ordered table of the vector databases gets its keyed checks, and they pass.
    #[test]
    fn vector_tables_pass_keyed_reads() {
        let mut n = 0;
        for db in ["vecdb", "vecdb_journal"] {
            let dir = prollystore_test_vectors::require(&format!("dolt-db/{db}"));
            let expected = dir.with_file_name(format!("{db}.expected"));
            for (file, r) in super::check_keyed(&dir, &expected) {
                assert_eq!(r, Ok(()), "{db} {file}");
                n += 1;
            }
        }
        assert!(n >= 10, "{n} tables checked");
    }
}
