//! Bytes in full-line squares (AVX-512BW): a square of 64 x 64 bytes goes
//! in four passes of 16 of its columns, each pass sixteen 64-byte
//! vectors whose four 16-byte lanes hold 16 bytes of four source rows
//! (rows `i`, `16 + i`, `32 + i` and `48 + i` in vector `i`), transposed
//! in every lane at once by four rounds of byte interleaves (`vpunpcklbw`,
//! `vpunpckhbw`), which leave vector `j` holding its column's 64 bytes:
//! one whole destination row, stored by one 64-byte store. A square thus
//! reads each of its 64 source lines (16 bytes a pass) and writes each of
//! its 64 destination lines once, whole, in the loop nest of the other
//! units' squares (`super::units`); a pass is 64 loads (48 of them into
//! lanes) and 64 interleaves for a kilobyte. What it buys: see
//! `super::super::takes::wide_side`.
//!
//! Layer: kernels; a part of `wide`, imports its squares and shifts, and
//! arch.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::shifted::{flush_rows, store_row};
use super::{round, Squares, STRIP_BYTES};
use crate::engine::arch::mem::lanes;

/// The squares of bytes: 64 x 64, four passes of 16 columns each;
/// `SHIFTS`: with VBMI, whose byte permutes shift each destination row
/// into whole lines where the rows start anywhere in their lines
/// ([`Squares::shifted`]). Those squares go in strips of 256 columns
/// (the most a step carries a row of, `super::SHIFTED_COLS`), shifted
/// or not: `takes::wide_side`'s figures with VBMI are of these strips
/// (strips of 512 through the cache were not measured against them); the
/// others in strips of 512.
pub(super) struct Bytes<const SHIFTS: bool>;

impl<const SHIFTS: bool> Squares for Bytes<SHIFTS> {
    const U: usize = 1;
    const L: usize = 1;
    const N: usize = 64;
    const STRIP: usize = if SHIFTS { STRIP_BYTES / 2 } else { STRIP_BYTES };
    const SHIFTS: bool = SHIFTS;

