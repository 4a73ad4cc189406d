//! Which tiles [`transpose`](super::transpose) takes, and in which
//! squares: the sides, units and kernel sets of the blocked transpose's
//! register squares and of the full-line squares (`wide`), each rule with
//! what it was measured to buy.
//!
//! Layer: kernels; a part of [`transpose`](super), imports arch only.

#[cfg(target_arch = "x86_64")]
use super::{block_rows, Matrix};
#[cfg(target_arch = "x86_64")]
use crate::engine::arch::cache::first_level_sets;
use crate::engine::arch::mem::LINE;
use crate::engine::arch::Isa;

/// The shortest side of a tile [`transpose`](super::transpose) takes: a
/// byte square's side.
pub(crate) const MIN_SIDE: usize = 16;

/// The fewest columns of a tile [`transpose`](super::transpose) takes with
/// masked squares: half a byte square (OpenVINO space-to-depth of bytes by
/// 5, 5 of 16 columns a square, measured 2.9x memcpy with the tile's own
/// kernels, 4.2x in masked squares).
pub(super) const MIN_MASKED_COLS: usize = 8;

/// The widest unit [`transpose`](super::transpose) takes.
///
/// Measured (numpy 2-D transposes from 0.06 to 230 MiB, one thread, ratio
/// to memcpy, against the tile's own kernels): 1-byte units 1.7-5.6x
/// against 5.6-32x, 2-byte units 1.8-4.4x against 4.0-21x; 4-byte units
/// 2.3-4.6x against 2.4-10.5x, worse above 1 MiB; 8- and 16-byte units and
/// others worse at every size (the tile's blocked strided runs move those
/// one or two at a time as fast as a register transpose does, without its
/// blocks' setup).
pub(super) const MAX_UNIT: usize = 2;

/// The shortest destination row (bytes) that AVX-512's full-line squares
/// stream where the rows are not whole lines apart (`wide::shifted`):
/// each row starts at its own place in a line, its squares' rows are
/// shifted into whole lines, and its first and last line's parts go
/// through the cache, a chunk of rows at a time (2 of a row's 16 lines
/// at most, from here). Measured on an Intel Xeon (one thread, 4
/// alternated runs, 5 repetitions, ratio to memcpy): numpy 2-D transposes
/// of 40 MiB, rows of 13 to 18 KiB, float32 2.84-3.05 -> 1.26-1.44x,
/// float64 1.52-1.79 -> 0.76-0.86x (the tile's own strided runs before);
/// the 3 broad workloads of seeds 26, 801 and 802 it reaches, complex128
/// with rows of 1.8 to 41 KiB, 1.15-1.42 -> 0.94-1.04x. Without this
/// bound, a float32 interleave whose destination rows are 88 bytes (one
/// run, staged before) went 2.2 -> 3.2x.
pub(super) const MIN_SHIFTED_ROW: usize = 1 << 10;

