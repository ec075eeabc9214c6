//! Every chunk file of every vector database opens and every chunk hashes to its address.

use prollystore::store::ChunkStore;
use prollystore_dolt::chunks::journal::{parse_index, scan_records};
use prollystore_dolt::DoltChunkSource;

#[test]
fn every_chunk_of_every_database_reads_and_hashes() {
    let dir = prollystore_test_vectors::require("dolt-db");
    for db in prollystore_test_vectors::DOLT_DATABASES {
        for noms in [
            dir.join(db).join(".dolt/noms"),
            dir.join(db).join(".dolt/stats/.dolt/noms"),
        ] {
            let src = DoltChunkSource::open(&noms).unwrap();
            let all = src.all_addresses().unwrap();
            let manifest_total: u32 = [src.newgen(), src.oldgen()]
                .iter()
                .flat_map(|g| g.manifest.iter().flat_map(|m| &m.specs))
                .map(|s| s.chunk_count)
                .sum();
            // A journal may hold more chunks than the manifest last recorded (the journal is the
            // truth); table files and archives match exactly.
            assert!(all.len() as u32 >= manifest_total, "{}", noms.display());
            if !noms.join("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv").exists() {
                assert_eq!(all.len() as u32, manifest_total, "{}", noms.display());
            }
            for (file, a) in &all {
                let c = src.chunk(a).unwrap_or_else(|e| panic!("{file}: {e}"));
                assert!(!c.is_empty());
            }
            // The trait path too, and the root is present.
            if !src.root().is_zero() {
                assert!(src.get(&src.root()).unwrap().is_some(), "{db} root");
            }
            assert!(src.put(b"x").is_err());
        }
    }
}

#[test]
fn journal_index_agrees_with_a_full_scan() {
    let dir = prollystore_test_vectors::require("dolt-db");
    let noms = dir.join("vecdb_journal/.dolt/noms");
    let journal = std::fs::read(noms.join("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")).unwrap();
    let idx = std::fs::read(noms.join("journal.idx")).unwrap();
    let scan = scan_records(&journal, 0, "journal").unwrap();
    // The shipped index holds only lookups with no closing batch record, which Dolt ignores.
    let index = parse_index(&idx, "journal.idx").unwrap();
    assert!(index.lookups.is_empty());
    assert_eq!(index.covered_end, 0);
    assert_eq!(idx.len() % 29, 0);
    for (p, loc) in &index.lookups {
        let found = scan
            .chunks
            .iter()
            .find(|(a, _)| &a.as_bytes()[..16] == p)
            .expect("indexed chunk is in the journal");
        assert_eq!(&found.1, loc);
    }
    let manifest = prollystore_dolt::chunks::manifest::Manifest::parse(
        &std::fs::read(noms.join("manifest")).unwrap(),
        "m",
    )
    .unwrap();
    assert_eq!(scan.roots.last().unwrap().root, manifest.root);
    assert_eq!(scan.chunks.len() as u32, manifest.specs[0].chunk_count);
    println!(
        "journal: {} chunks, {} roots, idx covers {} lookups up to {}, stop {:?}",
        scan.chunks.len(),
        scan.roots.len(),
        index.lookups.len(),
        index.covered_end,
        scan.stop
    );
}

