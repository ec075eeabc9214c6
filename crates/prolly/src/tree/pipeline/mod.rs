//! Everything between "a node is complete" and "its entry reaches the level above".
//!
//! The level builders ([`crate::tree::build`]) decide where nodes end and assemble them, as
//! Dolt's chunker does; they hand each completed node to this pipeline and get its
//! `(last key, address, count)` back, in order, for the level above. In between, nodes may be:
//!
//! * queued and hashed several at a time on the builder's thread ([`NodeQueue`],
//!   [`NodeBatch`]): [`HashProfile::addresses_of`] hashes four SHA-512s, or eight BLAKE3
//!   chunks, side by side;
//! * gathered, for the leaves of a large build or edit, into batches that a second thread
//!   serializes and hashes while the builder fills the next ([`Background`],
//!   [`hash_thread`]), switched on and off process-wide;
//! * serialized on that thread straight into memory the store lends ([`Loans`]: the only
//!   place store memory crosses threads, with the invariant that makes it sound);
//! * written by node writers kept per thread between calls ([`NodeOut`]).
//!
//! Where a node ends never depends on the addresses of the nodes below it, so none of this
//! changes a tree: only when and on which thread its nodes are hashed.
//!
//! [`HashProfile::addresses_of`]: prollystore_format::HashProfile::addresses_of

mod background;
mod batch;
pub mod hash_thread;
mod out;
mod queue;

pub(crate) use background::{Background, Loans};
pub(crate) use batch::{batch_hashing_pays, BUILD_LEAF_BATCH, LEAF_BATCH};
pub(crate) use out::{release_thread_writers, Emit, NodeOut};
pub(crate) use queue::NodeQueue;
