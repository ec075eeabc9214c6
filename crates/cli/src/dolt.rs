//! `prolly dolt DBDIR ...`: read-only views of a real Dolt database (branches, tags, log,
//! tables, schemas, CSV export) printed the way the `dolt` CLI prints them.
//!
//! Every subcommand is one thin call into `prollystore-dolt`, which opens the database
//! read-only: nothing here writes into the database directory.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use indicatif::ProgressBar;
use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::log_text::{log_oneline_text, log_text, tag_text};
use prollystore_dolt::table_rows::for_each_entry;
use prollystore_dolt::{Database, RootValue, Table};
use prollystore_format::message::Node;
use prollystore_format::tuple::Tuple;

use crate::error::{Error, Result};
use crate::progress::progress;

/// `prolly dolt DBDIR <subcommand>`: the database directory and what to show.
#[derive(Args, Debug)]
pub struct DoltArgs {
    /// The Dolt database directory (the one containing `.dolt`).
    #[arg(value_name = "DBDIR")]
    pub dir: PathBuf,
    /// What to show.
    #[command(subcommand)]
    pub command: DoltCommand,
}

/// Which state of a branch to read: shared by `tables`, `schema` and `export`.
#[derive(Args, Debug, Clone, Default)]
pub struct StateArgs {
    /// Branch (or tag, or commit hash) to read; default: the current branch.
    #[arg(short, long)]
    pub branch: Option<String>,
    /// Read the branch's working set (uncommitted changes) instead of its head commit.
    #[arg(short, long)]
    pub working: bool,
}

/// The `dolt` subcommands.
#[derive(Subcommand, Debug)]
pub enum DoltCommand {
    /// Branches with head commit and message, like `dolt branch -v` (`*` marks the current one).
    Branches,
    /// Tags with tagged commit, tagger, date and message, like `dolt tag -v`.
    Tags,
    /// The commit log, like `dolt log` (or `dolt log --oneline`).
    Log {
        /// One line per commit: hash and message.
        #[arg(long)]
        oneline: bool,
        /// Branch, tag or commit to start from; default: the current branch.
        branch: Option<String>,
    },
    /// Table names with their row counts.
    Tables {
        /// Which branch state to read.
        #[command(flatten)]
        state: StateArgs,
    },
    /// A table's CREATE TABLE statement, like `dolt schema show`.
    Schema {
        /// The table.
        table: String,
        /// Which branch state to read.
        #[command(flatten)]
        state: StateArgs,
    },
    /// A table as CSV, like `dolt sql -r csv -q "select * from T order by <key>"`.
    Export {
        /// The table.
        table: String,
        /// Which branch state to read.
        #[command(flatten)]
        state: StateArgs,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Skip checking each chunk's SHA-512 against its address (the CRC-32C of every
        /// compressed chunk is still checked, as Dolt itself does): faster, for databases you
        /// trust.
        #[arg(long)]
        no_hash_check: bool,
    },
    /// Rows added, removed and modified in TABLE from FROM to TO (commits, branches, tags,
    /// `HEAD~N`, `WORKING`, `STAGED`), like `dolt_diff(FROM, TO, TABLE)`; without TABLE, the
    /// tables that differ, like `dolt_diff_summary(FROM, TO)`.
    Diff {
        /// The older state.
        from: String,
        /// The newer state.
        to: String,
        /// The table (default: list the tables that differ).
        table: Option<String>,
        /// CSV exactly as `dolt sql -r csv -q "select * from dolt_diff(...)"` prints it.
        #[arg(long)]
        csv: bool,
    },
}

/// Runs a `dolt` subcommand, writing its text to `out` (export may write to a file instead).
pub fn run(args: DoltArgs, quiet: bool, out: &mut dyn Write) -> Result<()> {
    let mut db = open(&args.dir)?;
    if let DoltCommand::Export {
        no_hash_check: true,
        ..
    } = args.command
    {
        db = db.with_verify_hashes(false);
    }
    match args.command {
        DoltCommand::Branches => branches(&db, out),
        DoltCommand::Tags => tags(&db, out),
        DoltCommand::Log { oneline, branch } => {
            let spec = branch_or_current(&db, branch)?;
            let commits = db.log(db.resolve(&spec)?)?;
            let text = if oneline {
                log_oneline_text(&commits)
            } else {
                log_text(&commits)
            };
            Ok(out.write_all(text.as_bytes())?)
        }
        DoltCommand::Tables { state } => tables(&db, &state, out),
        DoltCommand::Schema { table, state } => {
            let (root, label) = select_root(&db, &state)?;
            let t = db.table(&root, &table)?;
            let create = prollystore_dolt::show_create::create_table(&db, &root, &t)?;
            Ok(write!(out, "{table} @ {label}\n{create};\n\n")?)
        }
        DoltCommand::Export {
            table,
            state,
            output,
            ..
        } => export(&db, &table, &state, output.as_deref(), quiet, out),
        DoltCommand::Diff {
            from,
            to,
            table,
            csv,
        } => crate::dolt_diff::diff(&db, &from, &to, table.as_deref(), csv, out),
    }
}

/// Opens `dir` read-only, with a clear error when it holds no Dolt database.
fn open(dir: &Path) -> Result<Database> {
    let has_noms = dir.join(".dolt").join("noms").is_dir() || dir.join("noms").is_dir();
    if !has_noms {
        return Err(Error::msg(format!(
            "no Dolt database at {} (expected a .dolt directory there)",
            dir.display()
        )));
    }
    Database::open(dir).map_err(|e| Error::from(e).context(format!("opening {}", dir.display())))
}

