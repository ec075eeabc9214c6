//! Native chunk addresses (BLAKE3, first 20 bytes) of many chunks at once.
//!
//! BLAKE3 splits its input into 1 KiB chunks, hashes each chunk as a chain of 64-byte blocks,
//! and joins the chunks' chaining values in a binary tree of parent nodes. The `blake3` crate
//! hashes the chunks of *one* input side by side, but a tree node is only about 4 KiB: four
//! chunks, so its AVX2 code (eight 32-bit lanes) runs half empty, and the crate has no entry
//! point that hashes several independent inputs together. This module is that entry point:
//! it takes the chunks of every input of a batch (a level's worth of tree nodes) and hashes
//! them eight at a time, one per 32-bit lane of a 256-bit register; then the parent nodes of
//! every input, level by level, again eight at a time; the last compression of each input
//! (its single chunk's last block, or its top parent) carries the ROOT flag, and its first
//! 20 bytes are the address. With every lane busy, a tree's nodes take fewer hashing
//! instructions than through `blake3::hash` node by node (measurements: `docs/PERF.md`).
//!
//! Where the CPU has AVX-512VL, the same eight-lane kernel is compiled a second time to
//! rotate with its one-instruction rotate (`vprord`) instead of two shifts and an or, which
//! is faster than the AVX2 build.
//!
//! A single input goes through the lanes too where its length makes that faster than
//! `blake3::hash` (see `one_input_prefers_lanes`). Without AVX2 (or under Miri, which cannot
//! run it) each input is hashed with `blake3::hash`. The same batch
//! logic also runs on a portable one-lane-at-a-time compression function in the tests, so the
//! scheduling of chunks, blocks, flags and parents is checked under Miri too.
//!
//! The constants are BLAKE3's (the BLAKE3 specification, section 2): the IV is SHA-256's, the
//! message permutation and the domain flags are the specification's.

// Only x86-64 has the eight-lane kernel; elsewhere the batch code is compiled for the tests.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

use super::{Address, ADDRESS_LEN};

/// The initial chaining value (the key, when hashing without one).
const IV: [u32; 8] = [
    0x6A09_E667,
    0xBB67_AE85,
    0x3C6E_F372,
    0xA54F_F53A,
    0x510E_527F,
    0x9B05_688C,
    0x1F83_D9AB,
    0x5BE0_CD19,
];

/// Bytes per block (one compression).
const BLOCK_LEN: usize = 64;
/// Bytes per chunk (the leaves of BLAKE3's tree).
const CHUNK_LEN: usize = 1024;

/// Domain flags.
const CHUNK_START: u32 = 1;
const CHUNK_END: u32 = 1 << 1;
const PARENT: u32 = 1 << 2;
const ROOT: u32 = 1 << 3;

/// Lanes hashed side by side (32-bit words in a 256-bit register).
const LANES: usize = 8;

/// Rounds of the compression function.
const ROUNDS: usize = 7;

/// The message permutation applied between rounds.
const PERMUTATION: [usize; 16] = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];

/// Which message word each round reads in each position: the permutation applied `r` times,
/// so that no round has to move the message.
const SCHEDULE: [[usize; 16]; ROUNDS] = schedule();

const fn schedule() -> [[usize; 16]; ROUNDS] {
    let mut s = [[0; 16]; ROUNDS];
    let mut i = 0;
    while i < 16 {
        s[0][i] = i;
        i += 1;
    }
    let mut r = 1;
    while r < ROUNDS {
        let mut i = 0;
        while i < 16 {
            s[r][i] = s[r - 1][PERMUTATION[i]];
            i += 1;
        }
        r += 1;
    }
    s
}

/// Writes the blake3 address of `chunks[i]` into `out[i]` (for as many as both hold).
pub(super) fn addresses_of(chunks: &[&[u8]], out: &mut [Address]) {
    if chunks.len() > 1 && hash_in_lanes(chunks, out) {
        return;
    }
    for (chunk, a) in chunks.iter().zip(out.iter_mut()) {
        *a = address_of(chunk);
    }
}

/// The blake3 address of one input: its chunks side by side in the lanes where that is faster
/// than `blake3::hash` ([`one_input_prefers_lanes`]), else `blake3::hash`.
pub(super) fn address_of(input: &[u8]) -> Address {
    let mut out = [Address::ZERO];
    if one_input_prefers_lanes(input.len()) && hash_in_lanes(&[input], &mut out) {
        return out[0];
    }
    let mut a = Address::ZERO;
    a.0.copy_from_slice(&blake3::hash(input).as_bytes()[..ADDRESS_LEN]);
    a
}

