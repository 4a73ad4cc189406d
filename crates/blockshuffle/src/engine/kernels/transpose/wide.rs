//! The full-line transpose (AVX-512, and AVX2 for 4- and 8-byte units and
//! packed 3- and 6-byte ones: [`transpose_avx2`]): [`super::transpose`] for
//! 1-, 2-, 4-, 8-, 16- and 32-byte units in squares whose rows are one
//! 64-byte vector each (64 x 64 of bytes, 32 x 32 of 2 bytes, 16 x 16 of 4
//! bytes, 8 x 8 of 8 bytes, 4 x 4 of 16 bytes, 2 x 2 of 32 bytes; see
//! [`super::wide_side`]), transposed in registers by log2 of the side rounds
//! of two-source permutes (bytes: four passes of 16 columns, each a 16 x 16
//! transpose in every lane of sixteen vectors by four rounds of byte
//! interleaves, `bytes`). A square reads one line of each of its source rows
//! (bytes: 16 bytes of it a pass) and writes one whole line of each of its
//! destination rows, so a streamed destination needs no stage: the squares'
//! stores are the streaming stores. The edges go in masked squares that
//! touch only the matrix's units. With AVX-512's masks, destination rows
//! that are not whole lines apart (each starting at its own place in a line)
//! stream too: each square's row is shifted into whole lines with the row
//! above it, carried from the last square ([`Squares::shifted`]; of bytes,
//! with VBMI). Units of 3, 6 and 12 bytes go in the squares of 4-, 8- and
//! 16-byte lanes ([`packed`], with VBMI): the first round reads each 48-byte
//! row's units into lanes and the last packs them again, by two-source byte
//! permutes. Streamed, four such squares go down the rows at once, so that
//! each destination row takes 192 bytes, three lines, shifted into place by
//! bytes (`shifted::shifted_packed`).
//!
//! What it buys (one thread, ratio to memcpy, alternated runs, against the
//! blocked transpose and the tile's strided runs): HPTT's float64 2-D
//! transpositions (`shared/bench/transpose.json` T01-T03) 2.8-3.2x ->
//! 1.25-1.37x; see [`super::wide_side`] for the whole class and what was
//! tried and not kept.
//!
//! Layer: kernels; imports arch only.

use std::arch::x86_64::*;
use std::mem::MaybeUninit;

use super::{shifts_packed, Matrix, Rows2, CHUNK_ROWS, MIN_SHIFTED_ROW};
use crate::engine::arch::cache::first_level_holds;
use crate::engine::arch::mem::{fence, LINE};

mod avx2;
mod blocks;
mod bytes;
mod shifted;

use blocks::{block_steps, line_lead, source_lead, Ahead, BLOCK_ROWS, MAX_STEPS};
use shifted::{flush_rows, shifted, shifted_packed};

/// [`super::transpose`] in full-line squares of `unit` bytes (1, 2, 4, 8,
/// 16 or 32: see [`super::wide_side`]; bytes without shifted rows, which
/// [`bytes_vbmi`] shifts).
///
/// # Safety
/// As [`super::transpose`]; the CPU has AVX-512F, BW and VL.
#[target_feature(enable = "avx512f,avx512bw,avx512vl")]
pub(super) unsafe fn transpose(mx: Matrix, nt: bool, fetch: bool) {
    // SAFETY: forwarded.
    unsafe {
        match mx.unit {
            1 => units::<bytes::Bytes<false>>(mx, nt, fetch),
            2 => units::<Masked<2, 2, 32>>(mx, nt, fetch),
            4 => units::<Masked<4, 4, 16>>(mx, nt, fetch),
            8 => units::<Masked<8, 8, 8>>(mx, nt, fetch),
            16 => units::<Masked<16, 16, 4>>(mx, nt, fetch),
            32 => units::<Masked<32, 32, 2>>(mx, nt, fetch),
            // A real check: another unit would be moved as one of these.
            unit => unreachable!("full-line squares move units of 1, 2, 4, 8, 16 or 32 bytes, not {unit}"),
        }
    }
}

/// [`super::transpose`] in full-line squares of `unit` bytes (4 or 8)
/// built of AVX2's (`avx2`), without masks: where AVX-512's are not; and
/// in their packed squares of 3- and 6-byte units, never streamed.
///
/// # Safety
/// As [`super::transpose`]; the CPU has AVX2.
#[target_feature(enable = "avx2")]
pub(super) unsafe fn transpose_avx2(mx: Matrix, nt: bool, fetch: bool) {
    // SAFETY: forwarded.
    unsafe {
        match mx.unit {
            4 => units::<avx2::Halves<4, 16>>(mx, nt, fetch),
            8 => units::<avx2::Halves<8, 8>>(mx, nt, fetch),
            3 => units::<avx2::Packed<3, 4, 16>>(mx, false, fetch),
            6 => units::<avx2::Packed<6, 8, 8>>(mx, false, fetch),
            // A real check: another unit would be moved as one of these.
            unit => unreachable!("AVX2's full-line squares move units of 3, 4, 6 or 8 bytes, not {unit}"),
        }
    }
}

/// [`super::transpose`] in full-line squares of bytes whose rows, streamed,
/// shift into whole lines wherever they start (`bytes`, by VBMI's byte
/// permutes).
///
/// # Safety
/// As [`super::transpose`]; the CPU has AVX-512F, BW, VL and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn bytes_vbmi(mx: Matrix, nt: bool, fetch: bool) {
    // A real check: the squares are of bytes.
    assert_eq!(mx.unit, 1, "the shifting squares of bytes move bytes");
    // SAFETY: forwarded.
    unsafe { units::<bytes::Bytes<true>>(mx, nt, fetch) }
}

