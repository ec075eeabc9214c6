//! Two threads committing through one writer handle: each commit either lands or is refused
//! with `PROLLY_RESULT_ERR_BUSY`; none fails otherwise, and the handle keeps working.

use std::ffi::CString;
use std::ptr;

use prollystore_ffi::map::{
    prolly_map, prolly_map_builder_finish, prolly_map_builder_free, prolly_map_builder_new,
    prolly_map_free, prolly_map_root,
};
use prollystore_ffi::result::prolly_result;
use prollystore_ffi::schema::{prolly_schema_free, prolly_schema_new, prolly_type};
use prollystore_ffi::store::{
    prolly_address, prolly_root_update, prolly_store, prolly_store_commit,
    prolly_store_create_file, prolly_store_free,
};

/// The handle, shared by the two threads as a C program would share it.
#[derive(Clone, Copy)]
struct Shared(*mut prolly_store);
// SAFETY: a file store handle may be used from several threads (see the header); the test is
// exactly about what happens when two of them commit at once.
unsafe impl Send for Shared {}

fn commit(
    store: Shared,
    name: &CString,
    expected: Option<&prolly_address>,
    new: &prolly_address,
) -> prolly_result {
    let update = prolly_root_update {
        name: name.as_ptr(),
        expected: expected.map_or(ptr::null(), |a| a as *const _),
        new_root: new,
    };
    let mut generation = 0u64;
    prolly_store_commit(store.0, &update, 1, &mut generation)
}

#[test]
fn racing_commits_land_or_are_refused_as_busy() {
    let dir = tempfile::tempdir().unwrap();
    let path = CString::new(dir.path().join("s").to_str().unwrap()).unwrap();
    let mut store = ptr::null_mut();
    assert_eq!(
        prolly_store_create_file(path.as_ptr(), 1, &mut store),
        prolly_result::Ok
    );
    let key = [prolly_type {
        encoding: prollystore::format::Encoding::Int64 as u8,
        nullable: 0,
    }];
    let mut schema = ptr::null_mut();
    assert_eq!(
        prolly_schema_new(key.as_ptr(), 1, ptr::null(), 0, &mut schema),
        prolly_result::Ok
    );
    let mut builder = ptr::null_mut();
    assert_eq!(
        prolly_map_builder_new(store, schema, &mut builder),
        prolly_result::Ok
    );
    let mut map: *mut prolly_map = ptr::null_mut();
    assert_eq!(
        prolly_map_builder_finish(builder, &mut map),
        prolly_result::Ok
    );
    prolly_map_builder_free(builder);
    let mut root = prolly_address { bytes: [0; 20] };
    assert_eq!(prolly_map_root(map, &mut root), prolly_result::Ok);

    let shared = Shared(store);
    let threads: Vec<_> = (0..2)
        .map(|t| {
            std::thread::spawn(move || {
                let shared = shared;
                let name = CString::new(format!("root-{t}")).unwrap();
                let (mut landed, mut busy) = (0, 0);
                while landed < 40 {
                    let expected = (landed > 0).then_some(&root);
                    match commit(shared, &name, expected, &root) {
                        prolly_result::Ok => landed += 1,
                        prolly_result::ErrBusy => {
                            busy += 1;
                            std::thread::yield_now();
                        }
                        other => panic!("thread {t}: commit failed with {other:?}"),
                    }
                }
                (landed, busy)
            })
        })
        .collect();
    for t in threads {
        let (landed, _busy) = t.join().unwrap();
        assert_eq!(landed, 40);
    }
    let name = CString::new("after").unwrap();
    assert_eq!(
        commit(shared, &name, None, &root),
        prolly_result::Ok,
        "the handle still commits"
    );
    prolly_map_free(map);
    prolly_schema_free(schema);
    prolly_store_free(store);
}
