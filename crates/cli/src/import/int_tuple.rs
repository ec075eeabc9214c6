//! The tuples the integer fast paths write: for each field its CSV column and width, and the
//! constant layout of a tuple whose every field is present, put together from the parsed
//! integers without a tuple builder.

use prollystore_format::Encoding;

/// An integer field's width and signedness.
#[derive(Clone, Copy)]
pub(super) enum IntKind {
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
}

impl IntKind {
    pub(super) fn of(enc: Encoding) -> Option<IntKind> {
        use Encoding as E;
        Some(match enc {
            E::Int8 => IntKind::I8,
            E::Int16 => IntKind::I16,
            E::Int32 => IntKind::I32,
            E::Int64 => IntKind::I64,
            E::Uint8 => IntKind::U8,
            E::Uint16 => IntKind::U16,
            E::Uint32 => IntKind::U32,
            E::Uint64 => IntKind::U64,
            _ => return None,
        })
    }

    pub(super) fn signed(self) -> bool {
        matches!(
            self,
            IntKind::I8 | IntKind::I16 | IntKind::I32 | IntKind::I64
        )
    }
}

/// One field of a tuple made by `IntRows`: which CSV column, what width.
#[derive(Clone, Copy)]
pub(super) struct IntField {
    pub(super) column: usize,
    pub(super) kind: IntKind,
}

/// CSV columns an `IntRows` record may have (more: no fast path).
pub(super) const INT_COLUMNS: usize = 16;
/// Key columns an `IntRows` schema may have.
pub(super) const INT_KEY: usize = 8;

/// The constant layout of the key or value tuples an `IntRows` makes.
pub(super) struct IntTuple {
    pub(super) fields: Vec<IntField>,
    /// What follows the field bytes: field offsets, then the count.
    pub(super) suffix: Vec<u16>,
    /// `Some(n)` for one to four fields, all `int64`: tuples of constant size, put together
    /// on the stack (decided once, not per row).
    pub(super) int64s: Option<usize>,
}

impl IntTuple {
    pub(super) fn new(fields: Vec<IntField>, suffix: Vec<u16>) -> IntTuple {
        let all_i64 = fields.iter().all(|f| matches!(f.kind, IntKind::I64));
        let int64s = (all_i64 && (1..=4).contains(&fields.len())).then_some(fields.len());
        IntTuple {
            fields,
            suffix,
            int64s,
        }
    }

    /// Appends the tuple of `ints` to `out`; false, with `out` as it was, if an integer is out
    /// of its field's range.
    #[inline(always)]
    pub(super) fn append(&self, ints: &[i64; INT_COLUMNS], out: &mut Vec<u8>) -> bool {
        match self.int64s {
            Some(1) => append_int64s::<10>(&self.fields, &self.suffix, ints, out),
            Some(2) => append_int64s::<20>(&self.fields, &self.suffix, ints, out),
            Some(3) => append_int64s::<30>(&self.fields, &self.suffix, ints, out),
            Some(4) => append_int64s::<40>(&self.fields, &self.suffix, ints, out),
            _ => append(&self.fields, &self.suffix, ints, out),
        }
    }
}

/// Appends the tuple of `fields` (every one present) and `suffix` (offsets and count) to
/// `out`; false, with `out` as it was, if an integer is out of its field's range.
#[inline]
fn append(
    fields: &[IntField],
    suffix: &[u16],
    ints: &[i64; INT_COLUMNS],
    out: &mut Vec<u8>,
) -> bool {
    let base = out.len();
    for f in fields {
        let v = ints.get(f.column).copied().unwrap_or(0);
        macro_rules! put {
            ($t:ty) => {{
                let Ok(x) = <$t>::try_from(v) else {
                    out.truncate(base);
                    return false;
                };
                out.extend_from_slice(&x.to_le_bytes());
            }};
        }
        match f.kind {
            IntKind::I64 => out.extend_from_slice(&v.to_le_bytes()),
            IntKind::I32 => put!(i32),
            IntKind::I16 => put!(i16),
            IntKind::I8 => put!(i8),
            IntKind::U64 => put!(u64),
            IntKind::U32 => put!(u32),
            IntKind::U16 => put!(u16),
            IntKind::U8 => put!(u8),
        }
    }
    for &o in suffix {
        out.extend_from_slice(&o.to_le_bytes());
    }
    true
}

/// [`append`] for `N / 10` fields, all `int64`.
#[inline(always)]
fn append_int64s<const N: usize>(
    fields: &[IntField],
    suffix: &[u16],
    ints: &[i64; INT_COLUMNS],
    out: &mut Vec<u8>,
) -> bool {
    let mut t = [0u8; N];
    let mut at = 0;
    for f in fields {
        let v = ints.get(f.column).copied().unwrap_or(0);
        if let Some(d) = t.get_mut(at..at + 8) {
            d.copy_from_slice(&v.to_le_bytes());
        }
        at += 8;
    }
    for &o in suffix {
        if let Some(d) = t.get_mut(at..at + 2) {
            d.copy_from_slice(&o.to_le_bytes());
        }
        at += 2;
    }
    out.extend_from_slice(&t);
    true
}
