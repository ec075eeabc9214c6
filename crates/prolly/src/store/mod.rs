//! Where chunks live. Tree code reads and writes only through [`ChunkStore`], so the in-memory
//! store and the durable file store are interchangeable.
//!
//! Contract shared by every implementation:
//! * A chunk's address is its hash under the store's [`HashProfile`]; `put` computes it.
//! * Reads borrow from the store (`&self`): chunk bytes stay valid and unchanged for as long as
//!   the borrow lasts, even while other chunks are put through the same `&self`. Nothing that
//!   can be read is removed except through `&mut self` (garbage collection).
//! * Every chunk is checked once, on first read (its address, and for nodes the message
//!   verification); later reads trust that and cost no checks.

use std::marker::PhantomData;
use std::ops::Range;
use std::ptr::NonNull;

use prollystore_format::message::{MessageError, Node};
use prollystore_format::{Address, HashProfile};
use thiserror::Error;

/// What went wrong reading or writing chunks.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No chunk with this address is stored.
    #[error("chunk {0} is not in the store")]
    Missing(Address),
    /// The chunk's bytes do not hash to its address: the store is corrupted.
    #[error("chunk {address} is corrupted: its bytes hash to {actual}{}", location_suffix(.location))]
    HashMismatch {
        /// The address the chunk was stored under.
        address: Address,
        /// What its bytes hash to.
        actual: Address,
        /// Where it was read from (file and offset), if it came from a file.
        location: Option<String>,
    },
    /// The chunk is not a valid message of the expected kind.
    #[error("chunk {address} is not a valid message: {source}")]
    BadMessage {
        /// The chunk's address.
        address: Address,
        /// What verification found.
        #[source]
        source: MessageError,
    },
    /// An I/O error from the underlying files.
    #[error("{context}: {source}")]
    Io {
        /// What was being done, with the file name.
        context: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A store file is corrupted (flipped or missing bytes).
    #[error("{file} is corrupted at offset {offset}: {reason}")]
    Corrupted {
        /// The file.
        file: String,
        /// Byte offset of the problem.
        offset: u64,
        /// What is wrong.
        reason: String,
    },
    /// Another handle (this process or another) holds the store's writer lock.
    #[error("store {path} is locked by another writer")]
    Locked {
        /// The store directory.
        path: String,
    },
    /// A handle opened for reading was asked to write.
    #[error("store {path} was opened read-only")]
    ReadOnly {
        /// The store directory.
        path: String,
    },
    /// A root's compare-and-swap failed: it did not hold the expected value.
    #[error("root {name:?} is {}, expected {}", show_root(.actual), show_root(.expected))]
    RootConflict {
        /// The root's name.
        name: String,
        /// What the caller expected.
        expected: Option<Address>,
        /// What the store holds.
        actual: Option<Address>,
    },
    /// The store was made with another hash profile than the one asked for.
    #[error("store uses hash profile {found:?}, not {expected:?}")]
    ProfileMismatch {
        /// The profile asked for.
        expected: HashProfile,
        /// The profile recorded in the store.
        found: HashProfile,
    },
    /// A caller-supplied argument is unusable (for example an empty root name).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
}

fn location_suffix(location: &Option<String>) -> String {
    match location {
        Some(l) => format!(" (read from {l})"),
        None => String::new(),
    }
}

fn show_root(root: &Option<Address>) -> String {
    match root {
        Some(a) => a.to_string(),
        None => "absent".to_string(),
    }
}

/// A store's own name for a node it handed out (for [`MemoryStore`], its slot number), which
/// lets it find that node's children without looking their addresses up again
/// ([`ChunkStore::get_child`]). Meaningful only to the store that made it; [`NodeHint::NONE`]
/// says "no hint", and every store must accept it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeHint(u32);

impl NodeHint {
    /// No hint: the store finds the node by its address.
    pub const NONE: NodeHint = NodeHint(u32::MAX);

    /// A hint with the store's own number `n` (`u32::MAX` means none).
    #[inline]
    pub const fn new(n: u32) -> NodeHint {
        NodeHint(n)
    }

    /// The number given to [`NodeHint::new`], or `None` for [`NodeHint::NONE`].
    #[inline]
    pub fn get(self) -> Option<u32> {
        (self.0 != u32::MAX).then_some(self.0)
    }
}

