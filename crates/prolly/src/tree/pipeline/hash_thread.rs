//! Hashing completed leaves on a second thread while a build or a large edit goes on making the
//! next ones.
//!
//! Where a node ends never depends on the addresses of the nodes below it, so a level can hand
//! batches of serialized leaves to another thread and take their addresses back later, in
//! order; the tree is the same whichever thread hashed what. Hashing is a large part of a
//! build's or a large edit's work, so on a machine with a free core this takes it off the
//! critical path.
//!
//! Background hashing is on by default where the machine has more than one core
//! ([`background_hashing`]) and can be switched off for the whole process, by the program
//! ([`set_background_hashing`]) or from outside it (the environment variable
//! `PROLLY_BACKGROUND_HASHING=0`, read once), for programs that want every call to stay on its
//! own thread.
//! A thread is only started once a build or an edit has a full batch of leaves
//! (`LEAF_BATCH` leaves for an edit, `BUILD_LEAF_BATCH` for a build: thousands of rows), so
//! small maps and small edits never start one. The switch is process-wide state, listed with
//! the rest in [`crate::process`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use prollystore_format::HashProfile;

use super::batch::NodeBatch;
use crate::error::TreeError;

/// The process-wide switch behind [`set_background_hashing`].
static ENABLED: AtomicBool = AtomicBool::new(true);

/// The environment variable that switches background hashing off when set to `0`.
pub const BACKGROUND_HASHING_VAR: &str = "PROLLY_BACKGROUND_HASHING";

/// Allows (`true`, the default) or forbids background hashing in [`Map::from_sorted`] and in
/// edits ([`Map::apply`], [`Map::apply_sorted`]) from now on, for the whole process. A build or edit
/// already under way keeps its mode. Trees are identical either way.
///
/// [`Map::from_sorted`]: crate::Map::from_sorted
/// [`Map::apply`]: crate::Map::apply
/// [`Map::apply_sorted`]: crate::Map::apply_sorted
pub fn set_background_hashing(enabled: bool) {
    ENABLED.store(enabled, Ordering::Relaxed);
}

/// True if builds and edits may hash leaves on a second thread: the machine has more than one
/// core to run it on, [`BACKGROUND_HASHING_VAR`] is not `0`, and [`set_background_hashing`]
/// allows it.
pub fn background_hashing() -> bool {
    static POSSIBLE: OnceLock<bool> = OnceLock::new();
    let possible = *POSSIBLE.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let vetoed = std::env::var_os(BACKGROUND_HASHING_VAR).is_some_and(|v| v == "0");
        cores > 1 && !vetoed
    });
    possible && ENABLED.load(Ordering::Relaxed)
}

/// How long the hash thread polls for its next batch before it sleeps: longer than a build
/// takes to fill one (about 1 ms), so that during a build it never sleeps.
const WORKER_SPIN: Duration = Duration::from_millis(2);

/// How long the owner polls for a hashed batch before it sleeps.
const OWNER_SPIN: Duration = Duration::from_millis(2);

/// Receives from `rx`, polling for up to `spin` before blocking.
///
/// A thread that blocks must be woken: a futex call for the waker, and a wake-up that the
/// kernel may place on the waker's own CPU, where the two then take turns. A thread that polls
/// keeps its CPU, and a batch sent to a polling thread wakes nobody (`docs/PERF.md`, "Polling
/// hand-overs"). Between rounds of polls it yields, so that where the two threads do share a
/// CPU (a busy or oversubscribed machine), the one it waits for runs instead of the poll.
fn receive_spinning<T>(rx: &mpsc::Receiver<T>, spin: Duration) -> Result<T, mpsc::RecvError> {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            match rx.try_recv() {
                Ok(x) => return Ok(x),
                Err(mpsc::TryRecvError::Disconnected) => return Err(mpsc::RecvError),
                Err(mpsc::TryRecvError::Empty) => std::hint::spin_loop(),
            }
        }
        if start.elapsed() >= spin {
            return rx.recv();
        }
        std::thread::yield_now();
    }
}

/// A thread that hashes one [`NodeBatch`] at a time, the owner filling the next meanwhile.
/// Dropping it ends the thread (its channel closes).
#[derive(Debug)]
pub(crate) struct HashThread {
    /// Batches to hash; `None` tells the thread that no batch follows soon (it then sleeps
    /// at once instead of polling).
    to_worker: mpsc::SyncSender<Option<(NodeBatch, HashProfile)>>,
    from_worker: mpsc::Receiver<NodeBatch>,
    /// Nodes of the batch sent and not yet received, if one is.
    in_flight: Option<usize>,
}

impl HashThread {
    /// Starts the thread; `None` if the system cannot (the caller then hashes on its own).
    pub(crate) fn start() -> Option<HashThread> {
        let (to_worker, work) = mpsc::sync_channel::<Option<(NodeBatch, HashProfile)>>(1);
        let (done, from_worker) = mpsc::sync_channel::<NodeBatch>(1);
        std::thread::Builder::new()
            .name("prolly-hash".into())
            .spawn(move || {
                let mut spin = WORKER_SPIN;
                while let Ok(next) = receive_spinning(&work, spin) {
                    let Some((mut batch, profile)) = next else {
                        spin = Duration::ZERO;
                        continue;
                    };
                    batch.hash(profile);
                    if done.send(batch).is_err() {
                        break;
                    }
                    spin = WORKER_SPIN;
                }
            })
            .ok()?;
        Some(HashThread {
            to_worker,
            from_worker,
            in_flight: None,
        })
    }

    /// Nodes sent and not yet received.
    pub(crate) fn in_flight(&self) -> usize {
        self.in_flight.unwrap_or(0)
    }

    /// The batch in flight, hashed (`None` if there is none).
    pub(crate) fn receive(&mut self) -> Result<Option<NodeBatch>, TreeError> {
        if self.in_flight.take().is_none() {
            return Ok(None);
        }
        receive_spinning(&self.from_worker, OWNER_SPIN)
            .map(Some)
            .map_err(|_| TreeError::Internal("the hash thread stopped unexpectedly"))
    }

    /// Sends `batch` to be hashed with `profile`. The previous batch must have been received.
    pub(crate) fn send(&mut self, batch: NodeBatch, profile: HashProfile) -> Result<(), TreeError> {
        debug_assert!(self.in_flight.is_none(), "one batch in flight at a time");
        let nodes = batch.len();
        self.to_worker
            .send(Some((batch, profile)))
            .map_err(|_| TreeError::Internal("the hash thread stopped unexpectedly"))?;
        self.in_flight = Some(nodes);
        Ok(())
    }

    /// Tells the thread that no batch follows soon (the owner's build or edit is past its
    /// last one), so that it sleeps rather than polls until the next. Call with nothing in
    /// flight.
    pub(crate) fn pause(&mut self) {
        debug_assert!(self.in_flight.is_none(), "pause with a batch in flight");
        // Only a hint: with the channel full or closed there is nothing to do.
        let _ = self.to_worker.try_send(None);
    }

    /// Drops a result left in flight by a build or edit that failed half-way, so that the next
    /// one starts clean.
    pub(crate) fn discard(&mut self) -> Result<(), TreeError> {
        self.receive().map(drop)
    }
}

impl Drop for HashThread {
    /// Waits for the batch in flight, if any: it may be serializing into memory a store lent
    /// it (an edit's leaves), which must not be written once its owner is gone, for example
    /// after a panic unwound the edit. The thread then ends, its channel closed.
    fn drop(&mut self) {
        let _ = self.discard();
    }
}
