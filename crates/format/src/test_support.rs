//! Helpers shared by the crate's unit tests: finding the golden vectors and reading their chunk
//! dumps.

use std::path::PathBuf;

/// Where the golden vectors are (`PROLLY_VECTORS`, else `<workspace>/../shared/vectors`).
///
/// Panics with a clear message when they are absent, unless `PROLLY_ALLOW_MISSING_VECTORS=1`,
/// in which case it prints `SKIPPED: vectors not found` and returns `None`: a test that needs
/// them never passes silently.
pub(crate) fn vectors_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PROLLY_VECTORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/vectors")
        });
    if dir.join("maps").is_dir() {
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

/// The records of a `maps/*.chunks` dump: `address[20] | length u32 LE | chunk`.
pub(crate) fn chunk_records(data: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut p = 0;
    while p + 24 <= data.len() {
        let len =
            u32::from_le_bytes([data[p + 20], data[p + 21], data[p + 22], data[p + 23]]) as usize;
        out.push((&data[p..p + 20], &data[p + 24..p + 24 + len]));
        p += 24 + len;
    }
    out
}