/// True if one input of `len` bytes hashes faster with its 1 KiB chunks side by side in the
/// lanes than through `blake3::hash`. The crate hashes whole power-of-two groups of chunks
/// side by side but the chunks after them one block at a time, so it is slowest just below a
/// power of two; the lanes take about one chunk's time for up to eight chunks, two for up to
/// sixteen. The lengths below are those where timing both every 256 bytes from 1 KiB to
/// 16 KiB found the lanes faster (`docs/PERF.md`); elsewhere, and at exact powers of two, the
/// crate is faster.
fn one_input_prefers_lanes(len: usize) -> bool {
    let chunks = len.div_ceil(CHUNK_LEN);
    !len.is_power_of_two() && matches!(chunks, 4 | 6..=8 | 14..=16)
}

/// Hashes `inputs` with the widest lane kernel this CPU has; false (nothing written) where it
/// has none (or under Miri, which cannot run them).
fn hash_in_lanes(inputs: &[&[u8]], out: &mut [Address]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if !cfg!(miri) {
        if let Some(avx512) = avx512::Avx512::detect() {
            hash_batch(&avx512, inputs, out);
            return true;
        }
        if let Some(avx2) = avx2::Avx2::detect() {
            hash_batch(&avx2, inputs, out);
            return true;
        }
    }
    let _ = (inputs, out);
    false
}

/// A chain of compressions in one lane, from the IV: a chunk's blocks, or a parent's one block.
#[derive(Clone, Copy)]
struct Lane<'a> {
    /// The blocks before the last, whole.
    blocks: &'a [[u8; BLOCK_LEN]],
    /// The last block, zero-padded after `last_len` bytes.
    last: &'a [u8; BLOCK_LEN],
    last_len: u32,
    /// The chunk's index in its input (0 for parents).
    counter: u64,
    /// Flags of the first block: `CHUNK_START` for a chunk, none for a parent.
    start_flags: u32,
    /// Flags of the last block: `CHUNK_END` or `PARENT`, with `ROOT` for an input's root.
    end_flags: u32,
}

/// A chaining value (or the first 32 bytes of a root's output), little-endian words.
type Cv = [u8; 32];

/// A compression function over eight lanes.
trait Kernel {
    /// The chaining value each lane ends with, lane `l`'s in element `l`.
    fn run(&self, lanes: &[Lane<'_>; LANES]) -> [Cv; LANES];
}

/// One chunk of one input, waiting for its chaining value. It names its bytes by position
/// (input, chunk index) rather than borrowing them, so that the lists of jobs can be kept
/// from one batch to the next ([`Scratch`]).
#[derive(Clone, Copy)]
struct ChunkJob {
    /// The input it belongs to (an index into the batch's inputs).
    input: usize,
    /// The chunk's index in its input.
    counter: u64,
    /// The chunk's length: `CHUNK_LEN` except for an input's last chunk.
    len: usize,
    /// The input's only chunk: its last block is the root.
    root: bool,
    /// Where its chaining value goes.
    slot: usize,
}

impl ChunkJob {
    /// Blocks in the chunk (an empty chunk still has one, empty, block).
    fn blocks(&self) -> usize {
        self.len.div_ceil(BLOCK_LEN).max(1)
    }

    /// The chunk's bytes, out of the batch's `inputs`.
    fn data<'a>(&self, inputs: &[&'a [u8]]) -> &'a [u8] {
        let start = self.counter as usize * CHUNK_LEN;
        inputs
            .get(self.input)
            .and_then(|input| input.get(start..start + self.len))
            .unwrap_or_default()
    }

    /// The chunk as a lane; `tail` holds a copy of its last partial (or empty) block.
    fn lane<'a>(&self, inputs: &[&'a [u8]], tail: &'a [u8; BLOCK_LEN]) -> Lane<'a> {
        let (whole, rest) = self.data(inputs).as_chunks::<BLOCK_LEN>();
        let (blocks, last, last_len) = match whole.split_last() {
            Some((last, before)) if rest.is_empty() => (before, last, BLOCK_LEN as u32),
            _ => (whole, tail, rest.len() as u32),
        };
        Lane {
            blocks,
            last,
            last_len,
            counter: self.counter,
            start_flags: CHUNK_START,
            end_flags: if self.root {
                CHUNK_END | ROOT
            } else {
                CHUNK_END
            },
        }
    }
}

/// A parent node waiting for its chaining value: its children are slots `left` and
/// `left + 1`, it goes to `slot`.
#[derive(Clone, Copy)]
struct ParentJob {
    left: usize,
    slot: usize,
    root: bool,
}

/// The working lists of [`hash_batch`], kept per thread between batches: hashing one node at a
/// time (a single edit hashes three) would otherwise allocate five lists per node.
#[derive(Default)]
struct Scratch {
    trees: Vec<(usize, usize)>,
    jobs: Vec<ChunkJob>,
    partial: Vec<ChunkJob>,
    cvs: Vec<Cv>,
    parents: Vec<ParentJob>,
}

thread_local! {
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::new(Scratch::default());
}

