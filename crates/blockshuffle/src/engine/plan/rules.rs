//! The planner's rules: the predicates that choose a plan's paths (which
//! rows stream, gather, carry or tile) and the constants they weigh. Each
//! asks the kernels what they accept, never the reverse.
//!
//! Layer: plan; imports [`order`](super::order) (loop predicates, the
//! move to the source's order, whether it writes units apart, and the
//! run length it keeps),
//! geometry, kernels and arch; never exec or [`compile`](super::compile).

use arrayvec::ArrayVec;

use super::order::{free, move_inward, source_order_outside, writes_units_apart, MIN_DST_RUN};
use super::padded::padded_block;
use crate::engine::arch::Isa;
use crate::engine::kernels::any_units::AnyUnits;
use crate::engine::kernels::carried::{CARRIED_STREAMS, PADDED_ROWS_BYTES};
use crate::engine::kernels::cropped::CROPPED_ROWS_BYTES;
use crate::engine::kernels::interleave_carried::interleaves_carried;
use crate::engine::kernels::nest::{Loop, Window, MAX_LOOPS};
use crate::engine::kernels::permute::{self, Way};
use crate::engine::kernels::shuffle;
use crate::engine::kernels::stream;
use crate::engine::kernels::tile;
use crate::engine::kernels::transpose::{self, streams};

/// Whether the last two loops gather long rows of units a few apart (`y`
/// a row's units, `x.count` apart in the source; `x` the rows, their units
/// one apart, which together read every unit of the source rows) that are
/// better taken in the source's order: each run of `x.count` units of the
/// source goes a unit to each row in turn (`kernels::grid::Grid::copy` streams
/// them), so the source is read once, in order, rather than once a row, a
/// unit in every `x.count`, and the `x.count` rows are written together.
/// Rows of [`MAX_JOINED_ROW`] bytes or more, of units of whole 16-byte
/// vectors from 32 bytes, and no window on either loop; at most
/// [`MAX_SCATTERED_ROWS`] rows.
///
/// Measured (ratio to memcpy, alternating, one thread, median of 2 runs,
/// gathered row by row -> so): NHWC space-to-batch and depth-to-space by 2
/// and 3 of 16 to 128 channels, 48 workloads, geomean 0.822 -> 0.680
/// (depth-to-space by 3 of 64 uint8 channels 1.03 -> 0.62, space-to-batch
/// 3x3 of 32 float32 1.09 -> 0.61); two threads, 1 run, NHWC and
/// OpenVINO space-to-batch and depth-to-space by 2 and 3, 0.867 -> 0.792.
/// Through `copy_run` a row at a time, not a kernel of its own, the same
/// plans were slower than gathered (48 workloads by 2 and 3 of 3 to 128
/// channels, 0.809 -> 0.926).
pub(super) fn scatters_gathered_rows(loops: &[Loop], unit: usize) -> bool {
    let n = loops.len();
    let [.., x, y] = loops else { return false };
    let refers = loops.iter().any(|l| l.window.is_some_and(|w| w.outer.is_some_and(|o| o as usize >= n - 2)));
    !refers
        && x.window.is_none()
        && y.window.is_none()
        && scatters(unit, x.count)
        && x.ss == unit as isize
        && y.ss == (x.count * unit) as isize
        && y.ds == unit as isize
        && y.count.saturating_mul(unit) >= MAX_JOINED_ROW
}

/// Whether `rows` rows of `unit`-byte units are few enough, and the units
/// whole vectors, for [`scatters_gathered_rows`] to take.
fn scatters(unit: usize, rows: usize) -> bool {
    unit >= 32 && whole_vectors(unit) && (2..=MAX_SCATTERED_ROWS).contains(&rows)
}

/// Most rows [`scatters_gathered_rows`] takes in the source's order. By 4,
/// one thread ran faster so (31 NHWC space-to-batch and depth-to-space
/// workloads, 0.776 -> 0.703x memcpy, but space-to-batch 4x4 of 32-byte
/// units 0.78-0.89 -> 0.85-1.04), and two threads slower (14 workloads of
/// 16 to 128 channels, 2 runs: 0.71-0.90 gathered, 0.64-2.10 so, the
/// median of 8 of them above 1.2).
const MAX_SCATTERED_ROWS: usize = 3;

/// Whether the innermost loop gathers long rows of units of whole 16-byte
/// vectors (from 32 bytes) into a contiguous destination: with streaming
/// stores these go straight from the source to the destination (see
/// `kernels::copy::stream_gather`), the source fetched ahead by one
/// sequential sweep (or, units a page or more apart, along the row:
/// `kernels::copy::fetches_along`). Measured, ratio to memcpy through the
/// cache -> so: NHWC space-to-batch 4x4 with padding of 64 uint8 channels
/// 1.46 -> 0.8, depth-to-space by 4 of 256 uint8 channels 2.0 -> 1.2,
/// space-to-batch 4x4 of 32 uint8 channels 1.26 -> 0.7. Rows from [`MIN_GATHERED_ROW`], or
/// from [`MIN_CONTINUED_ROW`] where they continue one another (an earlier
/// measurement of the 5-D space-to-batch's 1 KiB rows, 1.04 -> 1.18, no
/// longer holds: see [`MIN_GATHERED_ROW`]). Such rows of other units of
/// 32 bytes and more go through a stage: see [`stages_gathered_rows`].
pub(super) fn streams_gathered_rows(loops: &[Loop], unit: usize) -> bool {
    whole_vectors(unit) && gathers_rows(loops, unit)
}

/// Whether the innermost loop gathers rows as [`streams_gathered_rows`]
/// does, of units of 32 bytes and more that are not whole 16-byte vectors:
/// streamed, each such row goes through a stage in the first-level cache
/// and from it through the line writers (`CopyPlan::gathered`,
/// `kernels::stream::gather_lines`), which store every destination line
/// whole; a unit at a time, its streaming stores would leave lines partly
/// written. Asked once the loops are in their order (`CopyPlan::build`'s
/// step 6), it changes how such a plan stores, not its order.
///
/// Measured (this project's Intel Xeon with AVX-512, ratio to memcpy,
/// alternated runs, each workload's best) on the 26 broad workloads of
/// seeds 26 and 801-807 it streams (every plan of 16 MiB and more of
/// those seeds, `transpose.json` and the public workloads dumped before
/// and after: no other changes): TF NHWC depth-to-space, space-to-depth,
/// space-to-batch and batch-to-space and numpy transposes, units of 36 to
/// 540 bytes, 18 to 221 MiB. Through the cache -> so, one thread (4
/// runs): geomean 1.62 -> 1.31, 0.81 of the time, over 1.10x 24 -> 16;
/// TF NHWC space-to-depth by 14 of three float16 channels (219 MiB)
/// 2.16 -> 1.41; batch-to-space-ND by 6 of 12-byte elements (66 MiB) 1.19
/// -> 0.75. Four are slower (medians of 6 more alternated runs, all
/// outputs under 32 MiB, which may stay in this machine's 260 MiB
/// third-level cache): TF space-to-batch-ND of float64 by 16 x 12 x 3
/// (rows of 432 bytes, 19 MiB) 1.81 -> 2.09, TF NHWC depth-to-space by 7
/// of 6-byte elements (26 MiB) 1.26 -> 1.55, numpy transposes of 87- and
/// 118-byte units (30 and 18 MiB) 1.46 -> 1.61 and 1.15 -> 1.38; the
/// three others of those sizes gained (0.75 to 0.90), so a size limit
/// would buy nothing. Two threads (3 runs): 1.49 -> 1.22, 0.82 of the
/// time, five slower by 5 to 20%. (An earlier measurement on another
/// machine, not recorded, had rows of 36-byte units staged 1.1 -> 1.9.)
pub(super) fn stages_gathered_rows(loops: &[Loop], unit: usize) -> bool {
    !whole_vectors(unit) && gathers_rows(loops, unit)
}

