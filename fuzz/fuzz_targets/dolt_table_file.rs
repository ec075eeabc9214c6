//! Classic table-file parsing over arbitrary bytes: open, then read every listed chunk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_dolt::chunks::codec::Backing;
use prollystore_dolt::chunks::table_file::TableFile;

fuzz_target!(|data: &[u8]| {
    let backing = Backing::Memory { name: "table".into(), bytes: data.to_vec() };
    if let Ok(t) = TableFile::open(backing) {
        for a in t.addresses().iter().take(64) {
            let _ = t.read(a);
        }
    }
});
