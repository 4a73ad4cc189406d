//! Property tests: every operator against a naive index-formula reference
//! written straight from the framework documents (independent of the engine),
//! over random ranks, shapes, blocks, paddings/crops, element sizes and
//! strided views; and round trips.

use blockshuffle::{onnx, openvino, tf, torch, DataFormat, Kernels, Operator, OperatorNdarray, Parallelism, Streaming};
use proptest::prelude::*;

mod common;
use common::reference::*;
use common::{bytes, run_both, POISON};

fn elem_size() -> impl Strategy<Value = usize> {
    prop::sample::select(vec![1usize, 2, 3, 4, 8, 16])
}

/// Streaming on small tensors exercises the streaming kernels and loop orders.
fn streaming() -> impl Strategy<Value = Streaming> {
    prop::sample::select(vec![Streaming::Auto, Streaming::Always, Streaming::Never])
}

/// Both kernel sets, so each runs on this machine.
fn kernels() -> impl Strategy<Value = Kernels> {
    prop::sample::select(vec![Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable])
}

fn parallelism() -> impl Strategy<Value = Parallelism> {
    prop::sample::select(vec![Parallelism::Sequential, Parallelism::Threads(2), Parallelism::Threads(3)])
}

/// A TensorFlow space-to-batch case: shape, blocks, paddings.
fn s2b_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<[usize; 2]>)> {
    (1usize..=3, 0usize..=2).prop_flat_map(|(m, rest)| {
        (
            0usize..=3,
            prop::collection::vec((1usize..=4, 0usize..=3, 0usize..=3, 0usize..=3), m),
            prop::collection::vec(0usize..=3, rest),
        )
            .prop_map(|(batch, spatial, remaining)| {
                let mut shape = vec![batch];
                let mut blocks = Vec::new();
                let mut pads = Vec::new();
                for (b, outer, pb, extra) in spatial {
                    let (dim, pad) = padded_axis(b, outer, pb, extra);
                    shape.push(dim);
                    blocks.push(b);
                    pads.push(pad);
                }
                shape.extend(remaining);
                (shape, blocks, pads)
            })
    })
}

/// An axis padded to `outer * b`: the input dim and the pads (at most
/// `pb` before, `extra` after) that add up to it.
fn padded_axis(b: usize, outer: usize, pb: usize, extra: usize) -> (usize, [usize; 2]) {
    let padded = outer * b;
    let pb = pb.min(padded);
    let pe = extra.min(padded - pb);
    (padded - pb - pe, [pb, pe])
}

