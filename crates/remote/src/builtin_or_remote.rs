//! One store type for callers that choose at run time between a local store and a remote read
//! in place (the C ABI's store handles, the command-line tool's `-s` option), forwarding the
//! store contract and every fast path to the store inside.

use std::collections::BTreeMap;

use prollystore::format::Address;
use prollystore::{BuiltinStore, FileStore};

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

prollystore::forward_store_traits!(BuiltinOrRemote, forward);
