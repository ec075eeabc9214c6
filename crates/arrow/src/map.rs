//! prollystore maps with a typed row schema ([`RowSchema`]) as Arrow record batches, and maps
//! built from record batches ("a map from an Arrow table or a DataFrame").
//!
//! A map's Arrow schema has one field per column, key columns first, typed by the column's
//! encoding ([`encoding_type`]). Readers own an `Arc` of the store and find each batch's first
//! row by its ordinal, so they are `Send + 'static` whenever the store is `Send + Sync`.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Decimal128Type, Decimal256Type, DurationMicrosecondType, DurationMillisecondType,
    DurationNanosecondType, DurationSecondType, Float32Type, Float64Type, Int16Type, Int32Type,
    Int64Type, Int8Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt16Type, UInt32Type, UInt64Type, UInt8Type,
};
use arrow_array::{Array, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, Schema as ArrowSchema, SchemaRef, TimeUnit};
use prollystore::blob::{read_blob, StoreBlobs};
use prollystore::rows::{Column, RowDecoder, RowEncoder, RowSchema};
use prollystore::tuples::TupleSchema;
use prollystore::{BytesSchema, Map, StoreFastPaths, TreeSchema};
use prollystore_format::tuple::{Adaptive, Decimal, Type, Value};
use prollystore_format::{Address, Encoding};

use crate::columns::{date_from_days, ColumnBuilder, Extra};
use crate::dolt::DEFAULT_BATCH_ROWS;
use crate::dolt_types::{EXTENSION_METADATA, EXTENSION_NAME, JSON_EXTENSION};
use crate::error::{Error, Result};

/// The Arrow type of a map column stored as `enc`. Decimals, which a row schema stores without
/// a fixed scale, come as their text.
pub fn encoding_type(enc: Encoding) -> DataType {
    use Encoding as E;
    match enc {
        E::Int8 => DataType::Int8,
        E::Uint8 => DataType::UInt8,
        E::Int16 => DataType::Int16,
        E::Uint16 | E::Year | E::Enum => DataType::UInt16,
        E::Int32 => DataType::Int32,
        E::Uint32 => DataType::UInt32,
        E::Int64 => DataType::Int64,
        E::Uint64 | E::Bit64 | E::Set => DataType::UInt64,
        E::Float32 => DataType::Float32,
        E::Float64 => DataType::Float64,
        E::Hash128 => DataType::FixedSizeBinary(16),
        E::Cell => DataType::FixedSizeBinary(17),
        E::CommitAddr => DataType::FixedSizeBinary(20),
        E::Date => DataType::Date32,
        E::Time => DataType::Duration(TimeUnit::Microsecond),
        E::Datetime => DataType::Timestamp(TimeUnit::Microsecond, None),
        E::String
        | E::StringAddr
        | E::StringAdaptive
        | E::Decimal
        | E::Json
        | E::JsonAddr
        | E::JsonAdaptive => DataType::Utf8,
        _ => DataType::Binary,
    }
}

fn is_json(enc: Encoding) -> bool {
    matches!(
        enc,
        Encoding::Json | Encoding::JsonAddr | Encoding::JsonAdaptive
    )
}

/// The Arrow field of a map column (JSON columns carry the `arrow.json` extension).
pub fn column_field(col: &Column) -> Field {
    let f = Field::new(&col.name, encoding_type(col.ty.enc), col.ty.nullable);
    if is_json(col.ty.enc) {
        let meta = HashMap::from([
            (EXTENSION_NAME.to_string(), JSON_EXTENSION.to_string()),
            (EXTENSION_METADATA.to_string(), String::new()),
        ]);
        return f.with_metadata(meta);
    }
    f
}

/// The Arrow schema of a map's rows: key columns, then value columns.
pub fn map_schema(schema: &RowSchema) -> SchemaRef {
    Arc::new(ArrowSchema::new(
        schema.columns().map(column_field).collect::<Vec<_>>(),
    ))
}