/// [`super::transpose`] in full-line squares of packed units of 3, 6 or
/// 12 bytes: a square's rows (48 bytes, 16, 8 or 4 units) transposed as
/// rows of lanes of 4, 8 or 16 bytes, the first round spreading the units
/// to the lanes and the last packing them again ([`transpose_rows`]).
/// Streamed (`nt`) only where [`units`] shifts the rows (four squares a
/// step: [`shifted_packed`]); otherwise through the cache.
///
/// # Safety
/// As [`super::transpose`]; the CPU has AVX-512F, BW, VL and VBMI.
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512vbmi")]
pub(super) unsafe fn packed(mx: Matrix, nt: bool, fetch: bool) {
    // SAFETY: forwarded.
    unsafe {
        match mx.unit {
            3 => units::<Masked<3, 4, 16>>(mx, nt, fetch),
            6 => units::<Masked<6, 8, 8>>(mx, nt, fetch),
            12 => units::<Masked<12, 16, 4>>(mx, nt, fetch),
            // A real check: another unit would be moved as one of these.
            unit => unreachable!("packed full-line squares move units of 3, 6 or 12 bytes, not {unit}"),
        }
    }
}

/// The columns of a strip: 512 bytes of each source row, read as
/// one run (the squares' own, [`Squares::STRIP`], may be wider).
const STRIP_BYTES: usize = 512;

/// The most columns a strip has (a destination row's pointer each): AVX2's
/// packed squares' strips of 3-byte units, 2,048 bytes of them.
const STRIP_COLS: usize = 1024;

/// Bytes of a matrix from which, through the cache, its strips write at
/// most [`CACHED_STREAMS`] destination rows (see [`strip_cols`]): past
/// the first-level caches (a destination this small stays in the second
/// level from call to call).
const CACHED_MATRIX: usize = 256 << 10;

/// Most destination rows a strip through the cache writes at once, in a
/// matrix of [`CACHED_MATRIX`] bytes and more with 64 columns and more (or
/// a square's side, where that is more): about the streams the
/// second-level cache's prefetcher follows, so that each row's next lines
/// are fetched for ownership before its stores reach them.
const CACHED_STREAMS: usize = 16;

/// The columns of [`units`]'s strips, a whole number of squares: those of
/// [`Squares::STRIP`] bytes of each source row, or [`CACHED_STREAMS`]
/// through the cache (not `streamed`, and unless the squares keep their
/// strips, [`Squares::FULL_STRIPS`]) in a matrix of [`CACHED_MATRIX`]
/// bytes and more where both its columns and a full strip's are at least
/// four times that. A full strip writes one line of each of its
/// destination rows (48 bytes of packed units) a step, 64 to 672 rows at
/// once: more than the prefetcher follows, so that each store waits for
/// its line to be read in. Under 64 columns, 16 a strip splits rows a
/// strip would take whole and leaves a narrow strip behind.
///
/// Measured (this project's machine, Intel Xeon with AVX-512, one thread,
/// ratio to memcpy, 10 alternated runs, each workload's best): 61 broad
/// workloads of seeds 26, 801 and 802 picked as tiles in these squares
/// with more than 16 columns (58 of them are), geomean 1.74 -> 1.65 (numpy
/// transposes of 3-byte units, 225 and 152 MiB, 5.5 -> 3.2 and 4.6 ->
/// 3.1; of 6-byte units, 0.6 MiB, 2.4 -> 1.5); the worst loss a float32
/// transpose of 557 x 1,046 (2.2 MiB), 1.15 the time in three runs. With
/// the AVX2 kernels (8 runs), 2.07 -> 2.02, but two 2-D transposes of
/// 3-byte units (40 and 152 MiB) lost, 1.05 to 1.19 the time (AVX2's
/// packed squares were measured best in strips of 2,048 bytes on AMD).
/// So AVX2's packed squares keep their full strips
/// ([`Squares::FULL_STRIPS`]; what that buys is at their `STRIP`).
/// Strips of 32 rows were worse than 16 on both kernel sets; strips of 16
/// from 17 columns on lost on 21 to 33 columns (float32 of 33 columns,
/// 1.30 the time).
///
/// Streamed packed units (shifted, four squares a step) go in strips of
/// [`SHIFTED_PACKED_COLS`]. Through the cache, a strip whose destination
/// rows (`to`'s, from `dst`) crowd the first level is then narrowed
/// ([`held_strip`]).
fn strip_cols<S: Squares>(rows: usize, cols: usize, streamed: bool, dst: usize, to: Rows2) -> usize {
    if streamed && S::U != S::L {
        return SHIFTED_PACKED_COLS;
    }
    let full = S::STRIP / S::U / S::N * S::N;
    let bytes = rows.saturating_mul(cols).saturating_mul(S::U);
    let bc = if streamed || S::FULL_STRIPS || bytes < CACHED_MATRIX || full.min(cols) < 4 * CACHED_STREAMS {
        full
    } else {
        full.min(CACHED_STREAMS.next_multiple_of(S::N))
    };
    held_strip::<S>(bc, cols, dst, to, streamed)
}

