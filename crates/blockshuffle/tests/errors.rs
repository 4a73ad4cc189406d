//! Every validation rule of every operator: the exact error, with its numbers.
//! And the edges each framework accepts: they must give an output, not an error.

use blockshuffle::{onnx, openvino, tf, torch, DataFormat, Error, Index, Operator};

fn err(op: &dyn Operator, shape: &[usize]) -> Error {
    op.plan(shape).map(|p| p.output_shape().to_vec()).unwrap_err()
}

fn shape(op: &dyn Operator, shape: &[usize]) -> Vec<usize> {
    op.plan(shape).unwrap_or_else(|e| panic!("{}: {e}", op.name())).output_shape().to_vec()
}

fn rank(op: &'static str, rank: usize, rule: &str) -> Error {
    Error::Rank { op, rank, rule: rule.into() }
}

fn not_divisible(op: &'static str, what: &str, size: u64, divisor_name: &str, divisor: u64) -> Error {
    Error::NotDivisible { op, what: what.into(), size, divisor_name: divisor_name.into(), divisor }
}

#[test]
fn tf_space_to_batch_nd_rules() {
    const OP: &str = "tf space-to-batch-nd";
    let p2 = [[0, 0], [0, 0]];
    assert_eq!(
        err(&tf::SpaceToBatchNd::new(&[2, 2], &[[0, 0]]), &[1, 2, 2]),
        Error::ParamLength {
            op: OP,
            param: "paddings",
            len: 1,
            expected: 2,
            why: "one [start, end] pair per block_shape value"
        }
    );
    assert_eq!(
        err(&tf::SpaceToBatchNd::new(&[2, 3], &p2), &[4, 6]),
        rank(OP, 2, "must be >= 3 (1 + len(block_shape))")
    );
    assert_eq!(
        err(&tf::SpaceToBatchNd::new(&[2, 0], &p2), &[1, 2, 2]),
        Error::BlockTooSmall { op: OP, param: "block_shape", index: Index(Some(1)), value: 0, min: 1 }
    );
    assert_eq!(
        err(&tf::SpaceToBatchNd::new(&[2, 2], &[[0, 0], [0, -1]]), &[1, 2, 3]),
        Error::Negative { op: OP, param: "paddings", index: Index(Some(3)), value: -1 }
    );
    assert_eq!(
        err(&tf::SpaceToBatchNd::new(&[2, 3], &[[0, 1], [0, 0]]), &[1, 4, 3]),
        not_divisible(OP, "padded spatial dim 0 (input 4 + paddings 0 + 1 = 5)", 5, "block_shape[0]", 2)
    );
    assert_eq!(
        err(&tf::SpaceToBatchNd::new(&[2; 5], &[[0, 0]; 5]), &[1, 2, 2, 2, 2, 2]),
        Error::TooManyBlockDims { op: OP, count: 5, max: 4 }
    );
    // Overflow: paddings that add past u64, and a batch times blocks past u64.
    let huge = i64::MAX;
    assert!(matches!(
        err(&tf::SpaceToBatchNd::new(&[1], &[[huge, huge]]), &[1, 3]),
        Error::Overflow { what: "padded spatial dim", .. }
    ));
    let e = err(&tf::SpaceToBatchNd::new(&[1 << 40, 1 << 40], &p2), &[1 << 20, 1 << 40, 1 << 40]);
    assert!(matches!(e, Error::Overflow { .. }), "{e:?}");
    // Accepted edges: M = 0 (identity), block 1 with padding, zero-size dims padded to a block.
    assert_eq!(shape(&tf::SpaceToBatchNd::new(&[], &[]), &[3, 4]), [3, 4]);
    assert_eq!(shape(&tf::SpaceToBatchNd::new(&[1], &[[2, 1]]), &[3, 4]), [3, 7]);
    assert_eq!(shape(&tf::SpaceToBatchNd::new(&[2], &[[1, 1]]), &[3, 0, 5]), [6, 1, 5]);
    assert_eq!(shape(&tf::SpaceToBatchNd::new(&[2, 2], &p2), &[0, 2, 2]), [0, 1, 1]);
}