/// A map's rows (all, or a key range) as record batches. `H` holds the store: an `Arc<S>`
/// by default, or any handle that lends it ([`MapBatches::with_store`]).
pub struct MapBatches<S: StoreFastPaths + ?Sized, H: AsRef<S> = Arc<S>> {
    store: H,
    _store: std::marker::PhantomData<fn() -> Box<S>>,
    root: Address,
    schema: RowSchema,
    arrow: SchemaRef,
    builders: Vec<ColumnBuilder>,
    /// Ordinal of the next row, and of the end of the range.
    next: u64,
    end: u64,
    batch_rows: usize,
    /// Reused for out-of-band values.
    blob: Vec<u8>,
}

impl<S: StoreFastPaths + ?Sized, H: AsRef<S>> std::fmt::Debug for MapBatches<S, H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MapBatches")
            .field("root", &self.root)
            .field("next", &self.next)
            .field("end", &self.end)
            .finish_non_exhaustive()
    }
}

/// The ordinal of the first key after `bound` (a lower bound) or of the first key past it (an
/// upper bound: `upper` true).
fn ordinal_of<S: StoreFastPaths + ?Sized>(
    map: &Map<'_, S, TupleSchema>,
    bound: Bound<&[u8]>,
    upper: bool,
    count: u64,
) -> Result<u64> {
    let (key, skip_equal) = match bound {
        Bound::Unbounded => return Ok(if upper { count } else { 0 }),
        Bound::Included(k) => (k, upper),
        Bound::Excluded(k) => (k, !upper),
    };
    let mut c = map.seek(key)?;
    if !c.valid() {
        c.advance(map.store())?;
    }
    while c.valid() {
        match map.schema().compare_keys(c.key(), key) {
            Ordering::Less => {}
            Ordering::Equal if skip_equal => {}
            _ => break,
        }
        c.advance(map.store())?;
    }
    Ok(if c.valid() { c.ordinal() } else { count })
}

impl<S: StoreFastPaths + ?Sized> MapBatches<S> {
    /// Every row of the map at `root` in `store`, whose rows are `schema`'s, `batch_rows`
    /// rows a batch.
    pub fn new(
        store: Arc<S>,
        root: Address,
        schema: RowSchema,
        batch_rows: usize,
    ) -> Result<MapBatches<S>> {
        Self::range(
            store,
            root,
            schema,
            Bound::Unbounded,
            Bound::Unbounded,
            batch_rows,
        )
    }

    /// The rows whose keys (encoded tuples, e.g. from [`RowSchema::encode_key`]) are within
    /// `from` and `to`, in key order.
    pub fn range(
        store: Arc<S>,
        root: Address,
        schema: RowSchema,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        batch_rows: usize,
    ) -> Result<MapBatches<S>> {
        MapBatches::with_store(store, root, schema, from, to, batch_rows)
    }
}

impl<S: StoreFastPaths + ?Sized, H: AsRef<S>> MapBatches<S, H> {
    /// As [`MapBatches::range`], the store lent by `store`: a handle that keeps it alive and
    /// unchanged while the reader lives.
    pub fn with_store(
        store: H,
        root: Address,
        schema: RowSchema,
        from: Bound<&[u8]>,
        to: Bound<&[u8]>,
        batch_rows: usize,
    ) -> Result<MapBatches<S, H>> {
        if batch_rows == 0 {
            return Err(Error::Mismatch(
                "a batch must hold at least one row (batch_rows is 0)".into(),
            ));
        }
        let arrow = map_schema(&schema);
        let map = Map::new(store.as_ref(), root, schema.tuple_schema());
        let count = map.count()?;
        let next = ordinal_of(&map, from, false, count)?;
        let end = ordinal_of(&map, to, true, count)?.max(next);
        let builders = arrow
            .fields()
            .iter()
            .map(|f| ColumnBuilder::new(f, &Extra::default(), batch_rows.min(DEFAULT_BATCH_ROWS)))
            .collect::<Result<_>>()?;
        Ok(MapBatches {
            store,
            _store: std::marker::PhantomData,
            root,
            schema,
            arrow,
            builders,
            next,
            end,
            batch_rows,
            blob: Vec::new(),
        })
    }

