//! The command line (`prolly --store DIR <command> ...`) and one function per command.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::ProgressBar;
use prollystore::store::{FileStore, RootUpdate};
use prollystore::tree::merge::{merge, Resolution};
use prollystore::tuples::TupleSchema;
use prollystore::{DiffEntry, Map, TreeSchema};
use prollystore_format::tuple::{NoBlobStore, TupleBuilder, TupleDesc, Type};
use prollystore_format::{Address, HashProfile};

use crate::catalog::{self, find_map, open_map, schema_root_name, MapEntry};
use crate::csv_lines::{self, Line};
use crate::dolt::DoltArgs;
use crate::error::{Error, Result};
use crate::field_text::{FieldParser, NullText};
use crate::import;
use crate::map_schema::MapSchema;
use crate::progress::progress;
use crate::row_filter::RowFilter;
use crate::source::{is_remote_url, NamedRoots, ReadStore};
use crate::walk::{size, walk, ChunkStats};
use prollystore_remote::RemoteStore;

/// `prolly`: work with a prollystore file store from the shell.
#[derive(Parser, Debug)]
#[command(name = "prolly", version, about, long_about = None)]
pub struct Cli {
    /// The store directory (or set PROLLY_STORE).
    #[arg(
        short = 's',
        long,
        env = "PROLLY_STORE",
        global = true,
        value_name = "DIR"
    )]
    pub store: Option<PathBuf>,
    /// Never show progress bars (they only show when stderr is a terminal anyway).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Hash profile of a new store.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Profile {
    /// BLAKE3 addresses (fast; the default).
    Blake3,
    /// Dolt's addresses (SHA-512, first 20 bytes): chunks and roots equal Dolt's.
    Dolt,
}

/// Which side wins merge conflicts.
#[derive(Clone, Copy, Debug, ValueEnum, PartialEq, Eq)]
pub enum Side {
    /// Keep the left value.
    Left,
    /// Take the right value.
    Right,
}

/// The commands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a new, empty store in the --store directory.
    Create {
        /// Hash profile.
        #[arg(long, value_enum, default_value = "blake3")]
        profile: Profile,
    },
    /// Import a CSV file (header row required) into a map.
    Import {
        /// The map's name.
        #[arg(long)]
        map: String,
        /// Key columns, e.g. 'id:int64' (needed for a new map).
        #[arg(long)]
        key: Option<String>,
        /// Value columns, e.g. 'name:string?,price:decimal' (for a new map; default none).
        #[arg(long)]
        value: Option<String>,
        /// Replace the map's content (and schema) instead of merging rows into it.
        #[arg(long, conflicts_with = "delete")]
        replace: bool,
        /// Delete the rows whose keys the file lists (only key columns are read).
        #[arg(long)]
        delete: bool,
        /// The text that means NULL (default: an empty field).
        #[arg(long)]
        null: Option<String>,
        /// Guess a new map's schema from the file's header and first rows (the first column
        /// is the key) and print it as --key/--value arguments, to edit and give again.
        #[arg(long, conflicts_with_all = ["key", "value", "delete"])]
        infer: bool,
        /// The CSV file ('-' for standard input).
        file: PathBuf,
    },
    /// Print the row with this key as CSV.
    Get {
        /// The map.
        #[arg(long)]
        map: String,
        /// Print the header line first.
        #[arg(long)]
        header: bool,
        /// The text that means NULL.
        #[arg(long)]
        null: Option<String>,
        /// Key fields: one argument per field, or one comma-separated argument.
        #[arg(required = true, num_args = 1.., allow_hyphen_values = true)]
        key: Vec<String>,
    },
    /// Print rows as CSV, in key order (from inclusive, to exclusive).
    Scan {
        /// The map.
        #[arg(long)]
        map: String,
        /// First key (or key prefix), inclusive.
        #[arg(long, allow_hyphen_values = true)]
        from: Option<String>,
        /// Last key (or key prefix), exclusive.
        #[arg(long, allow_hyphen_values = true)]
        to: Option<String>,
        /// At most this many rows.
        #[arg(long)]
        limit: Option<u64>,
        /// Descending key order.
        #[arg(long)]
        reverse: bool,
        /// Leave out the header line.
        #[arg(long)]
        no_header: bool,
        /// The text that means NULL.
        #[arg(long)]
        null: Option<String>,
        /// Keep only rows where COL=VALUE (or !=, <, <=, >, >=), compared as the column's
        /// type; repeat for several conditions (all must hold). --limit counts kept rows.
        #[arg(long = "where", value_name = "COND", allow_hyphen_values = true)]
        filter: Vec<String>,
    },
    /// Write a whole map as CSV with a header line.
    Export {
        /// The map.
        #[arg(long)]
        map: String,
        /// Output file (default: standard output).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The text that means NULL.
        #[arg(long)]
        null: Option<String>,
        /// Keep only rows where COL=VALUE (or !=, <, <=, >, >=), compared as the column's
        /// type; repeat for several conditions (all must hold).
        #[arg(long = "where", value_name = "COND", allow_hyphen_values = true)]
        filter: Vec<String>,
    },
    /// Rows added (+), removed (-) and modified (~) from one map (or root) to another.
    Diff {
        /// The old map.
        from: Option<String>,
        /// The new map.
        to: Option<String>,
        /// The old side as a root address instead of a map.
        #[arg(long)]
        from_root: Option<String>,
        /// The new side as a root address instead of a map.
        #[arg(long)]
        to_root: Option<String>,
        /// Map whose schema reads the roots (default: the map given).
        #[arg(long)]
        schema: Option<String>,
        /// CSV output: op, every column, then old.NAME for each value column.
        #[arg(long)]
        csv: bool,
        /// The text that means NULL.
        #[arg(long)]
        null: Option<String>,
    },
    /// Three-way merge: apply the changes base→right to left, writing the result to --into.
    Merge {
        /// The common ancestor map.
        #[arg(long)]
        base: String,
        /// The map the changes go into.
        #[arg(long)]
        left: String,
        /// The map whose changes are applied.
        #[arg(long)]
        right: String,
        /// Where the result goes (default: the left map).
        #[arg(long)]
        into: Option<String>,
        /// Resolve conflicts in favour of one side (otherwise conflicts fail the merge).
        #[arg(long, value_enum)]
        prefer: Option<Side>,
        /// The text that means NULL.
        #[arg(long)]
        null: Option<String>,
    },
    /// Copy a map (its root and schema) under a new name; cheap, nothing is copied.
    Branch {
        /// The existing map.
        from: String,
        /// The new map's name.
        to: String,
        /// Overwrite an existing map.
        #[arg(long)]
        force: bool,
    },
    /// Remove a map (its chunks go at the next gc).
    Drop {
        /// The map.
        map: String,
    },
    /// Check every chunk's hash and message, and walk every root's tree.
    Verify,
    /// Rows, levels, chunk counts and a chunk size histogram.
    Stats {
        /// One map only (default: the whole store).
        #[arg(long)]
        map: Option<String>,
    },
    /// Delete chunks no root reaches.
    Gc,
    /// Merge small chunk files into one.
    Compact {
        /// Files smaller than this many bytes are merged.
        #[arg(long, default_value_t = 64 << 20)]
        below: u64,
    },
    /// List the named roots.
    Roots,
    /// Name a remote of the store: `prolly remote add NAME URL`, `prolly remote list`.
    #[command(subcommand)]
    Remote(RemoteCommand),
    /// Upload the maps (all by default) to a remote: only the chunks it lacks.
    Push {
        /// The remote's name (`prolly remote add`).
        remote: String,
        /// Maps to push (default: every map).
        maps: Vec<String>,
    },
    /// Fetch every map of a remote; local maps changed since the last pull are left alone.
    Pull {
        /// The remote's name.
        remote: String,
    },
    /// Copy a remote store (s3://…, gs://…, az://…, file:///…) into a new directory.
    Clone {
        /// The remote's URL.
        url: String,
        /// The new store directory.
        dir: PathBuf,
    },
    /// A real Dolt database: read it (`branches`, `log`, `tables`, `schema`, `export`, `get`, `scan`, `diff`, `split`, `split-diff`, `read-part`), write it (`import`, `alter`, `commit`, `branch`, `merge`, …) and share it (`clone`, `fetch`, `pull`, `push`) as Dolt does.
    Dolt(DoltArgs),
}

