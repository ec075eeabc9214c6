//! C ABI cursors against the Rust API: `prolly_cursor_next`, `prolly_cursor_next_batch` and the
//! two mixed on one cursor give exactly the rows of `Map::range` / `Map::range_rev`, for bounds
//! inside leaves, on leaf ends and beyond the map, over a map of many leaves.

use std::ffi::CString;
use std::ptr;

use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::{Encoding, HashProfile};
use prollystore::store::{FileStore, RootUpdate};
use prollystore::tuples::TupleSchema;
use prollystore::Map;
use prollystore_ffi::iter::{
    prolly_bound, prolly_cursor, prolly_cursor_free, prolly_cursor_next, prolly_cursor_next_batch,
    prolly_map_range,
};
use prollystore_ffi::map::{prolly_map, prolly_map_free, prolly_map_open, prolly_row};
use prollystore_ffi::result::prolly_result;
use prollystore_ffi::schema::{prolly_schema, prolly_schema_free, prolly_schema_new, prolly_type};
use prollystore_ffi::store::{
    prolly_address, prolly_store, prolly_store_free, prolly_store_open_file, prolly_store_root_get,
};

const ROWS: i64 = 20_000;

fn schema() -> TupleSchema {
    TupleSchema::new(
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
        TupleDesc::new(vec![Type::not_null(Encoding::String)]),
    )
}

fn key(i: i64) -> Vec<u8> {
    let mut kb = TupleBuilder::new(schema().key.clone());
    kb.put_int64(0, i).unwrap();
    kb.build().unwrap().as_bytes().to_vec()
}

struct Handles {
    store: *mut prolly_store,
    schema: *mut prolly_schema,
    map: *mut prolly_map,
}

impl Drop for Handles {
    fn drop(&mut self) {
        prolly_map_free(self.map);
        prolly_schema_free(self.schema);
        prolly_store_free(self.store);
    }
}

fn open_c(dir: &std::path::Path) -> Handles {
    let path = CString::new(dir.to_str().unwrap()).unwrap();
    let mut store = ptr::null_mut();
    assert_eq!(
        prolly_store_open_file(path.as_ptr(), 0, &mut store),
        prolly_result::Ok
    );
    let kt = [prolly_type {
        encoding: Encoding::Int64.code(),
        nullable: 0,
    }];
    let vt = [prolly_type {
        encoding: Encoding::String.code(),
        nullable: 0,
    }];
    let mut schema = ptr::null_mut();
    assert_eq!(
        prolly_schema_new(kt.as_ptr(), 1, vt.as_ptr(), 1, &mut schema),
        prolly_result::Ok
    );
    let mut root = prolly_address::default();
    let name = CString::new("main").unwrap();
    assert_eq!(
        prolly_store_root_get(store, name.as_ptr(), &mut root),
        prolly_result::Ok
    );
    let mut map = ptr::null_mut();
    assert_eq!(
        prolly_map_open(store, schema, &root, &mut map),
        prolly_result::Ok
    );
    Handles { store, schema, map }
}

fn c_bound(b: std::ops::Bound<&[u8]>) -> prolly_bound {
    use std::ops::Bound::*;
    let (kind, k) = match b {
        Unbounded => (0, &[][..]),
        Included(k) => (1, k),
        Excluded(k) => (2, k),
    };
    prolly_bound {
        kind,
        key: k.as_ptr(),
        key_len: k.len(),
    }
}

/// How to take rows from a cursor.
#[derive(Clone, Copy, Debug)]
enum Take {
    /// `prolly_cursor_next` only.
    One,
    /// `prolly_cursor_next_batch` with this capacity.
    Batch(usize),
    /// Alternating: one row, then a batch of this capacity.
    Mixed(usize),
}

unsafe fn slice<'a>(p: *const u8, n: usize) -> &'a [u8] {
    // SAFETY: rows from the cursor point to `n` readable bytes in the open store.
    unsafe { std::slice::from_raw_parts(p, n) }
}

