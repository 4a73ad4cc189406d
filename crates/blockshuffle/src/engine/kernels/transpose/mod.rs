//! The blocked transpose: `dst[c][r] = src[r][c]` for a matrix of `rows x
//! cols` units of any size. The destination's rows are strided; the
//! source's rows may come from two nested loops ([`Rows2`]), so that a
//! tile repeated along a loop that continues its destination rows is one
//! matrix (a depth-to-space's deinterleave, repeated over the rows of the
//! image, is one transpose of all of them).
//!
//! The matrix goes in blocks of [`block_rows`] by [`block_cols`] units: a
//! line of each of up to 512 source rows, read once, into destination runs
//! of 512 bytes, so that both sides move in runs the memory system serves
//! at speed. The blocks go in destination order, a chunk of rows at a
//! time where the source rows span more pages than the TLB holds
//! ([`CHUNK_ROWS`]); the next block's source lines are fetched ahead (no
//! hardware prefetcher follows a column of rows). A block goes in strips
//! of 16 destination rows; a strip in register transposes of one 16-byte
//! vector per row (16 x 16 bytes, 8 x 8 of 2 bytes, 4 x 4 of 4 bytes, 2 x
//! 2 of 8 bytes: log2 of the side rounds of SSE2 unpacks, which every
//! x86_64 has). With AVX-512 the same
//! transposes are compiled with 32 vector registers, and the edges of a
//! strip go in masked squares; otherwise those that fill a quarter of a
//! square's side both ways go in squares whose rows are read and written
//! by plain moves (a whole vector where the source's rows run on into
//! the next ones, else two overlapping moves of the units' bytes), and
//! narrower edges, and units of other sizes, one unit at a time by
//! fixed-size moves. Without masks, deinterleaves of bytes into 5 to 32
//! streams go in such squares by [`streams`].
//!
//! With streaming stores, a strip is transposed into a stage in the L1
//! cache and streamed out in whole lines, when the destination's rows are
//! whole lines (its start and stride multiples of 64 bytes); otherwise it
//! goes through the cache.
//!
//! With AVX-512, units of 1, 2, 4, 8, 16 and 32 bytes go instead in
//! full-line squares (`wide`), where both sides hold a whole one
//! ([`takes::square_sides`]; units of 2 and 16 bytes only where streamed,
//! `takes::cached`, and 2 through the cache where the blocked transpose's
//! source lines would crowd into a few first-level sets,
//! `takes::squares_for_crowded_rows`; 16 where the tile's own kernels'
//! rows would, [`in_full_lines`]): one 64-byte vector a row on both sides,
//! so that a square reads a line of each source row (of bytes, 64 x 64,
//! in four passes of 16 bytes) and writes a whole line of each
//! destination row, streamed with no stage. With VBMI too, so do units of
//! 3, 6 and 12 bytes ([`packed`]), 48 bytes a row, in lanes of 4, 8 and
//! 16 bytes: the register transpose's first round spreads the units to
//! the lanes and its last packs them again, by byte permutes; streamed
//! (destination rows of 1 KiB and more), four squares down the rows at
//! once, whose rows make three whole lines.
//!
//! Without AVX-512, units of 4 and 8 bytes go in full-line squares too
//! ([`takes::halves`]), each built of four of AVX2's 32-byte squares, its edges
//! a unit at a time: the same loop nest, the same whole lines. So do
//! units of 3 and 6 bytes in their lanes ([`takes::packed_halves`]), each
//! quarter's 24-byte rows widened and packed by byte shuffles.
//!
//! The anchor: HPTT's micro-kernels (springer13/hptt), register transposes
//! of one vector a row inside cache blocks.
//!
//! Layer: kernels; imports arch only.

use std::mem::MaybeUninit;
use std::ptr;

use crate::engine::arch::mem::{fence, prefetch, store_line, LINE, PAGE};
use crate::engine::arch::Isa;

pub(crate) mod streams;
mod takes;
#[cfg(target_arch = "x86_64")]
mod wide;

pub(crate) use takes::{full_line_squares, packed, streams_squares, takes, takes_squares, MIN_SIDE};
use takes::{in_squares, masks, plain_edges, shifts_packed, squares_for_crowded_rows, MIN_SHIFTED_ROW};

