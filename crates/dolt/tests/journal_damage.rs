//! Damage to a chunk journal is read by Dolt's rule: a journal cut short (a torn tail) or with
//! damaged last records opens at its last readable root record, and damage followed by durable
//! records (a valid root record and another record after it) is refused as data loss. The
//! `dolt_cases` test checks each outcome against what Dolt 2.3.1 did with the same bytes.

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
    let (mut named_offset, mut by_later_records) = (0usize, 0usize);
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
            }
            Ok(got) if got == want => same += 1,
            Ok(got) => older.push((at, got)),
        }
        write_at(&journal_path, at as u64, journal[at]);
    }
    println!(
        "journal of {} bytes: {} single-bit flips, {errors} errors ({named_offset} naming the \
         journal and an offset; {by_later_records} by valid records after the damage), \
         {same} unchanged states, {} different states",
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
    // record opens at the root before it: Dolt's rule (the journal's last readable root wins,
    // and Dolt trues the manifest up to it; `cut_mid_last_root` in `data/journal_damage`).
    fs::copy(
        prollystore_test_vectors::require("dolt-db/vecdb_journal/.dolt/noms/manifest"),
        db.join(".dolt/noms/manifest"),
    )
    .unwrap();
    let last = full.roots.last().unwrap().offset;
    cut_to(last + 20);
    assert_eq!(
        Database::open(&db).unwrap().source().root(),
        full.roots[full.roots.len() - 2].root
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

/// The damage cases of `data/journal_damage/cases.txt` (made by `make_journal_damage.sh`, which
/// also recorded in `dolt.txt` what Dolt 2.3.1 does with each), applied to a copy of the
/// Dolt-made `base/` database.
mod dolt_cases {
    use std::collections::HashMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;

    use prollystore_dolt::write::{CommitMeta, DoltWriter};
    use prollystore_dolt::{Database, SqlValue};

    use super::{copy_dir, JOURNAL};

    fn data() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/journal_damage")
    }

    /// `NAME OP ARG...` lines.
    fn cases() -> Vec<(String, Vec<(String, String)>)> {
        let text = std::fs::read_to_string(data().join("cases.txt")).unwrap();
        text.lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                let ops = f[1..]
                    .chunks(2)
                    .map(|p| (p[0].to_string(), p[1].to_string()))
                    .collect();
                (f[0].to_string(), ops)
            })
            .collect()
    }

    /// `NAME WHAT REST` lines of `dolt.txt`, by (name, what).
    fn recorded() -> HashMap<(String, String), String> {
        let text = std::fs::read_to_string(data().join("dolt.txt")).unwrap();
        text.lines()
            .filter_map(|l| {
                let mut f = l.splitn(3, ' ');
                Some((
                    (f.next()?.to_string(), f.next()?.to_string()),
                    f.next().unwrap_or("").to_string(),
                ))
            })
            .collect()
    }

    /// A copy of `base/` with the case's damage applied (as `journal_damage.py apply` does).
    fn damaged(tmp: &Path, ops: &[(String, String)]) -> PathBuf {
        let db = tmp.join("db");
        copy_dir(&data().join("base"), &db);
        let journal = db.join(JOURNAL);
        let mut bytes = std::fs::read(&journal).unwrap();
        for (op, arg) in ops {
            match op.as_str() {
                "none" => {}
                "cut" => bytes.truncate(arg.parse().unwrap()),
                "xor" => bytes[arg.parse::<usize>().unwrap()] ^= 0x20,
                "append" => bytes.extend(
                    (0..arg.len())
                        .step_by(2)
                        .map(|i| u8::from_str_radix(&arg[i..i + 2], 16).unwrap()),
                ),
                "root" => {
                    let m = db.join(".dolt/noms/manifest");
                    let text = std::fs::read_to_string(&m).unwrap();
                    let mut fields: Vec<&str> = text.split(':').collect();
                    fields[3] = arg;
                    std::fs::write(&m, fields.join(":")).unwrap();
                }
                other => panic!("unknown op {other}"),
            }
        }
        std::fs::write(&journal, bytes).unwrap();
        db
    }

    /// The current branch's head commit, as `dolt log -n 1` names it.
    fn head(db: &Path) -> Result<String, String> {
        let d = Database::open(db).map_err(|e| e.to_string())?;
        let branch = d.current_branch().ok_or("no current branch")?;
        let heads = d.branches().map_err(|e| e.to_string())?;
        heads
            .iter()
            .find(|(name, _)| *name == branch)
            .map(|(_, h)| h.to_base32())
            .ok_or_else(|| format!("no branch {branch}"))
    }

    /// The write `make_journal_damage.sh` makes with Dolt, made with our writer.
    fn write(db: &Path) -> Result<String, String> {
        let mut w = DoltWriter::open(db).map_err(|e| e.to_string())?;
        w.insert(
            "t",
            &["id", "v"],
            &[vec![
                Some(SqlValue::Int(100)),
                Some(SqlValue::Text("w".into())),
            ]],
        )
        .map_err(|e| e.to_string())?;
        let commit = w
            .commit(&CommitMeta {
                message: "w".into(),
                author_name: "Test User".into(),
                author_email: "test@example.com".into(),
                author_millis: 1_704_412_800_000,
                committer: None,
                committer_millis: None,
            })
            .map_err(|e| e.to_string())?;
        Ok(commit.to_base32())
    }

    /// Runs Dolt (`PROLLY_DOLT`) in `db` with a throwaway HOME; `None` without it.
    fn dolt(db: &Path, args: &[&str]) -> Option<(bool, String)> {
        let bin = std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty())?;
        let home = db.parent().unwrap().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let out = Command::new(bin)
            .args(args)
            .current_dir(db)
            .env("HOME", &home)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).to_string()
            + &String::from_utf8_lossy(&out.stderr);
        Some((out.status.success(), text))
    }

    /// Dolt's `log -n 1` head, or its error.
    fn dolt_head(db: &Path) -> Option<Result<String, String>> {
        let (ok, text) = dolt(db, &["log", "--oneline", "-n", "1"])?;
        let strip = |s: &str| s.replace("\u{1b}[33m", "").replace("\u{1b}[0m", "");
        Some(if ok {
            let line = text.lines().find(|l| !l.starts_with("time=")).unwrap_or("");
            Ok(strip(line).split(' ').next().unwrap_or("").to_string())
        } else {
            Err(text)
        })
    }

    /// Every case opens where Dolt opens it (the same head commit) or is refused where Dolt
    /// refuses it (naming the same offset); a write after opening makes Dolt's commit, and a
    /// refused write leaves the files byte for byte as they were. With `PROLLY_DOLT`, Dolt is
    /// asked again about the damaged copies, and reads, fscks and logs what we wrote.
    #[test]
    fn damaged_journals_open_and_refuse_as_dolt_does() {
        let want = recorded();
        let mut checked = 0;
        for (name, ops) in cases() {
            let tmp = tempfile::tempdir().unwrap();
            let db = damaged(tmp.path(), &ops);
            let log = &want[&(name.clone(), "log".to_string())];
            let got = head(&db);
            match (log.strip_prefix("OK "), &got) {
                (Some(h), Ok(g)) => assert_eq!(g, h, "{name}: opened at another commit"),
                (None, Err(e)) => {
                    let offset = log.rsplit("at offset ").next().unwrap_or("");
                    let offset = offset.split(':').next().unwrap_or("");
                    assert!(
                        e.contains(&format!("offset {offset}")) && e.contains("data lost"),
                        "{name}: refused, but not as Dolt ({log}): {e}"
                    );
                }
                _ => panic!("{name}: Dolt says {log:?}, we say {got:?}"),
            }
            if let Some(live) = dolt_head(&damaged(&tmp.path().join("live"), &ops)) {
                assert_eq!(live.is_ok(), got.is_ok(), "{name}: live Dolt {live:?}");
                if let (Ok(a), Ok(b)) = (&live, &got) {
                    assert_eq!(a, b, "{name}: live Dolt");
                }
            }
            // A write.
            // (Taking the writer lock makes the `LOCK` file, as Dolt does.)
            std::fs::write(db.join(".dolt/noms/LOCK"), b"").unwrap();
            let before = snapshot(&db);
            let wrote = write(&db);
            let dolt_write = &want[&(name.clone(), "write".to_string())];
            match (dolt_write.strip_prefix("OK "), &wrote) {
                (Some(h), Ok(g)) => assert_eq!(g, h, "{name}: our commit differs from Dolt's"),
                (None, Err(_)) => assert!(
                    before == snapshot(&db),
                    "{name}: refused write changed files"
                ),
                _ => panic!("{name}: Dolt's write {dolt_write:?}, ours {wrote:?}"),
            }
            if let Ok(ours) = &wrote {
                assert_eq!(
                    head(&db).as_ref(),
                    Ok(ours),
                    "{name}: we do not read our write"
                );
                if let Some(live) = dolt_head(&db) {
                    assert_eq!(live.as_ref(), Ok(ours), "{name}: Dolt reading our write");
                    let (ok, text) = dolt(&db, &["fsck"]).unwrap();
                    assert!(ok, "{name}: dolt fsck after our write: {text}");
                }
            }
            checked += 1;
        }
        assert!(checked >= 15, "{checked} cases");
        println!("{checked} damaged journals opened, refused and written as Dolt 2.3.1 does");
    }

    /// Every file under `dir`, with its bytes.
    fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
        let mut out = Vec::new();
        let mut stack = vec![dir.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    stack.push(e.path());
                } else {
                    out.push((e.path(), std::fs::read(e.path()).unwrap()));
                }
            }
        }
        out.sort();
        out
    }
}
