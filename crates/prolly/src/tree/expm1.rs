//! `exp(x) - 1` computed exactly as Go's `math.Expm1` computes it.
//!
//! Chunk boundaries compare a hash against a probability made with `expm1`; a libm that differs
//! by one ulp could (very rarely) flip a boundary and with it every address above. So this is an
//! independent implementation of the FreeBSD `s_expm1.c` algorithm that Go uses on every
//! platform we care about: reduce `x = k·ln2 + r` with `|r| ≤ ln2/2`, approximate `expm1(r)` with
//! a rational function in `r²`, then scale back by `2^k` with a correction term.

// The constants are written as in the FreeBSD source (more digits than an f64 holds); they
// round to the same doubles Go uses.
#![allow(clippy::excessive_precision, clippy::approx_constant)]

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const INV_LN2: f64 = 1.44269504088896338700e+00;
/// 709.78...: above this `exp(x)` overflows.
const O_THRESHOLD: f64 = 7.09782712893383973096e+02;
/// 56·ln2: below `-56·ln2` the result rounds to −1.
const LN2_X56: f64 = 3.88162421113569373274e+01;
/// 1.5·ln2.
const LN2_HALF_X3: f64 = 1.03972077083991796413e+00;
/// 0.5·ln2.
const LN2_HALF: f64 = 3.46573590279972654709e-01;
/// 2^-54: below this `expm1(x) = x`.
const TINY: f64 = 1.0 / ((1u64 << 54) as f64);
// Coefficients of the rational approximation on [-ln2/2, ln2/2].
const Q1: f64 = -3.33333333333331316428e-02;
const Q2: f64 = 1.58730158725481460165e-03;
const Q3: f64 = -7.93650757867487942473e-05;
const Q4: f64 = 4.00821782732936239552e-06;
const Q5: f64 = -2.01099218183624371326e-07;

/// `2^k` for `-1022 <= k <= 1023`, built from its exponent bits.
#[inline]
fn pow2(k: i32) -> f64 {
    f64::from_bits(((0x3ff + k) as u64) << 52)
}

/// Go's `math.Expm1(x)`, bit for bit.
pub fn expm1(x: f64) -> f64 {
    if x.is_nan() || x == f64::INFINITY {
        return x;
    }
    if x == f64::NEG_INFINITY {
        return -1.0;
    }
    let negative = x < 0.0;
    let absx = x.abs();
    if absx >= LN2_X56 {
        if negative {
            return -1.0;
        }
        if absx >= O_THRESHOLD {
            return f64::INFINITY;
        }
    }
    let mut x = x;
    let c;
    let k: i32;
    if absx > LN2_HALF {
        let (hi, lo);
        if absx < LN2_HALF_X3 {
            if !negative {
                hi = x - LN2_HI;
                lo = LN2_LO;
                k = 1;
            } else {
                hi = x + LN2_HI;
                lo = -LN2_LO;
                k = -1;
            }
        } else {
            // Truncation toward zero, as Go's int conversion does.
            k = if !negative {
                (INV_LN2 * x + 0.5) as i32
            } else {
                (INV_LN2 * x - 0.5) as i32
            };
            let t = f64::from(k);
            hi = x - t * LN2_HI;
            lo = t * LN2_LO;
        }
        x = hi - lo;
        c = (hi - x) - lo;
    } else if absx < TINY {
        return x;
    } else {
        k = 0;
        c = 0.0;
    }
    let hfx = 0.5 * x;
    let hxs = x * hfx;
    let r1 = 1.0 + hxs * (Q1 + hxs * (Q2 + hxs * (Q3 + hxs * (Q4 + hxs * Q5))));
    let t = 3.0 - r1 * hfx;
    let mut e = hxs * ((r1 - t) / (6.0 - x * t));
    if k == 0 {
        return x - (x * e - hxs);
    }
    e = x * (e - c) - c;
    e -= hxs;
    if k == -1 {
        return 0.5 * (x - e) - 0.5;
    }
    if k == 1 {
        if x < -0.25 {
            return -2.0 * (e - (x + 0.5));
        }
        return 1.0 + 2.0 * (x - e);
    }
    if k <= -2 || k > 56 {
        let mut y = 1.0 - (e - x);
        if k == 1024 {
            y = y * 2.0 * f64::from_bits(0x7fe << 52);
        } else {
            y *= pow2(k);
        }
        return y - 1.0;
    }
    if k < 20 {
        // t = 1 - 2^-k
        let t = f64::from_bits(0x3ff0_0000_0000_0000 - (0x0020_0000_0000_0000u64 >> k));
        let y = t - (e - x);
        return y * pow2(k);
    }
    let t = f64::from_bits(((0x3ff - k) as u64) << 52); // 2^-k
    let mut y = x - (e + t);
    y += 1.0;
    y * pow2(k)
}

#[cfg(test)]
mod tests {
    use super::expm1;

    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        (a.to_bits() as i64).abs_diff(b.to_bits() as i64)
    }

    #[test]
    fn exact_values() {
        assert_eq!(expm1(0.0).to_bits(), 0.0f64.to_bits());
        assert_eq!(expm1(-0.0).to_bits(), (-0.0f64).to_bits());
        assert_eq!(expm1(f64::INFINITY), f64::INFINITY);
        assert_eq!(expm1(f64::NEG_INFINITY), -1.0);
        assert!(expm1(f64::NAN).is_nan());
        assert_eq!(expm1(-40.0), -1.0);
        assert_eq!(expm1(-256.0), -1.0);
        assert_eq!(expm1(710.0), f64::INFINITY);
        assert_eq!(expm1(1e-300), 1e-300);
        // Values from Go's math package tests (expm1 of the vf inputs / 100 and a few others).
        assert_eq!(expm1(1.0), 1.718281828459045);
        assert_eq!(expm1(-1.0), -0.6321205588285577);
        assert_eq!(expm1(0.5), 0.6487212707001282);
        assert_eq!(expm1(-0.5), -0.3934693402873666);
    }

    #[test]
    fn close_to_std_everywhere() {
        // Deterministic sweep over the range the splitter uses (−256..0) and beyond.
        let mut worst = 0;
        let mut x = -300.0f64;
        while x < 50.0 {
            let (a, b) = (expm1(x), x.exp_m1());
            let d = ulps(a, b);
            assert!(d <= 1, "expm1({x:e}) = {a:e}, std says {b:e}");
            worst = worst.max(d);
            x += 0.000_731_3;
        }
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let x = ((s >> 11) as f64 / (1u64 << 53) as f64) * 16.0 - 12.0;
            let x = x * x.abs() * x.abs(); // denser near 0, wider tails
            if !(x > -700.0 && x < 700.0) {
                continue;
            }
            let (a, b) = (expm1(x), x.exp_m1());
            let rel = ((a - b) / b).abs();
            assert!(
                ulps(a, b) <= 1 || rel < 1e-15,
                "expm1({x:e}) = {a:e}, std says {b:e}"
            );
        }
        assert!(worst <= 1);
    }
}