#[test]
fn tf_batch_to_space_nd_rules() {
    const OP: &str = "tf batch-to-space-nd";
    let c2 = [[0, 0], [0, 0]];
    assert_eq!(
        err(&tf::BatchToSpaceNd::new(&[2, 3], &c2), &[4, 6]),
        rank(OP, 2, "must be >= 3 (1 + len(block_shape))")
    );
    assert_eq!(
        err(&tf::BatchToSpaceNd::new(&[2, -3], &c2), &[6, 1, 1]),
        Error::BlockTooSmall { op: OP, param: "block_shape", index: Index(Some(1)), value: -3, min: 1 }
    );
    assert_eq!(
        err(&tf::BatchToSpaceNd::new(&[2, 3], &[[-1, 0], [0, 0]]), &[6, 1, 1]),
        Error::Negative { op: OP, param: "crops", index: Index(Some(0)), value: -1 }
    );
    assert_eq!(
        err(&tf::BatchToSpaceNd::new(&[2, 2], &c2), &[6, 1, 1]),
        not_divisible(OP, "batch dim 6", 6, "the product of block sizes", 4)
    );
    assert_eq!(
        err(&tf::BatchToSpaceNd::new(&[2, 3], &[[3, 2], [0, 0]]), &[6, 2, 1]),
        Error::CropTooLarge { op: OP, axis: 0, size: 4, begin: 3, end: 2 }
    );
    assert_eq!(
        err(&tf::BatchToSpaceNd::new(&[2, 2, 2, 2, 2], &[[0, 0]; 5]), &[32, 1, 1, 1, 1, 1]),
        Error::TooManyBlockDims { op: OP, count: 5, max: 4 }
    );
    assert!(matches!(
        err(&tf::BatchToSpaceNd::new(&[i64::MAX, i64::MAX], &c2), &[4, 1, 1]),
        Error::Overflow { what: "product of block sizes", .. }
    ));
    assert_eq!(shape(&tf::BatchToSpaceNd::new(&[2, 3], &[[2, 2], [0, 0]]), &[6, 2, 1]), [1, 0, 3]);
    assert_eq!(shape(&tf::BatchToSpaceNd::new(&[2, 3], &c2), &[0, 2, 1]), [0, 4, 3]);
}

#[test]
fn tf_v1_space_batch_rules() {
    let op = tf::SpaceToBatch::new(0, [[0, 0], [0, 0]]);
    assert_eq!(
        err(&op, &[1, 2, 2, 1]),
        Error::BlockTooSmall { op: "tf space-to-batch", param: "block_shape", index: Index(Some(0)), value: 0, min: 1 }
    );
    assert_eq!(err(&op, &[1, 2, 2]), rank("tf space-to-batch", 3, "must be 4 (NHWC)"));
    let op = tf::BatchToSpace::new(2, [[0, 0], [0, -1]]);
    assert_eq!(
        err(&op, &[4, 1, 1, 1]),
        Error::Negative { op: "tf batch-to-space", param: "crops", index: Index(Some(3)), value: -1 }
    );
    assert_eq!(shape(&tf::SpaceToBatch::new(1, [[1, 0], [0, 2]]), &[1, 1, 1, 1]), [1, 2, 3, 1]);
}

