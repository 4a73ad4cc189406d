//! A pattern that means a framework operator's rearrangement (unpadded,
//! uncropped) compiles to that operator's loop nest: for every element
//! size, streaming or not, widest or portable kernels, the same
//! `CopyPlan` (its loops, unit, tile, kernels chosen, ...), and the same
//! output. The framework's depth-to-space and batch-to-space plans run
//! backward and the pattern's forward, so their `fill` flag differs; with
//! no window on any loop (asserted) nothing reads it.

use crate::engine::plan::CopyPlan;
use crate::{einops::Rearrange, numpy, onnx, openvino, tf, torch, DataFormat, Kernels, Operator, Plan, Streaming};

fn copy_plans(plan: &Plan, elem: usize) -> Vec<CopyPlan> {
    let mut plans = Vec::new();
    for streaming in [Streaming::Never, Streaming::Always, Streaming::Auto] {
        for kernels in [Kernels::Auto, Kernels::Avx2, Kernels::Portable] {
            plans.push(plan.clone().with_streaming(streaming).with_kernels(kernels).copy_plan(elem));
        }
    }
    plans
}

/// Asserts `op` and the pattern compile to the same loop nests on `shape`,
/// and give the same output.
fn same_plan(op: &dyn Operator, pattern: &str, sizes: &[(&str, usize)], shape: &[usize]) {
    let rearrange = Rearrange::new(pattern, sizes).unwrap();
    let want = op.plan(shape).unwrap();
    let got = rearrange.plan(shape).unwrap();
    assert_eq!(got.input_shape(), want.input_shape(), "{pattern}");
    assert_eq!(got.output_shape(), want.output_shape(), "{pattern}");
    for elem in [1, 2, 3, 4, 6, 8, 12, 16, 32] {
        for (w, mut g) in copy_plans(&want, elem).into_iter().zip(copy_plans(&got, elem)) {
            assert!(w.loops.iter().all(|l| l.window.is_none()), "{}: unpadded", op.name());
            // More than one loop, or a gathered unit: the operator really
            // moves the data.
            assert!(w.loops.len() >= 2 || w.gather.is_some(), "{}: {w:?}", op.name());
            g.fill = w.fill;
            assert_eq!(format!("{g:?}"), format!("{w:?}"), "{} as {pattern:?}, {elem}-byte elements", op.name());
        }
    }
    let x: Vec<u32> = (0..want.input_len() as u32).collect();
    assert_eq!(got.run(&x).unwrap(), want.run(&x).unwrap(), "{pattern}");
}

#[test]
fn tf_space_to_batch_nd_and_back() {
    let s = [("p1", 2), ("p2", 3)];
    let op = tf::SpaceToBatchNd::new(&[2, 3], &[[0, 0], [0, 0]]);
    same_plan(&op, "b (h p1) (w p2) c -> (p1 p2 b) h w c", &s, &[3, 8, 9, 5]);
    let op = tf::BatchToSpaceNd::new(&[2, 3], &[[0, 0], [0, 0]]);
    same_plan(&op, "(p1 p2 b) h w c -> b (h p1) (w p2) c", &s, &[18, 4, 3, 5]);
}

#[test]
fn tf_space_to_batch_and_back() {
    let s = [("p1", 4), ("p2", 4)];
    same_plan(&tf::SpaceToBatch::new(4, [[0, 0], [0, 0]]), "b (h p1) (w p2) c -> (p1 p2 b) h w c", &s, &[2, 8, 12, 3]);
    same_plan(&tf::BatchToSpace::new(4, [[0, 0], [0, 0]]), "(p1 p2 b) h w c -> b (h p1) (w p2) c", &s, &[32, 2, 3, 3]);
}

