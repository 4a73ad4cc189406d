//! Padding is written whatever the output held: space-to-batch plans whose
//! padding blocks are not contiguous in the destination (a tile's columns
//! under a padded axis, filled as boxes of runs), run into outputs full of
//! a sentinel, against the reference, with every kernel set, through the
//! cache, streamed and as the plan chooses.

use std::mem::MaybeUninit;

use blockshuffle::{tf, Operator, Parallelism, Streaming};

mod common;
use common::reference::ref_space_to_batch;
use common::{bytes, ALL_KERNELS, POISON};

fn check(block: &[usize], pads: &[[usize; 2]], shape: &[usize], elem: usize) {
    check_on(block, pads, shape, elem, Parallelism::Sequential);
}

/// [`check`] with `parallelism`.
fn check_on(block: &[usize], pads: &[[usize; 2]], shape: &[usize], elem: usize, parallelism: Parallelism) {
    let b: Vec<i64> = block.iter().map(|&v| v as i64).collect();
    let p: Vec<[i64; 2]> = pads.iter().map(|&[lo, hi]| [lo as i64, hi as i64]).collect();
    let x = bytes(shape.iter().product::<usize>() * elem, 3);
    let (want, out_shape) = ref_space_to_batch(&x, shape, elem, block, pads);
    for kernels in ALL_KERNELS {
        for streaming in [Streaming::Auto, Streaming::Always, Streaming::Never] {
            let op = tf::SpaceToBatchNd::new(&b, &p);
            let plan =
                op.plan(shape).unwrap().with_kernels(kernels).with_streaming(streaming).with_parallelism(parallelism);
            assert_eq!(plan.output_shape(), out_shape.as_slice());
            let mut out = vec![MaybeUninit::new(POISON); want.len()];
            plan.run_bytes_uninit(&x, elem, &mut out).unwrap();
            // SAFETY: every byte was initialised (the poison, then the run).
            let got: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
            let first = got.iter().zip(&want).position(|(a, b)| a != b);
            let what = format!("block {block:?} pads {pads:?} {shape:?} elem {elem} {kernels:?} {streaming:?}");
            assert_eq!(first, None, "{what} {parallelism:?}");
        }
    }
}

#[test]
fn padding_blocks_that_are_not_contiguous() {
    for elem in [1, 2, 3, 4, 6, 8] {
        // Padded on three axes, a tile of 12 x 2 units under them (OpenVINO
        // space-to-batch of uint8 by 8 x 10 x 12 in the broad benchmark).
        check(&[8, 10, 12], &[[0, 7], [0, 2], [4, 6]], &[1, 9, 18, 14], elem);
        check(&[2, 3], &[[4, 4], [6, 6]], &[1, 6, 9, 5], elem);
        check(&[3, 4], &[[6, 3], [8, 8]], &[2, 9, 4, 2], elem);
        check(&[4, 4], &[[8, 8], [8, 0]], &[1, 16, 8, 1], elem);
        // Padded at both ends of one axis, the next one blocked.
        check(&[1, 15, 7, 5], &[[0, 0], [10, 6], [0, 0], [0, 0]], &[2, 2, 14, 7, 5], elem);
        // Channels after the blocked axes.
        check(&[2, 3], &[[1, 2], [0, 4]], &[2, 7, 5, 3], elem);
    }
}

#[test]
fn padded_rows_of_a_large_deinterleave_match_the_reference() {
    // A plane of OpenVINO's space-to-batch of float32 by 1,2,11,10 (a
    // broad workload): the padded rows' loop (44 rows of 9,152 bytes),
    // streamed or not.
    for elem in [4, 8] {
        check(&[2, 11, 10], &[[2, 0], [2, 6], [0, 2]], &[1, 2, 476, 208], elem);
    }
}

#[test]
fn an_empty_input_padded_is_all_padding_whatever_kernel_its_blocks_would_take() {
    // Found by the `execute` fuzz target: an empty axis padded to one
    // block, the last blocked by 3 (blocks of 12 x 2-byte runs that the
    // byte permutes would gather three at a time, one index of their loop
    // each three blocks): every output byte is padding, all written.
    for elem in [1, 2, 4] {
        check(&[1, 1, 3], &[[0, 0], [0, 1], [0, 0]], &[2, 3, 0, 12], elem);
    }
}

