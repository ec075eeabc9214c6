//! `prolly dolt clone URL DIR`: a Dolt database cloned from a remote (`http://HOST:PORT/DB`, as
//! `dolt sql-server --remotesapi-port` serves it) into a new directory that `dolt` and this
//! CLI open as a clone (`origin`, remote-tracking branches, the default branch checked out).
//! One thin call into `prollystore-dolt-remote`.
//!
//! The read commands also take a remote URL in place of DBDIR (`prolly dolt
//! http://HOST:PORT/DB export T`, `prolly dolt s3://BUCKET/PATH export T`): the database is
//! then read in place ([`open_in_place`]).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Result};

/// `prolly dolt clone URL DIR`.
#[derive(Args, Debug)]
pub struct CloneArgs {
    /// The remote: `http://HOST:PORT/DATABASE` (a `dolt sql-server --remotesapi-port`).
    pub url: String,
    /// The new database directory (must not exist, or be empty).
    pub dir: PathBuf,
    /// The branch to check out (default: `main`, else `master`, else the first by name).
    #[arg(short, long)]
    pub branch: Option<String>,
    /// The remote's name in the clone.
    #[arg(long, default_value = "origin")]
    pub remote: String,
    /// The user to authenticate as, like `dolt --user` (the password from
    /// `DOLT_REMOTE_PASSWORD`); without it a `dolt sql-server` takes `root` with no password.
    #[arg(short, long)]
    pub user: Option<String>,
}

/// Runs the clone and prints what it did.
pub fn clone(args: CloneArgs, out: &mut dyn Write) -> Result<()> {
    let options = prollystore_dolt_remote::CloneOptions {
        remote_name: args.remote,
        branch: args.branch,
        credentials: credentials(args.user.as_deref())?,
        ..Default::default()
    };
    let report = prollystore_dolt_remote::clone(&args.url, &args.dir, &options)
        .map_err(|e| Error::Msg(e.to_string()))?;
    writeln!(
        out,
        "cloned {} into {}: {} chunks, {} bytes in {} range reads; on branch {}",
        args.url,
        args.dir.display(),
        report.chunks,
        report.bytes,
        report.requests,
        report.branch
    )?;
    Ok(())
}

/// `prolly dolt DBDIR remote …`, `fetch`, `pull`, `push`.
#[derive(clap::Subcommand, Debug)]
pub enum RemoteCommand {
    /// The database's remotes, like `dolt remote`: `remote add NAME URL`, `remote remove NAME`,
    /// `remote list` (`-v`: with URLs).
    Remote {
        /// add, remove or list.
        #[command(subcommand)]
        action: RemoteAction,
    },
    /// Fetch a remote's branches into `refs/remotes/REMOTE/*`, like `dolt fetch` (only the
    /// chunks the database lacks move).
    Fetch {
        /// The remote (default `origin`).
        #[arg(default_value = "origin")]
        remote: String,
        /// After fetching, remove the remote-tracking refs of branches the remote no longer
        /// has, like `dolt fetch --prune`.
        #[arg(short, long)]
        prune: bool,
        /// The user to authenticate as, like `dolt --user` (the password from
        /// `DOLT_REMOTE_PASSWORD`); without it a `dolt sql-server` takes `root` with no password.
        #[arg(short, long)]
        user: Option<String>,
    },
    /// Fetch, then fast-forward the current branch to the remote's branch, like `dolt pull
    /// --ff-only` (refused when the branch has uncommitted changes or has diverged).
    Pull {
        /// The remote (default `origin`).
        #[arg(default_value = "origin")]
        remote: String,
        /// The remote branch (default: the current branch's upstream, else the same name).
        branch: Option<String>,
        /// After fetching, remove the remote-tracking refs of branches the remote no longer
        /// has, like `dolt pull --prune`.
        #[arg(short, long)]
        prune: bool,
        /// The user to authenticate as, like `dolt --user` (the password from
        /// `DOLT_REMOTE_PASSWORD`); without it a `dolt sql-server` takes `root` with no password.
        #[arg(short, long)]
        user: Option<String>,
    },
    /// Push a branch to a remote, like `dolt push REMOTE BRANCH` (fast-forward only: refused
    /// when the remote's branch has commits this database lacks); only the chunks the remote
    /// lacks move, and `refs/remotes/REMOTE/BRANCH` follows.
    Push {
        /// The remote (default `origin`).
        #[arg(default_value = "origin")]
        remote: String,
        /// The branch (default: the current branch).
        branch: Option<String>,
        /// The user to authenticate as, like `dolt --user` (the password from
        /// `DOLT_REMOTE_PASSWORD`); without it a `dolt sql-server` takes `root` with no password.
        #[arg(short, long)]
        user: Option<String>,
    },
}

