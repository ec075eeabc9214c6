//! The seam between the storage core and a SQL expression engine.
//!
//! Dolt stores some values as SQL expression text: VIRTUAL generated columns (computed on
//! read), STORED generated columns and expression defaults (`DEFAULT (expr)`,
//! `DEFAULT CURRENT_TIMESTAMP`, computed on write) and CHECK constraints (tested on write).
//! This crate does not parse SQL: it asks an [`Expressions`] engine to compile each text once
//! per table against the table's visible columns, and evaluates the compiled [`Expression`]s
//! over rows of [`SqlValue`]s. The engine is given explicitly, never found globally:
//! [`crate::Database::with_expressions`], [`crate::write::DoltWriter::with_expressions`] and
//! [`crate::write::vc::MergeOptions::expressions`]. The `prollystore-sql` crate implements
//! one (MySQL's rules, as Dolt applies them) and opens databases and writers with it
//! installed.
//!
//! Without an engine, everything that needs no expression works as before; a table that
//! needs one (reading a VIRTUAL column, writing a row with a computed column or a CHECK) is an
//! error naming the table and column (or check) and saying how to install an engine — never a
//! NULL or a skipped check.

use std::fmt::Debug;
use std::sync::Arc;

use crate::error::{DoltError, Result};
use crate::schema::{Column, Schema};
use crate::sql_value::SqlValue;

/// What an expression text is, which decides how its result becomes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExpressionKind {
    /// A VIRTUAL generated column's expression (`GENERATED ALWAYS AS (…)`): the result
    /// converted to the column's type.
    Virtual,
    /// A STORED generated column's expression or an expression default as Dolt stores it
    /// (`(expr)`, `CURRENT_TIMESTAMP`, `now(3)`): the result converted to the column's type,
    /// or read as the text of a value of it.
    Computed,
    /// A CHECK constraint's expression: only its truth counts.
    Check,
}

/// A SQL expression engine: compiles expression text against a table's columns.
pub trait Expressions: Send + Sync + Debug {
    /// Compiles `text` (as Dolt stores it in `schema`) over the values of `schema`'s visible
    /// columns ([`Schema::visible_columns`], in that order). An error says why (a syntax
    /// error, a form the engine lacks, an unknown column); the caller adds which table and
    /// column.
    fn compile(
        &self,
        schema: &Schema,
        text: &str,
        kind: ExpressionKind,
    ) -> std::result::Result<Box<dyn Expression>, String>;
}

/// A compiled expression, evaluated over rows of a table's visible columns (`None`: NULL).
pub trait Expression: Send + Sync + Debug {
    /// The value for `row`, converted to `column`'s type as the expression's
    /// [`ExpressionKind`] says.
    fn value(
        &self,
        row: &[Option<SqlValue>],
        column: &Column,
    ) -> std::result::Result<Option<SqlValue>, String>;

    /// The truth of the expression for `row` as a CHECK reads it: `None` for NULL.
    fn truth(&self, row: &[Option<SqlValue>]) -> std::result::Result<Option<bool>, String>;
}

/// The engine a database, writer or merge was given, if any.
pub(crate) type Engine = Option<Arc<dyn Expressions>>;

/// Why `what` cannot be computed without an engine.
fn no_engine(what: &str) -> String {
    format!(
        "{what} needs a SQL expression engine and none is installed (open the database with \
         prollystore_sql::open / prollystore_sql::writer, or give one with \
         Database::with_expressions / DoltWriter::with_expressions)"
    )
}

fn compile(
    engine: &Engine,
    schema: &Schema,
    text: &str,
    kind: ExpressionKind,
    what: &str,
) -> std::result::Result<Arc<dyn Expression>, String> {
    match engine {
        Some(e) => e.compile(schema, text, kind).map(Arc::from),
        None => Err(no_engine(what)),
    }
}

/// One VIRTUAL column: where its value goes in the row, its type, and its expression.
#[derive(Clone, Debug)]
struct Virtual {
    position: usize,
    column: Column,
    expr: Arc<dyn Expression>,
}

/// The VIRTUAL generated columns of one table, ready to fill in rows of its visible columns.
#[derive(Clone, Debug)]
pub(crate) struct VirtualColumns {
    columns: Vec<Virtual>,
}

impl VirtualColumns {
    /// Compiles the expressions of the visible VIRTUAL columns of `table`'s `schema` (`None`
    /// if it has none). Row positions are positions among [`Schema::visible_columns`].
    pub(crate) fn for_schema(
        engine: &Engine,
        table: &str,
        schema: &Schema,
    ) -> Result<Option<VirtualColumns>> {
        let mut columns = Vec::new();
        for (position, &i) in schema.visible_columns().iter().enumerate() {
            let Some(col) = schema.columns.get(i).filter(|c| c.virtual_) else {
                continue;
            };
            let text = col.default_value.as_deref().unwrap_or("");
            let what = format!("table {table:?}: virtual generated column {:?}", col.name);
            let expr =
                compile(engine, schema, text, ExpressionKind::Virtual, &what).map_err(|why| {
                    DoltError::Unsupported(format!(
                        "virtual generated column {:?} = {text}: {why}",
                        col.name
                    ))
                })?;
            columns.push(Virtual {
                position,
                column: col.clone(),
                expr,
            });
        }
        Ok((!columns.is_empty()).then_some(VirtualColumns { columns }))
    }

