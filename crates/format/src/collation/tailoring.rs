//! Language tailorings (`utf8mb4_swedish_ci`, `utf8mb4_sv_0900_ai_ci`, ...) as small overlays
//! on a base rank table: most code points keep their base order, a few dozen move. Storing
//! only the moved ones keeps each tailoring to a few kilobytes instead of a full rank table.
//! Script reordering (`utf8mb4_ru_0900_ai_ci` puts Cyrillic first) moves whole ranges of base
//! ranks, stored as a handful of range moves.

use super::han::HanOrder;
use super::runs::RunTable;

/// A tailoring's weights: the base table's rank, scaled by 256 so that tailored code points
/// can sit between two base ranks, except for the listed code points.
pub(super) struct Tailoring {
    /// The untailored order.
    pub(super) base: &'static RunTable,
    /// Weights of U+0000..U+007F (some ASCII letters are tailored too).
    pub(super) ascii: [u32; 128],
    /// The tailored code points from U+0080 on, ascending.
    pub(super) code_points: &'static [u32],
    /// Their weights, in the same order.
    pub(super) weights: &'static [u32],
    /// Base rank ranges that move as a block: `[first, last, new first]`, ascending and
    /// disjoint; empty unless the collation reorders scripts.
    pub(super) moves: &'static [[u32; 3]],
    /// Han characters in the language's own order (Chinese pinyin), weighed by position;
    /// consulted after the overlay, before the base.
    pub(super) han: Option<&'static HanOrder>,
}

impl Tailoring {
    /// The weight of code point `cp` (at most U+10FFFF).
    #[inline]
    pub(super) fn weight(&self, cp: u32) -> u32 {
        if let Some(&w) = self.ascii.get(cp as usize) {
            return w;
        }
        self.beyond_ascii(cp)
    }

    #[cold]
    fn beyond_ascii(&self, cp: u32) -> u32 {
        match self.code_points.binary_search(&cp) {
            Ok(i) => self.weights.get(i).copied().unwrap_or(u32::MAX),
            Err(_) => match self.han.and_then(|han| han.weight(cp)) {
                Some(w) => w,
                None => (self.reordered(self.base.weight(cp)) + 1) << 8,
            },
        }
    }

    /// The base rank `rank` after the script reordering.
    fn reordered(&self, rank: u32) -> u32 {
        let i = self.moves.partition_point(|m| m[1] < rank);
        match self.moves.get(i) {
            Some(&[first, _, new_first]) if first <= rank => rank - first + new_first,
            _ => rank,
        }
    }

    /// Checks the overlay's shape: sorted code points above ASCII, one weight each, and
    /// untailored ASCII weighing as in the base. Used by tests.
    #[cfg(test)]
    pub(super) fn check(&self) -> Result<(), String> {
        if self.code_points.len() != self.weights.len() {
            return Err("code points and weights differ in number".into());
        }
        if self.code_points.first().is_some_and(|&cp| cp < 0x80) {
            return Err("an ASCII code point in the overlay".into());
        }
        if self.code_points.windows(2).any(|w| w[0] >= w[1]) {
            return Err("overlay code points are not ascending".into());
        }
        if self.moves.windows(2).any(|w| w[0][1] >= w[1][0])
            || self.moves.iter().any(|m| m[0] > m[1])
        {
            return Err("moves are not ascending and disjoint".into());
        }
        let moved = (0..128u32)
            .filter(|&cp| {
                self.ascii[cp as usize] != (self.reordered(self.base.weight(cp)) + 1) << 8
            })
            .count();
        // Upper case first (Danish) moves the 26 capital letters.
        if moved > 26 {
            return Err(format!("{moved} ASCII code points tailored"));
        }
        match self.han {
            Some(han) => han.check(),
            None => Ok(()),
        }
    }
}