/// Whether [`transpose`](super::transpose) is the kernel for a tile of
/// `rows x cols` units of `unit` bytes whose destination rows are `stride`
/// bytes apart, streamed or not (`nt`):
///
/// - a unit of at most [`MAX_UNIT`] bytes and both sides [`MIN_SIDE`]
///   long;
/// - where the masked squares run (AVX-512), a deinterleave of
///   [`MIN_MASKED_COLS`] to 15 destination rows from [`MIN_SIDE`] or more
///   source rows, whose narrow side goes in masked squares (NCHW
///   space-to-depth of bytes with blocks 9 and 10 in the broad benchmark:
///   8x memcpy before, 3-4x; interleaves of few source rows into many
///   short destination rows measured 2x slower than the tile's own
///   kernels, and stay with them);
/// - with AVX-512, units that [`wide_side`] names (with VBMI for
///   [`packed`] units), in full-line squares, both sides
///   [`MIN_SIDE`] long; streamed, only where the squares' stores are the
///   streaming stores: into rows of whole lines, or rows a whole number
///   of units apart of [`MIN_SHIFTED_ROW`] bytes and more, each shifted
///   into whole lines (`wide`'s `shifted`; bytes with VBMI only, otherwise
///   through the cache; [`packed`] units only so, by bytes wherever their
///   rows start, four squares a step, where most columns are in whole
///   squares: [`shifts_packed`]); the tile's own kernels stream shorter
///   rows through a stage (numpy `0,2,1` of a 26 MiB float32
///   tensor whose rows are 688 bytes: 1.3x memcpy so, 2.4x through the
///   cache);
/// - without AVX-512's masks, 4- and 8-byte units in AVX2's full-line
///   squares ([`halves`]), streamed only, and packed 3- and 6-byte units
///   in AVX2's packed squares ([`packed_halves`]), through the cache only,
///   both sides [`long_enough`] and [`MIN_SIDE`] long.
pub(crate) fn takes(rows: usize, cols: usize, unit: usize, isa: Isa, stride: isize, nt: bool) -> bool {
    let narrow = unit <= MAX_UNIT;
    // Streamed, only where the squares' stores are the streaming stores:
    // rows of whole lines, or with AVX-512's masks, rows a whole number of
    // units apart (packed units: any) and long enough (each its own
    // shift: see `MIN_SHIFTED_ROW`).
    let apart = stride.unsigned_abs();
    let shifted = masks(isa)
        && if packed(unit) {
            shifts_packed(rows, cols, unit)
        } else {
            apart.is_multiple_of(unit) && rows.saturating_mul(unit) >= MIN_SHIFTED_ROW
        };
    let lines = !packed(unit) && apart.is_multiple_of(LINE) || shifted;
    let wide = in_squares(rows, cols, unit, isa, nt) && (!nt || lines);
    let long = rows >= MIN_SIDE && cols >= MIN_SIDE;
    (narrow || wide) && long || narrow && rows >= MIN_SIDE && cols >= MIN_MASKED_COLS && masks(isa)
}

/// Whether the squares at a strip's edges go without masks
/// (`x86::square_edge`): x86_64 from SSE2 on, without AVX-512's masks.
pub(super) fn plain_edges(isa: Isa) -> bool {
    cfg!(target_arch = "x86_64") && isa >= Isa::Sse2 && !masks(isa)
}

/// Whether [`transpose`](super::transpose) streams a tile of `rows x cols`
/// units of `unit` bytes whose destination rows are `stride` bytes apart in
/// full-line squares (AVX-512), their stores the streaming stores: units of
/// 1, 2, 4, 8, 16 or 32 bytes, both sides a square's and [`MIN_SIDE`] long,
/// rows of whole lines. (`wide` streams only where every row also starts on
/// the same byte of its line, and that byte is a whole number of units from
/// the line's end; otherwise it stores through the cache.) With VBMI
/// (AVX-512's masks: AVX2's packed squares never stream), [`packed`]
/// units too, wherever their rows start, where [`shifts_packed`] (rows of
/// [`MIN_SHIFTED_ROW`] bytes and more, most columns in whole squares).
pub(crate) fn streams_squares(rows: usize, cols: usize, unit: usize, isa: Isa, stride: isize) -> bool {
    let lines = if packed(unit) {
        masks(isa) && shifts_packed(rows, cols, unit)
    } else {
        stride.unsigned_abs().is_multiple_of(LINE)
    };
    in_squares(rows, cols, unit, isa, true) && rows >= MIN_SIDE && cols >= MIN_SIDE && lines
}

