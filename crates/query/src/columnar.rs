//! The shape of a function's result: one value for all rows (a scalar) when its arguments
//! were, else an array of one value per row.

use datafusion::arrow::array::ArrayRef;
use datafusion::common::{Result, ScalarValue};
use datafusion::logical_expr::ColumnarValue;

/// `values` (a row's value, or one per row) as a scalar if `scalar`, else as the array.
pub(crate) fn scalar_or_array(values: ArrayRef, scalar: bool) -> Result<ColumnarValue> {
    if scalar {
        ScalarValue::try_from_array(&values, 0).map(ColumnarValue::Scalar)
    } else {
        Ok(ColumnarValue::Array(values))
    }
}
