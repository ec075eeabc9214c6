//! The operations of a Dolt write scenario (`ops.jsonl` of `shared/vectors/dolt-write`, one
//! JSON object per line, values as `dolt sql -r csv` prints them) applied to a database with
//! our writer, reporting the commit, root value and table hashes after every commit so they can
//! be compared with what Dolt made (`expected/steps.jsonl`).

use std::path::Path;

use prollystore_format::tuple::days_from_civil;
use prollystore_format::Address;
use serde_json::Value;

use super::commit::{NewCommit, Person};
use super::merge::{MergeMeta, MergeOutcome};
use super::row_merge::ConflictChoice;
use super::table_def::{CheckDef, ColumnDef, IndexDef, TableDef};
use super::table_edit::{cell_from_text, Cell, EditTable};
use super::working::WorkingEdits;
use super::writer::{StoreWriter, WorkingSetMeta};
use crate::error::{DoltError, Result};

/// What the database holds after a recorded step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepState {
    /// The op's line index in `ops.jsonl`.
    pub step: usize,
    /// The op (`commit`, `merge`, `tag`).
    pub op: String,
    /// The current branch after the op.
    pub branch: String,
    /// The current branch's head commit.
    pub commit: Address,
    /// That commit's root value.
    pub root: Address,
    /// Every table of that root: name → table chunk address.
    pub tables: Vec<(String, Address)>,
}

fn bad_op(step: usize, what: impl std::fmt::Display) -> DoltError {
    crate::error::bad_input(format!("ops line {step}"), what.to_string())
}

fn text<'a>(op: &'a Value, field: &str, step: usize) -> Result<&'a str> {
    op.get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| bad_op(step, format!("no text field {field:?}")))
}

