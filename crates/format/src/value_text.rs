//! Allocation-free text forms of SQL values, appended to a byte buffer exactly as `dolt sql`
//! prints them: integers, Go's shortest float text, decimals with the column's scale, dates,
//! times and datetimes. The CSV export writes every row through these, so none of them touches
//! the heap in the common cases. Reading text is [`crate::value_parse`]'s.

use std::fmt::Write as _;

use crate::tuple::{civil_from_days, datetime_text, Date, ZERO_DATETIME_MICROS};

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

/// Powers of ten that fit in a u64.
const POW10: [u64; 20] = {
    let mut t = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Appends the decimal `(−1)^negative · c · 10^−scale` with exactly `scale` fraction digits
/// (as [`write_decimal_digits`] prints it, with no minus sign for zero). False, having written
/// nothing, when `scale` is beyond 19.
#[inline(always)]
pub fn write_scaled_u64(out: &mut Vec<u8>, negative: bool, c: u64, scale: u8) -> bool {
    let Some(&p) = POW10.get(usize::from(scale)) else {
        return false;
    };
    if negative && c != 0 {
        out.push(b'-');
    }
    write_u64(out, c / p);
    if scale > 0 {
        out.push(b'.');
        write_padded(out, c % p, usize::from(scale));
    }
    true
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
#[inline]
pub fn write_f64(out: &mut Vec<u8>, v: f64) {
    if !v.is_finite() {
        write_go_g(out, v, "");
        return;
    }
    let mut buf = zmij::Buffer::new();
    write_go_float(out, v, buf.format_finite(v), |t| t.parse::<f64>() == Ok(v));
}

/// Appends Go's `encoding/json` text of a finite DOUBLE (what `dolt sql -r json` prints, and
/// how Dolt writes numbers into JSON documents): Go's shortest digits, positional from 1e-6
/// up to 1e21, else with an exponent carrying its sign (`1e+21`, `1.5e-7`).
pub fn write_json_f64(out: &mut Vec<u8>, v: f64) {
    let a = v.abs();
    let exponent = a != 0.0 && !(1e-6..1e21).contains(&a);
    let mut buf = zmij::Buffer::new();
    let digits = go_shortest_digits(v, buf.format_finite(v), |t| t.parse::<f64>() == Ok(v));
    write_json_digits(out, v, digits, exponent);
}

/// [`write_json_f64`] of a FLOAT: its own shortest digits (Go's choice between two that
/// read back: `-378889.625` is `-378889.62`), and the range checked in 32 bits.
pub fn write_json_f32(out: &mut Vec<u8>, v: f32) {
    let a = v.abs();
    let exponent = a != 0.0 && !(1e-6f32..1e21f32).contains(&a);
    let mut buf = zmij::Buffer::new();
    let digits = go_shortest_digits(f64::from(v), buf.format_finite(v), |t| {
        t.parse::<f32>() == Ok(v)
    });
    write_json_digits(out, f64::from(v), digits, exponent);
}

/// `digits` (from [`go_shortest_digits`]; `None`: zero) of `v` in `encoding/json`'s layout:
/// positional, or if `exponent` a mantissa and an unpadded signed exponent.
fn write_json_digits(
    out: &mut Vec<u8>,
    v: f64,
    digits: Option<([u8; 20], usize, i32)>,
    exponent: bool,
) {
    let Some((digits, n, e10)) = digits else {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    };
    if v.is_sign_negative() {
        out.push(b'-');
    }
    let sig = digits.get(..n).unwrap_or(&[]);
    if exponent {
        write_exponent(out, sig, e10, 1);
    } else {
        write_positional(out, sig, e10);
    }
}

/// Appends Go's `strconv.FormatFloat(float64(v), 'g', -1, 32)` of a FLOAT.
#[inline]
pub fn write_f32(out: &mut Vec<u8>, v: f32) {
    if !v.is_finite() {
        write_go_g(out, f64::from(v), "");
        return;
    }
    let mut buf = zmij::Buffer::new();
    write_go_float(out, f64::from(v), buf.format_finite(v), |t| {
        t.parse::<f32>() == Ok(v)
    });
}

/// The significant digits (no leading or trailing zeros, at most 20) and the decimal exponent
/// of the first one, of a finite float's text in plain (`123.45`) or exponent (`1.2e-7`)
/// notation. `None` for zero.
fn parse_digits(text: &str) -> Option<([u8; 20], usize, i32)> {
    let bytes = text.as_bytes();
    let mut i = usize::from(bytes.first() == Some(&b'-'));
    let mut digits = [0u8; 20];
    let mut n = 0usize;
    // Digits before the point, and zeros skipped before the first significant digit.
    let mut int_len = 0i32;
    let mut leading = 0i32;
    let mut in_frac = false;
    let mut exp = 0i32;
    while let Some(&b) = bytes.get(i) {
        i += 1;
        match b {
            b'0'..=b'9' => {
                if !in_frac {
                    int_len += 1;
                }
                if n == 0 && b == b'0' {
                    leading += 1;
                } else {
                    *digits.get_mut(n)? = b;
                    n += 1;
                }
            }
            b'.' => in_frac = true,
            b'e' | b'E' => {
                let rest = bytes.get(i..)?;
                let (neg, rest) = match rest.split_first() {
                    Some((b'-', r)) => (true, r),
                    Some((b'+', r)) => (false, r),
                    _ => (false, rest),
                };
                if rest.is_empty() {
                    return None;
                }
                for &d in rest {
                    if !d.is_ascii_digit() {
                        return None;
                    }
                    exp = exp.checked_mul(10)?.checked_add(i32::from(d - b'0'))?;
                }
                if neg {
                    exp = -exp;
                }
                break;
            }
            _ => return None,
        }
    }
    while n > 0 && digits.get(n - 1) == Some(&b'0') {
        n -= 1;
    }
    if n == 0 {
        return None;
    }
    Some((digits, n, int_len - 1 - leading + exp))
}

/// `|v|` as `m × 2^k` with `m` odd; `None` for zero.
#[inline]
fn odd_parts(v: f64) -> Option<(u64, i32)> {
    let bits = v.abs().to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, k) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), biased - 1075)
    };
    if m == 0 {
        return None;
    }
    let tz = m.trailing_zeros();
    Some((m >> tz, k + tz as i32))
}