/// A strip of `bc` columns (of a matrix's `cols`) through the cache,
/// halved (a whole number of squares) until the first-level cache holds a
/// line of each of its destination rows from `dst` ([`first_level_holds`]),
/// where a strip of one square or more does; else `bc`. The rows counted
/// are those `to.stride` apart (at most `to.inner`: a matrix whose columns
/// two loops make has its next rows elsewhere, not counted). Only squares
/// of whole lines (not [`packed`](super::packed) units, whose rows are 48
/// bytes), through the cache (not `streamed`), and not AVX2's packed
/// squares, which keep their full strips ([`Squares::FULL_STRIPS`]).
/// Each step of a strip writes a line of every one of its destination
/// rows: where those lines crowd into fewer sets than their ways hold
/// (rows a power of two of lines apart: 64 rows 1 KiB apart fill 4 sets,
/// 48 lines with 12 ways), each step's stores evict the lines the step
/// before fetched for ownership.
///
/// Measured on an AMD EPYC (Zen 5, L1d 48 KiB of 64 sets of 12 ways), one
/// thread, 8 alternated runs, ratio to memcpy, numpy 2-D transposes with
/// power-of-two sides from 32 KiB to 16 MiB (at most 8 to 1): float64 (35)
/// geomean 2.21 -> 1.77, 16 faster by more than 10%, one slower so (1,024
/// x 2,048, 1.00 -> 1.11; 256 x 64: 8.9 -> 2.3; 512 x 512: 3.7 -> 2.3);
/// float32 (35) 2.66 -> 2.40 (512 x 64: 8.9 -> 2.4), 8 faster, one slower
/// (128 x 128, 1.9 -> 2.1); complex128 (33) 2.36 -> 2.12 (128 x 128: 3.7
/// -> 2.0), 6 faster, none slower. Of the broad workloads, seeds 26 and
/// 801 (1,280), it narrows none; of those drawn with powers of two (seeds
/// 26 to 28, 1,920), 11, 0.85 of the time. In another run, narrowed to
/// the widest strip that holds (a square less at a time), float64
/// measured 1.83 against 1.77 halved, 3 slower (128 x 256, 1.36 -> 1.68:
/// strips of 48 columns in 256); packed units, 20 power-of-two broad
/// workloads of 6- and 12-byte units, from 0.55 to 1.22 the time, and are
/// left whole.
fn held_strip<S: Squares>(bc: usize, cols: usize, dst: usize, to: Rows2, streamed: bool) -> usize {
    if streamed || S::FULL_STRIPS || S::U != S::L {
        return bc;
    }
    let holds = |w: usize| first_level_holds(dst, to.stride, w.min(cols).min(to.inner));
    let mut w = bc;
    while w > S::N && !holds(w) {
        w = (w / 2).next_multiple_of(S::N);
    }
    if holds(w) {
        w
    } else {
        bc
    }
}

/// The columns of a strip of packed units streamed (shifted, four squares
/// a step: [`shifted_packed`]): 32 destination rows, each taking three
/// whole lines a step (a whole number of squares of 3-, 6- and 12-byte
/// units). Measured against the full strip (160 columns of 3-byte units,
/// 80 of 6, 40 of 12), one thread, ratio to memcpy, 2 alternated runs:
/// numpy transposes of 3-byte units, `1,0` of 3,354 x 4,228 (41 MiB) 2.4
/// -> 1.7-1.9x, `2,0,1` of 225 MiB 2.6-2.8 -> 2.1-2.3; strips of 16, 48,
/// 64 and 128 columns between.
const SHIFTED_PACKED_COLS: usize = 32;

/// [`transpose`] for `U`-byte units, in lanes of `L` bytes (`U` itself, or
/// the next power of two for [`packed`] units), in squares of side `N`: the
/// columns go in strips of a whole number of squares ([`strip_cols`]: at
/// most [`Squares::STRIP`] bytes of the source rows); a strip's rows
/// go `N` at a time, each step reading one run of every row and
/// storing one line of each of the strip's destination rows, so that
/// every destination row is written in order. Streamed, the first step
/// takes the rows up to the destination's first line boundary, and
/// every full square after it stores whole lines; where the rows start at
/// different places in their lines, the steps are whole squares (four of
/// packed units: [`Squares::SHIFT_ROWS`]), each row shifted into whole
/// lines with the step's above ([`Squares::shifted`], for rows of
/// [`MIN_SHIFTED_ROW`] bytes and more).
///
/// Streamed, a strip's steps go in blocks of [`blocks::BLOCK_BYTES`] of its source
/// rows ([`block_steps`]), a column of squares at a time down the block,
/// so that each destination row takes a run of the block's rows (128 bytes
/// of 8-byte units) at once, not one line; the next block's source lines
/// are fetched while one is moved ([`Ahead`]); and where the source rows
/// allow, the columns before their first line boundary go first
/// ([`source_lead`]), so that every square after them reads whole lines.
///
/// Through the cache, the steps go in such blocks, the next one fetched
/// (no lead columns), where the caller says the tensors are past the
/// caches (`fetch`; what that buys is at [`blocks`]); otherwise one at a
/// time, nothing fetched.
///
/// # Safety
/// As [`transpose`].
#[inline(always)]
unsafe fn units<S: Squares>(mx: Matrix, nt: bool, fetch: bool) {
    let Matrix { rows, cols, dst, to, .. } = mx;
    // Every destination row starts at the same offset in its line.
    let dst_lead = line_lead(dst as usize, to, cols, S::U).filter(|_| S::U == S::L && nt);
    let stream = dst_lead.is_some();
    let lead = dst_lead.map_or(0, |l| l.min(rows));
    // Every destination row starts a whole number of units into its line,
    // each its own, and is long enough: streamed by `Squares::shifted`.
    // Packed units shift by bytes, their rows starting anywhere, where
    // their squares take most columns (`shifts_packed`).
    let units_in = |v: isize| v.unsigned_abs().is_multiple_of(S::U);
    let whole_units = || {
        rows.saturating_mul(S::U) >= MIN_SHIFTED_ROW
            && units_in(dst as isize)
            && units_in(to.stride)
            && (cols <= to.inner || units_in(to.outer))
    };
    let shifted =
        S::SHIFTS && !stream && nt && if S::U == S::L { whole_units() } else { shifts_packed(rows, cols, S::U) };
    // Shifted rows are streamed too: full strips.
    let bc = strip_cols::<S>(rows, cols, stream || shifted, dst as usize, to);
    // Streamed, the source's lead columns go first (see `source_lead`).
    let col_lead = if stream || shifted { source_lead::<S>(mx) } else { 0 };
    // SAFETY: forwarded; the rows start as each mode takes them.
    unsafe {
        if shifted {
            chunks::<S, true, true>(mx, bc, 0, false, col_lead);
        } else if stream || fetch {
            chunks::<S, false, true>(mx, bc, lead, stream, col_lead);
        } else {
            chunks::<S, false, false>(mx, bc, lead, false, col_lead);
        }
    }
}