fn as_i64(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

fn as_i64_pairs(v: &[[usize; 2]]) -> Vec<[i64; 2]> {
    v.iter().map(|&[a, b]| [a as i64, b as i64]).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn tf_space_to_batch_nd_matches_reference(
        (shape, blocks, pads) in s2b_case(), elem in elem_size(), par in parallelism(), st in streaming(),
    ) {
        let (b, p) = (as_i64(&blocks), as_i64_pairs(&pads));
        let plan = tf::SpaceToBatchNd::new(&b, &p).plan(&shape).unwrap().with_parallelism(par).with_streaming(st);
        let x = bytes(plan.input_len() * elem, 3);
        let (want, want_shape) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
        prop_assert_eq!(plan.output_shape(), &want_shape[..]);
        prop_assert_eq!(run_both(&plan, &x, elem), want);
    }

    #[test]
    fn tf_batch_to_space_nd_matches_reference((space, blocks, crops) in s2b_case(), elem in elem_size(), st in streaming()) {
        // The batch-side input shape of a batch-to-space that crops `crops`.
        let prod: usize = blocks.iter().product();
        let mut shape = vec![space[0] * prod];
        for (i, b) in blocks.iter().enumerate() {
            shape.push((space[i + 1] + crops[i][0] + crops[i][1]) / b);
        }
        shape.extend_from_slice(&space[blocks.len() + 1..]);
        let (b, c) = (as_i64(&blocks), as_i64_pairs(&crops));
        let plan = tf::BatchToSpaceNd::new(&b, &c).plan(&shape).unwrap().with_streaming(st);
        let x = bytes(plan.input_len() * elem, 5);
        let (want, want_shape) = ref_batch_to_space(&x, &shape, elem, &blocks, &crops);
        prop_assert_eq!(plan.output_shape(), &want_shape[..]);
        prop_assert_eq!(run_both(&plan, &x, elem), want);
    }

    #[test]
    fn space_to_batch_then_batch_to_space_is_identity((shape, blocks, pads) in s2b_case(), elem in elem_size()) {
        let (b, p) = (as_i64(&blocks), as_i64_pairs(&pads));
        let s2b = tf::SpaceToBatchNd::new(&b, &p).plan(&shape).unwrap();
        let x = bytes(s2b.input_len() * elem, 9);
        let y = run_both(&s2b, &x, elem);
        let b2s = tf::BatchToSpaceNd::new(&b, &p).plan(s2b.output_shape()).unwrap();
        prop_assert_eq!(b2s.output_shape(), &shape[..]);
        prop_assert_eq!(run_both(&b2s, &y, elem), x.clone());
        // The plan's own inverse is the same batch-to-space.
        prop_assert_eq!(run_both(&s2b.inverse(), &y, elem), x);
    }

    #[test]
    fn openvino_space_to_batch_equals_tf_with_all_dims_spatial((shape, blocks, pads) in s2b_case(), elem in elem_size()) {
        // OpenVINO blocks every non-batch dim: extend the TF case with blocks of 1.
        let n = shape.len();
        let mut ov_block = vec![1i64];
        ov_block.extend(as_i64(&blocks));
        ov_block.resize(n, 1);
        let mut begin = vec![0i64];
        let mut end = vec![0i64];
        for p in &pads { begin.push(p[0] as i64); end.push(p[1] as i64); }
        begin.resize(n, 0);
        end.resize(n, 0);
        let ov = openvino::SpaceToBatch::new(&ov_block, &begin, &end).plan(&shape).unwrap();
        let x = bytes(ov.input_len() * elem, 1);
        let (want, want_shape) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
        prop_assert_eq!(ov.output_shape(), &want_shape[..]);
        prop_assert_eq!(run_both(&ov, &x, elem), want.clone());
        let back = openvino::BatchToSpace::new(&ov_block, &begin, &end).plan(&want_shape).unwrap();
        prop_assert_eq!(run_both(&back, &want, elem), x);
    }

    #[test]
    fn channels_first_depth_ops_match_reference(
        lead in 0usize..=2, k in 1usize..=3, b in 1usize..=3, c in 0usize..=3, dims in prop::collection::vec(0usize..=3, 5),
        elem in elem_size(), blocks_first in any::<bool>(), par in parallelism(), st in streaming(), kern in kernels(),
    ) {
        // A depth-side shape [lead.., C * b^k, D_1..D_k].
        let mut shape: Vec<usize> = dims[..lead].iter().map(|d| d % 3 + 1).collect();
        shape.push(c * b.pow(k as u32));
        shape.extend(dims[lead..lead + k].iter().copied());
        let x = bytes(shape.iter().product::<usize>() * elem, 7);
        let (want, want_shape) = ref_depth_to_space_cf(&x, &shape, elem, lead, b, blocks_first);
        let spatial_in: Vec<usize> = want_shape.clone();
        // OpenVINO (lead = 1 only) and, for k = 2, ONNX (lead 1) and PyTorch (any lead).
        let mut plans = Vec::new();
        if lead == 1 {
            let mode = if blocks_first { openvino::Mode::BlocksFirst } else { openvino::Mode::DepthFirst };
            plans.push((openvino::DepthToSpace::new(b as i64, mode).plan(&shape).unwrap(),
                        openvino::SpaceToDepth::new(b as i64, mode).plan(&spatial_in).unwrap()));
            if k == 2 {
                let onnx_mode = if blocks_first { onnx::DepthToSpace::dcr(b as i64) } else { onnx::DepthToSpace::crd(b as i64) };
                let s2d = onnx_mode.plan(&shape).unwrap().inverse();
                plans.push((onnx_mode.plan(&shape).unwrap(), s2d));
                if blocks_first && b >= 2 {
                    plans.push((tf::DepthToSpace::new(b as i64, DataFormat::Nchw).plan(&shape).unwrap(),
                                tf::SpaceToDepth::new(b as i64, DataFormat::Nchw).plan(&spatial_in).unwrap()));
                }
            }
        }
        if k == 2 && !blocks_first && lead >= 1 {
            plans.push((torch::PixelShuffle::new(b as i64).plan(&shape).unwrap(),
                        torch::PixelUnshuffle::new(b as i64).plan(&spatial_in).unwrap()));
        }
        for (d2s, s2d) in plans {
            let d2s = d2s.with_parallelism(par).with_streaming(st).with_kernels(kern);
            let s2d = s2d.with_parallelism(par).with_streaming(st).with_kernels(kern);
            prop_assert_eq!(d2s.output_shape(), &want_shape[..]);
            prop_assert_eq!(run_both(&d2s, &x, elem), want.clone(), "{}", d2s.op());
            prop_assert_eq!(s2d.output_shape(), &shape[..]);
            prop_assert_eq!(run_both(&s2d, &want, elem), x.clone(), "{}", s2d.op());
        }
    }

    #[test]
    fn tf_nhwc_depth_ops_match_reference(
        n in 0usize..=2, h in 0usize..=3, w in 0usize..=3, c in 0usize..=3, b in 2usize..=3, elem in elem_size(),
        st in streaming(),
    ) {
        let shape = vec![n, h, w, c * b * b];
        let x = bytes(shape.iter().product::<usize>() * elem, 11);
        let (want, want_shape) = ref_depth_to_space_nhwc(&x, &shape, elem, b);
        let d2s = tf::DepthToSpace::new(b as i64, DataFormat::Nhwc).plan(&shape).unwrap().with_streaming(st);
        prop_assert_eq!(d2s.output_shape(), &want_shape[..]);
        prop_assert_eq!(run_both(&d2s, &x, elem), want.clone());
        let s2d = tf::SpaceToDepth::new(b as i64, DataFormat::Nhwc).plan(&want_shape).unwrap().with_streaming(st);
        let want_back = invert(&want, x.len() / elem, elem, |labels| ref_depth_to_space_nhwc(labels, &shape, 8, b).0);
        prop_assert_eq!(run_both(&s2d, &want, elem), want_back);
    }

    #[test]
    fn strided_views_match_contiguous(
        (shape, blocks, pads) in s2b_case(), flip in prop::collection::vec(any::<bool>(), 6), transpose in any::<bool>(),
    ) {
        use ndarray::{ArrayD, Axis, IxDyn};
        let (b, p) = (as_i64(&blocks), as_i64_pairs(&pads));
        let op = tf::SpaceToBatchNd::new(&b, &p);
        let n: usize = shape.iter().product();
        let values: Vec<u32> = (0..n as u32).map(|v| v.wrapping_mul(2654435761)).collect();
        // Build the same logical array behind a strided view: store it with
        // some axes reversed (and maybe transposed), then view it back.
        let base = ArrayD::from_shape_vec(IxDyn(&shape), values.clone()).unwrap();
        let mut stored = base.clone();
        for (d, &f) in flip.iter().enumerate().take(shape.len()) {
            if f { stored.invert_axis(Axis(d)); }
        }
        let stored = if transpose { stored.reversed_axes().as_standard_layout().into_owned() } else { stored.as_standard_layout().into_owned() };
        let mut view = if transpose { stored.view().reversed_axes() } else { stored.view() };
        for (d, &f) in flip.iter().enumerate().take(shape.len()) {
            if f { view.invert_axis(Axis(d)); }
        }
        prop_assert_eq!(&view, &base.view());
        let (want, want_shape) = op.apply(&values, &shape).unwrap();
        let got = op.apply_array(view.clone()).unwrap();
        prop_assert_eq!(got.shape(), &want_shape[..]);
        prop_assert_eq!(got.iter().copied().collect::<Vec<_>>(), want.clone());
        // Into a strided (reversed) output view.
        let mut out = ArrayD::<u32>::zeros(IxDyn(&want_shape));
        let mut out_view = out.view_mut();
        if !want_shape.is_empty() { out_view.invert_axis(Axis(0)); }
        op.apply_array_into(view, out_view).unwrap();
        if !want_shape.is_empty() { out.invert_axis(Axis(0)); }
        prop_assert_eq!(out.iter().copied().collect::<Vec<_>>(), want);
    }
}

/// Outputs above the parallel threshold go through the threaded executor.
#[test]
fn large_outputs_agree_across_thread_counts() {
    let cases: Vec<(Box<dyn Operator>, Vec<usize>, usize)> = vec![
        (Box::new(tf::SpaceToBatchNd::new(&[2, 3], &[[1, 2], [0, 3]])), vec![3, 241, 360, 5], 4),
        (Box::new(torch::PixelShuffle::new(2)), vec![2, 3, 64, 96, 128], 2),
        (Box::new(onnx::SpaceToDepth::new(4)), vec![4, 3, 512, 512], 1),
        (Box::new(tf::BatchToSpaceNd::new(&[4], &[[3, 1]])), vec![16, 300, 77], 8),
        (Box::new(openvino::SpaceToBatch::new(&[1, 1, 5], &[0, 0, 4], &[0, 0, 1])), vec![2, 300, 3195], 3),
        // Windowed tiles: padded rows carried, cropped rows interleaved.
        (Box::new(openvino::SpaceToBatch::new(&[1, 1, 4, 4], &[0, 0, 2, 2], &[0, 0, 2, 2])), vec![4, 16, 252, 252], 1),
        (Box::new(openvino::BatchToSpace::new(&[1, 1, 4, 4], &[0, 0, 2, 1], &[0, 0, 2, 3])), vec![64, 16, 64, 64], 1),
        // Three streams, and 16-byte units.
        (Box::new(torch::PixelUnshuffle::new(3)), vec![2, 4, 384, 384], 4),
        (Box::new(torch::PixelShuffle::new(2)), vec![2, 16, 128, 128], 16),
        // Three-channel tiles carried from the outermost loop, whose rows
        // the threads split (deinterleaved, interleaved, and both in one).
        (Box::new(tf::SpaceToDepth::new(2, DataFormat::Nhwc)), vec![2, 600, 602, 3], 1),
        (Box::new(tf::BatchToSpaceNd::new(&[3, 3], &[[0, 0], [0, 0]])), vec![18, 120, 121, 3], 4),
        (Box::new(tf::DepthToSpace::new(3, DataFormat::Nhwc)), vec![1, 160, 161, 27], 4),
    ];
    for (op, shape, elem) in cases {
        let plan = op.plan(&shape).unwrap();
        assert!(plan.output_len() * elem > 2 << 20, "{} is large", op.name());
        let x = bytes(plan.input_len() * elem, 13);
        let seq = run_both(&plan, &x, elem);
        for threads in [2, 3, 8] {
            for st in [Streaming::Always, Streaming::Never] {
                for kern in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
                    let par = plan
                        .clone()
                        .with_parallelism(Parallelism::Threads(threads))
                        .with_streaming(st)
                        .with_kernels(kern);
                    assert!(run_both(&par, &x, elem) == seq, "{} with {threads} threads, {st:?}, {kern:?}", op.name());
                }
            }
        }
    }
}

