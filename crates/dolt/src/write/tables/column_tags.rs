//! Column tags as Dolt assigns them to new columns (`schema.AutoGenerateTag`): a pseudo-random
//! number from Go's `math/rand`, seeded with SHA-512 of the kinds of the table's columns so far,
//! the new column's kind, and the simplified table and column names; redrawn while it collides
//! with a tag already used in the database.
//!
//! Go's generator (`math/rand` `rngSource`) is an additive lagged-Fibonacci generator over
//! 64-bit integers, x(n) = x(n−273) + x(n−607), whose seeding XORs a fixed table ("cooked"
//! values: the generator's state after 7.8·10¹² steps from seed 1, per Go's `gen_cooked.go`).
//! That table is computed here by jumping ahead (the recurrence is linear, so the state after
//! n steps is the initial state combined by the coefficients of xⁿ mod (x⁶⁰⁷ − x³³⁴ − 1), found
//! by square-and-multiply); the result is embedded (`column_tags_cooked`) because the
//! computation costs a few milliseconds of every process that adds a column, and a test checks
//! the two agree.

use std::collections::HashSet;

use sha2::{Digest, Sha512};

use crate::schema::SqlType;

/// Length of the generator's state (`rngLen`).
const LEN: usize = 607;
/// Its tap (`rngTap`).
const TAP: usize = 273;
/// Steps from seed 1 to the cooked state (`gen_cooked.go`).
#[cfg(test)]
const COOK_STEPS: u64 = 7_800_000_000_000;
/// `int32max`, the modulus of the seeding generator.
const INT32_MAX: i64 = (1 << 31) - 1;
/// Tags at or above this are reserved (`schema.ReservedTagMin`).
const RESERVED_TAG_MIN: u64 = 1 << 50;

/// Dolt's storage kinds (`types.NomsKind`) of the SQL types a tag seed depends on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum NomsKind {
    /// `FLOAT`, `DOUBLE`.
    Float = 1,
    /// `CHAR`, `VARCHAR`.
    String = 2,
    /// `TEXT` and `BLOB` types.
    Blob = 3,
    /// Signed integers, `TIME`, `YEAR`.
    Int = 15,
    /// Unsigned integers, `BIT`, `ENUM`, `SET`.
    Uint = 16,
    /// `BINARY`, `VARBINARY`.
    InlineBlob = 19,
    /// `DATE`, `DATETIME`, `TIMESTAMP`.
    Timestamp = 20,
    /// `DECIMAL`.
    Decimal = 21,
    /// `JSON`.
    Json = 22,
    /// `GEOMETRY`.
    Geometry = 23,
    /// `POINT`.
    Point = 24,
    /// `LINESTRING`.
    LineString = 25,
    /// `POLYGON`.
    Polygon = 26,
    /// `MULTIPOINT`.
    MultiPoint = 28,
    /// `MULTILINESTRING`.
    MultiLineString = 29,
    /// `MULTIPOLYGON`.
    MultiPolygon = 30,
    /// `GEOMETRYCOLLECTION`.
    GeometryCollection = 31,
}

/// The kind of a SQL type, or `None` for types not covered yet.
pub(crate) fn kind_of(ty: &SqlType) -> Option<NomsKind> {
    Some(match ty {
        SqlType::Int { unsigned: true, .. }
        | SqlType::Bit(_)
        | SqlType::Enum { .. }
        | SqlType::Set { .. } => NomsKind::Uint,
        SqlType::Int { .. } | SqlType::Time(_) | SqlType::Year => NomsKind::Int,
        SqlType::Float | SqlType::Double => NomsKind::Float,
        SqlType::Decimal { .. } => NomsKind::Decimal,
        SqlType::Date | SqlType::Datetime(_) | SqlType::Timestamp(_) => NomsKind::Timestamp,
        SqlType::Text { .. } | SqlType::Binary { .. } if ty.is_lob() => NomsKind::Blob,
        SqlType::Text { .. } => NomsKind::String,
        SqlType::Binary { .. } => NomsKind::InlineBlob,
        SqlType::Json => NomsKind::Json,
        SqlType::Geometry { name, .. } => match name.as_str() {
            "geometry" => NomsKind::Geometry,
            "point" => NomsKind::Point,
            "linestring" => NomsKind::LineString,
            "polygon" => NomsKind::Polygon,
            "multipoint" => NomsKind::MultiPoint,
            "multilinestring" => NomsKind::MultiLineString,
            "multipolygon" => NomsKind::MultiPolygon,
            "geometrycollection" => NomsKind::GeometryCollection,
            _ => return None,
        },
        SqlType::Vector(_) | SqlType::Other(_) => return None,
    })
}

