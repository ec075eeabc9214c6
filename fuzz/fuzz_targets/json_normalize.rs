//! JSON text into the bytes Dolt stores (values written into JSON columns are untrusted):
//! never panics; what is accepted is stored in a form that is accepted again unchanged, and
//! orders equal to the text it came from.
#![no_main]

use std::cmp::Ordering;

use libfuzzer_sys::fuzz_target;
use prollystore_format::{json, json_order};

fuzz_target!(|data: &[u8]| {
    let Ok(stored) = json::normalize(data) else {
        return;
    };
    assert!(std::str::from_utf8(&stored).is_ok(), "stored bytes are not UTF-8");
    assert_eq!(json::normalize(&stored).as_deref(), Ok(&stored[..]), "not stable");
    if json_order::try_compare(data, &stored).is_ok() {
        assert_eq!(json_order::compare(data, &stored), Ordering::Equal);
    }
});
