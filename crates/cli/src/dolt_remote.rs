//! `prolly dolt clone URL DIR`: a Dolt database cloned from a remote (`http://HOST:PORT/DB`, as
//! `dolt sql-server --remotesapi-port` serves it) into a new directory that `dolt` and this
//! CLI open as a clone (`origin`, remote-tracking branches, the default branch checked out).
//! One thin call into `prollystore-dolt-remote`.

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
}

/// Runs the clone and prints what it did.
pub fn clone(args: CloneArgs, out: &mut dyn Write) -> Result<()> {
    let options = prollystore_dolt_remote::CloneOptions {
        remote_name: args.remote,
        branch: args.branch,
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
