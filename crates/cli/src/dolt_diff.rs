//! `prolly dolt DBDIR diff FROM TO [TABLE] [--csv]`: what changed between two database states,
//! as Dolt's `dolt_diff` and `dolt_diff_summary` table functions report it.

use std::io::Write;

use prollystore_dolt::table_diff::{
    table_changes, write_summary_csv, ChangeKind, Row, TableChangeKind, TableDiff,
};
use prollystore_dolt::Database;

use crate::error::Result;

/// Writes the diff from `from` to `to`: with a table, its row changes (as `dolt_diff` CSV when
/// `csv`, else one line per row); without, the tables that differ and each one's row counts.
pub fn diff(
    db: &Database,
    from: &str,
    to: &str,
    table: Option<&str>,
    csv: bool,
    out: &mut dyn Write,
) -> Result<()> {
    match table {
        Some(t) if csv => Ok(TableDiff::new(db, from, to, t)?.write_csv(out)?),
        Some(t) => table_text(&TableDiff::new(db, from, to, t)?, out),
        None if csv => Ok(write_summary_csv(&table_changes(db, from, to)?, out)?),
        None => {
            let changes = table_changes(db, from, to)?;
            if changes.is_empty() {
                writeln!(out, "no tables differ between {from} and {to}")?;
            }
            for c in changes {
                let name = c
                    .to_name
                    .as_ref()
                    .or(c.from_name.as_ref())
                    .cloned()
                    .unwrap_or_default();
                let mut what = vec![c.kind.as_str()];
                if c.schema_change && c.kind == TableChangeKind::Modified {
                    what.push("schema changed");
                }
                if c.data_change {
                    what.push("rows changed");
                }
                if c.primary_key_changed {
                    what.push("primary key changed");
                }
                writeln!(out, "table {name}: {}", what.join(", "))?;
            }
            Ok(())
        }
    }
}

/// One table's changes as text: `+` added rows, `-` removed rows, `<`/`>` a modified row before
/// and after, each as `column=value` pairs, then the counts.
fn table_text(d: &TableDiff<'_>, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "table {}: {} -> {}",
        d.name(),
        d.from().spec,
        d.to().spec
    )?;
    match (&d.from().table, &d.to().table) {
        (None, _) => writeln!(out, "table added")?,
        (_, None) => writeln!(out, "table dropped")?,
        _ if d.schema_changed() => writeln!(out, "schema changed")?,
        _ => {}
    }
    if d.primary_key_changed() {
        writeln!(
            out,
            "primary key changed: rows cannot be matched, no row diff"
        )?;
        return Ok(());
    }
    let (from_cols, to_cols) = (d.from_columns(), d.to_columns());
    let row_text = |cols: &[String], row: &Row| {
        cols.iter()
            .zip(row)
            .map(|(c, v)| match v {
                Some(v) => format!("{c}={}", v.to_text()),
                None => format!("{c}=NULL"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut counts = [0u64; 3];
    for change in d.rows()? {
        let change = change?;
        match (change.kind, &change.from, &change.to) {
            (ChangeKind::Added, _, Some(t)) => {
                counts[0] += 1;
                writeln!(out, "+ {}", row_text(&to_cols, t))?;
            }
            (ChangeKind::Removed, Some(f), _) => {
                counts[1] += 1;
                writeln!(out, "- {}", row_text(&from_cols, f))?;
            }
            (_, f, t) => {
                counts[2] += 1;
                if let Some(f) = f {
                    writeln!(out, "< {}", row_text(&from_cols, f))?;
                }
                if let Some(t) = t {
                    writeln!(out, "> {}", row_text(&to_cols, t))?;
                }
            }
        }
    }
    writeln!(
        out,
        "{} added, {} removed, {} modified",
        counts[0], counts[1], counts[2]
    )?;
    Ok(())
}
