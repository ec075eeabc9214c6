//! `prolly dolt DBDIR ...`: the views of a real Dolt database (branches, tags, log, tables,
//! schemas, CSV export, keyed gets, range scans, diffs) printed the way the `dolt` CLI prints
//! them. Writing is [`crate::dolt_write`]'s (import, alter, commit) and
//! [`crate::dolt_vc`]'s (branch, checkout, tag, merge, status); remotes are
//! [`crate::dolt_remote`]'s.
//!
//! Every subcommand is one thin call into `prollystore-dolt`; only the writing ones touch the
//! database directory (under Dolt's writer lock).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use std::ops::Bound;

use clap::{Args, Subcommand};
use indicatif::ProgressBar;

use prollystore_dolt::csv_export::export_csv;
use prollystore_dolt::csv_field::{write_csv_header, write_csv_row};
use prollystore_dolt::diff_parts::{split_diff, DiffPart, DIFF_PART_FORMAT};
use prollystore_dolt::log_text::{log_oneline_text, log_text, tag_text};
use prollystore_dolt::parts::{projection, split, Part, SplitOptions};
use prollystore_dolt::{Database, KeyRange, RootValue, Rows, SqlValue, Table, TableReader};
use prollystore_format::tuple::Tuple;

use crate::error::{Error, Result};
use crate::progress::progress;

/// DBDIR's value when none is given (only `clone` takes none): a path no directory has.
const NO_DBDIR: &str = "\u{0}";

