//! Memory a store lends for nodes to be serialized straight into it: the store's side of the
//! lending fast path ([`StoreFastPaths::lend`], [`StoreFastPaths::adopt`]). The tree side, which
//! sends a space to the hash thread and makes sure it comes back, is `tree::pipeline`.

use std::marker::PhantomData;
use std::ops::Range;
use std::ptr::NonNull;

use prollystore_format::Address;

use super::{StoreError, StoreFastPaths};

/// Memory a store lends ([`StoreFastPaths::lend`]) so that chunks can be written straight into
/// the place the store keeps them, possibly on another thread, and then handed back with
/// [`StoreFastPaths::adopt`], instead of being written into a buffer and copied into the store
/// (measured in `docs/PERF.md`, "Lent memory").
///
/// It is the only handle to its bytes: the store hands none of them out until they are
/// adopted, and the space borrows the store, so it cannot outlive it. Bytes a space holds
/// that are never adopted stay unused.
#[derive(Debug)]
pub struct LentSpace<'s> {
    start: NonNull<u8>,
    len: usize,
    /// The lending store's [`StoreFastPaths::adopt`] keeps chunks only from its own spaces.
    lender: u64,
    _store: PhantomData<&'s ()>,
}

// SAFETY: a space is the sole handle to its bytes (see the type's documentation), which the
// lending store neither reads nor writes until it gets them back through `adopt`, so they may
// be written on whichever thread holds the space, like a `Box<[u8]>`.
unsafe impl Send for LentSpace<'_> {}

impl<'s> LentSpace<'s> {
    /// A space of the `len` bytes at `start`, lent by the store with identity `lender`.
    ///
    /// # Safety
    /// The bytes must be initialized, valid for reads and writes for `'s`, and neither read
    /// nor written by anything else until the space is adopted or dropped.
    pub(crate) unsafe fn new(start: NonNull<u8>, len: usize, lender: u64) -> LentSpace<'s> {
        LentSpace {
            start,
            len,
            lender,
            _store: PhantomData,
        }
    }

    /// The same space, no longer tied to the store's borrow, so that it can travel with work
    /// sent to a long-lived thread.
    ///
    /// # Safety
    /// The caller must stop using the space (and every slice taken from it) before the
    /// borrow `'s` of the lending store ends.
    pub(crate) unsafe fn detach(self) -> LentSpace<'static> {
        LentSpace {
            start: self.start,
            len: self.len,
            lender: self.lender,
            _store: PhantomData,
        }
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Its bytes, to write chunks into.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `new`'s contract: the bytes are initialized, valid for `'s`, and this space
        // is their only handle; `&mut self` makes the slice the only borrow of them.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }

    /// Its bytes, to read chunks written into it.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: as in `bytes_mut`, shared.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }

    /// Where its bytes start, and the identity of the store that lent it.
    pub(crate) fn parts(&self) -> (NonNull<u8>, u64) {
        (self.start, self.lender)
    }
}

/// Checks that every range of `chunks` lies within a space of `len` bytes; returns the end of
/// the last byte any of them uses (0 if none).
pub(crate) fn lent_ranges_end(
    chunks: &[(Address, Range<usize>)],
    len: usize,
) -> Result<usize, StoreError> {
    let mut end = 0;
    for (_, r) in chunks {
        if r.start > r.end || r.end > len {
            return Err(StoreError::InvalidArgument(format!(
                "chunk range {r:?} is not within the lent space of {len} bytes"
            )));
        }
        end = end.max(r.end);
    }
    Ok(end)
}

/// Stores the nodes of `chunks` (ranges already checked against `space`) by copying them out
/// of the space: what [`StoreFastPaths::adopt`] does with a space it cannot keep.
///
/// # Safety
///
/// As [`StoreFastPaths::adopt`]: each range holds a node this process's `NodeWriter` wrote.
pub(crate) unsafe fn copy_lent<S: StoreFastPaths + ?Sized>(
    store: &S,
    space: &LentSpace<'_>,
    chunks: &[(Address, Range<usize>)],
) -> Result<(), StoreError> {
    for (address, range) in chunks {
        // SAFETY: the caller promises the range holds a node this process serialized.
        unsafe { store.put_node_hashed(*address, &space.bytes()[range.clone()]) }?;
    }
    Ok(())
}
