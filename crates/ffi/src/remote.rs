//! Remotes (the `remote` Cargo feature): push a file store's maps to object storage, pull
//! them back, clone a remote into a new directory. URLs and credentials as in
//! `prollystore-remote` (`s3://bucket/prefix` with `AWS_*` environment variables, `gs://`,
//! `az://`, `file:///dir`).

use std::ffi::c_char;

use prollystore::BuiltinStore;
use prollystore_remote::{Remote, RemoteError};

use crate::args::{array, input, into_handle, text, Out};
use crate::result::{ffi, prolly_result, Error};
use crate::store::{prolly_store, Store};

impl From<RemoteError> for Error {
    fn from(e: RemoteError) -> Error {
        let code = match &e {
            RemoteError::Store(_) => {
                let RemoteError::Store(inner) = e else {
                    unreachable!()
                };
                return inner.into();
            }
            RemoteError::Conflict { .. } => prolly_result::ErrRootConflict,
            RemoteError::CorruptChunk { .. } => prolly_result::ErrCorrupted,
            RemoteError::MissingObject { .. } => prolly_result::ErrMissingChunk,
            RemoteError::BadUrl { .. } | RemoteError::Invalid(_) => {
                prolly_result::ErrInvalidArgument
            }
            _ => prolly_result::ErrIo,
        };
        Error::new(code, e.to_string())
    }
}

/// The store handle, remote name and URL arguments of push and pull.
///
/// # Safety
/// `store` is NULL or a valid handle; `remote_name` and `url` are NULL or NUL-terminated.
unsafe fn remote_args<'a>(
    store: *mut prolly_store,
    remote_name: *const c_char,
    url: *const c_char,
) -> Result<(&'a prolly_store, &'a str, &'a str), Error> {
    // SAFETY: the caller's contract, passed on.
    unsafe {
        Ok((
            input(store.cast_const(), "store")?,
            text(remote_name, "remote_name")?,
            text(url, "url")?,
        ))
    }
}

/// Runs `f` on the writable file store inside `store` (a mutating call).
fn with_writer<T>(
    store: &prolly_store,
    f: impl FnOnce(&mut prollystore::FileStore) -> Result<T, Error>,
) -> Result<T, Error> {
    let shared: &Store = &store.shared;
    // SAFETY: mutating call; its documented contract gives exclusive use of the store.
    let mut call = unsafe { shared.backend_mut() }?;
    match &mut *call {
        BuiltinStore::File(fs) => f(fs),
        BuiltinStore::Memory(_) => Err(Error::invalid(
            "remotes work with file stores, not memory stores",
        )),
    }
}

/// Pushes maps (named roots) of the file store `store` (opened as the writer) to the remote at
/// `url`, which the store calls `remote_name` (its tracking roots are
/// `remotes/<remote_name>/<map>`). `maps` lists `map_count` NUL-terminated root names; with
/// `map_count` 0 (and `maps` NULL allowed) every root except tracking roots is pushed.
/// `out_chunks` receives the number of chunks uploaded. `PROLLY_RESULT_ERR_ROOT_CONFLICT` if
/// another push won meanwhile or a map moved on the remote since the last pull: pull, retry.
/// Mutating call: same rules as `prolly_store_commit`.
#[no_mangle]
pub extern "C" fn prolly_remote_push(
    store: *mut prolly_store,
    remote_name: *const c_char,
    url: *const c_char,
    maps: *const *const c_char,
    map_count: usize,
    out_chunks: *mut u64,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: a valid handle and NUL-terminated strings, or NULLs.
        let (store, name, url) = unsafe { remote_args(store, remote_name, url) }?;
        let names: Vec<String> = if map_count == 0 {
            Vec::new()
        } else {
            // SAFETY: C caller's contract: `map_count` readable pointers.
            let ptrs = unsafe { array(maps, map_count, "maps") }?;
            ptrs.iter()
                // SAFETY: C caller's contract: each a NUL-terminated string.
                .map(|p| unsafe { text(*p, "maps[]") }.map(str::to_string))
                .collect::<Result<_, _>>()?
        };
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_chunks, "out_chunks") }?;
        let remote = Remote::open(url)?;
        let report = with_writer(store, |fs| {
            Ok(prollystore_remote::push(&remote, fs, name, &names)?)
        })?;
        out.set(report.chunks);
        Ok(())
    })
}

/// Pulls every map of the remote at `url` (called `remote_name` by the store) into the file
/// store `store` (opened as the writer): fetches the chunks it lacks, moves the maps not
/// changed locally since the last pull (others are left alone; the remote's root is then in
/// `remotes/<remote_name>/<map>`). `out_chunks` receives the number of chunks fetched.
/// Mutating call: same rules as `prolly_store_commit`.
#[no_mangle]
pub extern "C" fn prolly_remote_pull(
    store: *mut prolly_store,
    remote_name: *const c_char,
    url: *const c_char,
    out_chunks: *mut u64,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: a valid handle and NUL-terminated strings, or NULLs.
        let (store, name, url) = unsafe { remote_args(store, remote_name, url) }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_chunks, "out_chunks") }?;
        let remote = Remote::open(url)?;
        let report = with_writer(store, |fs| Ok(prollystore_remote::pull(&remote, fs, name)?))?;
        out.set(report.chunks);
        Ok(())
    })
}

/// Clones the remote at `url` into the new directory `dir` (the remote is recorded as
/// `origin`; every chunk is checked against its address) and opens it as the writer. Free the
/// handle with `prolly_store_free`.
#[no_mangle]
pub extern "C" fn prolly_remote_clone(
    url: *const c_char,
    dir: *const c_char,
    out_store: *mut *mut prolly_store,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NULL or NUL-terminated strings.
        let url = unsafe { text(url, "url") }?;
        // SAFETY: as above.
        let dir = unsafe { text(dir, "dir") }?;
        // SAFETY: C caller's contract: `out_store` is NULL or writable.
        let out = unsafe { Out::new(out_store, "out_store") }?;
        let fs = prollystore_remote::clone(&Remote::open(url)?, std::path::Path::new(dir))?;
        out.set(into_handle(prolly_store {
            shared: Store::new(BuiltinStore::File(fs)),
        }));
        Ok(())
    })
}