/// The typed API pads with `T::default()`, the byte API with zeros.
#[test]
fn typed_padding_is_default() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Pixel(u8, u8, u8);
    impl Default for Pixel {
        fn default() -> Self {
            Pixel(0, 0, 255)
        }
    }
    let op = tf::SpaceToBatchNd::new(&[2], &[[1, 0]]);
    let (y, shape) = op.apply(&[Pixel(1, 2, 3)], &[1, 1]).unwrap();
    assert_eq!(shape.as_slice(), &[2, 1]);
    assert_eq!(y, [Pixel(0, 0, 255), Pixel(1, 2, 3)]);
    let y = run_both(&op.plan(&[1, 1]).unwrap(), &[1, 2, 3], 3);
    assert_eq!(y, [0, 0, 0, 1, 2, 3]);
}

/// Every short-run kernel (each unit size and stream count, SIMD and
/// portable, streamed or not), with widths that leave vector tails.
#[test]
fn short_run_kernels_agree_with_the_reference() {
    for elem in [1usize, 2, 3, 4, 8, 16] {
        for b in [2usize, 3, 4] {
            for w in [1usize, 7, 16, 17, 33, 67] {
                // pixel_shuffle input [1, 2 * b * b, 3, w] (interleave), and
                // its inverse pixel_unshuffle (deinterleave).
                let shape = vec![1, 2 * b * b, 3, w];
                let x = bytes(shape.iter().product::<usize>() * elem, (w + b) as u8);
                let (want, want_shape) = ref_depth_to_space_cf(&x, &shape, elem, 1, b, false);
                for kern in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
                    for st in [Streaming::Always, Streaming::Never] {
                        let d2s = torch::PixelShuffle::new(b as i64)
                            .plan(&shape)
                            .unwrap()
                            .with_kernels(kern)
                            .with_streaming(st);
                        assert_eq!(run_both(&d2s, &x, elem), want, "shuffle elem {elem} b {b} w {w} {kern:?} {st:?}");
                        let s2d = torch::PixelUnshuffle::new(b as i64)
                            .plan(&want_shape)
                            .unwrap()
                            .with_kernels(kern)
                            .with_streaming(st);
                        assert_eq!(run_both(&s2d, &want, elem), x, "unshuffle elem {elem} b {b} w {w} {kern:?} {st:?}");
                    }
                }
            }
        }
    }
}

