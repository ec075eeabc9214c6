//! Dolt remotes from C (the `dolt-remote` feature, off by default: it brings an async runtime,
//! gRPC and HTTP clients): `prolly_dolt_clone`, a Dolt database cloned from
//! `http://HOST:PORT/DB` (a `dolt sql-server --remotesapi-port`) or a `file://` directory
//! `dolt push` wrote, as `dolt clone` leaves it; `prolly_dolt_fetch`, `prolly_dolt_pull` and
//! `prolly_dolt_push` on a database's remotes (`repo_state.json`), as `dolt fetch`, `dolt pull
//! --ff-only` and `dolt push` do; `prolly_dolt_open_remote`, a database on a remote read in
//! place, without cloning.

use std::cell::RefCell;
use std::ffi::c_char;
use std::path::Path;

use prollystore_dolt_remote::{CloneOptions, Credentials, RemoteError};

use crate::args::{into_handle, opt_text, text, Out};
use crate::dolt::prolly_dolt;
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
            RemoteError::Credentials { .. } => Error::new(R::ErrDenied, e.to_string()),
            _ => Error::new(R::ErrIo, e.to_string()),
        }
    }
}

thread_local! {
    /// What this thread's remote calls send (`prolly_dolt_remote_credentials`).
    static CREDENTIALS: RefCell<Option<Credentials>> = const { RefCell::new(None) };
}

/// The options of this thread's remote calls: its credentials, and `prune`.
fn options(prune: bool) -> CloneOptions {
    CloneOptions {
        credentials: CREDENTIALS.with(|c| c.borrow().clone()),
        ..CloneOptions::with_prune(prune)
    }
}

/// Sets the credentials that the Dolt remote calls this thread makes from now on send, as
/// `dolt --user USER` does with `DOLT_REMOTE_PASSWORD`: `user` and `password` (NULL: read
/// from `DOLT_REMOTE_PASSWORD`, `PROLLY_RESULT_ERR_INVALID_ARGUMENT` when it is not set). A
/// NULL `user` clears them; a `dolt sql-server` then takes a call as `root` with no password.
/// A remote that refuses them fails the call with `PROLLY_RESULT_ERR_DENIED`.
#[no_mangle]
pub extern "C" fn prolly_dolt_remote_credentials(
    user: *const c_char,
    password: *const c_char,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NUL-terminated strings or NULL.
        let (user, password) =
            unsafe { (opt_text(user, "user")?, opt_text(password, "password")?) };
        let credentials = match (user, password) {
            (None, _) => None,
            (Some(user), Some(password)) => Some(Credentials {
                user: user.to_string(),
                password: password.to_string(),
            }),
            (Some(user), None) => Some(Credentials::from_env(user)?),
        };
        CREDENTIALS.with(|c| *c.borrow_mut() = credentials);
        Ok(())
    })
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
        prollystore_dolt_remote::clone(url, Path::new(dir), &options(false))?;
        Ok(())
    })
}

/// Opens the Dolt database at `url` (`http://HOST:PORT/DB`, a `dolt sql-server
/// --remotesapi-port`, or a `file://` directory `dolt push` wrote) read-only, in place: the
/// remote is asked for its root now, and chunks are fetched as reads need them (batched range
/// reads, each chunk checked against its address), nothing is cloned. `cache_bytes` bounds the
/// decompressed-chunk cache (0: the default). The handle is a `prolly_dolt` like
/// `prolly_dolt_open`'s; a remote has no current branch, so name one in each read. Free with
/// `prolly_dolt_free`. `PROLLY_RESULT_NOT_FOUND`: no Dolt database at `url`;
/// `PROLLY_RESULT_ERR_INVALID_ARGUMENT`: a bad URL.
#[no_mangle]
pub extern "C" fn prolly_dolt_open_remote(
    url: *const c_char,
    cache_bytes: usize,
    out_db: *mut *mut prolly_dolt,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: a NUL-terminated string or NULL.
        let url = unsafe { text(url, "url") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_db, "out_db") }?;
        let mut options = prollystore_dolt_remote::OpenOptions {
            credentials: CREDENTIALS.with(|c| c.borrow().clone()),
            ..Default::default()
        };
        if cache_bytes > 0 {
            options.cache_bytes = cache_bytes;
        }
        let db = prollystore_dolt_remote::open_remote(url, &options)?
            .with_expressions(prollystore_sql::engine());
        out.set(into_handle(prolly_dolt::new(db)));
        Ok(())
    })
}

/// The calls on a database's remote (fetch, pull, push): `dir` and `remote` read (NULL or
/// not UTF-8 refused), then `run` with them.
///
/// # Safety
/// `dir` and `remote` are NULL or NUL-terminated strings valid for the call.
unsafe fn on_remote(
    dir: *const c_char,
    remote: *const c_char,
    run: impl FnOnce(&Path, &str) -> Result<(), Error>,
) -> prolly_result {
    ffi!({
        // SAFETY: the caller's contract.
        let (dir, remote) = unsafe { (text(dir, "dir")?, text(remote, "remote")?) };
        run(Path::new(dir), remote)
    })
}

/// Fetches remote `remote` (a name in the database's `repo_state.json`, e.g. `origin`) into
/// the database at `dir`, as `dolt fetch REMOTE` does: only the chunks the database lacks
/// move, then `refs/remotes/REMOTE/BRANCH` is set for each of the remote's branches.
/// `prune`: then the remote-tracking refs of branches the remote no longer has are removed,
/// as `dolt fetch --prune` does. `PROLLY_RESULT_ERR_INVALID_ARGUMENT`: an unknown remote or
/// not a database.
#[no_mangle]
pub extern "C" fn prolly_dolt_fetch(
    dir: *const c_char,
    remote: *const c_char,
    prune: bool,
) -> prolly_result {
    let options = options(prune);
    // SAFETY: C caller's contract: NUL-terminated strings.
    unsafe {
        on_remote(dir, remote, |dir, remote| {
            prollystore_dolt_remote::fetch(dir, remote, &options)?;
            Ok(())
        })
    }
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
    // SAFETY: C caller's contract: NUL-terminated strings, `branch` may be NULL.
    unsafe {
        on_remote(dir, remote, |dir, remote| {
            let branch = opt_text(branch, "branch")?;
            prollystore_dolt_remote::pull(dir, remote, branch, &options(false))?;
            Ok(())
        })
    }
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
    // SAFETY: C caller's contract: NUL-terminated strings.
    unsafe {
        on_remote(dir, remote, |dir, remote| {
            let branch = text(branch, "branch")?;
            prollystore_dolt_remote::push(dir, remote, branch, &options(false))?;
            Ok(())
        })
    }
}
