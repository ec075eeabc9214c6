//! The writer as the conformance crate's scenario replayer drives it (test machinery, hidden
//! from the docs, no stable API): one open store with uncommitted edits per branch, each of a
//! scenario's operations one call, dated and signed as the `dolt` command that made the
//! scenario dated and signed it. What the operations mean (their JSON, their SQL text) is the
//! replayer's; this is the narrow door into the writer's internals it needs, since the public
//! [`super::DoltWriter`] stamps working sets and commits with its own clock.

use std::sync::Arc;

use prollystore_format::Address;

use super::history::commit::{NewCommit, Person};
use super::history::working::WorkingEdits;
use super::merges::merge::{MergeMeta, MergeOutcome};
use super::merges::row_merge::ConflictChoice;
use super::storage::writer::{StoreWriter, WorkingSetMeta};
use super::tables::alter_op::AlterStatement;
use super::tables::table_def::TableDef;
use super::tables::table_edit::{cell_from_text, Cell, EditTable};
use crate::error::{DoltError, Result};
use crate::expressions::Expressions;

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

/// A row change of an op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowOp {
    /// Rows inserted.
    Insert,
    /// Rows updated (by primary key).
    Update,
    /// Rows of a keyless table deleted (one copy each).
    DeleteRows,
    /// Rows deleted by primary key.
    DeleteKeys,
}

/// A name and an email.
pub type Who<'a> = (&'a str, &'a str);

/// Commit fields of a `commit` op.
#[derive(Clone, Copy, Debug)]
pub struct CommitOp<'a> {
    /// The author.
    pub author: Who<'a>,
    /// The committer, when the op names one (a missing half is the author's).
    pub committer: (Option<&'a str>, Option<&'a str>),
    /// The message.
    pub message: &'a str,
    /// Author date, Unix milliseconds.
    pub author_millis: i64,
    /// Committer date, Unix milliseconds.
    pub committer_millis: i64,
}

/// A writer replaying a scenario's operations.
#[derive(Debug)]
pub struct Replayer {
    w: StoreWriter,
    edits: WorkingEdits,
    branch: String,
    /// Who Dolt's config names (the `init` op's author): it stamps working sets and tags.
    identity: (String, String),
    /// The time of the last dated op, Unix seconds.
    last_secs: u64,
}

impl Replayer {
    /// Opens the database at `dir` for writing, with `engine` for expressions.
    pub fn open(dir: &std::path::Path, engine: Option<Arc<dyn Expressions>>) -> Result<Replayer> {
        let mut w = StoreWriter::open(dir)?;
        w.set_engine(engine);
        let branch = w
            .database()
            .current_branch()
            .ok_or_else(|| DoltError::NotFound("the current branch (repo_state.json)".into()))?;
        Ok(Replayer {
            w,
            edits: WorkingEdits::default(),
            branch,
            identity: (String::new(), String::new()),
            last_secs: 0,
        })
    }

    /// The current branch.
    pub fn branch(&self) -> &str {
        &self.branch
    }

    /// The `init` op: who Dolt's config names, and when the database was made.
    pub fn init(&mut self, name: &str, email: &str, millis: Option<i64>) {
        self.identity = (name.to_string(), email.to_string());
        self.last_secs = millis.map_or(0, |m| (m / 1000).max(0) as u64);
    }

    /// Creates a table.
    pub fn create_table(&mut self, def: &TableDef) -> Result<()> {
        self.edits.create_table(&self.w, &self.branch, def)
    }

    /// Drops a table.
    pub fn drop_table(&mut self, name: &str) -> Result<()> {
        self.edits.drop_table(&self.w, &self.branch, name)
    }

    /// Runs an `ALTER TABLE`.
    pub fn alter_table(&mut self, stmt: &AlterStatement) -> Result<()> {
        self.edits.alter_table(&self.w, &self.branch, stmt)
    }

    /// The names of `table`'s columns, in order (the columns of an op that names none).
    pub fn column_names(&self, table: &str) -> Result<Vec<String>> {
        let t = self.edits.table(&self.w, &self.branch, table)?;
        Ok(t.column_names().iter().map(|s| s.to_string()).collect())
    }

    /// Changes rows of `table`: `rows` are values as `dolt sql -r csv` prints them (`None`:
    /// NULL) of the columns `columns` (for [`RowOp::DeleteKeys`], of the primary key in key
    /// order, `columns` unused).
    pub fn edit_rows(
        &mut self,
        table: &str,
        op: RowOp,
        columns: &[String],
        rows: &[Vec<Option<&str>>],
    ) -> Result<()> {
        let t = self.edits.table(&self.w, &self.branch, table)?;
        let (rows, keys) = match op {
            RowOp::DeleteKeys => (Vec::new(), keys_of(&t, rows)?),
            _ => (rows_of(&t, columns, rows)?, Vec::new()),
        };
        self.edits
            .edit_table(&self.w, &self.branch, table, |t, store| match op {
                RowOp::Insert => t.insert(store, &rows),
                RowOp::Update => t.update(store, &rows),
                RowOp::DeleteRows => t.delete_rows(store, &rows),
                RowOp::DeleteKeys => t.delete_keys(store, &keys),
            })
    }

