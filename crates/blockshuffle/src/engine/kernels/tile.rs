//! The transposing tile ([`copy_tile`]): an `nx x ny` tile of units,
//! interleaved or deinterleaved by the vector kernels where they apply,
//! zipped stream by stream otherwise; the tile repeated along two loops
//! that continue its rows, one matrix ([`copy_matrix`]); repetitions that
//! continue short rows joined in the stage ([`joined`]). Which kernel a
//! tile goes by depends on its shape alone ([`choice`]).
//!
//! Layer: kernels; imports [`copy`](super::copy), [`bytes`](super::bytes),
//! [`simd`](super::simd), [`shuffle`](super::shuffle), [`permute`](super::permute),
//! [`lines`](super::lines) and arch.

use std::ptr;

use super::bytes::{Stage, STAGE, STREAM_MIN};
use super::copy::{by_unit, by_wide_unit, copy_run, unit_copy, units, wide_move, Mode};
use super::lines::Writers;
use super::nest::{Loop, Rows};
use super::shuffle;
use super::simd;
use super::transpose::{self, Matrix, Rows2};
use crate::engine::arch::cache::shares_first_level_set;
use crate::engine::arch::mem::{pair, prefetch, LINE, PAGE};
use crate::engine::arch::Isa;

mod choice;
mod joined;

pub(crate) use choice::{TileChoice, TileShape};
pub(super) use joined::{joined_deinterleave, joined_tile};
use joined::{joins, joins_deinterleave};

/// Copies an `nx x ny` tile whose source is contiguous along x and whose
/// destination is contiguous along y: unit `(x, y)` goes from
/// `src + x*unit + y*ssy` to `dst + x*dsx + y*unit`.
///
/// This is the shape of every short-run operator (NCHW space-to-depth,
/// pixel shuffle and unshuffle, channels-first depth-to-space): one side
/// moves in long runs, the other interleaves a few streams.
///
/// # Safety
/// Every one of those source units must be readable and destination units
/// writable, without overlap between source and destination.
///
/// The tile is repeated `rows.count` times (see [`Rows`]), so that a loop
/// around it costs one call, and one choice of kernel, in all.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn copy_tile(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
    w: &mut Writers,
) {
    let choice = TileChoice::of(TileShape { rows, nx, ny, ssy, dsx, unit, m });
    // SAFETY: forwarded (the shape's units are the caller's).
    unsafe { choice.run(src, dst, w) }
}

/// [`copy_tile`]'s tile repeated along two loops: `cols`, whose
/// repetitions continue the tile's source rows (`cols.ss == nx * unit`),
/// and inside it `rows`, whose repetitions continue its destination rows
/// (`rows.ds == ny * unit`): one matrix of `rows.count * ny` source rows
/// of `cols.count * nx` units, for the transpose.
///
/// # Safety
/// As [`copy_tile`], for every repetition of both loops.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn copy_matrix(
    cols: Rows,
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
) {
    let u = unit as isize;
    // A real check, once a matrix: another pair of loops would address
    // units outside the repetitions.
    assert!(
        cols.ss == nx as isize * u && rows.ds == ny as isize * u,
        "a matrix's loops continue its rows: {cols:?} {rows:?} of {nx} x {ny} units of {unit} bytes"
    );
    let from = Rows2 { inner: ny, stride: ssy, outer: rows.ss };
    let to = Rows2 { inner: nx, stride: dsx, outer: cols.ds };
    let mx = Matrix { rows: rows.count * ny, cols: cols.count * nx, unit, src, from, dst, to };
    // SAFETY: unit `(r, c)` of the matrix is unit `(c % nx, r % ny)` of
    // repetition `(c / nx, r / ny)` of the tile (the loops continue its
    // rows: checked above), each readable and writable (the caller).
    unsafe { transpose::transpose(mx, m.isa, m.nt, m.fetch) }
}

