//! Inputs the import's tests share: a map of four `int64` columns and CSV text of its rows.

use crate::map_schema::MapSchema;

/// A tiny deterministic generator (xorshift64) for the randomized tests.
pub(super) fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

pub(super) fn int_schema() -> MapSchema {
    MapSchema::parse("a:int64,b:int64", "c:int64,d:int64").unwrap()
}

pub(super) fn row(i: i64) -> (i64, i64, i64, i64) {
    (i, (i * 7) % 1_000_003, i * 13, -i)
}

/// CSV text of rows `ids` (header `a,b,c,d`), with some records written the long way
/// (quoted fields, blank lines, `\r\n`) so both record paths are taken.
pub(super) fn csv_of(ids: &[i64]) -> String {
    let mut s = String::from("a,b,c,d\n");
    for (n, &i) in ids.iter().enumerate() {
        let (a, b, c, d) = row(i);
        match n % 97 {
            5 => s.push_str(&format!("\"{a}\",{b},\"{c}\",{d}\n")),
            6 => s.push_str(&format!("\n{a},{b},{c},{d}\r\n")),
            7 => s.push_str(&format!("{a},+{b},{c},{d}\n")),
            _ => s.push_str(&format!("{a},{b},{c},{d}\n")),
        }
    }
    s
}