/// `remote add|remove|list`.
#[derive(clap::Subcommand, Debug)]
pub enum RemoteAction {
    /// Records a remote (URL normalised as `dolt remote add` does).
    Add {
        /// Its name.
        name: String,
        /// Its URL (`http://HOST:PORT/DB`, `file:///DIR`, `org/repo` for DoltHub).
        url: String,
    },
    /// Removes a remote and its remote-tracking branches.
    #[command(alias = "rm")]
    Remove {
        /// Its name.
        name: String,
    },
    /// Lists the remotes, like `dolt remote` (`-v`: `NAME URL`, as `dolt remote -v`).
    List {
        /// With URLs.
        #[arg(short, long)]
        verbose: bool,
    },
}

/// True if DBDIR is a remote URL rather than a directory: a remote read in place
/// (`http(s)://`, `s3://`) or a `file://` remote directory.
pub fn is_remote_url(dir: &std::path::Path) -> bool {
    dir.to_str().is_some_and(|t| {
        t.starts_with("file://")
            || prollystore_dolt_remote::REMOTE_SCHEMES
                .iter()
                .any(|s| t.starts_with(s))
    })
}

/// The database a part names (a remote read in place, or a local directory), with the MySQL
/// expression engine.
pub fn open_part(
    part: &impl prollystore_dolt::parts::Located,
) -> Result<prollystore_dolt::Database> {
    let options = prollystore_dolt_remote::OpenOptions::default();
    let db = prollystore_dolt_remote::open_part_database(part, &options).map_err(remote_error)?;
    Ok(db.with_expressions(prollystore_sql::engine()))
}

/// DBDIR given as a remote URL (`http://HOST:PORT/DB`, `file:///DIR`,
/// `s3://BUCKET/PATH?endpoint=URL&path-style=true`, credentials from the standard AWS
/// environment variables): the database there read
/// in place, read-only, with the MySQL expression engine; `None` for a directory.
pub fn open_in_place(dir: &std::path::Path) -> Result<Option<prollystore_dolt::Database>> {
    let Some(url) = dir.to_str().filter(|_| is_remote_url(dir)) else {
        return Ok(None);
    };
    let options = prollystore_dolt_remote::OpenOptions::default();
    let db = prollystore_dolt_remote::open_remote(url, &options).map_err(remote_error)?;
    Ok(Some(db.with_expressions(prollystore_sql::engine())))
}

/// The branch a read of a remote defaults to (as a clone would check out).
pub fn remote_default_branch(db: &prollystore_dolt::Database) -> Result<Option<String>> {
    Ok(prollystore_dolt_remote::default_branch(db)?)
}

/// The options of `fetch`, `pull` and `push`: `--prune` and `--user`.
fn remote_options(
    prune: bool,
    user: Option<&str>,
) -> Result<prollystore_dolt_remote::CloneOptions> {
    Ok(prollystore_dolt_remote::CloneOptions {
        credentials: credentials(user)?,
        ..prollystore_dolt_remote::CloneOptions::with_prune(prune)
    })
}

/// `--user USER` as Dolt takes it: the password from `DOLT_REMOTE_PASSWORD`.
fn credentials(user: Option<&str>) -> Result<Option<prollystore_dolt_remote::Credentials>> {
    user.map(prollystore_dolt_remote::Credentials::from_env)
        .transpose()
        .map_err(remote_error)
}

