//! JSON order over arbitrary bytes (stored JSON documents are untrusted): never panic, and the
//! order is antisymmetric and reflexive; a document that parses compares without error
//! against itself.
#![no_main]

use std::cmp::Ordering;

use libfuzzer_sys::fuzz_target;
use prollystore_format::json_order;

fuzz_target!(|data: &[u8]| {
    // The first byte splits the rest into the two documents.
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = usize::from(split).min(rest.len());
    let (a, b) = rest.split_at(at);
    let ab = json_order::compare(a, b);
    assert_eq!(ab, json_order::compare(b, a).reverse(), "not antisymmetric");
    assert_eq!(json_order::compare(a, a), Ordering::Equal, "not reflexive");
    if let Ok(o) = json_order::try_compare(a, b) {
        assert_eq!(o, ab, "compare and try_compare disagree");
    }
});
