//! Handing full batches of leaves to the hash thread and taking them back, in order; and the
//! one place where store memory is lent to that thread.
//!
//! # Lending
//! An edit's leaves can be serialized on the hash thread straight into memory the store lends
//! ([`ChunkStore::lend`]), so that the store keeps them where they are instead of copying
//! them. A [`LentSpace`] borrows its store, but the hash thread outlives any one call, so the
//! space travels detached from that borrow ([`LentSpace::detach`]). What makes that sound is
//! this module's invariant: **a batch holding a detached space is only sent from inside
//! [`Background::with_loans`], which takes every batch back (waiting for one in flight) before
//! it returns or unwinds**, while its borrow of the store is still alive. The space is then
//! adopted by the store or dropped on the calling thread. [`HashThread`]'s drop also waits for a
//! batch in flight, should the background itself be dropped during a call.

use super::batch::NodeBatch;
use super::hash_thread::HashThread;
use super::out::{Emit, NodeOut};
use super::queue::NodeQueue;
use crate::error::TreeError;
use crate::store::StoreFastPaths;
use crate::tree::schema::TreeSchema;

/// The hash thread a build or an edit hands full batches of leaves to (an edit's is kept
/// between edits on the same thread), and a cleared batch to reuse.
#[derive(Debug, Default)]
pub(crate) struct Background {
    /// Started at the first full batch, so small builds and edits never start it.
    thread: Option<HashThread>,
    /// The thread could not be started: hash here.
    unavailable: bool,
    spare: Option<NodeBatch>,
}

impl Background {
    /// Leaves in flight on the hash thread: sent and not yet taken back.
    #[inline]
    pub(crate) fn in_flight(&self) -> usize {
        self.thread.as_ref().map_or(0, HashThread::in_flight)
    }

    /// Takes the full batch out of `queue` and sends it to the hash thread (starting the
    /// thread if needed), after taking back the batch in flight and handing its nodes to
    /// `emit`, in order. Without a thread the batch is hashed and handed on here.
    pub(crate) fn hand_off<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        queue: &mut NodeQueue,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        self.hand_off_lending(queue, out, emit, None::<&S>)
    }

    /// [`Background::hand_off`], the batch's raw leaves given memory of `lender` to be
    /// serialized into when it is `Some` (only through [`Loans`]).
    fn hand_off_lending<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        queue: &mut NodeQueue,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
        lender: Option<&S>,
    ) -> Result<(), TreeError> {
        if self.thread.is_none() && !self.unavailable {
            self.thread = HashThread::start();
            self.unavailable = self.thread.is_none();
        }
        let mut batch = queue.swap(self.spare.take().unwrap_or_default());
        match &mut self.thread {
            Some(thread) => {
                if let Some(mut done) = thread.receive()? {
                    done.store_and_emit(out, emit)?;
                    self.spare = Some(done);
                }
                if let Some(store) = lender {
                    // SAFETY: `lender` is only given by `Loans::hand_off`, whose store borrow
                    // lasts until `with_loans` returns, and `with_loans` takes this batch back
                    // (or waits for it) before that: the module's invariant.
                    unsafe { batch.lend(store) };
                }
                thread.send(batch, out.store.profile())
            }
            None => {
                batch.hash(out.store.profile());
                batch.store_and_emit(out, emit)?;
                self.spare = Some(batch);
                Ok(())
            }
        }
    }

    /// Takes back the batch in flight, if any, and hands its nodes to `emit`; then lets the
    /// thread sleep until the next batch (the caller is past its last one).
    pub(crate) fn collect<S: StoreFastPaths + ?Sized, T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        let Some(thread) = &mut self.thread else {
            return Ok(());
        };
        let done = thread.receive()?;
        thread.pause();
        if let Some(mut done) = done {
            done.store_and_emit(out, emit)?;
            self.spare = Some(done);
        }
        Ok(())
    }

    /// Drops a batch left in flight by a call that failed half-way, so that the next starts
    /// clean (a thread that cannot answer is given up).
    fn settle(&mut self) {
        if let Some(thread) = &mut self.thread {
            if thread.discard().is_err() {
                self.thread = None;
            }
        }
    }

    /// Runs `f` with hand-offs that lend `store`'s memory to the hash thread ([`Loans`]); every
    /// batch sent is back before this returns, even if `f` fails or panics.
    pub(crate) fn with_loans<'s, S: StoreFastPaths + ?Sized, R>(
        &mut self,
        store: &'s S,
        f: impl FnOnce(&mut Loans<'_, 's, S>) -> R,
    ) -> R {
        /// Settles the background when `with_loans` ends, however it ends.
        struct Settle<'b>(&'b mut Background);
        impl Drop for Settle<'_> {
            fn drop(&mut self) {
                self.0.settle();
            }
        }
        let settle = Settle(self);
        let mut loans = Loans {
            background: &mut *settle.0,
            store,
        };
        f(&mut loans)
    }
}

/// Hand-offs that may lend the store's memory, made only inside [`Background::with_loans`].
pub(crate) struct Loans<'b, 's, S: ?Sized> {
    background: &'b mut Background,
    store: &'s S,
}

impl<S: StoreFastPaths + ?Sized> Loans<'_, '_, S> {
    /// Leaves in flight on the hash thread.
    #[inline]
    pub(crate) fn in_flight(&self) -> usize {
        self.background.in_flight()
    }

    /// [`Background::hand_off`], the batch's raw leaves serialized on the hash thread into
    /// memory the store lends, where the store then keeps them.
    pub(crate) fn hand_off<T: TreeSchema + ?Sized>(
        &mut self,
        queue: &mut NodeQueue,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        self.background
            .hand_off_lending(queue, out, emit, Some(self.store))
    }

    /// [`Background::collect`].
    pub(crate) fn collect<T: TreeSchema + ?Sized>(
        &mut self,
        out: &mut NodeOut<'_, S, T>,
        emit: &mut Emit<'_, S, T>,
    ) -> Result<(), TreeError> {
        self.background.collect(out, emit)
    }
}
