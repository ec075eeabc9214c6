//! The C ABI's remote functions (`remote` feature) over a `file://` remote: push, clone, pull.
#![cfg(feature = "remote")]

use std::ffi::CString;
use std::ptr;

use prollystore::blob::BlobBuilder;
use prollystore::format::HashProfile;
use prollystore::store::{FileStore, RootUpdate};
use prollystore_ffi::remote::{prolly_remote_clone, prolly_remote_pull, prolly_remote_push};
use prollystore_ffi::result::prolly_result;
use prollystore_ffi::store::{
    prolly_address, prolly_open_flags, prolly_store, prolly_store_free, prolly_store_open_file,
    prolly_store_root_get,
};

fn root_of(store: *mut prolly_store, name: &str) -> Option<prolly_address> {
    let name = CString::new(name).expect("name");
    let mut a = prolly_address::default();
    match prolly_store_root_get(store, name.as_ptr(), &mut a) {
        prolly_result::Ok => Some(a),
        _ => None,
    }
}

#[test]
fn push_clone_pull_through_the_c_abi() {
    let tmp = tempfile::tempdir().expect("tmp");
    let dir = tmp.path().join("a");
    let mut fs = FileStore::create(&dir, HashProfile::Blake3).expect("create");
    let root = BlobBuilder::new()
        .write(&fs, b"a small blob as the root")
        .expect("blob");
    fs.commit(&[RootUpdate::new("m", None, Some(root))])
        .expect("commit");
    drop(fs);
    let c = |s: &str| CString::new(s).expect("c string");
    let url = c(&format!("file://{}/remote", tmp.path().display()));
    let origin = c("origin");
    let mut store = ptr::null_mut();
    let dir_c = c(dir.to_str().expect("utf-8"));
    assert_eq!(
        prolly_store_open_file(dir_c.as_ptr(), prolly_open_flags::Write as u32, &mut store),
        prolly_result::Ok
    );
    let mut chunks = 0u64;
    assert_eq!(
        prolly_remote_push(
            store,
            origin.as_ptr(),
            url.as_ptr(),
            ptr::null(),
            0,
            &mut chunks
        ),
        prolly_result::Ok
    );
    assert_eq!(chunks, 1);
    let clone_dir = c(tmp.path().join("b").to_str().expect("utf-8"));
    let mut cloned = ptr::null_mut();
    assert_eq!(
        prolly_remote_clone(url.as_ptr(), clone_dir.as_ptr(), &mut cloned),
        prolly_result::Ok
    );
    assert_eq!(root_of(cloned, "m"), root_of(store, "m"));
    assert_eq!(
        prolly_remote_pull(cloned, origin.as_ptr(), url.as_ptr(), &mut chunks),
        prolly_result::Ok
    );
    assert_eq!(chunks, 0, "nothing new to pull");
    let bad = c("not a url");
    assert_eq!(
        prolly_remote_pull(cloned, origin.as_ptr(), bad.as_ptr(), &mut chunks),
        prolly_result::ErrInvalidArgument
    );
    prolly_store_free(cloned);
    prolly_store_free(store);
}