/// Tags for the columns of a new table, in order, as `GenerateTagsForNewColumns` assigns them
/// when none of the names existed before: each column's seed includes the kinds of the columns
/// before it, and each tag joins `used` (every tag of the database's tables).
pub(crate) fn tags_for_new_table(
    used: &mut HashSet<u64>,
    table: &str,
    columns: &[(&str, NomsKind)],
) -> Vec<u64> {
    let mut kinds = Vec::with_capacity(columns.len());
    columns
        .iter()
        .map(|&(name, kind)| {
            let tag = auto_generate_tag(used, table, &kinds, name, kind);
            kinds.push(kind as u8);
            used.insert(tag);
            tag
        })
        .collect()
}

/// One new column's tag (`AutoGenerateTag`).
pub(crate) fn auto_generate_tag(
    used: &HashSet<u64>,
    table: &str,
    existing_kinds: &[u8],
    column: &str,
    kind: NomsKind,
) -> u64 {
    let mut max: u64 = 128 * 128;
    while max / 2 < used.len() as u64 {
        if max
            .checked_mul(128)
            .is_none_or(|m| m >= RESERVED_TAG_MIN - 1)
        {
            max = RESERVED_TAG_MIN - 1;
            break;
        }
        max *= 128;
    }
    let mut seed_bytes = existing_kinds.to_vec();
    seed_bytes.push(kind as u8);
    seed_bytes.extend_from_slice(simple(table).as_bytes());
    seed_bytes.extend_from_slice(simple(column).as_bytes());
    let digest = Sha512::digest(&seed_bytes);
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    let seed = i64::from_le_bytes(first);
    let mut rng = GoRand::new(seed);
    loop {
        let tag = rng.int63n(max as i64) as u64;
        if !used.contains(&tag) {
            return tag;
        }
    }
}

/// Lower case without anything but ASCII letters and digits (`simpleString`).
fn simple(s: &str) -> String {
    s.chars()
        .filter(char::is_ascii_alphanumeric)
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Go's `math/rand` generator for an explicit seed (`rand.New(rand.NewSource(seed))`).
struct GoRand {
    vec: [u64; LEN],
    tap: usize,
    feed: usize,
}

impl GoRand {
    fn new(seed: i64) -> GoRand {
        let mut seed = seed % INT32_MAX;
        if seed < 0 {
            seed += INT32_MAX;
        }
        if seed == 0 {
            seed = 89_482_311;
        }
        let cooked = cooked();
        let mut vec = [0u64; LEN];
        let mut x = seed as i32;
        for i in -20..LEN as i32 {
            x = seed_step(x);
            if i >= 0 {
                let mut u = i64::from(x) << 40;
                x = seed_step(x);
                u ^= i64::from(x) << 20;
                x = seed_step(x);
                u ^= i64::from(x);
                vec[i as usize] = (u as u64) ^ cooked[i as usize];
            }
        }
        GoRand {
            vec,
            tap: 0,
            feed: LEN - TAP,
        }
    }

    fn next_u64(&mut self) -> u64 {
        self.tap = (self.tap + LEN - 1) % LEN;
        self.feed = (self.feed + LEN - 1) % LEN;
        let x = self.vec[self.feed].wrapping_add(self.vec[self.tap]);
        self.vec[self.feed] = x;
        x
    }

    fn int63(&mut self) -> i64 {
        (self.next_u64() & (u64::MAX >> 1)) as i64
    }

    /// `Int63n`: uniform in `[0, n)`, by masking for powers of two, else by rejection.
    fn int63n(&mut self, n: i64) -> i64 {
        if n & (n - 1) == 0 {
            return self.int63() & (n - 1);
        }
        let max = (i64::MAX as u64 - (1u64 << 63) % n as u64) as i64;
        loop {
            let v = self.int63();
            if v <= max {
                return v % n;
            }
        }
    }
}

/// The Park–Miller step Go seeds with (`seedrand`): x·48271 mod (2³¹−1), by Schrage's method.
fn seed_step(x: i32) -> i32 {
    let (a, q, r) = (48_271i32, 44_488i32, 3_399i32);
    let hi = x / q;
    let lo = x % q;
    let mut x = a.wrapping_mul(lo).wrapping_sub(r.wrapping_mul(hi));
    if x < 0 {
        x += INT32_MAX as i32;
    }
    x
}

/// The cooked table (`cooked_by_jump`'s result, embedded).
fn cooked() -> &'static [u64; LEN] {
    &super::column_tags_cooked::COOKED
}

