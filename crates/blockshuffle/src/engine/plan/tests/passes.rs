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
    // A window on any loop.
    let window = Window { outer: None, oc: 0, ic: 1, lo: 0, hi: 80 };
    let mut windowed = [l(13, 2236, 1 << 30), l(8384, 29068, 172), l(13, 2, 1442048), l(86, 26, 2)];
    windowed[3].window = Some(window);
    nest(&windowed, 2);
    // No room for one more loop.
    let mut full: Vec<Loop> = (0..MAX_LOOPS - 4).map(|_| l(1, 0, 0)).collect();
    full.extend([l(13, 2236, 1 << 30), l(8384, 29068, 172), l(13, 2, 1442048), l(86, 26, 2)]);
    nest(&full, 2);
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
