//! Han characters in a language's own order (`utf8mb4_zh_0900_as_cs` sorts tens of thousands
//! of them by pinyin). That order is almost never code point order, so neither rank runs nor a
//! small overlay hold it compactly; a 16-bit position per character does (sizes in
//! docs/PERF.md).

/// The code point ranges stored one entry per code point: CJK Unified Ideographs with
/// Extension A, and the CJK Compatibility Ideographs.
const DENSE: [(u32, u32); 2] = [(0x3400, 0x9FFF), (0xF900, 0xFAFF)];
/// Number of entries in the dense part.
const BMP_LEN: usize = (DENSE[0].1 - DENSE[0].0 + 1 + DENSE[1].1 - DENSE[1].0 + 1) as usize;
/// Base of the supplementary code points, which are stored minus this.
const SUPPLEMENTARY: u32 = 0x2_0000;

/// The listed Han characters' positions (from 1) in a language order.
///
/// `positions` is the generated table of little-endian `u16`s: the position of each of
/// U+3400..U+9FFF and U+F900..U+FAFF (0 = not listed; a compatibility ideograph shares its
/// unified ideograph's position), then the count `n` of listed supplementary characters, their
/// code points minus 0x20000 (ascending), and their positions.
pub(super) struct HanOrder {
    /// The slot before the first listed character: a listed character weighs
    /// `(first + position) << 8`, like an untailored code point of rank `first + position - 1`.
    pub(super) first: u32,
    pub(super) positions: &'static [u8],
}

impl HanOrder {
    fn u16_at(&self, index: usize) -> u32 {
        let at = 2 * index;
        match self.positions.get(at..at + 2) {
            Some(&[a, b]) => u32::from(u16::from_le_bytes([a, b])),
            _ => 0,
        }
    }

    /// The weight of `cp` if it is a listed character.
    pub(super) fn weight(&self, cp: u32) -> Option<u32> {
        let [(lo0, hi0), (lo1, hi1)] = DENSE;
        let position = if (lo0..=hi0).contains(&cp) {
            self.u16_at((cp - lo0) as usize)
        } else if (lo1..=hi1).contains(&cp) {
            self.u16_at((cp - lo1 + hi0 - lo0 + 1) as usize)
        } else if (SUPPLEMENTARY..SUPPLEMENTARY + 0x1_0000).contains(&cp) {
            let key = cp - SUPPLEMENTARY;
            let n = self.u16_at(BMP_LEN) as usize;
            let (mut lo, mut hi) = (0, n);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let at = self.u16_at(BMP_LEN + 1 + mid);
                if at < key {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            if lo < n && self.u16_at(BMP_LEN + 1 + lo) == key {
                self.u16_at(BMP_LEN + 1 + n + lo)
            } else {
                0
            }
        } else {
            0
        };
        (position != 0).then(|| (self.first + position) << 8)
    }

    /// Checks the table's shape: the length fits the declared count and the supplementary code
    /// points ascend. Used by tests.
    #[cfg(test)]
    pub(super) fn check(&self) -> Result<(), String> {
        let n = self.u16_at(BMP_LEN) as usize;
        if self.positions.len() != 2 * (BMP_LEN + 1 + 2 * n) {
            return Err(format!(
                "{} bytes for {n} supplementary",
                self.positions.len()
            ));
        }
        if (0..n.saturating_sub(1))
            .any(|i| self.u16_at(BMP_LEN + 1 + i) >= self.u16_at(BMP_LEN + 2 + i))
        {
            return Err("supplementary code points are not ascending".into());
        }
        Ok(())
    }
}
