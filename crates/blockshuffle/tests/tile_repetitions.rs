//! Tiles whose repetitions the planner moves next to them, so that the
//! tile's kernel runs them as one matrix (channels-first depth-to-space
//! and pixel shuffle, whose image rows continue the tile's source rows):
//! each case against the reference, with every kernel set, from row-major
//! buffers and from a view with a gap between channels (which keeps the
//! rows continuing), streamed or not. So are tiles of float64 with a side
//! of 8 to 15 units, which go in the transpose's full-line squares where
//! AVX-512 runs (channels-first space-to-depth by 11 to 15). And
//! transpositions whose tile is repeated along two loops, one continuing
//! its source rows and one its destination rows: one matrix of both. And
//! tiles of packed 3- and 6-byte units, which go in the register squares
//! of 4- and 8-byte units where AVX2 runs without AVX-512. And
//! channels-first space-to-depth over a source larger than a chunk of
//! the second-level cache, whose rows go a chunk at a time when streamed.
//! And channels-first space-to-depth of wide units into more streams than
//! the register kernels carry, which streamed are staged a chunk of rows
//! at a time, each stream pushed to a slot of its own. And transpositions
//! whose streamed tile (or matrix) has the loop continuing its source
//! rows moved next to it (`repeat_source_rows`), and tiles through the
//! cache whose such loop moves past the sweep limit (`repeat_continuing`).
//! And streamed matrices of more rows than the transpose sweeps at once,
//! which go in chunks of their rows across that loop (`matrix_chunk`).

use blockshuffle::{onnx, tf, torch, DataFormat, Operator};

mod common;
use common::reference::*;
use common::{bytes, check_transpose, check_with_channels_apart as check};

/// TF NCHW depth-to-space by `b` of `shape` (`elem`-byte elements, the
/// input from `seed`), its output shape and [`check`]ed.
fn check_tf_nchw_depth_to_space(shape: [usize; 4], b: usize, elem: usize, seed: u8) {
    let plan = tf::DepthToSpace::new(b as i64, DataFormat::Nchw).plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * elem, seed);
    let (want, out_shape) = ref_depth_to_space_cf(&x, &shape, elem, 1, b, true);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    check(&plan, &x, &shape, elem, 1, &want);
}

/// TF NCHW space-to-depth by `b` of `shape` (`elem`-byte elements, the
/// input from `seed`), its output shape and [`check`]ed against the
/// inverse of the depth-to-space reference.
fn check_tf_nchw_space_to_depth(shape: [usize; 4], b: usize, elem: usize, seed: u8) {
    let plan = tf::SpaceToDepth::new(b as i64, DataFormat::Nchw).plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * elem, seed);
    let out_shape = [shape[0], shape[1] * b * b, shape[2] / b, shape[3] / b];
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    let n = out_shape.iter().product::<usize>();
    let want = invert(&x, n, elem, |labels| ref_depth_to_space_cf(labels, &out_shape, 8, 1, b, true).0);
    check(&plan, &x, &shape, elem, 1, &want);
}

/// ONNX depth-to-space by `b` of `shape` (`elem`-byte elements, the input
/// from `seed`), CRD (depth first, `crd`) or DCR, [`check`]ed.
fn check_onnx_depth_to_space(shape: [usize; 4], b: usize, elem: usize, seed: u8, crd: bool) {
    let op = if crd { onnx::DepthToSpace::crd(b as i64) } else { onnx::DepthToSpace::dcr(b as i64) };
    let plan = op.plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * elem, seed);
    let (want, _) = ref_depth_to_space_cf(&x, &shape, elem, 1, b, !crd);
    check(&plan, &x, &shape, elem, 1, &want);
}

#[test]
fn depth_to_space_of_small_tiles_matches_the_reference() {
    // TF NCHW by 16 of uint8 (tiles of 30 x 16 bytes, 40 image rows), of
    // float16 by 13.
    for (shape, b, elem) in [([1usize, 256, 40, 30], 16usize, 1usize), ([1, 338, 5, 10], 13, 2)] {
        check_tf_nchw_depth_to_space(shape, b, elem, 3);
    }
    // ONNX CRD (depth first) by 6 of uint8; DCR by 11 of float32.
    check_onnx_depth_to_space([1, 72, 30, 145], 6, 1, 9, true);
    check_onnx_depth_to_space([1, 242, 23, 18], 11, 4, 1, false);
}

