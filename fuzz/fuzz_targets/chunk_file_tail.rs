//! A chunk file's header and tail — what a remote store fetches with range reads before it
//! trusts a file — damaged and checked against a manifest record that may disagree:
//! `parse_tail` never panics, and an index it accepts has the record's chunk count, strictly
//! increasing addresses, and every chunk inside the file.
//!
//! The fuzzer starts from a small valid chunk file (built once) so it gets past the magic
//! numbers and the checksum; the input xors bytes of it, cuts it short, shortens the tail given
//! to the parser, or changes the record's fields.
#![no_main]

use std::sync::OnceLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use prollystore::format::HashProfile;
use prollystore::store::file::layout::{parse_tail, write_chunk_file, FileRecord};

#[derive(Arbitrary, Debug)]
struct Input {
    /// (offset from the end, value) pairs xored into the file.
    xors: Vec<(u16, u8)>,
    /// Bytes cut from the end of the file.
    cut: u8,
    /// Bytes left out of the start of the tail handed to the parser.
    tail_skip: u16,
    count_delta: i8,
    len_delta: i8,
    checksum_xor: u8,
}

const PROFILE: HashProfile = HashProfile::Blake3;

fn seed() -> &'static (Vec<u8>, FileRecord) {
    static SEED: OnceLock<(Vec<u8>, FileRecord)> = OnceLock::new();
    SEED.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("1.chunks");
        let chunks: Vec<Vec<u8>> = (0..9u8).map(|i| vec![i; 1 + usize::from(i) * 7]).collect();
        let mut items: Vec<_> = chunks
            .iter()
            .map(|c| (PROFILE.address_of(c), c.as_slice()))
            .collect();
        items.sort_by_key(|(a, _)| *a);
        let (_, record) = write_chunk_file(&path, 1, PROFILE, &items).expect("write");
        (std::fs::read(&path).expect("read"), record)
    })
}

fuzz_target!(|input: Input| {
    let (file, seed_record) = seed();
    let mut file = file.clone();
    file.truncate(file.len().saturating_sub(usize::from(input.cut)));
    let n = file.len();
    for (back, value) in input.xors {
        if let Some(i) = n.checked_sub(1 + usize::from(back)) {
            file[i] ^= value;
        }
    }
    let record = FileRecord {
        seq: 1,
        chunk_count: seed_record
            .chunk_count
            .wrapping_add_signed(i64::from(input.count_delta)),
        file_len: (n as u64).wrapping_add_signed(i64::from(input.len_delta)),
        checksum: seed_record.checksum ^ u64::from(input.checksum_xor),
    };
    let header = &file[..n.min(16)];
    let tail = &file[n.min(16 + usize::from(input.tail_skip))..];
    let Ok(index) = parse_tail("1.chunks", &record, PROFILE, header, tail) else {
        return;
    };
    assert_eq!(index.len() as u64, record.chunk_count);
    for pair in index.windows(2) {
        assert!(pair[0].address < pair[1].address, "index not by increasing address");
    }
    for e in &index {
        let end = e.offset.checked_add(u64::from(e.len)).expect("chunk end overflows");
        assert!(e.offset >= 16 && end <= record.file_len, "chunk outside the file: {e:?}");
    }
});
