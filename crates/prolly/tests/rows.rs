//! Typed rows: schema text (SQL names and encoding names), encode/decode round trips against
//! hand-built tuples, and errors that name the column.

use prollystore::format::tuple::{Adaptive, Date, TupleBuilder, Value};
use prollystore::format::{Encoding, HashProfile};
use prollystore::rows::{RowEncoder, RowError, RowSchema};
use prollystore::{Map, MemoryStore};
use proptest::prelude::*;

#[test]
fn parses_sql_names_and_round_trips_stored_text() {
    let s = RowSchema::parse(
        "id:bigint unsigned, k2:varchar(20)",
        "name:text?, price:DECIMAL(12, 4), when:datetime(6)?, kind:enum('a','b'), doc:json?, n:int",
    )
    .unwrap();
    let encs: Vec<Encoding> = s.columns().map(|c| c.ty.enc).collect();
    use Encoding as E;
    assert_eq!(
        encs,
        [
            E::Uint64,
            E::String,
            E::StringAdaptive,
            E::Decimal,
            E::Datetime,
            E::Enum,
            E::JsonAdaptive,
            E::Int32
        ]
    );
    assert!(s.value[0].ty.nullable && !s.value[1].ty.nullable);
    assert_eq!(RowSchema::from_stored(&s.to_stored()).unwrap(), s);
    // Text in a key is stored inline, as Dolt stores it.
    let k = RowSchema::parse("t:text", "").unwrap();
    assert_eq!(k.key[0].ty.enc, E::String);
    // Encoding names still work, and stored text reads them exactly.
    let e = RowSchema::parse("id:int64", "j:json,g:geometry,s:string_adaptive").unwrap();
    assert_eq!(e.value[0].ty.enc, E::JsonAdaptive, "json is the SQL type");
    let exact = "prolly-schema 1\nkey id:int64\nvalue j:json\n";
    assert_eq!(
        RowSchema::from_stored(exact).unwrap().value[0].ty.enc,
        E::Json
    );
}

#[test]
fn rejects_bad_specs_with_the_part_named() {
    for (k, v, needle) in [
        ("", "a:int64", "at least one column"),
        ("id", "", "NAME:TYPE"),
        ("id:int65", "", "unknown type \"int65\""),
        ("id:varchar unsigned", "", "unknown type"),
        ("id:int64,id:int8", "", "appears twice"),
        ("id:int64", "id:int8", "both the key and the value"),
        ("x:json", "", "external handler"),
        (":int64", "", "empty name"),
    ] {
        let e = RowSchema::parse(k, v).unwrap_err().to_string();
        assert!(e.contains(needle), "{k} / {v}: {e}");
    }
    let wide: Vec<String> = (0..4097).map(|i| format!("c{i}:int")).collect();
    let e = RowSchema::parse("id:int", &wide.join(","))
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most 4096"), "{e}");
    let e = RowSchema::parse(&format!("{}:int", "n".repeat(1 << 20)), "").unwrap();
    assert_eq!(e.key.len(), 1);
    let e = RowSchema::parse(&format!("x:{}", "t".repeat(1 << 20)), "")
        .unwrap_err()
        .to_string();
    assert!(e.len() < 2000, "bounded: {} bytes", e.len());
}

#[test]
fn errors_name_the_column() {
    let s = RowSchema::parse("id:bigint", "qty:int, note:text?").unwrap();
    let e = s
        .encode_row(&[Some(Value::Int64(1)), Some(Value::String("x")), None])
        .unwrap_err();
    assert!(
        matches!(&e, RowError::Value { column, .. } if column == "\"qty\""),
        "{e}"
    );
    let e = s
        .encode_row(&[Some(Value::Int64(1)), None, None])
        .unwrap_err();
    assert!(e.to_string().contains("\"qty\""), "{e}");
    let e = s.encode_row(&[Some(Value::Int64(1))]).unwrap_err();
    assert!(matches!(
        e,
        RowError::Arity {
            expected: 3,
            got: 1
        }
    ));
    let e = s.decode_row(&[1, 2, 3], &[0, 0]).unwrap_err();
    assert!(matches!(e, RowError::Value { .. }), "{e}");
}

#[test]
fn large_text_moves_out_of_band_and_maps_work() {
    let s = RowSchema::parse("id:bigint", "body:longtext").unwrap();
    let store = MemoryStore::new(HashProfile::Dolt);
    let big = "x".repeat(100_000);
    let mut blobs = prollystore::blob::StoreBlobs::new(&store);
    let mut enc = RowEncoder::new(&s);
    let (k, v) = enc
        .encode_with(
            &[Some(Value::Int64(1)), Some(Value::String(&big))],
            &mut blobs,
        )
        .unwrap();
    let (k, v) = (k.to_vec(), v.to_vec());
    assert!(
        enc.encode(&[Some(Value::Int64(1)), Some(Value::String(&big))])
            .is_err(),
        "no blob store"
    );
    let row = s.decode_row(&k, &v).unwrap();
    let Some(Value::Adaptive(Adaptive::OutOfBand { len, address })) = row[1] else {
        panic!("{row:?}")
    };
    assert_eq!(len, 100_000);
    let mut back = Vec::new();
    prollystore::blob::read_blob(&store, &address, &mut back).unwrap();
    assert_eq!(back, big.as_bytes());
    let map = Map::from_sorted(&store, s.tuple_schema(), [(&k[..], &v[..])]).unwrap();
    assert_eq!(
        map.get(&s.encode_key(&[Some(Value::Int64(1))]).unwrap())
            .unwrap(),
        Some(&v[..])
    );
}

proptest! {
    /// A typed row encodes to exactly the tuples built by hand, and decodes back to its values.
    #[test]
    fn typed_rows_equal_hand_built_tuples(
        id in any::<i64>(),
        name in proptest::option::of("[a-zé ]{0,20}"),
        qty in proptest::option::of(any::<i32>()),
        day in proptest::option::of((1u16..9999, 1u8..13, 1u8..29)),
        ratio in any::<f64>().prop_filter("not NaN", |f| !f.is_nan()),
    ) {
        let s = RowSchema::parse("id:bigint", "name:varchar(20)?, qty:int?, day:date?, ratio:double").unwrap();
        let date = day.map(|(y, m, d)| Date { year: y, month: m, day: d });
        let row = [
            Some(Value::Int64(id)),
            name.as_deref().map(Value::String),
            qty.map(Value::Int32),
            date.map(Value::Date),
            Some(Value::Float64(ratio)),
        ];
        let (k, v) = s.encode_row(&row).unwrap();
        let mut kb = TupleBuilder::new(s.key_desc());
        kb.put_int64(0, id).unwrap();
        let mut vb = TupleBuilder::new(s.value_desc());
        if let Some(n) = &name { vb.put_string(0, n).unwrap(); }
        if let Some(q) = qty { vb.put_int32(1, q).unwrap(); }
        if let Some(d) = date { vb.put_date(2, d).unwrap(); }
        vb.put_float64(3, ratio).unwrap();
        prop_assert_eq!(&k[..], kb.build().unwrap().as_bytes());
        prop_assert_eq!(&v[..], vb.build().unwrap().as_bytes());
        let back = s.decode_row(&k, &v).unwrap();
        prop_assert_eq!(&back[..], &row[..]);
    }
}