/// PyTorch pixel shuffle by `r` of `shape` (`elem`-byte elements, the
/// input from `seed`), its output shape and [`check`]ed.
fn check_pixel_shuffle(shape: &[usize], r: usize, elem: usize, seed: u8) {
    let plan = torch::PixelShuffle::new(r as i64).plan(shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * elem, seed);
    let lead = shape.len() - 3;
    let (want, out_shape) = ref_depth_to_space_cf(&x, shape, elem, lead, r, false);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    check(&plan, &x, shape, elem, lead, &want);
}

#[test]
fn pixel_shuffle_of_small_tiles_matches_the_reference() {
    // float32 by 13 under two leading dims; uint8 by 7.
    for (shape, r, elem) in [(vec![2usize, 2, 338, 28, 19], 13usize, 4usize), (vec![2, 98, 16, 26], 7, 1)] {
        check_pixel_shuffle(&shape, r, elem, 5);
    }
}

#[test]
fn repetitions_of_units_without_a_vector_kernel_match_the_reference() {
    // Tiles of units of 3, 6, 12 and 32 bytes (pixels of three channels,
    // their blocks), whose image rows continue the tile's source rows and
    // go next to it as they do for other units: TF NCHW depth-to-space by
    // 3 and 5, ONNX CRD by 6, pixel shuffle by 3.
    for (shape, b, elem) in [([1usize, 18, 10, 7], 3usize, 3usize), ([2, 50, 7, 8], 5, 12)] {
        check_tf_nchw_depth_to_space(shape, b, elem, 13);
    }
    check_onnx_depth_to_space([1, 72, 10, 9], 6, 6, 17, true);
    check_pixel_shuffle(&[2, 18, 5, 6], 3, 32, 19);
}

#[test]
fn repetitions_around_the_sweep_limit_match_the_reference() {
    // complex128 by 4 of 32-unit rows: tiles of 2 KiB; 256 image rows
    // sweep 512 KiB (moved next to the tile), 257 do not.
    for h in [256usize, 257] {
        check_tf_nchw_depth_to_space([1, 16, h, 32], 4, 16, 7);
    }
}

#[test]
fn repetitions_past_the_sweep_limit_match_the_reference() {
    // float32 by 6 of 86-unit rows: tiles of 2,064 bytes, each one
    // destination run; 258 image rows sweep 532,512 bytes, past the
    // limit, but the loops inside them read 36 source streams: past the
    // second-level cache (the plan streams, or its 3.2 MB output is
    // larger than that cache), they move next to the tile, which stays
    // in the cache. Of 85-unit rows, 2,040-byte tiles: not moved.
    for w in [86usize, 85] {
        check_tf_nchw_depth_to_space([1, 36, 258, w], 6, 4, 5);
    }
}

#[test]
fn space_to_depth_of_float64_by_8_to_15_matches_the_reference() {
    // ONNX (blocks first) by 15 and 11: tiles of 15 x 2 and 11 x 3 units
    // continued along the image rows, in squares; by 9 and 10, the tile's
    // own kernels (a second square would be mostly masked off); by 8, one
    // square a side.
    for (shape, b) in [
        ([2usize, 4, 60, 30], 15usize),
        ([1, 3, 44, 33], 11),
        ([1, 2, 36, 27], 9),
        ([1, 2, 40, 50], 10),
        ([1, 3, 32, 16], 8),
    ] {
        let plan = onnx::SpaceToDepth::new(b as i64).plan(&shape).unwrap();
        let x = bytes(shape.iter().product::<usize>() * 8, 11);
        let out_shape = [shape[0], shape[1] * b * b, shape[2] / b, shape[3] / b];
        assert_eq!(plan.output_shape(), out_shape.as_slice());
        let n = out_shape.iter().product::<usize>();
        let want = invert(&x, n, 8, |labels| ref_depth_to_space_cf(labels, &out_shape, 8, 1, b, true).0);
        check(&plan, &x, &shape, 8, 1, &want);
    }
}