/// [`units`]'s matrix a chunk of rows at a time, in strips of `bc`
/// columns ([`strip_cols`]), the first `col_lead` columns a strip of
/// their own: streamed from `lead` rows on (`stream`), or with every row
/// shifted into whole lines (`SHIFTED`; a separate instance, so that the
/// others' code and stack are as they were without it); their steps in
/// blocks, the next one fetched, with `FETCH` (also a separate instance:
/// see [`blocks`]).
///
/// # Safety
/// As [`transpose`]; streamed, every destination row starts `lead` units
/// before a line boundary; `SHIFTED`, as [`units`] checks.
#[inline(always)]
unsafe fn chunks<S: Squares, const SHIFTED: bool, const FETCH: bool>(
    mx: Matrix,
    bc: usize,
    lead: usize,
    stream: bool,
    col_lead: usize,
) {
    let Matrix { rows, cols, .. } = mx;
    // A real check at compile time: a strip's columns fit `out` (and,
    // shifted, `carry`).
    const { assert!(S::STRIP / S::U <= STRIP_COLS && (!(SHIFTED && S::SHIFTS) || S::STRIP / S::U <= SHIFTED_COLS)) };
    // `bc` is at most that (`strip_cols` narrows the full strip only), and
    // `chunk` fills `out` by checked indexing before it slices it. (An
    // `assert!` of it here measured 1.02 the time on five of HPTT's
    // float64 transposes, 6 alternated runs, each one's best; 1.04 on
    // one of them, 608 x 12 x 75 x 96 reversed.)
    // Row pointers, written before they are read and never initialised as
    // a whole (8 KiB of stores a call, for a tile that may be 1 KiB).
    let mut out = [MaybeUninit::<*mut u8>::uninit(); STRIP_COLS];
    let mut at = [MaybeUninit::<*const u8>::uninit(); BLOCK_ROWS];
    // Shifted, each destination row's last 64 bytes of a step: zeros for
    // the strip's columns (a 16th of the matrix's bytes at most), each
    // then written by every step before the next reads it.
    let mut carry = [MaybeUninit::<__m512i>::uninit(); SHIFTED_COLS];
    if SHIFTED {
        for c in carry.iter_mut().take(cols) {
            *c = MaybeUninit::zeroed();
        }
    }
    let mut start = 0;
    while start < rows {
        let end = rows.min(start + CHUNK_ROWS + if start == 0 { lead } else { 0 });
        // SAFETY: forwarded; `start` is 0, or `lead` plus whole steps
        // (shifted: `lead` is 0, and `start` a multiple of `CHUNK_ROWS`,
        // so of every step's rows).
        unsafe {
            chunk::<S, SHIFTED, FETCH>(mx, bc, start, end, lead, stream, col_lead, &mut out, &mut at, &mut carry)
        };
        start = end;
    }
    if stream || SHIFTED {
        fence();
    }
}

/// The most columns of a strip that [`Squares::shifted`] carries a row
/// of: a strip of 2-byte units, or of the shifting squares of bytes
/// (`bytes`, whose strips are this many columns).
const SHIFTED_COLS: usize = STRIP_BYTES / 2;

