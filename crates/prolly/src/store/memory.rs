//! An in-memory [`ChunkStore`]: chunks in an append-only hash map, so reads borrow from `&self`
//! while puts go through `&self` too.

use std::cell::{Cell, OnceCell};
use std::hash::{BuildHasherDefault, Hasher};

use elsa::FrozenMap;
use prollystore_format::message::{Node, NodeLayout};
use prollystore_format::{Address, HashProfile, ADDRESS_LEN};

use super::{ChunkStore, StoreError};

/// One stored chunk with its node layout, computed on first `get_node`.
struct Entry {
    chunk: Box<[u8]>,
    layout: OnceCell<NodeLayout>,
}

/// Hashes an [`Address`] by taking 8 of its bytes: addresses are already uniformly random.
#[derive(Default)]
pub struct AddressHasher(u64);

impl Hasher for AddressHasher {
    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        // `Address` hashes as its 20-byte array (length prefix is written via write_usize).
        if bytes.len() >= 8 {
            let mut w = [0u8; 8];
            w.copy_from_slice(&bytes[..8]);
            self.0 ^= u64::from_le_bytes(w);
        } else {
            for &b in bytes {
                self.0 = self.0.rotate_left(8) ^ u64::from(b);
            }
        }
    }
    #[inline]
    fn write_usize(&mut self, _: usize) {}
}

type AddressMap<V> = FrozenMap<Address, V, BuildHasherDefault<AddressHasher>>;

/// Chunks kept in memory: for tests, benchmarks, scratch work, and loading vector files.
///
/// Not `Sync` (interior mutability without locks); share it by reference within a thread.
pub struct MemoryStore {
    profile: HashProfile,
    chunks: AddressMap<Box<Entry>>,
    count: Cell<usize>,
}

impl Default for MemoryStore {
    fn default() -> Self {
        MemoryStore::new(HashProfile::default())
    }
}

impl MemoryStore {
    /// An empty store whose addresses are made with `profile`.
    pub fn new(profile: HashProfile) -> MemoryStore {
        MemoryStore {
            profile,
            chunks: AddressMap::default(),
            count: Cell::new(0),
        }
    }

    /// Number of chunks stored.
    pub fn len(&self) -> usize {
        self.count.get()
    }

    /// True if nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.count.get() == 0
    }

    /// Every stored address, in no particular order.
    pub fn addresses(&mut self) -> Vec<Address> {
        self.chunks.as_mut().keys().copied().collect()
    }

    /// Adds the records of a vectors `.chunks` file (`address[20] | len u32 LE | chunk`),
    /// checking each chunk against its address with this store's profile. Returns the
    /// addresses in file order (the first is the root of the dumped tree).
    pub fn load_records(&self, bytes: &[u8], file: &str) -> Result<Vec<Address>, StoreError> {
        let mut out = Vec::new();
        let mut pos = 0usize;
        let corrupted = |offset: usize, reason: &str| StoreError::Corrupted {
            file: file.to_string(),
            offset: offset as u64,
            reason: reason.to_string(),
        };
        while pos < bytes.len() {
            let header = bytes
                .get(pos..pos + ADDRESS_LEN + 4)
                .ok_or_else(|| corrupted(pos, "truncated record header"))?;
            let address = Address::from_slice(&header[..ADDRESS_LEN])
                .ok_or_else(|| corrupted(pos, "bad address"))?;
            let mut len = [0u8; 4];
            len.copy_from_slice(&header[ADDRESS_LEN..]);
            let len = u32::from_le_bytes(len) as usize;
            let start = pos + ADDRESS_LEN + 4;
            let chunk = bytes
                .get(start..start + len)
                .ok_or_else(|| corrupted(start, "chunk runs past the end of the file"))?;
            let actual = self.profile.address_of(chunk);
            if actual != address {
                return Err(StoreError::HashMismatch {
                    address,
                    actual,
                    location: Some(format!("{file} at offset {pos}")),
                });
            }
            self.insert(address, chunk);
            out.push(address);
            pos = start + len;
        }
        Ok(out)
    }

    fn insert(&self, address: Address, chunk: &[u8]) {
        if self.chunks.get(&address).is_none() {
            self.chunks.insert(
                address,
                Box::new(Entry {
                    chunk: chunk.into(),
                    layout: OnceCell::new(),
                }),
            );
            self.count.set(self.count.get() + 1);
        }
    }
}

impl ChunkStore for MemoryStore {
    fn profile(&self) -> HashProfile {
        self.profile
    }

    #[inline]
    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        Ok(self.chunks.get(address).map(|e| &*e.chunk))
    }

    #[inline]
    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        let entry = self
            .chunks
            .get(address)
            .ok_or(StoreError::Missing(*address))?;
        if let Some(layout) = entry.layout.get() {
            return Ok(Node::with_layout(&entry.chunk, *layout));
        }
        let node = Node::verify(&entry.chunk).map_err(|source| StoreError::BadMessage {
            address: *address,
            source,
        })?;
        let _ = entry.layout.set(node.layout());
        Ok(node)
    }

    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        Ok(self.chunks.get(address).is_some())
    }

    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        let address = self.profile.address_of(chunk);
        self.insert(address, chunk);
        Ok(address)
    }
}
