//! Record batches written into a Dolt table: each batch column goes to the table column of
//! its name, through the writer's streamed row path ([`DoltWriter::apply_fields`]). Text and
//! binary arrays hand over their bytes as they are; every other value is first written as the
//! text `dolt sql` prints for it ([`prollystore_format::value_text`]), so the one reader of
//! value text ([`prollystore_format::value_parse`]) checks and encodes every value, exactly as
//! for a CSV import: the same limits, the same rounding, the same errors.
//!
//! ```
//! use std::sync::Arc;
//! use arrow_array::{Int64Array, RecordBatch, StringArray};
//! use prollystore_arrow::dolt_write::write_batches;
//! use prollystore_dolt::write::{DoltWriter, RowMode};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # use prollystore_sql::FromSql;
//! # let tmp = tempfile::tempdir()?;
//! # let dir = prollystore_test_vectors::writable_copy("dolt-db/vecdb", tmp.path())?;
//! # let mut w = prollystore_sql::writer(&dir)?;
//! # w.create_table(&prollystore_dolt::write::TableDef::from_sql(
//! #     "CREATE TABLE people (id BIGINT PRIMARY KEY, name VARCHAR(20))")?)?;
//! # w.save(("Ada", "ada@example.com"), 1_704_067_200)?;
//! # drop(w);
//! let batch = RecordBatch::try_from_iter([
//!     ("id", Arc::new(Int64Array::from(vec![1, 2])) as _),
//!     ("name", Arc::new(StringArray::from(vec![Some("Ada"), None])) as _),
//! ])?;
//! let mut w = DoltWriter::open(&dir)?;
//! let rows = write_batches(&mut w, RowMode::Insert, "people", [batch])?;
//! assert_eq!(rows, 2);
//! w.save(("Ada", "ada@example.com"), 1_704_067_200)?;
//! # Ok(())
//! # }
//! ```

use std::borrow::Cow;

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, SchemaRef};
use prollystore_dolt::schema::SqlType;
use prollystore_dolt::write::{DoltWriter, RowMode};

use crate::cell_text::{bytes_at, is_bytes, unsupported, write_value};
use crate::error::{Error, Result};

/// Writes `batches` into `table` in `mode` (insert, update, upsert or delete, as
/// [`DoltWriter::apply_fields`] takes them) and returns the number of rows. Every batch has
/// the first one's schema; its fields name the table's columns (the other columns get their
/// defaults). Timestamps with a time zone are instants, written as their UTC time; a TIMESTAMP
/// column takes only those. All rows or none: a value the column cannot hold, a repeated key
/// or an Arrow type with no SQL counterpart (lists, structs, maps, intervals, half floats)
/// changes nothing.
pub fn write_batches(
    writer: &mut DoltWriter,
    mode: RowMode,
    table: &str,
    batches: impl IntoIterator<Item = RecordBatch>,
) -> Result<usize> {
    let batches: Vec<RecordBatch> = batches.into_iter().collect();
    let Some(schema) = batches.first().map(RecordBatch::schema) else {
        return Ok(0);
    };
    // A TIMESTAMP column holds UTC instants: a timestamp without a zone does not say which
    // instant it is (Python's naive datetimes are refused the same way).
    let columns = writer.columns(table)?;
    for field in schema.fields() {
        let column = columns
            .iter()
            .find(|c| c.name.eq_ignore_ascii_case(field.name()));
        if let (DataType::Timestamp(_, None), Some(c)) = (field.data_type(), column) {
            if matches!(c.sql_type, SqlType::Timestamp(_)) {
                return Err(Error::Mismatch(format!(
                    "column {:?} of table {table:?} is a TIMESTAMP (a UTC instant): give \
                     timestamps with a time zone, not {}",
                    c.name,
                    field.data_type()
                )));
            }
        }
    }
    let texts = batches
        .iter()
        .enumerate()
        .map(|(i, b)| BatchText::of(&schema, i, b))
        .collect::<Result<Vec<_>>>()?;
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    let rows = || {
        texts
            .iter()
            .flat_map(|t| (0..t.rows).map(move |r| t.columns.iter().map(|c| c.field(r)).collect()))
    };
    Ok(writer.apply_fields(mode, table, &names, rows)?)
}

/// A batch's columns as the writer's fields.
struct BatchText {
    rows: usize,
    columns: Vec<ColumnText>,
}

impl BatchText {
    /// Batch `at` of a write whose first batch has `schema`.
    fn of(schema: &SchemaRef, at: usize, batch: &RecordBatch) -> Result<BatchText> {
        if batch.schema().fields() != schema.fields() {
            return Err(Error::Mismatch(format!(
                "record batch {at}: its schema {} is not the first batch's {}",
                batch.schema(),
                schema
            )));
        }
        let columns = batch
            .columns()
            .iter()
            .zip(schema.fields())
            .map(|(array, field)| ColumnText::of(field.name(), array))
            .collect::<Result<_>>()?;
        Ok(BatchText {
            rows: batch.num_rows(),
            columns,
        })
    }
}

/// One column's fields: the array's own bytes, or its values written as text.
enum ColumnText {
    /// Text or binary values, handed over as they are.
    Bytes(ArrayRef),
    /// A dictionary of text or binary values: each row's key into `values`.
    Dictionary {
        keys: Vec<Option<usize>>,
        values: ArrayRef,
    },
    /// Other values, as text end to end (`ends[r]`: where row `r`'s text ends; NULL rows
    /// none).
    Text {
        text: Vec<u8>,
        ends: Vec<usize>,
        array: ArrayRef,
    },
    /// Arrow's null type: NULL in every row.
    Null,
}

impl ColumnText {
    fn of(name: &str, array: &ArrayRef) -> Result<ColumnText> {
        if is_bytes(array.data_type()) {
            return Ok(ColumnText::Bytes(array.clone()));
        }
        if let Some(dict) = array.as_any_dictionary_opt() {
            if !is_bytes(dict.values().data_type()) {
                return Err(unsupported(name, array.data_type()));
            }
            let keys = dict.normalized_keys();
            let keys = (0..array.len())
                .map(|r| array.is_valid(r).then(|| keys[r]))
                .collect();
            return Ok(ColumnText::Dictionary {
                keys,
                values: dict.values().clone(),
            });
        }
        if *array.data_type() == DataType::Null {
            return Ok(ColumnText::Null);
        }
        let mut text = Vec::with_capacity(array.len() * 8);
        let mut ends = Vec::with_capacity(array.len());
        for r in 0..array.len() {
            if array.is_valid(r) {
                write_value(name, array, r, &mut text)?;
            }
            ends.push(text.len());
        }
        Ok(ColumnText::Text {
            text,
            ends,
            array: array.clone(),
        })
    }

    /// Row `r`'s field (`None`: NULL).
    fn field(&self, r: usize) -> Option<Cow<'_, [u8]>> {
        match self {
            ColumnText::Bytes(array) => bytes_at(array.as_ref(), r).map(Cow::Borrowed),
            ColumnText::Dictionary { keys, values } => {
                bytes_at(values.as_ref(), (*keys.get(r)?)?).map(Cow::Borrowed)
            }
            ColumnText::Text { text, ends, array } => {
                if array.is_null(r) {
                    return None;
                }
                let start = r.checked_sub(1).map_or(0, |p| ends[p]);
                Some(Cow::Borrowed(&text[start..ends[r]]))
            }
            ColumnText::Null => None,
        }
    }
}
