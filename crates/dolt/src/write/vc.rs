//! Version control on a Dolt database directory, one operation per call, each taking Dolt's
//! writer lock for its duration: branches, checkout, tags, merges and status, as the Dolt CLI
//! does them (`dolt branch`, `dolt checkout`, `dolt tag`, `dolt merge`, `dolt status`).
//!
//! Every refused operation (an existing name, an unmerged branch, a merge conflict, a held
//! lock) leaves the database's files as they were.
//!
//! ```no_run
//! use prollystore_dolt::write::vc::{self, MergeOptions, MergeResult, Signature};
//! # fn main() -> prollystore_dolt::Result<()> {
//! let db = std::path::Path::new("mydb");
//! vc::create_branch(db, "feature", "main")?;
//! vc::checkout(db, "main")?;
//! let me = Signature::new("Ada", "ada@example.com", 1_704_067_200_000);
//! match vc::merge(db, "feature", &MergeOptions::new(me))? {
//!     MergeResult::Conflicts(c) => eprintln!("{} conflicts, nothing written", c.len()),
//!     done => println!("{done:?}"),
//! }
//! # Ok(())
//! # }
//! ```

use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use prollystore_format::Address;

use super::history::commit::Person;
use super::history::status::TableChange;
use super::merges::merge::{MergeMeta, MergeOutcome};
use super::merges::row_merge::ConflictChoice;
use super::storage::writer::{StoreWriter, WorkingSetMeta};
use crate::db::Database;
use crate::error::Result;
use crate::expressions::Expressions;

/// A name, email and time (Unix milliseconds), for commits and tags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Signature {
    /// Name.
    pub name: String,
    /// Email.
    pub email: String,
    /// Time, Unix milliseconds.
    pub millis: i64,
}

impl Signature {
    /// A signature.
    pub fn new(name: &str, email: &str, millis: i64) -> Signature {
        Signature {
            name: name.to_string(),
            email: email.to_string(),
            millis,
        }
    }

    fn person(&self) -> Person<'_> {
        Person {
            name: &self.name,
            email: &self.email,
        }
    }
}

/// Now, Unix seconds (Dolt stamps working sets and journal root records with the wall clock).
fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The working-set metadata Dolt writes for branch operations (`TodoWorkingSetMeta`).
fn todo_meta() -> WorkingSetMeta<'static> {
    WorkingSetMeta {
        name: "TODO",
        email: "TODO",
        description: "TODO",
        timestamp_secs: now_secs(),
    }
}

/// `dolt branch NAME FROM`: a new branch at the commit `from` names (a branch, tag, commit
/// hash or `HEAD`, with `~N`/`^N`). Returns its head commit.
pub fn create_branch(db: &Path, name: &str, from: &str) -> Result<Address> {
    StoreWriter::open(db)?.create_branch(name, from, &todo_meta())
}

/// `dolt branch -d NAME` (`-D` with `force`): refused unless the branch is merged into the
/// current branch, or `force`.
pub fn delete_branch(db: &Path, name: &str, force: bool) -> Result<()> {
    StoreWriter::open(db)?.delete_branch(name, force, now_secs())
}

/// `dolt checkout BRANCH`: makes `branch` the current branch (`repo_state.json`). Uncommitted
/// changes move to `branch` as Dolt moves them; refused (nothing written) when `branch`
/// changed a table they touch, has other uncommitted changes of its own, or a merge is under
/// way.
pub fn checkout(db: &Path, branch: &str) -> Result<()> {
    StoreWriter::open(db)?.checkout(branch, &todo_meta())
}

/// `dolt tag -m MESSAGE NAME REF`: tags the commit `commit_spec` names. Returns the tag
/// object's address.
pub fn tag(
    db: &Path,
    name: &str,
    commit_spec: &str,
    message: &str,
    tagger: &Signature,
) -> Result<Address> {
    StoreWriter::open(db)?.tag(name, commit_spec, message, tagger.person(), tagger.millis)
}

/// `dolt tag -d NAME`.
pub fn delete_tag(db: &Path, name: &str) -> Result<()> {
    StoreWriter::open(db)?.delete_tag(name, now_secs())
}

/// What to do with rows both sides of a merge changed in ways that do not merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OnConflict {
    /// Write nothing and report every conflict (Dolt's default).
    #[default]
    Stop,
    /// Keep the current branch's rows.
    Ours,
    /// Take the merged branch's rows.
    Theirs,
}

/// How to merge.
#[derive(Clone, Debug)]
pub struct MergeOptions {
    /// Commit message; `None`: Dolt's `Merge branch 'B' into C`.
    pub message: Option<String>,
    /// Author and author time.
    pub author: Signature,
    /// Committer, when not the author (time: [`MergeOptions::committer_millis`]).
    pub committer: Option<(String, String)>,
    /// Committer time; `None`: the author time.
    pub committer_millis: Option<i64>,
    /// Conflicting rows.
    pub on_conflict: OnConflict,
    /// The SQL expression engine for the merged rows' CHECK constraints and computed columns
    /// (see [`crate::expressions`]; `prollystore_sql::engine()`). `None`: a merge that needs
    /// one is an error naming the table.
    pub expressions: Option<Arc<dyn Expressions>>,
}

