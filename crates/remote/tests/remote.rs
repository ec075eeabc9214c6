//! Push, pull, clone and read-in-place against a real MinIO server (started by the tests; see
//! `support`) and against a `file://` directory. Without a MinIO binary the MinIO half is
//! skipped loudly, unless CI is set (then it fails).

mod support;

use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::Duration;

use prollystore::format::{Address, HashProfile};
use prollystore::store::RootUpdate;
use prollystore::{ChunkStore, FileStore, Map};
use prollystore_remote::{
    clone, gc, prepare_push, pull, push, tracking_root, RemoteError, RemoteStore,
};
use support::*;

/// One test at a time: each may start a MinIO server, and the machine is small.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn open_remote_store(b: &Backend, prefix: &str) -> RemoteStore {
    RemoteStore::from_remote(b.remote(prefix), 16 << 20).expect("open remote store")
}

#[test]
fn push_clone_pull_round_trip() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        let mut a = make_store(
            &work.path().join("a"),
            &[("m1", 20_000, 1), ("m2", 3_000, 2)],
        );
        let remote = b.remote("rt");
        let report = push(&remote, &mut a, "origin", &[]).expect("push");
        assert_eq!(report.maps.len(), 2, "{}", b.name());
        assert_eq!(
            report.chunks,
            a.chunk_count(),
            "first push sends every chunk"
        );
        let cloned = clone(&remote, work.path().join("c")).expect("clone");
        for m in ["m1", "m2"] {
            assert_eq!(cloned.root(m), a.root(m), "{} root of {m}", b.name());
            let r = a.root(m).expect("root");
            assert_eq!(rows(&cloned, r), rows(&a, r), "{} rows of {m}", b.name());
        }
        assert_eq!(cloned.root(&tracking_root("origin", "m1")), a.root("m1"));
        drop(cloned);
        // Change a map in A, push, pull into the clone.
        let new = edit_map(&mut a, "m1", 20, 20_000, 3);
        push(&remote, &mut a, "origin", &["m1".to_string()]).expect("second push");
        let mut c = FileStore::open_writer(work.path().join("c")).expect("reopen clone");
        let before = c.chunk_count();
        let pulled = pull(&remote, &mut c, "origin").expect("pull");
        assert_eq!(pulled.updated.get("m1"), Some(&new), "{}", b.name());
        assert!(pulled.diverged.is_empty());
        assert!(
            pulled.chunks > 0 && pulled.chunks < before / 2,
            "pull fetched only new chunks: {} of {before}",
            pulled.chunks
        );
        assert_eq!(rows(&c, new), rows(&a, new));
        // Pulling again moves nothing.
        let again = pull(&remote, &mut c, "origin").expect("pull again");
        assert_eq!((again.chunks, again.updated.len()), (0, 0));
        c.verify().expect("the clone verifies");
    }
}

#[test]
fn incremental_push_moves_only_new_chunks() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        let mut a = make_store(&work.path().join("a"), &[("m", 50_000, 1)]);
        let remote = b.remote("inc");
        push(&remote, &mut a, "origin", &[]).expect("push");
        edit_map(&mut a, "m", 1_000, 50_000, 2);
        let reader = RemoteStore::from_remote(b.remote("inc"), 1 << 20).expect("open");
        let changed = bytes_missing_from(&a, &reader);
        let before = remote.stats().bytes_out;
        let report = push(&remote, &mut a, "origin", &[]).expect("incremental push");
        let moved = remote.stats().bytes_out - before;
        assert_eq!(
            report.chunk_bytes,
            changed,
            "{}: exactly the chunks the remote lacked",
            b.name()
        );
        assert!(
            moved <= 2 * changed,
            "{}: moved {moved} bytes for {changed} changed",
            b.name()
        );
        eprintln!(
            "{}: incremental push moved {moved} bytes, changed chunks {changed} bytes",
            b.name()
        );
    }
}

