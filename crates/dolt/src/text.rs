//! Allocation-free text forms of SQL values, appended to a byte buffer exactly as `dolt sql`
//! prints them: integers, Go's shortest float text, decimals with the column's scale, dates,
//! times and datetimes. The CSV export writes every row through these, so none of them touches
//! the heap in the common cases.

use std::fmt::Write as _;

use prollystore_format::tuple::{datetime_text, Date, ZERO_DATETIME_MICROS};

use crate::db::civil_from_days;

/// Two ASCII digits of every number below 100, for writing integers two digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Writes the decimal digits of `v` into the end of `buf`, returning where they start.
fn digits_u128(mut v: u128, buf: &mut [u8; 40]) -> usize {
    let mut at = buf.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    at
}

/// Writes the decimal digits of `v` into the end of `buf` (u64 arithmetic), returning where they
/// start.
fn digits_u64(mut v: u64, buf: &mut [u8; 20]) -> usize {
    let mut at = buf.len();
    while v >= 100 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if v >= 10 {
        let pair = v as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    at
}

/// Appends `v` in decimal.
#[inline]
pub fn write_u64(out: &mut Vec<u8>, v: u64) {
    let mut buf = [0u8; 20];
    let at = digits_u64(v, &mut buf);
    out.extend_from_slice(&buf[at..]);
}

/// Appends `v` in decimal, with a `-` when negative.
#[inline]
pub fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    write_u64(out, v.unsigned_abs());
}

/// Appends `v` with at least `width` digits (zero-padded); `v` below 10^width fits exactly.
#[inline]
fn write_padded(out: &mut Vec<u8>, v: u64, width: usize) {
    let mut buf = [0u8; 20];
    let at = digits_u64(v, &mut buf);
    let len = buf.len() - at;
    out.extend(std::iter::repeat_n(b'0', width.saturating_sub(len)));
    out.extend_from_slice(&buf[at..]);
}

/// A fixed-size `fmt::Write` target on the stack, for Rust's float formatting without a heap
/// `String`. Overflow reports `fmt::Error` (callers then fall back to the heap).
struct StackText {
    buf: [u8; 64],
    len: usize,
}

