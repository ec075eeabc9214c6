//! Remotes (the `remote` Cargo feature): push a file store's maps to object storage, pull
//! them back, clone a remote into a new directory, open one read-only as a store handle the map
//! functions read in place. URLs and credentials as in
//! `prollystore-remote` (`s3://bucket/prefix` with `AWS_*` environment variables, `gs://`,
//! `az://`, `file:///dir`).

use std::ffi::c_char;

use prollystore::BuiltinStore;
use prollystore_remote::{Remote, RemoteError};

use crate::args::{array, input, into_handle, text, Out};
use crate::result::{ffi, prolly_result, Error};
use crate::store::{prolly_store, Backend, Store};

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
        Backend::Builtin(BuiltinStore::File(fs)) => f(fs),
        Backend::Builtin(BuiltinStore::Memory(_)) => Err(Error::invalid(
            "remotes work with file stores, not memory stores",
        )),
        Backend::Remote(_) => Err(Error::new(
            prolly_result::ErrReadOnly,
            "a remote store handle is read-only: push and pull work with file stores",
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

/// Opens the remote store at `url` (`s3://bucket/prefix`, `gs://…`, `az://…`, `file:///dir`)
/// read-only, in place: nothing is downloaded up front but its manifest, chunk-file indexes
/// and root nodes (three round trips); the map functions (gets, cursors, diffs) then fetch the
/// chunks they read with range reads (a cold point get: one round trip per tree level below
/// the root), prefetching siblings along scans. Chunks read stay in memory while cursors,
/// diffs or gets use them; `prolly_remote_trim` then drops the least recently used down to the
/// cache budget (64 MiB here; `prolly_remote_open_cached` sets another). Commits and pushes on
/// it fail with `PROLLY_RESULT_ERR_READ_ONLY`. Free it with `prolly_store_free`. Thread-safety
/// as a file store's.
#[no_mangle]
pub extern "C" fn prolly_remote_open(
    url: *const c_char,
    out_store: *mut *mut prolly_store,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NULL or a NUL-terminated string.
        let url = unsafe { text(url, "url") }?;
        // SAFETY: C caller's contract: `out_store` is NULL or writable.
        let out = unsafe { Out::new(out_store, "out_store") }?;
        let store = prollystore_remote::RemoteStore::open(url)?;
        out.set(into_handle(prolly_store {
            shared: Store::new(Backend::Remote(Box::new(store))),
        }));
        Ok(())
    })
}

/// `prolly_remote_open` with a cache budget of `cache_bytes` (at least a few dozen chunks,
/// e.g. 4 MiB; the default is 64 MiB).
#[no_mangle]
pub extern "C" fn prolly_remote_open_cached(
    url: *const c_char,
    cache_bytes: u64,
    out_store: *mut *mut prolly_store,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: NULL or a NUL-terminated string.
        let url = unsafe { text(url, "url") }?;
        // SAFETY: C caller's contract: `out_store` is NULL or writable.
        let out = unsafe { Out::new(out_store, "out_store") }?;
        let bytes = usize::try_from(cache_bytes)
            .map_err(|_| Error::invalid("cache_bytes does not fit this machine's memory"))?;
        let store = prollystore_remote::RemoteStore::from_remote(Remote::open(url)?, bytes)?;
        out.set(into_handle(prolly_store {
            shared: Store::new(Backend::Remote(Box::new(store))),
        }));
        Ok(())
    })
}

/// Drops the chunks a remote store handle holds beyond its cache budget, least recently used
/// first (a later read fetches a dropped chunk again). A mutating call: refused with
/// `PROLLY_RESULT_ERR_BUSY` while a cursor, diff or map builder of `store` is open, so call it
/// between them (e.g. after each batch of gets). `out_held_bytes` (may be NULL) receives the
/// bytes still held. On a file or memory store it does nothing (0 held).
#[no_mangle]
pub extern "C" fn prolly_remote_trim(
    store: *mut prolly_store,
    out_held_bytes: *mut u64,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let store = unsafe { input(store.cast_const(), "store") }?;
        let shared: &Store = &store.shared;
        // SAFETY: mutating call; its documented contract gives exclusive use of the store.
        let mut call = unsafe { shared.backend_mut() }?;
        let held = match &mut *call {
            Backend::Remote(r) => {
                r.trim();
                r.held_bytes() as u64
            }
            Backend::Builtin(_) => 0,
        };
        drop(call);
        if !out_held_bytes.is_null() {
            // SAFETY: C caller's contract: `out_held_bytes` is NULL (checked) or writable.
            unsafe { *out_held_bytes = held };
        }
        Ok(())
    })
}
