//! The store behind a `prolly_store` handle: a built-in store, or (the `remote` feature) a
//! remote read in place, so that every map function works on either unchanged.

use std::ops::Range;

use prollystore::format::message::Node;
use prollystore::format::{Address, HashProfile};
use prollystore::store::{LentSpace, NodeHint};
use prollystore::{BuiltinStore, ChunkStore, StoreError, StoreFastPaths};

/// A built-in store or a remote store read in place, forwarding the store contract and every
/// fast path to the store inside. Without the `remote` feature it has one variant, which the
/// compiler sees through. The built-in store stays unboxed (one handle per open store; a box
/// would add an indirection to every get), so the variants differ in size.
#[derive(Debug)]
#[cfg_attr(feature = "remote", allow(clippy::large_enum_variant))]
pub(crate) enum Backend {
    /// A memory or file store.
    Builtin(BuiltinStore),
    /// A remote, read-only (`prolly_remote_open`).
    #[cfg(feature = "remote")]
    Remote(Box<prollystore_remote::RemoteStore>),
}

/// Calls `$call` on the store inside `$self`.
macro_rules! forward {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            Backend::Builtin($s) => $call,
            #[cfg(feature = "remote")]
            Backend::Remote(b) => {
                let $s: &prollystore_remote::RemoteStore = b;
                $call
            }
        }
    };
}

impl ChunkStore for Backend {
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

impl StoreFastPaths for Backend {
    #[inline]
    fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        forward!(self, s => s.put_node(chunk))
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
    fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        forward!(self, s => s.put_node_hashed(address, chunk))
    }
    #[inline]
    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        forward!(self, s => s.lend(want))
    }
    #[inline]
    fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        forward!(self, s => s.adopt(space, chunks))
    }
}

impl From<BuiltinStore> for Backend {
    fn from(store: BuiltinStore) -> Backend {
        Backend::Builtin(store)
    }
}
