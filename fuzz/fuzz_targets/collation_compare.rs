//! Collated compares over arbitrary bytes (stored keys are untrusted): never panic, and every
//! implemented collation is antisymmetric and reflexive on them.
#![no_main]

use std::cmp::Ordering;

use libfuzzer_sys::fuzz_target;
use prollystore_format::Collation;

fuzz_target!(|data: &[u8]| {
    // The first byte splits the rest into the two keys.
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = usize::from(split).min(rest.len());
    let (a, b) = rest.split_at(at);
    for c in Collation::all() {
        let ab = c.compare(a, b);
        assert_eq!(ab, c.compare(b, a).reverse(), "{c} is not antisymmetric");
        assert_eq!(c.compare(a, a), Ordering::Equal, "{c} is not reflexive");
    }
});
