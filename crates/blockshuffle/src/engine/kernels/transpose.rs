//! The blocked transpose: `dst[c][r] = src[r][c]` for a matrix of `rows x
//! cols` units of any size, both sides' rows strided.
//!
//! The matrix goes in square blocks of 64 to 128 bytes a side (4 to 8 KiB
//! with 16 to 64 units a side), whose source and destination rows stay in
//! the L1 cache while the block is copied; the blocks go in destination
//! order. Inside a block, units of 1, 2, 4 and 8 bytes go through
//! register transposes of one 16-byte vector per row (16 x 16 bytes, 8 x 8
//! of 2 bytes, 4 x 4 of 4 bytes, 2 x 2 of 8 bytes: log2 of the side rounds
//! of SSE2 unpacks, which every x86_64 has), and other units, and the
//! block's edges, one unit at a time by fixed-size moves.
//!
//! With streaming stores, a whole block is transposed into a stage in the
//! L1 cache and streamed out in whole lines, when the destination's rows
//! are whole lines (its start and stride multiples of 64 bytes); otherwise
//! through the cache.
//!
//! The anchor: HPTT's micro-kernels (springer13/hptt), register transposes
//! of one vector a row inside cache blocks. This module imports nothing of
//! the engine; layer: kernels.

use std::mem::MaybeUninit;
use std::ptr;

use crate::engine::arch::Isa;

/// One cache line.
const LINE: usize = 64;

/// The bytes of a block's destination rows: eight lines, a run the memory
/// system serves at full speed (shorter runs leave every access a new DRAM
/// page and TLB entry, and no hardware prefetcher follows them).
const RUN: usize = 512;
const PANEL: usize = 64;

/// The rows of a block: [`RUN`] bytes of units (at least 1).
pub(crate) const fn block_rows(unit: usize) -> usize {
    if unit >= RUN {
        1
    } else {
        RUN / unit
    }
}

/// The columns of a block: one line of each source row (at least 1), so
/// that the block reads whole lines, each once.
pub(crate) const fn block_cols(unit: usize) -> usize {
    if unit >= PANEL {
        1
    } else {
        PANEL / unit
    }
}

/// The side, in units, of the register transpose for `unit`-byte units
/// (0: none, unit by unit).
const fn micro_side(unit: usize) -> usize {
    match unit {
        1 | 2 | 4 | 8 => 16 / unit,
        _ => 0,
    }
}

/// The destination rows a strip of a block has: a register transpose's side.
const STRIP: usize = 16;

/// The stage a streamed strip is transposed into: [`STRIP`] rows of [`RUN`] bytes.
const STAGE: usize = STRIP * RUN;

/// Transposes `rows x cols` units of `unit` bytes: unit `(r, c)` of the
/// source, at `src + r*ss + c*unit`, goes to `dst + c*ds + r*unit`.
/// `isa`: the register transposes are used from `Sse2` on (x86_64 only;
/// elsewhere, and with `Portable`, every unit goes by fixed-size moves),
/// compiled for AVX-512 from `Avx512` on (the same SSE2 unpacks, with 32
/// vector registers instead of 16: no square's rows go to the stack).
/// `nt`: streaming stores where the destination's rows are whole lines.
///
/// The blocks are [`block_rows`] by [`block_cols`]: a line of each of
/// `RUN / unit` source rows, read whole once (the hardware prefetcher
/// cannot follow a column of rows: the next block's are fetched ahead in
/// software), into `LINE / unit` destination runs of `RUN` bytes. A block
/// goes in strips of [`STRIP`] destination rows, and a strip in squares.
///
/// # Safety
/// Every addressed source unit readable and destination unit writable, and
/// the two not overlapping.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn transpose(
    rows: usize,
    cols: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    ds: isize,
    unit: usize,
    isa: Isa,
    nt: bool,
) {
    let m = if isa >= Isa::Sse2 { micro_side(unit) } else { 0 };
    #[cfg(target_arch = "x86_64")]
    if isa >= Isa::Avx512 && m != 0 && is_x86_feature_detected!("avx512vl") {
        // SAFETY: forwarded; the CPU has the features (detected).
        return unsafe { x86::blocked_avx512(rows, cols, src, ss, dst, ds, unit, m, nt) };
    }
    // SAFETY: forwarded.
    unsafe { blocked(rows, cols, src, ss, dst, ds, unit, m, nt) }
}