/// `prolly dolt DBDIR <subcommand>`: the database directory and what to show
/// (`prolly dolt clone URL DIR` takes no DBDIR).
#[derive(Args, Debug)]
#[command(subcommand_negates_reqs = true)]
pub struct DoltArgs {
    /// The Dolt database directory (the one containing `.dolt`); for the read commands also a
    /// remote URL (`http://HOST:PORT/DB`, `file:///DIR`, `s3://BUCKET/PATH?endpoint=URL&path-style=true`
    /// with credentials in the AWS_* environment), read in place without cloning.
    #[arg(
        value_name = "DBDIR",
        required = true,
        default_value = NO_DBDIR,
        hide_default_value = true
    )]
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
    /// The row with this primary key, as CSV with a header, like
    /// `dolt sql -r csv -q "select * from T where k1 = KEY1 and …"`. Text keys match under the
    /// column's collation, as in Dolt. When no row has the key, only the header is printed
    /// (as Dolt prints an empty result) and the command fails with exit status 1 and a
    /// message on stderr, like `grep` or `git config --get` finding nothing.
    Get {
        /// The table.
        table: String,
        /// One value per primary-key column, in key order: numbers in decimal, dates as
        /// YYYY-MM-DD, datetimes as 'YYYY-MM-DD HH:MM:SS[.ffffff]', times as [-]H:MM:SS, enum
        /// members by name or number, set members comma-separated, binary values as 0x + hex.
        /// Negative numbers are keys; other values starting with `-` go after `--`.
        #[arg(required = true, allow_negative_numbers = true, value_name = "KEY")]
        key: Vec<String>,
        /// Which branch state to read.
        #[command(flatten)]
        state: StateArgs,
    },
    /// Rows of a key range as CSV with a header, in key order (or reverse), through the
    /// primary key or a named secondary index (whole rows either way). A composite key's
    /// values are given by repeating --from/--to, one per leading key column; fewer values
    /// than the key has bound a prefix of it. A keyless table scans in its stored (row hash)
    /// order; `export` prints it sorted as Dolt does.
    Scan {
        /// The table.
        table: String,
        /// Scan this secondary index instead of the primary key.
        #[arg(long, value_name = "NAME")]
        index: Option<String>,
        /// Lower bound (inclusive unless --exclusive-from); repeat for composite keys. Each
        /// VALUE is read as one CSV field, as this command prints values: an empty VALUE is
        /// NULL (the first key, as in Dolt's indexes: `--from '' --to ''` is `IS NULL`, and
        /// `--from '' --exclusive-from` starts after the NULLs), a double-quoted one is
        /// unquoted (`'""'` is the empty string), anything else is taken as it is.
        #[arg(long, allow_hyphen_values = true, value_name = "VALUE")]
        from: Vec<String>,
        /// Upper bound (inclusive unless --exclusive-to); repeat for composite keys. VALUEs
        /// as for --from.
        #[arg(long, allow_hyphen_values = true, value_name = "VALUE")]
        to: Vec<String>,
        /// Leave out rows equal to the --from bound.
        #[arg(long)]
        exclusive_from: bool,
        /// Leave out rows equal to the --to bound.
        #[arg(long)]
        exclusive_to: bool,
        /// Descending key order.
        #[arg(long)]
        reverse: bool,
        /// At most this many rows.
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
        /// Which branch state to read.
        #[command(flatten)]
        state: StateArgs,
    },
    /// Applies a CSV file (header of column names; values as `dolt sql -r csv` prints them,
    /// an empty unquoted field is NULL) to TABLE in the current branch's working set, as Dolt
    /// writes it: inserts new keys and updates the others, unless --replace or --delete.
    /// Nothing is written if any row is rejected.
    Import {
        /// The table.
        table: String,
        /// The CSV file.
        file: PathBuf,
        /// Create the table first from this CREATE TABLE statement.
        #[arg(long, value_name = "SQL")]
        create: Option<String>,
        /// Replace every row of the table by the file's.
        #[arg(long, conflicts_with = "delete")]
        replace: bool,
        /// Delete the rows whose primary keys the file lists (keyless tables: one copy of each
        /// listed row).
        #[arg(long)]
        delete: bool,
    },
    /// Runs one `ALTER TABLE …` statement (or `RENAME TABLE a TO b`) on the current branch's
    /// working set, as `dolt sql -q "ALTER TABLE …"` does (same schema, tags, rows and index
    /// trees). A clause Dolt refuses, or one not done yet, is refused with nothing written.
    Alter {
        /// The statement.
        sql: String,
    },
    /// Stages every change of the current branch's working set and commits it, like
    /// `dolt add -A` and `dolt commit`; prints the commit hash.
    Commit {
        /// The commit message.
        #[arg(short, long)]
        message: String,
        /// Author as `'Name <email>'` (default: user.name and user.email of Dolt's config).
        #[arg(long)]
        author: Option<String>,
        /// Author and committer date (YYYY-MM-DD, YYYY-MM-DDTHH:MM:SS, optionally with Z or
        /// ±HH:MM; default: now).
        #[arg(long)]
        date: Option<String>,
    },
    /// Cuts TABLE into N parts of nearly equal row counts (from the tree's counts, no scan)
    /// and prints each part's description, one JSON object a line: where the database is,
    /// the state and table chunk it was cut from, its rows and columns. Any process can read
    /// a part on its own with `prolly dolt read-part`, the Python `Part`, or Rust.
    Split {
        /// The table.
        table: String,
        /// How many parts (fewer when the table has fewer rows).
        parts: usize,
        /// Only these columns, in this order (comma-separated; default: every column).
        #[arg(long, value_delimiter = ',', value_name = "NAMES")]
        columns: Option<Vec<String>>,
        /// Where the readers will find the database, if not where it is here (a path or
        /// `file://` URL as the workers see it).
        #[arg(long, value_name = "LOCATION")]
        location: Option<String>,
        /// Which branch state to cut.
        #[command(flatten)]
        state: StateArgs,
    },
    /// Cuts the diff of TABLE from state FROM to state TO into N parts of nearly equal work
    /// (the rows of the leaves the two states do not share, found from the trees' internal
    /// nodes: no leaf is read) and prints each part's description, one JSON object a line:
    /// where the database is, both states and table chunks, and the part's key range. Any
    /// process reads a part on its own with `prolly dolt read-part`, the Python `DiffPart`, or
    /// Rust; the parts' rows, one part after the other, are the whole diff's.
    SplitDiff {
        /// The older state (a branch, tag, commit, `HEAD~N`, `WORKING`, `STAGED`).
        from: String,
        /// The newer state.
        to: String,
        /// The table.
        table: String,
        /// How many parts (fewer when the diff has fewer changed leaves).
        parts: usize,
        /// Where the readers will find the database, if not where it is here (a path or
        /// `file://` URL as the workers see it).
        #[arg(long, value_name = "LOCATION")]
        location: Option<String>,
    },
    /// The rows of one part that `split` printed, as CSV with a header, in key order:
    /// `prolly dolt read-part PART` (no DBDIR: the part names its database; with a DBDIR,
    /// the database is read there instead). PART is a file holding the part's JSON line, or
    /// `-` for standard input. The part reads the table chunk it was cut from, whatever the
    /// branch did since, or says it cannot. A part of a diff (`split-diff`) prints its rows
    /// of the diff as `diff --csv` prints the whole diff's.
    ReadPart {
        /// The part's JSON: a file, or `-` for standard input.
        part: PathBuf,
    },
    /// Runs one SQL query (Apache DataFusion's SQL, with Dolt's `AS OF` and the system
    /// tables `dolt_log`, `dolt_branches`, `dolt_diff_<table>`) and prints the result as
    /// `dolt sql -r FORMAT` does. The query runs in `prolly-sql` (crate `prollystore-query`),
    /// found beside `prolly` or on PATH (`PROLLY_SQL` names another).
    Sql {
        /// The query.
        query: String,
        /// `csv`, `json` or `table` (also `tabular`, Dolt's name).
        #[arg(short = 'r', long = "result-format", default_value = "table")]
        format: String,
        /// Read this branch's working set (default: the checked-out branch's).
        #[arg(short, long, conflicts_with = "at")]
        branch: Option<String>,
        /// Read this state instead: a branch, tag or commit, `HEAD~2`, `feature@WORKING`.
        #[arg(long)]
        at: Option<String>,
    },
    /// Version control: branch, checkout, tag, merge, status.
    #[command(flatten)]
    Vc(crate::dolt_vc::VcCommand),
    /// Clone a Dolt database from a remote: `prolly dolt clone URL DIR` (no DBDIR).
    Clone(crate::dolt_remote::CloneArgs),
    /// Remotes: `remote add|remove|list`, `fetch`, `pull`, `push`.
    #[command(flatten)]
    Remote(crate::dolt_remote::RemoteCommand),
}

