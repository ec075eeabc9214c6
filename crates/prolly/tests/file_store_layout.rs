//! `store::file::layout::parse_tail`: a chunk file validated from its header and tail alone (as
//! remote readers fetch it) gives the index the file store reads, and rejects any flipped byte
//! of the tail.

use prollystore::format::HashProfile;
use prollystore::store::file::layout::{parse_tail, tail_len, write_chunk_file, HEADER_LEN};

#[test]
fn tail_gives_the_index_and_rejects_damage() {
    let dir = tempfile::tempdir().expect("tmp");
    let profile = HashProfile::Blake3;
    let chunks: Vec<Vec<u8>> = (0..50u32)
        .map(|i| format!("chunk number {i} {}", "y".repeat(i as usize)).into_bytes())
        .collect();
    let with_addresses: Vec<_> = chunks
        .iter()
        .map(|c| (profile.address_of(c), &c[..]))
        .collect();
    let path = dir.path().join("f.chunks");
    let (_, record) = write_chunk_file(&path, 1, profile, &with_addresses).expect("write");
    let bytes = std::fs::read(&path).expect("read");
    let tail_start = bytes.len() - tail_len(record.chunk_count).expect("tail") as usize;
    let header = &bytes[..HEADER_LEN as usize];
    let entries = parse_tail("f", &record, profile, header, &bytes[tail_start..]).expect("parse");
    assert_eq!(entries.len(), chunks.len());
    for e in &entries {
        let chunk = &bytes[e.offset as usize..e.offset as usize + e.len as usize];
        assert_eq!(profile.address_of(chunk), e.address);
    }
    for at in tail_start..bytes.len() {
        let mut bad = bytes[tail_start..].to_vec();
        bad[at - tail_start] ^= 0x01;
        assert!(
            parse_tail("f", &record, profile, header, &bad).is_err(),
            "a flipped byte at {at} went unnoticed"
        );
    }
    let mut bad_header = header.to_vec();
    bad_header[12] = 2;
    assert!(parse_tail("f", &record, profile, &bad_header, &bytes[tail_start..]).is_err());
}