/// The shape [`streams_gathered_rows`] and [`stages_gathered_rows`] take,
/// whatever the unit's size past 32 bytes: the innermost loop gathers rows
/// of [`MIN_GATHERED_ROW`] bytes and more (or [`MIN_CONTINUED_ROW`] where
/// they continue one another) into a contiguous destination.
fn gathers_rows(loops: &[Loop], unit: usize) -> bool {
    let Some(last) = loops.last() else { return false };
    let row = last.count.saturating_mul(unit);
    let continued = continues_rows(loops, unit);
    unit >= 32
        && last.ds == unit as isize
        && last.ss >= unit as isize
        && (row >= MIN_GATHERED_ROW || (continued && row >= MIN_CONTINUED_ROW))
}

/// Whether the last two loops make a grid whose units stream one by one
/// ([`stream::streams_rows`]: rows of up to 16 whole-vector units that
/// continue one another, each unit position a sequential stream of the
/// source), in runs of at least [`MIN_STREAMED_RUN`] bytes. A backward
/// plan (`!fill`) may crop the run's ends: a window on the rows' units
/// that depends on the rows' index alone, `lo <= x * y.count + y < hi`
/// (batch-to-space with crops: the grid's rows keep what the bounds
/// give, and its destination stays one run). Measured in separate
/// processes alternating, ratio to memcpy through the line writers -> so:
/// float32 batch-to-space 4x4 of 64 channels cropped by 3 (W4, 256-byte
/// units) 1.18-1.27 -> 0.81-0.83 on one thread, 0.91-0.95 -> 0.73-0.79 on
/// two.
pub(super) fn streams_continued_rows(loops: &[Loop], unit: usize, fill: bool) -> bool {
    let [.., x, y] = loops else { return false };
    let n = loops.len();
    let ends_cropped =
        |win: Window| !fill && win.outer == Some((n - 2) as u8) && win.ic == 1 && win.oc == y.count as i64;
    y.window.is_none_or(ends_cropped)
        && stream::streams_rows(unit, y.count, y.ds, x.ss, x.ds)
        && x.count.saturating_mul(y.count).saturating_mul(unit) >= MIN_STREAMED_RUN
        && (y.count * unit >= MIN_STREAMED_ROW || y.window.is_some())
}

/// Shortest uncropped row that [`streams_continued_rows`] streams: rows of
/// two 16-byte units make a faster tile (measured, ratio to memcpy, 2 runs
/// in separate processes, tile -> so: NHWC batch-to-space 2x2 of 16 uint8
/// channels 0.74 -> 0.89, of 4 float32 0.67 -> 0.75 (of 8 float16 0.70 ->
/// 0.67); space-to-depth by 2 of 8 uint8 channels 0.93 -> 1.19), while
/// cropped ones, whose windowed tile stores through the cache, stream
/// faster (1.14-1.18 -> 0.62-0.69).
const MIN_STREAMED_ROW: usize = 48;

/// Shortest run of continued rows that [`streams_continued_rows`] streams:
/// at a run's ends its streaming stores leave lines partly written, which
/// cost (rows of 256 bytes that each began a new run of one of 12
/// destination streams went 1.4 -> 2.1x memcpy streamed, see
/// [`MIN_GATHERED_ROW`]). A guard, not a measured optimum: the runs
/// measured streaming faster were 8 to 64 KiB.
const MIN_STREAMED_RUN: usize = 4 << 10;

/// Whether streamed rows that continue one another go through the line
/// writers all the same
/// ([`CopyPlan::gathered`](super::compile::CopyPlan::gathered)) rather
/// than straight out as one run: when padding falls between them (a
/// forward plan with a window), whose stores, filled apart, left lines
/// half streamed and then written with ordinary stores. Measured (ratio
/// to memcpy, 5 alternated runs), every forward plan it changes in the
/// broad sets of seeds 26, 801 and 802: TF space-to-batch-ND of 3-byte
/// units by 6x13x11, 17 MiB, 10.2 -> 2.2; of float32 by 2x6x8, 26 MiB,
/// 8.5 -> 2.2; TF space-to-batch of float16 by 16, 54 MiB, 4.2 -> 2.7, of
/// float64 by 12, 3.6 -> 3.0.
/// Cropped rows (backward: nothing filled) stream as before: through the
/// writers 7 of their 11 went slower, up to 0.6 -> 6.1.
pub(super) fn joins_padded_runs(loops: &[Loop], fill: bool) -> bool {
    fill && loops.iter().any(|l| l.window.is_some())
}

/// Whether the loop outside the last continues its rows in the
/// destination: the rows are one run.
pub(super) fn continues_rows(loops: &[Loop], unit: usize) -> bool {
    let n = loops.len();
    n >= 2 && loops[n - 2].ds == loops[n - 1].count.saturating_mul(unit) as isize
}

/// Shortest row (bytes) that [`streams_gathered_rows`] streams. Measured
/// (ratio to memcpy, through the cache -> streamed, one thread / two):
/// OpenVINO's 5-D space-to-batch (W11) of 1 KiB rows 1.03 / 1.36 -> 1.00 /
/// 0.96; TensorFlow batch-to-space 4x4 of 128-byte units, 512-byte rows,
/// 0.93 / 1.11 -> 0.79 / 0.81; space-to-depth by 3 of 192-byte units, 576
/// bytes, 0.87 / 1.0 -> 0.70 / 0.78. Rows of 256 bytes that do not
/// continue one another went 1.4 -> 2.1 (W11 in uint8: each row starts a
/// short piece of one of 12 destination streams), and still 2.0 with their
/// ends joined into whole lines (see [`MAX_JOINED_ROW`]): the short runs
/// themselves cost, not their partial lines.
const MIN_GATHERED_ROW: usize = 512;

/// Longest unwindowed gathered row whose ends [`CopyPlan::gathered`]
/// joins through the line writers; windowed rows (padded or cropped) join
/// theirs whatever their length. The lines a row leaves half-written are
/// 2 of 9 of a 512-byte row, 2 of 65 of a 4 KiB one, where rows do not
/// start on a line (a large destination from the allocator starts 16
/// bytes past one). Measured (ratio to memcpy, alternating, straight ->
/// joined): OpenVINO's 5-D space-to-batch of 512-byte rows 1.31-1.52 ->
/// 0.93-1.06, of 1 KiB rows 0.92-0.98 -> 0.77-0.84; unpadded NHWC
/// space-to-batch and depth-to-space by 2 of 32- to 256-byte units, rows
/// of 4 to 16 KiB, 0.68-0.84 -> 0.67-0.85 (3 runs, same binary: 64-byte
/// units 0.79 -> 0.84). Padded rows pay more for their ends (uint8 NHWC
/// space-to-batch 2x2 of 64 channels padded on W, rows of 8 KiB streamed
/// straight, 0.96x memcpy into a destination on a line, 1.88 16 bytes
/// past): joined, 3 runs in separate processes, one thread / two, uint8
/// of 32 channels padded by 1, 2x2 1.21 / 0.97 -> 1.01 / 0.81, 3x3 1.20
/// / 1.16 -> 1.01 / 0.76, 4x4 1.19 / 1.03 -> 0.93 / 0.79; of 64 channels
/// (2 runs, one thread), 3x3 and 4x4 1.67 -> 0.88-0.92.
pub(super) const MAX_JOINED_ROW: usize = 2 << 10;

