//! A least-recently-used cache of chunks no reader holds: chunks fetched ahead of need
//! (prefetched siblings along a scan) and chunks a [`RemoteStore`](crate::RemoteStore) stopped
//! lending at a safe point. Its byte limit is given at each insert, so the caller can keep it
//! within what the chunks it lends leave of the store's budget.

use std::collections::{BTreeSet, HashMap};
use std::hash::BuildHasherDefault;

use bytes::Bytes;
use prollystore::format::message::NodeLayout;
use prollystore::format::Address;
use prollystore::store::AddressHasher;

/// A cached chunk: its bytes, its node layout if it was verified before, and its last use.
#[derive(Debug)]
struct Entry {
    bytes: Bytes,
    layout: Option<NodeLayout>,
    tick: u64,
}

/// Chunks by address, evicting the least recently used first.
#[derive(Debug, Default)]
pub(crate) struct ChunkLru {
    bytes: usize,
    chunks: HashMap<Address, Entry, BuildHasherDefault<AddressHasher>>,
    /// (last use, address), oldest first.
    order: BTreeSet<(u64, Address)>,
}

impl ChunkLru {
    /// True if `address` is cached.
    pub(crate) fn contains(&self, address: &Address) -> bool {
        self.chunks.contains_key(address)
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds a chunk last used at `tick` (ticks are unique and grow with time), then evicts the
    /// least recently used chunks until at most `limit` bytes are held. A chunk bigger than
    /// `limit` is not kept.
    pub(crate) fn insert(
        &mut self,
        address: Address,
        bytes: Bytes,
        layout: Option<NodeLayout>,
        tick: u64,
        limit: usize,
    ) {
        if bytes.len() > limit || self.chunks.contains_key(&address) {
            return;
        }
        self.bytes += bytes.len();
        self.order.insert((tick, address));
        self.chunks.insert(
            address,
            Entry {
                bytes,
                layout,
                tick,
            },
        );
        self.shrink_to(limit);
    }

    /// Evicts the least recently used chunks until at most `limit` bytes are held.
    pub(crate) fn shrink_to(&mut self, limit: usize) {
        while self.bytes > limit {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some(e) = self.chunks.remove(&oldest) {
                self.bytes -= e.bytes.len();
            }
        }
    }

    /// Removes and returns a chunk and its layout, if verified before.
    pub(crate) fn take(&mut self, address: &Address) -> Option<(Bytes, Option<NodeLayout>)> {
        let e = self.chunks.remove(address)?;
        self.order.remove(&(e.tick, *address));
        self.bytes -= e.bytes.len();
        Some((e.bytes, e.layout))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_past_the_limit() {
        let a = |i: u8| Address::from_slice(&[i; 20]).expect("20 bytes");
        let mut lru = ChunkLru::default();
        lru.insert(a(1), Bytes::from(vec![0; 4]), None, 5, 10);
        lru.insert(a(2), Bytes::from(vec![0; 4]), None, 2, 10);
        lru.insert(a(3), Bytes::from(vec![0; 4]), None, 7, 10);
        assert!(!lru.contains(&a(2)), "the oldest use goes first");
        assert!(lru.contains(&a(1)) && lru.contains(&a(3)));
        assert_eq!(lru.bytes(), 8);
        lru.insert(a(4), Bytes::from(vec![0; 11]), None, 8, 10);
        assert!(!lru.contains(&a(4)), "bigger than the limit");
        assert_eq!(lru.take(&a(1)).map(|(b, _)| b.len()), Some(4));
        assert_eq!(lru.bytes(), 4);
        lru.shrink_to(0);
        assert_eq!(lru.bytes(), 0);
        assert!(!lru.contains(&a(3)));
    }
}