    /// Computes every virtual column of `row` (values of the visible columns; the virtual ones'
    /// slots are overwritten), in column order so later ones may use earlier ones.
    pub(crate) fn fill(&self, row: &mut [Option<SqlValue>]) -> Result<()> {
        for v in &self.columns {
            let shown = v.expr.value(row, &v.column).map_err(|why| {
                DoltError::Unsupported(format!(
                    "virtual generated column {:?} = {}: {why}",
                    v.column.name,
                    v.column.default_value.as_deref().unwrap_or("")
                ))
            })?;
            if let Some(slot) = row.get_mut(v.position) {
                *slot = shown;
            }
        }
        Ok(())
    }
}

/// Whether a column default as Dolt stores it (`'abc'`, `42`, `NULL`, `(expr)`,
/// `current_timestamp`) is an expression rather than a literal.
pub(crate) fn is_expression_default(text: &str) -> bool {
    let t = text.trim();
    !t.eq_ignore_ascii_case("null")
        && !t.starts_with('\'')
        && (t.starts_with('(') || t.chars().any(|c| c.is_ascii_alphabetic()))
}

/// A table's computed columns for written rows, compiled once: expression defaults
/// (`DEFAULT (expr)`, `DEFAULT CURRENT_TIMESTAMP`) and STORED generated columns. Rows are values
/// of the visible columns.
#[derive(Clone, Debug)]
pub(crate) struct DefaultExprs {
    /// Per schema column: its compiled expression, or why it cannot be computed.
    columns: Vec<Option<std::result::Result<Arc<dyn Expression>, String>>>,
    /// The VIRTUAL generated columns, which STORED ones may use (or why they cannot be
    /// computed).
    virtuals: std::result::Result<Option<VirtualColumns>, String>,
}

impl DefaultExprs {
    /// Compiles the expression defaults and STORED generated columns of `table`'s `schema`
    /// (`None` when it has neither). A form the engine lacks (or no engine) is kept as its
    /// reason, reported only when a row needs that column.
    pub(crate) fn for_schema(
        engine: &Engine,
        table: &str,
        schema: &Schema,
    ) -> Option<DefaultExprs> {
        let mut any = false;
        let columns = schema
            .columns
            .iter()
            .map(|c| {
                let text = c.default_value.as_deref().filter(|d| !d.is_empty())?;
                let computed = if c.generated {
                    !c.virtual_
                } else {
                    is_expression_default(text)
                };
                if !computed {
                    return None;
                }
                any = true;
                let what = format!("table {table:?}: column {:?}", c.name);
                Some(compile(
                    engine,
                    schema,
                    text,
                    ExpressionKind::Computed,
                    &what,
                ))
            })
            .collect();
        any.then(|| DefaultExprs {
            columns,
            virtuals: VirtualColumns::for_schema(engine, table, schema).map_err(|e| e.to_string()),
        })
    }

    /// Computes the VIRTUAL generated columns of `row` (values of the visible columns), for
    /// expressions that use them.
    pub(crate) fn fill_virtuals(
        &self,
        row: &mut [Option<SqlValue>],
    ) -> std::result::Result<(), String> {
        match &self.virtuals {
            Ok(Some(v)) => v.fill(row).map_err(|e| e.to_string()),
            Ok(None) => Ok(()),
            Err(why) => Err(why.clone()),
        }
    }

    /// Whether schema column `column` is computed here.
    pub(crate) fn has(&self, column: usize) -> bool {
        matches!(self.columns.get(column), Some(Some(_)))
    }

    /// Column `column`'s value (at schema position `position`) for a row whose visible values
    /// are `row` (`None`: NULL); an error says why it cannot be computed.
    pub(crate) fn value(
        &self,
        column: &Column,
        position: usize,
        row: &[Option<SqlValue>],
    ) -> std::result::Result<Option<SqlValue>, String> {
        let text = column.default_value.as_deref().unwrap_or("");
        let what = if column.generated {
            "generated column"
        } else {
            "default"
        };
        match self.columns.get(position) {
            Some(Some(Ok(expr))) => expr
                .value(row, column)
                .map_err(|why| format!("{what} {text}: {why}")),
            Some(Some(Err(why))) => Err(format!("{what} expression {text}: {why}")),
            _ => Err(format!("column {:?} is not computed", column.name)),
        }
    }
}

/// A table's enforced CHECK constraints, compiled once: a row violates one when its
/// expression is FALSE (NULL passes, as in MySQL). Rows are values of the visible columns.
#[derive(Clone, Debug)]
pub(crate) struct CheckExprs {
    checks: Vec<(String, String, Arc<dyn Expression>)>,
}

impl CheckExprs {
    /// Compiles the enforced checks of `table`'s `schema` (`None` if it has none); an
    /// expression form the engine does not cover (or no engine) is an error naming the check.
    pub(crate) fn for_schema(
        engine: &Engine,
        table: &str,
        schema: &Schema,
    ) -> Result<Option<CheckExprs>> {
        let mut checks = Vec::new();
        for (name, text, enforced) in &schema.checks {
            if !enforced {
                continue;
            }
            let what = format!("table {table:?}: CHECK constraint {name:?}");
            let expr =
                compile(engine, schema, text, ExpressionKind::Check, &what).map_err(|why| {
                    DoltError::Unsupported(format!("CHECK constraint {name:?} ({text}): {why}"))
                })?;
            checks.push((name.clone(), text.clone(), expr));
        }
        Ok((!checks.is_empty()).then_some(CheckExprs { checks }))
    }

    /// The name and text of the first check `row` makes FALSE, if any.
    pub(crate) fn violated(&self, row: &[Option<SqlValue>]) -> Result<Option<(&str, &str)>> {
        for (name, text, expr) in &self.checks {
            let truth = expr.truth(row).map_err(|why| {
                DoltError::Unsupported(format!("CHECK constraint {name:?} ({text}): {why}"))
            })?;
            if truth == Some(false) {
                return Ok(Some((name, text)));
            }
        }
        Ok(None)
    }
}