    #[inline(always)]
    unsafe fn square(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize, stream: bool) {
        for pass in 0..4 {
            // SAFETY: as the caller guarantees: 64 rows and 64 columns,
            // each row's 64 bytes from `at` readable, each column's 64
            // bytes from `to` writable (line-aligned where streamed); the
            // CPU has the square's features, AVX-512F and BW
            // (`super::transpose`, `super::bytes_vbmi`).
            unsafe {
                let v = columns(rows, at + 16 * pass as isize);
                for (j, vj) in v.into_iter().enumerate() {
                    let d = out[16 * pass + j].offset(to);
                    if stream {
                        _mm512_stream_si512(d.cast(), vj);
                    } else {
                        _mm512_storeu_si512(d.cast(), vj);
                    }
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn part(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize) {
        let (nr, nc) = (rows.len(), out.len());
        // A square's at most (`chunk` slices them so); more rows would be
        // left out (the masks cover the first 64), not overrun.
        debug_assert!(nr <= 64 && nc <= 64, "{nr} x {nc}");
        let store = lanes(0, nr.min(64));
        for pass in 0..nc.div_ceil(16) {
            let cols = (nc - 16 * pass).min(16);
            // SAFETY: the CPU has AVX-512F, BW and VL (the callers: see
            // `square`); the masks cover the rows' and columns' bytes the
            // caller names (`nr` rows, `nc` columns, each at most 64);
            // masked-off bytes are not accessed.
            unsafe {
                let v = masked_columns(rows, at + 16 * pass as isize, cols);
                for (j, vj) in v.into_iter().enumerate().take(cols) {
                    _mm512_mask_storeu_epi8(out[16 * pass + j].offset(to).cast(), store, vj);
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn shifted(
        rows: &[*const u8],
        at: isize,
        out: &[*mut u8],
        to: isize,
        carry: &mut [MaybeUninit<__m512i>],
        first: bool,
    ) {
        // A real check (folded away either way): `units` shifts only
        // squares that do (`SHIFTS`), whose byte permutes need VBMI.
        if !SHIFTS {
            unreachable!("these squares of bytes do not shift");
        }
        for pass in 0..4 {
            // SAFETY: as `square`, and each row's bytes shifted into its
            // lines as the caller guarantees (`Squares::shifted`); the
            // CPU has AVX-512F, BW and VBMI (`SHIFTS`: `super::bytes_vbmi`).
            unsafe {
                let v = columns(rows, at + 16 * pass as isize);
                for (j, vj) in v.into_iter().enumerate() {
                    let c = 16 * pass + j;
                    store_row::<1, 1, 1>(out[c].offset(to), [vj], &mut carry[c], first);
                }
            }
        }
    }

    #[inline(always)]
    unsafe fn flush(out: &[*mut u8], to: isize, carry: &[MaybeUninit<__m512i>]) {
        // A real check (folded away either way): as `shifted`.
        if !SHIFTS {
            unreachable!("these squares of bytes do not shift");
        }
        // SAFETY: forwarded; VBMI (`SHIFTS`: `super::bytes_vbmi`).
        unsafe { flush_rows::<1, 1>(out, to, carry) }
    }
}

/// 16 columns from `at` of the square's 64 rows, transposed: vector `j`
/// holds column `j`'s 64 bytes (row `16 * k + i` of the square in byte
/// `i` of lane `k`).
///
/// # Safety
/// 64 rows, each one's 16 bytes from `at` readable; the CPU has AVX-512F
/// and BW.
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn columns(rows: &[*const u8], at: isize) -> [__m512i; 16] {
    let mut v = [_mm512_setzero_si512(); 16];
    // SAFETY: as the caller guarantees.
    unsafe {
        for (i, vi) in v.iter_mut().enumerate() {
            let row = |k: usize| _mm_loadu_si128(rows[16 * k + i].offset(at).cast());
            let x = _mm512_castsi128_si512(row(0));
            let x = _mm512_inserti32x4::<1>(x, row(1));
            let x = _mm512_inserti32x4::<2>(x, row(2));
            *vi = _mm512_inserti32x4::<3>(x, row(3));
        }
    }
    byte_rounds(&mut v);
    v
}

/// [`columns`] of `rows.len()` rows (at most 64) and `cols` columns (at
/// most 16), by masked loads that touch nothing else; the other bytes 0.
///
/// # Safety
/// Those bytes readable; the CPU has AVX-512F, BW and VL.
#[inline]
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
unsafe fn masked_columns(rows: &[*const u8], at: isize, cols: usize) -> [__m512i; 16] {
    let load = lanes(0, cols) as __mmask16;
    let mut v = [_mm512_setzero_si512(); 16];
    for (r, p) in rows.iter().enumerate().take(64) {
        // SAFETY: as the caller guarantees; the mask covers the `cols`
        // bytes named.
        let x = unsafe { _mm_maskz_loadu_epi8(load, p.offset(at).cast()) };
        // Row `r` to lane `r / 16` of vector `r % 16`.
        let (i, k) = (r % 16, r / 16);
        v[i] = _mm512_mask_broadcast_i32x4(v[i], 0xf << (4 * k), x);
    }
    byte_rounds(&mut v);
    v
}

/// The 16 x 16 byte transpose in each 16-byte lane of `v`: four rounds of
/// the perfect shuffle ([`round`]), vector `2i` the low byte interleave of
/// vectors `i` and `i + 8`, `2i + 1` their high one. Each round rotates
/// the bits of a byte's (vector, byte) index by one, so after four byte
/// `b` of vector `a` is byte `a` of vector `b`. (A target-feature
/// function, so that the interleaves in `round`'s closure inline: in a
/// plain `#[inline(always)]` one, the rounds went through the stack and
/// the squares ran at half the speed.)
#[inline]
#[target_feature(enable = "avx512f,avx512bw")]
fn byte_rounds(v: &mut [__m512i; 16]) {
    for _ in 0..4 {
        round::<16>(v, |a, h, b| if h == 0 { _mm512_unpacklo_epi8(a, b) } else { _mm512_unpackhi_epi8(a, b) });
    }
}
