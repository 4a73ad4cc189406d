//! Which streaming plans' long units go through the line writers
//! (`kernels::lines`), a few destination streams advancing together a
//! unit at a time ([`takes_lines`]); which stream by themselves instead
//! ([`streams_regions`], [`streams_long_units`]) or as rows the source's
//! order scatters ([`scatters_rows`]); and which rows gathered into the
//! destination go through the writers rather than row by row
//! ([`gathers_far_apart`]).
//!
//! Layer: plan; imports [`order`](super::order) (the move to the source's
//! order, and the run it keeps), [`rules`](super::rules) (which rows
//! scatter, which units stream) and kernels (the loop nest's data, the
//! streamed copy's regions); never exec or [`compile`](super::compile).

use arrayvec::ArrayVec;

use super::order::{free, source_order_outside_run, MIN_DST_RUN};
use super::rules::{scatters_gathered_rows, streams_units, whole_vectors};
use crate::engine::kernels::bytes::REGION_MIN;
use crate::engine::kernels::nest::{Loop, MAX_LOOPS};

/// Smallest unit (bytes) that streaming plans write through the line
/// writers. Below it a run costs more than it moves (measured, 64-byte
/// units: NHWC space-to-batch with 16 float32 channels 1.8-2.4x memcpy
/// through the writers, 0.95-0.98x through the cache), unless the units
/// are read far apart ([`MIN_FAR_LINES_UNIT`]).
const MIN_LINES_UNIT: usize = 128;

/// Smallest unit (bytes) that streaming plans write through the line
/// writers where the innermost loop is a row gathered into the
/// destination (its units one after another there) from units
/// [`FAR_LINES_APART`] or more apart in the source (space-to-batch and
/// NHWC depth-to-space by 11 to 16, say), whether its units are whole
/// vectors or not: read row by row, the source is read once for each
/// block position, a unit in every 11 or more.
///
/// Measured on an AMD EPYC (Zen 4), one thread, 3 alternated runs, time
/// after over before, units of 64 to 127 bytes: the broad workloads of
/// seeds 26 and 801-810 whose last loop reads units 9 or more apart (from
/// which the rule was drawn), 23: 11 or more apart, 16, 0.50, one slower
/// (a TF space-to-batch of 96-byte units by 16, 245 MiB, 1.30); 9 and 10
/// apart, 7, 1.04 (0.45 to 1.82). Held out, seeds 811 to 816, the 11 it
/// takes (TF space-to-batch, space-to-batch-nd and NHWC depth-to-space of
/// 64- to 96-byte units by 11 to 16), 0.48, every one faster (a TF
/// space-to-batch of 96-byte units by 16, 3.55 -> 1.33x memcpy). Not
/// smaller units: of 32 to 48 bytes 11 or more apart (seeds 801-803 and
/// 805, 15), 1.9 times the time, 3 faster.
const MIN_FAR_LINES_UNIT: usize = 64;

/// The fewest units apart [`MIN_FAR_LINES_UNIT`] takes.
const FAR_LINES_APART: usize = 11;

/// Whether a streaming plan's `unit`-byte units, in `loops` (before they
/// are ordered for the writers), may go through the line writers
/// (`CopyPlan::build`, step 4''): from [`MIN_LINES_UNIT`] (or
/// [`MIN_FAR_LINES_UNIT`], read far apart), but not units that are whole
/// regions ([`streams_regions`]), long units of whole vectors that
/// stream in the source's order ([`streams_long_units`]) or rows that it
/// scatters ([`scatters_rows`]).
pub(super) fn takes_lines(loops: &ArrayVec<Loop, MAX_LOOPS>, unit: usize) -> bool {
    let far = unit >= MIN_FAR_LINES_UNIT && gathers_apart(loops, unit, FAR_LINES_APART);
    (unit >= MIN_LINES_UNIT || far)
        && !streams_regions(unit)
        && !streams_long_units(loops, unit)
        && !scatters_rows(loops, unit)
}

