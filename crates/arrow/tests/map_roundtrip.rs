//! Maps ↔ record batches: rows built into a map from Arrow batches (in any order, split into
//! batches anyhow) come back out of the map as the same values in key order, for any batch
//! size; key ranges are slices; bad input fails naming the column and row.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, Float64Array, Int64Array, RecordBatch, StringArray, UInt32Array,
};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use prollystore::format::HashProfile;
use prollystore::MemoryStore;
use prollystore_arrow::{build_map, infer_row_schema, MapBatches};
use proptest::prelude::*;

/// A row's value columns.
type Values = (Option<String>, Option<f64>, Option<u32>, Option<Vec<u8>>);
/// The map the rows should make.
type Model = BTreeMap<i64, Values>;

fn schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("name", DataType::Utf8, true),
        Field::new("id", DataType::Int64, false),
        Field::new("score", DataType::Float64, true),
        Field::new("n", DataType::UInt32, true),
        Field::new("data", DataType::Binary, true),
    ]))
}

fn batch(rows: &[(i64, Values)]) -> RecordBatch {
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from_iter(rows.iter().map(|r| r.1 .0.clone()))),
        Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
        Arc::new(Float64Array::from_iter(rows.iter().map(|r| r.1 .1))),
        Arc::new(UInt32Array::from_iter(rows.iter().map(|r| r.1 .2))),
        Arc::new(BinaryArray::from_iter(rows.iter().map(|r| r.1 .3.clone()))),
    ];
    RecordBatch::try_new(schema(), cols).unwrap()
}

fn read_back(batches: MapBatches<MemoryStore>) -> Vec<(i64, Values)> {
    let mut out = Vec::new();
    for b in batches {
        let b = b.unwrap();
        let c = |i: usize| b.column(i).clone();
        let ids = c(0);
        let ids = ids.as_any().downcast_ref::<Int64Array>().unwrap();
        let names = c(1);
        let names = names.as_any().downcast_ref::<StringArray>().unwrap();
        let scores = c(2);
        let scores = scores.as_any().downcast_ref::<Float64Array>().unwrap();
        let ns = c(3);
        let ns = ns.as_any().downcast_ref::<UInt32Array>().unwrap();
        let data = c(4);
        let data = data.as_any().downcast_ref::<BinaryArray>().unwrap();
        use arrow_array::Array;
        for r in 0..b.num_rows() {
            let opt = |a: &dyn Array| !a.is_null(r);
            out.push((
                ids.value(r),
                (
                    opt(names).then(|| names.value(r).to_string()),
                    opt(scores).then(|| scores.value(r)),
                    opt(ns).then(|| ns.value(r)),
                    opt(data).then(|| data.value(r).to_vec()),
                ),
            ));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn rows_round_trip_through_a_map(
        model in proptest::collection::btree_map(
            any::<i64>(),
            (
                proptest::option::of("[a-z ]{0,12}"),
                proptest::option::of(-1e9f64..1e9),
                proptest::option::of(any::<u32>()),
                proptest::option::of(proptest::collection::vec(any::<u8>(), 0..3000)),
            ),
            0..300,
        ),
        split in 1usize..50,
        batch_rows in 1usize..40,
        shuffle in any::<u64>(),
    ) {
        let model: Model = model;
        let mut rows: Vec<_> = model.clone().into_iter().collect();
        // Any input order: rotate by a random amount and reverse.
        if !rows.is_empty() {
            let k = (shuffle as usize) % rows.len();
            rows.rotate_left(k);
            rows.reverse();
        }
        let batches: Vec<Result<RecordBatch, ArrowError>> =
            rows.chunks(split).map(|c| Ok(batch(c))).collect();
        let row_schema = infer_row_schema(&schema(), &["id"]).unwrap();
        // MemoryStore is single-threaded; the reader still takes an Arc of it.
        #[allow(clippy::arc_with_non_send_sync)]
        let store = Arc::new(MemoryStore::new(HashProfile::Dolt));
        let map = build_map(&*store, &row_schema, batches).unwrap();
        let root = map.root();
        let got = read_back(MapBatches::new(store.clone(), root, row_schema.clone(), batch_rows).unwrap());
        let want: Vec<_> = model.clone().into_iter().collect();
        prop_assert_eq!(&got, &want);

        // A key range is the model's slice.
        if want.len() >= 2 {
            let (lo, hi) = (want[want.len() / 3].0, want[2 * want.len() / 3].0);
            let key = |v: i64| row_schema.encode_key(&[Some(prollystore::format::tuple::Value::Int64(v))]).unwrap();
            let (klo, khi) = (key(lo), key(hi));
            let got = read_back(MapBatches::range(
                store.clone(), root, row_schema.clone(),
                Bound::Excluded(&klo[..]), Bound::Included(&khi[..]), batch_rows,
            ).unwrap());
            let want: Vec<_> = model.range((Bound::Excluded(lo), Bound::Included(hi)))
                .map(|(k, v)| (*k, v.clone())).collect();
            prop_assert_eq!(got, want);
        }
    }
}

#[test]
fn duplicate_keys_and_bad_values_name_the_rows() {
    let row_schema = infer_row_schema(&schema(), &["id"]).unwrap();
    let store = MemoryStore::new(HashProfile::Dolt);
    let row = |id| (id, (None, None, None, None));
    let err = build_map(
        &store,
        &row_schema,
        [Ok(batch(&[row(1), row(2)])), Ok(batch(&[row(1)]))],
    )
    .map(|m| m.root())
    .unwrap_err();
    assert_eq!(err.to_string(), "rows 0 and 2 have the same key");
    // A NULL in a key column.
    let cols: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![Some("a")])),
        Arc::new(Int64Array::from(vec![None::<i64>])),
        Arc::new(Float64Array::from(vec![None::<f64>])),
        Arc::new(UInt32Array::from(vec![None::<u32>])),
        Arc::new(BinaryArray::from(vec![None::<&[u8]>])),
    ];
    let nullable = Arc::new(Schema::new(
        schema()
            .fields()
            .iter()
            .map(|f| f.as_ref().clone().with_nullable(true))
            .collect::<Vec<_>>(),
    ));
    let b = RecordBatch::try_new(nullable, cols).unwrap();
    let err = build_map(&store, &row_schema, [Ok(b)])
        .map(|m| m.root())
        .unwrap_err();
    assert!(err.to_string().contains("row 0"), "{err}");
    assert!(infer_row_schema(&schema(), &["nope"]).is_err());
}
