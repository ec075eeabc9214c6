//! The README's demonstration: a million-row map on a durable file store, built, read, edited
//! and diffed, with what each step did and how long it took.
//!
//! ```text
//! cargo run --release -p prollystore --example demo [-- --rows N] [--dir DIR] [--dolt]
//! ```
//!
//! Rows are (int64 key) -> (int64, string) tuples in Dolt's encoding. With `--dolt` the store
//! uses Dolt's hash profile, so every chunk and root address is the one Dolt would compute for
//! the same rows. Without `--dir` the store lives in a temporary directory that is removed at
//! the end.

use std::error::Error;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use prollystore::format::tuple::{Tuple, TupleBuilder, TupleDesc, Type};
use prollystore::format::{Encoding, HashProfile};
use prollystore::store::{FileStore, RootUpdate};
use prollystore::tuples::TupleSchema;
use prollystore::{DiffEntry, Map};

/// Command-line options.
struct Options {
    rows: u64,
    dir: Option<PathBuf>,
    profile: HashProfile,
}

fn parse_options() -> Result<Options, String> {
    let mut opts = Options {
        rows: 1_000_000,
        dir: None,
        profile: HashProfile::Blake3,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--rows" => {
                let v = args.next().ok_or("--rows needs a number")?;
                opts.rows = v
                    .parse()
                    .map_err(|_| format!("--rows: not a number: {v}"))?;
            }
            "--dir" => opts.dir = Some(PathBuf::from(args.next().ok_or("--dir needs a path")?)),
            "--dolt" => opts.profile = HashProfile::Dolt,
            "-h" | "--help" => {
                return Err("usage: demo [--rows N] [--dir DIR] [--dolt]".to_string());
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    Ok(opts)
}

/// Deterministic pseudo-random numbers (splitmix64), so every run builds the same map.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Encodes rows with reusable builders; `row(i)` is row number `i` of the demo map.
struct Rows {
    key: TupleBuilder,
    value: TupleBuilder,
    text: String,
}

impl Rows {
    fn new(schema: &TupleSchema) -> Rows {
        Rows {
            key: TupleBuilder::new(schema.key.clone()),
            value: TupleBuilder::new(schema.value.clone()),
            text: String::new(),
        }
    }

    fn key(&mut self, k: i64) -> Result<Vec<u8>, Box<dyn Error>> {
        self.key.put_int64(0, k)?;
        Ok(self.key.build()?.as_bytes().to_vec())
    }

    /// Appends key and value of row `i` (version `v`) to the two buffers.
    fn push(
        &mut self,
        i: u64,
        v: u64,
        keys: &mut Vec<u8>,
        values: &mut Vec<u8>,
    ) -> Result<(), Box<dyn Error>> {
        self.key.put_int64(0, 2 * i as i64)?;
        keys.extend_from_slice(self.key.build()?.as_bytes());
        let r = mix(i ^ (v << 40));
        self.value.put_int64(0, r as i64)?;
        self.text.clear();
        self.text
            .push_str(["alpha", "beta", "gamma", "delta"][(r % 4) as usize]);
        self.text.push('-');
        self.text.push_str(&(r % 10_000).to_string());
        self.value.put_string(1, &self.text)?;
        values.extend_from_slice(self.value.build()?.as_bytes());
        Ok(())
    }
}

fn report(step: &str, took: Duration, what: String) {
    println!("{step:<10} {:>10.3} ms  {what}", took.as_secs_f64() * 1e3);
}

fn rate(n: u64, took: Duration) -> String {
    let per_sec = n as f64 / took.as_secs_f64().max(1e-9);
    if per_sec >= 1e6 {
        format!("{:.1} M/s", per_sec / 1e6)
    } else {
        format!("{:.0} k/s", per_sec / 1e3)
    }
}

fn run(opts: Options) -> Result<(), Box<dyn Error>> {
    let temp;
    let dir = match &opts.dir {
        Some(d) => d.clone(),
        None => {
            temp = tempfile::tempdir()?;
            temp.path().join("store")
        }
    };
    let schema = TupleSchema::new(
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
        TupleDesc::new(vec![
            Type::not_null(Encoding::Int64),
            Type::not_null(Encoding::String),
        ]),
    );
    let n = opts.rows;
    println!(
        "prollystore demo: {n} rows of (int64) -> (int64, string) in a {} file store at {}",
        opts.profile.name(),
        dir.display()
    );

    // 1. Encode the rows (sorted by construction: keys are 0, 2, 4, ...).
    let t = Instant::now();
    let mut rows = Rows::new(&schema);
    let (mut keys, mut values) = (Vec::new(), Vec::new());
    let (mut key_ends, mut value_ends) = (
        Vec::with_capacity(n as usize),
        Vec::with_capacity(n as usize),
    );
    for i in 0..n {
        rows.push(i, 0, &mut keys, &mut values)?;
        key_ends.push(keys.len());
        value_ends.push(values.len());
    }
    report(
        "encode",
        t.elapsed(),
        format!(
            "{n} rows, {} bytes of tuples ({})",
            keys.len() + values.len(),
            rate(n, t.elapsed())
        ),
    );

    // 2. Build the map and commit it under the root name "demo".
    let mut store = FileStore::create(&dir, opts.profile)?;
    let t = Instant::now();
    let items = (0..n as usize).map(|i| {
        let ks = if i == 0 { 0 } else { key_ends[i - 1] };
        let vs = if i == 0 { 0 } else { value_ends[i - 1] };
        (&keys[ks..key_ends[i]], &values[vs..value_ends[i]])
    });
    let root = Map::from_sorted(&store, schema.clone(), items)?.root();
    let built = t.elapsed();
    let pending = store.pending_count();
    let t = Instant::now();
    store.commit(&[RootUpdate::new("demo", None, Some(root))])?;
    report(
        "build",
        built,
        format!("root {root}, {pending} chunks ({})", rate(n, built)),
    );
    report(
        "commit",
        t.elapsed(),
        format!(
            "1 chunk file + manifest, fsynced; generation {}",
            store.generation()
        ),
    );

    // 3. Reopen read-only, as another process would, and read.
    drop(store);
    let t = Instant::now();
    let reader = FileStore::open(&dir)?;
    let root = reader
        .root("demo")
        .ok_or("root 'demo' missing after reopen")?;
    report(
        "open",
        t.elapsed(),
        format!(
            "{} chunk file(s), {} chunks",
            reader.file_count(),
            reader.chunk_count()
        ),
    );
    let map = Map::new(&reader, root, schema.clone());
    let lookups = 100_000u64.min(n.max(1));
    let t = Instant::now();
    let mut found = 0u64;
    for j in 0..lookups {
        let i = mix(j) % n.max(1);
        let key = rows.key(2 * i as i64)?;
        if map.get(&key)?.is_some() {
            found += 1;
        }
    }
    report(
        "get",
        t.elapsed(),
        format!(
            "{lookups} random point gets, {found} found ({})",
            rate(lookups, t.elapsed())
        ),
    );
    if found != lookups.min(n) {
        return Err(
            format!("expected every lookup to find its row, found {found} of {lookups}").into(),
        );
    }
    let t = Instant::now();
    let (mut scanned, mut checksum) = (0u64, 0i64);
    for row in map.iter()? {
        let (_, value) = row?;
        checksum = checksum.wrapping_add(
            schema
                .value
                .get_int64(Tuple::new_unverified(value), 0)?
                .unwrap_or(0),
        );
        scanned += 1;
    }
    report(
        "scan",
        t.elapsed(),
        format!(
            "{scanned} rows in key order, checksum {checksum:x} ({})",
            rate(scanned, t.elapsed())
        ),
    );
    if scanned != n {
        return Err(format!("scan saw {scanned} rows, expected {n}").into());
    }
    drop(map);
    drop(reader);

    // 4. Edit: update 1,000 rows, delete 500, insert 500 (odd keys), in one batch.
    let mut store = FileStore::open_writer(&dir)?;
    let base = Map::new(&store, root, schema.clone());
    let (mut ek, mut ev) = (Vec::new(), Vec::new());
    let mut edits: Vec<(std::ops::Range<usize>, Option<std::ops::Range<usize>>)> = Vec::new();
    for j in 0..2000u64.min(n) {
        let i = mix(j + 7) % n;
        let (k0, v0) = (ek.len(), ev.len());
        match j % 4 {
            0 | 1 => {
                rows.push(i, 1, &mut ek, &mut ev)?;
                edits.push((k0..ek.len(), Some(v0..ev.len())));
            }
            2 => {
                let key = rows.key(2 * i as i64)?;
                ek.extend_from_slice(&key);
                edits.push((k0..ek.len(), None));
            }
            _ => {
                let key = rows.key(2 * i as i64 + 1)?;
                ek.extend_from_slice(&key);
                rows.push(i, 2, &mut Vec::new(), &mut ev)?;
                edits.push((k0..ek.len(), Some(v0..ev.len())));
            }
        }
    }
    let t = Instant::now();
    let edited = base.apply(
        edits
            .iter()
            .map(|(k, v)| (&ek[k.clone()], v.clone().map(|v| &ev[v]))),
    )?;
    let took = t.elapsed();
    let edited_root = edited.root();
    report(
        "edit",
        took,
        format!("{} edits in one batch -> root {edited_root}", edits.len()),
    );

    // 5. Diff the two versions: cost follows the size of the change, not of the map.
    let t = Instant::now();
    let (mut added, mut removed, mut modified) = (0u64, 0u64, 0u64);
    for entry in base.diff(&edited)? {
        match entry? {
            DiffEntry::Added { .. } => added += 1,
            DiffEntry::Removed { .. } => removed += 1,
            DiffEntry::Modified { .. } => modified += 1,
        }
    }
    report(
        "diff",
        t.elapsed(),
        format!("{added} added, {removed} removed, {modified} modified"),
    );
    let count = edited.count()?;
    drop(edited);
    drop(base);
    let t = Instant::now();
    store.commit(&[RootUpdate::new("demo", Some(root), Some(edited_root))])?;
    report(
        "commit",
        t.elapsed(),
        format!("root 'demo' moved by compare-and-swap; {count} rows now"),
    );

    // 6. Verify everything on disk, then drop the unreachable old version.
    let t = Instant::now();
    let v = store.verify()?;
    report(
        "verify",
        t.elapsed(),
        format!(
            "{} files, {} chunks, {} bytes: every address and message checked",
            v.files, v.chunks, v.bytes
        ),
    );
    let t = Instant::now();
    let gc = store.gc()?;
    report(
        "gc",
        t.elapsed(),
        format!(
            "{} -> {} chunks, {} -> {} files",
            gc.chunks_before, gc.chunks_after, gc.files_before, gc.files_after
        ),
    );
    println!("done");
    Ok(())
}

fn main() -> std::process::ExitCode {
    let opts = match parse_options() {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("{msg}");
            return std::process::ExitCode::from(2);
        }
    };
    match run(opts) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