#[test]
fn pushing_named_maps_uploads_only_what_they_reach() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        // Both maps in one chunk file, so the push must pick chunks out of it.
        let mut a = FileStore::create(work.path().join("a"), HashProfile::Blake3).expect("a");
        let (r1, r2) = (build_map(&a, 20_000, 1), build_map(&a, 5_000, 2));
        a.commit(&[
            RootUpdate::new("m1", None, Some(r1)),
            RootUpdate::new("m2", None, Some(r2)),
        ])
        .expect("commit");
        assert_eq!(a.file_count(), 1);
        let only_m2 = make_store(&work.path().join("m2"), &[("m2", 5_000, 2)]).chunk_count();
        let remote = b.remote("named");
        let report = push(&remote, &mut a, "origin", &["m2".to_string()]).expect("push m2");
        assert_eq!(
            report.chunks,
            only_m2,
            "{}: the chunks m2 reaches",
            b.name()
        );
        assert!(report.chunks < a.chunk_count() / 2);
        let c = clone(&remote, work.path().join("c")).expect("clone");
        assert_eq!((c.root("m1"), c.root("m2")), (None, Some(r2)));
        assert_eq!(c.chunk_count(), only_m2);
        assert_eq!(rows(&c, r2), rows(&a, r2));
        drop(c);
        // The rest follows with a push of everything.
        let all = push(&remote, &mut a, "origin", &[]).expect("push all");
        assert_eq!(all.chunks, a.chunk_count() - only_m2, "{}", b.name());
        let c = clone(&remote, work.path().join("c2")).expect("clone all");
        assert_eq!(rows(&c, r1), rows(&a, r1));
        c.verify().expect("the clone verifies");
    }
}

#[test]
fn gc_deletes_old_orphans_and_spares_a_racing_push() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        let remote = b.remote("gc");
        let mut a = make_store(&work.path().join("a"), &[("m", 3_000, 1)]);
        push(&remote, &mut a, "origin", &[]).expect("push a");
        // An interrupted push leaves an orphan.
        let o = make_store(&work.path().join("o"), &[("p", 2_000, 2)]);
        drop(prepare_push(&remote, &o, "origin", &[]).expect("orphaned push"));
        // A push under way: uploaded, not yet named by the manifest.
        let mut c = make_store(&work.path().join("c"), &[("n", 2_000, 3)]);
        let racing = prepare_push(&remote, &c, "origin", &[]).expect("racing push");
        let kept = gc(&remote, Duration::from_secs(600)).expect("gc with a grace period");
        assert_eq!(
            (kept.live_files, kept.deleted_files, kept.young_orphans),
            (1, 0, 2),
            "{}: both unnamed files are younger than the grace period",
            b.name()
        );
        racing.commit(&mut c).expect("the racing push completes");
        // Object times may have a coarse resolution: let the orphan age past a zero grace.
        std::thread::sleep(Duration::from_millis(1100));
        let swept = gc(&remote, Duration::ZERO).expect("gc");
        assert_eq!(
            (swept.live_files, swept.deleted_files),
            (2, 1),
            "{}: only the orphan goes",
            b.name()
        );
        assert!(swept.deleted_bytes > 0);
        let cloned = clone(&remote, work.path().join("clone")).expect("clone after gc");
        for (m, store) in [("m", &a), ("n", &c)] {
            let r = store.root(m).expect("root");
            assert_eq!(cloned.root(m), Some(r));
            assert_eq!(
                rows(&cloned, r),
                rows(store, r),
                "{}: rows of {m}",
                b.name()
            );
        }
        cloned.verify().expect("the clone verifies");
        let again = gc(&remote, Duration::ZERO).expect("gc again");
        assert_eq!((again.deleted_files, again.young_orphans), (0, 0));
    }
}