/// Streaming plans, compared with the same plans storing directly: long
/// units through the line writers (padding forward, crops backward), short
/// units in staged regions, and chunks of deinterleaving tiles gathered per
/// destination stream (chunk counts that do not divide the staged loop,
/// units of 1 to 8 bytes).
#[test]
fn staged_streaming_agrees_with_direct_stores() {
    let cases: Vec<(Box<dyn Operator>, Vec<usize>, usize)> = vec![
        (Box::new(tf::SpaceToBatchNd::new(&[2, 2], &[[1, 2], [3, 0]])), vec![2, 61, 37, 24], 4),
        (Box::new(tf::BatchToSpaceNd::new(&[2, 2], &[[1, 2], [3, 0]])), vec![8, 32, 20, 24], 4),
        (Box::new(tf::DepthToSpace::new(2, DataFormat::Nhwc)), vec![2, 16, 64, 64], 4),
        (Box::new(tf::SpaceToDepth::new(2, DataFormat::Nhwc)), vec![2, 32, 64, 16], 8),
        (Box::new(torch::PixelShuffle::new(2)), vec![2, 16, 32, 300], 2),
        (Box::new(onnx::SpaceToDepth::new(2)), vec![1, 8, 64, 512], 4),
        (Box::new(openvino::BatchToSpace::new(&[1, 2, 3], &[0, 1, 2], &[0, 3, 0])), vec![12, 40, 300], 3),
        (Box::new(onnx::DepthToSpace::dcr(1)), vec![1, 3, 100, 300], 1),
        (Box::new(onnx::SpaceToDepth::new(2)), vec![1, 3, 74, 600], 4),
        (Box::new(onnx::SpaceToDepth::new(3)), vec![2, 2, 150, 1203], 1),
        (Box::new(torch::PixelUnshuffle::new(4)), vec![2, 3, 76, 520], 1),
        (Box::new(torch::PixelUnshuffle::new(2)), vec![1, 5, 98, 1024], 2),
        (Box::new(tf::SpaceToDepth::new(2, DataFormat::Nchw)), vec![1, 3, 64, 2050], 8),
        (Box::new(openvino::SpaceToDepth::blocks_first(2)), vec![3, 5, 1400], 4),
        // Three-channel NHWC pixels: a destination row (12 KiB) is too
        // short a region, so the loop over rows is split to stage two.
        (Box::new(tf::SpaceToDepth::new(2, DataFormat::Nhwc)), vec![1, 12, 512, 3], 4),
        (Box::new(tf::DepthToSpace::new(2, DataFormat::Nhwc)), vec![1, 6, 256, 12], 4),
    ];
    for (op, shape, elem) in cases {
        let plan = op.plan(&shape).unwrap();
        let x = bytes(plan.input_len() * elem, 17);
        let direct = run_both(&plan.clone().with_streaming(Streaming::Never), &x, elem);
        for par in [Parallelism::Sequential, Parallelism::Threads(2)] {
            let staged = plan.clone().with_streaming(Streaming::Always).with_parallelism(par);
            assert!(run_both(&staged, &x, elem) == direct, "{} {shape:?} {par:?}", op.name());
        }
    }
}

/// Runs that report progress go in chunks of about 16 MiB of output (as
/// finely as the loop nest can be cut): the same bytes as one run, with
/// reports that rise to the total. Plans of
/// every shape of nest: padding filled (forward), crops (backward), a staged
/// tile, a long-unit gather and a plain copy (no loops), on one thread and two.
#[test]
fn chunked_runs_with_progress_agree_with_whole_runs() {
    let cases: Vec<(Box<dyn Operator>, Vec<usize>, usize)> = vec![
        (Box::new(tf::SpaceToBatchNd::new(&[2, 2], &[[1, 3], [2, 0]])), vec![4, 300, 300, 40], 4),
        (Box::new(tf::BatchToSpaceNd::new(&[2, 2], &[[1, 3], [2, 0]])), vec![16, 151, 150, 40], 4),
        (Box::new(onnx::SpaceToDepth::new(2)), vec![4, 10, 512, 520], 4),
        (Box::new(tf::DepthToSpace::new(2, DataFormat::Nhwc)), vec![4, 100, 128, 256], 4),
        (Box::new(onnx::DepthToSpace::dcr(1)), vec![1, 3, 1000, 3000], 4),
    ];
    for (op, shape, elem) in cases {
        let plan = op.plan(&shape).unwrap();
        let x = bytes(plan.input_len() * elem, 23);
        let whole = run_both(&plan, &x, elem);
        assert!(whole.len() > 32 << 20, "{}: {} bytes is less than three chunks", op.name(), whole.len());
        for par in [Parallelism::Sequential, Parallelism::Threads(2)] {
            let plan = plan.clone().with_parallelism(par);
            let mut out = vec![std::mem::MaybeUninit::new(POISON); whole.len()];
            let mut reports = Vec::new();
            plan.run_bytes_uninit_with_progress(&x, elem, &mut out, &mut |done, total| reports.push((done, total)))
                .unwrap();
            // SAFETY: the run succeeded, so every output byte was written.
            let out = unsafe { &*(out.as_slice() as *const [std::mem::MaybeUninit<u8>] as *const [u8]) };
            assert!(out == whole.as_slice(), "{} {par:?}: chunked output differs", op.name());
            let total = whole.len() as u64;
            assert!(reports.len() >= 2, "{} {par:?}: {} reports", op.name(), reports.len());
            assert!(reports.windows(2).all(|w| w[0].0 < w[1].0), "{} {par:?}: {reports:?}", op.name());
            assert!(reports.iter().all(|&(_, t)| t == total));
            assert_eq!(reports.last(), Some(&(total, total)), "{} {par:?}", op.name());
        }
    }
}