/// The cooked table computed: the state of the generator seeded from 1 (with `gen_cooked.go`'s
/// shifts) after [`COOK_STEPS`] steps, slot by slot.
#[cfg(test)]
fn cooked_by_jump() -> [u64; LEN] {
    {
        // The initial state.
        let mut init = [0u64; LEN];
        let mut x = 1i32;
        for i in -20..LEN as i32 {
            x = seed_step(x);
            if i >= 0 {
                let mut u = i64::from(x) << 20;
                x = seed_step(x);
                u ^= i64::from(x) << 10;
                x = seed_step(x);
                u ^= i64::from(x);
                init[i as usize] = u as u64;
            }
        }
        // Step k (from 1) writes slot (334 − k) mod 607 with out(k) = out(k−607) + out(k−273),
        // where out(j) for −606 ≤ j ≤ 0 is the initial value of slot (334 − j) mod 607. With
        // t(m) = out(m − 606), t(m) is the coefficient vector of x^m mod P applied to t(0..607).
        let feed0 = LEN - TAP;
        let t_init: Vec<u64> = (0..LEN)
            .map(|m| {
                let j = m as i64 - 606;
                init[((feed0 as i64 - j).rem_euclid(LEN as i64)) as usize]
            })
            .collect();
        // Slot s ends holding out(k) for the largest k ≤ N with k ≡ 334 − s (mod 607).
        let n = COOK_STEPS;
        let first = n - (LEN as u64 - 1); // out(first..=n): the last 607 values written
        let mut poly = pow_x(first + 606);
        let mut state = [0u64; LEN];
        for k in first..=n {
            let value = poly
                .iter()
                .zip(&t_init)
                .fold(0u64, |acc, (c, t)| acc.wrapping_add(c.wrapping_mul(*t)));
            let slot = ((feed0 as i64 - k as i64).rem_euclid(LEN as i64)) as usize;
            state[slot] = value;
            poly = times_x(&poly);
        }
        state
    }
}

#[cfg(test)]
/// x^e mod (x⁶⁰⁷ − x³³⁴ − 1), coefficients wrapping in 64 bits.
fn pow_x(mut e: u64) -> Vec<u64> {
    let mut result = vec![0u64; LEN];
    result[0] = 1;
    let mut base = vec![0u64; LEN];
    base[1] = 1;
    while e > 0 {
        if e & 1 == 1 {
            result = mul_mod(&result, &base);
        }
        base = mul_mod(&base, &base);
        e >>= 1;
    }
    result
}

#[cfg(test)]
fn mul_mod(a: &[u64], b: &[u64]) -> Vec<u64> {
    let mut prod = vec![0u64; 2 * LEN - 1];
    for (i, &x) in a.iter().enumerate() {
        if x == 0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            prod[i + j] = prod[i + j].wrapping_add(x.wrapping_mul(y));
        }
    }
    reduce(prod)
}

#[cfg(test)]
/// Reduces with x⁶⁰⁷ = x³³⁴ + 1, from the top.
fn reduce(mut p: Vec<u64>) -> Vec<u64> {
    for d in (LEN..p.len()).rev() {
        let c = p[d];
        if c != 0 {
            p[d - TAP] = p[d - TAP].wrapping_add(c);
            p[d - LEN] = p[d - LEN].wrapping_add(c);
        }
    }
    p.truncate(LEN);
    p
}

#[cfg(test)]
fn times_x(p: &[u64]) -> Vec<u64> {
    let mut q = vec![0u64; LEN + 1];
    q[1..].copy_from_slice(p);
    reduce(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The embedded cooked table is the one the jump-ahead computes (and Go's: its first
    /// values are those of `rngCooked`).
    #[test]
    fn cooked_table_is_the_jump_ahead() {
        assert_eq!(cooked_by_jump(), *cooked());
        assert_eq!(cooked()[0] as i64, -4_181_792_142_133_755_926);
        assert_eq!(cooked()[2] as i64, 1_395_769_623_340_756_751);
    }

    /// Every column of every table the write scenarios create gets the tag Dolt gave it
    /// (recorded from `dolt schema tags`), tables taken in creation order.
    #[test]
    fn tags_of_every_created_column_are_dolts() {
        let dir = prollystore_test_vectors::require("dolt-write");
        let mut checked = 0;
        for scenario in ["basic", "branches", "types"] {
            let ops = std::fs::read_to_string(dir.join(scenario).join("ops.jsonl")).unwrap();
            let mut used = HashSet::new();
            for line in ops.lines() {
                let op: serde_json::Value = serde_json::from_str(line).unwrap();
                if op["op"] != "create_table" {
                    continue;
                }
                let table = op["table"].as_str().unwrap();
                let cols = op["columns"].as_array().unwrap();
                let spec: Vec<(&str, NomsKind)> = cols
                    .iter()
                    .map(|c| {
                        let ty = c["type"].as_str().unwrap();
                        let kind =
                            kind_of(&SqlType::parse(ty)).unwrap_or_else(|| panic!("kind of {ty}"));
                        (c["name"].as_str().unwrap(), kind)
                    })
                    .collect();
                let ours = tags_for_new_table(&mut used, table, &spec);
                let theirs: Vec<u64> = cols.iter().map(|c| c["tag"].as_u64().unwrap()).collect();
                assert_eq!(ours, theirs, "{scenario} table {table}");
                checked += ours.len();
            }
        }
        assert!(checked > 40, "{checked}");
    }

    #[test]
    fn go_rand_draws_below_any_bound() {
        let mut r = GoRand::new(-5);
        for n in [1i64, 3, 1000, 16384, i64::MAX] {
            assert!((0..n).contains(&r.int63n(n)));
        }
        assert_eq!(simple("My Table_1"), "mytable1");
    }
}
