//! Store handles: a directory store or an in-memory store, its named roots, verification,
//! blobs, and copying trees between stores.

use std::cell::UnsafeCell;
use std::collections::BTreeMap;
use std::ffi::c_char;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use prollystore::format::message::{file_id, BlobNode, Message};
use prollystore::format::{Address, HashProfile};
use prollystore::store::{FileStore, OpenOptions, RootUpdate};
use prollystore::{BuiltinStore, ChunkStore, MemoryStore, StoreError};

pub(crate) use crate::backend::{parts, parts_mut, Backend, Parts, PartsMut};

/// The error of a mutating call on a remote store handle.
#[cfg(feature = "remote")]
fn read_only_remote() -> Error {
    Error::new(
        prolly_result::ErrReadOnly,
        "a remote store handle is read-only: clone the remote to write",
    )
}

use crate::args::{array, bytes, free_handle, input, into_handle, text, Out};
use crate::result::{ffi, ffi_status, prolly_result, Error};

/// A 20-byte chunk address (the root of a tree, a blob...), passed by value.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct prolly_address {
    /// The address bytes.
    pub bytes: [u8; 20],
}

impl From<Address> for prolly_address {
    fn from(a: Address) -> prolly_address {
        prolly_address { bytes: a.0 }
    }
}

impl From<prolly_address> for Address {
    fn from(a: prolly_address) -> Address {
        Address(a.bytes)
    }
}

/// How a new store computes chunk addresses. Pass as a plain `uint32_t`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_hash_profile {
    /// blake3, truncated to 20 bytes (fast; prollystore's default).
    Blake3 = 1,
    /// SHA-512 truncated to 20 bytes, as Dolt addresses chunks (byte-compatible with Dolt).
    Dolt = 2,
}

fn profile(code: u32) -> Result<HashProfile, Error> {
    u8::try_from(code)
        .ok()
        .and_then(HashProfile::from_tag)
        .ok_or_else(|| Error::invalid(format!("unknown hash profile {code}")))
}

/// Bits of `prolly_store_open_file`'s `flags`. Pass as a plain `uint32_t`.
#[repr(u32)]
#[derive(Clone, Copy, Debug)]
pub enum prolly_open_flags {
    /// Open as the writer (takes the store's lock).
    Write = 1,
    /// Read chunk files into memory instead of mapping them (for network filesystems).
    NoMmap = 2,
}

/// What a store handle and every map, cursor and builder made from it share. The store closes
/// when the last of them is freed.
pub(crate) struct Store {
    /// Read through [`Store::backend`]; changed only by [`Store::backend_mut`].
    backend: UnsafeCell<Backend>,
    /// Named roots of an in-memory store (a file store keeps its own).
    mem_roots: Mutex<MemRoots>,
    /// Open cursors, diffs and map builders: they hold references into the backend, so
    /// mutating calls refuse to run while any is open.
    borrows: AtomicUsize,
    /// Set while a mutating call runs: a second one on another thread gets
    /// `PROLLY_RESULT_ERR_BUSY` instead of racing it.
    mutating: AtomicBool,
}

/// Exclusive access to a store's backend for one mutating call; ends when dropped.
pub(crate) struct MutatingCall<'a> {
    store: &'a Store,
    backend: &'a mut Backend,
}

impl std::ops::Deref for MutatingCall<'_> {
    type Target = Backend;
    fn deref(&self) -> &Backend {
        self.backend
    }
}

impl std::ops::DerefMut for MutatingCall<'_> {
    fn deref_mut(&mut self) -> &mut Backend {
        self.backend
    }
}

impl Drop for MutatingCall<'_> {
    fn drop(&mut self) {
        self.store.mutating.store(false, Ordering::Release);
    }
}

impl Store {
    pub(crate) fn new(backend: impl Into<Backend>) -> Arc<Store> {
        Arc::new(Store {
            backend: UnsafeCell::new(backend.into()),
            mem_roots: Mutex::new((BTreeMap::new(), 0)),
            borrows: AtomicUsize::new(0),
            mutating: AtomicBool::new(false),
        })
    }

