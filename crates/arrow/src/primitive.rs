//! The builder of a primitive Arrow column (integers, floats, decimals, dates, times): the
//! values in a `Vec`, validity bits only once a NULL arrives. Arrow's `PrimitiveBuilder` holds
//! the same, but its appends are not inlined into the codec's column loops (they are marked
//! `#[inline]`, and the compiler declines inside a loop of that size): each value then cost a
//! call of ~23 instructions, a tenth of a warm GROUP BY (callgrind, `docs/PERF.md`, "SQL").

use arrow_array::{ArrowPrimitiveType, PrimitiveArray};
use arrow_buffer::{BooleanBufferBuilder, NullBuffer, ScalarBuffer};
use arrow_schema::DataType;

/// A primitive column being built (see the module's doc).
#[derive(Debug)]
pub(crate) struct PrimitiveColumn<T: ArrowPrimitiveType> {
    values: Vec<T::Native>,
    /// One bit per value, made at the first NULL (`None`: every value so far is valid).
    valid: Option<BooleanBufferBuilder>,
    data_type: DataType,
}

impl<T: ArrowPrimitiveType> PrimitiveColumn<T> {
    /// An empty column of `data_type` (one of `T`'s: a decimal's precision and scale, a
    /// timestamp's zone) with room for `rows` values.
    pub(crate) fn new(data_type: DataType, rows: usize) -> PrimitiveColumn<T> {
        PrimitiveColumn {
            values: Vec::with_capacity(rows),
            valid: None,
            data_type,
        }
    }

    #[inline(always)]
    pub(crate) fn append_value(&mut self, v: T::Native) {
        self.values.push(v);
        if let Some(valid) = &mut self.valid {
            valid.append(true);
        }
    }

    #[inline]
    pub(crate) fn append_null(&mut self) {
        let valid = self.valid.get_or_insert_with(|| {
            let mut b = BooleanBufferBuilder::new(self.values.capacity().max(1));
            b.append_n(self.values.len(), true);
            b
        });
        valid.append(false);
        self.values.push(T::Native::default());
    }

    #[inline(always)]
    pub(crate) fn append_option(&mut self, v: Option<T::Native>) {
        match v {
            Some(v) => self.append_value(v),
            None => self.append_null(),
        }
    }

    /// The column so far as an array; the builder is left empty.
    pub(crate) fn finish(&mut self) -> PrimitiveArray<T> {
        let values = ScalarBuffer::from(std::mem::take(&mut self.values));
        let nulls = self.valid.take().map(|mut b| NullBuffer::new(b.finish()));
        PrimitiveArray::<T>::new(values, nulls).with_data_type(self.data_type.clone())
    }
}

#[cfg(test)]
mod tests {
    use arrow_array::builder::PrimitiveBuilder;
    use arrow_array::types::{Decimal128Type, Int32Type};
    use arrow_array::Array;

    use super::*;

    /// The same appends give the array Arrow's own builder gives, NULLs before and after the
    /// first value included; a finished column starts over empty.
    #[test]
    fn builds_what_arrows_builder_builds() {
        let cases: [&[Option<i32>]; 4] = [
            &[],
            &[Some(1), Some(-2), Some(3)],
            &[None, Some(5), None, None, Some(7)],
            &[Some(1), Some(2), None],
        ];
        let mut ours = PrimitiveColumn::<Int32Type>::new(DataType::Int32, 2);
        for values in cases {
            let mut theirs = PrimitiveBuilder::<Int32Type>::new();
            for v in values {
                ours.append_option(*v);
                theirs.append_option(*v);
            }
            let (a, b) = (ours.finish(), theirs.finish());
            assert_eq!(a, b, "{values:?}");
            assert_eq!(
                a.null_count(),
                values.iter().filter(|v| v.is_none()).count()
            );
        }
    }

    /// The column's own type (a decimal's precision and scale) is the array's.
    #[test]
    fn keeps_the_data_type() {
        let dt = DataType::Decimal128(12, 2);
        let mut c = PrimitiveColumn::<Decimal128Type>::new(dt.clone(), 1);
        c.append_value(12_345);
        c.append_null();
        let a = c.finish();
        assert_eq!(a.data_type(), &dt);
        assert_eq!(a.value_as_string(0), "123.45");
        assert!(a.is_null(1));
    }
}