/// Whether the innermost of `loops` gathers a row of `unit`-byte units
/// into the destination (one after another there) from units at least
/// `apart` units apart in the source.
fn gathers_apart(loops: &[Loop], unit: usize, apart: usize) -> bool {
    loops.last().is_some_and(|row| row.ds == unit as isize && row.ss.unsigned_abs() >= apart.saturating_mul(unit))
}

/// Whether the innermost of `loops`, a row of `unit`-byte units gathered
/// into the destination (`rules::streams_gathered_rows`), reads units at
/// least [`FAR_APART`] units apart: such rows of units from
/// [`MIN_LINES_UNIT`] then go through the line writers where they would
/// take them otherwise ([`takes_lines`] and `order::stream_order`;
/// `CopyPlan::build`, step 4''), in the source's order, rather than each
/// row streaming out by itself. (Shorter units, read apart as far as
/// [`takes_lines`] asks of them, likewise; others go as before.)
/// Gathered row by row, the source is read once for each unit a row
/// skips (a block position), a unit in every [`FAR_APART`] or more of each
/// pass, every line between them fetched by the prefetchers all the same;
/// through the writers, once, a unit to each of as many streams in turn.
///
/// Measured on an AMD EPYC (Zen 4), 3 to 5 alternated runs, time after
/// over before, on the broad workloads it changes (TF space-to-batch and
/// space-to-batch-nd with and without padding, NHWC depth-to-space, by 9
/// to 16; units of 128 to 224 bytes): seeds 26, 802, 805 and 806 (from
/// which the rule was drawn: through the writers, rows of units 8 apart
/// took 0.90 and 1.03 the time, 7 apart 1.37 and 0.69, 5 apart 1.46, 1
/// apart 1.9 to 2.1), 11, 0.55, 10 faster by more than 5%, 1 slower (a TF
/// space-to-batch of 192-byte units by 11, 38 MiB, 1.07); held out, seeds
/// 801, 803, 808 and 810, 6, 0.64, 5 faster, 1 slower (a TF space-to-batch
/// of complex128 by 13 with padding, 13 MiB, 1.24; two threads 1.13).
/// Two threads, 7 of the first, 0.56 (a TF space-to-batch of float16 by
/// 12 with padding, 12 MiB, 2.64 -> 1.19x memcpy).
pub(super) fn gathers_far_apart(loops: &[Loop], unit: usize) -> bool {
    gathers_apart(loops, unit, FAR_APART)
}

/// The fewest units apart that [`gathers_far_apart`] takes.
const FAR_APART: usize = 9;

/// Whether units of `unit` bytes each stream by themselves, as a region
/// of four quarters copied in turn (`kernels::bytes::copy_bytes`, from
/// [`REGION_MIN`]), rather than through the line writers, whose streams
/// each copy a run a line after another: units of whole 16-byte vectors
/// (`rules::streams_units`) from 16 KiB.
///
/// Measured on an AMD EPYC (Zen 4), one thread, 3 alternated runs, time
/// after over before: the 12 broad workloads of seeds 26, 802, 804 and
/// 805 it changes, 0.51 to 0.89, geomean 0.74 (TF space-to-batch-nd of
/// 64 KiB units, 1.16 -> 0.59x memcpy; einops of 51,744-byte units, 1.10
/// -> 0.60; TF NHWC depth-to-space of 30,720-byte units, 1.01 -> 0.70);
/// held out, the 18 of seeds 801, 803 and 806-810, 0.82, 16 faster by more
/// than 5%, 2 slower (TF space-to-batch-nd of 32 KiB units with zero
/// padding, 12 and 158 MiB, 1.33 and 1.24 the time, where another such,
/// 26 MiB, took 0.81). Not units of other lengths, which would store
/// through the cache (einops of 42,876-byte units, 1.22 times the time).
pub(super) fn streams_regions(unit: usize) -> bool {
    unit >= REGION_MIN && streams_units(unit)
}

