//! `SUM`, `AVG`, `MIN` and `MAX` with the result types Dolt gives them, so a session's answers
//! print as `dolt sql` prints them. DataFusion's own functions compute; these wrap them and
//! change only the types (checked against Dolt 2.3.1's output, `tests/dolt_made.rs`):
//!
//! * `SUM` of integers and floats is a `DOUBLE` (go-mysql-server sums into a float64: a sum
//!   of a million or more prints as `4.5673e+06`), not DataFusion's `BIGINT`.
//! * `SUM` and `AVG` of decimals are `DOUBLE`s holding a decimal: printed as doubles in CSV
//!   and tables, as the decimal in JSON, and doubles in any expression over them
//!   ([`DoubleOfDecimal`]). `AVG` of a `DECIMAL(p, s)` rounds half away from zero to `s + 4`
//!   digits, where DataFusion's truncates.
//! * `MIN` and `MAX` keep their argument's field metadata: a `DATETIME(0)`'s maximum prints
//!   without fraction digits.

use std::any::Any;
use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{ArrayRef, AsArray, Decimal128Array};
use datafusion::arrow::datatypes::{
    DataType, Decimal128Type, Field, FieldRef, DECIMAL128_MAX_PRECISION, DECIMAL128_MAX_SCALE,
};
use datafusion::common::tree_node::Transformed;
use datafusion::common::types::{logical_float64, NativeType};
use datafusion::common::{DFSchema, ExprSchema, Result, ScalarValue};
use datafusion::config::ConfigOptions;
use datafusion::logical_expr::expr::AggregateFunctionParams;
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::utils::AggregateOrderSensitivity;
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Coercion, Documentation, EmitTo, Expr,
    ExprSchemable, GroupsAccumulator, LogicalPlan, ReversedUDAF, SetMonotonicity, Signature,
    TypeSignature, TypeSignatureClass, Volatility, WindowFunctionDefinition,
};
use datafusion::optimizer::analyzer::AnalyzerRule;
use datafusion::prelude::SessionContext;
use prollystore_arrow::dolt_types::SQL_TYPE_METADATA;

use crate::rewrite::rewrite_plan;

/// Registers the four functions in `ctx`, in place of DataFusion's.
pub(crate) fn register(ctx: &SessionContext) {
    use datafusion::functions_aggregate::{average, min_max, sum};
    ctx.register_udaf(DoltAggregate::udf(sum::sum_udaf(), Kind::Sum));
    ctx.register_udaf(DoltAggregate::udf(average::avg_udaf(), Kind::Avg));
    ctx.register_udaf(DoltAggregate::udf(min_max::min_udaf(), Kind::MinMax));
    ctx.register_udaf(DoltAggregate::udf(min_max::max_udaf(), Kind::MinMax));
}

/// The SQL type text a decimal `SUM` or `AVG` is marked with (see [`SQL_TYPE_METADATA`]):
/// `prollystore_arrow::cell_text::write_cell` prints such a decimal as a double.
const DOUBLE: &str = "double";

/// Which of the functions a [`DoltAggregate`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Sum,
    Avg,
    MinMax,
}

/// One of DataFusion's aggregates with Dolt's result type (see the module).
#[derive(Debug, PartialEq, Eq, Hash)]
struct DoltAggregate {
    inner: Arc<AggregateUDF>,
    kind: Kind,
    signature: Signature,
}

impl DoltAggregate {
    fn udf(inner: Arc<AggregateUDF>, kind: Kind) -> AggregateUDF {
        let signature = match kind {
            // DataFusion's SUM with integers summed as DOUBLEs.
            Kind::Sum => Signature::one_of(
                vec![
                    TypeSignature::Coercible(vec![Coercion::new_exact(
                        TypeSignatureClass::Decimal,
                    )]),
                    TypeSignature::Coercible(vec![Coercion::new_implicit(
                        TypeSignatureClass::Native(logical_float64()),
                        vec![TypeSignatureClass::Integer, TypeSignatureClass::Float],
                        NativeType::Float64,
                    )]),
                    TypeSignature::Coercible(vec![Coercion::new_exact(
                        TypeSignatureClass::Duration,
                    )]),
                ],
                Volatility::Immutable,
            ),
            Kind::Avg | Kind::MinMax => inner.signature().clone(),
        };
        AggregateUDF::new_from_impl(DoltAggregate {
            inner,
            kind,
            signature,
        })
    }

