//! Test support: a MinIO server started for the tests, a TCP proxy that cuts connections, and
//! helpers that build and read local stores.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use prollystore::format::tuple::{TupleBuilder, TupleDesc, Type};
use prollystore::format::Encoding;
use prollystore::format::{Address, HashProfile};
use prollystore::store::RootUpdate;
use prollystore::tuples::TupleSchema;
use prollystore::{ChunkStore, FileStore, Map, StoreFastPaths};
use prollystore_remote::Remote;

/// A small xorshift generator (tests need reproducible noise, not cryptography).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn from_time() -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        Rng::new(t ^ u64::from(std::process::id()))
    }
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub fn word(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| (b'a' + self.below(26) as u8) as char)
            .collect()
    }
}

/// The MinIO binary: `PROLLY_MINIO`, else `$HOME/.cache/prollystore/minio-bin/minio`.
pub fn minio_binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PROLLY_MINIO") {
        return Some(PathBuf::from(p)).filter(|p| p.exists());
    }
    let home = std::env::var_os("HOME")?;
    Some(Path::new(&home).join(".cache/prollystore/minio-bin/minio")).filter(|p| p.exists())
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A MinIO server on 127.0.0.1 with a temporary data directory and random credentials,
/// killed when dropped.
pub struct Minio {
    binary: PathBuf,
    pub data: tempfile::TempDir,
    pub port: u16,
    pub user: String,
    pub password: String,
    child: Option<Child>,
}

pub const BUCKET: &str = "prolly";

impl Minio {
    /// Starts MinIO, or returns `None` (with a loud message) if the binary is absent and CI is
    /// not set; under CI a missing binary fails the test.
    pub fn start() -> Option<Minio> {
        let Some(binary) = minio_binary() else {
            if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false") {
                panic!("CI is set but no MinIO binary: set PROLLY_MINIO or build it into $HOME/.cache/prollystore/minio-bin (see .ci/run)");
            }
            eprintln!("\n\n*** SKIPPING MinIO TESTS: no MinIO binary (set PROLLY_MINIO, or see .ci/run for the pinned go install) ***\n");
            return None;
        };
        let mut rng = Rng::from_time();
        let data = tempfile::tempdir().expect("temp dir");
        // A top-level directory of the data drive is a bucket.
        std::fs::create_dir_all(data.path().join(BUCKET)).expect("bucket dir");
        let mut m = Minio {
            binary,
            data,
            port: free_port(),
            user: format!("u{}", rng.word(11)),
            password: format!("p{}", rng.word(23)),
            child: None,
        };
        m.restart();
        Some(m)
    }

    /// Starts (again) on the same directory, port and credentials, and waits until it serves.
    pub fn restart(&mut self) {
        self.stop();
        let console = free_port();
        let child = Command::new(&self.binary)
            .arg("server")
            .arg(self.data.path())
            .arg("--address")
            .arg(format!("127.0.0.1:{}", self.port))
            .arg("--console-address")
            .arg(format!("127.0.0.1:{console}"))
            .arg("--quiet")
            .env("MINIO_ROOT_USER", &self.user)
            .env("MINIO_ROOT_PASSWORD", &self.password)
            .env("MINIO_BROWSER", "off")
            .env("MINIO_UPDATE", "off")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting minio");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if health(self.port) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        panic!("MinIO did not become ready on port {}", self.port);
    }

    /// Kills the server (SIGKILL: as abrupt as a crash).
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// The object_store options that reach this server at `endpoint` (itself, or a proxy).
    pub fn options(&self, port: u16) -> Vec<(String, String)> {
        vec![
            ("aws_endpoint".into(), format!("http://127.0.0.1:{port}")),
            ("aws_access_key_id".into(), self.user.clone()),
            ("aws_secret_access_key".into(), self.password.clone()),
            ("aws_region".into(), "us-east-1".into()),
            ("aws_allow_http".into(), "true".into()),
        ]
    }
}