/// Refuses a directory without a Dolt database, before a command opens it (writes open it
/// themselves, once, for writing).
fn expect_database(dir: &Path) -> Result<()> {
    if crate::dolt_remote::is_remote_url(dir) {
        return Err(Error::msg(format!(
            "{} is a remote: only the read commands read it (in place); clone it to write",
            dir.display()
        )));
    }
    let has_noms = dir.join(".dolt").join("noms").is_dir() || dir.join("noms").is_dir();
    if !has_noms {
        return Err(Error::msg(format!(
            "no Dolt database at {} (expected a .dolt directory there)",
            dir.display()
        )));
    }
    Ok(())
}

/// Runs a `dolt` subcommand, writing its text to `out` (export may write to a file instead).
pub fn run(args: DoltArgs, quiet: bool, out: &mut dyn Write) -> Result<()> {
    if let DoltCommand::Clone(clone) = args.command {
        return crate::dolt_remote::clone(clone, out);
    }
    if let DoltCommand::ReadPart { part } = &args.command {
        let dir = (args.dir.as_os_str() != NO_DBDIR).then_some(args.dir.as_path());
        return read_part(part, dir, out);
    }
    if args.dir.as_os_str() == NO_DBDIR {
        return Err(Error::Msg("the DBDIR argument is missing".into()));
    }
    if let DoltCommand::Remote(command) = args.command {
        return crate::dolt_remote::run(&args.dir, command, out);
    }
    if let DoltCommand::Sql {
        query,
        format,
        branch,
        at,
    } = &args.command
    {
        expect_database(&args.dir)?;
        return sql(
            &args.dir,
            query,
            format,
            branch.as_deref(),
            at.as_deref(),
            out,
        );
    }
    if let DoltCommand::Vc(command) = args.command {
        // They open the database themselves (for writing where they write).
        expect_database(&args.dir)?;
        return crate::dolt_vc::run(&args.dir, command, out);
    }
    // Writes open the database themselves, for writing.
    match args.command {
        DoltCommand::Import {
            table,
            file,
            create,
            replace,
            delete,
        } => {
            expect_database(&args.dir)?;
            let mode = match (replace, delete) {
                (true, _) => crate::dolt_write::ImportMode::Replace,
                (_, true) => crate::dolt_write::ImportMode::Delete,
                _ => crate::dolt_write::ImportMode::Upsert,
            };
            return crate::dolt_write::import(
                &args.dir,
                &table,
                &file,
                create.as_deref(),
                mode,
                out,
            );
        }
        DoltCommand::Alter { sql } => {
            expect_database(&args.dir)?;
            return crate::dolt_write::alter(&args.dir, &sql, out);
        }
        DoltCommand::Commit {
            message,
            author,
            date,
        } => {
            expect_database(&args.dir)?;
            return crate::dolt_write::commit(
                &args.dir,
                &message,
                author.as_deref(),
                date.as_deref(),
                out,
            );
        }
        _ => {}
    }
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
            let commits: Vec<_> = db.log(db.resolve(&spec)?).collect::<Result<_, _>>()?;
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
            let create = prollystore_sql::show_create_table(&db, &root, &t)?;
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
        DoltCommand::Get { table, key, state } => get(&db, &table, &key, &state, out),
        DoltCommand::Split {
            table,
            parts,
            columns,
            location,
            state,
        } => {
            let spec = branch_or_current(&db, state.branch.clone())?;
            let at = match state.working {
                true => format!("{spec}@WORKING"),
                false => spec,
            };
            let options = SplitOptions {
                columns,
                location,
                ..SplitOptions::default()
            };
            for part in split(&db, &at, &table, parts, &options)? {
                writeln!(out, "{}", part.to_json())?;
            }
            Ok(())
        }
        DoltCommand::SplitDiff {
            from,
            to,
            table,
            parts,
            location,
        } => {
            let parts = split_diff(&db, &from, &to, &table, parts, location.as_deref())?;
            for part in parts {
                writeln!(out, "{}", part.to_json())?;
            }
            Ok(())
        }
        DoltCommand::Import { .. }
        | DoltCommand::ReadPart { .. }
        | DoltCommand::Sql { .. }
        | DoltCommand::Commit { .. }
        | DoltCommand::Alter { .. }
        | DoltCommand::Clone(_)
        | DoltCommand::Remote(_)
        | DoltCommand::Vc(_) => Ok(()),
        DoltCommand::Scan {
            table,
            index,
            from,
            to,
            exclusive_from,
            exclusive_to,
            reverse,
            limit,
            state,
        } => {
            let (root, _) = select_root(&db, &state)?;
            let t = db.table(&root, &table)?;
            let reader = t.reader(&db)?;
            let bound =
                |texts: &[String], exclusive: bool| -> Result<Bound<Vec<Option<SqlValue>>>> {
                    if texts.is_empty() {
                        return Ok(Bound::Unbounded);
                    }
                    let enc = match &index {
                        Some(name) => reader.index_key(name)?,
                        None => reader.primary_key()?,
                    };
                    let fields = texts
                        .iter()
                        .map(|t| bound_field(t))
                        .collect::<Result<Vec<_>>>()?;
                    let fields: Vec<Option<&str>> = fields.iter().map(|f| f.as_deref()).collect();
                    let values = enc.parse_nullable(&fields)?;
                    Ok(if exclusive {
                        Bound::Excluded(values)
                    } else {
                        Bound::Included(values)
                    })
                };
            let range = KeyRange {
                from: bound(&from, exclusive_from)?,
                to: bound(&to, exclusive_to)?,
                reverse,
                limit,
            };
            let rows = match &index {
                Some(name) => reader.index_scan(name, &range)?,
                None => reader.scan(&range)?,
            };
            write_rows(&reader, rows, None, out).map(|_| ())
        }
    }
}

