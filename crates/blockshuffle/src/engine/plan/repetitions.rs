//! A tile's repetitions moved next to it: the loops around a transposing
//! tile whose repetitions continue its rows, so that its kernel runs them
//! as one ([`repeat_continuing`] through the cache, [`repeat_both`]'s
//! matrix), or so that its source is read in whole rows
//! ([`repeat_source_rows`], streamed); and a streamed matrix of many rows
//! in chunks of them across the loop that continues its source rows
//! ([`matrix_chunk`]).
//!
//! Layer: plan; imports [`order`](super::order) (loop predicates and
//! moves), [`rules`](super::rules) (`count_product`), kernels and arch;
//! never exec or [`compile`](super::compile).

use arrayvec::ArrayVec;

use super::order::{free, move_inward};
use super::rules::count_product;
use crate::engine::arch::cache::second_level;
use crate::engine::arch::mem::{LINE, PAGE};
use crate::engine::arch::Isa;
use crate::engine::kernels::nest::{Loop, MAX_LOOPS};
use crate::engine::kernels::transpose;

/// Most destination bytes one sweep of a tile's repetitions may write
/// when [`repeat_continuing`] moves their loop next to the tile: the loop
/// it moves past then comes back to the same destination lines once a
/// sweep, and finds them still in the second-level cache (512 KiB and more
/// on x86_64 cores since Zen 2 and Ice Lake; half of it is the source's).
const MAX_REPEATED_SWEEP: usize = 512 << 10;

