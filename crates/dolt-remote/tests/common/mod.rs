//! Helpers of the interop and fault tests: the `dolt` binary from `PROLLY_DOLT`, a throwaway
//! HOME, `dolt` runs, a `dolt sql-server` serving remotes, a copy of the recorded `file://`
//! remote, and a directory's bytes (to show nothing changed).
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn dolt_bin() -> Option<PathBuf> {
    match std::env::var_os("PROLLY_DOLT").filter(|v| !v.is_empty()) {
        Some(b) => Some(PathBuf::from(b)),
        None => {
            eprintln!("SKIPPED: set PROLLY_DOLT to a dolt binary to run the clone interop tests");
            None
        }
    }
}

/// A throwaway HOME with Dolt's global config.
pub fn home(root: &Path) -> PathBuf {
    let home = root.join("home");
    std::fs::create_dir_all(home.join(".dolt")).unwrap();
    std::fs::write(
        home.join(".dolt/config_global.json"),
        r#"{"user.name":"Clone Bot","user.email":"clone@example.com","metrics.disabled":"true"}"#,
    )
    .unwrap();
    home
}

pub fn dolt_cmd(bin: &Path, home: &Path, dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1");
    c
}

/// Runs dolt and returns stdout; panics with its output on failure.
pub fn dolt(bin: &Path, home: &Path, dir: &Path, args: &[&str]) -> String {
    let out = dolt_cmd(bin, home, dir, args).output().unwrap();
    assert!(
        out.status.success(),
        "dolt {args:?} in {} failed:\n{}\n{}",
        dir.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `dolt sql-server` serving the databases under a directory as remotes; killed on drop.
pub struct Server {
    child: Child,
    /// The remotesapi port.
    pub port: u16,
}

impl Server {
    pub fn start(bin: &Path, home: &Path, dir: &Path) -> Server {
        let sql_port = free_port();
        let port = free_port();
        let log = std::fs::File::create(dir.parent().unwrap().join("server.log")).unwrap();
        let child = dolt_cmd(
            bin,
            home,
            dir,
            &[
                "sql-server",
                "--host",
                "127.0.0.1",
                "--port",
                &sql_port.to_string(),
                "--remotesapi-port",
                &port.to_string(),
            ],
        )
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .unwrap();
        let server = Server { child, port };
        let start = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "dolt sql-server did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    pub fn url(&self, db: &str) -> String {
        format!("http://127.0.0.1:{}/{db}", self.port)
    }
}

impl Server {
    /// Kills the server (as a crash would: no shutdown).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every file under `dir` with its bytes (to show nothing changed).
pub fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if !p.ends_with("LOCK") {
                out.push((p.display().to_string(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The recorded test data (`tests/data`).
pub fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// A copy of the recorded `file://` remote under `root` (pushes write to it): its directory
/// and URL.
pub fn remote_copy(root: &Path) -> (PathBuf, String) {
    let dst = root.join("remote");
    std::fs::create_dir_all(dst.join("oldgen")).unwrap();
    for e in std::fs::read_dir(data().join("file-remote"))
        .unwrap()
        .flatten()
    {
        if e.path().is_file() {
            std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
        }
    }
    let url = format!("file://{}", dst.display());
    (dst, url)
}

/// A TCP proxy on 127.0.0.1 to `127.0.0.1:upstream` that counts the bytes it forwards (both
/// ways, all connections) and, past `limit`, cuts every connection (forwarding only the bytes
/// up to the limit) and closes the ones that come after: a network that fails mid-transfer.
/// Started with [`CutProxy::stalling`], it holds the connections open past the limit, without
/// forwarding, until dropped (so a server can be killed with the transfer in flight).
pub struct CutProxy {
    /// Its port.
    pub port: u16,
    bytes: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl CutProxy {
    pub fn start(upstream: u16, limit: u64) -> CutProxy {
        CutProxy::with(upstream, limit, false)
    }

    pub fn stalling(upstream: u16, limit: u64) -> CutProxy {
        CutProxy::with(upstream, limit, true)
    }

    fn with(upstream: u16, limit: u64, stall: bool) -> CutProxy {
        use std::sync::atomic::{AtomicBool, AtomicU64};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let bytes = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (bytes.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(client) = conn else { continue };
                if s.load(std::sync::atomic::Ordering::SeqCst) {
                    return;
                }
                let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                for (from, to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    let (b, s) = (b.clone(), s.clone());
                    std::thread::spawn(move || {
                        pipe(from, to, &b, limit, stall.then_some(&*s));
                    });
                }
            }
        });
        CutProxy { port, bytes, stop }
    }

    /// The bytes forwarded so far.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(std::sync::atomic::Ordering::SeqCst)
    }

    pub fn url(&self, db: &str) -> String {
        format!("http://127.0.0.1:{}/{db}", self.port)
    }
}

/// Copies `from` to `to` until either ends or the shared count passes `limit`; then (once
/// `stall_until` is set, if given) shuts both down.
fn pipe(
    mut from: std::net::TcpStream,
    mut to: std::net::TcpStream,
    bytes: &std::sync::atomic::AtomicU64,
    limit: u64,
    stall_until: Option<&std::sync::atomic::AtomicBool>,
) {
    use std::io::{Read, Write};
    use std::sync::atomic::Ordering;
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let before = bytes.fetch_add(n as u64, Ordering::SeqCst);
        let allowed = limit.saturating_sub(before).min(n as u64) as usize;
        if to.write_all(&buf[..allowed]).is_err() {
            break;
        }
        if allowed < n {
            while stall_until.is_some_and(|s| !s.load(Ordering::SeqCst)) {
                std::thread::sleep(Duration::from_millis(5));
            }
            break;
        }
    }
    let _ = from.shutdown(std::net::Shutdown::Both);
    let _ = to.shutdown(std::net::Shutdown::Both);
}

impl Drop for CutProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wakes the accept loop so it sees `stop`.
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}