/// The branch given, or the current one from `repo_state.json`.
fn branch_or_current(db: &Database, branch: Option<String>) -> Result<String> {
    match branch {
        Some(b) => Ok(b),
        None => db.current_branch().ok_or_else(|| {
            Error::msg(format!(
                "no current branch recorded in {}; name one with --branch",
                db.dot_dolt().join("repo_state.json").display()
            ))
        }),
    }
}

/// The root value `state` asks for, and how `dolt schema show` names it (`working` or the spec).
fn select_root(db: &Database, state: &StateArgs) -> Result<(RootValue, String)> {
    let spec = branch_or_current(db, state.branch.clone())?;
    if state.working {
        let head = db.branch_head(&spec).map_err(|_| {
            Error::msg(format!(
                "--working needs a branch, and {spec:?} is not a branch"
            ))
        })?;
        let root = match db.working_set(&spec)? {
            Some(ws) => ws.working_root,
            // No working set: the working state is the head commit's.
            None => db.commit(head)?.root,
        };
        return Ok((db.root_value(root)?, "working".to_string()));
    }
    let commit = db.commit(db.resolve(&spec)?)?;
    Ok((db.root_value(commit.root)?, spec))
}

/// Display form of a table name: schema-qualified names are stored as `\0schema\0name`.
fn table_label(name: &str) -> String {
    match name.strip_prefix('\0').and_then(|r| r.split_once('\0')) {
        Some((schema, table)) => format!("{schema}.{table}"),
        None => name.to_string(),
    }
}

fn branches(db: &Database, out: &mut dyn Write) -> Result<()> {
    let current = db.current_branch().unwrap_or_default();
    let branches = db.branches()?;
    let width = branches.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, head) in branches {
        let c = db.commit(head)?;
        let mark = if name == current { '*' } else { ' ' };
        writeln!(out, "{mark} {name:<width$} {head} {}", c.message)?;
    }
    Ok(())
}

fn tags(db: &Database, out: &mut dyn Write) -> Result<()> {
    for t in db.tags()? {
        out.write_all(tag_text(&t).as_bytes())?;
    }
    Ok(())
}

fn tables(db: &Database, state: &StateArgs, out: &mut dyn Write) -> Result<()> {
    let (root, _) = select_root(db, state)?;
    let mut rows = Vec::with_capacity(root.tables.len());
    for (name, _) in &root.tables {
        let t = db.table(&root, name)?;
        rows.push((table_label(name), row_count(db, &t)?));
    }
    rows.sort();
    let width = rows.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    for (name, count) in rows {
        writeln!(out, "{name:<width$}  {count}")?;
    }
    Ok(())
}

/// Rows in `table`: the clustered index's entry count, or for a keyless table the sum of its
/// rows' cardinalities (a keyless entry stands for that many identical rows).
fn row_count(db: &Database, table: &Table) -> Result<u64> {
    let bad = |e: &dyn std::fmt::Display| {
        Error::msg(format!(
            "table {} (chunk {}): {e}",
            table.name, table.address
        ))
    };
    let node = Node::verify(&table.primary_index).map_err(|e| bad(&e))?;
    if !table.schema.keyless {
        return Ok(node.tree_count());
    }
    let desc = table.schema.value_desc();
    let mut n = 0u64;
    for_each_entry(db, &table.primary_index, table.address, &mut |_, v| {
        let copies = Tuple::new(v)
            .ok()
            .and_then(|t| desc.get_uint64(t, 0).ok().flatten())
            .unwrap_or(1);
        n = n.saturating_add(copies);
        Ok(())
    })?;
    Ok(n)
}

fn export(
    db: &Database,
    name: &str,
    state: &StateArgs,
    output: Option<&Path>,
    quiet: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let (root, _) = select_root(db, state)?;
    let table = db.table(&root, name)?;
    let pb = if quiet {
        ProgressBar::hidden()
    } else {
        let pb = progress(false, Some(0), "exporting", false);
        if !pb.is_hidden() {
            // Counting the rows costs a walk for keyless tables: only when the bar shows.
            pb.set_length(row_count(db, &table)?);
        }
        pb
    };
    let mut file = match output {
        Some(path) => Some(BufWriter::with_capacity(
            1 << 16,
            File::create(path)
                .map_err(|e| Error::from(e).context(format!("creating {}", path.display())))?,
        )),
        None => None,
    };
    let sink: &mut dyn Write = match file.as_mut() {
        Some(f) => f,
        None => out,
    };
    if pb.is_hidden() {
        export_csv(db, &table, sink)?;
    } else {
        let mut counted = RowCounter::new(sink, &pb);
        export_csv(db, &table, &mut counted)?;
        counted.report();
    }
    pb.finish_and_clear();
    if let Some(mut f) = file {
        f.flush()?;
        f.get_ref().sync_all()?;
    }
    Ok(())
}

/// Passes CSV bytes through and counts finished records (newlines outside quotes), however
/// the writes are split, to drive the progress bar. The header line is not a row.
struct RowCounter<'a> {
    inner: &'a mut dyn Write,
    pb: &'a ProgressBar,
    in_quotes: bool,
    lines: u64,
    reported: u64,
}

impl<'a> RowCounter<'a> {
    fn new(inner: &'a mut dyn Write, pb: &'a ProgressBar) -> RowCounter<'a> {
        RowCounter {
            inner,
            pb,
            in_quotes: false,
            lines: 0,
            reported: 0,
        }
    }

    fn report(&mut self) {
        self.reported = self.lines;
        self.pb.set_position(self.lines.saturating_sub(1));
    }
}

impl Write for RowCounter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        for &b in buf.get(..n).unwrap_or(buf) {
            match b {
                b'"' => self.in_quotes = !self.in_quotes,
                b'\n' if !self.in_quotes => self.lines += 1,
                _ => {}
            }
        }
        if self.lines - self.reported >= 1024 {
            self.report();
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}
