//! Numbers in expressions as Dolt types them. `/` of exact numbers: integers and decimals
//! give a decimal with four more fraction digits than the dividend, rounded half away from
//! zero (`7 / 2` is `3.5000`, `id * 1.0 / 3` is `0.33333`), and a division by zero gives NULL;
//! DataFusion's `/` keeps integers integral (`7 / 2` is `3`) and fails on a zero divisor. A
//! decimal beside a FLOAT or DOUBLE (`f < 0.5`, `score * 1.5`, `f IN (0.5, 1)`) is a double,
//! as in MySQL; DataFusion would make the float a decimal, which fails for large values.
//! The rule [`DoltNumbers`] rewrites both before DataFusion coerces types, keeping each
//! expression's name.

use std::any::Any;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, Decimal128Builder};
use datafusion::arrow::datatypes::{i256, DataType, Decimal128Type, DECIMAL128_MAX_PRECISION};
use datafusion::common::tree_node::Transformed;
use datafusion::common::{exec_err, plan_err, DFSchema, Result};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::ScalarFunction;
use datafusion::logical_expr::{
    BinaryExpr, ColumnarValue, Expr, ExprSchemable, LogicalPlan, Operator, ScalarFunctionArgs,
    ScalarUDF, ScalarUDFImpl, Signature, Volatility,
};
use datafusion::optimizer::analyzer::AnalyzerRule;

/// The name of the division function the rule writes.
pub(crate) const DIVIDE: &str = "dolt_divide";

/// Fraction digits a quotient has beyond its dividend's (MySQL's `div_precision_increment`).
const MORE_DIGITS: i8 = 4;

/// The most fraction digits a quotient keeps.
const MAX_SCALE: i8 = 30;

/// The decimal type an exact operand is divided as (`None`: not exact).
fn exact(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => {
            Some(DataType::Decimal128(19, 0))
        }
        DataType::UInt8 | DataType::UInt16 | DataType::UInt32 | DataType::UInt64 => {
            Some(DataType::Decimal128(20, 0))
        }
        DataType::Decimal128(..) => Some(t.clone()),
        _ => None,
    }
}

/// The function: two exact numbers (as `Decimal128`) to their rounded decimal quotient.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct DoltDivide {
    signature: Signature,
}

impl DoltDivide {
    pub(crate) fn udf() -> ScalarUDF {
        ScalarUDF::new_from_impl(DoltDivide {
            signature: Signature::user_defined(Volatility::Immutable),
        })
    }
}

impl ScalarUDFImpl for DoltDivide {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        DIVIDE
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        match arg_types {
            [a, b] => match (exact(a), exact(b)) {
                (Some(a), Some(b)) => Ok(vec![a, b]),
                _ => plan_err!("{DIVIDE} divides integers and decimals, not {a} by {b}"),
            },
            _ => plan_err!("{DIVIDE} takes two arguments"),
        }
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        match arg_types.first() {
            Some(DataType::Decimal128(_, s)) => Ok(DataType::Decimal128(
                DECIMAL128_MAX_PRECISION,
                (s + MORE_DIGITS).min(MAX_SCALE),
            )),
            other => plan_err!("{DIVIDE} of {other:?}"),
        }
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let arrays = ColumnarValue::values_to_arrays(&args.args)?;
        let [a, b] = arrays.as_slice() else {
            return exec_err!("{DIVIDE} takes two arguments");
        };
        let (DataType::Decimal128(_, sa), DataType::Decimal128(_, sb)) =
            (a.data_type(), b.data_type())
        else {
            return exec_err!("{DIVIDE} of {} by {}", a.data_type(), b.data_type());
        };
        let scale = (sa + MORE_DIGITS).min(MAX_SCALE);
        // quotient * 10^scale = a * 10^(scale - sa + sb) / b, with a and b the stored integers.
        let Some(shift) = i256::from_i128(10).checked_pow((scale - sa + sb).max(0) as u32) else {
            return exec_err!("{DIVIDE}: scales {sa} and {sb} are out of range");
        };
        let (a, b) = (
            a.as_primitive::<Decimal128Type>(),
            b.as_primitive::<Decimal128Type>(),
        );
        let mut out = Decimal128Builder::with_capacity(a.len());
        for r in 0..a.len() {
            if a.is_null(r) || b.is_null(r) || b.value(r) == 0 {
                out.append_null();
                continue;
            }
            match quotient(a.value(r), b.value(r), shift) {
                Some(q) => out.append_value(q),
                None => {
                    return exec_err!(
                        "{} / {}: the quotient is out of DECIMAL's range",
                        a.value_as_string(r),
                        b.value_as_string(r)
                    )
                }
            }
        }
        let out = out
            .finish()
            .with_precision_and_scale(DECIMAL128_MAX_PRECISION, scale)?;
        Ok(ColumnarValue::Array(Arc::new(out)))
    }
}

