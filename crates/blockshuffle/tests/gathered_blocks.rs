//! Small destination blocks gathered from a few source rows by byte
//! permutes (AVX512-VBMI), against the reference on every kernel set,
//! streamed or not: blocks whose rows take more loads than a gather has go
//! as the largest block of fewer loops that fits (OpenVINO depth-to-space
//! and space-to-depth of 3-D blocks, whose whole block of 240 bytes comes
//! from 16 rows of 15 bytes, and whose 60-byte rows of it from 4), and
//! blocks whose rows the next blocks' continue go a few at once (from
//! row-major buffers, and from views whose channels are further apart),
//! and blocks whose last loop a crop cuts go a run of whole rows a call.

use blockshuffle::{openvino, tf, Operator, Plan, Streaming};

mod common;
use common::reference::*;
use common::ALL_KERNELS;
use common::{bytes, check_with_channels_apart, run_poisoned};

fn check(plan: &Plan, x: &[u8], elem: usize, want: &[u8]) {
    for kernels in ALL_KERNELS {
        for streaming in [Streaming::Never, Streaming::Always] {
            let plan = plan.clone().with_kernels(kernels).with_streaming(streaming);
            let y = run_poisoned(&plan, x, elem);
            assert!(y == want, "{} elem {elem} {kernels:?} {streaming:?}", plan.op());
        }
    }
}

#[test]
fn depth_to_space_of_3d_blocks_matches_the_reference() {
    // Blocks first by 4 of 3-byte units; depth first by 4 of float16.
    for (shape, elem, blocks_first) in [([2usize, 192, 11, 4, 5], 3usize, true), ([2, 512, 6, 4, 7], 2, false)] {
        let op =
            if blocks_first { openvino::DepthToSpace::blocks_first(4) } else { openvino::DepthToSpace::depth_first(4) };
        let plan = op.plan(&shape).unwrap();
        let x = bytes(shape.iter().product::<usize>() * elem, 5);
        let (want, out_shape) = ref_depth_to_space_cf(&x, &shape, elem, 1, 4, blocks_first);
        assert_eq!(plan.output_shape(), out_shape.as_slice());
        check(&plan, &x, elem, &want);
    }
}

#[test]
fn space_to_depth_of_3d_blocks_matches_the_reference() {
    // Depth first by 5 of 12-byte units.
    let shape = [1usize, 16, 20, 10, 10];
    let plan = openvino::SpaceToDepth::depth_first(5).plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * 12, 9);
    let out_shape = [1, 16 * 125, 4, 2, 2];
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    let n = out_shape.iter().product::<usize>();
    let want = invert(&x, n, 12, |labels| ref_depth_to_space_cf(labels, &out_shape, 8, 1, 5, false).0);
    check(&plan, &x, 12, &want);
}

#[test]
fn blocks_whose_rows_continue_into_the_next_ones_match_the_reference() {
    // Channels-first depth-to-space with short spatial rows (TF's NCHW):
    // each row of the source continues into the next spatial row's, so
    // the blocks of 2 or 4 spatial rows go at once. By 16 of float32
    // (128-byte blocks from 16 rows of 8 bytes), by 3 of float16.
    for (shape, elem, b) in [([2usize, 256, 2, 2], 4usize, 16usize), ([1, 36, 4, 3], 2, 3)] {
        let plan = openvino::DepthToSpace::blocks_first(b as i64).plan(&shape).unwrap();
        let x = bytes(shape.iter().product::<usize>() * elem, 3);
        let (want, out_shape) = ref_depth_to_space_cf(&x, &shape, elem, 1, b, true);
        assert_eq!(plan.output_shape(), out_shape.as_slice());
        // From row-major buffers, and from views whose channels are
        // further apart (each channel's rows continuing all the same).
        check_with_channels_apart(&plan, &x, &shape, elem, 1, &want);
    }
    // TF batch-to-space of uint8 cropped on its first spatial axis: a
    // window outside the blocks, which go 3 at once along another loop.
    let shape = [495usize, 7, 6, 7];
    let crops = [[10, 5], [0, 0], [0, 0]];
    let plan = tf::BatchToSpaceNd::new(&[11, 9, 5], &crops).plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>(), 5);
    let (want, out_shape) = ref_batch_to_space(&x, &shape, 1, &[11, 9, 5], &[[10, 5], [0, 0], [0, 0]]);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    check(&plan, &x, 1, &want);
    // Padded instead (TF space-to-batch of float64), one at a time: a
    // padded position's fill is one block's.
    let shape = [2usize, 15, 42, 24];
    let plan = tf::SpaceToBatchNd::new(&[13, 14, 12], &[[0, 11], [0, 0], [0, 0]]).plan(&shape).unwrap();
    let x = bytes(shape.iter().product::<usize>() * 8, 7);
    let (want, out_shape) = ref_space_to_batch(&x, &shape, 8, &[13, 14, 12], &[[0, 11], [0, 0], [0, 0]]);
    assert_eq!(plan.output_shape(), out_shape.as_slice());
    check(&plan, &x, 8, &want);
}

#[test]
fn cropped_rows_of_gathered_blocks_match_the_reference() {
    // OpenVINO batch-to-space cropped on the axis of the last loop of
    // blocks, whose window depends on the loop around it: runs of whole
    // rows go as one call of the gather, each row the crop cuts as one of
    // its own. uint8 by 12 x 4 x 12 cropped at W's start (2-byte rows
    // into 24-byte blocks: the first row cut); 3-byte units by 16 x 2 x 3
    // cropped at both ends of H and W (the first and last rows cut, whole
    // rows between); 12-byte units cropped at W's end.
    // Shape, element bytes, block shape, crops at the start and the end.
    type Case = ([usize; 5], usize, [i64; 5], [i64; 5], [i64; 5]);
    let cases: [Case; 3] = [
        ([1152, 4, 6, 5, 2], 1, [1, 1, 12, 4, 12], [0, 0, 0, 1, 0], [0; 5]),
        ([96, 3, 7, 7, 7], 3, [1, 1, 16, 2, 3], [0, 0, 5, 1, 0], [0, 0, 5, 1, 0]),
        ([60, 4, 3, 9, 5], 12, [1, 1, 15, 2, 2], [0; 5], [0, 0, 0, 1, 0]),
    ];
    for (shape, elem, block, begin, end) in cases {
        let plan = openvino::BatchToSpace::new(&block, &begin, &end).plan(&shape).unwrap();
        let x = bytes(shape.iter().product::<usize>() * elem, 11);
        // OpenVINO's batch-to-space is TF's over every axis but the batch.
        let tf_block: Vec<usize> = block[1..].iter().map(|&b| b as usize).collect();
        let crops: Vec<[usize; 2]> =
            begin[1..].iter().zip(&end[1..]).map(|(&a, &b)| [a as usize, b as usize]).collect();
        let (want, out_shape) = ref_batch_to_space(&x, &shape, elem, &tf_block, &crops);
        assert_eq!(plan.output_shape(), out_shape.as_slice());
        check(&plan, &x, elem, &want);
    }
}
