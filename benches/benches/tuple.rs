//! Tuple codec micro-benchmarks: field access per encoding, key comparison, building.
//!
//! Run: `cargo bench -p prollystore-benches --bench tuple`. Criterion prints ns/op per case;
//! the bytewise slice comparison is a baseline measured in the same run.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use prollystore_format::tuple::{Decimal, Tuple, TupleBuilder, TupleDesc, Type};
use prollystore_format::{Collation, Encoding};

fn row_desc() -> TupleDesc {
    TupleDesc::new(vec![
        Type::not_null(Encoding::Int64),
        Type::nullable(Encoding::String),
        Type::nullable(Encoding::Decimal),
        Type::nullable(Encoding::Datetime),
        Type::nullable(Encoding::StringAdaptive),
    ])
}

fn put_row(b: &mut TupleBuilder, coeff: &[u8]) {
    b.put_int64(0, black_box(42)).unwrap();
    b.put_string(1, black_box("hello, prolly world")).unwrap();
    b.put_decimal(2, &Decimal::finite(-4, false, coeff))
        .unwrap();
    b.put_datetime(3, black_box(1_717_243_200_000_000)).unwrap();
    b.put_adaptive_inline(4, black_box(b"some inline adaptive text"))
        .unwrap();
}

fn field_access(c: &mut Criterion) {
    let desc = row_desc();
    let coeff = 12_345_678_901u64.to_be_bytes();
    let mut b = TupleBuilder::new(desc.clone());
    put_row(&mut b, &coeff);
    let bytes = b.build().unwrap().as_bytes().to_vec();
    let t = Tuple::new(&bytes).unwrap();
    let mut g = c.benchmark_group("tuple_get");
    g.bench_function("int64 (fixed access)", |b| {
        b.iter(|| desc.get_int64(black_box(t), black_box(0)))
    });
    let f0 = desc
        .fixed_field::<8>(0, Encoding::Int64)
        .expect("int64 field");
    g.bench_function("int64 (FixedField, resolved once)", |b| {
        b.iter(|| black_box(f0).read(black_box(t)))
    });
    g.bench_function("string (utf-8 checked)", |b| {
        b.iter(|| desc.get_string(black_box(t), black_box(1)))
    });
    g.bench_function("decimal", |b| {
        b.iter(|| desc.get_decimal(black_box(t), black_box(2)))
    });
    g.bench_function("datetime", |b| {
        b.iter(|| desc.get_datetime(black_box(t), black_box(3)))
    });
    g.bench_function("adaptive inline", |b| {
        b.iter(|| desc.get_adaptive(black_box(t), black_box(4)))
    });
    g.bench_function("validate 5-field row", |b| {
        b.iter(|| desc.validate(black_box(&bytes)))
    });
    g.finish();
}

fn compare(c: &mut Criterion) {
    let desc = TupleDesc::new(vec![
        Type::not_null(Encoding::Int64),
        Type::not_null(Encoding::Int64),
    ]);
    let mut b = TupleBuilder::new(desc.clone());
    let mut key = |x: i64, y: i64| {
        b.put_int64(0, x).unwrap();
        b.put_int64(1, y).unwrap();
        b.build().unwrap().as_bytes().to_vec()
    };
    let (k1, k2) = (key(7, 1), key(7, 2));
    let mut g = c.benchmark_group("tuple_compare");
    g.bench_function("(int64,int64) second field differs", |bch| {
        bch.iter(|| desc.compare(black_box(&k1), black_box(&k2)))
    });
    g.bench_function("baseline: bytewise slice cmp of the same keys", |bch| {
        bch.iter(|| black_box(&k1[..]).cmp(black_box(&k2[..])))
    });
    let sdesc = TupleDesc::new(vec![Type::not_null(Encoding::String)]);
    let mut sb = TupleBuilder::new(sdesc.clone());
    sb.put_string(0, "customer-000123").unwrap();
    let s1 = sb.build().unwrap().as_bytes().to_vec();
    sb.put_string(0, "customer-000124").unwrap();
    let s2 = sb.build().unwrap().as_bytes().to_vec();
    g.bench_function("(string)", |bch| {
        bch.iter(|| sdesc.compare(black_box(&s1), black_box(&s2)))
    });
    let ddesc = TupleDesc::new(vec![Type::not_null(Encoding::Decimal)]);
    let mut db = TupleBuilder::new(ddesc.clone());
    db.put_decimal(0, &Decimal::finite(-2, false, &150u32.to_be_bytes()))
        .unwrap();
    let d1 = db.build().unwrap().as_bytes().to_vec();
    db.put_decimal(0, &Decimal::finite(-1, false, &16u32.to_be_bytes()))
        .unwrap();
    let d2 = db.build().unwrap().as_bytes().to_vec();
    g.bench_function("(decimal) 1.50 vs 1.6", |bch| {
        bch.iter(|| ddesc.compare(black_box(&d1), black_box(&d2)))
    });
    g.finish();
}

fn build(c: &mut Criterion) {
    let desc = row_desc();
    let mut b = TupleBuilder::new(desc);
    let coeff = 12_345_678_901u64.to_be_bytes();
    let mut g = c.benchmark_group("tuple_build");
    g.bench_function("5-field row (reused builder)", |bch| {
        bch.iter(|| {
            put_row(&mut b, &coeff);
            b.build().map(|t| t.as_bytes().len())
        })
    });
    let kdesc = TupleDesc::new(vec![Type::not_null(Encoding::Int64)]);
    let mut kb = TupleBuilder::new(kdesc);
    g.bench_function("(int64) key", |bch| {
        bch.iter(|| {
            kb.put_int64(0, black_box(42)).unwrap();
            kb.build().map(|t| t.as_bytes().len())
        })
    });
    g.finish();
}

