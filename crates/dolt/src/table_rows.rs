//! A table's rows as typed SQL values: its clustered index read through a map cursor in key
//! order, each stored field decoded into the [`SqlValue`] Dolt shows (out-of-band values read
//! from their blob trees).

use std::sync::Arc;

use prollystore_format::message::BlobNode;
use prollystore_format::tuple::{Adaptive, Tuple, TupleDesc, Value};
use prollystore_format::Address;

use crate::db::{Database, Table};
use crate::error::{bad_chunk, DoltError, Result};
use crate::expressions::VirtualColumns;
use crate::schema::{Column, SqlType};
use crate::sql_value::{decimal_text, SqlValue};

/// Reads the whole contents of a blob tree.
pub fn read_blob(db: &Database, root: Address, expected_len: u64) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(usize::try_from(expected_len.min(1 << 24)).unwrap_or(0));
    read_blob_into(db, root, &mut out, 0)?;
    if out.len() as u64 != expected_len {
        return Err(bad_chunk(
            root,
            format!(
                "blob holds {} bytes, the row says {expected_len}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

pub(crate) fn read_blob_into(
    db: &Database,
    address: Address,
    out: &mut Vec<u8>,
    depth: usize,
) -> Result<()> {
    if depth > 32 {
        return Err(bad_chunk(address, "blob tree is too deep"));
    }
    let chunk = db.source().chunk(&address)?;
    let node = BlobNode::verify(&chunk).map_err(|e| bad_chunk(address, e.to_string()))?;
    if node.is_leaf() {
        out.extend_from_slice(node.payload());
    } else {
        for i in 0..node.child_count() {
            read_blob_into(db, node.child(i), out, depth + 1)?;
        }
    }
    Ok(())
}

/// Decodes one stored field into the value Dolt shows for `col`.
pub(crate) fn decode_field(
    db: &Database,
    col: &Column,
    desc: &TupleDesc,
    t: Tuple<'_>,
    i: usize,
) -> Result<Option<SqlValue>> {
    let owner = Address::ZERO;
    let v = desc
        .value(t, i)
        .map_err(|e| bad_chunk(owner, format!("column {}: {e}", col.name)))?;
    let Some(v) = v else { return Ok(None) };
    let payload: Vec<u8>;
    let bytes: Option<&[u8]> = match &v {
        Value::Adaptive(Adaptive::Inline(b)) => Some(b),
        Value::Adaptive(Adaptive::OutOfBand { len, address }) => {
            payload = read_blob(db, *address, *len)?;
            Some(&payload)
        }
        Value::Address(a) => {
            // Legacy *_addr encodings: the whole blob tree.
            let mut out = Vec::new();
            if !a.is_zero() {
                read_blob_into(db, *a, &mut out, 0)?;
            }
            payload = out;
            Some(&payload)
        }
        Value::String(s) => Some(s.as_bytes()),
        Value::Bytes(b) | Value::Json(b) | Value::Geometry(b) | Value::Extended(b) => Some(b),
        _ => None,
    };
    value_of(col, v, bytes).map(Some)
}

/// A decoded field as the value Dolt shows for `col`; `bytes` is the payload of a string,
/// bytes, JSON, geometry or adaptive field (blob trees already read).
#[inline]
pub(crate) fn value_of(col: &Column, v: Value<'_>, bytes: Option<&[u8]>) -> Result<SqlValue> {
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let out = match (&col.sql_type, v) {
        (SqlType::Decimal { scale, .. }, Value::Decimal(d)) => {
            SqlValue::Decimal(decimal_text(&d, *scale))
        }
        (SqlType::Enum(names), Value::Enum(e)) => SqlValue::Enum(
            e,
            names
                .get(usize::from(e).wrapping_sub(1))
                .cloned()
                .unwrap_or_default(),
        ),
        (SqlType::Set(names), Value::Set(bits)) => {
            let chosen: Vec<&str> = names
                .iter()
                .enumerate()
                .filter(|(k, _)| *k < 64 && bits & (1u64 << k) != 0)
                .map(|(_, n)| n.as_str())
                .collect();
            SqlValue::Set(bits, chosen.join(","))
        }
        (SqlType::Datetime(f) | SqlType::Timestamp(f), Value::Datetime(us)) => {
            SqlValue::Datetime(us, *f)
        }
        (SqlType::Json, _) => SqlValue::Json(text(bytes.unwrap_or(&[]))),
        (SqlType::Text { .. }, _) => SqlValue::Text(text(bytes.unwrap_or(&[]))),
        (SqlType::Binary { fixed: Some(n), .. }, _) => {
            let mut b = bytes.unwrap_or(&[]).to_vec();
            if b.len() < *n as usize {
                b.resize(*n as usize, 0);
            }
            SqlValue::Bytes(b)
        }
        (_, Value::Int8(x)) => SqlValue::Int(x.into()),
        (_, Value::Int16(x)) => SqlValue::Int(x.into()),
        (_, Value::Int32(x)) => SqlValue::Int(x.into()),
        (_, Value::Int64(x)) => SqlValue::Int(x),
        (_, Value::Uint8(x)) => SqlValue::Uint(x.into()),
        (_, Value::Uint16(x)) => SqlValue::Uint(x.into()),
        (_, Value::Uint32(x)) => SqlValue::Uint(x.into()),
        (_, Value::Uint64(x)) | (_, Value::Bit64(x)) => SqlValue::Uint(x),
        (_, Value::Float32(x)) => SqlValue::Float(x),
        (_, Value::Float64(x)) => SqlValue::Double(x),
        (_, Value::Year(y)) => SqlValue::Year(y),
        (_, Value::Date(d)) => SqlValue::Date(d),
        (_, Value::Time(us)) => SqlValue::Time(us),
        (_, Value::Datetime(us)) => SqlValue::Datetime(us, 6),
        (_, Value::Enum(e)) => SqlValue::Uint(e.into()),
        (_, Value::Set(s)) => SqlValue::Uint(s),
        (_, _) => match bytes {
            Some(b) => SqlValue::Bytes(b.to_vec()),
            None => {
                return Err(DoltError::Unsupported(format!(
                    "column {} ({}): cannot show encoding {}",
                    col.name, col.sql_type_text, col.encoding
                )))
            }
        },
    };
    Ok(out)
}

/// Where a visible column's value lives in a row's tuples.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Key(usize),
    Value(usize),
    /// A VIRTUAL generated column, computed from the others.
    Virtual,
}

/// How to decode one schema's stored (key, value) pairs into the values of its visible
/// columns: made once per schema (and kept per schema address by the open database), then
/// each pair decodes without looking at the schema again.
#[derive(Debug)]
pub(crate) struct DecodePlan {
    key_desc: TupleDesc,
    value_desc: TupleDesc,
    slots: Vec<(usize, Slot)>,
    virtuals: Option<VirtualColumns>,
}

impl DecodePlan {
    /// The plan for `table`'s clustered index. Fails for a generated-column expression it
    /// cannot evaluate and for a schema whose columns are in no tuple.
    pub(crate) fn new(db: &Database, table: &Table) -> Result<DecodePlan> {
        let schema = &table.schema;
        let mut slots = Vec::new();
        for i in schema.visible_columns() {
            let col = schema.columns.get(i);
            let slot = if col.is_some_and(|c| c.virtual_) {
                Slot::Virtual
            } else if let Some(k) = schema.key_columns.iter().position(|&c| c == i) {
                Slot::Key(k)
            } else if let Some(v) = schema.value_columns.iter().position(|&c| c == i) {
                Slot::Value(v)
            } else {
                return Err(bad_chunk(
                    table.schema_address,
                    format!("column {i} is in no tuple"),
                ));
            };
            slots.push((i, slot));
        }
        Ok(DecodePlan {
            key_desc: schema.key_desc(),
            value_desc: schema.value_desc(),
            slots,
            virtuals: VirtualColumns::for_schema(db.engine(), &table.name, schema)?,
        })
    }
}

/// Decodes a table's stored (key, value) pairs into the values of its visible columns.
#[derive(Clone, Debug)]
pub struct RowDecoder<'t> {
    table: &'t Table,
    plan: Arc<DecodePlan>,
}

impl<'t> RowDecoder<'t> {
    /// The decoder for `table`'s clustered index; VIRTUAL generated columns are computed by
    /// `db`'s expression engine ([`Database::with_expressions`]). Fails for an expression it cannot evaluate and for a schema whose
    /// columns are in no tuple.
    pub fn new(db: &Database, table: &'t Table) -> Result<RowDecoder<'t>> {
        Ok(RowDecoder {
            table,
            plan: Arc::new(DecodePlan::new(db, table)?),
        })
    }

    /// The same decoder, with its plan made once per schema for the whole open database
    /// (cheaper when many readers or diffs of the same tables are made).
    pub fn shared(db: &Database, table: &'t Table) -> Result<RowDecoder<'t>> {
        let plan = if table.schema_address.is_zero() {
            Arc::new(DecodePlan::new(db, table)?)
        } else {
            db.memo()
                .get_or_make(table.schema_address, || DecodePlan::new(db, table))?
        };
        Ok(RowDecoder { table, plan })
    }

    /// Decodes one stored pair into `row` (cleared first): one value per visible column,
    /// `None` for NULL. Returns how many copies of the row the pair stands for (a keyless
    /// table's cardinality; 1 otherwise).
    pub fn decode_into(
        &self,
        db: &Database,
        key: &[u8],
        value: &[u8],
        row: &mut Vec<Option<SqlValue>>,
    ) -> Result<u64> {
        let table = self.table;
        let plan = &*self.plan;
        let kt =
            Tuple::new(key).map_err(|e| bad_chunk(table.address, format!("key tuple: {e}")))?;
        let vt =
            Tuple::new(value).map_err(|e| bad_chunk(table.address, format!("value tuple: {e}")))?;
        row.clear();
        row.reserve(plan.slots.len());
        for &(i, slot) in &plan.slots {
            let Some(col) = table.schema.columns.get(i) else {
                continue;
            };
            let value = match slot {
                Slot::Key(k) => decode_field(db, col, &plan.key_desc, kt, k)?,
                Slot::Value(j) => decode_field(db, col, &plan.value_desc, vt, j)?,
                Slot::Virtual => None,
            };
            row.push(value);
        }
        if let Some(v) = &plan.virtuals {
            v.fill(row)?;
        }
        Ok(if table.schema.keyless {
            plan.value_desc
                .get_uint64(vt, 0)
                .ok()
                .flatten()
                .unwrap_or(1)
        } else {
            1
        })
    }
}

/// Reads every row of `table` in stored (key) order as values of its visible columns, calling
/// `f` once per row copy (keyless rows repeat by their cardinality). VIRTUAL generated columns
/// are computed by `db`'s expression engine ([`Database::with_expressions`]).
pub fn for_each_row(
    db: &Database,
    table: &Table,
    f: &mut dyn FnMut(&[Option<SqlValue>]) -> Result<()>,
) -> Result<()> {
    let decoder = RowDecoder::shared(db, table)?;
    let mut row: Vec<Option<SqlValue>> = Vec::with_capacity(decoder.plan.slots.len());
    let map = table.primary_scan_map(db);
    let tree = |e: prollystore::TreeError| {
        bad_chunk(table.address, format!("table {:?}: {e}", table.name))
    };
    for entry in map.iter().map_err(tree)? {
        let (k, v) = entry.map_err(tree)?;
        let copies = decoder.decode_into(db, k, v, &mut row)?;
        for _ in 0..copies {
            f(&row)?;
        }
    }
    Ok(())
}
