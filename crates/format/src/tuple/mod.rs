//! Dolt tuples (`val.Tuple`): the layout, a zero-copy view, descriptors with typed access to
//! every encoding, a reusable builder, and Dolt's ordering.

mod error;
mod layout;

pub use error::TupleError;
pub use layout::{validate_layout, Tuple, MAX_TUPLE_DATA_SIZE, MAX_TUPLE_FIELDS};