/// `prolly remote …`.
#[derive(Subcommand, Debug)]
pub enum RemoteCommand {
    /// Record remote NAME at URL in the store's `REMOTES` file.
    Add {
        /// The remote's name.
        name: String,
        /// Its URL: s3://bucket/prefix, gs://…, az://…, file:///dir.
        url: String,
    },
    /// List the store's remotes.
    List,
    /// Delete the remote's chunk files that its manifest does not name (left by interrupted
    /// or losing pushes) and that are older than the grace period, which keeps pushes running
    /// meanwhile safe.
    Gc {
        /// The remote's name.
        name: String,
        /// Keep orphans younger than this many seconds (default: a day; must exceed an hour
        /// plus the longest push for pushes running meanwhile to be safe).
        #[arg(long, default_value_t = prollystore_remote::DEFAULT_GRACE.as_secs())]
        grace: u64,
    },
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    let ctx = Ctx {
        dir: cli.store,
        quiet: cli.quiet,
    };
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    match cli.command {
        Command::Create { profile } => ctx.create(profile, &mut out)?,
        Command::Import {
            map,
            key,
            value,
            replace,
            delete,
            null,
            infer,
            file,
        } => {
            let (key, value) = if infer {
                let (k, v) = infer_from(&file, &null_text(null.clone()))?;
                (Some(k), Some(v))
            } else {
                (key, value)
            };
            ctx.import(&map, key, value, replace, delete, null_text(null), &file)?
        }
        Command::Get {
            map,
            header,
            null,
            key,
        } => ctx.get(&map, header, null_text(null), &key, &mut out)?,
        Command::Scan {
            map,
            from,
            to,
            limit,
            reverse,
            no_header,
            null,
            filter,
        } => {
            let r = ScanRange {
                from,
                to,
                limit,
                reverse,
                filter,
            };
            ctx.scan(&map, r, !no_header, null_text(null), false, &mut out)?
        }
        Command::Export {
            map,
            output,
            null,
            filter,
        } => match output {
            Some(path) => {
                let f = File::create(&path)
                    .map_err(|e| Error::from(e).context(format!("creating {}", path.display())))?;
                let mut w = BufWriter::with_capacity(1 << 16, f);
                ctx.scan(
                    &map,
                    ScanRange {
                        filter,
                        ..ScanRange::default()
                    },
                    true,
                    null_text(null),
                    true,
                    &mut w,
                )?;
                w.flush()?;
                w.get_ref().sync_all()?;
            }
            None => ctx.scan(
                &map,
                ScanRange {
                    filter,
                    ..ScanRange::default()
                },
                true,
                null_text(null),
                true,
                &mut out,
            )?,
        },
        Command::Diff {
            from,
            to,
            from_root,
            to_root,
            schema,
            csv,
            null,
        } => ctx.diff(
            DiffSides {
                from,
                to,
                from_root,
                to_root,
                schema,
            },
            csv,
            null_text(null),
            &mut out,
        )?,
        Command::Merge {
            base,
            left,
            right,
            into,
            prefer,
            null,
        } => ctx.merge(
            &base,
            &left,
            &right,
            into,
            prefer,
            null_text(null),
            &mut out,
        )?,
        Command::Branch { from, to, force } => ctx.branch(&from, &to, force)?,
        Command::Drop { map } => ctx.drop_map(&map)?,
        Command::Verify => ctx.verify(&mut out)?,
        Command::Stats { map } => ctx.stats(map, &mut out)?,
        Command::Gc => ctx.gc(&mut out)?,
        Command::Compact { below } => ctx.compact(below, &mut out)?,
        Command::Roots => ctx.roots(&mut out)?,
        Command::Remote(RemoteCommand::Add { name, url }) => {
            prollystore_remote::config::add_remote(ctx.check_exists()?, &name, &url)?
        }
        Command::Remote(RemoteCommand::List) => {
            for (name, url) in prollystore_remote::config::remotes(ctx.check_exists()?)? {
                writeln!(out, "{name}\t{url}")?;
            }
        }
        Command::Remote(RemoteCommand::Gc { name, grace }) => {
            let url = prollystore_remote::config::remote_url(ctx.check_exists()?, &name)?;
            let r = prollystore_remote::gc(
                &prollystore_remote::Remote::open(&url)?,
                Duration::from_secs(grace),
            )?;
            writeln!(
                out,
                "remote {name} ({url}): {} chunk files named, {} orphans deleted ({} bytes), {} orphans younger than {grace} s kept",
                r.live_files, r.deleted_files, r.deleted_bytes, r.young_orphans
            )?;
        }
        Command::Push { remote, maps } => ctx.push(&remote, &maps, &mut out)?,
        Command::Pull { remote } => ctx.pull(&remote, &mut out)?,
        Command::Clone { url, dir } => {
            let store = prollystore_remote::clone(&prollystore_remote::Remote::open(&url)?, &dir)?;
            writeln!(
                out,
                "cloned {url} into {} ({} chunks, {} roots)",
                dir.display(),
                store.chunk_count(),
                store.roots().len()
            )?;
        }
        Command::Dolt(args) => crate::dolt::run(args, ctx.quiet, &mut out)?,
    }
    out.flush()?;
    Ok(())
}