/// Shortest row (bytes) that [`streams_gathered_rows`] streams when the
/// rows continue one another in the destination, one run (measured: NHWC
/// space-to-depth by 2 of 128-byte units, 256-byte rows, 1.0 -> 0.82-0.89;
/// rows of 128 bytes went 1.06 -> 1.3).
const MIN_CONTINUED_ROW: usize = 256;

/// Whether a tile plan's last two loops `x` and `y` interleave whole
/// destination rows (`y` the streams, contiguous in the destination, `x`
/// the units of each, contiguous in the source) cropped only at the row's
/// ends: `y`'s window on `x` keeps the row positions `q = x * ny + y` in
/// `[lo, hi)`. Such a crop leaves every source unit of the row in the
/// source (batch-to-space crops what the source has), so a row can be
/// interleaved whole into a stage of [`CROPPED_ROWS_BYTES`] and its kept
/// bytes sent on through the line writers (`kernels::cropped::cropped_rows`). Rows of
/// whole lines only: streamed so, OpenVINO NCHW batch-to-space with crops
/// measured (ratio to memcpy, through the cache -> so) uint8 4x4 of
/// 512-byte rows 1.55-1.7 -> 1.0-1.35, float32 2x2 of 1-2 KiB rows
/// 1.0 -> 0.8-0.9; other rows were slower streamed (block 3, 510-1020
/// bytes: 1.1-1.25 -> 1.3-1.5). With AVX512-VBMI, [`crops_carried`] takes
/// such rows of any length first.
pub(crate) fn crops_row_ends(loops: &[Loop], unit: usize) -> bool {
    let row = cropped_row(loops, unit).map(|(x, y, _)| x.count * y.count * unit);
    row.is_some_and(|row| row <= CROPPED_ROWS_BYTES && row.is_multiple_of(64))
}

/// Whether the last two loops are a tile of interleaved rows cropped only
/// at their ends (see [`cropped_row`]), whatever the rows' length: the
/// executor's check before it runs the kernels that take such tiles.
pub(crate) fn crops_interleaved_rows(loops: &[Loop], unit: usize) -> bool {
    cropped_row(loops, unit).is_some()
}

/// Fewest bytes of rows a call for which a windowed interleave that the
/// byte permutes take makes a tile of cropped rows staged whole (see
/// [`choose_tile`]).
const MIN_STAGED_CROPPED_CALL: usize = 1 << 10;

/// Longest row (bytes) of [`stages_cropped_rows`]. Past it, the second
/// pass costs more than the edges: staged, the 20 such tiles of rows of 1
/// to 4 KiB in broad seeds 26 and 801-803 took 0.97 of the time, 11 of
/// them slower by more than 5% (OpenVINO batch-to-space of complex128 by
/// 8 x 13, 2,912-byte rows, 6.9 MiB, 3.3 -> 4.2x memcpy).
const MAX_STAGED_CROPPED_ROW: usize = 1 << 10;

/// Whether a windowed tile through the cache of interleaved rows cropped
/// at their ends (see [`crops_row_ends`]), in tensors the caches hold, is
/// built in a stage whole rows at a time and each row's kept bytes copied
/// on (`kernels::cropped::cropped_rows`), rather than its columns whole
/// for every stream tiled straight into the destination and the two
/// partial columns at a row's ends copied unit by unit: rows of at most
/// [`MAX_STAGED_CROPPED_ROW`] bytes, whose two partial columns cost more
/// than a second pass over the row in the first-level cache.
///
/// Measured on an AMD EPYC (Zen 5), one thread, 6 alternated runs, paired
/// per-run ratios of each plan's time, the tiles the rule takes in broad
/// seeds 26 and 801-803 (16): 0.77, 15 faster by more than 5%, one
/// slower (TF batch-to-space of float16 by 2 cropped by 1, 576-byte
/// rows, 1.0 MiB, 4.1 -> 4.4x memcpy); the best, TF batch-to-space of
/// uint8 by 13 (195-byte rows, 0.09 MiB), 18.9 -> 10.0x. Held out,
/// seeds 804-810 (37): 0.66, none slower by more than 5%, their geomean
/// 10.2 -> 6.7x memcpy (OpenVINO batch-to-space of float16 by 12 x 16,
/// 128-byte rows, 52.7 -> 9.6x). Streaming plans keep their paths: the
/// four such tiles with rows this short in seeds 26 and 801-803 (8-21
/// MiB) were 1.0-1.2 times as slow staged.
pub(crate) fn stages_cropped_rows(loops: &[Loop], unit: usize) -> bool {
    let [.., x, y] = loops else { return false };
    stages_row_of(x, y, loops.len() - 2, unit)
}

/// Whether `x` (loop `xi`) and `y` are interleaved rows cropped at their
/// ends ([`crops_row_of`]) that [`stages_cropped_rows`] stages: of at
/// most [`MAX_STAGED_CROPPED_ROW`] bytes.
fn stages_row_of(x: &Loop, y: &Loop, xi: usize, unit: usize) -> bool {
    let row = x.count.checked_mul(y.count).and_then(|units| units.checked_mul(unit));
    crops_row_of(x, y, xi, unit) && row.is_some_and(|row| row <= MAX_STAGED_CROPPED_ROW)
}

/// The last two loops `x` and `y` of a tile that interleaves whole
/// destination rows cropped only at their ends (see [`crops_row_ends`]),
/// and the window's range of kept row positions, if they are such a tile.
fn cropped_row(loops: &[Loop], unit: usize) -> Option<(&Loop, &Loop, (usize, usize))> {
    let [.., x, y] = loops else { return None };
    let win = y.window?;
    let units = x.count.checked_mul(y.count)?;
    units.checked_mul(unit)?;
    crops_row_of(x, y, loops.len() - 2, unit).then(|| (x, y, win.range(0, units)))
}

/// Whether `y`'s window on `x` (loop `xi`) keeps the row positions `q =
/// x * ny + y` of interleaved rows cropped at their ends: `y` the row's
/// streams, each unit contiguous in the destination, `x` its units,
/// contiguous in the source, a row one run of the destination.
fn crops_row_of(x: &Loop, y: &Loop, xi: usize, unit: usize) -> bool {
    y.window.is_some_and(|w| w.outer == Some(xi as u8) && w.ic == 1 && w.oc == y.count as i64)
        && y.ds == unit as isize
        && x.ss == unit as isize
        && x.ds == (y.count * unit) as isize
}

/// Whether `kernels::interleave_carried::interleave_carried` runs a tile that [`crops_row_ends`]
/// but for the rows' length (with AVX512-VBMI): each row interleaved in
/// registers and its kept bytes carried on to the next row's, the rows
/// (the loop around the tile) following one another in the destination.
/// Measured (ratio to memcpy, 2 runs alternating, best of each): OpenVINO
/// NCHW batch-to-space by 2 to 4 cropped on H and W (1 at the start, a
/// block less one at the end), 1 to 16 channels of uint8, float16 and
/// float32, 36 workloads: geomean 1.18 -> 0.87, above 1.10 24 -> 3
/// (before, through the cache, or rows of whole lines through a stage).
pub(crate) fn crops_carried(loops: &[Loop], unit: usize, isa: Isa) -> bool {
    let Some((x, y, (a, b))) = cropped_row(loops, unit) else { return false };
    let n = loops.len();
    let kept = (b.saturating_sub(a) * unit) as isize;
    let row_ds = if n >= 3 { loops[n - 3].ds } else { kept };
    interleave_units(x, y, unit) && interleaves_carried(isa, unit, y.count, x.count, (a * unit, b * unit), row_ds)
}

