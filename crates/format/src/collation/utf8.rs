//! UTF-8 decoding with Go's `utf8.DecodeRune` rules, which Dolt's collated comparison uses:
//! a well-formed sequence yields its code point and length; anything else (a stray or missing
//! continuation byte, an overlong form, a surrogate, a value above U+10FFFF, a cut-off
//! sequence) yields U+FFFD with length 1, so decoding resumes at the very next byte.

/// U+FFFD, what every malformed byte decodes to.
pub(super) const REPLACEMENT: u32 = 0xFFFD;

/// Decodes the code point at the start of `s` (which must not be empty) and its byte length.
#[inline]
pub(super) fn decode(s: &[u8]) -> (u32, usize) {
    let b0 = s[0];
    if b0 < 0x80 {
        return (u32::from(b0), 1);
    }
    // Lead byte: total length and the allowed range of the second byte (Unicode table 3-7).
    let (len, lo, hi) = match b0 {
        0xC2..=0xDF => (2, 0x80, 0xBF),
        0xE0 => (3, 0xA0, 0xBF),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF),
        0xED => (3, 0x80, 0x9F),
        0xF0 => (4, 0x90, 0xBF),
        0xF1..=0xF3 => (4, 0x80, 0xBF),
        0xF4 => (4, 0x80, 0x8F),
        _ => return (REPLACEMENT, 1),
    };
    let Some(seq) = s.get(..len) else {
        return (REPLACEMENT, 1);
    };
    if !(lo..=hi).contains(&seq[1]) || seq[2..].iter().any(|&b| b & 0xC0 != 0x80) {
        return (REPLACEMENT, 1);
    }
    let lead = u32::from(b0) & (0x7F >> len);
    let cp = seq[1..]
        .iter()
        .fold(lead, |cp, &b| (cp << 6) | u32::from(b & 0x3F));
    (cp, len)
}

/// Go's `utf8.RuneStart`: the byte is not a continuation byte.
#[inline]
pub(super) fn is_rune_start(b: u8) -> bool {
    b & 0xC0 != 0x80
}

/// The code points of `s`, decoded as [`decode`] does (a malformed byte is U+FFFD of length 1).
pub(super) fn code_points(s: &[u8]) -> impl Iterator<Item = u32> + '_ {
    let mut rest = s;
    std::iter::from_fn(move || {
        let &b = rest.first()?;
        let (cp, n) = if b < 0x80 {
            (u32::from(b), 1)
        } else {
            decode(rest)
        };
        rest = &rest[n..];
        Some(cp)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_std_on_valid_text() {
        for c in ['a', '\u{7F}', 'é', 'ß', '€', '\u{FFFF}', '😀', '\u{10FFFF}'] {
            let mut buf = [0; 4];
            let s = c.encode_utf8(&mut buf);
            assert_eq!(decode(s.as_bytes()), (u32::from(c), s.len()));
        }
    }

    #[test]
    fn malformed_bytes_are_one_replacement_each() {
        for bad in [
            &[0x80][..],
            &[0xC0, 0x80],             // overlong
            &[0xC3],                   // cut off
            &[0xE0, 0x80, 0x80],       // overlong
            &[0xED, 0xA0, 0x80],       // surrogate
            &[0xF4, 0x90, 0x80, 0x80], // above U+10FFFF
            &[0xF5, 0x80, 0x80, 0x80],
            &[0xE2, 0x82, 0x41], // bad third byte
            &[0xFF],
        ] {
            assert_eq!(decode(bad), (REPLACEMENT, 1), "{bad:02x?}");
        }
    }
}
