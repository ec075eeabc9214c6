//! # prollystore-format
//!
//! Dolt's on-disk formats, read without copying and written byte for byte as Dolt writes them:
//!
//! * [`tuple`](mod@tuple): `val.Tuple` — fields, then little-endian u16 offsets, then a u16 count — with a
//!   descriptor that gives typed access to every encoding Dolt has and orders tuples exactly as
//!   Dolt's default comparator does.
//! * [`message`]: chunk messages — Dolt's 4-byte prefix plus a FlatBuffers table
//!   (`ProllyTreeNode`, `Blob`, `AddressMap`). A node view can only be made by verifying the chunk;
//!   after that, reads are allocation-free. Writers reproduce Dolt's bytes exactly.
//! * [`address`]: 20-byte chunk addresses, the blake3 and Dolt (SHA-512/20) hash profiles (the
//!   Dolt one four chunks at a time with AVX2), and Dolt's base32 spelling.
//! * [`collation`]: MySQL collations, ordered exactly as Dolt orders collated string keys.
//! * [`sql_type`]: MySQL column types, parsed once into a type that knows its encoding and limits.
//! * [`varint`]: the two varint codes Dolt uses.
//!
//! Every decoder of untrusted bytes returns an error and never panics.

pub mod address;
pub mod collation;
pub mod encoding;
pub mod error;
pub mod json_order;
pub mod message;
pub mod sql_type;
pub mod tuple;
pub mod varint;

#[cfg(test)]
mod test_support;

pub use address::{Address, HashProfile, ADDRESS_LEN};
pub use collation::{Collation, CollationError};
pub use encoding::Encoding;
pub use error::AddressParseError;
