//! Tests of the tuple codec: round trips per encoding, comparator consistency, never-panic
//! properties, limits, and checks against the leaves of the golden maps.

use std::cmp::Ordering;

use proptest::prelude::*;

use super::*;
use crate::encoding::ALL_ENCODINGS;
use crate::message::Node;
use crate::test_support::{chunk_records, vectors_dir};
use crate::{Address, Encoding};

fn desc(encs: &[Encoding], nullable: bool) -> TupleDesc {
    TupleDesc::new(encs.iter().map(|&enc| Type { enc, nullable }).collect())
}

#[test]
fn documented_examples_build() {
    let d = desc(&[Encoding::Uint32], false);
    let mut b = TupleBuilder::new(d.clone());
    b.put_uint32(0, 7).unwrap();
    assert_eq!(b.build().unwrap().as_bytes(), [7, 0, 0, 0, 1, 0]);
    let d = desc(&[Encoding::Int8, Encoding::String], false);
    let mut b = TupleBuilder::new(d);
    b.put_int8(0, 5).unwrap();
    b.put_string(1, "ab").unwrap();
    assert_eq!(
        b.build().unwrap().as_bytes(),
        [5, 0x61, 0x62, 0, 1, 0, 2, 0]
    );
    // Reuse after build: the builder was reset.
    b.put_int8(0, 1).unwrap();
    assert_eq!(
        b.build().unwrap_err(),
        TupleError::UnexpectedNull { field: 1 }
    );
}

#[test]
fn nulls_in_the_middle_and_at_the_end() {
    let d = desc(
        &[
            Encoding::Int16,
            Encoding::Int16,
            Encoding::Int16,
            Encoding::Int16,
        ],
        true,
    );
    let mut b = TupleBuilder::new(d.clone());
    b.put_int16(1, -2).unwrap();
    let t = b.build().unwrap();
    assert_eq!(t.as_bytes(), [0xfe, 0xff, 0, 0, 2, 0]);
    assert_eq!(d.get_int16(t, 0).unwrap(), None);
    assert_eq!(d.get_int16(t, 1).unwrap(), Some(-2));
    assert_eq!(d.get_int16(t, 3).unwrap(), None);
    assert!(d.validate(t.as_bytes()).is_ok());
    assert_eq!(TupleBuilder::new(d).build().unwrap().as_bytes(), [0, 0]);
}

#[test]
fn getter_errors() {
    let d = desc(&[Encoding::Int64, Encoding::String], true);
    let mut b = TupleBuilder::new(d.clone());
    b.put_int64(0, 9).unwrap();
    b.put_string(1, "x").unwrap();
    let t = b.build().unwrap();
    assert!(matches!(
        d.get_int32(t, 0),
        Err(TupleError::WrongEncoding { .. })
    ));
    assert!(matches!(
        d.get_int64(t, 5),
        Err(TupleError::FieldOutOfRange { .. })
    ));
    assert!(matches!(
        b.put_int32(0, 1),
        Err(TupleError::WrongEncoding { .. })
    ));
    // The generic put names the field's encoding and the value's.
    assert!(matches!(
        b.put(1, Some(Value::Int64(1))),
        Err(TupleError::WrongEncoding {
            field: 1,
            actual: Encoding::String,
            requested: Encoding::Int64
        })
    ));
    assert!(matches!(
        b.put(7, Some(Value::Int64(1))),
        Err(TupleError::FieldOutOfRange { .. })
    ));
    let bad = Tuple::new(&[1, 2, 3, 0x61, 0x80, 3, 0, 2, 0]).unwrap();
    assert!(matches!(
        d.get_int64(bad, 0),
        Err(TupleError::BadField { .. })
    ));
    assert!(matches!(
        d.get_string(bad, 1),
        Err(TupleError::BadField { .. })
    ));
    assert!(d.validate(bad.as_bytes()).is_err());
}

#[test]
fn limits_are_errors() {
    let d = desc(&[Encoding::Bytes, Encoding::Bytes], false);
    let mut b = TupleBuilder::new(d);
    b.put_bytes(0, &vec![1; 40_000]).unwrap();
    b.put_bytes(1, &vec![1; 30_000]).unwrap();
    assert!(matches!(b.build(), Err(TupleError::DataTooLarge { .. })));
    let d = desc(&vec![Encoding::Int8; MAX_TUPLE_FIELDS + 1], true);
    let mut b = TupleBuilder::new(d.clone());
    b.put_int8(MAX_TUPLE_FIELDS, 1).unwrap();
    assert!(matches!(b.build(), Err(TupleError::TooManyFields { .. })));
    b.put_int8(MAX_TUPLE_FIELDS - 1, 1).unwrap();
    let t = b.build().unwrap();
    assert_eq!(t.count(), MAX_TUPLE_FIELDS);
    assert!(d.validate(t.as_bytes()).is_ok());
    let mut y = TupleBuilder::new(desc(&[Encoding::Year], false));
    assert!(matches!(
        y.put_year(0, 1900),
        Err(TupleError::BadValue { .. })
    ));
    let mut e = TupleBuilder::new(desc(&[Encoding::Extended], false));
    assert!(matches!(
        e.put_extended(0, &[]),
        Err(TupleError::BadValue { .. })
    ));
}