fn empty_row() -> prolly_row {
    prolly_row {
        key: ptr::null(),
        key_len: 0,
        value: ptr::null(),
        value_len: 0,
    }
}

fn collect(c: *mut prolly_cursor, take: Take) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut got = Vec::new();
    let mut rows = vec![empty_row(); 1 << 17];
    let mut one = true;
    loop {
        let (use_one, cap) = match take {
            Take::One => (true, 0),
            Take::Batch(n) => (false, n),
            Take::Mixed(n) => (one, n),
        };
        one = !one;
        if use_one {
            let mut row = empty_row();
            match prolly_cursor_next(c, &mut row) {
                prolly_result::Ok => {
                    // SAFETY: a row just returned by the cursor.
                    let (k, v) =
                        unsafe { (slice(row.key, row.key_len), slice(row.value, row.value_len)) };
                    got.push((k.to_vec(), v.to_vec()));
                }
                prolly_result::End => break,
                r => panic!("prolly_cursor_next: {r:?}"),
            }
        } else {
            let mut n = usize::MAX;
            match prolly_cursor_next_batch(c, rows.as_mut_ptr(), cap, &mut n) {
                prolly_result::Ok => {
                    assert!((1..=cap).contains(&n), "{n} rows for capacity {cap}");
                    for r in &rows[..n] {
                        // SAFETY: rows just returned by the cursor.
                        let (k, v) =
                            unsafe { (slice(r.key, r.key_len), slice(r.value, r.value_len)) };
                        got.push((k.to_vec(), v.to_vec()));
                    }
                }
                prolly_result::End => {
                    assert_eq!(n, 0);
                    break;
                }
                r => panic!("prolly_cursor_next_batch: {r:?}"),
            }
        }
    }
    // Exhausted stays exhausted, for both calls.
    let mut row = empty_row();
    assert_eq!(prolly_cursor_next(c, &mut row), prolly_result::End);
    let mut n = 7;
    assert_eq!(
        prolly_cursor_next_batch(c, rows.as_mut_ptr(), 3, &mut n),
        prolly_result::End
    );
    assert_eq!(n, 0);
    got
}

#[test]
fn cursors_give_the_rows_of_the_rust_api() {
    // Mostly leaves whose values have one width (the cursor's fixed-width step), and leaves
    // whose values all vary.
    cursors_give_the_rows_of_the_rust_api_with(|i| format!("value {i}"));
    cursors_give_the_rows_of_the_rust_api_with(|i| "v".repeat(i as usize % 7));
}

