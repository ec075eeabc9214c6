//! Damage to a real chunk journal never opens as an older database: every single-bit flip gives
//! an error or exactly the undamaged state, and a journal cut short (a torn tail) opens at its
//! last complete root record, as Dolt does.

use std::fs;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use prollystore_dolt::chunks::journal::scan_records;
use prollystore_dolt::{Database, DoltError};
use prollystore_format::message::Node;
use prollystore_format::Address;

const JOURNAL: &str = ".dolt/noms/vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv";

/// A writable copy of `dolt-db/vecdb_journal` in a fresh temporary folder.
fn copy_of_vector_db(tag: &str) -> PathBuf {
    let from = prollystore_test_vectors::require("dolt-db/vecdb_journal");
    let to = std::env::temp_dir().join(format!(
        "prolly-journal-damage-{tag}-{}",
        std::process::id()
    ));
    let _ = fs::remove_dir_all(&to);
    copy_dir(&from, &to);
    to
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
            let mut perms = fs::metadata(&target).unwrap().permissions();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            fs::set_permissions(&target, perms).unwrap();
        }
    }
}

/// What `prolly dolt` shows of the database: the current branch, every branch with its head
/// commit, and each head's tables with their row counts.
fn state(dir: &Path) -> Result<String, DoltError> {
    let db = Database::open(dir)?;
    let mut out = format!("current {:?}\n", db.current_branch());
    for (name, head) in db.branches()? {
        let commit = db.commit(head)?;
        out += &format!(
            "branch {name} {head} {:?} parents {:?}\n",
            commit.message, commit.parents
        );
        let root = db.root_value(commit.root)?;
        for (table, _) in &root.tables {
            let t = db.table(&root, table)?;
            let rows = Node::verify(&t.primary_index)
                .map_err(|e| DoltError::Unsupported(format!("table {table}: {e}")))?
                .tree_count();
            out += &format!("  table {table} {} rows {rows}\n", t.address);
        }
    }
    Ok(out)
}

fn write_at(path: &Path, offset: u64, byte: u8) {
    let mut f = fs::OpenOptions::new().write(true).open(path).unwrap();
    f.seek(SeekFrom::Start(offset)).unwrap();
    f.write_all(&[byte]).unwrap();
}

/// The offsets to flip: every byte of the first and last windows, a stride over the middle.
/// (Debug builds, where each open is slower, take a sparser sample.)
fn flip_offsets(len: usize) -> Vec<usize> {
    const WINDOW: usize = if cfg!(debug_assertions) { 512 } else { 4096 };
    const STRIDE: usize = if cfg!(debug_assertions) { 1031 } else { 131 };
    let mut out: Vec<usize> = (0..len.min(WINDOW)).collect();
    out.extend((WINDOW..len.saturating_sub(WINDOW)).step_by(STRIDE));
    out.extend(len.saturating_sub(WINDOW).max(WINDOW)..len);
    out
}

#[test]
fn every_flipped_bit_errors_or_changes_nothing() {
    let db = copy_of_vector_db("flip");
    let journal_path = db.join(JOURNAL);
    let journal = fs::read(&journal_path).unwrap();
    let want = state(&db).unwrap();
    let (mut errors, mut same, mut older) = (0usize, 0usize, Vec::new());
    let (mut named_offset, mut by_later_records, mut by_manifest) = (0usize, 0usize, 0usize);
    let offsets = flip_offsets(journal.len());
    for &at in &offsets {
        let bit = 1u8 << (at % 8);
        write_at(&journal_path, at as u64, journal[at] ^ bit);
        match state(&db) {
            Err(e) => {
                errors += 1;
                let text = e.to_string();
                if text.contains("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv") && text.contains("offset") {
                    named_offset += 1;
                }
                by_later_records += usize::from(text.contains("another valid record"));
                by_manifest += usize::from(text.contains("manifest's root"));
            }
            Ok(got) if got == want => same += 1,
            Ok(got) => older.push((at, got)),
        }
        write_at(&journal_path, at as u64, journal[at]);
    }
    println!(
        "journal of {} bytes: {} single-bit flips, {errors} errors ({named_offset} naming the \
         journal and an offset; {by_later_records} by valid records after the damage, \
         {by_manifest} by the manifest's root), {same} unchanged states, {} different states",
        journal.len(),
        offsets.len(),
        older.len()
    );
    let _ = fs::remove_dir_all(&db);
    assert!(
        older.is_empty(),
        "flips that opened as a different database: {:?}",
        older.iter().map(|(at, _)| at).collect::<Vec<_>>()
    );
}

/// Rewrites the manifest's root field, as a Dolt process that last opened the store at `root`
/// (and is still appending to its journal) would have left it.
fn set_manifest_root(db: &Path, root: &Address) {
    let path = db.join(".dolt/noms/manifest");
    let text = fs::read_to_string(&path).unwrap();
    let mut fields: Vec<String> = text.split(':').map(str::to_string).collect();
    fields[3] = root.to_base32();
    fs::write(&path, fields.join(":")).unwrap();
}