/// Go's text of `v` when its shortest text `text` (from zmij) is in plain notation with an
/// exponent that Go also prints plainly (−4 ≤ e < 6) and `v` cannot be a rounding midpoint
/// (the exponent test of [`is_midpoint`]): Go then prints the same digits, only without the
/// `.0` of whole numbers. False, having written nothing, for everything else.
#[inline]
fn write_plain_fast(out: &mut Vec<u8>, v: f64, text: &[u8]) -> bool {
    let (neg, body) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, text),
    };
    // Shortest text is digits, a point, and maybe an exponent (`e`, sign, digits): plain
    // notation is a point within the first seven bytes (at most six integer digits) and no `e`.
    let Some(dot) = body.iter().take(7).position(|&b| b == b'.') else {
        return false;
    };
    let (int, frac) = body.split_at(dot);
    let frac = frac.get(1..).unwrap_or(&[]);
    if frac.contains(&b'e') {
        return false;
    }
    let (Some(&first), Some(&last)) = (int.first(), frac.last()) else {
        return false;
    };
    // Significant digits, the decimal exponent of the first, and whether `v` is whole.
    let (n, e10, whole) = if first != b'0' {
        if int.len() > 6 {
            return false;
        }
        if frac == b"0" {
            let zeros = int.iter().rev().take_while(|&&b| b == b'0').count();
            (int.len() - zeros, int.len() as i32 - 1, true)
        } else if last == b'0' {
            return false;
        } else {
            (int.len() + frac.len(), int.len() as i32 - 1, false)
        }
    } else {
        let zeros = frac.iter().take_while(|&&b| b == b'0').count();
        if int.len() != 1 || zeros == frac.len() || zeros > 3 || last == b'0' {
            return false;
        }
        (frac.len() - zeros, -(zeros as i32) - 1, false)
    };
    if odd_parts(v).is_some_and(|(_, k)| k == e10 - n as i32) {
        return false;
    }
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(if whole { int } else { body });
    true
}

