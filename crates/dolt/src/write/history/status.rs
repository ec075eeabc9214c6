//! `dolt status`: which tables differ between the current branch's head, staged root and
//! working root (`dolt_status`, printed as `cmd/dolt/commands/status.go` prints it). Dolt
//! prints each section in Go map order, which varies run to run; here tables are sorted by name.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use prollystore_format::Address;

use crate::db::Database;
use crate::error::{DoltError, Result};

/// How a table differs between two roots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TableChange {
    /// Only in the newer root.
    NewTable,
    /// In both, with a different table hash (rows or schema).
    Modified,
    /// Only in the older root.
    Deleted,
}

impl TableChange {
    fn label(self) -> &'static str {
        match self {
            TableChange::NewTable => "new table",
            TableChange::Modified => "modified",
            TableChange::Deleted => "deleted",
        }
    }
}

/// What `dolt status` lists.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Status {
    /// The current branch.
    pub branch: String,
    /// Head → staged ("Changes to be committed").
    pub staged: Vec<(String, TableChange)>,
    /// Staged → working, tables that exist staged ("Changes not staged for commit").
    pub unstaged: Vec<(String, TableChange)>,
    /// Tables only in the working root ("Untracked tables").
    pub untracked: Vec<String>,
    /// A merge is in progress.
    pub merging: bool,
}

fn changes(from: &[(String, Address)], to: &[(String, Address)]) -> Vec<(String, TableChange)> {
    let from: BTreeMap<&str, Address> = from.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let to: BTreeMap<&str, Address> = to.iter().map(|(n, a)| (n.as_str(), *a)).collect();
    let mut out = Vec::new();
    for (name, a) in &to {
        match from.get(name) {
            None => out.push((name.to_string(), TableChange::NewTable)),
            Some(b) if b != a => out.push((name.to_string(), TableChange::Modified)),
            _ => {}
        }
    }
    for name in from.keys() {
        if !to.contains_key(name) {
            out.push((name.to_string(), TableChange::Deleted));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The status of `db`'s current branch.
pub(crate) fn status(db: &Database) -> Result<Status> {
    let branch = db
        .current_branch()
        .ok_or_else(|| DoltError::NotFound("the current branch (repo_state.json head)".into()))?;
    let head = db.commit(db.branch_head(&branch)?)?.root;
    let (working, staged, merging) = match db.working_set(&branch)? {
        Some(ws) => (
            ws.working_root,
            ws.staged_root.unwrap_or(ws.working_root),
            ws.merging,
        ),
        None => (head, head, false),
    };
    let tables = |a: Address| -> Result<Vec<(String, Address)>> { Ok(db.root_value(a)?.tables) };
    let (head_t, staged_t, working_t) = (tables(head)?, tables(staged)?, tables(working)?);
    let staged = changes(&head_t, &staged_t);
    let mut unstaged = Vec::new();
    let mut untracked = Vec::new();
    for (name, change) in changes(&staged_t, &working_t) {
        if change == TableChange::NewTable {
            untracked.push(name);
        } else {
            unstaged.push((name, change));
        }
    }
    Ok(Status {
        branch,
        staged,
        unstaged,
        untracked,
        merging,
    })
}

impl Status {
    /// True when `dolt status` would say "nothing to commit, working tree clean".
    #[cfg(test)]
    pub(crate) fn is_clean(&self) -> bool {
        self.staged.is_empty() && self.unstaged.is_empty() && self.untracked.is_empty()
    }

    /// The text `dolt status` prints (without colour), sections in Dolt's order.
    pub(crate) fn dolt_text(&self) -> String {
        let mut s = String::new();
        let line = |s: &mut String, label: &str, name: &str| {
            let _ = writeln!(s, "\t{:<18}{name}", format!("{label}:"));
        };
        let _ = writeln!(s, "On branch {}", self.branch);
        if self.merging {
            s.push_str(
                "All conflicts and constraint violations fixed but you are still merging.\n",
            );
            s.push_str("  (use \"dolt commit\" to conclude merge)\n");
        }
        let mut changes = false;
        if !self.staged.is_empty() {
            s.push_str("Changes to be committed:\n  (use \"dolt reset <table>...\" to unstage)\n");
            for (name, c) in &self.staged {
                line(&mut s, c.label(), name);
            }
            changes = true;
        }
        if !self.unstaged.is_empty() {
            s.push_str("\nChanges not staged for commit:\n");
            s.push_str("  (use \"dolt add <table>\" to update what will be committed)\n");
            s.push_str(
                "  (use \"dolt checkout <table>\" to discard changes in working directory)\n",
            );
            for (name, c) in &self.unstaged {
                line(&mut s, c.label(), name);
            }
            changes = true;
        }
        if !self.untracked.is_empty() {
            if changes {
                s.push('\n');
            }
            s.push_str("Untracked tables:\n");
            s.push_str("  (use \"dolt add <table>\" to include in what will be committed)\n");
            for name in &self.untracked {
                line(&mut s, "new table", name);
            }
            changes = true;
        }
        if !changes {
            s.push_str("nothing to commit, working tree clean\n");
        }
        s
    }
}