#[test]
fn a_torn_tail_opens_at_the_last_complete_root() {
    let db = copy_of_vector_db("torn");
    let journal_path = db.join(JOURNAL);
    let journal = fs::read(&journal_path).unwrap();
    let full = scan_records(&journal, 0, "journal").unwrap();
    let first_root = full.roots[0];
    set_manifest_root(&db, &first_root.root);
    // Record boundaries after the first root record, and cuts inside each record after it.
    let mut boundaries = Vec::new();
    let mut at = 0usize;
    while at < journal.len() {
        at += u32::from_be_bytes(journal[at..at + 4].try_into().unwrap()) as usize;
        if at as u64 > first_root.offset {
            boundaries.push(at as u64);
        }
    }
    let root_before = |cut: u64| {
        full.roots
            .iter()
            .rev()
            .find(|r| r.offset + 40 <= cut)
            .map(|r| r.root)
            .unwrap()
    };
    let mut states: std::collections::HashMap<Address, String> = Default::default();
    let mut checked = 0usize;
    let cut_to = |len: u64| {
        let f = fs::OpenOptions::new()
            .write(true)
            .open(&journal_path)
            .unwrap();
        f.set_len(len).unwrap();
    };
    for (i, &cut) in boundaries.iter().enumerate() {
        let mut cuts = vec![cut];
        if let Some(&prev) = i.checked_sub(1).and_then(|p| boundaries.get(p)) {
            // Inside the record that ends at `cut`: in its length, its fields, one byte short.
            cuts.extend([prev + 1, prev + 3, prev + 5, (prev + cut) / 2, cut - 1]);
        }
        for c in cuts {
            fs::write(&journal_path, &journal[..c as usize]).unwrap();
            let source = Database::open(&db).unwrap();
            let want_root = root_before(c);
            assert_eq!(source.source().root(), want_root, "cut at {c}");
            let got = state(&db).unwrap_or_else(|e| panic!("cut at {c}: {e}"));
            let want = states.entry(want_root).or_insert_with(|| got.clone());
            assert_eq!(&got, want, "cut at {c}");
            checked += 1;
        }
    }
    println!(
        "{checked} cuts of the journal opened at their last complete root record ({} distinct \
         states)",
        states.len()
    );
    // With the manifest a clean close leaves (naming the last root), a cut inside the last root
    // record lost a root that had been synced: an error naming the journal and the offset.
    fs::copy(
        prollystore_test_vectors::require("dolt-db/vecdb_journal/.dolt/noms/manifest"),
        db.join(".dolt/noms/manifest"),
    )
    .unwrap();
    let last = full.roots.last().unwrap().offset;
    cut_to(last + 20);
    let err = Database::open(&db).unwrap_err().to_string();
    assert!(
        err.contains("vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")
            && err.contains(&format!("offset {last}"))
            && err.contains("manifest's root"),
        "{err}"
    );
    // A cut exactly at a record boundary is a complete journal, as Dolt reads it.
    cut_to(last);
    assert_eq!(
        Database::open(&db).unwrap().source().root(),
        full.roots[full.roots.len() - 2].root
    );
    let _ = fs::remove_dir_all(&db);
}

/// A record with its length and CRC: a root record (kind 1) or a chunk record (kind 2).
fn record(kind: u8, fill: u8) -> Vec<u8> {
    let mut r = vec![0, 0, 0, 0, 1, kind, 2];
    r.extend_from_slice(&[fill; 20]);
    if kind == 1 {
        r.push(4);
        r.extend_from_slice(&1_700_000_000u64.to_be_bytes());
    } else {
        r.push(3);
        r.extend_from_slice(&[fill; 16]);
    }
    let len = (r.len() + 4) as u32;
    r[..4].copy_from_slice(&len.to_be_bytes());
    let crc = crc32c::crc32c(&r);
    r.extend_from_slice(&crc.to_be_bytes());
    r
}

/// Dolt's rule on synthetic journals: damage is a torn tail unless a valid root record and
/// another valid record follow it.
#[test]
fn damage_is_a_torn_tail_only_without_durable_records_after_it() {
    use prollystore_dolt::chunks::journal::ScanStop;
    let (root_a, chunk, root_b) = (record(1, 0xa1), record(2, 0xc1), record(1, 0xb1));
    let good = [root_a.clone(), chunk.clone(), root_b.clone()].concat();
    let damaged_at = root_a.len();
    let flip = |bytes: &[u8], at: usize| {
        let mut b = bytes.to_vec();
        b[at] ^= 0x20;
        b
    };
    // The chunk record damaged, a root after it but nothing after that: torn, at root A.
    let scan = scan_records(&flip(&good, damaged_at + 10), 0, "j").unwrap();
    assert_eq!(scan.stop, Some(ScanStop::BadChecksum));
    assert_eq!(scan.roots.len(), 1);
    assert_eq!(scan.end, damaged_at as u64);
    // One more valid record after root B: the journal was synced past the damage.
    let longer = [good.clone(), chunk.clone()].concat();
    for at in [
        damaged_at + 1,
        damaged_at + 3,
        damaged_at + 10,
        damaged_at + 30,
    ] {
        let err = scan_records(&flip(&longer, at), 100, "j")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&format!("offset {}", 100 + damaged_at)),
            "{err}"
        );
    }
    // Zero padding after the last record is a clean tail, and so is a record cut short.
    let padded = [good.clone(), vec![0; 100]].concat();
    assert_eq!(
        scan_records(&padded, 0, "j").unwrap().stop,
        Some(ScanStop::ZeroLength)
    );
    let cut = &longer[..longer.len() - 1];
    assert_eq!(
        scan_records(cut, 0, "j").unwrap().stop,
        Some(ScanStop::TruncatedTail)
    );
    // A length beyond any record, with durable records after it, is data loss too.
    let mut huge = longer.clone();
    huge[damaged_at] = 0xff;
    assert!(scan_records(&huge, 0, "j").is_err());
    // A tail crafted so that most positions claim a megabyte-long record: the check gives up
    // (an error) instead of taking time quadratic in the tail.
    let crafted: Vec<u8> = root_a
        .iter()
        .copied()
        .chain([0u8, 0, 0x10, 0].repeat(1 << 20))
        .collect();
    let started = std::time::Instant::now();
    let err = scan_records(&crafted, 0, "j").unwrap_err().to_string();
    assert!(err.contains("too many record-like lengths"), "{err}");
    println!("crafted 4 MiB tail refused in {:?}", started.elapsed());
}