#[test]
fn tf_depth_rules() {
    for df in [DataFormat::Nhwc, DataFormat::Nchw, DataFormat::NchwVectC] {
        let s2d = tf::SpaceToDepth::new(1, df);
        assert_eq!(
            err(&s2d, &[1, 2, 2, 4]),
            Error::BlockTooSmall { op: "tf space-to-depth", param: "block_size", index: Index(None), value: 1, min: 2 }
        );
        let d2s = tf::DepthToSpace::new(-2, df);
        assert!(matches!(err(&d2s, &[1, 2, 2, 4]), Error::BlockTooSmall { value: -2, min: 2, .. }));
    }
    assert_eq!(
        err(&tf::SpaceToDepth::new(2, DataFormat::Nhwc), &[2, 4, 4]),
        rank("tf space-to-depth", 3, "must be 4 (NHWC)")
    );
    assert_eq!(
        err(&tf::SpaceToDepth::new(2, DataFormat::NchwVectC), &[1, 2, 4, 6]),
        rank("tf space-to-depth", 4, "must be 5 (NCHW_VECT_C)")
    );
    assert_eq!(
        err(&tf::SpaceToDepth::new(2, DataFormat::Nhwc), &[1, 4, 5, 1]),
        not_divisible("tf space-to-depth", "width dim (axis 2) 5", 5, "block_size", 2)
    );
    assert_eq!(
        err(&tf::SpaceToDepth::new(2, DataFormat::Nchw), &[1, 1, 3, 4]),
        not_divisible("tf space-to-depth", "height dim (axis 2) 3", 3, "block_size", 2)
    );
    assert_eq!(
        err(&tf::DepthToSpace::new(2, DataFormat::Nhwc), &[1, 1, 1, 6]),
        not_divisible("tf depth-to-space", "depth dim 6", 6, "block_size^2", 4)
    );
    assert_eq!(
        err(&tf::DepthToSpace::new(2, DataFormat::NchwVectC), &[1, 2, 2, 3, 4]),
        not_divisible("tf depth-to-space", "channel groups dim 2", 2, "block_size^2", 4)
    );
    assert_eq!(
        err(&tf::DepthToSpace::new(2, DataFormat::NchwVectC), &[1, 4, 2, 3, 2]),
        Error::VectSize { op: "tf depth-to-space", size: 2 }
    );
    assert!(matches!(
        err(&tf::DepthToSpace::new(i64::MAX, DataFormat::Nhwc), &[1, 1, 1, 4]),
        Error::Overflow { what: "block_size^2", .. }
    ));
    assert!(matches!(
        err(&tf::SpaceToDepth::new(1 << 32, DataFormat::Nhwc), &[1, 1 << 32, 1 << 32, 1]),
        Error::Overflow { .. }
    ));
    assert_eq!(shape(&tf::SpaceToDepth::new(2, DataFormat::NchwVectC), &[1, 2, 4, 6, 4]), [1, 8, 2, 3, 4]);
    assert_eq!(shape(&tf::DepthToSpace::new(2, DataFormat::Nhwc), &[0, 3, 0, 8]), [0, 6, 0, 2]);
}

#[test]
fn openvino_space_batch_rules() {
    const S2B: &str = "ov space-to-batch";
    const B2S: &str = "ov batch-to-space";
    assert_eq!(
        err(&openvino::SpaceToBatch::new(&[1], &[0], &[0]), &[4]),
        rank(S2B, 1, "must be >= 2 ([batch, D_1, ...])")
    );
    assert_eq!(
        err(&openvino::SpaceToBatch::new(&[1, 2, 3], &[0, 0], &[0, 0]), &[1, 2, 3]),
        Error::ParamLength { op: S2B, param: "pads_begin", len: 2, expected: 3, why: "one value per input dim" }
    );
    assert_eq!(
        err(&openvino::SpaceToBatch::new(&[1, 0, 3], &[0; 3], &[0; 3]), &[1, 2, 3]),
        Error::BlockTooSmall { op: S2B, param: "block_shape", index: Index(Some(1)), value: 0, min: 1 }
    );
    assert_eq!(
        err(&openvino::SpaceToBatch::new(&[1, 2], &[0, -1], &[0, 1]), &[1, 2]),
        Error::Negative { op: S2B, param: "pads_begin", index: Index(Some(1)), value: -1 }
    );
    assert_eq!(
        err(&openvino::SpaceToBatch::new(&[1, 2, 4], &[0; 3], &[0, 0, 1]), &[1, 2, 6]),
        not_divisible(S2B, "padded dim 2 (data 6 + pads 0 + 1 = 7)", 7, "block_shape[2]", 4)
    );
    assert!(matches!(
        err(&openvino::SpaceToBatch::new(&[1, 1], &[0, 0], &[1, 0]), &[1, 2]),
        Error::Unsupported { param: "pads_end", value: 1, required: 0, .. }
    ));
    assert_eq!(
        err(&openvino::BatchToSpace::new(&[1, 2, 3], &[0; 3], &[0; 3]), &[10, 1, 1]),
        not_divisible(B2S, "batch dim 10", 10, "the product of block sizes", 6)
    );
    assert_eq!(
        err(&openvino::BatchToSpace::new(&[1, 2, 3], &[0, 0, 0], &[0, 0, -2]), &[6, 1, 1]),
        Error::Negative { op: B2S, param: "crops_end", index: Index(Some(2)), value: -2 }
    );
    assert_eq!(
        err(&openvino::BatchToSpace::new(&[1, 2, 3], &[0, 5, 0], &[0, 4, 0]), &[6, 4, 1]),
        Error::CropTooLarge { op: B2S, axis: 1, size: 8, begin: 5, end: 4 }
    );
    assert!(matches!(
        err(&openvino::BatchToSpace::new(&[3, 1], &[0, 0], &[0, 0]), &[3, 1]),
        Error::Unsupported { param: "block_shape", value: 3, required: 1, .. }
    ));
    assert_eq!(shape(&openvino::SpaceToBatch::new(&[1, 2, 3], &[0, 1, 0], &[0, 1, 0]), &[1, 0, 3]), [6, 1, 1]);
    assert_eq!(shape(&openvino::BatchToSpace::new(&[1, 2, 3], &[0, 4, 0], &[0, 4, 0]), &[6, 4, 1]), [1, 0, 3]);
}

