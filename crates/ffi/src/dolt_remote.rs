//! Dolt remotes from C (the `dolt-remote` feature, off by default: it brings an async runtime,
//! gRPC and HTTP clients): `prolly_dolt_clone`, a Dolt database cloned from
//! `http://HOST:PORT/DB` (a `dolt sql-server --remotesapi-port`) or a `file://` directory
//! `dolt push` wrote, as `dolt clone` leaves it.

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
            RemoteError::BadUrl { .. } | RemoteError::Destination { .. } => {
                Error::invalid(e.to_string())
            }
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