/// Moves next to a tile (through the cache) a free loop around it whose
/// repetitions continue the tile's destination rows (`ds == ny * unit`)
/// or its source rows (`ss == nx * unit`), where the loop next to it does
/// neither: the tile's kernel then runs all those repetitions as one
/// matrix, or in one call (`tile::copy_tile`), instead of a small tile a
/// call. Only for a tile with no window, a loop of at least as many
/// repetitions as the one it replaces, and a sweep of the destination
/// that stays in the cache ([`MAX_REPEATED_SWEEP`]): the move trades the
/// destination's order for the source's.
///
/// Measured (one thread, 3 alternated runs of 15 repetitions, time after
/// over before) on the broad workloads it changes, all of them
/// interleaves whose loop next to the tile continued the destination
/// (channels-first depth-to-space, pixel shuffle, einops): seed 26, 38
/// workloads, 0.92; held out, seeds 801 and 802, 44 each, 0.78 and 0.85.
/// TF NCHW depth-to-space of float64 by 9 (2.3 MiB) 2.3 -> 0.9 ms; ONNX
/// DCR depth-to-space of float32 by 11 (6 MiB) 2.3 -> 1.2 ms; PyTorch
/// pixel shuffle of float32 by 13 (11 MiB) 5.2 -> 2.9 ms. The slowest,
/// NCHW_VECT_C depth-to-space by 7 of 0.1 to 0.7 MiB, measured up to 2x in
/// one build and 1.00-1.09 in the next (3 alternated runs of 51): the
/// layout of the code (`tile::zip_streams`' short hot loop), not the plan.
/// Left out, measured on the 99 of seed 26 that a move without these
/// limits changed: sweeps past the cache (NCHW depth-to-space of 3-byte
/// units by 2, 97 MiB, 1.27x the time), fewer repetitions than the loop
/// replaced (PyTorch pixel shuffle of complex128 by 15, 2.46).
///
/// Units the vector tile kernels do not take (3, 6, 12, 32, 48 bytes:
/// pixels of three channels and their blocks), once left out too (a
/// repetition at a time, 1.00 and up to 1.42), measured on an AMD Zen 3
/// (the same binary with and without them, 4 alternated runs of 5
/// repetitions, each workload's best) on the 104 broad workloads it
/// changes in seeds 26, 801 and 802: 0.83 of the time (each seed 0.82 to
/// 0.86; by element size, 3 bytes, 36 workloads, 0.73; 6 bytes, 36, 0.88;
/// 12 bytes, 16, 0.93; 32 bytes, 11, 0.83), their medians 0.84, 68 of
/// them faster by more than 5% and 18 slower: the tile's kernel is
/// chosen once a call, for all its repetitions. NCHW depth-to-space of
/// 3-byte units by 9 (14 MiB) 3.8 -> 1.6x memcpy; OpenVINO depth-to-space
/// by 5 (36 MiB) 5.5 -> 2.4x. The slowest (medians): OpenVINO
/// depth-to-space by 3 of 32-byte units (7 MiB) 1.8 -> 2.3x, TF
/// batch-to-space by 3 of three complex128 channels (1.1 MiB) 1.2 ->
/// 1.55x, PyTorch pixel shuffle by 2 of 3-byte units (29 MiB) 1.06 ->
/// 1.33x.
///
/// Past that sweep, where the tensors are `past_caches` (past the
/// second-level cache: [`past_second_level`]), a loop that continues the
/// source rows of a tile written as one destination run of at least
/// [`MIN_PIECE`] bytes still moves, where the loops inside it keep more
/// source streams open than the prefetcher follows ([`FOLLOWED_STREAMS`]):
/// the sweep then comes back only to the partial lines at each piece's ends,
/// and the source is read in the tile's rows' streams instead of one stream
/// a row of every tile in the sweep. Measured on an Intel Xeon (Emerald
/// Rapids; one thread, 3 alternated runs, best of 5, ratio to memcpy) on the
/// 188 broad workloads of seeds 26 and 801 to 807 it changes (channels-first
/// depth-to-space, pixel shuffle, batch-to-space; 16 to 252 MiB): 1.44 ->
/// 1.34, 0.93 of the time (held out, seeds 805 to 807, 69 of them: 0.93),
/// 135 over 1.10x against 170; 9 slower by 5 to 25% (the most, an ONNX
/// depth-to-space of 19 MiB whose runs before spread from 1.00 to 1.45). TF
/// NCHW_VECT_C depth-to-space of uint8 by 11 (27 MiB) 1.76 -> 0.94x memcpy;
/// TF NCHW of 6-byte units by 13 (17 MiB) 2.00 -> 1.13x. Not for tensors
/// whose source stays in the caches: on that Xeon the outputs of 1 to 16 MiB
/// that the move changed without this condition (then the plan's `streaming`
/// alone) measured no different, 8 of seed 26, 1.03 the time (5 alternated
/// runs), 9 of seeds 805 to 807, 0.99; see [`past_second_level`] for the
/// outputs between that cache and the streaming size.
pub(super) fn repeat_continuing(loops: &mut ArrayVec<Loop, MAX_LOOPS>, unit: usize, past_caches: bool) {
    let n = loops.len();
    if n < 4 {
        return;
    }
    let (x, y, u) = (loops[n - 2], loops[n - 1], unit as isize);
    if y.window.is_some() {
        return;
    }
    let continues = |l: &Loop| l.ds == y.count as isize * u || l.ss == x.count as isize * u;
    let next = loops[n - 3];
    if continues(&next) {
        return;
    }
    let tile = x.count * y.count * unit;
    // Past the sweep limit, for a source past the caches, a loop that
    // continues the source rows of a tile written as one run of at least
    // `MIN_PIECE` bytes (a loop that continues such a tile's destination
    // rows would write `x`'s bytes again: every loop it takes continues
    // the source rows), where the loops inside it keep more than
    // `FOLLOWED_STREAMS` source streams open.
    let past_sweep = past_caches && x.ds == y.count as isize * u && tile >= MIN_PIECE;
    let takes = |i: usize| {
        let l = &loops[i];
        free(l)
            && continues(l)
            && l.count >= next.count
            && (l.count.saturating_mul(tile) <= MAX_REPEATED_SWEEP
                || (past_sweep && opens_many_streams(&loops[i + 1..n - 2], &[y.count])))
    };
    let Some(r) = (0..n - 3).rev().find(|&i| takes(i)) else {
        return;
    };
    // A free loop moves inward: no window changes sides.
    move_inward(loops, r, n - 3);
}

