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

use std::any::Any;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{Array, BinaryBuilder, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, DFSchema, Result};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    ColumnarValue, Expr, ExprSchemable, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};
use serde_json::Value as Json;

use crate::columnar::scalar_or_array;
use crate::mysql_json::{document, is_json};

/// The name of the key function: `dolt_json_order(json)`.
pub(crate) const JSON_ORDER: &str = "dolt_json_order";

/// The order key of `e` if it is JSON (a JSON column, or a function giving JSON).
pub(crate) fn json_key(e: &Expr, schema: &DFSchema) -> Option<Expr> {
    static UDF: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
        Arc::new(ScalarUDF::new_from_impl(JsonOrder {
            signature: Signature::any(1, Volatility::Immutable),
        }))
    });
    let (_, field) = e.to_field(schema).ok()?;
    is_json(field.metadata())
        .then(|| Expr::ScalarFunction(ScalarFunction::new_udf(UDF.clone(), vec![e.clone()])))
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
        let [value] = args.args.as_slice() else {
            return exec_err!("{JSON_ORDER} takes one JSON value");
        };
        let text = cast(&value.to_array(args.number_rows)?, &DataType::Utf8)?;
        let Some(text) = text.as_any().downcast_ref::<StringArray>() else {
            return exec_err!("{JSON_ORDER}: JSON text expected");
        };
        let mut keys = BinaryBuilder::with_capacity(text.len(), 16 * text.len());
        let mut key = Vec::new();
        for v in text.iter() {
            match v {
                None => keys.append_null(),
                Some(v) => {
                    key.clear();
                    write_key(&document(JSON_ORDER, v)?, &mut key);
                    keys.append_value(&key);
                }
            }
        }
        scalar_or_array(
            Arc::new(keys.finish()),
            matches!(value, ColumnarValue::Scalar(_)),
        )
    }
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
