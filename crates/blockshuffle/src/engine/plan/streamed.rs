//! Which tiles that a plan would stream store through the cache instead:
//! the interleaving tiles whose kernel, streamed, is slower than the
//! kernel that takes them through the cache
//! ([`interleave_through_cache`]), and the kernel a tile's shape gets
//! ([`tile_choice`]), which that rule compares; and which of those
//! through the cache stream after all, built in the stage
//! ([`streams_staged`]).
//!
//! Layer: plan; imports its sibling [`rules`](super::rules) (the rows an
//! interleave reads), kernels (the tile's choice of kernel, the stage's
//! size) and arch (the size from which outputs stream).

use super::rules::{interleaved_rows, open_interleaved_rows, MAX_STREAMED_INTERLEAVE_ROWS};
use crate::engine::arch::cache::cpu_stream_threshold;
use crate::engine::arch::mem::LINE;
use crate::engine::arch::Isa;
use crate::engine::kernels::bytes::STAGE;
use crate::engine::kernels::copy::Mode;
use crate::engine::kernels::nest::{Loop, Rows};
use crate::engine::kernels::tile::{self, TileChoice, TileShape};
use crate::engine::kernels::transpose;

/// Whether the interleaving tile of the last two of `loops` (in the
/// destination's order; `shuffled`: its rows go by the byte shuffles'
/// streamed rows, `rules::streams_shuffled_rows`), in a plan that
/// streams, stores through the cache instead, in the order and with the
/// repetitions of a plan through the cache (`CopyPlan::build`, step 4''';
/// past the caches, staged in that order, step 4'''').
///
/// One that only the stage would stream (`tile::TileChoice::staged`:
/// more than 4 streams, or units with no interleave of their own, and no
/// full-line squares). Streamed, in the destination's order, each
/// destination run gathers a unit of every source row of every
/// repetition inside it (OpenVINO depth-to-space by 6: 36 source rows a
/// step; ONNX by 13: 169), more streams than the prefetchers follow, and
/// then makes a second pass over the stage. Measured on an AMD EPYC (Zen
/// 3, AVX2), one thread, each workload's best of 2 alternated runs, with
/// the destination written in place (step 4'''): the 58 broad workloads
/// of seeds 801 and 802 (outputs of 16 MiB and more) it changes, 0.76 of
/// the time, none slower (ONNX CRD depth-to-space of uint8 by 13, 111
/// MiB, 3.4 -> 1.4x memcpy). Not the interleaves of 2 to 4 streams that
/// stream themselves: through the cache, W8 and W9 of the public
/// benchmark (pixel shuffle and depth-to-space of float32 by 2) took 1.3
/// times as long; nor the full-line squares' (HPTT's transposes: 1.14).
///
/// One that its own vector kernel would stream (2 to 4 streams) from more
/// source rows a destination run than [`MAX_STREAMED_INTERLEAVE_ROWS`]; or
/// that the byte shuffles would stream (`shuffled`) keeping more source rows
/// open than that (`rules::open_interleaved_rows`: where a loop further out
/// continues the rows, so that each run reads a part of each). The byte
/// shuffles' had streamed from any number: on an AMD EPYC (Zen 5), one
/// thread, 4 alternated runs, paired per-round ratios, the two such plans of
/// broad seeds 26 and 801 to 808 (TF batch-to-space of 12-byte units by 4,
/// 16 rows a run, 26 MiB: 3.5 -> 1.4x memcpy; einops `b c (h p1) (w p2) ->
/// (b h w) (p1 p2) c` of 3-byte units by 7 x 8, 62 MiB: 5.6 -> 2.4x), 0.43
/// and 0.44 of the time, and two TF batch-to-space by 4 drawn to reach it
/// (6- and 12-byte units, 25 MiB), 0.60 and 0.40.
///
/// One of units under 4 bytes that streamed only the tile's own kernels
/// would take, a unit at a time, where through the cache the byte
/// permutes take it (64 bytes a permute; they decline streamed tiles):
/// deinterleaves of 5 and 6 streams of 2-byte units into long rows
/// (OpenVINO space-to-depth and space-to-batch of a 1-D image). Measured
/// on an AMD EPYC (Zen 4), one thread, two sets of alternated runs, the 4
/// such plans of outputs of 8 MiB and more of broad seeds 26 and 801-806:
/// 0.43 to 0.59 of the time (OpenVINO space-to-depth of float16 by 5, 77
/// MiB, 2.62 -> 1.13x memcpy). The 3 of 4-byte units the same would take
/// measured 0.86 to 1.18, no more than their noise (1.12 and 1.16
/// between runs of the same plans): they stream.
///
/// One, of any unit, that streamed the transpose's squares would take,
/// where through the cache the byte permutes take it: interleaves of 16
/// to 30 streams of 1- to 8-byte units (TF NCHW_VECT_C and ONNX
/// depth-to-space and pixel shuffle by 16, numpy and einops rearranges
/// that move an axis of 16 to 30 last). Measured on an AMD EPYC (Zen 4),
/// one thread, 5 alternated runs, the 18 such plans of outputs of 8 MiB
/// and more of broad seeds 26 and 801-806 (all the plans this changes
/// there; the public and `transpose.json` plans do not change): 0.74 of
/// the time, 17 faster by more than 5%, none slower (einops `b c (h p1)
/// (w p2) -> (b h w) (p1 p2) c` of 16 uint8 channels, 100 MiB, 3.7 ->
/// 1.8x memcpy; TF batch-to-space of float16 by 16, 9 MiB, 4.2 -> 2.6);
/// two threads (3 runs), 0.78. Held out, the 11 such plans of seeds 807
/// to 810: 0.69 of the time, all faster (OpenVINO batch-to-space of uint8
/// by 12 x 3 x 16 cropped, 12 MiB, 7.9 -> 2.7x). Not measured on an
/// Intel Xeon, where two of them streamed were (ONNX depth-to-space of
/// float16 by 16 and that einops rearrange: see
/// `repetitions::repeat_source_rows`) but not through the cache. Not
/// those whose streams crowd the first-level cache's sets, which the
/// permutes decline through the cache where the transpose takes them
/// (`tile::choice`'s `spread`): those go as their streamed kernel has
/// them (einops `b c h w -> b h w c` of 16 MiB, planes of 64 x 64 units,
/// 20 to 32 channels: 0.42 to 0.90 of the time through the cache by the
/// permutes, but uint8 in 20 channels, 1.19).
///
/// One that streamed the register transposes' deinterleave would
/// take, where through the cache the byte permutes take it:
/// deinterleaves of 5 to 15 streams of bytes into long rows (OpenVINO
/// space-to-depth and space-to-batch, TF space-to-batch-ND, of a 1-D
/// image of uint8). Measured on an AMD EPYC (Zen 4), one thread, 5
/// alternated runs, the 6 such plans of outputs of 8 MiB and more of
/// broad seeds 26 and 801-810 (all it changes there, and none of the
/// public or `transpose.json` plans): 0.86 of the time, 5 faster by more
/// than 5% (OpenVINO space-to-depth by 5, 20 MiB, 1.65 -> 1.15x memcpy),
/// one slower (OpenVINO space-to-batch by 15, 46 MiB, 1.01 -> 1.20; 1.04
/// in a second set of 5); two threads (3 runs), 0.85.
pub(super) fn interleave_through_cache(loops: &[Loop], unit: usize, isa: Isa, shuffled: bool) -> bool {
    let Some(y) = loops.last() else { return false };
    let streamed = tile_choice(loops, unit, Mode { nt: true, isa, fetch: true });
    let many = if shuffled {
        open_interleaved_rows(loops, unit) > MAX_STREAMED_INTERLEAVE_ROWS
    } else {
        tile::own_interleave(isa, y.count, unit) && interleaved_rows(loops, unit) > MAX_STREAMED_INTERLEAVE_ROWS
    };
    let permuted = || {
        streamed.is_some_and(|c| c.transposes() || c.deinterleaves() || (unit < 4 && c.own()))
            && tile_choice(loops, unit, Mode { nt: false, isa, fetch: true }).is_some_and(|c| c.permutes())
    };
    many || streamed.is_some_and(|c| c.staged()) || permuted()
}

