//! Typed rows against hand-built tuples, one variant per run, for instruction counts (issue
//! #22's target: typed encode and decode within 1.3× of hand-built). This VM has no hardware
//! counters, and wall-clock ratios of ~50 ns loops move more between runs than the effect, so
//! the figures in `docs/PERF.md` come from callgrind, which counts the same on a loaded machine:
//!
//! ```text
//! cargo build --release -p prollystore --example typed_rows
//! for v in encode-hand encode-typed decode-hand decode-typed; do
//!   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/typed_rows $v 1000000 2>&1 | grep 'refs'
//! done
//! ```
//!
//! Each variant runs the loop of the criterion bench `tuple -- typed_rows` (an int64 key;
//! string, decimal and datetime values) the given number of times; subtracting a run of 0
//! iterations leaves the loop's own count. Without valgrind it prints ns per iteration.

use std::hint::black_box;
use std::time::Instant;

use prollystore::format::tuple::{Decimal, NoBlobStore, Tuple, TupleBuilder, Value};
use prollystore::rows::{RowDecoder, RowEncoder, RowSchema};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let variant = args.get(1).map_or("decode-typed", String::as_str);
    let n: u64 = args.get(2).map_or(1_000_000, |a| a.parse().unwrap());
    let schema = RowSchema::parse(
        "id:bigint",
        "name:varchar(40), price:decimal(12,4), at:datetime(6)",
    )
    .unwrap();
    let coeff = 12_345_678_901u64.to_be_bytes();
    let row = |id| {
        [
            Some(Value::Int64(id)),
            Some(Value::String(black_box("hello, prolly world"))),
            Some(Value::Decimal(Decimal::finite(
                -4,
                false,
                black_box(&coeff),
            ))),
            Some(Value::Datetime(black_box(1_717_243_200_000_000))),
        ]
    };
    let mut enc = RowEncoder::new(&schema);
    let (k, v) = {
        let (k, v) = enc.encode(&row(42)).unwrap();
        (k.to_vec(), v.to_vec())
    };
    let (kd, vd) = (schema.key_desc(), schema.value_desc());
    let start = Instant::now();
    match variant {
        "encode-hand" => {
            let (mut kb, mut vb) = (TupleBuilder::new(kd.clone()), TupleBuilder::new(vd.clone()));
            let (mut kout, mut vout) = (Vec::new(), Vec::new());
            for i in 0..n {
                kb.put_int64(0, black_box(i as i64)).unwrap();
                vb.put_string(0, black_box("hello, prolly world")).unwrap();
                vb.put_decimal(1, &Decimal::finite(-4, false, black_box(&coeff)))
                    .unwrap();
                vb.put_datetime(2, black_box(1_717_243_200_000_000))
                    .unwrap();
                kout.clear();
                vout.clear();
                kb.build_into(&mut NoBlobStore, &mut kout).unwrap();
                vb.build_into(&mut NoBlobStore, &mut vout).unwrap();
                black_box((kout.len(), vout.len()));
            }
        }
        "encode-typed" => {
            for i in 0..n {
                let (k, v) = enc.encode(&row(black_box(i as i64))).unwrap();
                black_box((k.len(), v.len()));
            }
        }
        "decode-hand" => {
            for _ in 0..n {
                let (kt, vt) = (
                    Tuple::new(black_box(&k)).unwrap(),
                    Tuple::new(black_box(&v)).unwrap(),
                );
                black_box((
                    kd.get_int64(kt, 0).unwrap(),
                    vd.get_string(vt, 0).unwrap(),
                    vd.get_decimal(vt, 1).unwrap(),
                    vd.get_datetime(vt, 2).unwrap(),
                ));
            }
        }
        "decode-typed" => {
            let dec = RowDecoder::new(&schema);
            let mut out = Vec::with_capacity(4);
            for _ in 0..n {
                dec.decode_into(black_box(&k), black_box(&v), &mut out)
                    .unwrap();
                black_box(out.len());
            }
        }
        other => panic!(
            "unknown variant {other:?}: encode-hand, encode-typed, decode-hand, decode-typed"
        ),
    }
    let ns = start.elapsed().as_nanos() as f64 / n.max(1) as f64;
    println!("{variant}: {n} iterations, {ns:.1} ns each");
}
