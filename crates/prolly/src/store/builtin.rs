//! One type over the built-in stores, for callers that choose a store at run time (the C ABI,
//! the command-line tool) and still want every fast path the concrete store has.

use super::{FileStore, MemoryStore};

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

/// Implements [`ChunkStore`](crate::ChunkStore) and [`StoreFastPaths`](crate::StoreFastPaths) for an enum over stores by forwarding
/// every method to the store inside. `$forward` is a macro of the enum's own, called as
/// `$forward!(self, s => call)`, that binds `s` to the store inside and evaluates `call`. The
/// one list of what a store enum forwards, for [`BuiltinStore`] here and the remote crate's
/// store enum: a fast path missing from it would fall back, silently, to the trait's slow
/// default in every such enum.
#[doc(hidden)]
#[macro_export]
macro_rules! forward_store_traits {
    ($ty:ty, $forward:ident) => {
        impl $crate::ChunkStore for $ty {
            #[inline]
            fn profile(&self) -> $crate::format::HashProfile {
                $forward!(self, s => $crate::ChunkStore::profile(s))
            }
            #[inline]
            fn get(
                &self,
                address: &$crate::format::Address,
            ) -> Result<Option<&[u8]>, $crate::StoreError> {
                $forward!(self, s => $crate::ChunkStore::get(s, address))
            }
            #[inline]
            fn get_node(
                &self,
                address: &$crate::format::Address,
            ) -> Result<$crate::format::message::Node<'_>, $crate::StoreError> {
                $forward!(self, s => $crate::ChunkStore::get_node(s, address))
            }
            #[inline]
            fn has(&self, address: &$crate::format::Address) -> Result<bool, $crate::StoreError> {
                $forward!(self, s => $crate::ChunkStore::has(s, address))
            }
            #[inline]
            fn put(&self, chunk: &[u8]) -> Result<$crate::format::Address, $crate::StoreError> {
                $forward!(self, s => $crate::ChunkStore::put(s, chunk))
            }
        }

        impl $crate::StoreFastPaths for $ty {
            #[inline]
            unsafe fn put_node(
                &self,
                chunk: &[u8],
            ) -> Result<$crate::format::Address, $crate::StoreError> {
                // SAFETY: the caller's promise (this method's contract) is the inner store's.
                $forward!(self, s => unsafe { $crate::StoreFastPaths::put_node(s, chunk) })
            }
            #[inline]
            fn get_node_hinted(
                &self,
                address: &$crate::format::Address,
            ) -> Result<($crate::format::message::Node<'_>, $crate::store::NodeHint), $crate::StoreError>
            {
                $forward!(self, s => $crate::StoreFastPaths::get_node_hinted(s, address))
            }
            #[inline]
            fn get_child(
                &self,
                parent: &$crate::format::message::Node<'_>,
                hint: $crate::store::NodeHint,
                i: usize,
            ) -> Result<($crate::format::message::Node<'_>, $crate::store::NodeHint), $crate::StoreError>
            {
                $forward!(self, s => $crate::StoreFastPaths::get_child(s, parent, hint, i))
            }
            #[inline]
            fn descend<'a>(
                &'a self,
                node: &mut $crate::format::message::Node<'a>,
                hint: &mut $crate::store::NodeHint,
                i: usize,
            ) -> Result<(), $crate::StoreError> {
                $forward!(self, s => $crate::StoreFastPaths::descend(s, node, hint, i))
            }
            #[inline]
            unsafe fn put_node_hashed(
                &self,
                address: $crate::format::Address,
                chunk: &[u8],
            ) -> Result<(), $crate::StoreError> {
                // SAFETY: the caller's promise (this method's contract) is the inner store's.
                $forward!(self, s => unsafe {
                    $crate::StoreFastPaths::put_node_hashed(s, address, chunk)
                })
            }
            #[inline]
            fn lend(&self, want: usize) -> Option<$crate::store::LentSpace<'_>> {
                $forward!(self, s => $crate::StoreFastPaths::lend(s, want))
            }
            #[inline]
            unsafe fn adopt(
                &self,
                space: $crate::store::LentSpace<'_>,
                chunks: &[($crate::format::Address, std::ops::Range<usize>)],
            ) -> Result<(), $crate::StoreError> {
                // SAFETY: the caller's promise (this method's contract) is the inner store's.
                $forward!(self, s => unsafe { $crate::StoreFastPaths::adopt(s, space, chunks) })
            }
            // `PREFETCHES` keeps its default (false): none of the built-in stores reads ahead;
            // a wrapped store that does needs `const PREFETCHES: bool = true;` here.
            #[inline]
            fn prefetch(&self, addresses: &[$crate::format::Address]) {
                $forward!(self, s => $crate::StoreFastPaths::prefetch(s, addresses))
            }
        }
    };
}

crate::forward_store_traits!(BuiltinStore, forward);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::HashProfile;
    use crate::StoreFastPaths;

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
