//! Chunk journal and journal.idx parsing over arbitrary bytes. The first byte splits the input
//! into an index part and a journal part; every chunk found must read (or fail) without a panic.
//! The record codec is checked too: the journal part framed and decoded as one record, and the
//! input encoded as a chunk record and a root record that must decode to what was encoded.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_dolt::chunks::codec::Backing;
use prollystore_dolt::chunks::journal::{parse_index, scan_records, Journal};
use prollystore_dolt::chunks::journal_record::{self as record, Record};
use prollystore_format::Address;

fuzz_target!(|data: &[u8]| {
    let Some((&split, rest)) = data.split_first() else { return };
    let cut = (usize::from(split) * 8).min(rest.len());
    let (idx, journal) = if split == 0 { (&[][..], rest) } else { rest.split_at(cut) };
    let _ = scan_records(journal, 0, "journal");
    if let Ok(framed) = record::frame(journal) {
        let _ = record::decode(framed);
    }
    let address = Address::from_slice(&[split; 20]).unwrap_or_default();
    let mut encoded = Vec::new();
    if record::chunk_record(address, rest, &mut encoded).is_ok() {
        encoded.extend_from_slice(&record::root_record(address, u64::from(split)));
        let framed = record::frame(&encoded).expect("an encoded chunk record frames");
        match record::decode(framed) {
            Ok(Record::Chunk { address: a, .. }) => assert_eq!(a, address),
            other => panic!("an encoded chunk record decoded as {other:?}"),
        }
        let root = record::frame(&encoded[framed.len()..]).expect("an encoded root record frames");
        assert_eq!(
            record::decode(root),
            Ok(Record::Root { root: address, timestamp: Some(u64::from(split)) })
        );
    }
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