fn cursors_give_the_rows_of_the_rust_api_with(value: fn(i64) -> String) {
    let dir = tempfile::tempdir().unwrap();
    let s = schema();
    {
        let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
        let mut vb = TupleBuilder::new(s.value.clone());
        let rows: Vec<(Vec<u8>, Vec<u8>)> = (0..ROWS)
            .map(|i| {
                vb.put_string(0, &value(i)).unwrap();
                (key(i * 2), vb.build().unwrap().as_bytes().to_vec())
            })
            .collect();
        let m =
            Map::from_sorted(&w, s.clone(), rows.iter().map(|(k, v)| (&k[..], &v[..]))).unwrap();
        assert!(m.height().unwrap() >= 1, "needs several leaves");
        w.commit(&[RootUpdate::new("main", None, Some(m.root()))])
            .unwrap();
    }
    let store = FileStore::open(dir.path()).unwrap();
    let root = store.root("main").unwrap();
    let map = Map::new(&store, root, s);
    let h = open_c(dir.path());

    // Keys at the first leaf's end and the next leaf's start, inside, absent, and outside.
    let first_leaf = map.range_runs(std::ops::Bound::Unbounded, std::ops::Bound::Unbounded);
    let n0 = first_leaf.unwrap().next().unwrap().unwrap().len() as i64;
    let keys: Vec<Vec<u8>> = [-5, 0, 1, 777, (n0 - 1) * 2, n0 * 2, 30_001, 39_998, 50_000]
        .into_iter()
        .map(key)
        .collect();
    use std::ops::Bound::*;
    let mut bounds = vec![(Unbounded, Unbounded)];
    for a in &keys {
        bounds.push((Included(&a[..]), Unbounded));
        bounds.push((Unbounded, Excluded(&a[..])));
        for b in &keys {
            bounds.push((Excluded(&a[..]), Included(&b[..])));
        }
    }
    for (lo, hi) in bounds {
        for backward in [false, true] {
            let want: Vec<(Vec<u8>, Vec<u8>)> = if backward {
                map.range_rev(lo, hi).unwrap().map(Result::unwrap)
            } else {
                map.range(lo, hi).unwrap().map(Result::unwrap)
            }
            .map(|(k, v)| (k.to_vec(), v.to_vec()))
            .collect();
            for take in [
                Take::One,
                Take::Batch(1),
                Take::Batch(64),
                Take::Batch(100_000),
                Take::Mixed(5),
                Take::Mixed(300),
            ] {
                let (l, u) = (c_bound(lo), c_bound(hi));
                let mut c = ptr::null_mut();
                assert_eq!(
                    prolly_map_range(h.map, &l, &u, u32::from(backward), &mut c),
                    prolly_result::Ok
                );
                let got = collect(c, take);
                prolly_cursor_free(c);
                assert!(
                    got == want,
                    "{lo:?}..{hi:?} backward={backward} {take:?}: {} rows, want {}",
                    got.len(),
                    want.len()
                );
            }
        }
    }
}

#[test]
fn bad_arguments_leave_the_cursor_where_it_was() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
        let keys: Vec<Vec<u8>> = (0..10).map(key).collect();
        let v = {
            let mut vb = TupleBuilder::new(schema().value.clone());
            vb.put_string(0, "v").unwrap();
            vb.build().unwrap().as_bytes().to_vec()
        };
        let m = Map::from_sorted(&w, schema(), keys.iter().map(|k| (&k[..], &v[..]))).unwrap();
        w.commit(&[RootUpdate::new("main", None, Some(m.root()))])
            .unwrap();
    }
    let h = open_c(dir.path());
    let open = c_bound(std::ops::Bound::Unbounded);
    let mut c = ptr::null_mut();
    assert_eq!(
        prolly_map_range(h.map, &open, &open, 0, &mut c),
        prolly_result::Ok
    );
    let mut row = empty_row();
    let mut rows = [empty_row(); 4];
    let mut n = 0;
    assert_eq!(
        prolly_cursor_next(ptr::null_mut(), &mut row),
        prolly_result::ErrNullArgument
    );
    for _ in 0..2 {
        // Before the first row and in the middle of a leaf.
        assert_eq!(
            prolly_cursor_next(c, ptr::null_mut()),
            prolly_result::ErrNullArgument
        );
        assert_eq!(
            prolly_cursor_next_batch(c, rows.as_mut_ptr(), 0, &mut n),
            prolly_result::ErrInvalidArgument
        );
        assert_eq!(
            prolly_cursor_next_batch(c, ptr::null_mut(), 4, &mut n),
            prolly_result::ErrNullArgument
        );
        assert_eq!(prolly_cursor_next(c, &mut row), prolly_result::Ok);
    }
    // SAFETY: the row just returned.
    assert_eq!(unsafe { slice(row.key, row.key_len) }, &key(1)[..]);
    assert_eq!(
        prolly_cursor_next_batch(c, rows.as_mut_ptr(), 4, &mut n),
        prolly_result::Ok
    );
    assert_eq!(n, 4);
    // SAFETY: rows just returned.
    assert_eq!(unsafe { slice(rows[3].key, rows[3].key_len) }, &key(5)[..]);
    prolly_cursor_free(c);
}
