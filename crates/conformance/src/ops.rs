//! The operations of a Dolt write scenario (`ops.jsonl` of `shared/vectors/dolt-write`, one
//! JSON object per line, values as `dolt sql -r csv` prints them) applied to a database with
//! the public API of `prollystore-dolt` (`DoltWriter`, `write::vc`), reporting the commit,
//! root value and table hashes after every commit so they can be compared with what Dolt made
//! (`expected/steps.jsonl`).

use std::path::{Path, PathBuf};

use prollystore_dolt::write::vc::{self, MergeOptions, MergeResult, OnConflict, Signature};
use prollystore_dolt::write::{
    parse_date_millis, AlterStatement, CheckDef, ColumnDef, CommitMeta, DoltWriter, IndexDef,
    RowMode, TableDef,
};
use prollystore_dolt::{Database, DoltError, Result, State};
use prollystore_format::Address;
use prollystore_sql::{parse_alter, FromSql};
use serde_json::Value;

/// What the database holds after a recorded step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepState {
    /// The op's line index in `ops.jsonl`.
    pub step: usize,
    /// The op (`commit`, `merge`, `tag`).
    pub op: String,
    /// The current branch after the op.
    pub branch: String,
    /// The current branch's head commit (for a tag, the tagged commit).
    pub commit: Address,
    /// That commit's root value.
    pub root: Address,
    /// Every table of that root: name (as stored) → table chunk address.
    pub tables: Vec<(String, Address)>,
}

/// A row change of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RowOp {
    /// Rows inserted.
    Insert,
    /// Rows updated (by primary key).
    Update,
    /// Rows of a keyless table deleted (one copy each).
    DeleteRows,
    /// Rows deleted by primary key (values in key order).
    DeleteKeys,
}

/// Scenario ops applied through the public API, each as the `dolt` command that made it ran:
/// the database opened for the op (a [`DoltWriter`] whose changes are saved as the working
/// set, or committed, before it is dropped; or one [`vc`] call), so nothing is held between
/// ops but who Dolt's config names and the time of the last dated op.
struct Replayer {
    dir: PathBuf,
    /// Who Dolt's config names (the `init` op's author): it stamps working sets and tags.
    identity: (String, String),
    /// The time of the last dated op, Unix seconds (working sets of undated ops).
    last_secs: u64,
}

impl Replayer {
    fn new(dir: &Path) -> Replayer {
        Replayer {
            dir: dir.to_path_buf(),
            identity: (String::new(), String::new()),
            last_secs: 0,
        }
    }

    /// The database for reading.
    fn database(&self) -> Result<Database> {
        Database::open(&self.dir)
    }

    /// Runs `change` on a writer (with the SQL expression engine) and saves its working set.
    fn edit(&self, change: impl FnOnce(&mut DoltWriter) -> Result<()>) -> Result<()> {
        let mut w = DoltWriter::open(&self.dir)?.with_expressions(prollystore_sql::engine());
        change(&mut w)?;
        w.save((&self.identity.0, &self.identity.1), self.last_secs)
    }

    /// The `init` op: who Dolt's config names, and when the database was made.
    fn init(&mut self, name: &str, email: &str, millis: Option<i64>) {
        self.identity = (name.to_string(), email.to_string());
        self.last_secs = millis.map_or(0, |m| (m / 1000).max(0) as u64);
    }

    fn create_table(&self, def: &TableDef) -> Result<()> {
        self.edit(|w| w.create_table(def))
    }

    fn drop_table(&self, name: &str) -> Result<()> {
        self.edit(|w| w.drop_table(name))
    }

    fn alter_table(&self, stmt: &AlterStatement) -> Result<()> {
        self.edit(|w| w.alter_table(stmt))
    }

    /// The names of `table`'s columns, in order (the columns of an op that names none).
    fn column_names(&self, table: &str) -> Result<Vec<String>> {
        let w = DoltWriter::open(&self.dir)?;
        Ok(w.columns(table)?.into_iter().map(|c| c.name).collect())
    }