/// Whether a plan's tensors are past the caches for [`repeat_continuing`]:
/// it streams (`streaming`: an output large enough to bypass the cache),
/// or its output of `dst_bytes` is larger than the second-level cache,
/// whose prefetcher then reads the source from the last level, in as many
/// streams as the loops keep open.
///
/// It was the plan's `streaming` alone. On an AMD EPYC (Zen 5, 1 MiB of
/// second-level cache, 32 MiB of L3; one thread, 4 alternated runs,
/// paired per-round ratios, time after over before), the outputs past
/// the second-level cache that do not stream, whose loop this moves: the
/// 6 of broad seeds 26 and 801 to 803, 0.71 of the time (OpenVINO
/// depth-to-space of float32 by 14, 7.8 MiB, 196 source streams: 2.46 ->
/// 1.49x memcpy), all faster; held out, the 11 of seeds 804 to 810, 0.76,
/// all faster (2.6 to 7.8 MiB). The Xeon's figures above (1.03 and 0.99)
/// say it costs nothing where a larger second level (2 MiB) and its
/// prefetcher keep up.
pub(super) fn past_second_level(streaming: bool, dst_bytes: usize) -> bool {
    past_cache(streaming, dst_bytes, second_level())
}

/// [`past_second_level`] for a second-level cache of `cache` bytes.
pub(super) fn past_cache(streaming: bool, dst_bytes: usize, cache: usize) -> bool {
    streaming || dst_bytes > cache
}

/// The fewest bytes of a tile written as one destination run for
/// [`repeat_continuing`] to move a loop that continues its source rows
/// past [`MAX_REPEATED_SWEEP`]: each repetition then writes a piece of
/// the destination alone, whose partial lines at both ends are read
/// again when the sweep comes back to the piece beside it. Measured on
/// an Intel Xeon (Emerald Rapids; one thread, 4 alternated runs, best of
/// 7) on the broad workloads of seed 26 whose pieces are shorter, 435 to
/// 1,920 bytes: 6 workloads, 1.07 to 1.43 the time (TF NCHW_VECT_C
/// depth-to-space of 840-byte pieces 1.23); from 2,184 bytes on, the
/// moves that the source streams call for (see [`FOLLOWED_STREAMS`])
/// gained.
const MIN_PIECE: usize = 2048;

/// Most source streams that the loops inside a loop continuing a tile's
/// source rows may keep open (each advancing a run a step) for
/// [`repeat_source_rows`], or [`repeat_continuing`] past its sweep, to
/// leave that loop where it is: about the streams the second-level
/// cache's prefetcher follows (32 on Intel's cores, one a 4 KiB page;
/// fewer on an AMD EPYC, Zen 5, below).
///
/// Streamed, OpenVINO depth-to-space of complex128 by 2 (58 MiB), whose
/// 4 source streams each read in order, took 1.25 times as long with its
/// loop moved (each 1,632-byte destination run is not whole lines: two
/// passes writing halves of the lines between them); the others moved
/// kept 128 streams and more open. Through the cache, past
/// [`repeat_continuing`]'s sweep (one thread, 3 alternated runs, best of
/// 5, time after over before, on an Intel Xeon, Emerald Rapids), the 168
/// broad workloads of seeds 26 and 801 to 804 whose loop such a move
/// would change: those whose loops read 4 streams 1.04 and 1.12; 25 to
/// 28 streams 1.01 (19 workloads, 5 slower by 5 to 16%); 36 to 64
/// streams 0.97 (41); 81 to 352 streams 0.91 (106).
///
/// It was 32, Intel's. On an AMD EPYC (Zen 5; one thread, 4 alternated
/// runs, paired per-round ratios, time after over before), the loops that
/// keep 17 to 32 streams open measured far slower where they are: the 14
/// broad workloads of seeds 26 and 801 to 803 that 16 moves (the same 14
/// as 8; streamed depth-to-space, pixel shuffle and batch-to-space, 8 to
/// 167 MiB), 0.70 of the time, none slower (OpenVINO depth-to-space of
/// 3-byte units by 12, 123 MiB, 1.96 -> 1.04x memcpy); held out, the 14
/// of seeds 804 to 808, 0.76, one slower (TF batch-to-space of 6-byte
/// units by 5, 96 MiB, 1.20 the time, its 25 streams of 16 KiB runs).
/// Intel's figures for 25 to 28 streams above (1.01) say the move costs
/// little where the prefetcher does follow them.
const FOLLOWED_STREAMS: usize = 16;