/// [`transpose`] with register transposes of side `m` (0: none).
///
/// # Safety
/// As [`transpose`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn blocked(
    rows: usize,
    cols: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    ds: isize,
    unit: usize,
    m: usize,
    nt: bool,
) {
    let (br, bc) = (block_rows(unit), block_cols(unit));
    let u = unit as isize;
    let lines = |v: usize| v.is_multiple_of(LINE);
    // Each full block's destination rows are then whole lines.
    let stream = nt && lines(dst as usize) && lines(ds.unsigned_abs()) && lines(br * unit) && br * unit <= RUN;
    let mut stage = [MaybeUninit::<u8>::uninit(); STAGE];
    let stage = stage.as_mut_ptr().cast::<u8>();
    for c0 in (0..cols).step_by(bc) {
        let nc = bc.min(cols - c0);
        for r0 in (0..rows).step_by(br) {
            let nr = br.min(rows - r0);
            // The next block's source lines, fetched while this one is copied.
            let (fr, fc) = if r0 + br < rows { (r0 + br, c0) } else { (0, c0 + bc) };
            if fc < cols {
                let next = src.wrapping_offset(fr as isize * ss + fc as isize * u);
                let len = bc.min(cols - fc) * unit;
                for r in 0..br.min(rows - fr) as isize {
                    prefetch(next.wrapping_offset(r * ss), len);
                }
            }
            let s = src.wrapping_offset(r0 as isize * ss + c0 as isize * u);
            let d = dst.wrapping_offset(c0 as isize * ds + r0 as isize * u);
            for c in (0..nc).step_by(STRIP) {
                let n = STRIP.min(nc - c);
                let (s, d) = (s.wrapping_offset(c as isize * u), d.wrapping_offset(c as isize * ds));
                // SAFETY: the strip's units are inside the matrix (caller);
                // the stage holds `STRIP` rows of `RUN` bytes, and a
                // streamed strip's rows are `br * unit <= RUN` bytes.
                unsafe {
                    if stream && nr == br {
                        let run = br * unit;
                        strip(nr, n, s, ss, stage, run as isize, unit, m);
                        for i in 0..n {
                            stream_line_run(stage.add(i * run), d.offset(i as isize * ds), run);
                        }
                    } else {
                        strip(nr, n, s, ss, d, ds, unit, m);
                    }
                }
            }
        }
    }
    if stream {
        fence();
    }
}

/// One strip: `rows` source rows of `cols` (at most [`STRIP`]) units;
/// register transposes of side `m` (0: none) over its whole squares, the
/// rest unit by unit.
///
/// # Safety
/// As [`transpose`] for the strip.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn strip(rows: usize, cols: usize, s: *const u8, ss: isize, d: *mut u8, ds: isize, unit: usize, m: usize) {
    let u = unit as isize;
    // SAFETY: every unit addressed is inside the strip (caller).
    unsafe {
        #[cfg(target_arch = "x86_64")]
        if m != 0 && cols.is_multiple_of(m) {
            let mr = rows - rows % m;
            for c in (0..cols as isize).step_by(m) {
                for r in (0..mr as isize).step_by(m) {
                    x86::square(unit, s.offset(r * ss + c * u), ss, d.offset(c * ds + r * u), ds);
                }
            }
            return units(mr..rows, 0..cols, s, ss, d, ds, unit);
        }
        units(0..rows, 0..cols, s, ss, d, ds, unit)
    }
}

