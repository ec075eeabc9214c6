//! Readers and a writer in different processes: the writer (a child process: this test binary
//! re-run with env `FILE_STORE_WRITER_CHILD`) commits, gcs and compacts in a loop while readers
//! in this process (threads) and in a second child process open, read, refresh and verify. Every
//! snapshot a reader sees is a complete committed state; a second writer gets `Locked`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prollystore::format::{Address, HashProfile};
use prollystore::store::file::{FileStore, OpenOptions, RootUpdate};
use prollystore::store::StoreError;

mod common;
use common::{children, node, parse};

const WRITER_ENV: &str = "FILE_STORE_WRITER_CHILD";
const READER_ENV: &str = "FILE_STORE_READER_CHILD";
const RUN: Duration = Duration::from_millis(1500);

/// Checks that the snapshot's root names a complete state; returns its counter.
fn check_snapshot(store: &FileStore) -> u64 {
    let Some(root) = store.root("main") else {
        return 0;
    };
    let chunk = store.get(&root).unwrap().expect("root chunk missing");
    let (leaves, payload) = parse(chunk);
    let k: u64 = std::str::from_utf8(payload)
        .unwrap()
        .strip_prefix("root ")
        .unwrap()
        .parse()
        .unwrap();
    for (j, leaf) in leaves.iter().enumerate() {
        let bytes = store.get(leaf).unwrap().expect("leaf missing");
        assert!(parse(bytes)
            .1
            .starts_with(format!("leaf {k} {j} ").as_bytes()));
    }
    k
}

/// Opens, reads and refreshes in a loop for `RUN`; returns how many snapshots it checked.
fn reader_loop(dir: &std::path::Path, mmap: bool) -> u64 {
    let start = Instant::now();
    let mut n = 0u64;
    let mut last = 0;
    while start.elapsed() < RUN {
        let mut r = OpenOptions::new().mmap(mmap).open(dir).unwrap();
        for _ in 0..5 {
            let k = check_snapshot(&r);
            assert!(k >= last, "went back from state {last} to {k}");
            last = k;
            n += 1;
            r.refresh().unwrap();
        }
        if n.is_multiple_of(20) {
            r.verify().unwrap();
        }
    }
    n
}

fn writer_child(dir: &str) {
    let mut w = FileStore::open_writer(dir).unwrap();
    println!("ready");
    let start = Instant::now();
    let mut k = 0u64;
    let mut old = None;
    while start.elapsed() < RUN + Duration::from_millis(300) {
        k += 1;
        let leaves: Vec<Address> = (0..3u64)
            .map(|j| {
                let mut p = format!("leaf {k} {j} ").into_bytes();
                p.resize(200 + (k as usize * 13) % 900, 0xab);
                w.put(&node(&[], &p)).unwrap()
            })
            .collect();
        let root = w
            .put(&node(&leaves, format!("root {k}").as_bytes()))
            .unwrap();
        w.commit(&[RootUpdate::new("main", old, Some(root))])
            .unwrap();
        old = Some(root);
        if k.is_multiple_of(4) {
            w.gc_with(children).unwrap();
        } else if k.is_multiple_of(7) {
            w.compact(u64::MAX).unwrap();
        }
    }
    println!("commits {k}");
}

#[test]
fn child_roles() {
    if let Ok(dir) = std::env::var(WRITER_ENV) {
        writer_child(&dir);
    }
    if let Ok(dir) = std::env::var(READER_ENV) {
        let n = reader_loop(std::path::Path::new(&dir), true);
        println!("snapshots {n}");
    }
}

#[test]
fn readers_and_a_writer_in_other_processes() {
    if std::env::var(WRITER_ENV).is_ok() || std::env::var(READER_ENV).is_ok() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    drop(FileStore::create(dir.path(), HashProfile::Blake3).unwrap());
    let exe = std::env::current_exe().unwrap();
    let spawn = |env: &str| {
        Command::new(&exe)
            .args(["child_roles", "--exact", "--nocapture", "--test-threads=1"])
            .env(env, dir.path())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut writer = spawn(WRITER_ENV);
    let mut lines = BufReader::new(writer.stdout.take().unwrap()).lines();
    assert!(lines.any(|l| l.unwrap().contains("ready")));
    // The writer process holds the lock: a second writer gets a clear error.
    let err = FileStore::open_writer(dir.path()).unwrap_err();
    assert!(matches!(err, StoreError::Locked { .. }), "{err}");
    let reader = spawn(READER_ENV);
    let counts: Vec<u64> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..3)
            .map(|i| {
                let path = dir.path();
                s.spawn(move || reader_loop(path, i != 0))
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let out = reader.wait_with_output().unwrap();
    assert!(out.status.success(), "reader child failed");
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert!(writer.wait().unwrap().success(), "writer child failed");
    let commits = rest
        .iter()
        .find_map(|l| l.split_once("commits ").map(|x| x.1.to_string()));
    println!(
        "writer commits: {commits:?}; snapshots checked here: {counts:?}; reader process: {}",
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find(|l| l.contains("snapshots"))
            .unwrap_or("")
    );
    let w = FileStore::open_writer(dir.path()).unwrap();
    assert!(check_snapshot(&w) > 0);
    w.verify().unwrap();
}
