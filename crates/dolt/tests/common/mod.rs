//! Finding the golden vectors.
#![allow(dead_code)]

use std::path::PathBuf;

/// The `dolt-db` folder of the vectors, or `None` (after printing SKIPPED) when they are absent
/// and PROLLY_ALLOW_MISSING_VECTORS=1. Panics with a clear message otherwise.
pub fn dolt_db_dir() -> Option<PathBuf> {
    let base = match std::env::var_os("PROLLY_VECTORS") {
        Some(v) => PathBuf::from(v),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors"),
    };
    let dir = base.join("dolt-db");
    if dir.is_dir() {
        return Some(dir);
    }
    if std::env::var("PROLLY_ALLOW_MISSING_VECTORS").as_deref() == Ok("1") {
        println!("SKIPPED: vectors not found");
        return None;
    }
    panic!(
        "golden vectors not found at {} (set PROLLY_VECTORS, or PROLLY_ALLOW_MISSING_VECTORS=1 to skip)",
        dir.display()
    );
}

/// The four databases.
pub const DATABASES: [&str; 4] = ["vecdb", "vecdb_journal", "vecdb_tablefiles", "vecdb_zstd"];