    /// Commits the current branch's working root; returns the commit.
    pub fn commit(&mut self, c: &CommitOp<'_>) -> Result<Address> {
        let author = Person {
            name: c.author.0,
            email: c.author.1,
        };
        let committer = match c.committer {
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
            message: c.message,
            author_millis: c.author_millis,
            committer_millis: c.committer_millis.max(0) as u64,
        };
        let secs = (c.committer_millis / 1000).max(0) as u64;
        self.last_secs = secs;
        let meta = WorkingSetMeta {
            name: author.name,
            email: author.email,
            description: "sql transaction",
            timestamp_secs: secs,
        };
        self.edits
            .commit(&mut self.w, &self.branch, commit, &meta, secs)
    }

    /// Creates branch `name` at `from`.
    pub fn create_branch(&mut self, name: &str, from: &str) -> Result<()> {
        let meta = ws_meta(&self.identity, self.last_secs);
        self.w.create_branch(name, from, &meta)?;
        Ok(())
    }

    /// Saves the current branch's edits and checks out `target`.
    pub fn checkout(&mut self, target: &str) -> Result<()> {
        let (meta, secs) = (ws_meta(&self.identity, self.last_secs), self.last_secs);
        self.edits.save(&mut self.w, &self.branch, &meta, secs)?;
        self.w.checkout(target, &meta)?;
        self.branch = target.to_string();
        Ok(())
    }

    /// Deletes branch `name`.
    pub fn delete_branch(&mut self, name: &str, force: bool) -> Result<()> {
        self.w.delete_branch(name, force, self.last_secs)?;
        Ok(())
    }

    /// Tags `spec` as `name`, stamped `millis` by the identity; returns the tagged commit.
    pub fn tag(&mut self, name: &str, spec: &str, message: &str, millis: i64) -> Result<Address> {
        let tagger = Person {
            name: &self.identity.0,
            email: &self.identity.1,
        };
        self.w.tag(name, spec, message, tagger, millis)?;
        self.w.resolve_commit(spec)
    }

    /// Merges `branch` into the current one (conflicts stop it, named); returns the current
    /// branch's head after it.
    pub fn merge(
        &mut self,
        branch: &str,
        author: Who<'_>,
        message: &str,
        millis: i64,
    ) -> Result<Address> {
        let meta = MergeMeta {
            author: Person {
                name: author.0,
                email: author.1,
            },
            committer: None,
            message,
            author_millis: millis,
            committer_millis: millis.max(0) as u64,
        };
        let secs = (millis / 1000).max(0) as u64;
        self.last_secs = secs;
        let ws = ws_meta(&self.identity, secs);
        self.edits.save(&mut self.w, &self.branch, &ws, secs)?;
        let outcome = self.w.merge(branch, &meta, ConflictChoice::Stop, &ws)?;
        let commit = match outcome {
            MergeOutcome::UpToDate => self.w.head_of(&self.branch)?,
            MergeOutcome::FastForward { commit } | MergeOutcome::Merged { commit, .. } => commit,
            MergeOutcome::Conflicts(c) => {
                let keys: Vec<String> = c
                    .iter()
                    .map(|c| format!("{} ({}): {}", c.table, c.key.join(","), c.reason))
                    .collect();
                return Err(DoltError::Refused(format!(
                    "merge conflicts: {}",
                    keys.join("; ")
                )));
            }
        };
        self.edits.discard(&self.branch);
        Ok(commit)
    }

    /// What the database holds after step `step` (op `op`): `commit` (on the current branch),
    /// its root and tables.
    pub fn state(&self, step: usize, op: &str, commit: Address) -> Result<StepState> {
        let chunk = self.w.chunk(&commit)?;
        let c = prollystore_format::message::objects::CommitFields::decode(&chunk)
            .map_err(|e| crate::error::bad_chunk(commit, e.to_string()))?;
        let root = Address(c.root);
        Ok(StepState {
            step,
            op: op.to_string(),
            branch: self.branch.clone(),
            commit,
            root,
            tables: self.edits.tables(&self.w, root)?,
        })
    }
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

/// Rows of values of `columns` as cells by column position.
fn rows_of(
    table: &EditTable,
    columns: &[String],
    rows: &[Vec<Option<&str>>],
) -> Result<Vec<Vec<(usize, Cell)>>> {
    let positions = columns
        .iter()
        .map(|n| table.column(n))
        .collect::<Result<Vec<_>>>()?;
    rows.iter()
        .enumerate()
        .map(|(r, values)| {
            if values.len() != positions.len() {
                return Err(DoltError::BadValue {
                    table: table.name.clone(),
                    column: String::new(),
                    reason: format!(
                        "row {r} has {} values for {} columns",
                        values.len(),
                        positions.len()
                    ),
                });
            }
            positions
                .iter()
                .zip(values)
                .map(|(&c, v)| {
                    let col = &table.schema.columns[c];
                    let cell = cell_from_text(col, *v).map_err(|reason| DoltError::BadValue {
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

/// Primary keys (values in key order) as cells.
fn keys_of(table: &EditTable, keys: &[Vec<Option<&str>>]) -> Result<Vec<Vec<Cell>>> {
    keys.iter()
        .enumerate()
        .map(|(r, key)| {
            table
                .schema
                .key_columns
                .iter()
                .zip(key)
                .map(|(&c, v)| {
                    let col = &table.schema.columns[c];
                    cell_from_text(col, *v).map_err(|reason| DoltError::BadValue {
                        table: table.name.clone(),
                        column: col.name.clone(),
                        reason: format!("key {r}: {reason}"),
                    })
                })
                .collect()
        })
        .collect()
}
