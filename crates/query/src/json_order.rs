//! JSON values ordered as Dolt orders them, not by their text. [`json_key`] gives the key
//! `ORDER BY`, window orders, `MIN` and `MAX` use instead ([`crate::dolt_collations`]):
//! [`prollystore_format::json_order::sort_key`], a byte string whose byte order is Dolt's
//! order of the documents (kind first, `null` < numbers < strings < objects < arrays <
//! `false` < `true`, then value; the rules are that module's, checked with Dolt 2.3.1 there
//! and by this module's test).
//!
//! [`JsonComparisons`] compares JSON by the same keys (`=`, `<`, …, `BETWEEN`, `IN`): a value
//! that is not JSON compared with JSON is the JSON value of its SQL type, as in MySQL and
//! Dolt (`p = 1` finds the number `1` and `1.0`; `p = 'a'` the string `"a"`; `p > 5` every
//! string, object, array and boolean too).

use std::any::Any;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, BinaryBuilder, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::{DataType, Float64Type};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, DFSchema, Result};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::{InList, ScalarFunction};
use datafusion::logical_expr::{
    Between, BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::analyzer::AnalyzerRule;
use prollystore_format::json_order::sort_key;
use serde_json::Value as Json;

use crate::collated_compare::compares;
use crate::columnar::scalar_or_array;
use crate::mysql_json::is_json;
use crate::rewrite::rewrite_plan;

/// The name of the key function: `dolt_json_order(json)`.
pub(crate) const JSON_ORDER: &str = "dolt_json_order";

/// The order key of `e` if it is JSON (a JSON column, or a function giving JSON).
pub(crate) fn json_key(e: &Expr, schema: &DFSchema) -> Option<Expr> {
    json_typed(e, schema).then(|| key_of(e.clone()))
}

/// Whether `e` is JSON.
fn json_typed(e: &Expr, schema: &DFSchema) -> bool {
    e.to_field(schema)
        .is_ok_and(|(_, field)| is_json(field.metadata()))
}

/// The order key of `e`: of its document if it is JSON, else of its SQL value as JSON.
fn key_of(e: Expr) -> Expr {
    static UDF: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
        Arc::new(ScalarUDF::new_from_impl(JsonOrder {
            signature: Signature::any(1, Volatility::Immutable),
        }))
    });
    Expr::ScalarFunction(ScalarFunction::new_udf(UDF.clone(), vec![e]))
}

/// The analyzer rule, before type coercion (which would make text of `5` in `p > 5`), that
/// compares JSON by order keys (module docs).
#[derive(Debug)]
pub(crate) struct JsonComparisons;

impl AnalyzerRule for JsonComparisons {
    fn name(&self) -> &str {
        "dolt_json_comparisons"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        rewrite_plan(plan, |_| true, |_| false, compared)
    }
}

/// One sub-expression of [`JsonComparisons`]: a comparison with JSON, keyed.
fn compared(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let json = |e: &Expr| json_typed(e, schema);
    Ok(match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if compares(op) && (json(&left) || json(&right)) =>
        {
            Transformed::yes(Expr::BinaryExpr(BinaryExpr::new(
                Box::new(key_of(*left)),
                op,
                Box::new(key_of(*right)),
            )))
        }
        Expr::Between(b) if json(&b.expr) || json(&b.low) || json(&b.high) => {
            Transformed::yes(Expr::Between(Between::new(
                Box::new(key_of(*b.expr)),
                b.negated,
                Box::new(key_of(*b.low)),
                Box::new(key_of(*b.high)),
            )))
        }
        Expr::InList(i) if json(&i.expr) || i.list.iter().any(json) => {
            Transformed::yes(Expr::InList(InList::new(
                Box::new(key_of(*i.expr)),
                i.list.into_iter().map(key_of).collect(),
                i.negated,
            )))
        }
        e => Transformed::no(e),
    })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct JsonOrder {
    signature: Signature,
}