/// Whether [`transpose`](super::transpose) takes a tile of 8-byte units,
/// or with VBMI of packed 6- and 12-byte units, shorter than [`MIN_SIDE`]
/// on a side, as [`takes`] does a longer one (arguments as there), in its
/// full-line squares (8 x 8 units of 6 and 8 bytes, 4 x 4 of 12): each
/// side at least a square's and 8 units, filling at least two thirds of
/// its squares' lanes (8 units of 8 bytes, or 11 to 15; a side of 9 or 10
/// runs in two squares, the second mostly masked off), rows of whole lines
/// if streamed (never, for packed units). For a tile the tile's own
/// kernels would copy a unit at a time (a deinterleave into 8 to 15
/// streams, such as NCHW space-to-depth of float64 by 11 to 15), not for
/// one whose destination rows are each one run of its rows, which they
/// interleave run by run (the caller's choice: see
/// `kernels::tile::copy_tile`).
///
/// Measured on the 111 broad workloads (seeds 26, 801, 802) with a tile of
/// float64 shorter than 16 on a side, 5 alternated runs each, time after
/// over time before: geomean 0.93, the most gained by ONNX and OpenVINO
/// space-to-depth of float64 by 14 and 15 (0.61 -> 0.13 ms, 0.64 -> 0.15
/// ms) and the slowest a numpy transpose of 60 x 11 tiles, 1.2; taking
/// every such tile, 0.96 (interleaves of float64, batch-to-space and pixel
/// shuffle by 9 to 13, up to 1.6); sides of 9 and 10 units as well, 0.94
/// (those, 1.05 and up to 1.39). Not for 16- and 32-byte units, in squares
/// of 4 and 2: their 146 and 63 such workloads went slower (1.13, 1.12);
/// 16-byte units under this rule, 0.99, those with a side of one square
/// (4 units) 1.15, up to 1.85.
///
/// Packed 6- and 12-byte units (deinterleaves into 8 to 15 streams, which
/// went a unit at a time, or as rows of every `n`-th unit where the plan
/// made no tile of them: its `choose_tile` asks this too), on an Intel
/// Xeon with VBMI, the 30 broad workloads of seeds 26, 801 and 802 this
/// reaches, 4 alternated runs, ratio to memcpy: geomean 1.60 -> 1.28
/// (ONNX space-to-depth of 6-byte units by 11, 16 MiB, 3.0 -> 1.4;
/// OpenVINO space-to-batch of 6-byte units by 15, 2.2 -> 1.2), two slower
/// by more than 5% (8 streams of 6-byte units, 6.7 MiB, 1.12 -> 1.25); 12
/// workloads of those units beside them that it does not reach, 1.81 ->
/// 1.81. Not taken: 12-byte units in 4 to 7 streams (1.07 to 1.46 the
/// time, 6 workloads); the other units: 3-byte units in squares of 16
/// (sides of 11 to 15) went slower than the byte permutes, all 17 such
/// workloads (1.3 to 2.2 times the time), and 4-byte units gained on 12
/// streams and lost on 11 and 13 to 15 (24 workloads, 0.70 to 1.52 the
/// time).
pub(crate) fn takes_squares(rows: usize, cols: usize, unit: usize, isa: Isa, stride: isize, nt: bool) -> bool {
    let side = wide_side(unit);
    // A side of `n` units runs in `n.div_ceil(side)` squares, a partial one
    // costing what a whole one does: at least two thirds of their lanes used.
    let filled = |n: usize| n >= side.max(8) && 3 * n >= 2 * n.next_multiple_of(side);
    matches!(unit, 6 | 8 | 12)
        && filled(rows)
        && filled(cols)
        && masks(isa)
        && full_lines(unit, isa)
        && (!nt || !packed(unit) && stride.unsigned_abs().is_multiple_of(LINE))
}