/// For each loop `j`: bytes of the contiguous destination block that one
/// index of loop `j` covers, or 0 if that block is not contiguous.
pub(super) fn destination_blocks(loops: &[Loop], unit: usize, blocks: &mut ArrayVec<usize, MAX_LOOPS>) {
    blocks.clear();
    blocks.extend(loops.iter().map(|_| 0));
    let mut blk = Some(unit);
    for j in (0..loops.len()).rev() {
        blocks[j] = blk.unwrap_or(0);
        blk = blk.and_then(|b| (loops[j].ds == b as isize).then(|| b * loops[j].count));
    }
}

/// The product of counts: zero if any is zero, however large the others
/// (otherwise it is the size of a buffer that exists, so it fits).
pub(super) fn count_product(mut counts: impl Iterator<Item = usize>) -> usize {
    counts.try_fold(1usize, |a, c| (c != 0).then(|| a.wrapping_mul(c))).unwrap_or(0)
}

/// Units from this size (bytes) on stay with the line writers rather than
/// being gathered or streamed row by row (see step 4 of
/// [`CopyPlan::build`]), but for those `writers::takes_lines` leaves to
/// stream by themselves; shorter rows gathered from units far apart go
/// through the writers too (`writers::gathers_far_apart`).
pub(super) const MANY_STREAMS_UNIT: usize = 256;

/// Whether streamed units of `unit` bytes that the line writers would take
/// in the order of the loop of shortest steps only with too many
/// destination streams take them in another (`order::stream_order`'s
/// `any_sweep`), the loops `loops` in the destination's order: the
/// destination in order, each unit read apart. Whole 16-byte vectors of
/// [`MIN_STREAMED_UNIT`] to [`MIN_DST_RUN`] bytes that the plan would
/// otherwise write each apart (`order::writes_units_apart`: a run of its
/// own, shorter than `order::source_order_outside_run` keeps): read
/// apart, each pays for its landing; shorter ones stream well enough
/// otherwise, longer ones are long runs already, and those whose runs
/// grow (more streams than `order::source_order_outside_run` leaves
/// open) are written in order already. Other units from
/// [`MANY_STREAMS_UNIT`]: the plan otherwise stores them through the
/// cache or a stage, their lines read before they are written.
///
/// Measured on an Intel Xeon (one thread, alternated runs, medians of 3
/// to 8, ratio to memcpy; the plans of 16 MiB and more that any sweep
/// would change among broad seeds 26 and 801-813, `transpose.json` and,
/// for whole vectors, the numpy and einops transposes of seeds 814-843):
/// whole vectors written apart, of 2,944 bytes (HPTT's row transposes of
/// float64 `[384, 384, 368]` and `[2307, 64, 368]` by axes `1, 0, 2`) 1.33
/// -> 1.06x and 1.31 -> 1.09x, of 512 to 1,632 bytes 0.23 to 0.72 of the
/// time (4 plans; numpy's `[12, 16, 20, 19, 16]` of 32-byte elements by
/// axes `1, 3, 0, 2, 4`, 512-byte units, 4.34 -> 1.01x); six transposes
/// of 387- to 1,002-byte units that are not whole vectors (20 to 200 MiB)
/// 0.54 to 0.76 of the time (`[78, 52, 40, 65]` of 12-byte elements by
/// axes `0, 2, 1, 3`: 1.79 -> 0.97). Not taken: whole vectors whose runs
/// grow, of 640 bytes 1.13 and 0.98 of the time (HPTT's float64 `[96, 75,
/// 96, 80]` by axes `2, 1, 0, 3`: 1.18 -> 1.33x) and of 1,824 bytes 0.93;
/// of 256 bytes 1.95 (HPTT's `[28, 28, 48, 28, 48]` by axes `1, 3, 2, 0,
/// 4`: 1.07 -> 2.09x), of 5,120 and 17,152 bytes 0.99 and 1.05; 132-byte
/// units 1.10.
pub(super) fn reads_units_apart(loops: &ArrayVec<Loop, MAX_LOOPS>, unit: usize) -> bool {
    if whole_vectors(unit) {
        (MIN_STREAMED_UNIT..MIN_DST_RUN).contains(&unit) && writes_units_apart(loops, unit)
    } else {
        unit >= MANY_STREAMS_UNIT
    }
}

/// Whether a streaming plan's units of `unit` bytes that no other
/// streaming path takes (more destination streams than the line writers
/// hold, rows that are not gathered) stream one at a time, wherever each
/// goes (`kernels::copy::copy_run`): a unit of [`MIN_STREAMED_UNIT`]
/// bytes or more is a run of whole lines but its two ends, and a unit of
/// whole 16-byte vectors at a 16-byte-aligned place takes no ordinary
/// store, which would share a line with streamed ones. Through the cache,
/// every destination line is read before it is written.
///
/// Measured on an AMD EPYC (Zen 1), ratio to memcpy, 2 alternated runs,
/// best of each, through the cache -> so, one thread: 22 numpy transposes
/// that keep a long last axis of such units, 512 to 20,000 bytes (3-D
/// `1,0,2`, 4-D `2,1,0,3` and `2,0,1,3`, 40-128 MiB), geomean 1.78 ->
/// 1.09 (the worst after, 1.53); HPTT's (`shared/bench/transpose.json`)
/// T04 and T06 (2,944-byte units) 1.85 -> 1.2, T05 (17,152) 1.66 ->
/// 1.15, T13 (640 bytes, 96 streams 4.6 MB apart) 5.3 -> 2.2; two
/// threads, those four 1.6-5.0 -> 0.76-2.3. Streamed the same way, units
/// that are not whole vectors lost at 600 to 1,500 bytes (2.5 -> 3.2 the
/// worst) and gained at 3,000 (2.1 -> 1.55): hence whole vectors.
pub(super) fn streams_units(unit: usize) -> bool {
    unit >= MIN_STREAMED_UNIT && whole_vectors(unit)
}

/// Smallest unit [`streams_units`] streams one at a time: the shortest
/// measured (smaller units of such plans were all taken by other paths).
const MIN_STREAMED_UNIT: usize = 512;

/// Plans of at most this many units copy them one at a time, in the
/// destination's order (`CopyPlan::units`): about what choosing and setting
/// up any other kernel costs. Measured, prepared runs of 9 families (TF
/// space-to-batch and depth-to-space, ONNX CRD depth-to-space, PyTorch
/// pixel shuffles, numpy transposes; units of 1 to 16 bytes), 5 runs
/// alternating: up to 64 units every family ties or gains (the 64-byte S1
/// workload ties there, and ran 50-70 -> 32-34 ns in a harness of its own,
/// best of 9 processes; ONNX depth-to-space of 32 units 118 -> 97 ns,
/// transposes of 8 to 32 units 0.5-0.8x the time); from 128 units some
/// lose (float16 pixel_shuffle 1.13x the time, float32 depth-to-space of
/// 144 units 1.29x).
pub(super) const TINY_UNITS: usize = 64;