/// Hashes every input of `inputs` with kernel `k`, address `i` into `out[i]`.
fn hash_batch<K: Kernel>(k: &K, inputs: &[&[u8]], out: &mut [Address]) {
    let hashed = SCRATCH.try_with(|s| match s.try_borrow_mut() {
        Ok(mut scratch) => hash_batch_with(k, inputs, out, &mut scratch),
        Err(_) => hash_batch_with(k, inputs, out, &mut Scratch::default()),
    });
    if hashed.is_err() {
        // The thread is being torn down: lists of its own.
        hash_batch_with(k, inputs, out, &mut Scratch::default());
    }
}

/// [`hash_batch`] with the working lists `scratch` (emptied first).
fn hash_batch_with<K: Kernel>(k: &K, inputs: &[&[u8]], out: &mut [Address], scratch: &mut Scratch) {
    let n = inputs.len().min(out.len());
    let inputs = inputs.get(..n).unwrap_or_default();
    let Scratch {
        trees,
        jobs,
        partial,
        cvs,
        parents,
    } = scratch;
    // Input `i`'s chaining values take slots `start..start + count` (`trees[i]`); the parents
    // of a level replace them in place, so the root ends in the first.
    trees.clear();
    // Whole chunks first, then the others longest first, so that the lanes of a group mostly
    // finish together.
    jobs.clear();
    partial.clear();
    let mut slots = 0;
    for (i, input) in inputs.iter().enumerate() {
        let count = input.len().div_ceil(CHUNK_LEN).max(1);
        trees.push((slots, count));
        if input.is_empty() {
            partial.push(ChunkJob {
                input: i,
                counter: 0,
                len: 0,
                root: true,
                slot: slots,
            });
        }
        for (j, data) in input.chunks(CHUNK_LEN).enumerate() {
            let job = ChunkJob {
                input: i,
                counter: j as u64,
                len: data.len(),
                root: count == 1,
                slot: slots + j,
            };
            if data.len() == CHUNK_LEN {
                jobs.push(job);
            } else {
                partial.push(job);
            }
        }
        slots += count;
    }
    partial.sort_unstable_by_key(|job| std::cmp::Reverse(job.blocks()));
    jobs.append(partial);

    cvs.clear();
    cvs.resize(slots, [0; 32]);
    for group in jobs.chunks(LANES) {
        let Some(first) = group.first() else { continue };
        // Lanes without a chunk repeat the first one; their results are dropped.
        let job = |l: usize| group.get(l).unwrap_or(first);
        let mut tails = [[0u8; BLOCK_LEN]; LANES];
        for (l, tail) in tails.iter_mut().enumerate() {
            let rest = job(l).data(inputs).as_chunks::<BLOCK_LEN>().1;
            if let Some(dst) = tail.get_mut(..rest.len()) {
                dst.copy_from_slice(rest);
            }
        }
        let lanes = std::array::from_fn(|l| job(l).lane(inputs, &tails[l]));
        let result = k.run(&lanes);
        for (job, cv) in group.iter().zip(result) {
            if let Some(slot) = cvs.get_mut(job.slot) {
                *slot = cv;
            }
        }
    }

    // Parents, a level at a time across every input: children `2i` and `2i + 1` (adjacent
    // slots, so their chaining values are the parent's block as they lie) become entry `i`;
    // an odd last child moves up as it is. An input's last parent is its root. Within a
    // level, a parent's slot is never a child slot of a later parent of its input, so the
    // groups can write as they go.
    loop {
        parents.clear();
        for &(start, count) in trees.iter() {
            for i in 0..count / 2 {
                parents.push(ParentJob {
                    left: start + 2 * i,
                    slot: start + i,
                    root: count == 2,
                });
            }
        }
        if parents.is_empty() {
            break;
        }
        for group in parents.chunks(LANES) {
            let Some(first) = group.first() else { continue };
            let lanes: [Lane<'_>; LANES] = std::array::from_fn(|l| {
                let job = group.get(l).unwrap_or(first);
                let block = cvs
                    .get(job.left..job.left + 2)
                    .and_then(|pair| <&[u8; BLOCK_LEN]>::try_from(pair.as_flattened()).ok())
                    .unwrap_or(&[0; BLOCK_LEN]);
                Lane {
                    blocks: &[],
                    last: block,
                    last_len: BLOCK_LEN as u32,
                    counter: 0,
                    start_flags: 0,
                    end_flags: if job.root { PARENT | ROOT } else { PARENT },
                }
            });
            let result = k.run(&lanes);
            for (job, cv) in group.iter().zip(result) {
                if let Some(slot) = cvs.get_mut(job.slot) {
                    *slot = cv;
                }
            }
        }
        for (start, count) in trees.iter_mut() {
            if *count >= 2 && *count % 2 == 1 {
                // The level's parents are written: the odd child's new slot is free.
                if let Some(&odd) = cvs.get(*start + *count - 1) {
                    if let Some(slot) = cvs.get_mut(*start + *count / 2) {
                        *slot = odd;
                    }
                }
            }
            *count = count.div_ceil(2);
        }
    }

    for (a, &(start, _)) in out.iter_mut().zip(trees.iter()) {
        if let Some(root) = cvs.get(start).and_then(|cv| cv.get(..ADDRESS_LEN)) {
            a.0.copy_from_slice(root);
        }
    }
}