impl Drop for Minio {
    fn drop(&mut self) {
        self.stop();
    }
}

fn health(port: u16) -> bool {
    let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = format!(
        "GET /minio/health/ready HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    );
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut buf = [0u8; 12];
    s.read_exact(&mut buf).is_ok() && &buf[9..12] == b"200"
}

/// Where a test's remote lives: MinIO or a local directory.
pub enum Backend {
    Minio(Minio),
    File(tempfile::TempDir),
}

impl Backend {
    /// The backends to run a suite against: a local directory always, MinIO when available.
    pub fn all() -> Vec<Backend> {
        let mut v = vec![Backend::File(tempfile::tempdir().expect("temp dir"))];
        if let Some(m) = Minio::start() {
            v.push(Backend::Minio(m));
        }
        v
    }

    pub fn name(&self) -> &'static str {
        match self {
            Backend::Minio(_) => "minio",
            Backend::File(_) => "file",
        }
    }

    /// The URL of remote `prefix` on this backend.
    pub fn url(&self, prefix: &str) -> String {
        match self {
            Backend::Minio(_) => format!("s3://{BUCKET}/{prefix}"),
            Backend::File(d) => format!("file://{}/{prefix}", d.path().display()),
        }
    }

    /// The connection options (MinIO's endpoint and credentials).
    pub fn options(&self) -> Vec<(String, String)> {
        match self {
            Backend::Minio(m) => m.options(m.port),
            Backend::File(_) => Vec::new(),
        }
    }

    /// Opens remote `prefix`.
    pub fn remote(&self, prefix: &str) -> Remote {
        Remote::open_with(&self.url(prefix), &self.options()).expect("opening the remote")
    }
}

/// The test maps' schema: an int64 key, a string value (Dolt tuples, as nodes must hold).
pub fn schema() -> TupleSchema {
    TupleSchema::new(
        TupleDesc::new(vec![Type::not_null(Encoding::Int64)]),
        TupleDesc::new(vec![Type::nullable(Encoding::String)]),
    )
}

/// Key `i` of the test maps.
pub fn key(i: u64) -> Vec<u8> {
    let mut b = TupleBuilder::new(schema().key);
    b.put_int64(0, i as i64).expect("key");
    b.build().expect("key").as_bytes().to_vec()
}

/// A value for key `i` at `version`.
pub fn value(i: u64, version: u64) -> Vec<u8> {
    let mut b = TupleBuilder::new(schema().value);
    b.put_string(
        0,
        &format!(
            "value {i} version {version} {}",
            "x".repeat((i % 50) as usize)
        ),
    )
    .expect("value");
    b.build().expect("value").as_bytes().to_vec()
}

/// Builds a map of `rows` rows in `store` (not committed).
pub fn build_map<S: StoreFastPaths>(store: &S, rows: u64, version: u64) -> Address {
    let items: Vec<(Vec<u8>, Vec<u8>)> = (0..rows).map(|i| (key(i), value(i, version))).collect();
    Map::from_sorted(store, schema(), items.iter().map(|(k, v)| (&k[..], &v[..])))
        .expect("building a map")
        .root()
}

/// Sets `name` to `root` in `store`, committing pending chunks.
pub fn set_root(store: &mut FileStore, name: &str, root: Address) {
    let old = store.root(name);
    store
        .commit(&[RootUpdate::new(name, old, Some(root))])
        .expect("commit");
}

/// A new file store in `dir` with maps `(name, rows, version)`.
pub fn make_store(dir: &Path, maps: &[(&str, u64, u64)]) -> FileStore {
    let mut store = FileStore::create(dir, HashProfile::Blake3).expect("create store");
    for (name, rows, version) in maps {
        let root = build_map(&store, *rows, *version);
        set_root(&mut store, name, root);
    }
    store
}

