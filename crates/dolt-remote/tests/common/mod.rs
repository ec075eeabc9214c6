//! Helpers of the interop tests: the `dolt` binary from `PROLLY_DOLT`, a throwaway HOME,
//! `dolt` runs, and a `dolt sql-server` serving remotes.
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

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