    /// Shared access to the chunk store.
    #[inline]
    pub(crate) fn backend(&self) -> &Backend {
        // SAFETY: the only `&mut` to the backend is made by `backend_mut`, which requires (checked)
        // that no cursor, diff or builder holds a reference and (documented contract of the
        // mutating C functions) that no other call on this store runs concurrently.
        unsafe { &*self.backend.get() }
    }

    /// Exclusive access to the chunk store for commit and refresh. A second mutating call
    /// while one runs (two threads committing through one handle) gets `ERR_BUSY`.
    ///
    /// # Safety
    /// No other reference from [`Store::backend`] may be alive: the caller is a mutating C
    /// function whose documented contract forbids concurrent reads of the store.
    pub(crate) unsafe fn backend_mut(&self) -> Result<MutatingCall<'_>, Error> {
        if self
            .mutating
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::new(
                prolly_result::ErrBusy,
                "another thread is committing or refreshing this store; retry when it is done",
            ));
        }
        if self.borrows.load(Ordering::Acquire) != 0 {
            self.mutating.store(false, Ordering::Release);
            return Err(Error::new(
                prolly_result::ErrBusy,
                "cursors, diffs or map builders on this store are still open; free them first",
            ));
        }
        // SAFETY: no borrowing handle is open (checked), no other mutating call runs (the flag
        // just taken) and no concurrent read runs (contract).
        let backend = unsafe { &mut *self.backend.get() };
        Ok(MutatingCall {
            store: self,
            backend,
        })
    }
}

/// Marks a handle that holds references into a store's backend; keeps the store alive.
pub(crate) struct Borrow(pub(crate) Arc<Store>);

impl Borrow {
    pub(crate) fn new(store: &Arc<Store>) -> Borrow {
        store.borrows.fetch_add(1, Ordering::AcqRel);
        Borrow(Arc::clone(store))
    }
}

impl Drop for Borrow {
    fn drop(&mut self) {
        self.0.borrows.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An open chunk store: a durable directory store or an in-memory store.
///
/// Thread-safety: a **file** store handle may be used by several threads at once for every
/// call except the mutating ones (`prolly_store_commit`, `prolly_store_refresh`), which need
/// exclusive use of the store and of every map made from it for their duration. A **memory**
/// store is not thread-safe at all: use it, and every map, cursor and builder made from it,
/// from one thread at a time (moving between threads is fine).
///
/// Lifetime: maps, cursors, diffs and builders made from the store keep it alive; the store
/// closes (and a writer releases its lock) when the handle and all of them are freed.
pub struct prolly_store {
    pub(crate) shared: Arc<Store>,
}

/// Creates an empty in-memory store whose addresses use `hash_profile` (a
/// `prolly_hash_profile` value). Free it with `prolly_store_free`.
#[no_mangle]
pub extern "C" fn prolly_store_new_memory(
    hash_profile: u32,
    out_store: *mut *mut prolly_store,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: `out_store` is NULL or writable.
        let out = unsafe { Out::new(out_store, "out_store") }?;
        let p = profile(hash_profile)?;
        let shared = Store::new(BuiltinStore::Memory(MemoryStore::new(p)));
        out.set(into_handle(prolly_store { shared }));
        Ok(())
    })
}

/// Creates a file store in directory `dir` (created if missing), or opens it if it already
/// holds a store with the same hash profile; the handle is the writer. Free it with
/// `prolly_store_free`.
#[no_mangle]
pub extern "C" fn prolly_store_create_file(
    dir: *const c_char,
    hash_profile: u32,
    out_store: *mut *mut prolly_store,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: `dir` is NULL or a NUL-terminated string.
        let dir = unsafe { text(dir, "dir") }?;
        // SAFETY: C caller's contract: `out_store` is NULL or writable.
        let out = unsafe { Out::new(out_store, "out_store") }?;
        let fs = FileStore::create(dir, profile(hash_profile)?)?;
        out.set(into_handle(prolly_store {
            shared: Store::new(BuiltinStore::File(fs)),
        }));
        Ok(())
    })
}