/// A streamed interleaving tile (`dsx == ny * unit`: the `nx` columns of
/// each repetition one contiguous destination run) built in the stage
/// through the cache by [`copy_tile`]'s own kernels, as many columns (or
/// whole repetitions, where they continue one another) at a time as the
/// stage holds, and pushed through the line writers, which store whole
/// lines and join each run with the next. Out of line for the same reason
/// as `copy::stream_gather`. `false`, having done nothing, if one column
/// outgrows the stage.
///
/// Measured (ratio to memcpy):
/// - as the streaming half of [`staged_interleave`] (2 to 4 streams),
///   without AVX512-VBMI: uint8 depth-to-space with 500-byte rows 8.2x
///   streamed row by row, 1.2x so; float32 pixel_shuffle of 255-wide rows
///   2.4x, 1.3x; repetitions staged several at a time, against a push per
///   row, uint8 pixel_shuffle by 3 of 510-byte rows 1.06 -> 0.87, float16
///   by 4 1.08 -> 0.87;
/// - for the other streamed interleaves, which went unit by unit, each
///   unit a streaming store (numpy transpose of float32 in 25 x 22 tiles,
///   83 MiB: 9-11x), 4 alternated runs: the 30 broad workloads (seed 26)
///   it takes, 2.90 -> 1.91 (OpenVINO batch-to-space of uint8 by 15, 7.6
///   -> 2.0); held out, the 55 of seeds 801 and 802, 3.10 -> 1.95, 2
///   slower (the worst, OpenVINO depth-to-space of complex128 by 5, 1.73
///   -> 2.12).
///
/// # Safety
/// As [`copy_tile`] with `dsx == ny * unit`; `w` holds only runs of this
/// run's destination.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
unsafe fn staged_tile(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    unit: usize,
    m: Mode,
    w: &mut Writers,
) -> bool {
    if !stages(ny, unit) {
        return false;
    }
    let col = ny * unit;
    let run = nx * col;
    // Repetitions that continue one another go as many at a time as the
    // stage holds, whole; others a chunk of columns at a time.
    let (per_rows, per_cols) =
        if rows.ds == run as isize && run <= STAGE { (STAGE / run.max(1), nx) } else { (1, STAGE / col) };
    let cached = Mode { nt: false, ..m };
    let mut stage = Stage::new();
    // SAFETY: each chunk is `k` repetitions of `c` columns of the caller's
    // tile (`k * c * col <= STAGE`: `k == 1`, or `c == nx` and `k * run <=
    // STAGE`), built in the stage with ordinary stores (`cached`: the
    // writers are not used), then pushed to the `k * c * col` contiguous
    // destination bytes they are (`dsx == ny * unit`, and `k > 1` only where
    // repetitions continue one another).
    unsafe {
        let mut r0 = 0;
        while r0 < rows.count {
            let k = per_rows.min(rows.count - r0);
            let (src, dst) = rows.at(r0, src, dst);
            let mut x0 = 0;
            while x0 < nx {
                let c = per_cols.min(nx - x0);
                let staged = Rows { count: k, ss: rows.ss, ds: (c * col) as isize };
                copy_tile(staged, c, ny, src.add(x0 * unit), ssy, stage.ptr(), col as isize, unit, cached, w);
                w.push(stage.ptr(), dst.add(x0 * col), k * c * col);
                x0 += c;
            }
            r0 += k;
        }
    }
    true
}

/// Whether a column of `ny` units of `unit` bytes (a streamed
/// interleave's, see [`staged_tile`]) fits in the stage.
fn stages(ny: usize, unit: usize) -> bool {
    let col = ny * unit;
    col != 0 && col <= STAGE
}

/// Whether `b` streams of `unit`-byte units interleave and deinterleave by
/// the vector kernels of [`tile`] (`simd`): 2 to 4 streams of 1-, 2-, 4-,
/// 8- and 16-byte units. (Interleaves of 3-, 6- and 12-byte units have
/// `shuffle`'s: [`shuffle::interleaves`].)
fn simd_streams(b: usize, unit: usize) -> bool {
    matches!(b, 2..=4) && matches!(unit, 1 | 2 | 4 | 8 | 16)
}

/// Whether `b` streams of `unit`-byte units interleave by a kernel of their
/// own on `isa` (which also streams them): [`simd_streams`], or
/// `shuffle`'s.
pub(crate) fn own_interleave(isa: Isa, b: usize, unit: usize) -> bool {
    simd_streams(b, unit) || shuffle::interleaves(isa, unit, b)
}

/// The tile's own kernels ([`choice`]'s last): [`tile`] for units that
/// are plain integers, [`tile_rows`] for others.
///
/// # Safety
/// As [`copy_tile`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn own_tile(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
    w: &mut Writers,
) {
    // SAFETY: forwarded (each for its unit).
    unsafe {
        match unit {
            1 => tile::<u8>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            2 => tile::<u16>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            4 => tile::<u32>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            8 => tile::<u64>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            16 => tile::<u128>(rows, nx, ny, src, ssy, dst, dsx, m, w),
            _ => tile_rows(rows, nx, ny, src, ssy, dst, dsx, unit, m),
        }
    }
}

/// The tile for units that are plain integers of `size_of::<T>()` bytes.
///
/// # Safety
/// As [`copy_tile`] with `unit == size_of::<T>()`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn tile<T: Copy>(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    m: Mode,
    w: &mut Writers,
) {
    let u = size_of::<T>() as isize;
    // SAFETY (all arms): forwarded from the caller; the interleave and
    // deinterleave kernels address the same units as the generic rows.
    unsafe {
        // Interleave a few source streams into one contiguous destination run.
        if dsx == ny as isize * u {
            match ny {
                2 => return staged_interleave::<T, 2>(rows, nx, src, ssy, dst, m, w),
                3 => return staged_interleave::<T, 3>(rows, nx, src, ssy, dst, m, w),
                4 => return staged_interleave::<T, 4>(rows, nx, src, ssy, dst, m, w),
                _ => {}
            }
        }
        // Deinterleave one contiguous source run into a few destination
        // streams: streaming, in whole lines of each stream where the
        // vector kernel can (parts of lines through the writers);
        // otherwise with ordinary stores (streaming stores that alternate
        // between several short destination runs measure far slower).
        if ssy == nx as isize * u {
            if m.nt && simd::deinterleave_streamed(m.isa, u as usize, nx, rows, ny, src, dst, dsx, w) {
                return;
            }
            match nx {
                2 => return deinterleave_any::<T, 2>(rows, ny, src, dst, dsx, m.isa),
                3 => return deinterleave_any::<T, 3>(rows, ny, src, dst, dsx, m.isa),
                4 => return deinterleave_any::<T, 4>(rows, ny, src, dst, dsx, m.isa),
                _ => {}
            }
        }
        tile_rows(rows, nx, ny, src, ssy, dst, dsx, u as usize, m)
    }
}

