//! Dolt remotes from C (the `dolt-remote` feature, off by default: it brings an async runtime,
//! gRPC and HTTP clients): `prolly_dolt_clone`, a Dolt database cloned from
//! `http://HOST:PORT/DB` (a `dolt sql-server --remotesapi-port`) or a `file://` directory
//! `dolt push` wrote, as `dolt clone` leaves it; `prolly_dolt_fetch`, `prolly_dolt_pull` and
//! `prolly_dolt_push` on a database's remotes (`repo_state.json`), as `dolt fetch`, `dolt pull
//! --ff-only` and `dolt push` do.

use std::ffi::c_char;
use std::path::Path;

use prollystore_dolt_remote::{CloneOptions, RemoteError};

use crate::args::text;
use crate::result::{ffi, prolly_result, Error};

impl From<RemoteError> for Error {
    fn from(e: RemoteError) -> Error {
        use prolly_result as R;
        match e {
            RemoteError::Local(d) => d.into(),
            RemoteError::NoSuchDatabase { .. } => Error::new(R::NotFound, e.to_string()),
            RemoteError::BadUrl { .. }
            | RemoteError::Destination { .. }
            | RemoteError::UnknownRemote { .. }
            | RemoteError::RemoteExists { .. } => Error::invalid(e.to_string()),
            RemoteError::NoSuchBranch { .. } => Error::new(R::NotFound, e.to_string()),
            RemoteError::Rejected { .. } => Error::new(R::ErrRootConflict, e.to_string()),
            RemoteError::MissingChunk { .. } => Error::new(R::ErrMissingChunk, e.to_string()),
            RemoteError::BadResponse { .. } => Error::new(R::ErrCorrupted, e.to_string()),
            _ => Error::new(R::ErrIo, e.to_string()),
        }
    }
}

/// Clones the Dolt database at `url` into `dir` (which must not exist, or be empty), checking
/// out `main` (else `master`, else the first branch by name), with `origin` as the remote, as
/// `dolt clone URL DIR` does. A failed clone leaves no directory; the reason is in
/// `prolly_last_error_message` (`PROLLY_RESULT_NOT_FOUND`: no such database;
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT`: a bad URL or destination).
#[no_mangle]
pub extern "C" fn prolly_dolt_clone(url: *const c_char, dir: *const c_char) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings.
        let (url, dir) = unsafe { (text(url, "url")?, text(dir, "dir")?) };
        prollystore_dolt_remote::clone(url, Path::new(dir), &CloneOptions::default())?;
        Ok(())
    })
}

/// An optional C string (NULL: `None`).
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn optional_text<'a>(p: *const c_char, what: &str) -> Result<Option<&'a str>, Error> {
    if p.is_null() {
        Ok(None)
    } else {
        // SAFETY: the caller's contract.
        unsafe { text(p, what) }.map(Some)
    }
}

/// Fetches remote `remote` (a name in the database's `repo_state.json`, e.g. `origin`) into
/// the database at `dir`, as `dolt fetch REMOTE` does: only the chunks the database lacks
/// move, then `refs/remotes/REMOTE/*` are set to the remote's branches.
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT`: an unknown remote or not a database.
#[no_mangle]
pub extern "C" fn prolly_dolt_fetch(dir: *const c_char, remote: *const c_char) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings.
        let (dir, remote) = unsafe { (text(dir, "dir")?, text(remote, "remote")?) };
        prollystore_dolt_remote::fetch(Path::new(dir), remote, &CloneOptions::default())?;
        Ok(())
    })
}

/// Fetches `remote`, then fast-forwards the current branch of the database at `dir` to the
/// remote's `branch` (NULL: the current branch's upstream, else the branch of the same name),
/// as `dolt pull --ff-only` does. Refused, with only the fetch done, when the branch has
/// uncommitted changes or has diverged (the reason in `prolly_last_error_message`).
#[no_mangle]
pub extern "C" fn prolly_dolt_pull(
    dir: *const c_char,
    remote: *const c_char,
    branch: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings, `branch` may be NULL.
        let (dir, remote, branch) = unsafe {
            (
                text(dir, "dir")?,
                text(remote, "remote")?,
                optional_text(branch, "branch")?,
            )
        };
        prollystore_dolt_remote::pull(Path::new(dir), remote, branch, &CloneOptions::default())?;
        Ok(())
    })
}

/// Pushes local branch `branch` of the database at `dir` to the same branch of `remote`, as
/// `dolt push REMOTE BRANCH` does, fast-forward only: only the chunks the remote lacks move,
/// the remote's root moves last (compare-and-set), then `refs/remotes/REMOTE/BRANCH` follows.
/// `PROLLY_RESULT_ERR_ROOT_CONFLICT`: refused (not a fast-forward, or another push moved the
/// remote meanwhile); nothing changed on either side.
#[no_mangle]
pub extern "C" fn prolly_dolt_push(
    dir: *const c_char,
    remote: *const c_char,
    branch: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings.
        let (dir, remote, branch) = unsafe {
            (
                text(dir, "dir")?,
                text(remote, "remote")?,
                text(branch, "branch")?,
            )
        };
        prollystore_dolt_remote::push(Path::new(dir), remote, branch, &CloneOptions::default())?;
        Ok(())
    })
}
