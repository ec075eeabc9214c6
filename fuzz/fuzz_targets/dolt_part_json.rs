//! Part descriptions (`prollystore_dolt::parts::Part::from_json` and
//! `prollystore_dolt::diff_parts::DiffPart::from_json`) over arbitrary bytes: a part or an error,
//! never a panic; a part that parses writes back to JSON that parses to itself.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_dolt::diff_parts::DiffPart;
use prollystore_dolt::parts::Part;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = Part::from_json(text) {
        assert_eq!(Part::from_json(&p.to_json()).ok().as_ref(), Some(&p));
        std::hint::black_box((p.rows(), p.ordinals(), p.describe(), p.database_path().is_ok()));
    }
    if let Ok(p) = DiffPart::from_json(text) {
        assert_eq!(DiffPart::from_json(&p.to_json()).ok().as_ref(), Some(&p));
        std::hint::black_box((p.describe(), p.database_path().is_ok()));
    }
});