    /// For an `AVG` of a `Decimal128`: `args` asking the inner function for one more digit
    /// than the result has (the digit [`round_last_digit`] rounds on), and the result's type;
    /// for other functions, and where no digit is left to add, `args` as they are and `None`.
    fn one_more_digit<'a>(
        &self,
        args: AccumulatorArgs<'a>,
    ) -> (AccumulatorArgs<'a>, Option<DataType>) {
        let DataType::Decimal128(p, s) = *args.return_field.data_type() else {
            return (args, None);
        };
        if self.kind != Kind::Avg || p >= DECIMAL128_MAX_PRECISION || s >= DECIMAL128_MAX_SCALE {
            return (args, None);
        }
        let wider = Field::new(
            args.return_field.name(),
            DataType::Decimal128(p + 1, s + 1),
            true,
        );
        let args = AccumulatorArgs {
            return_field: Arc::new(wider),
            ..args
        };
        (args, Some(DataType::Decimal128(p, s)))
    }
}

impl AggregateUDFImpl for DoltAggregate {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    fn aliases(&self) -> &[String] {
        self.inner.aliases()
    }

    fn schema_name(&self, params: &AggregateFunctionParams) -> Result<String> {
        self.inner.inner().schema_name(params)
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, arg_types: &[DataType]) -> Result<Vec<DataType>> {
        self.inner.coerce_types(arg_types)
    }

    fn return_type(&self, arg_types: &[DataType]) -> Result<DataType> {
        self.inner.return_type(arg_types)
    }

    fn return_field(&self, arg_fields: &[FieldRef]) -> Result<FieldRef> {
        let field = self.inner.return_field(arg_fields)?;
        let metadata: HashMap<String, String> = match self.kind {
            Kind::Sum | Kind::Avg if matches!(field.data_type(), DataType::Decimal128(..)) => {
                [(SQL_TYPE_METADATA.to_string(), DOUBLE.to_string())].into()
            }
            Kind::MinMax => match arg_fields.first() {
                Some(arg) if arg.data_type() == field.data_type() => arg.metadata().clone(),
                _ => return Ok(field),
            },
            _ => return Ok(field),
        };
        Ok(Arc::new(field.as_ref().clone().with_metadata(metadata)))
    }

    fn is_nullable(&self) -> bool {
        self.inner.is_nullable()
    }

    fn accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        if self.kind != Kind::MinMax
            && !args.is_distinct
            && *args.return_field.data_type() == DataType::Float64
        {
            return Ok(Box::new(InOrder {
                avg: self.kind == Kind::Avg,
                sum: 0.0,
                count: 0,
            }));
        }
        let (args, rounded) = self.one_more_digit(args);
        let inner = self.inner.accumulator(args)?;
        Ok(match rounded {
            Some(result) => Box::new(Rounded { inner, result }),
            None => inner,
        })
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        self.inner.state_fields(args)
    }

    fn groups_accumulator_supported(&self, args: AccumulatorArgs) -> bool {
        self.inner.groups_accumulator_supported(args)
    }

    fn create_groups_accumulator(
        &self,
        args: AccumulatorArgs,
    ) -> Result<Box<dyn GroupsAccumulator>> {
        let (args, rounded) = self.one_more_digit(args);
        let inner = self.inner.create_groups_accumulator(args)?;
        Ok(match rounded {
            Some(result) => Box::new(RoundedGroups { inner, result }),
            None => inner,
        })
    }

    fn create_sliding_accumulator(&self, args: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        let (args, rounded) = self.one_more_digit(args);
        let inner = self.inner.create_sliding_accumulator(args)?;
        Ok(match rounded {
            Some(result) => Box::new(Rounded { inner, result }),
            None => inner,
        })
    }

    fn order_sensitivity(&self) -> AggregateOrderSensitivity {
        self.inner.inner().order_sensitivity()
    }

    fn reverse_expr(&self) -> ReversedUDAF {
        // All four give the same answer over rows in either order.
        ReversedUDAF::Identical
    }

    fn is_descending(&self) -> Option<bool> {
        self.inner.is_descending()
    }

    fn value_from_stats(
        &self,
        args: &datafusion::logical_expr::StatisticsArgs,
    ) -> Option<ScalarValue> {
        // Only MIN and MAX answer from statistics; their values keep the argument's type.
        if self.kind == Kind::MinMax {
            self.inner.inner().value_from_stats(args)
        } else {
            None
        }
    }

    fn default_value(&self, data_type: &DataType) -> Result<ScalarValue> {
        self.inner.default_value(data_type)
    }

    fn set_monotonicity(&self, data_type: &DataType) -> SetMonotonicity {
        self.inner.inner().set_monotonicity(data_type)
    }

    fn documentation(&self) -> Option<&Documentation> {
        self.inner.documentation()
    }
}

