//! A tile's repetitions moved next to it ([`repeat_continuing`],
//! [`repeat_both`], [`repeat_source_rows`]), and a streamed matrix's rows
//! in chunks ([`matrix_chunk`]).

use arrayvec::ArrayVec;

use super::super::compile::*;
use super::super::repetitions::*;
use super::{c_strides, compile_c, counts_and_strides, l, nchw_depth_to_space, ov_space_to_batch_by_4};
use crate::engine::arch::Isa;
use crate::engine::geometry::{o, Factor, Geometry, SpaceAxis};
use crate::engine::kernels::copy::Mode;
use crate::engine::kernels::nest::{Loop, Rows, Window, MAX_LOOPS};
use crate::engine::kernels::tile::{TileChoice, TileShape};

/// [`repeat_continuing`] of `loops` with `unit`-byte units.
fn repeated(loops: &[Loop], unit: usize) -> ArrayVec<Loop, MAX_LOOPS> {
    let mut loops: ArrayVec<Loop, MAX_LOOPS> = loops.iter().copied().collect();
    repeat_continuing(&mut loops, unit, true);
    loops
}

#[test]
fn rows_of_a_small_tile_run_as_one_matrix() {
    // uint8 by 16 of [1, 256, 40, 30]: 16 source rows (block rows) of 30
    // units into 30 destination rows of 16; the image rows (40) continue
    // the source rows, and go next to the tile in place of the block
    // rows of the output (16), which continue the destination.
    let (g, space, block) = nchw_depth_to_space(1, 40, 30, 16);
    let p = compile_c(&g, Direction::Backward, 1, &space, &block, false);
    assert!(p.tile && !p.nt);
    assert_eq!(counts_and_strides(&p.loops), vec![(16, 19200, 480), (40, 30, 7680), (30, 1, 16), (16, 1200, 1)]);
}

/// The plan chooses once the kernel of the tile that the executor runs
/// for each index of the loops outside it (`CopyPlan::tile_choice`): the
/// last two loops' tile repeated along the loop around them (the image
/// rows, as above), for the plan's kernel set; none where the tile runs
/// in parts (a window on it), or by the carried kernels.
#[test]
fn a_tile_and_its_repetitions_choose_their_kernel_once() {
    let (g, space, block) = nchw_depth_to_space(1, 40, 30, 16);
    let (ss, bs) = (c_strides(&space, 1), c_strides(&block, 1));
    for isa in Isa::every_runnable() {
        let p = CopyPlan::compile(&g, Direction::Backward, 1, &Layouts { space: &ss, block: &bs }, false, isa);
        let rows = Rows { count: 40, ss: 30, ds: 7680 };
        let shape =
            TileShape { rows, nx: 30, ny: 16, ssy: 1200, dsx: 16, unit: 1, m: Mode { nt: false, isa, fetch: false } };
        assert_eq!(p.tile_choice, Some(TileChoice::of(shape)), "{isa:?}: {p:?}");
    }
    let windowed = ov_space_to_batch_by_4(15, (504, 2), (504, 2));
    assert!(windowed.tile && windowed.loops.last().is_some_and(|y| y.window.is_some()));
    assert_eq!(windowed.tile_choice, None);
    let carried = ov_space_to_batch_by_4(16, (504, 2), (508, 0));
    assert!(carried.tile && carried.carry_level.is_some() && carried.loops.last().is_some_and(|y| y.window.is_none()));
    assert_eq!(carried.tile_choice, None);
}

#[test]
fn a_sweep_past_the_cache_keeps_the_destination_order() {
    // float32 by 16, rows of 30: a tile of 30 * 16 * 4 = 1,920 bytes;
    // 273 image rows sweep 524,160 bytes (moved), 274 sweep 526,080 (not).
    let tile = 30 * 16 * 4;
    for (h, moved) in [(273, true), (274, false)] {
        assert_eq!(h * tile <= 512 << 10, moved);
        let (g, space, block) = nchw_depth_to_space(1, h, 30, 16);
        let p = compile_c(&g, Direction::Backward, 4, &space, &block, false);
        assert!(p.tile);
        let next = p.loops[p.loops.len() - 3];
        assert_eq!(next.count, if moved { h } else { 16 }, "h {h}");
    }
}

