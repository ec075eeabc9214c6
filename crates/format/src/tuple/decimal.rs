//! Dolt's decimal encoding (`apd.Decimal` in `codec.go`): a zero-copy view, its text form and
//! Dolt's numeric order.
//!
//! ```text
//! finite:  [exponent i32 LE][sign i8: -1, 0, +1][|coefficient| big-endian, 8-byte words]
//! special: [i32 LE marker]   NaN = 0xC000, +Inf = 0xD000, -Inf = 0xF000
//! ```

use std::cmp::Ordering;
use std::fmt;

/// Marker of NaN (`types.DecimalNaN`).
pub const DECIMAL_NAN: i32 = 0xC000;
/// Marker of +Infinity.
pub const DECIMAL_POS_INF: i32 = 0xD000;
/// Marker of −Infinity.
pub const DECIMAL_NEG_INF: i32 = 0xF000;

/// Which kind of decimal value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DecimalForm {
    /// coefficient × 10^exponent.
    Finite,
    /// Not a number; sorts after everything and equals itself.
    NaN,
    /// +Infinity.
    PosInfinity,
    /// −Infinity.
    NegInfinity,
}

/// A decimal value viewing its coefficient bytes in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Decimal<'a> {
    form: DecimalForm,
    exponent: i32,
    negative: bool,
    coefficient: &'a [u8],
}

impl<'a> Decimal<'a> {
    /// NaN.
    pub const NAN: Decimal<'static> = Decimal::special(DecimalForm::NaN);
    /// +Infinity.
    pub const POS_INFINITY: Decimal<'static> = Decimal::special(DecimalForm::PosInfinity);
    /// −Infinity.
    pub const NEG_INFINITY: Decimal<'static> = Decimal::special(DecimalForm::NegInfinity);