/// The side, in units, of a full-line square (the module `wide`, AVX-512):
/// one 64-byte vector a row, 64 x 64 of bytes, 32 x 32 of 2 bytes, 16 x 16
/// of 4 bytes, 8 x 8 of 8 bytes, 4 x 4 of 16 bytes, 2 x 2 of 32 bytes (0:
/// none).
///
/// Measured against the blocked transpose's 16-byte squares and the tile's
/// strided runs (one thread, ratio to memcpy, medians of alternated runs):
/// HPTT's 57 float64 transpositions, geomean 3.08 -> 2.07 (2-D 2.8-3.2 ->
/// 1.25-1.37); 793 broad workloads of 4-, 8- and 16-byte elements drawn
/// from every transposing family, geomean 2.66 -> 2.53, outputs of 16 MiB
/// and more 2.24 -> 2.15 (OpenVINO space-to-depth by 16 of float32, 9.6 ->
/// 1.2); 312 of float16, 4.55 -> 4.30. 32-byte units in 2 x 2 squares
/// (against the tile's square blocks): the broad generator's 30 numpy
/// transposes of them long on both sides (seeds 600-639), 3 alternated
/// runs, 2.37 -> 1.91, outputs of 16 MiB and more 2.53 -> 2.00; 411 of
/// them from every family (seeds 700-705), 1.58 -> 1.57. Packed units of
/// 3, 6 and 12 bytes (against the tile's square blocks of units moved one
/// at a time): the 50
/// numpy transposes of them long on both sides among 1,183 drawn by the
/// broad generator (seeds 600-639), 3 alternated runs, 3-byte 5.33 ->
/// 2.46, 6-byte 3.01 -> 2.49, 12-byte 2.60 -> 2.39 (a 4096 x 4096 RGB
/// uint8 image, numpy `1,0,2`: 8x -> 1.6-2.0x); 558 workloads of them
/// from every transposing family, 3.16 -> 3.07 (float16 beside them, which
/// nothing changed, 4.55 -> 4.34: the machine's noise). Not taken: bytes
/// as pairs of source rows (two rows' bytes zero-extended into 2-byte
/// units, whose 32 x 32 square is the 64 x 32 byte transpose), 394 uint8
/// workloads 4.03 -> 4.18.
///
/// Bytes in 64 x 64 squares (`wide`'s `bytes`: four passes of 16 columns,
/// each sixteen vectors of four rows' 16 bytes transposed in their lanes,
/// every destination row's 64 bytes one store), against the blocked
/// transpose's 16 x 16 squares, on an AMD EPYC (Zen 5), one thread, 4
/// alternated runs of 5 repetitions, time after over time before: 52 uint8
/// 2-D transposes (31 with power-of-two sides from 32 KiB to 16 MiB, 16
/// others from 64 KiB to 121 MiB, 5 from the broad benchmark), 0.78, 3
/// slower by more than 5% (2,048 x 256, 1.29: a strip's 64 destination rows
/// 2 KiB apart crowd two first-level sets; 300 x 500 and 100 x 20,000, 1.1,
/// a quarter and a third of their bytes in partial squares); 4,096 x 4,096,
/// 3.9 -> 2.7x memcpy. Streamed rows that start anywhere shift into whole
/// lines with VBMI (numpy `1,0` of 6,833 x 5,955 and 11,705 x 10,797 bytes,
/// 2.75 -> 1.79 and 2.94 -> 2.19); with AVX-512 and no VBMI (`--kernels
/// avx512`, rows not whole lines apart through the cache), 0.80, 7 slower
/// (2,048 x 256, 1.55). An earlier form, the lanes of each pass stored to a
/// 4 KiB stage and copied out, measured alike (394 uint8 workloads, 4.07 ->
/// 4.04); copying each square's 64 source lines to a stage before its
/// passes, so that rows whose lines crowd the first level are each read
/// once, measured 1.21 the time (512 x 4,096, rows a page apart, 0.65).
pub(super) const fn wide_side(unit: usize) -> usize {
    match unit {
        1 => 64,
        2 => 32,
        3 | 4 => 16,
        6 | 8 => 8,
        12 | 16 => 4,
        32 => 2,
        _ => 0,
    }
}

/// Whether [`packed`] units streamed go in full-line squares (with VBMI),
/// four squares down the rows a step, each destination row's 192 bytes
/// shifted into three whole lines by bytes wherever it starts (`wide`'s
/// `shifted_packed`), in a matrix of `rows x cols` units of `unit` bytes:
/// destination rows of [`MIN_SHIFTED_ROW`] bytes and more, and at most an
/// eighth of the columns outside whole squares (those go a square's rows
/// at a time through the cache).
///
/// Measured on an AMD EPYC (Zen 4), one thread, 3 alternated runs, ratio
/// to memcpy, against the squares through the cache, before this bound:
/// the 16 broad workloads of seeds 26 and 801-810 that streaming them
/// changed, 0.79 of the time; those with at most 3% of their columns
/// outside whole squares (12), all faster (numpy `1,0` of 3,354 x 4,228
/// 3-byte units, 41 MiB, 3.4 -> 2.3x memcpy; OpenVINO space-to-depth of
/// 12-byte units by 16, 75 MiB, 1.4 -> 1.0); 9% (numpy `1,0` of 6-byte
/// units in 44 columns), 0.93; 20% and 38% (40 and 26 columns of 3-byte
/// units, 20 of 6-byte), 1.14, 0.97 and 1.27. With it, the 13 it
/// streams, 5 alternated runs (both orders), 0.71 (that of 44 columns
/// 1.02).
pub(super) fn shifts_packed(rows: usize, cols: usize, unit: usize) -> bool {
    let side = wide_side(unit);
    packed(unit) && rows.saturating_mul(unit) >= MIN_SHIFTED_ROW && (cols % side).saturating_mul(8) <= cols
}

