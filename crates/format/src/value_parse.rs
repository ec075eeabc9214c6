//! The one reader of SQL value text: integers, decimals, dates, times, datetimes and hex, as
//! Dolt's importer takes them (checked against `dolt table import` of the same fields). Every
//! text importer reads through these — the CLI's native rows, the Dolt writer's general path
//! and its direct import fields, keys given on the command line, `--date` of a commit — so a
//! spelling is taken, refused or read to the same value everywhere. Nothing here allocates
//! except [`parse_hex`] and the decimal scaling ([`decimal_parts`], [`decimal_at_scale`]);
//! callers trim spaces where their format allows them.
//!
//! | value | text |
//! | --- | --- |
//! | integer | `[+-]digits` (leading zeros allowed) |
//! | decimal | `[+-]digits[.digits][(e\|E)[+-]digits]` ([`parse_decimal_text`], split, not scaled) |
//! | date | `Y-M-D`: a year of 1–4 digits, month and day of 1–2; a real calendar date, or the zero date `0000-00-00` |
//! | time | `[-]H:MM[:SS][.ffffff]`, hours of 1–4 digits |
//! | datetime | `DATE[( \|T)H:MM[:SS][.ffffff]]` (hours below 24; none is midnight; more fraction digits round to the microsecond); the zero date only as `0000-00-00 00:00:00` |
//! | hex | two hex digits a byte, either case |
//!
//! ```
//! use prollystore_format::value_parse::{parse_date, parse_datetime, parse_time};
//! assert_eq!(parse_date(b"2024-1-5").unwrap().to_string(), "2024-01-05");
//! assert!(parse_date(b"2024-02-30").is_none()); // no such day, as Dolt refuses it
//! assert_eq!(parse_time(b"-1:00:00.5"), Some(-3_600_500_000));
//! assert_eq!(parse_datetime(b"1970-01-01T00:01"), Some(60_000_000));
//! ```

use crate::tuple::{days_from_civil, round_datetime, Date, ZERO_DATETIME_MICROS};

/// Microseconds in a day.
const DAY_MICROS: i64 = 86_400_000_000;

