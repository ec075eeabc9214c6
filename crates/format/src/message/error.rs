//! Errors from verifying and writing chunk messages.

use thiserror::Error;

use crate::tuple::TupleError;

/// What was wrong with a chunk message (or with the input given to a writer), and where.
///
/// Offsets are byte positions in the chunk (prefix included) unless the variant says otherwise;
/// `field` names are the schema's field names.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum MessageError {
    /// The chunk is too short for the 4-byte prefix, root offset and file identifier.
    #[error("chunk of {len} bytes is too short for a message (needs at least 12)")]
    TooShort {
        /// Chunk length.
        len: usize,
    },
    /// Byte 0 is not Dolt's serial-message kind (0x1B).
    #[error("chunk byte 0 is {byte:#04x}; a message starts with 0x1b")]
    BadKind {
        /// The byte found.
        byte: u8,
    },
    /// The u24 body length in the prefix disagrees with the chunk length.
    #[error("message prefix declares a {declared}-byte body but the chunk has {actual} bytes after the prefix")]
    LengthMismatch {
        /// Length from bytes 1..4.
        declared: usize,
        /// Actual bytes after the prefix.
        actual: usize,
    },
    /// The file identifier (chunk bytes 8..12) is not the one the caller asked for.
    #[error("file identifier at offset 8 is {found:?}; expected {expected:?}")]
    WrongFileId {
        /// The identifier wanted.
        expected: &'static str,
        /// The identifier found (lossy text).
        found: String,
    },
    /// The file identifier names no message this crate reads.
    #[error("unknown message file identifier {found:?} at offset 8")]
    UnknownFileId {
        /// The identifier found (lossy text).
        found: String,
    },
    /// The FlatBuffers verifier rejected the body.
    #[error("{table}: FlatBuffers verification failed: {detail}")]
    FlatBuffers {
        /// The root table type.
        table: &'static str,
        /// The verifier's message (positions are relative to the body, chunk offset 4).
        detail: String,
    },
    /// The table's vtable declares fields this reader does not know (Dolt refuses these too).
    #[error("{table}: vtable declares {declared} fields, this reader knows {known}")]
    UnknownFields {
        /// The root table type.
        table: &'static str,
        /// Fields declared by the vtable.
        declared: usize,
        /// Fields in the schema.
        known: usize,
    },
    /// A field the node kind requires is absent.
    #[error("{table}: required field {field} is absent")]
    MissingField {
        /// The root table type.
        table: &'static str,
        /// The field.
        field: &'static str,
    },
    /// A field is present where it must be absent (for example values on an internal node).
    #[error("{table}: field {field} must be absent or empty: {reason}")]
    UnexpectedField {
        /// The root table type.
        table: &'static str,
        /// The field.
        field: &'static str,
        /// Why.
        reason: &'static str,
    },
    /// An offsets vector is malformed.
    #[error("{field}[{index}] = {value}: {reason}")]
    BadOffset {
        /// The offsets field.
        field: &'static str,
        /// Index in the offsets vector.
        index: usize,
        /// The offset value.
        value: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// Two lengths that must agree do not.
    #[error("{field}: expected {expected}, found {found}")]
    CountMismatch {
        /// What was counted.
        field: &'static str,
        /// The expected number.
        expected: u64,
        /// The number found.
        found: u64,
    },
    /// A subtree-count varint is malformed or the counts do not match the children.
    #[error("{field}: {reason} at byte {offset} of the vector")]
    BadCounts {
        /// The counts field.
        field: &'static str,
        /// Byte offset inside the vector.
        offset: usize,
        /// What is wrong.
        reason: &'static str,
    },
    /// An item type other than 1 (tuples), the only one Dolt writes.
    #[error("{field} = {value}; only item type 1 (tuples) is supported")]
    UnknownItemType {
        /// `key_type` or `value_type`.
        field: &'static str,
        /// The value found.
        value: u8,
    },
    /// An item declared as a tuple does not have a valid tuple layout.
    #[error("{field} item {index}: {source}")]
    BadTuple {
        /// `key_items` or `value_items`.
        field: &'static str,
        /// Item index.
        index: usize,
        /// The tuple error.
        source: TupleError,
    },
    /// Writer input does not describe a valid node.
    #[error("invalid writer input: {field}: {reason}")]
    BadInput {
        /// The input field.
        field: &'static str,
        /// What is wrong.
        reason: &'static str,
    },
    /// Writer input is too large for the format (u16 item offsets, u24 body length).
    #[error("{field} has {len} bytes; at most {max} fit")]
    TooLarge {
        /// What is too large.
        field: &'static str,
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
}
