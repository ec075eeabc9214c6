//! `prolly-sql`: one SQL query over a Dolt database, printed as `dolt sql -r …` prints it.
//! `prolly dolt DB sql "SELECT …"` runs this program (installed beside `prolly`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use prollystore_query::output::{self, Format};
use prollystore_query::DoltSession;

/// Runs one SQL query (Apache DataFusion's SQL, with Dolt's `AS OF` and system tables
/// `dolt_log`, `dolt_branches`, `dolt_diff_<table>`) over a Dolt database.
#[derive(Parser, Debug)]
#[command(name = "prolly-sql", version)]
struct Args {
    /// The Dolt database directory (the one containing `.dolt`).
    #[arg(long, default_value = ".")]
    db: PathBuf,
    /// Read this branch's working set, as `dolt --branch B sql` does (default: the
    /// checked-out branch's).
    #[arg(short, long, conflicts_with = "at")]
    branch: Option<String>,
    /// Read this state instead: a branch, tag or commit (its committed state), `HEAD~2`,
    /// `feature@WORKING`, `main@STAGED`.
    #[arg(long)]
    at: Option<String>,
    /// How to print the result.
    #[arg(
        short = 'r',
        long = "result-format",
        value_enum,
        default_value = "table"
    )]
    format: Format,
    /// The query (`-q` as `dolt sql -q` takes it, or alone).
    #[arg(short = 'q', long = "query")]
    query_flag: Option<String>,
    /// The query.
    #[arg(required_unless_present = "query_flag", conflicts_with = "query_flag")]
    query: Option<String>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: starting the query runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> prollystore_query::Result<()> {
    let at = match (&args.branch, &args.at) {
        (Some(b), _) => Some(format!("{b}@WORKING")),
        (None, Some(a)) => Some(a.clone()),
        (None, None) => None,
    };
    let query = args.query_flag.or(args.query).unwrap_or_default();
    // One query a process: the leaves a scan reads are not kept for a next one (kept, the
    // 10M-row GROUP BY of docs/PERF.md took a third longer and 1.27 GB more memory).
    let db = prollystore_sql::open(&args.db)?;
    db.source().set_keep_bulk_reads(false);
    let session = DoltSession::new(std::sync::Arc::new(db), at.as_deref())?;
    let result = session.query(&query).await?;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    match output::write(args.format, &result.headers, &result.batches, &mut out) {
        Err(e) if e.to_string().contains("Broken pipe") => return Ok(()),
        r => r?,
    }
    if let Err(e) = out.flush() {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(prollystore_query::Error::Unsupported(format!(
                "writing the result: {e}"
            )));
        }
    }
    Ok(())
}
