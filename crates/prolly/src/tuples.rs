//! Maps of Dolt tuples: the [`TupleSchema`] that orders keys with the key descriptor and lists
//! value addresses with the value descriptor, and reading a field's bytes wherever they live
//! (inline, or out of band in a blob tree).

use std::borrow::Cow;
use std::cmp::Ordering;

use prollystore_format::tuple::{Adaptive, Tuple, TupleDesc};
use prollystore_format::{Address, Encoding};

use crate::blob::read_blob;
use crate::error::TreeError;
use crate::map::{Map, PrefixIter};
use crate::store::ChunkStore;
use crate::tree::schema::TreeSchema;

/// Key and value descriptors of a row or index map.
#[derive(Clone, Debug)]
pub struct TupleSchema {
    /// Orders keys (Dolt's comparator, or the descriptor's field orders).
    pub key: TupleDesc,
    /// Describes values; says where out-of-band addresses are.
    pub value: TupleDesc,
    value_addresses: bool,
    fast_keys: Option<FixedIntKeys>,
}

/// A shortcut for keys made only of non-NULL integer fields (the common primary key): such
/// tuples have one length and fixed field positions, so they compare as a few integers. Any
/// tuple of another length or count falls back to the descriptor's comparator.
#[derive(Clone, Debug)]
struct FixedIntKeys {
    /// `(offset, width, signed)` per field.
    fields: Box<[(usize, usize, bool)]>,
    len: usize,
    count: u16,
}

impl FixedIntKeys {
    fn new(desc: &TupleDesc) -> Option<FixedIntKeys> {
        if desc.order().is_some() || desc.is_empty() {
            return None;
        }
        let mut fields = Vec::new();
        let mut off = 0usize;
        for t in desc.types() {
            let (width, signed) = match t.enc {
                Encoding::Int8 => (1, true),
                Encoding::Uint8 => (1, false),
                Encoding::Int16 => (2, true),
                Encoding::Uint16 => (2, false),
                Encoding::Int32 => (4, true),
                Encoding::Uint32 => (4, false),
                Encoding::Int64 => (8, true),
                Encoding::Uint64 => (8, false),
                _ => return None,
            };
            if t.nullable {
                return None;
            }
            fields.push((off, width, signed));
            off += width;
        }
        let n = fields.len();
        Some(FixedIntKeys {
            fields: fields.into(),
            len: off + 2 * n,
            count: u16::try_from(n).ok()?,
        })
    }

    /// The order of `a` and `b`, or `None` if either is not a tuple of this exact shape.
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Option<Ordering> {
        if a.len() != self.len || b.len() != self.len {
            return None;
        }
        let count = self.count.to_le_bytes();
        if a[self.len - 2..] != count || b[self.len - 2..] != count {
            return None;
        }
        for &(off, width, signed) in self.fields.iter() {
            let (x, y) = (
                sortable(a, off, width, signed),
                sortable(b, off, width, signed),
            );
            if x != y {
                return Some(x.cmp(&y));
            }
        }
        Some(Ordering::Equal)
    }
}

/// The little-endian integer at `off`, mapped to a `u64` that sorts like the value.
#[inline(always)]
fn sortable(t: &[u8], off: usize, width: usize, signed: bool) -> u64 {
    let mut buf = [0u8; 8];
    if let (Some(dst), Some(src)) = (buf.get_mut(..width), t.get(off..off + width)) {
        dst.copy_from_slice(src);
    }
    let raw = u64::from_le_bytes(buf);
    if signed {
        let shift = 64 - 8 * width as u32;
        (((raw << shift) as i64) >> shift) as u64 ^ (1 << 63)
    } else {
        raw
    }
}

impl TupleSchema {
    /// The schema of a map with these descriptors.
    pub fn new(key: TupleDesc, value: TupleDesc) -> TupleSchema {
        let value_addresses = value.may_carry_addresses();
        let fast_keys = FixedIntKeys::new(&key);
        TupleSchema {
            key,
            value,
            value_addresses,
            fast_keys,
        }
    }
}

impl TreeSchema for TupleSchema {
    #[inline]
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        if let Some(fast) = &self.fast_keys {
            if let Some(o) = fast.compare(a, b) {
                return o;
            }
        }
        self.key.compare(a, b)
    }
    #[inline]
    fn values_have_addresses(&self) -> bool {
        self.value_addresses
    }
    #[inline]
    fn push_value_address_offsets(&self, value: &[u8], base: usize, out: &mut Vec<u16>) {
        self.value.push_value_address_offsets(value, base, out)
    }
    fn values_equivalent(&self, a: &[u8], b: &[u8]) -> bool {
        self.value.compare(a, b) == Ordering::Equal
    }
}

impl<'s, S: ChunkStore + ?Sized> Map<'s, S, TupleSchema> {
    /// Rows whose first `n` key fields equal those of `prefix` (a key tuple with at least `n`
    /// fields), in key order: an index lookup on a leading column, for example.
    pub fn prefix_rows<'p>(
        &'p self,
        prefix: &'p [u8],
        n: usize,
    ) -> Result<PrefixIter<'s, S, impl Fn(&[u8]) -> Ordering + 'p>, TreeError> {
        let desc = &self.schema().key;
        self.prefix_range(move |k: &[u8]| desc.compare_prefix(k, prefix, n))
    }
}