#[test]
fn tf_space_to_depth_and_back() {
    let s = [("p1", 2), ("p2", 2)];
    let s2d = |f| tf::SpaceToDepth::new(2, f);
    let d2s = |f| tf::DepthToSpace::new(2, f);
    same_plan(&s2d(DataFormat::Nhwc), "b (h p1) (w p2) c -> b h w (p1 p2 c)", &s, &[2, 6, 8, 3]);
    same_plan(&d2s(DataFormat::Nhwc), "b h w (p1 p2 c) -> b (h p1) (w p2) c", &s, &[2, 3, 4, 12]);
    same_plan(&s2d(DataFormat::Nchw), "b c (h p1) (w p2) -> b (p1 p2 c) h w", &s, &[2, 3, 6, 8]);
    same_plan(&d2s(DataFormat::Nchw), "b (p1 p2 c) h w -> b c (h p1) (w p2)", &s, &[2, 12, 3, 4]);
    same_plan(&s2d(DataFormat::NchwVectC), "b c (h p1) (w p2) v -> b (p1 p2 c) h w v", &s, &[2, 3, 6, 8, 4]);
    same_plan(&d2s(DataFormat::NchwVectC), "b (p1 p2 c) h w v -> b c (h p1) (w p2) v", &s, &[2, 8, 3, 4, 4]);
}

#[test]
fn openvino_space_to_batch_and_back() {
    let s = [("k1", 2), ("k2", 4), ("k3", 3)];
    let (zeros, block) = ([0; 5], [1, 2, 4, 3, 1]);
    let op = openvino::SpaceToBatch::new(&block, &zeros, &zeros);
    same_plan(&op, "b (d1 k1) (d2 k2) (d3 k3) c -> (k1 k2 k3 b) d1 d2 d3 c", &s, &[2, 6, 8, 3, 3]);
    let op = openvino::BatchToSpace::new(&block, &zeros, &zeros);
    same_plan(&op, "(k1 k2 k3 b) d1 d2 d3 c -> b (d1 k1) (d2 k2) (d3 k3) c", &s, &[48, 3, 3, 1, 3]);
}

#[test]
fn openvino_space_to_depth_and_back() {
    let s = [("p0", 2), ("p1", 2), ("p2", 2)];
    let shape = [2, 3, 4, 6, 8];
    let op = openvino::SpaceToDepth::blocks_first(2);
    same_plan(&op, "n c (d p0) (h p1) (w p2) -> n (p0 p1 p2 c) d h w", &s, &shape);
    let op = openvino::SpaceToDepth::depth_first(2);
    same_plan(&op, "n c (d p0) (h p1) (w p2) -> n (c p0 p1 p2) d h w", &s, &shape);
    let shape = [2, 24, 2, 3, 4];
    let op = openvino::DepthToSpace::blocks_first(2);
    same_plan(&op, "n (p0 p1 p2 c) d h w -> n c (d p0) (h p1) (w p2)", &s, &shape);
    let op = openvino::DepthToSpace::depth_first(2);
    same_plan(&op, "n (c p0 p1 p2) d h w -> n c (d p0) (h p1) (w p2)", &s, &shape);
}

#[test]
fn onnx_space_to_depth_and_both_depth_to_spaces() {
    let s = [("p1", 3), ("p2", 3)];
    same_plan(&onnx::SpaceToDepth::new(3), "n c (h p1) (w p2) -> n (p1 p2 c) h w", &s, &[2, 5, 6, 9]);
    same_plan(&onnx::DepthToSpace::dcr(3), "n (p1 p2 c) h w -> n c (h p1) (w p2)", &s, &[2, 18, 2, 3]);
    same_plan(&onnx::DepthToSpace::crd(3), "n (c p1 p2) h w -> n c (h p1) (w p2)", &s, &[2, 18, 2, 3]);
}

#[test]
fn torch_pixel_shuffle_and_unshuffle() {
    let s = [("r1", 2), ("r2", 2)];
    let ps = "... (c r1 r2) h w -> ... c (h r1) (w r2)";
    same_plan(&torch::PixelShuffle::new(2), ps, &s, &[2, 3, 12, 5, 7]);
    same_plan(&torch::PixelShuffle::new(2), ps, &s, &[8, 5, 7]);
    let pu = "... c (h r1) (w r2) -> ... (c r1 r2) h w";
    same_plan(&torch::PixelUnshuffle::new(2), pu, &s, &[2, 3, 3, 10, 14]);
}

#[test]
fn numpy_transpose() {
    same_plan(&numpy::Transpose::new(&[2, 0, 3, 1]), "a b c d -> c a d b", &[], &[3, 4, 5, 6]);
    same_plan(&numpy::Transpose::reversed(), "... a b -> b a ...", &[], &[7, 9]);
}