/// The bytes of a block's destination rows: eight lines, a run the memory
/// system serves at full speed (shorter runs leave every access a new DRAM
/// page and TLB entry, and no hardware prefetcher follows them).
const RUN: usize = 512;

/// The rows of a block: [`RUN`] bytes of units (at least 1).
pub(crate) const fn block_rows(unit: usize) -> usize {
    if unit >= RUN {
        1
    } else {
        RUN / unit
    }
}

/// The columns of a block: one line of each source row, so that the block
/// reads whole lines, each once; at least a strip's worth (16 units), so
/// that a block of wide units is not all setup.
pub(crate) const fn block_cols(unit: usize) -> usize {
    if unit >= LINE || LINE / unit < STRIP {
        STRIP
    } else {
        LINE / unit
    }
}

/// Most source rows the transposes sweep through their columns at once
/// (the full-line squares always; the blocked transpose where the rows
/// span more pages than that, [`Rows2::pages`]): their pages (a row each,
/// at worst) fit in the second-level TLB of every x86_64 core of the last
/// decade (1,536 entries and more), so that each column of blocks after
/// the first finds them there. The planner chunks a streamed matrix's
/// rows by it too, across the loop that continues their source rows
/// (`plan::repetitions::matrix_chunk`).
///
/// Measured in the blocked transpose (one thread, ratio to memcpy, 8
/// alternated runs): numpy 2-D transposes of bytes, 39 and 121 MiB
/// (rows 6,833 and 11,705 bytes apart), 5.6 -> 2.7x and 5.2 -> 2.9x; the
/// 26 broad workloads (seed 26) whose tiles have more than 1,024 rows,
/// 3.72 -> 3.40.
pub(crate) const CHUNK_ROWS: usize = 1024;

/// Most rows of a block (bytes).
const MAX_BLOCK_ROWS: usize = RUN;

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

/// The edges of a strip that go in squares without masks (SSE2 and AVX2):
/// those at least a `1 / MIN_EDGE` of a square's side both ways; narrower
/// ones go unit by unit.
const MIN_EDGE: usize = 4;

/// Where one side's rows are: row `i` starts at byte `(i / inner) * outer +
/// (i % inner) * stride`, the rows of two nested loops (the tile's own,
/// and a repetition of the tile).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Rows2 {
    /// Rows of the inner loop (the tile's own).
    pub inner: usize,
    /// Their stride.
    pub stride: isize,
    /// The outer loop's stride (unused when every row is in the inner loop).
    pub outer: isize,
}

impl Rows2 {
    /// `rows` rows at a constant stride.
    pub(crate) fn strided(rows: usize, stride: isize) -> Self {
        Rows2 { inner: rows.max(1), stride, outer: 0 }
    }

    /// Row `i`'s offset.
    #[inline(always)]
    fn at(&self, i: usize) -> isize {
        (i / self.inner) as isize * self.outer + (i % self.inner) as isize * self.stride
    }

    /// About how many pages a line of each of rows `0..rows` touches: a
    /// row each where they are a page or more apart, their span's where
    /// they share pages (each repetition of the inner loop at least one).
    fn pages(&self, rows: usize) -> usize {
        let span = self.inner.min(rows).saturating_mul(self.stride.unsigned_abs().min(PAGE));
        rows.div_ceil(self.inner).saturating_mul(span.div_ceil(PAGE).max(1))
    }

    /// Calls `f(i, offset)` for rows `first + i`, `i < n`: a run of
    /// steps for each repetition of the inner loop (a plain loop, which
    /// the compiler unrolls: a block's rows are hundreds, and a step at a
    /// time, asking each time whether the inner loop ends, cost more than
    /// the block's squares on narrow matrices).
    #[inline(always)]
    fn walk(&self, first: usize, n: usize, mut f: impl FnMut(usize, isize)) {
        let mut i = 0;
        while i < n {
            let row = first + i;
            let at = self.at(row);
            let k = (self.inner - row % self.inner).min(n - i);
            for j in 0..k {
                f(i + j, at + j as isize * self.stride);
            }
            i += k;
        }
    }
}