/// Lists the source and destination offsets of every unit of `loops`
/// (windowless), the bases added, in the destination's order (the last
/// loop fastest): the list a tiny plan's runs copy (`CopyPlan::offsets`,
/// `kernels::copy::listed`). `false`, the list empty, when the units are
/// more than [`TINY_UNITS`].
///
/// Built from the innermost loop out: each loop repeats the list so far
/// (the units of the loops inside it) at each of its further indices.
pub(super) fn list_units(
    loops: &[Loop],
    src_base: isize,
    dst_base: isize,
    list: &mut ArrayVec<[isize; 2], TINY_UNITS>,
) -> bool {
    list.clear();
    let units = loops.iter().try_fold(1usize, |n, l| n.checked_mul(l.count));
    let n = match units {
        Some(0) => return true,
        Some(n) if n <= TINY_UNITS => n,
        _ => return false,
    };
    // Sized first, then written in place: pushed one at a time, each
    // checked against the capacity, the list cost twice as much.
    list.try_extend_from_slice(&[[0; 2]; TINY_UNITS][..n]).expect("at most TINY_UNITS units");
    list[0] = [src_base, dst_base];
    let mut len = 1;
    for l in loops.iter().rev() {
        let inner = len;
        let (mut s, mut d) = (0isize, 0isize);
        for _ in 1..l.count {
            (s, d) = (s.wrapping_add(l.ss), d.wrapping_add(l.ds));
            let (done, rest) = list.split_at_mut(len);
            for (to, &[a, b]) in rest[..inner].iter_mut().zip(&done[..inner]) {
                *to = [a.wrapping_add(s), b.wrapping_add(d)];
            }
            len += inner;
        }
    }
    true
}

/// Destination bytes from which rows of units without a vector kernel walk
/// the loops around them in the source's order (see [`choose_tile`]): past
/// the first-level caches, where the order of memory traffic matters.
pub(super) const SOURCE_ORDER_BYTES: usize = 256 << 10;

/// Largest unit (bytes) worth a transposing tile (or, without a vector
/// kernel, the move of its source-contiguous loop next to the rows; from
/// 64 bytes on, [`source_order_outside_run`](super::order::source_order_outside_run) orders the loops).
const MAX_TILE_UNIT: usize = 63;

/// Chooses the transposing tile (see [`CopyPlan::tile`]): the innermost
/// loop `y`, contiguous in the destination, and the nearest loop `x`
/// contiguous in the source, moved next to it. `y` may carry a window on
/// `x`'s index alone, or a constant one (padding or crop of an axis whose
/// block position `x` is, as OpenVINO's space-to-batch of NCHW tensors
/// pads `W`): the executor runs the tile where every unit is valid and the
/// few units at its edges one by one (`Exec::windowed_tile`). Returns
/// `None` if there is no such `x` (nothing moved), or else whether the last
/// two loops make a tile: `x` is moved next to `y` even where they do not
/// (see below), and then (as where only `transpose::streams`' squares
/// make them one) with `source_order` the loops outside them are put in
/// the source's order. `cached`: the plan stores through the cache;
/// `crops`: and crops without filling, in tensors the caches hold (a tile
/// of cropped rows it would stage whole: [`stages_cropped_rows`]).
pub(super) fn choose_tile(
    loops: &mut ArrayVec<Loop, MAX_LOOPS>,
    unit: usize,
    source_order: bool,
    cached: bool,
    crops: bool,
    isa: Isa,
) -> Option<bool> {
    let n = loops.len();
    if n < 2 {
        return None;
    }
    // Long units already move as whole runs in destination order.
    if unit > MAX_TILE_UNIT {
        return None;
    }
    let u = unit as isize;
    let y = loops[n - 1];
    if y.is_outer || y.ds != u || y.ss == u {
        return None;
    }
    // The nearest source-contiguous loop that carries no window and is the
    // outer loop of no window but `y`'s: moving it inside the loops after
    // it leaves every window's outer loop outside the windowed one.
    let movable = |i: usize| {
        loops[i].window.is_none()
            && loops[..n - 1].iter().all(|l| l.window.is_none_or(|w| w.outer != Some(i as u8)))
            && y.window.is_none_or(|w| w.outer.is_none_or(|o| o as usize == i))
    };
    let x = (0..n - 1).rev().find(|&i| loops[i].ss == u && movable(i))?;
    // Units without a vector kernel run as plain strided runs (and one by
    // one at a window's edges): such a tile pays only where it turns short
    // rows of `y` into long runs of `x` (NHWC depth-to-space and
    // batch-to-space of a few channels); otherwise the loops run as rows of
    // `y`, with `x` moved next to them all the same, so that each source
    // block is read once (measured, ratio to memcpy: NHWC space-to-batch of
    // three float32 channels with padding 2.1 -> 1.5, of 8 channels
    // 1.5 -> 1.1; uint8 depth-to-space of 5 channels by 2 1.25 -> 1.0).
    // So does a transpose's tile, long on both sides, which the tile's
    // kernel copies in square blocks (`tile::blocked`): as rows of `y`,
    // each row reads a unit from each of thousands of source rows (numpy
    // `1,0,2` of a 4000 x 4000 RGB uint8 image: 14-20x memcpy so, 4x in
    // blocks). Measured on the 80 numpy transposes of 3-, 6-, 12- and
    // 32-byte units this rule takes among 1,183 drawn by the broad
    // generator (seeds 600-639), 3 alternated runs: geomean 4.28 -> 2.91,
    // outputs of 16 MiB and more 6.17 -> 3.09, the worst 20.7 -> 7.6. So
    // does a tile of any size whose columns spill from the L1 cache or
    // the TLB, which as rows would fetch them again each row (see
    // `tile::blocked`: OpenVINO space-to-depth of 12-byte units by 7,
    // 51,088 groups 84 bytes apart, 1.9-2.4 -> 1.0-1.5x memcpy). So
    // does a tall tile (a short side, a long one) too large for the
    // caches, which as rows would read its source once a row (see
    // `tile::TALL_TILE_BYTES`), but for a few rows that
    // `scatters_gathered_rows` takes in the source's order (measured:
    // OpenVINO space-to-depth of 32-byte units by 3, 177 MiB, 0.61x memcpy
    // so, 1.09x as a tile; so few rows are never a square tile's side).
    // So does a deinterleave that the byte permutes take (`permute::takes`:
    // 3-byte units, 2 to 32 streams, with AVX512-VBMI), which as rows
    // would gather every `nx`-th unit one at a time. Measured on the 59
    // workloads of 1,920 (seeds 26, 801, 802) it changes, 3 alternated
    // runs, ratio to memcpy: 2.89 -> 2.14 (5 to 16 streams, 44: 3.51 ->
    // 2.49, 3 slower; 2 to 4, 15: 1.63 -> 1.38, 2 slower); TF NCHW
    // space-to-depth of 3-byte units by 5, 1.7 MiB, 5.4 -> 1.7; the worst,
    // TF space-to-batch of three uint8 channels by 2, 5.7 MiB, 1.3 -> 2.1.
    // Not for the wider units the permutes deinterleave in a tile made
    // for another reason (5 and 6 bytes: `permute::deinterleaves`): as
    // tiles rather than rows, the 30 broad workloads of 6-byte units of
    // seeds 26, 801 and 802 this would reach measured no faster, 1.86 ->
    // 1.83x memcpy, 13 of them slower by more than 5% (2 streams, 6.7
    // MiB, 0.92 -> 1.40).
    // So does an interleave that they take (units of 3 to 16 bytes, 5 to
    // 32 streams, 16 of units over 4 bytes), with no window on `y`: to 8
    // bytes, the 10 workloads of 1,920 it changed, 5 alternated runs, time
    // after over before 0.59, 0.65, 0.79 (seeds 26, 801, 802); PyTorch pixel
    // shuffle of 6-byte units by 8, 0.5 MiB, 4.3 -> 1.8x memcpy; one
    // slower, the same by 11, 30 MiB, 3.5 -> 4.1 (a unit of each of its
    // 11 streams a step). Cropped (OpenVINO batch-to-space of 6-byte
    // units, seeds 26 and 802), two took 2.2 and 1.4 times as long so: the
    // tile's edges go a unit at a time. Unless the plan builds its cropped
    // rows whole in a stage (`stages_cropped_rows`), a kilobyte of them or
    // more a call: the 7 broad workloads of seeds 26 and 801-810 then
    // tiles, one thread, 6 alternated runs, paired, 0.62 of the time (6
    // faster, the best OpenVINO batch-to-space of 3-byte units by 9 x 12 x
    // 11 cropped, 0.07 MiB, 39.5 -> 16.8x memcpy; one 7%
    // slower); with 540 bytes of rows a call (the same of 6-byte units by
    // 12 x 2 x 15, 0.07 MiB), 2.8 times as long.
    // So does a tile of packed units (3, 6 and 12 bytes) that the
    // transpose's full-line squares take (`transpose::takes`: both sides
    // 16 or more, with AVX512-VBMI): the 14 workloads of 1,920 it then
    // changes, 3 alternated runs, 2.96 -> 2.00 (numpy `3,2,0,1` of 6-byte
    // units, 39 MiB, 6.1 -> 2.5; OpenVINO space-to-depth of 12-byte units
    // by 16, 75 MiB, 2.3 -> 1.2), 2 slower (einops of 12-byte units by 16 x
    // 3, 1.5 MiB, 2.3 -> 3.1). Units of 32 bytes, which move as runs, were
    // slower so (7, 1.46 -> 1.61) and stay rows. So does a deinterleave
    // of 6- and 12-byte units into 8 to 15 streams that their partial
    // squares take (`transpose::takes_squares`), with no window on `y`:
    // see there. Not where the tile's destination rows are runs of its
    // rows (which the squares leave to the tile's own kernels: 14 broad
    // workloads, time over that as rows 1.07, up to 1.21), nor windowed
    // (9, 1.06, up to 1.85).
    let (nx, ny) = (loops[x].count, y.count);
    // A window on `y` keeps an interleave the permutes take a tile (above)
    // where the plan crops its rows at their ends and stages them whole
    // (`stages_cropped_rows`: no unit goes alone; `crops`, the plan
    // through the cache, not filling, its tensors in the caches), with a
    // kilobyte of rows or more a call, over which the permutes' setup is
    // spread: the loop outside the tile once `x` is next to it, which a
    // tile the permutes take keeps (fewer where threads split it).
    let rows = if x + 2 == n { n.checked_sub(3).map_or(1, |i| loops[i].count) } else { loops[n - 2].count };
    let staged = crops
        && stages_row_of(&loops[x], &y, x, unit)
        && (nx * ny * unit).saturating_mul(rows) >= MIN_STAGED_CROPPED_CALL;
    // Asked in turn, the cheapest first (planning a 64-byte tensor is a
    // few hundred nanoseconds in all).
    let permuted = || {
        y.ss == (nx * unit) as isize
            && unit <= permute::MAX_UNIT
            && permute::takes(Way::Deinterleave, nx, unit, ny, isa)
            || (y.window.is_none() || staged)
                && loops[x].ds == (ny * unit) as isize
                && permute::takes(Way::Interleave, ny, unit, nx, isa)
    };
    let squares = || {
        let ds = loops[x].ds;
        transpose::packed(unit)
            && (transpose::takes(ny, nx, unit, isa, ds, false)
                || y.window.is_none()
                    && ds != (ny * unit) as isize
                    && transpose::takes_squares(ny, nx, unit, isa, ds, false))
    };
    // So do packed units of 3 and 6 bytes that the register transposes'
    // squares take without AVX-512 (`transpose::streams`, in slots of 4
    // and 8 bytes): the broad workloads of 3- and 6-byte units this
    // changes (seeds 26, 801 and 802), one thread, time after over before
    // (minimum of 4 alternated processes): deinterleaves 0.76, 0.79 and
    // 0.69 (19, 21 and 38 workloads), 3-byte interleaves 0.91, 0.96 and
    // 0.92 (6, 8 and 5); pixel unshuffle of 3-byte units by 15 (7.5 MiB)
    // 2.5 -> 1.5x memcpy. The loops around such a tile stay in the rows'
    // order (below): in the destination's, a numpy transpose of 3-byte
    // units whose 10 streams are 72 KiB apart (10 MiB) took 2.6 times as
    // long.
    let streamed = || {
        y.ss == (nx * unit) as isize && streams::takes(ny, nx, unit, isa)
            || y.window.is_none() && loops[x].ds == (ny * unit) as isize && streams::takes_interleave(nx, ny, unit, isa)
    };
    let others = vector_unit(unit)
        || ny < nx
        || permuted()
        || squares()
        || (tile::blocked(nx, ny, unit, y.ss, loops[x].ds) && !scatters(unit, nx));
    let tile = others || streamed();
    // `x` moves inward past loops none of whose windows involves it, so no
    // window changes sides: only the outer indices shift (`permute` would
    // rebuild every loop, 1,300 more instructions a call for S1).
    move_inward(loops, x, n - 2);
    // So does a padded tile through the cache whose loops around it make a
    // block (`padded::padded_block`), kept in the destination's order: the
    // 8 broad workloads of seeds 26 and 801-810 it changes (OpenVINO
    // space-to-batch of 3- to 12-byte units), 0.53 to 0.86 of the time as
    // rows (6-byte units by 2 x 15 x 3, 0.09 MiB, 20 -> 10x memcpy).
    if !tile && cached && padded_block(loops, unit).is_some() {
        return Some(true);
    }
    if !others && source_order {
        // The rows (and the tiles only the register squares take) read
        // their source block once; the loops around them go in the
        // source's order, so that the source is read in order too (NHWC
        // space-to-batch with padding, float16 three channels 1.8 -> 1.4x
        // memcpy, float32 8 channels 1.17 -> 1.06x).
        source_order_outside(loops, n - 2);
    }
    Some(tile)
}

