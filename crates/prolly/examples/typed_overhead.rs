//! The typed layer's cost against the byte-level API, one variant per run, for instruction
//! counts (issue #35's target: a typed get and a typed row of a scan within 1.3× of the byte
//! path that encodes a key, gets, and decodes the row into values). Callgrind counts the same
//! on a loaded machine:
//!
//! ```text
//! cargo build --release -p prollystore --example typed_overhead
//! for v in get-bytes get-typed scan-bytes scan-typed scan-typed-into; do
//!   for n in 0 20000; do
//!     valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!       target/release/examples/typed_overhead $v $n 2>&1 | grep refs
//!   done
//! done
//! ```
//!
//! The map is the tour's: 100,000 rows of `name varchar(40) -> score bigint, doc json`. A run
//! builds it, then does `n` gets of existing names (or scans `n` rows); subtracting the run of
//! 0 leaves the loop's own count. Without valgrind it prints ns per get or row.
//! `scan-typed` collects owned rows (`Iterator::next`); `scan-typed-into` refills one row
//! (`TypedIter::next_into`), as the byte path refills its values.

use std::hint::black_box;
use std::time::Instant;

use prollystore::format::tuple::Value;
use prollystore::format::HashProfile;
use prollystore::rows::{RowDecoder, RowSchema};
use prollystore::{Datum, MemoryStore, TypedMap};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = args.get(1).map_or("get-typed", String::as_str);
    let n: usize = args.get(2).map_or(100_000, |a| a.parse().unwrap());
    let store = MemoryStore::new(HashProfile::Dolt);
    let schema = RowSchema::parse("name:varchar(40)", "score:bigint, doc:json?").unwrap();
    let rows = (0..100_000i64).map(|i| i * 7919 % 100_000).map(|k| {
        let doc = format!(r#"{{"n":{k},"tags":["a","b"]}}"#);
        vec![
            Datum::from(format!("user{k:06}")),
            Datum::Int(k % 1000),
            Datum::Json(doc),
        ]
    });
    let map = TypedMap::from_rows(&store, schema.clone(), rows).unwrap();
    let names: Vec<String> = (0..n)
        .map(|i| format!("user{:06}", i * 7 % 100_000))
        .collect();
    let start = Instant::now();
    match variant {
        "get-bytes" => {
            let bytes = map.map();
            for name in &names {
                let key = schema.encode_key(&[Some(Value::String(name))]).unwrap();
                let v = bytes.get(&key).unwrap().unwrap();
                let row = schema.decode_row(&key, v).unwrap();
                black_box(row.len());
            }
        }
        "get-typed" => {
            for name in &names {
                let row = map.get(&[Datum::from(name.as_str())]).unwrap().unwrap();
                black_box(row.len());
            }
        }
        "scan-bytes" => {
            let dec = RowDecoder::new(&schema);
            let mut out = Vec::with_capacity(3);
            for r in map.map().iter().unwrap().take(n) {
                let (k, v) = r.unwrap();
                dec.decode_into(k, v, &mut out).unwrap();
                black_box(out.len());
            }
        }
        "scan-typed" => {
            for r in map.iter().unwrap().take(n) {
                black_box(r.unwrap().len());
            }
        }
        "scan-typed-into" => {
            let (mut rows, mut row) = (map.iter().unwrap(), Vec::new());
            for _ in 0..n {
                if !rows.next_into(&mut row).unwrap() {
                    break;
                }
                black_box(row.len());
            }
        }
        other => panic!(
            "unknown variant {other:?}: get-bytes, get-typed, scan-bytes, scan-typed, \
             scan-typed-into"
        ),
    }
    let ns = start.elapsed().as_nanos() as f64 / n.max(1) as f64;
    println!("{variant}: {n} iterations, {ns:.1} ns each");
}