/// An optionally signed decimal integer (`-12`, `+7`, `007`).
#[inline]
pub fn parse_i64(t: &[u8]) -> Option<i64> {
    let (negative, digits) = match t.split_first()? {
        (b'-', rest) => (true, rest),
        (b'+', rest) => (false, rest),
        _ => (false, t),
    };
    let v = parse_digits(digits)?;
    if negative {
        (v <= 1 << 63).then(|| (v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// An unsigned decimal integer (`+` allowed, leading zeros too).
#[inline]
pub fn parse_u64(t: &[u8]) -> Option<u64> {
    parse_digits(t.strip_prefix(b"+").unwrap_or(t))
}

/// One or more ASCII digits as a `u64`; `None` when empty, not all digits, or too large.
#[inline]
fn parse_digits(mut d: &[u8]) -> Option<u64> {
    while let [b'0', rest @ ..] = d {
        if rest.is_empty() {
            break;
        }
        d = rest;
    }
    if d.is_empty() || d.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    if d.len() < 20 {
        // At most 19 digits: below 10^19, no overflow possible.
        for &c in d {
            let x = c.wrapping_sub(b'0');
            if x > 9 {
                return None;
            }
            v = v * 10 + u64::from(x);
        }
    } else {
        for &c in d {
            let x = c.wrapping_sub(b'0');
            if x > 9 {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(x))?;
        }
    }
    Some(v)
}

/// Decimal text split into its parts, borrowed from the text: the digits before and after the
/// point and the power of ten written after them (`12.50e3`: `12`, `50`, `3`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DecimalText<'a> {
    /// A `-` was written (also for a zero).
    pub negative: bool,
    /// The digits before the point (possibly empty, possibly with leading zeros).
    pub whole: &'a [u8],
    /// The digits after the point (possibly empty).
    pub fraction: &'a [u8],
    /// The exponent written after `e`/`E`, 0 when none.
    pub exponent: i32,
}

/// `[+-]digits[.digits][(e|E)[+-]digits]`, with at least one digit before or after the point.
pub fn parse_decimal_text(t: &[u8]) -> Option<DecimalText<'_>> {
    let (negative, rest) = match t.split_first()? {
        (b'-', r) => (true, r),
        (b'+', r) => (false, r),
        _ => (false, t),
    };
    // One pass: digits, at most one point, then an exponent or the end.
    let mut point = None;
    let mut end = rest.len();
    for (k, &c) in rest.iter().enumerate() {
        match c {
            b'0'..=b'9' => {}
            b'.' if point.is_none() => point = Some(k),
            b'e' | b'E' => {
                end = k;
                break;
            }
            _ => return None,
        }
    }
    let mantissa = &rest[..end];
    let exponent = match rest.get(end + 1..) {
        Some(e) => i32::try_from(parse_i64(e)?).ok()?,
        None => 0,
    };
    let (whole, fraction) = match point {
        Some(p) => (&mantissa[..p], &mantissa[p + 1..]),
        None => (mantissa, &mantissa[mantissa.len()..]),
    };
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    Some(DecimalText {
        negative,
        whole,
        fraction,
        exponent,
    })
}

/// Splits decimal text (`[+-]digits[.digits][e[+-]n]`, spaces around it ignored) into sign,
/// digits and the power of ten they are scaled by (never positive; zeros are put in front so
/// that there are at least as many digits as the fraction has).
pub fn decimal_parts(text: &str) -> std::result::Result<(bool, String, i32), String> {
    let bad = || format!("{text:?} is not a decimal number");
    let d = parse_decimal_text(text.trim().as_bytes()).ok_or_else(bad)?;
    // The digits a DECIMAL(65, 30) can hold, with room to round: anything longer is refused
    // rather than spelled out digit by digit.
    const MOST: i64 = 130;
    let exponent = i64::from(d.exponent) - d.fraction.len() as i64;
    let zeros_after = exponent.max(0);
    let written = (d.whole.len() + d.fraction.len()) as i64;
    if written + zeros_after > MOST || exponent < -MOST {
        return Err(bad());
    }
    let zeros_before = (-exponent - written).max(0);
    let mut digits = String::with_capacity((written + zeros_before + zeros_after) as usize);
    digits.extend(std::iter::repeat_n('0', zeros_before as usize));
    for &c in d.whole.iter().chain(d.fraction) {
        digits.push(char::from(c));
    }
    digits.extend(std::iter::repeat_n('0', zeros_after as usize));
    Ok((d.negative, digits, exponent.min(0) as i32))
}

/// Decimal text (any spelling [`decimal_parts`] reads) with exactly `scale` fraction digits,
/// rounded half away from zero as MySQL stores a longer fraction: what Dolt stores for it in
/// a DECIMAL column of that scale.
pub fn decimal_at_scale(text: &str, scale: u8) -> std::result::Result<String, String> {
    let (negative, digits, exponent) = decimal_parts(text)?;
    Ok(scaled_decimal_text(negative, &digits, exponent, scale))
}

/// Decimal text with exactly `scale` fraction digits (rounding half away from zero, as MySQL
/// stores a longer fraction).
fn scaled_decimal_text(negative: bool, digits: &str, exponent: i32, scale: u8) -> String {
    let frac_len = (-exponent) as usize;
    let split = digits.len() - frac_len;
    let (whole, frac) = digits.split_at(split);
    let mut frac = frac.to_string();
    let scale = usize::from(scale);
    let mut whole: Vec<u8> = whole.trim_start_matches('0').bytes().collect();
    let mut round_up = false;
    if frac.len() > scale {
        round_up = frac.as_bytes().get(scale).is_some_and(|&d| d >= b'5');
        frac.truncate(scale);
    }
    while frac.len() < scale {
        frac.push('0');
    }
    let mut all: Vec<u8> = whole.drain(..).chain(frac.bytes()).collect();
    if round_up {
        let mut k = all.len();
        loop {
            if k == 0 {
                all.insert(0, b'1');
                break;
            }
            k -= 1;
            if all[k] == b'9' {
                all[k] = b'0';
            } else {
                all[k] += 1;
                break;
            }
        }
    }
    let (w, f) = all.split_at(all.len() - scale);
    let w = if w.is_empty() { "0".as_bytes() } else { w };
    let zero = w.iter().chain(f).all(|&d| d == b'0');
    let mut out = String::new();
    if negative && !zero {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(w).unwrap_or("0"));
    if scale > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(f).unwrap_or(""));
    }
    out
}