#[test]
fn read_in_place_matches_local() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        let mut a = make_store(&work.path().join("a"), &[("m", 60_000, 1)]);
        let old = a.root("m").expect("root");
        let new = edit_map(&mut a, "m", 300, 60_000, 2);
        let mut a2 = a;
        set_root(&mut a2, "old", old);
        let a = a2;
        let remote = b.remote("rip");
        let mut a = a;
        push(&remote, &mut a, "origin", &[]).expect("push");
        // A cold point get: open, then count the round trips of one get.
        let store = open_remote_store(&b, "rip");
        let open_trips = store.stats().round_trips;
        let map = Map::new(&store, store.root("m").expect("remote root"), schema());
        let got = map.get(&key(12_345)).expect("get").map(<[u8]>::to_vec);
        let local = Map::new(&a, new, schema());
        assert_eq!(got.as_deref(), local.get(&key(12_345)).expect("local get"));
        let get_trips = store.stats().round_trips - open_trips;
        let height = local.height().expect("height");
        eprintln!(
            "{}: open {open_trips} round trips, cold get {get_trips} (tree height {height})",
            b.name()
        );
        assert_eq!(
            open_trips, 3,
            "open: manifest, every index in parallel, every root node"
        );
        assert!(
            get_trips <= u64::from(height),
            "a cold get costs at most one round trip per level below the root"
        );
        // Scans and diffs equal the local ones; the scan prefetches, so it takes far fewer
        // round trips than leaves.
        let before = store.stats().round_trips;
        assert_eq!(rows(&store, new), rows(&a, new), "{}", b.name());
        let scan_trips = store.stats().round_trips - before;
        eprintln!("{}: full scan {scan_trips} round trips", b.name());
        let diff = |s: &dyn Fn() -> Vec<String>| s();
        let remote_diff = diff(&|| {
            Map::new(&store, old, schema())
                .diff(&Map::new(&store, new, schema()))
                .expect("diff")
                .map(|d| format!("{:?}", d.expect("diff entry")))
                .collect()
        });
        let local_diff: Vec<String> = Map::new(&a, old, schema())
            .diff(&Map::new(&a, new, schema()))
            .expect("diff")
            .map(|d| format!("{:?}", d.expect("diff entry")))
            .collect();
        assert_eq!(remote_diff, local_diff);
        assert!(!local_diff.is_empty());
        assert!(store.put(b"x").is_err(), "read-only");
    }
}

#[test]
fn bounded_cache_scans_a_bigger_store_within_its_budget() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        let mut a = make_store(&work.path().join("a"), &[("m", 100_000, 1)]);
        let root = a.root("m").expect("root");
        let remote = b.remote("bounded");
        push(&remote, &mut a, "origin", &[]).expect("push");
        let store_bytes: u64 = a.chunk_files().map(|(f, _)| f.file_len).sum();
        let budget = 256 << 10;
        let mut store = RemoteStore::from_remote(b.remote("bounded"), budget).expect("open");
        assert!(
            store_bytes > 8 * budget as u64,
            "the store is far bigger than the budget"
        );
        // A point get, then a bounded scan of everything, which evicts that get's leaf.
        let probe = key(54_321);
        let want = Map::new(&a, root, schema())
            .get(&probe)
            .expect("local get")
            .map(<[u8]>::to_vec);
        let got = Map::new(&store, root, schema())
            .get(&probe)
            .expect("get")
            .map(<[u8]>::to_vec);
        assert_eq!(got, want);
        store.trim();
        store.reset_peak();
        let before = store.stats();
        let mut scanned = Vec::new();
        let n = store
            .scan(
                root,
                schema(),
                Bound::Unbounded,
                Bound::Unbounded,
                |_, k, v| {
                    scanned.push((k.to_vec(), v.to_vec()));
                    true
                },
            )
            .expect("bounded scan");
        let after = store.stats();
        assert_eq!(n, 100_000);
        assert_eq!(
            scanned,
            rows(&a, root),
            "{}: the bounded scan is correct",
            b.name()
        );
        eprintln!(
            "{}: bounded scan of a {store_bytes}-byte store: peak {} bytes held (budget {budget}), \
             {} round trips, {} bytes fetched",
            b.name(),
            store.peak_bytes(),
            after.round_trips - before.round_trips,
            after.bytes_in - before.bytes_in,
        );
        assert!(
            store.peak_bytes() <= budget,
            "{}: peak {} over the budget {budget}",
            b.name(),
            store.peak_bytes()
        );
        assert!(store.held_bytes() <= budget);
        // The leaf of the first get was evicted: getting it again fetches it.
        let before = store.stats().round_trips;
        let again = Map::new(&store, root, schema())
            .get(&probe)
            .expect("get after eviction")
            .map(<[u8]>::to_vec);
        assert_eq!(again, want);
        assert!(
            store.stats().round_trips > before,
            "a get after eviction refetches"
        );
        // ... and at the next safe point it stays (most recently used), so a repeat is free.
        store.trim();
        let before = store.stats().round_trips;
        let third = Map::new(&store, root, schema())
            .get(&probe)
            .expect("warm get")
            .map(<[u8]>::to_vec);
        assert_eq!(third, want);
        assert_eq!(
            store.stats().round_trips,
            before,
            "recently used chunks stay cached"
        );
        // Stopping early and a range.
        let mut first = Vec::new();
        store
            .scan(
                root,
                schema(),
                Bound::Included(&key(500)),
                Bound::Excluded(&key(700)),
                |_, k, _| {
                    first.push(k.to_vec());
                    first.len() < 150
                },
            )
            .expect("range scan");
        assert_eq!(first, (500..650).map(key).collect::<Vec<_>>());
    }
}