/// Rotates each 32-bit lane of an AVX2 vector right by a constant: two shifts and an or.
#[cfg(target_arch = "x86_64")]
macro_rules! rotr_by_shifts {
    ($x:expr, $n:literal) => {
        _mm256_or_si256(
            _mm256_srli_epi32::<$n>($x),
            _mm256_slli_epi32::<{ 32 - $n }>($x),
        )
    };
}

/// Rotates each 32-bit lane right by a constant in one instruction (AVX-512VL `vprord`).
#[cfg(target_arch = "x86_64")]
macro_rules! rotr_vprord {
    ($x:expr, $n:literal) => {
        _mm256_ror_epi32::<$n>($x)
    };
}

/// The eight-lane compression kernel, compiled once per instruction set: module `$module`,
/// kernel type `$kernel`, made only on CPUs with every feature of `$features` (listed again as
/// `$feature`s for detection), rotating with the macro `$rotr`. (`$d` is `$`, for the module's
/// own macros; the module's body keeps the indentation it had as a plain module.)
#[cfg(target_arch = "x86_64")]
macro_rules! eight_lane_kernel {
    (
        $d:tt $module:ident,
        $kernel:ident,
        $features:literal,
        [$($feature:tt),+],
        $rotr:ident
    ) => {
        mod $module {
    use std::arch::x86_64::*;

    use super::{Cv, Kernel, Lane, BLOCK_LEN, IV, LANES, SCHEDULE};

    /// Proof that this CPU has the module's features: `detect` is the only way to make one.
    pub(super) struct $kernel(());

    impl $kernel {
        /// One if the CPU has the module's features.
        pub(super) fn detect() -> Option<$kernel> {
            ($(std::arch::is_x86_feature_detected!($feature))&&+).then_some($kernel(()))
        }
    }

    impl Kernel for $kernel {
        fn run(&self, lanes: &[Lane<'_>; LANES]) -> [Cv; LANES] {
            // SAFETY: a kernel value exists only once `detect` found the module's features on
            // this CPU.
            unsafe { run(lanes) }
        }
    }

    /// The eight words as one vector, word `l` in lane `l`.
    #[target_feature(enable = $features)]
    #[inline]
    fn vector(w: &[u32; LANES]) -> __m256i {
        _mm256_setr_epi32(
            w[0] as i32,
            w[1] as i32,
            w[2] as i32,
            w[3] as i32,
            w[4] as i32,
            w[5] as i32,
            w[6] as i32,
            w[7] as i32,
        )
    }

    /// The vector's 32 bytes.
    #[target_feature(enable = $features)]
    #[inline]
    fn bytes(v: __m256i) -> Cv {
        let mut b = [0u8; 32];
        // SAFETY: `b` is 32 writable bytes, and `storeu` needs no alignment.
        unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), v) };
        b
    }

    /// The low and high halves of eight 64-bit counters.
    #[target_feature(enable = $features)]
    #[inline]
    fn counter_halves(c: [u64; LANES]) -> (__m256i, __m256i) {
        (
            vector(&c.map(|c| c as u32)),
            vector(&c.map(|c| (c >> 32) as u32)),
        )
    }

    /// Transposes eight vectors of eight 32-bit words: word `i` of `v[j]` becomes word `j` of
    /// the result's `i`.
    #[target_feature(enable = $features)]
    #[inline]
    fn transpose(v: [__m256i; 8]) -> [__m256i; 8] {
        // Pairs of rows interleaved by word, then by 64-bit pair: each 128-bit half then holds
        // four words of one column; the halves are swapped into place last.
        let ab_lo = _mm256_unpacklo_epi32(v[0], v[1]);
        let ab_hi = _mm256_unpackhi_epi32(v[0], v[1]);
        let cd_lo = _mm256_unpacklo_epi32(v[2], v[3]);
        let cd_hi = _mm256_unpackhi_epi32(v[2], v[3]);
        let ef_lo = _mm256_unpacklo_epi32(v[4], v[5]);
        let ef_hi = _mm256_unpackhi_epi32(v[4], v[5]);
        let gh_lo = _mm256_unpacklo_epi32(v[6], v[7]);
        let gh_hi = _mm256_unpackhi_epi32(v[6], v[7]);
        // Columns 0 and 4 (in the two halves), 1 and 5, 2 and 6, 3 and 7.
        let abcd_04 = _mm256_unpacklo_epi64(ab_lo, cd_lo);
        let abcd_15 = _mm256_unpackhi_epi64(ab_lo, cd_lo);
        let abcd_26 = _mm256_unpacklo_epi64(ab_hi, cd_hi);
        let abcd_37 = _mm256_unpackhi_epi64(ab_hi, cd_hi);
        let efgh_04 = _mm256_unpacklo_epi64(ef_lo, gh_lo);
        let efgh_15 = _mm256_unpackhi_epi64(ef_lo, gh_lo);
        let efgh_26 = _mm256_unpacklo_epi64(ef_hi, gh_hi);
        let efgh_37 = _mm256_unpackhi_epi64(ef_hi, gh_hi);
        [
            _mm256_permute2x128_si256::<0x20>(abcd_04, efgh_04),
            _mm256_permute2x128_si256::<0x20>(abcd_15, efgh_15),
            _mm256_permute2x128_si256::<0x20>(abcd_26, efgh_26),
            _mm256_permute2x128_si256::<0x20>(abcd_37, efgh_37),
            _mm256_permute2x128_si256::<0x31>(abcd_04, efgh_04),
            _mm256_permute2x128_si256::<0x31>(abcd_15, efgh_15),
            _mm256_permute2x128_si256::<0x31>(abcd_26, efgh_26),
            _mm256_permute2x128_si256::<0x31>(abcd_37, efgh_37),
        ]
    }

    /// The message words of eight blocks, word `i` of block `l` in lane `l` of vector `i`.
    #[target_feature(enable = $features)]
    #[inline]
    fn message(blocks: [&[u8; BLOCK_LEN]; LANES]) -> [__m256i; 16] {
        let halves = blocks.map(|b| {
            let p = b.as_ptr();
            // SAFETY: a block is 64 readable bytes: bytes 0..32 and 32..64 are in bounds, and
            // `loadu` needs no alignment.
            unsafe {
                (
                    _mm256_loadu_si256(p.cast()),
                    _mm256_loadu_si256(p.add(32).cast()),
                )
            }
        });
        let lo = transpose(halves.map(|h| h.0));
        let hi = transpose(halves.map(|h| h.1));
        [
            lo[0], lo[1], lo[2], lo[3], lo[4], lo[5], lo[6], lo[7], hi[0], hi[1], hi[2], hi[3],
            hi[4], hi[5], hi[6], hi[7],
        ]
    }

    /// BLAKE3's compression function on eight lanes: the new chaining values (the first half
    /// of the output; for a root, also the first 32 bytes of the digest).
    #[target_feature(enable = $features)]
    #[inline]
    fn compress(
        cv: [__m256i; 8],
        m: &[__m256i; 16],
        counter: (__m256i, __m256i),
        len: __m256i,
        flags: __m256i,
    ) -> [__m256i; 8] {
        let iv = |i: usize| _mm256_set1_epi32(IV[i] as i32);
        let mut v = [
            cv[0],
            cv[1],
            cv[2],
            cv[3],
            cv[4],
            cv[5],
            cv[6],
            cv[7],
            iv(0),
            iv(1),
            iv(2),
            iv(3),
            counter.0,
            counter.1,
            len,
            flags,
        ];
        // Byte shuffles that rotate each 32-bit lane right by 16 and by 8. Opaque to the
        // compiler, which would otherwise spend two word shuffles on each rotation by 16.
        let rot16 = std::hint::black_box(_mm256_setr_epi8(
            2, 3, 0, 1, 6, 7, 4, 5, 10, 11, 8, 9, 14, 15, 12, 13, 2, 3, 0, 1, 6, 7, 4, 5, 10, 11,
            8, 9, 14, 15, 12, 13,
        ));
        let rot8 = _mm256_setr_epi8(
            1, 2, 3, 0, 5, 6, 7, 4, 9, 10, 11, 8, 13, 14, 15, 12, 1, 2, 3, 0, 5, 6, 7, 4, 9, 10,
            11, 8, 13, 14, 15, 12,
        );
        // The mixing function on state words a, b, c, d with message words x and y.
        macro_rules! g {
            ($d a:literal, $d b:literal, $d c:literal, $d d:literal, $d x:expr, $d y:expr) => {
                v[$d a] = _mm256_add_epi32(_mm256_add_epi32(v[$d a], v[$d b]), $d x);
                v[$d d] = _mm256_shuffle_epi8(_mm256_xor_si256(v[$d d], v[$d a]), rot16);
                v[$d c] = _mm256_add_epi32(v[$d c], v[$d d]);
                v[$d b] = $rotr!(_mm256_xor_si256(v[$d b], v[$d c]), 12);
                v[$d a] = _mm256_add_epi32(_mm256_add_epi32(v[$d a], v[$d b]), $d y);
                v[$d d] = _mm256_shuffle_epi8(_mm256_xor_si256(v[$d d], v[$d a]), rot8);
                v[$d c] = _mm256_add_epi32(v[$d c], v[$d d]);
                v[$d b] = $rotr!(_mm256_xor_si256(v[$d b], v[$d c]), 7);
            };
        }
        // Columns, then diagonals, reading the message in round `$d r`'s order.
        macro_rules! round {
            ($d r:literal) => {
                let s = &SCHEDULE[$d r];
                g!(0, 4, 8, 12, m[s[0]], m[s[1]]);
                g!(1, 5, 9, 13, m[s[2]], m[s[3]]);
                g!(2, 6, 10, 14, m[s[4]], m[s[5]]);
                g!(3, 7, 11, 15, m[s[6]], m[s[7]]);
                g!(0, 5, 10, 15, m[s[8]], m[s[9]]);
                g!(1, 6, 11, 12, m[s[10]], m[s[11]]);
                g!(2, 7, 8, 13, m[s[12]], m[s[13]]);
                g!(3, 4, 9, 14, m[s[14]], m[s[15]]);
            };
        }
        round!(0);
        round!(1);
        round!(2);
        round!(3);
        round!(4);
        round!(5);
        round!(6);
        [
            _mm256_xor_si256(v[0], v[8]),
            _mm256_xor_si256(v[1], v[9]),
            _mm256_xor_si256(v[2], v[10]),
            _mm256_xor_si256(v[3], v[11]),
            _mm256_xor_si256(v[4], v[12]),
            _mm256_xor_si256(v[5], v[13]),
            _mm256_xor_si256(v[6], v[14]),
            _mm256_xor_si256(v[7], v[15]),
        ]
    }

    /// [`Kernel::run`]: block `b` of every lane at step `b`, the chaining values in registers;
    /// a lane's result is taken at its last block (later steps compress its last block again,
    /// for nothing).
    #[target_feature(enable = $features)]
    fn run(lanes: &[Lane<'_>; LANES]) -> [Cv; LANES] {
        let steps = lanes.iter().map(|l| l.blocks.len()).max().unwrap_or(0) + 1;
        let counter = counter_halves(lanes.map(|l| l.counter));
        let ends = vector(&lanes.map(|l| l.blocks.len() as u32));
        let last_len = vector(&lanes.map(|l| l.last_len));
        let start_flags = vector(&lanes.map(|l| l.start_flags));
        let end_flags = vector(&lanes.map(|l| l.end_flags));
        let whole = _mm256_set1_epi32(BLOCK_LEN as i32);
        let mut cv = IV.map(|w| _mm256_set1_epi32(w as i32));
        let mut out = [_mm256_setzero_si256(); 8];
        // First the blocks every lane has whole before its last (all but one of a group of
        // whole chunks): no lane ends, no per-lane choices.
        let common = lanes.iter().map(|l| l.blocks.len()).min().unwrap_or(0);
        let heads = lanes.map(|l| l.blocks.get(..common).unwrap_or_default());
        for b in 0..common {
            let flags = if b == 0 {
                start_flags
            } else {
                _mm256_setzero_si256()
            };
            let blocks = heads.map(|h| &h[b]);
            cv = compress(cv, &message(blocks), counter, whole, flags);
        }
        for b in common..steps {
            // All ones in the lanes at their last block.
            let at_end = _mm256_cmpeq_epi32(_mm256_set1_epi32(b as i32), ends);
            let len = _mm256_blendv_epi8(whole, last_len, at_end);
            let mut flags = _mm256_and_si256(at_end, end_flags);
            if b == 0 {
                flags = _mm256_or_si256(flags, start_flags);
            }
            let blocks = lanes.map(|l| l.blocks.get(b).unwrap_or(l.last));
            cv = compress(cv, &message(blocks), counter, len, flags);
            for (o, c) in out.iter_mut().zip(cv) {
                *o = _mm256_blendv_epi8(*o, c, at_end);
            }
        }
        transpose(out).map(|v| bytes(v))
    }
        }
    };
}