/// One transpose: `rows x cols` units of `unit` bytes; unit `(r, c)` of the
/// source, at byte `c * unit` of source row `r` (see [`Rows2`]), goes to
/// byte `r * unit` of destination row `c`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub unit: usize,
    pub src: *const u8,
    /// The source rows' offsets from `src`.
    pub from: Rows2,
    pub dst: *mut u8,
    /// The destination rows' offsets from `dst`.
    pub to: Rows2,
}

/// Transposes `mx`.
///
/// `isa`: the register transposes are used from `Sse2` on (x86_64 only;
/// elsewhere, and with `Portable`, every unit goes by fixed-size moves),
/// compiled for AVX-512 with masked edges from `Avx512` on (where the CPU
/// has AVX512-VL). `nt`: streaming stores where the destination's rows are
/// whole lines, or, in AVX-512's full-line squares, whole units apart and
/// [`MIN_SHIFTED_ROW`] bytes long (bytes with VBMI only; packed units, with
/// VBMI: apart by any bytes, where [`shifts_packed`]). `fetch`: the
/// tensors are past the caches, so the full-line squares through the
/// cache go in blocks, the next one's source lines fetched ahead (as
/// streamed ones always do).
///
/// # Safety
/// Every addressed source unit readable and destination unit writable, and
/// the two not overlapping; `isa` one this CPU runs (as a plan's always
/// is: at most `Isa::detect()`).
#[inline(never)] // kept out of the tile kernels around its calls (inlined, it doubled their cost on small tiles)
pub(crate) unsafe fn transpose(mx: Matrix, isa: Isa, nt: bool, fetch: bool) {
    let m = if isa >= Isa::Sse2 { micro_side(mx.unit) } else { 0 };
    #[cfg(target_arch = "x86_64")]
    if in_squares(mx.rows, mx.cols, mx.unit, isa, nt) || squares_for_crowded_rows(&mx, isa, nt) {
        // SAFETY: forwarded; both take only matrices with the squares'
        // sides, of units they run for on `isa` (`full_lines`), which the
        // CPU runs (the caller).
        return unsafe { squares(mx, isa, nt, fetch) };
    }
    #[cfg(target_arch = "x86_64")]
    if m != 0 && masks(isa) {
        // SAFETY: forwarded; the CPU has the features (detected).
        return unsafe { x86::blocked_avx512(mx, m, nt) };
    }
    // SAFETY: forwarded.
    unsafe { blocked::<false>(mx, m, nt) }
}

/// `mx` in the full-line squares for its unit on `isa` (the module
/// `wide`): AVX2's without AVX-512's masks, the shifting squares of bytes
/// with VBMI, the packed ones for [`packed`] units, the others otherwise.
///
/// # Safety
/// As [`transpose`]; the squares run for `mx.unit` on `isa`
/// (`takes::full_lines`, which checks the features `isa` does not imply)
/// and `mx` has their sides (`takes::square_sides`); `isa` one this CPU
/// runs.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn squares(mx: Matrix, isa: Isa, nt: bool, fetch: bool) {
    // SAFETY: forwarded; each takes the units `full_lines` names for its
    // `isa`, whose features the CPU has (the caller); the shifting squares
    // of bytes where `runs_vbmi` finds VBMI too.
    unsafe {
        if !masks(isa) {
            wide::transpose_avx2(mx, nt, fetch)
        } else if mx.unit == 1 && isa.runs_vbmi() {
            wide::bytes_vbmi(mx, nt, fetch)
        } else if packed(mx.unit) {
            wide::packed(mx, nt, fetch)
        } else {
            wide::transpose(mx, nt, fetch)
        }
    }
}

/// [`transpose`], in the full-line squares (the module `wide`) wherever
/// they take `mx` ([`full_line_squares`], a real check: otherwise as
/// [`transpose`] chooses), for a caller that chooses them for a reason
/// [`takes()`] does not see (`tile::choice`'s crowded rows).
///
/// # Safety
/// As [`transpose`].
#[inline(never)]
pub(crate) unsafe fn in_full_lines(mx: Matrix, isa: Isa, nt: bool, fetch: bool) {
    #[cfg(target_arch = "x86_64")]
    if full_line_squares(mx.rows, mx.cols, mx.unit, isa) {
        // SAFETY: forwarded; `full_line_squares` checked the unit and the
        // sides, and the features `isa` does not imply (AVX-512's VL, and
        // VBMI for packed units); the CPU runs `isa` (the caller).
        return unsafe { squares(mx, isa, nt, fetch) };
    }
    // SAFETY: forwarded.
    unsafe { transpose(mx, isa, nt, fetch) }
}