fn null_text(null: Option<String>) -> NullText {
    NullText {
        marker: null.map(String::into_bytes),
    }
}

#[derive(Default)]
struct ScanRange {
    from: Option<String>,
    to: Option<String>,
    limit: Option<u64>,
    reverse: bool,
    /// `--where` conditions.
    filter: Vec<String>,
}

struct DiffSides {
    from: Option<String>,
    to: Option<String>,
    from_root: Option<String>,
    to_root: Option<String>,
    schema: Option<String>,
}

struct Ctx {
    dir: Option<PathBuf>,
    quiet: bool,
}

fn profile_of(p: Profile) -> HashProfile {
    match p {
        Profile::Blake3 => HashProfile::Blake3,
        Profile::Dolt => HashProfile::Dolt,
    }
}

fn parse_address(text: &str) -> Result<Address> {
    Address::from_base32(text)
        .or_else(|_| Address::from_hex(text))
        .map_err(|_| {
            Error::msg(format!(
                "{text:?} is not an address (32 base32 or 40 hex characters)"
            ))
        })
}

fn rate(n: u64, d: Duration) -> String {
    let s = d.as_secs_f64();
    if s <= 0.0 {
        return "-".into();
    }
    let r = n as f64 / s;
    if r >= 1e6 {
        format!("{:.2} M rows/s", r / 1e6)
    } else {
        format!("{:.0} rows/s", r)
    }
}

/// Parses key text (one CSV argument, or one argument per field) into a key tuple. With
/// `prefix`, fewer fields than the key has are allowed (the rest are NULL, which sorts first).
fn parse_key(
    schema: &MapSchema,
    args: &[String],
    null: &NullText,
    prefix: bool,
) -> Result<Vec<u8>> {
    let fields: Vec<Vec<u8>> = if let [one] = args {
        let mut r = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(one.as_bytes());
        let mut rec = csv::ByteRecord::new();
        if r.read_byte_record(&mut rec)? {
            rec.iter().map(<[u8]>::to_vec).collect()
        } else {
            vec![Vec::new()]
        }
    } else {
        args.iter().map(|a| a.as_bytes().to_vec()).collect()
    };
    let n = schema.key.len();
    if fields.len() > n || (!prefix && fields.len() != n) {
        return Err(Error::msg(format!(
            "the key has {n} field(s) ({}), {} given",
            crate::map_schema::format_columns(&schema.key),
            fields.len()
        )));
    }
    let types: Vec<Type> = schema
        .key
        .iter()
        .map(|c| {
            if prefix {
                Type::nullable(c.ty.enc)
            } else {
                c.ty
            }
        })
        .collect();
    let mut b = TupleBuilder::new(TupleDesc::new(types.clone()));
    let mut p = FieldParser::default();
    for (i, (t, ty)) in fields.iter().zip(&types).enumerate() {
        let col = schema.key.get(i).map_or("?", |c| c.name.as_str());
        let is_null = null
            .is_null(*ty, t)
            .map_err(|e| Error::msg(format!("key column {col:?}: {e}")))?;
        if !is_null {
            p.put(&mut b, i, *ty, t, &mut NoBlobStore)
                .map_err(|e| Error::msg(format!("key column {col:?}: {e}")))?;
        }
    }
    let t = b.build()?;
    Ok(t.as_bytes().to_vec())
}

