//! Hints that bring memory into cache before a search needs it: independent loads of every
//! line of a range, and prefetch instructions for single lines, for cursors and the tuple
//! schema's searches (each says what it measured).

use prollystore_format::message::Node;

/// Reads one byte of every cache line of `bytes`. The loads are independent, so the lines
/// arrive in parallel; a binary search that follows then finds them cached instead of waiting
/// for one dependent miss after another. (A `_mm_prefetch` version measured no clear gain on
/// `tree/get_i32/100k`, so this stays safe code.)
#[inline]
pub(crate) fn touch_lines(bytes: &[u8]) {
    let mut acc = 0u8;
    for b in bytes.iter().step_by(64) {
        acc ^= *b;
    }
    std::hint::black_box(acc);
}

/// Asks the processor to fetch the cache line holding `bytes[at]` (nothing if out of range).
/// It pays in the branch-free wide-key search (`docs/PERF.md`, "Prefetching").
#[inline(always)]
pub(crate) fn prefetch_at(bytes: &[u8], at: usize) {
    if let Some(b) = bytes.get(at) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: `prefetcht0` is a hint: it reads nothing architecturally and never faults;
        // the pointer is to a live byte anyway. SSE is part of the x86_64 baseline.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (b as *const u8).cast(),
            )
        };
        #[cfg(not(target_arch = "x86_64"))]
        let _ = b;
    }
}

/// Asks the processor to fetch the cache line at `p`, which may point anywhere (a prefetch
/// never faults and reads nothing architecturally): for searches whose next probe position is
/// computed, so no bounds check is spent on a hint.
#[inline(always)]
pub(crate) fn prefetch_ptr(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` is only a hint: it never faults, whatever the address, and has no
    // architectural effect. SSE is part of the x86_64 baseline.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Brings a node's keys into cache before searching it (see [`touch_lines`]).
#[inline]
pub(crate) fn touch_keys(node: &Node<'_>) {
    touch_lines(node.key_offsets_bytes());
    touch_lines(node.key_items());
}