/// `Y-M-D`: a year of one to four digits, a month and a day of one or two (`2024-01-05`,
/// `2024-1-5`), naming a real calendar date (`2024-02-30` is refused, as Dolt refuses it), or
/// MySQL's zero date `0000-00-00`. A zero month or day in an otherwise real date is refused,
/// as Dolt refuses it.
pub fn parse_date(t: &[u8]) -> Option<Date> {
    let (year, month, day) = match *t {
        // The usual spelling, read without a loop.
        [y0, y1, y2, y3, b'-', m0, m1, b'-', d0, d1] => (
            two_digits(y0, y1)? * 100 + two_digits(y2, y3)?,
            two_digits(m0, m1)?,
            two_digits(d0, d1)?,
        ),
        _ => {
            let (year, rest) = leading_number(t, 4)?;
            let (month, rest) = leading_number(rest.strip_prefix(b"-")?, 2)?;
            let (day, rest) = leading_number(rest.strip_prefix(b"-")?, 2)?;
            if !rest.is_empty() {
                return None;
            }
            (year, month, day)
        }
    };
    let date = Date {
        year: year as u16,
        month: month as u8,
        day: day as u8,
    };
    let real = (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month);
    (real || date == Date::ZERO).then_some(date)
}

/// Two ASCII digits as a number.
#[inline]
fn two_digits(a: u8, b: u8) -> Option<u32> {
    let (a, b) = (a.wrapping_sub(b'0'), b.wrapping_sub(b'0'));
    (a < 10 && b < 10).then(|| u32::from(a) * 10 + u32::from(b))
}

/// The days of `month` (1–12) in `year` of the proleptic Gregorian calendar.
fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        _ => 31,
    }
}

/// A TIME: `[-]H:MM[:SS][.ffffff]` (hours of one to four digits; minutes and seconds of one or
/// two, below 60; up to six fraction digits) → signed microseconds. (Dolt 2.3.1 takes more
/// digits for a TIME too, but rounds them by the last digit alone: `.12345649` to `.123457`,
/// `.12345650` to `.123456`; such text is refused here rather than stored either way.)
pub fn parse_time(t: &[u8]) -> Option<i64> {
    let (negative, t) = match t.split_first()? {
        (b'-', rest) => (true, rest),
        _ => (false, t),
    };
    match clock(t, 4)? {
        (us, Rest::None) => Some(if negative { -us } else { us }),
        _ => None,
    }
}

/// A DATETIME: `DATE[( |T)H:MM[:SS][.ffffff]]` (a time of day; none is midnight), UTC → Unix
/// microseconds. The zero date only as the zero datetime (`0000-00-00 00:00:00`). More than
/// six fraction digits round to the nearest microsecond, halves up, from the first nine (as
/// Dolt reads them: `.1234565` is `.123457`, `23:59:59.9999995` the next midnight).
pub fn parse_datetime(t: &[u8]) -> Option<i64> {
    parse_datetime_at(t, 6)
}

