//! A deinterleave's passes over a large source, a chunk of rows at a time
//! ([`block_passes`]).

use arrayvec::ArrayVec;

use super::super::compile::*;
use super::super::order::block_passes;
use super::{compile_c, counts_and_strides, l, nchw_depth_to_space};
use crate::engine::kernels::nest::{Loop, Window, MAX_LOOPS};

/// [`block_passes`] of `loops` with `unit`-byte units: whether it split,
/// and the loops after.
fn blocked(loops: &[Loop], unit: usize) -> (bool, Vec<(usize, isize, isize)>) {
    let mut loops: ArrayVec<Loop, MAX_LOOPS> = loops.iter().copied().collect();
    let split = block_passes(&mut loops, unit);
    (split, counts_and_strides(&loops))
}

#[test]
fn passes_over_short_runs_go_a_chunk_of_rows_at_a_time() {
    // TF NCHW space-to-depth of float16 by 13 (a broad workload, 232 MiB):
    // 13 passes (block rows) over 8,384 rows 29,068 bytes apart, each
    // reading a run of 2,236 (13 streams of 172). The fewest rows that
    // divide 8,384 and write 1 KiB a stream: 8 (1,376 bytes, 232,544 of
    // source); the passes inside the chunks.
    let loops = [l(13, 2236, 18746624), l(8384, 29068, 172), l(13, 2, 1442048), l(86, 26, 2)];
    let want = vec![(1048, 232544, 1376), (13, 2236, 18746624), (8, 29068, 172), (13, 2, 1442048), (86, 26, 2)];
    assert_eq!(blocked(&loops, 2), (true, want));
    // uint8 by 6 under a batch loop: 16 rows (1,488 bytes a stream), the
    // batch outermost still.
    let loops = [l(2, 24641280, 24641280), l(6, 558, 4106880), l(7360, 3348, 93), l(6, 1, 684480), l(93, 6, 1)];
    let want = vec![
        (2, 24641280, 24641280),
        (460, 53568, 1488),
        (6, 558, 4106880),
        (16, 3348, 93),
        (6, 1, 684480),
        (93, 6, 1),
    ];
    assert_eq!(blocked(&loops, 1), (true, want));
}

#[test]
fn a_chunk_is_the_most_rows_that_fit_where_none_writes_enough() {
    // float32 by 16 of 4-unit rows: 16 bytes a stream a row, 4 KiB of
    // source; 64 rows fit 256 KiB, and of 96 the most that divide it and
    // fit are 48 (768 bytes a stream).
    let loops = [l(16, 256, 6144), l(96, 4096, 16), l(16, 4, 384), l(4, 64, 4)];
    let want = vec![(2, 196608, 768), (16, 256, 6144), (48, 4096, 16), (16, 4, 384), (4, 64, 4)];
    assert_eq!(blocked(&loops, 4), (true, want));
}

#[test]
fn other_loop_nests_keep_their_order() {
    let nest = |loops: &[Loop], unit| {
        let (split, after) = blocked(loops, unit);
        assert!(!split && after == counts_and_strides(loops), "{loops:?}");
    };
    // Runs of a page: 13 streams of 316 bytes (4,108), not 315 (4,095:
    // blocked).
    nest(&[l(13, 4108, 1 << 30), l(8384, 53404, 316), l(13, 2, 1 << 26), l(158, 26, 2)], 2);
    assert!(blocked(&[l(13, 4095, 1 << 30), l(8384, 53235, 315), l(13, 1, 1 << 26), l(315, 13, 1)], 1).0);
    // A sweep the chunk holds whole: 9 rows of 29,068 bytes (261,612); 10
    // (290,680) are blocked.
    nest(&[l(13, 2236, 1 << 30), l(9, 29068, 172), l(13, 2, 1 << 26), l(86, 26, 2)], 2);
    assert!(blocked(&[l(13, 2236, 1 << 30), l(10, 29068, 172), l(13, 2, 1 << 26), l(86, 26, 2)], 2).0);
    // No passes: the loop outside steps the source further than the rows.
    nest(&[l(4, 1 << 24, 1 << 24), l(8384, 29068, 172), l(13, 2, 1442048), l(86, 26, 2)], 2);
    // Rows whose count no number of rows that fits divides: 8,387 (prime).
    nest(&[l(13, 2236, 1 << 30), l(8387, 29068, 172), l(13, 2, 1442048), l(86, 26, 2)], 2);
    // An interleave (the destination rows one run), and rows that do not
    // step the streams by a row.
    nest(&[l(13, 2236, 1 << 30), l(8384, 29068, 26), l(86, 2, 26), l(13, 172, 2)], 2);
    nest(&[l(13, 2236, 1 << 30), l(8384, 29068, 176), l(13, 2, 1442048), l(86, 26, 2)], 2);
}