/// Whether the tile of the last two of `loops`, of [`packed`] units (3, 6
/// and 12 bytes), streamed goes in the transpose's full-line squares, four
/// squares down the rows a step so that each destination row takes whole
/// lines (the streamed tile's kernel, [`tile_choice`]: `transpose::takes`
/// of its matrix, repetitions included, with AVX512-VBMI): then it streams
/// so, where otherwise it would store through the cache or be tried in
/// the carried kernels of any units (`kernels::any_units`).
///
/// [`packed`]: transpose::packed
pub(super) fn streams_packed_squares(loops: &[Loop], unit: usize, isa: Isa) -> bool {
    transpose::packed(unit)
        && tile_choice(loops, unit, Mode { nt: true, isa, fetch: true }).is_some_and(|c| c.transposes())
}

/// The kernel of the tile of the last two of `loops` (`x`, contiguous in
/// the source, and `y`, in the destination), repeated along the loop
/// around them if there is one: the tile the executor runs for each index
/// of the loops outside it, where no window or division among threads
/// cuts that loop (a tile of another shape chooses for itself; see
/// `tile::TileChoice` for what choosing once saves). `None` where `y`
/// carries a window (the tile runs in parts).
pub(super) fn tile_choice(loops: &[Loop], unit: usize, m: Mode) -> Option<TileChoice> {
    let [.., x, y] = loops else { return None };
    if y.window.is_some() {
        return None;
    }
    let rows = match loops {
        [.., r, _, _] => Rows::of(r),
        _ => Rows::ONE,
    };
    Some(TileChoice::of(TileShape::of_loops(rows, x, y, unit, m)))
}

