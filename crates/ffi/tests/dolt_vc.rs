//! The version-control functions of the C ABI, called through their C signatures on a copy of
//! the `branches` write scenario's database: branch, checkout, tag, fast-forward merge, status,
//! and refusals (code, message, no file changed).

#![cfg(feature = "dolt")]

use std::ffi::{c_char, CString};
use std::path::Path;

use prollystore_ffi::dolt::vc::*;
use prollystore_ffi::result::{prolly_last_error_message, prolly_result};
use prollystore_ffi::store::prolly_address;

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let t = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &t);
        } else {
            std::fs::write(&t, std::fs::read(e.path()).unwrap()).unwrap();
        }
    }
}

fn files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_dir() {
            out.extend(files(&e.path()));
        } else {
            out.push((e.path(), std::fs::read(e.path()).unwrap()));
        }
    }
    out.sort();
    out
}

fn last_error() -> String {
    let mut buf = vec![0u8; 4096];
    let n = prolly_last_error_message(buf.as_mut_ptr().cast::<c_char>(), buf.len());
    String::from_utf8_lossy(&buf[..n.min(4095)]).into_owned()
}

#[test]
fn branch_checkout_tag_merge_status_from_c() {
    let src = prollystore_test_vectors::require("dolt-write/branches/after");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    copy_tree(&src, &dir);
    let path = c(dir.to_str().unwrap());
    let mut commit = prolly_address { bytes: [0; 20] };
    assert_eq!(
        prolly_dolt_branch_create(
            path.as_ptr(),
            c("topic").as_ptr(),
            c("HEAD~1").as_ptr(),
            &mut commit
        ),
        prolly_result::Ok
    );
    // An existing branch is refused, and nothing changes.
    let before = files(&dir);
    assert_eq!(
        prolly_dolt_branch_create(
            path.as_ptr(),
            c("topic").as_ptr(),
            c("main").as_ptr(),
            std::ptr::null_mut()
        ),
        prolly_result::ErrInvalidArgument
    );
    assert!(last_error().contains("already exists"), "{}", last_error());
    assert!(files(&dir) == before);
    assert_eq!(
        prolly_dolt_checkout(path.as_ptr(), c("topic").as_ptr()),
        prolly_result::Ok
    );
    let mut out = prolly_dolt_merge_outcome {
        kind: prolly_dolt_merge_kind::UpToDate,
        commit: prolly_address { bytes: [0; 20] },
        conflicts: 0,
    };
    assert_eq!(
        prolly_dolt_merge(
            path.as_ptr(),
            c("main").as_ptr(),
            std::ptr::null(),
            c("C Bot").as_ptr(),
            c("c@example.com").as_ptr(),
            1_714_521_600_000,
            0,
            &mut out
        ),
        prolly_result::Ok
    );
    assert_eq!(out.kind, prolly_dolt_merge_kind::FastForward);
    let mut tag = prolly_address { bytes: [0; 20] };
    assert_eq!(
        prolly_dolt_tag_create(
            path.as_ptr(),
            c("from-c").as_ptr(),
            c("HEAD").as_ptr(),
            c("tagged from C").as_ptr(),
            c("C Bot").as_ptr(),
            c("c@example.com").as_ptr(),
            1_714_521_600_000,
            &mut tag
        ),
        prolly_result::Ok
    );
    let mut buf = vec![0u8; 256];
    let n = prolly_dolt_status(path.as_ptr(), buf.as_mut_ptr().cast::<c_char>(), buf.len());
    let text = String::from_utf8_lossy(&buf[..n as usize]);
    assert_eq!(
        text,
        "On branch topic\nnothing to commit, working tree clean\n"
    );
    assert_eq!(
        prolly_dolt_checkout(path.as_ptr(), c("main").as_ptr()),
        prolly_result::Ok
    );
    assert_eq!(
        prolly_dolt_branch_delete(path.as_ptr(), c("topic").as_ptr(), false),
        prolly_result::Ok,
        "{}",
        last_error()
    );
    let db = prollystore_sql::open(&dir).unwrap();
    assert_eq!(db.current_branch().as_deref(), Some("main"));
    assert!(db.tags().unwrap().iter().any(|t| t.name == "from-c"));
}
