//! Where chunks live. Tree code reads and writes only through two traits, so the in-memory
//! store, the durable file store and stores of your own are interchangeable:
//!
//! * [`ChunkStore`], the contract: five methods every store must provide.
//! * [`StoreFastPaths`], the optional capability: faster ways to do what trees do most
//!   (hinted descents, puts of nodes this process wrote or hashed, lent memory). Every method
//!   has a default built on the contract that is correct for any store, so
//!   `impl StoreFastPaths for MyStore {}` is a complete implementation.
//!
//! [`BuiltinStore`] is one type over the built-in stores that forwards every fast path (the C
//! ABI uses it).
//!
//! Contract shared by every implementation:
//! * A chunk's address is its hash under the store's [`HashProfile`]; `put` computes it.
//! * Reads borrow from the store (`&self`): chunk bytes stay valid and unchanged for as long as
//!   the borrow lasts, even while other chunks are put through the same `&self`. Nothing that
//!   can be read is removed except through `&mut self` (garbage collection).
//! * Every chunk is checked once, on first read (its address, and for nodes the message
//!   verification); later reads trust that and cost no checks.

use std::ops::Range;

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
/// ([`StoreFastPaths::get_child`]). Meaningful only to the store that made it; [`NodeHint::NONE`]
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

/// A content-addressed chunk store: the contract every store provides (see the
/// [module](self) for what it promises). Trees need [`StoreFastPaths`] too, whose defaults
/// are built on these five methods.
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
}

/// The optional fast paths of a store: what trees do most, done faster where a store can
/// (hinted descents, node puts without re-verifying or re-hashing, serializing into lent
/// memory). Every default is correct for any [`ChunkStore`] and documented with its method, so
/// a store of your own needs only `impl StoreFastPaths for MyStore {}`; override a method only
/// to make it faster, never to change what it returns. Tree code is generic over this trait.
pub trait StoreFastPaths: ChunkStore {
    /// [`ChunkStore::put`] for a `ProllyTreeNode` this process has just serialized with
    /// `NodeWriter` (the tree builders do): the store may read it back with
    /// [`Node::from_own_writer`] instead of verifying it, since its bytes never left the
    /// process. Bytes from anywhere else must go through `put`.
    ///
    /// # Safety
    ///
    /// `chunk` must be a node this process's `NodeWriter` serialized, unchanged since (the
    /// contract of [`Node::from_own_writer`], which the store may rely on when it reads the
    /// node back).
    unsafe fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        self.put(chunk)
    }

    /// [`ChunkStore::get_node`], also returning a hint for [`StoreFastPaths::get_child`]. The
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

    /// [`StoreFastPaths::get_child`] in place, for descents: replaces `node` (which this store
    /// handed out with `hint`) by its child `i`, and `hint` by the child's hint. A store may
    /// write the child straight over `node` instead of returning it through a `Result` (the
    /// memory store's point gets spent measurable time on such copies). The default calls
    /// `get_child`. On an error, `node` and `hint` are unchanged.
    ///
    /// # Panics
    /// As [`StoreFastPaths::get_child`].
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

    /// [`StoreFastPaths::put_node`] for a node whose address the caller has just computed with
    /// this store's profile (tree builds hash leaves on another thread): the store may take
    /// the address as given. The default ignores it and hashes again.
    ///
    /// # Safety
    ///
    /// As [`StoreFastPaths::put_node`].
    unsafe fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        let _ = address;
        // SAFETY: the caller's promise for `chunk` is `put_node`'s.
        unsafe { self.put_node(chunk) }.map(|_| ())
    }

    /// Lends about `want` bytes of the memory chunks are kept in, for `ProllyTreeNode`s to be
    /// serialized straight into it and then given to [`StoreFastPaths::adopt`]; `None` if the
    /// store does not lend (the default). A space may be shorter than asked for.
    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        let _ = want;
        None
    }

    /// Stores the nodes written into `space`: each `(address, range)` is a node this process
    /// serialized at `space.bytes()[range]`, and its address with this store's profile (as
    /// for [`StoreFastPaths::put_node_hashed`]). A space this store lent keeps the nodes where
    /// they are, and the rest of its bytes may be lent again; the default, and any store given
    /// another store's space, copies them with `put_node_hashed`.
    ///
    /// # Safety
    ///
    /// Each range must hold a node this process's `NodeWriter` serialized there, unchanged
    /// since (as for [`StoreFastPaths::put_node`]).
    unsafe fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        lent_ranges_end(chunks, space.len())?;
        // SAFETY: the caller's promise for the ranges is `copy_lent`'s.
        unsafe { copy_lent(self, &space, chunks) }
    }

    /// Says that the nodes at `addresses` are about to be read, in that order (the next leaves
    /// of a forward scan): a store whose reads cost per chunk may read and check them together
    /// beforehand, several hashes side by side or one request for many, so that the reads that
    /// follow find them ready. Nothing is reported here: a node that cannot be read fails the
    /// read that needs it. The default does nothing.
    fn prefetch(&self, addresses: &[Address]) {
        let _ = addresses;
    }

    /// True if [`StoreFastPaths::prefetch`] does something: scans of other stores skip the
    /// read-ahead's bookkeeping altogether (a constant, so it costs them nothing).
    const PREFETCHES: bool = false;
}

mod arena;
mod builtin;
pub mod file;
mod lend;
mod memory;
pub use arena::SharedArena;
pub use builtin::BuiltinStore;
pub use file::{FileStore, OpenOptions, RootUpdate};
pub use lend::LentSpace;
pub(crate) use lend::{copy_lent, lent_ranges_end};
pub(crate) use memory::release_spare_memory;
pub use memory::{AddressHasher, MemoryStore};

/// See [`crate::process::set_spare_memory_limit`].
pub(crate) fn set_spare_memory_limit(bytes: usize) {
    arena::set_spare_limit(bytes);
}