/// Opens the existing file store in `dir`. `flags` is 0 (read-only, mapped) or a bitwise OR of
/// `prolly_open_flags`. Free it with `prolly_store_free`.
#[no_mangle]
pub extern "C" fn prolly_store_open_file(
    dir: *const c_char,
    flags: u32,
    out_store: *mut *mut prolly_store,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: `dir` is NULL or a NUL-terminated string.
        let dir = unsafe { text(dir, "dir") }?;
        // SAFETY: C caller's contract: `out_store` is NULL or writable.
        let out = unsafe { Out::new(out_store, "out_store") }?;
        let known = prolly_open_flags::Write as u32 | prolly_open_flags::NoMmap as u32;
        if flags & !known != 0 {
            return Err(Error::invalid(format!("unknown open flags {flags:#x}")));
        }
        let fs = OpenOptions::new()
            .write(flags & prolly_open_flags::Write as u32 != 0)
            .mmap(flags & prolly_open_flags::NoMmap as u32 == 0)
            .open(dir)?;
        out.set(into_handle(prolly_store {
            shared: Store::new(BuiltinStore::File(fs)),
        }));
        Ok(())
    })
}

/// Frees a store handle (NULL is a no-op). The store itself closes once every map, cursor,
/// diff and builder made from it is freed too. Every pointer returned into the store's chunks
/// becomes invalid when the store closes.
#[no_mangle]
pub extern "C" fn prolly_store_free(store: *mut prolly_store) {
    let _ = ffi!({
        // SAFETY: C caller's contract: `store` is NULL or a handle from this library, not used
        // afterwards.
        unsafe { free_handle(store) };
        Ok(())
    });
}

/// Gives back to the system the memory that freed memory stores left for the memory stores made
/// after them (up to 128 MiB of chunk blocks and 8 MiB of per-chunk records per process), and
/// writes how many bytes that was to `out_bytes`. Until then that memory counts in the process's
/// resident size (on Linux the kernel may still reclaim it under memory pressure). Open stores
/// keep everything they hold.
#[no_mangle]
pub extern "C" fn prolly_release_spare_memory(out_bytes: *mut usize) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: `out_bytes` is NULL or writable.
        let out = unsafe { Out::new(out_bytes, "out_bytes") }?;
        out.set(prollystore::process::release_spare_memory());
        Ok(())
    })
}

/// Reads root `name` (a NUL-terminated UTF-8 string) into `out_root`. Returns
/// `PROLLY_RESULT_NOT_FOUND` (leaving `out_root` untouched) if the store has no such root. A
/// read-only file store sees the roots of the snapshot it opened (see `prolly_store_refresh`).
#[no_mangle]
pub extern "C" fn prolly_store_root_get(
    store: *const prolly_store,
    name: *const c_char,
    out_root: *mut prolly_address,
) -> prolly_result {
    ffi_status!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let store = unsafe { input(store, "store") }?;
        // SAFETY: C caller's contract: NUL-terminated string or NULL.
        let name = unsafe { text(name, "name") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_root, "out_root") }?;
        let found = match parts(store.shared.backend()) {
            Parts::Builtin(BuiltinStore::File(fs)) => fs.root(name),
            Parts::Builtin(BuiltinStore::Memory(_)) => {
                lock_roots(&store.shared)?.0.get(name).copied()
            }
            #[cfg(feature = "remote")]
            Parts::Remote(rs) => rs.root(name),
        };
        Ok(match found {
            Some(a) => {
                out.set(a.into());
                prolly_result::Ok
            }
            None => prolly_result::NotFound,
        })
    })
}

/// Named roots of a memory store and its commit counter.
type MemRoots = (BTreeMap<String, Address>, u64);

fn lock_roots(store: &Store) -> Result<std::sync::MutexGuard<'_, MemRoots>, Error> {
    store
        .mem_roots
        .lock()
        .map_err(|_| Error::new(prolly_result::ErrPanic, "root table poisoned by a panic"))
}