/// Whether the tile (the last two loops, deinterleaving: one destination
/// row per column) goes in the transpose's full-line squares, streamed
/// (`transpose::streams_squares`): then it streams with no stage, where
/// another deinterleave too short to stage stores through the cache.
///
/// Measured (one thread, 2 alternated runs, ratio to memcpy) in the HPTT
/// set, whose transpositions of 3 to 6 axes mostly make such tiles
/// (float64, 32 to 96 units a side, under loops that do not continue
/// them): geomean 2.05 -> 1.72, none slower (`2,1,0` of `[2320, 59,
/// 384]` 2.59 -> 1.47, `3,2,1,0` of `[96, 75, 75, 96]` 2.86 -> 1.82);
/// through the cache each destination line was read before it was
/// written. In the broad benchmark it takes one workload of seed 26 (a
/// numpy transpose of 16-byte units, 54 MiB, 1.89 -> 1.36) and 3 of
/// seed 802; with the blocked transpose's masked squares of bytes as
/// well, 11 more, some twice as slow (uint8 NCHW space-to-depth, whose
/// rows are not whole lines). Bytes in the full-line squares (64 x 64,
/// both sides 64 or more) take none of those (their sides are a block,
/// under 64): no uint8 plan of broad seeds 26 and 801 changes. With VBMI,
/// packed units too, shifted into whole lines
/// (`transpose::shifts_packed`): the 4 broad workloads of seeds 26 and
/// 801-810 this streams, 0.82 of the time (OpenVINO space-to-depth of
/// 12-byte units by 16, 58 MiB, 1.57 -> 1.15x memcpy; the slowest, numpy
/// of 6-byte units in 44 columns, 2.23 -> 2.34).
pub(super) fn squares_stream(loops: &[Loop], unit: usize, isa: Isa) -> bool {
    let n = loops.len();
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    transpose::streams_squares(y.count, x.count, unit, isa, x.ds)
}

