//! CHECK constraints on written rows: each new or changed row's visible values (VIRTUAL
//! generated columns computed) go through the expression evaluator the reader uses for
//! generated columns; a FALSE result refuses the change, naming table, check and row. An
//! expression form the evaluator lacks is an error, never a skipped check.

use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc, Type, Value};

use super::table_edit::Cell;
use crate::error::{DoltError, Result};
use crate::generated::{CheckExprs, VirtualColumns};
use crate::schema::{Column, Schema};
use crate::sql_value::SqlValue;
use crate::table_rows::value_of;

/// A table's checks, ready for its rows.
#[derive(Clone, Debug)]
pub(crate) struct RowChecks {
    checks: CheckExprs,
    virtuals: Option<VirtualColumns>,
    visible: Vec<usize>,
}

impl RowChecks {
    /// The checks of `schema` (`None` when it has no enforced check).
    pub(crate) fn for_schema(schema: &Schema) -> Result<Option<RowChecks>> {
        let Some(checks) = CheckExprs::for_schema(schema)? else {
            return Ok(None);
        };
        Ok(Some(RowChecks {
            checks,
            virtuals: VirtualColumns::for_schema(schema)?,
            visible: schema.visible_columns(),
        }))
    }

    /// Refuses row `row` of a change to `table` (cells per schema column) when a check is FALSE.
    pub(crate) fn check(
        &self,
        table: &str,
        schema: &Schema,
        row: usize,
        cells: &[Cell],
    ) -> Result<()> {
        let mut values = self
            .visible
            .iter()
            .map(|&c| value(&schema.columns[c], &cells[c]))
            .collect::<Result<Vec<_>>>()?;
        if let Some(v) = &self.virtuals {
            v.fill(&mut values)?;
        }
        if let Some((name, text)) = self.checks.violated(&values)? {
            return Err(DoltError::BadValue {
                table: table.to_string(),
                column: String::new(),
                reason: format!("row {row}: CHECK constraint {name:?} {text} is violated"),
            });
        }
        Ok(())
    }
}

/// A cell as the value Dolt shows for `col`.
fn value(col: &Column, cell: &Cell) -> Result<Option<SqlValue>> {
    match cell {
        Cell::Null => Ok(None),
        Cell::Value(v) => Ok(Some(v.clone())),
        // Adaptive columns keep the payload itself.
        Cell::Stored(bytes) if col.encoding.is_adaptive() => {
            value_of(col, Value::Bytes(bytes), Some(bytes)).map(Some)
        }
        Cell::Stored(bytes) => {
            let desc = TupleDesc::new(vec![Type::nullable(col.encoding)]);
            let mut b = TupleBuilder::new(desc.clone());
            let bad = |e: String| DoltError::BadValue {
                table: String::new(),
                column: col.name.clone(),
                reason: format!("stored value for a CHECK: {e}"),
            };
            b.put_raw(0, bytes).map_err(|e| bad(e.to_string()))?;
            let t = b
                .build()
                .map_err(|e| bad(e.to_string()))?
                .as_bytes()
                .to_vec();
            let Some(v) = desc
                .value(Tuple::new_unverified(&t), 0)
                .map_err(|e| bad(e.to_string()))?
            else {
                return Ok(None);
            };
            let payload: Option<Vec<u8>> = match &v {
                Value::String(s) => Some(s.as_bytes().to_vec()),
                Value::Bytes(b) | Value::Json(b) | Value::Geometry(b) | Value::Extended(b) => {
                    Some(b.to_vec())
                }
                _ => None,
            };
            value_of(col, v, payload.as_deref()).map(Some)
        }
    }
}
