//! Helpers shared by the crate's unit tests: finding the golden vectors and reading their chunk
//! dumps.

use std::path::PathBuf;

/// The golden vectors' folder, with its `maps` (see `prollystore_test_vectors::dir`: the
/// folder `PROLLY_VECTORS` names, else the repository's copy). Absent vectors panic there, so a
/// test that needs them never passes silently; the `Option` is always `Some`.
pub(crate) fn vectors_dir() -> Option<PathBuf> {
    prollystore_test_vectors::require("maps");
    Some(prollystore_test_vectors::dir().to_path_buf())
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
