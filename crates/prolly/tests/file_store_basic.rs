//! Round trips, root compare-and-swap, reopen, refresh, locking, gc and compaction of the file
//! store, over synthetic chunks.

use prollystore::format::{Address, HashProfile};
use prollystore::store::file::{FileStore, OpenOptions, RootUpdate};
use prollystore::store::StoreError;

mod common;
use common::{children, node};

/// A synthetic chunk: `N`, a child count byte, the children's addresses, then `payload`.
fn modes() -> [OpenOptions; 2] {
    [OpenOptions::new(), OpenOptions::new().mmap(false)]
}

#[test]
fn put_get_commit_reopen() {
    for profile in [HashProfile::Blake3, HashProfile::Dolt] {
        let dir = tempfile::tempdir().unwrap();
        let mut w = FileStore::create(dir.path(), profile).unwrap();
        assert_eq!(w.profile(), profile);
        let chunks: Vec<Vec<u8>> = (0..100u32)
            .map(|i| node(&[], &i.to_le_bytes().repeat(i as usize + 1)))
            .collect();
        let addrs: Vec<Address> = chunks.iter().map(|c| w.put(c).unwrap()).collect();
        // Pending chunks are readable at once, through &self.
        for (a, c) in addrs.iter().zip(&chunks) {
            assert_eq!(w.get(a).unwrap(), Some(&c[..]));
            assert_eq!(*a, profile.address_of(c));
        }
        assert_eq!(w.pending_count(), 100);
        let g = w
            .commit(&[RootUpdate::new("main", None, Some(addrs[0]))])
            .unwrap();
        assert_eq!(g, 1);
        assert_eq!(w.pending_count(), 0);
        assert_eq!(w.chunk_count(), 100);
        // Putting a stored chunk again buffers nothing.
        w.put(&chunks[5]).unwrap();
        assert_eq!(w.pending_count(), 0);
        assert_eq!(w.get(&Address([7; 20])).unwrap(), None);
        drop(w);
        for opts in modes() {
            let r = opts.open(dir.path()).unwrap();
            assert_eq!(r.profile(), profile);
            assert_eq!(r.root("main"), Some(addrs[0]));
            assert_eq!(r.generation(), 1);
            for (a, c) in addrs.iter().zip(&chunks) {
                assert_eq!(r.get(a).unwrap(), Some(&c[..]));
                assert!(r.has(a).unwrap());
            }
            let rep = r.verify().unwrap();
            assert_eq!(rep.chunks, 100);
            assert!(matches!(r.put(b"x"), Err(StoreError::ReadOnly { .. })));
        }
    }
}

#[test]
fn profile_is_recorded_and_checked() {
    let dir = tempfile::tempdir().unwrap();
    drop(FileStore::create(dir.path(), HashProfile::Dolt).unwrap());
    let err = FileStore::create(dir.path(), HashProfile::Blake3).unwrap_err();
    assert!(matches!(err, StoreError::ProfileMismatch { .. }), "{err}");
    assert_eq!(
        FileStore::open(dir.path()).unwrap().profile(),
        HashProfile::Dolt
    );
    let empty = tempfile::tempdir().unwrap();
    assert!(FileStore::open(empty.path()).is_err());
    assert!(FileStore::open_writer(empty.path()).is_err());
}

#[test]
fn roots_compare_and_swap() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let a = w.put(b"a").unwrap();
    let b = w.put(b"b").unwrap();
    w.commit(&[RootUpdate::new("main", None, Some(a))]).unwrap();
    // Wrong expectation: nothing changes, pending chunks stay pending.
    let c = w.put(b"c").unwrap();
    let err = w
        .commit(&[
            RootUpdate::new("dev", None, Some(c)),
            RootUpdate::new("main", Some(b), Some(c)),
        ])
        .unwrap_err();
    match err {
        StoreError::RootConflict {
            name,
            expected,
            actual,
        } => {
            assert_eq!(name, "main");
            assert_eq!(expected, Some(b));
            assert_eq!(actual, Some(a));
        }
        e => panic!("{e}"),
    }
    assert_eq!(w.root("dev"), None);
    assert_eq!(w.pending_count(), 1);
    let err = w
        .commit(&[RootUpdate::new("main", None, Some(c))])
        .unwrap_err();
    assert!(matches!(err, StoreError::RootConflict { .. }));
    // A root must name a stored chunk.
    let err = w
        .commit(&[RootUpdate::new("x", None, Some(Address([9; 20])))])
        .unwrap_err();
    assert!(matches!(err, StoreError::Missing(_)));
    assert!(matches!(
        w.commit(&[RootUpdate::new("", None, Some(a))]),
        Err(StoreError::InvalidArgument(_))
    ));
    // Updates apply in order within one commit.
    w.commit(&[
        RootUpdate::new("main", Some(a), Some(b)),
        RootUpdate::new("main", Some(b), Some(c)),
        RootUpdate::new("dev", None, Some(a)),
    ])
    .unwrap();
    assert_eq!(w.root("main"), Some(c));
    // Delete.
    w.commit(&[RootUpdate::new("dev", Some(a), None)]).unwrap();
    let g = w.generation();
    // A commit with nothing to do writes nothing.
    assert_eq!(w.commit(&[]).unwrap(), g);
    drop(w);
    let r = FileStore::open(dir.path()).unwrap();
    let roots: Vec<(&str, Address)> = r.roots().iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(roots, vec![("main", c)]);
}