#[test]
fn racing_pushers_one_wins_and_nothing_is_lost() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        let mut a = make_store(&work.path().join("a"), &[("x", 5_000, 1), ("y", 5_000, 1)]);
        let remote = b.remote("race");
        push(&remote, &mut a, "origin", &[]).expect("seed push");
        let mut w1 = clone(&remote, work.path().join("w1")).expect("clone 1");
        let mut w2 = clone(&remote, work.path().join("w2")).expect("clone 2");
        let x1 = edit_map(&mut w1, "x", 100, 5_000, 2);
        let y2 = edit_map(&mut w2, "y", 100, 5_000, 3);
        let r1 = b.remote("race");
        let r2 = b.remote("race");
        // Both read the same manifest and upload, then both try to swap it.
        let p1 = prepare_push(&r1, &w1, "origin", &[]).expect("prepare 1");
        let p2 = prepare_push(&r2, &w2, "origin", &[]).expect("prepare 2");
        p1.commit(&mut w1).expect("the first swap wins");
        let err = p2.commit(&mut w2).expect_err("the second swap loses");
        assert!(
            matches!(err, RemoteError::Conflict { .. }),
            "{}: {err}",
            b.name()
        );
        assert!(err.to_string().contains("pull and retry"), "{err}");
        // The loser pulls (its own change to y is kept) and retries.
        let pulled = pull(&r2, &mut w2, "origin").expect("pull");
        assert_eq!(pulled.updated.get("x"), Some(&x1));
        push(&r2, &mut w2, "origin", &[]).expect("retry wins");
        let reader = open_remote_store(&b, "race");
        assert_eq!(
            reader.root("x"),
            Some(x1),
            "{}: writer 1's update is there",
            b.name()
        );
        assert_eq!(
            reader.root("y"),
            Some(y2),
            "{}: writer 2's update is there",
            b.name()
        );
        // Both change the same map: the later one is refused until it pulls, and its pull
        // reports the divergence instead of overwriting it.
        let x1b = edit_map(&mut w1, "x", 10, 5_000, 4);
        let x2b = edit_map(&mut w2, "x", 10, 5_000, 5);
        push(&r1, &mut w1, "origin", &[]).expect("w1 pushes x");
        let err = push(&r2, &mut w2, "origin", &["x".into()]).expect_err("w2 conflicts");
        assert!(matches!(err, RemoteError::Conflict { .. }), "{err}");
        let pulled = pull(&r2, &mut w2, "origin").expect("pull");
        assert_eq!(pulled.diverged, vec!["x".to_string()]);
        assert_eq!(w2.root("x"), Some(x2b), "the local change is kept");
        assert_eq!(w2.root(&tracking_root("origin", "x")), Some(x1b));
    }
}

