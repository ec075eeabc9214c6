//! Dolt chunk addresses (SHA-512, first 20 bytes) of many chunks at once.
//!
//! One SHA-512 is a chain of 80 dependent rounds per 128-byte block, so a single hash leaves
//! most of a core's vector units idle. A bulk reader has many independent chunks, so on x86-64
//! with AVX2 this hashes four of them side by side, one per 64-bit lane of a 256-bit register,
//! in less CPU time than hashing them one by one (measurements: `docs/PERF.md`). Chunks join
//! a lane as soon as one frees up, so chunks of different lengths keep the lanes busy.
//! Elsewhere (or without AVX2, or under Miri, which cannot run AVX2) each chunk is hashed on
//! its own.
//!
//! The constants are FIPS 180-4's: the first 64 bits of the fractional parts of the cube roots
//! of the first 80 primes (`K`) and of the square roots of the first 8 primes (`IV`).

use super::{Address, HashProfile, ADDRESS_LEN};

/// Round constants.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const K: [u64; 80] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
    0xd807aa98a3030242,
    0x12835b0145706fbe,
    0x243185be4ee4b28c,
    0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f,
    0x80deb1fe3b1696b1,
    0x9bdc06a725c71235,
    0xc19bf174cf692694,
    0xe49b69c19ef14ad2,
    0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5,
    0x240ca1cc77ac9c65,
    0x2de92c6f592b0275,
    0x4a7484aa6ea6e483,
    0x5cb0a9dcbd41fbd4,
    0x76f988da831153b5,
    0x983e5152ee66dfab,
    0xa831c66d2db43210,
    0xb00327c898fb213f,
    0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2,
    0xd5a79147930aa725,
    0x06ca6351e003826f,
    0x142929670a0e6e70,
    0x27b70a8546d22ffc,
    0x2e1b21385c26c926,
    0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df,
    0x650a73548baf63de,
    0x766a0abb3c77b2a8,
    0x81c2c92e47edaee6,
    0x92722c851482353b,
    0xa2bfe8a14cf10364,
    0xa81a664bbc423001,
    0xc24b8b70d0f89791,
    0xc76c51a30654be30,
    0xd192e819d6ef5218,
    0xd69906245565a910,
    0xf40e35855771202a,
    0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8,
    0x1e376c085141ab53,
    0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63,
    0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc,
    0x78a5636f43172f60,
    0x84c87814a1f0ab72,
    0x8cc702081a6439ec,
    0x90befffa23631e28,
    0xa4506cebde82bde9,
    0xbef9a3f7b2c67915,
    0xc67178f2e372532b,
    0xca273eceea26619c,
    0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e,
    0xf57d4f7fee6ed178,
    0x06f067aa72176fba,
    0x0a637dc5a2c898a6,
    0x113f9804bef90dae,
    0x1b710b35131c471b,
    0x28db77f523047d84,
    0x32caab7b40c72493,
    0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6,
    0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec,
    0x6c44198c4a475817,
];

/// Initial hash value.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const IV: [u64; 8] = [
    0x6a09e667f3bcc908,
    0xbb67ae8584caa73b,
    0x3c6ef372fe94f82b,
    0xa54ff53a5f1d36f1,
    0x510e527fade682d1,
    0x9b05688c2b3e6c1f,
    0x1f83d9abfb41bd6b,
    0x5be0cd19137e2179,
];

/// Block length in bytes.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const BLOCK: usize = 128;

/// Writes the Dolt address of `chunks[i]` into `out[i]` (for as many as both hold).
pub(super) fn addresses_of(chunks: &[&[u8]], out: &mut [Address]) {
    #[cfg(target_arch = "x86_64")]
    {
        if !cfg!(miri) && chunks.len() > 1 && std::arch::is_x86_feature_detected!("avx2") {
            four_lanes(chunks, out);
            return;
        }
    }
    for (chunk, a) in chunks.iter().zip(out.iter_mut()) {
        *a = HashProfile::Dolt.address_of(chunk);
    }
}

/// One chunk being hashed in a lane: its whole blocks come straight from the chunk, the last
/// one or two (the rest of the chunk, the 0x80 byte, zeros, the bit length) from `tail`.
#[cfg(target_arch = "x86_64")]
struct Lane<'c> {
    chunk: &'c [u8],
    /// Index of the chunk (and of its address in the output).
    index: usize,
    /// Offset of the next whole block of `chunk`.
    at: usize,
    tail: [u8; 2 * BLOCK],
    tail_blocks: usize,
    tail_at: usize,
}

