//! `tests/c/remote/test_remote.c`, compiled against the static library built with the
//! `remote` feature and run: a remote store opened from C with `prolly_remote_open` and read
//! in place with the ordinary map functions. Against a `file://` remote; set
//! `PROLLY_TEST_REMOTE_URL` to an empty S3 prefix (credentials and endpoint in the `AWS_*`
//! environment variables) to run it against object storage too.
#![cfg(feature = "remote")]

use std::process::Command;

mod common;

#[test]
fn c_reads_a_remote_in_place() {
    let tmp = tempfile::tempdir().expect("tmp");
    let lib = common::static_lib_with(Some("remote"));
    let bin = common::compile_c_test_with("remote/test_remote", tmp.path(), &lib);
    let mut runs = vec![Vec::new()];
    if let Ok(url) = std::env::var("PROLLY_TEST_REMOTE_URL") {
        runs.push(vec![url]);
    }
    for args in runs {
        let out = Command::new(&bin).args(&args).output().expect("run");
        assert!(
            out.status.success(),
            "test_remote {args:?} failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        eprint!("{}", String::from_utf8_lossy(&out.stdout));
    }
}
