//! Chunk journal and journal.idx parsing over arbitrary bytes. The first byte splits the input
//! into an index part and a journal part; every chunk found must read (or fail) without a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_dolt::chunks::codec::Backing;
use prollystore_dolt::chunks::journal::{parse_index, scan_records, Journal};

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else { return };
    let cut = (usize::from(split) * 8).min(rest.len());
    let (idx, journal) = if split == 0 { (&[][..], rest) } else { rest.split_at(cut) };
    let _ = scan_records(journal, 0, "journal");
    let _ = parse_index(idx, "journal.idx");
    let backing = Backing::Memory { name: "journal".into(), bytes: journal.to_vec() };
    let index = if idx.is_empty() { None } else { Some(idx) };
    if let Ok(j) = Journal::open(backing, index) {
        std::hint::black_box(j.root());
        if let Ok(addrs) = j.addresses() {
            for a in addrs.iter().take(64) {
                let _ = j.read(a);
            }
        }
    }
});