/// Collated string keys against the byte-ordered path, same keys, same run: the collated
/// compare of ASCII keys should stay within 3x of the binary one (docs/PERF.md).
fn compare_collated(c: &mut Criterion) {
    let plain = TupleDesc::new(vec![Type::not_null(Encoding::String)]);
    let collated: Vec<(&str, TupleDesc)> = [
        "utf8mb4_0900_ai_ci",
        "utf8mb4_general_ci",
        "utf8mb4_unicode_ci",
        "utf8mb4_swedish_ci",
        "utf8mb4_sv_0900_ai_ci",
        "latin1_spanish_ci",
        "utf8mb4_da_0900_as_cs",
        "utf8mb4_zh_0900_as_cs",
    ]
    .into_iter()
    .map(|name| {
        let c = Collation::from_name(name).unwrap();
        (name, plain.with_collations(vec![Some(c)]))
    })
    .collect();
    let mut b = TupleBuilder::new(plain.clone());
    let mut key = |s: &str| {
        b.put_string(0, s).unwrap();
        b.build().unwrap().as_bytes().to_vec()
    };
    let cases = [
        (
            "last byte differs",
            key("customer-000123"),
            key("customer-000124"),
        ),
        (
            "first byte differs",
            key("alpha-customer-1"),
            key("beta-customer-1"),
        ),
        (
            "case only (equal under ai_ci)",
            key("Customer-000123"),
            key("customer-000123"),
        ),
        (
            "non-ASCII differs",
            key("customer-müller"),
            key("customer-muller"),
        ),
        ("Han differs", key("客户-北京"), key("客户-上海")),
    ];
    let mut g = c.benchmark_group("tuple_compare_collated");
    for (name, k1, k2) in &cases {
        g.bench_function(format!("binary (string) {name}"), |bch| {
            bch.iter(|| plain.compare(black_box(k1), black_box(k2)))
        });
        for (collation, desc) in &collated {
            g.bench_function(format!("{collation} (string) {name}"), |bch| {
                bch.iter(|| desc.compare(black_box(k1), black_box(k2)))
            });
        }
    }
    g.finish();
}

/// Typed rows (`prollystore::rows`) against the same (int64 key; string, decimal, datetime
/// values) rows built and read by hand with `TupleBuilder` and the descriptor's getters, in
/// the same run. Target: typed within 1.3x of hand-built.
fn typed_rows(c: &mut Criterion) {
    use prollystore::rows::{RowDecoder, RowEncoder, RowSchema};
    use prollystore_format::tuple::Value;
    let schema = RowSchema::parse(
        "id:bigint",
        "name:varchar(40), price:decimal(12,4), at:datetime(6)",
    )
    .unwrap();
    let coeff = 12_345_678_901u64.to_be_bytes();
    let mut g = c.benchmark_group("typed_rows");
    let (kd, vd) = (schema.key_desc(), schema.value_desc());
    let (mut kb, mut vb) = (TupleBuilder::new(kd.clone()), TupleBuilder::new(vd.clone()));
    let (mut kout, mut vout) = (Vec::new(), Vec::new());
    let mut blobs = prollystore_format::tuple::NoBlobStore;
    g.bench_function("encode: hand-built", |b| {
        b.iter(|| {
            kb.put_int64(0, black_box(42)).unwrap();
            vb.put_string(0, black_box("hello, prolly world")).unwrap();
            vb.put_decimal(1, &Decimal::finite(-4, false, black_box(&coeff)))
                .unwrap();
            vb.put_datetime(2, black_box(1_717_243_200_000_000))
                .unwrap();
            kout.clear();
            vout.clear();
            kb.build_into(&mut blobs, &mut kout).unwrap();
            vb.build_into(&mut blobs, &mut vout).unwrap();
            black_box((kout.len(), vout.len()))
        })
    });
    let mut enc = RowEncoder::new(&schema);
    g.bench_function("encode: typed row", |b| {
        b.iter(|| {
            let row = [
                Some(Value::Int64(black_box(42))),
                Some(Value::String(black_box("hello, prolly world"))),
                Some(Value::Decimal(Decimal::finite(
                    -4,
                    false,
                    black_box(&coeff),
                ))),
                Some(Value::Datetime(black_box(1_717_243_200_000_000))),
            ];
            let (k, v) = enc.encode(&row).unwrap();
            black_box((k.len(), v.len()))
        })
    });
    let (k, v) = {
        let (k, v) = enc
            .encode(&[
                Some(Value::Int64(42)),
                Some(Value::String("hello, prolly world")),
                Some(Value::Decimal(Decimal::finite(-4, false, &coeff))),
                Some(Value::Datetime(1_717_243_200_000_000)),
            ])
            .unwrap();
        (k.to_vec(), v.to_vec())
    };
    g.bench_function("decode: hand-read", |b| {
        b.iter(|| {
            let (kt, vt) = (
                Tuple::new(black_box(&k)).unwrap(),
                Tuple::new(black_box(&v)).unwrap(),
            );
            black_box((
                kd.get_int64(kt, 0).unwrap(),
                vd.get_string(vt, 0).unwrap(),
                vd.get_decimal(vt, 1).unwrap(),
                vd.get_datetime(vt, 2).unwrap(),
            ))
        })
    });
    let dec = RowDecoder::new(&schema);
    let mut out = Vec::with_capacity(4);
    g.bench_function("decode: typed row", |b| {
        b.iter(|| {
            dec.decode_into(black_box(&k), black_box(&v), &mut out)
                .unwrap();
            black_box(out.len())
        })
    });
    g.finish();
}

criterion_group!(
    benches,
    field_access,
    compare,
    compare_collated,
    build,
    typed_rows
);
criterion_main!(benches);