    const fn special(form: DecimalForm) -> Decimal<'static> {
        Decimal {
            form,
            exponent: 0,
            negative: matches!(form, DecimalForm::NegInfinity),
            coefficient: &[],
        }
    }

    /// `(−1)^negative · coefficient · 10^exponent`, the coefficient given as unsigned big-endian
    /// bytes of any length (leading zeros allowed).
    pub fn finite(exponent: i32, negative: bool, coefficient: &'a [u8]) -> Decimal<'a> {
        Decimal {
            form: DecimalForm::Finite,
            exponent,
            negative,
            coefficient,
        }
    }

    /// Reads a stored decimal as leniently as Dolt's `readDecimal`: 4 bytes must be one of the
    /// three markers, otherwise at least 5 bytes (any coefficient length; a negative sign byte
    /// means negative). `None` for anything else.
    pub fn from_bytes(bytes: &'a [u8]) -> Option<Decimal<'a>> {
        match bytes {
            [a, b, c, d] => match i32::from_le_bytes([*a, *b, *c, *d]) {
                DECIMAL_NAN => Some(Self::NAN),
                DECIMAL_POS_INF => Some(Self::POS_INFINITY),
                DECIMAL_NEG_INF => Some(Self::NEG_INFINITY),
                _ => None,
            },
            [a, b, c, d, s, coefficient @ ..] => Some(Decimal {
                form: DecimalForm::Finite,
                exponent: i32::from_le_bytes([*a, *b, *c, *d]),
                negative: (*s as i8) < 0,
                coefficient,
            }),
            _ => None,
        }
    }

    /// Whether `bytes` has exactly the shape Dolt writes: a known marker, or exponent + sign in
    /// {−1, 0, +1} + whole 8-byte words with no leading zero word, sign 0 exactly for a zero
    /// coefficient.
    pub fn is_canonical(bytes: &[u8]) -> bool {
        if bytes.len() == 4 {
            return Decimal::from_bytes(bytes).is_some();
        }
        let Some((&s, coeff)) = bytes.get(4..).and_then(|r| r.split_first()) else {
            return false;
        };
        let sign = s as i8;
        if !(-1..=1).contains(&sign) || coeff.len() % 8 != 0 {
            return false;
        }
        let leading_word_nonzero = coeff.get(..8).is_none_or(|w| w.iter().any(|&b| b != 0));
        leading_word_nonzero && ((sign == 0) == coeff.is_empty())
    }

    /// The form.
    #[inline]
    pub fn form(&self) -> DecimalForm {
        self.form
    }

    /// The exponent (0 for specials).
    #[inline]
    pub fn exponent(&self) -> i32 {
        self.exponent
    }

    /// True for negative values (including −Infinity; a stored negative zero reads as negative
    /// only if its sign byte said so).
    #[inline]
    pub fn is_negative(&self) -> bool {
        self.negative
    }

    /// The coefficient magnitude as stored: big-endian, possibly zero-padded.
    #[inline]
    pub fn coefficient_be(&self) -> &'a [u8] {
        self.coefficient
    }

    /// The coefficient without leading zero bytes.
    #[inline]
    fn coeff_trimmed(&self) -> &'a [u8] {
        let start = self
            .coefficient
            .iter()
            .position(|&b| b != 0)
            .unwrap_or(self.coefficient.len());
        self.coefficient.get(start..).unwrap_or(&[])
    }

    /// The coefficient if it fits in 128 bits.
    #[inline]
    pub fn coefficient_u128(&self) -> Option<u128> {
        // Dolt writes whole 8-byte words: one or two are read as they are.
        let c = self.coefficient;
        if let Ok(word) = <[u8; 8]>::try_from(c) {
            return Some(u64::from_be_bytes(word).into());
        }
        if let Ok(words) = <[u8; 16]>::try_from(c) {
            return Some(u128::from_be_bytes(words));
        }
        let c = self.coeff_trimmed();
        (c.len() <= 16).then(|| c.iter().fold(0u128, |acc, &b| (acc << 8) | u128::from(b)))
    }

    /// True for a finite zero (of either sign).
    pub fn is_zero(&self) -> bool {
        self.form == DecimalForm::Finite && self.coeff_trimmed().is_empty()
    }

    /// The coefficient in decimal digits ("0" for zero). Allocates.
    pub fn coefficient_digits(&self) -> String {
        digits_of(self.coeff_trimmed())
    }

    /// Bytes [`Decimal::write`] produces.
    pub fn encoded_len(&self) -> usize {
        match self.form {
            DecimalForm::Finite => 5 + self.coeff_trimmed().len().div_ceil(8) * 8,
            _ => 4,
        }
    }

    /// Appends Dolt's encoding (`writeDecimal`): sign byte from the value (0 for any zero), the
    /// coefficient in the fewest 8-byte words.
    pub fn write(&self, out: &mut Vec<u8>) {
        let marker = match self.form {
            DecimalForm::Finite => None,
            DecimalForm::NaN => Some(DECIMAL_NAN),
            DecimalForm::PosInfinity => Some(DECIMAL_POS_INF),
            DecimalForm::NegInfinity => Some(DECIMAL_NEG_INF),
        };
        if let Some(m) = marker {
            out.extend_from_slice(&m.to_le_bytes());
            return;
        }
        out.extend_from_slice(&self.exponent.to_le_bytes());
        let c = self.coeff_trimmed();
        let sign: i8 = if c.is_empty() {
            0
        } else if self.negative {
            -1
        } else {
            1
        };
        out.push(sign as u8);
        let words = c.len().div_ceil(8);
        out.extend(std::iter::repeat_n(0u8, words * 8 - c.len()));
        out.extend_from_slice(c);
    }

    /// Dolt's `compareDecimal`: NaN equals NaN and sorts after everything; equal infinities are
    /// equal; otherwise numeric (`1.5 == 1.50`, `−0 == 0`). Does not allocate for coefficients of
    /// up to 16 bytes.
    pub fn compare(&self, other: &Decimal<'_>) -> Ordering {
        use DecimalForm::*;
        match (self.form, other.form) {
            (NaN, NaN) => Ordering::Equal,
            (NaN, _) => Ordering::Greater,
            (_, NaN) => Ordering::Less,
            (NegInfinity, NegInfinity) | (PosInfinity, PosInfinity) => Ordering::Equal,
            (NegInfinity, _) | (_, PosInfinity) => Ordering::Less,
            (PosInfinity, _) | (_, NegInfinity) => Ordering::Greater,
            (Finite, Finite) => {
                let (ca, cb) = (self.coeff_trimmed(), other.coeff_trimmed());
                let sa = signum(ca, self.negative);
                let sb = signum(cb, other.negative);
                if sa != sb || sa == 0 {
                    return sa.cmp(&sb);
                }
                let mag = compare_magnitude(ca, self.exponent, cb, other.exponent);
                if sa < 0 {
                    mag.reverse()
                } else {
                    mag
                }
            }
        }
    }
}