/// `a * shift / b` rounded half away from zero, if it fits 38 digits (`b` is not zero).
fn quotient(a: i128, b: i128, shift: i256) -> Option<i128> {
    let n = i256::from_i128(a).checked_mul(shift)?;
    let d = i256::from_i128(b);
    let (q, r) = (n.checked_div(d)?, n.checked_rem(d)?);
    let twice = r.checked_mul(i256::from_i128(2))?;
    let q = if twice.wrapping_abs() >= d.wrapping_abs() {
        // Away from zero: the quotient's sign is the operands'.
        if (n < i256::ZERO) == (d < i256::ZERO) {
            q.checked_add(i256::ONE)?
        } else {
            q.checked_sub(i256::ONE)?
        }
    } else {
        q
    };
    let q = q.to_i128()?;
    (q.unsigned_abs() < 10u128.pow(u32::from(DECIMAL128_MAX_PRECISION))).then_some(q)
}

/// The rule: `a / b` with both operands integers or decimals becomes [`DIVIDE`]`(a, b)`, and
/// a decimal compared or computed with a float becomes a double.
#[derive(Debug)]
pub(crate) struct DoltNumbers;

impl AnalyzerRule for DoltNumbers {
    fn name(&self) -> &str {
        "dolt_numbers"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        crate::rewrite::rewrite_plan(
            plan,
            |_| true,
            |_| false,
            |e, schema| {
                let e = doubles_beside_floats(e, schema)?;
                if e.transformed {
                    return Ok(e);
                }
                let e = divide(e.data, schema)?;
                if e.transformed {
                    return Ok(e);
                }
                integral(e.data, schema)
            },
        )
    }
}

/// Whether `e` is a FLOAT or DOUBLE.
fn is_float(e: &Expr, schema: &DFSchema) -> Result<bool> {
    Ok(matches!(
        e.get_type(schema)?,
        DataType::Float16 | DataType::Float32 | DataType::Float64
    ))
}

/// `e` as a double if it is a decimal, or a FLOAT in `arithmetic` (MySQL computes with a
/// FLOAT as a double: `f + 1` of the FLOAT 759.499 is 760.4990234375); else as it is.
fn double_if_decimal(e: Expr, schema: &DFSchema, arithmetic: bool) -> Result<(Expr, bool)> {
    let t = e.get_type(schema)?;
    if matches!(t, DataType::Decimal128(..) | DataType::Decimal256(..))
        || (arithmetic && matches!(t, DataType::Float16 | DataType::Float32))
    {
        Ok((datafusion::logical_expr::cast(e, DataType::Float64), true))
    } else {
        Ok((e, false))
    }
}