/// [`interleave`], through a staging buffer streamed out when `nt`.
///
/// # Safety
/// As [`interleave`], for each of `rows`.
#[inline(always)]
unsafe fn staged_interleave<T: Copy, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    mode: Mode,
    w: &mut Writers,
) {
    let u = size_of::<T>();
    // SAFETY: forwarded, row by row.
    unsafe {
        if !mode.nt || n * B * u < STREAM_MIN {
            return interleave_any::<T, B>(rows, n, src, ss, dst, mode.isa);
        }
        // Straight to the destination where the vector kernel can stream
        // every unit (measured: float32 pixel_shuffle 1.0x memcpy so, 1.4x
        // through the stage).
        if simd::interleave_streamed(mode.isa, u, B, rows, n, src, ss, dst) {
            return;
        }
        // `B * u` bytes a column, within the stage: it does not decline.
        staged_tile(rows, n, B, src, ss, dst, u, mode, w);
    }
}

/// [`interleave`] for each of `rows`, its body by the vector kernel of `isa`
/// where there is one.
///
/// # Safety
/// As [`interleave`], for each of `rows`.
#[inline(always)]
unsafe fn interleave_any<T: Copy, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    ss: isize,
    dst: *mut u8,
    isa: Isa,
) {
    let u = size_of::<T>();
    // SAFETY: the vector kernel does the first `done` units of every stream
    // (the first `done * B` of the destination) of every row; the portable
    // one the rest. `isa` is one the CPU runs (the plan detected it), and
    // so is any narrower one (`fitting`: a stream's run of `n` units takes
    // the widest vector it fills, none below 16 bytes).
    unsafe {
        let done = simd::interleave(isa.fitting(n * u), u, B, rows, n, src, ss, dst);
        if done < n {
            for r in 0..rows.count {
                let (src, dst) = rows.at(r, src, dst);
                interleave::<T, B>(n - done, src.add(done * u), ss, dst.add(done * B * u));
            }
        }
    }
}

/// [`deinterleave`] for each of `rows`, its body by the vector kernel of
/// `isa` where there is one.
///
/// # Safety
/// As [`deinterleave`], for each of `rows`.
#[inline(always)]
unsafe fn deinterleave_any<T: Copy, const B: usize>(
    rows: Rows,
    n: usize,
    src: *const u8,
    dst: *mut u8,
    ds: isize,
    isa: Isa,
) {
    let u = size_of::<T>();
    // SAFETY: as `interleave_any`, mirrored.
    unsafe {
        let done = simd::deinterleave(isa.fitting(n * u), u, B, rows, n, src, dst, ds);
        if done < n {
            for r in 0..rows.count {
                let (src, dst) = rows.at(r, src, dst);
                deinterleave::<T, B>(n - done, src.add(done * B * u), dst.add(done * u), ds);
            }
        }
    }
}

/// The generic tiles, each of `rows`: where [`tile_kernel`] takes none,
/// through the cache, a nest of their units ([`unit_tiles`]); streamed,
/// one strided run per row of the shorter side.
///
/// Which tiles `tile_kernel` takes through the cache depends on their
/// shape alone, so the first it declines hands the rest to the nest.
///
/// # Safety
/// As [`copy_tile`].
#[allow(clippy::too_many_arguments)]
unsafe fn tile_rows(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
) {
    let u = unit as isize;
    // SAFETY: the tiles of `rows`, each inside them (the caller).
    unsafe {
        for r in 0..rows.count {
            let (src, dst) = rows.at(r, src, dst);
            if tile_kernel(nx, ny, src, ssy, dst, dsx, unit, m) {
                continue;
            }
            if !m.nt {
                let rest = Rows { count: rows.count - r, ..rows };
                return unit_tiles(rest, nx, ny, src, ssy, dst, dsx, unit);
            }
            if nx <= ny {
                for x in 0..nx as isize {
                    copy_run(ny, src.offset(x * u), ssy, dst.offset(x * dsx), u, unit, m);
                }
            } else {
                for y in 0..ny as isize {
                    copy_run(nx, src.offset(y * ssy), u, dst.offset(y * u), dsx, unit, m);
                }
            }
        }
    }
}