/// [`parse_datetime`] rounded to `fsp` fraction digits (a column's precision) in one step,
/// halves up, as Dolt rounds the text it is given: `00:00:00.4999996` is `00:00:00` at
/// precision 0, where rounding its microseconds first would give `00:00:01`.
pub fn parse_datetime_at(t: &[u8], fsp: u8) -> Option<i64> {
    let at = match t.get(10) {
        Some(b' ' | b'T') => Some(10),
        _ => t.iter().position(|&c| c == b' ' || c == b'T'),
    };
    let (date, time) = match at {
        Some(p) => (&t[..p], Some(&t[p + 1..])),
        None => (t, None),
    };
    let d = parse_date(date)?;
    let (time_of_day, past) = match time {
        Some(x) => clock(x, 2).filter(|&(us, _)| us < DAY_MICROS)?,
        None => (0, Rest::None),
    };
    if d == Date::ZERO {
        return (time_of_day == 0).then_some(ZERO_DATETIME_MICROS);
    }
    let days = days_from_civil(i64::from(d.year), i64::from(d.month), i64::from(d.day));
    let micros = days.checked_mul(DAY_MICROS)?.checked_add(time_of_day)?;
    Some(match (fsp, past) {
        (6.., Rest::Up) => micros + 1,
        (6.., _) => micros,
        // Below microseconds, the truncated value rounds as the whole one does: a half of a
        // coarser unit is a whole number of microseconds.
        _ => round_datetime(micros, fsp),
    })
}

/// What a clock's fraction digits past the sixth say about its microseconds.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rest {
    /// Six digits or fewer.
    None,
    /// More, rounding down (the seventh to ninth below 500).
    Down,
    /// More, rounding up.
    Up,
}

/// `H:MM[:SS][.ffffff…]` with at most `hour_digits` hour digits → microseconds, and what any
/// fraction digits past the sixth say (digits past the ninth are ignored, as Dolt ignores
/// them).
fn clock(t: &[u8], hour_digits: usize) -> Option<(i64, Rest)> {
    let (h, m, s, mut rest) = match *t {
        // The usual spelling, read without a loop.
        [h0, h1, b':', m0, m1, b':', s0, s1, ref rest @ ..] => (
            two_digits(h0, h1)?,
            two_digits(m0, m1)?,
            two_digits(s0, s1)?,
            rest,
        ),
        _ => {
            let (h, rest) = leading_number(t, hour_digits)?;
            let (m, mut rest) = leading_number(rest.strip_prefix(b":")?, 2)?;
            let mut s = 0;
            if let Some(r) = rest.strip_prefix(b":") {
                (s, rest) = leading_number(r, 2)?;
            }
            (h, m, s, rest)
        }
    };
    let mut micros = 0i64;
    let mut past = Rest::None;
    if let Some(f) = rest.strip_prefix(b".") {
        if f.len() > 6 {
            if !f.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let nanos = f[6..]
                .iter()
                .take(3)
                .fold(0, |n, &d| n * 10 + u32::from(d - b'0'));
            let nanos = nanos * 10u32.pow(3 - f[6..].len().min(3) as u32);
            past = if nanos >= 500 { Rest::Up } else { Rest::Down };
        }
        for k in 0..6 {
            let d = match f.get(k) {
                Some(&d) if d.is_ascii_digit() => d - b'0',
                Some(_) => return None,
                None => 0,
            };
            micros = micros * 10 + i64::from(d);
        }
        rest = &[];
    }
    if !rest.is_empty() || m > 59 || s > 59 {
        return None;
    }
    let us = ((i64::from(h) * 60 + i64::from(m)) * 60 + i64::from(s)) * 1_000_000 + micros;
    Some((us, past))
}

/// The one to `max` ASCII digits `t` starts with, as a number, and what follows them.
#[inline]
fn leading_number(t: &[u8], max: usize) -> Option<(u32, &[u8])> {
    let n = t
        .iter()
        .take(max + 1)
        .take_while(|c| c.is_ascii_digit())
        .count();
    if n == 0 || n > max {
        return None;
    }
    let v = t[..n]
        .iter()
        .fold(0u32, |v, &c| v * 10 + u32::from(c - b'0'));
    Some((v, &t[n..]))
}