/// Units `(r, c)` for `r` in `rs`, `c` in `cs`, one at a time.
///
/// # Safety
/// As [`transpose`] for these units.
#[inline(always)]
unsafe fn units(
    rs: std::ops::Range<usize>,
    cs: std::ops::Range<usize>,
    s: *const u8,
    ss: isize,
    d: *mut u8,
    ds: isize,
    unit: usize,
) {
    if rs.is_empty() || cs.is_empty() {
        return;
    }
    /// The loop with a move of `N` bytes known at compile time.
    #[inline(always)]
    unsafe fn each<const N: usize>(
        rs: std::ops::Range<usize>,
        cs: std::ops::Range<usize>,
        s: *const u8,
        ss: isize,
        d: *mut u8,
        ds: isize,
        n: usize,
    ) {
        let u = n as isize;
        for c in cs {
            let c = c as isize;
            for r in rs.clone() {
                let r = r as isize;
                // SAFETY: unit (r, c) on both sides (caller).
                unsafe {
                    let (from, to) = (s.offset(r * ss + c * u), d.offset(c * ds + r * u));
                    if N == 0 {
                        ptr::copy_nonoverlapping(from, to, n);
                    } else {
                        to.cast::<[u8; N]>().write_unaligned(from.cast::<[u8; N]>().read_unaligned());
                    }
                }
            }
        }
    }
    // SAFETY: forwarded.
    unsafe {
        match unit {
            1 => each::<1>(rs, cs, s, ss, d, ds, unit),
            2 => each::<2>(rs, cs, s, ss, d, ds, unit),
            3 => each::<3>(rs, cs, s, ss, d, ds, unit),
            4 => each::<4>(rs, cs, s, ss, d, ds, unit),
            6 => each::<6>(rs, cs, s, ss, d, ds, unit),
            8 => each::<8>(rs, cs, s, ss, d, ds, unit),
            12 => each::<12>(rs, cs, s, ss, d, ds, unit),
            16 => each::<16>(rs, cs, s, ss, d, ds, unit),
            32 => each::<32>(rs, cs, s, ss, d, ds, unit),
            _ => each::<0>(rs, cs, s, ss, d, ds, unit),
        }
    }
}

