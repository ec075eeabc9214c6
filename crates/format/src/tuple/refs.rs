//! Chunk references carried by value tuples (`value_address_offsets`) and keyless row keys.

use super::layout::count_of;
use super::layout::field_of;
use super::TupleDesc;
use crate::{Encoding, ADDRESS_LEN};

impl TupleDesc {
    /// Appends, for one value tuple that starts at byte `base` of a leaf's `value_items`, the
    /// offsets (relative to `value_items`) of the 20-byte chunk addresses it carries, in the order
    /// Dolt lists them: first out-of-band adaptive fields from the last column to the first, then
    /// non-NULL, non-zero `*_addr` fields except `extended_addr`, again last column first.
    ///
    /// Offsets wrap at 2^16 like Dolt's `uint16` conversion. Never panics on malformed bytes
    /// (out-of-band fields shorter than an address are skipped).
    pub fn push_value_address_offsets(&self, tuple: &[u8], base: usize, out: &mut Vec<u16>) {
        let count = count_of(tuple);
        let n = self.len().min(count);
        let start_of = |f: &[u8]| f.as_ptr() as usize - tuple.as_ptr() as usize;
        for i in (0..n).rev() {
            let adaptive = self.types.get(i).is_some_and(|t| t.enc.is_adaptive());
            if !adaptive {
                continue;
            }
            if let Some(f) = field_of(tuple, i) {
                if f.first().is_some_and(|&b| b != 0) && f.len() >= ADDRESS_LEN {
                    out.push((base + start_of(f) + f.len() - ADDRESS_LEN) as u16);
                }
            }
        }
        for i in (0..n).rev() {
            let listed = self.types.get(i).is_some_and(|t| t.enc.is_listed_address());
            if !listed {
                continue;
            }
            if let Some(f) = field_of(tuple, i) {
                if f.iter().any(|&b| b != 0) {
                    out.push((base + start_of(f)) as u16);
                }
            }
        }
    }

    /// Whether any field of this descriptor can carry a chunk address listed in
    /// `value_address_offsets` (adaptive or listed `*_addr` fields).
    pub fn may_carry_addresses(&self) -> bool {
        self.types
            .iter()
            .any(|t| t.enc.is_adaptive() || t.enc.is_listed_address())
    }
}

/// The key of a keyless row (Dolt's `HashTupleFromValue`): XXH3-128 of the value tuple after its
/// 8-byte cardinality, as low half LE ‖ high half LE, then the count `01 00` — a one-field
/// `hash128` tuple.
pub fn keyless_key(value_tuple: &[u8]) -> [u8; 18] {
    let h = xxhash_rust::xxh3::xxh3_128(value_tuple.get(8..).unwrap_or(&[]));
    let mut key = [0u8; 18];
    let (hash, count) = key.split_at_mut(16);
    hash.copy_from_slice(&h.to_le_bytes());
    count.copy_from_slice(&1u16.to_le_bytes());
    key
}

/// The descriptor of keyless row keys: one non-NULL `hash128` field.
pub fn keyless_key_desc() -> TupleDesc {
    TupleDesc::new(vec![super::Type::not_null(Encoding::Hash128)])
}