fn list<'a>(op: &'a Value, field: &str, step: usize) -> Result<&'a [Value]> {
    op.get(field)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .ok_or_else(|| bad_op(step, format!("no list field {field:?}")))
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// A date as the ops and Dolt's `--date` take it (`2024-01-02T09:30:00Z`,
/// `2024-01-02T09:30:00`, `2024-01-02`, or with a `±HH:MM` offset), in Unix milliseconds.
pub fn parse_date_millis(date: &str) -> Option<i64> {
    let d = date.trim();
    let n = |s: &str| s.parse::<i64>().ok();
    let (y, m, day) = (n(d.get(0..4)?)?, n(d.get(5..7)?)?, n(d.get(8..10)?)?);
    if d.get(4..5)? != "-" || d.get(7..8)? != "-" {
        return None;
    }
    let mut secs = days_from_civil(y, m, day) * 86_400;
    let rest = &d[10..];
    if rest.is_empty() {
        return Some(secs * 1000);
    }
    let rest = rest.strip_prefix(['T', ' '])?;
    let (hh, mm, ss) = (
        n(rest.get(0..2)?)?,
        n(rest.get(3..5)?)?,
        n(rest.get(6..8)?)?,
    );
    secs += hh * 3600 + mm * 60 + ss;
    let mut tail = &rest[8..];
    let mut millis = 0;
    if let Some(frac) = tail.strip_prefix('.') {
        let digits = frac.len() - frac.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let f = format!("{:0<3}", &frac[..digits]);
        millis = n(&f[..3])?;
        tail = &frac[digits..];
    }
    let offset = match tail {
        "" | "Z" => 0,
        t => {
            let sign = match t.get(0..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            sign * (n(t.get(1..3)?)? * 3600 + n(t.get(4..6)?)? * 60)
        }
    };
    Some((secs - offset) * 1000 + millis)
}

/// The table definition a `create_table` op carries.
pub(crate) fn table_def_of(op: &Value) -> Result<TableDef> {
    table_def(op, 0)
}

fn table_def(op: &Value, step: usize) -> Result<TableDef> {
    // The statement Dolt ran is the definition: the recorded fields are how Dolt prints the
    // schema afterwards, which differs from what it stores (`DEFAULT 1` is stored as `1`,
    // printed as `'1'`). The recorded tags are Dolt's and are kept.
    if let Some(sql) = op.get("sql").and_then(Value::as_str) {
        let mut def = TableDef::from_sql(sql).map_err(|e| bad_op(step, e))?;
        let recorded = op["columns"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for c in &mut def.columns {
            c.tag = recorded
                .iter()
                .find(|r| r["name"].as_str() == Some(c.name.as_str()))
                .and_then(|r| r["tag"].as_u64());
        }
        return Ok(def);
    }
    let columns = list(op, "columns", step)?
        .iter()
        .map(|c| {
            Ok(ColumnDef {
                name: text(c, "name", step)?.to_string(),
                sql_type: text(c, "type", step)?.to_string(),
                nullable: c["nullable"].as_bool().unwrap_or(true),
                default: c["default"].as_str().map(str::to_string),
                auto_increment: c["auto_increment"].as_bool().unwrap_or(false),
                comment: c["comment"].as_str().map(str::to_string),
                tag: c["tag"].as_u64(),
                generated: None,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let mut def = TableDef {
        name: text(op, "table", step)?.to_string(),
        columns,
        primary_key: strings(&op["primary_key"]),
        indexes: op["indexes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|ix| IndexDef {
                name: ix["name"].as_str().unwrap_or_default().to_string(),
                columns: strings(&ix["columns"]),
                unique: ix["unique"].as_bool().unwrap_or(false),
                prefix_lengths: Vec::new(),
                spatial: false,
            })
            .collect(),
        checks: op["checks"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| CheckDef {
                name: c["name"].as_str().unwrap_or_default().to_string(),
                expr: c["expr"].as_str().unwrap_or_default().to_string(),
            })
            .collect(),
        foreign_keys: Vec::new(),
        collation: op["collation"].as_str().map(str::to_string),
        comment: op["table_comment"].as_str().map(str::to_string),
    };
    add_declared(&mut def, op, step)?;
    Ok(def)
}

/// What only the op's `sql` says, added to the definition read from the recorded fields:
/// generated columns, index prefix lengths and SPATIAL, and the foreign keys as declared
/// (unnamed ones stay unnamed, so the writer names them and their indexes as Dolt does). The
/// indexes Dolt added for those keys (listed by `dolt schema show`, not declared) are left for
/// the writer to add again, marked as Dolt marks them.
fn add_declared(def: &mut TableDef, op: &Value, step: usize) -> Result<()> {
    let recorded_fks = op["foreign_keys"].as_array().map_or(0, Vec::len);
    let declared = match op["sql"].as_str().map(TableDef::from_sql) {
        Some(Ok(d)) => d,
        // Without keys the recorded fields say everything the writer needs.
        _ if recorded_fks == 0 => return Ok(()),
        Some(Err(e)) => {
            return Err(bad_op(
                step,
                format!("its sql (read for its foreign keys): {e}"),
            ))
        }
        None => return Err(bad_op(step, "foreign keys without the sql declaring them")),
    };
    if declared.foreign_keys.len() != recorded_fks {
        return Err(bad_op(
            step,
            format!(
                "its sql declares {} foreign keys, Dolt recorded {recorded_fks}",
                declared.foreign_keys.len()
            ),
        ));
    }
    for col in &mut def.columns {
        if let Some(d) = declared.columns.iter().find(|d| d.name == col.name) {
            col.generated.clone_from(&d.generated);
        }
    }
    let is_declared = |ix: &IndexDef| {
        declared
            .indexes
            .iter()
            .any(|d| d.name.eq_ignore_ascii_case(&ix.name))
    };
    def.indexes.retain(|ix| {
        is_declared(ix)
            || !declared.foreign_keys.iter().any(|fk| {
                fk.columns.len() == ix.columns.len()
                    && fk
                        .columns
                        .iter()
                        .zip(&ix.columns)
                        .all(|(a, b)| a.eq_ignore_ascii_case(b))
            })
    });
    for ix in &mut def.indexes {
        if let Some(d) = declared
            .indexes
            .iter()
            .find(|d| d.name.eq_ignore_ascii_case(&ix.name))
        {
            ix.prefix_lengths.clone_from(&d.prefix_lengths);
            ix.spatial = d.spatial;
        }
    }
    def.foreign_keys = declared.foreign_keys;
    Ok(())
}

/// Rows of an op (`columns` + `rows`, plus `generated` values) as cells by column position.
fn rows_of(
    table: &EditTable,
    op: &Value,
    step: usize,
    field: &str,
) -> Result<Vec<Vec<(usize, Cell)>>> {
    let mut names = match op.get("columns") {
        Some(c) => strings(c),
        None => table.column_names().iter().map(|s| s.to_string()).collect(),
    };
    let rows = list(op, field, step)?;
    let mut generated: Vec<&[Value]> = Vec::new();
    if let Some(g) = op.get("generated").and_then(Value::as_object) {
        for (name, values) in g {
            names.push(name.clone());
            generated.push(values.as_array().map(Vec::as_slice).unwrap_or_default());
        }
    }
    let positions = names
        .iter()
        .map(|n| table.column(n))
        .collect::<Result<Vec<_>>>()?;
    rows.iter()
        .enumerate()
        .map(|(r, row)| {
            let mut values: Vec<Option<&str>> = row
                .as_array()
                .ok_or_else(|| bad_op(step, format!("row {r} is not a list")))?
                .iter()
                .map(Value::as_str)
                .collect();
            for g in &generated {
                values.push(g.get(r).and_then(Value::as_str));
            }
            if values.len() != positions.len() {
                return Err(bad_op(
                    step,
                    format!(
                        "row {r} has {} values for {} columns",
                        values.len(),
                        positions.len()
                    ),
                ));
            }
            positions
                .iter()
                .zip(values)
                .map(|(&c, v)| {
                    let col = &table.schema.columns[c];
                    let cell = cell_from_text(col, v).map_err(|reason| DoltError::BadValue {
                        table: table.name.clone(),
                        column: col.name.clone(),
                        reason: format!("row {r}: {reason}"),
                    })?;
                    Ok((c, cell))
                })
                .collect()
        })
        .collect()
}

/// Keys of a `delete` op (each in primary-key order) as cells.
fn keys_of(table: &EditTable, op: &Value, step: usize) -> Result<Vec<Vec<Cell>>> {
    list(op, "keys", step)?
        .iter()
        .enumerate()
        .map(|(r, key)| {
            let key = key
                .as_array()
                .ok_or_else(|| bad_op(step, format!("key {r} is not a list")))?;
            table
                .schema
                .key_columns
                .iter()
                .zip(key)
                .map(|(&c, v)| {
                    let col = &table.schema.columns[c];
                    cell_from_text(col, v.as_str()).map_err(|reason| DoltError::BadValue {
                        table: table.name.clone(),
                        column: col.name.clone(),
                        reason: format!("key {r}: {reason}"),
                    })
                })
                .collect()
        })
        .collect()
}

/// Compares one step with Dolt's record of it (a line of `expected/steps.jsonl`); returns what
/// differs, or `None` when the commit, root value and every table hash are Dolt's. For a tag
/// only the tagged commit is compared (Dolt stamps tag objects with the wall clock).
pub fn compare_step(ours: &StepState, theirs: &serde_json::Value) -> Option<String> {
    let a = |v: &serde_json::Value| v.as_str().and_then(|s| Address::from_base32(s).ok());
    let mut diffs = Vec::new();
    if ours.op == "tag" {
        if a(&theirs["commit"]) != Some(ours.commit) {
            diffs.push(format!(
                "tagged commit {} (Dolt {})",
                ours.commit, theirs["commit"]
            ));
        }
        return (!diffs.is_empty()).then(|| diffs.join("; "));
    }
    if a(&theirs["root"]) != Some(ours.root) {
        diffs.push(format!("root {} (Dolt {})", ours.root, theirs["root"]));
    }
    let want: Vec<(String, Option<Address>)> = theirs["tables"]
        .as_object()
        .map(|o| o.iter().map(|(k, v)| (k.clone(), a(v))).collect())
        .unwrap_or_default();
    for (name, addr) in &want {
        let got = ours.tables.iter().find(|(n, _)| n == name).map(|(_, a)| *a);
        if got != *addr {
            diffs.push(format!("table {name} {got:?} (Dolt {addr:?})"));
        }
    }
    if ours.tables.len() != want.len() {
        diffs.push(format!(
            "{} tables (Dolt {})",
            ours.tables.len(),
            want.len()
        ));
    }
    if a(&theirs["commit"]) != Some(ours.commit) {
        diffs.push(format!(
            "commit {} (Dolt {})",
            ours.commit, theirs["commit"]
        ));
    }
    (!diffs.is_empty()).then(|| diffs.join("; "))
}

/// Applies the ops of `ops_jsonl` (the text of an `ops.jsonl`) to the database at `dir`,
/// calling `on_step` after every commit, merge and tag with what the database then holds.
/// `init` ops are not replayed (the database is their result; their author is the identity
/// Dolt's config gives the other commands). An op this writer cannot do is an error naming it.
pub fn apply_ops(
    dir: &Path,
    ops_jsonl: &str,
    on_step: &mut dyn FnMut(&StepState) -> Result<()>,
) -> Result<()> {
    let mut w = StoreWriter::open(dir)?;
    let mut edits = WorkingEdits::default();
    let mut branch = w
        .database()
        .current_branch()
        .ok_or_else(|| DoltError::NotFound("the current branch (repo_state.json)".into()))?;
    // Who Dolt's config names (the `init` op's author): it stamps working sets and tags.
    let mut identity = (String::new(), String::new());
    let mut last_secs = 0u64;
    for (step, line) in ops_jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let op: Value =
            serde_json::from_str(line).map_err(|e| bad_op(step, format!("not JSON: {e}")))?;
        let kind = text(&op, "op", step)?;
        match kind {
            "init" => {
                identity = (
                    text(&op, "author_name", step)?.to_string(),
                    text(&op, "author_email", step)?.to_string(),
                );
                last_secs = parse_date_millis(text(&op, "date", step)?)
                    .map_or(0, |m| (m / 1000).max(0) as u64);
            }
            "create_table" => edits.create_table(&w, &branch, &table_def(&op, step)?)?,
            "drop_table" => edits.drop_table(&w, &branch, text(&op, "table", step)?)?,
            "alter_table" => edits
                .alter_table(&w, &branch, text(&op, "sql", step)?)
                .map_err(|e| bad_op(step, e))?,
            "insert" | "update" | "delete" => {
                let name = text(&op, "table", step)?;
                let table = edits.table(&w, &branch, name)?;
                let is_keyless_delete = kind == "delete" && op.get("rows").is_some();
                let rows = match kind {
                    "delete" if !is_keyless_delete => None,
                    _ => Some(rows_of(&table, &op, step, "rows")?),
                };
                let keys = match (kind, is_keyless_delete) {
                    ("delete", false) => Some(keys_of(&table, &op, step)?),
                    _ => None,
                };
                edits.edit_table(&w, &branch, name, |t, store| match kind {
                    "insert" => t.insert(store, rows.as_deref().unwrap_or_default()),
                    "update" => t.update(store, rows.as_deref().unwrap_or_default()),
                    _ if is_keyless_delete => {
                        t.delete_rows(store, rows.as_deref().unwrap_or_default())
                    }
                    _ => t.delete_keys(store, keys.as_deref().unwrap_or_default()),
                })?;
            }
            "commit" => {
                let date = parse_date_millis(text(&op, "date", step)?)
                    .ok_or_else(|| bad_op(step, "bad date"))?;
                let committer_date = match op.get("committer_date").and_then(Value::as_str) {
                    Some(d) => parse_date_millis(d).ok_or_else(|| bad_op(step, "bad date"))?,
                    None => date,
                };
                let author = Person {
                    name: text(&op, "author_name", step)?,
                    email: text(&op, "author_email", step)?,
                };
                let committer = match (
                    op.get("committer_name").and_then(Value::as_str),
                    op.get("committer_email").and_then(Value::as_str),
                ) {
                    (None, None) => None,
                    (n, e) => Some(Person {
                        name: n.unwrap_or(author.name),
                        email: e.unwrap_or(author.email),
                    }),
                };
                let commit = NewCommit {
                    root: Address::ZERO,
                    parents: Vec::new(),
                    author,
                    committer,
                    message: text(&op, "message", step)?,
                    author_millis: date,
                    committer_millis: committer_date.max(0) as u64,
                };
                let secs = (committer_date / 1000).max(0) as u64;
                last_secs = secs;
                let meta = WorkingSetMeta {
                    name: author.name,
                    email: author.email,
                    description: "sql transaction",
                    timestamp_secs: secs,
                };
                let address = edits.commit(&mut w, &branch, commit, &meta, secs)?;
                on_step(&state_after(&w, &edits, step, kind, &branch, address)?)?;
            }
            "branch" => {
                let meta = ws_meta(&identity, last_secs);
                w.create_branch(text(&op, "name", step)?, text(&op, "from", step)?, &meta)?;
            }
            "checkout" => {
                edits.save(&mut w, &branch, &ws_meta(&identity, last_secs), last_secs)?;
                let target = text(&op, "branch", step)?;
                w.checkout(target, &ws_meta(&identity, last_secs))?;
                branch = target.to_string();
            }
            "delete_branch" => {
                let force = op["force"].as_bool().unwrap_or(false);
                w.delete_branch(text(&op, "name", step)?, force, last_secs)?;
            }
            "tag" => {
                // Dolt stamps tags with the wall clock; the op's date stands in for it (only
                // the tagged commit is compared).
                let millis = parse_date_millis(text(&op, "date", step)?)
                    .ok_or_else(|| bad_op(step, "bad date"))?;
                let tagger = Person {
                    name: &identity.0,
                    email: &identity.1,
                };
                let name = text(&op, "name", step)?;
                let spec = text(&op, "ref", step)?;
                w.tag(name, spec, text(&op, "message", step)?, tagger, millis)?;
                let commit = w.resolve_commit(spec)?;
                on_step(&state_after(&w, &edits, step, kind, &branch, commit)?)?;
            }
            "merge" => {
                let date = parse_date_millis(text(&op, "date", step)?)
                    .ok_or_else(|| bad_op(step, "bad date"))?;
                let meta = MergeMeta {
                    author: Person {
                        name: text(&op, "author_name", step)?,
                        email: text(&op, "author_email", step)?,
                    },
                    committer: None,
                    message: text(&op, "message", step)?,
                    author_millis: date,
                    committer_millis: date.max(0) as u64,
                };
                let secs = (date / 1000).max(0) as u64;
                last_secs = secs;
                edits.save(&mut w, &branch, &ws_meta(&identity, secs), secs)?;
                let outcome = w.merge(
                    text(&op, "branch", step)?,
                    &meta,
                    ConflictChoice::Stop,
                    &ws_meta(&identity, secs),
                )?;
                let commit = match outcome {
                    MergeOutcome::UpToDate => w.head_of(&branch)?,
                    MergeOutcome::FastForward { commit } | MergeOutcome::Merged { commit, .. } => {
                        commit
                    }
                    MergeOutcome::Conflicts(c) => {
                        let keys: Vec<String> = c
                            .iter()
                            .map(|c| format!("{} ({}): {}", c.table, c.key.join(","), c.reason))
                            .collect();
                        return Err(bad_op(
                            step,
                            format!("merge conflicts: {}", keys.join("; ")),
                        ));
                    }
                };
                edits.discard(&branch);
                on_step(&state_after(&w, &edits, step, kind, &branch, commit)?)?;
            }
            other => return Err(bad_op(step, format!("unsupported op {other:?}"))),
        }
    }
    Ok(())
}

/// What the database holds after step `step`: `commit` (on `branch`), its root and tables.
fn state_after(
    w: &StoreWriter,
    edits: &WorkingEdits,
    step: usize,
    op: &str,
    branch: &str,
    commit: Address,
) -> Result<StepState> {
    let root = commit_root(w, commit)?;
    Ok(StepState {
        step,
        op: op.to_string(),
        branch: branch.to_string(),
        commit,
        root,
        tables: edits.tables(w, root)?,
    })
}

/// Working-set metadata as a `dolt` command run by `who` records it.
fn ws_meta(who: &(String, String), timestamp_secs: u64) -> WorkingSetMeta<'_> {
    WorkingSetMeta {
        name: &who.0,
        email: &who.1,
        description: "sql transaction",
        timestamp_secs,
    }
}

/// The root value of a commit (read through the writer: it may be one it just made).
fn commit_root(w: &StoreWriter, commit: Address) -> Result<Address> {
    let chunk = w.chunk(&commit)?;
    let c = prollystore_format::message::objects::CommitFields::decode(&chunk)
        .map_err(|e| crate::error::bad_chunk(commit, e.to_string()))?;
    Ok(Address(c.root))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(parse_date_millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_date_millis("2024-01-01T00:00:00Z"),
            Some(1_704_067_200_000)
        );
        assert_eq!(parse_date_millis("2024-01-01"), Some(1_704_067_200_000));
        assert_eq!(
            parse_date_millis("2024-01-01T01:00:00+01:00"),
            Some(1_704_067_200_000)
        );
        assert_eq!(
            parse_date_millis("2024-01-01T00:00:00.250Z"),
            Some(1_704_067_200_250)
        );
        assert_eq!(parse_date_millis("2024/01/01"), None);
    }
}