#[test]
fn transpositions_of_tiles_continued_both_ways_match_the_reference() {
    // Each reverses the axes: the source's last two axes are one run, and
    // so are the destination's (the source's first two), but the tile is
    // the innermost axis of each (a matrix of the tile repeated along the
    // second of each side). Every unit the transposes move in squares
    // (1 to 32 bytes; 6: packed, with VBMI), sides past a square's with
    // partial squares at the edges; a 6-D one with loops between. The
    // first two have destination rows of whole lines, so that streamed
    // (`Streaming::Always`) their squares stream too.
    let cases: [(&[usize], usize); 10] = [
        (&[16, 3, 2, 4, 16], 8),
        (&[16, 2, 3, 16], 4),
        (&[17, 3, 2, 5, 16], 8),
        (&[20, 3, 4, 18], 1),
        (&[33, 2, 3, 40], 2),
        (&[16, 3, 2, 17], 4),
        (&[16, 2, 3, 16], 16),
        (&[16, 2, 2, 17], 32),
        (&[17, 2, 3, 16], 6),
        (&[16, 3, 2, 2, 3, 16], 8),
    ];
    for (shape, elem) in cases {
        let axes: Vec<i64> = (0..shape.len() as i64).rev().collect();
        check_transpose(shape, &axes, elem, 13);
    }
}

#[test]
fn transpositions_reading_whole_source_rows_match_the_reference() {
    // HPTT's `2,0,4,1,5,3` made small: a tile of the source's axes 5 and
    // 3, the loop of its axis 4 continuing the tile's source rows. Where
    // the full-line squares stream the tile (16 x 16 of 4- and 8-byte
    // units, 32 x 32 of 2-byte ones; `Streaming::Always`), that loop
    // moves next to it past 48 and 64 source streams; sides past a
    // square's take partial squares. And HPTT's reversal of 6 axes made
    // small, a matrix whose source rows the axis 3 continues.
    let cases: [(&[usize], &[i64], usize); 6] = [
        (&[2, 3, 2, 16, 3, 16], &[2, 0, 4, 1, 5, 3], 8),
        (&[2, 3, 2, 16, 3, 16], &[2, 0, 4, 1, 5, 3], 4),
        (&[2, 2, 2, 32, 3, 32], &[2, 0, 4, 1, 5, 3], 2),
        (&[2, 3, 2, 16, 2, 19], &[2, 0, 4, 1, 5, 3], 8),
        (&[16, 3, 3, 3, 2, 8], &[5, 4, 3, 2, 1, 0], 8),
        (&[17, 3, 3, 3, 2, 8], &[5, 4, 3, 2, 1, 0], 4),
    ];
    for (shape, axes, elem) in cases {
        check_transpose(shape, axes, elem, 29);
    }
}

#[test]
fn packed_units_in_the_register_squares_match_the_reference() {
    // TF NCHW space-to-depth (deinterleaves) of 3-byte units by 8 and 12
    // and of 6-byte units by 5 and 9, rows of a square's side of units
    // (8 or 4) and more; TF NCHW depth-to-space (interleaves) of 3-byte
    // units by 8 and 10. Where AVX2 runs without AVX-512, the register
    // squares (units widened to slots); elsewhere the tile's own kernels.
    for (shape, b, elem) in [
        ([1usize, 2, 16, 64], 8usize, 3usize),
        ([1, 3, 24, 108], 12, 3),
        ([1, 2, 10, 20], 5, 6),
        ([2, 1, 18, 45], 9, 6),
    ] {
        check_tf_nchw_space_to_depth(shape, b, elem, 17);
    }
    for (shape, b) in [([1usize, 128, 3, 12], 8usize), ([2, 100, 2, 9], 10)] {
        let plan = tf::DepthToSpace::new(b as i64, DataFormat::Nchw).plan(&shape).unwrap();
        let x = bytes(shape.iter().product::<usize>() * 3, 19);
        let (want, out_shape) = ref_depth_to_space_cf(&x, &shape, 3, 1, b, true);
        assert_eq!(plan.output_shape(), out_shape.as_slice());
        check(&plan, &x, &shape, 3, 1, &want);
    }
    // TF space-to-batch of one 3-byte channel by 2 x 9, padded (a window
    // on the deinterleaved rows), and a numpy transpose that interleaves 10
    // streams far apart.
    let shape = [2usize, 5, 99, 1];
    let plan = tf::SpaceToBatchNd::new(&[2, 9], &[[1, 0], [4, 5]]).plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * 3, 23);
    let (want, out_shape) = ref_space_to_batch(&x, &shape, 3, &[2, 9], &[[1usize, 0], [4, 5]]);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    check(&plan, &x, &shape, 3, 0, &want);
    check_transpose(&[3, 10, 2, 16, 16, 8], &[4, 3, 2, 0, 5, 1], 3, 29);
}