#[cfg(target_arch = "x86_64")]
impl<'c> Lane<'c> {
    fn new(chunk: &'c [u8], index: usize) -> Lane<'c> {
        let whole = chunk.len() / BLOCK * BLOCK;
        let rest = chunk.get(whole..).unwrap_or(&[]);
        let mut tail = [0u8; 2 * BLOCK];
        // `rest` is shorter than a block, so it, the 0x80 byte and the length fit in two.
        if let Some(dst) = tail.get_mut(..rest.len()) {
            dst.copy_from_slice(rest);
        }
        if let Some(b) = tail.get_mut(rest.len()) {
            *b = 0x80;
        }
        let tail_blocks = if rest.len() + 1 + 16 <= BLOCK { 1 } else { 2 };
        let bits = (chunk.len() as u128).wrapping_mul(8);
        let end = tail_blocks * BLOCK;
        if let Some(dst) = tail.get_mut(end - 16..end) {
            dst.copy_from_slice(&bits.to_be_bytes());
        }
        Lane {
            chunk,
            index,
            at: 0,
            tail,
            tail_blocks,
            tail_at: 0,
        }
    }

    /// True while whole blocks of the chunk itself are left.
    fn in_chunk(&self) -> bool {
        self.at + BLOCK <= self.chunk.len()
    }

    /// Blocks left in the current source (the chunk's whole blocks, then the tail): at least 1.
    fn ahead(&self) -> usize {
        if self.in_chunk() {
            (self.chunk.len() - self.at) / BLOCK
        } else {
            self.tail_blocks.saturating_sub(self.tail_at).max(1)
        }
    }

    /// The next `n` blocks (`n` at most [`Lane::ahead`]), in one slice.
    fn blocks(&self, n: usize) -> &[u8] {
        let bytes = if self.in_chunk() {
            self.chunk.get(self.at..self.at + n * BLOCK)
        } else {
            self.tail
                .get(self.tail_at * BLOCK..(self.tail_at + n) * BLOCK)
        };
        bytes.unwrap_or(&[])
    }

    /// Moves past the `n` blocks just compressed; true when the last one was the last.
    fn advance(&mut self, n: usize) -> bool {
        if self.in_chunk() {
            self.at += n * BLOCK;
            false
        } else {
            self.tail_at += n;
            self.tail_at >= self.tail_blocks
        }
    }
}

/// Hashes `chunks` four at a time with AVX2 (which the caller has detected). Each call of the
/// compression function runs as many blocks as every busy lane has left in its current source
/// (chunk or tail), so the lanes' states stay in registers between blocks.
#[cfg(target_arch = "x86_64")]
fn four_lanes(chunks: &[&[u8]], out: &mut [Address]) {
    let mut lanes: [Option<Lane<'_>>; 4] = [None, None, None, None];
    let mut state = [[0u64; 4]; 8];
    let mut next = 0;
    loop {
        for (l, lane) in lanes.iter_mut().enumerate() {
            if lane.is_none() {
                if let Some(chunk) = chunks.get(next) {
                    *lane = Some(Lane::new(chunk, next));
                    for (s, iv) in state.iter_mut().zip(IV) {
                        s[l] = iv;
                    }
                    next += 1;
                }
            }
        }
        let Some(run) = lanes.iter().flatten().map(Lane::ahead).min() else {
            return;
        };
        let busy = lanes.iter().flatten().map(|lane| lane.blocks(run)).next();
        // An idle lane hashes a busy lane's blocks again (its result is never read).
        let data = [0, 1, 2, 3].map(|l| match &lanes[l] {
            Some(lane) => lane.blocks(run),
            None => busy.unwrap_or(&[]),
        });
        // SAFETY: `addresses_of` only calls `four_lanes` after detecting AVX2 at run time.
        unsafe { avx2::compress(&mut state, data) };
        for (l, slot) in lanes.iter_mut().enumerate() {
            let Some(lane) = slot else { continue };
            if lane.advance(run) {
                if let Some(a) = out.get_mut(lane.index) {
                    let mut digest = [0u8; ADDRESS_LEN + 4];
                    for (i, word) in digest.chunks_exact_mut(8).enumerate() {
                        word.copy_from_slice(&state[i][l].to_be_bytes());
                    }
                    a.0.copy_from_slice(&digest[..ADDRESS_LEN]);
                }
                *slot = None;
            }
        }
    }
}

/// The compression function on four independent states and blocks, one per 64-bit lane.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use super::{BLOCK, K};

    /// Rotates each 64-bit lane right by a constant.
    macro_rules! rotr {
        ($x:expr, $n:literal) => {
            _mm256_or_si256(
                _mm256_srli_epi64::<$n>($x),
                _mm256_slli_epi64::<{ 64 - $n }>($x),
            )
        };
    }

    /// Big-endian word `t` of a block.
    #[inline(always)]
    fn word(b: &[u8; BLOCK], t: usize) -> i64 {
        let mut w = [0u8; 8];
        if let Some(src) = b.get(8 * t..8 * t + 8) {
            w.copy_from_slice(src);
        }
        i64::from_be_bytes(w)
    }

    /// The blocks of `data[l]` into the SHA-512 state of lane `l`, for each of the four lanes
    /// (`state[i][l]` is word `i` of lane `l`). The lanes take the same number of blocks: as
    /// many as the shortest slice holds whole.
    #[target_feature(enable = "avx2")]
    pub(super) fn compress(state: &mut [[u64; 4]; 8], data: [&[u8]; 4]) {
        let [d0, d1, d2, d3] = data.map(|d| d.chunks_exact(BLOCK));
        let mut s =
            state.map(|l| _mm256_set_epi64x(l[3] as i64, l[2] as i64, l[1] as i64, l[0] as i64));
        for (((b0, b1), b2), b3) in d0.zip(d1).zip(d2).zip(d3) {
            let (Ok(b0), Ok(b1), Ok(b2), Ok(b3)) = (
                <&[u8; BLOCK]>::try_from(b0),
                <&[u8; BLOCK]>::try_from(b1),
                <&[u8; BLOCK]>::try_from(b2),
                <&[u8; BLOCK]>::try_from(b3),
            ) else {
                break;
            };
            s = block(s, [b0, b1, b2, b3]);
        }
        for (lanes, v) in state.iter_mut().zip(s) {
            *lanes = [
                _mm256_extract_epi64::<0>(v) as u64,
                _mm256_extract_epi64::<1>(v) as u64,
                _mm256_extract_epi64::<2>(v) as u64,
                _mm256_extract_epi64::<3>(v) as u64,
            ];
        }
    }

    /// One block into each of four states held in registers.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn block(s: [__m256i; 8], blocks: [&[u8; BLOCK]; 4]) -> [__m256i; 8] {
        let [b0, b1, b2, b3] = blocks;
        let mut w = [_mm256_setzero_si256(); 16];
        for (t, wt) in w.iter_mut().enumerate() {
            *wt = _mm256_set_epi64x(word(b3, t), word(b2, t), word(b1, t), word(b0, t));
        }
        let [mut a, mut b, mut c, mut d, mut e, mut f, mut g, mut h] = s;
        // Maj(a, b, c) = ((a ^ b) & (b ^ c)) ^ b, and one round's a ^ b is the next round's
        // b ^ c: three operations a round instead of four.
        let mut bc = _mm256_xor_si256(b, c);
        // Round `$t` using schedule word `$i` (= `$t` mod 16). Fully unrolled, so every index
        // is a constant and the eight working variables are renamed rather than moved.
        macro_rules! round {
            ($t:expr, $i:expr) => {{
                let sum1 =
                    _mm256_xor_si256(_mm256_xor_si256(rotr!(e, 14), rotr!(e, 18)), rotr!(e, 41));
                let ch = _mm256_xor_si256(_mm256_and_si256(e, f), _mm256_andnot_si256(e, g));
                let kw = _mm256_add_epi64(_mm256_set1_epi64x(K[$t] as i64), w[$i]);
                let t1 = _mm256_add_epi64(_mm256_add_epi64(h, sum1), _mm256_add_epi64(ch, kw));
                let sum0 =
                    _mm256_xor_si256(_mm256_xor_si256(rotr!(a, 28), rotr!(a, 34)), rotr!(a, 39));
                let ab = _mm256_xor_si256(a, b);
                let maj = _mm256_xor_si256(_mm256_and_si256(ab, bc), b);
                bc = ab;
                let t2 = _mm256_add_epi64(sum0, maj);
                h = g;
                g = f;
                f = e;
                e = _mm256_add_epi64(d, t1);
                d = c;
                c = b;
                b = a;
                a = _mm256_add_epi64(t1, t2);
            }};
        }
        // The next schedule word in slot `$i` (rounds 16 to 79).
        macro_rules! schedule {
            ($i:expr) => {{
                let w2 = w[($i + 14) % 16];
                let w15 = w[($i + 1) % 16];
                let s1 = _mm256_xor_si256(
                    _mm256_xor_si256(rotr!(w2, 19), rotr!(w2, 61)),
                    _mm256_srli_epi64::<6>(w2),
                );
                let s0 = _mm256_xor_si256(
                    _mm256_xor_si256(rotr!(w15, 1), rotr!(w15, 8)),
                    _mm256_srli_epi64::<7>(w15),
                );
                w[$i] = _mm256_add_epi64(
                    _mm256_add_epi64(s1, w[($i + 9) % 16]),
                    _mm256_add_epi64(s0, w[$i]),
                );
            }};
        }
        macro_rules! step {
            (first, $base:expr, $i:expr) => {
                round!($base + $i, $i)
            };
            (later, $base:expr, $i:expr) => {{
                schedule!($i);
                round!($base + $i, $i)
            }};
        }
        macro_rules! sixteen {
            ($kind:ident, $base:expr) => {
                step!($kind, $base, 0);
                step!($kind, $base, 1);
                step!($kind, $base, 2);
                step!($kind, $base, 3);
                step!($kind, $base, 4);
                step!($kind, $base, 5);
                step!($kind, $base, 6);
                step!($kind, $base, 7);
                step!($kind, $base, 8);
                step!($kind, $base, 9);
                step!($kind, $base, 10);
                step!($kind, $base, 11);
                step!($kind, $base, 12);
                step!($kind, $base, 13);
                step!($kind, $base, 14);
                step!($kind, $base, 15);
            };
        }
        sixteen!(first, 0);
        sixteen!(later, 16);
        sixteen!(later, 32);
        sixteen!(later, 48);
        sixteen!(later, 64);
        // The last round's a ^ b has no next round.
        let _ = bc;
        let new = [a, b, c, d, e, f, g, h];
        [0, 1, 2, 3, 4, 5, 6, 7].map(|i| _mm256_add_epi64(s[i], new[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_are_fips() {
        // The first and last round constants and IV words as printed in FIPS 180-4.
        assert_eq!(K[0], 0x428a_2f98_d728_ae22);
        assert_eq!(K[79], 0x6c44_198c_4a47_5817);
        assert_eq!(IV[0], 0x6a09_e667_f3bc_c908);
        assert_eq!(IV[7], 0x5be0_cd19_137e_2179);
    }

    #[test]
    fn matches_one_at_a_time() {
        // Every length around the padding boundaries, then assorted longer ones, in batches
        // of every size so that lanes free up at different times. Miri runs the one-by-one
        // path (it cannot run AVX2) about 1000x slower: it gets a few lengths around the
        // padding boundaries, in one batch size.
        let (lens, batches): (Vec<usize>, &[usize]) = if cfg!(miri) {
            (
                vec![0, 1, 111, 112, 113, 127, 128, 129, 239, 240, 241],
                &[5],
            )
        } else {
            let mut lens: Vec<usize> = (0..300).collect();
            lens.extend([511, 512, 513, 4000, 4095, 4096, 4097, 65_536, 69_999]);
            (lens, &[1, 2, 3, 4, 5, 7, 16, 64])
        };
        let longest = lens.iter().max().copied().unwrap_or(0);
        let data: Vec<u8> = (0..longest as u32 + 64)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for &batch in batches {
            for group in lens.chunks(batch) {
                let chunks: Vec<&[u8]> = group
                    .iter()
                    .enumerate()
                    .map(|(i, &n)| &data[i..i + n])
                    .collect();
                let mut out = vec![Address::ZERO; chunks.len()];
                addresses_of(&chunks, &mut out);
                for (c, a) in chunks.iter().zip(&out) {
                    assert_eq!(*a, HashProfile::Dolt.address_of(c), "length {}", c.len());
                }
            }
        }
    }
}
