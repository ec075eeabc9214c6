//! MySQL's JSON functions, which DataFusion lacks: `JSON_EXTRACT(doc, path, …)` (and
//! `doc -> path`), `JSON_UNQUOTE(x)` (and `doc ->> path`), `JSON_LENGTH(doc [, path])` and
//! `JSON_TYPE(doc)`. Paths and the text of computed JSON (`{"a": [1, 2.5]}`: MySQL's
//! separators, keys by length then bytes, whole numbers without a point) are the expression
//! engine's of `prollystore-sql`, which computes Dolt's generated columns with them; the
//! arrows are rewritten by [`crate::mysql::translate`]. As in Dolt, `JSON_TYPE(NULL)` is the
//! text `NULL` (MySQL's is NULL).

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Int64Array, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{exec_err, plan_err, Result};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use datafusion::prelude::SessionContext;
use prollystore_arrow::dolt_types::{EXTENSION_NAME, JSON_EXTENSION};
use prollystore_sql::generated::{json_path, json_text, json_unquote};
use serde_json::Value as Json;

use crate::columnar::scalar_or_array;

/// Whether a field with `metadata` holds JSON (a JSON column or a function's JSON result).
pub(crate) fn is_json(metadata: &HashMap<String, String>) -> bool {
    metadata.get(EXTENSION_NAME).map(String::as_str) == Some(JSON_EXTENSION)
}

/// Registers the functions in `ctx`.
pub(crate) fn register(ctx: &SessionContext) {
    for kind in [Kind::Extract, Kind::Unquote, Kind::Length, Kind::Type] {
        ctx.register_udf(ScalarUDF::new_from_impl(JsonFunction {
            kind,
            signature: Signature::variadic_any(Volatility::Immutable),
        }));
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Extract,
    Unquote,
    Length,
    Type,
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonFunction {
    kind: Kind,
    signature: Signature,
}

impl JsonFunction {
    /// How many arguments the function takes: fewest, most.
    fn arity(&self) -> (usize, usize) {
        match self.kind {
            Kind::Extract => (2, usize::MAX),
            Kind::Unquote | Kind::Type => (1, 1),
            Kind::Length => (1, 2),
        }
    }
}

impl ScalarUDFImpl for JsonFunction {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        match self.kind {
            Kind::Extract => "json_extract",
            Kind::Unquote => "json_unquote",
            Kind::Length => "json_length",
            Kind::Type => "json_type",
        }
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(match self.kind {
            Kind::Length => DataType::Int64,
            _ => DataType::Utf8,
        })
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> Result<FieldRef> {
        let (fewest, most) = self.arity();
        let n = args.arg_fields.len();
        if n < fewest || n > most {
            return plan_err!("{}() takes {fewest} to {most} values, not {n}", self.name());
        }
        let types: Vec<DataType> = args
            .arg_fields
            .iter()
            .map(|f| f.data_type().clone())
            .collect();
        let field = Field::new(self.name(), self.return_type(&types)?, true);
        // JSON_EXTRACT gives JSON: printed as it is in JSON output, as Dolt does.
        Ok(Arc::new(if self.kind == Kind::Extract {
            field.with_metadata(HashMap::from([(
                EXTENSION_NAME.to_string(),
                JSON_EXTENSION.to_string(),
            )]))
        } else {
            field
        }))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let scalar = args
            .args
            .iter()
            .all(|a| matches!(a, ColumnarValue::Scalar(_)));
        let rows = if scalar { 1 } else { args.number_rows };
        let mut texts = Vec::with_capacity(args.args.len());
        for a in &args.args {
            let a = a.to_array(rows)?;
            let a = match a.data_type() {
                DataType::Null => datafusion::arrow::array::new_null_array(&DataType::Utf8, rows),
                _ => cast(&a, &DataType::Utf8)?,
            };
            texts.push(a);
        }
        let text = |c: usize, r: usize| -> Option<&str> {
            let a = texts[c].as_any().downcast_ref::<StringArray>()?;
            (!a.is_null(r)).then(|| a.value(r))
        };
        let out: ArrayRef = match self.kind {
            Kind::Length => {
                let mut out = Vec::with_capacity(rows);
                for r in 0..rows {
                    out.push(match (text(0, r), texts.len()) {
                        (None, _) => None,
                        (Some(d), 1) => Some(length(&document(self.name(), d)?)),
                        (Some(d), _) => match text(1, r) {
                            None => None,
                            Some(p) => {
                                let doc = document(self.name(), d)?;
                                found(self.name(), &doc, p)?.map(length)
                            }
                        },
                    });
                }
                Arc::new(Int64Array::from(out))
            }
            _ => {
                let mut out = Vec::with_capacity(rows);
                for r in 0..rows {
                    out.push(match self.kind {
                        Kind::Extract => extract(self.name(), &texts, &text, r)?,
                        Kind::Unquote => text(0, r).map(json_unquote),
                        // Dolt names a NULL argument's type `NULL` too (MySQL: NULL).
                        _ => match text(0, r) {
                            None => Some("NULL".to_string()),
                            Some(d) => Some(type_name(&document(self.name(), d)?).to_string()),
                        },
                    });
                }
                Arc::new(StringArray::from(out))
            }
        };
        scalar_or_array(out, scalar)
    }
}

/// A JSON document's text, parsed.
fn document(f: &str, text: &str) -> Result<Json> {
    match serde_json::from_str(text) {
        Ok(doc) => Ok(doc),
        Err(e) => exec_err!("{f}(): invalid JSON text {text:?}: {e}"),
    }
}

/// What `path` finds in `doc`.
fn found<'a>(f: &str, doc: &'a Json, path: &str) -> Result<Option<&'a Json>> {
    match json_path(doc, path) {
        Ok(v) => Ok(v),
        Err(e) => exec_err!("{f}(): {e}"),
    }
}

/// `JSON_EXTRACT` of row `r`: the value one path finds, or an array of what several find;
/// NULL if an argument is NULL or nothing is found.
fn extract<'a>(
    f: &str,
    texts: &[ArrayRef],
    text: &impl Fn(usize, usize) -> Option<&'a str>,
    r: usize,
) -> Result<Option<String>> {
    let Some(doc) = text(0, r) else {
        return Ok(None);
    };
    let doc = document(f, doc)?;
    let mut values = Vec::new();
    for c in 1..texts.len() {
        let Some(path) = text(c, r) else {
            return Ok(None);
        };
        if let Some(v) = found(f, &doc, path)? {
            values.push(v.clone());
        }
    }
    Ok(match (texts.len(), values.len()) {
        (_, 0) => None,
        (2, _) => Some(json_text(&values[0])),
        _ => Some(json_text(&Json::Array(values))),
    })
}

/// `JSON_LENGTH`: the members of an array or object; 1 for a scalar.
fn length(v: &Json) -> i64 {
    match v {
        Json::Array(a) => a.len() as i64,
        Json::Object(o) => o.len() as i64,
        _ => 1,
    }
}

/// `JSON_TYPE`.
fn type_name(v: &Json) -> &'static str {
    match v {
        Json::Null => "NULL",
        Json::Bool(_) => "BOOLEAN",
        Json::Number(n) if n.is_i64() => "INTEGER",
        Json::Number(n) if n.is_u64() => "UNSIGNED INTEGER",
        Json::Number(_) => "DOUBLE",
        Json::String(_) => "STRING",
        Json::Array(_) => "ARRAY",
        Json::Object(_) => "OBJECT",
    }
}