/// One compare-and-swap of a named root, for `prolly_store_commit`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct prolly_root_update {
    /// The root's name: NUL-terminated UTF-8, 1 to 1024 bytes.
    pub name: *const c_char,
    /// The value the root must hold now; NULL means it must not exist.
    pub expected: *const prolly_address,
    /// The root's new value (a chunk in the store); NULL deletes the root.
    pub new_root: *const prolly_address,
}

/// Applies root updates atomically: each is a compare-and-swap, checked in order; if any fails
/// nothing changes and the call returns `PROLLY_RESULT_ERR_ROOT_CONFLICT`. For a file store this
/// also makes every chunk written since the last commit durable (writer handles only), and
/// `out_generation` receives the store's new commit counter; a memory store counts its commits.
///
/// Mutating call: needs exclusive use of the store (no concurrent call on it or its maps) and
/// fails with `PROLLY_RESULT_ERR_BUSY` while cursors, diffs or map builders on it are open, or
/// while another thread's commit or refresh on it runs (nothing changes then; retry).
/// Pointers returned by earlier `get`s on this store's maps become invalid.
#[no_mangle]
pub extern "C" fn prolly_store_commit(
    store: *mut prolly_store,
    updates: *const prolly_root_update,
    update_count: usize,
    out_generation: *mut u64,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let store = unsafe { input(store.cast_const(), "store") }?;
        // SAFETY: C caller's contract: `update_count` readable items.
        let ups = unsafe { array(updates, update_count, "updates") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_generation, "out_generation") }?;
        let mut parsed = Vec::with_capacity(ups.len());
        for u in ups {
            // SAFETY: C caller's contract: each name is a NUL-terminated string.
            let name = unsafe { text(u.name, "updates[].name") }?;
            // SAFETY: C caller's contract: NULL or a readable address.
            let expected = unsafe { u.expected.as_ref() }.map(|a| Address::from(*a));
            // SAFETY: C caller's contract: NULL or a readable address.
            let new = unsafe { u.new_root.as_ref() }.map(|a| Address::from(*a));
            parsed.push(RootUpdate::new(name, expected, new));
        }
        let shared = &store.shared;
        // SAFETY: mutating call; its documented contract gives exclusive use of the store.
        let mut call = unsafe { shared.backend_mut() }?;
        let generation = match parts_mut(&mut call) {
            #[cfg(feature = "remote")]
            PartsMut::Remote => return Err(read_only_remote()),
            PartsMut::Builtin(BuiltinStore::File(fs)) => fs.commit(&parsed)?,
            PartsMut::Builtin(BuiltinStore::Memory(ms)) => {
                let mut roots = lock_roots(shared)?;
                let mut next = roots.0.clone();
                for u in &parsed {
                    if u.name.is_empty() || u.name.len() > 1024 {
                        return Err(Error::invalid("root names are 1 to 1024 bytes"));
                    }
                    let actual = next.get(u.name).copied();
                    if actual != u.expected {
                        return Err(StoreError::RootConflict {
                            name: u.name.to_string(),
                            expected: u.expected,
                            actual,
                        }
                        .into());
                    }
                    match u.new {
                        Some(a) if !ms.has(&a)? => return Err(StoreError::Missing(a).into()),
                        Some(a) => next.insert(u.name.to_string(), a),
                        None => next.remove(u.name),
                    };
                }
                roots.0 = next;
                roots.1 += 1;
                roots.1
            }
        };
        out.set(generation);
        Ok(())
    })
}