// AVX2: rotations by 12 and 7 take two shifts and an or.
#[cfg(target_arch = "x86_64")]
eight_lane_kernel!($ avx2, Avx2, "avx2", ["avx2"], rotr_by_shifts);

// The same with AVX-512VL's rotate instruction: 14 instructions per mixing step instead of 18.
#[cfg(target_arch = "x86_64")]
eight_lane_kernel!(
    $ avx512,
    Avx512,
    "avx2,avx512f,avx512vl",
    ["avx2", "avx512f", "avx512vl"],
    rotr_vprord
);

#[cfg(test)]
mod tests {
    use super::*;

    /// The compression function one lane at a time, in plain Rust: the batch logic on it is
    /// what Miri checks.
    struct Portable;

    impl Kernel for Portable {
        fn run(&self, lanes: &[Lane<'_>; LANES]) -> [Cv; LANES] {
            lanes.map(|lane| {
                let mut cv = IV;
                let end = lane.blocks.len();
                for (b, block) in lane.blocks.iter().chain([lane.last]).enumerate() {
                    let mut flags = if b == 0 { lane.start_flags } else { 0 };
                    let mut len = BLOCK_LEN as u32;
                    if b == end {
                        flags |= lane.end_flags;
                        len = lane.last_len;
                    }
                    cv = compress_one(&cv, block, lane.counter, len, flags);
                }
                let mut out = [0u8; 32];
                for (dst, w) in out.chunks_exact_mut(4).zip(cv) {
                    dst.copy_from_slice(&w.to_le_bytes());
                }
                out
            })
        }
    }

