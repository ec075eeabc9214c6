//! # prollystore-format
//!
//! Dolt's on-disk formats, read without copying and written byte for byte as Dolt writes them.
//! No I/O and no trees here: those are the `prollystore` crate's.
//!
//! Tuples and values:
//! * [`tuple`](mod@tuple): `val.Tuple` — fields, then little-endian u16 offsets, then a u16
//!   count — with a descriptor that gives typed access to every encoding Dolt has and orders
//!   tuples exactly as Dolt's default comparator does.
//! * [`encoding`]: the field encodings of Dolt tuples (`serial.Encoding`), with their widths
//!   and classes.
//! * [`collation`]: MySQL collations, ordered exactly as Dolt orders collated string keys.
//! * [`json_order`]: JSON documents in the order Dolt sorts them.
//! * [`json`]: JSON text stored as Dolt stores it (validated and normalized).
//! * [`sql_type`]: MySQL column types, parsed once into a type that knows its encoding and limits.
//! * [`varint`]: the two varint codes Dolt uses.
//! * [`value_text`]: SQL values as `dolt sql` prints them (Go's shortest float text, decimals
//!   at a column's scale, dates, times, datetimes), appended without allocating.
//! * [`value_parse`]: the one reader of SQL value text (integers, decimals, dates, times,
//!   datetimes, hex), with the spellings Dolt's importer takes.
//! * [`geometry`]: geometry values as WKT text (`ST_AsText`), and values to store from WKT or
//!   WKB, checked against a column's type and SRID (`geometry_srids`: the SRIDs Dolt accepts).
//!
//! Chunks:
//! * [`message`]: chunk messages — Dolt's 4-byte prefix plus a FlatBuffers table (tree nodes
//!   `ProllyTreeNode`, `Blob`, `AddressMap`, `CommitClosure`, and the database-level objects:
//!   commits, root values, tables, schemas, working sets, store roots, tags). A node view can
//!   only be made by verifying the chunk; after that, reads are allocation-free. Writers
//!   reproduce Dolt's bytes exactly. The FlatBuffers readers are generated from the `.fbs`
//!   schemas in the repository's top-level `schema/` folder (`scripts/flatbuffers.sh`).
//! * [`address`]: 20-byte chunk addresses, the blake3 and Dolt (SHA-512/20) hash profiles (both
//!   hash many chunks side by side where the CPU has AVX2: blake3 eight at a time, SHA-512
//!   four), and Dolt's base32 spelling.
//! * [`error`]: the small errors that belong to no single format family (each family has its
//!   own enum beside its code).
//!
//! Every decoder of untrusted bytes returns an error and never panics.
//!
//! A tuple as Dolt stores a row's key `(id INT, name VARCHAR)`, read back, ordered and hashed:
//!
//! ```
//! use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc, Type};
//! use prollystore_format::{Encoding, HashProfile};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let desc = TupleDesc::new(vec![
//!     Type::not_null(Encoding::Int32),
//!     Type::nullable(Encoding::String),
//! ]);
//! let mut b = TupleBuilder::new(desc.clone());
//! let mut key = |id: i32, name: &str| -> Result<Vec<u8>, Box<dyn std::error::Error>> {
//!     b.put_int32(0, id)?;
//!     b.put_string(1, name)?;
//!     Ok(b.build()?.as_bytes().to_vec())
//! };
//! let (ada, bob) = (key(1, "ada")?, key(2, "bob")?);
//! // Stored bytes are untrusted: a view is made only after checking the layout.
//! let t = Tuple::new(&ada)?;
//! assert_eq!(desc.get_int32(t, 0)?, Some(1));
//! assert_eq!(desc.get_string(t, 1)?, Some("ada"));
//! assert!(desc.compare(&ada, &bob).is_lt()); // Dolt's key order
//! // Chunks are named by the hash of their bytes; the Dolt profile gives Dolt's addresses.
//! println!("{}", HashProfile::Dolt.address_of(&ada));
//! # Ok(())
//! # }
//! ```

pub mod address;
pub mod collation;
pub mod encoding;
pub mod error;
pub mod geometry;
mod geometry_srids;
pub mod json;
pub mod json_order;
pub mod message;
pub mod sql_type;
pub mod tuple;
pub mod value_parse;
pub mod value_text;
pub mod varint;

#[cfg(test)]
mod test_support;

pub use address::{Address, HashProfile, ADDRESS_LEN};
pub use collation::{Collation, CollationError};
pub use encoding::Encoding;
pub use error::AddressParseError;
