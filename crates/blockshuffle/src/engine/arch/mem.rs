//! Memory primitives every kernel uses: short copies ([`copy_short`]),
//! cache-line streaming stores ([`store_line`], [`LINE`]), their fence
//! ([`fence`]) and source prefetching ([`prefetch`], [`prefetch_l2`],
//! [`PREFETCH_AHEAD`], [`FETCH_AHEAD`]);
//! and huge pages for fresh outputs ([`advise_huge_pages`]).
//!
//! Layer: arch (the lowest); imports nothing from the engine.

use std::mem::MaybeUninit;
use std::ptr;

/// The smallest fresh buffer [`advise_huge_pages`] asks huge pages for:
/// four of x86_64's 2 MiB pages.
pub(crate) const HUGE_PAGES_MIN: usize = 8 << 20;

/// Asks the kernel to back the not yet touched `len` bytes at `p` with
/// huge pages and to fault them all in now, in one call (Linux:
/// `madvise(MADV_HUGEPAGE)`, then `MADV_POPULATE_WRITE`, on the whole pages
/// inside; hints, silently refused elsewhere, before Linux 5.14, or when
/// transparent huge pages are off).
///
/// Measured on the public workloads (allocating call, ratio to memcpy): 4.2
/// to 4.5x with neither; 1.8 to 2.3x with huge pages alone on one thread,
/// but on two threads their faults at once stalled in the kernel's
/// compaction, up to 17x; 1.7 to 1.8x with both on one thread, 2.4 to 2.8x
/// on two (whose memcpy is faster), stable.
///
/// Faulting a buffer in on the plan's threads, each its own whole huge
/// pages, was tried and dropped: on a 2-core Intel Xeon guest, 128 MiB
/// took 13 ms instead of 23 to 25, but 30 of 831 measurements (broad
/// outputs of 8 MiB and more, each a process's median of 3 calls) stalled
/// 100 to 250 ms, against 1 of 831 with one thread (no compaction: the
/// host backing the pages, it seems).
pub(crate) fn advise_huge_pages(p: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        let start = (p as usize).next_multiple_of(PAGE);
        let end = (p as usize).saturating_add(len) / PAGE * PAGE;
        if end > start {
            let (at, len) = (start as *mut libc::c_void, end - start);
            // SAFETY: advice on whole pages inside a live allocation the
            // caller owns: neither changes its contents (MADV_POPULATE_WRITE
            // faults pages in as a write would, without writing), and
            // neither can fault.
            unsafe {
                libc::madvise(at, len, libc::MADV_HUGEPAGE);
                libc::madvise(at, len, libc::MADV_POPULATE_WRITE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, len);
}

/// Bytes of a cache line.
pub(crate) const LINE: usize = 64;

/// The bytes of a page, the TLB's unit (the smallest, 4 KiB: a caller's
/// buffer may have no larger ones).
pub(crate) const PAGE: usize = 4096;

/// The mask of byte lanes `from..to` of a 64-byte vector: lanes from 64 on
/// are left out, and `from >= to` is no lane.
#[inline(always)]
pub(crate) fn lanes(from: usize, to: usize) -> u64 {
    let below = |t: usize| if t >= 64 { u64::MAX } else { (1u64 << t) - 1 };
    below(to) & !below(from)
}

/// Copies `len <= 64` bytes, from 3 on as two overlapping moves of the
/// largest power of two not above `len` (no call into the C library for
/// units like 3, 6 or 12 bytes, or for the pieces of a line).
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping,
/// and `len <= 64`.
#[inline(always)]
pub(crate) unsafe fn copy_short(src: *const u8, dst: *mut u8, len: usize) {
    debug_assert!(len <= 64);
    // SAFETY: forwarded; each arm's `N` is at most `len`, and `len <= 2 * N`.
    unsafe {
        match len {
            0..=2 => ptr::copy_nonoverlapping(src, dst, len),
            3 => pair::<2>(src, dst, len),
            4..=7 => pair::<4>(src, dst, len),
            8..=15 => pair::<8>(src, dst, len),
            16..=32 => pair::<16>(src, dst, len),
            _ => pair::<32>(src, dst, len),
        }
    }
}

/// Copies `len` bytes, `N <= len <= 2 * N`, as two overlapping `N`-byte moves.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, not overlapping, and
/// `N <= len`.
#[inline(always)]
pub(crate) unsafe fn pair<const N: usize>(src: *const u8, dst: *mut u8, len: usize) {
    // SAFETY: `N <= len`, so `[0, N)` and `[len - N, len)` are inside both ranges;
    // both values are read before either is written.
    unsafe {
        let a = ptr::read_unaligned(src.cast::<MaybeUninit<[u8; N]>>());
        let b = ptr::read_unaligned(src.add(len - N).cast::<MaybeUninit<[u8; N]>>());
        ptr::write_unaligned(dst.cast::<MaybeUninit<[u8; N]>>(), a);
        ptr::write_unaligned(dst.add(len - N).cast::<MaybeUninit<[u8; N]>>(), b);
    }
}

/// Orders this thread's streaming stores before anything that follows.
#[inline]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no preconditions (SSE, x86_64 baseline).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

/// How far ahead of their reads the streaming kernels have the source
/// fetched ([`prefetch`]): with streaming stores in flight, the hardware
/// prefetchers alone leave reads waiting (measured: NCHW space-to-depth
/// 1.3x memcpy -> 1.2x, float16 pixel_unshuffle 1.5x -> 1.25x; 1 to 8 KiB
/// all measured alike, the cache's own `prefetchnta` worse).
pub(crate) const PREFETCH_AHEAD: usize = 4096;

/// How far ahead of their masked loads (bytes) the kernels that read the
/// source by them fetch it ([`prefetch`]): on an AMD EPYC (Zen 5), masked
/// loads (AVX-512's `vmovdqu8` under a mask) leave the hardware
/// prefetchers idle, so that a source read in address order waits on
/// every line (OpenVINO space-to-depth of 3-byte units by 14 through the
/// byte permutes' deinterleave, one row of 84 MiB: 17 ms masked, 9.7 ms
/// with plain loads, 7.8 ms masked and fetched 1 KiB ahead, 6.1 to 6.7
/// ms 2 KiB ahead, 5.3 ms 4 KiB ahead; memcpy 4.2 to 4.7 ms). Where the
/// source is read in address order (a long row, or rows whose later
/// bytes the next steps or calls read), the bytes this far ahead of a
/// load are what a later one reads. What it buys, and the distances
/// measured, in the kernels that fetch so (`permute`'s deinterleave,
/// `gather`'s streamed blocks).
pub(crate) const FETCH_AHEAD: usize = 2048;

/// Asks the CPU to bring the `len` bytes at `p` into the cache ahead of
/// their use (one hint per 64-byte line); does nothing on other targets.
/// A hint never faults, so `p` need not be valid.
#[inline(always)]
pub(crate) fn prefetch(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    fetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p, len);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// [`prefetch`] into the second-level cache, not the first (`prefetcht2`):
/// for bytes read a few microseconds later, whose fetch then need not hold
/// one of the first level's few line-fill buffers, which the streaming
/// stores in flight also take.
#[inline(always)]
pub(crate) fn prefetch_l2(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    fetch::<{ std::arch::x86_64::_MM_HINT_T2 }>(p, len);
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// One prefetch with `HINT` per 64-byte line of the `len` bytes at `p`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn fetch<const HINT: i32>(p: *const u8, len: usize) {
    let mut k = 0;
    while k < len {
        // SAFETY: a prefetch is a hint: it reads nothing the program sees
        // and never faults, whatever the address.
        unsafe { std::arch::x86_64::_mm_prefetch::<HINT>(p.wrapping_add(k).cast()) };
        k += 64;
    }
}

/// Stores the 64 bytes at `src` to `dst` with streaming stores (a whole
/// line when `dst` is 64-byte aligned).
///
/// # Safety
/// 64 bytes readable at `src`, writable at `dst`, which is 16-byte aligned.
#[inline(always)]
pub(crate) unsafe fn store_line(src: *const u8, dst: *mut u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is baseline on x86_64; unaligned loads inside `src[..64]`,
    // aligned streaming stores inside `dst[..64]`.
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let a = _mm_loadu_si128(src.cast::<__m128i>());
        let b = _mm_loadu_si128(src.add(16).cast::<__m128i>());
        let c = _mm_loadu_si128(src.add(32).cast::<__m128i>());
        let e = _mm_loadu_si128(src.add(48).cast::<__m128i>());
        _mm_stream_si128(dst.cast::<__m128i>(), a);
        _mm_stream_si128(dst.add(16).cast::<__m128i>(), b);
        _mm_stream_si128(dst.add(32).cast::<__m128i>(), c);
        _mm_stream_si128(dst.add(48).cast::<__m128i>(), e);
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: forwarded.
    unsafe {
        ptr::copy_nonoverlapping(src, dst, LINE)
    }
}

#[cfg(test)]
mod tests {
    use super::lanes;

    #[test]
    fn lanes_are_the_bits_from_to_within_a_vector() {
        assert_eq!(lanes(0, 64), u64::MAX);
        assert_eq!(lanes(0, 3), 0b111);
        assert_eq!(lanes(62, 64), 0b11 << 62);
        assert_eq!(lanes(32, 100), u64::MAX << 32);
        assert_eq!(lanes(5, 5), 0);
        assert_eq!(lanes(9, 4), 0);
        assert_eq!(lanes(70, 90), 0);
    }
}