    fn compress_one(
        cv: &[u32; 8],
        block: &[u8; 64],
        counter: u64,
        len: u32,
        flags: u32,
    ) -> [u32; 8] {
        let mut m = [0u32; 16];
        for (w, b) in m.iter_mut().zip(block.chunks_exact(4)) {
            *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        }
        let mut v = [
            cv[0],
            cv[1],
            cv[2],
            cv[3],
            cv[4],
            cv[5],
            cv[6],
            cv[7],
            IV[0],
            IV[1],
            IV[2],
            IV[3],
            counter as u32,
            (counter >> 32) as u32,
            len,
            flags,
        ];
        fn g(v: &mut [u32; 16], [a, b, c, d]: [usize; 4], x: u32, y: u32) {
            v[a] = v[a].wrapping_add(v[b]).wrapping_add(x);
            v[d] = (v[d] ^ v[a]).rotate_right(16);
            v[c] = v[c].wrapping_add(v[d]);
            v[b] = (v[b] ^ v[c]).rotate_right(12);
            v[a] = v[a].wrapping_add(v[b]).wrapping_add(y);
            v[d] = (v[d] ^ v[a]).rotate_right(8);
            v[c] = v[c].wrapping_add(v[d]);
            v[b] = (v[b] ^ v[c]).rotate_right(7);
        }
        const QUADS: [[usize; 4]; 8] = [
            [0, 4, 8, 12],
            [1, 5, 9, 13],
            [2, 6, 10, 14],
            [3, 7, 11, 15],
            [0, 5, 10, 15],
            [1, 6, 11, 12],
            [2, 7, 8, 13],
            [3, 4, 9, 14],
        ];
        for s in &SCHEDULE {
            for (i, q) in QUADS.iter().enumerate() {
                g(&mut v, *q, m[s[2 * i]], m[s[2 * i + 1]]);
            }
        }
        std::array::from_fn(|i| v[i] ^ v[i + 8])
    }