/// A `scan` bound value read as the CSV field `scan` prints for it: `None` (NULL) when empty,
/// unquoted when double-quoted (`""` inside for a quote), else as it is.
fn bound_field(text: &str) -> Result<Option<std::borrow::Cow<'_, str>>> {
    if text.is_empty() {
        return Ok(None);
    }
    let Some(inner) = text.strip_prefix('"') else {
        return Ok(Some(text.into()));
    };
    let bad = || {
        Error::msg(format!(
            "bound {text:?}: a value starting with a double quote is a quoted CSV field, \
             which must end with one and double the quotes inside"
        ))
    };
    let inner = inner.strip_suffix('"').ok_or_else(bad)?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '"' && chars.next() != Some('"') {
            return Err(bad());
        }
        out.push(c);
    }
    Ok(Some(out.into()))
}

/// Writes a CSV header of `reader`'s columns, then `rows`; returns how many rows. With
/// `picked`, only those columns (positions among the visible ones), in that order.
fn write_rows(
    reader: &TableReader<'_>,
    rows: Rows<'_>,
    picked: Option<&[usize]>,
    out: &mut dyn Write,
) -> Result<u64> {
    let mut buf = Vec::with_capacity(1 << 16);
    let names = reader.column_names();
    match picked {
        Some(p) => write_csv_header(p.iter().filter_map(|&i| names.get(i).copied()), &mut buf),
        None => write_csv_header(names, &mut buf),
    }
    let mut cells = Vec::new();
    let mut n = 0u64;
    for row in rows {
        let mut row = row?;
        match picked {
            Some(p) => {
                cells.clear();
                cells.extend(p.iter().map(|&i| row.get_mut(i).and_then(Option::take)));
                write_csv_row(&cells, &mut buf);
            }
            None => write_csv_row(&row, &mut buf),
        }
        n += 1;
        if buf.len() >= 1 << 16 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    Ok(n)
}

/// `read-part`: the rows of the part described in `file` (`-`: standard input) as CSV, read
/// from the database the part names, or from `dir` when given.
fn read_part(file: &Path, dir: Option<&Path>, out: &mut dyn Write) -> Result<()> {
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())?
    } else {
        std::fs::read_to_string(file)
            .map_err(|e| Error::from(e).context(format!("reading {}", file.display())))?
    };
    let text = text.trim();
    // Either kind of part, told apart by its `format`.
    let format = serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .and_then(|v| v.get("format")?.as_str().map(str::to_string));
    if format.as_deref() == Some(DIFF_PART_FORMAT) {
        let part = DiffPart::from_json(text)?;
        let db = match dir {
            Some(d) => open(d)?,
            None => crate::dolt_remote::open_part(&part)?,
        };
        return Ok(part.diff(&db)?.write_csv(out)?);
    }
    let part = Part::from_json(text)?;
    let db = match dir {
        Some(d) => open(d)?,
        None => crate::dolt_remote::open_part(&part)?,
    };
    let table = part.table(&db)?;
    let reader = table.reader(&db)?;
    let rows = reader.scan_ordinals(part.ordinals())?;
    let picked = match &part.columns {
        Some(columns) => Some(projection(&table, columns)?),
        None => None,
    };
    write_rows(&reader, rows, picked.as_deref(), out).map(|_| ())
}