/// Whether `unit`-byte units go in full-line squares packed (`wide`'s
/// `packed`): 3, 6 and 12 bytes, widened to lanes of 4, 8 and 16.
pub(crate) const fn packed(unit: usize) -> bool {
    matches!(unit, 3 | 6 | 12)
}

/// Whether the full-line squares for `unit`-byte units run on `isa`:
/// AVX-512 with masks, and VBMI for [`packed`] units (their byte permutes);
/// without masks, AVX2's squares of 4- and 8-byte units ([`halves`]).
pub(super) fn full_lines(unit: usize, isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    return masks(isa) && (!packed(unit) || isa.runs_vbmi()) || halves(unit, isa) || packed_halves(unit, isa);
    #[cfg(not(target_arch = "x86_64"))]
    return {
        let _ = (unit, isa);
        false
    };
}

/// Whether AVX2's full-line squares (`wide`'s `transpose_avx2`, each of
/// four squares of 32-byte vectors) move `unit`-byte units on `isa`: 4-
/// and 8-byte units, with AVX2 and without AVX-512's masks; [`takes`]
/// gives them streamed tiles only.
///
/// Measured on an AMD Zen 3 (one thread, time after over before, alternated
/// processes), against the tile's blocks of 64 x 64 units (streamed a unit
/// at a time) and its other kernels: HPTT's 57 float64 transpositions
/// (`transpose.json`, 400 MiB each) 0.77, geomean 3.76 -> 2.88x memcpy (2-D
/// T01 and T03 4.2-4.5x -> 2.0-2.5x; `4,3,2,1,0` T40 to T42 7.3-8.6x ->
/// 2.9-4.0x; slower, `0,2,1` T08, a 384 x 2,320 tile repeated 59 times,
/// 2.1-2.5x -> 2.6-3.5x alone); the broad workloads of 4- and 8-byte units
/// in tiles (seeds 26, 801 and 802: 142, 150 and 162) 0.98, 0.90 and 0.94.
/// Through the cache too, the broad ones measured 0.97, 1.05 and 1.07: a
/// tile that stays in the caches (a numpy transpose of 1,046 x 557 float32,
/// 2.2 MiB) is faster in the blocks, whose lines stay in the L1 cache
/// (1.7-2.1x memcpy, 2.1-2.9x in the squares' strips).
pub(super) fn halves(unit: usize, isa: Isa) -> bool {
    cfg!(target_arch = "x86_64") && matches!(unit, 4 | 8) && isa >= Isa::Avx2 && !masks(isa)
}

/// Whether AVX2's packed squares (`wide`'s `transpose_avx2`, 3- and
/// 6-byte units in lanes of 4 and 8 bytes) move `unit`-byte units on
/// `isa`: with AVX2 and without AVX-512's masks (with them, and VBMI,
/// AVX-512's packed squares do), through the cache (a packed square's
/// rows are 48 bytes, never whole lines).
///
/// Measured on an AMD EPYC (Zen 1; one thread, ratio to memcpy, 3
/// alternated runs, each workload's minimum), against the tile's own
/// kernels (a unit at a time): the 13 broad workloads (seeds 26, 801 and
/// 802, every one a numpy transpose) whose tiles they take, geomean 2.83
/// -> 2.52. Large matrices of 3-byte units take 0.64 to 0.71 of the time
/// (`1,0` of 3,354 x 4,228 RGB pixels, 41 MiB, 2.78 -> 1.84; `2,0,1` of
/// `[418, 347, 543]`, 225 MiB, 3.93 -> 2.52); 6-byte units 0.80 to 1.07;
/// slower, `0,2,1` of `[331, 348, 523]` (3-byte, 172 MiB: a 523 x 348
/// tile repeated, each in the second-level cache), 2.6 -> 3.0-3.1. The
/// other 123 workloads of 3- and 6-byte units of seed 26: 1.02 (noise).
/// Not 12-byte units, in 4 x 4 squares of 16-byte lanes: the 11 broad
/// workloads they took (seeds 26, 801 and 802) measured 1.11 of the time,
/// 7 slower (PyTorch pixel_shuffle by 16, 12.8 MiB, 1.27 -> 1.83).
pub(super) fn packed_halves(unit: usize, isa: Isa) -> bool {
    cfg!(target_arch = "x86_64") && matches!(unit, 3 | 6) && isa >= Isa::Avx2 && !masks(isa)
}