/// Every unit size the strided copy kernels distinguish (1 to 33 bytes: the
/// power-of-two moves, the overlapping pairs of 2, 4, 8 and 16 bytes, and
/// the general copy), in crops whose innermost loops are strided (the
/// OpenVINO specification's 5-D example with one channel, in TF's terms,
/// and a 4-D one),
/// with the portable and vector kernels.
#[test]
fn every_unit_size_agrees_with_the_reference() {
    // (input shape, block shape, crops)
    type Case = (&'static [usize], &'static [usize], &'static [[usize; 2]]);
    let cases: [Case; 2] =
        [(&[48, 3, 3, 1, 1], &[2, 4, 3], &[[0, 0], [1, 1], [0, 0]]), (&[12, 3, 4, 1], &[2, 3], &[[1, 0], [0, 2]])];
    for (shape, blocks, crops) in cases {
        let (b, c) = (as_i64(blocks), as_i64_pairs(crops));
        for elem in 1..=33 {
            let x = bytes(shape.iter().product::<usize>() * elem, elem as u8);
            let (want, _) = ref_batch_to_space(&x, shape, elem, blocks, crops);
            for kern in [Kernels::Auto, Kernels::Portable] {
                let plan = tf::BatchToSpaceNd::new(&b, &c).plan(shape).unwrap().with_kernels(kern);
                assert_eq!(run_both(&plan, &x, elem), want, "{shape:?} elem {elem} {kern:?}");
            }
        }
    }
}

/// Destination runs longer than a staging region are cut, and the loop
/// outside them walks the source in order: long 1-D and 2-D space-to-batch
/// runs (one with padding on the other axis, one whose count has no divisor
/// to cut at), streamed and not, against the reference.
#[test]
fn long_runs_cut_for_locality_agree_with_the_reference() {
    type Case = (&'static [usize], &'static [usize], &'static [[usize; 2]], usize);
    let cases: [Case; 3] = [
        (&[8, 2048, 32], &[4], &[[0, 0]], 4),
        (&[2, 6, 1024, 24], &[2, 4], &[[1, 1], [0, 0]], 4),
        (&[1, 4099, 40], &[1], &[[0, 0]], 8),
    ];
    for (shape, blocks, pads, elem) in cases {
        let x = bytes(shape.iter().product::<usize>() * elem, 9);
        let (want, want_shape) = ref_space_to_batch(&x, shape, elem, blocks, pads);
        for st in [Streaming::Always, Streaming::Never] {
            let plan = tf::SpaceToBatchNd::new(&as_i64(blocks), &as_i64_pairs(pads)).plan(shape).unwrap();
            let plan = plan.with_streaming(st);
            assert_eq!(plan.output_shape(), &want_shape[..]);
            assert!(run_both(&plan, &x, elem) == want, "{shape:?} {blocks:?} {st:?}");
        }
    }
}

/// Runs `plan` into an output `offset` bytes past a 64-byte boundary, with
/// at least a line of guard bytes either side in a larger buffer: the
/// output, or what went wrong (bytes written outside it).
fn run_at_offset(plan: &blockshuffle::Plan, x: &[u8], elem: usize, offset: usize) -> Result<Vec<u8>, String> {
    let len = plan.output_len() * elem;
    let mut buf = vec![0x5Au8; len + 3 * 64];
    let start = 64 + (64 - buf.as_ptr() as usize % 64) % 64 + offset % 64;
    plan.run_bytes_into(x, elem, &mut buf[start..start + len]).unwrap();
    let outside = buf[..start].iter().chain(&buf[start + len..]);
    if !outside.into_iter().all(|&v| v == 0x5A) {
        return Err(format!("bytes written outside the output at offset {offset}"));
    }
    Ok(buf[start..start + len].to_vec())
}

/// Streaming deinterleaving tiles whose destination streams continue from
/// one row to the next (pixel_unshuffle, NCHW space-to-depth, space-to-batch
/// of the last axis alone) carry each stream's bytes across rows in
/// registers where the CPU has AVX512-VBMI, and write whole lines: 2, 3 and
/// 4 streams per row, 2 to 16 streams in all, units of 1 to 16 bytes, rows of
/// one line to three with and without a partial last vector, streams a
/// line multiple apart and not (each starting at its own offset in a
/// line), outputs at offsets across a line, each kernel setting.
#[test]
fn deinterleaving_tiles_carried_across_rows_match_direct_stores() {
    for elem in [1usize, 2, 4, 8, 16] {
        let per = 64 / elem;
        for width in [per, per + 1, 2 * per + per / 2, 3 * per - 1] {
            // Enough rows that a channel is a whole number of lines.
            let rows = 64 / gcd(width * elem, 64);
            let cases: [(Box<dyn Operator>, Vec<usize>); 6] = [
                (Box::new(torch::PixelUnshuffle::new(2)), vec![2, 3, 2 * rows, 2 * width]),
                (Box::new(torch::PixelUnshuffle::new(3)), vec![1, 2, 3 * rows, 3 * width]),
                (Box::new(onnx::SpaceToDepth::new(3)), vec![1, 1, 3 * rows + 3, 3 * width]),
                (Box::new(onnx::SpaceToDepth::new(4)), vec![1, 2, 4 * rows, 4 * width]),
                (Box::new(openvino::SpaceToBatch::new(&[1, 1, 2], &[0, 0, 0], &[0, 0, 0])), vec![2, rows, 2 * width]),
                (Box::new(torch::PixelUnshuffle::new(2)), vec![1, 2, 2 * rows + 2, 2 * width]),
            ];
            for (op, shape) in cases {
                streamed_at_line_offsets_match_direct_stores(op.as_ref(), &shape, elem);
            }
        }
    }
}

/// The inverse: interleaving tiles whose destination rows follow one
/// another (pixel_shuffle, NCHW depth-to-space in both modes) carry the
/// run's bytes across rows in a register where the CPU has AVX512-VBMI:
/// 2, 3 and 4 streams, units of 1 to 16 bytes, rows of one line per stream
/// and more, with and without a partial last vector and not a line
/// multiple long, outputs at offsets across a line, each kernel setting.
#[test]
fn interleaving_tiles_carried_across_rows_match_direct_stores() {
    for elem in [1usize, 2, 4, 8, 16] {
        let per = 64 / elem;
        for width in [per, per + 1, 2 * per + per / 2, 3 * per - 1] {
            let cases: [(Box<dyn Operator>, Vec<usize>); 5] = [
                (Box::new(torch::PixelShuffle::new(2)), vec![2, 3 * 4, 3, width]),
                (Box::new(torch::PixelShuffle::new(3)), vec![1, 2 * 9, 2, width]),
                (Box::new(onnx::DepthToSpace::dcr(4)), vec![1, 16, 2, width]),
                (Box::new(onnx::DepthToSpace::crd(2)), vec![2, 2 * 4, 5, width]),
                (Box::new(tf::DepthToSpace::new(2, DataFormat::Nchw)), vec![1, 4, 1, width]),
            ];
            for (op, shape) in cases {
                streamed_at_line_offsets_match_direct_stores(op.as_ref(), &shape, elem);
            }
        }
    }
}

/// `op` on `shape` streamed into outputs at offsets across a line, with
/// each kernel setting, against the same plan's direct (cached) stores.
fn streamed_at_line_offsets_match_direct_stores(op: &dyn Operator, shape: &[usize], elem: usize) {
    let plan = op.plan(shape).unwrap();
    let x = bytes(plan.input_len() * elem, shape.iter().sum::<usize>() as u8);
    let want = run_both(&plan.clone().with_streaming(Streaming::Never), &x, elem);
    for offset in [0, 1, 8, 16, 40, 56, 57, 63] {
        for kern in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
            let p = plan.clone().with_streaming(Streaming::Always).with_kernels(kern);
            let got = run_at_offset(&p, &x, elem, offset);
            let what = format!("{} {shape:?} elem {elem} +{offset} {kern:?}", op.name());
            assert!(got.as_ref() == Ok(&want), "{what}: {:?}", got.err());
        }
    }
}

/// NHWC space-to-batch (padded), batch-to-space (cropped) and
/// depth-to-space whose output rows gather 256 bytes to 8 KiB of 32- to
/// 128-byte units: streamed, they go straight to the destination with the
/// source swept ahead. Rows of 64, 40, 16 and 8 units, either side of the
/// shortest rows that stream (512 bytes, or 256 where rows continue one
/// another; the staged path at an unaligned destination is the kernel
/// test's), one thread and two, against the reference.
#[test]
fn long_gathered_rows_stream_match_reference() {
    for (elem, c) in [(1usize, 32usize), (1, 64), (2, 64), (4, 32)] {
        for block in [2usize, 4] {
            for w in [64 * block, 40 * block, 16 * block, 8 * block] {
                let blocks = vec![block, block];
                for pads in [vec![[0, 0], [0, 0]], vec![[1, block - 1], [block - 1, 1]]] {
                    let shape = vec![2, 3 * block - pads[0][0] - pads[0][1], w - pads[1][0] - pads[1][1], c];
                    let x = bytes(shape.iter().product::<usize>() * elem, 11);
                    let (want, want_shape) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
                    let (b, p) = (as_i64(&blocks), as_i64_pairs(&pads));
                    for par in [Parallelism::Sequential, Parallelism::Threads(2)] {
                        let what = format!("{shape:?} elem {elem} block {block} pads {pads:?} {par:?}");
                        let s2b = tf::SpaceToBatchNd::new(&b, &p).plan(&shape).unwrap();
                        let s2b = s2b.with_streaming(Streaming::Always).with_parallelism(par);
                        assert!(run_both(&s2b, &x, elem) == want, "{what}");
                        let b2s = tf::BatchToSpaceNd::new(&b, &p).plan(&want_shape).unwrap();
                        let b2s = b2s.with_streaming(Streaming::Always).with_parallelism(par);
                        assert!(run_both(&b2s, &want, elem) == x, "{what}: batch-to-space");
                    }
                }
                let shape = vec![2, 3, w / block, c * block * block];
                let x = bytes(shape.iter().product::<usize>() * elem, 13);
                let (want, _) = ref_depth_to_space_nhwc(&x, &shape, elem, block);
                for par in [Parallelism::Sequential, Parallelism::Threads(2)] {
                    let d2s = tf::DepthToSpace::new(block as i64, DataFormat::Nhwc).plan(&shape).unwrap();
                    let d2s = d2s.with_streaming(Streaming::Always).with_parallelism(par);
                    assert!(run_both(&d2s, &x, elem) == want, "{shape:?} elem {elem} {par:?}: depth-to-space");
                }
            }
        }
    }
}

/// NHWC tensors of three channels in uint8, float16 and float32 (units of
/// 3, 6 and 12 bytes, which the byte-shuffle kernels gather and
/// interleave): space-to-batch padded and not, its batch-to-space, and
/// depth-to-space with its space-to-depth; blocks 2 to 4; rows of whole
/// periods and not, long enough for the kernels and shorter, rows of whole
/// vectors (streamed, interleaved straight to the destination) and not;
/// each kernel setting, streamed or not, against the reference.
#[test]
fn three_channel_units_match_reference() {
    for elem in [1usize, 2, 4] {
        for block in [2usize, 3, 4] {
            for w in [5 * block, 64 * block, 37 * block] {
                for pads in [[0, 0], [1, block - 1], [block, 2 * block - 1]] {
                    // Padded to 3 blocks high and `w` wide.
                    let pads = vec![[pads[1], pads[0]], pads];
                    let shape = vec![2, 3 * block - pads[0][0] - pads[0][1], w - pads[1][0] - pads[1][1], 3];
                    let blocks = vec![block, block];
                    let x = bytes(shape.iter().product::<usize>() * elem, 17);
                    let (want, want_shape) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
                    let (b, p) = (as_i64(&blocks), as_i64_pairs(&pads));
                    let d2s_shape = vec![2, 3, w / block, 3 * block * block];
                    let y = bytes(d2s_shape.iter().product::<usize>() * elem, 19);
                    let (d2s_want, d2s_out) = ref_depth_to_space_nhwc(&y, &d2s_shape, elem, block);
                    for st in [Streaming::Never, Streaming::Always] {
                        for kern in [Kernels::Auto, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
                            let what = format!("{shape:?} elem {elem} block {block} pads {pads:?} {st:?} {kern:?}");
                            let s2b = tf::SpaceToBatchNd::new(&b, &p).plan(&shape).unwrap();
                            let s2b = s2b.with_streaming(st).with_kernels(kern);
                            assert!(run_both(&s2b, &x, elem) == want, "{what}");
                            let b2s = tf::BatchToSpaceNd::new(&b, &p).plan(&want_shape).unwrap();
                            let b2s = b2s.with_streaming(st).with_kernels(kern);
                            assert!(run_both(&b2s, &want, elem) == x, "{what}: batch-to-space");
                            let d2s = tf::DepthToSpace::new(block as i64, DataFormat::Nhwc).plan(&d2s_shape).unwrap();
                            let d2s = d2s.with_streaming(st).with_kernels(kern);
                            assert!(run_both(&d2s, &y, elem) == d2s_want, "{what}: depth-to-space");
                            let s2d = tf::SpaceToDepth::new(block as i64, DataFormat::Nhwc).plan(&d2s_out).unwrap();
                            let s2d = s2d.with_streaming(st).with_kernels(kern);
                            assert!(run_both(&s2d, &d2s_want, elem) == y, "{what}: space-to-depth");
                        }
                    }
                }
            }
        }
    }
}

/// OpenVINO's space-to-batch of NCHW tensors padded on H and W (and its
/// batch-to-space, cropped), whose short units make transposing tiles with
/// a window on the block position: every unit size, blocks 2 to 4, pads at
/// either end or both, on W and H or on H alone (rows wholly padding),
/// rows long enough for the vector kernels and not a whole number of
/// vectors, batches a line multiple long (streamed, the carried kernels
/// read the padded rows in place, or from a stage) and not, rows a line
/// multiple long (streamed, cropped rows are built whole in a stage) and
/// not, each kernel setting, streamed or not, against the reference;
/// batch-to-space restores the input.
#[test]
fn padded_and_cropped_tiles_match_reference() {
    for elem in [1usize, 2, 4, 8, 16] {
        for block in [2usize, 3, 4] {
            // Padded heights of 3 blocks, and of 80 (float32, block 2):
            // more rows than the staged chunk of padded rows holds.
            let tall = if (elem, block) == (4, 2) { 80 } else { 3 };
            for ((((p0, p1), (n, c, h)), wide), on_w) in [(1, 0), (0, 1), (block - 1, 1), (1, 2 * block - 1)]
                .into_iter()
                .flat_map(|pads| [(pads, (2, 3, 3)), (pads, (1, 64 / elem, tall))])
                .flat_map(|case| [(case, 70), (case, 64)])
                .flat_map(|case| [(case, true), (case, false)])
            {
                // Padded widths of 70 blocks, and of 64 (rows of whole
                // lines); W padded (`p1`, `p0`) or not (H alone).
                let (q0, q1) = if on_w { (p1, p0) } else { (0, 0) };
                let shape = vec![n, c, h * block - p0 - p1, wide * block - q0 - q1];
                let blocks = vec![1, block, block];
                let pads = vec![[0, 0], [p0, p1], [q0, q1]];
                let ov_block = [1, 1, block as i64, block as i64];
                let (begin, end) = ([0, 0, p0 as i64, q0 as i64], [0, 0, p1 as i64, q1 as i64]);
                let x = bytes(shape.iter().product::<usize>() * elem, block as u8);
                let (want, want_shape) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
                for st in [Streaming::Never, Streaming::Always] {
                    for kern in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
                        let what = format!("{shape:?} elem {elem} block {block} pads {p0},{p1} {st:?} {kern:?}");
                        let s2b = openvino::SpaceToBatch::new(&ov_block, &begin, &end).plan(&shape).unwrap();
                        let s2b = s2b.with_streaming(st).with_kernels(kern);
                        assert_eq!(s2b.output_shape(), &want_shape[..], "{what}");
                        assert!(run_both(&s2b, &x, elem) == want, "{what}");
                        let b2s = openvino::BatchToSpace::new(&ov_block, &begin, &end).plan(&want_shape).unwrap();
                        let b2s = b2s.with_streaming(st).with_kernels(kern);
                        assert!(run_both(&b2s, &want, elem) == x, "{what}: batch-to-space");
                    }
                }
            }
        }
    }
}