#[test]
fn padded_rows_too_long_to_carry_as_groups_carried_one_block_row_at_a_time() {
    // One channel padded on W (TF space-to-batch of float32 by 4 in the
    // broad benchmark): streamed, the rows of 8- and 4-byte units, 9,216
    // and 4,608 bytes, are carried in the destination's order, the block
    // rows outside them; the 1- and 2-byte units' as stream groups.
    for elem in [1, 2, 4, 8] {
        check(&[4, 4], &[[0, 0], [4, 0]], &[1, 16, 4604, 1], elem);
        check(&[4, 4], &[[0, 0], [3, 5]], &[2, 8, 4600, 1], elem);
    }
}

#[test]
fn padded_blocks_of_rows_staged_whole_or_in_chunks() {
    // The innermost axis padded and blocked (each block offset a stream),
    // the axes outside it padded too, their loops continuing the tile's
    // destination rows: a block of rows staged at a time (the plan's
    // `padded_block`). OpenVINO space-to-batch of uint8 by 8 x 10 x 12 in
    // the broad benchmark (rows of 60 bytes, 100 to a block), and of
    // 3-byte units by 9 x 8 x 15 (a window on the rows' loop alone).
    check(&[8, 10, 12], &[[0, 7], [0, 2], [4, 6]], &[1, 73, 98, 50], 1);
    check(&[1, 9, 8, 15], &[[0, 0], [0, 0], [5, 5], [0, 5]], &[2, 1, 18, 30, 40], 3);
    // Batch over rows of 8 x 16 positions (0.5 KiB of 4-byte units, 1 KiB
    // of 8-byte ones), `h` rows to an index of the batch: two indices of
    // the batch (of 3) in the 8 KiB stage at a time up to 8 and 4 rows;
    // from 9 and 5, no block (the rows' loop alone, staged as the tile's
    // repetitions).
    for (elem, hs) in [(4, [7, 8, 9]), (8, [3, 4, 5])] {
        for h in hs {
            check(&[4, 8], &[[1, 3], [5, 3]], &[3, 4 * h - 4, 120], elem);
            // Every row of the batch's first index padding but the last.
            check(&[4, 8], &[[4 * h - 4, 0], [5, 3]], &[3, 4, 120], elem);
        }
    }
    // Three streams of four 6-byte units, whose block (42 rows of 72
    // bytes) makes them a tile (rows without it), and the same of other
    // units.
    for elem in [1, 2, 3, 4, 6, 8, 12] {
        check(&[2, 15, 3], &[[0, 1], [1, 1], [0, 2]], &[2, 13, 43, 10], elem);
    }
    // Two real rows of 8 padded ones: the blocks of H offsets 0 and 3 are
    // all padding (filled whole, nothing staged).
    check(&[4, 8], &[[1, 5], [5, 3]], &[3, 2, 120], 4);
    // A block of three loops (batch, 2 x 4 rows of 1 KiB, both padded),
    // one index of the batch a call.
    check(&[2, 4, 8], &[[1, 1], [1, 3], [5, 3]], &[3, 2, 12, 120], 8);
    // Split among threads (past the size that splits): the parts are
    // ranges of the block's first loop (the batch, under the H offsets),
    // or of the loops outside it.
    for threads in [2, 3, 7] {
        check_on(&[4, 8], &[[1, 3], [5, 3]], &[80, 24, 120], 4, Parallelism::Threads(threads));
        check_on(&[8, 10, 12], &[[0, 7], [0, 2], [4, 6]], &[4, 73, 98, 50], 1, Parallelism::Threads(threads));
    }
}

#[test]
fn padded_tiles_past_the_second_level_cache_take_their_middle_from_the_source() {
    // TF space-to-batch by 7 x 8 padded on W (OpenVINO's of 3-byte units
    // by 7 x 7 x 8 in the broad benchmark): tiles of 8 streams of 26
    // units, within the stage, in outputs of 3.3 and 4.4 MiB, past half
    // of any second-level cache under 6.6 MiB, so that through the cache
    // (and streamed, where the plan makes the same tile) the columns valid
    // for every block offset go straight from the source and the padded
    // ones through the stage (the plan's `padded_whole`: see the plan test
    // `padded_tiles_past_the_second_level_cache_are_not_staged_whole`);
    // padded at the end alone, at both ends (no column whole at either
    // end), and on both axes. Smaller outputs stage their tiles whole
    // (the tests above).
    for elem in [3, 4] {
        check(&[7, 8], &[[0, 0], [0, 1]], &[4, 1400, 207, 1], elem);
        check(&[7, 8], &[[0, 0], [3, 2]], &[4, 1400, 203, 1], elem);
    }
    check(&[7, 8], &[[2, 5], [1, 0]], &[4, 1393, 207, 1], 3);
    check_on(&[7, 8], &[[0, 0], [0, 1]], &[4, 1400, 207, 1], 3, Parallelism::Threads(2));
}