/// Rows `start..end` of [`units`]'s matrix, in its strips (see
/// [`chunks`]); streamed or with `FETCH`, each strip's steps in blocks
/// (see [`units`]).
///
/// # Safety
/// As [`transpose`]; `start` 0 or `lead` plus a multiple of `N`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn chunk<S: Squares, const SHIFTED: bool, const FETCH: bool>(
    mx: Matrix,
    bc: usize,
    start: usize,
    end: usize,
    lead: usize,
    stream: bool,
    col_lead: usize,
    out: &mut [MaybeUninit<*mut u8>; STRIP_COLS],
    at: &mut [MaybeUninit<*const u8>; BLOCK_ROWS],
    carry: &mut [MaybeUninit<__m512i>; SHIFTED_COLS],
) {
    let Matrix { rows, cols, src, from, dst, to, .. } = mx;
    let (u, n_side) = (S::U, S::N);
    // Shifted, a step takes `S::SHIFT_ROWS` rows (whole lines of each
    // destination row); the chunk's last rows, fewer, a square at a time
    // through the cache.
    let tall = if SHIFTED { S::SHIFT_ROWS } else { n_side };
    // A real check at compile time: a block of steps of `tall` rows (a
    // square's or a shifted step's) fills at most `at`'s rows and `steps`'
    // steps (`block_steps`: at least one, at most `BLOCK_ROWS / tall`).
    const {
        assert!(
            S::N <= BLOCK_ROWS
                && S::SHIFT_ROWS <= BLOCK_ROWS
                && BLOCK_ROWS / S::N <= MAX_STEPS
                && BLOCK_ROWS / S::SHIFT_ROWS <= MAX_STEPS
        )
    };
    // Edges as whole squares over the units before them (see
    // `Squares::OVERLAPS`), through the cache.
    let overlap = S::OVERLAPS && !stream && !SHIFTED;
    // Streamed, or with the tensors past the caches (`FETCH`), a strip's
    // steps go in blocks, the next one fetched ahead; otherwise a step at
    // a time, nothing fetched.
    let per_block = if FETCH { block_steps::<S>(bc, tall) } else { 1 };
    let mut ahead = Ahead::new();
    // A block's steps, `(r, nr, r0)` each (see below), written before
    // they are read.
    let mut steps = [MaybeUninit::<(usize, usize, usize)>::uninit(); MAX_STEPS];
    // The strips: the source's lead columns first, where it has them
    // (`source_lead`), then `bc` columns each.
    let mut next_c0 = 0;
    while next_c0 < cols {
        let c0 = next_c0;
        let w = if c0 == 0 && col_lead > 0 { col_lead } else { bc };
        next_c0 += w;
        // A last strip narrower than a square: a square's columns,
        // ending at the matrix's last.
        let (c0, nc) = edge::<S>(overlap, c0, w.min(cols - c0), cols);
        to.walk(c0, nc, |i, o| {
            out[i].write(dst.wrapping_offset(o));
        });
        // SAFETY: the first `nc` were written just above.
        let out = unsafe { std::slice::from_raw_parts(out.as_ptr().cast::<*mut u8>(), nc) };
        let mut r0 = start;
        // Shifted, whether the full columns' rows are carried from a
        // step (then written out by `flush`, once).
        let mut carried = false;
        while r0 < end {
            // A block: up to `per_block` steps, their rows' pointers one
            // after another in `at` (a shifted chunk's last rows, fewer
            // than a step, a block of their own: their carried rows go
            // first).
            let mut k = 0;
            let mut filled = 0;
            while r0 < end && k < per_block {
                let step = if r0 == 0 && lead > 0 { lead } else { tall.min(end - r0) };
                // The step's rows `r..r + nr`: the chunk's last rows, fewer
                // than a square, as the square's rows ending at its last
                // (from before `start`, if need be).
                let (r, nr) = edge::<S>(overlap, r0, step, end);
                if SHIFTED && nr < tall && k > 0 {
                    break;
                }
                from.walk(r, nr, |i, o| {
                    at[filled + i].write(src.wrapping_offset(o + (c0 * u) as isize));
                });
                steps[k].write((r, nr, r0));
                filled += nr;
                k += 1;
                r0 += step;
            }
            if FETCH {
                // The next block's rows and columns: this strip's next
                // rows, the next strip's first, or the next chunk's.
                let (pr, pc) = if r0 < end {
                    (r0, c0)
                } else if c0 + nc < cols {
                    (start, c0 + nc)
                } else {
                    (end, 0)
                };
                let n = filled.min(rows.saturating_sub(pr));
                let len = bc.min(cols.saturating_sub(pc)) * u;
                let squares = nc.div_ceil(n_side) * k;
                ahead.aim(from, src, pr, pc * u, n, len, squares);
            }
            // SAFETY: the first `k` (at least one: `r0 < end` above) and
            // `filled` were written just above.
            let (steps, at) = unsafe {
                (
                    std::slice::from_raw_parts(steps.as_ptr().cast::<(usize, usize, usize)>(), k),
                    std::slice::from_raw_parts(at.as_ptr().cast::<*const u8>(), filled),
                )
            };
            let (r, nr, _) = steps[0];
            if SHIFTED && nr < tall && carried {
                // The chunk's last rows, fewer than a step: the full
                // columns' carried rows go first.
                // SAFETY: the last step was whole (`carried`), its rows
                // carried, their last 64 bytes ending at row `r` (a
                // step's rows end where the next step's start).
                unsafe { flush::<S>(out, nc, (r * u) as isize - LINE as isize, carry) };
            }
            for c in (0..nc).step_by(n_side) {
                // The strip's last columns, fewer than a square: the
                // square's columns ending at its last.
                let (c, n) = edge::<S>(overlap, c, n_side.min(nc - c), nc);
                let from = (c * u) as isize;
                let mut base = 0;
                for &(r, nr, r0) in steps {
                    let at = &at[base..base + nr];
                    base += nr;
                    let to = (r * u) as isize;
                    ahead.issue();
                    if SHIFTED && nr == tall && n == n_side {
                        // SAFETY: units (r0.., c0 + c..) of the matrix, the
                        // rows' carried squares from the last step unless this
                        // is the chunk's first (caller); each row's bytes
                        // start a whole number of its shift's lanes into
                        // their line (`units`: whole units, or bytes for
                        // packed units).
                        unsafe {
                            S::shifted(at, from, &out[c..c + n_side], to, &mut carry[c..c + n_side], r0 == start)
                        };
                        continue;
                    }
                    // A square's rows at a time: a step's, or a shifted
                    // step's (four squares', of packed units) in columns
                    // short of a square.
                    for (q, at) in at.chunks(n_side).enumerate() {
                        let to = to + (q * n_side * u) as isize;
                        // SAFETY: units (r + q * N.., c0 + c..) of the matrix
                        // (caller; an overlapping edge's square ends at the
                        // chunk's last row, `end >= N`, or the strip's last
                        // column, `nc >= N`, and writes again what the square
                        // before it wrote). Streamed, a full square's rows
                        // start on line boundaries, as its aligned stores
                        // need: `stream` holds only where every destination
                        // row starts at `dst`'s offset in its line (strides
                        // of whole lines), and `r * U` is then `lead`'s bytes
                        // (to that line's end) plus whole lines (a streamed
                        // step is one square, `q` 0).
                        unsafe {
                            if at.len() == n_side && n == n_side {
                                S::square(at, from, &out[c..c + n_side], to, stream);
                            } else {
                                S::part(at, from, &out[c..c + n], to);
                            }
                        }
                    }
                }
            }
            // A block of whole steps carries its rows (a shorter one is
            // the chunk's last, and flushed them first).
            carried = SHIFTED && nr == tall;
        }
        if SHIFTED && carried {
            // SAFETY: the last step was whole, its rows carried, their
            // last 64 bytes ending at row `end`.
            unsafe { flush::<S>(out, nc, (end * u) as isize - LINE as isize, carry) };
        }
    }
}

/// A step's span of rows or columns, `at..at + len`, as `(first, len)`:
/// itself, or, where the edges overlap (`overlap`, see
/// [`Squares::OVERLAPS`]) and it is shorter than a square (then the last
/// one: `at + len == end`), the square's span ending at `end`, where
/// `end` holds one.
#[inline(always)]
fn edge<S: Squares>(overlap: bool, at: usize, len: usize, end: usize) -> (usize, usize) {
    if overlap && len < S::N && end >= S::N {
        (end - S::N, S::N)
    } else {
        (at, len)
    }
}