/// Destination bytes from which an interleaving tile that only the stage
/// streams (`tile::TileChoice::staged`) streams after all, in the order
/// of a plan through the cache ([`streams_staged`]): twice the size from
/// which outputs stream at all (`arch::cache::cpu_stream_threshold`, from
/// this CPU's last-level cache: 32 MiB where that is 64 MiB or more or not
/// known, 16 MiB for 32 MiB).
///
/// Measured on an Intel Xeon (Emerald Rapids, L3 260 MiB: outputs stream
/// from 16 MiB), one thread, the 193 such plans of broad seeds 26 and 801
/// to 806 that [`streams_staged`] takes but for their size, 3 alternated
/// runs, time streamed over time through the cache: outputs of 16 to 32
/// MiB 1.05 (14 of 32 slower by more than 5%; the caches still hold much
/// of them), 32 to 48 MiB 0.88, 48 to 64 MiB 0.80, 64 MiB and more 0.74
/// to 0.77. On an AMD EPYC (Zen 4, L3 32 MiB: outputs stream from 8 MiB),
/// the plans of 16 to 32 MiB it takes from 16 MiB, medians of 5
/// alternated runs: seeds 26 and 801-804, 21 plans, 0.96 (12 faster by
/// more than 5%, 6 slower, at most 1.31); seeds 805-808, 14 plans, 0.91
/// (7 faster, 3 slower, at most 1.14).
pub(super) fn staged_stream_bytes() -> usize {
    2 * cpu_stream_threshold()
}

/// Most source rows a push of the stage (`kernels::bytes::STAGE`) of a
/// staged interleave may read ([`streams_staged`]): its streams, times
/// the repetitions that fill the stage where they continue the
/// destination's run and not the source's rows. Past it, more rows than
/// the prefetchers follow (3 alternated runs, the plans of seeds 26, 801
/// and 802 of 8 KiB runs and more reading 17 to 120 rows a push: 5 of 7
/// slower, 1.04 to 1.25 of the time, PyTorch pixel shuffle of float64 by
/// 13 of 11-unit rows, 91 rows a push, 1.47 -> 1.85x memcpy; 2 faster,
/// 0.76 and 0.90).
pub(super) const MAX_STAGED_ROWS: usize = 16;

