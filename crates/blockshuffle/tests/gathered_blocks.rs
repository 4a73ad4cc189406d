//! Small destination blocks gathered from a few source rows by byte
//! permutes (AVX512-VBMI), against the reference on every kernel set,
//! streamed or not: blocks whose rows take more loads than a gather has go
//! as the largest block of fewer loops that fits (OpenVINO depth-to-space
//! and space-to-depth of 3-D blocks, whose whole block of 240 bytes comes
//! from 16 rows of 15 bytes, and whose 60-byte rows of it from 4).

use blockshuffle::{openvino, Operator, Plan, Streaming};

mod common;
use common::reference::*;
use common::ALL_KERNELS;
use common::{bytes, run_poisoned};

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
