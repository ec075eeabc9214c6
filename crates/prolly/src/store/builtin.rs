//! One type over the built-in stores, for callers that choose a store at run time (the C ABI,
//! the command-line tool) and still want every fast path the concrete store has.

use std::ops::Range;

use prollystore_format::message::Node;
use prollystore_format::{Address, HashProfile};

use super::{ChunkStore, FileStore, LentSpace, MemoryStore, NodeHint, StoreError, StoreFastPaths};

/// A [`MemoryStore`] or a [`FileStore`], forwarding the contract and every fast path to the
/// store inside (a `&dyn` of either would lose inlining; a wrapper forwarding only some
/// methods would silently fall back to the slow defaults for the rest).
#[derive(Debug)]
pub enum BuiltinStore {
    /// An in-memory store.
    Memory(MemoryStore),
    /// A directory store.
    File(FileStore),
}

impl From<MemoryStore> for BuiltinStore {
    fn from(store: MemoryStore) -> BuiltinStore {
        BuiltinStore::Memory(store)
    }
}

impl From<FileStore> for BuiltinStore {
    fn from(store: FileStore) -> BuiltinStore {
        BuiltinStore::File(store)
    }
}

/// Calls `$call` on the store inside `$self`.
macro_rules! forward {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            BuiltinStore::Memory($s) => $call,
            BuiltinStore::File($s) => $call,
        }
    };
}

impl ChunkStore for BuiltinStore {
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

impl StoreFastPaths for BuiltinStore {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A store that implements every fast path must be forwarded every one: this fails to
    /// compile if `StoreFastPaths` gains a method `BuiltinStore` does not list (the list below
    /// names them all), and checks that the memory store's lending reaches through.
    #[test]
    fn forwards_lending() {
        let store = BuiltinStore::from(MemoryStore::new(HashProfile::Blake3));
        let space = store.lend(4096);
        assert!(space.is_some(), "a memory store inside lends");
    }
}
