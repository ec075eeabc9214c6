//! MySQL's `SHOW TABLES`, `DESCRIBE t` (`DESC t`, `SHOW COLUMNS FROM t`) and `DATABASE()` as
//! Dolt prints them, answered from the Dolt schema (`DATABASE()` is the directory's name). DataFusion's own `SHOW TABLES` lists its
//! information schema, and its `DESCRIBE` gives Arrow types: the statement becomes a query
//! over a `VALUES` list of Dolt's answer instead, which DataFusion runs as any query.

use std::any::Any;
use std::fmt::Write as _;
use std::path::Path;

use datafusion::sql::parser::Statement as DFStatement;
use datafusion::sql::sqlparser::ast::{ObjectName, ObjectNamePart, Statement};
use prollystore_dolt::schema::Schema;
use prollystore_format::sql_type::DEFAULT_COLLATION;

use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};

use crate::catalog::DoltSchema;

/// The database's name as Dolt gives it: its directory's, with `-` and spaces as `_`.
pub(crate) fn database_name(dot_dolt: &Path) -> String {
    let dot_dolt = std::fs::canonicalize(dot_dolt).unwrap_or_else(|_| dot_dolt.to_path_buf());
    let dot_dolt = dot_dolt.as_path();
    let dir = if dot_dolt.file_name().is_some_and(|n| n == ".dolt") {
        dot_dolt.parent()
    } else {
        Some(dot_dolt)
    };
    dir.and_then(|d| d.file_name())
        .map(|n| n.to_string_lossy().replace(['-', ' '], "_"))
        .unwrap_or_else(|| "dolt".to_string())
}