#[test]
fn past_the_sweep_source_rows_read_in_many_streams_move() {
    // float32 by 16, rows of 32: a tile of 32 * 16 * 4 = 2,048 bytes
    // written as one run (`MIN_PIECE`); 300 image rows sweep 614,400
    // bytes, past the cache, but the loops inside them read 16 block rows
    // of 16 source streams each, 256 streams: where the tensors are past
    // the caches (the plan may stream, or its output of 9.4 MiB is larger
    // than the second-level cache: `past_second_level`), they go next to
    // the tile, which stays in the cache. Rows of 31 units (1,984 bytes)
    // stay outside, as above.
    for (w, streaming) in [(32, true), (31, true), (32, false), (31, false)] {
        assert!(300 * w * 16 * 4 > 512 << 10);
        let (g, space, block) = nchw_depth_to_space(1, 300, w, 16);
        let p = compile_c(&g, Direction::Backward, 4, &space, &block, streaming);
        assert!(p.tile && !p.matrix && !p.nt, "w {w}, streaming {streaming}: {p:?}");
        assert_eq!(p.dst_bytes, 300 * 16 * w * 16 * 4);
        let next = p.loops[p.loops.len() - 3];
        let moved = w == 32 && past_second_level(streaming, p.dst_bytes);
        assert_eq!(next.count, if moved { 300 } else { 16 }, "w {w}, streaming {streaming}: {:?}", p.loops);
    }
}

/// Past the caches for `repeat_continuing`: a plan that streams, or one
/// whose output is larger than the second-level cache (this CPU's, for
/// `past_second_level`).
#[test]
fn past_the_second_level_cache_is_streaming_or_larger_than_it() {
    for cache in [256 << 10, 1 << 20, 2 << 20] {
        assert!(past_cache(true, 0, cache) && past_cache(true, cache, cache));
        assert!(!past_cache(false, cache, cache) && !past_cache(false, 0, cache));
        assert!(past_cache(false, cache + 1, cache));
    }
    let l2 = crate::engine::arch::cache::second_level();
    assert!(!past_second_level(false, l2) && past_second_level(false, l2 + 1) && past_second_level(true, 0));
}

#[test]
fn past_the_sweep_few_streams_and_short_pieces_keep_the_destination_order() {
    // A tile of `nx` x 8 units of 4 bytes, written as one run (`x.ds` 32),
    // `r` of them next to it (far apart in the source), and 300
    // repetitions continuing its source rows outside: a sweep of 300
    // tiles, past the cache. Source `[r, 8, 300, nx]`, destination
    // `[300, r, nx, 8]`.
    let nest = |r: usize, nx: usize| {
        let (row, tile) = ((nx * 4) as isize, (nx * 8 * 4) as isize);
        [l(300, row, r as isize * tile), l(r, 8 * 300 * row, tile), l(nx, 4, 32), l(8, 300 * row, 4)]
    };
    // 3 x 8 = 24 source streams inside the repetitions, 2,048-byte pieces: moved.
    let [reps, rows, x, y] = nest(3, 64);
    assert_eq!(repeated(&[reps, rows, x, y], 4).as_slice(), [rows, reps, x, y]);
    // Not where the tensors stay in the caches (not past the second-level cache).
    let mut cached: ArrayVec<Loop, MAX_LOOPS> = [reps, rows, x, y].into_iter().collect();
    repeat_continuing(&mut cached, 4, false);
    assert_eq!(cached.as_slice(), [reps, rows, x, y]);
    // 2 x 8 = 16 streams (`FOLLOWED_STREAMS`), or pieces of 2,016 bytes,
    // or a tile whose destination rows are 48 bytes apart (not one run):
    // kept.
    let apart = [Loop { ds: 3 * 64 * 48, ..reps }, Loop { ds: 64 * 48, ..rows }, Loop { ds: 48, ..x }, y];
    for loops in [nest(2, 64), nest(3, 63), apart] {
        assert!(300 * loops[1].ds as usize > 512 << 10);
        assert_eq!(repeated(&loops, 4).as_slice(), loops);
    }
}

