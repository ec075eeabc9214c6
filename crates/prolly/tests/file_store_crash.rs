//! Crash injection: a child process commits in a loop (with gc and compaction mixed in, and now
//! and then a chunk file big enough to be written in several pieces) and is
//! killed with SIGKILL at random moments; after each kill the store must reopen at a committed
//! state, with every reachable chunk intact and nothing the child reported committed lost.
//!
//! Trials: env `FILE_STORE_CRASH_TRIALS` (default 200), stopping early (after at least 50)
//! when env `FILE_STORE_CRASH_SECONDS` (default 60) have passed. The child is this test binary, re-run
//! with env `FILE_STORE_CRASH_CHILD` set to the store directory.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use prollystore::format::{Address, HashProfile};
use prollystore::store::file::{FileStore, RootUpdate};
use prollystore::store::StoreError;

mod common;
use common::{children, node, parse};

const CHILD_ENV: &str = "FILE_STORE_CRASH_CHILD";

/// xorshift64*: enough randomness for timings and sizes, no dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The commit counter of the state `root` names, after checking every reachable chunk.
fn check_state(store: &FileStore, root: Address) -> u64 {
    let chunk = store.get(&root).unwrap().expect("root chunk missing");
    let (leaves, payload) = parse(chunk);
    let text = std::str::from_utf8(payload).unwrap();
    let k: u64 = text.strip_prefix("root ").unwrap().parse().unwrap();
    for (j, leaf) in leaves.iter().enumerate() {
        let bytes = store
            .get(leaf)
            .unwrap()
            .unwrap_or_else(|| panic!("leaf {j} of state {k} missing"));
        let want = format!("leaf {k} {j} ");
        assert!(parse(bytes).1.starts_with(want.as_bytes()));
    }
    k
}

/// The child: commit forever, reporting each durable commit on stdout.
fn child(dir: &str, seed: u64) {
    let mut w = loop {
        match FileStore::open_writer(dir) {
            Ok(w) => break w,
            Err(StoreError::Locked { .. }) => std::thread::sleep(Duration::from_millis(1)),
            Err(e) => panic!("child open: {e}"),
        }
    };
    let mut rng = Rng(seed | 1);
    println!("ready");
    let mut old = w.root("main");
    let mut k = old.map(|r| check_state(&w, r)).unwrap_or(0);
    loop {
        k += 1;
        // Now and then a chunk file of over 8 MiB, whose writing starts writeback midway.
        let big = rng.below(16) == 0;
        let leaves: Vec<Address> = (0..1 + rng.below(5))
            .map(|j| {
                let mut payload = format!("leaf {k} {j} ").into_bytes();
                let len = if big && j == 0 {
                    9 << 20
                } else {
                    rng.below(3000)
                };
                payload.extend((0..len).map(|i| (i * 7 + k) as u8));
                w.put(&node(&[], &payload)).unwrap()
            })
            .collect();
        let root = w
            .put(&node(&leaves, format!("root {k}").as_bytes()))
            .unwrap();
        w.commit(&[RootUpdate::new("main", old, Some(root))])
            .unwrap();
        println!("committed {k} {}", root.to_hex());
        old = Some(root);
        match rng.below(10) {
            0 | 1 => {
                w.gc_with(children).unwrap();
            }
            2 => {
                w.compact(u64::MAX).unwrap();
            }
            _ => {}
        }
    }
}

#[test]
fn crash_child() {
    // Only does something when re-run by `crash_trials`.
    if let Ok(dir) = std::env::var(CHILD_ENV) {
        let seed = std::env::var("FILE_STORE_CRASH_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(1);
        child(&dir, seed);
    }
}

#[test]
fn crash_trials() {
    if std::env::var(CHILD_ENV).is_ok() {
        return;
    }
    let trials: u64 = std::env::var("FILE_STORE_CRASH_TRIALS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    drop(FileStore::create(dir.path(), HashProfile::Blake3).unwrap());
    let exe = std::env::current_exe().unwrap();
    let start = Instant::now();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ u64::from(std::process::id()));
    let mut last_k = 0u64;
    let mut commits_seen = 0u64;
    let mut mid_write = 0u64;
    // Bounded in time: slow machines run fewer trials (at least 50), and say so.
    let budget = Duration::from_secs(
        std::env::var("FILE_STORE_CRASH_SECONDS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(60),
    );
    let mut trials_run = 0;
    for trial in 0..trials {
        if trial >= 50 && start.elapsed() > budget {
            println!("time budget of {budget:?} spent after {trial} trials");
            break;
        }
        trials_run += 1;
        let mut c = Command::new(&exe)
            .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, dir.path())
            .env("FILE_STORE_CRASH_SEED", rng.next().to_string())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Collect the child's stdout on a thread; "ready" says the writer is open.
        let mut stdout = c.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut out = String::new();
            let mut buf = [0u8; 4096];
            loop {
                match stdout.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        out.push_str(&String::from_utf8_lossy(&buf[..n]));
                        if out.contains("ready") {
                            let _ = tx.send(());
                        }
                    }
                }
            }
            out
        });
        if rng.below(5) == 0 {
            // Sometimes anywhere, including during open and its cleanup.
            std::thread::sleep(Duration::from_micros(rng.below(15_000)));
        } else {
            let _ = rx.recv_timeout(Duration::from_secs(10));
            std::thread::sleep(Duration::from_micros(rng.below(40_000)));
        }
        c.kill().unwrap();
        c.wait().unwrap();
        let out = reader.join().unwrap();
        let reported: Vec<(u64, Address)> = out
            .lines()
            .filter_map(|l| l.split_once("committed ").map(|x| x.1))
            .map(|l| {
                let (k, h) = l.split_once(' ').unwrap();
                (k.parse().unwrap(), Address::from_hex(h).unwrap())
            })
            .collect();
        commits_seen += reported.len() as u64;
        // Readers first (they must cope with leftovers), then the writer's cleanup.
        let r = FileStore::open(dir.path()).unwrap_or_else(|e| panic!("trial {trial}: {e}"));
        let root = r.root("main");
        let k = root.map(|a| check_state(&r, a)).unwrap_or(0);
        r.verify().unwrap_or_else(|e| panic!("trial {trial}: {e}"));
        let floor = reported.last().map_or(last_k, |x| x.0);
        assert!(
            k == floor || k == floor + 1,
            "trial {trial}: store at state {k}, last reported {floor}; child said:\n{out}"
        );
        if let Some(&(rk, ra)) = reported.last() {
            if k == rk {
                assert_eq!(
                    root,
                    Some(ra),
                    "trial {trial}: root differs from the reported one"
                );
            }
        }
        if k == floor + 1 {
            mid_write += 1;
        }
        last_k = k;
        drop(r);
        let w = FileStore::open_writer(dir.path()).unwrap();
        assert_eq!(w.root("main"), root);
        w.verify().unwrap();
        // Only live files and the lock remain.
        for e in std::fs::read_dir(dir.path()).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            assert!(!name.ends_with(".tmp"), "trial {trial}: leftover {name}");
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{trials_run} crash trials in {secs:.1}s: {commits_seen} commits reported, final state {last_k}, \
         {mid_write} kills landed after a commit became durable but before it was reported"
    );
    assert!(last_k > 0, "the child never committed");
}
