//! Maps of Dolt tuples: the [`TupleSchema`] that orders keys with the key descriptor and lists
//! value addresses with the value descriptor, and reading a field's bytes wherever they live
//! (inline, or out of band in a blob tree).

use std::borrow::Cow;
use std::cmp::Ordering;

use prollystore_format::tuple::{Adaptive, Tuple, TupleDesc};
use prollystore_format::{Address, Encoding};

use crate::blob::read_blob;
use crate::error::TreeError;
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
}

impl TupleSchema {
    /// The schema of a map with these descriptors.
    pub fn new(key: TupleDesc, value: TupleDesc) -> TupleSchema {
        let value_addresses = value.may_carry_addresses();
        TupleSchema {
            key,
            value,
            value_addresses,
        }
    }
}

impl TreeSchema for TupleSchema {
    #[inline]
    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
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
