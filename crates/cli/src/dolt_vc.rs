//! `prolly dolt DBDIR branch|checkout|tag|merge|status`: version control on a Dolt database,
//! as the `dolt` commands of the same names do it (through `prollystore_dolt::write::vc`,
//! which takes Dolt's writer lock for each change).

use std::io::Write;
use std::path::Path;

use clap::Subcommand;

use prollystore_dolt::write::vc::{self, MergeOptions, MergeResult, OnConflict, Signature};

use crate::error::{Error, Result};

/// Version-control subcommands (flattened into `prolly dolt DBDIR …`).
#[derive(Subcommand, Debug)]
pub enum VcCommand {
    /// Without arguments, lists branches like `dolt branch`; `branch NAME [FROM]` creates NAME
    /// at FROM (a branch, tag, commit hash or HEAD, with ~N or ^N; default HEAD); `-d NAME`
    /// deletes a branch merged into the current one, `-D NAME` any branch.
    Branch {
        /// The new branch.
        name: Option<String>,
        /// Where it starts (default: HEAD).
        from: Option<String>,
        /// Delete this branch (refused unless merged into the current branch).
        #[arg(short = 'd', long = "delete", value_name = "NAME", conflicts_with_all = ["name", "force_delete"])]
        delete: Option<String>,
        /// Delete this branch even if it is not merged.
        #[arg(short = 'D', value_name = "NAME", conflicts_with = "name")]
        force_delete: Option<String>,
    },
    /// Makes BRANCH the current branch, like `dolt checkout BRANCH`; uncommitted changes move
    /// with it (refused when BRANCH changed a table they touch).
    Checkout {
        /// The branch.
        branch: String,
    },
    /// Without arguments, lists tags like `dolt tag`; `tag NAME [REF] -m MSG` tags REF
    /// (default HEAD); `-d NAME` deletes a tag.
    Tag {
        /// The new tag.
        name: Option<String>,
        /// The commit to tag (default: HEAD).
        #[arg(value_name = "REF")]
        commit: Option<String>,
        /// The tag message.
        #[arg(short, long, default_value = "")]
        message: String,
        /// Tagger as `'Name <email>'` (default: user.name/user.email of Dolt's config).
        #[arg(long)]
        author: Option<String>,
        /// Tag time (default: now), as `dolt commit --date` takes dates.
        #[arg(long)]
        date: Option<String>,
        /// Delete this tag.
        #[arg(
            short = 'd',
            long = "delete",
            value_name = "NAME",
            conflicts_with = "name"
        )]
        delete: Option<String>,
    },
    /// Merges BRANCH into the current branch like `dolt merge`: fast-forward when possible,
    /// otherwise a merge commit. Conflicting rows stop the merge (every key printed, nothing
    /// written, exit status 1) unless --ours or --theirs picks a side.
    Merge {
        /// The branch (or commit) to merge.
        branch: String,
        /// Commit message (default: `Merge branch 'BRANCH' into CURRENT`).
        #[arg(short, long)]
        message: Option<String>,
        /// Author as `'Name <email>'` (default: user.name/user.email of Dolt's config).
        #[arg(long)]
        author: Option<String>,
        /// Author and committer time (default: now): 2006-01-02, 2006-01-02T15:04:05 (UTC) or
        /// 2006-01-02T15:04:05Z07:00.
        #[arg(long)]
        date: Option<String>,
        /// Keep the current branch's rows where both sides conflict.
        #[arg(long, conflicts_with = "theirs")]
        ours: bool,
        /// Take the merged branch's rows where both sides conflict.
        #[arg(long)]
        theirs: bool,
    },
    /// What `dolt status` lists: staged, unstaged and untracked tables.
    Status,
}

/// Runs a version-control subcommand on the database in `dir`.
pub fn run(dir: &Path, command: VcCommand, out: &mut dyn Write) -> Result<()> {
    match command {
        VcCommand::Branch {
            name,
            from,
            delete,
            force_delete,
        } => {
            if let Some(name) = delete {
                return Ok(vc::delete_branch(dir, &name, false)?);
            }
            if let Some(name) = force_delete {
                return Ok(vc::delete_branch(dir, &name, true)?);
            }
            match name {
                Some(name) => {
                    vc::create_branch(dir, &name, from.as_deref().unwrap_or("HEAD"))?;
                    Ok(())
                }
                None => {
                    let db = prollystore_sql::open(dir)?;
                    let current = db.current_branch();
                    for (b, _) in db.branches()? {
                        let mark = if current.as_deref() == Some(b.as_str()) {
                            '*'
                        } else {
                            ' '
                        };
                        writeln!(out, "{mark} {b}")?;
                    }
                    Ok(())
                }
            }
        }
        VcCommand::Checkout { branch } => {
            vc::checkout(dir, &branch)?;
            Ok(writeln!(out, "Switched to branch '{branch}'")?)
        }
        VcCommand::Tag {
            name,
            commit,
            message,
            author,
            date,
            delete,
        } => {
            if let Some(name) = delete {
                return Ok(vc::delete_tag(dir, &name)?);
            }
            match name {
                Some(name) => {
                    let tagger = signature(dir, author.as_deref(), date.as_deref())?;
                    vc::tag(
                        dir,
                        &name,
                        commit.as_deref().unwrap_or("HEAD"),
                        &message,
                        &tagger,
                    )?;
                    Ok(())
                }
                None => {
                    for t in prollystore_sql::open(dir)?.tags()? {
                        writeln!(out, "{}", t.name)?;
                    }
                    Ok(())
                }
            }
        }
        VcCommand::Merge {
            branch,
            message,
            author,
            date,
            ours,
            theirs,
        } => {
            let mut options =
                MergeOptions::new(signature(dir, author.as_deref(), date.as_deref())?);
            options.message = message;
            options.expressions = Some(prollystore_sql::engine());
            options.on_conflict = if ours {
                OnConflict::Ours
            } else if theirs {
                OnConflict::Theirs
            } else {
                OnConflict::Stop
            };
            match vc::merge(dir, &branch, &options)? {
                MergeResult::UpToDate => Ok(writeln!(out, "Everything up-to-date")?),
                MergeResult::FastForward(c) => Ok(writeln!(out, "Fast-forward to {c}")?),
                MergeResult::Merged { commit, .. } => Ok(writeln!(out, "Merge commit {commit}")?),
                MergeResult::Conflicts(conflicts) => {
                    let mut text = format!(
                        "merge of {branch:?} stopped by {} conflict(s); nothing was written:",
                        conflicts.len()
                    );
                    for c in &conflicts {
                        text.push_str(&format!(
                            "\n  table {:?}, key ({}): {}",
                            c.table,
                            c.key.join(", "),
                            c.reason
                        ));
                    }
                    Err(Error::msg(text))
                }
            }
        }
        VcCommand::Status => {
            let s = vc::status(dir)?;
            Ok(out.write_all(s.dolt_text().as_bytes())?)
        }
    }
}

/// A signature from `--author 'Name <email>'` (else Dolt's configured user) and `--date` (else
/// now).
fn signature(dir: &Path, author: Option<&str>, date: Option<&str>) -> Result<Signature> {
    let (name, email, millis) = crate::dolt_write::author_and_date(dir, author, date)?;
    Ok(Signature::new(&name, &email, millis))
}