/// [`transpose`] with register transposes of side `m` (0: none);
/// `MASKED`: the squares at the edges too, with AVX-512's masked loads and
/// stores (which touch only the units inside the matrix).
///
/// # Safety
/// As [`transpose`]; with `MASKED`, the CPU has AVX-512F, BW and VL.
#[inline(always)]
unsafe fn blocked<const MASKED: bool>(mx: Matrix, m: usize, nt: bool) {
    let Matrix { rows, cols, unit, src, from, dst, to } = mx;
    let (br, bc) = (block_rows(unit), block_cols(unit));
    let u = unit as isize;
    let lines = |v: usize| v.is_multiple_of(LINE);
    // Each full block's destination rows are then whole lines.
    let stream = nt
        && lines(dst as usize)
        && lines(to.stride.unsigned_abs())
        && lines(to.outer.unsigned_abs())
        && lines(br * unit)
        && br * unit <= RUN;
    let ends = source_end(mx);
    let mut stage = [MaybeUninit::<u8>::uninit(); STAGE];
    let stage = stage.as_mut_ptr().cast::<u8>();
    // The block's source rows (at its first column), and the next block's:
    // written before they are read, never initialised as a whole (a tile
    // may be a few hundred bytes, and is called again for every repetition).
    let mut rows_a = [MaybeUninit::<*const u8>::uninit(); MAX_BLOCK_ROWS];
    let mut rows_b = [MaybeUninit::<*const u8>::uninit(); MAX_BLOCK_ROWS];
    let (mut here, mut next) = (&mut rows_a, &mut rows_b);
    let fill = |rows_at: &mut [MaybeUninit<*const u8>; MAX_BLOCK_ROWS], r0: usize, c0: usize, n: usize| {
        from.walk(r0, n, |i, o| {
            rows_at[i].write(src.wrapping_offset(o + c0 as isize * u));
        });
    };
    // Rows whose lines span more pages than the TLB holds go in chunks of
    // whole blocks, whose pages stay there while every column of the chunk
    // is swept (see CHUNK_ROWS).
    let chunk =
        if rows > CHUNK_ROWS && from.pages(rows) > CHUNK_ROWS { (CHUNK_ROWS / br).max(1) * br } else { rows.max(1) };
    fill(here, 0, 0, br.min(rows));
    for start in steps(0, rows, chunk) {
        let end = rows.min(start + chunk);
        for c0 in steps(0, cols, bc) {
            let nc = bc.min(cols - c0);
            for r0 in steps(start, end, br) {
                let nr = br.min(end - r0);
                // The next block's source lines, fetched while this one is
                // copied: its first row, first column, and its chunk's end.
                let (fr, fc, fend) = if r0 + br < end {
                    (r0 + br, c0, end)
                } else if c0 + bc < cols {
                    (start, c0 + bc, end)
                } else {
                    (end, 0, rows.min(end + chunk))
                };
                let fetch = if fr < rows { br.min(fend - fr) } else { 0 };
                fill(next, fr, fc, fetch);
                let len = bc.min(cols - fc) * unit;
                for p in &next[..fetch] {
                    // SAFETY: the first `fetch` were written just above.
                    prefetch(unsafe { p.assume_init() }, len);
                }
                // SAFETY: `fill` wrote this block's `nr` rows (the first block's
                // before the loop, every other's as the next block of the one
                // before it).
                let block_rows = unsafe { std::slice::from_raw_parts(here.as_ptr().cast::<*const u8>(), nr) };
                for c in (0..nc).step_by(STRIP) {
                    let n = STRIP.min(nc - c);
                    // The strip's destination rows, from the block's first row.
                    let mut out = [ptr::null_mut::<u8>(); STRIP];
                    to.walk(c0 + c, n, |i, o| out[i] = dst.wrapping_offset(o + r0 as isize * u));
                    let at = c as isize * u;
                    // SAFETY: the strip's units are inside the matrix (caller);
                    // the stage holds `STRIP` rows of `RUN` bytes, and a
                    // streamed strip's rows are `br * unit <= RUN` bytes.
                    unsafe {
                        if stream && nr == br {
                            let run = br * unit;
                            let mut staged = [ptr::null_mut::<u8>(); STRIP];
                            for (i, p) in staged[..n].iter_mut().enumerate() {
                                *p = stage.add(i * run);
                            }
                            strip::<MASKED>(block_rows, at, &staged[..n], unit, m, ends);
                            for i in 0..n {
                                stream_line_run(staged[i], out[i], run);
                            }
                        } else {
                            strip::<MASKED>(block_rows, at, &out[..n], unit, m, ends);
                        }
                    }
                }
                std::mem::swap(&mut here, &mut next);
            }
        }
    }
    if stream {
        fence();
    }
}

