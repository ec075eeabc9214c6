//! One store type for callers that choose at run time between a local store and a remote read
//! in place (the C ABI's store handles, the command-line tool's `-s` option), forwarding the
//! store contract and every fast path to the store inside.

use std::collections::BTreeMap;
use std::ops::Range;

use prollystore::format::message::Node;
use prollystore::format::{Address, HashProfile};
use prollystore::store::{LentSpace, NodeHint};
use prollystore::{BuiltinStore, ChunkStore, FileStore, StoreError, StoreFastPaths};

use crate::RemoteStore;

/// A built-in store (memory or file) or a remote store read in place. Every method of the
/// store traits is forwarded (a wrapper forwarding only some would silently fall back to the
/// slow defaults for the rest). The built-in store stays unboxed, since a box would add an
/// indirection to every get; the remote one is boxed, so the variants differ in size.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum BuiltinOrRemote {
    /// A memory or file store.
    Builtin(BuiltinStore),
    /// A remote, read-only.
    Remote(Box<RemoteStore>),
}

/// No named roots (a memory store's).
static NO_ROOTS: BTreeMap<String, Address> = BTreeMap::new();

impl BuiltinOrRemote {
    /// The named roots: a file store's or the remote's; none for a memory store.
    pub fn roots(&self) -> &BTreeMap<String, Address> {
        match self {
            BuiltinOrRemote::Builtin(BuiltinStore::File(s)) => s.roots(),
            BuiltinOrRemote::Builtin(BuiltinStore::Memory(_)) => &NO_ROOTS,
            BuiltinOrRemote::Remote(s) => s.roots(),
        }
    }
}

impl prollystore::catalog::NamedRoots for BuiltinOrRemote {
    fn named_roots(&self) -> &BTreeMap<String, Address> {
        self.roots()
    }
}

impl From<BuiltinStore> for BuiltinOrRemote {
    fn from(store: BuiltinStore) -> BuiltinOrRemote {
        BuiltinOrRemote::Builtin(store)
    }
}

impl From<FileStore> for BuiltinOrRemote {
    fn from(store: FileStore) -> BuiltinOrRemote {
        BuiltinOrRemote::Builtin(BuiltinStore::File(store))
    }
}

impl From<RemoteStore> for BuiltinOrRemote {
    fn from(store: RemoteStore) -> BuiltinOrRemote {
        BuiltinOrRemote::Remote(Box::new(store))
    }
}

/// Calls `$call` on the store inside `$self`.
macro_rules! forward {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            BuiltinOrRemote::Builtin($s) => $call,
            BuiltinOrRemote::Remote(b) => {
                let $s: &RemoteStore = b;
                $call
            }
        }
    };
}

impl ChunkStore for BuiltinOrRemote {
    #[inline]
    fn profile(&self) -> HashProfile {
        forward!(self, s => ChunkStore::profile(s))
    }
    #[inline]
    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        forward!(self, s => ChunkStore::get(s, address))
    }
    #[inline]
    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        forward!(self, s => ChunkStore::get_node(s, address))
    }
    #[inline]
    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        forward!(self, s => ChunkStore::has(s, address))
    }
    #[inline]
    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        forward!(self, s => ChunkStore::put(s, chunk))
    }
}

impl StoreFastPaths for BuiltinOrRemote {
    #[inline]
    unsafe fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        forward!(self, s => unsafe { s.put_node(chunk) })
    }
    #[inline]
    fn get_node_hinted(&self, address: &Address) -> Result<(Node<'_>, NodeHint), StoreError> {
        forward!(self, s => s.get_node_hinted(address))
    }
    #[inline]
    fn get_child(
        &self,
        parent: &Node<'_>,
        hint: NodeHint,
        i: usize,
    ) -> Result<(Node<'_>, NodeHint), StoreError> {
        forward!(self, s => s.get_child(parent, hint, i))
    }
    #[inline]
    fn descend<'a>(
        &'a self,
        node: &mut Node<'a>,
        hint: &mut NodeHint,
        i: usize,
    ) -> Result<(), StoreError> {
        forward!(self, s => s.descend(node, hint, i))
    }
    #[inline]
    unsafe fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        forward!(self, s => unsafe { s.put_node_hashed(address, chunk) })
    }
    #[inline]
    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        forward!(self, s => s.lend(want))
    }
    #[inline]
    unsafe fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        // SAFETY: the caller's promise (this method's contract) is the inner store's.
        forward!(self, s => unsafe { s.adopt(space, chunks) })
    }
}