/// A blob store keeping blobs in memory, addressed by a counter.
#[derive(Default)]
struct MemBlobs {
    blobs: Vec<Vec<u8>>,
}

impl BlobStore for MemBlobs {
    fn write_blob(&mut self, payload: &[u8]) -> Result<Address, BlobError> {
        self.blobs.push(payload.to_vec());
        let mut a = [0u8; 20];
        a[0] = self.blobs.len() as u8;
        Ok(Address(a))
    }
    fn read_blob(
        &mut self,
        address: &Address,
        _len: u64,
        out: &mut Vec<u8>,
    ) -> Result<(), BlobError> {
        let blob = self
            .blobs
            .get(usize::from(address.0[0]).wrapping_sub(1))
            .ok_or("unknown blob")?;
        out.extend_from_slice(blob);
        Ok(())
    }
}

#[test]
fn adaptive_placement_follows_dolt() {
    let d = desc(
        &[
            Encoding::Int32,
            Encoding::StringAdaptive,
            Encoding::BytesAdaptive,
        ],
        true,
    );
    let mut store = MemBlobs::default();
    let mut b = TupleBuilder::new(d.clone());
    // Fits: stays inline.
    b.put_int32(0, 1).unwrap();
    b.put_adaptive_inline(1, &[b'a'; 1000]).unwrap();
    b.put_adaptive_inline(2, &[b'b'; 1000]).unwrap();
    let t = b.build_with(&mut store).unwrap().as_bytes().to_vec();
    assert!(store.blobs.is_empty());
    assert!(matches!(
        d.get_adaptive(Tuple::new(&t).unwrap(), 1).unwrap(),
        Some(Adaptive::Inline(_))
    ));
    // 4 + 1201 + 1001 > 2048: the larger (field 1) moves out, field 2 stays.
    b.put_int32(0, 1).unwrap();
    b.put_adaptive_inline(1, &[b'a'; 1200]).unwrap();
    b.put_adaptive_inline(2, &[b'b'; 1000]).unwrap();
    let t = b.build_with(&mut store).unwrap().as_bytes().to_vec();
    let t = Tuple::new(&t).unwrap();
    assert!(matches!(
        d.get_adaptive(t, 1).unwrap(),
        Some(Adaptive::OutOfBand { len: 1200, .. })
    ));
    assert!(matches!(
        d.get_adaptive(t, 2).unwrap(),
        Some(Adaptive::Inline(_))
    ));
    let mut offs = Vec::new();
    d.push_value_address_offsets(t.as_bytes(), 100, &mut offs);
    assert_eq!(offs, [100 + 4 + 2]);
    // Equal savings: the earlier column moves first (stable sort).
    b.put_adaptive_inline(1, &[b'a'; 1100]).unwrap();
    b.put_adaptive_inline(2, &[b'b'; 1100]).unwrap();
    let t = b.build_with(&mut store).unwrap().as_bytes().to_vec();
    let t = Tuple::new(&t).unwrap();
    assert!(d.get_adaptive(t, 1).unwrap().unwrap().is_out_of_band());
    assert!(!d.get_adaptive(t, 2).unwrap().unwrap().is_out_of_band());
    // A value given out of band comes back inline when another one is chosen instead.
    let (len, address) = (500u64, store.write_blob(&[b'z'; 500]).unwrap());
    b.put_adaptive_out_of_band(1, len, &address).unwrap();
    b.put_adaptive_inline(2, &[b'b'; 3000]).unwrap();
    let t = b.build_with(&mut store).unwrap().as_bytes().to_vec();
    let t = Tuple::new(&t).unwrap();
    assert_eq!(
        d.get_adaptive(t, 1).unwrap(),
        Some(Adaptive::Inline(&[b'z'; 500]))
    );
    assert!(d.get_adaptive(t, 2).unwrap().unwrap().is_out_of_band());
    // Without a store the build fails instead of writing wrong bytes.
    b.put_adaptive_inline(2, &[b'b'; 3000]).unwrap();
    assert!(matches!(b.build(), Err(TupleError::Blob { field: 2, .. })));
    // An empty out-of-band value would read back as inline: refused.
    assert!(matches!(
        b.put_adaptive_out_of_band(1, 0, &address),
        Err(TupleError::BadField { field: 1, .. })
    ));
}

