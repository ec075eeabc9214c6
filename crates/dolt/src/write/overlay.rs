//! A chunk store for editing trees of an open database: reads find this session's new chunks
//! first, then the database's files, then what this writer appended since it opened them;
//! puts go to memory only, so nothing reaches the database until a commit copies what its new
//! root reaches (a rejected change writes nothing).

use std::ops::Range;

use prollystore::store::{ChunkStore, LentSpace, MemoryStore, StoreError, StoreFastPaths};
use prollystore_format::message::Node;
use prollystore_format::{Address, HashProfile};

use super::journal_append::JournalAppender;
use crate::chunks::DoltChunkSource;

/// The database's chunks with this session's new ones over them.
pub(crate) struct Overlay<'a> {
    /// What the database held when it was opened.
    pub base: &'a DoltChunkSource,
    /// What this writer appended to the journal since.
    pub journal: &'a JournalAppender,
    /// Chunks made in memory (every tree node, blob and message this session built).
    pub new: &'a MemoryStore,
}

impl Overlay<'_> {
    /// Copies a chunk this writer appended into memory, so it can be lent like the others.
    fn copy_from_journal(&self, address: &Address) -> Result<bool, StoreError> {
        match self.journal.written(address) {
            Some(c) => {
                self.new.put(&c)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

impl ChunkStore for Overlay<'_> {
    fn profile(&self) -> HashProfile {
        HashProfile::Dolt
    }

    fn get(&self, address: &Address) -> Result<Option<&[u8]>, StoreError> {
        if let Some(c) = self.new.get(address)? {
            return Ok(Some(c));
        }
        if let Some(c) = self.base.get(address)? {
            return Ok(Some(c));
        }
        if self.copy_from_journal(address)? {
            return self.new.get(address);
        }
        Ok(None)
    }

    fn get_node(&self, address: &Address) -> Result<Node<'_>, StoreError> {
        if self.new.has(address)?
            || (!self.base.has(address)? && self.copy_from_journal(address)?)
        {
            return self.new.get_node(address);
        }
        self.base.get_node(address)
    }

    fn has(&self, address: &Address) -> Result<bool, StoreError> {
        Ok(self.new.has(address)? || self.base.has(address)? || self.journal.contains(address))
    }

    fn put(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        self.new.put(chunk)
    }
}

/// Puts go to the memory store, so its fast paths for them serve here too: nodes a build has
/// already hashed (on its hash thread) are not hashed again, and leaves are serialized into
/// memory the store lends. Reads keep the defaults (they must look in three places).
impl StoreFastPaths for Overlay<'_> {
    fn put_node(&self, chunk: &[u8]) -> Result<Address, StoreError> {
        self.new.put_node(chunk)
    }

    fn put_node_hashed(&self, address: Address, chunk: &[u8]) -> Result<(), StoreError> {
        self.new.put_node_hashed(address, chunk)
    }

    fn lend(&self, want: usize) -> Option<LentSpace<'_>> {
        self.new.lend(want)
    }

    fn adopt(
        &self,
        space: LentSpace<'_>,
        chunks: &[(Address, Range<usize>)],
    ) -> Result<(), StoreError> {
        self.new.adopt(space, chunks)
    }
}
