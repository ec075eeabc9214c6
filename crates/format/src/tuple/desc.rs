//! Tuple descriptors (`val.TupleDesc`): the encodings and nullability of a tuple's fields, the
//! precomputed "fixed access" prefix, and the optional hook for orders Dolt's default comparator
//! does not define.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use super::layout::field_of;
use super::{Tuple, TupleError};
use crate::collation::Collation;
use crate::Encoding;

/// One field of a descriptor: how it is stored and whether it may be NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    /// The field's encoding.
    pub enc: Encoding,
    /// Whether the field may be NULL.
    pub nullable: bool,
}

impl Type {
    /// A non-nullable field (key columns).
    pub const fn not_null(enc: Encoding) -> Type {
        Type {
            enc,
            nullable: false,
        }
    }

    /// A nullable field.
    pub const fn nullable(enc: Encoding) -> Type {
        Type {
            enc,
            nullable: true,
        }
    }
}

/// An order for fields that Dolt's default comparator cannot order by itself: extended types
/// (handler `SerializedCompare`), legacy JSON/geometry, JSON adaptive values (MySQL JSON order),
/// out-of-band adaptive values (whose order needs their blob contents) and — if
/// [`FieldOrder::takes_over`] says so — any other field, such as collated strings.
///
/// The comparator hands it the raw stored bytes of two non-NULL fields (terminators and adaptive
/// headers included). It must be a total order and must not panic.
pub trait FieldOrder: Send + Sync {
    /// Whether this order replaces the default one for field `field` entirely. The default takes
    /// over exactly the encodings the default comparator has no order for (see
    /// [`needs_external_order`]).
    fn takes_over(&self, field: usize, ty: Type) -> bool {
        let _ = field;
        needs_external_order(ty.enc)
    }

    /// Compares two non-NULL stored values of field `field`.
    fn compare(&self, field: usize, ty: Type, a: &[u8], b: &[u8]) -> Ordering;
}

/// Encodings Dolt's `DefaultTupleComparator` has no rule for: they belong to a type handler
/// (extended), to MySQL JSON semantics (JSON adaptive) or to nobody (legacy JSON and geometry,
/// where Dolt panics). Without a [`FieldOrder`] they are ordered bytewise, which is deterministic
/// but is *not* Dolt's order.
#[inline]
pub fn needs_external_order(enc: Encoding) -> bool {
    use Encoding::*;
    matches!(
        enc,
        Json | Geometry | Extended | ExtendedAddr | ExtendedAdaptive | JsonAdaptive
    )
}

/// How the comparator treats one field; precomputed per descriptor so that the hot loop is one
/// small `match`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    F32,
    F64,
    Year,
    Date,
    /// Fixed-width bytes ordered bytewise (hash128, cell, addresses).
    Raw,
    /// Value + 0x00 terminator, ordered bytewise without the terminator.
    Terminated,
    Decimal,
    /// Adaptive value: inline payloads bytewise, anything out of band through the hook.
    Adaptive,
    /// Ordered by the hook, or bytewise without one.
    External,
    /// A string field with a collation whose order is not byte order: value + terminator,
    /// ordered by the field's collation without the terminator.
    CollatedString,
    /// A string adaptive field with such a collation: inline payloads by the collation,
    /// anything out of band through the hook.
    CollatedAdaptive,
}

impl Kind {
    fn of(enc: Encoding) -> Kind {
        use Encoding::*;
        match enc {
            Int8 => Kind::I8,
            Uint8 => Kind::U8,
            Int16 => Kind::I16,
            Uint16 | Enum => Kind::U16,
            Int32 => Kind::I32,
            Uint32 => Kind::U32,
            Int64 | Time | Datetime => Kind::I64,
            Uint64 | Bit64 | Set => Kind::U64,
            Float32 => Kind::F32,
            Float64 => Kind::F64,
            Year => Kind::Year,
            Date => Kind::Date,
            Hash128 | Cell | BytesAddr | CommitAddr | StringAddr | JsonAddr | GeomAddr => Kind::Raw,
            String | Bytes => Kind::Terminated,
            Decimal => Kind::Decimal,
            StringAdaptive | BytesAdaptive | GeomAdaptive => Kind::Adaptive,
            _ => Kind::External,
        }
    }
}

/// Describes the fields of a tuple: typed access, validation and Dolt's ordering.
///
/// Cheap to clone (the field list is shared).
#[derive(Clone)]
pub struct TupleDesc {
    pub(crate) types: Arc<[Type]>,
    pub(crate) kinds: Arc<[Kind]>,
    /// `(start, stop)` of each field of the fixed-access prefix.
    pub(crate) fixed: Arc<[(u16, u16)]>,
    /// When every field is in the fixed-access prefix: the byte length of a tuple that stores
    /// all of them and nothing else (field widths + offsets + count). Lets `compare` recognise
    /// such tuples with one length check and read their fields at fixed positions. 0 = none.
    pub(crate) canonical_len: usize,
    /// With `canonical_len`: every field is an int64-ordered field (int64, time, datetime),
    /// the most common key shape, compared without looking at the field kinds.
    pub(crate) all_i64: bool,
    pub(crate) order: Option<Arc<dyn FieldOrder>>,
    /// Per-field collations (empty when none were given); only string fields use theirs.
    pub(crate) collations: Arc<[Option<Collation>]>,
}

impl TupleDesc {
    /// A descriptor with Dolt's default order.
    pub fn new(types: Vec<Type>) -> TupleDesc {
        Self::build(types.into(), None, Arc::new([]))
    }

    /// A descriptor whose fields without a default order (or that `order` takes over) are ordered
    /// by `order`.
    pub fn with_order(types: Vec<Type>, order: Arc<dyn FieldOrder>) -> TupleDesc {
        Self::build(types.into(), Some(order), Arc::new([]))
    }