fn signum(coeff: &[u8], negative: bool) -> i8 {
    if coeff.is_empty() {
        0
    } else if negative {
        -1
    } else {
        1
    }
}

/// Compares `ca·10^ea` with `cb·10^eb` for non-zero trimmed coefficients.
fn compare_magnitude(ca: &[u8], ea: i32, cb: &[u8], eb: i32) -> Ordering {
    if ca.len() <= 16 && cb.len() <= 16 {
        let a = ca.iter().fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
        let b = cb.iter().fold(0u128, |acc, &b| (acc << 8) | u128::from(b));
        return match ea.cmp(&eb) {
            Ordering::Equal => a.cmp(&b),
            Ordering::Greater => scaled_cmp(a, ea.abs_diff(eb), b),
            Ordering::Less => scaled_cmp(b, eb.abs_diff(ea), a).reverse(),
        };
    }
    // Large coefficients: compare adjusted exponents, then the digits.
    let (da, db) = (digits_of(ca), digits_of(cb));
    let adj_a = i64::from(ea) + da.len() as i64;
    let adj_b = i64::from(eb) + db.len() as i64;
    if adj_a != adj_b {
        return adj_a.cmp(&adj_b);
    }
    let (da, db) = (da.as_bytes(), db.as_bytes());
    for k in 0..da.len().max(db.len()) {
        let x = da.get(k).copied().unwrap_or(b'0');
        let y = db.get(k).copied().unwrap_or(b'0');
        if x != y {
            return x.cmp(&y);
        }
    }
    Ordering::Equal
}

/// Compares `a · 10^k` with `b` (a ≥ 1), stopping as soon as the product exceeds 128 bits.
fn scaled_cmp(mut a: u128, k: u32, b: u128) -> Ordering {
    for _ in 0..k {
        match a.checked_mul(10) {
            Some(v) => a = v,
            None => return Ordering::Greater,
        }
        if a > b {
            return Ordering::Greater;
        }
    }
    a.cmp(&b)
}

/// Decimal digits of a big-endian unsigned integer ("0" for empty/zero).
fn digits_of(be: &[u8]) -> String {
    // Little-endian u32 limbs.
    let mut limbs: Vec<u32> = be
        .rchunks(4)
        .map(|c| c.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)))
        .collect();
    while limbs.last() == Some(&0) {
        limbs.pop();
    }
    if limbs.is_empty() {
        return "0".to_string();
    }
    let mut chunks: Vec<u32> = Vec::new(); // base 1e9, least significant first
    while !limbs.is_empty() {
        let mut rem: u64 = 0;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        chunks.push(rem as u32);
        while limbs.last() == Some(&0) {
            limbs.pop();
        }
    }
    let mut s = String::with_capacity(chunks.len() * 9);
    let mut it = chunks.iter().rev();
    if let Some(first) = it.next() {
        s.push_str(&first.to_string());
    }
    for c in it {
        s.push_str(&format!("{c:09}"));
    }
    s
}