#[test]
fn openvino_depth_rules() {
    const S2D: &str = "ov space-to-depth";
    const D2S: &str = "ov depth-to-space";
    let bf = openvino::Mode::BlocksFirst;
    assert_eq!(
        err(&openvino::SpaceToDepth::new(2, bf), &[8, 6]),
        rank(S2D, 2, "must be >= 3 ([N, C, D1, ..., DK] with K >= 1)")
    );
    assert_eq!(
        err(&openvino::SpaceToDepth::new(0, bf), &[1, 1, 2]),
        Error::BlockTooSmall { op: S2D, param: "block_size", index: Index(None), value: 0, min: 1 }
    );
    assert_eq!(
        err(&openvino::SpaceToDepth::new(2, bf), &[1, 1, 2, 5]),
        not_divisible(S2D, "spatial dim (axis 3) 5", 5, "block_size", 2)
    );
    assert_eq!(
        err(&openvino::DepthToSpace::new(2, openvino::Mode::DepthFirst), &[1, 4, 1, 1, 1]),
        not_divisible(D2S, "channel dim 4", 4, "block_size^3", 8)
    );
    assert!(matches!(err(&openvino::DepthToSpace::new(-2, bf), &[1, 4, 1]), Error::BlockTooSmall { value: -2, .. }));
    assert!(matches!(
        err(&openvino::DepthToSpace::new(1 << 16, bf), &[1, 4, 1, 1, 1, 1, 1]),
        Error::Overflow { what: "block_size^spatial_dims", .. }
    ));
    // Block 1 is valid (identity); a zero channel count too.
    assert_eq!(shape(&openvino::SpaceToDepth::new(1, bf), &[2, 3, 4, 5]), [2, 3, 4, 5]);
    assert_eq!(shape(&openvino::DepthToSpace::new(2, bf), &[2, 0, 3]), [2, 0, 6]);
}

#[test]
fn onnx_rules() {
    assert_eq!(
        err(&onnx::SpaceToDepth::new(2), &[1, 2, 2]),
        rank("onnx space-to-depth", 3, "must be 4 ([N, C, H, W])")
    );
    assert_eq!(
        err(&onnx::SpaceToDepth::new(0), &[1, 1, 2, 2]),
        Error::BlockTooSmall { op: "onnx space-to-depth", param: "blocksize", index: Index(None), value: 0, min: 1 }
    );
    assert_eq!(
        err(&onnx::SpaceToDepth::new(2), &[1, 1, 2, 3]),
        not_divisible("onnx space-to-depth", "width dim (axis 3) 3", 3, "blocksize", 2)
    );
    for d2s in [onnx::DepthToSpace::dcr(2), onnx::DepthToSpace::crd(2)] {
        assert_eq!(
            err(&d2s, &[1, 6, 2, 2]),
            not_divisible("onnx depth-to-space", "channel dim 6", 6, "blocksize^2", 4)
        );
        assert_eq!(err(&d2s, &[1, 4, 1, 1, 1]), rank("onnx depth-to-space", 5, "must be 4 ([N, C, H, W])"));
    }
    assert_eq!(shape(&onnx::DepthToSpace::crd(1), &[1, 3, 2, 2]), [1, 3, 2, 2]);
}