/// The bytes of field `i` of `tuple` under `desc`, following out-of-band adaptive values and
/// `*_addr` fields (except `commit_addr`) into their blob trees (`None` = NULL). Inline values
/// are borrowed.
pub fn field_bytes<'t, S: ChunkStore + ?Sized>(
    store: &S,
    desc: &TupleDesc,
    tuple: &'t [u8],
    i: usize,
) -> Result<Option<Cow<'t, [u8]>>, TreeError> {
    let Some(raw) = desc.field(Tuple::new_unverified(tuple), i) else {
        return Ok(None);
    };
    let Some(ty) = desc.types().get(i) else {
        return Ok(Some(Cow::Borrowed(raw)));
    };
    if ty.enc.is_adaptive() {
        return match Adaptive::from_bytes(raw) {
            Some(Adaptive::Inline(bytes)) => Ok(Some(Cow::Borrowed(bytes))),
            Some(Adaptive::OutOfBand { len, address }) => {
                let mut out = Vec::with_capacity(len.min(1 << 24) as usize);
                read_blob(store, &address, &mut out)?;
                Ok(Some(Cow::Owned(out)))
            }
            None => Err(TreeError::BadBlob {
                address: Address::ZERO,
                reason: format!("field {i} holds a malformed adaptive value"),
            }),
        };
    }
    if ty.enc.is_address() && ty.enc != Encoding::CommitAddr {
        let Some(address) = Address::from_slice(raw) else {
            return Err(TreeError::BadBlob {
                address: Address::ZERO,
                reason: format!("field {i} is not a 20-byte address"),
            });
        };
        let mut out = Vec::new();
        read_blob(store, &address, &mut out)?;
        return Ok(Some(Cow::Owned(out)));
    }
    Ok(Some(Cow::Borrowed(raw)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use prollystore_format::tuple::Type;

    fn tup(fields: &[&[u8]]) -> Vec<u8> {
        let mut t = Vec::new();
        let mut offs = Vec::new();
        for (i, f) in fields.iter().enumerate() {
            if i > 0 {
                offs.push(t.len() as u16);
            }
            t.extend_from_slice(f);
        }
        for o in offs {
            t.extend_from_slice(&o.to_le_bytes());
        }
        t.extend_from_slice(&(fields.len() as u16).to_le_bytes());
        t
    }

    #[test]
    fn fast_integer_keys_agree_with_the_descriptor() {
        let desc = TupleDesc::new(vec![
            Type::not_null(Encoding::Int16),
            Type::not_null(Encoding::Uint32),
            Type::not_null(Encoding::Int64),
            Type::not_null(Encoding::Int8),
        ]);
        let schema = TupleSchema::new(desc.clone(), TupleDesc::new(vec![]));
        assert!(schema.fast_keys.is_some());
        let mut x = 0x1234_5678_9abc_def0u64;
        let mut keys = Vec::new();
        let edge16 = [i16::MIN, -1, 0, 1, i16::MAX];
        for i in 0..400usize {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let a = edge16[i % 5].wrapping_add((x >> 60) as i16);
            let b = if i % 3 == 0 {
                u32::MAX - (x >> 62) as u32
            } else {
                (x >> 40) as u32 % 4
            };
            let c = if i % 7 == 0 {
                i64::MIN + (x >> 63) as i64
            } else {
                (x as i64) >> 62
            };
            let d = (x >> 56) as i8;
            keys.push(tup(&[
                &a.to_le_bytes(),
                &b.to_le_bytes(),
                &c.to_le_bytes(),
                &d.to_le_bytes(),
            ]));
        }
        keys.push(tup(&[&1i16.to_le_bytes()])); // other shape: falls back
        for p in &keys {
            for q in &keys {
                assert_eq!(schema.compare_keys(p, q), desc.compare(p, q));
            }
        }
    }

    #[test]
    fn diff_ignores_equivalent_values() {
        use crate::{Map, MemoryStore};
        let k = TupleDesc::new(vec![Type::not_null(Encoding::Int64)]);
        let v = TupleDesc::new(vec![Type::not_null(Encoding::Float64)]);
        let schema = TupleSchema::new(k, v);
        let store = MemoryStore::default();
        let key = tup(&[&1i64.to_le_bytes()]);
        let (pos, neg) = (
            tup(&[&0.0f64.to_le_bytes()]),
            tup(&[&(-0.0f64).to_le_bytes()]),
        );
        let (one, two) = (tup(&[&1.0f64.to_le_bytes()]), tup(&[&2.0f64.to_le_bytes()]));
        let a = Map::from_sorted(&store, schema.clone(), [(&key[..], &pos[..])]).unwrap();
        let b = Map::from_sorted(&store, schema.clone(), [(&key[..], &neg[..])]).unwrap();
        assert_ne!(a.root(), b.root());
        assert_eq!(
            a.diff(&b).unwrap().count(),
            0,
            "+0.0 and -0.0 are the same value"
        );
        let c = Map::from_sorted(&store, schema.clone(), [(&key[..], &one[..])]).unwrap();
        let d = Map::from_sorted(&store, schema, [(&key[..], &two[..])]).unwrap();
        assert_eq!(c.diff(&d).unwrap().count(), 1);
    }
}