/// Most source rows a streamed interleaving tile of 2 to 4 streams that its
/// own kernel streams (`tile::own_interleave`) may read for one run of the
/// destination ([`interleaved_rows`]), or that the byte shuffles stream
/// ([`streams_shuffled_rows`]) may keep open ([`open_interleaved_rows`]);
/// past it, it stores through the cache, as a staged one does (see
/// `streamed::interleave_through_cache`). Measured on an AMD EPYC (Zen 3,
/// AVX2), one thread, best of 3 alternated runs, the broad workloads of 16
/// MiB and more it changes (seeds 26, 801 and 802, 17 of them, reading 9 to
/// 60 rows a run): 0.80 of the time (einops of uint8 by 9 x 3, 4 streams, 39
/// MiB, 8.7 -> 3.6x memcpy; OpenVINO depth-to-space of float16 by 4, 22 MiB,
/// 2.8 -> 1.4), 2 slower (PyTorch pixel shuffle of float32 by 4, 19 MiB,
/// 0.88 -> 1.16; TF NCHW depth-to-space of float32 by 3, 28 MiB, 0.63 ->
/// 0.72). Interleaves from 4 rows (pixel shuffle and depth-to-space by 2: W8
/// and W9) stream faster (0.70x memcpy against 0.95x through the cache).
pub(super) const MAX_STREAMED_INTERLEAVE_ROWS: usize = 8;

/// The source rows that one destination run of an interleaving tile (the
/// last two of `loops`, `ny` streams) reads at once: `ny`, times the
/// repetitions of the loop around the tile where they continue its
/// destination rows and not its source rows (in the destination's order,
/// each run of that loop's repetitions then reads `ny` rows of each).
pub(super) fn interleaved_rows(loops: &[Loop], unit: usize) -> usize {
    let [.., r, x, y] = loops else { return loops.last().map_or(1, |y| y.count) };
    let continues = |l: &Loop| l.ds == (x.count * y.count * unit) as isize && l.ss != (x.count * unit) as isize;
    y.count.saturating_mul(if continues(r) { r.count } else { 1 })
}

/// The source rows that the destination runs of an interleaving tile keep
/// open at once: its [`interleaved_rows`] where a loop further out
/// continues the tile's source rows (each run reads a part of every one
/// of those rows, and the next run the next part), else its `ny` streams
/// (each run reads its rows whole, one after another).
pub(super) fn open_interleaved_rows(loops: &[Loop], unit: usize) -> usize {
    let [outer @ .., _, x, y] = loops else { return loops.last().map_or(1, |y| y.count) };
    let row = (x.count * unit) as isize;
    if outer.iter().any(|l| l.ss == row) {
        interleaved_rows(loops, unit)
    } else {
        y.count
    }
}

/// Whether a tile of units without a vector kernel interleaves its rows
/// with a byte-shuffle kernel (`engine::shuffle`) straight into whole
/// 16-byte vectors of the destination, every row 16-byte aligned: such a
/// tile streams.
pub(super) fn streams_shuffled_rows(loops: &[Loop], unit: usize, isa: Isa) -> bool {
    let n = loops.len();
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let row = x.count * y.count * unit;
    y.window.is_none()
        && x.ds == (y.count * unit) as isize
        && shuffle::interleaves(isa, unit, y.count)
        && row.is_multiple_of(16)
        && loops[..n - 2].iter().all(|l| l.ds.unsigned_abs().is_multiple_of(16))
}

/// Whether units of `unit` bytes are whole 16-byte vectors: streaming
/// stores write each with no ordinary store beside it (none shares a line
/// with them where the units start 16-byte aligned), which is what most
/// streaming rules tell such units apart by.
pub(super) fn whole_vectors(unit: usize) -> bool {
    unit.is_multiple_of(16)
}

/// Whether the vector tile kernels take units of `unit` bytes (integers of
/// 1 to 16 bytes; other units run as strided runs).
pub(super) fn vector_unit(unit: usize) -> bool {
    matches!(unit, 1 | 2 | 4 | 8 | 16)
}

/// Shortest row (bytes per destination stream) of a streaming deinterleaving
/// tile that is not carried written straight into whole lines rather than
/// staged or stored through the cache. Measured on an AVX2 machine (Zen 3),
/// with streams not a line multiple apart (so not carried): uint8
/// pixel_unshuffle of 500- and 254-byte rows 0.86-0.95x memcpy so, against
/// 1.1-1.85x with 512 here; float16 of 500-byte rows 0.81-0.87x, against
/// 1.6x. (Earlier, on an AVX-512 machine before the carried kernels,
/// 512: float32 and float16 rows of 512 bytes and more 1.2-1.45x so,
/// 1.45-2.8x staged.)
pub(super) const MIN_LINES_DEINTERLEAVE_ROW: usize = 128;

/// The loop of a tile plan that steps every destination stream by exactly
/// one tile row (`ds == ny * unit`), with at most one loop (the *streams*
/// loop) between it and the tile, neither of them carrying a window, and
/// the number of destination streams inside it; `None` for an
/// interleaving tile (one destination stream, `x.ds == row`).
fn row_level(loops: &[Loop], unit: usize) -> Option<(usize, usize)> {
    let n = loops.len();
    let row = loops[n - 1].count * unit;
    if loops[n - 2].ds == row as isize {
        return None;
    }
    let level = (n.saturating_sub(4)..n - 2).rev().find(|&j| loops[j].ds == row as isize)?;
    if !loops[level..n - 2].iter().all(free) {
        return None;
    }
    Some((level, loops[level + 1..n - 1].iter().map(|l| l.count).product()))
}

/// The [`CopyPlan::carry_level`] of a streaming deinterleaving tile plan, if
/// `kernels::carried::deinterleave_carried` can run it: a [`row_level`] with at most
/// [`CARRIED_STREAMS`] streams, whose tile [`carries`], from whole source
/// rows (`y.ss` the `x.count` units of a row: the kernel takes no source
/// stride for `y`, which a strided input's plan need not have).
pub(super) fn carry_level(loops: &[Loop], unit: usize, isa: Isa) -> Option<usize> {
    let n = loops.len();
    let (level, streams) = row_level(loops, unit)?;
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let src_row = y.ss == (x.count * unit) as isize;
    (src_row && carries(x, y, unit, isa) && streams <= CARRIED_STREAMS).then_some(level)
}

/// Whether the carried kernels of `isa` run a deinterleaving tile of loops
/// `x` (the streams of a group) and `y` (a row of each): 2 to 4 streams
/// ([`vector_streams`]), below AVX512-VBMI a line multiple apart (joined in
/// the source, one offset in a line for the group), of units of 1 to 8
/// bytes (16 below VBMI; with it, units of other sizes too,
/// `kernels::any_units::AnyUnits::groups_step`), rows of at least 64 bytes.
fn carries(x: &Loop, y: &Loop, unit: usize, isa: Isa) -> bool {
    let units = matches!(unit, 1 | 2 | 4 | 8)
        || (unit == 16 && isa < Isa::Avx512Vbmi)
        || (isa >= Isa::Avx512Vbmi && AnyUnits { size: unit, b: x.count }.groups_step().is_some());
    vector_streams(x.count, isa)
        && (isa >= Isa::Avx512Vbmi || x.ds.unsigned_abs().is_multiple_of(64))
        && units
        && y.count * unit >= 64
}