#[test]
fn space_to_depth_of_short_runs_over_a_large_source_matches_the_reference() {
    // TF NCHW space-to-depth whose passes over the source (block rows)
    // read runs shorter than a page from every row of a large source,
    // streamed or not: uint8 by 6, rows of 93 bytes; float16 by 13, rows
    // of 172; float32 by 16, rows of 16 bytes.
    for (shape, b, elem) in
        [([1usize, 2, 960, 558], 6usize, 1usize), ([1, 1, 312, 1118], 13, 2), ([1, 1, 1536, 64], 16, 4)]
    {
        check_tf_nchw_space_to_depth(shape, b, elem, 23);
    }
}

#[test]
fn space_to_depth_staged_into_many_streams_matches_the_reference() {
    // Streamed, each chunk of image rows goes through the stage one block
    // row at a time and each stream on to a slot of its own: float32 by 5
    // (25 streams, chunks of 6 rows and 2), by 9 (81 streams, chunks of 9
    // rows and 1), by 16 (all 256 slots, rows of 188 bytes, chunks of 10
    // rows and 4), float64 by 9 (rows that fill the stage, a chunk each);
    // bytes by 9, float16 by 13 and float32 by 17 are not staged (through
    // the cache).
    let cases = [
        ([1usize, 2, 100, 1205], 5usize, 4usize),
        ([1, 1, 9 * 19, 900], 9, 4),
        ([1, 1, 16 * 24, 752], 16, 4),
        ([1, 1, 18, 9 * 455], 9, 8),
        ([2, 1, 27, 900], 9, 1),
        ([1, 1, 13 * 3, 1118], 13, 2),
        ([1, 1, 34, 17 * 6], 17, 4),
    ];
    for (shape, b, elem) in cases {
        check_tf_nchw_space_to_depth(shape, b, elem, 29);
    }
}

#[test]
fn streamed_matrices_of_many_rows_go_in_chunks_that_match_the_reference() {
    // Reversals of 5 axes: the tile (the last axis by the first), repeated
    // along axes 3 (continuing its source rows) and 1 (its destination
    // rows), one matrix; axis 2 continues the matrix's source rows. Where
    // it is streamed (float32 by AVX-512's full-line squares, float64 by
    // AVX2's too), the matrix's rows go in chunks of whole repetitions of
    // axis 1 (at most 1,024 rows) across axis 2
    // (`plan::repetitions::matrix_chunk`): float32, 4 x 272 rows in
    // chunks of 3 repetitions and 1; 4 x 256, as many as a chunk holds,
    // whole; 2 x 1,104, a repetition a chunk; float64, 4 x 300 of 16 and
    // of 32 columns, in chunks of 3 repetitions and 1 (900 rows, 7,200
    // bytes of each destination row: the chunks split a line).
    for (shape, elem) in [
        ([272, 4, 3, 2, 16], 4),
        ([256, 4, 3, 2, 16], 4),
        ([1104, 2, 3, 2, 16], 4),
        ([300, 4, 3, 2, 16], 8),
        ([300, 4, 3, 2, 32], 8),
    ] {
        check_transpose(&shape, &[4, 3, 2, 1, 0], elem, 31);
    }
}
