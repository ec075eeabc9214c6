//! Dolt manifest parsing over arbitrary bytes: an error or a manifest, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_dolt::chunks::manifest::Manifest;

fuzz_target!(|data: &[u8]| {
    if let Ok(m) = Manifest::parse(data, "manifest") {
        for s in &m.specs {
            std::hint::black_box((s.is_journal(), s.chunk_count));
        }
    }
});
