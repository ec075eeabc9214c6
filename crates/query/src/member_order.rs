//! ENUM and SET values ordered as MySQL orders them: an ENUM by its member's number (its
//! place in the column's list), a SET by its members' bits, not by their text. Dolt sorts
//! `set('a','b','c')` values `''`, `a`, `b`, `a,b`, `c`, …; as text they would sort `''`,
//! `a`, `a,b`, `a,b,c`, `a,c`, …. [`member_key`] gives the key `ORDER BY`, window orders,
//! `MIN` and `MAX` use instead ([`crate::dolt_collations`]).

use std::any::Any;
use std::sync::{Arc, LazyLock};

use datafusion::arrow::array::{AsArray, UInt64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{exec_err, DFSchema, ExprSchema, Result, ScalarValue};
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    lit, ColumnarValue, Expr, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use prollystore_arrow::dolt_types::SQL_TYPE_METADATA;
use prollystore_format::sql_type::SqlType;

use crate::columnar::scalar_or_array;

/// The name of the key function: `dolt_member_order(value, 'enum(…)' | 'set(…)')`.
pub(crate) const MEMBER_ORDER: &str = "dolt_member_order";

/// The SQL type text of `e` if it is an ENUM or SET column (or an alias of one).
fn member_type(e: &Expr, schema: &dyn ExprSchema) -> Option<String> {
    match e {
        Expr::Alias(a) => member_type(&a.expr, schema),
        Expr::Column(c) => {
            let text = schema
                .field_from_column(c)
                .ok()?
                .metadata()
                .get(SQL_TYPE_METADATA)?;
            matches!(
                SqlType::parse(text),
                SqlType::Enum { .. } | SqlType::Set { .. }
            )
            .then(|| text.clone())
        }
        _ => None,
    }
}

/// The order key of `e` if it is an ENUM or SET column: its member number or bits.
pub(crate) fn member_key(e: &Expr, schema: &DFSchema) -> Option<Expr> {
    static UDF: LazyLock<Arc<ScalarUDF>> = LazyLock::new(|| {
        Arc::new(ScalarUDF::new_from_impl(MemberOrder {
            signature: Signature::any(2, Volatility::Immutable),
        }))
    });
    let sql_type = member_type(e, schema)?;
    Some(Expr::ScalarFunction(ScalarFunction::new_udf(
        UDF.clone(),
        vec![e.clone(), lit(sql_type)],
    )))
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct MemberOrder {
    signature: Signature,
}

impl ScalarUDFImpl for MemberOrder {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        MEMBER_ORDER
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _args: &[DataType]) -> Result<DataType> {
        Ok(DataType::UInt64)
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let [value, ColumnarValue::Scalar(ScalarValue::Utf8(Some(sql_type)))] =
            args.args.as_slice()
        else {
            return exec_err!("{MEMBER_ORDER} takes a value and its ENUM or SET type");
        };
        let (members, set) = match SqlType::parse(sql_type) {
            SqlType::Enum { members, .. } => (members, false),
            SqlType::Set { members, .. } => (members, true),
            _ => return exec_err!("{MEMBER_ORDER}: {sql_type} is not an ENUM or SET"),
        };
        let number = |m: &str| members.iter().position(|x| x == m).map(|i| i as u64);
        let text = cast(&value.to_array(args.number_rows)?, &DataType::Utf8)?;
        let keys: UInt64Array = text
            .as_string::<i32>()
            .iter()
            .map(|v| {
                v.map(|v| match set {
                    // A member's bit is 2^(its number); the empty set is 0.
                    true => v
                        .split(',')
                        .filter_map(number)
                        .fold(0, |bits, i| bits | 1u64.checked_shl(i as u32).unwrap_or(0)),
                    // Members count from 1; the empty (invalid) value is 0.
                    false => number(v).map_or(0, |i| i + 1),
                })
            })
            .collect();
        scalar_or_array(Arc::new(keys), matches!(value, ColumnarValue::Scalar(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{ArrayRef, StringArray};
    use datafusion::arrow::datatypes::Field;

    #[test]
    fn sets_order_by_bits_and_enums_by_number() {
        let f = MemberOrder {
            signature: Signature::any(2, Volatility::Immutable),
        };
        let run = |sql_type: &str, values: Vec<Option<&str>>| -> Vec<Option<u64>> {
            let n = values.len();
            let values: ArrayRef = Arc::new(StringArray::from(values));
            let args = ScalarFunctionArgs {
                args: vec![
                    ColumnarValue::Array(values),
                    ColumnarValue::Scalar(ScalarValue::Utf8(Some(sql_type.into()))),
                ],
                arg_fields: vec![
                    Arc::new(Field::new("v", DataType::Utf8, true)),
                    Arc::new(Field::new("t", DataType::Utf8, false)),
                ],
                number_rows: n,
                return_field: Arc::new(Field::new("k", DataType::UInt64, true)),
                config_options: Arc::default(),
            };
            let ColumnarValue::Array(keys) = f.invoke_with_args(args).unwrap() else {
                panic!("an array")
            };
            keys.as_primitive::<datafusion::arrow::datatypes::UInt64Type>()
                .iter()
                .collect()
        };
        assert_eq!(
            run(
                "set('a','b','c')",
                vec![Some(""), Some("a,b"), Some("c"), None, Some("b")]
            ),
            vec![Some(0), Some(3), Some(4), None, Some(2)]
        );
        assert_eq!(
            run("enum('x','y','z')", vec![Some("z"), Some("x"), Some("")]),
            vec![Some(3), Some(1), Some(0)]
        );
    }
}
