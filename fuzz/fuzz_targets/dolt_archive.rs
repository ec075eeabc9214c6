//! Archive (`.darc`) parsing over arbitrary bytes: open, then read every listed chunk (snappy
//! and zstd-with-dictionary paths).
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_dolt::chunks::archive::Archive;
use prollystore_dolt::chunks::codec::Backing;

fuzz_target!(|data: &[u8]| {
    let backing = Backing::Memory { name: "archive".into(), bytes: data.to_vec() };
    if let Ok(a) = Archive::open(backing) {
        std::hint::black_box(a.metadata());
        for addr in a.addresses().iter().take(64) {
            let _ = a.read(addr);
        }
    }
});