    /// Skips to the row at position `ordinal` of the map (within the range; never back), so
    /// a reader that lends its store for one batch at a time can resume where it stopped.
    pub fn skip_to(mut self, ordinal: u64) -> Self {
        self.next = ordinal.clamp(self.next, self.end);
        self
    }

    /// Position in the map of the next row to return.
    pub fn position(&self) -> u64 {
        self.next
    }

    /// Rows left to return.
    pub fn remaining(&self) -> u64 {
        self.end - self.next
    }

    /// The next batch, `None` after the last.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>> {
        if self.next >= self.end {
            return Ok(None);
        }
        let n = self.remaining().min(self.batch_rows as u64);
        let store = self.store.as_ref();
        let mut c = Map::new(store, self.root, BytesSchema).seek_ordinal(self.next)?;
        let decoder = RowDecoder::new(&self.schema);
        let mut row = Vec::new();
        for i in 0..n {
            if !c.valid() {
                return Err(Error::Mismatch(format!(
                    "map {}: ended at row {} of {}",
                    self.root,
                    self.next + i,
                    self.end
                )));
            }
            decoder.decode_into(c.key(), c.value(), &mut row)?;
            for (k, (b, v)) in self.builders.iter_mut().zip(&row).enumerate() {
                let Some(v) = v else {
                    b.append_null();
                    continue;
                };
                let bytes: Option<&[u8]> = match v {
                    Value::Adaptive(Adaptive::Inline(b)) => Some(b),
                    Value::Adaptive(Adaptive::OutOfBand { address, .. })
                    | Value::Address(address)
                        if !matches!(
                            self.schema.columns().nth(k).map(|c| c.ty.enc),
                            Some(Encoding::CommitAddr)
                        ) =>
                    {
                        self.blob.clear();
                        read_blob(store, address, &mut self.blob)?;
                        Some(&self.blob)
                    }
                    Value::String(s) => Some(s.as_bytes()),
                    Value::Bytes(b) | Value::Json(b) | Value::Geometry(b) | Value::Extended(b) => {
                        Some(b)
                    }
                    _ => None,
                };
                if !b.append_value(v, bytes) {
                    let name = self.arrow.fields().get(k).map(|f| f.name().clone());
                    return Err(Error::Mismatch(format!(
                        "column {:?}, row {}: stored value {v:?} does not fit",
                        name.unwrap_or_default(),
                        self.next + i
                    )));
                }
            }
            c.advance(store)?;
        }
        self.next += n;
        let columns = self
            .builders
            .iter_mut()
            .map(ColumnBuilder::finish)
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(RecordBatch::try_new(self.arrow.clone(), columns)?))
    }
}

impl<S: StoreFastPaths + ?Sized, H: AsRef<S>> Iterator for MapBatches<S, H> {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().map_err(ArrowError::from).transpose()
    }
}

impl<S: StoreFastPaths + ?Sized, H: AsRef<S>> RecordBatchReader for MapBatches<S, H> {
    fn schema(&self) -> SchemaRef {
        self.arrow.clone()
    }
}

