//! Tuples that do not match the map's schema are refused on the way in
//! (`PROLLY_RESULT_ERR_BAD_TUPLE`), so nothing unreadable reaches the store.

use std::ptr;

use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::Encoding;
use prollystore_ffi::map::{
    prolly_edit, prolly_map, prolly_map_apply, prolly_map_builder, prolly_map_builder_append,
    prolly_map_builder_finish, prolly_map_builder_free, prolly_map_builder_new, prolly_map_free,
};
use prollystore_ffi::result::prolly_result;
use prollystore_ffi::schema::{prolly_schema, prolly_schema_free, prolly_schema_new, prolly_type};
use prollystore_ffi::store::{prolly_store, prolly_store_free, prolly_store_new_memory};

const INT64: u8 = Encoding::Int64 as u8;
const STRING: u8 = Encoding::String as u8;

struct Fixture {
    store: *mut prolly_store,
    schema: *mut prolly_schema,
}

impl Fixture {
    fn new() -> Fixture {
        let mut store = ptr::null_mut();
        assert_eq!(prolly_store_new_memory(1, &mut store), prolly_result::Ok);
        let key = [prolly_type {
            encoding: INT64,
            nullable: 0,
        }];
        let value = [
            prolly_type {
                encoding: STRING,
                nullable: 1,
            },
            prolly_type {
                encoding: INT64,
                nullable: 1,
            },
        ];
        let mut schema = ptr::null_mut();
        let r = prolly_schema_new(key.as_ptr(), 1, value.as_ptr(), 2, &mut schema);
        assert_eq!(r, prolly_result::Ok);
        Fixture { store, schema }
    }

    fn builder(&self) -> *mut prolly_map_builder {
        let mut b = ptr::null_mut();
        assert_eq!(
            prolly_map_builder_new(self.store, self.schema, &mut b),
            prolly_result::Ok
        );
        b
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        prolly_schema_free(self.schema);
        prolly_store_free(self.store);
    }
}

fn key(i: i64) -> Vec<u8> {
    let mut b = TupleBuilder::new(TupleDesc::new(vec![Type::not_null(Encoding::Int64)]));
    b.put_int64(0, i).unwrap();
    b.build().unwrap().as_bytes().to_vec()
}

fn value(s: &str) -> Vec<u8> {
    let mut b = TupleBuilder::new(TupleDesc::new(vec![
        Type::nullable(Encoding::String),
        Type::nullable(Encoding::Int64),
    ]));
    b.put_string(0, s).unwrap();
    b.build().unwrap().as_bytes().to_vec()
}

/// Tuples that are wrong for the schema in each way a caller can get them wrong.
fn bad_tuples() -> Vec<(&'static str, Vec<u8>, Vec<u8>)> {
    let three_fields = {
        let mut b = TupleBuilder::new(TupleDesc::new(vec![
            Type::nullable(Encoding::String),
            Type::nullable(Encoding::Int64),
            Type::nullable(Encoding::Int64),
        ]));
        b.put_int64(2, 7).unwrap();
        b.build().unwrap().as_bytes().to_vec()
    };
    vec![
        (
            "random key bytes",
            vec![0xde, 0xad, 0xbe, 0xef, 0x07],
            value("x"),
        ),
        ("empty key", Vec::new(), value("x")),
        ("short int key", vec![1, 2, 3, 1, 0], value("x")),
        ("random value bytes", key(1), vec![0xff; 9]),
        ("too many value fields", key(1), three_fields),
        ("key is a value", value("x"), value("x")),
    ]
}

#[test]
fn builder_refuses_tuples_that_do_not_fit_the_schema() {
    let f = Fixture::new();
    for (what, k, v) in bad_tuples() {
        let b = f.builder();
        let ok_k = key(0);
        let ok_v = value("ok");
        let r = prolly_map_builder_append(b, ok_k.as_ptr(), ok_k.len(), ok_v.as_ptr(), ok_v.len());
        assert_eq!(r, prolly_result::Ok);
        let r = prolly_map_builder_append(b, k.as_ptr(), k.len(), v.as_ptr(), v.len());
        assert_eq!(r, prolly_result::ErrBadTuple, "{what}");
        // The builder goes on with the good rows only.
        let mut map: *mut prolly_map = ptr::null_mut();
        assert_eq!(
            prolly_map_builder_finish(b, &mut map),
            prolly_result::Ok,
            "{what}"
        );
        prolly_map_free(map);
        prolly_map_builder_free(b);
    }
}

#[test]
fn apply_refuses_tuples_that_do_not_fit_the_schema() {
    let f = Fixture::new();
    let b = f.builder();
    let mut map: *mut prolly_map = ptr::null_mut();
    assert_eq!(prolly_map_builder_finish(b, &mut map), prolly_result::Ok);
    prolly_map_builder_free(b);
    for (what, k, v) in bad_tuples() {
        let good_k = key(5);
        let good_v = value("five");
        let edits = [
            prolly_edit {
                key: good_k.as_ptr(),
                key_len: good_k.len(),
                value: good_v.as_ptr(),
                value_len: good_v.len(),
            },
            prolly_edit {
                key: k.as_ptr(),
                key_len: k.len(),
                value: v.as_ptr(),
                value_len: v.len(),
            },
        ];
        let mut out: *mut prolly_map = ptr::null_mut();
        let r = prolly_map_apply(map, edits.as_ptr(), edits.len(), &mut out);
        assert_eq!(r, prolly_result::ErrBadTuple, "{what}");
        assert!(out.is_null(), "{what}: no map on error");
        // A delete names only a key: its key is checked too.
        let del = [prolly_edit {
            key: k.as_ptr(),
            key_len: k.len(),
            value: ptr::null(),
            value_len: 0,
        }];
        let r = prolly_map_apply(map, del.as_ptr(), 1, &mut out);
        if what.contains("key") {
            assert_eq!(r, prolly_result::ErrBadTuple, "{what} (delete)");
        }
        prolly_map_free(out);
    }
    prolly_map_free(map);
}