/// Builds a journal.idx with one complete batch covering the journal up to its second-to-last
/// root record, and checks that opening through it finds the same chunks and root.
#[test]
fn journal_opens_through_a_complete_index_batch() {
    use prollystore_dolt::chunks::codec::Backing;
    use prollystore_dolt::chunks::journal::Journal;
    let dir = prollystore_test_vectors::require("dolt-db");
    let noms = dir.join("vecdb_journal/.dolt/noms");
    let journal = std::fs::read(noms.join("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")).unwrap();
    let scan = scan_records(&journal, 0, "journal").unwrap();
    let cut = scan.roots[scan.roots.len() - 2];
    let mut idx = Vec::new();
    let mut crc = 0u32;
    for (a, loc) in scan
        .chunks
        .iter()
        .filter(|(_, l)| l.payload_offset < cut.offset)
    {
        idx.push(0u8);
        idx.extend_from_slice(&a.as_bytes()[..16]);
        idx.extend_from_slice(&loc.payload_offset.to_be_bytes());
        idx.extend_from_slice(&loc.payload_len.to_be_bytes());
        crc = crc32c::crc32c_append(crc, &a.as_bytes()[..16]);
    }
    idx.push(1);
    idx.extend_from_slice(&0u64.to_be_bytes());
    idx.extend_from_slice(&cut.offset.to_be_bytes());
    idx.extend_from_slice(&crc.to_be_bytes());
    idx.extend_from_slice(cut.root.as_bytes());
    let parsed = parse_index(&idx, "idx").unwrap();
    assert_eq!(parsed.covered_end, cut.offset);
    let j = Journal::open(
        Backing::Memory {
            name: "journal".into(),
            bytes: journal.clone(),
        },
        Some(&idx),
    )
    .unwrap();
    assert_eq!(j.root(), Some(scan.roots.last().unwrap().root));
    let mut got = j.addresses().unwrap();
    got.sort();
    let mut want: Vec<_> = scan.chunks.iter().map(|(a, _)| *a).collect();
    want.sort();
    assert_eq!(got, want);
    for a in &want {
        assert!(j.read(a).unwrap().is_some());
    }
    // A truncated journal opens at its last complete record.
    let cut_at = scan.chunks[10].1.payload_offset as usize + 3;
    let t = Journal::open(
        Backing::Memory {
            name: "journal".into(),
            bytes: journal[..cut_at].to_vec(),
        },
        None,
    )
    .unwrap();
    assert_eq!(
        t.stop(),
        Some(&prollystore_dolt::chunks::journal::ScanStop::TruncatedTail)
    );
}

/// Flipped and truncated bytes in each file form give errors naming the file and an offset,
/// never a panic.
#[test]
fn corrupted_files_report_file_and_offset() {
    use prollystore_dolt::chunks::archive::Archive;
    use prollystore_dolt::chunks::codec::Backing;
    use prollystore_dolt::chunks::table_file::TableFile;
    let dir = prollystore_test_vectors::require("dolt-db");
    let table =
        std::fs::read(dir.join("vecdb_tablefiles/.dolt/noms/ohffsgnklo90ert6t5a4r1bu6hc490f3"))
            .unwrap();
    let archive =
        std::fs::read(dir.join("vecdb/.dolt/noms/ts12hs5ru7fjg2osua3eqi1os3ficbav.darc")).unwrap();
    let mem = |name: &str, bytes: Vec<u8>| Backing::Memory {
        name: name.into(),
        bytes,
    };
    // Truncations: every length fails cleanly or opens.
    for cut in 0..table.len() {
        let _ = TableFile::open(mem("t", table[..cut].to_vec()));
    }
    for cut in 0..archive.len() {
        let _ = Archive::open(mem("a", archive[..cut].to_vec()));
    }
    // A flipped byte inside the first record: the CRC catches it on read.
    let mut bad = table.clone();
    bad[10] ^= 0x40;
    let t = TableFile::open(mem("bad-table", bad)).unwrap();
    let errors: Vec<String> = t
        .addresses()
        .iter()
        .filter_map(|a| t.read(a).err().map(|e| e.to_string()))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("bad-table") && errors[0].contains("offset 0"),
        "{}",
        errors[0]
    );
    let mut bad = archive.clone();
    bad[5] ^= 0x01;
    let a = Archive::open(mem("bad-archive", bad)).unwrap();
    let errors: Vec<String> = a
        .addresses()
        .iter()
        .filter_map(|x| a.read(x).err().map(|e| e.to_string()))
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("bad-archive"), "{}", errors[0]);
}

