//! Where read commands read from: a local store directory, or a remote read in place
//! (`prolly -s s3://bucket/prefix get …`).

use std::collections::BTreeMap;
use std::ops::Range;

use prollystore::format::message::Node;
use prollystore::format::{Address, HashProfile};
use prollystore::store::{LentSpace, NodeHint};
use prollystore::{ChunkStore, FileStore, StoreError, StoreFastPaths};
use prollystore_remote::RemoteStore;

/// A local file store or a remote store read in place, forwarding the store contract and
/// every fast path to the store inside.
#[derive(Debug)]
pub enum ReadStore {
    /// A local store directory.
    File(Box<FileStore>),
    /// A remote, read in place.
    Remote(Box<RemoteStore>),
}

/// True if `store` names a remote (`scheme://…`) rather than a directory.
pub fn is_remote_url(store: &str) -> bool {
    store.contains("://")
}

/// Calls `$call` on the store inside `$self`.
macro_rules! forward {
    ($self:expr, $s:ident => $call:expr) => {
        match $self {
            ReadStore::File(b) => {
                let $s: &FileStore = b;
                $call
            }
            ReadStore::Remote(b) => {
                let $s: &RemoteStore = b;
                $call
            }
        }
    };
}

/// A store with named roots (maps are kept as roots, see [`crate::catalog`]).
pub trait NamedRoots: StoreFastPaths {
    /// Every named root.
    fn named_roots(&self) -> &BTreeMap<String, Address>;

    /// The root called `name`.
    fn named_root(&self, name: &str) -> Option<Address> {
        self.named_roots().get(name).copied()
    }
}

impl NamedRoots for FileStore {
    fn named_roots(&self) -> &BTreeMap<String, Address> {
        self.roots()
    }
}

impl NamedRoots for ReadStore {
    fn named_roots(&self) -> &BTreeMap<String, Address> {
        match self {
            ReadStore::File(s) => s.roots(),
            ReadStore::Remote(s) => s.roots(),
        }
    }
}

impl ChunkStore for ReadStore {
    fn profile(&self) -> HashProfile {
        forward!(self, s => ChunkStore::profile(s))
    }
    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        forward!(self, s => ChunkStore::get(s, address))
    }
    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        forward!(self, s => ChunkStore::get_node(s, address))
    }
    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        forward!(self, s => ChunkStore::has(s, address))
    }
    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        forward!(self, s => ChunkStore::put(s, chunk))
    }
}

impl StoreFastPaths for ReadStore {
    fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        forward!(self, s => s.put_node(chunk))
    }
    fn get_node_hinted(&self, address: &Address) -> Result<(Node<'_>, NodeHint), StoreError> {
        forward!(self, s => s.get_node_hinted(address))
    }
    fn get_child(
        &self,
        parent: &Node<'_>,
        hint: NodeHint,
        i: usize,
    ) -> Result<(Node<'_>, NodeHint), StoreError> {
        forward!(self, s => s.get_child(parent, hint, i))
    }
    fn descend<'a>(
        &'a self,
        node: &mut Node<'a>,
        hint: &mut NodeHint,
        i: usize,
    ) -> Result<(), StoreError> {
        forward!(self, s => s.descend(node, hint, i))
    }
    fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        forward!(self, s => s.put_node_hashed(address, chunk))
    }
    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        forward!(self, s => s.lend(want))
    }
    fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        forward!(self, s => s.adopt(space, chunks))
    }
}