/// Writes the rest of each full square column's carried rows (see
/// [`Squares::shifted`]): the units past the last line each ends in,
/// through the cache.
///
/// # Safety
/// The strip's first `nc` columns' rows in `out`; `carry[j]` the 64 bytes
/// of row `j` at `out[j] + to`, the last a step wrote (of each column in
/// whole squares).
#[inline(always)]
unsafe fn flush<S: Squares>(out: &[*mut u8], nc: usize, to: isize, carry: &[MaybeUninit<__m512i>; SHIFTED_COLS]) {
    let full = nc / S::N * S::N;
    // SAFETY: forwarded.
    unsafe { S::flush(&out[..full], to, &carry[..full]) }
}

/// The squares [`units`] moves a matrix in: `N x N` units of `U` bytes, a
/// source row's `N * U` bytes (one line, or 48 bytes of packed units in
/// lanes of `L`) to a destination row's.
pub(super) trait Squares {
    /// The unit's bytes.
    const U: usize;
    /// The bytes of its lane in the registers (`U`, or the next power of
    /// two for packed units).
    const L: usize;
    /// The side of a square, in units.
    const N: usize;
    /// The bytes of each source row a strip takes ([`STRIP_BYTES`]
    /// unless the squares say otherwise), at most [`STRIP_COLS`] units.
    const STRIP: usize = STRIP_BYTES;
    /// Whether strips through the cache keep their [`Squares::STRIP`]
    /// bytes in every matrix ([`strip_cols`] narrows the others' in large
    /// ones to [`CACHED_STREAMS`] columns).
    const FULL_STRIPS: bool = false;

    /// A whole square: row `i` of the source the `N * U` bytes at
    /// `rows[i] + at`, row `j` of the destination the `N * U` bytes at
    /// `out[j] + to`, streamed (`stream`) or through the cache.
    ///
    /// # Safety
    /// `rows` and `out` of `N` rows each; those bytes readable and
    /// writable, not overlapping; the CPU has the square's features;
    /// streamed, every `out[j] + to` a multiple of 64.
    unsafe fn square(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize, stream: bool);

    /// A square of `rows.len()` rows and `out.len()` columns (each at most
    /// `N`), through the cache, touching nothing else.
    ///
    /// # Safety
    /// Those units readable and writable, not overlapping; the CPU has the
    /// square's features.
    unsafe fn part(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize);

    /// Whether a matrix's edges go as whole squares over the units before
    /// them, through the cache: the last rows of a chunk fewer than a
    /// square as the square's rows ending at its last, the last columns
    /// of a strip likewise (and a last strip narrower than a square as
    /// the square's columns ending at the matrix's last), the units they
    /// share with the squares before written twice, the same values. For
    /// squares without masks, whose [`Squares::part`] goes a unit at a
    /// time (AVX2's packed squares); a matrix narrower than a square
    /// still goes in parts.
    const OVERLAPS: bool = false;

    /// Whether [`Squares::shifted`] runs (AVX-512's squares; of bytes,
    /// with VBMI).
    const SHIFTS: bool = false;

    /// The source rows a [`Squares::shifted`] step takes: a square's, whose
    /// destination rows are a line each, or four of packed units, whose
    /// rows (48 bytes each) then make three.
    const SHIFT_ROWS: usize = Self::N;

    /// A step of [`Squares::SHIFT_ROWS`] rows (whole squares) streamed
    /// into destination rows that start anywhere in their lines, a whole
    /// number of units in (of bytes, for packed units): row `j`'s lines
    /// that end in this step's bytes are its carried 64 bytes' last ones
    /// and this step's, each stored whole by a streaming store (the
    /// chunk's first step, `first`, stores its row's first line's part
    /// through the cache), and the step's last 64 bytes of the row are
    /// carried in `carry[j]` for the next step below it, or for
    /// [`Squares::flush`].
    ///
    /// # Safety
    /// As [`Squares::square`] for each of the step's squares (`rows` of
    /// `SHIFT_ROWS`); each `out[j] + to` a whole number of units into its
    /// line (any byte, for packed units); unless `first`, the bytes of
    /// that line before it the matrix's, written by the step above, whose
    /// last 64 bytes of row `j` `carry[j]` holds.
    unsafe fn shifted(
        rows: &[*const u8],
        at: isize,
        out: &[*mut u8],
        to: isize,
        carry: &mut [MaybeUninit<__m512i>],
        first: bool,
    ) {
        let _ = (rows, at, out, to, carry, first);
        // A real check: `units` shifts only squares that do (`SHIFTS`).
        unreachable!("these squares do not shift");
    }

    /// The bytes of each carried row past the line the last
    /// [`Squares::shifted`] stored, through the cache (row `j`'s last 64
    /// bytes at `out[j] + to`).
    ///
    /// # Safety
    /// `carry[j]` holds the 64 bytes at `out[j] + to`, the last the step
    /// wrote.
    unsafe fn flush(out: &[*mut u8], to: isize, carry: &[MaybeUninit<__m512i>]) {
        let _ = (out, to, carry);
        // A real check: as `shifted`.
        unreachable!("these squares do not shift");
    }
}

/// AVX-512's squares: one 64-byte vector a row, masked edges.
struct Masked<const U: usize, const L: usize, const N: usize>;

impl<const U: usize, const L: usize, const N: usize> Squares for Masked<U, L, N> {
    const U: usize = U;
    const L: usize = L;
    const N: usize = N;

    #[inline(always)]
    unsafe fn square(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize, stream: bool) {
        // SAFETY: forwarded.
        unsafe { square::<U, L, N>(rows, at, out, to, stream) }
    }

    #[inline(always)]
    unsafe fn part(rows: &[*const u8], at: isize, out: &[*mut u8], to: isize) {
        // SAFETY: forwarded.
        unsafe { part::<U, L, N>(rows, at, out, to) }
    }

