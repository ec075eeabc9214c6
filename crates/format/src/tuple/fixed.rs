//! [`FixedField`]: one fixed-width field of a descriptor, resolved once so that reading it from
//! many tuples (a scan, a search) costs a few instructions per tuple.

use std::marker::PhantomData;

use super::access::bad;
use super::layout::field_of;
use super::{Tuple, TupleDesc, TupleError};
use crate::Encoding;

/// Field `index` of a descriptor, known to have a fixed-width encoding `N` bytes wide.
///
/// Made by [`TupleDesc::fixed_field`], which does the descriptor checks (field in range, the
/// requested encoding) once; [`FixedField::read`] then reads the field from any tuple of that
/// descriptor. When the field is in the descriptor's fixed-access prefix (leading non-nullable
/// fixed-width fields) it is read at its fixed position after checking only the tuple's count,
/// without decoding offsets. Results are exactly those of the typed getters
/// ([`TupleDesc::get_int64`] and friends), which use it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FixedField<const N: usize> {
    index: usize,
    /// `index` if the field is in the fixed-access prefix, `usize::MAX` otherwise (the fast
    /// path's `fast_index < count` test then always fails).
    fast_index: usize,
    /// Where the field starts if it is in the fixed-access prefix.
    start: u16,
    enc: Encoding,
    _width: PhantomData<[u8; N]>,
}

impl TupleDesc {
    /// Resolves field `i` for repeated reads of `N`-byte values of encoding `enc`. Errors like
    /// the typed getters: the field is beyond the descriptor, its encoding is not `enc`, or
    /// `enc` is not `N` bytes wide.
    #[inline]
    pub fn fixed_field<const N: usize>(
        &self,
        i: usize,
        enc: Encoding,
    ) -> Result<FixedField<N>, TupleError> {
        let ty = self.type_of(i)?;
        if ty.enc != enc {
            return Err(TupleError::WrongEncoding {
                field: i,
                actual: ty.enc,
                requested: enc,
            });
        }
        if enc.fixed_width() != Some(N) {
            return Err(bad(i, enc, "requested width differs from the encoding's"));
        }
        let (fast_index, start) = match self.fixed.get(i) {
            Some(&(start, stop)) if usize::from(stop - start) == N => (i, start),
            _ => (usize::MAX, 0),
        };
        Ok(FixedField {
            index: i,
            fast_index,
            start,
            enc,
            _width: PhantomData,
        })
    }
}

impl<const N: usize> FixedField<N> {
    /// The field index.
    #[inline]
    pub fn index(&self) -> usize {
        self.index
    }

    /// The field's value bytes in `t` (`None` = NULL), or an error if the stored field is not
    /// `N` bytes wide.
    ///
    /// Fast path (Dolt's fixed access, as [`TupleDesc::field`]): field stored (`index < count`)
    /// and ending inside the field data → the `N` bytes at the fixed position.
    #[inline(always)]
    pub fn read(&self, t: Tuple<'_>) -> Result<Option<[u8; N]>, TupleError> {
        let bytes = t.as_bytes();
        if let Some(count) = bytes.last_chunk::<2>() {
            let count = usize::from(u16::from_le_bytes(*count));
            let start = usize::from(self.start);
            // count >= 1 when `fast_index < count`: the offsets and the count then take
            // 2 * count bytes after the field data, which must hold the whole field.
            if self.fast_index < count && start + N + 2 * count <= bytes.len() {
                if let Some(f) = bytes.get(start..start + N) {
                    if let Ok(f) = <[u8; N]>::try_from(f) {
                        return Ok(Some(f));
                    }
                }
            }
        }
        self.read_slow(t)
    }

    /// Any other case: through the offsets (NULL, not in the prefix, malformed bytes).
    #[cold]
    #[inline(never)]
    fn read_slow(&self, t: Tuple<'_>) -> Result<Option<[u8; N]>, TupleError> {
        match field_of(t.as_bytes(), self.index) {
            None => Ok(None),
            Some(b) => b
                .try_into()
                .map(Some)
                .map_err(|_| bad(self.index, self.enc, "wrong width")),
        }
    }
}