#[test]
fn deleted_or_corrupted_objects_are_named() {
    let _s = serial();
    for b in Backend::all() {
        let work = tempfile::tempdir().expect("tmp");
        let mut a = make_store(&work.path().join("a"), &[("m", 10_000, 1)]);
        let remote = b.remote("bad");
        push(&remote, &mut a, "origin", &[]).expect("push");
        let chunks = prollystore_remote::sync::remote_chunks(&remote).expect("chunks");
        let (object, entry) = chunks[chunks.len() / 2].clone();
        let (os, prefix) = remote.object_store();
        let path = prefix.clone().join(object.as_str());
        let rt = &remote;
        let original = rt
            .run(async {
                object_store::ObjectStoreExt::get(&**os, &path)
                    .await?
                    .bytes()
                    .await
            })
            .expect("read object");
        // Flip one byte of the chunk.
        let mut bad = original.to_vec();
        bad[entry.offset as usize + entry.len as usize / 2] ^= 0x40;
        rt.run(object_store::ObjectStoreExt::put(&**os, &path, bad.into()))
            .expect("corrupt");
        let store = open_remote_store(&b, "bad");
        let err = store.get(&entry.address).expect_err("corrupt chunk");
        let text = err.to_string();
        assert!(
            text.contains(&object) && text.contains(&entry.address.to_string()),
            "{}: {text}",
            b.name()
        );
        let mut fresh = FileStore::create(work.path().join("p"), a.profile()).expect("create");
        let err = pull(&remote, &mut fresh, "origin").expect_err("pull of a corrupt remote");
        assert!(
            err.to_string().contains(&entry.address.to_string()),
            "{err}"
        );
        // Delete the object.
        rt.run(object_store::ObjectStoreExt::delete(&**os, &path))
            .expect("delete");
        let err =
            RemoteStore::from_remote(b.remote("bad"), 1 << 20).expect_err("open without a file");
        assert!(err.to_string().contains(&object), "{}: {err}", b.name());
        let err = clone(&remote, work.path().join("c")).expect_err("clone");
        assert!(err.to_string().contains(&object), "{err}");
        // Put it back: everything works again.
        rt.run(object_store::ObjectStoreExt::put(
            &**os,
            &path,
            original.into(),
        ))
        .expect("restore");
        let c = clone(&b.remote("bad"), work.path().join("c")).expect("clone after repair");
        assert_eq!(c.root("m"), a.root("m"));
    }
}

#[test]
fn minio_killed_mid_push_and_mid_pull() {
    let _s = serial();
    let Some(mut minio) = Minio::start() else {
        return;
    };
    let work = tempfile::tempdir().expect("tmp");
    let mut a = make_store(&work.path().join("a"), &[("m", 5_000, 1)]);
    let url = format!("s3://{BUCKET}/kill");
    let proxy = Proxy::start(minio.port);
    let opts = minio.options(proxy.port);
    let remote = prollystore_remote::Remote::open_with(&url, &opts).expect("remote");
    push(&remote, &mut a, "origin", &[]).expect("seed");
    let committed = a.root("m");
    // A big change, so that the push is long enough to be killed in the middle.
    let big = build_map(&a, 300_000, 2);
    set_root(&mut a, "big", big);
    let start = proxy.forwarded.load(Ordering::Relaxed);
    let pushing = std::thread::scope(|s| {
        let h = s.spawn(|| push(&remote, &mut a, "origin", &[]));
        while !h.is_finished() && proxy.forwarded.load(Ordering::Relaxed) < start + (2 << 20) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        minio.stop();
        h.join().expect("push thread")
    });
    eprintln!(
        "push during the kill: {:?}",
        pushing.as_ref().map(|r| r.chunks)
    );
    minio.restart();
    // The remote is readable and holds at least what was committed before.
    let reader = RemoteStore::from_remote(
        prollystore_remote::Remote::open_with(&url, &opts).expect("remote"),
        1 << 20,
    )
    .expect("remote readable after the kill");
    assert_eq!(reader.root("m"), committed);
    drop(reader);
    let retry = push(&remote, &mut a, "origin", &[]).expect("retry completes");
    eprintln!(
        "retry: {} chunks, {} files reused",
        retry.chunks, retry.files_reused
    );
    // Mid-pull: a fresh store pulls while the server dies.
    let mut fresh = FileStore::create(work.path().join("p"), a.profile()).expect("create");
    let start = proxy.forwarded.load(Ordering::Relaxed);
    let pulling = std::thread::scope(|s| {
        let h = s.spawn(|| pull(&remote, &mut fresh, "origin"));
        while !h.is_finished() && proxy.forwarded.load(Ordering::Relaxed) < start + (2 << 20) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        minio.stop();
        h.join().expect("pull thread")
    });
    eprintln!(
        "pull during the kill: {:?}",
        pulling.as_ref().map(|r| r.chunks)
    );
    minio.restart();
    pull(&remote, &mut fresh, "origin").expect("pull retry completes");
    assert_eq!(fresh.root("big"), Some(big));
    assert_eq!(rows(&fresh, big), rows(&a, big));
    fresh.verify().expect("verifies");
}