#[test]
fn torch_rules() {
    assert_eq!(
        err(&torch::PixelShuffle::new(0), &[1, 4, 1, 1]),
        Error::BlockTooSmall {
            op: "torch pixel-shuffle",
            param: "upscale_factor",
            index: Index(None),
            value: 0,
            min: 1
        }
    );
    assert_eq!(
        err(&torch::PixelShuffle::new(2), &[4, 1]),
        rank("torch pixel-shuffle", 2, "must be >= 3 ([*, C, H, W])")
    );
    assert_eq!(
        err(&torch::PixelShuffle::new(2), &[1, 6, 1, 1]),
        not_divisible("torch pixel-shuffle", "channel dim 6", 6, "upscale_factor^2", 4)
    );
    assert_eq!(
        err(&torch::PixelUnshuffle::new(2), &[1, 1, 3, 2]),
        not_divisible("torch pixel-unshuffle", "height dim (axis 2) 3", 3, "downscale_factor", 2)
    );
    assert!(matches!(
        err(&torch::PixelUnshuffle::new(-1), &[1, 1, 1]),
        Error::BlockTooSmall { param: "downscale_factor", value: -1, .. }
    ));
    // The documented shape for zero-element inputs, many leading dims, rank 3.
    assert_eq!(shape(&torch::PixelUnshuffle::new(2), &[0, 3, 4, 4]), [0, 12, 2, 2]);
    assert_eq!(shape(&torch::PixelShuffle::new(2), &[2, 3, 1, 4, 5, 6]), [2, 3, 1, 1, 10, 12]);
    assert_eq!(shape(&torch::PixelShuffle::new(3), &[9, 1, 1]), [1, 3, 3]);
}

#[test]
fn ranks_beyond_the_maximum_are_errors_not_panics() {
    let big = vec![1usize; blockshuffle::MAX_RANK + 1];
    assert!(matches!(err(&torch::PixelShuffle::new(1), &big), Error::RankTooLarge { rank: 33, max: 32, .. }));
    assert!(matches!(
        err(&openvino::SpaceToDepth::new(1, openvino::Mode::DepthFirst), &big),
        Error::RankTooLarge { .. }
    ));
    let blocks = vec![1i64; 33];
    let pads = vec![0i64; 33];
    assert!(matches!(err(&openvino::SpaceToBatch::new(&blocks, &pads, &pads), &big), Error::RankTooLarge { .. }));
    let pairs = vec![[0i64, 0]; 33];
    assert!(matches!(err(&tf::SpaceToBatchNd::new(&blocks, &pairs), &[1; 34]), Error::RankTooLarge { .. }));
}

#[test]
fn buffers_of_the_wrong_length_are_errors() {
    let plan = torch::PixelShuffle::new(2).plan(&[1, 4, 1, 1]).unwrap();
    assert_eq!(
        plan.run(&[1u8, 2, 3]),
        Err(Error::BufferLength { param: "input", len: 3, expected: 4, unit: "elements", shape: vec![1, 4, 1, 1] })
    );
    let mut out = [0u8; 5];
    assert_eq!(
        plan.run_into(&[1u8, 2, 3, 4], &mut out),
        Err(Error::BufferLength { param: "output", len: 5, expected: 4, unit: "elements", shape: vec![1, 1, 2, 2] })
    );
    assert_eq!(
        plan.run_bytes(&[0; 7], 2),
        Err(Error::BufferLength { param: "input", len: 7, expected: 8, unit: "bytes", shape: vec![1, 4, 1, 1] })
    );
    let mut out = [std::mem::MaybeUninit::new(0u8); 4];
    assert!(matches!(
        plan.run_bytes_strided_uninit(&[1, 2, 3], &[4, 1, 1, 1], 1, &mut out),
        Err(Error::BufferLength { param: "input", .. })
    ));
    // Negative strides reach back from element 0: the four channels
    // reversed span 4 bytes, not 3.
    assert_eq!(
        plan.run_bytes_strided_uninit(&[1, 2, 3], &[-1, -1, 1, 1], 1, &mut out),
        Err(Error::BufferLength { param: "input", len: 3, expected: 4, unit: "bytes", shape: vec![1, 4, 1, 1] })
    );
    plan.run_bytes_strided_uninit(&[1, 2, 3, 4], &[-1, -1, 1, 1], 1, &mut out).unwrap();
    // SAFETY: the successful run initialised every output byte.
    assert_eq!(out.map(|b| unsafe { b.assume_init() }), [4, 3, 2, 1]);
    assert_eq!(
        plan.run_bytes_strided_uninit(
            &[1, 2, 3, 4],
            &[1, isize::MIN, 1, 1],
            2,
            &mut [std::mem::MaybeUninit::new(0u8); 8]
        ),
        Err(Error::Overflow { op: "torch pixel-shuffle", what: "stride in bytes", a: 1 << 63, b: 2, limit: "isize" })
    );
    assert!(matches!(
        plan.run_bytes_strided_uninit(&[1, 2, 3, 4], &[1, 1], 1, &mut out),
        Err(Error::StrideCount { param: "input", len: 2, rank: 4 })
    ));
}