    fn expected(input: &[u8]) -> Address {
        let mut a = Address::ZERO;
        a.0.copy_from_slice(&blake3::hash(input).as_bytes()[..ADDRESS_LEN]);
        a
    }

    /// Deterministic bytes (no two chunks of a long input alike).
    fn data(len: usize) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect()
    }

    /// A tiny deterministic generator (xorshift).
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// A way of hashing a batch.
    type BatchFn<'f> = &'f dyn Fn(&[&[u8]], &mut [Address]);

    /// Hashes `lens` (slices of `bytes` at shifting offsets) in batches of 1 to `max_batch`
    /// inputs with `hash`, checking each address against `blake3::hash`.
    fn check(hash: BatchFn<'_>, bytes: &[u8], lens: &[usize], max_batch: usize, rng: &mut Rng) {
        let mut rest = lens;
        while !rest.is_empty() {
            let take = (1 + rng.below(max_batch)).min(rest.len());
            let (group, tail) = rest.split_at(take);
            rest = tail;
            let inputs: Vec<&[u8]> = group
                .iter()
                .enumerate()
                .map(|(i, &n)| &bytes[i % 7..i % 7 + n])
                .collect();
            let mut out = vec![Address::ZERO; inputs.len()];
            hash(&inputs, &mut out);
            for (input, a) in inputs.iter().zip(&out) {
                assert_eq!(*a, expected(input), "length {}", input.len());
            }
        }
    }

    /// Every length up to 5000 and random ones up to 70,000, shuffled into batches of 1 to 40.
    fn lengths(rng: &mut Rng) -> Vec<usize> {
        let mut lens: Vec<usize> = (0..=5000).collect();
        lens.extend((0..300).map(|_| rng.below(70_001)));
        lens.extend([65_536, 65_537, 69_999, 70_000]);
        for i in (1..lens.len()).rev() {
            lens.swap(i, rng.below(i + 1));
        }
        lens
    }

    /// A few lengths on every boundary (blocks, chunks, powers of two of chunks), for Miri.
    fn boundary_lengths() -> Vec<usize> {
        // Empty; partial, whole and several blocks; one whole chunk (a root chunk); two chunks
        // (a root parent); three (an odd chunk carried up); five (three levels of parents).
        vec![0, 1, 64, 65, 1024, 1025, 2049, 4097]
    }