/// Padded tiles whose source positions run on (space-to-batch of a padded
/// axis innermost but for the channels, each block offset a stream): tiles
/// the stage holds, staged whole, in more repetitions than it holds at
/// once; longer ones, their middle straight and their ends staged, an end
/// longer than one stage; columns longer than the stage (declined, unit by
/// unit); each kernel setting, streamed or not, through the byte API and
/// typed (the padding `T::default()`).
#[test]
fn padded_source_tiles_match_reference() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Pixel(u8, u16);
    impl Default for Pixel {
        fn default() -> Self {
            Pixel(7, 0xBEEF)
        }
    }
    // (rows, width, channels, block, pads, element size): a 15-byte tile
    // in 700 rows; 1-byte tiles of 3 channels; a 9,600-byte tile with
    // two columns all padding; 4,550 columns, 4,500 of them padding
    // before the input; 9,600-byte columns.
    let cases = [
        (700usize, 13usize, 1usize, 3usize, (2usize, 0usize), 1usize),
        (40, 20, 3, 5, (4, 1), 1),
        (3, 1190, 1, 4, (9, 1), 8),
        (3, 100, 1, 2, (9000, 0), 1),
        (2, 1195, 1, 600, (3, 2), 16),
    ];
    for (h, w, c, b, (p0, p1), elem) in cases {
        let shape = vec![2, h, w, c];
        let (blocks, pads) = (vec![1, b], vec![[0, 0], [p0, p1]]);
        let (ob, op_pads) = ([1, b as i64], [[0, 0], [p0 as i64, p1 as i64]]);
        let op = tf::SpaceToBatchNd::new(&ob, &op_pads);
        let x = bytes(shape.iter().product::<usize>() * elem, b as u8);
        let (want, _) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
        let typed: Vec<Pixel> = (0..shape.iter().product()).map(|i: usize| Pixel(i as u8, i as u16 | 1)).collect();
        let want_typed = ref_space_to_batch_typed(&typed, &shape, &blocks, &pads);
        for st in [Streaming::Never, Streaming::Always] {
            for kern in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline, Kernels::Portable] {
                let what = format!("{shape:?} elem {elem} block {b} pads {p0},{p1} {st:?} {kern:?}");
                let plan = op.plan(&shape).unwrap().with_streaming(st).with_kernels(kern);
                assert!(run_both(&plan, &x, elem) == want, "{what}");
                assert!(plan.run(&typed).unwrap() == want_typed, "{what}: typed");
            }
        }
    }
}