/// The encoding a map column of Arrow type `dt` is stored in (`key`: a key column, where text
/// and bytes are stored inline).
fn arrow_encoding(field: &Field, key: bool) -> Result<Encoding> {
    use Encoding as E;
    let json = field.metadata().get(EXTENSION_NAME).map(String::as_str) == Some(JSON_EXTENSION);
    Ok(match field.data_type() {
        DataType::Boolean | DataType::Int8 => E::Int8,
        DataType::Int16 => E::Int16,
        DataType::Int32 => E::Int32,
        DataType::Int64 => E::Int64,
        DataType::UInt8 => E::Uint8,
        DataType::UInt16 => E::Uint16,
        DataType::UInt32 => E::Uint32,
        DataType::UInt64 => E::Uint64,
        DataType::Float32 => E::Float32,
        DataType::Float64 => E::Float64,
        DataType::Date32 => E::Date,
        DataType::Timestamp(..) => E::Datetime,
        DataType::Duration(..) => E::Time,
        DataType::Decimal128(..) | DataType::Decimal256(..) => E::Decimal,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View if json && !key => {
            E::JsonAdaptive
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View | DataType::Dictionary(..) => {
            if key {
                E::String
            } else {
                E::StringAdaptive
            }
        }
        DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView
        | DataType::FixedSizeBinary(_) => {
            if key {
                E::Bytes
            } else {
                E::BytesAdaptive
            }
        }
        other => {
            return Err(Error::Mismatch(format!(
                "column {:?}: Arrow type {other} has no prollystore encoding",
                field.name()
            )))
        }
    })
}

/// The row schema of a map holding rows of `schema`: the columns named in `key` (in that
/// order) form the key, the others are values in schema order. Key columns are never NULL.
pub fn infer_row_schema(schema: &ArrowSchema, key: &[&str]) -> Result<RowSchema> {
    if key.is_empty() {
        return Err(Error::Mismatch(
            "a map needs at least one key column".into(),
        ));
    }
    let mut key_cols = Vec::new();
    for name in key {
        let (_, f) = schema.column_with_name(name).ok_or_else(|| {
            Error::Mismatch(format!("key column {name:?} is not in the Arrow schema"))
        })?;
        if key_cols.iter().any(|c: &Column| c.name == *name) {
            return Err(Error::Mismatch(format!(
                "key column {name:?} is named twice"
            )));
        }
        key_cols.push(Column {
            name: name.to_string(),
            ty: Type {
                enc: arrow_encoding(f, true)?,
                nullable: false,
            },
        });
    }
    let mut value = Vec::new();
    for f in schema.fields() {
        if key.contains(&f.name().as_str()) {
            continue;
        }
        value.push(Column {
            name: f.name().clone(),
            ty: Type {
                enc: arrow_encoding(f, false)?,
                nullable: f.is_nullable(),
            },
        });
    }
    Ok(RowSchema {
        key: key_cols,
        value,
    })
}

/// Owned storage for a value that borrows (decimal coefficients, dictionary text).
enum Cell {
    Value(Value<'static>),
    Decimal(i32, bool, Vec<u8>),
    Text(String),
    /// Nothing stored yet (a cell's state before its first value).
    Empty,
}

/// One Arrow cell as the [`Value`] of a column stored as `enc`; `what` names column and row.
fn cell_value<'a>(
    array: &'a dyn Array,
    row: usize,
    enc: Encoding,
    store: &'a mut Cell,
    what: &dyn Fn() -> String,
) -> Result<Option<Value<'a>>> {
    if array.is_null(row) {
        return Ok(None);
    }
    let bad = |why: String| Error::Mismatch(format!("{}: {why}", what()));
    let int = |v: i128| -> Result<Value<'static>> {
        let out = match enc {
            Encoding::Int8 => i8::try_from(v).ok().map(Value::Int8),
            Encoding::Int16 => i16::try_from(v).ok().map(Value::Int16),
            Encoding::Int32 => i32::try_from(v).ok().map(Value::Int32),
            Encoding::Int64 => i64::try_from(v).ok().map(Value::Int64),
            Encoding::Uint8 => u8::try_from(v).ok().map(Value::Uint8),
            Encoding::Uint16 => u16::try_from(v).ok().map(Value::Uint16),
            Encoding::Uint32 => u32::try_from(v).ok().map(Value::Uint32),
            Encoding::Uint64 => u64::try_from(v).ok().map(Value::Uint64),
            _ => None,
        };
        out.ok_or_else(|| bad(format!("integer {v} does not fit {}", enc.name())))
    };
    let micros = |v: i64, unit: &TimeUnit| -> Result<i64> {
        let m = match unit {
            TimeUnit::Second => v.checked_mul(1_000_000),
            TimeUnit::Millisecond => v.checked_mul(1_000),
            TimeUnit::Microsecond => Some(v),
            TimeUnit::Nanosecond => Some(v.div_euclid(1_000)),
        };
        m.ok_or_else(|| bad(format!("time {v} {unit:?} is out of range")))
    };
    let value: Value<'static> = match array.data_type() {
        DataType::Boolean => int(i128::from(array.as_boolean().value(row)))?,
        DataType::Int8 => int(array.as_primitive::<Int8Type>().value(row).into())?,
        DataType::Int16 => int(array.as_primitive::<Int16Type>().value(row).into())?,
        DataType::Int32 => int(array.as_primitive::<Int32Type>().value(row).into())?,
        DataType::Int64 => int(array.as_primitive::<Int64Type>().value(row).into())?,
        DataType::UInt8 => int(array.as_primitive::<UInt8Type>().value(row).into())?,
        DataType::UInt16 => int(array.as_primitive::<UInt16Type>().value(row).into())?,
        DataType::UInt32 => int(array.as_primitive::<UInt32Type>().value(row).into())?,
        DataType::UInt64 => int(array.as_primitive::<UInt64Type>().value(row).into())?,
        DataType::Float32 => Value::Float32(array.as_primitive::<Float32Type>().value(row)),
        DataType::Float64 => Value::Float64(array.as_primitive::<Float64Type>().value(row)),
        DataType::Date32 => {
            let days = array
                .as_primitive::<arrow_array::types::Date32Type>()
                .value(row);
            Value::Date(
                date_from_days(days.into())
                    .ok_or_else(|| bad(format!("date {days} days is out of range")))?,
            )
        }
        DataType::Timestamp(unit, _) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(row),
                TimeUnit::Millisecond => {
                    array.as_primitive::<TimestampMillisecondType>().value(row)
                }
                TimeUnit::Microsecond => {
                    array.as_primitive::<TimestampMicrosecondType>().value(row)
                }
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(row),
            };
            Value::Datetime(micros(v, unit)?)
        }
        DataType::Duration(unit) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<DurationSecondType>().value(row),
                TimeUnit::Millisecond => array.as_primitive::<DurationMillisecondType>().value(row),
                TimeUnit::Microsecond => array.as_primitive::<DurationMicrosecondType>().value(row),
                TimeUnit::Nanosecond => array.as_primitive::<DurationNanosecondType>().value(row),
            };
            Value::Time(micros(v, unit)?)
        }
        DataType::Decimal128(_, scale) => {
            let v = array.as_primitive::<Decimal128Type>().value(row);
            let bytes = v.unsigned_abs().to_be_bytes().to_vec();
            *store = Cell::Decimal(-i32::from(*scale), v < 0, bytes);
            return Ok(Some(stored(store)));
        }
        DataType::Decimal256(_, scale) => {
            let v = array.as_primitive::<Decimal256Type>().value(row);
            let neg = v.is_negative();
            let abs = if neg { v.wrapping_neg() } else { v };
            *store = Cell::Decimal(-i32::from(*scale), neg, abs.to_be_bytes().to_vec());
            return Ok(Some(stored(store)));
        }
        DataType::Utf8 => return Ok(Some(Value::String(array.as_string::<i32>().value(row)))),
        DataType::LargeUtf8 => return Ok(Some(Value::String(array.as_string::<i64>().value(row)))),
        DataType::Utf8View => return Ok(Some(Value::String(array.as_string_view().value(row)))),
        DataType::Binary => return Ok(Some(Value::Bytes(array.as_binary::<i32>().value(row)))),
        DataType::LargeBinary => {
            return Ok(Some(Value::Bytes(array.as_binary::<i64>().value(row))))
        }
        DataType::BinaryView => return Ok(Some(Value::Bytes(array.as_binary_view().value(row)))),
        DataType::FixedSizeBinary(_) => {
            return Ok(Some(Value::Bytes(array.as_fixed_size_binary().value(row))))
        }
        DataType::Dictionary(..) => {
            let dict = array.as_any_dictionary();
            let key = dict.normalized_keys().get(row).copied().unwrap_or(0);
            let values = dict.values();
            let text = match values.data_type() {
                DataType::Utf8 => values.as_string::<i32>().value(key).to_string(),
                DataType::LargeUtf8 => values.as_string::<i64>().value(key).to_string(),
                other => return Err(bad(format!("dictionary of {other} is not text"))),
            };
            *store = Cell::Text(text);
            return Ok(Some(stored(store)));
        }
        other => return Err(bad(format!("Arrow type {other} is not supported"))),
    };
    *store = Cell::Value(value);
    Ok(Some(stored(store)))
}