/// Whether a loop whose repetitions continue a tile's (or a matrix's)
/// source rows keeps more source streams open inside it than the
/// prefetcher follows ([`FOLLOWED_STREAMS`]): the tile's source rows (the
/// counts `rows`), times the repetitions of the loops `between` it and
/// the tile, each stream advancing a run a repetition of that loop.
fn opens_many_streams(between: &[Loop], rows: &[usize]) -> bool {
    count_product(between.iter().map(|l| l.count).chain(rows.iter().copied())) > FOLLOWED_STREAMS
}

/// Moves next to a streamed tile whose destination block is one run (its
/// rows continue one another: `x.ds == ny * unit`) the nearest free loop
/// around it whose repetitions continue the tile's source rows
/// (`ss == nx * unit`, stepping whole lines in the destination), where
/// the loops inside that loop keep more than [`FOLLOWED_STREAMS`] source
/// streams open (the tile's rows, times the repetitions between): the tile
/// and that loop then read one run of the source a source row (rather
/// than a tile's row, and the next part of those rows a sweep of the
/// loops inside later), and write a destination stream a repetition, each
/// in runs of a whole tile, that the loops outside continue. The
/// destination's order is otherwise kept (see `CopyPlan::build`, its
/// step 4). Through the cache, [`repeat_continuing`] does the same within
/// a sweep that stays in the cache; streamed, the destination's lines are
/// written whole and never come back, so there is no such limit.
///
/// This is HPTT's transposes of 4 to 6 axes, whose tile (two axes) is
/// small beside the source's contiguous block: `2,0,4,1,5,3` of `[15, 15,
/// 15, 32, 15, 32]` (float64, 400 MiB) reads 256-byte runs 3,840 bytes
/// apart so, 3,840-byte runs this way. Measured on an Intel Xeon
/// (Emerald Rapids, AVX-512), one thread, 3 alternated runs, best of 3,
/// ratio to memcpy: the 9 transposes of `transpose.json` it changes, 2.17
/// -> 1.83 (0.84 of the time; that one 3.13 -> 2.17, `1,3,0,4,2` of `[28,
/// 28, 48, 28, 48]` 2.80 -> 1.93), none slower; the 9 broad workloads of
/// seeds 26 and 801 to 804 it changes (depth-to-space, pixel shuffle,
/// batch-to-space; 4 alternated runs, best of 5), 2.08 -> 1.69 (0.81), none
/// slower (ONNX depth-to-space of float16 by 16, 43 MiB, 2.92 -> 1.41);
/// held out, the 9 of seeds 805 to 807, 2.75 -> 1.76 (0.64), none slower
/// (einops `b c (h p1) (w p2) -> (b h w) (p1 p2) c` of uint8 by 8 x 11,
/// 100 MiB, 12.7 -> 3.9). With VBMI, those two, interleaves of 16
/// streams that the byte permutes take through the cache, have since
/// stored through the cache (`streamed::interleave_through_cache`: 0.69
/// and 0.49 of the time streamed so on an AMD EPYC, Zen 4).
///
/// So for a matrix ([`repeat_both`], `matrix`: its four loops last), whose
/// destination rows are each one run: the loop that continues its source
/// rows (`ss` the bytes of `x` and the loop that continues `x`) goes next
/// to it. HPTT's reversals of 6 axes, whose matrix's source rows are
/// 1,280 bytes: `5,4,3,2,1,0` of `[112, 15, 15, 15, 5, 32]` 2.40 -> 1.99x
/// memcpy (3 alternated runs, best of 3; the other two 1.96 -> 1.77 and
/// 1.98 -> 1.81); no broad workload of seeds 26, 801 and 802 is such a
/// matrix.
pub(super) fn repeat_source_rows(loops: &mut ArrayVec<Loop, MAX_LOOPS>, unit: usize, matrix: bool) {
    let n = loops.len();
    // The loops of the tile (`x`, `y`), or of the matrix (the loop that
    // continues the source rows, the destination rows' one, `x`, `y`).
    let k = if matrix { 4 } else { 2 };
    if n < k + 2 {
        return;
    }
    let (x, y) = (loops[n - 2], loops[n - 1]);
    if y.window.is_some() || !matrix && x.ds != y.count.saturating_mul(unit) as isize {
        return;
    }
    let cols = if matrix { x.count.saturating_mul(loops[n - 4].count) } else { x.count };
    let row = cols.saturating_mul(unit) as isize;
    let takes = |l: &Loop| free(l) && l.ss == row && l.ds.unsigned_abs().is_multiple_of(LINE);
    let Some(r) = (0..n - k - 1).rev().find(|&i| takes(&loops[i])) else {
        return;
    };
    // The source rows of the tile (or of the matrix: `y`'s, and the
    // destination rows' loop's).
    let rows = if matrix { loops[n - 3].count } else { 1 };
    if !opens_many_streams(&loops[r + 1..n - k], &[y.count, rows]) {
        return;
    }
    // A free loop moves inward: no window changes sides.
    move_inward(loops, r, n - k - 1);
}