/// The tiles of `rows` as a nest of their units ([`units`]), the longer
/// side innermost (or in the source's order: [`walks_source_order`]), the
/// unit's copy chosen once for all of them: the tiles that no kernel takes
/// are mostly small (a block's columns of a few units by a few, NCHW
/// space-to-depth and pixel unshuffle of 8- and 16-byte units by 5 to 16),
/// and a call of [`copy_run`] for each of their rows cost as much as its
/// few units.
/// Measured against those calls on the 211 broad workloads (seeds 26,
/// 801, 802) whose tiles reach it, 3 alternated runs, the operator's time
/// over memcpy's: geomean 3.12 -> 2.83 (below 1 MiB, 74: 3.55 -> 3.23; 1
/// to 16 MiB, 80: 3.23 -> 2.82; 16 MiB and more, 57: 2.49 -> 2.37), 113
/// faster by 5% or more and 63 slower so, most of those in the noise of
/// small workloads (15 repetitions each: ONNX space-to-depth of
/// complex128 by 5, 4.2 -> 2.1; ONNX depth-to-space of float64 by 13, 4.8
/// -> 2.9).
///
/// A walk of the source's rows whose destination rows all fall in one set
/// of the first-level cache (`arch::cache::shares_first_level_set`: more
/// than its ways, a whole number of a way's bytes apart, 4 KiB) goes a
/// line of each destination row at a time (chunks of `LINE / unit` source
/// rows where the tile has as many, units of up to 16 bytes), so that each
/// line is written whole before the set evicts it. (Measured on 8 ways;
/// on first levels of 12, 9 to 12 such rows are walked as others: derived
/// from the ways, not measured.) Measured on an AMD
/// EPYC (Zen 4), one thread, 5 alternated runs, ratio to memcpy: the 4
/// broad workloads of seeds 26 and 801-810 it changes, ONNX space-to-depth
/// of complex128 by 16 (rows 12 KiB apart, 6 MiB) 4.6 -> 2.5 and 2.8 ->
/// 2.2 in two sittings, TF NCHW by 13 (8 KiB, 5 MiB) 4.3 -> 2.4 and 3.8 ->
/// 2.2, TF space-to-batch-nd of 16-byte units (300 KiB apart, 63 MiB) 3.7
/// -> 1.9 and 2.5 -> 1.9; slower, TF NCHW by 12 (173 MiB), 2.27 -> 2.42.
/// Not kept: every walk of the source's rows so (seed 26's 33: 1.02 of
/// the time, 13 slower by up to 1.41), nor where the rows are no more
/// than the ways, spread over two sets or more, or of 32-byte units (8
/// workloads of seeds 26 and 802-806, 1.10 to 1.38 the time).
///
/// # Safety
/// As [`copy_tile`], for each of `rows`.
#[allow(clippy::too_many_arguments)]
unsafe fn unit_tiles(
    rows: Rows,
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
) {
    let nest = |count: usize, ss: isize, ds: isize| Loop { count, ss, ds, window: None, is_outer: false };
    let (x, y) = (nest(nx, unit as isize, dsx), nest(ny, ssy, unit as isize));
    let reps = nest(rows.count, rows.ss, rows.ds);
    let source_rows = nx > ny || walks_source_order(nx, ssy, unit);
    // A line of each stream at a time: chunks of `c` source rows, where
    // the tile has one (`c <= ny`: the chunks' strides within the tile's).
    // (The division only where the rows share a set: this is every unit
    // tile's path.)
    if source_rows && (1..=16).contains(&unit) && shares_first_level_set(nx, dsx) && ny >= LINE / unit {
        let c = LINE / unit;
        let (chunks, rest) = (ny / c, ny % c);
        let chunk = nest(chunks, c as isize * ssy, (c * unit) as isize);
        // SAFETY: the chunks address units `(x, y)` of the tile's rows `y <
        // chunks * c`, the rest its rows from there to `ny`, of each
        // repetition, each readable and writable (the caller).
        unsafe {
            units(&[reps, chunk, x, nest(c, ssy, unit as isize)], src, dst, unit);
            if rest > 0 {
                let (s, d) = ((chunks * c) as isize * ssy, (chunks * c * unit) as isize);
                units(&[reps, x, nest(rest, ssy, unit as isize)], src.offset(s), dst.offset(d), unit);
            }
        }
        return;
    }
    let (outer, inner) = if source_rows { (y, x) } else { (x, y) };
    // SAFETY: the loops address unit `(x, y)` of repetition `r` of the
    // tiles, each readable and writable (the caller).
    unsafe { units(&[reps, outer, inner], src, dst, unit) }
}

/// Whether [`unit_tiles`] walks a tile of `nx` units a source row (rows
/// `ssy` bytes apart) of `unit`-byte units in the source's order, each
/// source row's units in turn, whichever side is longer: where the source
/// rows are one contiguous run (a deinterleave into `nx` streams) of units
/// of [`SOURCE_ORDER_UNIT`] bytes and more. A stream at a time, the walk
/// read the source rows' units a column at a time, once for each stream.
/// Measured (one thread, 4 alternated runs, each workload's minimum, time
/// after over before) on the broad workloads this changes (seeds 26, 801
/// and 802: 34, all of 16-byte units): geomean 0.81 (16 MiB and more, 13:
/// 0.71; TF space-to-batch-nd of 4 x 4 uint8 channels by 9 x 6 x 15, 242
/// MiB, 3.2 -> 1.5x memcpy; OpenVINO space-to-batch of complex128 by 5 x
/// 9, padded, 120 MiB, 1.7 -> 1.0), the slowest 1.21 (pixel unshuffle of
/// complex128 by 5, 0.33 MiB, 1.1 -> 1.3); 15 other workloads measured in
/// the same runs, 0.98. Deinterleaves of 2- and 4-byte units measured
/// slower so (37 broad workloads, geomean 1.28 in a first run): along a
/// contiguous destination run their copies go wider than a unit.
pub(super) fn walks_source_order(nx: usize, ssy: isize, unit: usize) -> bool {
    unit >= SOURCE_ORDER_UNIT && ssy == (nx * unit) as isize
}

