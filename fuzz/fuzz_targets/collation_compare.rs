//! Collated compares, sort keys and `LIKE` over arbitrary bytes (stored text is untrusted):
//! never panic; every implemented collation is antisymmetric and reflexive on them, and on
//! valid UTF-8 its sort keys order as it compares.
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
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        c.sort_key(a, &mut ka);
        c.sort_key(b, &mut kb);
        if std::str::from_utf8(a).is_ok() && std::str::from_utf8(b).is_ok() {
            assert_eq!(ka.cmp(&kb), ab, "{c}: sort keys order otherwise");
        }
        let _ = c.like_pattern(b, '\\').matches(a);
    }
});