#[test]
fn crops_removing_everything_write_nothing() {
    // The regression behind a crash: a destination of zero elements whose
    // windows are constant (block 1) must not be filled.
    let op = tf::BatchToSpaceNd::new(&[1, 2], &[[1, 0], [0, 0]]);
    let plan = op.plan(&[2, 1, 3]).unwrap();
    assert_eq!(plan.output_shape(), &[1, 0, 6]);
    assert_eq!(plan.run(&[1u8, 2, 3, 4, 5, 6]).unwrap(), Vec::<u8>::new());
    let op = tf::SpaceToBatchNd::new(&[1, 2], &[[2, 0], [1, 1]]);
    let plan = op.plan(&[1, 0, 2]).unwrap();
    assert_eq!(plan.output_shape(), &[2, 2, 2]);
    assert_eq!(plan.run::<u8>(&[]).unwrap(), vec![0; 8]);
}

#[test]
fn zero_dims_next_to_huge_ones_are_empty_not_overflowing() {
    // Found by fuzzing: [256, 2^63, 0] has no elements; counting them must not overflow.
    let shape = [1, 256, 1 << 62, 0];
    let plan = openvino::SpaceToDepth::new(1, openvino::Mode::BlocksFirst).plan(&shape).unwrap();
    assert_eq!((plan.input_len(), plan.output_len()), (0, 0));
    assert_eq!(plan.run::<u8>(&[]).unwrap(), Vec::<u8>::new());
    let plan = torch::PixelShuffle::new(2).plan(&[0, usize::MAX / 2, 4, 3, 3]).unwrap();
    assert_eq!(plan.output_shape(), &[0, usize::MAX / 2, 1, 6, 6]);
    assert_eq!(plan.run::<u8>(&[]).unwrap(), Vec::<u8>::new());
}