/// The [`CopyPlan::carry_level`] of a streaming tile that deinterleaves
/// padded source rows (OpenVINO's space-to-batch of NCHW tensors padded on
/// W, or on H alone): its inner loop's window, if it has one, covers a run
/// of each source row (`p = x + nx * y`, the padded position along the
/// row), the loop between the level and the tile (the stream groups, the
/// block rows) may have a window on the level's index (rows wholly
/// padding), one of the two has one, and the level none; the rows of every
/// group fit [`PADDED_ROWS_BYTES`]. The carried kernel reads the rows in
/// place, making up the padding where a read meets it (`kernels::carried::Padding`);
/// where it cannot (streams or units not aligned in the destination), the
/// executor copies the rows, padded, into a buffer and runs it on whole
/// rows from there.
pub(super) fn padded_carry_level(loops: &[Loop], unit: usize, isa: Isa) -> Option<usize> {
    let n = loops.len();
    if n < 3 {
        return None;
    }
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let row = y.count * unit;
    let src_row = y.ss == (x.count * unit) as isize
        && y.window.is_none_or(|w| w.outer == Some((n - 2) as u8) && w.oc == 1 && w.ic == x.count as i64);
    if !src_row {
        return None;
    }
    let level = (n.saturating_sub(4)..n - 2).rev().find(|&j| loops[j].ds == row as isize)?;
    // The stream groups' loop, if there is one between the level and the tile.
    let groups = (level + 1 < n - 2).then(|| &loops[level + 1]);
    if groups.is_some_and(|g| g.is_outer || g.window.is_some_and(|w| w.outer != Some(level as u8))) {
        return None;
    }
    if y.window.is_none() && groups.is_none_or(|g| g.window.is_none()) {
        // Not padded: `carry_level`'s.
        return None;
    }
    let groups = groups.map_or(1, |g| g.count);
    // Padded rows are read in place by the joined kernel, with
    // AVX512-VBMI too (AVX-512's, which also takes 16-byte units: NHWC
    // space-to-batch of 16 bytes a pixel padded on W); with VBMI, units of
    // other sizes by their gathers' masked reads (measured, ratio to
    // memcpy, 2 runs alternating: NHWC space-to-batch by 3 and 4 padded on
    // H and W, three uint8, float16 and float32 channels, 1.34-1.70 ->
    // 1.02-1.27; staged instead, 1.58-1.98).
    let fits = loops[level].window.is_none()
        && (carries(x, y, unit, isa) || carries(x, y, unit, isa.min(Isa::Avx512)))
        && groups.saturating_mul(x.count) <= CARRIED_STREAMS
        && groups.saturating_mul(row * x.count) <= PADDED_ROWS_BYTES;
    fits.then_some(level)
}

/// Whether the vector kernels of `isa` (below the carried ones of
/// AVX512-VBMI) split or zip `b` streams of a tile: 2 and 4 with every
/// vector, 3 with AVX2's byte shuffles.
pub(super) fn vector_streams(b: usize, isa: Isa) -> bool {
    match b {
        2 | 4 => isa != Isa::Portable,
        3 => isa >= Isa::Avx2,
        _ => false,
    }
}

/// Whether `kernels::interleave_carried::interleave_carried` takes the units of an interleaving
/// tile (`x` its units, `y` its streams): 1 to 8 bytes (its own kernels),
/// or units of other sizes that it gathers (`kernels::any_units::AnyUnits`) from 3 or 4
/// streams, or from 2 that are consecutive source rows (space-to-depth by
/// 2) or cropped at the rows' ends (a window on the streams). Two streams
/// of those elsewhere measured faster through the older kernels: NHWC
/// batch-to-space by 2 of three uint8, float16 and float32 channels,
/// cropped or not, 4 runs alternating, medians 0.60-0.97x memcpy so,
/// 0.76-1.07 gathered; space-to-depth by 2 of them 1.11-1.26 through the
/// byte-shuffle kernel or the cache, 0.88-1.06 gathered. With the kernels
/// of whole groups (`kernels::interleave_carried::interleaved_groups`), uncropped batch-to-space
/// by 2 still measured faster without (0.65-0.66 -> 0.73-0.80, 2 runs),
/// and cropped faster with (6 NHWC and OpenVINO workloads, 2 runs
/// alternating, geomean 0.849 -> 0.800 on one thread, 0.849 -> 0.728 on
/// two, where the cropped NHWC ones had stored through the cache).
pub(super) fn interleave_units(x: &Loop, y: &Loop, unit: usize) -> bool {
    matches!(unit, 1 | 2 | 4 | 8)
        || (AnyUnits { size: unit, b: y.count }.groups_step().is_some()
            && (y.count > 2 || y.window.is_some() || x.count.checked_mul(unit).is_some_and(|row| y.ss == row as isize)))
}

/// The [`CopyPlan::carry_level`] of a streaming interleaving tile plan in
/// the destination's order, if `kernels::interleave_carried::interleave_carried` can run it: 2 to
/// 4 streams (the tile's inner loop) of at least 64 bytes each per row (its
/// outer loop) of units that [`interleave_units`] takes, inside a loop
/// stepping one
/// destination row (`ds` the row's bytes), itself perhaps inside a loop
/// stepping all of its rows, neither carrying a window: the destination
/// rows are one run.
pub(super) fn interleave_carry_level(loops: &[Loop], unit: usize) -> Option<usize> {
    let n = loops.len();
    if n < 3 {
        return None;
    }
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let row = x.count * y.count * unit;
    let fits = x.ds == (y.count * unit) as isize
        && matches!(y.count, 2..=4)
        && interleave_units(x, y, unit)
        && x.count * unit >= 64
        && loops[n - 3].ds == row as isize
        && free(&loops[n - 3]);
    if !fits {
        return None;
    }
    let rows = loops[n - 3].count * row;
    Some(if n >= 4 && loops[n - 4].ds == rows as isize && free(&loops[n - 4]) { n - 4 } else { n - 3 })
}

/// The [`CopyPlan::carry_level`] of a streaming tile plan in the
/// destination's order whose source rows each split into consecutive
/// destination segments, one of each of the `x.count` streams that
/// `kernels::carried::deinterleave_carried` splits the row into, row by row: the
/// tile's outer loop `x` steps a unit in the source (`x.ss == unit`) and a
/// segment in the destination (`x.ds`, the segment's bytes), its inner
/// loop `y` the row's `x.count` units (`y.ss == x.count * unit`), and the
/// loop around them, with no window, a row's segments: NHWC
/// depth-to-space of three-channel pixels, whose units (`b * c`
/// elements) have no kernel of their own (`kernels::any_units::AnyUnits`; the others
/// stream as a tile). A whole source row is read once for its segments
/// (measured, ratio to memcpy, 2 runs alternating: by 3 and 4 of three
/// uint8, float16 and float32 channels and four uint8 by 3, 1.20-1.62 ->
/// 0.87-1.11; gathering each segment from the row, which then reads the
/// row once a segment, 1.26-1.57 at best).
pub(super) fn segments_carry_level(loops: &[Loop], unit: usize, isa: Isa) -> Option<usize> {
    let n = loops.len();
    if n < 3 {
        return None;
    }
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let seg = y.count.checked_mul(unit)?;
    let fits = isa >= Isa::Avx512Vbmi
        && AnyUnits { size: unit, b: x.count }.groups_step().is_some()
        && x.ss == unit as isize
        && x.ds == seg as isize
        && y.ss == (x.count * unit) as isize
        && y.window.is_none()
        && seg >= 64
        && x.count.checked_mul(seg).is_some_and(|r| loops[n - 3].ds == r as isize)
        && free(&loops[n - 3]);
    fits.then_some(n - 3)
}
