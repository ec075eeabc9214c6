//! Dolt tuples (`val.Tuple`): the layout, a zero-copy view, descriptors with typed access to
//! every encoding, a reusable builder, and Dolt's ordering.

mod access;
mod builder;
mod compare;
mod decimal;
mod desc;
mod error;
mod fixed;
mod layout;
mod refs;
mod temporal;
mod value;

#[cfg(test)]
mod tests;

pub use builder::{BlobError, BlobStore, NoBlobStore, TupleBuilder, DEFAULT_TUPLE_LENGTH_TARGET};
pub use decimal::{Decimal, DecimalForm, DECIMAL_NAN, DECIMAL_NEG_INF, DECIMAL_POS_INF};
pub use desc::{needs_external_order, FieldOrder, TupleDesc, Type};
pub use error::TupleError;
pub use fixed::FixedField;
pub use layout::{layout_is_valid, validate_layout, Tuple, MAX_TUPLE_DATA_SIZE, MAX_TUPLE_FIELDS};
pub use refs::{keyless_key, keyless_key_desc};
#[cfg(feature = "chrono")]
pub use temporal::YearOutOfRange;
pub use temporal::{
    civil_from_days, datetime_text, days_from_civil, round_datetime, time_text, year_from_raw,
    year_to_raw, Date, MAX_YEAR, MIN_YEAR, ZERO_DATETIME_MICROS,
};
pub use value::text_of;
pub use value::{Adaptive, Value};
