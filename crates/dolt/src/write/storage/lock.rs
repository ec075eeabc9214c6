//! The writer's exclusive hold on a Dolt database, taken the way Dolt takes it, so that Dolt and
//! we never write the same store at once.
//!
//! Dolt locks `noms/LOCK` with `flock(LOCK_EX | LOCK_NB)` (the `dolthub/fslock` package, in
//! `store/nbs/journal.go` `newJournalLock`) and holds it while the store is open for writing; a
//! second Dolt process then opens the store read-only. A running `dolt sql-server` holds that
//! lock too, and announces itself in `.dolt/sql-server.info` (`pid:port:secret`,
//! `cmd/dolt/commands/sqlserver/creds.go`), which other `dolt` commands use to route their
//! work through the server instead of the files. We refuse in both cases.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::error::{DoltError, Result};

/// Name of the lock file in a `noms` directory.
const LOCK_FILE: &str = "LOCK";
/// How long a busy lock is retried before the writer gives up.
const BUSY_WAIT: Duration = Duration::from_secs(2);
/// Name of the file a running `dolt sql-server` leaves in `.dolt/`.
const SERVER_INFO_FILE: &str = "sql-server.info";

/// An exclusive `flock` on `noms/LOCK`, released when dropped (the file descriptor closes).
#[derive(Debug)]
pub(crate) struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock of the store in `noms_dir` (a `.dolt/noms` directory), waiting at most
    /// [`BUSY_WAIT`] for it, after checking that no `dolt sql-server` serves the database.
    pub(crate) fn acquire(noms_dir: &Path) -> Result<WriterLock> {
        if let Some(dot_dolt) = noms_dir.parent() {
            check_no_server(&dot_dolt.join(SERVER_INFO_FILE))?;
        }
        let path = noms_dir.join(LOCK_FILE);
        let io = |source| DoltError::Io {
            file: path.display().to_string(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io)?;
        // A lock held only for a moment is waited for: a process that forks while a writer
        // holds the lock (a program starting a child, say) shares the lock's open file until
        // the child's exec closes it, so a writer closed just before may still look busy.
        let deadline = Instant::now() + BUSY_WAIT;
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(WriterLock { _file: file }),
                Err(TryLockError::WouldBlock) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(TryLockError::WouldBlock) => {
                    return Err(DoltError::Locked {
                        path: path.display().to_string(),
                        reason: "another process (a dolt command or dolt sql-server, or another \
                                 writer) holds the lock"
                            .into(),
                    })
                }
                Err(TryLockError::Error(e)) => return Err(io(e)),
            }
        }
    }
}

/// Refuses when `info` names a running server. A file whose process is gone is a leftover of a
/// killed server (Dolt removes it on a clean stop) and does not stop us; one we cannot read or
/// parse does, since we cannot tell.
fn check_no_server(info: &Path) -> Result<()> {
    let text = match std::fs::read_to_string(info) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => {
            return Err(DoltError::Io {
                file: info.display().to_string(),
                source: e,
            })
        }
    };
    let locked = |reason: String| DoltError::Locked {
        path: info.display().to_string(),
        reason,
    };
    let pid = text
        .trim()
        .split(':')
        .next()
        .and_then(|p| p.parse::<u32>().ok())
        .ok_or_else(|| {
            locked(format!(
                "cannot parse it ({:?}); a dolt sql-server may be running",
                text.trim()
            ))
        })?;
    if process_alive(pid) {
        return Err(locked(format!(
            "dolt sql-server (pid {pid}) is running on this database"
        )));
    }
    Ok(())
}

/// Whether process `pid` exists. Where `/proc` is unavailable we cannot tell, and say yes.
fn process_alive(pid: u32) -> bool {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return true;
    }
    proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let noms = dir.path().join(".dolt/noms");
        std::fs::create_dir_all(&noms).unwrap();
        let first = WriterLock::acquire(&noms).unwrap();
        assert!(noms.join("LOCK").is_file());
        let err = WriterLock::acquire(&noms).unwrap_err();
        assert!(matches!(err, DoltError::Locked { .. }), "{err}");
        drop(first);
        WriterLock::acquire(&noms).unwrap();
    }

    #[test]
    fn a_running_server_is_refused_and_a_stale_file_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let noms = dir.path().join(".dolt/noms");
        std::fs::create_dir_all(&noms).unwrap();
        let info = dir.path().join(".dolt/sql-server.info");
        std::fs::write(&info, format!("{}:3306:secret", std::process::id())).unwrap();
        let err = WriterLock::acquire(&noms).unwrap_err();
        assert!(err.to_string().contains("sql-server"), "{err}");
        std::fs::write(&info, "garbage").unwrap();
        assert!(WriterLock::acquire(&noms).is_err());
        // A pid above Linux's maximum (2^22) belongs to no process.
        std::fs::write(&info, "4294967294:3306:secret").unwrap();
        WriterLock::acquire(&noms).unwrap();
    }
}