/// The smallest unit (bytes) whose deinterleaving tiles [`unit_tiles`]
/// walks in the source's order: one 16-byte vector.
const SOURCE_ORDER_UNIT: usize = 16;

/// Copies one generic tile by the first of these that takes it: the
/// shuffle kernels' interleave, the destination [`zip`]ped in order from
/// the streams, or square blocks of a large tile. `false`, having done
/// nothing, if none does.
///
/// # Safety
/// As [`copy_tile`], for one tile.
#[allow(clippy::too_many_arguments)]
unsafe fn tile_kernel(
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    m: Mode,
) -> bool {
    let (u, nt) = (unit as isize, m.nt);
    // SAFETY: rows of the tile, each inside it.
    unsafe {
        if dsx == ny as isize * u && shuffle::interleave(m.isa, ny, nx, src, ssy, dst, unit, nt) {
            return true;
        }
        // A transpose's tile (more streams than the zip keeps, large
        // enough for blocks) goes in the blocks below, not zipped.
        let many_streams = !zips(ny, ssy) && blocked(nx, ny, unit, ssy, dsx);
        if !nt && !many_streams && nx > ny && ny > 1 && dsx == ny as isize * u && unit <= 64 {
            // A destination run of `ny` units from each column: wide moves
            // where the unit allows them (each move's excess lands on the
            // next unit, written next, and reads the next unit of the same
            // stream: all but the last column).
            let streams = Streams { nx, ny, src, ssy, unit: u };
            if wide_move(unit).is_some() {
                by_wide_unit!(unit, wide, exact => zip_streams(streams, dst, wide, exact));
            } else {
                by_unit!(unit, copy => zip_streams(streams, dst, copy, copy));
            }
            return true;
        }
        if let Some((b, nt)) = tile_block(nx, ny, ssy, dst, dsx, unit, nt) {
            let m = Mode { nt, ..m };
            // Both sides long (a transpose's tile): square blocks of `b`
            // units a side, whose source rows and destination rows stay in
            // the cache while the block is copied, instead of a whole
            // column of the source (one line and one page a unit) for
            // each destination row: block `k` of them, a row of blocks at a
            // time or a column ([`rows_of_blocks`]).
            let (xb, yb) = (nx.div_ceil(b), ny.div_ceil(b));
            let by_rows = rows_of_blocks(nx, ny, b, unit);
            let at = |k: usize| if by_rows { ((k % xb) * b, (k / xb) * b) } else { ((k / yb) * b, (k % yb) * b) };
            for k in 0..xb * yb {
                let (x0, y0) = at(k);
                let (bx, by) = (b.min(nx - x0) as isize, b.min(ny - y0));
                let (s, d) =
                    (src.offset(x0 as isize * u + y0 as isize * ssy), dst.offset(x0 as isize * dsx + y0 as isize * u));
                // The next block's source rows, one fetched ahead per
                // destination row copied.
                let next = (k + 1 < xb * yb).then(|| {
                    let (nx0, ny0) = at(k + 1);
                    let (bx, by) = (b.min(nx - nx0), b.min(ny - ny0));
                    (src.wrapping_offset(nx0 as isize * u + ny0 as isize * ssy), bx * unit, by as isize)
                });
                // Units of 3, 4 and 8 bytes, through the cache, in
                // register squares.
                if !m.nt && transpose::streams::block(bx as usize, by, unit, s, ssy, d, dsx, m.isa) {
                    if let Some((n, len, rows)) = next {
                        for y in 0..rows {
                            prefetch(n.wrapping_offset(y * ssy), len);
                        }
                    }
                    continue;
                }
                for x in 0..bx {
                    copy_run(by, s.offset(x * u), ssy, d.offset(x * dsx), u, unit, m);
                    if let Some((n, len, rows)) = next {
                        if x < rows {
                            prefetch(n.wrapping_offset(x * ssy), len);
                        }
                    }
                }
            }
            return true;
        }
    }
    false
}

/// Whether [`zip_streams`] keeps what it reads of `ny` streams `ssy`
/// bytes apart in the caches from one column to the next: a column reads
/// a unit of every stream, from one line each, and from one page each
/// where the streams are a page apart or more. Those lines must fit in
/// the L1 data cache ([`ZIP_LINES`]), and those pages in the first-level
/// data TLB ([`ZIP_PAGES`]); otherwise each column fetches them again.
/// Measured (one thread, minimum of 4 alternated processes, ratio to
/// memcpy) on the 4 broad workloads (seeds 26, 801, 802) whose tiles this
/// sends to blocks instead of the zip: numpy 2-D transposes of 3-byte
/// units, 3,354 streams 12,684 bytes apart 15.6 -> 3.3, 1,027 streams
/// 6,363 bytes apart 6.5 -> 3.3; of 166 streams of 32-byte units 184,800
/// bytes apart 1.95 -> 1.72; of 557 streams of 4-byte units 4,184 bytes
/// apart 3.4 -> 4.6, and 1.4 with the blocks' register squares
/// (`transpose::streams::block`). Blocks for every tile of more streams
/// than a block's side measured slower where the lines fit (348 streams
/// 1,569 bytes apart, 2.18 -> 3.40).
pub(crate) fn zips(ny: usize, ssy: isize) -> bool {
    ny <= ZIP_LINES && (ssy.unsigned_abs() < PAGE || ny <= ZIP_PAGES)
}