/// For a read-only file store: moves the handle's snapshot to the latest commit;
/// `out_changed` says whether it moved. Writers and memory stores always see the latest state
/// (`out_changed` = false). Mutating call: same rules as `prolly_store_commit`.
#[no_mangle]
pub extern "C" fn prolly_store_refresh(
    store: *mut prolly_store,
    out_changed: *mut bool,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let store = unsafe { input(store.cast_const(), "store") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_changed, "out_changed") }?;
        // SAFETY: mutating call; its documented contract gives exclusive use of the store.
        let mut call = unsafe { store.shared.backend_mut() }?;
        let changed = match parts_mut(&mut call) {
            PartsMut::Builtin(BuiltinStore::File(fs)) => fs.refresh()?,
            PartsMut::Builtin(BuiltinStore::Memory(_)) => false,
            #[cfg(feature = "remote")]
            PartsMut::Remote => false,
        };
        out.set(changed);
        Ok(())
    })
}

/// What `prolly_store_verify` checked.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct prolly_verify_report {
    /// Chunk files checked (0 for a memory store).
    pub files: u64,
    /// Chunks whose hash was checked.
    pub chunks: u64,
    /// Bytes of chunk data hashed.
    pub bytes: u64,
    /// Chunks that are known messages and passed message verification.
    pub messages: u64,
}

/// Re-reads and checks every committed chunk (hash; message structure for known kinds) and that
/// every root names a stored chunk. Returns `PROLLY_RESULT_ERR_CORRUPTED` with the place in
/// `prolly_last_error_message` on the first problem.
#[no_mangle]
pub extern "C" fn prolly_store_verify(
    store: *const prolly_store,
    out_report: *mut prolly_verify_report,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let store = unsafe { input(store, "store") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_report, "out_report") }?;
        let report = match parts(store.shared.backend()) {
            #[cfg(feature = "remote")]
            Parts::Remote(_) => return Err(Error::invalid(
                "verifying a remote store in place is not supported: clone it and verify the clone",
            )),
            Parts::Builtin(BuiltinStore::File(fs)) => {
                let r = fs.verify()?;
                prolly_verify_report {
                    files: r.files as u64,
                    chunks: r.chunks,
                    bytes: r.bytes,
                    messages: r.messages,
                }
            }
            Parts::Builtin(BuiltinStore::Memory(ms)) => {
                let mut r = prolly_verify_report::default();
                for a in ms.addresses() {
                    let chunk = ms.get(&a)?.ok_or(StoreError::Missing(a))?;
                    let actual = ms.profile().address_of(chunk);
                    if actual != a {
                        return Err(StoreError::HashMismatch {
                            address: a,
                            actual,
                            location: None,
                        }
                        .into());
                    }
                    r.chunks += 1;
                    r.bytes += chunk.len() as u64;
                    if prollystore::format::message::Message::verify(chunk).is_ok() {
                        r.messages += 1;
                    }
                }
                for (name, a) in &lock_roots(&store.shared)?.0 {
                    if !ms.has(a)? {
                        return Err(Error::new(
                            prolly_result::ErrCorrupted,
                            format!("root {name:?} names chunk {a}, which is not stored"),
                        ));
                    }
                }
                r
            }
        };
        out.set(report);
        Ok(())
    })
}

/// Copies the bytes of the blob tree at `address` (an out-of-band value, see
/// `prolly_field_adaptive`) into `buf`. `*out_len` receives the blob's length on success and on
/// `PROLLY_RESULT_ERR_BUFFER_TOO_SMALL` (then nothing is copied; call again with a larger
/// buffer). `buf` may be NULL when `buf_len` is 0. An address of a chunk that is not a blob
/// (a map node, say) is `PROLLY_RESULT_ERR_INVALID_ARGUMENT`; a damaged blob is
/// `PROLLY_RESULT_ERR_CORRUPTED`.
#[no_mangle]
pub extern "C" fn prolly_store_read_blob(
    store: *const prolly_store,
    address: *const prolly_address,
    buf: *mut u8,
    buf_len: usize,
    out_len: *mut usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handle or NULL.
        let store = unsafe { input(store, "store") }?;
        // SAFETY: C caller's contract: readable or NULL.
        let address = Address::from(*unsafe { input(address, "address") }?);
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_len, "out_len") }?;
        if buf.is_null() && buf_len > 0 {
            return Err(Error::null("buf"));
        }
        let backend = store.shared.backend();
        if let Some(chunk) = backend.get(&address)? {
            // A well-formed message of another kind is the caller's mistake, not damage.
            if BlobNode::verify(chunk).is_err() {
                if let Ok(id) = file_id(chunk) {
                    if Message::verify(chunk).is_ok() {
                        return Err(Error::invalid(format!(
                            "chunk {address} is a {} message, not a blob",
                            String::from_utf8_lossy(&id)
                        )));
                    }
                }
            }
        }
        let mut data = Vec::new();
        prollystore::blob::read_blob(backend, &address, &mut data)?;
        if data.len() > buf_len {
            out.set(data.len());
            return Err(Error::new(
                prolly_result::ErrBufferTooSmall,
                format!("the blob holds {} bytes; the buffer {buf_len}", data.len()),
            ));
        }
        if !data.is_empty() {
            // SAFETY: `buf` is non-null (len > 0) and writable for `buf_len >= data.len()` bytes
            // per the caller's contract; `data` is a distinct allocation.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), buf, data.len()) };
        }
        out.set(data.len());
        Ok(())
    })
}