impl ScalarUDFImpl for JsonOrder {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        JSON_ORDER
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::Binary)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let ([value], [field]) = (args.args.as_slice(), args.arg_fields.as_slice()) else {
            return exec_err!("{JSON_ORDER} takes one value");
        };
        let values = value.to_array(args.number_rows)?;
        let keys = keys(&values, is_json(field.metadata()))?;
        scalar_or_array(keys, matches!(value, ColumnarValue::Scalar(_)))
    }
}

/// The order keys of `values` ([`sort_key`], the JSON order's one home): of JSON documents
/// if `json`, else of SQL values as JSON (numbers as JSON numbers, booleans as booleans,
/// anything else by its text as a string).
fn keys(values: &ArrayRef, json: bool) -> Result<ArrayRef> {
    let n = values.len();
    let mut keys = BinaryBuilder::with_capacity(n, 16 * n);
    // A SQL value's key: of its JSON text.
    let push_value = |keys: &mut BinaryBuilder, v: Option<Json>| match v {
        None => keys.append_null(),
        Some(v) => keys.append_value(sort_key(v.to_string().as_bytes())),
    };
    let t = values.data_type();
    if !json && *t == DataType::Boolean {
        for v in values.as_boolean().iter() {
            push_value(&mut keys, v.map(Json::Bool));
        }
    } else if !json && t.is_numeric() {
        let numbers = cast(values, &DataType::Float64)?;
        for v in numbers.as_primitive::<Float64Type>().iter() {
            push_value(
                &mut keys,
                v.and_then(serde_json::Number::from_f64).map(Json::Number),
            );
        }
    } else {
        let text = cast(values, &DataType::Utf8)?;
        let Some(text) = text.as_any().downcast_ref::<StringArray>() else {
            return exec_err!("{JSON_ORDER}: text expected, not {t}");
        };
        for v in text.iter() {
            match (v, json) {
                (None, _) => keys.append_null(),
                (Some(doc), true) => keys.append_value(sort_key(doc.as_bytes())),
                (Some(v), false) => push_value(&mut keys, Some(Json::String(v.to_string()))),
            }
        }
    }
    Ok(Arc::new(keys.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Documents in Dolt 2.3.1's `ORDER BY` order (equal ones adjacent).
    #[test]
    fn keys_order_as_dolt_does() {
        let ordered = [
            "null",
            "-3",
            "-0.5",
            "0",
            "-0.0",
            "1",
            "1.0",
            "2.5",
            "10",
            "9223372036854775807",
            "1e20",
            r#""""#,
            r#""10""#,
            r#""B""#,
            r#""a""#,
            r#""a\u0000""#,
            r#""ab""#,
            "{}",
            r#"{"c": 0}"#,
            r#"{"b": 0}"#,
            r#"{"b": 1, "c": 1}"#,
            r#"{"b": "s"}"#,
            r#"{"ab": 0}"#,
            r#"{"a": null}"#,
            r#"{"a": 0}"#,
            r#"{"a": 1, "b": 2}"#,
            r#"{"b": 2, "a": 1}"#,
            r#"{"a": "x"}"#,
            r#"{"a": []}"#,
            r#"{"a": true}"#,
            "[]",
            "[null]",
            "[1]",
            "[1, 2]",
            "[2]",
            r#"["a"]"#,
            "[{}]",
            "[[1]]",
            "[true]",
            "false",
            "true",
        ];
        let key = |t: &str| sort_key(t.as_bytes());
        for w in ordered.windows(2) {
            let equal = matches!(
                (w[0], w[1]),
                ("0", "-0.0") | ("1", "1.0") | (r#"{"a": 1, "b": 2}"#, r#"{"b": 2, "a": 1}"#)
            );
            let (a, b) = (key(w[0]), key(w[1]));
            assert!(
                if equal { a == b } else { a < b },
                "{} before {}",
                w[0],
                w[1]
            );
        }
    }
}