/// The lines of the L1 data cache: 32 KiB on every x86_64 core of the
/// last decade (some have 48).
const ZIP_LINES: usize = (32 << 10) / LINE;

/// The entries of the first-level data TLB for 4 KiB pages: 64 on every
/// x86_64 core of the last decade (some have 72 or 96).
const ZIP_PAGES: usize = 64;

/// The side, in units, of the square blocks [`tile_kernel`] copies a tile in
/// when both its sides are longer than one and the tile is large (a
/// transpose's tile: thousands of source rows gathered into thousands of
/// destination rows), so that a
/// block's rows of both sides stay in the L1 cache: 512 bytes a row, 8 to
/// 64 units; and whether the blocks stream: only where every block's
/// destination rows are whole lines (a line shared between a streamed and
/// a cached store is slow), through the cache otherwise. `None`: the tile
/// is copied whole.
fn tile_block(
    nx: usize,
    ny: usize,
    ssy: isize,
    dst: *mut u8,
    dsx: isize,
    unit: usize,
    nt: bool,
) -> Option<(usize, bool)> {
    let b = block_side(unit);
    let lines = |v: usize| v.is_multiple_of(64);
    let whole_lines = lines(dst as usize) && lines(dsx.unsigned_abs()) && lines(b * unit) && lines(ny * unit);
    blocked(nx, ny, unit, ssy, dsx).then_some((b, nt && whole_lines))
}

/// The side of [`tile_block`]'s blocks for `unit`-byte units.
pub(crate) fn block_side(unit: usize) -> usize {
    (TILE_BLOCK_BYTES / unit).clamp(8, 64)
}

/// Whether [`tile_kernel`]'s blocks of side `b`, over `ny` source rows of
/// `nx` units, go a row of blocks at a time, the source in its order
/// (each `b` rows whole), rather than a column of blocks at a time (the
/// source swept once for each column, in strips `b` units wide, a few
/// lines of each row): where the source has more than one column of
/// blocks and a row of blocks is at most [`BLOCK_ROW_BYTES`], or, in a
/// tile of [`TALL_TILE_BYTES`] and more (past the last-level cache's
/// share of a core, so that each column's sweep reads the source from
/// memory again), at most [`LARGE_BLOCK_ROW_BYTES`]. A row of blocks
/// sweeps the source once, in its order; the destination lines it leaves
/// part-written (a block's `b` units of each of its `nx` rows) stay in
/// the caches until the next row of blocks writes the rest of them.
///
/// Measured on an AMD EPYC (Zen 1, 512 KiB of L2, 8 MiB of L3), one
/// thread, each workload's minimum of alternated runs, time after over
/// before, against columns of blocks:
/// - 31 transposes of 2- to 16-byte units, 128 MiB, rows of blocks of 6
///   KiB to 1.15 MiB, 3 runs: 0.78 (a transpose of 4-byte units, 2,500
///   a row: 5.3 -> 3.5x memcpy), every one faster but three within 5%
///   (1.05, 1.03, 1.00) and one of 1.15 MiB, left in columns (0.97); up
///   to 256 KiB alone, 0.91;
/// - the broad workloads (seeds 26, 801 and 802) whose tiles have more
///   than one column of blocks, all numpy transposes: the 8 with rows
///   of blocks up to 256 KiB, 8 runs, 0.91 (3-byte units, 543 x 145,046,
///   225 MiB: 5.7 -> 3.9x memcpy; the others, 0.6 to 5 MiB, within their
///   noise); the 4 in tiles of 8 MiB and more with rows of blocks of 256
///   KiB to 1 MiB, 6 runs, 0.83 to 0.96; the 5 left in columns, 1.00.
///   Rows of blocks of 256 KiB to 1 MiB in smaller tiles measured slower
///   (two of 6 MiB, in the last-level cache: 1.11 and 1.14).
pub(crate) fn rows_of_blocks(nx: usize, ny: usize, b: usize, unit: usize) -> bool {
    let row = b.saturating_mul(nx).saturating_mul(unit);
    let large = nx.saturating_mul(ny).saturating_mul(unit) >= TALL_TILE_BYTES;
    nx > b && (row <= BLOCK_ROW_BYTES || (large && row <= LARGE_BLOCK_ROW_BYTES))
}

/// See [`rows_of_blocks`]: less than the last-level cache's share of a
/// core (1.375 MiB and more on current servers).
const LARGE_BLOCK_ROW_BYTES: usize = 1 << 20;

/// See [`rows_of_blocks`]: half the second-level cache of the smallest
/// server cores in use (512 KiB), for the row of blocks and the
/// destination lines it leaves part-written.
const BLOCK_ROW_BYTES: usize = 256 << 10;

/// Whether an `nx x ny` tile of `unit`-byte units, its `ny` source rows
/// `ssy` bytes apart and its `nx` destination rows `dsx` apart, goes in
/// [`tile_block`]'s blocks (where no vector kernel takes it; square, or
/// the short side by a block's side): both sides longer than a block, and
/// the tile [`TILE_BLOCKED_BYTES`] or more; or a tall tile ([`tall`]) of
/// [`TALL_TILE_BYTES`] or more (see there); or, whatever its size, a tile
/// whose columns [`spill`] from the caches, or whose rows do (see there).
pub(crate) fn blocked(nx: usize, ny: usize, unit: usize, ssy: isize, dsx: isize) -> bool {
    let b = block_side(unit);
    let bytes = nx.saturating_mul(ny).saturating_mul(unit);
    (nx > b && ny > b && bytes >= TILE_BLOCKED_BYTES)
        || (tall(nx, ny, unit) && bytes >= TALL_TILE_BYTES)
        || spill(nx, ny, unit, ssy)
        || spill(ny, nx, unit, dsx)
}