/// The bulk read path (record spans, unchecked reads, addresses checked many at once) gives
/// the same bytes as the checked one for every chunk of every database, and a chunk that does
/// not hash to its address is reported with its file, whatever its place in the group.
#[test]
fn bulk_reads_and_address_checks() {
    use prollystore_dolt::DoltError;
    let dir = prollystore_test_vectors::require("dolt-db");
    for db in prollystore_test_vectors::DOLT_DATABASES {
        let src = DoltChunkSource::open(&dir.join(db).join(".dolt/noms")).unwrap();
        let addresses: Vec<_> = src
            .all_addresses()
            .unwrap()
            .into_iter()
            .map(|(_, a)| a)
            .collect();
        let (mut scratch, mut span_bytes) = (Vec::new(), Vec::new());
        let mut chunks = Vec::new();
        for a in &addresses {
            let mut out = Vec::new();
            assert!(src.read_into_unchecked(a, &mut scratch, &mut out).unwrap());
            let mut checked = Vec::new();
            assert!(src.read_into(a, &mut scratch, &mut checked).unwrap());
            assert_eq!(out, checked);
            assert_eq!(&out[..], &src.chunk(a).unwrap()[..]);
            if let Some(span) = src.record_span(a) {
                src.read_span(span.file, span.offset, span.len, &mut span_bytes)
                    .unwrap();
                let mut decoded = Vec::new();
                src.decode_record_into(span.file, &span_bytes, span.offset, &mut decoded)
                    .unwrap();
                assert_eq!(decoded, out, "{db}: {a}");
            }
            chunks.push(out);
        }
        let refs: Vec<&[u8]> = chunks.iter().map(|c| &c[..]).collect();
        src.check_addresses(&addresses, &refs).unwrap();
        for wrong in [0, addresses.len() / 2, addresses.len() - 1] {
            let mut bad = addresses.clone();
            bad.swap(wrong, (wrong + 1) % addresses.len());
            match src.check_addresses(&bad, &refs) {
                Err(DoltError::HashMismatch {
                    address, actual, ..
                }) => {
                    assert_ne!(address, actual);
                }
                other => panic!("{db}: expected a hash mismatch, got {other:?}"),
            }
        }
        // With hash checks off the check passes (the CRC-32C was checked on read).
        let unchecked = DoltChunkSource::open(&dir.join(db).join(".dolt/noms"))
            .unwrap()
            .with_verify_hashes(false);
        let mut bad = addresses.clone();
        bad.swap(0, 1);
        unchecked.check_addresses(&bad, &refs).unwrap();
    }
}

/// The batch a writer adds to `journal.idx` (`Journal::index_batch`) is read back by
/// `Journal::open`, which then scans only the records after it, with the same root and chunks
/// as a full scan; an index that does not fit the journal (its root record not where its last
/// batch ends, or lookups past it) is ignored and the whole journal scanned, as Dolt ignores
/// it.
#[test]
fn written_index_batches_are_read_and_stale_ones_ignored() {
    use prollystore_dolt::chunks::codec::Backing;
    use prollystore_dolt::chunks::journal::{extend_index, Journal};
    let dir = prollystore_test_vectors::require("dolt-db");
    let noms = dir.join("vecdb_journal/.dolt/noms");
    let journal = std::fs::read(noms.join("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")).unwrap();
    let scan = scan_records(&journal, 0, "journal").unwrap();
    let open = |bytes: &[u8], idx: Option<&[u8]>| {
        Journal::open(
            Backing::Memory {
                name: "journal".into(),
                bytes: bytes.to_vec(),
            },
            idx,
        )
        .unwrap()
    };
    let sorted = |j: &Journal| {
        let mut a = j.addresses().unwrap();
        a.sort();
        a
    };
    let full = open(&journal, None);
    assert!(full.index_batch(usize::MAX).is_none());
    let (keep, batch) = full.index_batch(1).unwrap();
    assert_eq!(keep, 0);
    let parsed = parse_index(&batch, "idx").unwrap();
    let last = *scan.roots.last().unwrap();
    assert_eq!(parsed.covered_end, last.offset);
    assert_eq!(parsed.root, Some(last.root));
    assert_eq!(parsed.valid_len, batch.len() as u64);
    // Written to a file after a partial batch, which is dropped.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("journal.idx");
    std::fs::write(&path, [0u8; 40]).unwrap();
    extend_index(&path, keep, &batch).unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), batch);
    let through = open(&journal, Some(&batch));
    assert_eq!(through.root(), full.root());
    assert_eq!(sorted(&through), sorted(&full));
    assert!(through.root_records().len() < full.root_records().len());
    // Nothing after the batch but its root record: no second batch.
    assert!(through.index_batch(1).is_none());
    // Stale: the root the batch names is not at its end.
    let mut stale = batch.clone();
    let n = stale.len();
    stale[n - 1] ^= 1;
    let s = open(&journal, Some(&stale));
    assert_eq!(s.root(), full.root());
    assert_eq!(s.root_records().len(), full.root_records().len());
    // From a longer journal: this one ends before the batch does.
    let cut = scan.roots[scan.roots.len() - 2];
    let short =
        &journal[..cut.offset as usize + prollystore_dolt::chunks::journal_record::ROOT_RECORD_LEN];
    let s = open(short, Some(&batch));
    assert_eq!(s.root(), Some(cut.root));
    assert_eq!(s.index_batch(1).unwrap().0, 0);
}
