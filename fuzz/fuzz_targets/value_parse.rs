//! The one reader of SQL value text over arbitrary bytes (every CSV field an import reads goes
//! through it): never panics, and what it reads prints back to text it reads to the same value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_format::tuple::{datetime_text, time_text};
use prollystore_format::value_parse::{
    parse_date, parse_datetime, parse_decimal_text, parse_hex, parse_hex_into, parse_i64,
    parse_time, parse_u64,
};

fuzz_target!(|data: &[u8]| {
    if let Some(v) = parse_i64(data) {
        assert_eq!(parse_i64(v.to_string().as_bytes()), Some(v));
    }
    if let Some(v) = parse_u64(data) {
        assert_eq!(parse_u64(v.to_string().as_bytes()), Some(v));
    }
    if let Some(d) = parse_decimal_text(data) {
        assert!(d.whole.len() + d.fraction.len() <= data.len());
        assert!(d.whole.iter().chain(d.fraction).all(u8::is_ascii_digit));
    }
    if let Some(d) = parse_date(data) {
        assert_eq!(parse_date(d.to_string().as_bytes()), Some(d));
    }
    if let Some(t) = parse_time(data) {
        assert_eq!(parse_time(time_text(t).as_bytes()), Some(t));
    }
    if let Some(us) = parse_datetime(data) {
        assert_eq!(parse_datetime(datetime_text(us).as_bytes()), Some(us));
    }
    let mut out = Vec::new();
    let ok = parse_hex_into(data, &mut out).is_ok();
    if let Ok(s) = std::str::from_utf8(data) {
        assert_eq!(parse_hex(s).is_some(), ok);
    }
});
