//! A table's rows as typed SQL values: its clustered index read through a map cursor in key
//! order, each stored field decoded into the [`SqlValue`] Dolt shows (out-of-band values read
//! from their blob trees).

use std::sync::Arc;

use prollystore_format::tuple::Tuple;

pub use crate::codec::read_blob;
use crate::codec::{sql_value_of, RowPlan};
use crate::db::{Database, Table};
use crate::error::{bad_chunk, Result};
use crate::expressions::VirtualColumns;
use crate::sql_value::SqlValue;

/// How to decode one schema's stored (key, value) pairs into the values of its visible
/// columns: its [`RowPlan`] with the evaluator of its VIRTUAL columns, made once per schema
/// (and kept per schema address by the open database).
#[derive(Debug)]
pub(crate) struct DecodePlan {
    rows: RowPlan,
    virtuals: Option<VirtualColumns>,
}

impl DecodePlan {
    /// The plan for `table`'s clustered index. Fails for a generated-column expression it
    /// cannot evaluate and for a schema whose columns are in no tuple.
    pub(crate) fn new(db: &Database, table: &Table) -> Result<DecodePlan> {
        Ok(DecodePlan {
            rows: RowPlan::new(&table.schema, table.schema_address)?,
            virtuals: VirtualColumns::for_schema(db.engine(), &table.name, &table.schema)?,
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
        let rows = &plan.rows;
        row.reserve(rows.fields.len());
        let mut scratch = Vec::new();
        for f in &rows.fields {
            row.push(sql_value_of(db, table, rows, f, kt, vt, &mut scratch)?);
        }
        if let Some(v) = &plan.virtuals {
            v.fill(row)?;
        }
        Ok(if table.schema.keyless {
            rows.value_desc
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
    let mut row: Vec<Option<SqlValue>> = Vec::with_capacity(decoder.plan.rows.fields.len());
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
