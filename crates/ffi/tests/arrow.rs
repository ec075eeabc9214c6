//! Arrow C streams out of the C ABI, read back with arrow-rs's own stream reader: a map stream
//! gives the batches of the Rust `MapBatches` (whole and a key range) and keeps its store from
//! committing while it lives; a Dolt table stream gives the batches of `TableBatches`; bad
//! arguments return their codes and leave the stream untouched.
#![cfg(feature = "arrow")]

use std::ffi::CString;
use std::ops::Bound;
use std::ptr;
use std::sync::Arc;

use arrow_array::ffi_stream::{ArrowArrayStreamReader, FFI_ArrowArrayStream};
use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use prollystore::format::tuple::Value;
use prollystore::format::HashProfile;
use prollystore::rows::RowSchema;
use prollystore::store::{FileStore, RootUpdate};
use prollystore_arrow::{build_map, MapBatches, TableBatches};
use prollystore_ffi::arrow::{prolly_dolt_table_arrow, prolly_map_arrow};
use prollystore_ffi::dolt::{
    prolly_dolt_free, prolly_dolt_open, prolly_dolt_root_free, prolly_dolt_root_open,
    prolly_dolt_table_free, prolly_dolt_table_open,
};
use prollystore_ffi::map::{prolly_map_free, prolly_map_open};
use prollystore_ffi::result::prolly_result;
use prollystore_ffi::schema::{prolly_schema_free, prolly_schema_new, prolly_type};
use prollystore_ffi::store::{
    prolly_address, prolly_root_update, prolly_store_commit, prolly_store_free,
    prolly_store_open_file, prolly_store_root_get,
};