/// `import --infer`: the guessed schema, printed to standard error as arguments to reuse.
fn infer_from(file: &Path, null: &NullText) -> Result<(String, String)> {
    if file == Path::new("-") {
        return Err(Error::msg(
            "--infer reads the file twice (to guess, then to import): give a file, not '-'",
        ));
    }
    let (key, value) = crate::infer::infer_schema(file, null)?;
    eprintln!(
        "inferred schema from {} (first column as key; edit and reuse): --key '{key}' --value '{value}'",
        file.display()
    );
    Ok((key, value))
}

fn check_same_schema(a: &MapEntry, b: &MapEntry) -> Result<()> {
    if a.schema != b.schema {
        return Err(Error::msg(format!(
            "maps {:?} and {:?} have different schemas ({} vs {})",
            a.name,
            b.name,
            a.schema.describe(),
            b.schema.describe()
        )));
    }
    Ok(())
}

impl Ctx {
    fn dir(&self) -> Result<&Path> {
        self.dir
            .as_deref()
            .ok_or_else(|| Error::msg("no store given: use --store DIR or set PROLLY_STORE"))
    }

    fn check_exists(&self) -> Result<&Path> {
        let dir = self.dir()?;
        if !dir.join("MANIFEST").is_file() {
            return Err(Error::msg(format!(
                "no store at {} (create one with: prolly --store {} create)",
                dir.display(),
                dir.display()
            )));
        }
        Ok(dir)
    }

    /// The store read commands read: the directory, or a remote read in place when `--store`
    /// is a URL.
    fn open_source(&self) -> Result<ReadStore> {
        if let Some(url) = self.dir.as_deref().and_then(Path::to_str) {
            if is_remote_url(url) {
                return Ok(ReadStore::from(RemoteStore::open(url)?));
            }
        }
        Ok(ReadStore::from(self.open_read()?))
    }

    fn push(&self, remote: &str, maps: &[String], out: &mut impl Write) -> Result<()> {
        let mut store = self.open_write()?;
        let url = prollystore_remote::config::remote_url(store.dir(), remote)?;
        // A map travels with its schema root.
        let mut roots = Vec::new();
        for m in maps {
            let entry = open_map(&store, m)?;
            roots.push(entry.name.clone());
            roots.push(catalog::schema_root_name(&entry.name));
        }
        let r = prollystore_remote::Remote::open(&url)?;
        let report = prollystore_remote::push(&r, &mut store, remote, &roots)?;
        writeln!(
            out,
            "pushed {} roots to {remote} ({url}): {} new chunks, {} bytes uploaded",
            report.maps.len(),
            report.chunks,
            report.bytes_uploaded
        )?;
        Ok(())
    }

    fn pull(&self, remote: &str, out: &mut impl Write) -> Result<()> {
        let mut store = self.open_write()?;
        let url = prollystore_remote::config::remote_url(store.dir(), remote)?;
        let r = prollystore_remote::Remote::open(&url)?;
        let report = prollystore_remote::pull(&r, &mut store, remote)?;
        writeln!(
            out,
            "pulled from {remote} ({url}): {} chunks, {} bytes; {} roots updated",
            report.chunks,
            report.bytes,
            report.updated.len()
        )?;
        for d in &report.diverged {
            writeln!(
                out,
                "root {d:?} changed here and on {remote}: kept the local one; the remote's is root {:?}",
                prollystore_remote::tracking_root(remote, d)
            )?;
        }
        Ok(())
    }

    fn open_read(&self) -> Result<FileStore> {
        let dir = self.check_exists()?;
        FileStore::open(dir)
            .map_err(|e| Error::from(e).context(format!("opening {}", dir.display())))
    }

    fn open_write(&self) -> Result<FileStore> {
        let dir = self.check_exists()?;
        FileStore::open_writer(dir).map_err(Error::from)
    }

