//! Tuple decoding over arbitrary bytes and descriptors: validation, every getter, comparison,
//! address offsets and re-building must never panic, the whole-row read must agree with the
//! field-by-field one (on valid tuples), and a tuple that validates must decode and re-encode to the same bytes.
#![no_main]

use std::cmp::Ordering;

use libfuzzer_sys::fuzz_target;
use prollystore_format::encoding::ALL_ENCODINGS;
use prollystore_format::tuple::{
    keyless_key, BlobError, BlobStore, Tuple, TupleBuilder, TupleDesc, Type,
};
use prollystore_format::Address;

/// Refuses every blob operation: a re-build of a valid tuple never needs one unless the adaptive
/// placement would change it, which we then accept as a different (permitted) result.
struct NoBlobs;

impl BlobStore for NoBlobs {
    fn write_blob(&mut self, _payload: &[u8]) -> Result<Address, BlobError> {
        Err("no blobs".into())
    }
}

fuzz_target!(|data: &[u8]| {
    // Byte 0: number of fields (0..=7); then one byte per field: encoding index and nullability.
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let n = usize::from(n % 8);
    if rest.len() < n {
        return;
    }
    let (spec, rest) = rest.split_at(n);
    let types: Vec<Type> = spec
        .iter()
        .map(|&b| Type {
            enc: ALL_ENCODINGS[usize::from(b & 0x7f) % ALL_ENCODINGS.len()],
            nullable: b & 0x80 != 0,
        })
        .collect();
    let desc = TupleDesc::new(types);
    // The rest: two tuples, split at a position given by its first byte.
    let Some((&cut, rest)) = rest.split_first() else {
        return;
    };
    let cut = usize::from(cut).min(rest.len());
    let (a, b) = rest.split_at(cut);

    for bytes in [a, b] {
        let valid = desc.validate(bytes).is_ok();
        let t = Tuple::new_unverified(bytes);
        let values: Vec<_> = (0..=desc.len()).map(|i| desc.value(t, i)).collect();
        // The whole-row walk checks the layout itself: `Tuple::new`'s error, and on a tuple
        // that validates the field-by-field reads' values or first error.
        let mut row = Vec::new();
        let whole = desc.values_into(bytes, &mut row).map(|()| row);
        match Tuple::new(bytes) {
            Err(e) => assert_eq!(whole, Err(e)),
            Ok(t) if valid => {
                let one_by_one = (0..desc.len())
                    .map(|i| desc.value(t, i))
                    .collect::<Result<Vec<_>, _>>();
                assert_eq!(format!("{whole:?}"), format!("{one_by_one:?}"));
            }
            Ok(_) => {}
        }
        let mut offsets = Vec::new();
        desc.push_value_address_offsets(bytes, 0, &mut offsets);
        let _ = keyless_key(bytes);
        if desc.compare(bytes, bytes) != Ordering::Equal {
            // Only NaN floats compare unequal to themselves.
            assert!(desc.types().iter().any(|t| matches!(
                t.enc,
                prollystore_format::Encoding::Float32 | prollystore_format::Encoding::Float64
            )));
        }
        if valid {
            let mut builder = TupleBuilder::new(desc.clone());
            let mut decodable = true;
            for (i, v) in values.iter().take(desc.len()).enumerate() {
                match v {
                    Ok(v) => builder.put(i, *v).expect("a decoded value fits its field"),
                    Err(_) => decodable = false, // invalid UTF-8 in a string
                }
            }
            if decodable {
                if let Ok(rebuilt) = builder.build_with(&mut NoBlobs) {
                    assert_eq!(
                        rebuilt.as_bytes(),
                        bytes,
                        "re-encoding a valid tuple changed it"
                    );
                }
            }
        }
    }
    let ab = desc.compare(a, b);
    let ba = desc.compare(b, a);
    let _ = (ab, ba);
    for k in 0..=desc.len() {
        let _ = desc.compare_prefix(a, b, k);
        let _ = desc.prefix(k).compare(a, b);
    }
});