/// The same padded space-to-batch through the byte API into an output one
/// byte past an element boundary: the carried kernel, which needs its
/// units aligned, declines, and the rows are copied, padded, into a stage
/// and run from there (with AVX512-VBMI, by its own kernel); the result is the
/// reference's, byte for byte. And with the input misaligned too.
#[test]
fn padded_tiles_into_misaligned_outputs_match_reference() {
    for (elem, block, (p0, p1)) in [(4usize, 4usize, (2usize, 2usize)), (2, 3, (1, 2)), (4, 2, (0, 1))] {
        for on_w in [true, false] {
            let (q0, q1) = if on_w { (p1, p0) } else { (0, 0) };
            let shape = vec![2, 64 / elem, 5 * block - p0 - p1, 64 * block - q0 - q1];
            let pads = vec![[0, 0], [p0, p1], [q0, q1]];
            let x = bytes(shape.iter().product::<usize>() * elem, 7);
            let (want, _) = ref_space_to_batch(&x, &shape, elem, &[1, block, block], &pads);
            let ov_block = [1, 1, block as i64, block as i64];
            let (begin, end) = ([0, 0, p0 as i64, q0 as i64], [0, 0, p1 as i64, q1 as i64]);
            let plan = openvino::SpaceToBatch::new(&ov_block, &begin, &end).plan(&shape).unwrap();
            let mut src = vec![0u8; x.len() + 1];
            src[1..].copy_from_slice(&x);
            for kern in [Kernels::Auto, Kernels::Avx2, Kernels::Baseline] {
                let plan = plan.clone().with_streaming(Streaming::Always).with_kernels(kern);
                let what = format!("{shape:?} elem {elem} block {block} pads {p0},{p1} on W {on_w} {kern:?}");
                for input in [&x[..], &src[1..]] {
                    let mut out = vec![0u8; want.len() + 1];
                    plan.run_bytes_into(input, elem, &mut out[1..]).unwrap();
                    assert!(out[1..] == want[..], "{what}");
                }
            }
        }
    }
}