/// Applies `edits` edits (rows rewritten with `version`) to map `name` and commits.
pub fn edit_map(store: &mut FileStore, name: &str, edits: u64, rows: u64, version: u64) -> Address {
    let root = store.root(name).expect("map");
    let mut rng = Rng::new(version);
    let changes: Vec<(Vec<u8>, Vec<u8>)> = (0..edits)
        .map(|_| {
            let i = rng.below(rows);
            (key(i), value(i, version))
        })
        .collect();
    let new = Map::new(&*store, root, schema())
        .apply(changes.iter().map(|(k, v)| (&k[..], Some(&v[..]))))
        .expect("edit")
        .root();
    set_root(store, name, new);
    new
}

/// Every row of the map at `root`.
pub fn rows<S: StoreFastPaths>(store: &S, root: Address) -> Vec<(Vec<u8>, Vec<u8>)> {
    Map::new(store, root, schema())
        .iter()
        .expect("scan")
        .map(|r| r.map(|(k, v)| (k.to_vec(), v.to_vec())))
        .collect::<Result<_, _>>()
        .expect("scan")
}

/// Bytes of the chunks `store` holds that `other` lacks.
pub fn bytes_missing_from<S: ChunkStore>(store: &FileStore, other: &S) -> u64 {
    store
        .addresses()
        .filter(|a| !other.has(a).expect("has"))
        .map(|a| store.get(&a).expect("get").map_or(0, |c| c.len() as u64))
        .sum()
}

/// A TCP proxy to 127.0.0.1:`upstream` that, while cutting is on, closes three connections in
/// ten after a random number of bytes (in either direction) within `cut_range`.
pub struct Proxy {
    pub port: u16,
    pub cutting: Arc<AtomicBool>,
    pub cut_range: Arc<Mutex<(u64, u64)>>,
    /// Bytes forwarded so far (both directions).
    pub forwarded: Arc<AtomicU64>,
    /// Connections cut so far.
    pub cuts: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
}

impl Proxy {
    pub fn start(upstream: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("proxy listener");
        let port = listener.local_addr().expect("addr").port();
        let p = Proxy {
            port,
            cutting: Arc::new(AtomicBool::new(false)),
            cut_range: Arc::new(Mutex::new((1 << 10, 256 << 10))),
            forwarded: Arc::new(AtomicU64::new(0)),
            cuts: Arc::new(AtomicU64::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let (cutting, range, fwd, cuts, stop) = (
            p.cutting.clone(),
            p.cut_range.clone(),
            p.forwarded.clone(),
            p.cuts.clone(),
            p.stop.clone(),
        );
        std::thread::spawn(move || {
            let mut rng = Rng::from_time();
            for conn in listener.incoming() {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let Ok(client) = conn else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                };
                let budget = if cutting.load(Ordering::Relaxed) && rng.below(10) < 3 {
                    let (lo, hi) = *range.lock().expect("range");
                    lo + rng.below(hi - lo + 1)
                } else {
                    u64::MAX
                };
                let left = Arc::new(AtomicU64::new(budget));
                for (from, to) in [
                    (
                        client.try_clone().expect("clone"),
                        server.try_clone().expect("clone"),
                    ),
                    (server, client),
                ] {
                    let (left, fwd, cuts) = (left.clone(), fwd.clone(), cuts.clone());
                    std::thread::spawn(move || pipe(from, to, &left, &fwd, &cuts));
                }
            }
        });
        p
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn pipe(
    mut from: TcpStream,
    mut to: TcpStream,
    left: &AtomicU64,
    fwd: &AtomicU64,
    cuts: &AtomicU64,
) {
    let mut buf = [0u8; 16 << 10];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let allowed = left.load(Ordering::Relaxed);
        let send = (n as u64).min(allowed) as usize;
        if to.write_all(&buf[..send]).is_err() {
            break;
        }
        fwd.fetch_add(send as u64, Ordering::Relaxed);
        if send < n || left.fetch_sub(send as u64, Ordering::Relaxed) <= send as u64 {
            cuts.fetch_add(1, Ordering::Relaxed);
            let _ = from.shutdown(Shutdown::Both);
            let _ = to.shutdown(Shutdown::Both);
            return;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}
