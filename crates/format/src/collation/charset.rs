//! Collations of single-byte character sets (`dec8_swedish_ci`, `cp1256_general_ci`, ...):
//! Dolt keeps such strings as UTF-8 and weighs each code point by the byte its character set
//! encodes it as, so a collation is a table over the at most 256 code points the set encodes.

use super::OUTSIDE;

/// A single-byte character set collation: the weight of every code point the set encodes;
/// every other code point weighs [`OUTSIDE`].
pub(super) struct CharsetTable {
    /// Weights of U+0000..U+007F ([`OUTSIDE`] where the set lacks the character).
    pub(super) ascii: [u32; 128],
    /// The encoded code points from U+0080 on, ascending.
    pub(super) code_points: &'static [u32],
    /// Their weights, in the same order.
    pub(super) weights: &'static [u32],
}

impl CharsetTable {
    /// The weight of code point `cp`.
    #[inline]
    pub(super) fn weight(&self, cp: u32) -> u32 {
        if let Some(&w) = self.ascii.get(cp as usize) {
            return w;
        }
        match self.code_points.binary_search(&cp) {
            Ok(i) => self.weights.get(i).copied().unwrap_or(OUTSIDE),
            Err(_) => OUTSIDE,
        }
    }

    /// Checks the table's shape: one weight per code point, ascending code points above
    /// ASCII, at most 256 in all. Used by tests.
    #[cfg(test)]
    pub(super) fn check(&self) -> Result<(), String> {
        if self.code_points.len() != self.weights.len() {
            return Err("code points and weights differ in number".into());
        }
        if self.code_points.first().is_some_and(|&cp| cp < 0x80)
            || self.code_points.windows(2).any(|w| w[0] >= w[1])
        {
            return Err("code points are not ascending above ASCII".into());
        }
        let ascii = self.ascii.iter().filter(|&&w| w != OUTSIDE).count();
        if ascii + self.code_points.len() > 256 {
            return Err("more than 256 code points".into());
        }
        Ok(())
    }
}