#[test]
fn one_writer_many_readers_and_refresh() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let err = FileStore::open_writer(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    assert!(err.to_string().contains("locked"));
    let a = w.put(b"one").unwrap();
    w.commit(&[RootUpdate::new("main", None, Some(a))]).unwrap();
    let mut r = FileStore::open(dir.path()).unwrap();
    let b = w.put(b"two").unwrap();
    w.commit(&[RootUpdate::new("main", Some(a), Some(b))])
        .unwrap();
    // The reader keeps its snapshot until refresh.
    assert_eq!(r.root("main"), Some(a));
    assert_eq!(r.get(&b).unwrap(), None);
    assert!(r.refresh().unwrap());
    assert_eq!(r.root("main"), Some(b));
    assert_eq!(r.get(&b).unwrap(), Some(&b"two"[..]));
    assert!(!r.refresh().unwrap());
    // Readers on threads.
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..1000 {
                    assert_eq!(r.get(&a).unwrap(), Some(&b"one"[..]));
                }
            });
        }
    });
    drop(w);
    // The lock is released with the writer.
    drop(FileStore::open_writer(dir.path()).unwrap());
}

#[test]
fn gc_keeps_reachable_and_drops_the_rest() {
    for opts in modes() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = opts
            .clone()
            .create(HashProfile::Blake3)
            .open(dir.path())
            .unwrap();
        let leaf1 = w.put(&node(&[], b"leaf1")).unwrap();
        let leaf2 = w.put(&node(&[], b"leaf2")).unwrap();
        let garbage1 = w.put(&node(&[], b"garbage1")).unwrap();
        let mid = w.put(&node(&[leaf1, Address::ZERO], b"mid")).unwrap();
        w.commit(&[]).unwrap();
        let root = w.put(&node(&[mid, leaf2], b"root")).unwrap();
        let garbage2 = w.put(&node(&[leaf1], b"garbage2")).unwrap();
        w.commit(&[RootUpdate::new("main", None, Some(root))])
            .unwrap();
        let other = w.put(&node(&[leaf2], b"other")).unwrap();
        w.commit(&[RootUpdate::new("other", None, Some(other))])
            .unwrap();
        assert_eq!(w.file_count(), 3);
        let mut reader = FileStore::open(dir.path()).unwrap();
        let stats = w.gc_with(children).unwrap();
        assert_eq!(stats.files_after, 1);
        assert_eq!(stats.chunks_before, 7);
        assert_eq!(stats.chunks_after, 5);
        for a in [leaf1, leaf2, mid, root, other] {
            assert!(w.get(&a).unwrap().is_some());
        }
        for a in [garbage1, garbage2] {
            assert_eq!(w.get(&a).unwrap(), None);
        }
        // An open reader keeps its snapshot, even though the old files are deleted.
        assert!(reader.get(&garbage1).unwrap().is_some());
        reader.verify().unwrap();
        assert!(reader.refresh().unwrap());
        assert_eq!(reader.get(&garbage1).unwrap(), None);
        let n = std::fs::read_dir(dir.path())
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".chunks")
            })
            .count();
        assert_eq!(n, 1);
        // Dropping every root empties the store.
        w.commit(&[
            RootUpdate::new("main", Some(root), None),
            RootUpdate::new("other", Some(other), None),
        ])
        .unwrap();
        w.gc_with(children).unwrap();
        assert_eq!(w.file_count(), 0);
        drop(w);
        assert_eq!(FileStore::open(dir.path()).unwrap().chunk_count(), 0);
    }
}

#[test]
fn gc_reports_missing_children() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let root = w.put(&node(&[Address([3; 20])], b"dangling")).unwrap();
    w.commit(&[RootUpdate::new("main", None, Some(root))])
        .unwrap();
    assert!(matches!(w.gc_with(children), Err(StoreError::Missing(_))));
    // Nothing was lost.
    assert!(w.get(&root).unwrap().is_some());
}

