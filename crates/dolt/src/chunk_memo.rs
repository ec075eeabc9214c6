//! Values derived from a chunk (a schema's key order, its row decode plan, …), kept per chunk
//! address for the life of an open database. An address names its chunk's bytes, so what was
//! derived from them never goes stale; each kind of value is its own type, so one chunk can
//! have several.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use prollystore_format::Address;

/// More entries than this empties the memo (a database has a handful of schemas per table;
/// thousands means a long history of schema changes being walked).
const MAX_ENTRIES: usize = 4096;

type Entry = Arc<dyn Any + Send + Sync>;

/// The memo: `(chunk address, value type)` → value.
#[derive(Default)]
pub(crate) struct ChunkMemo {
    entries: Mutex<HashMap<(Address, TypeId), Entry>>,
}

impl std::fmt::Debug for ChunkMemo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len();
        f.debug_struct("ChunkMemo").field("entries", &n).finish()
    }
}

impl ChunkMemo {
    /// The `T` derived from chunk `address`, made by `make` the first time. A failure is not
    /// kept: the next call derives again (and gets the error itself). `make` runs without the
    /// lock held; when two threads race, the first value stored is the one both get.
    pub(crate) fn get_or_make<T, E>(
        &self,
        address: Address,
        make: impl FnOnce() -> Result<T, E>,
    ) -> Result<Arc<T>, E>
    where
        T: Any + Send + Sync,
    {
        let key = (address, TypeId::of::<T>());
        let found = self
            .entries
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&key)
            .cloned();
        if let Some(found) = found.and_then(|e| e.downcast::<T>().ok()) {
            return Ok(found);
        }
        let made: Entry = Arc::new(make()?);
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if entries.len() >= MAX_ENTRIES {
            entries.clear();
        }
        let kept = entries.entry(key).or_insert(made).clone();
        Ok(kept
            .downcast::<T>()
            .expect("entries are keyed by their type"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_kept_per_address_and_type_and_failures_are_not() {
        let memo = ChunkMemo::default();
        let a = Address([1; 20]);
        let mut calls = 0;
        let mut make = |v: u32| {
            calls += 1;
            Ok::<_, ()>(v)
        };
        assert_eq!(*memo.get_or_make(a, || make(7)).unwrap(), 7);
        assert_eq!(*memo.get_or_make(a, || make(8)).unwrap(), 7);
        assert_eq!(calls, 1);
        // Another type at the same address is another entry.
        assert_eq!(*memo.get_or_make(a, || Ok::<_, ()>(9u64)).unwrap(), 9);
        let b = Address([2; 20]);
        assert!(memo.get_or_make::<u16, _>(b, || Err("bad")).is_err());
        assert_eq!(*memo.get_or_make(b, || Ok::<_, ()>(3u16)).unwrap(), 3);
    }
}
