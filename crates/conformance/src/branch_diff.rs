//! Row diffs between two branches of a Dolt database, checked against the branches' full table
//! contents that Dolt exported (`<db>.expected/<branch>/<table>.csv`): the diff from `main` to
//! `feature` must be exactly the key-wise difference of the two exports (for keyless tables, the
//! difference of the two row multisets).

use std::collections::BTreeMap;
use std::path::Path;

use prollystore_dolt::csv_field::write_csv_field;
use prollystore_dolt::db::{Database, State, Table};
use prollystore_dolt::error::Result;
use prollystore_dolt::table_diff::{ChangeKind, Row, TableDiff};

use crate::expected::FileResult;

/// One CSV record as its fields' raw text (quotes kept), so values compare exactly as written.
type Record = Vec<Vec<u8>>;

/// The branches compared: the diff goes from the first to the second.
const BRANCHES: (&str, &str) = ("main", "feature");

/// Checks the diff from `main` to `feature` of every table exported on both branches in
/// `expected`; one result per table, named `main..feature/<table>`. Empty if either branch
/// folder is absent.
pub fn check_branch_diffs(db_dir: &Path, expected: &Path) -> Result<Vec<FileResult>> {
    let (from, to) = BRANCHES;
    let (from_dir, to_dir) = (expected.join(from), expected.join(to));
    if !from_dir.is_dir() || !to_dir.is_dir() {
        return Ok(Vec::new());
    }
    let db = prollystore_sql::open(db_dir)?;
    let to_root = db.root_at(to, State::Committed)?;
    let mut out = Vec::new();
    for (name, _) in &to_root.tables {
        let (from_csv, to_csv) = (
            from_dir.join(format!("{name}.csv")),
            to_dir.join(format!("{name}.csv")),
        );
        let (Ok(from_text), Ok(to_text)) = (std::fs::read(&from_csv), std::fs::read(&to_csv))
        else {
            continue;
        };
        let outcome = check_table(&db, name, &from_text, &to_text);
        out.push(FileResult {
            file: format!("{from}..{to}/{name}"),
            outcome,
        });
    }
    Ok(out)
}