#[test]
fn units_of_every_size_move_and_windowed_tiles_stay() {
    // A tile of 30 x 16 units of `u` bytes, as above, and 20 image rows
    // (a sweep of 20 tiles of 48-byte units, 460,800 bytes, stays in the
    // cache): they go next to the tile, whatever the unit (those no vector
    // kernel takes too).
    let nest = |u: isize| [l(20, 30 * u, 7680 * u), l(16, 9600 * u, 480 * u), l(30, u, 16 * u), l(16, 600 * u, u)];
    for u in [1usize, 2, 3, 4, 6, 8, 12, 16, 32, 48] {
        let ui = u as isize;
        let expected = [l(16, 9600 * ui, 480 * ui), l(20, 30 * ui, 7680 * ui), l(30, ui, 16 * ui), l(16, 600 * ui, ui)];
        assert_eq!(repeated(&nest(ui), u).as_slice(), expected, "unit {u}");
    }
    // A window on the tile's inner loop: left as it is.
    let mut loops = nest(1);
    loops[2].is_outer = true;
    loops[3].window = Some(Window { outer: Some(2), oc: 16, ic: 1, lo: 3, hi: 400 });
    assert_eq!(repeated(&loops, 1).as_slice(), loops);
}

#[test]
fn fewer_repetitions_than_the_loop_replaced_stay_outside() {
    // 10 repetitions continuing the source rows, 16 next to the tile: kept.
    let loops = [l(10, 30, 7680), l(16, 19200, 480), l(30, 1, 16), l(16, 1200, 1)];
    assert_eq!(repeated(&loops, 1).as_slice(), loops);
    // A loop next to the tile that continues it already: nothing moves.
    let loops = [l(40, 30, 7680), l(16, 19200, 16), l(30, 1, 16), l(16, 1200, 1)];
    assert_eq!(repeated(&loops, 1).as_slice(), loops);
}

#[test]
fn windows_follow_the_loops_they_name() {
    // Loop 1 is the outer loop of a window on loop 2 (next to the tile);
    // loop 0 continues the tile's source rows and moves in past both.
    let window = Window { outer: Some(1), oc: 2, ic: 1, lo: 1, hi: 9 };
    let loops = repeated(
        &[
            l(40, 30, 100_000),
            Loop { is_outer: true, ..l(5, 70_000, 20_000) },
            Loop { window: Some(window), ..l(2, 19200, 480) },
            l(30, 1, 16),
            l(16, 1200, 1),
        ],
        1,
    );
    assert_eq!(
        counts_and_strides(&loops),
        vec![(5, 70_000, 20_000), (2, 19200, 480), (40, 30, 100_000), (30, 1, 16), (16, 1200, 1)]
    );
    assert!(loops[0].is_outer);
    assert_eq!(loops[1].window, Some(Window { outer: Some(0), ..window }));
}

/// numpy's `transpose(axes)` of a float64 tensor of `shape` (HPTT's
/// cases), C-contiguous on both sides: its plan, streaming or not, for a
/// kernel set.
fn transposed<const N: usize>(shape: [usize; N], axes: [usize; N]) -> impl Fn(bool, Isa) -> CopyPlan {
    let space = shape.map(|d| SpaceAxis::plain(d as u64));
    let groups = axes.map(|a| [o(a)]);
    let groups: Vec<&[Factor]> = groups.iter().map(|g| g.as_slice()).collect();
    let g = Geometry::new("t", &space, &groups).unwrap();
    let (ss, ds) = (c_strides(&shape, 8), c_strides(&axes.map(|a| shape[a]), 8));
    move |streaming, isa| {
        CopyPlan::compile(&g, Direction::Forward, 8, &Layouts { space: &ss, block: &ds }, streaming, isa)
    }
}