#[test]
fn comparator_rules() {
    let f = desc(&[Encoding::Float64], false);
    let enc = |v: f64| {
        let mut b = TupleBuilder::new(f.clone());
        b.put_float64(0, v).unwrap();
        b.build().unwrap().as_bytes().to_vec()
    };
    assert_eq!(f.compare(&enc(0.0), &enc(-0.0)), Ordering::Equal);
    assert_eq!(f.compare(&enc(f64::NAN), &enc(f64::NAN)), Ordering::Greater);
    assert_eq!(f.compare(&enc(1.0), &enc(f64::NAN)), Ordering::Greater);
    let y = desc(&[Encoding::Year], false);
    let year = |v: u16| {
        let mut b = TupleBuilder::new(y.clone());
        b.put_year(0, v).unwrap();
        b.build().unwrap().as_bytes().to_vec()
    };
    assert_eq!(y.compare(&year(0), &year(1901)), Ordering::Less);
    let dd = desc(&[Encoding::Date], false);
    let date = |y, m, d| {
        let mut b = TupleBuilder::new(dd.clone());
        b.put_date(
            0,
            Date {
                year: y,
                month: m,
                day: d,
            },
        )
        .unwrap();
        b.build().unwrap().as_bytes().to_vec()
    };
    // Go normalises 2024-03-00 to 2024-02-29.
    assert_eq!(
        dd.compare(&date(2024, 3, 0), &date(2024, 2, 29)),
        Ordering::Equal
    );
    // Prefix comparison ignores later fields; a missing field is NULL and sorts first.
    let two = desc(&[Encoding::Int64, Encoding::Int64], true);
    let mut b = TupleBuilder::new(two.clone());
    b.put_int64(0, 1).unwrap();
    b.put_int64(1, 2).unwrap();
    let full = b.build().unwrap().as_bytes().to_vec();
    b.put_int64(0, 1).unwrap();
    let short = b.build().unwrap().as_bytes().to_vec();
    assert_eq!(two.compare(&short, &full), Ordering::Less);
    assert_eq!(two.compare_prefix(&short, &full, 1), Ordering::Equal);
    assert_eq!(two.prefix(1).compare(&short, &full), Ordering::Equal);
}

/// Collated-string style hook: case-insensitive order for string fields.
struct CaseInsensitive;

impl FieldOrder for CaseInsensitive {
    fn takes_over(&self, _field: usize, ty: Type) -> bool {
        ty.enc == Encoding::String || needs_external_order(ty.enc)
    }
    fn compare(&self, _field: usize, _ty: Type, a: &[u8], b: &[u8]) -> Ordering {
        a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase())
    }
}

#[test]
fn order_hook_takes_over() {
    let types = vec![Type::not_null(Encoding::String)];
    let plain = TupleDesc::new(types.clone());
    let hooked = TupleDesc::with_order(types, std::sync::Arc::new(CaseInsensitive));
    let mut b = TupleBuilder::new(plain.clone());
    b.put_string(0, "a").unwrap();
    let a = b.build().unwrap().as_bytes().to_vec();
    b.put_string(0, "A").unwrap();
    let upper = b.build().unwrap().as_bytes().to_vec();
    assert_eq!(plain.compare(&a, &upper), Ordering::Greater);
    assert_eq!(hooked.compare(&a, &upper), Ordering::Equal);
    assert_eq!(hooked.prefix(1).compare(&a, &upper), Ordering::Equal);
}

#[test]
fn keyless_key_shape() {
    let k = keyless_key(&[1, 0, 0, 0, 0, 0, 0, 0, 5, 1, 0]);
    assert_eq!(&k[16..], &[1, 0]);
    assert!(keyless_key_desc().validate(&k).is_ok());
    let _ = keyless_key(&[]);
    // XXH3-128 of no bytes is 0x99aa06d3014798d8_6001c324468d497f (hi, lo).
    let k = keyless_key(&[9; 8]);
    assert_eq!(hex::encode(k), "7f498d4624c30160d8984701d306aa990100");
}

// ---------------------------------------------------------------------------------------------
// Property tests.

