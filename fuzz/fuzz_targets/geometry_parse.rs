//! Geometry values from untrusted input (SRID + WKB bytes from a CSV import, WKT text): never
//! panic; whatever is accepted is in Dolt's stored form, which reads back to itself and prints
//! as WKT; that WKT, when it reads back (bytes may hold what WKT cannot: NaN, open rings), reads
//! back to the same value; every stored value has a spatial cell.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prollystore_format::geometry;
use prollystore_format::sql_type::SqlType;

fuzz_target!(|data: &[u8]| {
    let mut accepted = Vec::new();
    if let Ok(v) = geometry::from_ewkb(data) {
        accepted.push(v);
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(v) = geometry::from_text(text) {
            accepted.push(v);
        }
    }
    let column = SqlType::parse("point SRID 4326");
    for v in accepted {
        assert_eq!(geometry::from_ewkb(&v).as_ref(), Ok(&v), "stored form not stable");
        let srid = geometry::srid(&v).expect("an SRID");
        let wkt = geometry::wkt(&v).expect("stored form prints as WKT");
        if let Ok(again) = geometry::from_wkt(&wkt, srid) {
            assert_eq!(again, v, "WKT round trip: {wkt}");
        }
        let _ = geometry::check_column(&v, &column, "c");
        assert!(geometry::z_cell(&v).is_some(), "no spatial cell for a stored value");
    }
});