#[test]
fn numpy_transpose_rules() {
    use blockshuffle::numpy::Transpose;
    const OP: &str = "numpy transpose";
    let param_length =
        |len, expected| Error::ParamLength { op: OP, param: "axes", len, expected, why: "one per input dim" };
    assert_eq!(err(&Transpose::new(&[1, 0]), &[2, 3, 4]), param_length(2, 3));
    assert_eq!(err(&Transpose::new(&[]), &[2]), param_length(0, 1));
    assert_eq!(err(&Transpose::new(&[0]), &[]), param_length(1, 0));
    let out_of_bounds = |index, axis, rank| Error::AxisOutOfBounds { op: OP, param: "axes", index, axis, rank };
    assert_eq!(err(&Transpose::new(&[0, 2]), &[2, 3]), out_of_bounds(1, 2, 2));
    assert_eq!(err(&Transpose::new(&[-3, 0]), &[2, 3]), out_of_bounds(0, -3, 2));
    assert_eq!(err(&Transpose::new(&[i64::MIN, 0]), &[2, 3]), out_of_bounds(0, i64::MIN, 2));
    assert_eq!(err(&Transpose::new(&[0, i64::MAX]), &[2, 3]), out_of_bounds(1, i64::MAX, 2));
    // Range before repeats, entry by entry (numpy's order).
    assert_eq!(
        err(&Transpose::new(&[0, 0, 9]), &[2, 3, 4]),
        Error::RepeatedAxis { op: OP, param: "axes", index: 1, axis: 0, dim: 0, first: 0 }
    );
    assert_eq!(err(&Transpose::new(&[1, 9, 1]), &[2, 3, 4]), out_of_bounds(1, 9, 3));
    assert_eq!(
        err(&Transpose::new(&[2, -1, 0]), &[2, 3, 4]).to_string(),
        "numpy transpose: axes[1] = -1 repeats axis 2, already axes[0]"
    );
    // What numpy accepts.
    assert_eq!(shape(&Transpose::new(&[-1, -3, -2]), &[2, 3, 4]), [4, 2, 3]);
    assert_eq!(shape(&Transpose::reversed(), &[2, 0, 4]), [4, 0, 2]);
    assert_eq!(shape(&Transpose::reversed(), &[]), [] as [usize; 0]);
    assert_eq!(shape(&Transpose::new(&[]), &[]), [] as [usize; 0]);
}

#[test]
fn einops_rearrange_rules() {
    use blockshuffle::einops::Rearrange;
    const OP: &str = "einops rearrange";
    let r = |p: &str, sizes: &[(&str, usize)]| Rearrange::new(p, sizes).unwrap();
    let new_err = |p: &str, sizes: &[(&str, usize)]| Rearrange::new(p, sizes).unwrap_err();
    let pattern = |p: &str, problem: &str| Error::Pattern { op: OP, pattern: p.into(), problem: problem.into() };

    // The pattern alone.
    assert_eq!(new_err("a b", &[]), pattern("a b", "needs exactly one `->`, found 0"));
    assert_eq!(new_err("", &[]), pattern("", "needs exactly one `->`, found 0"));
    assert_eq!(new_err("a -> (a", &[]), pattern("a -> (a", "right side: a `(` without its `)`"));
    assert_eq!(
        new_err("(a b) c -> a b c", &[]),
        pattern(
            "(a b) c -> a b c",
            "cannot infer both `a` and `b` of `(a b)`: give the lengths of all but one of them"
        )
    );
    assert_eq!(
        new_err("(a b c) -> a b c", &[("b", 2)]),
        pattern(
            "(a b c) -> a b c",
            "cannot infer both `a` and `c` of `(a b c)`: give the lengths of all but one of them"
        )
    );
    // The sizes.
    let size = |name: &str, value, problem| Error::AxisSize { op: OP, name: name.into(), value, problem };
    assert_eq!(new_err("a -> a", &[("b", 2)]), size("b", 2, "names no axis of the pattern"));
    assert_eq!(new_err("a -> a", &[("_a", 2)]), size("_a", 2, "is not a valid axis name"));
    assert_eq!(new_err("a -> a", &[("", 2)]), size("", 2, "is not a valid axis name"));
    assert_eq!(new_err("a -> a", &[("a", 2), ("a", 2)]), size("a", 2, "is given twice"));
    assert_eq!(new_err("a -> a", &[("b", 2)]).to_string(), "einops rearrange: size b=2 names no axis of the pattern");

    // The input's rank.
    assert_eq!(err(&r("a b -> b a", &[]), &[2]), rank(OP, 1, "must be 2 (the pattern's left side)"));
    assert_eq!(
        err(&r("a b ... -> ... b a", &[]), &[2]),
        rank(OP, 1, "must be >= 2 (the pattern's left side has 2 axes besides `...`)")
    );
    // The lengths.
    let length = |axis, composition: &str, length, known: &str, product| Error::AxisLength {
        op: OP,
        axis,
        composition: composition.into(),
        length,
        known: known.into(),
        product,
    };
    assert_eq!(err(&r("(a b) c -> a b c", &[("a", 2), ("b", 3)]), &[5, 1]), length(0, "(a b)", 5, "a=2 * b=3", 6));
    assert_eq!(err(&r("c a -> a c", &[("a", 3)]), &[1, 4]), length(1, "a", 4, "a=3", 3));
    assert_eq!(err(&r("a 1 -> a", &[]), &[2, 3]), length(1, "()", 3, "a unit axis", 1));
    assert_eq!(
        err(&r("c (a b) -> a b c", &[("b", 4)]), &[1, 6]),
        not_divisible(OP, "input axis 1 `(a b)` of length 6", 6, "b", 4)
    );
    // einops divides by the known lengths: a zero among them is an error.
    assert_eq!(
        err(&r("(a b) -> a b", &[("b", 0)]), &[0]),
        not_divisible(OP, "input axis 0 `(a b)` of length 0", 0, "b", 0)
    );
    assert_eq!(
        err(&r("(a b c) -> a b c", &[("a", 1 << 40), ("b", 1 << 40)]), &[0]),
        Error::Overflow { op: OP, what: "product of a composition's lengths", a: 1 << 40, b: 1 << 40, limit: "u64" }
    );
    // Beyond the engine's ranks.
    let names: Vec<String> = (0..33).map(|i| format!("a{i}")).collect();
    let many = format!("({}) -> {}", names.join(" "), names.join(" "));
    let sizes: Vec<(&str, usize)> = names.iter().skip(1).map(|n| (n.as_str(), 1)).collect();
    assert_eq!(err(&r(&many, &sizes), &[5]), Error::RankTooLarge { op: OP, rank: 33, max: 32 });
    let units = format!("a -> a{}", " 1".repeat(32));
    assert_eq!(err(&r(&units, &[]), &[5]), Error::RankTooLarge { op: OP, rank: 33, max: 32 });
    assert_eq!(shape(&r(&format!("a -> a{}", " ()".repeat(31)), &[]), &[5]).len(), 32);

    // What einops accepts.
    assert_eq!(shape(&r("(a b) -> b a", &[("b", 3)]), &[0]), [3, 0]);
    assert_eq!(shape(&r("-> 1 ()", &[]), &[]), [1, 1]);
    assert_eq!(shape(&r("1 () ->", &[]), &[1, 1]), [] as [usize; 0]);
    assert_eq!(shape(&r("... -> (...)", &[]), &[2, 3, 4]), [24]);
    assert_eq!(shape(&r("... -> (...)", &[]), &[]), [1]);
    assert_eq!(shape(&r("b ... -> (... b)", &[]), &[2]), [2]);
    assert_eq!(shape(&r("a (b 1) -> (1 b) a", &[]), &[2, 3]), [3, 2]);
    assert_eq!(shape(&r("höhe breite -> breite höhe", &[]), &[2, 3]), [3, 2]);
}

