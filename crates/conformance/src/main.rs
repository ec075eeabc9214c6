//! Conformance runner: checks this implementation against a directory laid out like the
//! golden vectors (data produced by Dolt itself): `../shared/vectors` for the newest set, or
//! the repository's copy (`cargo run -q -p prollystore-test-vectors` prints where it is).
//!
//! ```text
//! cargo run --release -p prollystore-conformance -- DIR
//! ```
//!
//! Prints one line per category with its counts, then `N passed, M failed`, and exits non-zero
//! on any failure (or when DIR holds none of the known inputs).

use std::path::PathBuf;
use std::process::ExitCode;

use prollystore_conformance::run_all;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = match args.as_slice() {
        [dir] => PathBuf::from(dir),
        _ => {
            eprintln!("usage: conformance DIR   (DIR laid out like shared/vectors)");
            return ExitCode::from(2);
        }
    };
    if !dir.is_dir() {
        eprintln!("error: {} is not a directory", dir.display());
        return ExitCode::from(2);
    }
    let categories = run_all(&dir);
    let (mut passed, mut failed, mut present) = (0usize, 0usize, 0usize);
    for c in &categories {
        match &c.missing {
            Some(what) => println!("{:<10} skipped: {what}", c.name),
            None => {
                present += 1;
                println!(
                    "{:<10} {:>7} passed {:>5} failed",
                    c.name, c.passed, c.failed
                );
                for f in &c.failures {
                    println!("    FAIL {f}");
                }
                if c.failed > c.failures.len() {
                    println!("    ... and {} more", c.failed - c.failures.len());
                }
            }
        }
        passed += c.passed;
        failed += c.failed;
    }
    println!("{passed} passed, {failed} failed");
    if present == 0 {
        eprintln!(
            "error: {} holds none of the known vector files",
            dir.display()
        );
        return ExitCode::FAILURE;
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