    /// This descriptor with per-field collations (`collations[i]` for field `i`; missing
    /// entries and `None` mean none), as Dolt's `CollationTupleComparator` has them.
    ///
    /// Only `String` and `StringAdaptive` fields use their collation, as in Dolt; a field
    /// without one, or whose collation orders by code point (`utf8mb4_0900_bin`, `binary`,
    /// `utf8mb4_bin`, ...), keeps plain byte order, which is the same on valid UTF-8. Fields the
    /// order hook takes over stay with the hook.
    pub fn with_collations(&self, collations: Vec<Option<Collation>>) -> TupleDesc {
        Self::build(self.types.clone(), self.order.clone(), collations.into())
    }

    /// The collation of field `i`, if one was given.
    pub fn collation(&self, i: usize) -> Option<Collation> {
        self.collations.get(i).copied().flatten()
    }

    fn build(
        types: Arc<[Type]>,
        order: Option<Arc<dyn FieldOrder>>,
        collations: Arc<[Option<Collation>]>,
    ) -> TupleDesc {
        let kinds: Vec<Kind> = types
            .iter()
            .enumerate()
            .map(|(i, t)| match &order {
                Some(o) if o.takes_over(i, *t) => Kind::External,
                _ => {
                    let collated = collations
                        .get(i)
                        .copied()
                        .flatten()
                        .is_some_and(|c| !c.is_code_point_order());
                    match Kind::of(t.enc) {
                        Kind::Terminated if collated && t.enc == Encoding::String => {
                            Kind::CollatedString
                        }
                        Kind::Adaptive if collated && t.enc == Encoding::StringAdaptive => {
                            Kind::CollatedAdaptive
                        }
                        kind => kind,
                    }
                }
            })
            .collect();
        // Dolt's makeFixedAccess: the leading non-nullable fixed-width fields.
        let mut fixed = Vec::new();
        let mut off = 0usize;
        for t in types.iter() {
            if t.nullable {
                break;
            }
            let Some(w) = t.enc.fixed_width() else { break };
            if off + w > usize::from(u16::MAX) {
                break;
            }
            fixed.push((off as u16, (off + w) as u16));
            off += w;
        }
        let canonical_len = if !types.is_empty() && fixed.len() == types.len() {
            off + 2 * types.len()
        } else {
            0
        };
        let all_i64 = canonical_len != 0 && kinds.iter().all(|&k| k == Kind::I64);
        TupleDesc {
            types,
            kinds: kinds.into(),
            fixed: fixed.into(),
            canonical_len,
            all_i64,
            order,
            collations,
        }
    }

    /// Number of fields.
    #[inline]
    pub fn len(&self) -> usize {
        self.types.len()
    }

    /// True for a descriptor without fields.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.types.is_empty()
    }

    /// The field types.
    #[inline]
    pub fn types(&self) -> &[Type] {
        &self.types
    }

    /// The descriptor of the first `n` fields (all fields if `n >= len`), with the same order hook:
    /// comparing with it looks only at those fields (Dolt's `PrefixDesc`).
    pub fn prefix(&self, n: usize) -> TupleDesc {
        if n >= self.len() {
            // The whole descriptor: shared, not rebuilt (a full-key lookup's common case).
            return self.clone();
        }
        Self::build(
            self.types.get(..n).unwrap_or(&[]).into(),
            self.order.clone(),
            self.collations
                .get(..n.min(self.collations.len()))
                .unwrap_or(&[])
                .into(),
        )
    }

    /// How many leading fields are read at fixed offsets (Dolt's fixed access).
    #[inline]
    pub fn fixed_prefix_len(&self) -> usize {
        self.fixed.len()
    }

    /// The order hook, if any.
    pub fn order(&self) -> Option<&Arc<dyn FieldOrder>> {
        self.order.as_ref()
    }

    /// The type of field `i`, or an error naming the descriptor's size.
    #[inline]
    pub fn type_of(&self, i: usize) -> Result<Type, TupleError> {
        self.types
            .get(i)
            .copied()
            .ok_or(TupleError::FieldOutOfRange {
                field: i,
                len: self.len(),
            })
    }

    /// The stored bytes of field `i` of `t` (`None` = NULL), using the fixed-access offsets for
    /// the leading fixed-width fields.
    ///
    /// For tuples that passed [`TupleDesc::validate`] this is exactly the field; on other bytes it
    /// never panics but may return meaningless bytes.
    #[inline]
    pub fn field<'a>(&self, t: Tuple<'a>, i: usize) -> Option<&'a [u8]> {
        let bytes = t.as_bytes();
        if let (Some(&(start, stop)), Some(count)) = (self.fixed.get(i), bytes.last_chunk::<2>()) {
            let count = usize::from(u16::from_le_bytes(*count));
            // Stored (`i < count`, so count >= 1 and the offsets and count take 2 * count
            // bytes) and ending inside the field data: read at the fixed position.
            if i < count && usize::from(stop) + 2 * count <= bytes.len() {
                if let Some(f) = bytes.get(usize::from(start)..usize::from(stop)) {
                    return Some(f);
                }
            }
        }
        field_of(bytes, i)
    }
}

impl fmt::Debug for TupleDesc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TupleDesc")
            .field("types", &self.types)
            .field("fixed_prefix_len", &self.fixed.len())
            .field("order", &self.order.as_ref().map(|_| "custom"))
            .field("collations", &self.collations)
            .finish()
    }
}

impl PartialEq for TupleDesc {
    /// Descriptors are equal when their types and collations are (the order hook is not
    /// compared).
    fn eq(&self, other: &Self) -> bool {
        self.types == other.types
            && (0..self.len()).all(|i| self.collation(i) == other.collation(i))
    }
}