    /// The names of `table`'s primary-key columns in key order, on the current branch's
    /// working root.
    fn key_names(&self, table: &str) -> Result<Vec<String>> {
        let db = self.database()?;
        let root = db.root_at("HEAD", State::Working)?;
        let s = db.table(&root, table)?.schema;
        Ok(s.key_columns
            .iter()
            .map(|&c| s.columns[c].name.clone())
            .collect())
    }

    /// Changes rows of `table`: `rows` are values of `columns` as `dolt sql -r csv` prints
    /// them (for [`RowOp::DeleteKeys`], of the primary key in key order, `columns` unused).
    fn edit_rows(
        &self,
        table: &str,
        op: RowOp,
        columns: &[String],
        rows: &[Vec<Option<&str>>],
    ) -> Result<()> {
        let (mode, columns) = match op {
            RowOp::Insert => (RowMode::Insert, columns.to_vec()),
            RowOp::Update => (RowMode::Update, columns.to_vec()),
            RowOp::DeleteRows => (RowMode::Delete, columns.to_vec()),
            RowOp::DeleteKeys => (RowMode::Delete, self.key_names(table)?),
        };
        let columns: Vec<&str> = columns.iter().map(String::as_str).collect();
        self.edit(|w| w.apply_text(mode, table, &columns, rows))
    }

    /// Commits the current branch's working root; returns the commit.
    fn commit(&mut self, meta: &CommitMeta) -> Result<Address> {
        let committer_millis = meta.committer_millis.unwrap_or(meta.author_millis);
        self.last_secs = (committer_millis / 1000).max(0) as u64;
        let mut w = DoltWriter::open(&self.dir)?.with_expressions(prollystore_sql::engine());
        w.commit(meta)
    }

    /// Tags `spec` as `name`, signed by the identity at `millis`; returns the tagged commit.
    fn tag(&self, name: &str, spec: &str, message: &str, millis: i64) -> Result<Address> {
        let tagger = Signature::new(&self.identity.0, &self.identity.1, millis);
        vc::tag(&self.dir, name, spec, message, &tagger)?;
        self.database()?.resolve_revision(spec)
    }

    /// Merges `branch` into the current one (conflicts stop it, named); returns the current
    /// branch's head after it.
    fn merge(
        &mut self,
        branch: &str,
        author: (&str, &str),
        message: &str,
        millis: i64,
    ) -> Result<Address> {
        self.last_secs = (millis / 1000).max(0) as u64;
        let mut options = MergeOptions::new(Signature::new(author.0, author.1, millis));
        options.message = Some(message.to_string());
        options.on_conflict = OnConflict::Stop;
        options.expressions = Some(prollystore_sql::engine());
        match vc::merge(&self.dir, branch, &options)? {
            MergeResult::UpToDate => {
                let db = self.database()?;
                let current = db
                    .current_branch()
                    .ok_or_else(|| DoltError::NotFound("the current branch".into()))?;
                db.branch_head(&current)
            }
            MergeResult::FastForward(commit) | MergeResult::Merged { commit, .. } => Ok(commit),
            MergeResult::Conflicts(c) => {
                let keys: Vec<String> = c
                    .iter()
                    .map(|c| format!("{} ({}): {}", c.table, c.key.join(","), c.reason))
                    .collect();
                Err(DoltError::Refused(format!(
                    "merge conflicts: {}",
                    keys.join("; ")
                )))
            }
        }
    }

    /// What the database holds after step `step` (op `op`): `commit`, its root and tables.
    fn state(&self, step: usize, op: &str, commit: Address) -> Result<StepState> {
        let db = self.database()?;
        let branch = db
            .current_branch()
            .ok_or_else(|| DoltError::NotFound("the current branch".into()))?;
        let root = db.root_value(db.commit(commit)?.root)?;
        Ok(StepState {
            step,
            op: op.to_string(),
            branch,
            commit,
            root: root.address,
            tables: root.tables,
        })
    }
}

