//! SSE2 kernels for the short runs the compiler does not vectorise well:
//! interleaving and deinterleaving 2 or 4 streams of 1- and 2-byte units
//! (uint8 images, float16 pixel shuffles). SSE2 is part of the x86_64
//! baseline, so no runtime detection is needed; other targets (and the
//! `Isa::Scalar` setting) use the portable kernels.
//!
//! Each function handles the multiple-of-16-bytes body of its `n` units per
//! stream and returns how many units per stream it did; the caller finishes
//! the tail with the portable kernel.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;

/// `dst[x * b + j] = stream_j[x]`, streams at `src + j * ss`; units of `size` bytes.
///
/// # Safety
/// As the portable `interleave`: `n` units readable per stream, `n * b`
/// writable at `dst`, no overlap.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn interleave(size: usize, b: usize, n: usize, src: *const u8, ss: isize, dst: *mut u8) -> usize {
    let per = 16 / size; // units per stream in one 16-byte vector
    let body = n / per * per;
    let s = |j: isize, x: usize| src.wrapping_offset(j * ss).wrapping_add(x * size).cast::<__m128i>();
    // SAFETY: every load reads 16 bytes = `per` units of one stream below
    // `body <= n`; every store writes 16 bytes inside `dst[..n * b * size]`.
    unsafe {
        let mut x = 0;
        match (size, b) {
            (1, 2) | (2, 2) => {
                while x < body {
                    let (a, c) = (_mm_loadu_si128(s(0, x)), _mm_loadu_si128(s(1, x)));
                    let (lo, hi) = if size == 1 {
                        (_mm_unpacklo_epi8(a, c), _mm_unpackhi_epi8(a, c))
                    } else {
                        (_mm_unpacklo_epi16(a, c), _mm_unpackhi_epi16(a, c))
                    };
                    let d = dst.add(x * 2 * size).cast::<__m128i>();
                    _mm_storeu_si128(d, lo);
                    _mm_storeu_si128(d.add(1), hi);
                    x += per;
                }
            }
            (1, 4) | (2, 4) => {
                while x < body {
                    let (a, bb) = (_mm_loadu_si128(s(0, x)), _mm_loadu_si128(s(1, x)));
                    let (c, d) = (_mm_loadu_si128(s(2, x)), _mm_loadu_si128(s(3, x)));
                    let out = if size == 1 {
                        let (ac_lo, ac_hi) = (_mm_unpacklo_epi8(a, c), _mm_unpackhi_epi8(a, c));
                        let (bd_lo, bd_hi) = (_mm_unpacklo_epi8(bb, d), _mm_unpackhi_epi8(bb, d));
                        [
                            _mm_unpacklo_epi8(ac_lo, bd_lo),
                            _mm_unpackhi_epi8(ac_lo, bd_lo),
                            _mm_unpacklo_epi8(ac_hi, bd_hi),
                            _mm_unpackhi_epi8(ac_hi, bd_hi),
                        ]
                    } else {
                        let (ac_lo, ac_hi) = (_mm_unpacklo_epi16(a, c), _mm_unpackhi_epi16(a, c));
                        let (bd_lo, bd_hi) = (_mm_unpacklo_epi16(bb, d), _mm_unpackhi_epi16(bb, d));
                        [
                            _mm_unpacklo_epi16(ac_lo, bd_lo),
                            _mm_unpackhi_epi16(ac_lo, bd_lo),
                            _mm_unpacklo_epi16(ac_hi, bd_hi),
                            _mm_unpackhi_epi16(ac_hi, bd_hi),
                        ]
                    };
                    let dp = dst.add(x * 4 * size).cast::<__m128i>();
                    for (k, v) in out.into_iter().enumerate() {
                        _mm_storeu_si128(dp.add(k), v);
                    }
                    x += per;
                }
            }
            _ => return 0,
        }
        body
    }
}