/// The decimals of a comparison, arithmetic, `BETWEEN` or `IN` with a float in it as
/// doubles.
fn doubles_beside_floats(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    match e {
        Expr::BinaryExpr(BinaryExpr { left, op, right })
            if (op.is_numerical_operators()
                || matches!(
                    op,
                    Operator::Eq
                        | Operator::NotEq
                        | Operator::Lt
                        | Operator::LtEq
                        | Operator::Gt
                        | Operator::GtEq
                        | Operator::IsDistinctFrom
                        | Operator::IsNotDistinctFrom
                ))
                && (is_float(&left, schema)? || is_float(&right, schema)?) =>
        {
            let arithmetic = op.is_numerical_operators();
            let (left, l) = double_if_decimal(*left, schema, arithmetic)?;
            let (right, r) = double_if_decimal(*right, schema, arithmetic)?;
            let e = Expr::BinaryExpr(BinaryExpr::new(Box::new(left), op, Box::new(right)));
            Ok(if l || r {
                Transformed::yes(e)
            } else {
                Transformed::no(e)
            })
        }
        Expr::Between(mut b) if is_float(&b.expr, schema)? => {
            let (low, l) = double_if_decimal(*b.low, schema, false)?;
            let (high, h) = double_if_decimal(*b.high, schema, false)?;
            (b.low, b.high) = (Box::new(low), Box::new(high));
            Ok(if l || h {
                Transformed::yes(Expr::Between(b))
            } else {
                Transformed::no(Expr::Between(b))
            })
        }
        Expr::InList(mut list) if is_float(&list.expr, schema)? => {
            let mut changed = false;
            let mut items = Vec::with_capacity(list.list.len());
            for item in std::mem::take(&mut list.list) {
                let (item, c) = double_if_decimal(item, schema, false)?;
                changed |= c;
                items.push(item);
            }
            list.list = items;
            Ok(if changed {
                Transformed::yes(Expr::InList(list))
            } else {
                Transformed::no(Expr::InList(list))
            })
        }
        e => Ok(Transformed::no(e)),
    }
}

/// `e` as [`DIVIDE`] if it is a division of exact operands.
fn divide(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::BinaryExpr(BinaryExpr {
        left,
        op: Operator::Divide,
        right,
    }) = e
    else {
        return Ok(Transformed::no(e));
    };
    let is_exact = |x: &Expr| -> Result<bool> { Ok(exact(&x.get_type(schema)?).is_some()) };
    if !(is_exact(&left)? && is_exact(&right)?) {
        return Ok(Transformed::no(Expr::BinaryExpr(BinaryExpr {
            left,
            op: Operator::Divide,
            right,
        })));
    }
    Ok(Transformed::yes(Expr::ScalarFunction(
        ScalarFunction::new_udf(Arc::new(DoltDivide::udf()), vec![*left, *right]),
    )))
}