    #[test]
    fn schedule_is_the_permutation_applied_per_round() {
        assert_eq!(SCHEDULE[0], std::array::from_fn(|i| i));
        assert_eq!(SCHEDULE[1], PERMUTATION);
        assert_eq!(SCHEDULE[2][..4], [3, 4, 10, 12]);
        assert_eq!(SCHEDULE[6][..4], [11, 15, 5, 0]);
    }

    #[test]
    fn portable_batches_match_blake3() {
        let mut rng = Rng(0x0123_4567_89AB_CDEF);
        let (lens, max_batch) = if cfg!(miri) {
            (boundary_lengths(), 6)
        } else {
            (lengths(&mut rng), 40)
        };
        let bytes = data(lens.iter().max().copied().unwrap_or(0) + 8);
        let hash = |inputs: &[&[u8]], out: &mut [Address]| hash_batch(&Portable, inputs, out);
        check(&hash, &bytes, &lens, max_batch, &mut rng);
    }

    #[test]
    fn batches_match_blake3() {
        // The AVX2 path where the CPU has it. (Under Miri `addresses_of` is `blake3::hash`.)
        if cfg!(miri) {
            return;
        }
        let mut rng = Rng(0xFEDC_BA98_7654_3210);
        let (lens, max_batch) = (lengths(&mut rng), 40);
        let bytes = data(lens.iter().max().copied().unwrap_or(0) + 8);
        check(&addresses_of, &bytes, &lens, max_batch, &mut rng);
    }

    /// Checks kernel `k` (when the CPU has it) on batches of many shapes.
    #[cfg(target_arch = "x86_64")]
    fn check_kernel<K: Kernel>(k: Option<K>, name: &str) {
        if cfg!(miri) {
            return;
        }
        let Some(k) = k else {
            eprintln!("no {name} on this CPU: nothing to check");
            return;
        };
        let mut rng = Rng(0x5555_AAAA_3333_CCCC);
        let lens = lengths(&mut rng);
        let bytes = data(lens.iter().max().copied().unwrap_or(0) + 8);
        let hash = |inputs: &[&[u8]], out: &mut [Address]| hash_batch(&k, inputs, out);
        check(&hash, &bytes, &lens, 40, &mut rng);
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_batches_match_blake3() {
        check_kernel(avx2::Avx2::detect(), "AVX2");
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_batches_match_blake3() {
        check_kernel(avx512::Avx512::detect(), "AVX-512VL");
    }

    #[test]
    fn single_inputs_of_every_size_class_match_blake3() {
        // Every chunk count up to 17, with partial and whole last chunks (the lanes take some
        // of these lengths, `blake3::hash` the others).
        let bytes = data(17 * CHUNK_LEN + 8);
        let step = if cfg!(miri) { 4099 } else { 97 };
        for len in (0..=17 * CHUNK_LEN)
            .step_by(step)
            .chain([3072, 4096, 5120, 8192, 16384])
        {
            assert_eq!(
                address_of(&bytes[..len]),
                expected(&bytes[..len]),
                "{len} bytes"
            );
        }
    }

    #[test]
    fn output_shorter_or_longer_than_inputs() {
        let bytes = data(3000);
        let inputs: Vec<&[u8]> = vec![&bytes[..10], &bytes[..2000], &bytes[..3000]];
        let mut out = vec![Address::ZERO; 2];
        addresses_of(&inputs, &mut out);
        assert_eq!(out, [expected(inputs[0]), expected(inputs[1])]);
        let mut out = vec![Address::ZERO; 4];
        hash_batch(&Portable, &inputs, &mut out);
        assert_eq!(
            out[..3],
            [
                expected(inputs[0]),
                expected(inputs[1]),
                expected(inputs[2])
            ]
        );
        assert_eq!(out[3], Address::ZERO);
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #[test]
            fn any_batch_matches_blake3(
                // Lengths and seeds for the bytes (drawing every byte through proptest is what
                // Miri, ~1000x slower, cannot afford). Under Miri: up to two chunks, three at
                // a time.
                shapes in proptest::collection::vec(
                    (0..if cfg!(miri) { 2100usize } else { 9000 }, any::<u64>()),
                    1..if cfg!(miri) { 4 } else { 12 }),
            ) {
                let owned: Vec<Vec<u8>> = shapes
                    .iter()
                    .map(|&(len, seed)| {
                        let mut rng = Rng(seed | 1);
                        (0..len).map(|_| rng.next() as u8).collect()
                    })
                    .collect();
                let inputs: Vec<&[u8]> = owned.iter().map(Vec::as_slice).collect();
                let want: Vec<Address> = inputs.iter().map(|i| expected(i)).collect();
                let mut out = vec![Address::ZERO; inputs.len()];
                hash_batch(&Portable, &inputs, &mut out);
                prop_assert_eq!(&out, &want);
                if !cfg!(miri) {
                    let mut out = vec![Address::ZERO; inputs.len()];
                    addresses_of(&inputs, &mut out);
                    prop_assert_eq!(&out, &want);
                }
            }
        }
    }
}
