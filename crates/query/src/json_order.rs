//! JSON values ordered as Dolt orders them, not by their text. [`json_key`] gives the key
//! `ORDER BY`, window orders, `MIN` and `MAX` use instead ([`crate::dolt_collations`]): a
//! byte string whose byte order is Dolt's order of the documents (checked with Dolt 2.3.1):
//!
//! - by kind first: `null` < numbers < strings < objects < arrays < `false` < `true`
//!   (MySQL's precedence among the kinds Dolt stores);
//! - numbers by value, as the doubles Dolt holds them as (`1` and `1.0` are equal);
//! - strings by their UTF-8 bytes;
//! - arrays element by element, a prefix first;
//! - objects as their members in key byte order, member by member: the member whose key is
//!   the lesser in bytes ranks higher (`{"b": 0}` < `{"a": 0}`), equal keys by their values,
//!   a prefix first (`{}` first of all). Dolt documents no order of objects; this is the one
//!   its comparisons give.
//!
//! The key is prefix-free (strings end with a terminator, a `0` byte in them is escaped), so
//! the keys of members and elements compare one after another.
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
use serde_json::Value as Json;

use crate::collated_compare::compares;
use crate::columnar::scalar_or_array;
use crate::mysql_json::{document, is_json};
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

/// The kinds of JSON values in Dolt's order.
const NULL: u8 = 1;
const NUMBER: u8 = 2;
const STRING: u8 = 3;
const OBJECT: u8 = 4;
const ARRAY: u8 = 5;
const FALSE: u8 = 6;
const TRUE: u8 = 7;
/// Before each member of an object or element of an array; the end is `0`, so a prefix is
/// less.
const MORE: u8 = 1;

/// Appends the order key of `v` to `out`.
fn write_key(v: &Json, out: &mut Vec<u8>) {
    match v {
        Json::Null => out.push(NULL),
        Json::Bool(b) => out.push(if *b { TRUE } else { FALSE }),
        Json::Number(n) => {
            out.push(NUMBER);
            // serde_json gives every number as a double; +0 for -0, which equals it.
            let f = n.as_f64().unwrap_or_default() + 0.0;
            let bits = f.to_bits();
            // Negative doubles order reversed in their bits; flipping the sign bit of the
            // others puts them above.
            let bits = if f.is_sign_negative() {
                !bits
            } else {
                bits ^ (1 << 63)
            };
            out.extend_from_slice(&bits.to_be_bytes());
        }
        Json::String(s) => {
            out.push(STRING);
            write_bytes(s.as_bytes(), false, out);
        }
        Json::Array(a) => {
            out.push(ARRAY);
            for x in a {
                out.push(MORE);
                write_key(x, out);
            }
            out.push(0);
        }
        Json::Object(o) => {
            out.push(OBJECT);
            let mut members: Vec<(&String, &Json)> = o.iter().collect();
            members.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            for (k, x) in members {
                out.push(MORE);
                // The lesser key ranks higher: its bytes inverted.
                write_bytes(k.as_bytes(), true, out);
                write_key(x, out);
            }
            out.push(0);
        }
    }
}

/// `bytes` in an order-keeping, prefix-free form: `0` written `0 255`, ended by `0 0`; every
/// byte inverted if `reversed`, which reverses the order.
fn write_bytes(bytes: &[u8], reversed: bool, out: &mut Vec<u8>) {
    let flip = if reversed { 0xff } else { 0 };
    for &b in bytes {
        out.push(b ^ flip);
        if b == 0 {
            out.push(0xff ^ flip);
        }
    }
    out.extend_from_slice(&[flip, flip]);
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

/// The order keys of `values`: of JSON documents if `json`, else of SQL values as JSON
/// (numbers as JSON numbers, booleans as booleans, anything else by its text as a string).
fn keys(values: &ArrayRef, json: bool) -> Result<ArrayRef> {
    let n = values.len();
    let mut keys = BinaryBuilder::with_capacity(n, 16 * n);
    let mut key = Vec::new();
    let mut push = |v: Option<Json>| match v {
        None => keys.append_null(),
        Some(v) => {
            key.clear();
            write_key(&v, &mut key);
            keys.append_value(&key);
        }
    };
    let t = values.data_type();
    if !json && *t == DataType::Boolean {
        values
            .as_boolean()
            .iter()
            .for_each(|v| push(v.map(Json::Bool)));
    } else if !json && t.is_numeric() {
        let numbers = cast(values, &DataType::Float64)?;
        for v in numbers.as_primitive::<Float64Type>().iter() {
            push(v.and_then(serde_json::Number::from_f64).map(Json::Number));
        }
    } else {
        let text = cast(values, &DataType::Utf8)?;
        let Some(text) = text.as_any().downcast_ref::<StringArray>() else {
            return exec_err!("{JSON_ORDER}: text expected, not {t}");
        };
        for v in text.iter() {
            push(match (v, json) {
                (None, _) => None,
                (Some(v), true) => Some(document(JSON_ORDER, v)?),
                (Some(v), false) => Some(Json::String(v.to_string())),
            });
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
        let key = |t: &str| {
            let mut k = Vec::new();
            write_key(&serde_json::from_str(t).unwrap(), &mut k);
            k
        };
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