    fn create(&self, profile: Profile, out: &mut impl Write) -> Result<()> {
        let dir = self.dir()?;
        if dir.join("MANIFEST").exists() {
            return Err(Error::msg(format!(
                "a store already exists at {}",
                dir.display()
            )));
        }
        let p = profile_of(profile);
        let mut store = FileStore::create(dir, p)?;
        store.commit(&[])?;
        writeln!(
            out,
            "created store {} (hash profile {})",
            dir.display(),
            p.name()
        )?;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn import(
        &self,
        map: &str,
        key: Option<String>,
        value: Option<String>,
        replace: bool,
        delete: bool,
        null: NullText,
        file: &Path,
    ) -> Result<()> {
        catalog::check_map_name(map)?;
        let started = Instant::now();
        let mut store = self.open_write()?;
        let existing = find_map(&store, map)?;
        let given = match (&key, &value) {
            (None, None) => None,
            (None, Some(_)) => return Err(Error::msg("--value needs --key")),
            (Some(k), v) => Some(MapSchema::parse(k, v.as_deref().unwrap_or(""))?),
        };
        let schema = match (&existing, &given) {
            (None, Some(s)) => s.clone(),
            (None, None) => {
                return Err(Error::msg(format!(
                    "map {map:?} does not exist: give its schema with --key (and --value)"
                )))
            }
            (Some(e), Some(s)) if !replace && e.schema != *s => {
                return Err(Error::msg(format!(
                    "map {map:?} has schema {}, not {} (use --replace to change it)",
                    e.schema.describe(),
                    s.describe()
                )))
            }
            (Some(_), Some(s)) => s.clone(),
            (Some(e), None) => e.schema.clone(),
        };
        if delete && existing.is_none() {
            return Err(Error::msg(format!(
                "map {map:?} does not exist: nothing to delete"
            )));
        }
        let (reader, len): (Box<dyn std::io::Read + Send>, Option<u64>) = if file == Path::new("-")
        {
            (Box::new(std::io::stdin()), None)
        } else {
            let f = File::open(file)
                .map_err(|e| Error::from(e).context(format!("opening {}", file.display())))?;
            let len = f.metadata().ok().map(|m| m.len());
            (Box::new(f), len)
        };
        let pb = progress(self.quiet, len, "reading", true);
        let ts = schema.tuple_schema();
        let in_file = |e: Error| e.context(file.display());
        let (root, how, n, sorted, parsed) = if !delete && (existing.is_none() || replace) {
            // A new tree: built while the file is read, if it comes in key order.
            let how = if existing.is_some() {
                "replaced"
            } else {
                "created"
            };
            match import::build_csv(reader, len, &schema, &null, &store, &pb).map_err(in_file)? {
                import::Built::Tree {
                    root,
                    rows,
                    parse_time,
                } => (root, how, rows, true, parse_time),
                import::Built::Sorting { rows, partial_tree } => {
                    let parsed = started.elapsed();
                    if partial_tree {
                        // Leave out the chunks of the partial tree built before the first row
                        // out of order: open the store again (nothing was committed; the
                        // sorting builder holds its rows apart from the store).
                        drop(store);
                        store = self.open_write()?;
                    }
                    pb.set_message("sorting");
                    let n = rows.len();
                    (rows.build(&store).map_err(in_file)?, how, n, false, parsed)
                }
                import::Built::Unsorted {
                    mut rows,
                    partial_tree,
                } => {
                    let parsed = started.elapsed();
                    if partial_tree {
                        // Leave out the chunks of the partial tree built before the first row
                        // out of order: open the store again (nothing was committed).
                        drop(store);
                        store = self.open_write()?;
                    }
                    pb.set_message("sorting");
                    rows.sort(&ts).map_err(in_file)?;
                    pb.set_message("building");
                    (
                        import::build(&store, &ts, &rows)?,
                        how,
                        rows.len(),
                        false,
                        parsed,
                    )
                }
            }
        } else {
            let mut rows = import::read_csv(reader, len, &schema, &null, &store, delete, &pb)
                .map_err(in_file)?;
            let parsed = started.elapsed();
            pb.set_message("sorting");
            rows.sort(&ts).map_err(in_file)?;
            pb.set_message("building");
            let (root, how) = match (&existing, delete) {
                (Some(e), true) => (
                    import::delete(&store, &ts, e.root, &rows)?,
                    "deleted keys from",
                ),
                (Some(e), false) => (import::upsert(&store, &ts, e.root, &rows)?, "merged into"),
                (None, _) => (import::build(&store, &ts, &rows)?, "created"),
            };
            (root, how, rows.len(), rows.sorted_input(), parsed)
        };
        pb.set_message("committing");
        let schema_address = catalog::write_schema(&store, &schema)?;
        let schema_name = schema_root_name(map);
        let mut updates = vec![RootUpdate::new(
            map,
            existing.as_ref().map(|e| e.root),
            Some(root),
        )];
        let old_schema = existing.as_ref().map(|e| e.schema_address);
        if old_schema != Some(schema_address) {
            updates.push(RootUpdate::new(
                &schema_name,
                old_schema,
                Some(schema_address),
            ));
        }
        store.commit(&updates)?;
        pb.finish_and_clear();
        let total = started.elapsed();
        let n = n as u64;
        eprintln!(
            "{how} map {map:?}: {n} rows{} in {:.3} s ({}; parsing {:.3} s); root {root}",
            if sorted { ", input already sorted" } else { "" },
            total.as_secs_f64(),
            rate(n, total),
            parsed.as_secs_f64(),
        );
        Ok(())
    }

    fn get(
        &self,
        map: &str,
        header: bool,
        null: NullText,
        key: &[String],
        out: &mut impl Write,
    ) -> Result<()> {
        let store = self.open_source()?;
        let m = open_map(&store, map)?;
        let k = parse_key(&m.schema, key, &null, false)?;
        let ts = m.schema.tuple_schema();
        let tree = Map::new(&store, m.root, ts.clone());
        let Some(v) = tree.get(&k)? else {
            return Err(Error::msg(format!(
                "key {} not found in map {map:?}",
                key.join(",")
            )));
        };
        if header {
            csv_lines::header(&m.schema).write_csv(out)?;
        }
        let mut line = Line::default();
        csv_lines::push_row(&mut line, &store, &ts.key, &ts.value, &k, v, &null)?;
        line.write_csv(out)?;
        Ok(())
    }

    fn scan(
        &self,
        map: &str,
        r: ScanRange,
        header: bool,
        null: NullText,
        show_progress: bool,
        out: &mut impl Write,
    ) -> Result<()> {
        let mut store = self.open_source()?;
        let m = open_map(&store, map)?;
        let ts = m.schema.tuple_schema();
        let from = match &r.from {
            Some(f) => Some(parse_key(&m.schema, std::slice::from_ref(f), &null, true)?),
            None => None,
        };
        let to = match &r.to {
            Some(t) => Some(parse_key(&m.schema, std::slice::from_ref(t), &null, true)?),
            None => None,
        };
        let filter = RowFilter::parse(&m.schema, &r.filter, &null)?;
        let lo = from.as_deref().map_or(Bound::Unbounded, Bound::Included);
        let hi = to.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let pb = if show_progress {
            let count = Map::new(&store, m.root, ts.clone()).count()?;
            progress(self.quiet, Some(count), "exporting", false)
        } else {
            ProgressBar::hidden()
        };
        if header {
            csv_lines::header(&m.schema).write_csv(out)?;
        }
        let limit = r.limit.unwrap_or(u64::MAX);
        let mut line = Line::default();
        let mut n = 0u64;
        if let (ReadStore::Remote(remote), false) = (&mut store, r.reverse) {
            // A remote is scanned within its cache budget (it pauses to evict at safe points).
            let mut failed = None;
            remote.scan(m.root, ts.clone(), lo, hi, |s, k, v| {
                if n >= limit {
                    return false;
                }
                if !filter.is_empty() && !filter.admits(k, v) {
                    return true;
                }
                line.clear();
                let written = csv_lines::push_row(&mut line, s, &ts.key, &ts.value, k, v, &null)
                    .and_then(|()| line.write_csv(out));
                if let Err(e) = written {
                    failed = Some(e);
                    return false;
                }
                n += 1;
                if n.is_multiple_of(65536) {
                    pb.set_position(n);
                }
                true
            })?;
            pb.finish_and_clear();
            return failed.map_or(Ok(()), Err);
        }
        let tree = Map::new(&store, m.root, ts.clone());
        let iter = if r.reverse {
            tree.range_rev(lo, hi)?
        } else {
            tree.range(lo, hi)?
        };
        for row in iter {
            if n >= limit {
                break;
            }
            let (k, v) = row?;
            if !filter.is_empty() && !filter.admits(k, v) {
                continue;
            }
            line.clear();
            csv_lines::push_row(&mut line, &store, &ts.key, &ts.value, k, v, &null)?;
            line.write_csv(out)?;
            n += 1;
            if n.is_multiple_of(65536) {
                pb.set_position(n);
            }
        }
        pb.finish_and_clear();
        Ok(())
    }

    fn diff(
        &self,
        sides: DiffSides,
        csv: bool,
        null: NullText,
        out: &mut impl Write,
    ) -> Result<()> {
        let store = self.open_source()?;
        let side = |name: &Option<String>,
                    root: &Option<String>,
                    which: &str|
         -> Result<(Address, Option<MapEntry>)> {
            match (name, root) {
                (Some(_), Some(_)) => Err(Error::msg(format!(
                    "give the {which} side as a map or as --{which}-root, not both"
                ))),
                (Some(n), None) => {
                    let m = open_map(&store, n)?;
                    Ok((m.root, Some(m)))
                }
                (None, Some(r)) => Ok((parse_address(r)?, None)),
                (None, None) => Err(Error::msg(format!(
                    "the {which} side is missing: give a map name or --{which}-root"
                ))),
            }
        };
        let (from_root, from_map) = side(&sides.from, &sides.from_root, "from")?;
        let (to_root, to_map) = side(&sides.to, &sides.to_root, "to")?;
        if let (Some(a), Some(b)) = (&from_map, &to_map) {
            check_same_schema(a, b)?;
        }
        let schema = match (&sides.schema, &from_map, &to_map) {
            (Some(s), _, _) => open_map(&store, s)?.schema,
            (None, Some(m), _) | (None, None, Some(m)) => m.schema.clone(),
            (None, None, None) => {
                return Err(Error::msg(
                    "diffing two roots needs --schema MAP to read their rows",
                ))
            }
        };
        let ts = schema.tuple_schema();
        let a = Map::new(&store, from_root, ts.clone());
        let b = Map::new(&store, to_root, ts.clone());
        let nk = schema.key.len();
        let nv = schema.value.len();
        if csv {
            let mut h = Line::default();
            h.push(b"op");
            for c in schema.columns() {
                h.push(c.name.as_bytes());
            }
            for c in &schema.value {
                h.push(format!("old.{}", c.name).as_bytes());
            }
            h.write_csv(out)?;
        }
        let (mut added, mut removed, mut modified) = (0u64, 0u64, 0u64);
        let mut line = Line::default();
        for e in a.diff(&b)? {
            let e = e?;
            line.clear();
            let (op, marker, new, old) = match e {
                DiffEntry::Added { to, .. } => {
                    added += 1;
                    ("added", "+", Some(to), None)
                }
                DiffEntry::Removed { from, .. } => {
                    removed += 1;
                    ("removed", "-", None, Some(from))
                }
                DiffEntry::Modified { from, to, .. } => {
                    modified += 1;
                    ("modified", "~", Some(to), Some(from))
                }
            };
            let key = e.key();
            if csv {
                line.push(op.as_bytes());
                line.push_tuple(&store, &ts.key, Some(key), &null)?;
                line.push_tuple(&store, &ts.value, new, &null)?;
                line.push_tuple(&store, &ts.value, old, &null)?;
                line.write_csv(out)?;
                continue;
            }
            line.push_tuple(&store, &ts.key, Some(key), &null)?;
            line.push_tuple(&store, &ts.value, new.or(old), &null)?;
            write!(out, "{marker} ")?;
            line.write_fields(0..nk + nv, out)?;
            if let (Some(_), Some(o)) = (new, old) {
                line.push_tuple(&store, &ts.value, Some(o), &null)?;
                out.write_all(b" (was ")?;
                line.write_fields(0..nk, out)?;
                if nv > 0 {
                    out.write_all(b",")?;
                    line.write_fields(nk + nv..nk + 2 * nv, out)?;
                }
                out.write_all(b")")?;
            }
            out.write_all(b"\n")?;
        }
        out.flush()?;
        eprintln!("{added} added, {removed} removed, {modified} modified");
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn merge(
        &self,
        base: &str,
        left: &str,
        right: &str,
        into: Option<String>,
        prefer: Option<Side>,
        null: NullText,
        out: &mut impl Write,
    ) -> Result<()> {
        let into = into.unwrap_or_else(|| left.to_string());
        catalog::check_map_name(&into)?;
        let mut store = self.open_write()?;
        let b = open_map(&store, base)?;
        let l = open_map(&store, left)?;
        let r = open_map(&store, right)?;
        check_same_schema(&b, &l)?;
        check_same_schema(&b, &r)?;
        let target = find_map(&store, &into)?;
        if let Some(t) = &target {
            check_same_schema(&b, t)?;
        }
        let ts: TupleSchema = b.schema.tuple_schema();
        let outcome = merge(
            &store,
            &ts,
            b.root,
            l.root,
            r.root,
            |_, _, lv, rv| match prefer {
                Some(Side::Left) => Resolution::Value(lv.map(<[u8]>::to_vec)),
                Some(Side::Right) => Resolution::Value(rv.map(<[u8]>::to_vec)),
                None => Resolution::Conflict,
            },
        )?;
        if !outcome.conflicts.is_empty() {
            let mut line = Line::default();
            let nv = ts.value.len();
            for c in &outcome.conflicts {
                line.clear();
                line.push_tuple(&store, &ts.key, Some(&c.key), &null)?;
                out.write_all(b"! ")?;
                line.write_fields(0..ts.key.len(), out)?;
                out.write_all(b":")?;
                for (label, v) in [("base", &c.base), ("left", &c.left), ("right", &c.right)] {
                    write!(out, " {label}=")?;
                    match v {
                        Some(v) => {
                            let start = line.len();
                            line.push_tuple(&store, &ts.value, Some(v), &null)?;
                            out.write_all(b"(")?;
                            line.write_fields(start..start + nv, out)?;
                            out.write_all(b")")?;
                        }
                        None => out.write_all(b"(absent)")?,
                    }
                }
                out.write_all(b"\n")?;
            }
            out.flush()?;
            return Err(Error::msg(format!(
                "{} conflict(s) merging {right:?} into {left:?}; nothing written (use --prefer left|right to resolve)",
                outcome.conflicts.len()
            )));
        }
        let tree = Map::new(&store, outcome.root, ts.clone());
        let rows_n = tree.count()?;
        let mut updates = vec![RootUpdate::new(
            &into,
            target.as_ref().map(|t| t.root),
            Some(outcome.root),
        )];
        let schema_name = schema_root_name(&into);
        if target.as_ref().map(|t| t.schema_address) != Some(b.schema_address) {
            updates.push(RootUpdate::new(
                &schema_name,
                target.as_ref().map(|t| t.schema_address),
                Some(b.schema_address),
            ));
        }
        store.commit(&updates)?;
        let resolved = match prefer {
            Some(s) => format!(
                " (conflicts resolved for the {} side)",
                if s == Side::Left { "left" } else { "right" }
            ),
            None => String::new(),
        };
        writeln!(
            out,
            "merged {right:?} into {left:?} as {into:?}: {rows_n} rows, root {}{resolved}",
            outcome.root
        )?;
        Ok(())
    }

    fn branch(&self, from: &str, to: &str, force: bool) -> Result<()> {
        catalog::check_map_name(to)?;
        let mut store = self.open_write()?;
        let m = open_map(&store, from)?;
        let target = find_map(&store, to)?;
        if target.is_some() && !force {
            return Err(Error::msg(format!(
                "map {to:?} exists (use --force to overwrite it)"
            )));
        }
        let schema_name = schema_root_name(to);
        store.commit(&[
            RootUpdate::new(to, target.as_ref().map(|t| t.root), Some(m.root)),
            RootUpdate::new(
                &schema_name,
                target.as_ref().map(|t| t.schema_address),
                Some(m.schema_address),
            ),
        ])?;
        eprintln!("map {to:?} is now a copy of {from:?} (root {})", m.root);
        Ok(())
    }

    fn drop_map(&self, map: &str) -> Result<()> {
        let mut store = self.open_write()?;
        let m = open_map(&store, map)?;
        let schema_name = schema_root_name(map);
        store.commit(&[
            RootUpdate::new(map, Some(m.root), None),
            RootUpdate::new(&schema_name, Some(m.schema_address), None),
        ])?;
        eprintln!("dropped map {map:?} (its chunks go at the next gc)");
        Ok(())
    }

    fn verify(&self, out: &mut impl Write) -> Result<()> {
        let store = self.open_read()?;
        let pb = progress(self.quiet, None, "verifying chunk files", false);
        let t = Instant::now();
        let report = store.verify()?;
        let el = t.elapsed();
        writeln!(
            out,
            "chunk files: {} files, {} chunks, {} ({} messages) hash-checked in {:.3} s ({:.2} GB/s)",
            report.files,
            report.chunks,
            size(report.bytes),
            report.messages,
            el.as_secs_f64(),
            report.bytes as f64 / el.as_secs_f64().max(1e-9) / 1e9
        )?;
        pb.set_message("walking roots");
        let mut seen = HashSet::new();
        let mut stats = ChunkStats::default();
        for (name, root) in store.roots().clone() {
            walk(&store, [root], &mut seen, &mut stats, &pb)
                .map_err(|e| e.context(format!("root {name:?}")))?;
            if name.ends_with(catalog::SCHEMA_SUFFIX) {
                continue;
            }
            if let Some(m) = find_map(&store, &name)? {
                let n = check_map_rows(&store, &m, &pb)
                    .map_err(|e| e.context(format!("map {name:?}")))?;
                writeln!(
                    out,
                    "map {name:?}: {n} rows in key order, every tuple valid"
                )?;
            }
        }
        pb.finish_and_clear();
        writeln!(
            out,
            "roots: {} roots reach {} chunks ({}), all present and valid",
            store.roots().len(),
            stats.chunks(),
            size(stats.bytes())
        )?;
        writeln!(out, "ok")?;
        Ok(())
    }

    fn stats(&self, map: Option<String>, out: &mut impl Write) -> Result<()> {
        let store = self.open_read()?;
        let pb = progress(self.quiet, None, "walking", false);
        let mut seen = HashSet::new();
        let mut stats = ChunkStats::default();
        match map {
            Some(name) => {
                let m = open_map(&store, &name)?;
                let tree = Map::new(&store, m.root, m.schema.tuple_schema());
                walk(&store, [m.root], &mut seen, &mut stats, &pb)?;
                pb.finish_and_clear();
                writeln!(out, "map {name:?}: {}", m.schema.describe())?;
                writeln!(out, "root: {}", m.root)?;
                writeln!(out, "rows: {}", tree.count()?)?;
                writeln!(out, "levels: {}", u32::from(tree.height()?) + 1)?;
                out.write_all(stats.render().as_bytes())?;
            }
            None => {
                let roots = store.roots().clone();
                walk(&store, roots.values().copied(), &mut seen, &mut stats, &pb)?;
                pb.finish_and_clear();
                writeln!(out, "store: {}", store.dir().display())?;
                writeln!(out, "hash profile: {}", store.profile().name())?;
                writeln!(out, "generation: {}", store.generation())?;
                writeln!(out, "chunk files: {}", store.file_count())?;
                writeln!(out, "stored chunks: {}", store.chunk_count())?;
                writeln!(
                    out,
                    "unreachable chunks: {} (removed by gc)",
                    store.chunk_count().saturating_sub(stats.chunks())
                )?;
                writeln!(out, "roots: {}", roots.len())?;
                for name in catalog::map_names(&store) {
                    if let Some(m) = find_map(&store, &name)? {
                        let tree = Map::new(&store, m.root, m.schema.tuple_schema());
                        writeln!(
                            out,
                            "  map {name:?}: {} rows, {} levels",
                            tree.count()?,
                            u32::from(tree.height()?) + 1
                        )?;
                    }
                }
                writeln!(out, "reachable from the roots:")?;
                out.write_all(stats.render().as_bytes())?;
            }
        }
        Ok(())
    }

    fn gc(&self, out: &mut impl Write) -> Result<()> {
        let mut store = self.open_write()?;
        let (files, chunks) = (store.file_count(), store.chunk_count());
        let pb = progress(self.quiet, None, "collecting garbage", false);
        let t = Instant::now();
        let r = store.gc()?;
        pb.finish_and_clear();
        writeln!(
            out,
            "gc: chunks {chunks} -> {} ({} removed), files {files} -> {} in {:.3} s",
            store.chunk_count(),
            chunks.saturating_sub(store.chunk_count()),
            r.files_after,
            t.elapsed().as_secs_f64()
        )?;
        Ok(())
    }

    fn compact(&self, below: u64, out: &mut impl Write) -> Result<()> {
        let mut store = self.open_write()?;
        let (files, chunks) = (store.file_count(), store.chunk_count());
        let pb = progress(self.quiet, None, "compacting", false);
        let r = store.compact(below)?;
        pb.finish_and_clear();
        writeln!(
            out,
            "compact: files {files} -> {}, chunks {chunks} -> {}",
            r.files_after,
            store.chunk_count()
        )?;
        Ok(())
    }

    fn roots(&self, out: &mut impl Write) -> Result<()> {
        let store = self.open_source()?;
        for (name, a) in store.named_roots() {
            if let Some(map) = name.strip_suffix(catalog::SCHEMA_SUFFIX) {
                if store.named_root(map).is_some() {
                    writeln!(out, "{name}\t{a}\tschema of map {map:?}")?;
                    continue;
                }
            }
            match find_map(&store, name) {
                Ok(Some(m)) => {
                    let tree = Map::new(&store, m.root, m.schema.tuple_schema());
                    writeln!(
                        out,
                        "{name}\t{a}\tmap: {} rows, {}",
                        tree.count()?,
                        m.schema.describe()
                    )?
                }
                _ => writeln!(out, "{name}\t{a}\troot")?,
            }
        }
        Ok(())
    }
}

/// Checks that a map's keys are strictly increasing and that every key and value tuple is valid
/// for the schema; returns the row count.
fn check_map_rows(store: &FileStore, m: &MapEntry, pb: &ProgressBar) -> Result<u64> {
    let ts = m.schema.tuple_schema();
    let tree = Map::new(store, m.root, ts.clone());
    let mut prev: Option<&[u8]> = None;
    let mut n = 0u64;
    for row in tree.iter()? {
        let (k, v) = row?;
        ts.key
            .validate(k)
            .map_err(|e| Error::msg(format!("row {n}: bad key: {e}")))?;
        ts.value
            .validate(v)
            .map_err(|e| Error::msg(format!("row {n}: bad value: {e}")))?;
        if let Some(p) = prev {
            if !ts.compare_keys(p, k).is_lt() {
                return Err(Error::msg(format!("row {n}: keys out of order")));
            }
        }
        prev = Some(k);
        n += 1;
        if n.is_multiple_of(65536) {
            pb.inc(0);
        }
    }
    let count = tree.count()?;
    if count != n {
        return Err(Error::msg(format!(
            "the root says {count} rows, the leaves hold {n}"
        )));
    }
    Ok(n)
}
