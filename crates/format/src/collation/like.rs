//! SQL `LIKE` under a collation, as Dolt matches it: `%` is any run of characters (none
//! too), `_` exactly one, the escape character makes the next one plain, and a plain
//! character matches any character of the same weight (`'al%'` matches `ÁLICE` under an
//! accent- and case-insensitive collation). Characters are code points decoded as
//! [`Collation::compare`] decodes them; trailing spaces are not ignored.

use super::utf8::code_points;
use super::Collation;

/// One element of a pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    /// `%`.
    Any,
    /// `_`.
    One,
    /// A character of this weight.
    Weight(u32),
}

/// A `LIKE` pattern compiled under a collation.
#[derive(Clone, Debug)]
pub struct LikePattern {
    collation: Collation,
    tokens: Vec<Token>,
}

impl Collation {
    /// `pattern` compiled for [`LikePattern::matches`]; `escape` makes the character after it
    /// plain (an escape at the end is itself plain).
    pub fn like_pattern(self, pattern: &[u8], escape: char) -> LikePattern {
        let mut tokens = Vec::with_capacity(pattern.len());
        let mut cps = code_points(pattern);
        while let Some(cp) = cps.next() {
            let token = if cp == u32::from(escape) {
                Token::Weight(self.0.weights.weight(cps.next().unwrap_or(cp)))
            } else if cp == u32::from('%') {
                // Runs of `%` are one.
                if tokens.last() == Some(&Token::Any) {
                    continue;
                }
                Token::Any
            } else if cp == u32::from('_') {
                Token::One
            } else {
                Token::Weight(self.0.weights.weight(cp))
            };
            tokens.push(token);
        }
        LikePattern {
            collation: self,
            tokens,
        }
    }
}

impl LikePattern {
    /// Whether stored string `text` matches the pattern.
    pub fn matches(&self, text: &[u8]) -> bool {
        let weights = self.collation.0.weights;
        let text: Vec<u32> = code_points(text).map(|cp| weights.weight(cp)).collect();
        let pat = &self.tokens;
        let (mut t, mut p) = (0, 0);
        // The last `%` seen and the text position it has so far been given up to.
        let mut star: Option<(usize, usize)> = None;
        while t < text.len() {
            match pat.get(p) {
                Some(Token::One) => {
                    t += 1;
                    p += 1;
                    continue;
                }
                Some(&Token::Weight(w)) if w == text[t] => {
                    t += 1;
                    p += 1;
                    continue;
                }
                Some(Token::Any) => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                _ => {}
            }
            // A mismatch: give the last `%` one more character, or fail.
            let Some((sp, st)) = star else {
                return false;
            };
            star = Some((sp, st + 1));
            p = sp + 1;
            t = st + 1;
        }
        pat[p..].iter().all(|&tok| tok == Token::Any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn like(collation: &str, text: &str, pattern: &str) -> bool {
        Collation::from_name(collation)
            .unwrap()
            .like_pattern(pattern.as_bytes(), '\\')
            .matches(text.as_bytes())
    }

    #[test]
    fn matches_as_dolt_does() {
        // Dolt 2.3.1's answers on a utf8mb4_0900_ai_ci and a utf8mb4_general_ci column.
        let ai = "utf8mb4_0900_ai_ci";
        assert!(like(ai, "ÁLICE", "al%"));
        assert!(like(ai, "Zoë", "%E"));
        assert!(!like(ai, "bob", "%E"));
        assert!(like("utf8mb4_general_ci", "Zürich", "z_rich"));
        assert!(!like("utf8mb4_0900_bin", "ÁLICE", "al%"));
    }

    #[test]
    fn wildcards_and_escapes() {
        let bin = "utf8mb4_0900_bin";
        assert!(like(bin, "", "%"));
        assert!(like(bin, "", "%%"));
        assert!(!like(bin, "", "_"));
        assert!(like(bin, "abc", "a%c"));
        assert!(like(bin, "abcbc", "a%bc"));
        assert!(!like(bin, "abcb", "a%bc"));
        assert!(like(bin, "a%c", "a\\%c"));
        assert!(!like(bin, "abc", "a\\%c"));
        assert!(like(bin, "a_", "a\\_"));
        assert!(like(bin, "a\\", "a\\"));
        assert!(like(bin, "ab ", "ab_"));
        assert!(!like(bin, "ab ", "ab"));
        assert!(like(bin, "xaaab", "%a%b"));
    }

    /// The plain recursive reading of `LIKE` over code points (no escapes).
    fn model(text: &[char], pat: &[char]) -> bool {
        match pat.split_first() {
            None => text.is_empty(),
            Some(('%', rest)) => (0..=text.len()).any(|i| model(&text[i..], rest)),
            Some(('_', rest)) => !text.is_empty() && model(&text[1..], rest),
            Some((c, rest)) => text.first() == Some(c) && model(&text[1..], rest),
        }
    }

    proptest::proptest! {
        #[test]
        fn agrees_with_the_recursive_model(
            text in "[ab]{0,8}",
            pattern in "[ab%_]{0,6}",
        ) {
            let t: Vec<char> = text.chars().collect();
            let p: Vec<char> = pattern.chars().collect();
            proptest::prop_assert_eq!(like("utf8mb4_0900_bin", &text, &pattern), model(&t, &p));
        }
    }
}