/// Whether each column of an `nx x ny` tile of `unit`-byte units (a unit
/// of each of its `ny` source rows, `ssy` bytes apart) reads more lines
/// than the L1 data cache holds, or more pages than the first-level data
/// TLB (as [`zips`]), its rows longer than a line (and so a line apart or
/// more), and there are 2 columns or more: copied whole, a column at a
/// time, every column fetches those lines and pages again (from the L2
/// cache, and through the second-level TLB or a page walk), where a
/// block's columns share them. Not units of whole 16-byte vectors, whose
/// strided rows the hardware prefetchers follow. Measured (one thread, 4
/// alternated runs, ratio to memcpy) on the 6 broad workloads (seeds 26,
/// 801, 802) whose tiles this sends to blocks: numpy transposes of 6-byte
/// units, 3,476 rows 11,616 bytes apart (38 MiB) 9.2-10.3 -> 2.3-3.1; of
/// 8-byte units, 113 rows 29,328 bytes apart, 2.4-3.9 -> 2.2-2.4; of 4-byte
/// units, 55,800 rows 132 bytes apart, 3.4-4.6 -> 1.5-2.2; OpenVINO
/// space-to-depth of 12-byte units by 7 (51,088 rows 84 bytes apart)
/// 1.9-2.4 -> 1.0-1.5, by 16 unchanged (1.7-2.3 -> 1.9-2.3); TF NHWC
/// depth-to-space of 24-byte units 1.4-2.1 -> 1.0-1.5. Slower, and left
/// whole: 16-byte units (OpenVINO space-to-batch, 29,864 rows 160 bytes
/// apart, 1.1-1.5 -> 1.4-2.1; 1,913 rows 176 bytes apart, 1.6-1.8 ->
/// 2.0-2.4), and rows of a line or less (a numpy transpose of 3-byte
/// units, 11 a row, 360 rows 56,628 bytes apart, 5.3-9.1 -> 6.0-8.5).
///
/// The same from the destination's side (`spill(ny, nx, unit, dsx)`):
/// each row of the tile writes a unit to each of its `nx` destination
/// rows, `dsx` bytes apart, and more lines or pages than the caches hold
/// are fetched again for every row. Measured (one thread, 4 alternated
/// runs, ratio to memcpy) on the 3 broad workloads (seeds 26, 801 and
/// 802; none of the public or HPTT's) whose tiles this sends to blocks,
/// numpy transposes whose tiles write 1,575 rows 4,830 bytes apart (3-byte
/// units, 152 MiB) 7.4 -> 3.0, 728 rows 4,284 bytes apart (4-byte units,
/// 3 MiB) 4.7 -> 2.4, 814 rows 8,556 bytes apart (6-byte units, 6.6 MiB)
/// 2.6 -> 1.8; 5 untouched numpy transposes measured beside them, 1.02
/// the time.
fn spill(nx: usize, ny: usize, unit: usize, ssy: isize) -> bool {
    nx >= 2 && nx.saturating_mul(unit) > LINE && !unit.is_multiple_of(16) && !zips(ny, ssy)
}

/// Whether an `nx x ny` tile has one side longer than a block and the
/// other short (2 or more, at most a block).
fn tall(nx: usize, ny: usize, unit: usize) -> bool {
    let b = block_side(unit);
    nx.min(ny) >= 2 && nx.min(ny) <= b && nx.max(ny) > b
}

/// The smallest tile with a short side that [`tile_block`] blocks. Copied
/// whole, such a tile runs as a row of each index of its short side, each
/// reading the whole source tile a unit in every few (or writing the whole
/// destination so): a tile that does not stay in the caches is read from
/// memory once a row; in blocks, once. Measured (ratio to memcpy, 3 runs
/// alternating) on the 46 workloads of the broad benchmark (seeds 26, 801
/// and 802) with such a tile of 512 KiB or more: at 8 MiB, geomean 2.57
/// -> 1.78, 30 faster by more than 5% and 5 slower (OpenVINO
/// space-to-batch of 32-byte units by 15, 42 MiB, 4.5 -> 1.5; of 6-byte
/// units by 11, 155 MiB, 6.6 -> 1.7; the slowest, OpenVINO space-to-depth
/// of float16, 77 MiB, 2.49 -> 2.75, the other 4 under 8 MiB, left as
/// they were and so noise); from 512 KiB, tiles of 4 to 8 MiB went slower
/// (complex128 by 10, 4.6 MiB, 1.5 -> 2.4); from 16 MiB, those of 8 to 16
/// MiB kept their passes (2.56 -> 1.96 in all). The caches' sizes differ
/// between machines; this one's last level holds 32 MiB.
const TALL_TILE_BYTES: usize = 8 << 20;