/// Fewest bytes of a destination run that ends where the tile's row does
/// (the loop just around the tile does not continue it, as in NCHW
/// depth-to-space and pixel shuffle, whose tile rows continue the source's
/// rows instead; or there is no such loop) that [`streams_staged`] streams:
/// 32 lines, so that the partial lines at its two ends, stored through
/// the cache, hold under 128 of its 2,048 bytes. A run that the loop
/// around the tile continues streams from a stage ([`STAGE`]) as before,
/// cropped (a window on it, as batch-to-space's block rows) or not: the
/// cropped ones measured below; the others, whose runs join into one of
/// a stage or more, not measured again.
///
/// Measured on an AMD EPYC (Zen 4), one thread, medians of 4 alternated
/// runs (2 in each order), time streamed over time through the cache: the
/// plans it changes among the outputs of 16 MiB and more of broad seeds
/// 26 and 801-806 (NCHW and NCHW_VECT_C depth-to-space of TF, ONNX and
/// OpenVINO, and pixel shuffle, but for 2 TF batch-to-space-ND and an
/// einops rearrange), 103 plans, 0.81 (90 faster by more than 5%, the
/// most TF NCHW depth-to-space of float16 by 8, 102 MiB, 1.77 -> 0.94x
/// memcpy; 3 slower); held out, those of seeds 807-810, 61 plans, 0.83
/// (44 faster, 4 slower, the worst TF batch-to-space of uint8 by 11,
/// uncropped, 26 MiB, 1.14 -> 1.40); two threads (2 runs), 0.87 (the
/// 103) and 0.85 (the 61). Probed lower, runs of 1 to 2 KiB were mixed
/// (22 plans, 0.97: 8 slower, the worst PyTorch pixel shuffle of float16
/// by 7 of 75-unit rows, 143 MiB, 1.49 -> 2.55x), and so were runs from 2
/// KiB that cropped repetitions continue (OpenVINO and TF
/// batch-to-space, 11 plans, 1.09: 9 slower).
pub(super) const MIN_STAGED_RUN: usize = 32 * LINE;

/// Whether the interleaving tile of the last two of `loops` (in the order
/// and with the repetitions of a plan through the cache: step 4''' of
/// `CopyPlan::build`), of a `dst_bytes` output, streams through the stage
/// (`tile::TileChoice::staged`) into the line writers rather than storing
/// through the cache: each destination run it writes (a tile's rows,
/// with the repetitions around it where they continue them and no window
/// crops them) long enough that the partial lines at its ends, which the
/// writers store through the cache, are a small share of it (a stage, or
/// [`MIN_STAGED_RUN`] where the loop around the tile does not continue
/// it), from at most [`MAX_STAGED_ROWS`] source rows a push, in an output
/// of [`staged_stream_bytes`] and more. Streaming then saves reading
/// every destination line before it is written, more than the stage's
/// second pass over the bytes costs. What it buys is measured at the
/// planner's step that asks it (`CopyPlan::build`, step 4'''') and at
/// [`MIN_STAGED_RUN`].
pub(super) fn streams_staged(loops: &[Loop], unit: usize, dst_bytes: usize) -> bool {
    let n = loops.len();
    let (x, y) = (&loops[n - 2], &loops[n - 1]);
    let Some(run) = x.count.checked_mul(y.count).and_then(|c| c.checked_mul(unit)) else { return false };
    if run == 0 || x.ds != (y.count * unit) as isize || dst_bytes < staged_stream_bytes() {
        return false;
    }
    // The repetitions around the tile that continue its destination run,
    // and of them those that lengthen it (not those a window crops: its
    // ends are not the run's).
    let continued = loops[..n - 2].last().filter(|r| r.ds == run as isize);
    let reps = continued.filter(|r| r.window.is_none());
    let whole_run = reps.map_or(run, |r| run.saturating_mul(r.count));
    // A push reads the tile's streams of every repetition in it, unless the
    // repetitions continue the tile's source rows (the same rows read on).
    let per_push = reps.filter(|r| r.ss != (x.count * unit) as isize).map_or(1, |r| r.count.min((STAGE / run).max(1)));
    // Keyed on `continued`, not `reps`: below a stage,
    // `kernels::tile::staged_tile` would push `STAGE / run` cropped
    // repetitions at once, more rows than `per_push` (1) counts; and from
    // 2 KiB they measured slower (see `MIN_STAGED_RUN`).
    let least = if continued.is_some() { STAGE } else { MIN_STAGED_RUN };
    whole_run >= least && y.count.saturating_mul(per_push) <= MAX_STAGED_ROWS
}
