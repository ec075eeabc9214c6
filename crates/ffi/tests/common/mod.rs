//! Helpers shared by the tests that compile C programs against the library.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The static library to link C programs against, built here (cargo's own freshness check makes
/// it the library of the current sources) into a target directory of its own, so that it never
/// waits on the lock of the build that runs this test.
///
/// A `libprollystore_ffi.a` next to the test executables is not used: cargo refreshes that copy
/// only when it builds this package as a root, so in a workspace-wide run it can be a stale one
/// from an earlier build, and the C programs would then test old code. A runner that has just
/// built the library itself (CI does, before the tests) names it in `PROLLY_FFI_STATICLIB`.
pub fn static_lib() -> PathBuf {
    static_lib_with(None)
}

/// [`static_lib`] built with `features` (`Some("remote")`), into a target directory of its own
/// per feature set; `PROLLY_FFI_STATICLIB_<FEATURE>` (upper case, `-` as `_`) names a prebuilt
/// one.
pub fn static_lib_with(features: Option<&str>) -> PathBuf {
    let var = match features {
        Some(f) => format!(
            "PROLLY_FFI_STATICLIB_{}",
            f.to_uppercase().replace('-', "_")
        ),
        None => "PROLLY_FFI_STATICLIB".to_string(),
    };
    if let Some(lib) = std::env::var_os(var) {
        let lib = PathBuf::from(lib);
        assert!(
            lib.exists(),
            "PROLLY_FFI_STATICLIB names {}, which does not exist",
            lib.display()
        );
        return lib;
    }
    let exe = std::env::current_exe().expect("test executable path");
    // target/<profile>/deps/<test>-<hash> -> target/<profile>
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target profile directory");
    let release = profile_dir.file_name().is_some_and(|n| n == "release");
    let target_dir = profile_dir
        .parent()
        .expect("target directory")
        .join(match features {
            Some(f) => format!("ffi-staticlib-{f}"),
            None => "ffi-staticlib".to_string(),
        });
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let mut cmd = Command::new(&cargo);
    cmd.args([
        "build",
        "-q",
        "-p",
        "prollystore-ffi",
        "--lib",
        "--target-dir",
    ])
    .arg(&target_dir)
    .current_dir(workspace());
    if release {
        cmd.arg("--release");
    }
    if let Some(f) = features {
        cmd.args(["--features", f]);
    }
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run {cargo}: {e}"));
    assert!(status.success(), "building the static library failed");
    let built = target_dir
        .join(if release { "release" } else { "debug" })
        .join("libprollystore_ffi.a");
    assert!(built.exists(), "{} was not built", built.display());
    built
}

/// Compiles `tests/c/<name>.c` into `out_dir` against the static library; returns the program.
pub fn compile_c_test(name: &str, out_dir: &Path) -> PathBuf {
    compile_c_test_with(name, out_dir, &static_lib())
}

/// Compiles `tests/c/<name>.c` (`name` may include a folder) into `out_dir` against `lib`.
pub fn compile_c_test_with(name: &str, out_dir: &Path, lib: &Path) -> PathBuf {
    let ws = workspace();
    let bin = out_dir.join(name.replace('/', "-"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-I"])
        .arg(ws.join("include"))
        .arg(ws.join(format!("tests/c/{name}.c")))
        .arg("-o")
        .arg(&bin)
        .arg(lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler {cc:?}: {e}"));
    assert!(status.success(), "compiling tests/c/{name}.c failed");
    bin
}

/// Runs the compiled C test `bin` with `args`; fails with its output unless it exits with 0,
/// else prints what it printed.
pub fn run_c(bin: &Path, args: &[&str]) {
    let out = Command::new(bin).args(args).output().expect("run");
    let name = bin.file_name().unwrap_or_default().to_string_lossy();
    assert!(
        out.status.success(),
        "{name} {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprint!("{}", String::from_utf8_lossy(&out.stdout));
}
