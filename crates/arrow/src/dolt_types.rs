//! The Arrow type of each Dolt SQL type (the table in `docs/ARROW.md`), and the Arrow schema of
//! a Dolt table: one field per visible column, in `SELECT *` order.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema as ArrowSchema, SchemaRef, TimeUnit};
use prollystore_dolt::schema::{Column, Schema, SqlType};

/// Field metadata key naming an Arrow extension type.
pub const EXTENSION_NAME: &str = "ARROW:extension:name";
/// Field metadata key holding an extension type's parameters.
pub const EXTENSION_METADATA: &str = "ARROW:extension:metadata";
/// The canonical extension type of JSON text.
pub const JSON_EXTENSION: &str = "arrow.json";
/// Field metadata key holding the column's SQL type as Dolt stores it (`varchar(40)`, …), so a
/// consumer can tell `DATETIME(3)` from `DATETIME(6)` or a geometry subtype.
pub const SQL_TYPE_METADATA: &str = "prollystore:sql_type";

/// Field metadata key saying a geometry column's values are as Dolt stores them (value
/// `stored`: SRID, then WKB; [`crate::GeometryBytes::Stored`]) rather than WKB.
pub const GEOMETRY_BYTES_METADATA: &str = "prollystore:geometry_bytes";

/// The time zone of TIMESTAMP columns: Dolt stores them in UTC.
pub const TIMESTAMP_ZONE: &str = "UTC";

/// The Arrow type of a Dolt column's values.
pub fn arrow_type(col: &Column) -> DataType {
    match &col.sql_type {
        SqlType::Int { bits, unsigned } => match (bits, unsigned) {
            (8, false) => DataType::Int8,
            (16, false) => DataType::Int16,
            (24 | 32, false) => DataType::Int32,
            (_, false) => DataType::Int64,
            (8, true) => DataType::UInt8,
            (16, true) => DataType::UInt16,
            (24 | 32, true) => DataType::UInt32,
            (_, true) => DataType::UInt64,
        },
        SqlType::Float => DataType::Float32,
        SqlType::Double => DataType::Float64,
        SqlType::Decimal { precision, scale } => {
            // Arrow's decimals need precision ≥ 1 and scale ≤ precision.
            let p = (*precision).max(1).max(*scale);
            let s = i8::try_from(*scale).unwrap_or(i8::MAX);
            if p <= 38 {
                DataType::Decimal128(p, s)
            } else {
                DataType::Decimal256(p.min(76), s)
            }
        }
        SqlType::Bit(_) => DataType::UInt64,
        SqlType::Year => DataType::UInt16,
        SqlType::Date => DataType::Date32,
        // TIME spans -838:59:59..838:59:59: an interval, not a time of day.
        SqlType::Time(_) => DataType::Duration(TimeUnit::Microsecond),
        SqlType::Datetime(_) => DataType::Timestamp(TimeUnit::Microsecond, None),
        SqlType::Timestamp(_) => {
            DataType::Timestamp(TimeUnit::Microsecond, Some(TIMESTAMP_ZONE.into()))
        }
        SqlType::Enum { .. } => {
            DataType::Dictionary(Box::new(DataType::UInt16), Box::new(DataType::Utf8))
        }
        SqlType::Set { .. } | SqlType::Text { .. } | SqlType::Json | SqlType::Other(_) => {
            DataType::Utf8
        }
        SqlType::Binary { .. } | SqlType::Geometry { .. } | SqlType::Vector(_) => DataType::Binary,
    }
}

/// The Arrow field of a Dolt column: its type, nullability, and metadata (the SQL type text;
/// the `arrow.json` extension for JSON).
pub fn arrow_field(col: &Column) -> Field {
    let mut meta = HashMap::new();
    meta.insert(SQL_TYPE_METADATA.to_string(), col.sql_type_text.clone());
    if col.sql_type == SqlType::Json {
        meta.insert(EXTENSION_NAME.to_string(), JSON_EXTENSION.to_string());
        meta.insert(EXTENSION_METADATA.to_string(), String::new());
    }
    // Virtual generated columns may compute NULL whatever the declaration says.
    let nullable = col.nullable || col.virtual_ || col.generated;
    Field::new(&col.name, arrow_type(col), nullable).with_metadata(meta)
}

/// The Arrow schema of a Dolt table's rows: its visible columns in order.
pub fn table_schema(schema: &Schema) -> SchemaRef {
    let fields: Vec<Field> = visible(schema).map(arrow_field).collect();
    Arc::new(ArrowSchema::new(fields))
}

/// The visible columns of `schema`, in row order.
pub(crate) fn visible(schema: &Schema) -> impl Iterator<Item = &Column> + '_ {
    schema
        .visible_columns()
        .into_iter()
        .filter_map(|i| schema.columns.get(i))
}