impl fmt::Display for Decimal<'_> {
    /// The General Decimal Arithmetic *to-scientific-string* form (what `apd` prints): plain
    /// notation when the exponent is ≤ 0 and the adjusted exponent ≥ −6, else `d.dddE±n`;
    /// `NaN`, `Infinity`, `-Infinity`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.form {
            DecimalForm::NaN => return f.write_str("NaN"),
            DecimalForm::PosInfinity => return f.write_str("Infinity"),
            DecimalForm::NegInfinity => return f.write_str("-Infinity"),
            DecimalForm::Finite => {}
        }
        if self.negative {
            f.write_str("-")?;
        }
        let digits = self.coefficient_digits();
        let n = digits.len() as i64;
        let exp = i64::from(self.exponent);
        let adjusted = exp + n - 1;
        if exp <= 0 && adjusted >= -6 {
            if exp == 0 {
                return f.write_str(&digits);
            }
            let point = n + exp; // digits before the point
            if point > 0 {
                let (int, frac) = digits.split_at(point as usize);
                write!(f, "{int}.{frac}")
            } else {
                f.write_str("0.")?;
                for _ in 0..(-point) {
                    f.write_str("0")?;
                }
                f.write_str(&digits)
            }
        } else {
            let (first, rest) = digits.split_at(1);
            f.write_str(first)?;
            if !rest.is_empty() {
                write!(f, ".{rest}")?;
            }
            write!(
                f,
                "E{}{}",
                if adjusted >= 0 { "+" } else { "-" },
                adjusted.abs()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dec(exp: i32, neg: bool, c: u128) -> (Vec<u8>, i32, bool) {
        (c.to_be_bytes().to_vec(), exp, neg)
    }

    #[test]
    fn text_forms() {
        for (c, e, neg, want) in [
            (0u128, 0, false, "0"),
            (150, -2, true, "-1.50"),
            (1, -30, false, "1E-30"),
            (1, 30, false, "1E+30"),
            (1, -3, true, "-0.001"),
            (123, -9, false, "1.23E-7"),
            (123, -8, false, "0.00000123"),
            (12, 1, false, "1.2E+2"),
        ] {
            let (b, e, n) = dec(e, neg, c);
            assert_eq!(Decimal::finite(e, n, &b).to_string(), want);
        }
        assert_eq!(Decimal::NAN.to_string(), "NaN");
        assert_eq!(Decimal::NEG_INFINITY.to_string(), "-Infinity");
    }

    #[test]
    fn write_and_read_round_trip() {
        let c = 18446744073709551616u128.to_be_bytes();
        let d = Decimal::finite(-2, true, &c);
        let mut out = Vec::new();
        d.write(&mut out);
        assert_eq!(out.len(), 5 + 16);
        assert!(Decimal::is_canonical(&out));
        let back = Decimal::from_bytes(&out).unwrap();
        assert_eq!(back.compare(&d), Ordering::Equal);
        assert_eq!(back.to_string(), "-184467440737095516.16");
        let mut z = Vec::new();
        Decimal::finite(3, true, &[0, 0]).write(&mut z);
        assert_eq!(z, [3, 0, 0, 0, 0]);
    }

    #[test]
    fn numeric_order() {
        let one_five = 15u128.to_be_bytes();
        let one_fifty = 150u128.to_be_bytes();
        let a = Decimal::finite(-1, false, &one_five);
        let b = Decimal::finite(-2, false, &one_fifty);
        assert_eq!(a.compare(&b), Ordering::Equal);
        let big = [1u8; 40];
        let x = Decimal::finite(0, false, &big);
        let y = Decimal::finite(-1, false, &big);
        assert_eq!(x.compare(&y), Ordering::Greater);
        assert_eq!(Decimal::NAN.compare(&Decimal::NAN), Ordering::Equal);
        assert_eq!(Decimal::NAN.compare(&x), Ordering::Greater);
        assert_eq!(Decimal::NEG_INFINITY.compare(&x), Ordering::Less);
        let neg = Decimal::finite(i32::MAX, true, &one_five);
        assert_eq!(neg.compare(&a), Ordering::Less);
        assert_eq!(
            Decimal::finite(i32::MIN, false, &one_five).compare(&a),
            Ordering::Less
        );
    }
}
