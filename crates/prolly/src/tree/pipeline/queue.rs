//! A level's completed nodes on their way to the level above: queued and hashed several at a
//! time on the level's own thread, or gathered into batches its owner hands to the hash thread.

use prollystore_format::message::NodeWriter;

use super::batch::{NodeBatch, HASH_BATCH};
use super::out::{Emit, NodeOut};
use crate::error::TreeError;
use crate::store::StoreFastPaths;
use crate::tree::pending::PendingNode;
use crate::tree::schema::TreeSchema;

/// Who hashes a queue's nodes.
#[derive(Debug, Clone, Copy)]
enum Hashing {
    /// The level itself, [`HASH_BATCH`] nodes at a time.
    Here,
    /// The queue's owner takes batches of this many leaves for the hash thread.
    ForThread(usize),
}

/// The nodes a level has completed and not yet handed to the level above.
#[derive(Debug)]
pub(crate) struct NodeQueue {
    batch: NodeBatch,
    hashing: Hashing,
}

impl NodeQueue {
    /// Completed nodes are hashed [`HASH_BATCH`] at a time on this thread, then stored and
    /// handed on in order. The owner must [`flush`](NodeQueue::flush) after the last node, and
    /// count the queued nodes ([`NodeQueue::len`]) wherever it counts the nodes handed on.
    pub(crate) fn hash_here() -> NodeQueue {
        NodeQueue {
            batch: NodeBatch::default(),
            hashing: Hashing::Here,
        }
    }

    /// Makes this queue hash here (keeping its batch's buffers).
    pub(crate) fn set_hash_here(&mut self) {
        self.hashing = Hashing::Here;
    }

    /// Makes this queue gather batches of `batch_len` leaves for the hash thread: completed
    /// leaves are queued, unserialized, until `batch_len` of them wait; the owner then takes
    /// the batch ([`NodeQueue::full_for_thread`], [`NodeQueue::swap`]) for the hash thread,
    /// and must count the nodes in flight as handed on.
    pub(crate) fn set_for_thread(&mut self, batch_len: usize) {
        self.hashing = Hashing::ForThread(batch_len);
    }

    /// Completed nodes queued, not yet handed on.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.batch.len()
    }

    /// Drops the queued nodes (there are any only after a failed edit).
    pub(crate) fn clear(&mut self) {
        self.batch.clear();
    }

    /// True when the batch is full and the owner takes it for the hash thread.
    #[inline]
    pub(crate) fn full_for_thread(&self) -> bool {
        match self.hashing {
            Hashing::ForThread(n) => self.batch.len() >= n,
            Hashing::Here => false,
        }
    }

    /// Gives the owner the queued batch, putting `fresh` (cleared) in its place.
    pub(crate) fn swap(&mut self, fresh: NodeBatch) -> NodeBatch {
        std::mem::replace(&mut self.batch, fresh)
    }

    /// The queued batch, the queue given up.
    pub(crate) fn into_batch(self) -> NodeBatch {
        self.batch
    }

    /// Takes the completed node `node` of `level` (`counts`: its children's subtree counts at
    /// internal levels; `tree_count`: its rows). Leaves for the hash thread go in unserialized,
    /// their buffers with them (`node` is left with empty ones); other nodes are serialized
    /// into the batch, which is hashed and handed on when full if this level hashes here.
    #[inline]
    // The node and what the writer needs of it, one by one: a bundle would only move the list.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn accept<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        node: &mut PendingNode,
        level: u8,
        counts: &[u64],
        tree_count: u64,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        if level == 0 && matches!(self.hashing, Hashing::ForThread(_)) {
            // For the hash thread, which serializes too.
            self.batch.push_raw(node, tree_count);
            return Ok(());
        }
        let chunk = node.serialize(level, counts, &mut out.writer)?;
        self.batch.push(chunk, node.last_key(), tree_count);
        self.hand_on_if_full(out, emit)
    }

    /// Takes a node written elsewhere (see `LevelBuilder::emit_written`): `write` makes the
    /// chunk and its tree count, `last_key` is the node's last key.
    pub(crate) fn accept_written<S, T, W>(
        &mut self,
        write: W,
        last_key: &[u8],
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError>
    where
        S: StoreFastPaths + ?Sized,
        T: TreeSchema + ?Sized,
        W: FnOnce(&mut NodeWriter) -> Result<(&[u8], u64), TreeError>,
    {
        let (chunk, total) = write(&mut out.writer)?;
        self.batch.push(chunk, last_key, total);
        self.hand_on_if_full(out, emit)
    }

    /// Hashes, stores and hands on the batch if this level hashes here and it is full.
    #[inline]
    fn hand_on_if_full<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        if matches!(self.hashing, Hashing::Here) && self.batch.len() >= HASH_BATCH {
            self.batch.hash(out.store.profile());
            self.batch.store_and_emit(out, emit)?;
        }
        Ok(())
    }

    /// Hashes and stores the queued nodes and hands them to `emit`, in order.
    pub(crate) fn flush<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        if self.batch.len() > 0 {
            self.batch.hash(out.store.profile());
            self.batch.store_and_emit(out, emit)
        } else {
            Ok(())
        }
    }
}