/// `get`: the row with primary key `key` (the CLI's text per key column).
fn get(
    db: &Database,
    table: &str,
    key: &[String],
    state: &StateArgs,
    out: &mut dyn Write,
) -> Result<()> {
    let (root, _) = select_root(db, state)?;
    let t = db.table(&root, table)?;
    let reader = t.reader(db)?;
    let enc = reader.primary_key()?;
    let texts: Vec<&str> = key.iter().map(String::as_str).collect();
    if texts.len() != enc.columns().len() {
        let names: Vec<&str> = enc.columns().iter().map(|c| c.name.as_str()).collect();
        return Err(Error::msg(format!(
            "table {table} has a primary key of {} column(s) ({}); {} value(s) given",
            names.len(),
            names.join(", "),
            texts.len()
        )));
    }
    let values = enc.parse(&texts)?;
    let mut buf = Vec::new();
    write_csv_header(reader.column_names(), &mut buf);
    let row = reader.get(&values)?;
    if let Some(row) = &row {
        write_csv_row(row, &mut buf);
    }
    out.write_all(&buf)?;
    match row {
        Some(_) => Ok(()),
        None => {
            let shown: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            Err(Error::msg(format!(
                "no row of {table} has primary key ({})",
                shown.join(", ")
            )))
        }
    }
}