fn remote_error(e: prollystore_dolt_remote::RemoteError) -> Error {
    Error::Msg(e.to_string())
}

/// Runs a remote subcommand on the database in `dir`.
pub fn run(dir: &std::path::Path, command: RemoteCommand, out: &mut dyn Write) -> Result<()> {
    use prollystore_dolt_remote as r;
    match command {
        RemoteCommand::Remote { action } => match action {
            RemoteAction::Add { name, url } => {
                let url = r::remote_add(dir, &name, &url).map_err(remote_error)?;
                writeln!(out, "added remote {name} {url}")?;
            }
            RemoteAction::Remove { name } => {
                r::remote_remove(dir, &name).map_err(remote_error)?;
                writeln!(out, "removed remote {name}")?;
            }
            RemoteAction::List { verbose } => {
                for remote in r::remote_list(dir).map_err(remote_error)? {
                    if verbose {
                        // `dolt remote -v` prints a space after the URL (its parameters follow).
                        writeln!(out, "{} {} ", remote.name, remote.url)?;
                    } else {
                        writeln!(out, "{}", remote.name)?;
                    }
                }
            }
        },
        RemoteCommand::Fetch {
            remote,
            prune,
            user,
        } => {
            let options = remote_options(prune, user.as_deref())?;
            let report = r::fetch(dir, &remote, &options).map_err(remote_error)?;
            fetch_lines(&report, out)?;
        }
        RemoteCommand::Push {
            remote,
            branch,
            user,
        } => {
            let branch = match branch {
                Some(b) => b,
                None => current_branch(dir)?,
            };
            let options = remote_options(false, user.as_deref())?;
            let report = r::push(dir, &remote, &branch, &options).map_err(remote_error)?;
            writeln!(out, "To {}", report.url)?;
            match report.outcome {
                r::PushOutcome::UpToDate => writeln!(out, "Everything up-to-date")?,
                r::PushOutcome::Pushed { from, to } => {
                    let what = match from {
                        None => " * [new branch]         ".to_string(),
                        Some(from) => format!("   {from}..{to}"),
                    };
                    writeln!(
                        out,
                        "{what} {branch} -> {branch} ({} chunks, {} bytes)",
                        report.chunks, report.bytes
                    )?;
                }
            }
        }
        RemoteCommand::Pull {
            remote,
            branch,
            prune,
            user,
        } => {
            let options = remote_options(prune, user.as_deref())?;
            let report =
                r::pull(dir, &remote, branch.as_deref(), &options).map_err(remote_error)?;
            fetch_lines(&report.fetch, out)?;
            match report.outcome {
                r::FastForward::UpToDate => writeln!(out, "Everything up-to-date")?,
                r::FastForward::Moved { from, to } => {
                    writeln!(out, "Fast-forward\nUpdating {from}..{to}")?;
                }
            }
        }
    }
    Ok(())
}

/// The branch HEAD names in the database at `dir` (`repo_state.json`).
fn current_branch(dir: &std::path::Path) -> Result<String> {
    let state = prollystore_dolt::write::repo_state::RepoState::read(&dir.join(".dolt"))
        .map_err(|e| Error::Msg(e.to_string()))?;
    state
        .current_branch()
        .map(str::to_string)
        .ok_or_else(|| Error::Msg(format!("HEAD is {:?}, not a branch", state.head)))
}

fn fetch_lines(report: &prollystore_dolt_remote::FetchReport, out: &mut dyn Write) -> Result<()> {
    writeln!(
        out,
        "fetched {} ({}): {} new chunks, {} bytes",
        report.remote, report.url, report.chunks, report.bytes
    )?;
    for u in &report.updated {
        match u.old {
            None => writeln!(
                out,
                " * [new branch] {} -> {}/{}",
                u.branch, report.remote, u.branch
            )?,
            Some(old) => writeln!(
                out,
                "   {old}..{} {} -> {}/{}",
                u.new, u.branch, report.remote, u.branch
            )?,
        }
    }
    for b in &report.pruned {
        writeln!(out, " - [deleted] {}/{b}", report.remote)?;
    }
    Ok(())
}