    const SHIFTS: bool = true;
    const SHIFT_ROWS: usize = if U == L { N } else { 4 * N };

    #[inline(always)]
    unsafe fn shifted(
        rows: &[*const u8],
        at: isize,
        out: &[*mut u8],
        to: isize,
        carry: &mut [MaybeUninit<__m512i>],
        first: bool,
    ) {
        // SAFETY: forwarded.
        unsafe {
            if U == L {
                shifted::<U, N>(rows, at, out, to, carry, first)
            } else {
                shifted_packed::<U, L, N>(rows, at, out, to, carry, first)
            }
        }
    }

    #[inline(always)]
    unsafe fn flush(out: &[*mut u8], to: isize, carry: &[MaybeUninit<__m512i>]) {
        // SAFETY: forwarded; packed units are VBMI's (`packed`).
        unsafe { flush_rows::<U, L>(out, to, carry) }
    }
}

/// A full-line square: row `i` of the source the `N * U` bytes at
/// `rows[i] + at` (64, or 48 of packed units, read and written by masked
/// loads and stores), row `j` of the destination the `N * U` bytes at
/// `out[j] + to` (streamed: line-aligned).
///
/// # Safety
/// Those bytes readable and writable, not overlapping; the CPU has
/// AVX-512F and BW, and VBMI for packed units (`U != L`); streamed, every
/// `out[j] + to` a multiple of 64.
#[inline(always)]
unsafe fn square<const U: usize, const L: usize, const N: usize>(
    rows: &[*const u8],
    at: isize,
    out: &[*mut u8],
    to: isize,
    stream: bool,
) {
    // SAFETY: as the caller guarantees.
    unsafe {
        let mut v = [_mm512_setzero_si512(); N];
        for i in 0..N {
            v[i] = if U == L {
                _mm512_loadu_si512(rows[i].offset(at).cast())
            } else {
                _mm512_maskz_loadu_epi8(ROW, rows[i].offset(at).cast())
            };
        }
        transpose_rows::<U, L, N>(&mut v);
        for j in 0..N {
            let d = out[j].offset(to).cast::<__m512i>();
            if U != L {
                _mm512_mask_storeu_epi8(d.cast(), ROW, v[j]);
            } else if stream {
                _mm512_stream_si512(d, v[j]);
            } else {
                _mm512_storeu_si512(d.cast(), v[j]);
            }
        }
    }
}

/// [`square`] of `rows.len()` rows and `out.len()` columns (each at
/// most `N`), by masked loads and stores that touch nothing else.
///
/// # Safety
/// Those units readable and writable, not overlapping; the CPU has
/// AVX-512F and BW, and VBMI for packed units (`U != L`).
#[inline(always)]
unsafe fn part<const U: usize, const L: usize, const N: usize>(
    rows: &[*const u8],
    at: isize,
    out: &[*mut u8],
    to: isize,
) {
    let mask = |units: usize| -> __mmask64 {
        if units * U >= 64 {
            !0
        } else {
            (1u64 << (units * U)) - 1
        }
    };
    let (load, store) = (mask(out.len()), mask(rows.len()));
    // SAFETY: the masks cover the units the caller names; masked-off
    // bytes are not accessed.
    unsafe {
        let mut v = [_mm512_setzero_si512(); N];
        for (i, r) in rows.iter().enumerate() {
            v[i] = _mm512_maskz_loadu_epi8(load, r.offset(at).cast());
        }
        transpose_rows::<U, L, N>(&mut v);
        for (j, d) in out.iter().enumerate() {
            _mm512_mask_storeu_epi8(d.offset(to).cast(), store, v[j]);
        }
    }
}

/// The bytes of a packed square's row: 48 (16 units of 3 bytes, 8 of 6, 4
/// of 12).
const ROW: __mmask64 = (1 << 48) - 1;

/// The `N x N` transpose of the square's rows `v`: [`rounds`] of whole
/// lanes; of packed units (`U != L`, 48-byte rows), the lanes' rounds with
/// the first round reading the packed rows and the last writing them
/// packed, each a two-source byte permute ([`PackedRounds`]), rather than a
/// permute that widens each row before the rounds and one that packs it
/// after them (a row's units spread to lanes of the next power of two:
/// their excess bytes go through the middle rounds and are dropped by the
/// last). What it buys: see [`PackedRounds`].
///
/// # Safety
/// The CPU has AVX-512F and BW, and VBMI for packed units.
#[inline(always)]
unsafe fn transpose_rows<const U: usize, const L: usize, const N: usize>(v: &mut [__m512i; N]) {
    // SAFETY: as the caller guarantees.
    unsafe {
        if U == L {
            return rounds::<L, N>(v);
        }
        let t = PackedRounds::of::<U>();
        let idx = |t: &[u8; 64]| _mm512_loadu_si512(t.as_ptr().cast());
        let (first, last) = ([idx(&t.first[0]), idx(&t.first[1])], [idx(&t.last[0]), idx(&t.last[1])]);
        round::<N>(v, |a, hi, b| _mm512_permutex2var_epi8(a, first[hi], b));
        // The middle rounds: log2 N - 2 of them.
        let mut side = N / 4;
        while side > 1 {
            lane_round::<L, N>(v);
            side /= 2;
        }
        round::<N>(v, |a, hi, b| _mm512_permutex2var_epi8(a, last[hi], b));
    }
}

