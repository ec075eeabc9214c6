//! CHECK constraints on written rows: each new or changed row's visible values (VIRTUAL
//! generated columns computed) go through the writer's expression engine
//! ([`crate::expressions`]); a FALSE result refuses the change, naming table, check and row. An
//! expression form the engine lacks (or no engine) is an error, never a skipped check.

use prollystore_format::tuple::{Tuple, TupleBuilder, TupleDesc, Type, Value};

use crate::codec::{value_of, Kind};
use crate::error::{DoltError, Result};
use crate::expressions::{CheckExprs, Engine, VirtualColumns};
use crate::schema::{Column, Schema};
use crate::sql_value::SqlValue;

/// A table's checks, ready for its rows.
#[derive(Clone, Debug)]
pub(crate) struct RowChecks {
    checks: CheckExprs,
    virtuals: Option<VirtualColumns>,
    visible: Vec<usize>,
}

impl RowChecks {
    /// The checks of `table`'s `schema` (`None` when it has no enforced check), compiled by
    /// `engine`.
    pub(crate) fn for_schema(
        engine: &Engine,
        table: &str,
        schema: &Schema,
    ) -> Result<Option<RowChecks>> {
        let Some(checks) = CheckExprs::for_schema(engine, table, schema)? else {
            return Ok(None);
        };
        Ok(Some(RowChecks {
            checks,
            virtuals: VirtualColumns::for_schema(engine, table, schema)?,
            visible: schema.visible_columns(),
        }))
    }

    /// The schema positions of the visible columns, whose values [`RowChecks::check`] takes.
    pub(crate) fn visible(&self) -> &[usize] {
        &self.visible
    }

    /// Refuses row `row` of a change to `table` when a check is FALSE; `values` are the row's
    /// visible columns (VIRTUAL ones are computed here).
    pub(crate) fn check(
        &self,
        table: &str,
        row: usize,
        mut values: Vec<Option<SqlValue>>,
    ) -> Result<()> {
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

/// A kept field (its bytes in the column's value encoding; for an adaptive column, the
/// payload) as the value Dolt shows for `col`.
pub(crate) fn stored_value(col: &Column, bytes: &[u8]) -> Result<Option<SqlValue>> {
    if col.encoding.is_adaptive() {
        return value_of(col, &Kind::of_column(col), Value::Bytes(bytes), Some(bytes)).map(Some);
    }
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
    value_of(col, &Kind::of_column(col), v, payload.as_deref()).map(Some)
}