impl MergeOptions {
    /// Dolt's defaults, by `author`.
    pub fn new(author: Signature) -> MergeOptions {
        MergeOptions {
            message: None,
            author,
            committer: None,
            committer_millis: None,
            on_conflict: OnConflict::Stop,
            expressions: None,
        }
    }
}

/// A conflict that stopped a merge.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The table (empty for a database-level conflict such as foreign keys).
    pub table: String,
    /// The row's primary key as text, one entry per key column (empty: the whole table).
    pub key: Vec<String>,
    /// What conflicts.
    pub reason: String,
}

/// What a merge did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MergeResult {
    /// Already merged: nothing written.
    UpToDate,
    /// The current branch moved to this commit (no merge commit).
    FastForward(Address),
    /// A merge commit was written.
    Merged {
        /// The merge commit.
        commit: Address,
        /// Its root value.
        root: Address,
    },
    /// Conflicts stopped the merge; nothing was written.
    Conflicts(Vec<Conflict>),
}

/// `dolt merge BRANCH` into the current branch: fast-forward when possible, else a three-way
/// merge committed with two parents.
pub fn merge(db: &Path, branch: &str, options: &MergeOptions) -> Result<MergeResult> {
    let mut w = StoreWriter::open(db)?;
    w.set_engine(options.expressions.clone());
    let current = w.current_branch()?;
    let message = options
        .message
        .clone()
        .unwrap_or_else(|| format!("Merge branch '{branch}' into {current}"));
    let committer_millis = options.committer_millis.unwrap_or(options.author.millis);
    let meta = MergeMeta {
        author: options.author.person(),
        committer: options
            .committer
            .as_ref()
            .map(|(n, e)| Person { name: n, email: e }),
        message: &message,
        author_millis: options.author.millis,
        committer_millis: committer_millis.max(0) as u64,
    };
    let who = meta.committer.unwrap_or(meta.author);
    let ws = WorkingSetMeta {
        name: who.name,
        email: who.email,
        description: "sql transaction",
        timestamp_secs: (committer_millis / 1000).max(0) as u64,
    };
    let choice = match options.on_conflict {
        OnConflict::Stop => ConflictChoice::Stop,
        OnConflict::Ours => ConflictChoice::Ours,
        OnConflict::Theirs => ConflictChoice::Theirs,
    };
    Ok(match w.merge(branch, &meta, choice, &ws)? {
        MergeOutcome::UpToDate => MergeResult::UpToDate,
        MergeOutcome::FastForward { commit } => MergeResult::FastForward(commit),
        MergeOutcome::Merged { commit, root } => MergeResult::Merged { commit, root },
        MergeOutcome::Conflicts(c) => MergeResult::Conflicts(
            c.into_iter()
                .map(|c| Conflict {
                    table: c.table,
                    key: c.key,
                    reason: c.reason,
                })
                .collect(),
        ),
    })
}

/// How a table differs between two states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// A new table.
    NewTable,
    /// Rows or schema changed.
    Modified,
    /// Dropped.
    Deleted,
}

/// What `dolt status` lists for the current branch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// The current branch.
    pub branch: String,
    /// Staged changes (head → staged root), by table name.
    pub staged: Vec<(String, Change)>,
    /// Changes not staged (staged → working root) of tables that exist staged.
    pub unstaged: Vec<(String, Change)>,
    /// Tables only in the working root.
    pub untracked: Vec<String>,
    /// A merge is in progress.
    pub merging: bool,
    text: String,
}

impl Status {
    /// Nothing to commit.
    pub fn is_clean(&self) -> bool {
        self.staged.is_empty() && self.unstaged.is_empty() && self.untracked.is_empty()
    }

    /// What `dolt status` prints (no colour; tables sorted by name within each section, where
    /// Dolt's order varies from run to run).
    pub fn dolt_text(&self) -> &str {
        &self.text
    }
}

/// `dolt status` (reads only; no lock taken).
pub fn status(db: &Path) -> Result<Status> {
    let s = super::history::status::status(&Database::open(db)?)?;
    let change = |c: TableChange| match c {
        TableChange::NewTable => Change::NewTable,
        TableChange::Modified => Change::Modified,
        TableChange::Deleted => Change::Deleted,
    };
    Ok(Status {
        branch: s.branch.clone(),
        staged: s
            .staged
            .iter()
            .map(|(n, c)| (n.clone(), change(*c)))
            .collect(),
        unstaged: s
            .unstaged
            .iter()
            .map(|(n, c)| (n.clone(), change(*c)))
            .collect(),
        untracked: s.untracked.clone(),
        merging: s.merging,
        text: s.dolt_text(),
    })
}