/// True if `|v|` is exactly halfway between the `n`-digit decimal `digits × 10^(e10−n+1)` and
/// one of its neighbours at that precision: the only case where shortest formatting may round
/// differently from Go's (which rounds such ties to even).
fn is_midpoint(v: f64, digits: &[u8], e10: i32) -> bool {
    // A midpoint is c × 10^q with c = 10d ± 5 (odd) and q = e10 − n; |v| = m × 2^k with m odd.
    // Equal only if the powers of two agree (k = q) and the odd parts do: m = c·5^q when q ≥ 0,
    // c = m·5^−q when q < 0. The exponent test rejects almost every value at once.
    let q = e10 - digits.len() as i32;
    let Some((m, k)) = odd_parts(v) else {
        return false;
    };
    if k != q {
        return false;
    }
    let Some(d) = digits.iter().try_fold(0u64, |acc, &b| {
        acc.checked_mul(10)?
            .checked_add(u64::from(b.wrapping_sub(b'0')))
    }) else {
        return true; // not expected; take the exact path
    };
    let Some(pow5) = 5u128.checked_pow(q.unsigned_abs()) else {
        return false;
    };
    let ten_d = u128::from(d) * 10;
    [ten_d.checked_sub(5), ten_d.checked_add(5)]
        .into_iter()
        .flatten()
        .any(|c| {
            if q >= 0 {
                c.checked_mul(pow5) == Some(u128::from(m))
            } else {
                pow5.checked_mul(u128::from(m)) == Some(c)
            }
        })
}

/// Given shortest round-trip text of a finite value (`shortest`, any notation), appends Go's
/// `'g'` text of `v`. Shortest digits can round an exact tie up where Go rounds it to even, so
/// a value exactly at a midpoint is re-formatted exactly with the same number of digits
/// (Rust's exact formatting rounds half to even) — unless those digits do not read back as
/// the value (`round_trips`): at a power of two the gap below is half the gap above, so the
/// even neighbour of a tie can belong to the next float down, and Go keeps the digits that
/// read back (2^-24 is `5.960464477539063e-08`).
fn write_go_float(out: &mut Vec<u8>, v: f64, shortest: &str, round_trips: impl Fn(&str) -> bool) {
    if write_plain_fast(out, v, shortest.as_bytes()) {
        return;
    }
    let Some((digits, n, e10)) = go_shortest_digits(v, shortest, round_trips) else {
        out.extend_from_slice(if v.is_sign_negative() { b"-0" } else { b"0" });
        return;
    };
    write_go_digits(
        out,
        v.is_sign_negative(),
        digits.get(..n).unwrap_or(&[]),
        e10,
    );
}

/// Go's shortest digits of finite `v` given Rust's shortest text of it (`shortest`): the
/// significant digits, their count and the decimal exponent of the first (`None` for zero).
/// Where two texts of that length read back and `v` lies exactly between them, Rust and Go
/// may choose differently; Go's is the correctly rounded one, taken when it reads back
/// (`round_trips`, in the float's own width).
fn go_shortest_digits(
    v: f64,
    shortest: &str,
    round_trips: impl Fn(&str) -> bool,
) -> Option<([u8; 20], usize, i32)> {
    let (digits, n, e10) = parse_digits(shortest)?;
    if is_midpoint(v, digits.get(..n).unwrap_or(&[]), e10) {
        let mut exact = StackText::new();
        if write!(exact, "{:.*e}", n - 1, v).is_ok() && round_trips(exact.as_str()) {
            if let Some(d) = parse_digits(exact.as_str()) {
                return Some(d);
            }
        }
    }
    Some((digits, n, e10))
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
    write_go_digits(out, neg, digits.get(..nd).unwrap_or(&[]), exp);
}