/// The repetitions of a streamed matrix's rows loop (see [`repeat_both`])
/// that exec runs together, a chunk for every repetition of the loop
/// outside the matrix before the next chunk, where that loop continues the
/// matrix's source rows (`ss` the bytes of a source row: usually put there
/// by [`repeat_source_rows`]), those rows are at most half a page (a page
/// holds two repetitions' rows or more), and the matrix has more rows than
/// the transpose sweeps at once (`transpose::CHUNK_ROWS`; a chunk is as
/// many whole repetitions as that holds, at least one: where their bytes of
/// each destination row are not whole lines, a line is split between two
/// chunks' transposes, its parts stored through the cache). Each source
/// row's page is then read on, the next repetitions' bytes of the row,
/// while the TLB still holds it; a whole matrix a repetition at a time
/// reads at most half a page of every row's page, more pages than the TLB
/// holds, and comes back to each page after all the others. `None` for
/// other loops.
///
/// Measured on an AMD EPYC (Zen 4), one thread, 3 alternated runs, time
/// after over before: HPTT's `4,3,2,1,0` of `[352, 28, 28, 4, 48]`
/// (float64, 404 MiB: 9,856 source rows 1.15 MiB apart, of 1,536 bytes, in
/// chunks of 704 across 28 repetitions) 2.50 -> 1.69x memcpy. numpy
/// transposes drawn to reach the rule (5- and 6-D, the first axis last,
/// float16 to complex128, 16 to 300 MiB; none of the broad workloads of
/// seeds 26 and 801-804 does): with rows of any length, 67, geomean 0.96,
/// but rows of 2 KiB and less (36) 0.91, 21 faster by more than 5% and 3
/// slower (the worst float16, 1.12); rows past 2 KiB up to 4 KiB (17),
/// 1.00, and longer ones (14), 1.05, the worst float16 rows of 28 KiB (7
/// pages a visit already), 1.34: hence half a page. Held out, 54 of a
/// second draw: 0.90, 32 faster by more than 5% (float32 `3,5,4,1,2,0` of
/// `[1600, 2, 20, 6, 3, 48]`, 210 MiB, 2.37 -> 1.42x), 9 slower, the worst
/// float32 of 154 MiB, 1.58 -> 1.90x; on two threads (2 alternated runs),
/// 0.89, 7 slower. Chunks of whole destination lines (fewer repetitions
/// where theirs are not) changed one of the 54, float16 in chunks of 4 x
/// 200 rows, not 5: 1.06 the time (4 runs), so chunks are as many
/// repetitions as fit.
pub(super) fn matrix_chunk(loops: &[Loop], unit: usize) -> Option<usize> {
    let n = loops.len();
    let [outer, cols, rows, x, y] = loops.get(n.checked_sub(5)?..)? else {
        return None;
    };
    let row = cols.count.checked_mul(x.count).and_then(|units| units.checked_mul(unit));
    let per = (transpose::CHUNK_ROWS / y.count.max(1)).max(1);
    let continues = row.is_some_and(|row| row <= PAGE / 2 && outer.ss == row as isize);
    (free(outer) && continues && rows.count > per).then_some(per)
}

