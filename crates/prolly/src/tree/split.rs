//! Where nodes end: Dolt's content-defined chunk boundaries (`keySplitter`).
//!
//! After each item appended to a level, the splitter decides whether the node ends after it. The
//! decision depends only on the items since the previous boundary (their sizes and the key bytes
//! of the last one), which is what makes trees history independent.

use super::expm1::expm1;

/// No boundary is considered before a node holds this many bytes of keys and values.
pub const MIN_CHUNK_SIZE: u32 = 512;
/// A boundary is forced once a node holds more than this many bytes.
pub const MAX_CHUNK_SIZE: u32 = 16384;
/// Scale (λ) of the Weibull distribution of node sizes.
const WEIBULL_SCALE: f64 = 4096.0;
/// A node's keys plus values may not exceed this many bytes (FlatBuffers offsets are u16).
pub const MAX_NODE_DATA: usize = 65535;

/// Levels for which Dolt defines a salt; a tree never grows this tall in practice.
pub const MAX_LEVELS: usize = 15;

/// Per-level XXH3 seeds: the first 8 bytes (little-endian) of SHA-512 of the byte `level + 1`.
/// Checked against the definition by a test.
pub const LEVEL_SALTS: [u64; MAX_LEVELS] = [
    0xddfbc13668b6547b,
    0x53a857b6c948b8fa,
    0xaa94df7d81f55be4,
    0x135b7b5025c7b8b5,
    0x2cfa558a443e5f09,
    0x047c5bf97d081558,
    0xb610e6dfa1115d36,
    0xb8010bf4f86b5af6,
    0xbba25ed3f85b7bf2,
    0xe58686ca388868be,
    0x0fbcdf6f2bff7c52,
    0xa444571e649ab32a,
    0x2a047bf3cc02719f,
    0x2e8818c87b88473e,
    0xd66369bd2feba7c5,
];

/// The 32-bit key hash the boundary test uses at `level`.
#[inline]
pub fn key_hash(key: &[u8], level: u8) -> u32 {
    let salt = LEVEL_SALTS
        .get(usize::from(level))
        .copied()
        .unwrap_or(LEVEL_SALTS[MAX_LEVELS - 1]);
    xxhash_rust::xxh3::xxh3_64_with_seed(key, salt) as u32
}

/// Weibull CDF-based test: does a node of `size` bytes whose last item took `this_size` bytes
/// end here, given the key hash `hash`? (The splitter's test, one item at a time; tests check
/// the splitter against it.)
#[cfg(test)]
fn weibull_check(size: u32, this_size: u32, hash: u32) -> bool {
    weibull_decide(weibull_cdf(size - this_size), weibull_cdf(size), hash)
}

#[inline]
fn weibull_decide(start: f64, end: f64, hash: u32) -> bool {
    let p = f64::from(hash) / f64::from(u32::MAX);
    let d = 1.0 - start;
    if d <= 0.0 {
        return true;
    }
    p < (end - start) / d
}

/// The running state of one level's splitter.
#[derive(Clone, Copy, Debug)]
pub struct Splitter {
    size: u32,
    /// The CDF table (fetched once per splitter).
    cdf: &'static [f64],
}

/// `F(size) = -expm1(-(size/4096)^4)`, the Weibull CDF the boundary test uses.
#[inline]
fn weibull_cdf_direct(size: u32) -> f64 {
    let a = f64::from(size) / WEIBULL_SCALE;
    -expm1(-(a * a * a * a))
}

/// `F(size)` for every size the boundary test can see (`0..=MAX_CHUNK_SIZE`), computed once:
/// a table read is bit-identical to the computation and much cheaper.
fn cdf_table() -> &'static [f64] {
    static TABLE: std::sync::OnceLock<Box<[f64]>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| (0..=MAX_CHUNK_SIZE).map(weibull_cdf_direct).collect())
}