/// Opens `dir` read-only, with a clear error when it holds no Dolt database.
fn open(dir: &Path) -> Result<Database> {
    if let Some(db) = crate::dolt_remote::open_in_place(dir)? {
        return Ok(db);
    }
    expect_database(dir)?;
    prollystore_sql::open(dir)
        .map_err(|e| Error::from(e).context(format!("opening {}", dir.display())))
}

/// The branch given, or the current one from `repo_state.json`.
fn branch_or_current(db: &Database, branch: Option<String>) -> Result<String> {
    match branch {
        Some(b) => Ok(b),
        None if crate::dolt_remote::is_remote_url(db.dot_dolt()) => {
            crate::dolt_remote::remote_default_branch(db)?
                .ok_or_else(|| Error::msg("the remote has no branches; name one with --branch"))
        }
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
    let map = table.primary_scan_map(db);
    if !table.schema.keyless {
        return map.count().map_err(|e| bad(&e));
    }
    let desc = table.schema.value_desc();
    map.iter().map_err(|e| bad(&e))?.try_fold(0u64, |n, entry| {
        let (_, v) = entry.map_err(|e| bad(&e))?;
        let copies = Tuple::new(v)
            .ok()
            .and_then(|t| desc.get_uint64(t, 0).ok().flatten())
            .unwrap_or(1);
        Ok(n.saturating_add(copies))
    })
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

/// `prolly dolt DIR sql`: runs `prolly-sql`, streaming its output to `out`.
fn sql(
    dir: &Path,
    query: &str,
    format: &str,
    branch: Option<&str>,
    at: Option<&str>,
    out: &mut dyn Write,
) -> Result<()> {
    let program = std::env::var_os("PROLLY_SQL")
        .map(PathBuf::from)
        .or_else(|| {
            let beside = std::env::current_exe().ok()?.with_file_name("prolly-sql");
            beside.is_file().then_some(beside)
        })
        .unwrap_or_else(|| PathBuf::from("prolly-sql"));
    let mut command = std::process::Command::new(&program);
    command.arg("--db").arg(dir).args(["-r", format]);
    if let Some(b) = branch {
        command.args(["--branch", b]);
    }
    if let Some(a) = at {
        command.args(["--at", a]);
    }
    command.arg("--").arg(query);
    let mut child = command
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            Error::msg(format!(
                "running {} for `sql`: {e} (install it with `cargo install --path crates/query`, \
                 or name it with PROLLY_SQL)",
                program.display()
            ))
        })?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let copied = std::io::copy(&mut stdout, out);
    drop(stdout);
    let output = child.wait_with_output()?;
    copied?;
    if !output.status.success() {
        let text = String::from_utf8_lossy(&output.stderr);
        let text = text.trim();
        return Err(Error::msg(
            text.strip_prefix("error: ").unwrap_or(text).to_string(),
        ));
    }
    Ok(())
}