/// Moves next to a tile a free loop around it whose repetitions continue
/// the tile's source rows (`ss == nx * unit`), and inside that one a free
/// loop whose repetitions continue its destination rows (`ds == ny *
/// unit`), where the transpose takes the matrix they make
/// (`transpose::takes`; streamed, only if its destination rows start on
/// the same byte of a line, the outer loop's `ds` whole lines): the tile
/// and both loops are one matrix (`CopyPlan::matrix`,
/// `tile::copy_matrix`), whose source rows and destination rows are runs
/// of many tiles, where the tile alone (or repeated along one loop) reads
/// or writes runs of one tile row. `false`, leaving the loops as they
/// are, where there are no such loops.
///
/// This is the shape of a general transposition whose contiguous blocks
/// span several axes on both sides (HPTT's `5,4,3,2,1,0` of a 6-D tensor
/// of float64, `[32, 15, 15, 15, 15, 32]`: the source's last two axes
/// are a run of 3,840 bytes, the destination's too, but a tile of the two
/// innermost axes reads and writes runs of 256). Measured (one thread,
/// alternated runs, ratio to memcpy) in the HPTT set
/// (`shared/bench/transpose.json`, 57 transpositions of float64, 400 MiB
/// each), after [`squares_stream`](super::rules::squares_stream): that
/// reversal 3.7 -> 1.6, `4,3,2,1,0` of `[48, 28, 28, 28, 48]` 2.7 -> 1.4;
/// with `squares_stream`, the
/// set's geomean 2.02 -> 1.56, p90 3.16 -> 1.99, max 4.4 -> 2.6, none
/// slower beyond the noise (1.06). In the broad benchmark it takes a few
/// numpy transposes of each seed: seed 26's one, 3 MiB of float64 in 11
/// x 10 tiles, 4.15 -> 1.90 (2 alternated runs of the whole set); held
/// out (5 alternated runs), of seeds 801 and 802, 2-byte units 5.27 ->
/// 2.23, 16-byte units in tiles of 9 x 10 and 23 x 11 slower, 1.75 ->
/// 1.97 and 2.12 -> 2.32 (their 4 x 4 squares; the tile's own kernels
/// took the tiles).
pub(super) fn repeat_both(loops: &mut ArrayVec<Loop, MAX_LOOPS>, unit: usize, isa: Isa, nt: bool) -> bool {
    let n = loops.len();
    if n < 4 {
        return false;
    }
    let (x, y, u) = (loops[n - 2], loops[n - 1], unit as isize);
    if !free(&x) || y.window.is_some() {
        return false;
    }
    let cols = |l: &Loop| free(l) && l.ss == x.count as isize * u && (!nt || l.ds.unsigned_abs().is_multiple_of(LINE));
    let rows = |l: &Loop| free(l) && l.ds == y.count as isize * u;
    let Some(a) = (0..n - 2).rev().find(|&i| cols(&loops[i])) else {
        return false;
    };
    let Some(b) = (0..n - 2).rev().find(|&i| i != a && rows(&loops[i])) else {
        return false;
    };
    // Products of counts of the plan's loops: factors of the tensor's size.
    let (mr, mc) = (y.count * loops[b].count, x.count * loops[a].count);
    if !transpose::takes(mr, mc, unit, isa, x.ds, nt) {
        return false;
    }
    // Free loops move inward: no window changes sides.
    move_inward(loops, a, n - 3);
    move_inward(loops, if b > a { b - 1 } else { b }, n - 3);
    true
}
