//! Errors of tree operations.

use prollystore_format::message::MessageError;
use prollystore_format::tuple::TupleError;
use prollystore_format::Address;
use thiserror::Error;

use crate::store::StoreError;

/// What went wrong building, reading, editing or diffing a tree.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum TreeError {
    /// The chunk store failed or lacks a chunk.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A tuple could not be built or read (so `?` works on tuple calls in tree code).
    #[error(transparent)]
    Tuple(#[from] TupleError),
    /// A node could not be serialized.
    #[error("cannot write a node: {0}")]
    Message(#[from] MessageError),
    /// A single item is too large to form a node with any other item.
    #[error("an item of {len} bytes cannot be placed in an internal node (level {level})")]
    ItemTooLarge {
        /// Key plus value bytes.
        len: usize,
        /// Tree level.
        level: u8,
    },
    /// The tree would need more levels than Dolt defines salts for.
    #[error("the tree would be taller than {0} levels")]
    TooTall(usize),
    /// A tree node is inconsistent with its neighbours (wrong level, empty internal node...).
    #[error("node {address} is malformed: {reason}")]
    Malformed {
        /// The node.
        address: Address,
        /// What is wrong.
        reason: &'static str,
    },
    /// Keys given to a builder were not strictly increasing.
    #[error("keys are not strictly increasing at item {index}")]
    Unsorted {
        /// Index of the offending item.
        index: usize,
    },
    /// The same key was given to a sorting builder twice.
    #[error("duplicate key: item {first} and item {second} have the same key")]
    DuplicateKey {
        /// Index (from 0, in the order items were added) of the first item with the key.
        first: u64,
        /// Index of the later item with the same key.
        second: u64,
    },
    /// A bug in prollystore: an invariant of its own code does not hold (for example the
    /// hash thread of a build stopped unexpectedly). Nothing is wrong with the input or the
    /// store; please report it with the message.
    #[error("internal error in prollystore: {0}")]
    Internal(&'static str),
    /// A blob tree is malformed.
    #[error("blob {address} is malformed: {reason}")]
    BadBlob {
        /// The blob node.
        address: Address,
        /// What is wrong.
        reason: String,
    },
}