/// The value of one hex digit (either case).
#[inline]
pub fn hex_digit(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Hex text (two digits a byte, either case) into `out`, cleared first; why not on failure.
pub fn parse_hex_into(t: &[u8], out: &mut Vec<u8>) -> Result<(), &'static str> {
    out.clear();
    if !t.len().is_multiple_of(2) {
        return Err("odd number of hex digits");
    }
    out.reserve(t.len() / 2);
    for pair in t.chunks_exact(2) {
        match (hex_digit(pair[0]), hex_digit(pair[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => return Err("not hex"),
        }
    }
    Ok(())
}

/// The bytes spelled by `hex` (two hex digits a byte), or `None` for anything else.
pub fn parse_hex(hex: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    parse_hex_into(hex.as_bytes(), &mut out).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_text_is_scaled_and_rounded() {
        let t = |s: &str, scale| {
            let (n, d, e) = decimal_parts(s).unwrap();
            scaled_decimal_text(n, &d, e, scale)
        };
        assert_eq!(t("1.5", 4), "1.5000");
        assert_eq!(t("-603398.8078", 4), "-603398.8078");
        assert_eq!(t("0.99995", 4), "1.0000");
        assert_eq!(t("-0.00001", 4), "0.0000");
        assert_eq!(t("12", 0), "12");
        assert_eq!(t(".5", 2), "0.50");
        // Exponents, as `dolt table import` takes them (1e3 → 1000.00, 1.5E-1 → 0.15).
        assert_eq!(t("1e3", 2), "1000.00");
        assert_eq!(t("1.5E-1", 2), "0.15");
        assert_eq!(t("+12.345", 2), "12.35");
        assert_eq!(t("5e-3", 2), "0.01");
        assert_eq!(t("-4e-3", 2), "0.00");
        assert!(decimal_parts("1e-400").is_err());
        assert!(decimal_parts("1e400").is_err());
        assert!(decimal_parts("1e").is_err());
    }

    /// Dolt 2.3.1's readings of datetimes with more than six fraction digits (`dolt sql -q
    /// "INSERT …"` into a DATETIME(6), then `SELECT`): the nearest microsecond, halves up,
    /// from the first nine digits. A TIME with as many is refused (Dolt rounds those by
    /// their last digit alone).
    #[test]
    fn datetimes_with_more_than_six_fraction_digits_round_as_dolt_rounds_them() {
        let text = |t: &[u8]| {
            let us = parse_datetime(t).unwrap();
            crate::tuple::datetime_text(us)
        };
        for (given, dolt) in [
            (
                "2024-01-01 00:00:00.123456789",
                "2024-01-01 00:00:00.123457",
            ),
            ("2024-01-01 00:00:00.12345649", "2024-01-01 00:00:00.123456"),
            ("2024-01-01 00:00:00.12345650", "2024-01-01 00:00:00.123457"),
            (
                "2024-01-01 00:00:00.1234564999",
                "2024-01-01 00:00:00.123456",
            ),
            (
                "2024-01-01 00:00:00.123456999999",
                "2024-01-01 00:00:00.123457",
            ),
            ("2024-01-01 23:59:59.9999995", "2024-01-02 00:00:00.000000"),
            ("1969-12-31 23:59:59.9999988", "1969-12-31 23:59:59.999999"),
        ] {
            assert_eq!(text(given.as_bytes()), dolt, "{given}");
        }
        // Rounded once, to the column's precision: Dolt's `dolt table import` of the same text
        // into DATETIME and TIMESTAMP(3) columns.
        let at = |t: &str, fsp| {
            crate::tuple::datetime_text(parse_datetime_at(t.as_bytes(), fsp).unwrap())
        };
        assert_eq!(
            at("2024-01-01 00:00:00.4999996", 0),
            "2024-01-01 00:00:00.000000"
        );
        assert_eq!(
            at("2024-01-01 23:59:59.9999995", 0),
            "2024-01-02 00:00:00.000000"
        );
        assert_eq!(
            at("2024-01-01 00:00:00.1234999999", 3),
            "2024-01-01 00:00:00.123000"
        );
        assert_eq!(
            at("2024-01-01 00:00:00.9995001", 3),
            "2024-01-01 00:00:01.000000"
        );
        assert_eq!(at("2024-01-01 00:00:00.5", 0), "2024-01-01 00:00:01.000000");
        assert_eq!(parse_datetime(b"2024-01-01 00:00:00.1234567x"), None);
        assert_eq!(parse_time(b"10:00:00.1234567"), None);
        assert_eq!(parse_time(b"-10:00:00.123456"), Some(-36_000_123_456));
    }

    #[test]
    fn integers() {
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775808"), None);
        assert_eq!(parse_i64(b"+0007"), Some(7));
        assert_eq!(parse_i64(b"00000000000000000000000000042"), Some(42));
        assert_eq!(parse_i64(b"-"), None);
        assert_eq!(parse_i64(b""), None);
        assert_eq!(parse_i64(b"1 "), None);
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_u64(b"0"), Some(0));
    }

    #[test]
    fn decimals() {
        let d = parse_decimal_text(b"-012.50e+3").unwrap();
        assert_eq!(
            (d.negative, d.whole, d.fraction, d.exponent),
            (true, &b"012"[..], &b"50"[..], 3)
        );
        assert_eq!(parse_decimal_text(b".5").unwrap().fraction, b"5");
        assert_eq!(parse_decimal_text(b"5.").unwrap().whole, b"5");
        for bad in [
            &b""[..],
            b".",
            b"-",
            b"1e",
            b"1.2.3",
            b"1,5",
            b" 1",
            b"e3",
            b"nan",
        ] {
            assert_eq!(
                parse_decimal_text(bad),
                None,
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// The spellings `dolt table import` (Dolt 2.3.1) took and refused in DATE and DATETIME
    /// columns, tried by hand on a scratch database.
    #[test]
    fn dates_as_dolt_takes_them() {
        let d = |t: &str| parse_date(t.as_bytes()).map(|d| d.to_string());
        assert_eq!(d("2024-1-5").as_deref(), Some("2024-01-05"));
        assert_eq!(d("0000-01-01").as_deref(), Some("0000-01-01"));
        assert_eq!(d("0000-00-00").as_deref(), Some("0000-00-00"));
        assert_eq!(d("2024-02-29").as_deref(), Some("2024-02-29"));
        for refused in [
            "2024-00-10",
            "2024-01-00",
            "2024-02-30",
            "2023-02-29",
            "2024-02-31",
            "10000-01-01",
            "2024-13-01",
            "2024/01/05",
            "20240105",
        ] {
            assert_eq!(d(refused), None, "{refused}");
        }
        let dt = |t: &str| parse_datetime(t.as_bytes());
        assert_eq!(dt("1970-01-01 00:00:01.5"), Some(1_500_000));
        assert_eq!(dt("2024-01-05 12:30"), dt("2024-01-05 12:30:00"));
        assert_eq!(dt("2024-01-05 7:5:3"), dt("2024-01-05 07:05:03"));
        assert_eq!(dt("0000-00-00 00:00:00"), Some(ZERO_DATETIME_MICROS));
        assert_eq!(dt("0000-00-00"), Some(ZERO_DATETIME_MICROS));
        assert_eq!(dt("0000-00-00 00:00:01"), None);
        assert_eq!(dt("2024-01-05 24:00:00"), None);
        // Rounded into the next day, as Dolt rounds it.
        assert_eq!(dt("2024-01-05 23:59:59.9999999"), dt("2024-01-06 00:00:00"));
    }

    #[test]
    fn times() {
        assert_eq!(
            parse_time(b"838:59:59"),
            Some(((838 * 60 + 59) * 60 + 59) * 1_000_000)
        );
        assert_eq!(parse_time(b"12:30"), Some(45_000_000_000));
        assert_eq!(parse_time(b"-0:00:00.000001"), Some(-1));
        assert_eq!(parse_time(b"12:00:00."), Some(43_200_000_000));
        for refused in [
            "12:60:00",
            "12:00:60",
            "12345:00:00",
            "12",
            "1:2:3:4",
            "--1:00:00",
            "1:00:00.1234567",
        ] {
            assert_eq!(parse_time(refused.as_bytes()), None, "{refused}");
        }
    }

    #[test]
    fn hex() {
        assert_eq!(parse_hex("0aFF"), Some(vec![10, 255]));
        assert_eq!(parse_hex("0a0"), None);
        assert_eq!(parse_hex("zz"), None);
        let mut out = vec![1, 2, 3];
        parse_hex_into(b"", &mut out).unwrap();
        assert!(out.is_empty());
    }
}