/// A value of `enc` from random parts.
fn arb_value(enc: Encoding) -> BoxedStrategy<Option<OwnedValue>> {
    use Encoding as E;
    let v: BoxedStrategy<OwnedValue> = match enc {
        E::Int8 => any::<i8>().prop_map(|x| OwnedValue::Scalar(Value::Int8(x))).boxed(),
        E::Uint8 => any::<u8>().prop_map(|x| OwnedValue::Scalar(Value::Uint8(x))).boxed(),
        E::Int16 => any::<i16>().prop_map(|x| OwnedValue::Scalar(Value::Int16(x))).boxed(),
        E::Uint16 => any::<u16>().prop_map(|x| OwnedValue::Scalar(Value::Uint16(x))).boxed(),
        E::Int32 => any::<i32>().prop_map(|x| OwnedValue::Scalar(Value::Int32(x))).boxed(),
        E::Uint32 => any::<u32>().prop_map(|x| OwnedValue::Scalar(Value::Uint32(x))).boxed(),
        E::Int64 => any::<i64>().prop_map(|x| OwnedValue::Scalar(Value::Int64(x))).boxed(),
        E::Uint64 => any::<u64>().prop_map(|x| OwnedValue::Scalar(Value::Uint64(x))).boxed(),
        E::Float32 => any::<u32>().prop_map(|x| OwnedValue::Scalar(Value::Float32(f32::from_bits(x)))).boxed(),
        E::Float64 => any::<u64>().prop_map(|x| OwnedValue::Scalar(Value::Float64(f64::from_bits(x)))).boxed(),
        E::Bit64 => any::<u64>().prop_map(|x| OwnedValue::Scalar(Value::Bit64(x))).boxed(),
        E::Hash128 => any::<[u8; 16]>().prop_map(|x| OwnedValue::Scalar(Value::Hash128(x))).boxed(),
        E::Year => prop_oneof![Just(0u16), 1901u16..=2155]
            .prop_map(|x| OwnedValue::Scalar(Value::Year(x)))
            .boxed(),
        E::Date => (any::<u16>(), 0u8..=13, 0u8..=32)
            .prop_map(|(year, month, day)| OwnedValue::Scalar(Value::Date(Date { year, month, day })))
            .boxed(),
        E::Time => any::<i64>().prop_map(|x| OwnedValue::Scalar(Value::Time(x))).boxed(),
        E::Datetime => any::<i64>().prop_map(|x| OwnedValue::Scalar(Value::Datetime(x))).boxed(),
        E::Enum => any::<u16>().prop_map(|x| OwnedValue::Scalar(Value::Enum(x))).boxed(),
        E::Set => any::<u64>().prop_map(|x| OwnedValue::Scalar(Value::Set(x))).boxed(),
        E::Cell => any::<[u8; 17]>().prop_map(|x| OwnedValue::Scalar(Value::Cell(x))).boxed(),
        e if e.is_address() => any::<[u8; 20]>()
            .prop_map(|x| OwnedValue::Scalar(Value::Address(Address(x))))
            .boxed(),
        E::String => ".{0,12}".prop_map(OwnedValue::Str).boxed(),
        E::Decimal => prop_oneof![
            8 => (any::<i8>(), any::<bool>(), proptest::collection::vec(any::<u8>(), 0..20))
                .prop_map(|(e, n, c)| OwnedValue::Decimal(Some((i32::from(e), n)), c)),
            1 => Just(OwnedValue::Decimal(None, vec![0])),
            1 => Just(OwnedValue::Decimal(None, vec![1])),
            1 => Just(OwnedValue::Decimal(None, vec![2])),
        ]
        .boxed(),
        E::Extended => proptest::collection::vec(any::<u8>(), 1..12)
            .prop_map(|b| OwnedValue::Bytes(E::Extended, b))
            .boxed(),
        e if e.is_adaptive() => prop_oneof![
            4 => proptest::collection::vec(any::<u8>(), 0..12).prop_map(move |b| OwnedValue::Bytes(e, b)),
            // Passed in already out of band; large enough at times to force moves either way.
            1 => prop_oneof![
                proptest::collection::vec(any::<u8>(), 1..40),
                proptest::collection::vec(any::<u8>(), 1000..3000),
            ].prop_map(OwnedValue::OutOfBand),
        ]
        .boxed(),
        e => proptest::collection::vec(any::<u8>(), 0..12)
            .prop_map(move |b| OwnedValue::Bytes(e, b))
            .boxed(),
    };
    proptest::option::weighted(0.8, v).boxed()
}

#[derive(Clone, Debug)]
enum OwnedValue {
    Scalar(Value<'static>),
    Str(String),
    Bytes(Encoding, Vec<u8>),
    /// `None` = special form chosen by the first coefficient byte.
    Decimal(Option<(i32, bool)>, Vec<u8>),
    /// An adaptive value handed to the builder as a blob reference; the payload is written to
    /// the test's blob store first, so the builder can move it back inline.
    OutOfBand(Vec<u8>),
}

impl OwnedValue {
    fn as_value(&self) -> Value<'_> {
        match self {
            OwnedValue::Scalar(v) => *v,
            OwnedValue::Str(s) => Value::String(s),
            OwnedValue::Bytes(e, b) => match e {
                Encoding::Bytes => Value::Bytes(b),
                Encoding::Json => Value::Json(b),
                Encoding::Geometry => Value::Geometry(b),
                Encoding::Extended => Value::Extended(b),
                _ => Value::Adaptive(Adaptive::Inline(b)),
            },
            OwnedValue::Decimal(Some((e, n)), c) => Value::Decimal(Decimal::finite(*e, *n, c)),
            OwnedValue::Decimal(None, c) => Value::Decimal(match c.first() {
                Some(0) => Decimal::NAN,
                Some(1) => Decimal::POS_INFINITY,
                _ => Decimal::NEG_INFINITY,
            }),
            // The logical content; `put_value` hands it to the builder out of band.
            OwnedValue::OutOfBand(p) => Value::Adaptive(Adaptive::Inline(p)),
        }
    }