/// `start`, `start + step`, ... below `end` (`step > 0`), without the
/// division `step_by` makes to count its steps: the blocked transpose's
/// loops run a few times a call on small matrices (a tile of 16 x 19
/// units), where those divisions cost as much as the loops' moves.
#[inline(always)]
fn steps(start: usize, end: usize, step: usize) -> impl Iterator<Item = usize> {
    let mut at = start;
    std::iter::from_fn(move || {
        let here = at;
        at = at.saturating_add(step);
        (here < end).then_some(here)
    })
}

/// One strip: the source rows `rows` (from byte `at` of each) into the
/// destination rows `out` (at most [`STRIP`]), one unit of each source row
/// to each; register transposes of side `m` (0: none) over its whole
/// squares, and over its edges too: with `MASKED` all, in masked squares,
/// without those that fill a quarter of a side both ways ([`plain_edge`]),
/// reading whole vectors up to address `ends` ([`source_end`]); the rest
/// unit by unit.
///
/// # Safety
/// As [`blocked`] for the strip.
#[inline(always)]
unsafe fn strip<const MASKED: bool>(
    rows: &[*const u8],
    at: isize,
    out: &[*mut u8],
    unit: usize,
    m: usize,
    ends: usize,
) {
    let u = unit as isize;
    let cols = out.len();
    // SAFETY: every unit addressed is inside the strip (caller); the masked
    // squares touch only the `nr x nc` units they are given.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        if m != 0 && !MASKED && cols.is_multiple_of(m) {
            // Whole squares, the last rows unit by unit (as before the
            // edges' squares: the loop below measured up to 1.2 times the
            // time of whole strips, 2-byte squares of 16 destination rows).
            let mr = rows.len() - rows.len() % m;
            for c in steps(0, cols, m) {
                for r in steps(0, mr, m) {
                    x86::square(unit, &rows[r..r + m], at + c as isize * u, &out[c..c + m], r as isize * u);
                }
            }
            return units(&rows[mr..], mr, at, out, unit);
        }
        #[cfg(target_arch = "x86_64")]
        if m != 0 {
            for c in steps(0, cols, m) {
                let nc = m.min(cols - c);
                for r in steps(0, rows.len(), m) {
                    let nr = m.min(rows.len() - r);
                    let (s, d, at) = (&rows[r..r + nr], &out[c..c + nc], at + c as isize * u);
                    if nr == m && nc == m {
                        x86::square(unit, s, at, d, r as isize * u);
                    } else if MASKED {
                        x86::square_part(unit, s, at, d, r as isize * u);
                    } else if plain_edge(nr, nc, m) {
                        x86::square_edge(unit, s, at, d, r as isize * u, ends);
                    } else {
                        units(s, r, at, d, unit);
                    }
                }
            }
            return;
        }
        units(rows, 0, at, out, unit)
    }
}

/// Where the source's rows make one run of contiguous bytes (a
/// deinterleave's), its end's address, up to which a square's edge may
/// read a whole vector from a row's start (its units and the next rows');
/// otherwise 0.
fn source_end(mx: Matrix) -> usize {
    let Matrix { rows, cols, unit, from, .. } = mx;
    let one_run = from.inner >= rows || from.outer == from.inner as isize * from.stride;
    if from.stride == (cols * unit) as isize && one_run {
        (mx.src as usize).wrapping_add(rows * cols * unit)
    } else {
        0
    }
}

