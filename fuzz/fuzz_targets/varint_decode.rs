//! Varint decoders over arbitrary bytes: never panic, and whatever decodes re-encodes to the
//! same bytes.
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
    for item in varint::CountDeltas::new(data) {
        if item.is_err() {
            break;
        }
        total += 1;
        assert!(total <= data.len());
    }
});
