//! The Dolt part of the C ABI, checked from C: `tests/c/test_dolt.c` is compiled against this
//! crate's static library and run over the golden Dolt database (`dolt-db/vecdb` of the
//! vectors), comparing branches, log, tables, schemas, typed rows and CSV exports with what the
//! `dolt` CLI printed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The vectors directory: `$PROLLY_VECTORS`, else `<workspace>/../shared/vectors`.
fn vectors() -> Option<PathBuf> {
    let dir = std::env::var_os("PROLLY_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace().join("../shared/vectors"));
    dir.join("dolt-db/vecdb/.dolt").is_dir().then_some(dir)
}

#[test]
fn c_reads_a_real_dolt_database() {
    let Some(vectors) = vectors() else {
        if std::env::var("PROLLY_ALLOW_MISSING_VECTORS").as_deref() == Ok("1") {
            println!("SKIPPED: vectors not found");
            return;
        }
        panic!(
            "vectors not found: set PROLLY_VECTORS or put them at ../shared/vectors \
             (PROLLY_ALLOW_MISSING_VECTORS=1 skips)"
        );
    };
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/dolt-... -> target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile directory");
    let lib = profile_dir.join("libprollystore_ffi.a");
    assert!(lib.exists(), "{} not found", lib.display());
    let out_dir = tempfile::tempdir().expect("temp dir");
    let bin = out_dir.path().join("test_dolt");
    let ws = workspace();
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-I"])
        .arg(ws.join("include"))
        .arg(ws.join("tests/c/test_dolt.c"))
        .arg("-o")
        .arg(&bin)
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(status.success(), "compiling tests/c/test_dolt.c failed");
    let out = Command::new(&bin)
        .arg(&vectors)
        .env("TMPDIR", out_dir.path())
        .output()
        .expect("run test_dolt");
    assert!(
        out.status.success(),
        "test_dolt failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{}", String::from_utf8_lossy(&out.stdout));
}