/// Rounds a `Decimal128` value with one digit more than `result`'s scale to that scale, half
/// away from zero (as MySQL rounds a decimal quotient).
fn round_last_digit(v: i128) -> i128 {
    let (q, r) = (v / 10, v % 10);
    if r >= 5 {
        q + 1
    } else if r <= -5 {
        q - 1
    } else {
        q
    }
}

/// `SUM` or `AVG` of doubles added one at a time in the order the rows come, as Dolt adds
/// them (DataFusion's adds a batch in lanes side by side: the last digits of a sum of a few
/// thousand doubles differed from Dolt's). Rows read by several partitions are summed per
/// partition, then the partitions' sums added. The state is DataFusion's (`AVG`: the count,
/// then the sum).
#[derive(Debug)]
struct InOrder {
    avg: bool,
    sum: f64,
    count: u64,
}

impl InOrder {
    fn add(&mut self, sums: &ArrayRef, counts: Option<&ArrayRef>) {
        use datafusion::arrow::array::Array;
        use datafusion::arrow::datatypes::{Float64Type, UInt64Type};
        let sums = sums.as_primitive::<Float64Type>();
        let counts = counts.map(|c| c.as_primitive::<UInt64Type>());
        for i in 0..sums.len() {
            if sums.is_null(i) {
                continue;
            }
            self.sum += sums.value(i);
            self.count += counts.map_or(1, |c| c.value(i));
        }
    }
}

impl Accumulator for InOrder {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        if let Some(v) = values.first() {
            self.add(v, None);
        }
        Ok(())
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        Ok(ScalarValue::Float64(match (self.count, self.avg) {
            (0, _) => None,
            (n, true) => Some(self.sum / n as f64),
            (_, false) => Some(self.sum),
        }))
    }

    fn size(&self) -> usize {
        std::mem::size_of::<Self>()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let sum = ScalarValue::Float64((self.count > 0).then_some(self.sum));
        Ok(if self.avg {
            vec![ScalarValue::UInt64(Some(self.count)), sum]
        } else {
            vec![sum]
        })
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        match (self.avg, states) {
            (true, [counts, sums, ..]) => self.add(sums, Some(counts)),
            (false, [sums, ..]) => self.add(sums, None),
            _ => {}
        }
        Ok(())
    }
}

/// An `AVG` accumulator computing one digit more than its result and rounding it off.
#[derive(Debug)]
struct Rounded {
    inner: Box<dyn Accumulator>,
    result: DataType,
}

impl Accumulator for Rounded {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.inner.update_batch(values)
    }

    fn evaluate(&mut self) -> Result<ScalarValue> {
        let DataType::Decimal128(p, s) = self.result else {
            return self.inner.evaluate();
        };
        Ok(match self.inner.evaluate()? {
            ScalarValue::Decimal128(v, _, _) => {
                ScalarValue::Decimal128(v.map(round_last_digit), p, s)
            }
            other => other,
        })
    }

    fn size(&self) -> usize {
        self.inner.size() + std::mem::size_of::<Self>()
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        self.inner.state()
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        self.inner.merge_batch(states)
    }

    fn retract_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        self.inner.retract_batch(values)
    }

    fn supports_retract_batch(&self) -> bool {
        self.inner.supports_retract_batch()
    }
}

/// [`Rounded`] for DataFusion's grouped accumulators.
struct RoundedGroups {
    inner: Box<dyn GroupsAccumulator>,
    result: DataType,
}

impl GroupsAccumulator for RoundedGroups {
    fn update_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&datafusion::arrow::array::BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.inner
            .update_batch(values, group_indices, opt_filter, total_num_groups)
    }

    fn evaluate(&mut self, emit_to: EmitTo) -> Result<ArrayRef> {
        let wider = self.inner.evaluate(emit_to)?;
        let (Some(values), DataType::Decimal128(p, s)) =
            (wider.as_primitive_opt::<Decimal128Type>(), &self.result)
        else {
            return Ok(wider);
        };
        let rounded: Decimal128Array = values.unary(round_last_digit);
        Ok(Arc::new(rounded.with_precision_and_scale(*p, *s)?))
    }

    fn state(&mut self, emit_to: EmitTo) -> Result<Vec<ArrayRef>> {
        self.inner.state(emit_to)
    }

    fn merge_batch(
        &mut self,
        values: &[ArrayRef],
        group_indices: &[usize],
        opt_filter: Option<&datafusion::arrow::array::BooleanArray>,
        total_num_groups: usize,
    ) -> Result<()> {
        self.inner
            .merge_batch(values, group_indices, opt_filter, total_num_groups)
    }

    fn convert_to_state(
        &self,
        values: &[ArrayRef],
        opt_filter: Option<&datafusion::arrow::array::BooleanArray>,
    ) -> Result<Vec<ArrayRef>> {
        self.inner.convert_to_state(values, opt_filter)
    }

    fn supports_convert_to_state(&self) -> bool {
        self.inner.supports_convert_to_state()
    }

    fn size(&self) -> usize {
        self.inner.size()
    }
}