/// The typed API's padding is `T::default()` in the padded tiles too: a
/// 4-byte element whose default is not zero bytes, through OpenVINO's
/// space-to-batch padded on H and W, and on H alone, streamed (the
/// carried kernels) and not, against the reference padded with it.
#[test]
fn padded_tiles_fill_the_typed_default() {
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct Px([u8; 4]);
    impl Default for Px {
        fn default() -> Self {
            Px([9, 8, 7, 6])
        }
    }
    for (block, (p0, p1)) in [(4usize, (2usize, 2usize)), (3, (1, 2))] {
        for on_w in [true, false] {
            let (q0, q1) = if on_w { (p1, p0) } else { (0, 0) };
            let shape = vec![2, 16, 5 * block - p0 - p1, 64 * block - q0 - q1];
            let n: usize = shape.iter().product();
            let x: Vec<Px> = (0..n).map(|i| Px((i as u32).wrapping_mul(2654435761).to_le_bytes())).collect();
            let want = ref_space_to_batch_typed(&x, &shape, &[1, block, block], &[[0, 0], [p0, p1], [q0, q1]]);
            let ov_block = [1, 1, block as i64, block as i64];
            let (begin, end) = ([0, 0, p0 as i64, q0 as i64], [0, 0, p1 as i64, q1 as i64]);
            let plan = openvino::SpaceToBatch::new(&ov_block, &begin, &end).plan(&shape).unwrap();
            for st in [Streaming::Always, Streaming::Never] {
                let got = plan.clone().with_streaming(st).run(&x).unwrap();
                assert!(got == want, "{shape:?} block {block} pads {p0},{p1} on W {on_w} {st:?}");
            }
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Streaming plans of long units (64 bytes and more) go through the line
/// writers, which hold each destination stream's unfinished cache line until
/// the run that completes it: outputs at every offset from a line boundary,
/// padding (zeros, and a typed default that is not zero), crops, loops split
/// to make streams, one thread and two, against the reference.
mod line_writers {
    use super::*;

    fn long_unit_case() -> impl Strategy<Value = (Vec<usize>, Vec<usize>, Vec<[usize; 2]>)> {
        // Two or three blocked axes, then channels that make units of 64 bytes or more.
        let units = prop::sample::select(vec![64usize, 96, 128, 200, 256, 320]);
        (2usize..=3, prop::collection::vec((1usize..=4, 1usize..=5, 0usize..=3, 0usize..=3), 3), 1usize..=3, units)
            .prop_map(|(m, spatial, batch, unit)| {
                let mut shape = vec![batch];
                let (mut blocks, mut pads) = (Vec::new(), Vec::new());
                for &(b, outer, pb, extra) in &spatial[..m] {
                    let (dim, pad) = padded_axis(b, outer, pb, extra);
                    shape.push(dim);
                    blocks.push(b);
                    pads.push(pad);
                }
                shape.push(unit / 4);
                (shape, blocks, pads)
            })
    }

    /// Streaming deinterleaving tiles (NCHW space-to-depth, pixel_unshuffle)
    /// with rows of 512 bytes and more per stream write whole lines straight
    /// from the vector kernels, the parts of lines at row ends through the
    /// writers: 2 and 4 streams, units of 1 to 16 bytes, rows that leave
    /// heads and tails, outputs at offsets the kernels take and at some they
    /// refuse (units not aligned), each vector width, one thread and two.
    #[test]
    fn deinterleaving_tiles_into_whole_lines_match_direct_stores() {
        for elem in [1usize, 2, 4, 8, 16] {
            for block in [2usize, 4] {
                for extra in [0, 3] {
                    let width = 512 / elem * block + extra * block;
                    let shape = [2, 3, 2 * block, width];
                    let op = onnx::SpaceToDepth::new(block as i64);
                    let plan = op.plan(&shape).unwrap();
                    let x = bytes(plan.input_len() * elem, 41);
                    let want = run_both(&plan.clone().with_streaming(Streaming::Never), &x, elem);
                    for offset in [0, elem, 16, 40, 3] {
                        for kern in [Kernels::Auto, Kernels::Avx512, Kernels::Avx2, Kernels::Baseline] {
                            for par in [Parallelism::Sequential, Parallelism::Threads(2)] {
                                let p = plan.clone().with_streaming(Streaming::Always).with_kernels(kern);
                                let p = p.with_parallelism(par);
                                let got = run_at_offset(&p, &x, elem, offset);
                                let what =
                                    format!("elem {elem} block {block} width {width} +{offset} {kern:?} {par:?}");
                                assert!(got.as_ref() == Ok(&want), "{what}: {:?}", got.err());
                            }
                        }
                    }
                }
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn long_units_at_every_line_offset_match_reference(
            (shape, blocks, pads) in long_unit_case(), offset in 0usize..64, par in parallelism(),
        ) {
            let (b, p) = (as_i64(&blocks), as_i64_pairs(&pads));
            let elem = 4;
            let x = bytes(shape.iter().product::<usize>() * elem, 5);
            let (want, want_shape) = ref_space_to_batch(&x, &shape, elem, &blocks, &pads);
            let s2b = tf::SpaceToBatchNd::new(&b, &p).plan(&shape).unwrap();
            let s2b = s2b.with_streaming(Streaming::Always).with_parallelism(par);
            prop_assert_eq!(run_at_offset(&s2b, &x, elem, offset), Ok(want.clone()));
            // And back, cropping the padding away.
            let b2s = tf::BatchToSpaceNd::new(&b, &p).plan(&want_shape).unwrap();
            let b2s = b2s.with_streaming(Streaming::Always).with_parallelism(par);
            prop_assert_eq!(run_at_offset(&b2s, &want, elem, offset), Ok(x));
        }

        #[test]
        fn typed_padding_through_line_writers_is_default(
            (shape, blocks, pads) in long_unit_case(), offset in 0usize..16,
        ) {
            #[derive(Clone, Copy, Debug, PartialEq)]
            struct Px(u32);
            impl Default for Px {
                fn default() -> Self {
                    Px(0xDEAD_BEEF)
                }
            }
            let (b, p) = (as_i64(&blocks), as_i64_pairs(&pads));
            let n: usize = shape.iter().product();
            let x: Vec<Px> = (0..n as u32).map(|v| Px(v.wrapping_mul(2654435761) | 1)).collect();
            let plan = tf::SpaceToBatchNd::new(&b, &p).plan(&shape).unwrap().with_streaming(Streaming::Always);
            let want = ref_space_to_batch_typed(&x, &shape, &blocks, &pads);
            let mut out = vec![Px(7); want.len() + 16];
            plan.run_into(&x, &mut out[offset..offset + want.len()]).unwrap();
            prop_assert_eq!(&out[offset..offset + want.len()], &want[..]);
        }
    }
}