/// The 6-D reversal of `[32, 15, 15, 15, 15, 32]` of float64 (HPTT's).
fn reversal_6d() -> impl Fn(bool, Isa) -> CopyPlan {
    transposed([32, 15, 15, 15, 15, 32], [5, 4, 3, 2, 1, 0])
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_tile_continued_both_ways_is_one_matrix_where_the_transpose_takes_it() {
    // The tile: 32 units of the source's last axis (a run of 256 bytes)
    // by 32 of its first (the destination's run). The source's axis 4
    // continues the source rows (ss 256), its axis 1 the destination's
    // (ds 256): both go next to the tile, axis 4 outside. With AVX-512
    // the full-line squares take the matrix and stream it; without its
    // masks, AVX2's take it streamed (on x86_64); otherwise no transpose
    // takes tiles of float64 (the tile's own kernels, through the cache,
    // one loop of repetitions).
    let plan = reversal_6d();
    for (isa, streaming) in [(Isa::Avx512, true), (Isa::Avx512, false), (Isa::Avx2, true)] {
        let p = plan(streaming, isa);
        let what = format!("{isa:?} streaming {streaming}");
        let masks = isa == Isa::Avx512 && std::arch::is_x86_feature_detected!("avx512vl");
        let matrix = masks || cfg!(target_arch = "x86_64") && streaming;
        assert!(p.tile, "{what}");
        assert_eq!((p.matrix, p.nt), (matrix, matrix && streaming), "{what}");
        let n = p.loops.len();
        let inner = counts_and_strides(&p.loops[n - 2..]);
        assert_eq!(inner, vec![(32, 8, 12_960_000), (32, 12_960_000, 8)], "{what}");
        if matrix {
            let around = counts_and_strides(&p.loops[n - 4..n - 2]);
            assert_eq!(around, vec![(15, 256, 864_000), (15, 864_000, 256)], "{what}");
        }
    }
}

/// [`repeat_both`] of `loops` with `unit`-byte units on AVX-512.
fn both(loops: &[Loop], unit: usize, nt: bool) -> (bool, ArrayVec<Loop, MAX_LOOPS>) {
    let mut loops: ArrayVec<Loop, MAX_LOOPS> = loops.iter().copied().collect();
    (repeat_both(&mut loops, unit, Isa::Avx512, nt), loops)
}

#[cfg(target_arch = "x86_64")]
#[test]
fn both_continuing_loops_move_next_to_the_tile_and_nothing_else() {
    if !std::arch::is_x86_feature_detected!("avx512vl") {
        return; // The matrices below are the full-line squares', AVX-512's.
    }
    // A 24 x 20 tile of float64 (rows of 192 and 160 bytes, destination
    // rows whole lines apart), the loop continuing the source rows (ss
    // 192) outermost, the one continuing the destination rows (ds 160) in
    // the middle.
    let nest = [l(4, 192, 102_400), l(6, 40_000, 2_000_000), l(5, 3_000, 160), l(24, 8, 10_240), l(20, 800, 8)];
    let (moved, loops) = both(&nest, 8, false);
    assert!(moved);
    let want = [nest[1], nest[0], nest[2], nest[3], nest[4]];
    assert_eq!(loops.as_slice(), want);
    // Streamed, only if the outer one's destination steps are whole lines.
    assert!(both(&nest, 8, true).0);
    let mut odd = nest;
    odd[0].ds = 102_408;
    assert_eq!(both(&odd, 8, true), (false, odd.iter().copied().collect()));
    assert!(both(&odd, 8, false).0);
    // Without either loop, or with a window on either: left as it is.
    for j in [0, 2] {
        let mut none = nest;
        none[j].ss += 8;
        none[j].ds += 8;
        assert_eq!(both(&none, 8, false), (false, none.iter().copied().collect()), "loop {j}");
        let mut windowed = nest;
        windowed[j].window = Some(Window { outer: None, oc: 0, ic: 1, lo: 1, hi: 3 });
        assert_eq!(both(&windowed, 8, false), (false, windowed.iter().copied().collect()), "loop {j}");
    }
    // A matrix no transpose takes (float64 on AVX2; bytes 12 rows deep,
    // under the shortest side): left as it is.
    let mut loops: ArrayVec<Loop, MAX_LOOPS> = nest.iter().copied().collect();
    assert!(!repeat_both(&mut loops, 8, Isa::Avx2, false));
    assert_eq!(loops.as_slice(), nest);
    let bytes = [l(4, 24, 100_000), l(6, 40_000, 2_000_000), l(3, 3_000, 4), l(24, 1, 10_000), l(4, 800, 1)];
    assert_eq!(both(&bytes, 1, false), (false, bytes.iter().copied().collect()));
}

/// [`repeat_source_rows`] of `loops` with `unit`-byte units, the last two
/// a tile (or the last four a matrix: `matrix`).
fn source_rows(loops: &[Loop], unit: usize, matrix: bool) -> ArrayVec<Loop, MAX_LOOPS> {
    let mut loops: ArrayVec<Loop, MAX_LOOPS> = loops.iter().copied().collect();
    repeat_source_rows(&mut loops, unit, matrix);
    loops
}

#[test]
fn a_loop_continuing_the_source_rows_moves_next_to_a_streamed_tile() {
    // HPTT's `2,0,4,1,5,3` of `[15, 15, 15, 32, 15, 32]` (float64) in the
    // destination's order: a 32 x 32 tile whose destination block is one
    // run of 8,192 bytes, continued by the loop around it (ds 8,192);
    // loop 2 continues the tile's source rows of 256 bytes (ss 256) and
    // moves next to it.
    let nest = [
        l(15, 122_880, 27_648_000),
        l(15, 27_648_000, 1_843_200),
        l(15, 256, 122_880),
        l(15, 1_843_200, 8_192),
        l(32, 8, 256),
        l(32, 3_840, 8),
    ];
    let want = [nest[0], nest[1], nest[3], nest[2], nest[4], nest[5]];
    assert_eq!(source_rows(&nest, 8, false).as_slice(), want);
    // Already next to the tile: nothing moves.
    assert_eq!(source_rows(&want, 8, false).as_slice(), want);
    // Its destination steps not whole lines: it stays.
    let mut odd = nest;
    odd[2].ds = 122_888;
    assert_eq!(source_rows(&odd, 8, false).as_slice(), odd);
    // A tile whose destination rows do not continue one another (a
    // deinterleave: x.ds is not a destination row), or carries a window,
    // or no loop continuing its source rows: left as it is.
    let mut apart = nest;
    apart[4].ds = 512;
    assert_eq!(source_rows(&apart, 8, false).as_slice(), apart);
    let mut windowed = nest;
    windowed[4].is_outer = true;
    windowed[5].window = Some(Window { outer: Some(4), oc: 32, ic: 1, lo: 1, hi: 1_000 });
    assert_eq!(source_rows(&windowed, 8, false).as_slice(), windowed);
    let mut none = nest;
    none[2].ss = 264;
    assert_eq!(source_rows(&none, 8, false).as_slice(), none);
    // A loop with a window of its own does not move.
    let mut own = nest;
    own[2].window = Some(Window { outer: None, oc: 0, ic: 1, lo: 1, hi: 14 });
    assert_eq!(source_rows(&own, 8, false).as_slice(), own);
}

#[test]
fn a_source_read_in_a_few_streams_keeps_its_order() {
    // OpenVINO depth-to-space of complex128 by 2: a 51 x 2 tile (rows of
    // 816 bytes), the loop continuing them (74) outside a loop of 2
    // repetitions: 2 x 2 source streams, each read in order. It stays,
    // and with 8 repetitions (16 streams); with 9 (18 streams) it moves.
    let nest = |k: usize| {
        [l(126, 60_384, 483_072), l(74, 816, 3_264), l(k, 15_216_768, 1_632), l(51, 16, 32), l(2, 7_608_384, 16)]
    };
    assert_eq!(source_rows(&nest(2), 16, false).as_slice(), nest(2));
    assert_eq!(source_rows(&nest(8), 16, false).as_slice(), nest(8));
    let n = nest(9);
    assert_eq!(source_rows(&n, 16, false).as_slice(), [n[0], n[2], n[1], n[3], n[4]]);
}

#[test]
fn a_streamed_transpose_reads_its_source_rows_whole() {
    // The same transpose compiled: the tile of 32 x 32 float64 has its
    // source rows' loop (15 x 256 bytes: runs of 3,840) next to it on
    // every kernel set, streamed (where a vector kernel takes the tile)
    // or through the cache (`repeat_continuing`: a sweep of 120 KiB).
    let plan = transposed([15, 15, 15, 32, 15, 32], [2, 0, 4, 1, 5, 3]);
    for isa in Isa::every_runnable() {
        for streaming in [true, false] {
            let p = plan(streaming, isa);
            let what = format!("{isa:?} streaming {streaming}: {p:?}");
            let n = p.loops.len();
            assert!(p.tile && n == 6, "{what}");
            assert_eq!(counts_and_strides(&p.loops[n - 2..]), vec![(32, 8, 256), (32, 3_840, 8)], "{what}");
            assert_eq!(p.nt, streaming && isa >= Isa::Avx2, "{what}");
            let next = (p.loops[n - 3].count, p.loops[n - 3].ss, p.loops[n - 3].ds);
            assert_eq!(next, (15, 256, 122_880), "{what}");
        }
    }
}

#[test]
fn a_loop_continuing_a_matrix_s_source_rows_moves_next_to_it() {
    // HPTT's `5,4,3,2,1,0` of `[112, 15, 15, 15, 5, 32]` (float64) as a
    // matrix (`repeat_both`): loops 2 to 5, source rows of 32 x 5 units
    // (1,280 bytes). Loop 1 continues them (ss 1,280) and goes next to the
    // matrix; as a tile's repetition (not a matrix), nothing moves (its
    // destination block is not one run).
    let nest = [
        l(15, 1_280, 201_600),
        l(15, 19_200, 13_440),
        l(5, 256, 3_024_000),
        l(15, 288_000, 896),
        l(32, 8, 15_120_000),
        l(112, 4_320_000, 8),
    ];
    let want = [nest[1], nest[0], nest[2], nest[3], nest[4], nest[5]];
    assert_eq!(source_rows(&nest, 8, true).as_slice(), want);
    assert_eq!(source_rows(&nest, 8, false).as_slice(), nest);
    // Only a loop stepping a whole matrix row (1,280), not a tile's (256).
    let mut short = nest;
    short[0].ss = 256;
    assert_eq!(source_rows(&short, 8, true).as_slice(), short);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_streamed_matrix_reads_its_source_rows_on() {
    // The same reversal compiled, streamed: where it is a matrix (AVX2's
    // full-line squares and AVX-512's take it), the loop continuing its
    // source rows is next to it.
    let plan = transposed([112, 15, 15, 15, 5, 32], [5, 4, 3, 2, 1, 0]);
    for isa in Isa::every_runnable().filter(|&isa| isa >= Isa::Avx2) {
        let p = plan(true, isa);
        let what = format!("{isa:?}: {p:?}");
        assert!(p.matrix && p.nt && p.loops.len() == 6, "{what}");
        assert_eq!(counts_and_strides(&p.loops[..2]), vec![(15, 19_200, 13_440), (15, 1_280, 201_600)], "{what}");
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_small_streamed_transpose_reads_its_source_rows_whole() {
    // `2,0,4,1,5,3` of `[2, 3, 2, 32, 3, 32]` (float64, 288 KiB), streamed
    // where AVX-512 runs (its full-line squares take the 32 x 32 tile):
    // 32 tile rows times the 3 repetitions next to it, 96 source streams,
    // so the loop continuing the source rows (3 x 256 bytes) moves next
    // to the tile, as in the large one. (The limit's edge, 16 streams, is
    // tested on the loops above: a streamed tile of this transpose has at
    // least 16 rows, and a repetition of 1 is no loop. A tile of 16
    // streams, which VBMI's byte permutes take through the cache, stores
    // through the cache: see `tests::staged`.)
    let plan = transposed([2, 3, 2, 32, 3, 32], [2, 0, 4, 1, 5, 3]);
    for isa in Isa::every_runnable().filter(|&isa| isa >= Isa::Avx512) {
        let p = plan(true, isa);
        let what = format!("{isa:?}: {p:?}");
        assert!(p.tile && p.nt && p.tile_choice.is_some_and(|c| c.transposes()), "{what}");
        let inner = vec![(3, 49_152, 8_192), (3, 256, 24_576), (32, 8, 256), (32, 768, 8)];
        assert_eq!(counts_and_strides(&p.loops[2..]), inner, "{what}");
    }
}

#[test]
fn a_matrix_s_rows_go_in_chunks_across_the_loop_continuing_its_source_rows() {
    // HPTT's `4,3,2,1,0` of `[352, 28, 28, 4, 48]` (float64) as the plan
    // streams it: the loop continuing the matrix's source rows (4 x 48
    // units, 1,536 bytes), then the matrix (the columns' loop, the rows'
    // loop, the tile of 48 x 352). 28 x 352 rows, more than the transpose
    // sweeps at once: chunks of 2 repetitions (704 rows).
    let hptt =
        [l(28, 1_536, 78_848), l(4, 384, 2_207_744), l(28, 43_008, 2_816), l(48, 8, 8_830_976), l(352, 1_204_224, 8)];
    assert_eq!(matrix_chunk(&hptt, 8), Some(2));
    // Either side of the sweep (1,024 rows): 4 and 5 repetitions of 256
    // rows; a tile of 1,100 rows, a chunk of one repetition where there
    // are two, none where there is one.
    let rows = |count: usize, ny: usize| {
        let mut loops = hptt;
        loops[2] = l(count, 8 * ny as isize * 48 * 4, 8 * ny as isize);
        loops[4] = l(ny, 1 << 20, 8);
        loops
    };
    assert_eq!(matrix_chunk(&rows(4, 256), 8), None);
    assert_eq!(matrix_chunk(&rows(5, 256), 8), Some(4));
    assert_eq!(matrix_chunk(&rows(2, 1_100), 8), Some(1));
    assert_eq!(matrix_chunk(&rows(1, 1_100), 8), None);
    // As many repetitions as fit, whole lines of each destination row or
    // not: 300 rows of float64 (2,400 bytes, half a line over) in 3.
    assert_eq!(matrix_chunk(&rows(4, 300), 8), Some(3));
    assert_eq!(matrix_chunk(&rows(3, 300), 8), None);
    // Only a loop continuing a whole source row of the matrix (1,536),
    // forward, with no window; and only the fifth loop from the last.
    for ss in [384, 3_072, -1_536] {
        let mut other = hptt;
        other[0].ss = ss;
        assert_eq!(matrix_chunk(&other, 8), None, "ss {ss}");
    }
    // Only rows of at most half a page, which a page holds two
    // repetitions of: 2,048 bytes (4 x 64 units) in chunks, 2,112 not.
    for (x, chunks) in [(64, Some(2)), (66, None)] {
        let mut wide = hptt;
        (wide[0].ss, wide[3].count) = (4 * x as isize * 8, x);
        assert_eq!(matrix_chunk(&wide, 8), chunks, "rows of {x} x 4 units");
    }
    let mut windowed = hptt;
    windowed[0].window = Some(Window { outer: None, oc: 0, ic: 1, lo: 1, hi: 27 });
    assert_eq!(matrix_chunk(&windowed, 8), None);
    assert_eq!(matrix_chunk(&hptt[1..], 8), None);
    let mut six = [l(2, 1_536, 1 << 30), l(28, 3_072, 78_848), hptt[1], hptt[2], hptt[3], hptt[4]];
    assert_eq!(matrix_chunk(&six, 8), None);
    six[1].ss = 1_536;
    assert_eq!(matrix_chunk(&six, 8), Some(2));
    // Other units make other rows.
    assert_eq!(matrix_chunk(&hptt, 4), None);
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_streamed_matrix_of_many_rows_goes_in_chunks() {
    // The same reversal compiled: streamed, where it is a matrix, in
    // chunks of 2 repetitions; through the cache, whole (its plan runs
    // flat, a matrix a call).
    let plan = transposed([352, 28, 28, 4, 48], [4, 3, 2, 1, 0]);
    for isa in Isa::every_runnable().filter(|&isa| isa >= Isa::Avx2) {
        let p = plan(true, isa);
        let what = format!("{isa:?}: {p:?}");
        assert!(p.matrix && p.nt && p.loops.len() == 5, "{what}");
        assert_eq!(p.matrix_chunk, Some(2), "{what}");
        let p = plan(false, isa);
        assert_eq!((p.nt, p.matrix_chunk), (false, None), "{isa:?}: {p:?}");
    }
    // Its rows as many as the sweep: whole.
    let p = transposed([256, 4, 28, 4, 48], [4, 3, 2, 1, 0])(true, Isa::detect().min(Isa::Avx512));
    if Isa::detect() >= Isa::Avx2 {
        assert!(p.matrix && p.nt && p.loops.len() == 5, "{p:?}");
    }
    assert_eq!(p.matrix_chunk, None, "{p:?}");
}
