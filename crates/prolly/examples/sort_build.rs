//! The sorting builder on unsorted input, timed (issue #22's target: 10M unsorted
//! `(int64, int64)` rows at 5M rows/s or more within a 256 MiB memory bound):
//!
//! ```text
//! cargo build --release -p prollystore --example sort_build
//! target/release/examples/sort_build 10000000 256 blake3
//! ```
//!
//! Arguments: rows, memory bound in MiB, hash profile (`blake3` or `dolt`), and `only` to
//! skip the comparison build. Keys are `i`
//! times an odd constant (a permutation of the 64-bit integers, so every key is distinct and
//! the order looks random); each row's two tuples are made by patching eight bytes of a
//! template, so the timing is the builder's. For comparison it then builds the same rows,
//! sorted, with `Map::builder` (the tree alone), prints both rates and the runs written, and
//! checks that both made the same tree.

use std::time::Instant;

use prollystore::builder::SortingBuilder;
use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::{Encoding, HashProfile};
use prollystore::tuples::TupleSchema;
use prollystore::{Map, MemoryStore};

fn template(desc: &TupleDesc) -> Vec<u8> {
    let mut b = TupleBuilder::new(desc.clone());
    b.put_int64(0, 0).unwrap();
    b.build().unwrap().as_bytes().to_vec()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rows: u64 = args.get(1).map_or(10_000_000, |a| a.parse().unwrap());
    let bound_mib: usize = args.get(2).map_or(256, |a| a.parse().unwrap());
    let profile = match args.get(3).map(String::as_str) {
        Some("dolt") => HashProfile::Dolt,
        _ => HashProfile::Blake3,
    };
    let schema = TupleSchema::new(
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
    );
    // The int64 sits in the first eight bytes of a one-field tuple.
    let (mut k, mut v) = (template(&schema.key), template(&schema.value));
    let key_of = |i: u64| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) as i64;

    let store = MemoryStore::new(profile);
    let start = Instant::now();
    let mut b = SortingBuilder::new(schema.clone(), bound_mib << 20);
    for i in 0..rows {
        k[..8].copy_from_slice(&key_of(i).to_le_bytes());
        v[..8].copy_from_slice(&(i as i64).to_le_bytes());
        b.add(&k, &v).unwrap();
    }
    let runs = b.runs();
    let added = start.elapsed();
    let map = b.finish(&store).unwrap();
    let total = start.elapsed();
    let root = map.root();
    println!(
        "sorting builder: {rows} rows, bound {bound_mib} MiB, {runs} runs on disk before the last: \
         {:.2} s ({:.2} M rows/s; adding {:.2} s, sort+merge+tree {:.2} s)",
        total.as_secs_f64(),
        rows as f64 / total.as_secs_f64() / 1e6,
        added.as_secs_f64(),
        (total - added).as_secs_f64()
    );
    drop(map);
    drop(store);
    if args.get(4).map(String::as_str) == Some("only") {
        return;
    }

    // The same rows in key order through the streaming builder.
    let mut sorted_rows: Vec<(i64, u64)> = (0..rows).map(|i| (key_of(i), i)).collect();
    sorted_rows.sort_unstable();
    let store = MemoryStore::new(profile);
    let start = Instant::now();
    let mut b = Map::builder(&store, &schema);
    for (key, i) in sorted_rows {
        k[..8].copy_from_slice(&key.to_le_bytes());
        v[..8].copy_from_slice(&(i as i64).to_le_bytes());
        b.add(&k, &v).unwrap();
    }
    let sorted = b.finish().unwrap();
    let t = start.elapsed();
    println!(
        "sorted builder:  {rows} rows: {:.2} s ({:.2} M rows/s)",
        t.as_secs_f64(),
        rows as f64 / t.as_secs_f64() / 1e6
    );
    assert_eq!(sorted.count().unwrap(), rows);
    assert_eq!(sorted.root(), root, "the two builders made different trees");
}