/// Compares the diff of one table with the difference of its two exports.
fn check_table(
    db: &Database,
    name: &str,
    from_csv: &[u8],
    to_csv: &[u8],
) -> std::result::Result<(), String> {
    let (from, to) = BRANCHES;
    let diff = TableDiff::new(db, from, to, name).map_err(|e| e.to_string())?;
    let table = diff
        .to()
        .table
        .as_ref()
        .ok_or_else(|| format!("table {name} is not on {to}"))?;
    let mut from_rows = records(from_csv);
    let mut to_rows = records(to_csv);
    if from_rows.is_empty() || to_rows.is_empty() {
        return Err("an export has no header".into());
    }
    let header: Vec<Vec<u8>> = diff
        .to_columns()
        .into_iter()
        .map(String::into_bytes)
        .collect();
    if to_rows.remove(0) != header || from_rows.remove(0) != header {
        return Err("the exports' columns are not the table's (schema changed?)".into());
    }
    // Expected: per key, the row on each side where they differ (keyless: the whole row is the
    // key, and the value counts copies).
    let keyless = table.schema.keyless;
    let key_of = key_positions(table);
    let key = |r: &Record| -> Record {
        if keyless {
            r.clone()
        } else {
            key_of.iter().filter_map(|&i| r.get(i).cloned()).collect()
        }
    };
    let mut expected: BTreeMap<Record, Change> = BTreeMap::new();
    if keyless {
        for r in &from_rows {
            expected.entry(key(r)).or_default().removed += 1;
        }
        for r in &to_rows {
            let c = expected.entry(key(r)).or_default();
            if c.removed > 0 {
                c.removed -= 1;
            } else {
                c.added += 1;
            }
        }
    } else {
        let before: BTreeMap<Record, Record> =
            from_rows.iter().map(|r| (key(r), r.clone())).collect();
        let after: BTreeMap<Record, Record> = to_rows.iter().map(|r| (key(r), r.clone())).collect();
        for (k, r) in &before {
            if after.get(k) != Some(r) {
                expected.entry(k.clone()).or_default().from = Some(r.clone());
            }
        }
        for (k, r) in &after {
            if before.get(k) != Some(r) {
                expected.entry(k.clone()).or_default().to = Some(r.clone());
            }
        }
    }
    expected.retain(|_, c| *c != Change::default());
    // Ours, from the map diff.
    let mut got: BTreeMap<Record, Change> = BTreeMap::new();
    for change in diff.rows().map_err(|e| e.to_string())? {
        let change = change.map_err(|e| e.to_string())?;
        let (f, t) = (
            change.from.as_ref().map(csv_record),
            change.to.as_ref().map(csv_record),
        );
        let Some(k) = t.as_ref().or(f.as_ref()).map(key) else {
            return Err("a change without rows".into());
        };
        let c = got.entry(k).or_default();
        match (keyless, change.kind) {
            (true, ChangeKind::Added) => c.added += 1,
            (true, _) => c.removed += 1,
            (false, _) => {
                c.from = f;
                c.to = t;
            }
        }
    }
    if got == expected {
        return Ok(());
    }
    let first = expected
        .iter()
        .find(|(k, c)| got.get(*k) != Some(*c))
        .map(|(k, c)| (k.clone(), Some(c.clone()), got.get(k).cloned()))
        .or_else(|| {
            got.iter()
                .find(|(k, _)| !expected.contains_key(*k))
                .map(|(k, c)| (k.clone(), None, Some(c.clone())))
        });
    Err(format!(
        "{} changes expected, {} found; first difference at key {:?}: expected {:?}, found {:?}",
        expected.len(),
        got.len(),
        first.as_ref().map(|f| text(&f.0)),
        first.as_ref().map(|f| f.1.as_ref().map(Change::text)),
        first.as_ref().map(|f| f.2.as_ref().map(Change::text)),
    ))
}

/// What happened at one key: the row on each side (keyed tables), or copies removed and added
/// (keyless tables).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Change {
    from: Option<Record>,
    to: Option<Record>,
    removed: u64,
    added: u64,
}

impl Change {
    fn text(&self) -> String {
        format!(
            "from {:?} to {:?} (-{} +{})",
            self.from.as_ref().map(text),
            self.to.as_ref().map(text),
            self.removed,
            self.added
        )
    }
}

fn text(r: &Record) -> String {
    r.iter()
        .map(|f| String::from_utf8_lossy(f).into_owned())
        .collect::<Vec<_>>()
        .join(",")
}

/// Positions of the primary-key columns among the visible columns.
fn key_positions(t: &Table) -> Vec<usize> {
    let visible = t.schema.visible_columns();
    t.schema
        .key_columns
        .iter()
        .filter_map(|k| visible.iter().position(|v| v == k))
        .collect()
}

/// A decoded row as the raw CSV fields Dolt's export writes.
fn csv_record(row: &Row) -> Record {
    let mut text = Vec::new();
    row.iter()
        .map(|v| {
            let mut field = Vec::new();
            if let Some(v) = v {
                text.clear();
                v.csv_bytes(&mut text);
                write_csv_field(Some(&text), &mut field);
            }
            field
        })
        .collect()
}

/// Splits CSV text into records of raw fields (quotes kept; a newline inside quotes belongs
/// to the field).
fn records(csv: &[u8]) -> Vec<Record> {
    let mut out = Vec::new();
    let mut record = Vec::new();
    let mut field = Vec::new();
    let mut quoted = false;
    for &b in csv {
        match b {
            b'"' => {
                quoted = !quoted;
                field.push(b);
            }
            b',' if !quoted => record.push(std::mem::take(&mut field)),
            b'\n' if !quoted => {
                record.push(std::mem::take(&mut field));
                out.push(std::mem::take(&mut record));
            }
            _ => field.push(b),
        }
    }
    if !field.is_empty() || !record.is_empty() {
        record.push(field);
        out.push(record);
    }
    out
}
