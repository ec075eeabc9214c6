//! Varint decoders over arbitrary bytes: never panic, and whatever decodes re-encodes to the
//! same bytes; the bulk count decoder agrees with the count iterator.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_format::varint;

fuzz_target!(|data: &[u8]| {
    if let Some((v, n)) = varint::get_signed(data) {
        let mut out = Vec::new();
        varint::put_signed(&mut out, v);
        // Go accepts non-minimal encodings; only minimal ones must round-trip byte for byte.
        if out.len() == n {
            assert_eq!(&out[..], &data[..n]);
        }
    }
    if let Some((v, n)) = varint::get_sqlite4(data) {
        assert!(n <= data.len());
        let mut out = Vec::new();
        varint::put_sqlite4(&mut out, v);
        assert_eq!(varint::get_sqlite4(&out), Some((v, out.len())));
    }
    let mut total = 0usize;
    let mut counts = Vec::new();
    let mut iter_ok = true;
    for item in varint::CountDeltas::new(data) {
        match item {
            Ok(c) => counts.push(c),
            Err(_) => {
                iter_ok = false;
                break;
            }
        }
        total += 1;
        assert!(total <= data.len());
    }
    // The bulk decoder gives what the iterator gives, appended after what `out` held.
    let mut bulk = vec![7u64];
    let ok = varint::decode_count_deltas_into(data, &mut bulk);
    assert_eq!(ok, iter_ok);
    assert_eq!(bulk[0], 7);
    assert_eq!(&bulk[1..], &counts[..]);
});