impl StackText {
    fn new() -> StackText {
        StackText {
            buf: [0; 64],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

impl std::fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(std::fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Appends Go's `strconv.FormatFloat(v, 'g', -1, 64)` of a DOUBLE.
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    let mut shortest = StackText::new();
    if write!(shortest, "{v:e}").is_err() {
        out.extend_from_slice(format_go_float_slow(v, &format!("{v:e}")).as_bytes());
        return;
    }
    write_go_float(out, v, shortest.as_str());
}

/// Appends Go's `strconv.FormatFloat(float64(v), 'g', -1, 32)` of a FLOAT.
pub fn write_f32(out: &mut Vec<u8>, v: f32) {
    let mut shortest = StackText::new();
    if write!(shortest, "{v:e}").is_err() {
        out.extend_from_slice(format_go_float_slow(f64::from(v), &format!("{v:e}")).as_bytes());
        return;
    }
    write_go_float(out, f64::from(v), shortest.as_str());
}

/// Number of significant digits in Rust's `{:e}` text (at least 1).
fn digit_count(exp_text: &str) -> usize {
    let mant = exp_text.split('e').next().unwrap_or("");
    mant.bytes().filter(u8::is_ascii_digit).count().max(1)
}

/// Given Rust's shortest `{:e}` text of a value, appends Go's `'g'` text of `v`. Rust's
/// shortest digits can round an exact tie up where Go rounds it to even, so the exact value is
/// re-formatted with the same number of digits (Rust's exact formatting rounds half to even).
fn write_go_float(out: &mut Vec<u8>, v: f64, shortest: &str) {
    if !v.is_finite() {
        out.extend_from_slice(go_float_g(v, shortest).as_bytes());
        return;
    }
    let n = digit_count(shortest);
    let mut exact = StackText::new();
    if write!(exact, "{:.*e}", n - 1, v).is_err() {
        out.extend_from_slice(format_go_float_slow(v, shortest).as_bytes());
        return;
    }
    write_go_g(out, v, exact.as_str());
}

/// The heap-allocating path, for texts longer than the stack buffer (never for real floats).
fn format_go_float_slow(v: f64, shortest: &str) -> String {
    if !v.is_finite() {
        return go_float_g(v, shortest);
    }
    let n = digit_count(shortest);
    go_float_g(v, &format!("{:.*e}", n - 1, v))
}

/// Go's `'g'` text (as a `String`) of `v`, given its `{:e}` text with the digits to show.
pub(crate) fn go_float_g(v: f64, exp_text: &str) -> String {
    let mut out = Vec::new();
    write_go_g(&mut out, v, exp_text);
    String::from_utf8(out).unwrap_or_default()
}

/// Appends Go's `'g'` text of `v` given its `{:e}` text with the digits to show: exponent form
/// for decimal exponents below −4 or from 6 on (Go's rule for shortest formatting), plain
/// notation otherwise.
fn write_go_g(out: &mut Vec<u8>, v: f64, exp_text: &str) {
    if v.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if v.is_infinite() {
        out.extend_from_slice(if v > 0.0 { b"+Inf" } else { b"-Inf" });
        return;
    }
    let (mant, exp) = exp_text.split_once('e').unwrap_or((exp_text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant),
    };
    // At most 17 significant digits for an f64 (more only for absurd requests).
    let mut digits = [0u8; 64];
    let mut nd = 0usize;
    for b in mant.bytes().filter(u8::is_ascii_digit) {
        if let Some(slot) = digits.get_mut(nd) {
            *slot = b;
            nd += 1;
        }
    }
    let digits = digits.get(..nd).unwrap_or(&[]);
    if neg {
        out.push(b'-');
    }
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.extend_from_slice(first);
        if !rest.is_empty() {
            out.push(b'.');
            out.extend_from_slice(rest);
        }
        out.push(b'e');
        out.push(if exp < 0 { b'-' } else { b'+' });
        write_padded(out, u64::from(exp.unsigned_abs()), 2);
        return;
    }
    let nd = nd as i32;
    if exp >= nd - 1 {
        out.extend_from_slice(digits);
        out.extend(std::iter::repeat_n(b'0', (exp - (nd - 1)) as usize));
    } else if exp >= 0 {
        let (a, b) = digits.split_at((exp + 1) as usize);
        out.extend_from_slice(a);
        out.push(b'.');
        out.extend_from_slice(b);
    } else {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', (-exp - 1) as usize));
        out.extend_from_slice(digits);
    }
}

/// Most zeros a decimal's text may be padded with; real decimals have at most 65 digits, so
/// only a corrupted exponent reaches this (and then gets a bounded, wrong-looking text rather
/// than gigabytes of zeros).
const MAX_DECIMAL_PAD: usize = 256;

/// Appends a stored decimal (`(−1)^negative · digits · 10^exponent`, `digits` ASCII, maybe with
/// leading zeros) with exactly `scale` fraction digits, truncating extra digits.
pub fn write_decimal_digits(
    out: &mut Vec<u8>,
    negative: bool,
    digits: &[u8],
    exponent: i32,
    scale: u8,
) {
    let start = digits
        .iter()
        .position(|&b| b != b'0')
        .unwrap_or(digits.len());
    let digits = digits.get(start..).unwrap_or(&[]);
    let scale = usize::from(scale);
    // value = digits × 10^exponent; shifted to `scale` fraction digits it is `kept` followed by
    // `zeros` zeros.
    let shift = i64::from(exponent) + scale as i64;
    let (kept, zeros) = if shift >= 0 {
        (digits, (shift as usize).min(MAX_DECIMAL_PAD))
    } else {
        let drop = usize::try_from(-shift).unwrap_or(usize::MAX);
        (
            digits
                .get(..digits.len().saturating_sub(drop))
                .unwrap_or(&[]),
            0,
        )
    };
    let nonzero = kept.iter().any(|&b| b != b'0');
    if negative && nonzero {
        out.push(b'-');
    }
    let len = kept.len() + zeros;
    // Left-pad with zeros to at least scale + 1 digits.
    let lead = (scale + 1).saturating_sub(len);
    let total = len + lead;
    let int_len = total - scale;
    let mut pos = 0usize;
    let mut put = |out: &mut Vec<u8>, b: u8| {
        if pos == int_len {
            out.push(b'.');
        }
        out.push(b);
        pos += 1;
    };
    for _ in 0..lead {
        put(out, b'0');
    }
    for &b in kept {
        put(out, b);
    }
    for _ in 0..zeros {
        put(out, b'0');
    }
}

/// Appends a decimal given its coefficient as a u128 (the common, allocation-free case).
pub fn write_decimal_u128(
    out: &mut Vec<u8>,
    negative: bool,
    coeff: u128,
    exponent: i32,
    scale: u8,
) {
    let mut buf = [0u8; 40];
    let at = digits_u128(coeff, &mut buf);
    write_decimal_digits(out, negative, buf.get(at..).unwrap_or(&[]), exponent, scale);
}

/// Appends `YYYY-MM-DD` of the stored date parts.
pub fn write_date(out: &mut Vec<u8>, d: Date) {
    write_padded(out, u64::from(d.year), 4);
    out.push(b'-');
    write_padded(out, u64::from(d.month), 2);
    out.push(b'-');
    write_padded(out, u64::from(d.day), 2);
}

/// Appends a TIME (microseconds) as `[-]HH:MM:SS.ffffff`.
pub fn write_time(out: &mut Vec<u8>, us: i64) {
    if us < 0 {
        out.push(b'-');
    }
    let a = us.unsigned_abs();
    let secs = a / 1_000_000;
    write_padded(out, secs / 3600, 2);
    out.push(b':');
    write_padded(out, (secs / 60) % 60, 2);
    out.push(b':');
    write_padded(out, secs % 60, 2);
    out.push(b'.');
    write_padded(out, a % 1_000_000, 6);
}

/// Appends a DATETIME/TIMESTAMP (Unix microseconds) as `YYYY-MM-DD HH:MM:SS[.f…]` with `fsp`
/// fraction digits (at most 6).
pub fn write_datetime(out: &mut Vec<u8>, us: i64, fsp: u8) {
    const MICROS_PER_DAY: i64 = 86_400_000_000;
    let keep = if fsp == 0 {
        19
    } else {
        20 + usize::from(fsp.min(6))
    };
    let days = us.div_euclid(MICROS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    if us == ZERO_DATETIME_MICROS || !(0..=9999).contains(&y) {
        // The zero datetime, and years that do not print as four digits: the general text.
        let t = datetime_text(us);
        out.extend_from_slice(t.as_bytes().get(..keep).unwrap_or(t.as_bytes()));
        return;
    }
    let rem = us.rem_euclid(MICROS_PER_DAY) as u64;
    let secs = rem / 1_000_000;
    write_padded(out, y as u64, 4);
    out.push(b'-');
    write_padded(out, u64::from(mo), 2);
    out.push(b'-');
    write_padded(out, u64::from(d), 2);
    out.push(b' ');
    write_padded(out, secs / 3600, 2);
    out.push(b':');
    write_padded(out, (secs / 60) % 60, 2);
    out.push(b':');
    write_padded(out, secs % 60, 2);
    if keep > 19 {
        out.push(b'.');
        let mut frac = [0u8; 6];
        let mut f = rem % 1_000_000;
        for slot in frac.iter_mut().rev() {
            *slot = b'0' + (f % 10) as u8;
            f /= 10;
        }
        out.extend_from_slice(frac.get(..keep - 20).unwrap_or(&frac));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(f: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut out = Vec::new();
        f(&mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers() {
        for v in [0i64, 7, 10, 99, 100, -1, i64::MIN, i64::MAX, 1_234_567_890] {
            assert_eq!(s(|o| write_i64(o, v)), v.to_string());
        }
        assert_eq!(s(|o| write_u64(o, u64::MAX)), u64::MAX.to_string());
    }

    #[test]
    fn floats() {
        assert_eq!(s(|o| write_f64(o, 5e-275)), "5e-275");
        assert_eq!(s(|o| write_f64(o, -3e264)), "-3e+264");
        assert_eq!(s(|o| write_f64(o, -660.642578125)), "-660.642578125");
        assert_eq!(s(|o| write_f64(o, 0.0001)), "0.0001");
        assert_eq!(s(|o| write_f64(o, 0.00001)), "1e-05");
        assert_eq!(s(|o| write_f64(o, 100.0)), "100");
        assert_eq!(s(|o| write_f64(o, 100000.0)), "100000");
        assert_eq!(s(|o| write_f64(o, 1e6)), "1e+06");
        assert_eq!(s(|o| write_f64(o, 1234567.5)), "1.2345675e+06");
        assert_eq!(s(|o| write_f64(o, 0.0)), "0");
        assert_eq!(s(|o| write_f64(o, f64::NAN)), "NaN");
        assert_eq!(s(|o| write_f64(o, f64::NEG_INFINITY)), "-Inf");
        assert_eq!(s(|o| write_f32(o, 0.1)), "0.1");
        assert_eq!(s(|o| write_f32(o, 3.4028235e38)), "3.4028235e+38");
    }

    #[test]
    fn decimals() {
        let d = |neg, digits: &str, e, scale| {
            s(|o| write_decimal_digits(o, neg, digits.as_bytes(), e, scale))
        };
        assert_eq!(d(true, "6033988078", -4, 4), "-603398.8078");
        assert_eq!(d(false, "15", -1, 3), "1.500");
        assert_eq!(d(false, "0", 0, 2), "0.00");
        assert_eq!(d(false, "5", -3, 3), "0.005");
        assert_eq!(d(true, "5", -3, 2), "0.00");
        assert_eq!(d(false, "123", 2, 0), "12300");
        assert_eq!(s(|o| write_decimal_u128(o, false, 1999, -2, 2)), "19.99");
    }

    #[test]
    fn temporal() {
        assert_eq!(
            s(|o| write_datetime(o, 951_827_696_123_456, 6)),
            "2000-02-29 12:34:56.123456"
        );
        assert_eq!(
            s(|o| write_datetime(o, 951_827_696_123_456, 0)),
            "2000-02-29 12:34:56"
        );
        assert_eq!(
            s(|o| write_datetime(o, 951_827_696_123_456, 2)),
            "2000-02-29 12:34:56.12"
        );
        assert_eq!(
            s(|o| write_datetime(o, -1, 6)),
            "1969-12-31 23:59:59.999999"
        );
        assert_eq!(
            s(|o| write_datetime(o, ZERO_DATETIME_MICROS, 0)),
            "0000-00-00 00:00:00"
        );
        assert_eq!(
            s(|o| write_date(o, Date::from_raw(132_645_405))),
            "2024-02-29"
        );
        assert_eq!(s(|o| write_time(o, -1)), "-00:00:00.000001");
    }
}