    /// The value as handed to the builder: out-of-band payloads are written to `store` first.
    fn put_value(&self, store: &mut MemBlobs) -> Value<'_> {
        match self {
            OwnedValue::OutOfBand(p) => Value::Adaptive(Adaptive::OutOfBand {
                len: p.len() as u64,
                address: store.write_blob(p).unwrap(),
            }),
            v => v.as_value(),
        }
    }
}

/// The payload of an adaptive value, read through `store` when it is out of band.
fn adaptive_payload(a: Adaptive<'_>, store: &mut MemBlobs) -> Vec<u8> {
    match a {
        Adaptive::Inline(p) => p.to_vec(),
        Adaptive::OutOfBand { len, address } => {
            let mut out = Vec::new();
            store.read_blob(&address, len, &mut out).unwrap();
            out
        }
    }
}

fn arb_encoding() -> impl Strategy<Value = Encoding> {
    proptest::sample::select(ALL_ENCODINGS.to_vec())
}

fn arb_row() -> impl Strategy<Value = (Vec<Type>, Vec<Option<OwnedValue>>)> {
    proptest::collection::vec((arb_encoding(), any::<bool>()), 1..6).prop_flat_map(|types| {
        let values: Vec<_> = types
            .iter()
            .map(|&(enc, nullable)| {
                let v = arb_value(enc);
                if nullable {
                    v
                } else {
                    v.prop_filter("non-null", Option::is_some).boxed()
                }
            })
            .collect();
        let types: Vec<Type> = types
            .into_iter()
            .map(|(enc, nullable)| Type { enc, nullable })
            .collect();
        (Just(types), values)
    })
}

fn build_row(d: &TupleDesc, values: &[Option<OwnedValue>], store: &mut MemBlobs) -> Vec<u8> {
    let mut b = TupleBuilder::new(d.clone());
    for (i, v) in values.iter().enumerate() {
        b.put(i, v.as_ref().map(|v| v.put_value(store))).unwrap();
    }
    b.build_with(store).unwrap().as_bytes().to_vec()
}

