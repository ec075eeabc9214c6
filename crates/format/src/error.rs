//! Errors shared by the whole crate. Each format family has its own enum next to its code
//! ([`crate::tuple::TupleError`], [`crate::message::MessageError`]); this module holds the small
//! ones that belong to no single family.

use thiserror::Error;

/// A chunk address given as text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum AddressParseError {
    /// The text has the wrong number of characters.
    #[error("address text has {len} characters; expected 32 (base32) or 40 (hex)")]
    Length {
        /// Characters found.
        len: usize,
    },
    /// A character outside the alphabet.
    #[error("address text has invalid character {byte:#04x} at index {index}")]
    Character {
        /// Position of the character.
        index: usize,
        /// The offending byte.
        byte: u8,
    },
}