/// Whether an edge of a strip, `nr` rows by `nc` columns of a square of
/// side `m` (not both whole), goes in a square without masks
/// (`x86::square_edge`) rather than unit by unit: where it fills at least
/// [`MIN_EDGE`] of the square's side both ways.
#[inline(always)]
fn plain_edge(nr: usize, nc: usize, m: usize) -> bool {
    MIN_EDGE * nr >= m && MIN_EDGE * nc >= m
}

/// One unit of each source row `rows` (from byte `at` of each), the first
/// of them row `r0` of the strip, to each destination row `out`, one at a
/// time.
///
/// # Safety
/// As [`transpose`] for these units.
#[inline(always)]
unsafe fn units(rows: &[*const u8], r0: usize, at: isize, out: &[*mut u8], unit: usize) {
    /// The loop with a move of `N` bytes known at compile time (0: `n`).
    #[inline(always)]
    unsafe fn each<const N: usize>(rows: &[*const u8], r0: usize, at: isize, out: &[*mut u8], n: usize) {
        let u = n as isize;
        for (c, d) in out.iter().enumerate() {
            for (i, row) in rows.iter().enumerate() {
                // SAFETY: unit (r0 + i, c) on both sides (caller).
                unsafe {
                    let (from, to) = (row.offset(at + c as isize * u), d.offset((r0 + i) as isize * u));
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
            1 => each::<1>(rows, r0, at, out, unit),
            2 => each::<2>(rows, r0, at, out, unit),
            3 => each::<3>(rows, r0, at, out, unit),
            4 => each::<4>(rows, r0, at, out, unit),
            6 => each::<6>(rows, r0, at, out, unit),
            8 => each::<8>(rows, r0, at, out, unit),
            12 => each::<12>(rows, r0, at, out, unit),
            16 => each::<16>(rows, r0, at, out, unit),
            32 => each::<32>(rows, r0, at, out, unit),
            _ => each::<0>(rows, r0, at, out, unit),
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
    for i in (0..len).step_by(LINE) {
        // SAFETY: whole lines inside the run, `dst + i` line-aligned (caller).
        unsafe { store_line(src.add(i), dst.add(i)) };
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    use super::Matrix;
    use crate::engine::arch::vector::load_part;

    /// [`super::blocked`] compiled for AVX-512 (32 vector registers), with
    /// masked squares at the edges.
    ///
    /// # Safety
    /// As [`super::transpose`]; the CPU has AVX-512F, BW and VL.
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn blocked_avx512(mx: Matrix, m: usize, nt: bool) {
        // SAFETY: forwarded; the CPU has the features (caller).
        unsafe { super::blocked::<true>(mx, m, nt) }
    }

    /// One square of `16 / unit` units a side (`unit` 1, 2, 4 or 8): row
    /// `i` of the source is the 16 bytes at `rows[i] + at`, row `j` of the
    /// destination the 16 bytes at `out[j] + to`.
    ///
    /// # Safety
    /// Those bytes readable and writable, not overlapping.
    #[inline(always)]
    pub(super) unsafe fn square(unit: usize, rows: &[*const u8], at: isize, out: &[*mut u8], to: isize) {
        // SAFETY: forwarded; SSE2 is part of x86_64's baseline.
        unsafe {
            match unit {
                1 => shuffle!(16, 4, rows, at, out, to, _mm_unpacklo_epi8, _mm_unpackhi_epi8),
                2 => shuffle!(8, 3, rows, at, out, to, _mm_unpacklo_epi16, _mm_unpackhi_epi16),
                4 => shuffle!(4, 2, rows, at, out, to, _mm_unpacklo_epi32, _mm_unpackhi_epi32),
                _ => shuffle!(2, 1, rows, at, out, to, _mm_unpacklo_epi64, _mm_unpackhi_epi64),
            }
        }
    }

    /// [`square`] of `rows.len()` rows and `out.len()` columns (each at
    /// most `16 / unit`): masked loads of `out.len()` units from each
    /// source row, masked stores of `rows.len()` units to each destination
    /// row. Nothing else is touched.
    ///
    /// # Safety
    /// Those units readable and writable, not overlapping; the CPU has
    /// AVX-512F, BW and VL.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl")]
    pub(super) unsafe fn square_part(unit: usize, rows: &[*const u8], at: isize, out: &[*mut u8], to: isize) {
        let (load, store) = (bytes_mask(out.len() * unit), bytes_mask(rows.len() * unit));
        // SAFETY: the masks cover `out.len()` units of each row read and
        // `rows.len()` of each row written (caller); masked-off bytes are
        // not accessed.
        unsafe {
            match unit {
                1 => shuffle!(16, 4, rows, at, out, to, _mm_unpacklo_epi8, _mm_unpackhi_epi8, load, store),
                2 => shuffle!(8, 3, rows, at, out, to, _mm_unpacklo_epi16, _mm_unpackhi_epi16, load, store),
                4 => shuffle!(4, 2, rows, at, out, to, _mm_unpacklo_epi32, _mm_unpackhi_epi32, load, store),
                _ => shuffle!(2, 1, rows, at, out, to, _mm_unpacklo_epi64, _mm_unpackhi_epi64, load, store),
            }
        }
    }

    /// [`square`] of `rows.len()` rows and `out.len()` columns (each at
    /// most `16 / unit`) without masks: each source row's `out.len()`
    /// units by at most two overlapping plain reads ([`load_part`]), or a
    /// whole vector where it ends by address `reads`, each destination
    /// row's `rows.len()` units by at most two overlapping plain writes
    /// ([`store_part`]); the rows past the last zero.
    ///
    /// # Safety
    /// Those units readable and writable, not overlapping.
    #[inline(always)]
    pub(super) unsafe fn square_edge(
        unit: usize,
        rows: &[*const u8],
        at: isize,
        out: &[*mut u8],
        to: isize,
        reads: usize,
    ) {
        let (load, store) = (out.len() * unit, rows.len() * unit);
        // SAFETY: `load_part` reads `out.len()` units of each row, and
        // `store_part` writes `rows.len()` units of each (caller).
        unsafe {
            match unit {
                1 => shuffle!(16, 4, rows, at, out, to, _mm_unpacklo_epi8, _mm_unpackhi_epi8, load, store, reads),
                2 => shuffle!(8, 3, rows, at, out, to, _mm_unpacklo_epi16, _mm_unpackhi_epi16, load, store, reads),
                4 => shuffle!(4, 2, rows, at, out, to, _mm_unpacklo_epi32, _mm_unpackhi_epi32, load, store, reads),
                _ => shuffle!(2, 1, rows, at, out, to, _mm_unpacklo_epi64, _mm_unpackhi_epi64, load, store, reads),
            }
        }
    }

    /// The 16 bytes at `p` where they end by address `reads`, otherwise
    /// only its `n` ([`load_part`]).
    ///
    /// # Safety
    /// `n` bytes readable at `p`, and 16 if they end by `reads`.
    #[inline(always)]
    pub(super) unsafe fn load_upto(p: *const u8, n: usize, reads: usize) -> __m128i {
        // SAFETY: forwarded.
        unsafe {
            if (p as usize).wrapping_add(16) <= reads {
                _mm_loadu_si128(p.cast())
            } else {
                load_part(p, n)
            }
        }
    }

    /// Writes the low `n` bytes (at most 16) of `v` to `p`: two plain
    /// writes of the widest power of two in `n`, at its start and at its
    /// end, whose bytes in common are the same.
    ///
    /// # Safety
    /// `n` bytes writable at `p`.
    #[inline(always)]
    pub(super) unsafe fn store_part(p: *mut u8, n: usize, v: __m128i) {
        /// `W`-byte writes at `0` and `n - W`.
        #[inline(always)]
        unsafe fn two<const W: usize>(p: *mut u8, n: usize, x: u128) {
            let write = |at: usize| {
                let bytes = (x >> (8 * at)).to_le_bytes();
                // SAFETY: `at + W <= n` bytes writable (caller), `W <= 16`.
                unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(at), W) };
            };
            write(0);
            write(n - W);
        }
        // SAFETY: each write ends at or before byte `n` (`W <= n`).
        unsafe {
            if n >= 16 {
                return _mm_storeu_si128(p.cast(), v);
            }
            let (lo, hi) = (_mm_cvtsi128_si64(v) as u64, _mm_cvtsi128_si64(_mm_unpackhi_epi64(v, v)) as u64);
            let x = u128::from(lo) | u128::from(hi) << 64;
            match n {
                8.. => two::<8>(p, n, x),
                4.. => two::<4>(p, n, x),
                2.. => two::<2>(p, n, x),
                1 => p.write(x as u8),
                _ => {}
            }
        }
    }

    /// The mask of the first `n` (at most 16) bytes of a vector.
    #[inline(always)]
    fn bytes_mask(n: usize) -> __mmask16 {
        ((1u32 << n) - 1) as __mmask16
    }

    /// An `N x N` transpose of `16 / N`-byte units, one vector a row: `R`
    /// (log2 `N`) rounds of the perfect shuffle, row `i` with row `i +
    /// N/2`, low halves to row `2i` and high to row `2i + 1`. A macro, so
    /// that the unpacks are named, and inlined, where they are used; the
    /// masked form reads `rows.len()` rows and writes `out.len()`.
    macro_rules! shuffle {
        ($n:literal, $rounds:literal, $rows:expr, $at:expr, $out:expr, $to:expr, $lo:ident, $hi:ident) => {{
            // Fixed counts, so that the rows stay in registers.
            let (rows, out): (&[*const u8], &[*mut u8]) = ($rows, $out);
            let (rows, out) = (&rows[..$n], &out[..$n]);
            let mut v = [_mm_setzero_si128(); $n];
            for i in 0..$n {
                v[i] = _mm_loadu_si128(rows[i].offset($at).cast());
            }
            shuffle!(@rounds $n, $rounds, v, $lo, $hi);
            for i in 0..$n {
                _mm_storeu_si128(out[i].offset($to).cast(), v[i]);
            }
        }};
        ($n:literal, $rounds:literal, $rows:expr, $at:expr, $out:expr, $to:expr, $lo:ident, $hi:ident,
         $load:expr, $store:expr) => {{
            // Fixed counts, so that the rows stay in registers: a row past
            // the last is the last again, under an empty mask.
            let (rows, out): (&[*const u8], &[*mut u8]) = ($rows, $out);
            let (nr, nc) = (rows.len(), out.len());
            let mut v = [_mm_setzero_si128(); $n];
            for i in 0..$n {
                let mask = if i < nr { $load } else { 0 };
                v[i] = _mm_maskz_loadu_epi8(mask, rows[i.min(nr - 1)].offset($at).cast());
            }
            shuffle!(@rounds $n, $rounds, v, $lo, $hi);
            for i in 0..$n {
                let mask = if i < nc { $store } else { 0 };
                _mm_mask_storeu_epi8(out[i.min(nc - 1)].offset($to).cast(), mask, v[i]);
            }
        }};
        ($n:literal, $rounds:literal, $rows:expr, $at:expr, $out:expr, $to:expr, $lo:ident, $hi:ident,
         $load:expr, $store:expr, $reads:expr) => {{
            // Fixed counts, so that the rows stay in registers: the rows
            // past the last zero, the columns past the last not written.
            // A row's whole vector where it ends by `reads`.
            let (rows, out): (&[*const u8], &[*mut u8]) = ($rows, $out);
            let (nr, nc, reads) = (rows.len(), out.len(), $reads);
            let mut v = [_mm_setzero_si128(); $n];
            for i in 0..$n {
                if i < nr {
                    v[i] = load_upto(rows[i].offset($at), $load, reads);
                }
            }
            shuffle!(@rounds $n, $rounds, v, $lo, $hi);
            for i in 0..$n {
                if i < nc {
                    store_part(out[i].offset($to), $store, v[i]);
                }
            }
        }};
        (@rounds $n:literal, $rounds:literal, $v:ident, $lo:ident, $hi:ident) => {
            for _ in 0..$rounds {
                let mut next = $v;
                for i in 0..$n / 2 {
                    next[2 * i] = $lo($v[i], $v[i + $n / 2]);
                    next[2 * i + 1] = $hi($v[i], $v[i + $n / 2]);
                }
                $v = next;
            }
        };
    }
    use shuffle;
}

#[cfg(test)]
mod tests;