/// Reference order of two decoded values (Dolt's rules, written independently of the
/// comparator's byte-level code).
fn reference_cmp(a: &Option<Value<'_>>, b: &Option<Value<'_>>) -> Option<Ordering> {
    let (a, b) = match (a, b) {
        (None, None) => return Some(Ordering::Equal),
        (None, Some(_)) => return Some(Ordering::Less),
        (Some(_), None) => return Some(Ordering::Greater),
        (Some(a), Some(b)) => (a, b),
    };
    let float = |x: f64, y: f64| {
        if x == y {
            Ordering::Equal
        } else if x < y {
            Ordering::Less
        } else {
            Ordering::Greater
        }
    };
    Some(match (a, b) {
        (Value::Int8(x), Value::Int8(y)) => x.cmp(y),
        (Value::Int64(x), Value::Int64(y)) | (Value::Time(x), Value::Time(y)) => x.cmp(y),
        (Value::Datetime(x), Value::Datetime(y)) => x.cmp(y),
        (Value::Uint64(x), Value::Uint64(y)) => x.cmp(y),
        (Value::Float32(x), Value::Float32(y)) => float(f64::from(*x), f64::from(*y)),
        (Value::Float64(x), Value::Float64(y)) => float(*x, *y),
        (Value::Year(x), Value::Year(y)) => x.cmp(y),
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bytes(x), Value::Bytes(y)) => x.cmp(y),
        (Value::Address(x), Value::Address(y)) => x.cmp(y),
        (Value::Decimal(x), Value::Decimal(y)) => x.compare(y),
        _ => return None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    #[cfg_attr(miri, ignore)]
    fn builder_getter_round_trip((types, values) in arb_row()) {
        let d = TupleDesc::new(types);
        let mut store = MemBlobs::default();
        let bytes = build_row(&d, &values, &mut store);
        prop_assert!(d.validate(&bytes).is_ok(), "{:?}", d.validate(&bytes));
        let t = Tuple::new(&bytes).unwrap();
        for (i, v) in values.iter().enumerate() {
            let got = d.value(t, i).unwrap();
            let want = v.as_ref().map(OwnedValue::as_value);
            match (got, want) {
                (Some(Value::Float32(x)), Some(Value::Float32(y))) => prop_assert_eq!(x.to_bits(), y.to_bits()),
                (Some(Value::Float64(x)), Some(Value::Float64(y))) => prop_assert_eq!(x.to_bits(), y.to_bits()),
                (Some(Value::Decimal(x)), Some(Value::Decimal(y))) => {
                    prop_assert_eq!(x.compare(&y), Ordering::Equal);
                    // Zero is written with sign 0, so "-0" reads back as "0".
                    if !y.is_zero() {
                        prop_assert_eq!(x.to_string(), y.to_string());
                    }
                }
                (Some(Value::Adaptive(x)), Some(Value::Adaptive(y))) => prop_assert_eq!(
                    adaptive_payload(x, &mut store),
                    adaptive_payload(y, &mut store)
                ),
                (g, w) => prop_assert_eq!(g, w),
            }
            // Re-building from the decoded values gives the same bytes.
        }
        let decoded: Vec<Option<Value<'_>>> = (0..d.len()).map(|i| d.value(t, i).unwrap()).collect();
        let mut whole_row = Vec::new();
        d.values_into(&bytes, &mut whole_row).unwrap();
        prop_assert_eq!(format!("{whole_row:?}"), format!("{decoded:?}"));
        let mut b = TupleBuilder::new(d.clone());
        for (i, v) in decoded.iter().enumerate() {
            b.put(i, *v).unwrap();
        }
        prop_assert_eq!(b.build_with(&mut store).unwrap().as_bytes(), &bytes[..]);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn compare_agrees_with_decoded_values(enc in arb_encoding(), a in any::<u64>(), b in any::<u64>()) {
        let _ = (a, b);
        let d = TupleDesc::new(vec![Type::nullable(enc)]);
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let strat = arb_value(enc);
        for _ in 0..8 {
            let x = strat.new_tree(&mut runner).unwrap().current();
            let y = strat.new_tree(&mut runner).unwrap().current();
            let mut store = MemBlobs::default();
            let (bx, by) = (
                build_row(&d, std::slice::from_ref(&x), &mut store),
                build_row(&d, std::slice::from_ref(&y), &mut store),
            );
            let (tx, ty) = (Tuple::new(&bx).unwrap(), Tuple::new(&by).unwrap());
            let (vx, vy) = (d.value(tx, 0).unwrap(), d.value(ty, 0).unwrap());
            if let Some(want) = reference_cmp(&vx, &vy) {
                prop_assert_eq!(d.compare(&bx, &by), want, "{:?} vs {:?}", vx, vy);
            }
            // Antisymmetry holds for everything except NaN floats.
            let nan = matches!(vx, Some(Value::Float32(f)) if f.is_nan()) || matches!(vx, Some(Value::Float64(f)) if f.is_nan())
                || matches!(vy, Some(Value::Float32(f)) if f.is_nan()) || matches!(vy, Some(Value::Float64(f)) if f.is_nan());
            if !nan {
                prop_assert_eq!(d.compare(&bx, &by), d.compare(&by, &bx).reverse());
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn decoders_never_panic(
        encs in proptest::collection::vec((arb_encoding(), any::<bool>()), 0..6),
        bytes in proptest::collection::vec(any::<u8>(), 0..64),
        other in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let d = TupleDesc::new(encs.iter().map(|&(enc, nullable)| Type { enc, nullable }).collect());
        let _ = d.validate(&bytes);
        let t = Tuple::new_unverified(&bytes);
        for i in 0..d.len() + 1 {
            let _ = d.value(t, i);
            let _ = d.field(t, i);
        }
        let _ = d.compare(&bytes, &other);
        let _ = d.compare(&other, &bytes);
        let _ = d.compare_prefix(&bytes, &other, 2);
        let mut offs = Vec::new();
        d.push_value_address_offsets(&bytes, 7, &mut offs);
        let _ = keyless_key(&bytes);
        if d.validate(&bytes).is_ok() {
            // Valid tuples decode and re-encode to the same bytes, and compare equal to themselves
            // unless a float is NaN.
            let decoded: Vec<_> = (0..d.len()).map(|i| d.value(t, i)).collect();
            if decoded.iter().all(Result::is_ok) {
                let mut b = TupleBuilder::new(d.clone());
                for (i, v) in decoded.into_iter().enumerate() {
                    b.put(i, v.unwrap()).unwrap();
                }
                if let Ok(rebuilt) = b.build_with(&mut MemBlobs::default()) {
                    prop_assert_eq!(rebuilt.as_bytes(), &bytes[..]);
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Golden maps: every leaf's tuples validate, keys are strictly ordered, value address offsets and
// keyless keys are what Dolt wrote.

fn parse_desc_json(v: &serde_json::Value) -> TupleDesc {
    TupleDesc::new(
        v.as_array()
            .unwrap()
            .iter()
            .map(|t| Type {
                enc: Encoding::from_name(t["enc"].as_str().unwrap()).unwrap(),
                nullable: t["nullable"].as_bool().unwrap(),
            })
            .collect(),
    )
}

#[test]
#[cfg_attr(miri, ignore)]
fn golden_map_leaves() {
    let Some(dir) = vectors_dir() else { return };
    let mut leaves_checked = 0;
    let mut example_seen = false;
    for entry in std::fs::read_dir(dir.join("maps")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let kd = parse_desc_json(&meta["key_desc"]);
        let vd = parse_desc_json(&meta["value_desc"]);
        let chunks =
            std::fs::read(dir.join("maps").join(meta["chunk_file"].as_str().unwrap())).unwrap();
        for (address, chunk) in chunk_records(&chunks) {
            let addr = hex::encode(address);
            let Ok(node) = Node::verify(chunk) else {
                continue; // a blob chunk
            };
            if !node.is_leaf() {
                continue;
            }
            let want: Vec<u16> = node.value_address_offsets().collect();
            let mut got = Vec::new();
            let mut prev: Option<&[u8]> = None;
            for k in 0..node.count() {
                let key = node.key(k);
                kd.validate(key)
                    .unwrap_or_else(|e| panic!("{addr} key {k}: {e}"));
                if let Some(p) = prev {
                    assert_eq!(
                        kd.compare(p, key),
                        Ordering::Less,
                        "{addr}: keys {} and {k} out of order",
                        k - 1
                    );
                }
                prev = Some(key);
                {
                    let value = node.value(k);
                    let s = value.as_ptr() as usize - node.value_items().as_ptr() as usize;
                    vd.validate(value)
                        .unwrap_or_else(|e| panic!("{addr} value {k}: {e}"));
                    vd.push_value_address_offsets(value, s, &mut got);
                }
            }
            assert_eq!(
                got,
                want,
                "value_address_offsets of leaf {addr} in {}",
                path.display()
            );
            if addr == "8346f6b3f497442bde7150691791371b88a5bd59" {
                assert_eq!(got, [26, 3, 53, 1068, 2877, 2902]);
                example_seen = true;
            }
            leaves_checked += 1;
        }
    }
    assert!(example_seen, "the README's example leaf was not found");
    assert!(leaves_checked > 100, "only {leaves_checked} leaves checked");
    println!("{leaves_checked} leaves checked");
}

/// The fixed-access rule as first written: `i < count` and the fixed field ends inside the
/// data, else the offsets.
fn reference_field<'a>(d: &TupleDesc, bytes: &'a [u8], i: usize) -> Option<&'a [u8]> {
    let t = Tuple::new_unverified(bytes);
    if let Some(&(start, stop)) = d.fixed.get(i) {
        let count = t.count();
        let split = bytes.len().saturating_sub(2 * count.max(1));
        if i < count && usize::from(stop) <= split {
            return bytes.get(usize::from(start)..usize::from(stop));
        }
    }
    t.field(i)
}

/// Garbage and near-valid tuples for the fast paths: random bytes with counts and offsets
/// that are often plausible.
fn fast_path_inputs() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut seed = 0x2545_f491_u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    // Miri is ~1000x slower than native code: it checks the same shapes with fewer samples.
    let per_len = if cfg!(miri) { 2 } else { 40 };
    for len in 0..48usize {
        for _ in 0..per_len {
            let mut b: Vec<u8> = (0..len).map(|_| (next() % 7) as u8).collect();
            if len >= 2 && next() % 4 != 0 {
                let count = (next() % 5) as u16;
                b[len - 2..].copy_from_slice(&count.to_le_bytes());
            }
            out.push(b);
        }
    }
    out
}

#[test]
fn fixed_access_fast_paths_match_the_reference() {
    use Encoding as E;
    let d = TupleDesc::new(vec![
        Type::not_null(E::Int64),
        Type::not_null(E::Int16),
        Type::nullable(E::Int32),
        Type::not_null(E::Int8),
    ]);
    let i64f = d.fixed_field::<8>(0, E::Int64).unwrap();
    let i16f = d.fixed_field::<2>(1, E::Int16).unwrap();
    let i32f = d.fixed_field::<4>(2, E::Int32).unwrap();
    let i8f = d.fixed_field::<1>(3, E::Int8).unwrap();
    assert!(d.fixed_field::<8>(1, E::Int16).is_err());
    assert!(d.fixed_field::<8>(0, E::Uint64).is_err());
    assert!(d.fixed_field::<8>(9, E::Int64).is_err());
    fn expect<const N: usize>(r: Option<&[u8]>) -> Option<Option<[u8; N]>> {
        match r {
            None => Some(None),
            Some(b) => <[u8; N]>::try_from(b).ok().map(Some),
        }
    }
    for b in fast_path_inputs() {
        let t = Tuple::new_unverified(&b);
        for i in 0..5 {
            assert_eq!(
                d.field(t, i),
                reference_field(&d, &b, i),
                "{b:02x?} field {i}"
            );
        }
        assert_eq!(i64f.read(t).ok(), expect::<8>(reference_field(&d, &b, 0)));
        assert_eq!(i16f.read(t).ok(), expect::<2>(reference_field(&d, &b, 1)));
        assert_eq!(i32f.read(t).ok(), expect::<4>(reference_field(&d, &b, 2)));
        assert_eq!(i8f.read(t).ok(), expect::<1>(reference_field(&d, &b, 3)));
        assert_eq!(
            d.get_int64(t, 0).ok(),
            expect::<8>(reference_field(&d, &b, 0)).map(|v| v.map(i64::from_le_bytes))
        );
    }
}

#[test]
fn canonical_compare_matches_the_general_path() {
    use Encoding as E;
    let descs = [
        TupleDesc::new(vec![Type::not_null(E::Int64), Type::not_null(E::Int64)]),
        TupleDesc::new(vec![Type::not_null(E::Uint32), Type::not_null(E::Int8)]),
        TupleDesc::new(vec![Type::not_null(E::Float64)]),
        TupleDesc::new(vec![Type::not_null(E::Int16), Type::nullable(E::Int16)]),
    ];
    let inputs = fast_path_inputs();
    let mut canonical = Vec::new();
    for d in &descs {
        let mut b = TupleBuilder::new(d.clone());
        for x in [-3i64, 0, 1, 2, 300] {
            for (i, ty) in d.types().iter().enumerate() {
                match ty.enc {
                    E::Int64 => b.put_int64(i, x).unwrap(),
                    E::Uint32 => b.put_uint32(i, x as u32).unwrap(),
                    E::Int8 => b.put_int8(i, x as i8).unwrap(),
                    E::Int16 => b.put_int16(i, x as i16).unwrap(),
                    E::Float64 => b.put_float64(i, x as f64 * 0.5).unwrap(),
                    _ => unreachable!(),
                }
            }
            canonical.push(b.build().unwrap().as_bytes().to_vec());
        }
    }
    for d in &descs {
        for a in inputs.iter().chain(&canonical).step_by(3) {
            for b in inputs.iter().chain(&canonical).step_by(7) {
                assert_eq!(
                    d.compare(a, b),
                    d.compare_prefix(a, b, d.len()),
                    "{d:?} {a:02x?} {b:02x?}"
                );
            }
        }
    }
}

/// Checks `values_into` on `bytes` against `Tuple::new` and the per-field `value`: the same
/// layout error; on a tuple that validates, the same values, or the same first field error
/// (invalid UTF-8). On a valid layout whose fields do not fit the descriptor the getters may
/// read meaningless bytes (their fixed-position shortcut), so only no panic is asked there.
fn check_values_into(d: &TupleDesc, bytes: &[u8]) -> Result<(), TestCaseError> {
    let mut got = Vec::new();
    let result = d.values_into(bytes, &mut got).map(|()| got);
    match Tuple::new(bytes) {
        Err(e) => prop_assert_eq!(result, Err(e), "bytes {:02x?}", bytes),
        Ok(t) if d.validate(bytes).is_ok() => {
            let want: Result<Vec<_>, _> = (0..d.len()).map(|i| d.value(t, i)).collect();
            prop_assert_eq!(
                format!("{result:?}"),
                format!("{want:?}"),
                "bytes {:02x?}",
                bytes
            );
        }
        Ok(_) => {}
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

    /// The whole-row walk (`values_into`, which checks the layout itself) agrees with
    /// `Tuple::new` and the per-field `value` on valid rows, on rows with bytes changed or cut,
    /// and on random bytes, also read with a descriptor shorter than the tuple.
    #[test]
    #[cfg_attr(miri, ignore)]
    fn values_into_agrees_with_field_by_field_reads(
        (types, values) in arb_row(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..3),
        cut in any::<prop::sample::Index>(),
        random in proptest::collection::vec(any::<u8>(), 0..40),
        fewer in 0usize..3,
    ) {
        let d = TupleDesc::new(types);
        let mut store = MemBlobs::default();
        let valid = build_row(&d, &values, &mut store);
        let mut edited = valid.clone();
        for (at, byte) in &edits {
            if !edited.is_empty() {
                let i = at.index(edited.len());
                edited[i] = *byte;
            }
        }
        let truncated = &valid[..cut.index(valid.len() + 1)];
        let shorter = TupleDesc::new(d.types()[..d.len().saturating_sub(fewer)].to_vec());
        for desc in [&d, &shorter] {
            for bytes in [&valid[..], &edited[..], truncated, &random[..]] {
                check_values_into(desc, bytes)?;
            }
        }
    }
}