/// The smallest tile [`tile_block`] blocks: smaller ones stay in the L2
/// cache whole, and copied whole they keep their streaming stores
/// (measured: a 96 x 96 float64 tile, HPTT's T19, 2.7-2.8x memcpy whole
/// and streamed, 4.4-5.0x blocked through the cache).
const TILE_BLOCKED_BYTES: usize = 512 << 10;

/// The bytes of a [`tile_block`]'s rows.
const TILE_BLOCK_BYTES: usize = 512;

/// The streams of an interleaving tile: `ny` of them, stream `y` at
/// `src + y*ssy`, each `nx` units of `unit` bytes, contiguous.
#[derive(Clone, Copy)]
struct Streams {
    nx: usize,
    ny: usize,
    src: *const u8,
    ssy: isize,
    unit: isize,
}

/// The interleaving tile in destination order: unit `x` of each stream,
/// then the next column, into a contiguous destination; `copy` for every
/// column but the last, `last` for the last.
///
/// # Safety
/// `copy` and `last` must be sound for the units they are given (as
/// [`copy_tile`]'s caller guarantees, with a wide `copy` as in [`tile_kernel`]).
#[inline(never)]
unsafe fn zip_streams(
    streams: Streams,
    dst: *mut u8,
    copy: impl Fn(*const u8, *mut u8),
    last: impl Fn(*const u8, *mut u8),
) {
    // With the streams counted at compile time (the usual two to four;
    // five to eight of units of at most 8 bytes), each column is
    // straight-line code. Measured for 5 to 8 streams of 5- to 8-byte
    // units (the broad workloads whose tiles interleave them, seeds 26,
    // 801 and 802: 10, 5 and 5 of them), one thread, 5 alternated runs,
    // time after over before: 0.83, 0.76 and 0.92, the slowest 1.10
    // (PyTorch pixel shuffle of float64 by 5, 4.5 ms); OpenVINO
    // depth-to-space of float64 by 5, 10.5 -> 6.7 ms. Wider units (12 to
    // 32 bytes) measured mostly slower so, up to 1.5x the time.
    match (streams.ny, streams.unit <= 8) {
        (2, _) => zip::<2>(streams, dst, copy, last),
        (3, _) => zip::<3>(streams, dst, copy, last),
        (4, _) => zip::<4>(streams, dst, copy, last),
        (5, true) => zip::<5>(streams, dst, copy, last),
        (6, true) => zip::<6>(streams, dst, copy, last),
        (7, true) => zip::<7>(streams, dst, copy, last),
        (8, true) => zip::<8>(streams, dst, copy, last),
        _ => zip::<0>(streams, dst, copy, last),
    }
}

/// [`zip_streams`] of `B` streams (`B == ny`), or of `ny` (`B == 0`).
#[inline(always)]
fn zip<const B: usize>(
    streams: Streams,
    dst: *mut u8,
    copy: impl Fn(*const u8, *mut u8),
    last: impl Fn(*const u8, *mut u8),
) {
    let ny = if B == 0 { streams.ny } else { B };
    let mut d = dst;
    for x in 0..streams.nx - 1 {
        d = column(streams, ny, x, d, &copy);
    }
    column(streams, ny, streams.nx - 1, d, &last);
}

/// Column `x` of `ny` streams to `dst`, by `f`; the destination after it.
#[inline(always)]
fn column(streams: Streams, ny: usize, x: usize, mut dst: *mut u8, f: &impl Fn(*const u8, *mut u8)) -> *mut u8 {
    let mut s = streams.src.wrapping_offset(x as isize * streams.unit);
    for _ in 0..ny {
        f(s, dst);
        s = s.wrapping_offset(streams.ssy);
        dst = dst.wrapping_offset(streams.unit);
    }
    dst
}

/// `dst[x * B + j] = stream_j[x]` for `x < n`, where stream `j` starts at
/// `src + j * ss` and is contiguous.
///
/// # Safety
/// `n` units readable in each stream, `n * B` writable at `dst`, no overlap.
#[inline(always)]
unsafe fn interleave<T: Copy, const B: usize>(n: usize, src: *const u8, ss: isize, dst: *mut u8) {
    let streams: [*const T; B] = std::array::from_fn(|j| src.wrapping_offset(j as isize * ss).cast::<T>());
    let dst = dst.cast::<T>();
    for x in 0..n {
        for (j, s) in streams.iter().enumerate() {
            // SAFETY: unit x of stream j and unit x*B+j of the destination (caller).
            unsafe { dst.add(x * B + j).write_unaligned(s.add(x).read_unaligned()) };
        }
    }
}

/// `stream_j[y] = src[y * B + j]` for `y < n`, where destination stream `j`
/// starts at `dst + j * ds` and is contiguous.
///
/// # Safety
/// `n * B` units readable at `src`, `n` writable in each stream, no overlap.
#[inline(always)]
unsafe fn deinterleave<T: Copy, const B: usize>(n: usize, src: *const u8, dst: *mut u8, ds: isize) {
    let streams: [*mut T; B] = std::array::from_fn(|j| dst.wrapping_offset(j as isize * ds).cast::<T>());
    let src = src.cast::<T>();
    for y in 0..n {
        for (j, d) in streams.iter().enumerate() {
            // SAFETY: unit y*B+j of the source and unit y of stream j (caller).
            unsafe { d.add(y).write_unaligned(src.add(y * B + j).read_unaligned()) };
        }
    }
}