#[test]
fn compaction_merges_small_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let mut all = Vec::new();
    for i in 0..10u32 {
        let c = node(&[], &i.to_le_bytes());
        all.push((w.put(&c).unwrap(), c));
        w.commit(&[]).unwrap();
    }
    let big: Vec<u8> = vec![7; 100_000];
    all.push((w.put(&big).unwrap(), big));
    w.commit(&[]).unwrap();
    assert_eq!(w.file_count(), 11);
    let stats = w.compact(10_000).unwrap();
    assert_eq!(stats.files_after, 2);
    assert_eq!(stats.chunks_after, 10);
    drop(w);
    let r = FileStore::open(dir.path()).unwrap();
    assert_eq!(r.file_count(), 2);
    for (a, c) in &all {
        assert_eq!(r.get(a).unwrap(), Some(&c[..]));
    }
    r.verify().unwrap();
}

#[test]
fn leftovers_of_a_crash_are_removed_by_the_writer() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    w.put(b"x").unwrap();
    w.commit(&[]).unwrap();
    drop(w);
    std::fs::write(dir.path().join("00000000000000ff.chunks"), b"junk").unwrap();
    std::fs::write(dir.path().join("MANIFEST.tmp"), b"junk").unwrap();
    // Readers ignore them.
    FileStore::open(dir.path()).unwrap().verify().unwrap();
    drop(FileStore::open_writer(dir.path()).unwrap());
    assert!(!dir.path().join("00000000000000ff.chunks").exists());
    assert!(!dir.path().join("MANIFEST.tmp").exists());
    assert_eq!(FileStore::open(dir.path()).unwrap().chunk_count(), 1);
}

#[test]
fn a_lost_manifest_is_not_papered_over() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    w.put(b"precious").unwrap();
    w.commit(&[]).unwrap();
    drop(w);
    std::fs::remove_file(dir.path().join("MANIFEST")).unwrap();
    let err = FileStore::create(dir.path(), HashProfile::Blake3).unwrap_err();
    assert!(err.to_string().contains("MANIFEST"), "{err}");
    assert!(FileStore::open(dir.path()).is_err());
    // The chunk file is still there.
    assert!(std::fs::read_dir(dir.path()).unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".chunks")));
}

/// The temporary file pending chunks are streamed into (its name is not part of the format;
/// it ends with `.tmp` like every temporary file, which is what matters).
fn stream_file(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tmp"))
}

#[test]
fn puts_stream_to_a_temporary_file_that_a_commit_finishes_or_a_drop_deletes() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    assert!(stream_file(dir.path()).is_none());
    // Enough bytes for several writes and a writeback step.
    let chunks: Vec<Vec<u8>> = (0..3000u32)
        .map(|i| node(&[], &i.to_le_bytes().repeat(700 + i as usize % 900)))
        .collect();
    let addrs: Vec<Address> = chunks.iter().map(|c| w.put(c).unwrap()).collect();
    assert!(stream_file(dir.path()).is_some());
    w.commit(&[RootUpdate::new("main", None, Some(addrs[0]))])
        .unwrap();
    assert!(stream_file(dir.path()).is_none());
    assert_eq!(w.file_count(), 1);
    // Uncommitted puts leave nothing behind when the handle goes away.
    w.put(&node(&[], b"never committed")).unwrap();
    assert!(stream_file(dir.path()).is_some());
    drop(w);
    assert!(stream_file(dir.path()).is_none());
    for mode in modes() {
        let r = mode.open(dir.path()).unwrap();
        assert_eq!(r.chunk_count(), chunks.len() as u64);
        for (a, c) in addrs.iter().zip(&chunks) {
            assert_eq!(r.get(a).unwrap(), Some(&c[..]));
        }
        r.verify().unwrap();
    }
}

#[test]
fn gc_and_compaction_while_chunks_are_pending_keep_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = FileStore::create(dir.path(), HashProfile::Blake3).unwrap();
    let mut committed = Vec::new();
    for i in 0..3u32 {
        let c = node(&[], &i.to_le_bytes());
        committed.push((w.put(&c).unwrap(), c));
        w.commit(&[]).unwrap();
    }
    let root = committed[0].0;
    w.commit(&[RootUpdate::new("main", None, Some(root))])
        .unwrap();
    // Pending (streamed) chunks, then a compaction and a gc that write files of their own.
    let pending: Vec<(Address, Vec<u8>)> = (0..50u32)
        .map(|i| {
            let c = node(&[], &(1000 + i).to_le_bytes().repeat(300));
            (w.put(&c).unwrap(), c)
        })
        .collect();
    w.compact(10_000).unwrap();
    w.gc_with(children).unwrap();
    for (a, c) in &pending {
        assert_eq!(w.get(a).unwrap(), Some(&c[..]));
    }
    let top = pending[0].0;
    w.commit(&[RootUpdate::new("side", None, Some(top))])
        .unwrap();
    drop(w);
    let r = FileStore::open(dir.path()).unwrap();
    for (a, c) in pending.iter().chain(&committed[..1]) {
        assert_eq!(r.get(a).unwrap(), Some(&c[..]));
    }
    r.verify().unwrap();
}