fn stored(cell: &Cell) -> Value<'_> {
    match cell {
        Cell::Value(v) => *v,
        Cell::Decimal(exp, neg, coef) => Value::Decimal(Decimal::finite(*exp, *neg, coef)),
        Cell::Text(t) => Value::String(t),
        // Never read: `cell_value` stores before it reads.
        Cell::Empty => Value::Int8(0),
    }
}

/// Builds a map in `store` holding the rows of `batches` under `schema` (columns found by
/// name; rows in any order). Large text and bytes move out of band as Dolt does. Fails, and
/// builds nothing, on a value that does not fit its column or two rows with the same key;
/// the message names the column and row (counted across batches from 0).
pub fn build_map<'s, S, I>(
    store: &'s S,
    schema: &RowSchema,
    batches: I,
) -> Result<Map<'s, S, TupleSchema>>
where
    S: StoreFastPaths + ?Sized,
    I: IntoIterator<Item = Result<RecordBatch, ArrowError>>,
{
    let tuple_schema = schema.tuple_schema();
    let encs: Vec<Encoding> = schema.columns().map(|c| c.ty.enc).collect();
    let names: Vec<&str> = schema.columns().map(|c| c.name.as_str()).collect();
    let mut encoder = RowEncoder::new(schema);
    let mut blobs = StoreBlobs::new(store);
    let mut rows: Vec<(Vec<u8>, Vec<u8>, u64)> = Vec::new();
    let mut row_number = 0u64;
    for batch in batches {
        let batch = batch?;
        let columns = names
            .iter()
            .map(|n| {
                batch
                    .column_by_name(n)
                    .ok_or_else(|| Error::Mismatch(format!("the record batch has no column {n:?}")))
            })
            .collect::<Result<Vec<_>>>()?;
        let mut cells: Vec<Cell> = (0..columns.len()).map(|_| Cell::Empty).collect();
        for r in 0..batch.num_rows() {
            let mut values = Vec::with_capacity(columns.len());
            for (((array, enc), name), cell) in
                columns.iter().zip(&encs).zip(&names).zip(cells.iter_mut())
            {
                let what = || format!("column {name:?}, row {row_number}");
                values.push(cell_value(array.as_ref(), r, *enc, cell, &what)?);
            }
            let (k, v) = encoder
                .encode_with(&values, &mut blobs)
                .map_err(|e| Error::Mismatch(format!("row {row_number}: {e}")))?;
            rows.push((k.to_vec(), v.to_vec(), row_number));
            row_number += 1;
        }
    }
    rows.sort_by(|a, b| tuple_schema.compare_keys(&a.0, &b.0));
    if let Some(w) = rows
        .windows(2)
        .find(|w| tuple_schema.compare_keys(&w[0].0, &w[1].0) == Ordering::Equal)
    {
        return Err(Error::Mismatch(format!(
            "rows {} and {} have the same key",
            w[0].2.min(w[1].2),
            w[0].2.max(w[1].2)
        )));
    }
    Ok(Map::from_sorted(
        store,
        tuple_schema,
        rows.iter().map(|(k, v, _)| (&k[..], &v[..])),
    )?)
}