/// Library errors name no command to run, keep an I/O error whole as their
/// source, and a byte buffer's length is not called a count of elements.
#[test]
fn messages_are_the_library_s_own() {
    use std::error::Error as _;
    let err = blockshuffle::npy::read(std::path::Path::new("/nonexistent/x.npy")).unwrap_err();
    let io = err.source().and_then(|s| s.downcast_ref::<blockshuffle::IoError>()).unwrap();
    assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    #[cfg(unix)]
    {
        assert_eq!(err.to_string(), "/nonexistent/x.npy: No such file or directory (os error 2)");
        assert_eq!(io.raw_os_error(), Some(2));
        assert_eq!(err, Error::io("/nonexistent/x.npy", std::io::Error::from_raw_os_error(2)));
    }

    let err = blockshuffle::catalog::OpSpec::parse("tf", "pixel-shuffle", &[] as &[&str]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown operator \"tf\" \"pixel-shuffle\": the catalogue has no such framework and operator"
    );

    let plan = torch::PixelShuffle::new(2).plan(&[1, 4, 1, 1]).unwrap();
    assert_eq!(
        plan.run_bytes(&[0; 7], 2).unwrap_err().to_string(),
        "input holds 7 bytes but its shape [1, 4, 1, 1] needs 8 bytes"
    );
    assert_eq!(
        plan.run(&[0u16; 3]).unwrap_err().to_string(),
        "input holds 3 elements but its shape [1, 4, 1, 1] needs 4 elements"
    );
}