/// Whether [`transpose`](super::transpose) moves a tile of `rows x cols`
/// units of `unit` bytes in full-line squares (the module `wide`) on `isa`,
/// streamed (`nt`) or not: the squares run for its unit ([`full_lines`]),
/// its sides are theirs ([`square_sides`]), and streamed unless they take
/// its unit through the cache too ([`cached`]). [`takes`] asks the same.
pub(super) fn in_squares(rows: usize, cols: usize, unit: usize, isa: Isa, nt: bool) -> bool {
    full_line_squares(rows, cols, unit, isa) && (nt || cached(unit, isa))
}

/// Whether `super::in_full_lines` moves a `rows x cols` matrix of
/// `unit`-byte units in the full-line squares on `isa`: they run for its
/// unit ([`full_lines`]) and it has their sides ([`square_sides`]),
/// whether or not [`takes`] would choose them.
pub(crate) fn full_line_squares(rows: usize, cols: usize, unit: usize, isa: Isa) -> bool {
    square_sides(rows, cols, unit, isa) && full_lines(unit, isa)
}

/// Whether the full-line squares take tiles of `unit`-byte units through the
/// cache on `isa`, not only streamed ones: AVX-512's of bytes and 3-, 4-,
/// 6-, 8-, 12- and 32-byte units; not AVX2's ([`halves`]), nor AVX-512's of
/// 2- and 16-byte units, which measured slower there than the blocked
/// transpose's 16-byte squares (2-byte units, but for rows that crowd the
/// first-level cache's sets: [`squares_for_crowded_rows`]) and the tile's
/// other kernels (16 bytes; but for rows that crowd those kernels, which
/// `tile::choice`'s `crowded_wide` sends to the squares by
/// `super::in_full_lines`).
///
/// Measured on an Intel Xeon (Emerald Rapids; one thread, 4 alternated
/// runs, each workload's best of 5 repetitions, time after over before)
/// on the broad workloads (seeds 26 and 801 to 804) whose tiles went in
/// the squares through the cache: 2-byte units, 10, 0.79, none slower by
/// more than 5% (a numpy transpose of 1,050 x 2,057 float16, 4 MiB, 3.1
/// -> 1.7x memcpy); 16-byte units, 12, 0.84, one slower (ONNX
/// space-to-depth of complex128 by 16 into 4-unit rows, 6 MiB, 1.3 ->
/// 3.2). Kept: 32-byte units (13, 0.92 the time without, but two numpy
/// transposes of 22 and 27 MiB 1.3 and 1.7 times), 4-byte units (9, 1.39
/// the time without) and 8-byte units (47, 1.19). Streamed, the squares
/// stay faster for every unit (2-byte units: numpy transposes of 9 to 58
/// MiB, 1.3 to 2.6 times the time without). The tile's choice sends its
/// tiles of 8-byte units through the cache to its own square blocks
/// instead (`streams::blocks_through_cache`, measured on an AMD EPYC, Zen
/// 4): these squares take them there in a plan's matrix of repetitions
/// (`tile::copy_matrix`) alone.
fn cached(unit: usize, isa: Isa) -> bool {
    !halves(unit, isa) && !matches!(unit, 2 | 16)
}