/// Whether units of `unit` bytes, whole 16-byte vectors from
/// `order::MIN_DST_RUN` (4 KiB, where `rules::reads_units_apart` stops:
/// shorter ones of whole vectors from 512 bytes that the source's order
/// would write each apart go through the writers in an order of their
/// own), in free loops (`order::free`: no window), stream by themselves
/// in the source's order (`CopyPlan::build`, step 4'), each unit a
/// destination run of its own, rather than through the line writers: the
/// source is then read once, a unit after another, each unit's streaming
/// stores whole lines of its own, where the writers read a unit from each
/// of as many source streams in turn as they write (NHWC space-to-depth
/// by 16: 16 streams).
///
/// Measured on an AMD EPYC (Zen 4), one thread, 3 alternated runs, time
/// after over before, on the broad workloads whose units of 4 KiB to 16
/// KiB went through the writers: seeds 26 and 801-805 (from which the rule
/// was drawn), the 20 it takes, 0.74, every one faster by more than 5%
/// (NHWC space-to-depth of 6,144-byte units by 16, 1.46 -> 0.75x memcpy;
/// numpy transpositions of 8,448- and 10,752-byte runs, 0.46 and 0.50 the
/// time); held out, seeds 806-810, the 17 it takes, 0.70, every one
/// faster. Not plans that carry a window (the 26 of seeds 26, 801-803
/// and 805 with whole-vector units of 1 KiB to 16 KiB: 1.17, padded
/// space-to-batch-nd up to 2.7 times the time). Units of 1 to 4 KiB whose
/// loops the source's order rearranges, or keeps each unit continuing the
/// source innermost, measured faster so here too (25 of those seeds,
/// 0.80; HPTT's float64 row transposes `[384, 384, 368]` and `[2307, 64,
/// 368]` by axes `1, 0, 2`, 1.16 -> 0.87 and 0.76x memcpy), but an Intel
/// Xeon measured those two the other way (`rules::reads_units_apart`);
/// where it keeps a row gathered into the destination innermost (among
/// more streams than it leaves open: `order::source_order_outside_run`),
/// slower (TF batch-to-space-nd of 1,536-byte units by 3 of 5,996
/// positions, 0.60 -> 0.81x memcpy: the writers fetch its far units
/// ahead); units of 512 and 576 bytes up to 1.5 times the time.
pub(super) fn streams_long_units(loops: &[Loop], unit: usize) -> bool {
    unit >= MIN_DST_RUN && whole_vectors(unit) && loops.iter().all(free)
}

/// Whether the loops, their units in the source's order outside the
/// destination's run (`order::source_order_outside_run`, step 4'), are
/// rows that `rules::scatters_gathered_rows` takes, as units under
/// `rules::MANY_STREAMS_UNIT` do: each of 2 or 3 destination rows of 2
/// KiB and more is written by one run of streaming stores after another
/// (`kernels::grid`), rather than the writers' streams advancing
/// together a unit at a time.
///
/// Measured on an AMD EPYC (Zen 4), 5 alternated runs, time after over
/// before: W1 and W6 of the benchmarks (TF space-to-batch-nd 2x2 and
/// depth-to-space by 2 of 256-byte units, 128 MiB), one thread 0.78 and
/// 0.71, two threads 0.79 and 0.88; 8 NHWC space-to-batch-nd by 2 and 3
/// of 256- to 2,048-byte units (36-48 MiB), 0.82, none slower; the 4
/// broad workloads of seeds 801-810 it changes (TF space-to-batch and
/// NHWC depth-to-space by 2 and 3), 0.73 to 0.90.
///
/// Out of line: its copy of the loops then takes stack only when it runs
/// (streaming plans), not in every plan's compile.
#[inline(never)]
pub(super) fn scatters_rows(loops: &ArrayVec<Loop, MAX_LOOPS>, unit: usize) -> bool {
    if !whole_vectors(unit) {
        return false;
    }
    let mut ordered = loops.clone();
    source_order_outside_run(&mut ordered, unit);
    scatters_gathered_rows(&ordered, unit)
}