fn read(stream: FFI_ArrowArrayStream) -> Vec<RecordBatch> {
    ArrowArrayStreamReader::try_new(stream)
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn map_streams_equal_the_rust_readers() {
    let dir = tempfile::tempdir().unwrap();
    let rows = RowSchema::parse("id:bigint", "name:text?").unwrap();
    let n = 5_000i64;
    let root = {
        let mut store = FileStore::create(dir.path(), HashProfile::Dolt).unwrap();
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int64, false),
            Field::new("name", DataType::Utf8, true),
        ]));
        let cols: Vec<ArrayRef> = vec![
            Arc::new(Int64Array::from_iter_values((0..n).rev())),
            Arc::new(StringArray::from_iter(
                (0..n)
                    .rev()
                    .map(|i| (i % 3 != 0).then(|| format!("name {i}"))),
            )),
        ];
        let batch = RecordBatch::try_new(schema, cols).unwrap();
        let root = build_map(&store, &rows, [Ok(batch)]).unwrap().root();
        store
            .commit(&[RootUpdate::new("main", None, Some(root))])
            .unwrap();
        root
    };
    let rust_store = Arc::new(FileStore::open(dir.path()).unwrap());
    let key = |i: i64| rows.encode_key(&[Some(Value::Int64(i))]).unwrap();
    let (lo, hi) = (key(100), key(2_345));
    let want_all: Vec<RecordBatch> = MapBatches::new(rust_store.clone(), root, rows.clone(), 1_000)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let want_range: Vec<RecordBatch> = MapBatches::range(
        rust_store,
        root,
        rows.clone(),
        Bound::Excluded(&lo[..]),
        Bound::Included(&hi[..]),
        300,
    )
    .unwrap()
    .map(Result::unwrap)
    .collect();
    assert_eq!(
        want_all.iter().map(|b| b.num_rows()).sum::<usize>(),
        n as usize
    );
    assert_eq!(
        want_range.iter().map(|b| b.num_rows()).sum::<usize>(),
        2_245
    );

    // The same map through the C ABI.
    let path = CString::new(dir.path().to_str().unwrap()).unwrap();
    let mut store = ptr::null_mut();
    assert_eq!(
        prolly_store_open_file(path.as_ptr(), 1, &mut store),
        prolly_result::Ok
    );
    let kt = [prolly_type {
        encoding: rows.key[0].ty.enc.code(),
        nullable: 0,
    }];
    let vt = [prolly_type {
        encoding: rows.value[0].ty.enc.code(),
        nullable: 1,
    }];
    let mut schema = ptr::null_mut();
    assert_eq!(
        prolly_schema_new(kt.as_ptr(), 1, vt.as_ptr(), 1, &mut schema),
        prolly_result::Ok
    );
    let main = CString::new("main").unwrap();
    let mut c_root = prolly_address::default();
    assert_eq!(
        prolly_store_root_get(store, main.as_ptr(), &mut c_root),
        prolly_result::Ok
    );
    let mut map = ptr::null_mut();
    assert_eq!(
        prolly_map_open(store, schema, &c_root, &mut map),
        prolly_result::Ok
    );

    let (kcols, vcols) = (
        CString::new("id:bigint").unwrap(),
        CString::new("name:text?").unwrap(),
    );
    let mut s = FFI_ArrowArrayStream::empty();
    let all = |s: *mut FFI_ArrowArrayStream| {
        prolly_map_arrow(
            map,
            kcols.as_ptr(),
            vcols.as_ptr(),
            ptr::null(),
            0,
            false,
            ptr::null(),
            0,
            false,
            1_000,
            s,
        )
    };
    assert_eq!(all(&mut s), prolly_result::Ok);
    // While the stream lives, the store cannot commit.
    let upd = prolly_root_update {
        name: main.as_ptr(),
        expected: &c_root,
        new_root: &c_root,
    };
    let mut generation = 0;
    assert_eq!(
        prolly_store_commit(store, &upd, 1, &mut generation),
        prolly_result::ErrBusy
    );
    prolly_map_free(map);
    assert_eq!(read(s), want_all);
    assert_eq!(
        prolly_store_commit(store, &upd, 1, &mut generation),
        prolly_result::Ok
    );

    let mut map = ptr::null_mut();
    assert_eq!(
        prolly_map_open(store, schema, &c_root, &mut map),
        prolly_result::Ok
    );
    let mut s = FFI_ArrowArrayStream::empty();
    assert_eq!(
        prolly_map_arrow(
            map,
            kcols.as_ptr(),
            vcols.as_ptr(),
            lo.as_ptr(),
            lo.len(),
            false,
            hi.as_ptr(),
            hi.len(),
            true,
            300,
            &mut s,
        ),
        prolly_result::Ok
    );
    assert_eq!(read(s), want_range);

    // A bad schema text is an invalid argument; the stream stays as it was (empty).
    let bad = CString::new("id bigint").unwrap();
    let mut s = FFI_ArrowArrayStream::empty();
    assert_eq!(
        prolly_map_arrow(
            map,
            bad.as_ptr(),
            vcols.as_ptr(),
            ptr::null(),
            0,
            false,
            ptr::null(),
            0,
            false,
            0,
            &mut s
        ),
        prolly_result::ErrInvalidArgument
    );
    assert!(s.release.is_none());
    assert_eq!(all(ptr::null_mut()), prolly_result::ErrNullArgument);
    prolly_map_free(map);
    prolly_schema_free(schema);
    prolly_store_free(store);
}

#[test]
fn table_streams_equal_the_rust_reader() {
    let dir = prollystore_test_vectors::require("dolt-db/vecdb");
    let rust_db = Arc::new(prollystore_sql::open(&dir).unwrap());
    let path = CString::new(dir.to_str().unwrap()).unwrap();
    let mut db = ptr::null_mut();
    assert_eq!(prolly_dolt_open(path.as_ptr(), &mut db), prolly_result::Ok);
    let main = CString::new("main").unwrap();
    let mut root = ptr::null_mut();
    assert_eq!(
        prolly_dolt_root_open(db, main.as_ptr(), 2, &mut root),
        prolly_result::Ok
    );
    for name in ["items", "pairs", "docs", "keyless_log"] {
        let cname = CString::new(name).unwrap();
        let mut t = ptr::null_mut();
        assert_eq!(
            prolly_dolt_table_open(root, cname.as_ptr(), &mut t),
            prolly_result::Ok
        );
        let mut s = FFI_ArrowArrayStream::empty();
        assert_eq!(prolly_dolt_table_arrow(t, 7, &mut s), prolly_result::Ok);
        prolly_dolt_table_free(t);
        let table = rust_db
            .table_at("main", prollystore_dolt::State::Committed, name)
            .unwrap();
        let want: Vec<RecordBatch> = TableBatches::new(rust_db.clone(), table, 7)
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert!(!want.is_empty(), "{name}");
        assert_eq!(read(s), want, "{name}");
    }
    prolly_dolt_root_free(root);
    prolly_dolt_free(db);
}