/// MySQL's integral results where DataFusion's are doubles or keep fraction digits:
/// `FLOOR`, `CEIL` and `ROUND` of an integer are that integer (DataFusion: a double,
/// `4.525645e+06`), `FLOOR` and `CEIL` of a decimal have no fraction digits (`-730785`,
/// not `-730785.000000`), `CAST(x AS SIGNED | UNSIGNED)` of a decimal or float rounds half
/// away from zero (DataFusion truncates) and a double beyond the range is clamped to it
/// (DataFusion: an error; a negative one to `UNSIGNED` still is), and minus an unsigned
/// number is signed (DataFusion refuses it; a `BIGINT UNSIGNED` becomes a `DECIMAL(20, 0)`).
fn integral(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    use datafusion::common::ScalarValue;
    use datafusion::logical_expr::{cast, lit, when, Cast};
    match e {
        Expr::ScalarFunction(f)
            if matches!(f.func.name(), "floor" | "ceil" | "round")
                && (f.args.len() == 1
                    || (f.func.name() == "round" && whole_digits(&f.args[1]))) =>
        {
            let t = f.args[0].get_type(schema)?;
            match t {
                t if t.is_integer() => Ok(Transformed::yes(f.args[0].clone())),
                DataType::Decimal128(p, s) if s > 0 && f.func.name() != "round" => {
                    let digits = (i16::from(p) - i16::from(s) + 1).clamp(1, 38) as u8;
                    Ok(Transformed::yes(cast(
                        Expr::ScalarFunction(f),
                        DataType::Decimal128(digits, 0),
                    )))
                }
                _ => Ok(Transformed::no(Expr::ScalarFunction(f))),
            }
        }
        Expr::Cast(Cast { expr, data_type })
            if data_type.is_integer()
                && matches!(
                    expr.get_type(schema)?,
                    DataType::Decimal128(..)
                        | DataType::Decimal256(..)
                        | DataType::Float32
                        | DataType::Float64
                ) =>
        {
            let float = matches!(
                expr.get_type(schema)?,
                DataType::Float32 | DataType::Float64
            );
            let rounded = datafusion::functions::math::expr_fn::round(vec![*expr]);
            let bounds = match data_type {
                DataType::Int64 => Some((
                    ScalarValue::Int64(Some(i64::MIN)),
                    ScalarValue::Int64(Some(i64::MAX)),
                )),
                DataType::UInt64 => Some((
                    ScalarValue::UInt64(Some(0)),
                    ScalarValue::UInt64(Some(u64::MAX)),
                )),
                _ => None,
            };
            match bounds {
                // A double beyond the range is its end (MySQL and Dolt clamp it): 2^63 and
                // 2^64 are the first doubles above.
                Some((low, high)) if float && data_type == DataType::Int64 => {
                    let clamped = when(rounded.clone().gt_eq(lit(2f64.powi(63))), lit(high))
                        .when(rounded.clone().lt(lit(-(2f64.powi(63)))), lit(low))
                        .otherwise(cast(rounded, data_type))?;
                    Ok(Transformed::yes(clamped))
                }
                Some((_, high)) if float => {
                    let clamped = when(rounded.clone().gt_eq(lit(2f64.powi(64))), lit(high))
                        .otherwise(cast(rounded, data_type))?;
                    Ok(Transformed::yes(clamped))
                }
                _ => Ok(Transformed::yes(cast(rounded, data_type))),
            }
        }
        Expr::Negative(x) => {
            let wider = match x.get_type(schema)? {
                DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => DataType::Int64,
                DataType::UInt64 => DataType::Decimal128(20, 0),
                _ => return Ok(Transformed::no(Expr::Negative(x))),
            };
            Ok(Transformed::yes(Expr::Negative(Box::new(cast(*x, wider)))))
        }
        e => Ok(Transformed::no(e)),
    }
}

/// Whether `e` is a literal count of fraction digits of zero or more (`ROUND(n, 2)` of an
/// integer is that integer; a negative count rounds it).
fn whole_digits(e: &Expr) -> bool {
    let Expr::Literal(v, _) = e else {
        return false;
    };
    matches!(
        v.cast_to(&DataType::Int64),
        Ok(datafusion::common::ScalarValue::Int64(Some(n))) if n >= 0
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotients_round_half_away_from_zero() {
        let shift = |n: u32| i256::from_i128(10).checked_pow(n).unwrap();
        // 7 / 2 at scale 4: 3.5000; 1 / 3: 0.3333; 2 / 3: 0.6667; -2 / 3: -0.6667.
        assert_eq!(quotient(7, 2, shift(4)), Some(35_000));
        assert_eq!(quotient(1, 3, shift(4)), Some(3_333));
        assert_eq!(quotient(2, 3, shift(4)), Some(6_667));
        assert_eq!(quotient(-2, 3, shift(4)), Some(-6_667));
        assert_eq!(quotient(2, -3, shift(4)), Some(-6_667));
        assert_eq!(quotient(-1, -8, shift(4)), Some(1_250));
        // 0.5 (scale 1) / 1: scale 5 (shift 10^4 * 10^0): 0.50000.
        assert_eq!(quotient(5, 1, shift(4)), Some(50_000));
        // Out of 38 digits.
        assert_eq!(quotient(i128::MAX / 10, 1, shift(4)), None);
    }
}
