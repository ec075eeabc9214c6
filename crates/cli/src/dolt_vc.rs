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
    let (name, email) = match author {
        Some(a) => parse_author(a)?,
        None => configured_user(dir)?,
    };
    let millis = match date {
        Some(d) => parse_date(d)?,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0),
    };
    Ok(Signature::new(&name, &email, millis))
}

/// `Name <email>` → (name, email).
fn parse_author(a: &str) -> Result<(String, String)> {
    let bad = || Error::msg(format!("--author {a:?}: expected 'Name <email>'"));
    let (name, rest) = a.split_once('<').ok_or_else(bad)?;
    let email = rest.strip_suffix('>').ok_or_else(bad)?;
    Ok((name.trim().to_string(), email.trim().to_string()))
}

/// `user.name` and `user.email` from the database's `.dolt/config.json`, else the global
/// `~/.dolt/config_global.json`, as Dolt looks them up.
fn configured_user(dir: &Path) -> Result<(String, String)> {
    let mut files = vec![dir.join(".dolt/config.json")];
    if let Some(home) = std::env::var_os("HOME") {
        files.push(Path::new(&home).join(".dolt/config_global.json"));
    }
    let get = |key: &str| {
        files.iter().find_map(|f| {
            let text = std::fs::read_to_string(f).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            v.get(key)?.as_str().map(str::to_string)
        })
    };
    match (get("user.name"), get("user.email")) {
        (Some(n), Some(e)) => Ok((n, e)),
        _ => Err(Error::msg(
            "no author: pass --author 'Name <email>' or set user.name and user.email in Dolt's \
             config",
        )),
    }
}

/// A date as `dolt commit --date` takes it → Unix milliseconds: `2006-01-02`,
/// `2006-01-02T15:04:05[.fff]` (UTC), with `Z` or a `±07:00` offset.
fn parse_date(d: &str) -> Result<i64> {
    let bad = || {
        Error::msg(format!(
            "--date {d:?}: expected 2006-01-02[T15:04:05[Z|±07:00]]"
        ))
    };
    let num = |s: &str| -> Result<i64> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        s.parse().map_err(|_| bad())
    };
    let (date, time) = d.split_once(['T', ' ']).unwrap_or((d, "00:00:00"));
    let mut ymd = date.split('-');
    let (y, m, day) = (
        num(ymd.next().ok_or_else(bad)?)?,
        num(ymd.next().ok_or_else(bad)?)?,
        num(ymd.next().ok_or_else(bad)?)?,
    );
    if ymd.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return Err(bad());
    }
    let (clock, offset_secs) = if let Some(c) = time.strip_suffix('Z') {
        (c, 0)
    } else if let Some(at) = time.rfind(['+', '-']) {
        let (c, off) = time.split_at(at);
        let sign = if off.starts_with('-') { -1 } else { 1 };
        let (oh, om) = off[1..].split_once(':').ok_or_else(bad)?;
        (c, sign * (num(oh)? * 3600 + num(om)? * 60))
    } else {
        (time, 0)
    };
    let (hms, frac) = clock.split_once('.').unwrap_or((clock, ""));
    let mut parts = hms.split(':');
    let (h, mi, s) = (
        num(parts.next().ok_or_else(bad)?)?,
        num(parts.next().ok_or_else(bad)?)?,
        num(parts.next().ok_or_else(bad)?)?,
    );
    let millis_frac = if frac.is_empty() {
        0
    } else {
        num(&format!("{frac:0<3}")[..3])?
    };
    // Days from civil (Howard Hinnant's algorithm).
    let yy = if m <= 2 { y - 1 } else { y };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Ok(((days * 24 + h) * 3600 + mi * 60 + s - offset_secs) * 1000 + millis_frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_as_dolt_takes_them() {
        assert_eq!(parse_date("1970-01-01").unwrap(), 0);
        assert_eq!(
            parse_date("2024-02-05T16:45:00Z").unwrap(),
            1_707_151_500_000
        );
        assert_eq!(
            parse_date("2024-02-05T16:45:00").unwrap(),
            1_707_151_500_000
        );
        assert_eq!(
            parse_date("2024-02-05T18:45:00+02:00").unwrap(),
            1_707_151_500_000
        );
        assert!(parse_date("2024-13-01").is_err());
        assert!(parse_date("yesterday").is_err());
    }

    #[test]
    fn authors_parse() {
        assert_eq!(
            parse_author("Alice Adams <alice@example.com>").unwrap(),
            ("Alice Adams".into(), "alice@example.com".into())
        );
        assert!(parse_author("nobody").is_err());
    }
}
