//! The CSV import one step at a time, for instruction counts where wall-clock benchmarks are too
//! noisy (this is a shared 2-core machine):
//!
//! ```text
//! cargo build --release -p prollystore-benches --example import_workload
//! valgrind --tool=callgrind --separate-threads=yes --toggle-collect='import_workload::run*' \
//!     --toggle-collect='*parse_batches' target/release/examples/import_workload import 200000
//! ```
//!
//! The import parses on a second thread (`parse_batches`) while the first builds the tree;
//! `--separate-threads=yes` writes one count per thread, so each side can be read alone.
//! The second pattern ends at `parse_batches`: a match of `parse_batches_with`, which it calls,
//! would toggle the count back off.
//!
//! The input is the one of `benches/import.rs`: rows of `(int64, int64) -> (int64, int64)`, the
//! second argument being the row count. Workloads:
//!
//! * `csv`: the baseline, plain CSV parsing with the `csv` crate (every field touched).
//! * `import`: the whole import into a blake3 memory store ([`import::import_new`]).
//! * `build`: building the tree from ready tuples ([`Map::from_sorted`]), for comparison.
//! * `file`: the whole import into a new blake3 file store (in `$TMPDIR`), then the commit
//!   that writes and fsyncs its chunk file; prints the import and the commit apart, and the
//!   disk's floor for the commit measured right after: as many bytes as the chunk file, written
//!   in 1 MiB pieces to a new file and fsynced.
//!
//! Setup (making the CSV text and the tuples) happens outside the `run_*` functions so that
//! `--toggle-collect` counts only the measured work.

use std::hint::black_box;
use std::time::Instant;

use prollystore::format::HashProfile;
use prollystore::store::file::{FileStore, RootUpdate};
use prollystore::{Map, MemoryStore};
use prollystore_cli::field_text::NullText;
use prollystore_cli::import;
use prollystore_cli::map_schema::MapSchema;

fn csv_bytes(rows: u64) -> Vec<u8> {
    let mut s = String::with_capacity(32 * rows as usize);
    s.push_str("a,b,c,d\n");
    for i in 0..rows {
        let i = i as i64;
        s.push_str(&format!("{i},{},{},{}\n", (i * 7) % 1_000_003, i * 13, -i));
    }
    s.into_bytes()
}

fn tuple(a: i64, b: i64) -> [u8; 20] {
    let mut t = [0u8; 20];
    t[..8].copy_from_slice(&a.to_le_bytes());
    t[8..16].copy_from_slice(&b.to_le_bytes());
    t[16..18].copy_from_slice(&8u16.to_le_bytes());
    t[18..20].copy_from_slice(&2u16.to_le_bytes());
    t
}

#[inline(never)]
fn run_csv(data: &[u8]) -> usize {
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(data);
    let mut rec = csv::ByteRecord::new();
    let mut n = 0usize;
    while r.read_byte_record(&mut rec).expect("csv") {
        n += rec.iter().map(<[u8]>::len).sum::<usize>();
    }
    n
}

#[inline(never)]
fn run_import(data: &[u8], schema: &MapSchema) -> usize {
    let store = MemoryStore::new(HashProfile::Blake3);
    let (root, n) = import::import_new(data, schema, &NullText::default(), &store).expect("import");
    n + usize::from(root.as_bytes()[0])
}

#[inline(never)]
fn run_file(data: &[u8], schema: &MapSchema) -> usize {
    let dir = tempfile::tempdir().expect("tempdir");
    let t = Instant::now();
    let mut store = FileStore::create(dir.path(), HashProfile::Blake3).expect("create");
    let (root, n) = import::import_new(data, schema, &NullText::default(), &store).expect("import");
    let built = t.elapsed();
    store
        .commit(&[RootUpdate::new("t", None, Some(root))])
        .expect("commit");
    let commit = t.elapsed().saturating_sub(built);
    let mut len = 0;
    for e in std::fs::read_dir(dir.path()).expect("list") {
        let e = e.expect("list");
        if e.file_name().to_string_lossy().ends_with(".chunks") {
            len += e.metadata().expect("stat").len() as usize;
        }
    }
    let floor = raw_write_fsync(dir.path(), len);
    eprintln!(
        "file: import {built:?}, commit {commit:?}; raw write+fsync of the same {len} bytes \
         {floor:?} (commit / floor = {:.2})",
        commit.as_secs_f64() / floor.as_secs_f64()
    );
    n + usize::from(root.as_bytes()[0])
}

/// Writes `len` bytes in 1 MiB pieces to a new file in `dir` and fsyncs it; returns the time.
fn raw_write_fsync(dir: &std::path::Path, len: usize) -> std::time::Duration {
    use std::io::Write;
    let bytes: Vec<u8> = (0..len).map(|i| (i as u8) ^ (i >> 12) as u8).collect();
    let t = Instant::now();
    let mut f = std::fs::File::create_new(dir.join("raw")).expect("create");
    for piece in bytes.chunks(1 << 20) {
        f.write_all(piece).expect("write");
    }
    f.sync_all().expect("fsync");
    t.elapsed()
}

#[inline(never)]
fn run_build(schema: &MapSchema, rows: &[([u8; 20], [u8; 20])]) -> usize {
    let store = MemoryStore::new(HashProfile::Blake3);
    let map = Map::from_sorted(
        &store,
        schema.tuple_schema(),
        rows.iter().map(|(k, v)| (&k[..], &v[..])),
    )
    .expect("build");
    usize::from(map.root().as_bytes()[0])
}

fn main() {
    let mut args = std::env::args().skip(1);
    let workload = args.next().unwrap_or_else(|| "import".into());
    let n: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let data = csv_bytes(n);
    let schema = MapSchema::parse("a:int64,b:int64", "c:int64,d:int64").expect("schema");
    let t = Instant::now();
    let r = match workload.as_str() {
        "csv" => run_csv(&data),
        "import" => run_import(&data, &schema),
        "file" => run_file(&data, &schema),
        "build" => {
            let rows: Vec<_> = (0..n as i64)
                .map(|i| (tuple(i, (i * 7) % 1_000_003), tuple(i * 13, -i)))
                .collect();
            let t = Instant::now();
            let r = run_build(&schema, &rows);
            eprintln!("build only: {:?}", t.elapsed());
            r
        }
        other => panic!("unknown workload {other:?} (csv, import, build, file)"),
    };
    let el = t.elapsed();
    black_box(r);
    eprintln!(
        "{workload}: {n} rows in {el:?} ({:.2} M rows/s)",
        n as f64 / el.as_secs_f64() / 1e6
    );
}
