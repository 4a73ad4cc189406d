//! Kernels that load and store under masks (the byte permutes of
//! interleaves and deinterleaves of many streams, their last step masked
//! to its units; deinterleaves of 3- and 4-byte units, and interleaves of
//! short streams of them, too) touch only the
//! tensor's bytes: sources and destinations
//! that end, or begin, exactly at an inaccessible page fault otherwise.

use blockshuffle::{openvino, tf, torch, DataFormat, Kernels, Operator, Plan, Streaming};

mod common;
use common::bytes;
use common::guarded::{Edge, Guarded};
use common::ALL_KERNELS;

/// Runs `plan` on `elem`-byte elements with its source and destination
/// against guard pages, at either end, on every kernel set, and compares
/// with the portable kernels on ordinary buffers.
fn check(plan: Plan, elem: usize) {
    let n: usize = plan.input_shape().iter().product::<usize>() * elem;
    let x = bytes(n, 11);
    let want =
        plan.clone().with_kernels(Kernels::Portable).with_streaming(Streaming::Never).run_bytes(&x, elem).unwrap();
    for kernels in ALL_KERNELS {
        let plan = plan.clone().with_kernels(kernels).with_streaming(Streaming::Never);
        for edge in [Edge::End, Edge::Start] {
            let src = Guarded::new(&x, edge);
            let mut dst = Guarded::new(&vec![0u8; want.len()], edge);
            plan.run_bytes_into(src.bytes(), elem, dst.bytes_mut()).unwrap();
            assert!(
                dst.bytes() == want.as_slice(),
                "{} {:?} elem {elem} {kernels:?} {edge:?}",
                plan.op(),
                plan.input_shape()
            );
        }
    }
}

#[test]
fn many_stream_interleaves_stay_inside_their_buffers() {
    // Rows of 13, 27 and 50 units in 5 to 13 streams: a masked step alone,
    // whole steps and a masked one, whole steps only.
    for elem in [1, 2] {
        for w in [13, 27, 50] {
            check(tf::DepthToSpace::new(5, DataFormat::Nchw).plan(&[1, 25, 3, w]).unwrap(), elem);
            check(torch::PixelShuffle::new(7).plan(&[2, 49, 2, w]).unwrap(), elem);
            check(openvino::DepthToSpace::depth_first(13).plan(&[1, 13, w]).unwrap(), elem);
        }
    }
}

#[test]
fn many_stream_deinterleaves_stay_inside_their_buffers() {
    for elem in [1, 2, 3, 4] {
        for w in [13, 27, 50] {
            check(tf::SpaceToDepth::new(5, DataFormat::Nchw).plan(&[1, 1, 10, 5 * w]).unwrap(), elem);
            check(torch::PixelUnshuffle::new(9).plan(&[2, 1, 9, 9 * w]).unwrap(), elem);
            check(openvino::SpaceToDepth::blocks_first(6).plan(&[1, 2, 6 * w]).unwrap(), elem);
        }
    }
}

#[test]
fn short_stream_interleaves_of_wide_units_stay_inside_their_buffers() {
    // 3- and 4-byte units in streams of at most one vector, in 5 and 7
    // streams: a masked step alone, whole steps and a masked one.
    for elem in [3, 4] {
        for w in [5, 13, 16] {
            check(tf::DepthToSpace::new(5, DataFormat::Nchw).plan(&[1, 25, 3, w]).unwrap(), elem);
            check(torch::PixelShuffle::new(7).plan(&[2, 49, 2, w]).unwrap(), elem);
        }
    }
}