/// Appends Go's `'g'` layout of the decimal `digits` (first digit at 10^`exp`): exponent form
/// for exponents below −4 or from 6 on (Go's rule for shortest formatting), plain otherwise.
fn write_go_digits(out: &mut Vec<u8>, neg: bool, digits: &[u8], exp: i32) {
    if neg {
        out.push(b'-');
    }
    if !(-4..6).contains(&exp) {
        write_exponent(out, digits, exp, 2);
    } else {
        write_positional(out, digits, exp);
    }
}

/// `digits` (significant, the first at decimal exponent `exp`) as `d.ddde±x`, the exponent
/// padded to `width` digits.
fn write_exponent(out: &mut Vec<u8>, digits: &[u8], exp: i32, width: usize) {
    let (first, rest) = digits.split_at(1.min(digits.len()));
    out.extend_from_slice(first);
    if !rest.is_empty() {
        out.push(b'.');
        out.extend_from_slice(rest);
    }
    out.push(b'e');
    out.push(if exp < 0 { b'-' } else { b'+' });
    write_padded(out, u64::from(exp.unsigned_abs()), width);
}

/// `digits` (significant, the first at decimal exponent `exp`) in positional notation.
fn write_positional(out: &mut Vec<u8>, digits: &[u8], exp: i32) {
    let nd = digits.len() as i32;
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
    // Left-pad with zeros to at least scale + 1 digits; the point goes before the last `scale`.
    let lead = (scale + 1).saturating_sub(len);
    let total = len + lead;
    let int_len = total - scale;
    // The digit sequence is `lead` zeros, `kept`, `zeros` zeros; write it in pieces around the
    // point.
    let zero_run = |out: &mut Vec<u8>, n: usize| out.extend(std::iter::repeat_n(b'0', n));
    if int_len <= lead {
        zero_run(out, int_len);
        if scale > 0 {
            out.push(b'.');
        }
        zero_run(out, lead - int_len);
        out.extend_from_slice(kept);
        zero_run(out, zeros);
    } else if int_len <= lead + kept.len() {
        let (a, b) = kept.split_at(int_len - lead);
        zero_run(out, lead);
        out.extend_from_slice(a);
        if scale > 0 {
            out.push(b'.');
        }
        out.extend_from_slice(b);
        zero_run(out, zeros);
    } else {
        zero_run(out, lead);
        out.extend_from_slice(kept);
        zero_run(out, int_len - lead - kept.len());
        if scale > 0 {
            out.push(b'.');
        }
        zero_run(out, total - int_len);
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
    if let Ok(c) = u64::try_from(coeff) {
        let mut buf = [0u8; 20];
        let at = digits_u64(c, &mut buf);
        write_decimal_digits(out, negative, buf.get(at..).unwrap_or(&[]), exponent, scale);
        return;
    }
    let mut buf = [0u8; 40];
    let at = digits_u128(coeff, &mut buf);
    write_decimal_digits(out, negative, buf.get(at..).unwrap_or(&[]), exponent, scale);
}

/// Appends a year as Dolt prints it in dates and datetimes: in plain decimal with no padding
/// (`1`, `999`, `12345`), except year 0, which prints as `0000`.
fn write_year(out: &mut Vec<u8>, year: i64) {
    if year == 0 {
        out.extend_from_slice(b"0000");
    } else {
        write_i64(out, year);
    }
}

/// Appends a date as Dolt prints it: `YYYY-MM-DD` for years 1000 to 9999, other years
/// unpadded (`999-06-15`, `1-01-01`) except year 0 (`0000-01-01`, and the zero date
/// `0000-00-00`).
pub fn write_date(out: &mut Vec<u8>, d: Date) {
    if !(1000..=9999).contains(&d.year) || d.month > 99 || d.day > 99 {
        write_year(out, i64::from(d.year));
        out.push(b'-');
        write_padded(out, u64::from(d.month), 2);
        out.push(b'-');
        write_padded(out, u64::from(d.day), 2);
        return;
    }
    let mut t = *b"0000-00-00";
    put_pair(&mut t, 0, u64::from(d.year / 100));
    put_pair(&mut t, 2, u64::from(d.year % 100));
    put_pair(&mut t, 5, u64::from(d.month));
    put_pair(&mut t, 8, u64::from(d.day));
    out.extend_from_slice(&t);
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
    if write_datetime_fast(out, us, fsp) {
        return;
    }
    let keep = if fsp == 0 {
        19
    } else {
        20 + usize::from(fsp.min(6))
    };
    if us == ZERO_DATETIME_MICROS {
        let t = datetime_text(us);
        out.extend_from_slice(t.as_bytes().get(..keep).unwrap_or(t.as_bytes()));
        return;
    }
    let days = us.div_euclid(MICROS_PER_DAY);
    let (y, mo, d) = civil_from_days(days);
    // The year as Dolt prints it (unpadded outside 1000 to 9999, year 0 as `0000`), then
    // `-MM-DD HH:MM:SS.ffffff` built on the stack and appended in one copy.
    write_year(out, y);
    let rem = us.rem_euclid(MICROS_PER_DAY) as u64;
    let secs = rem / 1_000_000;
    let mut t = *b"-00-00 00:00:00.000000";
    put_pair(&mut t, 1, u64::from(mo));
    put_pair(&mut t, 4, u64::from(d));
    put_pair(&mut t, 7, secs / 3600);
    put_pair(&mut t, 10, (secs / 60) % 60);
    put_pair(&mut t, 13, secs % 60);
    let f = rem % 1_000_000;
    put_pair(&mut t, 16, f / 10_000);
    put_pair(&mut t, 18, (f / 100) % 100);
    put_pair(&mut t, 20, f % 100);
    let keep = keep - 4;
    out.extend_from_slice(t.get(..keep).unwrap_or(&t));
}

/// Datetimes from 1970 to 9999 (the usual ones), all in unsigned arithmetic; false, having
/// written nothing, for the others.
#[inline]
fn write_datetime_fast(out: &mut Vec<u8>, us: i64, fsp: u8) -> bool {
    const MICROS_PER_DAY: u64 = 86_400_000_000;
    /// Days from 1970-01-01 to 10000-01-01.
    const DAYS_TO_10000: u64 = 2_932_897;
    let Ok(us) = u64::try_from(us) else {
        return false;
    };
    let days = us / MICROS_PER_DAY;
    if days >= DAYS_TO_10000 {
        return false;
    }
    let rem = us % MICROS_PER_DAY;
    // Days since 0000-03-01 (the proleptic Gregorian calendar counted from March, so the leap
    // day ends the year), split into 400-year eras, years, months and days.
    let z = days as u32 + 719_468;
    let era = z / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let (month, year) = if mp < 10 {
        (mp + 3, yoe + era * 400)
    } else {
        (mp - 9, yoe + era * 400 + 1)
    };
    let secs = (rem / 1_000_000) as u32;
    let frac = (rem % 1_000_000) as u32;
    let mut t = *b"0000-00-00 00:00:00.000000";
    let pairs = [
        (0, year / 100),
        (2, year % 100),
        (5, month),
        (8, day),
        (11, secs / 3600),
        (14, secs / 60 % 60),
        (17, secs % 60),
        (20, frac / 10_000),
        (22, frac / 100 % 100),
        (24, frac % 100),
    ];
    for (at, v) in pairs {
        put_pair(&mut t, at, u64::from(v));
    }
    let keep = if fsp == 0 {
        19
    } else {
        20 + usize::from(fsp.min(6))
    };
    out.extend_from_slice(t.get(..keep).unwrap_or(&t));
    true
}

/// Writes the two digits of `v` (below 100) at `at` in `t`.
#[inline]
fn put_pair(t: &mut [u8], at: usize, v: u64) {
    let i = (v % 100) as usize * 2;
    if let (Some(dst), Some(src)) = (t.get_mut(at..at + 2), DIGIT_PAIRS.get(i..i + 2)) {
        dst.copy_from_slice(src);
    }
}

#[cfg(test)]
mod tests {
    /// Dolt 2.3.1's `sql -r json` of DOUBLE and FLOAT values (`select d, f, d/3` over rows
    /// 4567300/1234567, 1e21/1e-7, 0.00001/3.5).
    #[test]
    fn json_floats_as_dolt_prints_them() {
        let f64s = [
            (4567300.0, "4567300"),
            (1e21, "1e+21"),
            (0.00001, "0.00001"),
            (4567300.0 / 3.0, "1522433.3333333333"),
            (1e21 / 3.0, "333333333333333300000"),
            (0.00001 / 3.0, "0.0000033333333333333337"),
            (1.5e-7, "1.5e-7"),
            (-2.5e22, "-2.5e+22"),
            (0.0, "0"),
        ];
        for (v, want) in f64s {
            let mut out = Vec::new();
            write_json_f64(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), want, "{v}");
        }
        for (v, want) in [(1234567f32, "1234567"), (1e-7f32, "1e-7"), (3.5f32, "3.5")] {
            let mut out = Vec::new();
            write_json_f32(&mut out, v);
            assert_eq!(String::from_utf8(out).unwrap(), want, "{v}");
        }
    }

    use super::*;

    /// Powers of two whose shortest digits end in a tie: Go keeps the digits that read back
    /// (outputs of Go 1.26's `strconv.FormatFloat`; found by the `geometry_parse` fuzz target).
    #[test]
    fn ties_at_powers_of_two_keep_digits_that_read_back() {
        let f64_text = |bits: u64| {
            let mut out = Vec::new();
            write_f64(&mut out, f64::from_bits(bits));
            String::from_utf8(out).unwrap()
        };
        assert_eq!(f64_text(0x3E70_0000_0000_0000), "5.960464477539063e-08");
        assert_eq!(f64_text(0x3E6F_FFFF_FFFF_FFFF), "5.960464477539062e-08");
        assert_eq!(f64_text(0x4340_0000_0000_0000), "9.007199254740992e+15");
        assert_eq!(f64_text(0x4330_0000_0000_0001), "4.503599627370497e+15");
        let mut out = Vec::new();
        write_f32(&mut out, f32::from_bits(0x3380_0000));
        assert_eq!(out, b"5.9604645e-08");
    }

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

    /// Go's `'g'` text (as a `String`) of `v`, given its `{:e}` text with the digits to show.
    fn go_float_g(v: f64, exp_text: &str) -> String {
        let mut out = Vec::new();
        write_go_g(&mut out, v, exp_text);
        String::from_utf8(out).unwrap_or_default()
    }

    /// The straightforward formulation: Rust's shortest `{:e}` digit count, then the exact
    /// value rounded half-to-even to that many digits. Wrong for powers of two, whose lower
    /// rounding interval is half as wide (the exact rounding may not round-trip there, and Go
    /// keeps the round-tripping digits), so those are checked against Go's output instead.
    fn reference(v: f64, shortest_e: &str) -> String {
        if !v.is_finite() {
            return go_float_g(v, shortest_e);
        }
        let mant = shortest_e.split('e').next().unwrap_or("");
        let n = mant.bytes().filter(u8::is_ascii_digit).count().max(1);
        go_float_g(v, &format!("{:.*e}", n - 1, v))
    }

    /// JSON's text of a float has Go's digits, the ones of its `'g'` text (a FLOAT exactly
    /// between two shortest texts: Rust's `Display` chooses the other one).
    #[test]
    #[cfg_attr(miri, ignore)] // 400,000 floats formatted: no unsafe; far too slow under Miri
    fn json_floats_have_go_digits() {
        // -378889.625 exactly, between -378889.62 and -378889.63 (both read back).
        let tie = -378_889.62_f32;
        assert_eq!(f64::from(tie), -378_889.625);
        assert_eq!(s(|o| write_json_f32(o, tie)), "-378889.62");
        assert_eq!(s(|o| write_json_f64(o, 1e21)), "1e+21");
        assert_eq!(s(|o| write_json_f64(o, 1.5e-7)), "1.5e-7");
        assert_eq!(s(|o| write_json_f64(o, 123456789.0)), "123456789");
        assert_eq!(s(|o| write_json_f64(o, -0.0)), "-0");
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (d, f) = (f64::from_bits(x), f32::from_bits(x as u32));
            // The significant digits (the values are equal: read back, checked first).
            let digits = |t: String| {
                let mantissa = t.split('e').next().unwrap_or("").replace(['-', '.'], "");
                mantissa.trim_matches('0').to_string()
            };
            if d.is_finite() {
                let json = s(|o| write_json_f64(o, d));
                assert_eq!(json.parse::<f64>(), Ok(d), "{json}");
                assert_eq!(digits(json), digits(s(|o| write_f64(o, d))), "{d:e}");
            }
            if f.is_finite() {
                let json = s(|o| write_json_f32(o, f));
                assert_eq!(json.parse::<f32>(), Ok(f), "{json}");
                assert_eq!(digits(json), digits(s(|o| write_f32(o, f))), "{f:e}");
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore)] // 100,000s of floats: formatting, no unsafe; far too slow under Miri
    fn floats_match_reference() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for i in 0..200_000u64 {
            let r = next();
            // Random bit patterns, and values with few mantissa bits (where ties live).
            let b64 = if i % 2 == 0 {
                r
            } else {
                r & 0xFFF0_0000_0000_0000 | (r & 0xF) << 48
            };
            let v = f64::from_bits(b64);
            if b64 & ((1 << 52) - 1) == 0 {
                continue;
            }
            assert_eq!(
                s(|o| write_f64(o, v)),
                reference(v, &format!("{v:e}")),
                "{b64:#x}"
            );
            let b32 = (r >> 32) as u32;
            let b32 = if i % 2 == 0 {
                b32
            } else {
                b32 & 0xFFF0_0000 | (b32 & 0xF) << 12
            };
            let f = f32::from_bits(b32);
            if b32 & ((1 << 23) - 1) == 0 {
                continue;
            }
            assert_eq!(
                s(|o| write_f32(o, f)),
                reference(f64::from(f), &format!("{f:e}")),
                "{b32:#x}"
            );
        }
        for v in [
            0.5f64,
            1.5,
            2.5,
            1e15 + 0.5,
            4503599627370497.5,
            9007199254740993.0,
            1e23,
        ] {
            assert_eq!(s(|o| write_f64(o, v)), reference(v, &format!("{v:e}")));
        }
    }

    /// The plain-notation range (exponents −5 to 7), where the fast path applies: decimal
    /// fractions, whole numbers, halves (ties) and random bit patterns scaled into range.
    #[test]
    #[cfg_attr(miri, ignore)] // 100,000s of floats: formatting, no unsafe; far too slow under Miri
    fn plain_range_floats_match_reference() {
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let check = |v: f64| {
            assert_eq!(
                s(|o| write_f64(o, v)),
                reference(v, &format!("{v:e}")),
                "{v:e}"
            );
            assert_eq!(
                s(|o| write_f64(o, -v)),
                reference(-v, &format!("{:e}", -v)),
                "-{v:e}"
            );
            let f = v as f32;
            assert_eq!(
                s(|o| write_f32(o, f)),
                reference(f64::from(f), &format!("{f:e}")),
                "{f:e}"
            );
        };
        for _ in 0..100_000 {
            let r = next();
            let scale = 10f64.powi((r % 13) as i32 - 6);
            check((r >> 20) as f64 % 1e7 * scale);
            check(f64::from_bits(r >> 12 | 0x3F00_0000_0000_0000) * 1e3);
            check((r % 2_000_000) as f64 / 2.0);
            check((r % 100_000) as f64);
        }
        for v in [
            1e-5, 1e-4, 0.000123, 999999.0, 999999.5, 1e6, 123456.75, 0.5, 0.25,
        ] {
            check(v);
        }
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
        assert_eq!(d(false, "123", 2, 2), "12300.00");
        assert_eq!(d(false, "12345", -2, 2), "123.45");
        assert_eq!(d(false, "12345", -3, 2), "12.34");
        assert_eq!(d(false, "12345", 0, 0), "12345");
        assert_eq!(d(false, "", 0, 0), "0");
        assert_eq!(d(false, "7", -1, 1), "0.7");
        assert_eq!(d(true, "7", -1, 1), "-0.7");
        assert_eq!(s(|o| write_decimal_u128(o, false, 1999, -2, 2)), "19.99");
        // The scaled fast path prints what the general one does.
        for (neg, c, scale) in [
            (false, 1999u64, 2u8),
            (true, 5, 3),
            (true, 0, 2),
            (false, 0, 0),
            (false, 12345, 0),
            (false, u64::MAX, 19),
            (true, 100, 2),
        ] {
            let fast = s(|o| assert!(write_scaled_u64(o, neg, c, scale)));
            let general = d(neg, &c.to_string(), -i32::from(scale), scale);
            assert_eq!(fast, general);
        }
        assert!(!write_scaled_u64(&mut Vec::new(), false, 1, 20));
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
        // The fast path (1970 to 9999) prints what the general one does, day by day across
        // leap years and centuries, at assorted times of day.
        // (about 225,000 days: far too slow under Miri, and no unsafe to check there)
        let mut us = if cfg!(miri) {
            253_402_300_800_000_000
        } else {
            0i64
        };
        while us < 253_402_300_800_000_000 {
            let mut fast = Vec::new();
            assert!(write_datetime_fast(&mut fast, us, 6));
            let t = datetime_text(us);
            assert_eq!(fast, t.as_bytes(), "{us}");
            us += 86_400_000_000 * 13 + 3_723_000_017;
        }
        assert!(!write_datetime_fast(&mut Vec::new(), -1, 6));
        assert!(!write_datetime_fast(
            &mut Vec::new(),
            253_402_300_800_000_000,
            6
        ));
        assert_eq!(
            s(|o| write_date(o, Date::from_raw(132_645_405))),
            "2024-02-29"
        );
        assert_eq!(s(|o| write_time(o, -1)), "-00:00:00.000001");
    }

    /// Years before 1000 as `dolt sql -r csv` prints them (see
    /// `tests/data/dates_before_1000`): unpadded, except year 0.
    #[test]
    fn early_years() {
        let date = |y, m, d| {
            s(|o| {
                write_date(
                    o,
                    Date {
                        year: y,
                        month: m,
                        day: d,
                    },
                )
            })
        };
        assert_eq!(date(1, 1, 1), "1-01-01");
        assert_eq!(date(999, 6, 15), "999-06-15");
        assert_eq!(date(0, 1, 1), "0000-01-01");
        assert_eq!(date(0, 0, 0), "0000-00-00");
        assert_eq!(date(1000, 1, 1), "1000-01-01");
        // Unix microseconds, fraction digits, and Dolt's text.
        for (us, fsp, want) in [
            (-62_132_730_894_000_000, 0, "1-02-03 04:05:06"),
            (-59_011_459_200_877_000, 3, "99-12-31 23:59:59.123"),
            (-62_167_219_200_000_000, 0, "0000-01-01 00:00:00"),
            (ZERO_DATETIME_MICROS, 3, "0000-00-00 00:00:00.000"),
        ] {
            assert_eq!(s(|o| write_datetime(o, us, fsp)), want);
        }
    }
}