/// Copies the tree at `root` (its nodes and the blobs its values reference) from store `from`
/// into store `to`, skipping subtrees `to` already has; `out_copied` receives the number of
/// chunks written. The copy is durable in a file store only after `prolly_store_commit` on `to`.
#[no_mangle]
pub extern "C" fn prolly_copy_tree(
    from: *const prolly_store,
    to: *const prolly_store,
    root: *const prolly_address,
    out_copied: *mut u64,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: valid handles or NULL.
        let (from, to) = unsafe { (input(from, "from")?, input(to, "to")?) };
        // SAFETY: C caller's contract: readable or NULL.
        let root = Address::from(*unsafe { input(root, "root") }?);
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_copied, "out_copied") }?;
        let n =
            prollystore::tree::copy::copy_tree(from.shared.backend(), to.shared.backend(), &root)?;
        out.set(n as u64);
        Ok(())
    })
}

/// Writes `address` in Dolt's 32-character base32 spelling plus a NUL into `buf`, which must
/// hold at least 33 bytes (`buf_len`); otherwise `PROLLY_RESULT_ERR_BUFFER_TOO_SMALL`.
#[no_mangle]
pub extern "C" fn prolly_address_to_string(
    address: *const prolly_address,
    buf: *mut c_char,
    buf_len: usize,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: readable or NULL.
        let a = Address::from(*unsafe { input(address, "address") }?);
        if buf.is_null() {
            return Err(Error::null("buf"));
        }
        let s = a.to_base32();
        if buf_len < s.len() + 1 {
            return Err(Error::new(
                prolly_result::ErrBufferTooSmall,
                format!("an address needs {} bytes", s.len() + 1),
            ));
        }
        // SAFETY: `buf` is non-null and writable for `buf_len >= s.len() + 1` bytes per the
        // caller's contract.
        unsafe {
            std::ptr::copy_nonoverlapping(s.as_ptr(), buf.cast::<u8>(), s.len());
            buf.add(s.len()).write(0);
        }
        Ok(())
    })
}

/// Parses an address from `len` bytes of its base32 spelling (as `prolly_address_to_string`
/// writes, without the NUL).
#[no_mangle]
pub extern "C" fn prolly_address_from_string(
    text_ptr: *const c_char,
    len: usize,
    out_address: *mut prolly_address,
) -> prolly_result {
    ffi!({
        // SAFETY: C caller's contract: `len` readable bytes.
        let b = unsafe { bytes(text_ptr.cast::<u8>(), len, "text_ptr") }?;
        // SAFETY: C caller's contract: writable or NULL.
        let out = unsafe { Out::new(out_address, "out_address") }?;
        let s = std::str::from_utf8(b).map_err(|_| Error::invalid("address is not UTF-8"))?;
        let a = Address::from_base32(s).map_err(|e| Error::invalid(e.to_string()))?;
        out.set(a.into());
        Ok(())
    })
}