fn bad_op(step: usize, what: impl std::fmt::Display) -> DoltError {
    prollystore_dolt::error::bad_input(format!("ops line {step}"), what.to_string())
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

/// The table definition a `create_table` op carries.
pub fn table_def_of(op: &Value) -> Result<TableDef> {
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

/// Rows of an op's values as `dolt sql -r csv` prints them (`None`: NULL).
type Rows<'o> = Vec<Vec<Option<&'o str>>>;

/// The columns and rows of an op (`columns` + `rows`, plus `generated` values): values as
/// `dolt sql -r csv` prints them (`None`: NULL).
fn rows_of<'o>(
    r: &Replayer,
    table: &str,
    op: &'o Value,
    step: usize,
    field: &str,
) -> Result<(Vec<String>, Rows<'o>)> {
    let mut names = match op.get("columns") {
        Some(c) => strings(c),
        None => r.column_names(table)?,
    };
    let rows = list(op, field, step)?;
    let mut generated: Vec<&[Value]> = Vec::new();
    if let Some(g) = op.get("generated").and_then(Value::as_object) {
        for (name, values) in g {
            names.push(name.clone());
            generated.push(values.as_array().map(Vec::as_slice).unwrap_or_default());
        }
    }
    let rows = rows
        .iter()
        .enumerate()
        .map(|(i, row)| {
            let mut values: Vec<Option<&str>> = row
                .as_array()
                .ok_or_else(|| bad_op(step, format!("row {i} is not a list")))?
                .iter()
                .map(Value::as_str)
                .collect();
            for g in &generated {
                values.push(g.get(i).and_then(Value::as_str));
            }
            Ok(values)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((names, rows))
}

/// Keys of a `delete` op (each in primary-key order).
fn keys_of(op: &Value, step: usize) -> Result<Rows<'_>> {
    list(op, "keys", step)?
        .iter()
        .enumerate()
        .map(|(i, key)| {
            Ok(key
                .as_array()
                .ok_or_else(|| bad_op(step, format!("key {i} is not a list")))?
                .iter()
                .map(Value::as_str)
                .collect())
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
/// Expressions (defaults, generated columns, CHECKs) are evaluated by `prollystore-sql`.
pub fn apply_ops(
    dir: &Path,
    ops_jsonl: &str,
    on_step: &mut dyn FnMut(&StepState) -> Result<()>,
) -> Result<()> {
    let mut r = Replayer::new(dir);
    for (step, line) in ops_jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let op: Value =
            serde_json::from_str(line).map_err(|e| bad_op(step, format!("not JSON: {e}")))?;
        let kind = text(&op, "op", step)?;
        let date = |field: &str| -> Result<i64> {
            parse_date_millis(text(&op, field, step)?).ok_or_else(|| bad_op(step, "bad date"))
        };
        match kind {
            "init" => r.init(
                text(&op, "author_name", step)?,
                text(&op, "author_email", step)?,
                parse_date_millis(text(&op, "date", step)?),
            ),
            "create_table" => r.create_table(&table_def(&op, step)?)?,
            "drop_table" => r.drop_table(text(&op, "table", step)?)?,
            "alter_table" => {
                let stmt = parse_alter(text(&op, "sql", step)?).map_err(|e| bad_op(step, e))?;
                r.alter_table(&stmt).map_err(|e| bad_op(step, e))?
            }
            "insert" | "update" | "delete" => {
                let name = text(&op, "table", step)?;
                let is_keyless_delete = kind == "delete" && op.get("rows").is_some();
                let (row_op, (columns, rows)) = match kind {
                    "insert" => (RowOp::Insert, rows_of(&r, name, &op, step, "rows")?),
                    "update" => (RowOp::Update, rows_of(&r, name, &op, step, "rows")?),
                    _ if is_keyless_delete => {
                        (RowOp::DeleteRows, rows_of(&r, name, &op, step, "rows")?)
                    }
                    _ => (RowOp::DeleteKeys, (Vec::new(), keys_of(&op, step)?)),
                };
                r.edit_rows(name, row_op, &columns, &rows)?;
            }
            "commit" => {
                let author_millis = date("date")?;
                let committer_millis = match op.get("committer_date").and_then(Value::as_str) {
                    Some(d) => parse_date_millis(d).ok_or_else(|| bad_op(step, "bad date"))?,
                    None => author_millis,
                };
                let (author_name, author_email) = (
                    text(&op, "author_name", step)?,
                    text(&op, "author_email", step)?,
                );
                // A committer half the op leaves out is the author's.
                let committer = match (
                    op.get("committer_name").and_then(Value::as_str),
                    op.get("committer_email").and_then(Value::as_str),
                ) {
                    (None, None) => None,
                    (n, e) => Some((
                        n.unwrap_or(author_name).to_string(),
                        e.unwrap_or(author_email).to_string(),
                    )),
                };
                let address = r.commit(&CommitMeta {
                    message: text(&op, "message", step)?.to_string(),
                    author_name: author_name.to_string(),
                    author_email: author_email.to_string(),
                    author_millis,
                    committer,
                    committer_millis: Some(committer_millis),
                })?;
                on_step(&r.state(step, kind, address)?)?;
            }
            "branch" => {
                vc::create_branch(dir, text(&op, "name", step)?, text(&op, "from", step)?)?;
            }
            "checkout" => vc::checkout(dir, text(&op, "branch", step)?)?,
            "delete_branch" => vc::delete_branch(
                dir,
                text(&op, "name", step)?,
                op["force"].as_bool().unwrap_or(false),
            )?,
            "tag" => {
                // Dolt stamps tags with the wall clock; the op's date stands in for it (only
                // the tagged commit is compared).
                let commit = r.tag(
                    text(&op, "name", step)?,
                    text(&op, "ref", step)?,
                    text(&op, "message", step)?,
                    date("date")?,
                )?;
                on_step(&r.state(step, kind, commit)?)?;
            }
            "merge" => {
                let commit = r
                    .merge(
                        text(&op, "branch", step)?,
                        (
                            text(&op, "author_name", step)?,
                            text(&op, "author_email", step)?,
                        ),
                        text(&op, "message", step)?,
                        date("date")?,
                    )
                    .map_err(|e| match e {
                        DoltError::Refused(why) => bad_op(step, why),
                        e => e,
                    })?;
                on_step(&r.state(step, kind, commit)?)?;
            }
            other => return Err(bad_op(step, format!("unsupported op {other:?}"))),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// Every `create_table` op of the scenarios: its SQL, parsed here, gives the schema Dolt
    /// made (the one the op's parsed fields give, which hash as Dolt's in the ops tests), tags
    /// derived as Dolt derives them.
    #[test]
    fn scenario_sql_gives_dolts_schemas() {
        let dir = prollystore_test_vectors::require("dolt-write");
        let mut checked = 0;
        for name in ["basic", "branches", "types"] {
            let ops = std::fs::read_to_string(dir.join(name).join("ops.jsonl")).unwrap();
            let mut used_sql = HashSet::new();
            let mut used_ops = HashSet::new();
            for line in ops.lines() {
                let op: serde_json::Value = serde_json::from_str(line).unwrap();
                if op["op"] != "create_table" {
                    continue;
                }
                let ours = TableDef::from_sql(op["sql"].as_str().unwrap()).unwrap();
                let theirs = table_def_of(&op).unwrap();
                let a = ours.schema_chunk(&mut used_sql).unwrap();
                let b = theirs.schema_chunk(&mut used_ops).unwrap();
                assert!(a == b, "{name} {}:\n{ours:#?}\n{theirs:#?}", ours.name);
                checked += 1;
            }
        }
        assert_eq!(checked, 13);
    }
}