/// The analyzer rule that makes a decimal `SUM` or `AVG` a double inside any expression
/// that computes with it (`sum(price) * 2`, `avg(price) + 1`): in Dolt such a sum is a
/// `DOUBLE`, and so is what is computed from it. Where the sum is itself the result
/// (`SELECT sum(price)`, with or without an alias) it stays the decimal, which JSON prints.
#[derive(Debug)]
pub(crate) struct DoubleOfDecimal;

impl AnalyzerRule for DoubleOfDecimal {
    fn name(&self) -> &str {
        "dolt_double_of_decimal_aggregate"
    }

    fn analyze(&self, plan: LogicalPlan, _config: &ConfigOptions) -> Result<LogicalPlan> {
        // Inside expressions of projections: columns holding a decimal sum become doubles.
        let plan = rewrite_plan(
            plan,
            |node| matches!(node, LogicalPlan::Projection(_)),
            is_column,
            |e, schema| match &e {
                Expr::Column(c) if marked(schema, c) => Ok(Transformed::yes(
                    datafusion::logical_expr::cast(e, DataType::Float64),
                )),
                _ => Ok(Transformed::no(e)),
            },
        )?;
        // In windows: sums and averages of decimals sum doubles.
        rewrite_plan(
            plan,
            |node| matches!(node, LogicalPlan::Window(_)),
            |_| false,
            window_sum_of_doubles,
        )
    }
}

/// A window's `SUM` or `AVG` of decimals made one of doubles: in Dolt the window functions
/// sum in float64 (`avg(price) over ()` prints `3.7448558333333335e+06` where the grouped
/// `avg(price)` prints `3.744855833333e+06`).
fn window_sum_of_doubles(e: Expr, schema: &DFSchema) -> Result<Transformed<Expr>> {
    let Expr::WindowFunction(mut w) = e else {
        return Ok(Transformed::no(e));
    };
    let ours = match &w.fun {
        WindowFunctionDefinition::AggregateUDF(f) => f
            .inner()
            .as_any()
            .downcast_ref::<DoltAggregate>()
            .is_some_and(|a| a.kind != Kind::MinMax),
        _ => false,
    };
    let decimal = match w.params.args.as_slice() {
        [arg] => matches!(arg.get_type(schema)?, DataType::Decimal128(..)),
        _ => false,
    };
    if !(ours && decimal) {
        return Ok(Transformed::no(Expr::WindowFunction(w)));
    }
    let arg = w.params.args.remove(0);
    w.params.args = vec![datafusion::logical_expr::cast(arg, DataType::Float64)];
    Ok(Transformed::yes(Expr::WindowFunction(w)))
}

/// A bare column, or an alias of one: a result printed as it is.
fn is_column(e: &Expr) -> bool {
    match e {
        Expr::Column(_) => true,
        Expr::Alias(a) => is_column(&a.expr),
        _ => false,
    }
}

/// Whether column `c` of `schema` is a decimal marked as a double by [`DoltAggregate`].
fn marked(schema: &DFSchema, c: &datafusion::common::Column) -> bool {
    schema.field_from_column(c).is_ok_and(|f| {
        matches!(f.data_type(), DataType::Decimal128(..))
            && f.metadata().get(SQL_TYPE_METADATA).map(String::as_str) == Some(DOUBLE)
    })
}

#[cfg(test)]
mod tests {
    use super::round_last_digit;

    #[test]
    fn rounds_half_away_from_zero() {
        for (v, want) in [
            (15, 2),
            (14, 1),
            (-15, -2),
            (-14, -1),
            (0, 0),
            (9, 1),
            (-5, -1),
        ] {
            assert_eq!(round_last_digit(v), want, "{v}");
        }
    }
}