#[test]
fn a_window_outside_the_rows_stays_on_its_loop_in_the_chunks() {
    // The first test's nest with its columns padded (a window of their
    // own): the same chunks of 8 rows, the window on the last loop still.
    let window = Window { outer: None, oc: 0, ic: 1, lo: 1, hi: 85 };
    let mut windowed = [l(13, 2236, 18746624), l(8384, 29068, 172), l(13, 2, 1442048), l(86, 26, 2)];
    windowed[3].window = Some(window);
    let mut loops: ArrayVec<Loop, MAX_LOOPS> = windowed.iter().copied().collect();
    assert!(block_passes(&mut loops, 2));
    let want = vec![(1048, 232544, 1376), (13, 2236, 18746624), (8, 29068, 172), (13, 2, 1442048), (86, 26, 2)];
    assert_eq!(counts_and_strides(&loops), want);
    assert_eq!(loops.iter().map(|l| l.window).collect::<Vec<_>>(), [None, None, None, None, Some(window)]);
}

#[test]
fn rows_that_cannot_split_are_one_chunk_with_the_passes_next_to_them() {
    // OpenVINO space-to-batch of float32 [4, 92, 476, 208] by 1,2,11,10,
    // padded 2,2,0 before and 0,6,2 after (a broad workload, 146 MiB): in
    // the destination's order, each of the 2 x 11 block positions of the
    // two middle axes (the passes) read every 22nd source row of 832
    // bytes. The rows' loop (44 of 9,152 bytes, 403 KB) has the padding's
    // window, which a split would spread over three loops: the passes go
    // inside the other loops, each plane's block rows read by all passes
    // in turn.
    let w = |outer: u8, oc, ic, lo, hi| Some(Window { outer: Some(outer), oc, ic, lo, hi });
    let outer = |l: Loop| Loop { is_outer: true, ..l };
    let windowed = |l: Loop, window| Loop { window, ..l };
    let loops = [
        outer(l(2, 396032, 76433280)),
        outer(l(11, 832, 6948480)),
        l(4, 36434944, 173712),
        windowed(l(47, 792064, 3696), w(0, 1, 2, 2, 94)),
        windowed(l(44, 9152, 84), w(1, 1, 11, 2, 478)),
        outer(l(10, 4, 694848)),
        windowed(l(21, 40, 4), w(5, 1, 10, 0, 208)),
    ];
    let mut after: ArrayVec<Loop, MAX_LOOPS> = loops.iter().copied().collect();
    assert!(block_passes(&mut after, 4));
    let want = [
        outer(l(2, 396032, 76433280)),
        l(4, 36434944, 173712),
        windowed(l(47, 792064, 3696), w(0, 1, 2, 2, 94)),
        outer(l(11, 832, 6948480)),
        windowed(l(44, 9152, 84), w(3, 1, 11, 2, 478)),
        outer(l(10, 4, 694848)),
        windowed(l(21, 40, 4), w(5, 1, 10, 0, 208)),
    ];
    assert_eq!(after.as_slice(), want);
    // Around the chunk's bound (256 KiB): 28 padded rows of 9,152 bytes
    // (256,256) are held whole and keep their order; 29 (265,408) go with
    // the passes next to them.
    let rows = |count: usize| {
        let mut around = loops;
        around[4] = windowed(l(count, 9152, 84), w(1, 1, 11, 2, 11 * count as i64 - 6));
        around
    };
    let mut held: ArrayVec<Loop, MAX_LOOPS> = rows(28).iter().copied().collect();
    assert!(!block_passes(&mut held, 4));
    assert_eq!(held.as_slice(), rows(28));
    let mut moved: ArrayVec<Loop, MAX_LOOPS> = rows(29).iter().copied().collect();
    assert!(block_passes(&mut moved, 4));
    assert_eq!(counts_and_strides(&moved)[3..5], [(11, 832, 6948480), (29, 9152, 84)]);
    // No room for one more loop: the passes (and the loops of one step)
    // inside.
    let mut full: Vec<Loop> = (0..MAX_LOOPS - 4).map(|_| l(1, 0, 0)).collect();
    full.extend([l(13, 2236, 1 << 30), l(8384, 29068, 172), l(13, 2, 1442048), l(86, 26, 2)]);
    let mut want: Vec<Loop> = vec![full[MAX_LOOPS - 4]];
    want.extend(&full[..MAX_LOOPS - 4]);
    want.extend(&full[MAX_LOOPS - 3..]);
    let mut after: ArrayVec<Loop, MAX_LOOPS> = full.iter().copied().collect();
    assert!(block_passes(&mut after, 2));
    assert_eq!(after.as_slice(), want);
}

#[test]
fn only_a_streaming_plans_tile_goes_in_chunks() {
    // TF NCHW space-to-depth of uint8 by 6 of [1, 2, 960, 558]: the two
    // channels' rows one loop of 320, in chunks of 16 where the destination
    // is past the caches (1 MiB here: streaming asked for), whole through
    // them.
    let (g, space, block) = nchw_depth_to_space(2, 160, 93, 6);
    let streamed = compile_c(&g, Direction::Forward, 1, &space, &block, true);
    assert!(streamed.tile && !streamed.nt, "{streamed:?}");
    let want = vec![(20, 53568, 1488), (6, 558, 178560), (16, 3348, 93), (6, 1, 29760), (93, 6, 1)];
    assert_eq!(counts_and_strides(&streamed.loops), want);
    let cached = compile_c(&g, Direction::Forward, 1, &space, &block, false);
    let want = vec![(6, 558, 178560), (320, 3348, 93), (6, 1, 29760), (93, 6, 1)];
    assert_eq!(counts_and_strides(&cached.loops), want);
}