/// Whether a matrix of 2-byte units goes in full-line squares through the
/// cache after all (AVX-512; [`cached`] leaves them to the blocked
/// transpose): where the lines the blocked transpose's first block reads,
/// one of each of its source rows (up to [`block_rows`], 256), crowd into
/// at most [`CROWDED_SETS`] of the first-level cache's sets
/// (`arch::cache::first_level_sets`: rows whose stride is a multiple of
/// 2 KiB, with sets of 64-byte lines in ways of 4 KiB), in a matrix of at
/// most two blocks' rows (512). The cache then holds at most twice its ways
/// of those lines (16 of 256 in 8 ways): the block's second strip reads
/// every line again from the second level, and the next block's lines,
/// fetched ahead into the same sets, evict the block's before it is
/// moved. The full-line squares read each source line once, whole. (Rows
/// of two loops whose first block spans both keep the blocked transpose.)
///
/// Measured on an AMD EPYC (Zen 4), one thread, numpy 2-D transposes of
/// float16 (2 KiB to 16 KiB between rows by powers of two, 64 to 3,000
/// rows), 6 alternated runs, time in the squares over time in the blocked
/// transpose: up to 512 rows, 0.39 to 0.74 (`64 x 8,192`, 1 MiB, 8.1 ->
/// 5.2x memcpy; `512 x 1,024`, 5.3 -> 3.9); taller ones, which this leaves
/// blocked, 0.92 to 0.96 where a page apart and more, 0.96 to 1.11 where
/// 2 KiB apart (1,024 rows; 3,000 rows, 1.28: `3,000 x 1,024`, 2.4 -> 3.1).
/// Rows 1 KiB and 512 bytes apart (4 and 8 sets) measured 0.62 to 1.56,
/// and are left blocked.
#[cfg(target_arch = "x86_64")]
pub(super) fn squares_for_crowded_rows(mx: &Matrix, isa: Isa, nt: bool) -> bool {
    let Matrix { rows, cols, unit, src, from, .. } = *mx;
    let n = rows.min(block_rows(unit));
    unit == 2
        && !nt
        && rows <= 2 * block_rows(unit)
        && full_line_squares(rows, cols, unit, isa)
        && from.inner >= n
        && first_level_sets(src as usize, from.stride, n, CROWDED_SETS + 1) <= CROWDED_SETS
}

/// The most first-level sets the lines of a block's rows crowd into for
/// [`squares_for_crowded_rows`].
#[cfg(target_arch = "x86_64")]
const CROWDED_SETS: usize = 2;

/// Whether a tile of `rows x cols` units of `unit` bytes has the sides of
/// full-line squares on `isa`: its unit has a square ([`wide_side`]) and
/// both its sides are [`long_enough`].
pub(super) fn square_sides(rows: usize, cols: usize, unit: usize, isa: Isa) -> bool {
    wide_side(unit) != 0 && long_enough(rows, cols, unit, isa)
}

/// Whether both sides of a tile of `rows x cols` units of `unit` bytes are
/// long enough for the full-line squares on `isa`: a whole square each
/// way, and without masks (AVX2's, [`halves`], whose edges go a unit at a
/// time) more than two; AVX2's packed squares ([`packed_halves`]), whose
/// edges go as whole squares over the ones before them (through the
/// cache: see `wide::Squares::OVERLAPS`), a whole square.
///
/// A narrower side of 2-byte units (deinterleaves into 8 to 31 rows)
/// stays with the blocked transpose's 8 x 8 squares (NCHW depth-to-space
/// by 6 and pixel shuffle by 7 of float16, 10 MiB: 2.0-2.3x memcpy so,
/// 3.2-7x in partial full-line squares). Without masks, the broad
/// workloads (seeds 26, 801 and 802) whose tiles of 4- or 8-byte units
/// have a side of one or two squares measured slower in AVX2's squares:
/// interleaves and deinterleaves of 16 streams, which the stream kernels
/// take (float32 TF depth-to-space of NCHW_VECT_C by 4, 196 MiB, 1.8 ->
/// 4.7x memcpy; OpenVINO space-to-depth by 4, 56 MiB, 1.1 -> 2.5), and
/// small tiles mostly edges (a numpy transpose of 25 x 22 float32 tiles,
/// 83 MiB, 4.2 -> 8.2).
pub(super) fn long_enough(rows: usize, cols: usize, unit: usize, isa: Isa) -> bool {
    let side = wide_side(unit);
    let min = if halves(unit, isa) { 2 * side + 1 } else { side };
    rows >= min && cols >= min
}

/// Whether the masked squares run: AVX-512F, BW and VL.
pub(super) fn masks(isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    return isa >= Isa::Avx512 && is_x86_feature_detected!("avx512vl");
    #[cfg(not(target_arch = "x86_64"))]
    return {
        let _ = isa;
        false
    };
}
