//! Regression tests for the memory-safety findings of issue 25: each ran
//! into undefined behaviour or wrong output before its fix.

use std::mem::MaybeUninit;

use blockshuffle::{onnx, openvino, tf, DataFormat, Kernels, Operator, Parallelism, Streaming};

mod common;
use common::guarded::{Edge, Guarded};
use common::reference::*;
use common::ALL_KERNELS;
use common::{bytes, run_poisoned};

/// Finding 1: rows longer than the crop stage (16 KiB) once overflowed it.
#[test]
fn cropped_rows_longer_than_the_stage() {
    // OpenVINO batch-to-space [2, n] by [1, 2], cropped 3 at the end: rows of n*2 bytes.
    for &n in &[6545usize, 10_000, 40_000] {
        for elem in [1usize, 4] {
            for kernels in ALL_KERNELS {
                for streaming in [Streaming::Auto, Streaming::Always] {
                    let op = openvino::BatchToSpace::new(&[1, 2], &[0, 0], &[0, 3]);
                    let plan = op.plan(&[2, n]).unwrap().with_kernels(kernels).with_streaming(streaming);
                    let x = bytes(2 * n * elem, 7);
                    let y = run_poisoned(&plan, &x, elem);
                    let (want, shape) = ref_batch_to_space(&x, &[2, n], elem, &[2], &[[0, 3]]);
                    assert_eq!(plan.output_shape(), shape.as_slice());
                    assert!(y == want, "n {n} elem {elem} {kernels:?} {streaming:?}");
                }
            }
        }
    }
}

/// Runs `plan` on a strided view of `buf` (which ends at a guard page) and
/// checks it against the row-major copy run through the portable kernels.
fn check_strided(plan: &blockshuffle::Plan, buf: &[u8], strides: &[isize], elem: usize) {
    let shape = plan.input_shape().to_vec();
    let dense = gather_strided(buf, &shape, strides, elem);
    let want =
        plan.clone().with_kernels(Kernels::Portable).with_streaming(Streaming::Never).run_bytes(&dense, elem).unwrap();
    for edge in [Edge::End, Edge::Start] {
        let guarded = Guarded::new(buf, edge);
        let mut out = vec![MaybeUninit::<u8>::uninit(); want.len()];
        plan.run_bytes_strided_uninit(guarded.bytes(), strides, elem, &mut out).unwrap();
        // SAFETY: a successful run writes every output byte.
        let got: Vec<u8> = out.iter().map(|b| unsafe { b.assume_init() }).collect();
        assert!(got == want, "{} {:?} strides {strides:?}", plan.op(), plan.input_shape());
    }
}

/// Finding 2: a source that is not row-major, with streaming stores, came
/// out wrong through the carried and deinterleaving kernels.
#[test]
fn non_contiguous_sources_with_streaming_stores() {
    for kernels in ALL_KERNELS {
        // ONNX SpaceToDepth(2), [1, 2, 2, 64] u8, W and H swapped in memory.
        let plan = onnx::SpaceToDepth::new(2).plan(&[1, 2, 2, 64]).unwrap();
        let plan = plan.with_streaming(Streaming::Always).with_kernels(kernels);
        check_strided(&plan, &bytes(512, 1), &[256, 128, 1, 2], 1);
        // Fortran order, OpenVINO space-to-depth blocks_first.
        let plan = openvino::SpaceToDepth::blocks_first(2).plan(&[2, 4, 8, 64]).unwrap();
        let plan = plan.with_streaming(Streaming::Always).with_kernels(kernels);
        check_strided(&plan, &bytes(2 * 4 * 8 * 64, 2), &[1, 2, 8, 64], 1);
    }
}

/// Finding 3: kernels read whole vectors past the last element the strides
/// address (a zero stride innermost, the rest gapped).
#[test]
fn strided_sources_are_not_read_past_their_elements() {
    for kernels in ALL_KERNELS {
        let plan = tf::DepthToSpace::new(2, DataFormat::Nhwc).plan(&[4, 5, 1, 128]).unwrap();
        let plan = plan.with_streaming(Streaming::Always).with_kernels(kernels);
        check_strided(&plan, &bytes(2052, 3), &[1, 512, 1, 0], 1);
    }
}

/// Finding 4: a thread count beyond any work once spun forever.
#[test]
fn huge_thread_counts_finish() {
    let x = bytes(4 << 20, 4);
    let plan = onnx::SpaceToDepth::new(2).plan(&[1, 4, 1024, 1024]).unwrap();
    let want = plan.run_bytes(&x, 1).unwrap();
    for threads in [usize::MAX, usize::MAX / 4, 1 << 40, 100_000] {
        let plan = plan.clone().with_parallelism(Parallelism::Threads(threads));
        assert!(run_poisoned(&plan, &x, 1) == want, "{threads} threads");
    }
}

/// Finding 5: a stride times the element size beyond `isize` is an error,
/// and negative strides work (the buffer begins at the lowest element).
#[test]
fn strides_are_checked_and_may_be_negative() {
    let plan = onnx::SpaceToDepth::new(2).plan(&[1, 1, 2, 2]).unwrap();
    let mut out = [MaybeUninit::<u8>::uninit(); 16];
    let err = plan.run_bytes_strided_uninit(&[0; 16], &[1, 1, isize::MAX / 2, 1], 4, &mut out).unwrap_err();
    assert!(matches!(err, blockshuffle::Error::Overflow { .. }), "{err}");
    // Reversed rows and columns: 1 2 / 3 4 stored as 4 3 2 1.
    let mut out = [MaybeUninit::<u8>::uninit(); 4];
    plan.run_bytes_strided_uninit(&[4, 3, 2, 1], &[4, 4, -2, -1], 1, &mut out).unwrap();
    assert_eq!(out.map(|b| unsafe { b.assume_init() }), [1, 2, 3, 4]);
    // Every kernel set, streaming or not, on a larger reversed view.
    for kernels in ALL_KERNELS {
        for streaming in [Streaming::Always, Streaming::Never] {
            let plan = tf::SpaceToDepth::new(2, DataFormat::Nhwc).plan(&[2, 8, 16, 24]).unwrap();
            let plan = plan.with_kernels(kernels).with_streaming(streaming);
            check_strided(&plan, &bytes(2 * 8 * 16 * 24, 5), &[8 * 16 * 24, -16 * 24, 24, -1], 1);
        }
    }
}

/// Found by the general front-ends' property tests: a cropped
/// batch-to-space of 16-byte units whose rows the carried kernel declined
/// reached the crop stage's kernel, which its plan had not chosen (a
/// `debug_assert!` then, a checked shape now).
#[test]
fn cropped_rows_of_wide_units_that_the_carried_kernel_declines() {
    let (blocks, crops) = ([3usize, 1], [[0usize, 1], [0, 0]]);
    let shape = [3usize, 2, 3];
    for kernels in ALL_KERNELS {
        for streaming in [Streaming::Always, Streaming::Never] {
            let op = tf::BatchToSpaceNd::new(&[3, 1], &[[0, 1], [0, 0]]);
            let plan = op.plan(&shape).unwrap().with_kernels(kernels).with_streaming(streaming);
            let x = bytes(shape.iter().product::<usize>() * 16, 9);
            let (want, want_shape) = ref_batch_to_space(&x, &shape, 16, &blocks, &crops);
            assert_eq!(plan.output_shape(), want_shape.as_slice());
            assert!(plan.run_bytes(&x, 16).unwrap() == want, "{kernels:?} {streaming:?}");
        }
    }
}