/// `F(size)`, from the table when in range.
#[cfg(test)]
#[inline]
fn weibull_cdf(size: u32) -> f64 {
    match cdf_table().get(size as usize) {
        Some(&f) => f,
        None => weibull_cdf_direct(size),
    }
}

impl Default for Splitter {
    fn default() -> Self {
        Splitter::new()
    }
}

impl Splitter {
    /// A splitter at the start of a node.
    pub fn new() -> Splitter {
        Splitter {
            size: 0,
            cdf: cdf_table(),
        }
    }

    /// Feeds one item; true if the node should end after it. `value_len` is 20 at internal
    /// levels (the child address).
    #[inline(always)]
    pub fn append(&mut self, key: &[u8], value_len: usize, level: u8) -> bool {
        let this_size = (key.len() + value_len) as u32;
        self.size = self.size.saturating_add(this_size);
        if self.size < MIN_CHUNK_SIZE {
            false
        } else if self.size > MAX_CHUNK_SIZE {
            true
        } else {
            let prev = self.size - this_size;
            // Both sizes are <= MAX_CHUNK_SIZE here, inside the table.
            let start = self.cdf.get(prev as usize).copied().unwrap_or(0.0);
            let end = self.cdf.get(self.size as usize).copied().unwrap_or(1.0);
            weibull_decide(start, end, key_hash(key, level))
        }
    }

    /// Accounts for `bytes` of items known not to end the node (see
    /// `LevelBuilder::extend_unsplit`).
    #[inline]
    pub(crate) fn add_size(&mut self, bytes: usize) {
        self.size = self
            .size
            .saturating_add(u32::try_from(bytes).unwrap_or(u32::MAX));
    }

    /// Starts a new node.
    #[inline]
    pub fn reset(&mut self) {
        self.size = 0;
    }

    /// True at the start of a node.
    #[inline]
    pub fn is_fresh(&self) -> bool {
        self.size == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    #[test]
    fn salts_match_their_definition() {
        for (level, salt) in LEVEL_SALTS.iter().enumerate() {
            let d = sha2::Sha512::digest([level as u8 + 1]);
            let mut first = [0u8; 8];
            first.copy_from_slice(&d[..8]);
            assert_eq!(u64::from_le_bytes(first), *salt, "level {level}");
        }
    }

    #[test]
    fn weibull_edges() {
        // At the forced size the probability is essentially 1.
        assert!(weibull_check(16384, 16, u32::MAX - 1));
        // Tiny increments right at the minimum rarely split.
        assert!(!weibull_check(512, 16, u32::MAX));
        assert!(weibull_check(4096, 16, 0));
    }

    #[test]
    fn table_equals_direct_computation() {
        for size in 0..=MAX_CHUNK_SIZE {
            assert_eq!(
                weibull_cdf(size).to_bits(),
                weibull_cdf_direct(size).to_bits()
            );
        }
    }

    #[test]
    fn cached_decisions_equal_direct_ones() {
        let mut s = Splitter::new();
        let mut size = 0u32;
        let mut x = 7u64;
        for i in 0..200_000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
            let len = 4 + (x >> 60) as usize;
            let key = i.to_le_bytes().repeat(len / 4 + 1);
            let this = key.len() as u32 + 20;
            size += this;
            let direct = if size < MIN_CHUNK_SIZE {
                false
            } else if size > MAX_CHUNK_SIZE {
                true
            } else {
                weibull_check(size, this, key_hash(&key, 1))
            };
            assert_eq!(s.append(&key, 20, 1), direct);
            if direct {
                s.reset();
                size = 0;
            }
        }
    }

    #[test]
    fn splitter_bounds() {
        let mut s = Splitter::new();
        let key = [0u8; 10];
        for _ in 0..50 {
            assert!(!s.append(&key, 0, 0), "no split below 512 bytes");
        }
        let big = [1u8; 17000];
        assert!(s.append(&big, 0, 0), "forced split above 16384 bytes");
    }
}