/// `DATABASE()`: the database's name.
pub(crate) fn database_udf(name: &str) -> ScalarUDF {
    ScalarUDF::new_from_impl(DatabaseName {
        name: name.to_string(),
        signature: Signature::exact(vec![], Volatility::Immutable),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct DatabaseName {
    name: String,
    signature: Signature,
}

impl ScalarUDFImpl for DatabaseName {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        "database"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }

    fn invoke_with_args(&self, _args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        Ok(ColumnarValue::Scalar(ScalarValue::Utf8(Some(
            self.name.clone(),
        ))))
    }
}

/// The query that answers `statement` as Dolt would, if it is one this module answers, over
/// state `state` of database `db_name`.
pub(crate) fn rewrite(
    statement: &DFStatement,
    state: &DoltSchema,
    db_name: &str,
) -> Result<Option<String>> {
    let DFStatement::Statement(s) = statement else {
        return Ok(None);
    };
    match s.as_ref() {
        Statement::ShowTables {
            full: false,
            extended: false,
            show_options,
            ..
        } if show_options.show_in.is_none()
            && show_options.starts_with.is_none()
            && show_options.filter_position.is_none() =>
        {
            let mut names = state.root_table_names();
            names.sort();
            let header = format!("Tables_in_{db_name}");
            Ok(Some(values_query(
                &[&header],
                names.iter().map(|n| vec![Some(n.clone())]),
            )))
        }
        Statement::ExplainTable {
            hive_format: None,
            table_name,
            ..
        } => describe(state, table_name),
        Statement::ShowColumns {
            extended: false,
            full: false,
            show_options,
        } => match show_options
            .show_in
            .as_ref()
            .and_then(|s| s.parent_name.as_ref())
        {
            Some(table) if show_options.filter_position.is_none() => describe(state, table),
            _ => Ok(None),
        },
        _ => Ok(None),
    }
}

/// `DESCRIBE table`: Field, Type, Null, Key, Default, Extra.
fn describe(state: &DoltSchema, table: &ObjectName) -> Result<Option<String>> {
    let [ObjectNamePart::Identifier(name)] = table.0.as_slice() else {
        return Ok(None);
    };
    let Some(table) = state.dolt_table(&name.value)? else {
        return Ok(None); // DataFusion says it is not there
    };
    let schema = &table.schema;
    let rows = schema.visible_columns().into_iter().filter_map(|i| {
        let c = schema.columns.get(i)?;
        let default = c
            .default_value
            .as_deref()
            .filter(|d| !d.is_empty() && !c.generated)
            .map(str::to_string);
        let extra = if c.auto_increment {
            "auto_increment"
        } else if default.as_deref().is_some_and(computed_default) {
            "DEFAULT_GENERATED"
        } else {
            ""
        };
        Some(vec![
            Some(c.name.clone()),
            // As its type prints: Dolt's `timestamp` for a stored `timestamp(0)`, the
            // character set and collation where they are not the server's defaults.
            Some(c.sql_type.shown_text(&c.sql_type_text, DEFAULT_COLLATION)),
            Some(
                if c.nullable && !c.primary_key {
                    "YES"
                } else {
                    "NO"
                }
                .to_string(),
            ),
            Some(key_kind(schema, i).to_string()),
            default,
            Some(extra.to_string()),
        ])
    });
    Ok(Some(values_query(
        &["Field", "Type", "Null", "Key", "Default", "Extra"],
        rows,
    )))
}

/// Whether a stored default is computed when a row is written (`CURRENT_TIMESTAMP`, `NOW()`,
/// an expression in parentheses) rather than a literal.
fn computed_default(d: &str) -> bool {
    let upper = d.trim_start_matches('(').to_ascii_uppercase();
    d.starts_with('(')
        || upper.starts_with("CURRENT_TIMESTAMP")
        || upper.starts_with("NOW(")
        || upper.starts_with("LOCALTIME")
        || upper.starts_with("CURRENT_DATE")
}

/// MySQL's `Key` of column `i`: `PRI` in the primary key, `UNI` alone in a unique index,
/// `MUL` first in any other index, else empty.
fn key_kind(schema: &Schema, i: usize) -> &'static str {
    if schema.columns.get(i).is_some_and(|c| c.primary_key) {
        return "PRI";
    }
    let first = |unique_alone: bool| {
        schema.indexes.iter().any(|x| {
            x.columns.first() == Some(&i) && (!unique_alone || (x.unique && x.columns.len() == 1))
        })
    };
    if first(true) {
        "UNI"
    } else if first(false) {
        "MUL"
    } else {
        ""
    }
}

/// A query giving `rows` (NULL for `None`) under `headers`, in order.
fn values_query(headers: &[&str], rows: impl Iterator<Item = Vec<Option<String>>>) -> String {
    let mut sql = String::from("SELECT ");
    for (i, h) in headers.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let _ = write!(sql, "{sep}column{} AS `{}`", i + 1, h.replace('`', "``"));
    }
    let mut values = String::new();
    for row in rows {
        values.push_str(if values.is_empty() { "(" } else { ", (" });
        for (i, v) in row.iter().enumerate() {
            if i > 0 {
                values.push_str(", ");
            }
            match v {
                Some(v) => {
                    let _ = write!(values, "'{}'", v.replace('\\', "\\\\").replace('\'', "''"));
                }
                None => values.push_str("CAST(NULL AS VARCHAR)"),
            }
        }
        values.push(')');
    }
    if values.is_empty() {
        // No rows: the columns of one row of text, none kept.
        let nulls = vec!["CAST(NULL AS VARCHAR)"; headers.len()].join(", ");
        let _ = write!(sql, " FROM (VALUES ({nulls})) WHERE false");
    } else {
        let _ = write!(sql, " FROM (VALUES {values})");
    }
    sql
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn database_names_are_dolts() {
        assert_eq!(database_name(Path::new("/x/my-db/.dolt")), "my_db");
        assert_eq!(database_name(Path::new("/x/sysdb/.dolt")), "sysdb");
    }

    #[test]
    fn values_are_quoted() {
        let q = values_query(
            &["a`b"],
            [vec![Some("it's \\".to_string())], vec![None]].into_iter(),
        );
        assert_eq!(
            q,
            "SELECT column1 AS `a``b` FROM (VALUES ('it''s \\\\'), (CAST(NULL AS VARCHAR)))"
        );
        assert!(values_query(&["x"], std::iter::empty()).ends_with("WHERE false"));
    }
}