#[test]
fn connections_cut_at_random_bytes() {
    let _s = serial();
    let Some(minio) = Minio::start() else {
        return;
    };
    let work = tempfile::tempdir().expect("tmp");
    let mut a = make_store(&work.path().join("a"), &[("m", 40_000, 1)]);
    let proxy = Proxy::start(minio.port);
    let url = format!("s3://{BUCKET}/cut");
    let remote =
        prollystore_remote::Remote::open_with(&url, &minio.options(proxy.port)).expect("remote");
    proxy.cutting.store(true, Ordering::Relaxed);
    *proxy.cut_range.lock().expect("range") = (256, 4 << 20);
    let mut errors = Vec::new();
    let mut attempt = |what: &str, f: &mut dyn FnMut() -> Result<(), RemoteError>| {
        for _ in 0..30 {
            match f() {
                Ok(()) => return,
                Err(e) => {
                    let text = e.to_string();
                    assert!(!text.is_empty());
                    assert!(
                        !matches!(e, RemoteError::CorruptChunk { .. }),
                        "a cut is not corruption: {text}"
                    );
                    errors.push(format!("{what}: {text}"));
                }
            }
        }
        panic!("{what} never succeeded through the cutting proxy: {errors:?}");
    };
    attempt("push", &mut || {
        push(&remote, &mut a, "origin", &[]).map(|_| ())
    });
    let root = a.root("m").expect("root");
    let dir = work.path().join("c");
    attempt("clone", &mut || {
        let _ = std::fs::remove_file(dir.join("MANIFEST"));
        clone(&remote, &dir).map(|_| ())
    });
    let expected = rows(&a, root);
    let mut pulled = FileStore::create(work.path().join("p"), a.profile()).expect("create");
    attempt("pull", &mut || {
        pull(&remote, &mut pulled, "origin").map(|_| ())
    });
    assert_eq!(
        rows(&pulled, root),
        expected,
        "the pull through cuts is complete"
    );
    pulled.verify().expect("the pulled store verifies");
    attempt("read", &mut || {
        let s = RemoteStore::from_remote(
            prollystore_remote::Remote::open_with(&url, &minio.options(proxy.port))?,
            1 << 20,
        )?;
        let got: Result<Vec<(Vec<u8>, Vec<u8>)>, _> = Map::new(&s, root, schema())
            .iter()
            .map_err(|e| RemoteError::Invalid(e.to_string()))?
            .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
            .collect();
        let got = got.map_err(|e| RemoteError::Invalid(e.to_string()))?;
        assert_eq!(got, expected, "never silently different data");
        Ok(())
    });
    let c = FileStore::open(&dir).expect("clone");
    assert_eq!(rows(&c, root), expected);
    eprintln!(
        "{} cuts; errors seen: {}",
        proxy.cuts.load(Ordering::Relaxed),
        errors.len()
    );
    let _ = Address::default();
}
