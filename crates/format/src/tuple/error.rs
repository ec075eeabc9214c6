//! Errors from reading, building and decoding tuples.

use thiserror::Error;

use crate::Encoding;

/// What was wrong with a tuple or a field.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TupleError {
    /// Fewer than the two bytes of the field count.
    #[error("tuple of {len} bytes is too short to hold its field count")]
    TooShort {
        /// Bytes given.
        len: usize,
    },
    /// The count says more fields than Dolt allows.
    #[error("tuple declares {count} fields; at most 4096 are allowed")]
    TooManyFields {
        /// Declared count.
        count: usize,
    },
    /// The offsets array does not fit, or bytes follow a zero count.
    #[error("tuple of {len} bytes cannot hold the offsets of {count} fields")]
    OffsetsOverrun {
        /// Declared count.
        count: usize,
        /// Bytes given.
        len: usize,
    },
    /// An offset points outside the field data or goes backwards.
    #[error("field {field} starts at offset {offset}, outside the {data_len} bytes of field data or before the previous field")]
    BadOffset {
        /// Field index.
        field: usize,
        /// The offset read.
        offset: usize,
        /// Bytes of field data.
        data_len: usize,
    },
    /// Field data exceeds Dolt's limit.
    #[error("tuple holds {len} bytes of field data; at most 65504 are allowed")]
    DataTooLarge {
        /// Bytes of field data.
        len: usize,
    },
    /// A field's bytes do not form a valid value of its encoding.
    #[error("field {field} ({encoding}): {reason}")]
    BadField {
        /// Field index.
        field: usize,
        /// The field's encoding.
        encoding: Encoding,
        /// What is wrong.
        reason: &'static str,
    },
    /// A field was read with a getter for another encoding.
    #[error("field {field} is {actual}, not {requested}")]
    WrongEncoding {
        /// Field index.
        field: usize,
        /// The descriptor's encoding.
        actual: Encoding,
        /// The getter's encoding.
        requested: Encoding,
    },
    /// A field index beyond the descriptor.
    #[error("field {field} is out of range for a descriptor of {len} fields")]
    FieldOutOfRange {
        /// Field index.
        field: usize,
        /// Fields in the descriptor.
        len: usize,
    },
    /// A non-nullable field was NULL.
    #[error("field {field} is NULL but the descriptor says it is not nullable")]
    UnexpectedNull {
        /// Field index.
        field: usize,
    },
    /// The tuple stores more fields than the descriptor has.
    #[error("tuple stores {count} fields but the descriptor has only {len}")]
    FieldsBeyondDescriptor {
        /// Stored field count.
        count: usize,
        /// Fields in the descriptor.
        len: usize,
    },
    /// The last stored field is NULL; Dolt always drops trailing NULLs.
    #[error("the last of the {count} stored fields is NULL (trailing NULLs must be dropped)")]
    TrailingNull {
        /// Stored field count.
        count: usize,
    },
    /// A value cannot be stored in a field (out of the encoding's range, empty extended value).
    #[error("field {field} ({encoding}): cannot store {reason}")]
    BadValue {
        /// Field index.
        field: usize,
        /// The field's encoding.
        encoding: Encoding,
        /// What is wrong.
        reason: &'static str,
    },
    /// An adaptive value must move into or out of a blob, and the blob store failed or none was
    /// given.
    #[error("field {field}: blob store: {message}")]
    Blob {
        /// Field index.
        field: usize,
        /// The store's error, or why no store could be used.
        message: String,
    },
}