/// Memory a store lends ([`ChunkStore::lend`]) so that chunks can be written straight into
/// the place the store keeps them, possibly on another thread, and then handed back with
/// [`ChunkStore::adopt`], instead of being written into a buffer and copied into the store
/// (the copy into a memory store's cold memory was a fifth of the time of 1,000 edits).
///
/// It is the only handle to its bytes: the store hands none of them out until they are
/// adopted, and the space borrows the store, so it cannot outlive it. Bytes a space holds
/// that are never adopted stay unused.
#[derive(Debug)]
pub struct LentSpace<'s> {
    start: NonNull<u8>,
    len: usize,
    /// The lending store's [`ChunkStore::adopt`] keeps chunks only from its own spaces.
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
/// of the space: what [`ChunkStore::adopt`] does with a space it cannot keep.
pub(crate) fn copy_lent<S: ChunkStore + ?Sized>(
    store: &S,
    space: &LentSpace<'_>,
    chunks: &[(Address, Range<usize>)],
) -> Result<(), StoreError> {
    for (address, range) in chunks {
        store.put_node_hashed(*address, &space.bytes()[range.clone()])?;
    }
    Ok(())
}

/// A content-addressed chunk store.
pub trait ChunkStore {
    /// The hash profile that makes this store's addresses.
    fn profile(&self) -> HashProfile;

    /// The bytes of the chunk at `address` (prefix included), or `None` if it is absent.
    /// The address is checked against the bytes on first read.
    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError>;

    /// The prolly-tree node at `address`, verified on first read; an error if it is absent or is
    /// not a valid `ProllyTreeNode`.
    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError>;

    /// True if the chunk is stored.
    fn has(&self, address: &Address) -> Result<bool, StoreError>;

    /// Stores `chunk` (a whole message, prefix included) and returns its address. Storing a
    /// chunk that is already present is a no-op.
    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError>;

    /// [`ChunkStore::put`] for a `ProllyTreeNode` this process has just serialized with
    /// `NodeWriter` (the tree builders do): the store may read it back with
    /// [`Node::from_own_writer`] instead of verifying it, since its bytes never left the
    /// process. Bytes from anywhere else must go through `put`.
    fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        self.put(chunk)
    }

    /// [`ChunkStore::get_node`], also returning a hint for [`ChunkStore::get_child`]. The
    /// default gives [`NodeHint::NONE`].
    #[inline]
    fn get_node_hinted(&self, address: &Address) -> Result<(Node<'_>, NodeHint), StoreError> {
        Ok((self.get_node(address)?, NodeHint::NONE))
    }

    /// Child `i` of the internal node `parent`, which this store handed out with `hint` (or
    /// any node, with [`NodeHint::NONE`]), with the child's own hint: the same node as
    /// `get_node(&parent.child(i))`, but a store may find it faster, for example from a list
    /// of the children's places kept with the parent (descents read the same upper nodes
    /// over and over). The default does exactly that lookup.
    ///
    /// # Panics
    /// If `parent` is a leaf or `i >= parent.count()` (as [`Node::child`]).
    #[inline]
    fn get_child(
        &self,
        parent: &Node<'_>,
        hint: NodeHint,
        i: usize,
    ) -> Result<(Node<'_>, NodeHint), StoreError> {
        let _ = hint;
        Ok((self.get_node(&parent.child(i))?, NodeHint::NONE))
    }

    /// [`ChunkStore::get_child`] in place, for descents: replaces `node` (which this store
    /// handed out with `hint`) by its child `i`, and `hint` by the child's hint. A store may
    /// write the child straight over `node` instead of returning it through a `Result` (the
    /// memory store's point gets spent ~50 instructions on such copies). The default calls
    /// `get_child`. On an error, `node` and `hint` are unchanged.
    ///
    /// # Panics
    /// As [`ChunkStore::get_child`].
    #[inline]
    fn descend<'a>(
        &'a self,
        node: &mut Node<'a>,
        hint: &mut NodeHint,
        i: usize,
    ) -> Result<(), StoreError> {
        (*node, *hint) = self.get_child(node, *hint, i)?;
        Ok(())
    }

    /// [`ChunkStore::put_node`] for a node whose address the caller has just computed with
    /// this store's profile (tree builds hash leaves on another thread): the store may take
    /// the address as given. The default ignores it and hashes again.
    fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        let _ = address;
        self.put_node(chunk).map(|_| ())
    }

    /// Lends about `want` bytes of the memory chunks are kept in, for `ProllyTreeNode`s to be
    /// serialized straight into it and then given to [`ChunkStore::adopt`]; `None` if the
    /// store does not lend (the default). A space may be shorter than asked for.
    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        let _ = want;
        None
    }

    /// Stores the nodes written into `space`: each `(address, range)` is a node this process
    /// serialized at `space.bytes()[range]`, and its address with this store's profile (as
    /// for [`ChunkStore::put_node_hashed`]). A space this store lent keeps the nodes where
    /// they are, and the rest of its bytes may be lent again; the default, and any store given
    /// another store's space, copies them with `put_node_hashed`.
    fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        lent_ranges_end(chunks, space.len())?;
        copy_lent(self, &space, chunks)
    }
}

mod arena;
pub mod file;
mod memory;
pub use file::{FileStore, OpenOptions, RootUpdate};
pub use memory::{AddressHasher, MemoryStore};
