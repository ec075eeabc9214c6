//! A byte-bounded least-recently-used cache of chunks fetched ahead of need (prefetched
//! siblings along a scan), so that a long scan does not keep every leaf it read ahead.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

use bytes::Bytes;
use prollystore::format::Address;
use prollystore::store::AddressHasher;

/// Chunks by address, evicting the least recently inserted or used beyond a byte budget.
#[derive(Debug)]
pub(crate) struct ChunkLru {
    budget: usize,
    bytes: usize,
    tick: u64,
    chunks: HashMap<Address, (Bytes, u64), BuildHasherDefault<AddressHasher>>,
    order: BTreeMap<u64, Address>,
}

impl ChunkLru {
    /// An empty cache holding at most `budget` bytes.
    pub(crate) fn new(budget: usize) -> ChunkLru {
        ChunkLru {
            budget,
            bytes: 0,
            tick: 0,
            chunks: HashMap::default(),
            order: BTreeMap::new(),
        }
    }

    /// True if `address` is cached.
    pub(crate) fn contains(&self, address: &Address) -> bool {
        self.chunks.contains_key(address)
    }

    /// Bytes held.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Adds a chunk, evicting the oldest ones past the budget.
    pub(crate) fn insert(&mut self, address: Address, chunk: Bytes) {
        if self.chunks.contains_key(&address) || chunk.len() > self.budget {
            return;
        }
        self.tick += 1;
        self.bytes += chunk.len();
        self.chunks.insert(address, (chunk, self.tick));
        self.order.insert(self.tick, address);
        while self.bytes > self.budget {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((c, _)) = self.chunks.remove(&oldest) {
                self.bytes -= c.len();
            }
        }
    }

    /// Removes and returns a chunk.
    pub(crate) fn take(&mut self, address: &Address) -> Option<Bytes> {
        let (chunk, tick) = self.chunks.remove(address)?;
        self.order.remove(&tick);
        self.bytes -= chunk.len();
        Some(chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_oldest_past_the_budget() {
        let a = |i: u8| Address::from_slice(&[i; 20]).expect("20 bytes");
        let mut lru = ChunkLru::new(10);
        lru.insert(a(1), Bytes::from(vec![0; 4]));
        lru.insert(a(2), Bytes::from(vec![0; 4]));
        lru.insert(a(3), Bytes::from(vec![0; 4]));
        assert!(!lru.contains(&a(1)));
        assert!(lru.contains(&a(2)) && lru.contains(&a(3)));
        assert_eq!(lru.bytes(), 8);
        assert_eq!(lru.take(&a(2)).map(|b| b.len()), Some(4));
        assert_eq!(lru.bytes(), 4);
    }
}