/// Splits 16-byte vectors `v0, v1` into their even and odd units of `size` bytes.
///
/// # Safety
/// None beyond SSE2 (x86_64 baseline).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn split(size: usize, v0: __m128i, v1: __m128i) -> (__m128i, __m128i) {
    // SAFETY: SSE2 register operations only.
    unsafe {
        if size == 1 {
            let mask = _mm_set1_epi16(0x00ff);
            let even = _mm_packus_epi16(_mm_and_si128(v0, mask), _mm_and_si128(v1, mask));
            let odd = _mm_packus_epi16(_mm_srli_epi16(v0, 8), _mm_srli_epi16(v1, 8));
            (even, odd)
        } else {
            // Sign-extend each 16-bit half, then pack with signed saturation:
            // the values fit, so the pack is exact.
            let even =
                _mm_packs_epi32(_mm_srai_epi32(_mm_slli_epi32(v0, 16), 16), _mm_srai_epi32(_mm_slli_epi32(v1, 16), 16));
            let odd = _mm_packs_epi32(_mm_srai_epi32(v0, 16), _mm_srai_epi32(v1, 16));
            (even, odd)
        }
    }
}

/// `stream_j[y] = src[y * b + j]`, streams at `dst + j * ds`; units of `size` bytes.
///
/// # Safety
/// As the portable `deinterleave`: `n * b` units readable at `src`, `n`
/// writable per stream, no overlap.
#[cfg(target_arch = "x86_64")]
pub(crate) unsafe fn deinterleave(size: usize, b: usize, n: usize, src: *const u8, dst: *mut u8, ds: isize) -> usize {
    let per = 16 / size;
    let body = n / per * per;
    let d = |j: isize, y: usize| dst.wrapping_offset(j * ds).wrapping_add(y * size).cast::<__m128i>();
    // SAFETY: loads read 16-byte pieces of `src[..body * b * size]`; stores
    // write `per` units of one stream below `body <= n`.
    unsafe {
        let mut y = 0;
        match (size, b) {
            (1, 2) | (2, 2) => {
                while y < body {
                    let sp = src.add(y * 2 * size).cast::<__m128i>();
                    let (even, odd) = split(size, _mm_loadu_si128(sp), _mm_loadu_si128(sp.add(1)));
                    _mm_storeu_si128(d(0, y), even);
                    _mm_storeu_si128(d(1, y), odd);
                    y += per;
                }
            }
            (1, 4) | (2, 4) => {
                while y < body {
                    let sp = src.add(y * 4 * size).cast::<__m128i>();
                    let (v0, v1) = (_mm_loadu_si128(sp), _mm_loadu_si128(sp.add(1)));
                    let (v2, v3) = (_mm_loadu_si128(sp.add(2)), _mm_loadu_si128(sp.add(3)));
                    let (e01, o01) = split(size, v0, v1);
                    let (e23, o23) = split(size, v2, v3);
                    let (a, c) = split(size, e01, e23);
                    let (bb, dd) = split(size, o01, o23);
                    _mm_storeu_si128(d(0, y), a);
                    _mm_storeu_si128(d(1, y), bb);
                    _mm_storeu_si128(d(2, y), c);
                    _mm_storeu_si128(d(3, y), dd);
                    y += per;
                }
            }
            _ => return 0,
        }
        body
    }
}

/// Without SSE2 kernels, nothing is done here.
///
/// # Safety
/// None.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn interleave(
    _size: usize,
    _b: usize,
    _n: usize,
    _src: *const u8,
    _ss: isize,
    _dst: *mut u8,
) -> usize {
    0
}

/// Without SSE2 kernels, nothing is done here.
///
/// # Safety
/// None.
#[cfg(not(target_arch = "x86_64"))]
pub(crate) unsafe fn deinterleave(
    _size: usize,
    _b: usize,
    _n: usize,
    _src: *const u8,
    _dst: *mut u8,
    _ds: isize,
) -> usize {
    0
}