/// The byte indices of a packed square's first and last rounds (see
/// [`transpose_rows`]), low interleave and high, for units of 3, 6 or 12
/// bytes in lanes of 4, 8 or 16: the first round's lane `k`, byte `j < u`,
/// is unit `k / 2` (low; `n / 2 + k / 2` high) of the first packed row
/// (even `k`) or the second (odd `k`, from byte 64); the last round's
/// packed unit `e`, byte `j`, is byte `j` of lane `e / 2` (low; `n / 2 + e
/// / 2` high) of the first row (even `e`) or the second.
///
/// The rows' permutes of a square go from `log2 N + 2` a row to `log2 N`
/// (6-byte units: 5 to 3; 12-byte: 4 to 2). Measured on an AMD EPYC (Zen
/// 4, AVX-512 with VBMI), one thread, 3 to 5 alternated runs, time after
/// over before: the 111 broad workloads of seeds 26 and 801 to 804 whose
/// tiles of 3-, 6- and 12-byte units go by the transpose, 0.91 (65 faster
/// by more than 5%; the 8 that read slower by more, run again 7 times,
/// 0.92 to 1.02); numpy transpose of 635 x 442 6-byte units (1.6 MiB)
/// 4.2 -> 2.5x memcpy, TF NCHW space-to-depth of 6-byte units by 15
/// (1.1 MiB) 4.0 -> 2.5x; 3-byte units of 150 MiB and more, which wait
/// on memory, unchanged.
struct PackedRounds {
    first: [[u8; 64]; 2],
    last: [[u8; 64]; 2],
}

impl PackedRounds {
    /// The indices for `U`-byte units (3, 6 or 12).
    fn of<const U: usize>() -> &'static PackedRounds {
        match U {
            3 => &PACKED_3,
            6 => &PACKED_6,
            _ => &PACKED_12,
        }
    }

    /// The indices for `u`-byte units in lanes of `l` bytes, `n` lanes (and
    /// units) a row.
    const fn new(u: usize, l: usize) -> PackedRounds {
        let n = 64 / l;
        let mut t = PackedRounds { first: [[0; 64]; 2], last: [[0; 64]; 2] };
        let mut half = 0;
        while half < 2 {
            let mut k = 0;
            while k < 64 {
                let (lane, j) = (k / l, k % l);
                let from = if lane % 2 == 1 { 64 } else { 0 };
                if j < u {
                    t.first[half][k] = (from + u * (half * n / 2 + lane / 2) + j) as u8;
                }
                let (e, j) = (k / u, k % u);
                if k < 48 {
                    let from = if e % 2 == 1 { 64 } else { 0 };
                    t.last[half][k] = (from + l * (half * n / 2 + e / 2) + j) as u8;
                }
                k += 1;
            }
            half += 1;
        }
        t
    }
}

static PACKED_3: PackedRounds = PackedRounds::new(3, 4);
static PACKED_6: PackedRounds = PackedRounds::new(6, 8);
static PACKED_12: PackedRounds = PackedRounds::new(12, 16);

/// The `N x N` transpose of the first `N` vectors: log2 `N` rounds of
/// the perfect shuffle (as the SSE2 squares of [`super`]), by two-source
/// permutes of the whole vector.
///
/// # Safety
/// The CPU has AVX-512F, and BW for 2-byte units.
#[inline(always)]
unsafe fn rounds<const U: usize, const N: usize>(v: &mut [__m512i; N]) {
    let mut side = N;
    while side > 1 {
        // SAFETY: AVX-512F, and BW for words (caller).
        unsafe { lane_round::<U, N>(v) };
        side /= 2;
    }
}

/// One round of the perfect shuffle of `U`-byte elements (see [`round`]).
///
/// # Safety
/// The CPU has AVX-512F, and BW for 2-byte elements.
#[inline(always)]
unsafe fn lane_round<const U: usize, const N: usize>(v: &mut [__m512i; N]) {
    // SAFETY: AVX-512F, and BW for words (caller).
    unsafe {
        // Element `k` of the low (high) interleave: element `k / 2` of
        // the first half (second half) of `a` for even `k`, of `b` for
        // odd; in words (U = 2), dwords (U = 4), qwords (U = 8), pairs of
        // qwords (U = 16) or halves of the vector (U = 32).
        let (lo, hi) = match U {
            2 => (_mm512_loadu_si512(WORDS_LO.as_ptr().cast()), _mm512_loadu_si512(WORDS_HI.as_ptr().cast())),
            4 => (
                _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
                _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31),
            ),
            8 => (_mm512_setr_epi64(0, 8, 1, 9, 2, 10, 3, 11), _mm512_setr_epi64(4, 12, 5, 13, 6, 14, 7, 15)),
            16 => (_mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11), _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15)),
            _ => (_mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11), _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15)),
        };
        let idx = [lo, hi];
        round::<N>(v, |a, h, b| {
            if U == 2 {
                _mm512_permutex2var_epi16(a, idx[h], b)
            } else if U == 4 {
                _mm512_permutex2var_epi32(a, idx[h], b)
            } else {
                _mm512_permutex2var_epi64(a, idx[h], b)
            }
        });
    }
}

/// One round of a transpose: vector `2i` of the next the low interleave
/// (`perm(a, 0, b)`) of vectors `i` and `i + N / 2`, vector `2i + 1` their
/// high one (`perm(a, 1, b)`).
#[inline(always)]
fn round<const N: usize>(v: &mut [__m512i; N], perm: impl Fn(__m512i, usize, __m512i) -> __m512i) {
    let mut next = *v;
    for i in 0..N / 2 {
        next[2 * i] = perm(v[i], 0, v[i + N / 2]);
        next[2 * i + 1] = perm(v[i], 1, v[i + N / 2]);
    }
    *v = next;
}

/// The word indices of the low and high interleaves of two vectors (see
/// [`rounds`]): `k / 2` (plus 32 for odd `k`, the second vector), from the
/// first half and from the second.
static WORDS_LO: [u16; 32] = interleave(0);
static WORDS_HI: [u16; 32] = interleave(16);

const fn interleave(from: u16) -> [u16; 32] {
    let mut idx = [0u16; 32];
    let mut k = 0;
    while k < 32 {
        idx[k] = from + k as u16 / 2 + if k % 2 == 1 { 32 } else { 0 };
        k += 1;
    }
    idx
}

#[cfg(test)]
mod tests;