/// Copies `len` bytes (whole lines, `dst` line-aligned) with streaming stores.
///
/// # Safety
/// `len` bytes readable at `src` and writable at `dst`, no overlap; `dst`
/// and `len` multiples of [`LINE`].
#[inline(always)]
unsafe fn stream_line_run(src: *const u8, dst: *mut u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: 16-byte aligned stores inside the line-aligned run (caller).
    unsafe {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        for i in (0..len).step_by(16) {
            _mm_stream_si128(dst.add(i).cast::<__m128i>(), _mm_loadu_si128(src.add(i).cast::<__m128i>()));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: as the caller guarantees.
    unsafe {
        ptr::copy_nonoverlapping(src, dst, len)
    }
}

/// Asks for the lines of `len` bytes at `p` into the cache (a hint: `p`
/// need not be dereferenceable).
#[inline(always)]
fn prefetch(p: *const u8, len: usize) {
    #[cfg(target_arch = "x86_64")]
    for at in (0..len).step_by(LINE) {
        // SAFETY: a prefetch never faults, whatever the address.
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.wrapping_add(at).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, len);
}

/// Orders the streaming stores before whatever follows.
fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` has no memory operands (SSE, baseline on x86_64).
    unsafe {
        std::arch::x86_64::_mm_sfence()
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// [`super::blocked`] compiled for AVX-512 (32 vector registers).
    ///
    /// # Safety
    /// As [`super::transpose`]; the CPU has AVX-512F, BW and VL.
    #[allow(clippy::too_many_arguments)]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn blocked_avx512(
        rows: usize,
        cols: usize,
        src: *const u8,
        ss: isize,
        dst: *mut u8,
        ds: isize,
        unit: usize,
        m: usize,
        nt: bool,
    ) {
        // SAFETY: forwarded.
        unsafe { super::blocked(rows, cols, src, ss, dst, ds, unit, m, nt) }
    }

    /// One square of `16 / unit` units a side: `unit` is 1, 2, 4 or 8.
    ///
    /// # Safety
    /// `16 / unit` rows of 16 bytes readable at `s` (stride `ss`) and
    /// writable at `d` (stride `ds`), not overlapping.
    #[inline(always)]
    pub(super) unsafe fn square(unit: usize, s: *const u8, ss: isize, d: *mut u8, ds: isize) {
        // SAFETY: forwarded; SSE2 is part of x86_64's baseline.
        unsafe {
            match unit {
                1 => shuffle!(16, 4, s, ss, d, ds, _mm_unpacklo_epi8, _mm_unpackhi_epi8),
                2 => shuffle!(8, 3, s, ss, d, ds, _mm_unpacklo_epi16, _mm_unpackhi_epi16),
                4 => shuffle!(4, 2, s, ss, d, ds, _mm_unpacklo_epi32, _mm_unpackhi_epi32),
                _ => shuffle!(2, 1, s, ss, d, ds, _mm_unpacklo_epi64, _mm_unpackhi_epi64),
            }
        }
    }

    /// An `N x N` transpose of `16 / N`-byte units, one vector a row: `R`
    /// (log2 `N`) rounds of the perfect shuffle, row `i` with row `i +
    /// N/2`, low halves to row `2i` and high to row `2i + 1`. A macro, so
    /// that the unpacks are named, and inlined, where they are used.
    macro_rules! shuffle {
        ($n:literal, $rounds:literal, $s:expr, $ss:expr, $d:expr, $ds:expr, $lo:ident, $hi:ident) => {{
            let mut v = [_mm_setzero_si128(); $n];
            for (i, row) in v.iter_mut().enumerate() {
                *row = _mm_loadu_si128($s.offset(i as isize * $ss).cast());
            }
            for _ in 0..$rounds {
                let mut next = v;
                for i in 0..$n / 2 {
                    next[2 * i] = $lo(v[i], v[i + $n / 2]);
                    next[2 * i + 1] = $hi(v[i], v[i + $n / 2]);
                }
                v = next;
            }
            for (i, row) in v.iter().enumerate() {
                _mm_storeu_si128($d.offset(i as isize * $ds).cast(), *row);
            }
        }};
    }
    use shuffle;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The oracle: unit by unit, with plain indexing.
    fn naive(rows: usize, cols: usize, src: &[u8], ss: usize, ds: usize, unit: usize, dst: &mut [u8]) {
        for r in 0..rows {
            for c in 0..cols {
                let (a, b) = (r * ss + c * unit, c * ds + r * unit);
                dst[b..b + unit].copy_from_slice(&src[a..a + unit]);
            }
        }
    }

    fn check(rows: usize, cols: usize, unit: usize, pad: usize, isa: Isa, nt: bool) {
        let ss = cols * unit + pad;
        let ds = rows * unit + pad * 3;
        let src: Vec<u8> = (0..rows * ss).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut want = vec![0xA5u8; cols * ds + 64];
        naive(rows, cols, &src, ss, ds, unit, &mut want);
        // A line-aligned destination, so that `nt` can stream.
        let mut buf = vec![0xA5u8; cols * ds + 64 + LINE];
        let off = buf.as_ptr().align_offset(LINE);
        let got = &mut buf[off..off + cols * ds + 64];
        // SAFETY: both matrices lie inside their buffers (strides as built).
        unsafe { transpose(rows, cols, src.as_ptr(), ss as isize, got.as_mut_ptr(), ds as isize, unit, isa, nt) };
        assert!(got == want.as_slice(), "rows {rows} cols {cols} unit {unit} pad {pad} isa {isa:?} nt {nt}");
    }

    /// Every kernel set this machine runs: portable, the baseline, and the
    /// widest (AVX-512 where the CPU has it).
    fn isas() -> [Isa; 3] {
        [Isa::Portable, Isa::baseline(), Isa::detect()]
    }

    #[test]
    fn every_unit_size_shape_and_kernel_matches_the_oracle() {
        for unit in [1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32, 40] {
            let (br, bc) = (block_rows(unit), block_cols(unit));
            let m = micro_side(unit).max(1);
            let shapes = [(1, 1), (m, m), (m + 1, m + 2), (br, bc), (br - 1, bc + 1), (2 * br + 3, bc + m + 1), (3, 200)];
            for (rows, cols) in shapes {
                for isa in isas() {
                    for pad in [0, 64, 5] {
                        check(rows, cols, unit, pad, isa, false);
                    }
                    check(rows, cols, unit, 0, isa, true);
                }
            }
        }
    }

    #[test]
    fn streamed_blocks_of_whole_lines() {
        // Destination strides of whole lines: full blocks go through the stage.
        for unit in [1, 2, 4, 8, 16] {
            let (br, bc) = (block_rows(unit), block_cols(unit));
            let rows = 3 * br;
            let cols = 2 * bc + 5;
            let ss = cols * unit;
            let ds = rows * unit;
            assert!(ds.is_multiple_of(LINE));
            let src: Vec<u8> = (0..rows * ss).map(|i| (i * 13 + i / 509) as u8).collect();
            let mut want = vec![0u8; cols * ds];
            naive(rows, cols, &src, ss, ds, unit, &mut want);
            let mut buf = vec![0u8; cols * ds + LINE];
            let off = buf.as_ptr().align_offset(LINE);
            let got = &mut buf[off..off + cols * ds];
            // SAFETY: as in `check`.
            for isa in isas() {
                got.fill(0);
                unsafe { transpose(rows, cols, src.as_ptr(), ss as isize, got.as_mut_ptr(), ds as isize, unit, isa, true) };
                assert!(got == want.as_slice(), "unit {unit} isa {isa:?}");
            }
        }
    }
}
